//! `Intl` for the sandbox: a V8-compatible subset of ECMA-402, built without Boa's `intl`
//! feature (which is partial and silently wrong in places, and heavy).
//!
//! Owns the `Intl` global (NumberFormat, DateTimeFormat, Collator, PluralRules,
//! RelativeTimeFormat, ListFormat, getCanonicalLocales, supportedLocalesOf) and the
//! locale-sensitive built-ins (`Number`/`BigInt`/`Date`/`Array` `toLocale*String`,
//! `String.prototype.localeCompare`, `toLocaleUpperCase`/`toLocaleLowerCase`). Output matches
//! V8 (Node 20: ICU 78, CLDR 48) for what is supported: the locales en (en-US and the regions
//! that format like it), en-GB, en-IN, en-CA, en-AU, de, fr and ja. What V8 would format with
//! data this sandbox does not have (another language or region, a numbering system or
//! calendar, generic zone names, a date range) throws a `RangeError` saying so, rather than
//! formatting differently.
//!
//! Everything is native Rust (no script to compile on first use): option reading
//! (`options.rs`), locale negotiation (`locale.rs`), exact decimal rounding (`decimal.rs`),
//! numbers (`number.rs`), dates with ICU's pattern generator and IANA zones (`datetime.rs`),
//! collation (`collator.rs`), plural rules, relative time and lists (`plural.rs`), over CLDR
//! data generated from the same Node (`data.rs`, by `sandbox/intl-gen.js`; checked against V8
//! with `sandbox/intl-vectors.js`). Realm creation pays for a lazy `Intl` accessor and the
//! replaced prototype methods (a few native function objects, ~3 µs); the `Intl` object and
//! its constructors are built on first access, and `toLocaleString` and friends never build
//! it. Formatters live in a per-realm registry (deduplicated by their resolved options); the JS
//! objects hold an index into it.

mod collator;
#[rustfmt::skip]
mod data;
mod datetime;
mod decimal;
mod locale;
mod number;
mod options;
mod plural;
mod shape;
#[cfg(test)]
mod tests;
mod text_formats;

use std::cell::RefCell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::rc::Rc;

use boa_engine::object::builtins::{JsArray, JsDate};
use boa_engine::object::{ConstructorBuilder, FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::{Attribute, PropertyDescriptor};
use boa_engine::{
    Context, JsArgs, JsNativeError, JsObject, JsResult, JsString, JsSymbol, JsValue,
    NativeFunction, js_string,
};

use collator::Collator;
use datetime::{DateTimeFormat, Required};
use locale::LanguageTag;
use number::{IntlNum, NumberFormat};
use text_formats::{ListFormat, PluralRules, RelativeTimeFormat};

/// One part of a formatted value (`formatToParts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    pub ty: &'static str,
    pub value: String,
}

impl Part {
    fn new(ty: &'static str, value: impl Into<String>) -> Self {
        Self { ty, value: value.into() }
    }
}

/// A formatter held by the realm.
#[derive(Debug)]
enum Item {
    Number(Box<NumberFormat>),
    Date(Box<DateTimeFormat>),
    Collator(Collator),
    Plural(Box<PluralRules>),
    Relative(Box<RelativeTimeFormat>),
    List(Box<ListFormat>),
}

impl Item {
    fn kind(&self) -> Kind {
        match self {
            Self::Number(_) => Kind::NumberFormat,
            Self::Date(_) => Kind::DateTimeFormat,
            Self::Collator(_) => Kind::Collator,
            Self::Plural(_) => Kind::PluralRules,
            Self::Relative(_) => Kind::RelativeTimeFormat,
            Self::List(_) => Kind::ListFormat,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    NumberFormat,
    DateTimeFormat,
    Collator,
    PluralRules,
    RelativeTimeFormat,
    ListFormat,
}

impl Kind {
    const ALL: [Self; 6] = [
        Self::NumberFormat,
        Self::DateTimeFormat,
        Self::Collator,
        Self::PluralRules,
        Self::RelativeTimeFormat,
        Self::ListFormat,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::NumberFormat => "NumberFormat",
            Self::DateTimeFormat => "DateTimeFormat",
            Self::Collator => "Collator",
            Self::PluralRules => "PluralRules",
            Self::RelativeTimeFormat => "RelativeTimeFormat",
            Self::ListFormat => "ListFormat",
        }
    }
}

/// Marker making the object data type ([`Slot`]) unique to this module.
struct IntlMarker;

/// The data of an Intl object: its index in the realm's [`Registry`].
type Slot = (PhantomData<IntlMarker>, usize);

/// Per-realm state: the formatters and the prototypes of the constructors.
#[derive(Default)]
struct Registry {
    items: RefCell<Vec<Rc<Item>>>,
    /// Resolved-options text → index, so identical formatters made in a loop share one entry.
    dedup: RefCell<HashMap<String, usize>>,
    protos: RefCell<HashMap<Kind, JsObject>>,
    /// `Intl.<constructor>` once built (or assigned).
    ctors: RefCell<HashMap<Kind, JsValue>>,
    /// The value of the global `Intl` once built (or assigned).
    intl: RefCell<Option<JsValue>>,
}

fn registry(ctx: &mut Context) -> &Registry {
    if ctx.get_data::<Registry>().is_none() {
        ctx.insert_data(Registry::default());
    }
    ctx.get_data::<Registry>().expect("inserted above")
}

fn register(item: Item, ctx: &mut Context) -> usize {
    let key = format!("{item:?}");
    let reg = registry(ctx);
    if let Some(i) = reg.dedup.borrow().get(&key) {
        return *i;
    }
    let mut items = reg.items.borrow_mut();
    items.push(Rc::new(item));
    let i = items.len() - 1;
    reg.dedup.borrow_mut().insert(key, i);
    i
}

fn item_of(this: &JsValue, kind: Kind, method: &str, ctx: &mut Context) -> JsResult<Rc<Item>> {
    let index = this.as_object().and_then(|o| o.downcast_ref::<Slot>().map(|s| s.1));
    let item = index.and_then(|i| registry(ctx).items.borrow().get(i).cloned());
    match item {
        Some(item) if item.kind() == kind => Ok(item),
        _ => Err(JsNativeError::typ()
            .with_message(format!(
                "Method Intl.{}.prototype.{method} called on incompatible receiver {}",
                kind.name(),
                if this.is_object() { "#<Object>".to_owned() } else { this.display().to_string() }
            ))
            .into()),
    }
}

/// Installs the lazy `Intl` global and the locale-sensitive prototype methods. Cheap: no
/// `Intl` object is built until code reads `Intl`.
pub(super) fn install(ctx: &mut Context) -> JsResult<()> {
    let realm = ctx.realm().clone();
    let getter = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(intl_getter))
        .name(js_string!("get Intl"))
        .build();
    let setter = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(intl_setter))
        .name(js_string!("set Intl"))
        .length(1)
        .build();
    ctx.global_object().define_property_or_throw(
        js_string!("Intl"),
        PropertyDescriptor::builder().get(getter).set(setter).enumerable(false).configurable(true),
        ctx,
    )?;
    let ctors = ctx.intrinsics().constructors();
    let number = ctors.number().prototype();
    let bigint = ctors.bigint().prototype();
    let date = ctors.date().prototype();
    let string = ctors.string().prototype();
    let array = ctors.array().prototype();
    let methods: [(&JsObject, &str, Native, usize); 9] = [
        (&array, "toLocaleString", array_to_locale_string, 0),
        (&number, "toLocaleString", number_to_locale_string, 0),
        (&bigint, "toLocaleString", bigint_to_locale_string, 0),
        (&date, "toLocaleString", date_to_locale_string, 0),
        (&date, "toLocaleDateString", date_to_locale_date_string, 0),
        (&date, "toLocaleTimeString", date_to_locale_time_string, 0),
        (&string, "localeCompare", string_locale_compare, 1),
        (&string, "toLocaleUpperCase", string_to_locale_upper_case, 0),
        (&string, "toLocaleLowerCase", string_to_locale_lower_case, 0),
    ];
    for (proto, name, f, length) in methods {
        let name = JsString::from(name);
        let func = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(f))
            .name(name.clone())
            .length(length)
            .build();
        proto.define_property_or_throw(
            name,
            PropertyDescriptor::builder()
                .value(func)
                .writable(true)
                .enumerable(false)
                .configurable(true),
            ctx,
        )?;
    }
    Ok(())
}

// `Intl` stays an accessor: redefining it as a data property from inside its getter confuses
// Boa's inline cache for global names (it caches the accessor slot with the new shape).
fn intl_getter(_this: &JsValue, _args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    if let Some(v) = registry(ctx).intl.borrow().clone() {
        return Ok(v);
    }
    let intl: JsValue = build_intl(ctx)?.into();
    *registry(ctx).intl.borrow_mut() = Some(intl.clone());
    Ok(intl)
}

fn intl_setter(_this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    *registry(ctx).intl.borrow_mut() = Some(args.get_or_undefined(0).clone());
    Ok(JsValue::undefined())
}

type Native = fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;
type Methods = &'static [(&'static str, Native, usize)];
type Getters = &'static [(&'static str, Native)];

/// Builds `Intl` (once per realm that reads `Intl`). Its constructors are accessors that build
/// each constructor on first use, so `new Intl.NumberFormat(…)` pays for one class, not six.
fn build_intl(ctx: &mut Context) -> JsResult<JsObject> {
    let realm = ctx.realm().clone();
    let mut intl = ObjectInitializer::new(ctx);
    intl.function(
        NativeFunction::from_fn_ptr(get_canonical_locales),
        js_string!("getCanonicalLocales"),
        1,
    );
    for (index, kind) in Kind::ALL.into_iter().enumerate() {
        let get = FunctionObjectBuilder::new(
            &realm,
            NativeFunction::from_copy_closure_with_captures(
                |_, _, index: &usize, ctx| constructor(Kind::ALL[*index], ctx),
                index,
            ),
        )
        .name(JsString::from(format!("get {}", kind.name())))
        .build();
        let set = FunctionObjectBuilder::new(
            &realm,
            NativeFunction::from_copy_closure_with_captures(
                |_, args, index: &usize, ctx| {
                    let value = args.get_or_undefined(0).clone();
                    registry(ctx).ctors.borrow_mut().insert(Kind::ALL[*index], value);
                    Ok(JsValue::undefined())
                },
                index,
            ),
        )
        .name(JsString::from(format!("set {}", kind.name())))
        .length(1)
        .build();
        intl.accessor(JsString::from(kind.name()), Some(get), Some(set), Attribute::CONFIGURABLE);
    }
    intl.property(JsSymbol::to_string_tag(), js_string!("Intl"), Attribute::CONFIGURABLE);
    Ok(intl.build())
}

/// `Intl.<kind>`: built on first access.
fn constructor(kind: Kind, ctx: &mut Context) -> JsResult<JsValue> {
    if let Some(v) = registry(ctx).ctors.borrow().get(&kind) {
        return Ok(v.clone());
    }
    let ctor: JsValue = build_constructor(kind, ctx)?.into();
    registry(ctx).ctors.borrow_mut().insert(kind, ctor.clone());
    Ok(ctor)
}

fn build_constructor(kind: Kind, ctx: &mut Context) -> JsResult<JsObject> {
    let (construct, methods, getters): (Native, Methods, Getters) = match kind {
        Kind::NumberFormat => (
            nf_construct,
            &[
                ("resolvedOptions", nf_resolved_options, 0),
                ("formatToParts", nf_format_to_parts, 1),
                ("formatRange", nf_format_range, 2),
                ("formatRangeToParts", nf_format_range_to_parts, 2),
            ],
            &[("format", nf_format_getter)],
        ),
        Kind::DateTimeFormat => (
            dtf_construct,
            &[
                ("resolvedOptions", dtf_resolved_options, 0),
                ("formatToParts", dtf_format_to_parts, 1),
                ("formatRange", dtf_format_range, 2),
                ("formatRangeToParts", dtf_format_range_to_parts, 2),
            ],
            &[("format", dtf_format_getter)],
        ),
        Kind::Collator => (
            collator_construct,
            &[("resolvedOptions", collator_resolved_options, 0)],
            &[("compare", collator_compare_getter)],
        ),
        Kind::PluralRules => (
            pr_construct,
            &[
                ("resolvedOptions", pr_resolved_options, 0),
                ("select", pr_select, 1),
                ("selectRange", pr_select_range, 2),
            ],
            &[],
        ),
        Kind::RelativeTimeFormat => (
            rtf_construct,
            &[
                ("resolvedOptions", rtf_resolved_options, 0),
                ("format", rtf_format, 2),
                ("formatToParts", rtf_format_to_parts, 2),
            ],
            &[],
        ),
        Kind::ListFormat => (
            lf_construct,
            &[
                ("resolvedOptions", lf_resolved_options, 0),
                ("format", lf_format, 1),
                ("formatToParts", lf_format_to_parts, 1),
            ],
            &[],
        ),
    };
    let realm = ctx.realm().clone();
    let mut b = ConstructorBuilder::new(ctx, NativeFunction::from_fn_ptr(construct));
    b.name(kind.name()).length(0);
    for (name, f, len) in methods {
        b.method(NativeFunction::from_fn_ptr(*f), JsString::from(*name), *len);
    }
    for (name, f) in getters {
        let g = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(*f))
            .name(JsString::from(format!("get {name}")))
            .build();
        b.accessor(JsString::from(*name), Some(g), None, Attribute::CONFIGURABLE);
    }
    b.static_method(
        NativeFunction::from_fn_ptr(supported_locales_of),
        js_string!("supportedLocalesOf"),
        1,
    );
    b.property(
        JsSymbol::to_string_tag(),
        JsString::from(format!("Intl.{}", kind.name())),
        Attribute::CONFIGURABLE,
    );
    let built = b.build();
    registry(ctx).protos.borrow_mut().insert(kind, built.prototype());
    Ok(built.constructor())
}

fn get_canonical_locales(
    _this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let list = locale::get_canonical_locales(args.get_or_undefined(0), ctx)?;
    strings_array(&list, ctx)
}

fn supported_locales_of(_this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let list = locale::supported_locales_of(args.get_or_undefined(0), ctx)?;
    let opts = options::Options::coerce(args.get_or_undefined(1), "Intl", ctx)?;
    opts.string_or("localeMatcher", &["lookup", "best fit"], "best fit", ctx)?;
    strings_array(&list, ctx)
}

fn strings_array(list: &[String], ctx: &mut Context) -> JsResult<JsValue> {
    let values: Vec<JsValue> =
        list.iter().map(|s| JsValue::from(JsString::from(s.as_str()))).collect();
    Ok(JsArray::from_iter(values, ctx).into())
}

/// A new instance of `kind` with `item`, its prototype from `new_target` (or the intrinsic one
/// when the constructor is called without `new`).
fn instantiate(
    new_target: &JsValue,
    kind: Kind,
    item: Item,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let mut proto = None;
    if let Some(nt) = new_target.as_object() {
        proto = nt.get(js_string!("prototype"), ctx)?.as_object();
    }
    let proto = match proto {
        Some(p) => p,
        None => registry(ctx)
            .protos
            .borrow()
            .get(&kind)
            .cloned()
            .ok_or_else(|| JsNativeError::typ().with_message("Intl is not initialized"))?,
    };
    let index = register(item, ctx);
    let slot: Slot = (PhantomData, index);
    Ok(JsObject::from_proto_and_data(Some(proto), slot).into())
}

fn require_new(new_target: &JsValue, kind: Kind) -> JsResult<()> {
    if new_target.is_undefined() {
        return Err(JsNativeError::typ()
            .with_message(format!("Constructor Intl.{} requires 'new'", kind.name()))
            .into());
    }
    Ok(())
}

fn resolved_object(entries: Vec<(&'static str, JsValue)>, ctx: &mut Context) -> JsValue {
    let mut o = ObjectInitializer::new(ctx);
    for (k, v) in entries {
        o.property(JsString::from(k), v, Attribute::all());
    }
    o.build().into()
}

fn parts_array(parts: Vec<Part>, ctx: &mut Context) -> JsResult<JsValue> {
    let values: Vec<JsValue> = parts
        .into_iter()
        .map(|p| {
            let mut o = ObjectInitializer::new(ctx);
            o.property(js_string!("type"), JsString::from(p.ty), Attribute::all());
            o.property(js_string!("value"), JsString::from(p.value.as_str()), Attribute::all());
            o.build().into()
        })
        .collect();
    Ok(JsArray::from_iter(values, ctx).into())
}

fn string_value(s: &str) -> JsValue {
    JsValue::from(JsString::from(s))
}

// ---- NumberFormat ----

fn nf_construct(new_target: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let nf = NumberFormat::new(args.get_or_undefined(0), args.get_or_undefined(1), ctx)?;
    instantiate(new_target, Kind::NumberFormat, Item::Number(Box::new(nf)), ctx)
}

fn with_nf<R>(
    this: &JsValue,
    method: &str,
    ctx: &mut Context,
    f: impl FnOnce(&NumberFormat, &mut Context) -> JsResult<R>,
) -> JsResult<R> {
    let item = item_of(this, Kind::NumberFormat, method, ctx)?;
    let Item::Number(nf) = &*item else { unreachable!("kind checked") };
    f(nf, ctx)
}

fn nf_resolved_options(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let entries = with_nf(this, "resolvedOptions", ctx, |nf, _| Ok(nf.resolved_options()))?;
    Ok(resolved_object(entries, ctx))
}

fn nf_format_getter(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    item_of(this, Kind::NumberFormat, "format", ctx)?;
    let obj = this.as_object().expect("checked by item_of");
    let f = FunctionObjectBuilder::new(
        ctx.realm(),
        NativeFunction::from_copy_closure_with_captures(
            |_, args, obj: &JsObject, ctx| {
                let x = IntlNum::from_value(args.get_or_undefined(0), ctx)?;
                with_nf(&obj.clone().into(), "format", ctx, |nf, _| {
                    Ok(string_value(&nf.format(&x)))
                })
            },
            obj,
        ),
    )
    .length(1)
    .build();
    Ok(f.into())
}

fn nf_format_to_parts(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    item_of(this, Kind::NumberFormat, "formatToParts", ctx)?;
    let x = IntlNum::from_value(args.get_or_undefined(0), ctx)?;
    let parts = with_nf(this, "formatToParts", ctx, |nf, _| Ok(nf.format_to_parts(&x)))?;
    parts_array(parts, ctx)
}

fn range_args(args: &[JsValue], ctx: &mut Context) -> JsResult<(IntlNum, IntlNum)> {
    let (a, b) = (args.get_or_undefined(0), args.get_or_undefined(1));
    if a.is_undefined() || b.is_undefined() {
        return Err(JsNativeError::typ().with_message("start or end is undefined").into());
    }
    let x = IntlNum::from_value(a, ctx)?;
    let y = IntlNum::from_value(b, ctx)?;
    if matches!(x, IntlNum::NaN) || matches!(y, IntlNum::NaN) {
        return Err(JsNativeError::range().with_message("Invalid argument: NaN").into());
    }
    Ok((x, y))
}

fn nf_format_range(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    item_of(this, Kind::NumberFormat, "formatRange", ctx)?;
    let (x, y) = range_args(args, ctx)?;
    let parts = with_nf(this, "formatRange", ctx, |nf, _| Ok(nf.format_range(&x, &y)))?;
    Ok(string_value(&parts.iter().map(|(p, _)| p.value.as_str()).collect::<String>()))
}

fn nf_format_range_to_parts(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    item_of(this, Kind::NumberFormat, "formatRangeToParts", ctx)?;
    let (x, y) = range_args(args, ctx)?;
    let parts = with_nf(this, "formatRangeToParts", ctx, |nf, _| Ok(nf.format_range(&x, &y)))?;
    let values: Vec<JsValue> = parts
        .into_iter()
        .map(|(p, source)| {
            let mut o = ObjectInitializer::new(ctx);
            o.property(js_string!("type"), JsString::from(p.ty), Attribute::all());
            o.property(js_string!("value"), JsString::from(p.value.as_str()), Attribute::all());
            o.property(js_string!("source"), JsString::from(source), Attribute::all());
            o.build().into()
        })
        .collect();
    Ok(JsArray::from_iter(values, ctx).into())
}

// ---- DateTimeFormat ----

fn dtf_construct(new_target: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let dtf = DateTimeFormat::new(
        args.get_or_undefined(0),
        args.get_or_undefined(1),
        Required::Any,
        Required::Date,
        ctx,
    )?;
    instantiate(new_target, Kind::DateTimeFormat, Item::Date(Box::new(dtf)), ctx)
}

fn with_dtf<R>(
    this: &JsValue,
    method: &str,
    ctx: &mut Context,
    f: impl FnOnce(&DateTimeFormat, &mut Context) -> JsResult<R>,
) -> JsResult<R> {
    let item = item_of(this, Kind::DateTimeFormat, method, ctx)?;
    let Item::Date(dtf) = &*item else { unreachable!("kind checked") };
    f(dtf, ctx)
}

/// The time value a DateTimeFormat method formats: `undefined` → now; else `ToNumber`,
/// and `TimeClip` (NaN → RangeError).
fn date_arg(v: &JsValue, ctx: &mut Context) -> JsResult<f64> {
    let t = if v.is_undefined() {
        ctx.clock().now().millis_since_epoch() as f64
    } else if let Some(d) = v.as_object().and_then(|o| JsDate::from_object(o.clone()).ok()) {
        d.get_time(ctx)?.to_number(ctx)?
    } else {
        v.to_number(ctx)?
    };
    if !t.is_finite() || t.abs() > 8.64e15 {
        return Err(JsNativeError::range().with_message("Invalid time value").into());
    }
    Ok(t.trunc() + 0.0)
}

fn dtf_resolved_options(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let entries = with_dtf(this, "resolvedOptions", ctx, |d, _| Ok(d.resolved_options()))?;
    Ok(resolved_object(entries, ctx))
}

fn dtf_format_getter(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    item_of(this, Kind::DateTimeFormat, "format", ctx)?;
    let obj = this.as_object().expect("checked by item_of");
    let f = FunctionObjectBuilder::new(
        ctx.realm(),
        NativeFunction::from_copy_closure_with_captures(
            |_, args, obj: &JsObject, ctx| {
                let t = date_arg(args.get_or_undefined(0), ctx)?;
                with_dtf(&obj.clone().into(), "format", ctx, |d, _| Ok(string_value(&d.format(t))))
            },
            obj,
        ),
    )
    .length(1)
    .build();
    Ok(f.into())
}

fn dtf_format_to_parts(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    item_of(this, Kind::DateTimeFormat, "formatToParts", ctx)?;
    let t = date_arg(args.get_or_undefined(0), ctx)?;
    let parts = with_dtf(this, "formatToParts", ctx, |d, _| Ok(d.format_to_parts(t)))?;
    parts_array(parts, ctx)
}

fn date_range_args(args: &[JsValue], ctx: &mut Context) -> JsResult<(f64, f64)> {
    let (a, b) = (args.get_or_undefined(0), args.get_or_undefined(1));
    if a.is_undefined() || b.is_undefined() {
        return Err(JsNativeError::typ().with_message("startDate or endDate is undefined").into());
    }
    Ok((date_arg(a, ctx)?, date_arg(b, ctx)?))
}

fn dtf_format_range(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    item_of(this, Kind::DateTimeFormat, "formatRange", ctx)?;
    let (a, b) = date_range_args(args, ctx)?;
    let parts = with_dtf(this, "formatRange", ctx, |d, _| d.format_range(a, b))?;
    Ok(string_value(&parts.iter().map(|(p, _)| p.value.as_str()).collect::<String>()))
}

fn dtf_format_range_to_parts(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    item_of(this, Kind::DateTimeFormat, "formatRangeToParts", ctx)?;
    let (a, b) = date_range_args(args, ctx)?;
    let parts = with_dtf(this, "formatRangeToParts", ctx, |d, _| d.format_range(a, b))?;
    let values: Vec<JsValue> = parts
        .into_iter()
        .map(|(p, source)| {
            let mut o = ObjectInitializer::new(ctx);
            o.property(js_string!("type"), JsString::from(p.ty), Attribute::all());
            o.property(js_string!("value"), JsString::from(p.value.as_str()), Attribute::all());
            o.property(js_string!("source"), JsString::from(source), Attribute::all());
            o.build().into()
        })
        .collect();
    Ok(JsArray::from_iter(values, ctx).into())
}

// ---- Collator ----

fn collator_construct(
    new_target: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let c = Collator::new(args.get_or_undefined(0), args.get_or_undefined(1), ctx)?;
    instantiate(new_target, Kind::Collator, Item::Collator(c), ctx)
}

fn collator_resolved_options(
    this: &JsValue,
    _: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let item = item_of(this, Kind::Collator, "resolvedOptions", ctx)?;
    let Item::Collator(c) = &*item else { unreachable!("kind checked") };
    Ok(resolved_object(c.resolved_options(), ctx))
}

fn collator_compare_getter(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let item = item_of(this, Kind::Collator, "compare", ctx)?;
    drop(item);
    let index = this.as_object().and_then(|o| o.downcast_ref::<Slot>().map(|s| s.1)).unwrap_or(0);
    let f = FunctionObjectBuilder::new(
        ctx.realm(),
        NativeFunction::from_copy_closure_with_captures(
            |_, args, index: &usize, ctx| {
                let a = args.get_or_undefined(0).to_string(ctx)?;
                let b = args.get_or_undefined(1).to_string(ctx)?;
                let item = registry(ctx).items.borrow().get(*index).cloned();
                let Some(item) = item else { return Ok(JsValue::from(0)) };
                let Item::Collator(c) = &*item else { return Ok(JsValue::from(0)) };
                Ok(JsValue::from(c.compare(&a, &b)))
            },
            index,
        ),
    )
    .length(2)
    .build();
    Ok(f.into())
}

// ---- PluralRules ----

fn pr_construct(new_target: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    require_new(new_target, Kind::PluralRules)?;
    let pr = PluralRules::new(args.get_or_undefined(0), args.get_or_undefined(1), ctx)?;
    instantiate(new_target, Kind::PluralRules, Item::Plural(Box::new(pr)), ctx)
}

fn with_pr<R>(
    this: &JsValue,
    method: &str,
    ctx: &mut Context,
    f: impl FnOnce(&PluralRules, &mut Context) -> JsResult<R>,
) -> JsResult<R> {
    let item = item_of(this, Kind::PluralRules, method, ctx)?;
    let Item::Plural(pr) = &*item else { unreachable!("kind checked") };
    f(pr, ctx)
}

fn pr_resolved_options(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (mut entries, cats) = with_pr(this, "resolvedOptions", ctx, |pr, _| {
        Ok((pr.resolved_options(), pr.categories()))
    })?;
    let cats: Vec<String> = cats.iter().map(|s| (*s).to_owned()).collect();
    let cats = strings_array(&cats, ctx)?;
    entries.push(("pluralCategories", cats));
    Ok(resolved_object(entries, ctx))
}

fn pr_select(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    item_of(this, Kind::PluralRules, "select", ctx)?;
    let n = args.get_or_undefined(0).to_number(ctx)?;
    with_pr(this, "select", ctx, |pr, _| Ok(string_value(pr.select(n))))
}

fn pr_select_range(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    item_of(this, Kind::PluralRules, "selectRange", ctx)?;
    let (a, b) = (args.get_or_undefined(0), args.get_or_undefined(1));
    if a.is_undefined() || b.is_undefined() {
        return Err(JsNativeError::typ().with_message("start or end is undefined").into());
    }
    let (x, y) = (a.to_number(ctx)?, b.to_number(ctx)?);
    if x.is_nan() || y.is_nan() {
        return Err(JsNativeError::range().with_message("Invalid argument: NaN").into());
    }
    // CLDR plural ranges of en/de/fr/ja resolve to the end's category.
    with_pr(this, "selectRange", ctx, |pr, _| Ok(string_value(pr.select(y))))
}

// ---- RelativeTimeFormat ----

fn rtf_construct(new_target: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    require_new(new_target, Kind::RelativeTimeFormat)?;
    let r = RelativeTimeFormat::new(args.get_or_undefined(0), args.get_or_undefined(1), ctx)?;
    instantiate(new_target, Kind::RelativeTimeFormat, Item::Relative(Box::new(r)), ctx)
}

fn rtf_parts(
    this: &JsValue,
    args: &[JsValue],
    method: &str,
    ctx: &mut Context,
) -> JsResult<Vec<(Part, Option<&'static str>)>> {
    let item = item_of(this, Kind::RelativeTimeFormat, method, ctx)?;
    let Item::Relative(r) = &*item else { unreachable!("kind checked") };
    let value = args.get_or_undefined(0).to_number(ctx)?;
    let unit = args.get_or_undefined(1).to_string(ctx)?.to_std_string_escaped();
    r.format_to_parts(value, &unit)
}

fn rtf_resolved_options(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let item = item_of(this, Kind::RelativeTimeFormat, "resolvedOptions", ctx)?;
    let Item::Relative(r) = &*item else { unreachable!("kind checked") };
    Ok(resolved_object(r.resolved_options(), ctx))
}

fn rtf_format(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let parts = rtf_parts(this, args, "format", ctx)?;
    Ok(string_value(&parts.iter().map(|(p, _)| p.value.as_str()).collect::<String>()))
}

fn rtf_format_to_parts(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let parts = rtf_parts(this, args, "formatToParts", ctx)?;
    let values: Vec<JsValue> = parts
        .into_iter()
        .map(|(p, unit)| {
            let mut o = ObjectInitializer::new(ctx);
            o.property(js_string!("type"), JsString::from(p.ty), Attribute::all());
            o.property(js_string!("value"), JsString::from(p.value.as_str()), Attribute::all());
            if let Some(u) = unit {
                o.property(js_string!("unit"), JsString::from(u), Attribute::all());
            }
            o.build().into()
        })
        .collect();
    Ok(JsArray::from_iter(values, ctx).into())
}

// ---- ListFormat ----

fn lf_construct(new_target: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    require_new(new_target, Kind::ListFormat)?;
    let l = ListFormat::new(args.get_or_undefined(0), args.get_or_undefined(1), ctx)?;
    instantiate(new_target, Kind::ListFormat, Item::List(Box::new(l)), ctx)
}

fn lf_resolved_options(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let item = item_of(this, Kind::ListFormat, "resolvedOptions", ctx)?;
    let Item::List(l) = &*item else { unreachable!("kind checked") };
    Ok(resolved_object(l.resolved_options(), ctx))
}

/// `StringListFromIterable`.
fn string_list(v: &JsValue, ctx: &mut Context) -> JsResult<Vec<String>> {
    if v.is_undefined() {
        return Ok(Vec::new());
    }
    let method = v.to_object(ctx)?.get(JsSymbol::iterator(), ctx)?;
    let Some(method) = method.as_callable() else {
        return Err(JsNativeError::typ()
            .with_message(format!("{} is not iterable", v.display()))
            .into());
    };
    let iterator = method.call(v, &[], ctx)?;
    let iterator = iterator.as_object().ok_or_else(|| {
        JsNativeError::typ().with_message("Result of the Symbol.iterator method is not an object")
    })?;
    let next = iterator.get(js_string!("next"), ctx)?;
    let next = next
        .as_callable()
        .ok_or_else(|| JsNativeError::typ().with_message("next is not a function"))?;
    let mut out = Vec::new();
    loop {
        let result = next.call(&iterator.clone().into(), &[], ctx)?;
        let result = result
            .as_object()
            .ok_or_else(|| JsNativeError::typ().with_message("iterator result is not an object"))?;
        if result.get(js_string!("done"), ctx)?.to_boolean() {
            break;
        }
        let item = result.get(js_string!("value"), ctx)?;
        let Some(s) = item.as_string() else {
            let shown = item.display().to_string();
            if let Some(ret) = iterator.get(js_string!("return"), ctx)?.as_callable() {
                ret.call(&iterator.clone().into(), &[], ctx)?;
            }
            return Err(JsNativeError::typ()
                .with_message(format!("Iterable yielded {shown} which is not a string"))
                .into());
        };
        out.push(s.to_std_string_escaped());
    }
    Ok(out)
}

fn lf_parts(
    this: &JsValue,
    args: &[JsValue],
    method: &str,
    ctx: &mut Context,
) -> JsResult<Vec<Part>> {
    let item = item_of(this, Kind::ListFormat, method, ctx)?;
    let Item::List(l) = &*item else { unreachable!("kind checked") };
    let list = string_list(args.get_or_undefined(0), ctx)?;
    Ok(l.format_to_parts(&list))
}

fn lf_format(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let parts = lf_parts(this, args, "format", ctx)?;
    Ok(string_value(&parts.iter().map(|p| p.value.as_str()).collect::<String>()))
}

fn lf_format_to_parts(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let parts = lf_parts(this, args, "formatToParts", ctx)?;
    parts_array(parts, ctx)
}

// ---- the locale-sensitive built-ins ----

fn this_number(this: &JsValue) -> JsResult<f64> {
    if let Some(n) = this.as_number() {
        return Ok(n);
    }
    if let Some(o) = this.as_object()
        && let Some(n) = o.downcast_ref::<f64>()
    {
        return Ok(*n);
    }
    Err(JsNativeError::typ()
        .with_message("Number.prototype.toLocaleString requires that 'this' be a Number")
        .into())
}

fn number_to_locale_string(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let x = this_number(this)?;
    let nf = NumberFormat::new(args.get_or_undefined(0), args.get_or_undefined(1), ctx)?;
    Ok(string_value(&nf.format(&IntlNum::from_f64(x))))
}

fn bigint_to_locale_string(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let b = if let Some(b) = this.as_bigint() {
        b.clone()
    } else if let Some(b) =
        this.as_object().and_then(|o| o.downcast_ref::<boa_engine::JsBigInt>().map(|b| b.clone()))
    {
        b
    } else {
        return Err(JsNativeError::typ()
            .with_message("BigInt.prototype.toLocaleString requires that 'this' be a BigInt")
            .into());
    };
    let nf = NumberFormat::new(args.get_or_undefined(0), args.get_or_undefined(1), ctx)?;
    let x = IntlNum::from_value(&JsValue::from(b), ctx)?;
    Ok(string_value(&nf.format(&x)))
}

fn date_locale(
    this: &JsValue,
    args: &[JsValue],
    required: Required,
    defaults: Required,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let date =
        this.as_object().and_then(|o| JsDate::from_object(o.clone()).ok()).ok_or_else(|| {
            JsNativeError::typ().with_message("Date.prototype.toLocaleString: this is not a Date")
        })?;
    let t = date.get_time(ctx)?.to_number(ctx)?;
    if t.is_nan() {
        return Ok(js_string!("Invalid Date").into());
    }
    let dtf = DateTimeFormat::new(
        args.get_or_undefined(0),
        args.get_or_undefined(1),
        required,
        defaults,
        ctx,
    )?;
    Ok(string_value(&dtf.format(t)))
}

fn date_to_locale_string(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    date_locale(this, args, Required::Any, Required::All, ctx)
}

fn date_to_locale_date_string(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    date_locale(this, args, Required::Date, Required::Date, ctx)
}

fn date_to_locale_time_string(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    date_locale(this, args, Required::Time, Required::Time, ctx)
}

/// `Array.prototype.toLocaleString`, with V8's separator (",").
fn array_to_locale_string(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let array = this.to_object(ctx)?;
    let len = array.get(js_string!("length"), ctx)?.to_length(ctx)?;
    let mut out: Vec<u16> = Vec::new();
    for k in 0..len {
        if k > 0 {
            out.push(u16::from(b','));
        }
        let next = array.get(k, ctx)?;
        if next.is_null_or_undefined() {
            continue;
        }
        let f = next.to_object(ctx)?.get(js_string!("toLocaleString"), ctx)?;
        let f = f
            .as_callable()
            .ok_or_else(|| JsNativeError::typ().with_message("toLocaleString is not a function"))?;
        let s = f.call(&next, &args[..args.len().min(2)], ctx)?.to_string(ctx)?;
        out.extend(s.iter());
    }
    Ok(JsString::from(&out[..]).into())
}

fn this_string(this: &JsValue, method: &str, ctx: &mut Context) -> JsResult<JsString> {
    if this.is_null_or_undefined() {
        return Err(JsNativeError::typ()
            .with_message(format!("String.prototype.{method} called on null or undefined"))
            .into());
    }
    this.to_string(ctx)
}

fn string_locale_compare(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_string(this, "localeCompare", ctx)?;
    let that = args.get_or_undefined(0).to_string(ctx)?;
    let (locales, options) = (args.get_or_undefined(1), args.get_or_undefined(2));
    let result = if locales.is_undefined() && options.is_undefined() {
        Collator::default_compare(&s, &that)
    } else {
        Collator::new(locales, options, ctx)?.compare(&s, &that)
    };
    Ok(JsValue::from(result))
}

/// The case-mapping locale of `toLocale{Upper,Lower}Case`: the language of the first tag.
fn case_language(locales: &JsValue, ctx: &mut Context) -> JsResult<Option<String>> {
    let list: Vec<LanguageTag> = locale::canonicalize_list(locales, ctx)?;
    Ok(list.first().map(|t| t.language.clone()))
}

fn call_intrinsic(s: &JsString, name: &str, ctx: &mut Context) -> JsResult<JsValue> {
    let f = ctx.intrinsics().constructors().string().prototype().get(JsString::from(name), ctx)?;
    let f = f
        .as_callable()
        .ok_or_else(|| JsNativeError::typ().with_message(format!("{name} is not callable")))?
        .clone();
    f.call(&s.clone().into(), &[], ctx)
}

fn string_to_locale_upper_case(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let s = this_string(this, "toLocaleUpperCase", ctx)?;
    let lang = case_language(args.get_or_undefined(0), ctx)?;
    if matches!(lang.as_deref(), Some("tr" | "az")) {
        let text = s.to_std_string_escaped().replace('i', "\u{130}");
        return call_intrinsic(&JsString::from(text.as_str()), "toUpperCase", ctx);
    }
    call_intrinsic(&s, "toUpperCase", ctx)
}

fn string_to_locale_lower_case(
    this: &JsValue,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let s = this_string(this, "toLocaleLowerCase", ctx)?;
    let lang = case_language(args.get_or_undefined(0), ctx)?;
    if matches!(lang.as_deref(), Some("tr" | "az")) {
        let text = s
            .to_std_string_escaped()
            .replace("I\u{307}", "i")
            .replace('I', "\u{131}")
            .replace('\u{130}', "i");
        return call_intrinsic(&JsString::from(text.as_str()), "toLowerCase", ctx);
    }
    call_intrinsic(&s, "toLowerCase", ctx)
}
