//! The result's JSON text without Boa's `JSON.stringify` when that cannot make a difference.
//!
//! Boa's `JSON.stringify` builds a UTF-16 string per nested value and copies it into its
//! parent's (a 14 KB panel result took ~0.4 ms, a third of the whole run), and the result then
//! has to be converted to UTF-8. [`stringify`] writes UTF-8 into one buffer instead, but only
//! along a *pure* walk: plain objects and dense arrays whose serialization runs no JS at all
//! (no getters, no `toJSON` anywhere on the prototype chains, no proxies, wrappers, dates,
//! functions or BigInts, no cycles). Since the walk has no observable effect, giving up midway
//! ([`Fast::Bail`]) and running the pristine `JSON.stringify` instead is indistinguishable
//! from having run only the latter, and on a pure walk both produce the same text (checked by
//! a differential test against Boa's `JSON.stringify`).

use boa_engine::object::IndexPropertyValues;
use boa_engine::property::PropertyKey;
use boa_engine::value::JsVariant;
use boa_engine::{Context, JsObject, JsString, JsValue, js_string};

/// Nesting beyond this is left to the pristine `JSON.stringify` (and its native stack).
const MAX_DEPTH: usize = 128;

/// What the fast path made of a value.
#[derive(Debug, PartialEq)]
pub(super) enum Fast {
    /// The JSON text.
    Text(String),
    /// `JSON.stringify` returns `undefined` (a symbol or `undefined` at the top).
    Undefined,
    /// The text would be this many bytes, more than the cap.
    TooLarge(usize),
    /// Serializing this value may run JS or throw: use the pristine `JSON.stringify`.
    Bail,
}

/// `JSON.stringify(value)` as UTF-8 if that runs no JS; see the module docs.
pub(super) fn stringify(value: &JsValue, cap: usize, ctx: &mut Context) -> Fast {
    let mut w = Walk {
        out: String::with_capacity(1024),
        len: 0,
        cap,
        stack: Vec::new(),
        protos: Vec::new(),
        to_json: js_string!("toJSON").into(),
        length: js_string!("length").into(),
    };
    match w.value(value, ctx) {
        Err(Bail) => Fast::Bail,
        Ok(false) => Fast::Undefined,
        Ok(true) if w.len > cap => Fast::TooLarge(w.len),
        Ok(true) => Fast::Text(w.out),
    }
}

struct Bail;

struct Walk {
    /// The text so far, while it fits the cap.
    out: String,
    /// The text's length in bytes, also past the cap (then `out` stops growing).
    len: usize,
    cap: usize,
    /// Objects being serialized (cycle check; bounded by [`MAX_DEPTH`]).
    stack: Vec<JsObject>,
    /// Prototypes already checked for `toJSON`: `true` when none is reachable.
    protos: Vec<(JsObject, bool)>,
    to_json: PropertyKey,
    length: PropertyKey,
}

impl Walk {
    fn push(&mut self, s: &str) {
        if self.out.len() == self.len && self.len + s.len() <= self.cap {
            self.out.push_str(s);
        }
        self.len += s.len();
    }

    /// Forgets what was written after `mark` (a member whose value turned out `undefined`).
    fn rewind(&mut self, mark: usize) {
        self.len = mark;
        if self.out.len() > mark {
            self.out.truncate(mark);
        }
    }

    /// Writes `v`; `Ok(false)` when it serializes to `undefined` (nothing written).
    fn value(&mut self, v: &JsValue, ctx: &mut Context) -> Result<bool, Bail> {
        match v.variant() {
            JsVariant::Undefined | JsVariant::Symbol(_) => return Ok(false),
            JsVariant::Null => self.push("null"),
            JsVariant::Boolean(b) => self.push(if b { "true" } else { "false" }),
            JsVariant::Integer32(i) => self.push(itoa::Buffer::new().format(i)),
            JsVariant::Float64(f) => self.number(f),
            JsVariant::String(s) => self.string(&s),
            // `BigInt.prototype.toJSON` may exist, else it throws.
            JsVariant::BigInt(_) => return Err(Bail),
            JsVariant::Object(o) => self.object(&o, ctx)?,
        }
        Ok(true)
    }

    fn number(&mut self, f: f64) {
        if f.is_finite() {
            self.push(ryu_js::Buffer::new().format_finite(f));
        } else {
            self.push("null");
        }
    }

    fn object(&mut self, o: &JsObject, ctx: &mut Context) -> Result<(), Bail> {
        // Functions, proxies, wrappers, dates, raw JSON, errors, maps...: JS may run or the
        // shape differs; only plain objects and arrays go the fast way.
        let array = o.is_array();
        if !(array || o.is_ordinary()) || o.is_callable() {
            return Err(Bail);
        }
        if self.stack.len() >= MAX_DEPTH || self.stack.iter().any(|s| JsObject::equals(s, o)) {
            return Err(Bail);
        }
        self.check_to_json(o)?;
        self.stack.push(o.clone());
        let r = if array { self.array(o, ctx) } else { self.plain(o, ctx) };
        self.stack.pop();
        r
    }

    /// `Get(o, "toJSON")` must run no JS and give no callable.
    fn check_to_json(&mut self, o: &JsObject) -> Result<(), Bail> {
        if let Some(clean) = self.own_to_json(o)? {
            return if clean { Ok(()) } else { Err(Bail) };
        }
        let mut chain = Vec::new();
        let mut next = o.prototype();
        let verdict = loop {
            let Some(p) = next else { break true };
            if let Some((_, v)) = self.protos.iter().find(|(q, _)| JsObject::equals(q, &p)) {
                break *v;
            }
            if !(p.is_ordinary() || p.is_array()) {
                break false;
            }
            match self.own_to_json(&p) {
                Err(Bail) => break false,
                Ok(Some(clean)) => {
                    chain.push(p);
                    break clean;
                }
                Ok(None) => {
                    next = p.prototype();
                    chain.push(p);
                }
            }
        };
        self.protos.extend(chain.into_iter().map(|p| (p, verdict)));
        if verdict { Ok(()) } else { Err(Bail) }
    }

    /// An own `toJSON` of an ordinary object: `None` if absent, `Some(true)` if a plain
    /// non-callable value (ignored by `JSON.stringify`), `Bail` for a getter or a function.
    fn own_to_json(&self, o: &JsObject) -> Result<Option<bool>, Bail> {
        let Some(desc) = o.borrow().properties().get(&self.to_json) else { return Ok(None) };
        match desc.value() {
            Some(v) if desc.is_data_descriptor() && !v.is_callable() => Ok(Some(true)),
            _ => Err(Bail),
        }
    }

    fn array(&mut self, o: &JsObject, ctx: &mut Context) -> Result<(), Bail> {
        let b = o.borrow();
        let len = match b.properties().get(&self.length).as_ref().and_then(|d| d.value()) {
            Some(v) => v.as_number().ok_or(Bail)?,
            None => return Err(Bail),
        };
        self.push("[");
        // Holes read through the prototype chain: only dense storage of the full length.
        match b.properties().index_property_values() {
            IndexPropertyValues::DenseI32(it) if it.len() as f64 == len => {
                let mut buf = itoa::Buffer::new();
                for (i, x) in it.enumerate() {
                    if i > 0 {
                        self.push(",");
                    }
                    self.push(buf.format(*x));
                }
            }
            IndexPropertyValues::DenseF64(it) if it.len() as f64 == len => {
                for (i, x) in it.enumerate() {
                    if i > 0 {
                        self.push(",");
                    }
                    self.number(*x);
                }
            }
            IndexPropertyValues::DenseElement(it) if it.len() as f64 == len => {
                for (i, v) in it.enumerate() {
                    if i > 0 {
                        self.push(",");
                    }
                    if !self.value(v, ctx)? {
                        self.push("null");
                    }
                }
            }
            _ => return Err(Bail),
        }
        self.push("]");
        Ok(())
    }

    fn plain(&mut self, o: &JsObject, ctx: &mut Context) -> Result<(), Bail> {
        // Ordinary [[OwnPropertyKeys]]: indices ascending, then strings in creation order.
        let keys = o.own_property_keys(ctx).map_err(|_| Bail)?;
        let b = o.borrow();
        self.push("{");
        let mut first = true;
        for key in &keys {
            let name: JsString = match key {
                PropertyKey::Symbol(_) => continue,
                PropertyKey::String(s) => s.clone(),
                PropertyKey::Index(i) => {
                    JsString::from(itoa::Buffer::new().format(i.get()).to_owned())
                }
            };
            let desc = b.properties().get(key).ok_or(Bail)?;
            if desc.enumerable() != Some(true) {
                continue;
            }
            // A getter is JS: leave it to `JSON.stringify`.
            let Some(v) = desc.value().filter(|_| desc.is_data_descriptor()) else {
                return Err(Bail);
            };
            let mark = self.len;
            if !first {
                self.push(",");
            }
            self.string(&name);
            self.push(":");
            if self.value(v, ctx)? {
                first = false;
            } else {
                self.rewind(mark);
            }
        }
        self.push("}");
        Ok(())
    }

    /// QuoteJSONString, as UTF-8; lone surrogates become `\udxxx` escapes.
    fn string(&mut self, s: &JsString) {
        self.push("\"");
        match s.as_str().variant() {
            boa_engine::string::JsStrVariant::Latin1(bytes) => {
                let mut start = 0;
                for (i, &b) in bytes.iter().enumerate() {
                    if (0x20..0x80).contains(&b) && b != b'"' && b != b'\\' {
                        continue;
                    }
                    self.ascii(&bytes[start..i]);
                    start = i + 1;
                    self.char(char::from(b));
                }
                self.ascii(&bytes[start..]);
            }
            boa_engine::string::JsStrVariant::Utf16(units) => {
                for c in char::decode_utf16(units.iter().copied()) {
                    match c {
                        Ok(c) => self.char(c),
                        Err(e) => self.escape_unit(e.unpaired_surrogate()),
                    }
                }
            }
        }
        self.push("\"");
    }

    /// Bytes known to be printable ASCII without `"` or `\`.
    fn ascii(&mut self, bytes: &[u8]) {
        if let Ok(s) = std::str::from_utf8(bytes) {
            self.push(s);
        }
    }

    fn char(&mut self, c: char) {
        match c {
            '\u{8}' => self.push("\\b"),
            '\t' => self.push("\\t"),
            '\n' => self.push("\\n"),
            '\u{c}' => self.push("\\f"),
            '\r' => self.push("\\r"),
            '"' => self.push("\\\""),
            '\\' => self.push("\\\\"),
            c if c < ' ' => self.escape_unit(c as u16),
            c => self.push(c.encode_utf8(&mut [0; 4])),
        }
    }

    fn escape_unit(&mut self, u: u16) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let digits = [12, 8, 4, 0].map(|shift| HEX[usize::from((u >> shift) & 0xF)]);
        let mut buf = [b'\\', b'u', 0, 0, 0, 0];
        buf[2..].copy_from_slice(&digits);
        self.ascii(&buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boa_engine::Source;

    /// The pristine text of `JSON.stringify(value)`, or `None` when it throws or gives
    /// `undefined`.
    fn pristine(value: &JsValue, ctx: &mut Context) -> Option<String> {
        let json = ctx.intrinsics().objects().json();
        let f = json.get(js_string!("stringify"), ctx).ok()?;
        let out = f.as_callable()?.call(&JsValue::undefined(), std::slice::from_ref(value), ctx);
        out.ok()?.as_string().map(|s| s.to_std_string_escaped())
    }

    fn eval(src: &str, ctx: &mut Context) -> JsValue {
        ctx.eval(Source::from_bytes(src)).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    /// Same text as `JSON.stringify` whenever the fast path answers.
    fn same(src: &str, ctx: &mut Context) -> Fast {
        let v = eval(src, ctx);
        let fast = stringify(&v, usize::MAX, ctx);
        match &fast {
            Fast::Text(t) => assert_eq!(Some(t.clone()), pristine(&v, ctx), "{src}"),
            Fast::Undefined => assert_eq!(None, pristine(&v, ctx), "{src}"),
            Fast::TooLarge(_) | Fast::Bail => {}
        }
        fast
    }

    #[test]
    fn plain_values_match_json_stringify() {
        let ctx = &mut Context::default();
        for src in [
            "null",
            "true",
            "[false, null, undefined, Symbol('x')]",
            "0",
            "-0",
            "[-0, 1e21, 1e-7, 123456789012, 0.1 + 0.2, -1.5e300, 5e-324, NaN, Infinity, -Infinity]",
            "[1, 2, 3]",
            "[1.5, 2.25, NaN]",
            "'plain'",
            "'quote \" backslash \\\\ ctrl \\u0001 \\b\\f\\n\\r\\t \\u001f del \\u007f'",
            "'latin1 é ÿ \\u0080'",
            "'utf16 € 😀 \\ud800 lone \\udc00 x \\ud83d'",
            "({})",
            "({a: 1, b: 'x', c: [1, {d: null}], e: undefined, f: Symbol('f'), [Symbol('s')]: 1})",
            "({2: 'b', 1: 'a', z: 1, y: 2, '-1': 3, '01': 4, 4294967295: 5})",
            "Object.defineProperty({a: 1}, 'hidden', {value: 2, enumerable: false})",
            "Object.create(null)",
            "(() => { const o = Object.create({inherited: 1}); o.own = 2; return o; })()",
            "({toJSON: 5, x: 1})",
            "[[[]], [{}], {'': ''}]",
            "new Array(3).fill(7)",
            "(() => { const a = [1, 2]; a.extra = 3; return a; })()",
            "class P { constructor() { this.x = 1; } }; new P()",
            "({k: Array.from({length: 5}, (_, i) => ({i, sq: i * i, s: 'v' + i}))})",
        ] {
            assert!(matches!(same(src, ctx), Fast::Text(_) | Fast::Undefined), "{src}");
        }
        assert_eq!(same("undefined", ctx), Fast::Undefined);
        assert_eq!(same("Symbol('x')", ctx), Fast::Undefined);
    }

    #[test]
    fn anything_that_could_run_js_or_throw_bails() {
        let ctx = &mut Context::default();
        for src in [
            "10n",
            "[1, 10n]",
            "({get a() { return 1; }})",
            "({toJSON() { return 1; }})",
            "new Date(0)",
            "[new Date(0)]",
            "new Number(1)",
            "new String('s')",
            "new Proxy({}, {})",
            "new Proxy([], {})",
            "(() => { const o = {}; o.self = o; return o; })()",
            "(() => { const a = []; a.push(a); return a; })()",
            "[1, , 3]",
            "new Map()",
            "new Error('x')",
            "JSON.rawJSON('1')",
            "Object.setPrototypeOf({}, new Proxy({}, {}))",
            "(() => { let a = 1; for (let i = 0; i < 200; i++) a = [a]; return a; })()",
            "() => 1",
        ] {
            assert_eq!(same(src, ctx), Fast::Bail, "{src}");
        }
    }

    #[test]
    fn a_modified_prototype_is_respected() {
        let ctx = &mut Context::default();
        eval("Object.prototype.toJSON = function () { return 'patched'; }", ctx);
        assert_eq!(same("({a: 1})", ctx), Fast::Bail);
        assert_eq!(same("[1]", ctx), Fast::Bail);
        assert!(matches!(same("'still a string'", ctx), Fast::Text(_)));
        let ctx = &mut Context::default();
        eval("Object.defineProperty(Array.prototype, 'toJSON', {get() { return 1; }})", ctx);
        assert_eq!(same("[1]", ctx), Fast::Bail);
        assert!(matches!(same("({a: 1})", ctx), Fast::Text(_)));
        // A non-callable `toJSON` is ignored by `JSON.stringify`.
        let ctx = &mut Context::default();
        eval("Object.prototype.toJSON = 42", ctx);
        assert!(matches!(same("({a: [1]})", ctx), Fast::Text(_)));
    }

    #[test]
    fn the_cap_counts_the_whole_text() {
        let ctx = &mut Context::default();
        let v = eval("Array.from({length: 100}, (_, i) => ({i, u: undefined}))", ctx);
        let Fast::Text(full) = stringify(&v, usize::MAX, ctx) else { panic!("not text") };
        assert_eq!(stringify(&v, full.len(), ctx), Fast::Text(full.clone()));
        assert_eq!(stringify(&v, full.len() - 1, ctx), Fast::TooLarge(full.len()));
        assert_eq!(stringify(&v, 10, ctx), Fast::TooLarge(full.len()));
    }

    proptest::proptest! {
        #[test]
        fn random_values_match_json_stringify(src in value_source(3)) {
            let ctx = &mut Context::default();
            let v = eval(&src, ctx);
            match stringify(&v, usize::MAX, ctx) {
                Fast::Text(t) => proptest::prop_assert_eq!(Some(t), pristine(&v, ctx)),
                Fast::Undefined => proptest::prop_assert_eq!(None, pristine(&v, ctx)),
                other => proptest::prop_assert!(false, "{src}: {other:?}"),
            }
        }
    }

    /// JS source of a random pure value.
    fn value_source(depth: u32) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("undefined".to_owned()),
            any::<bool>().prop_map(|b| b.to_string()),
            any::<i32>().prop_map(|i| i.to_string()),
            any::<f64>().prop_map(|f| format!("({f:e})").replace("inf", "Infinity")),
            proptest::collection::vec(any::<u16>(), 0..6).prop_map(|units| {
                let parts: Vec<String> = units.iter().map(|u| format!("\\u{u:04x}")).collect();
                format!("'{}'", parts.join(""))
            }),
            "[ -~é😀]{0,8}".prop_map(|s| format!("{s:?}")),
        ];
        leaf.prop_recursive(depth, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6)
                    .prop_map(|xs| format!("[{}]", xs.join(","))),
                proptest::collection::vec(("[a-z0-9]{0,3}", inner), 0..6).prop_map(|kvs| {
                    let members: Vec<String> =
                        kvs.iter().map(|(k, v)| format!("{k:?}: {v}")).collect();
                    format!("({{{}}})", members.join(","))
                }),
            ]
        })
    }
}
