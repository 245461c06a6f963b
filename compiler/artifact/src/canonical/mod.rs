//! Canonical JSON: the one byte form of a JSON value that the artifact id is computed over.
//!
//! Rules: object keys sorted by their UTF-8 bytes (which is Unicode code point order); no
//! whitespace; integers in plain decimal; other numbers in the shortest form that reads back to
//! the same `f64`, as `serde_json` writes it (`1.0`, `0.1`, `1500.0`, `1e+300`), and non-finite
//! numbers refused; strings with only `"`, `\` and control characters escaped (`\n`, `\r`, `\t`,
//! `\b`, `\f`, else `\u00xx` in lowercase hex) and everything else as literal UTF-8. The writer
//! sorts keys itself, so it does not depend on how `serde_json::Map` orders them.

use serde_json::{Map, Number, Value};

use crate::SealError;

mod serializer;

pub(crate) use serializer::canonical_bytes;

/// The canonical bytes of a JSON value.
///
/// # Errors
///
/// [`SealError::NonFiniteNumber`] when a number is not finite (possible only with
/// `serde_json`'s `arbitrary_precision` feature).
pub fn canonical_json(value: &Value) -> Result<Vec<u8>, SealError> {
    let mut out = Vec::with_capacity(1024);
    write_value(&mut out, value)?;
    Ok(out)
}

fn write_value(out: &mut Vec<u8>, value: &Value) -> Result<(), SealError> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => write_number(out, number)?,
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_value(out, item)?;
            }
            out.push(b']');
        }
        Value::Object(map) => write_object(out, map)?,
    }
    Ok(())
}

fn write_object(out: &mut Vec<u8>, map: &Map<String, Value>) -> Result<(), SealError> {
    // serde_json's map is a `BTreeMap` (sorted) unless some crate turns on its `preserve_order`
    // feature; only then do the entries need sorting here.
    if map.keys().is_sorted_by(|a, b| a.as_bytes() < b.as_bytes()) {
        return write_entries(out, map.iter());
    }
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    write_entries(out, entries.into_iter())
}

fn write_entries<'a>(
    out: &mut Vec<u8>,
    entries: impl Iterator<Item = (&'a String, &'a Value)>,
) -> Result<(), SealError> {
    out.push(b'{');
    for (index, (key, item)) in entries.enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_string(out, key);
        out.push(b':');
        write_value(out, item)?;
    }
    out.push(b'}');
    Ok(())
}

fn write_number(out: &mut Vec<u8>, number: &Number) -> Result<(), SealError> {
    if let Some(unsigned) = number.as_u64() {
        out.extend_from_slice(unsigned.to_string().as_bytes());
    } else if let Some(signed) = number.as_i64() {
        out.extend_from_slice(signed.to_string().as_bytes());
    } else {
        let float = number.as_f64().filter(|float| float.is_finite());
        let Some(float) = float else {
            return Err(SealError::NonFiniteNumber);
        };
        // serde_json writes a finite f64 in its shortest round-trip form (ryu); going through
        // `Value::from` drops any original spelling kept by `arbitrary_precision`.
        let text = Value::from(float).to_string();
        out.extend_from_slice(text.as_bytes());
    }
    Ok(())
}

pub(crate) fn write_string(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = text.as_bytes();
    // Runs of bytes that need no escape are copied whole.
    let mut run_start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(bytes.get(run_start..index).unwrap_or_default());
        run_start = index + 1;
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX.get(usize::from(byte >> 4)).copied().unwrap_or(b'0'));
            out.push(HEX.get(usize::from(byte & 0x0f)).copied().unwrap_or(b'0'));
        } else {
            out.extend_from_slice(escape);
        }
    }
    out.extend_from_slice(bytes.get(run_start..).unwrap_or_default());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canon(value: &Value) -> String {
        String::from_utf8(canonical_json(value).unwrap()).unwrap()
    }

    #[test]
    fn sorts_keys_and_drops_whitespace() {
        let value = json!({"b": 1, "a": {"z": [1, 2], "é": null, "A": true}});
        assert_eq!(canon(&value), r#"{"a":{"A":true,"z":[1,2],"é":null},"b":1}"#);
    }

    #[test]
    fn numbers_have_one_spelling() {
        let value: Value = serde_json::from_str(r#"[1, -3, 1.0, 1.5e3, 0.1, -0.0, 1e300]"#).unwrap();
        assert_eq!(canon(&value), "[1,-3,1.0,1500.0,0.1,-0.0,1e+300]");
    }

    #[test]
    fn strings_escape_only_what_json_requires() {
        let value = json!("a\"b\\c\nd\u{1}é€");
        assert_eq!(canon(&value), "\"a\\\"b\\\\c\\nd\\u0001é€\"");
    }

    #[test]
    fn every_ascii_character_is_written_as_serde_json_writes_it() {
        let all: String = (0u8..=0x7f).map(char::from).chain(['é', '\u{2028}', '€']).collect();
        for text in [all.clone(), format!("x{all}y"), all.repeat(3)] {
            let value = Value::String(text);
            assert_eq!(canon(&value), serde_json::to_string(&value).unwrap());
        }
    }
}
