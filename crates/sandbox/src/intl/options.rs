//! Reading an options bag the way ECMA-402 does (`GetOption`, `GetNumberOption`,
//! `DefaultNumberOption`), with V8's error messages.

use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsString, JsValue};

/// An options argument after `CoerceOptionsToObject` (`undefined` reads as empty).
pub(super) struct Options {
    obj: Option<JsObject>,
    service: &'static str,
}

impl Options {
    /// `undefined` → empty; `null` → TypeError; anything else → `ToObject`.
    pub fn coerce(v: &JsValue, service: &'static str, ctx: &mut Context) -> JsResult<Self> {
        if v.is_undefined() {
            return Ok(Self { obj: None, service });
        }
        if v.is_null() {
            return Err(JsNativeError::typ()
                .with_message("Cannot convert undefined or null to object")
                .into());
        }
        Ok(Self { obj: Some(v.to_object(ctx)?), service })
    }

    pub fn empty(service: &'static str) -> Self {
        Self { obj: None, service }
    }

    pub fn get(&self, name: &str, ctx: &mut Context) -> JsResult<JsValue> {
        match &self.obj {
            Some(o) => o.get(JsString::from(name), ctx),
            None => Ok(JsValue::undefined()),
        }
    }

    /// A string option restricted to `allowed` (empty: any string).
    pub fn string(
        &self,
        name: &str,
        allowed: &[&str],
        ctx: &mut Context,
    ) -> JsResult<Option<String>> {
        let v = self.get(name, ctx)?;
        if v.is_undefined() {
            return Ok(None);
        }
        let s = v.to_string(ctx)?.to_std_string_escaped();
        if !allowed.is_empty() && !allowed.contains(&s.as_str()) {
            return Err(JsNativeError::range()
                .with_message(format!(
                    "Value {s} out of range for {} options property {name}",
                    self.service
                ))
                .into());
        }
        Ok(Some(s))
    }

    /// A string option with a default.
    pub fn string_or(
        &self,
        name: &str,
        allowed: &[&str],
        default: &str,
        ctx: &mut Context,
    ) -> JsResult<String> {
        Ok(self.string(name, allowed, ctx)?.unwrap_or_else(|| default.to_owned()))
    }

    /// A boolean option.
    pub fn boolean(&self, name: &str, ctx: &mut Context) -> JsResult<Option<bool>> {
        let v = self.get(name, ctx)?;
        Ok(if v.is_undefined() { None } else { Some(v.to_boolean()) })
    }

    /// `GetNumberOption`: an integer in `min..=max`, or `None`.
    pub fn number(
        &self,
        name: &str,
        min: u32,
        max: u32,
        ctx: &mut Context,
    ) -> JsResult<Option<u32>> {
        let v = self.get(name, ctx)?;
        default_number_option(&v, min, max, name, ctx)
    }
}

/// `DefaultNumberOption` (without the fallback: `None` for `undefined`).
pub(super) fn default_number_option(
    v: &JsValue,
    min: u32,
    max: u32,
    name: &str,
    ctx: &mut Context,
) -> JsResult<Option<u32>> {
    if v.is_undefined() {
        return Ok(None);
    }
    let n = v.to_number(ctx)?;
    if n.is_nan() || n < f64::from(min) || n > f64::from(max) {
        return Err(JsNativeError::range()
            .with_message(format!("{name} value is out of range."))
            .into());
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(Some(n.floor() as u32))
}
