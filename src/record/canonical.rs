//! RFC 8785 JSON Canonicalization Scheme (JCS), and the derived record id of SPEC §1.
//!
//! The canonical form of a JSON value is its compact serialization with:
//!
//! - object members sorted by their names compared as sequences of UTF-16 code units;
//! - numbers written as ECMAScript's `Number.prototype.toString` writes the IEEE 754 double
//!   nearest to them (`1e+21`, `1e-7`, `0.1`, `-0` as `0`, integers beyond 2^53 rounded);
//! - strings written with the minimal escaping of JCS: `\b`, `\t`, `\n`, `\f`, `\r`, `\"`,
//!   `\\`, `\u00XX` (lowercase hex) for the other control characters below U+0020, and every
//!   other character as itself in UTF-8.
//!
//! A record without an `id` gets `"r-"` + the first 16 lowercase hex digits of the SHA-256 of
//! the canonical form of its input object (after `--field-map`), `id` member removed.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The RFC 8785 canonical JSON text of `value`.
///
/// # Example
///
/// ```
/// use reliora::record::canonical_json;
/// use serde_json::json;
///
/// let value = json!({"b": [1e21, 0.1, "\u{1}"], "a": -0.0});
/// assert_eq!(canonical_json(&value), r#"{"a":0,"b":[1e+21,0.1,"\u0001"]}"#);
/// ```
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// The id derived from a record object that has no `id`: `"r-"` + the first 16 lowercase hex
/// digits of SHA-256 over [`canonical_json`] of `object_without_id`.
///
/// # Example
///
/// ```
/// use reliora::record::derived_id;
/// use serde_json::json;
///
/// let id = derived_id(&json!({"title": "x"}));
/// assert!(id.starts_with("r-") && id.len() == 18);
/// ```
pub fn derived_id(object_without_id: &Value) -> String {
    let mut hasher = Sha256::new();
    write_value(&mut hasher, object_without_id);
    id_from_digest(hasher)
}

/// [`derived_id`] of `object` with its top-level `id` member (whatever its value) left out,
/// without copying the object.
pub(crate) fn derived_id_skipping_id(object: &Map<String, Value>) -> String {
    let mut hasher = Sha256::new();
    write_object(&mut hasher, object, Some("id"));
    id_from_digest(hasher)
}

fn id_from_digest(hasher: Sha256) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = hasher.finalize();
    let mut id = String::with_capacity(18);
    id.push_str("r-");
    for &byte in &digest[..8] {
        id.push(char::from(HEX[usize::from(byte >> 4)]));
        id.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    id
}

/// Where canonical JSON goes: a `String`, or straight into a hash.
trait Sink {
    fn put(&mut self, text: &str);
}

impl Sink for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

impl Sink for Sha256 {
    fn put(&mut self, text: &str) {
        self.update(text.as_bytes());
    }
}

fn write_value(out: &mut impl Sink, value: &Value) {
    match value {
        Value::Null => out.put("null"),
        Value::Bool(true) => out.put("true"),
        Value::Bool(false) => out.put("false"),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_value(out, item);
            }
            out.put("]");
        }
        Value::Object(map) => write_object(out, map, None),
    }
}

fn write_object(out: &mut impl Sink, map: &Map<String, Value>, skip: Option<&str>) {
    let mut members: Vec<(&String, &Value)> = map
        .iter()
        .filter(|(key, _)| Some(key.as_str()) != skip)
        .collect();
    members.sort_unstable_by(|(a, _), (b, _)| compare_utf16(a, b));
    out.put("{");
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.put(",");
        }
        write_string(out, key);
        out.put(":");
        write_value(out, value);
    }
    out.put("}");
}

/// Compare two strings as sequences of UTF-16 code units (RFC 8785 §3.2.3).
///
/// UTF-8 byte order is code point order, and UTF-16 order differs from it only between a
/// character in U+E000..=U+FFFF (UTF-8 lead byte 0xEE or 0xEF) and a supplementary one (lead
/// byte 0xF0..=0xF4, UTF-16 surrogates 0xD800..=0xDFFF, which sort lower). Where the first
/// differing byte is a continuation byte, both characters share a lead byte and so a range.
fn compare_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.iter().zip(b).find(|(x, y)| x != y) {
        None => a.len().cmp(&b.len()),
        Some((&x, &y)) => {
            let bmp_high = |byte: u8| (0xEE..=0xEF).contains(&byte);
            let supplementary = |byte: u8| byte >= 0xF0;
            if bmp_high(x) && supplementary(y) {
                std::cmp::Ordering::Greater
            } else if supplementary(x) && bmp_high(y) {
                std::cmp::Ordering::Less
            } else {
                x.cmp(&y)
            }
        }
    }
}

fn write_number(out: &mut impl Sink, number: &serde_json::Number) {
    // JSON numbers are IEEE 754 doubles for JCS: integers are converted (rounding to nearest,
    // ties to even, as parsing their decimal text would) and written like any other double.
    let double = if let Some(n) = number.as_u64() {
        n as f64
    } else if let Some(n) = number.as_i64() {
        n as f64
    } else {
        number.as_f64().unwrap_or(0.0)
    };
    if double == 0.0 {
        // ECMAScript writes -0 as "0".
        out.put("0");
        return;
    }
    let mut buffer = ryu_js::Buffer::new();
    out.put(buffer.format(double));
}

fn write_string(out: &mut impl Sink, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.put("\"");
    let mut plain_from = 0;
    for (i, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\x08' => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            b'\x0c' => "\\f",
            b'\r' => "\\r",
            0..=0x1f => "",
            _ => continue,
        };
        out.put(&text[plain_from..i]);
        if escape.is_empty() {
            let hex = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ];
            out.put(std::str::from_utf8(&hex).unwrap_or_default());
        } else {
            out.put(escape);
        }
        plain_from = i + 1;
    }
    out.put(&text[plain_from..]);
    out.put("\"");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn number(text: &str) -> String {
        canonical_json(&serde_json::from_str::<Value>(text).unwrap())
    }

    #[test]
    fn numbers_follow_ecmascript() {
        // Examples from RFC 8785 §3.2.2.3 and Appendix B, plus integer edge cases.
        let cases: &[(&str, &str)] = &[
            ("0", "0"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("1", "1"),
            ("-1", "-1"),
            ("1.0", "1"),
            ("100", "100"),
            ("1e2", "100"),
            ("0.1", "0.1"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("1e-7", "1e-7"),
            ("1e-6", "0.000001"),
            ("333333333.33333329", "333333333.3333333"),
            ("1E30", "1e+30"),
            ("4.50", "4.5"),
            ("2e-3", "0.002"),
            ("0.000001", "0.000001"),
            ("9007199254740992", "9007199254740992"),
            ("9007199254740993", "9007199254740992"),
            ("295147905179352830000", "295147905179352830000"),
            ("18446744073709551615", "18446744073709552000"),
            ("-9223372036854775808", "-9223372036854776000"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("123456789012345680000", "123456789012345680000"),
            ("1.5e300", "1.5e+300"),
        ];
        for &(input, expected) in cases {
            assert_eq!(number(input), expected, "{input}");
        }
    }

    #[test]
    fn rfc8785_appendix_b_doubles() {
        // (IEEE 754 bits, expected text) from RFC 8785 Appendix B.
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for &(bits, expected) in cases {
            let value = Value::from(f64::from_bits(bits));
            assert_eq!(canonical_json(&value), expected, "{bits:#x}");
        }
    }

    #[test]
    fn strings_use_minimal_escapes() {
        let cases: &[(&str, &str)] = &[
            ("", r#""""#),
            ("plain", r#""plain""#),
            ("\"\\", r#""\"\\""#),
            ("\u{8}\t\n\u{c}\r", r#""\b\t\n\f\r""#),
            ("\u{0}\u{1}\u{1f}", r#""\u0000\u0001\u001f""#),
            ("\u{7f}", "\"\u{7f}\""),
            ("/", r#""/""#),
            ("\u{2028}\u{2029}", "\"\u{2028}\u{2029}\""),
            (
                "€$\u{f}\nA'B\"\\\\\"/",
                "\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"",
            ),
            ("😀é", "\"😀é\""),
        ];
        for &(input, expected) in cases {
            assert_eq!(canonical_json(&Value::from(input)), expected, "{input:?}");
        }
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // RFC 8785 §3.2.3: U+1F600 (surrogates D83D DE00) sorts before U+FB33 although its
        // code point is larger; "\r" first, "1" before letters.
        let value = json!({
            "\u{20ac}": "Euro Sign",
            "\r": "Carriage Return",
            "\u{fb33}": "Hebrew Letter Dalet With Dagesh",
            "1": "One",
            "\u{1f600}": "Emoji: Grinning Face",
            "\u{80}": "Control",
            "\u{f6}": "Latin Small Letter O With Diaeresis",
        });
        let canonical = canonical_json(&value);
        let expected_order = [
            "Carriage Return",
            "One",
            "Control",
            "Latin Small Letter O With Diaeresis",
            "Euro Sign",
            "Emoji: Grinning Face",
            "Hebrew Letter Dalet With Dagesh",
        ];
        let mut last = 0;
        for name in expected_order {
            let at = canonical.find(name).unwrap();
            assert!(at > last, "{name} out of order in {canonical}");
            last = at;
        }
    }

    #[test]
    fn rfc8785_section_3_2_example() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let value: Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            canonical_json(&value),
            "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\
             \"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
        );
    }

    #[test]
    fn nested_objects_are_sorted_too() {
        let value = json!({"b": {"z": 1, "a": [ {"y": 2, "x": 1} ]}, "a": null});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":null,"b":{"a":[{"x":1,"y":2}],"z":1}}"#
        );
    }

    #[test]
    fn derived_id_matches_an_independent_computation() {
        // Computed with Python 3:
        //   obj = {"title": "Fix flaky test", "tags": ["ci", "rust"], "feedback": {"success": 3},
        //          "salience": 1, "zeta": "last", "Alpha": "first"}
        //   s = json.dumps(obj, sort_keys=True, separators=(',', ':'), ensure_ascii=False)
        //   "r-" + hashlib.sha256(s.encode()).hexdigest()[:16]
        let object = json!({
            "title": "Fix flaky test", "tags": ["ci", "rust"], "feedback": {"success": 3},
            "salience": 1, "zeta": "last", "Alpha": "first"
        });
        assert_eq!(
            canonical_json(&object),
            r#"{"Alpha":"first","feedback":{"success":3},"salience":1,"tags":["ci","rust"],"title":"Fix flaky test","zeta":"last"}"#
        );
        assert_eq!(derived_id(&object), PYTHON_DERIVED_ID);
        let mut with_id = object.as_object().unwrap().clone();
        with_id.insert("id".into(), Value::Null);
        assert_eq!(derived_id_skipping_id(&with_id), PYTHON_DERIVED_ID);
    }

    #[test]
    fn hashing_the_stream_equals_hashing_the_text() {
        let value =
            json!({"b": "\u{1}\u{1f600}", "a": [1.5, null, {"\u{e000}": 1, "\u{10000}": 2}]});
        let text = canonical_json(&value);
        let mut hasher = Sha256::new();
        hasher.update(text.as_bytes());
        assert_eq!(derived_id(&value), id_from_digest(hasher));
    }

    proptest::proptest! {
        #[test]
        fn utf16_comparison_matches_encode_utf16(
            a in "[a\u{7f}\u{80}\u{d7ff}\u{e000}\u{ffff}\u{10000}\u{10ffff}]{0,4}",
            b in "[a\u{7f}\u{80}\u{d7ff}\u{e000}\u{ffff}\u{10000}\u{10ffff}]{0,4}",
        ) {
            proptest::prop_assert_eq!(compare_utf16(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        }

        #[test]
        fn utf16_comparison_matches_on_any_strings(a in ".{0,6}", b in ".{0,6}") {
            proptest::prop_assert_eq!(compare_utf16(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        }
    }

    const PYTHON_DERIVED_ID: &str = "r-c37d58d281f1110e";
}
