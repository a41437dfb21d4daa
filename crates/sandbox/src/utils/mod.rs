//! `utils`: numeric kernels for panel and builder code, implemented natively in Rust (Boa runs
//! JS loops ~75x slower than V8). Pure functions over `&[f64]` ([`kernels`]) plus their JS
//! bindings (this module). Every function is documented for the model in
//! `sandbox/utils-spec.json`; keep the two in sync (a test checks the names).
//!
//! Input conversion: ordinary dense arrays are read straight out of Boa's indexed storage
//! (cloned while borrowed, converted after the borrow is dropped); anything else (proxies,
//! sparse arrays, getters, array-likes) goes through ordinary `[[Get]]`. Missing values
//! (null/undefined/NaN/±Infinity/non-numeric) become `NaN` inside and `null` in results.

mod format;
pub mod kernels;

use std::collections::{BTreeMap, HashMap};

use boa_engine::object::builtins::JsArray;
use boa_engine::object::builtins::JsFunction;
use boa_engine::object::{FunctionObjectBuilder, IndexPropertyValues, ObjectInitializer};
use boa_engine::property::{Attribute, PropertyKey};
use boa_engine::{
    Context, JsArgs, JsError, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction,
    js_string,
};

/// The JSON documentation of every `utils` function, as exposed to the model (`spec.utils`).
pub const SPEC_JSON: &str = include_str!("../../../../sandbox/utils-spec.json");

/// Largest array length `utils` accepts (bounds work done in native code).
const MAX_LEN: u64 = 10_000_000;

type NativeFn = fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;

/// `(name, length, implementation)` of every function on `utils`.
const FUNCTIONS: &[(&str, usize, NativeFn)] = &[
    ("sma", 2, sma),
    ("ema", 2, ema),
    ("wma", 2, wma),
    ("rsi", 1, rsi),
    ("macd", 1, macd),
    ("bollinger", 1, bollinger),
    ("atr", 1, atr),
    ("vwap", 1, vwap),
    ("stdev", 1, stdev),
    ("mean", 1, mean),
    ("sum", 1, sum),
    ("min", 1, min),
    ("max", 1, max),
    ("pctChange", 1, pct_change),
    ("returns", 1, returns),
    ("cumulative", 1, cumulative),
    ("drawdown", 1, drawdown),
    ("maxDrawdown", 1, max_drawdown),
    ("correlation", 2, correlation),
    ("zscore", 1, zscore),
    ("resample", 2, resample),
    ("groupBy", 2, group_by),
    ("pivot", 4, pivot),
    ("pluck", 2, pluck),
    ("formatNumber", 1, format_number),
    ("formatPercent", 1, format_percent),
    ("formatCurrency", 1, format_currency),
    ("formatDate", 1, format_date),
    ("toTime", 1, to_time),
];

/// Builds the (not yet frozen) `utils` object in `ctx`. Its functions are enumerable, so
/// `Object.keys(utils)` lists them.
pub fn install(ctx: &mut Context) -> JsResult<JsObject> {
    let functions: Vec<(JsString, JsFunction)> = FUNCTIONS
        .iter()
        .map(|&(name, len, f)| {
            let name = JsString::from(name);
            let func = FunctionObjectBuilder::new(ctx.realm(), NativeFunction::from_fn_ptr(f))
                .name(name.clone())
                .length(len)
                .constructor(false)
                .build();
            (name, func)
        })
        .collect();
    let mut init = ObjectInitializer::new(ctx);
    for (name, func) in functions {
        init.property(name, func, Attribute::all());
    }
    Ok(init.build())
}

// ---------------------------------------------------------------------------------------------
// Argument handling

/// Short description of a value for error messages: `-3`, `"abc"`, `undefined`, `an object`.
fn describe(v: &JsValue) -> String {
    if let Some(s) = v.as_string() {
        let s = s.to_std_string_escaped();
        let short: String = s.chars().take(40).collect();
        return format!("string {short:?}");
    }
    match v.as_object() {
        Some(o) if o.is_array() => "an array".to_string(),
        Some(o) if o.is_callable() => "a function".to_string(),
        Some(_) => "an object".to_string(),
        None => v.display().to_string(),
    }
}

fn arg(args: &[JsValue], i: usize) -> &JsValue {
    args.get_or_undefined(i)
}

fn is_absent(v: &JsValue) -> bool {
    v.is_null_or_undefined()
}

/// One `utils.*` call: carries the signature used in error messages.
struct Call {
    sig: &'static str,
}

/// Series data converted from JS: numbers straight from dense storage, or values to convert.
enum Elems {
    Nums(Vec<f64>),
    Vals(Vec<JsValue>),
}

fn finite_or_nan(x: f64) -> f64 {
    if x.is_finite() { x } else { f64::NAN }
}

/// Own data property of `obj` without running user code when possible, else `[[Get]]`.
fn get_field(obj: &JsObject, key: &PropertyKey, ctx: &mut Context) -> JsResult<JsValue> {
    {
        let b = obj.borrow();
        if let Some(v) = b.properties().get(key).and_then(|d| d.value().cloned()) {
            return Ok(v);
        }
    }
    obj.get(key.clone(), ctx)
}

/// JS value → f64 with the missing-value convention (no field lookup).
fn scalar(v: &JsValue, ctx: &mut Context) -> JsResult<f64> {
    if let Some(n) = v.as_number() {
        Ok(finite_or_nan(n))
    } else if v.is_null_or_undefined() {
        Ok(f64::NAN)
    } else {
        Ok(finite_or_nan(v.to_number(ctx)?))
    }
}

/// JS output array: non-finite → `null`.
fn out_array(xs: &[f64], ctx: &mut Context) -> JsValue {
    JsArray::from_iter(
        xs.iter().map(|&x| if x.is_finite() { JsValue::new(x) } else { JsValue::null() }),
        ctx,
    )
    .into()
}

fn out_number(x: f64) -> JsValue {
    if x.is_finite() { JsValue::new(x) } else { JsValue::null() }
}

fn new_object(pairs: Vec<(JsString, JsValue)>, ctx: &mut Context) -> JsValue {
    let mut init = ObjectInitializer::new(ctx);
    for (k, v) in pairs {
        init.property(k, v, Attribute::all());
    }
    init.build().into()
}

impl Call {
    fn new(sig: &'static str) -> Self {
        Self { sig }
    }

    fn name(&self) -> &'static str {
        self.sig.split('(').next().unwrap_or(self.sig)
    }

    fn type_err(&self, msg: impl std::fmt::Display) -> JsError {
        JsNativeError::typ().with_message(format!("utils.{}: {msg}", self.sig)).into()
    }

    fn range_err(&self, msg: impl std::fmt::Display) -> JsError {
        JsNativeError::range().with_message(format!("utils.{}: {msg}", self.sig)).into()
    }

    /// A positive integer argument (`null`/`undefined` → `default`, required if `None`).
    fn period(&self, v: &JsValue, name: &str, default: Option<usize>) -> JsResult<usize> {
        if is_absent(v) {
            return default
                .ok_or_else(|| self.type_err(format!("{name} is required (a positive integer)")));
        }
        match v.as_number() {
            Some(n) if n.is_finite() && n.fract() == 0.0 && (1.0..=1e9).contains(&n) => {
                Ok(n as usize)
            }
            Some(_) => {
                Err(self
                    .range_err(format!("{name} must be a positive integer, got {}", describe(v))))
            }
            None => {
                Err(self
                    .type_err(format!("{name} must be a positive integer, got {}", describe(v))))
            }
        }
    }

    /// A finite number argument (`null`/`undefined` → `default`).
    fn number(&self, v: &JsValue, name: &str, default: f64) -> JsResult<f64> {
        if is_absent(v) {
            return Ok(default);
        }
        match v.as_number() {
            Some(n) if n.is_finite() => Ok(n),
            _ => Err(self.type_err(format!("{name} must be a finite number, got {}", describe(v)))),
        }
    }

    /// Splits `args[start..]` into the optional field name (the first string) and the
    /// remaining positional values. Strings in `modes` are returned separately.
    fn split(
        &self,
        args: &[JsValue],
        start: usize,
        modes: &[&str],
    ) -> JsResult<(Option<JsString>, Option<String>, Vec<JsValue>)> {
        let (mut field, mut mode, mut rest) = (None, None, Vec::new());
        for v in args.iter().skip(start) {
            if let Some(s) = v.as_string() {
                let st = s.to_std_string_escaped();
                if st.trim().parse::<f64>().is_ok() {
                    return Err(self.type_err(format!(
                        "numeric arguments must be numbers, got {} (a string)",
                        describe(v)
                    )));
                }
                if mode.is_none() && modes.contains(&st.as_str()) {
                    mode = Some(st);
                } else if field.is_none() {
                    field = Some(s);
                } else {
                    return Err(
                        self.type_err(format!("unexpected extra string argument {}", describe(v)))
                    );
                }
            } else {
                rest.push(v.clone());
            }
        }
        Ok((field, mode, rest))
    }

    /// The elements of an array (or array-like), fast for ordinary dense arrays.
    fn elements(&self, v: &JsValue, what: &str, ctx: &mut Context) -> JsResult<Elems> {
        let Some(obj) = v.as_object() else {
            return Err(self.type_err(format!("{what} must be an array, got {}", describe(v))));
        };
        let is_array = obj.is_array();
        let len_v = obj.get(js_string!("length"), ctx)?;
        if !is_array && !len_v.is_number() {
            return Err(self.type_err(format!("{what} must be an array, got {}", describe(v))));
        }
        let len = len_v.to_length(ctx)?;
        if len > MAX_LEN {
            return Err(self
                .range_err(format!("{what} has {len} elements; at most {MAX_LEN} are supported")));
        }
        let len = len as usize;
        if is_array {
            let b = obj.borrow();
            let fast = match b.properties().index_property_values() {
                IndexPropertyValues::DenseI32(it) if it.len() == len => {
                    Some(Elems::Nums(it.map(|&i| f64::from(i)).collect()))
                }
                IndexPropertyValues::DenseF64(it) if it.len() == len => {
                    Some(Elems::Nums(it.map(|&x| finite_or_nan(x)).collect()))
                }
                IndexPropertyValues::DenseElement(it) if it.len() == len => {
                    Some(Elems::Vals(it.as_slice().to_vec()))
                }
                _ => None,
            };
            drop(b);
            if let Some(e) = fast {
                return Ok(e);
            }
        }
        let mut vals = Vec::with_capacity(len);
        for i in 0..len {
            vals.push(obj.get(i as u32, ctx)?);
        }
        Ok(Elems::Vals(vals))
    }

    /// A numeric series: numbers, or row objects read at `field` (default `"close"`).
    fn series(
        &self,
        v: &JsValue,
        field: Option<&JsString>,
        what: &str,
        ctx: &mut Context,
    ) -> JsResult<Vec<f64>> {
        let vals = match self.elements(v, what, ctx)? {
            Elems::Nums(xs) => return Ok(xs),
            Elems::Vals(vals) => vals,
        };
        let mut key: Option<PropertyKey> = field.map(|f| f.clone().into());
        let mut out = Vec::with_capacity(vals.len());
        let (mut first_row, mut field_seen) = (None, false);
        for v in &vals {
            let x = if let Some(n) = v.as_number() {
                finite_or_nan(n)
            } else if let Some(o) = v.as_object() {
                let k = match &key {
                    Some(k) => k.clone(),
                    None => {
                        let k: PropertyKey = js_string!("close").into();
                        if get_field(&o, &k, ctx)?.is_undefined() {
                            return Err(self.type_err(format!(
                                "{what} contains row objects but no field name was given and the rows have \
                                 no 'close' field; pass the field as a string, e.g. utils.{}({what}, ..., 'volume')",
                                self.name()
                            )));
                        }
                        key = Some(k.clone());
                        k
                    }
                };
                let fv = get_field(&o, &k, ctx)?;
                field_seen |= !fv.is_undefined();
                if first_row.is_none() {
                    first_row = Some(o);
                }
                scalar(&fv, ctx)?
            } else {
                scalar(v, ctx)?
            };
            out.push(x);
        }
        if let (Some(row), false, Some(k)) = (first_row, field_seen, &key) {
            let keys: Vec<String> =
                row.own_property_keys(ctx)?.iter().take(20).map(ToString::to_string).collect();
            return Err(self.type_err(format!(
                "no row in {what} has a field '{k}'; the first row has fields: {}",
                keys.join(", ")
            )));
        }
        Ok(out)
    }

    /// Row objects read at several numeric fields (`null`/`undefined` rows → all missing).
    fn columns(&self, v: &JsValue, fields: &[&str], ctx: &mut Context) -> JsResult<Vec<Vec<f64>>> {
        let vals = match self.elements(v, "rows", ctx)? {
            Elems::Nums(xs) if xs.is_empty() => Vec::new(),
            Elems::Nums(_) => {
                return Err(self.type_err(format!(
                    "rows must be an array of objects with fields {}, got an array of numbers",
                    fields.join(", ")
                )));
            }
            Elems::Vals(vals) => vals,
        };
        let keys: Vec<PropertyKey> = fields.iter().map(|f| JsString::from(*f).into()).collect();
        let mut cols = vec![Vec::with_capacity(vals.len()); fields.len()];
        for (i, v) in vals.iter().enumerate() {
            if let Some(o) = v.as_object() {
                for (col, k) in cols.iter_mut().zip(&keys) {
                    col.push(scalar(&get_field(&o, k, ctx)?, ctx)?);
                }
            } else if v.is_null_or_undefined() {
                cols.iter_mut().for_each(|c| c.push(f64::NAN));
            } else {
                return Err(self.type_err(format!(
                    "rows[{i}] must be an object with fields {}, got {}",
                    fields.join(", "),
                    describe(v)
                )));
            }
        }
        Ok(cols)
    }

    /// Plain JS values of an array of rows.
    fn rows(&self, v: &JsValue, ctx: &mut Context) -> JsResult<Vec<JsValue>> {
        Ok(match self.elements(v, "rows", ctx)? {
            Elems::Nums(xs) => xs.into_iter().map(JsValue::new).collect(),
            Elems::Vals(vals) => vals,
        })
    }

    fn string_arg(&self, v: &JsValue, name: &str) -> JsResult<JsString> {
        v.as_string().ok_or_else(|| {
            self.type_err(format!("{name} must be a string (a field name), got {}", describe(v)))
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Indicators

/// `f(values, period, field?)` → array.
fn windowed(
    sig: &'static str,
    default: Option<usize>,
    args: &[JsValue],
    ctx: &mut Context,
    f: fn(&[f64], usize) -> Vec<f64>,
) -> JsResult<JsValue> {
    let c = Call::new(sig);
    let (field, _, rest) = c.split(args, 1, &[])?;
    let p = c.period(arg(&rest, 0), "period", default)?;
    let xs = c.series(arg(args, 0), field.as_ref(), "values", ctx)?;
    Ok(out_array(&f(&xs, p), ctx))
}

fn sma(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    windowed("sma(values, period, field?)", None, args, ctx, kernels::sma)
}

fn ema(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    windowed("ema(values, period, field?)", None, args, ctx, kernels::ema)
}

fn wma(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    windowed("wma(values, period, field?)", None, args, ctx, kernels::wma)
}

fn rsi(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    windowed("rsi(values, period = 14, field?)", Some(14), args, ctx, kernels::rsi)
}

fn macd(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("macd(values, fast = 12, slow = 26, signal = 9, field?)");
    let (field, _, rest) = c.split(args, 1, &[])?;
    let fast = c.period(arg(&rest, 0), "fast", Some(12))?;
    let slow = c.period(arg(&rest, 1), "slow", Some(26))?;
    let signal = c.period(arg(&rest, 2), "signal", Some(9))?;
    let xs = c.series(arg(args, 0), field.as_ref(), "values", ctx)?;
    let (m, s, h) = kernels::macd(&xs, fast, slow, signal);
    let pairs = vec![
        (js_string!("macd"), out_array(&m, ctx)),
        (js_string!("signal"), out_array(&s, ctx)),
        (js_string!("histogram"), out_array(&h, ctx)),
    ];
    Ok(new_object(pairs, ctx))
}

fn bollinger(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("bollinger(values, period = 20, k = 2, field?)");
    let (field, _, rest) = c.split(args, 1, &[])?;
    let p = c.period(arg(&rest, 0), "period", Some(20))?;
    let k = c.number(arg(&rest, 1), "k", 2.0)?;
    let xs = c.series(arg(args, 0), field.as_ref(), "values", ctx)?;
    let (u, m, l) = kernels::bollinger(&xs, p, k);
    let pairs = vec![
        (js_string!("upper"), out_array(&u, ctx)),
        (js_string!("middle"), out_array(&m, ctx)),
        (js_string!("lower"), out_array(&l, ctx)),
    ];
    Ok(new_object(pairs, ctx))
}

fn atr(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("atr(rows, period = 14)");
    let p = c.period(arg(args, 1), "period", Some(14))?;
    let cols = c.columns(arg(args, 0), &["high", "low", "close"], ctx)?;
    Ok(out_array(&kernels::atr(&cols[0], &cols[1], &cols[2], p), ctx))
}

fn vwap(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("vwap(rows)");
    let cols = c.columns(arg(args, 0), &["high", "low", "close", "volume"], ctx)?;
    Ok(out_array(&kernels::vwap(&cols[0], &cols[1], &cols[2], &cols[3]), ctx))
}

/// `f(values, period?, field?)`: scalar without a period, rolling array with one.
fn scalar_or_rolling(
    sig: &'static str,
    args: &[JsValue],
    ctx: &mut Context,
    whole: fn(&[f64]) -> JsValue,
    rolling: fn(&[f64], usize) -> Vec<f64>,
) -> JsResult<JsValue> {
    let c = Call::new(sig);
    let (field, _, rest) = c.split(args, 1, &[])?;
    let p = arg(&rest, 0);
    let p = if is_absent(p) { None } else { Some(c.period(p, "period", None)?) };
    let xs = c.series(arg(args, 0), field.as_ref(), "values", ctx)?;
    Ok(match p {
        None => whole(&xs),
        Some(p) => out_array(&rolling(&xs, p), ctx),
    })
}

fn stdev(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    scalar_or_rolling(
        "stdev(values, period?, field?)",
        args,
        ctx,
        |xs| out_number(kernels::stdev(xs)),
        |xs, p| kernels::rolling_stdev(xs, p, 1),
    )
}

fn zscore(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("zscore(values, period?, field?)");
    let (field, _, rest) = c.split(args, 1, &[])?;
    let p = arg(&rest, 0);
    let p = if is_absent(p) { None } else { Some(c.period(p, "period", None)?) };
    let xs = c.series(arg(args, 0), field.as_ref(), "values", ctx)?;
    let out = match p {
        None => kernels::zscore(&xs),
        Some(p) => kernels::rolling_zscore(&xs, p),
    };
    Ok(out_array(&out, ctx))
}

fn reduce(
    sig: &'static str,
    args: &[JsValue],
    ctx: &mut Context,
    f: fn(&[f64]) -> f64,
) -> JsResult<JsValue> {
    let c = Call::new(sig);
    let (field, _, _) = c.split(args, 1, &[])?;
    let xs = c.series(arg(args, 0), field.as_ref(), "values", ctx)?;
    Ok(out_number(f(&xs)))
}

fn mean(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    reduce("mean(values, field?)", args, ctx, kernels::mean)
}

fn sum(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    reduce("sum(values, field?)", args, ctx, kernels::sum)
}

fn min(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    reduce("min(values, field?)", args, ctx, kernels::min)
}

fn max(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    reduce("max(values, field?)", args, ctx, kernels::max)
}

fn max_drawdown(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    reduce("maxDrawdown(values, field?)", args, ctx, kernels::max_drawdown)
}

fn drawdown(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("drawdown(values, field?)");
    let (field, _, _) = c.split(args, 1, &[])?;
    let xs = c.series(arg(args, 0), field.as_ref(), "values", ctx)?;
    Ok(out_array(&kernels::drawdown(&xs), ctx))
}

fn pct_change(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    windowed("pctChange(values, lag = 1, field?)", Some(1), args, ctx, kernels::pct_change)
}

fn returns(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("returns(values, type = 'simple' | 'log', field?)");
    let (field, mode, rest) = c.split(args, 1, &["simple", "log"])?;
    if let Some(v) = rest.iter().find(|v| !is_absent(v)) {
        return Err(c.type_err(format!("type must be 'simple' or 'log', got {}", describe(v))));
    }
    let xs = c.series(arg(args, 0), field.as_ref(), "values", ctx)?;
    Ok(out_array(&kernels::returns(&xs, mode.as_deref() == Some("log")), ctx))
}

fn cumulative(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("cumulative(values, type = 'sum' | 'return', field?)");
    let (field, mode, rest) = c.split(args, 1, &["sum", "return"])?;
    if let Some(v) = rest.iter().find(|v| !is_absent(v)) {
        return Err(c.type_err(format!("type must be 'sum' or 'return', got {}", describe(v))));
    }
    let xs = c.series(arg(args, 0), field.as_ref(), "values", ctx)?;
    Ok(out_array(&kernels::cumulative(&xs, mode.as_deref() == Some("return")), ctx))
}

fn correlation(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("correlation(a, b, period?, field?)");
    let (field, _, rest) = c.split(args, 2, &[])?;
    let p = arg(&rest, 0);
    let p = if is_absent(p) { None } else { Some(c.period(p, "period", None)?) };
    let a = c.series(arg(args, 0), field.as_ref(), "a", ctx)?;
    let b = c.series(arg(args, 1), field.as_ref(), "b", ctx)?;
    if a.len() != b.len() {
        return Err(c.range_err(format!(
            "a and b must have the same length, got {} and {} (align them by time first)",
            a.len(),
            b.len()
        )));
    }
    Ok(match p {
        None => out_number(kernels::correlation(&a, &b)),
        Some(p) => out_array(&kernels::rolling_correlation(&a, &b, p), ctx),
    })
}

fn pluck(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("pluck(rows, field)");
    let field = c.string_arg(arg(args, 1), "field")?;
    let xs = c.series(arg(args, 0), Some(&field), "rows", ctx)?;
    Ok(out_array(&xs, ctx))
}

// ---------------------------------------------------------------------------------------------
// Row reshaping

fn resample(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("resample(rows, timeframe)");
    let tf_v = arg(args, 1);
    let tf_s = tf_v.as_string().map(|s| s.to_std_string_escaped()).unwrap_or_default();
    let Some(tf) = format::parse_timeframe(&tf_s) else {
        return Err(c.type_err(format!(
            "timeframe must be a string like '15m', '1h', '4h', '1D', '1W' or '1M' (month), got {}",
            describe(tf_v)
        )));
    };
    let cols = c.columns(arg(args, 0), &["time", "open", "high", "low", "close", "volume"], ctx)?;
    #[derive(Default)]
    struct Bucket {
        open: Option<(f64, f64)>,
        close: Option<(f64, f64)>,
        high: f64,
        low: f64,
        volume: Option<f64>,
    }
    let mut buckets: BTreeMap<i64, Bucket> = BTreeMap::new();
    for (i, &t) in cols[0].iter().enumerate() {
        if t.is_nan() {
            continue;
        }
        if t.abs() >= 1e11 {
            return Err(c.range_err(format!(
                "rows[{i}].time = {t} looks like milliseconds; time must be UTC seconds (divide by 1000)"
            )));
        }
        let b = buckets
            .entry(format::bucket_start(t.floor() as i64, tf))
            .or_insert_with(|| Bucket { high: f64::NAN, low: f64::NAN, ..Bucket::default() });
        let (o, h, l, cl, v) = (cols[1][i], cols[2][i], cols[3][i], cols[4][i], cols[5][i]);
        if !o.is_nan() && b.open.is_none_or(|(t0, _)| t < t0) {
            b.open = Some((t, o));
        }
        if !cl.is_nan() && b.close.is_none_or(|(t0, _)| t >= t0) {
            b.close = Some((t, cl));
        }
        b.high = b.high.max(h);
        b.low = b.low.min(l);
        if !v.is_nan() {
            b.volume = Some(b.volume.unwrap_or(0.0) + v);
        }
    }
    let mut out = Vec::with_capacity(buckets.len());
    for (t, b) in buckets {
        let pairs = vec![
            (js_string!("time"), JsValue::new(t as f64)),
            (js_string!("open"), out_number(b.open.map_or(f64::NAN, |p| p.1))),
            (js_string!("high"), out_number(b.high)),
            (js_string!("low"), out_number(b.low)),
            (js_string!("close"), out_number(b.close.map_or(f64::NAN, |p| p.1))),
            (js_string!("volume"), out_number(b.volume.unwrap_or(f64::NAN))),
        ];
        out.push(new_object(pairs, ctx));
    }
    Ok(JsArray::from_iter(out, ctx).into())
}

/// Aggregations shared by `groupBy` and `pivot`.
#[derive(Clone, Copy, PartialEq)]
enum Agg {
    Sum,
    Mean,
    Min,
    Max,
    First,
    Last,
    Count,
}

const AGG_NAMES: &str = "'sum', 'mean', 'min', 'max', 'first', 'last' or 'count'";

fn parse_agg(s: &str) -> Option<Agg> {
    Some(match s {
        "sum" => Agg::Sum,
        "mean" | "avg" => Agg::Mean,
        "min" => Agg::Min,
        "max" => Agg::Max,
        "first" => Agg::First,
        "last" => Agg::Last,
        "count" => Agg::Count,
        _ => return None,
    })
}

fn aggregate(agg: Agg, vals: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let present = || vals.iter().filter(|v| !v.is_null_or_undefined());
    Ok(match agg {
        Agg::First => present().next().cloned().unwrap_or(JsValue::null()),
        Agg::Last => present().next_back().cloned().unwrap_or(JsValue::null()),
        Agg::Count => JsValue::new(present().count()),
        _ => {
            let mut xs = Vec::with_capacity(vals.len());
            for v in vals {
                xs.push(scalar(v, ctx)?);
            }
            out_number(match agg {
                Agg::Sum => kernels::sum(&xs),
                Agg::Mean => kernels::mean(&xs),
                Agg::Min => kernels::min(&xs),
                _ => kernels::max(&xs),
            })
        }
    })
}

/// Key of a row: `row[key]` for a string key, `key(row, index)` for a function.
fn row_key(row: &JsValue, i: usize, key: &JsValue, ctx: &mut Context) -> JsResult<JsValue> {
    if let Some(f) = key.as_object().filter(JsObject::is_callable) {
        return f.call(&JsValue::undefined(), &[row.clone(), JsValue::new(i)], ctx);
    }
    match (row.as_object(), key.as_string()) {
        (Some(o), Some(k)) => get_field(&o, &k.into(), ctx),
        _ => Ok(JsValue::undefined()),
    }
}

/// Insertion-ordered groups keyed by the string form of a value.
struct Groups<T> {
    order: Vec<(JsString, JsValue, T)>,
    index: HashMap<JsString, usize>,
}

impl<T: Default> Groups<T> {
    fn new() -> Self {
        Self { order: Vec::new(), index: HashMap::new() }
    }

    fn entry(&mut self, raw: JsValue, ctx: &mut Context) -> JsResult<&mut T> {
        let name = raw.to_string(ctx)?;
        let i = match self.index.get(&name) {
            Some(&i) => i,
            None => {
                self.order.push((name.clone(), raw, T::default()));
                self.index.insert(name, self.order.len() - 1);
                self.order.len() - 1
            }
        };
        Ok(&mut self.order[i].2)
    }
}

fn group_by(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("groupBy(rows, key, aggregations?)");
    let key = arg(args, 1);
    if key.as_string().is_none() && !key.as_object().is_some_and(|o| o.is_callable()) {
        return Err(c.type_err(format!(
            "key must be a field name or a function (row, index) => key, got {}",
            describe(key)
        )));
    }
    let rows = c.rows(arg(args, 0), ctx)?;
    let mut groups: Groups<Vec<JsValue>> = Groups::new();
    for (i, row) in rows.iter().enumerate() {
        let k = row_key(row, i, key, ctx)?;
        groups.entry(k, ctx)?.push(row.clone());
    }
    let aggs_v = arg(args, 2);
    if is_absent(aggs_v) {
        let obj = JsObject::with_object_proto(ctx.intrinsics());
        for (name, _, members) in groups.order {
            let arr = JsArray::from_iter(members, ctx);
            obj.create_data_property_or_throw(name, arr, ctx)?;
        }
        return Ok(obj.into());
    }
    let spec = match aggs_v.as_object().filter(|o| !o.is_array() && !o.is_callable()) {
        Some(_) => aggs_v.to_json(ctx)?,
        None => None,
    };
    let Some(serde_json::Value::Object(spec)) = spec else {
        return Err(c.type_err(format!(
            "aggregations must be an object like {{volume: 'sum', close: 'last'}}, got {}",
            describe(aggs_v)
        )));
    };
    let mut plan = Vec::new();
    for (field, agg) in &spec {
        let agg = agg.as_str().and_then(parse_agg).ok_or_else(|| {
            c.type_err(format!("aggregations.{field} must be one of {AGG_NAMES}, got {agg}"))
        })?;
        plan.push((JsString::from(field.as_str()), agg));
    }
    let key_name = key.as_string().unwrap_or(js_string!("key"));
    let mut out = Vec::with_capacity(groups.order.len());
    for (_, raw, members) in groups.order {
        let mut pairs =
            vec![(key_name.clone(), raw), (js_string!("count"), JsValue::new(members.len()))];
        for (field, agg) in &plan {
            let pk: PropertyKey = field.clone().into();
            let mut vals = Vec::with_capacity(members.len());
            for m in &members {
                vals.push(match m.as_object() {
                    Some(o) => get_field(&o, &pk, ctx)?,
                    None => JsValue::undefined(),
                });
            }
            pairs.push((field.clone(), aggregate(*agg, &vals, ctx)?));
        }
        out.push(new_object(pairs, ctx));
    }
    Ok(JsArray::from_iter(out, ctx).into())
}

fn pivot(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("pivot(rows, index, columns, values, agg = 'last')");
    // Also accepts pivot(rows, {index, columns, values, agg}).
    let opts: Vec<JsValue> = match arg(args, 1).as_object().filter(|o| !o.is_callable()) {
        Some(o) => {
            let mut v = Vec::new();
            for k in ["index", "columns", "values", "agg"] {
                v.push(o.get(JsString::from(k), ctx)?);
            }
            v
        }
        None => args.iter().skip(1).take(4).cloned().collect(),
    };
    let index = c.string_arg(arg(&opts, 0), "index")?;
    let columns = c.string_arg(arg(&opts, 1), "columns")?;
    let values = c.string_arg(arg(&opts, 2), "values")?;
    let agg_v = arg(&opts, 3);
    let agg = if is_absent(agg_v) {
        Agg::Last
    } else {
        agg_v.as_string().and_then(|s| parse_agg(&s.to_std_string_escaped())).ok_or_else(|| {
            c.type_err(format!("agg must be one of {AGG_NAMES}, got {}", describe(agg_v)))
        })?
    };
    let rows = c.rows(arg(args, 0), ctx)?;
    let (ik, ck, vk): (PropertyKey, PropertyKey, PropertyKey) =
        (index.clone().into(), columns.into(), values.into());
    let mut groups: Groups<HashMap<JsString, Vec<JsValue>>> = Groups::new();
    let mut cols: Vec<JsString> = Vec::new();
    let mut seen = HashMap::new();
    for row in &rows {
        let Some(o) = row.as_object() else { continue };
        let (iv, cv, vv) =
            (get_field(&o, &ik, ctx)?, get_field(&o, &ck, ctx)?, get_field(&o, &vk, ctx)?);
        if iv.is_null_or_undefined() || cv.is_null_or_undefined() {
            continue;
        }
        let cname = cv.to_string(ctx)?;
        if seen.insert(cname.clone(), ()).is_none() {
            cols.push(cname.clone());
        }
        groups.entry(iv, ctx)?.entry(cname).or_default().push(vv);
    }
    let mut order = groups.order;
    if order.iter().all(|(_, raw, _)| raw.is_number()) {
        order.sort_by(|a, b| {
            let (x, y) = (a.1.as_number().unwrap_or(0.0), b.1.as_number().unwrap_or(0.0));
            x.total_cmp(&y)
        });
    }
    let mut out = Vec::with_capacity(order.len());
    for (_, raw, cells) in order {
        let mut pairs = vec![(index.clone(), raw)];
        for col in &cols {
            let v = match cells.get(col) {
                Some(vals) => aggregate(agg, vals, ctx)?,
                None => JsValue::null(),
            };
            pairs.push((col.clone(), v));
        }
        out.push(new_object(pairs, ctx));
    }
    Ok(JsArray::from_iter(out, ctx).into())
}

// ---------------------------------------------------------------------------------------------
// Formatting and time

/// `(decimals, compact, sign)` from a number or an options object.
fn format_opts(
    c: &Call,
    v: &JsValue,
    default_decimals: Option<usize>,
    ctx: &mut Context,
) -> JsResult<(Option<usize>, bool, bool)> {
    let dec = |d: &JsValue| -> JsResult<Option<usize>> {
        if is_absent(d) {
            return Ok(default_decimals);
        }
        match d.as_number() {
            Some(n) if n.fract() == 0.0 && (0.0..=20.0).contains(&n) => Ok(Some(n as usize)),
            _ => Err(c.range_err(format!(
                "decimals must be an integer from 0 to 20, got {}",
                describe(d)
            ))),
        }
    };
    if let Some(o) = v.as_object() {
        let d = o.get(js_string!("decimals"), ctx)?;
        let compact = o.get(js_string!("compact"), ctx)?.to_boolean();
        let sign = o.get(js_string!("sign"), ctx)?.to_boolean();
        Ok((dec(&d)?, compact, sign))
    } else if is_absent(v) || v.is_number() {
        Ok((dec(v)?, false, false))
    } else {
        Err(c.type_err(format!(
            "options must be a number of decimals or an object {{decimals, compact, sign}}, got {}",
            describe(v)
        )))
    }
}

fn format_number(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("formatNumber(x, options?)");
    let x = scalar(arg(args, 0), ctx)?;
    let (dec, compact, sign) = format_opts(&c, arg(args, 1), None, ctx)?;
    let dec = dec.unwrap_or(if compact { 1 } else { 2 });
    Ok(JsString::from(format::number(x, dec, compact, sign)).into())
}

fn format_percent(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("formatPercent(x, options?)");
    let x = scalar(arg(args, 0), ctx)?;
    let (dec, _, sign) = format_opts(&c, arg(args, 1), Some(2), ctx)?;
    Ok(JsString::from(format::percent(x, dec.unwrap_or(2), sign)).into())
}

fn format_currency(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("formatCurrency(x, currency = 'USD', options?)");
    let x = scalar(arg(args, 0), ctx)?;
    let (cur, opts) = match arg(args, 1).as_string() {
        Some(s) => (s.to_std_string_escaped().to_uppercase(), arg(args, 2)),
        None if is_absent(arg(args, 1)) => ("USD".to_string(), arg(args, 2)),
        None => ("USD".to_string(), arg(args, 1)),
    };
    let (dec, compact, _) = format_opts(&c, opts, None, ctx)?;
    Ok(JsString::from(format::currency(x, &cur, dec, compact)).into())
}

/// UTC seconds from a number (seconds, or ms if ≥ 1e11), date string or Date; `None` if
/// missing, `Err` if unparseable.
fn time_of(c: &Call, v: &JsValue, ctx: &mut Context) -> JsResult<Option<f64>> {
    if v.is_null_or_undefined() {
        return Ok(None);
    }
    if let Some(s) = v.as_string() {
        let s = s.to_std_string_escaped();
        return match format::parse_date(&s) {
            Some(t) => Ok(Some(t)),
            None => Err(c.range_err(format!(
                "cannot parse date string {s:?}; use ISO form like '2024-01-31', '2024-01-31 14:00' or \
                 '2024-01-31T14:00:00Z' (UTC unless an offset is given)"
            ))),
        };
    }
    if let Some(o) = v.as_object() {
        // Date objects (and anything else) convert to milliseconds through valueOf.
        let ms = v.to_number(ctx)?;
        if !ms.is_finite() {
            return Err(c.range_err(format!("{} is not a valid date", describe(&o.into()))));
        }
        return Ok(Some((ms / 1000.0).floor()));
    }
    let n = scalar(v, ctx)?;
    Ok(n.is_finite().then(|| format::seconds_from_number(n)))
}

fn format_date(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("formatDate(time, format = 'YYYY-MM-DD')");
    let fmt_v = arg(args, 1);
    let fmt = match fmt_v.as_string() {
        Some(s) => s.to_std_string_escaped(),
        None if is_absent(fmt_v) => "YYYY-MM-DD".to_string(),
        None => {
            return Err(c.type_err(format!(
                "format must be a string like 'YYYY-MM-DD HH:mm', got {}",
                describe(fmt_v)
            )));
        }
    };
    let s = match time_of(&c, arg(args, 0), ctx)? {
        Some(t) => format::date(t, &fmt),
        None => format::MISSING.to_string(),
    };
    Ok(JsString::from(s).into())
}

fn to_time(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let c = Call::new("toTime(value)");
    Ok(time_of(&c, arg(args, 0), ctx)?.map_or(JsValue::null(), JsValue::new))
}

#[cfg(test)]
mod tests;
