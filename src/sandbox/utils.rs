//! `utils`: numeric kernels for panel and builder code, implemented natively in Rust (Boa runs
//! JS loops ~75x slower than V8). Pure functions over `&[f64]` plus their JS bindings.
//! (PLACEHOLDER: the full set is being implemented.)

use boa_engine::{Context, JsObject, JsResult, object::ObjectInitializer};

/// Builds the (not yet frozen) `utils` object in `ctx`.
pub fn install(ctx: &mut Context) -> JsResult<JsObject> {
    Ok(ObjectInitializer::new(ctx).build())
}
