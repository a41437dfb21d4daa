//! Standard functions Boa 0.22 lacks and models use: `structuredClone` (copying a dashboard
//! state in `mutate` code, as in a browser or Node) and `Array.fromAsync`.
//!
//! Owns their installation only; each algorithm is JavaScript (`sandbox/polyfills/*.js`),
//! compiled on a realm's first call and kept in the native stub's GC-traced captures, so realms
//! that never call them (nearly every panel run) pay for one native function each, not a
//! script. Knows nothing of jobs or limits: the code runs as the caller's code would.

use boa_engine::gc::{Gc, GcRefCell};
use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::{Attribute, PropertyDescriptor};
use boa_engine::{
    Context, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction, Source,
};

/// One lazily compiled function.
struct Polyfill {
    name: &'static str,
    length: usize,
    source: &'static str,
}

const STRUCTURED_CLONE: Polyfill = Polyfill {
    name: "structuredClone",
    length: 1,
    source: include_str!("../../../sandbox/polyfills/structured-clone.js"),
};

const ARRAY_FROM_ASYNC: Polyfill = Polyfill {
    name: "fromAsync",
    length: 1,
    source: include_str!("../../../sandbox/polyfills/array-from-async.js"),
};

/// The compiled implementation, once the stub has been called (GC-traced).
type Compiled = Gc<GcRefCell<Option<JsObject>>>;

/// Installs the stubs: `structuredClone` on the global object, `fromAsync` on `Array`, both
/// writable and configurable, as in V8.
pub(super) fn install(ctx: &mut Context) -> JsResult<()> {
    let clone = stub(ctx, &STRUCTURED_CLONE);
    ctx.register_global_property(
        JsString::from(STRUCTURED_CLONE.name),
        clone,
        Attribute::WRITABLE | Attribute::CONFIGURABLE,
    )?;
    let from_async = stub(ctx, &ARRAY_FROM_ASYNC);
    let array = ctx.intrinsics().constructors().array().constructor();
    let method = PropertyDescriptor::builder()
        .value(from_async)
        .writable(true)
        .enumerable(false)
        .configurable(true);
    array.define_property_or_throw(JsString::from(ARRAY_FROM_ASYNC.name), method, ctx)?;
    Ok(())
}

fn stub(ctx: &mut Context, p: &'static Polyfill) -> JsObject {
    let captures: (Compiled, &'static str) = (Gc::new(GcRefCell::new(None)), p.source);
    FunctionObjectBuilder::new(
        ctx.realm(),
        NativeFunction::from_copy_closure_with_captures(call, captures),
    )
    .name(JsString::from(p.name))
    .length(p.length)
    .build()
    .into()
}

fn call(
    this: &JsValue,
    args: &[JsValue],
    (compiled, source): &(Compiled, &'static str),
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let existing = compiled.borrow().clone();
    let f = match existing {
        Some(f) => f,
        None => {
            let v = ctx.eval(Source::from_bytes(source))?;
            let f = v
                .as_object()
                .filter(|o| o.is_callable())
                .ok_or_else(|| JsNativeError::typ().with_message("polyfill did not compile"))?
                .clone();
            *compiled.borrow_mut() = Some(f.clone());
            f
        }
    };
    f.call(this, args, ctx)
}

#[cfg(test)]
mod tests {
    use boa_engine::{Context, Source};

    fn eval(code: &str) -> String {
        let mut ctx = Context::default();
        super::install(&mut ctx).unwrap();
        let v = ctx.eval(Source::from_bytes(code)).unwrap();
        v.to_string(&mut ctx).unwrap().to_std_string_escaped()
    }

    #[test]
    fn structured_clone_copies_deeply_and_keeps_cycles_and_types() {
        let out = eval(
            "const s = {d: new Date(5), m: new Map([[1, {a: [1, , 3]}]]), set: new Set([2])};
             s.self = s;
             const c = structuredClone(s);
             [c !== s, c.self === c, c.d instanceof Date && c.d.getTime() === 5,
              c.m.get(1).a !== s.m.get(1).a, 1 in c.m.get(1).a, c.set.has(2)].join()",
        );
        assert_eq!(out, "true,true,true,true,false,true");
    }

    #[test]
    fn structured_clone_refuses_functions_with_a_data_clone_error() {
        let out = eval("try { structuredClone({f() {}}); 'cloned' } catch (e) { e.name }");
        assert_eq!(out, "DataCloneError");
    }

    #[test]
    fn array_from_async_awaits_values_and_mapper() {
        let mut ctx = Context::default();
        super::install(&mut ctx).unwrap();
        let code = "let out; Array.fromAsync([1, Promise.resolve(2)], async (x) => x * 10)
                      .then((v) => { out = v.join(); }); null";
        ctx.eval(Source::from_bytes(code)).unwrap();
        ctx.run_jobs().unwrap();
        let v = ctx.eval(Source::from_bytes("out")).unwrap();
        assert_eq!(v.to_string(&mut ctx).unwrap().to_std_string_escaped(), "10,20");
    }
}
