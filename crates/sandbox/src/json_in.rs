//! An `sdk` reply's JSON text straight to a JS value.
//!
//! The same values as `JsValue::from_json(&serde_json::from_str(text)?)` (integers that fit
//! an `i32` as integers, other numbers as doubles, members in text order, a repeated name
//! keeping its first position and its last value), without the `serde_json::Value` in between,
//! with each member name converted to a property key once per reply, and with objects laid out
//! like object literals: rows with the same names share one layout ([`DataObjectTemplate`])
//! instead of each getting its own property table.

use std::collections::HashMap;
use std::fmt;

use boa_engine::object::DataObjectTemplate;
use boa_engine::object::builtins::JsArray;
use boa_engine::property::{PropertyDescriptor, PropertyKey};
use boa_engine::{Context, JsObject, JsString, JsValue};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Layouts kept per reply: rows of a table share a few; more distinct ones are built slowly.
const MAX_LAYOUTS: usize = 64;

/// Parses `text` into a value of `ctx`'s realm.
pub(super) fn parse(text: &str, ctx: &mut Context) -> Result<JsValue, serde_json::Error> {
    let mut cache = Cache::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Seed { ctx, cache: &mut cache }.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

#[derive(Default)]
struct Cache {
    /// Member names already converted.
    keys: HashMap<String, PropertyKey>,
    /// Layouts by their names (`None`: names that need the slow path, e.g. array indices).
    layouts: Vec<(Vec<PropertyKey>, Option<DataObjectTemplate>)>,
    /// The layout used last (rows in a row).
    last: usize,
}

impl Cache {
    fn key(&mut self, name: &str) -> PropertyKey {
        if let Some(k) = self.keys.get(name) {
            return k.clone();
        }
        let k = PropertyKey::from(JsString::from(name));
        self.keys.insert(name.to_owned(), k.clone());
        k
    }

    fn object(&mut self, keys: Vec<PropertyKey>, values: Vec<JsValue>, ctx: &Context) -> JsObject {
        let found = match self.layouts.get(self.last) {
            Some((k, _)) if *k == keys => Some(self.last),
            _ => self.layouts.iter().position(|(k, _)| *k == keys),
        };
        let at = match found {
            Some(at) => Some(at),
            None if self.layouts.len() < MAX_LAYOUTS => {
                let layout = DataObjectTemplate::new(&keys, ctx);
                self.layouts.push((keys.clone(), layout));
                Some(self.layouts.len() - 1)
            }
            None => None,
        };
        let mut values = values;
        if let Some(at) = at {
            self.last = at;
            if let Some(layout) = &self.layouts[at].1 {
                match layout.create(values) {
                    Ok(obj) => return obj,
                    Err(back) => values = back,
                }
            }
        }
        // Array-index names, repeated names: one property at a time.
        let obj = JsObject::with_object_proto(ctx.intrinsics());
        for (key, value) in keys.into_iter().zip(values) {
            let member = PropertyDescriptor::builder()
                .value(value)
                .writable(true)
                .enumerable(true)
                .configurable(true);
            obj.insert_property(key, member);
        }
        obj
    }
}

struct Seed<'a> {
    ctx: &'a mut Context,
    cache: &'a mut Cache,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = JsValue;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<JsValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = JsValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::null())
    }

    fn visit_bool<E>(self, b: bool) -> Result<JsValue, E> {
        Ok(JsValue::new(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<JsValue, E> {
        Ok(match i32::try_from(n) {
            Ok(i) => JsValue::new(i),
            Err(_) => JsValue::new(n as f64),
        })
    }

    fn visit_u64<E>(self, n: u64) -> Result<JsValue, E> {
        Ok(match i32::try_from(n) {
            Ok(i) => JsValue::new(i),
            Err(_) => JsValue::new(n as f64),
        })
    }

    fn visit_f64<E>(self, x: f64) -> Result<JsValue, E> {
        Ok(JsValue::new(x))
    }

    fn visit_str<E>(self, s: &str) -> Result<JsValue, E> {
        Ok(JsString::from(s).into())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsValue, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element_seed(Seed { ctx: self.ctx, cache: self.cache })? {
            items.push(v);
        }
        Ok(JsArray::from_iter(items, self.ctx).into())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsValue, A::Error> {
        let (mut keys, mut values) = (Vec::new(), Vec::new());
        while let Some(key) = map.next_key_seed(Key { cache: self.cache })? {
            keys.push(key);
            values.push(map.next_value_seed(Seed { ctx: self.ctx, cache: self.cache })?);
        }
        Ok(self.cache.object(keys, values, self.ctx).into())
    }
}

/// A member name, converted once per distinct name.
struct Key<'a> {
    cache: &'a mut Cache,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = PropertyKey;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<PropertyKey, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Key<'_> {
    type Value = PropertyKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, s: &str) -> Result<PropertyKey, E> {
        Ok(self.cache.key(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Same value (and the same JSON back) as going through `serde_json::Value`.
    fn same(text: &str) {
        let ctx = &mut Context::default();
        let direct = parse(text, ctx).unwrap();
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let via_value = JsValue::from_json(&value, ctx).unwrap();
        assert_eq!(direct.to_json(ctx).unwrap(), via_value.to_json(ctx).unwrap(), "{text}");
        let kinds = |v: &JsValue, ctx: &mut Context| {
            // Integer or double, and the value; objects by kind only.
            let f = |v: &JsValue| match v.as_object() {
                Some(o) => format!("object, array: {}", o.is_array()),
                None => format!("{:?}", v.variant()),
            };
            match v.as_object() {
                Some(o) => o
                    .own_property_keys(ctx)
                    .unwrap()
                    .into_iter()
                    .map(|k| (k.to_string(), f(&o.get(k, ctx).unwrap())))
                    .collect::<Vec<_>>(),
                None => vec![(String::new(), f(v))],
            }
        };
        assert_eq!(kinds(&direct, ctx), kinds(&via_value, ctx), "{text}");
    }

    #[test]
    fn matches_from_json() {
        for text in [
            "null",
            "true",
            "0",
            "-1",
            "2147483647",
            "2147483648",
            "-2147483649",
            "18446744073709551615",
            "1.0",
            "-0.0",
            "1e300",
            "0.1",
            r#""text é 😀 \u0000 \ud83d\ude00""#,
            "[]",
            "{}",
            r#"{"b": 1, "a": [1, 2.5, "x", null, {"c": {}}], "0": "index", "10": 1, "2": 2}"#,
            r#"{"a": 1, "b": 2, "a": 3}"#,
            r#"[{"t": 1, "close": 2.5}, {"t": 2, "close": 3.5}, {"close": 1, "t": 0}]"#,
        ] {
            same(text);
        }
    }

    #[test]
    fn rows_sharing_a_layout_stay_independent() {
        let ctx = &mut Context::default();
        let rows = parse(r#"[{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"b": 5, "a": 6}, {}]"#, ctx);
        ctx.register_global_property(
            boa_engine::js_string!("rows"),
            rows.unwrap(),
            boa_engine::property::Attribute::all(),
        )
        .unwrap();
        let out = ctx
            .eval(boa_engine::Source::from_bytes(
                "rows[0].c = 7; delete rows[1].a; rows[3].z = 0; \
                 Object.defineProperty(rows[2], 'b', {enumerable: false}); \
                 JSON.stringify([rows, Object.keys(rows[0]), Object.getPrototypeOf(rows[1]) === \
                 Object.prototype, Object.getOwnPropertyDescriptor(rows[0], 'a')])",
            ))
            .unwrap();
        assert_eq!(
            out.as_string().unwrap().to_std_string_escaped(),
            r#"[[{"a":1,"b":2,"c":7},{"b":4},{"a":6},{"z":0}],["a","b","c"],true,{"value":1,"writable":true,"enumerable":true,"configurable":true}]"#
        );
    }

    #[test]
    fn rejects_what_serde_json_rejects() {
        let ctx = &mut Context::default();
        for text in ["", "[1,", "{\"a\" 1}", "1 2", "nul", "[1] x"] {
            assert!(parse(text, ctx).is_err(), "{text}");
        }
    }
}
