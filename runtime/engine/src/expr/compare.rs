//! Comparing JSON values the way conditions do: numbers by value (`1 == 1.0`, exactly, for any
//! `i64`, `u64` and finite `f64`), strings in code-point order, arrays and objects structurally
//! (their numbers by value too), and values of different kinds never equal and never ordered.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// Whether two values are equal: the same kind and the same value, numbers by value.
pub fn equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Number(a), Value::Number(b)) => compare_numbers(a, b) == Some(Ordering::Equal),
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equal(x, y)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(key, x)| b.get(key).is_some_and(|y| equal(x, y)))
        }
        _ => false,
    }
}

/// The order of two numbers or two strings (strings in Unicode code-point order); `None` for
/// anything else, which makes `<`, `<=`, `>` and `>=` false.
pub fn order(left: &Value, right: &Value) -> Option<Ordering> {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => compare_numbers(a, b),
        // UTF-8 byte order is code-point order.
        (Value::String(a), Value::String(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        _ => None,
    }
}

/// Whether a value is truthy: anything but `null`, `false`, a zero, `""`, `[]` and `{}`.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => as_exact(n).is_some_and(|n| !n.is_zero()),
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// A JSON number, exactly: an integer of `i64` or `u64` range, or a finite float.
#[derive(Debug, Clone, Copy)]
enum Exact {
    Int(i128),
    Float(f64),
}

impl Exact {
    fn is_zero(self) -> bool {
        match self {
            Exact::Int(i) => i == 0,
            Exact::Float(f) => f == 0.0,
        }
    }
}

/// The number's exact value; `None` only for a non-finite number (possible only with
/// `serde_json`'s `arbitrary_precision`), which then compares with nothing.
fn as_exact(number: &Number) -> Option<Exact> {
    if let Some(i) = number.as_i64() {
        return Some(Exact::Int(i128::from(i)));
    }
    if let Some(u) = number.as_u64() {
        return Some(Exact::Int(i128::from(u)));
    }
    number.as_f64().filter(|f| f.is_finite()).map(Exact::Float)
}

/// The order of two numbers, exact even where `f64` cannot hold the integer
/// (`9007199254740993 > 9007199254740992.0`).
pub(crate) fn compare_numbers(left: &Number, right: &Number) -> Option<Ordering> {
    match (as_exact(left)?, as_exact(right)?) {
        (Exact::Int(a), Exact::Int(b)) => Some(a.cmp(&b)),
        (Exact::Float(a), Exact::Float(b)) => a.partial_cmp(&b),
        (Exact::Int(a), Exact::Float(b)) => Some(int_float(a, b)),
        (Exact::Float(a), Exact::Int(b)) => Some(int_float(b, a).reverse()),
    }
}

/// The order of an integer and a finite float, without rounding the integer.
fn int_float(int: i128, float: f64) -> Ordering {
    // 2^100 is far outside the range of `i64` and `u64`, and exactly representable.
    const LIMIT: f64 = 1_267_650_600_228_229_401_496_703_205_376.0;
    if float >= LIMIT {
        return Ordering::Less;
    }
    if float <= -LIMIT {
        return Ordering::Greater;
    }
    let whole = float.trunc();
    // Exact: `whole` is an integer of magnitude below 2^100, well inside `i128`.
    let whole_int = whole as i128;
    match int.cmp(&whole_int) {
        Ordering::Equal => 0.0_f64.partial_cmp(&(float - whole)).unwrap_or(Ordering::Equal),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equality_by_kind_and_value() {
        let equal_pairs = [
            (json!(1), json!(1.0)),
            (json!(-0.0), json!(0)),
            (json!(u64::MAX), json!(u64::MAX)),
            (json!(i64::MIN), json!(i64::MIN)),
            (json!("é"), json!("é")),
            (json!(null), json!(null)),
            (json!([1, { "a": 2.0 }]), json!([1.0, { "a": 2 }])),
            (json!({ "a": 1, "b": [true] }), json!({ "b": [true], "a": 1.0 })),
        ];
        for (a, b) in &equal_pairs {
            assert!(equal(a, b), "{a} == {b}");
            assert!(equal(b, a), "{b} == {a}");
        }
        let unequal_pairs = [
            (json!(1), json!("1")),
            (json!(0), json!(false)),
            (json!(null), json!(0)),
            (json!(""), json!(null)),
            (json!([1]), json!([1, 1])),
            (json!({ "a": 1 }), json!({ "a": 1, "b": 2 })),
            (json!({ "a": 1 }), json!({ "b": 1 })),
            (json!(9_007_199_254_740_993_u64), json!(9_007_199_254_740_992.0)),
            (json!(u64::MAX), json!(-1)),
            // NFC "é" and NFD "e" + U+0301 are different strings: no normalisation.
            (json!("\u{e9}"), json!("e\u{301}")),
        ];
        for (a, b) in &unequal_pairs {
            assert!(!equal(a, b), "{a} != {b}");
            assert!(!equal(b, a), "{b} != {a}");
        }
    }

    #[test]
    fn numbers_order_exactly() {
        let less = [
            (json!(1), json!(1.5)),
            (json!(-2.5), json!(-2)),
            (json!(i64::MAX), json!(u64::MAX)),
            (json!(-9.3e18), json!(i64::MIN)),
            (json!(9_007_199_254_740_992.0), json!(9_007_199_254_740_993_u64)),
            (json!(u64::MAX), json!(1e20)),
            (json!(-1e300), json!(i64::MIN)),
            (json!(u64::MAX), json!(1e300)),
            (json!(0.1), json!(0.2)),
        ];
        for (a, b) in &less {
            assert_eq!(order(a, b), Some(Ordering::Less), "{a} < {b}");
            assert_eq!(order(b, a), Some(Ordering::Greater), "{b} > {a}");
        }
        assert_eq!(order(&json!(3), &json!(3.0)), Some(Ordering::Equal));
        assert_eq!(order(&json!(1e20), &json!(1e20)), Some(Ordering::Equal));
    }

    #[test]
    fn strings_order_by_code_point() {
        let less = [
            ("a", "b"),
            ("B", "a"),
            ("", "a"),
            ("ab", "abc"),
            ("z", "é"),
            ("é", "😀"),
            // Code points, not UTF-16 units (where the surrogates of U+1F600 sort first).
            ("\u{ff21}", "😀"),
            ("10", "9"),
        ];
        for (a, b) in less {
            assert_eq!(order(&json!(a), &json!(b)), Some(Ordering::Less), "{a} < {b}");
        }
    }

    #[test]
    fn mismatched_kinds_have_no_order() {
        for (a, b) in [
            (json!(1), json!("1")),
            (json!(true), json!(false)),
            (json!(null), json!(null)),
            (json!([1]), json!([2])),
            (json!({}), json!({})),
        ] {
            assert_eq!(order(&a, &b), None, "{a} vs {b}");
        }
    }

    #[test]
    fn truthiness() {
        for value in [
            json!(true),
            json!(1),
            json!(-0.5),
            json!("0"),
            json!(" "),
            json!([0]),
            json!({ "a": null }),
        ] {
            assert!(truthy(&value), "{value} is truthy");
        }
        for value in [
            json!(null),
            json!(false),
            json!(0),
            json!(0.0),
            json!(-0.0),
            json!(""),
            json!([]),
            json!({}),
        ] {
            assert!(!truthy(&value), "{value} is falsy");
        }
    }
}
