//! JSON parsing into [`serde_json::Value`] that rejects duplicate object keys.
//!
//! `serde_json` keeps the last of two equal keys and drops the other silently; SPEC §1 says
//! nothing is dropped silently, and RFC 8785 (used for derived ids) is only defined for objects
//! with unique names. So records are parsed with this visitor, which fails with
//! `duplicate key "…"` (with serde_json's line and column) instead.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::fmt;

/// Parse `text` as exactly one JSON value (surrounding whitespace allowed), rejecting duplicate
/// object keys at every depth.
pub(crate) fn parse_value(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictValue.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// A seed that deserializes one [`Value`], failing on duplicate keys.
#[derive(Clone, Copy)]
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("number {v} is not finite")))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            // One hash lookup per key.
            match map.entry(key) {
                Entry::Occupied(earlier) => {
                    let key = earlier.key();
                    return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
                }
                Entry::Vacant(slot) => {
                    slot.insert(access.next_value_seed(StrictValue)?);
                }
            }
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_serde_json() {
        let cases = [
            r#"{"a":1,"b":[true,false,null,-2,3.5,"x"],"c":{"d":{}}}"#,
            "  [1, 2e3, -0, 18446744073709551615, -9223372036854775808]  ",
            r#""\u00e9\ud83d\ude00""#,
            "null",
        ];
        for text in cases {
            let expected: Value = serde_json::from_str(text).unwrap();
            assert_eq!(parse_value(text).unwrap(), expected, "{text}");
        }
    }

    #[test]
    fn keeps_key_order() {
        let value = parse_value(r#"{"z":1,"a":2,"m":3}"#).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["z", "a", "m"]);
    }

    #[test]
    fn rejects_bad_json() {
        // (text, part of the message)
        let cases = [
            (r#"{"a":1,"a":2}"#, "duplicate key \"a\""),
            (r#"{"x":{"b":1,"b":1}}"#, "duplicate key \"b\""),
            (r#"[{"k":1},{"k":1,"k":1}]"#, "duplicate key \"k\""),
            ("NaN", "expected value"),
            ("[Infinity]", "expected value"),
            ("1e999", "number out of range"),
            ("{} {}", "trailing characters"),
            (r#"{"a":1"#, "EOF"),
            ("", "EOF"),
        ];
        for (text, needle) in cases {
            let err = parse_value(text).expect_err(text).to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
