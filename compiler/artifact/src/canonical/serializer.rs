//! Canonical JSON straight from any `Serialize` value, without building a `serde_json::Value`
//! tree first: the bytes equal [`super::canonical_json`] of `serde_json::to_value(value)`.
//!
//! Sealing a large artifact through a JSON tree cost a tree of some 60 MB and a third of the
//! build's time after checking. Here each object is written in the order its fields or entries
//! come, and only an object whose keys did not come sorted (a struct, whose fields come in
//! declaration order) is rearranged, once, in place.
//!
//! Embedded raw JSON (`serde_json::value::RawValue`, which [`crate::Schema`] holds) is parsed
//! and written canonically too, so the result is canonical whatever the raw text's form.

use std::fmt::{self, Display};
use std::ops::Range;

use serde::ser::{self, Impossible, Serialize};
use serde_json::{Number, Value};

use super::{write_number, write_string, write_value};
use crate::SealError;

/// The struct name under which `serde_json` serialises a `RawValue` (one field of that name,
/// holding the raw text). The golden-bytes tests fail if it ever changes.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The canonical bytes of `value`'s JSON form.
///
/// # Errors
///
/// [`SealError::NonFiniteNumber`] for a NaN or infinite number, [`SealError::Serialize`] for
/// what JSON cannot hold (a map key that is not a string) or a `Serialize` impl that fails.
pub(crate) fn canonical_bytes<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, SealError> {
    let mut out = Vec::with_capacity(64 * 1024);
    value
        .serialize(Canonical { out: &mut out })
        .map_err(|error| match error {
            Error::NonFinite => SealError::NonFiniteNumber,
            Error::Other(message) => SealError::Serialize(message),
        })?;
    Ok(out)
}

#[derive(Debug)]
enum Error {
    NonFinite,
    Other(String),
}

impl Display for Error {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NonFinite => formatter.write_str("a number is not finite"),
            Error::Other(message) => formatter.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<M: Display>(message: M) -> Self {
        Error::Other(message.to_string())
    }
}

fn from_seal(error: SealError) -> Error {
    match error {
        SealError::NonFiniteNumber => Error::NonFinite,
        other => Error::Other(other.to_string()),
    }
}

/// Writes one value.
struct Canonical<'a> {
    out: &'a mut Vec<u8>,
}

impl Canonical<'_> {
    fn number(self, number: Option<Number>) -> Result<(), Error> {
        let number = number.ok_or(Error::NonFinite)?;
        write_number(self.out, &number).map_err(from_seal)
    }

    fn integer(self, text: String) -> Result<(), Error> {
        self.out.extend_from_slice(text.as_bytes());
        Ok(())
    }
}

/// Integers are written as their decimal text, whatever their width.
macro_rules! integer_methods {
    ($($method:ident: $type:ty),*) => {
        $(
            fn $method(self, value: $type) -> Result<(), Error> {
                self.integer(value.to_string())
            }
        )*
    };
}

impl<'a> ser::Serializer for Canonical<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Sequence<'a>;
    type SerializeTuple = Sequence<'a>;
    type SerializeTupleStruct = Sequence<'a>;
    type SerializeTupleVariant = Sequence<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    fn serialize_bool(self, value: bool) -> Result<(), Error> {
        self.out.extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }

    integer_methods!(
        serialize_i8: i8,
        serialize_i16: i16,
        serialize_i32: i32,
        serialize_i64: i64,
        serialize_i128: i128,
        serialize_u8: u8,
        serialize_u16: u16,
        serialize_u32: u32,
        serialize_u64: u64,
        serialize_u128: u128
    );

    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        self.number(Number::from_f64(f64::from(value)))
    }

    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        self.number(Number::from_f64(value))
    }

    fn serialize_char(self, value: char) -> Result<(), Error> {
        write_string(self.out, value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, value: &str) -> Result<(), Error> {
        write_string(self.out, value);
        Ok(())
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let mut object = Object::start(self.out, Kind::Object);
        ser::SerializeMap::serialize_entry(&mut object, variant, value)?;
        ser::SerializeMap::end(object)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Sequence<'a>, Error> {
        self.out.push(b'[');
        Ok(Sequence {
            out: self.out,
            first: true,
            close_variant: false,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Sequence<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Sequence<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Sequence<'a>, Error> {
        // `{"variant":[…]}`: a one-entry object, so its key order is trivially sorted.
        self.out.push(b'{');
        write_string(self.out, variant);
        self.out.extend_from_slice(b":[");
        Ok(Sequence {
            out: self.out,
            first: true,
            close_variant: true,
        })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Object<'a>, Error> {
        Ok(Object::start(self.out, Kind::Object))
    }

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Object<'a>, Error> {
        let kind = if name == RAW_VALUE_TOKEN {
            Kind::Raw
        } else {
            Kind::Object
        };
        Ok(Object::start(self.out, kind))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, Error> {
        self.out.push(b'{');
        write_string(self.out, variant);
        self.out.push(b':');
        Ok(Object::start(self.out, Kind::VariantObject))
    }
}

/// An array being written.
struct Sequence<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    /// Also close the `{"variant":` this array is the value of.
    close_variant: bool,
}

impl Sequence<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        value.serialize(Canonical { out: self.out })
    }

    fn finish(self) -> Result<(), Error> {
        self.out.push(b']');
        if self.close_variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

/// The four sequence traits of serde differ only in name.
macro_rules! sequence_trait {
    ($trait:ident, $method:ident) => {
        impl ser::$trait for Sequence<'_> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }

            fn end(self) -> Result<(), Error> {
                self.finish()
            }
        }
    };
}

sequence_trait!(SerializeSeq, serialize_element);
sequence_trait!(SerializeTuple, serialize_element);
sequence_trait!(SerializeTupleStruct, serialize_field);
sequence_trait!(SerializeTupleVariant, serialize_field);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A map or struct.
    Object,
    /// A struct variant's fields: also closes the `{"variant":` around them.
    VariantObject,
    /// A `RawValue`: its one field is raw JSON text, written canonically.
    Raw,
}

/// One `"key":value` written so far: the key (unescaped, for sorting) and where the entry's
/// bytes are in the output (without the comma written before every entry but the first).
struct Entry {
    key: String,
    bytes: Range<usize>,
}

/// An object being written: entries are written as they come, then put in key order.
struct Object<'a> {
    out: &'a mut Vec<u8>,
    kind: Kind,
    /// Where the first entry starts (right after `{`).
    start: usize,
    entries: Vec<Entry>,
    /// The key of the entry whose value comes next (`serialize_key` then `serialize_value`).
    pending_key: Option<String>,
}

impl<'a> Object<'a> {
    fn start(out: &'a mut Vec<u8>, kind: Kind) -> Self {
        if kind != Kind::Raw {
            out.push(b'{');
        }
        let start = out.len();
        Object {
            out,
            kind,
            start,
            entries: Vec::new(),
            pending_key: None,
        }
    }

    fn entry<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<(), Error> {
        if self.kind == Kind::Raw {
            let text = value.serialize(Text::Raw)?;
            let value: Value = serde_json::from_str(&text).map_err(|error| Error::Other(error.to_string()))?;
            return write_value(self.out, &value).map_err(from_seal);
        }
        if !self.entries.is_empty() {
            self.out.push(b',');
        }
        let begin = self.out.len();
        write_string(self.out, &key);
        self.out.push(b':');
        value.serialize(Canonical { out: self.out })?;
        self.entries.push(Entry {
            key,
            bytes: begin..self.out.len(),
        });
        Ok(())
    }

    fn finish(self) -> Result<(), Error> {
        if self.kind == Kind::Raw {
            return Ok(());
        }
        let Object {
            out,
            kind,
            start,
            mut entries,
            ..
        } = self;
        let sorted = entries.windows(2).all(|pair| match pair {
            [a, b] => a.key.as_bytes() < b.key.as_bytes(),
            _ => true,
        });
        if !sorted {
            let written = out.split_off(start);
            entries.sort_by(|a, b| a.key.as_bytes().cmp(b.key.as_bytes()));
            for (index, entry) in entries.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                let range = (entry.bytes.start - start)..(entry.bytes.end - start);
                out.extend_from_slice(written.get(range).unwrap_or_default());
            }
        }
        out.push(b'}');
        if kind == Kind::VariantObject {
            out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.pending_key = Some(key.serialize(Text::MapKey)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .pending_key
            .take()
            .ok_or_else(|| Error::Other("a map value came without its key".to_owned()))?;
        self.entry(key, value)
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), Error> {
        let key = key.serialize(Text::MapKey)?;
        self.entry(key, value)
    }

    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

/// Struct fields and struct-variant fields are written alike.
macro_rules! struct_trait {
    ($trait:ident) => {
        impl ser::$trait for Object<'_> {
            type Ok = ();
            type Error = Error;

            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
                self.entry(key.to_owned(), value)
            }

            fn end(self) -> Result<(), Error> {
                self.finish()
            }
        }
    };
}

struct_trait!(SerializeStruct);
struct_trait!(SerializeStructVariant);

/// Reads a string out of a value: a map key, or the text of a `RawValue`.
///
/// As `serde_json` does, a map key may also be an integer, a boolean, a character or a unit
/// variant, written as its text; a `RawValue` holds only its text. Anything else is refused.
#[derive(Clone, Copy)]
enum Text {
    MapKey,
    Raw,
}

impl Text {
    fn error(self) -> Error {
        Error::Other(match self {
            Text::MapKey => "a map key must be a string".to_owned(),
            Text::Raw => "a raw JSON value must hold its text".to_owned(),
        })
    }

    /// The text of a scalar that is only a valid map key.
    fn key(self, text: impl ToString) -> Result<String, Error> {
        match self {
            Text::MapKey => Ok(text.to_string()),
            Text::Raw => Err(self.error()),
        }
    }
}

/// Scalars that a map key may be, written as their text.
macro_rules! key_methods {
    ($($method:ident: $type:ty),*) => {
        $(
            fn $method(self, value: $type) -> Result<String, Error> {
                self.key(value)
            }
        )*
    };
}

impl ser::Serializer for Text {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    fn serialize_str(self, value: &str) -> Result<String, Error> {
        Ok(value.to_owned())
    }

    key_methods!(
        serialize_char: char,
        serialize_bool: bool,
        serialize_i8: i8,
        serialize_i16: i16,
        serialize_i32: i32,
        serialize_i64: i64,
        serialize_u8: u8,
        serialize_u16: u16,
        serialize_u32: u32,
        serialize_u64: u64
    );

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<String, Error> {
        self.key(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<String, Error> {
        match self {
            Text::MapKey => value.serialize(self),
            Text::Raw => Err(self.error()),
        }
    }

    fn serialize_f32(self, _value: f32) -> Result<String, Error> {
        Err(self.error())
    }

    fn serialize_f64(self, _value: f64) -> Result<String, Error> {
        Err(self.error())
    }

    fn serialize_bytes(self, _value: &[u8]) -> Result<String, Error> {
        Err(self.error())
    }

    fn serialize_none(self) -> Result<String, Error> {
        Err(self.error())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String, Error> {
        Err(self.error())
    }

    fn serialize_unit(self) -> Result<String, Error> {
        Err(self.error())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Error> {
        Err(self.error())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Error> {
        Err(self.error())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(self.error())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(self.error())
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(self.error())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(self.error())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(self.error())
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct, Error> {
        Err(self.error())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(self.error())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::Serialize;
    use serde_json::value::RawValue;

    use super::canonical_bytes;
    use crate::{SealError, canonical_json};

    /// What sealing used to do: a JSON tree, then its canonical bytes.
    fn through_a_tree<T: Serialize>(value: &T) -> Vec<u8> {
        canonical_json(&serde_json::to_value(value).unwrap()).unwrap()
    }

    #[derive(Serialize)]
    struct Unsorted {
        zeta: u8,
        alpha: Option<String>,
        middle: Vec<Shape>,
        #[serde(rename = "Émile")]
        accented: f64,
        beta: Tagged,
        raw: Box<RawValue>,
        nothing: (),
        map: HashMap<String, i64>,
    }

    #[derive(Serialize)]
    enum Shape {
        Point,
        Circle(f64),
        Pair(i8, i8),
        Rect { w: u32, h: u32 },
    }

    #[derive(Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Tagged {
        Call { url: String, method: String },
    }

    #[test]
    fn bytes_equal_the_canonical_form_of_the_json_tree() {
        let value = Unsorted {
            zeta: 7,
            alpha: Some("a \"quoted\"\n\u{1}é".to_owned()),
            middle: vec![
                Shape::Point,
                Shape::Circle(1.5),
                Shape::Pair(-1, 2),
                Shape::Rect { w: 3, h: 4 },
            ],
            accented: -0.0,
            beta: Tagged::Call {
                url: "https://x".to_owned(),
                method: "POST".to_owned(),
            },
            raw: RawValue::from_string(r#" { "b" : [1, 2.50, {"d": null, "c": true}], "a": "x" } "#.to_owned())
                .unwrap(),
            nothing: (),
            map: (0..40).map(|index| (format!("key{index}"), index - 20)).collect(),
        };
        let direct = canonical_bytes(&value).unwrap();
        assert_eq!(
            String::from_utf8(direct.clone()).unwrap(),
            String::from_utf8(through_a_tree(&value)).unwrap()
        );
        let text = String::from_utf8(direct).unwrap();
        assert!(
            text.contains(r#""raw":{"a":"x","b":[1,2.5,{"c":true,"d":null}]}"#),
            "{text}"
        );
        assert!(text.starts_with(r#"{"alpha":"#), "{text}");
    }

    #[test]
    fn sorted_maps_and_nested_structs_match_too() {
        let nested: BTreeMap<String, BTreeMap<String, Vec<Option<u64>>>> = (0..30)
            .map(|outer| {
                let inner = (0..5)
                    .map(|inner| (format!("{inner}"), vec![Some(outer), None]))
                    .collect();
                (format!("k{outer:02}"), inner)
            })
            .collect();
        assert_eq!(canonical_bytes(&nested).unwrap(), through_a_tree(&nested));
        assert_eq!(
            canonical_bytes(&crate::Artifact::new("t")).unwrap(),
            through_a_tree(&crate::Artifact::new("t"))
        );
    }

    #[test]
    fn what_json_cannot_hold_is_refused() {
        assert!(matches!(canonical_bytes(&f64::NAN), Err(SealError::NonFiniteNumber)));
        assert!(matches!(
            canonical_bytes(&vec![1.0, f64::INFINITY]),
            Err(SealError::NonFiniteNumber)
        ));
        let bad_keys: BTreeMap<Vec<u8>, u8> = BTreeMap::from([(vec![1], 1)]);
        assert!(matches!(canonical_bytes(&bad_keys), Err(SealError::Serialize(_))));
        let number_keys: BTreeMap<u32, bool> = BTreeMap::from([(10, true), (9, false)]);
        // As serde_json writes them: decimal text, then sorted as text.
        assert_eq!(canonical_bytes(&number_keys).unwrap(), br#"{"10":true,"9":false}"#);
    }
}
