//! The `calculator` builtin: a small recursive-descent evaluator for arithmetic, with no variables,
//! no functions and nothing that can panic, loop or recurse without bound.
//!
//! Grammar (whitespace between tokens is ignored):
//!
//! ```text
//! expression = term (("+" | "-") term)*
//! term       = unary (("*" | "/" | "%") unary)*
//! unary      = ("-" | "+") unary | power
//! power      = atom ("^" unary)?          right-associative: 2^3^2 = 2^9
//! atom       = number | "(" expression ")"
//! number     = digits ("." digits?)? (("e" | "E") ("+" | "-")? digits)?  |  "." digits ...
//! ```
//!
//! `-2^2` is `-4` (the power binds tighter than the sign), `2^-1` is `0.5`. Arithmetic is IEEE
//! double precision; `%` is the remainder with the sign of the dividend. Division or remainder by
//! zero, a result that is not finite (overflow, `0^-1`), more than [`MAX_DEPTH`] nested
//! parentheses or signs, and an expression longer than [`MAX_LENGTH`] characters are errors.

use serde_json::{Number, Value};

/// The longest expression evaluated, in characters (the declared parameter allows 200).
pub const MAX_LENGTH: usize = 1_000;

/// The deepest nesting of parentheses, signs and powers.
pub const MAX_DEPTH: usize = 64;

/// The largest magnitude below which an integral result is returned as a JSON integer (2^53).
const EXACT_INTEGER_LIMIT: f64 = 9_007_199_254_740_992.0;

/// Why an expression has no value; the message is shown to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CalculatorError(String);

/// Evaluates `expression` into a JSON number: an integer when the value is integral and below
/// 2^53 in magnitude, else a float.
pub fn evaluate(expression: &str) -> Result<Value, CalculatorError> {
    if expression.chars().count() > MAX_LENGTH {
        return Err(CalculatorError(format!(
            "the expression is longer than {MAX_LENGTH} characters"
        )));
    }
    let mut parser = Parser {
        chars: expression.chars().collect(),
        at: 0,
        depth: 0,
    };
    let value = parser.expression()?;
    parser.skip_space();
    if let Some(c) = parser.peek() {
        return Err(parser.unexpected(c));
    }
    Ok(to_json(value))
}

/// The number as JSON.
fn to_json(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < EXACT_INTEGER_LIMIT {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "the value is integral and below 2^53 in magnitude, so it converts exactly"
        )]
        let integer = value as i64;
        return Value::Number(Number::from(integer));
    }
    Number::from_f64(value).map_or(Value::Null, Value::Number)
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at = self.at.saturating_add(1);
        }
    }

    /// The next non-space character, without consuming it.
    fn next_token(&mut self) -> Option<char> {
        self.skip_space();
        self.peek()
    }

    fn bump(&mut self) {
        self.at = self.at.saturating_add(1);
    }

    fn unexpected(&self, c: char) -> CalculatorError {
        CalculatorError(format!("unexpected `{c}` at character {}", self.at.saturating_add(1)))
    }

    fn end(&self) -> CalculatorError {
        CalculatorError("the expression ends where a number or `(` was expected".into())
    }

    /// Runs `parse` one level deeper, refusing past [`MAX_DEPTH`].
    fn nested(
        &mut self,
        parse: impl FnOnce(&mut Self) -> Result<f64, CalculatorError>,
    ) -> Result<f64, CalculatorError> {
        if self.depth >= MAX_DEPTH {
            return Err(CalculatorError(format!(
                "the expression nests deeper than {MAX_DEPTH} levels"
            )));
        }
        self.depth = self.depth.saturating_add(1);
        let value = parse(self);
        self.depth = self.depth.saturating_sub(1);
        value
    }

    fn expression(&mut self) -> Result<f64, CalculatorError> {
        let mut value = self.term()?;
        while let Some(op @ ('+' | '-')) = self.next_token() {
            self.bump();
            let right = self.term()?;
            value = finite(if op == '+' { value + right } else { value - right })?;
        }
        Ok(value)
    }

    fn term(&mut self) -> Result<f64, CalculatorError> {
        let mut value = self.unary()?;
        while let Some(op @ ('*' | '/' | '%')) = self.next_token() {
            self.bump();
            let right = self.unary()?;
            value = match op {
                '*' => finite(value * right)?,
                _ if right == 0.0 => return Err(CalculatorError("division by zero".into())),
                '/' => finite(value / right)?,
                _ => finite(value % right)?,
            };
        }
        Ok(value)
    }

    fn unary(&mut self) -> Result<f64, CalculatorError> {
        match self.next_token() {
            Some('-') => {
                self.bump();
                self.nested(|parser| parser.unary().map(|value| -value))
            }
            Some('+') => {
                self.bump();
                self.nested(Self::unary)
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<f64, CalculatorError> {
        let base = self.atom()?;
        if self.next_token() == Some('^') {
            self.bump();
            let exponent = self.nested(Self::unary)?;
            return finite(base.powf(exponent));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<f64, CalculatorError> {
        match self.next_token() {
            Some('(') => {
                self.bump();
                let value = self.nested(Self::expression)?;
                match self.next_token() {
                    Some(')') => {
                        self.bump();
                        Ok(value)
                    }
                    Some(c) => Err(self.unexpected(c)),
                    None => Err(CalculatorError("a `(` is never closed".into())),
                }
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) => Err(self.unexpected(c)),
            None => Err(self.end()),
        }
    }

    fn digits(&mut self, text: &mut String) -> usize {
        let mut count = 0_usize;
        while let Some(c) = self.peek().filter(char::is_ascii_digit) {
            text.push(c);
            self.bump();
            count = count.saturating_add(1);
        }
        count
    }

    fn number(&mut self) -> Result<f64, CalculatorError> {
        let start = self.at;
        let mut text = String::new();
        let mut digits = self.digits(&mut text);
        if self.peek() == Some('.') {
            text.push('.');
            self.bump();
            digits = digits.saturating_add(self.digits(&mut text));
        }
        if digits == 0 {
            self.at = start;
            return Err(self.unexpected('.'));
        }
        if let Some(e @ ('e' | 'E')) = self.peek() {
            text.push(e);
            self.bump();
            if let Some(sign @ ('+' | '-')) = self.peek() {
                text.push(sign);
                self.bump();
            }
            if self.digits(&mut text) == 0 {
                return Err(match self.peek() {
                    Some(c) => self.unexpected(c),
                    None => CalculatorError("a number's exponent has no digits".into()),
                });
            }
        }
        let value: f64 = text
            .parse()
            .map_err(|_| CalculatorError(format!("`{text}` is not a number")))?;
        finite(value)
    }
}

/// `value`, or an error when it is infinite or not a number.
fn finite(value: f64) -> Result<f64, CalculatorError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(CalculatorError(
            "the result is too large or undefined (not a finite number)".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ok(expression: &str) -> Value {
        evaluate(expression).unwrap_or_else(|error| panic!("{expression}: {error}"))
    }

    fn err(expression: &str) -> String {
        evaluate(expression).unwrap_err().to_string()
    }

    #[test]
    fn arithmetic_follows_the_usual_precedence() {
        assert_eq!(ok("1 + 2 * 3"), json!(7));
        assert_eq!(ok("(1 + 2) * 3"), json!(9));
        assert_eq!(ok("10 - 4 - 3"), json!(3));
        assert_eq!(ok("100 / 10 / 5"), json!(2));
        assert_eq!(ok("7 % 4"), json!(3));
        assert_eq!(ok("-7 % 4"), json!(-3));
        assert_eq!(ok("2 ^ 3 ^ 2"), json!(512));
        assert_eq!(ok("-2^2"), json!(-4));
        assert_eq!(ok("(-2)^2"), json!(4));
        assert_eq!(ok("2^-1"), json!(0.5));
        assert_eq!(ok("--3"), json!(3));
        assert_eq!(ok("+3"), json!(3));
        assert_eq!(ok("1/3"), json!(1.0 / 3.0));
        assert_eq!(ok("0.1 + 0.2"), json!(0.1 + 0.2));
        assert_eq!(ok(" 1.5e3 + .5 "), json!(1500.5));
        assert_eq!(ok("2."), json!(2));
        assert_eq!(ok("1E-2"), json!(0.01));
        assert_eq!(ok("5950.0"), json!(5950));
        assert_eq!(ok("-0"), json!(0));
    }

    #[test]
    fn large_values_stay_floats_beyond_exact_integers() {
        assert_eq!(ok("2^52"), json!(4_503_599_627_370_496_i64));
        assert_eq!(ok("2^53"), json!(9_007_199_254_740_992.0));
        assert_eq!(ok("1e300 * 10"), json!(1e301));
    }

    #[test]
    fn refusals_name_the_problem() {
        assert_eq!(err("1 / 0"), "division by zero");
        assert_eq!(err("1 % (2 - 2)"), "division by zero");
        assert_eq!(
            err("1e308 * 10"),
            "the result is too large or undefined (not a finite number)"
        );
        assert_eq!(
            err("0 ^ -1"),
            "the result is too large or undefined (not a finite number)"
        );
        assert_eq!(
            err("(-8) ^ 0.5"),
            "the result is too large or undefined (not a finite number)"
        );
        assert_eq!(
            err("1e999"),
            "the result is too large or undefined (not a finite number)"
        );
        assert_eq!(err("2 +"), "the expression ends where a number or `(` was expected");
        assert_eq!(err(""), "the expression ends where a number or `(` was expected");
        assert_eq!(err("(1 + 2"), "a `(` is never closed");
        assert_eq!(err("1 + 2)"), "unexpected `)` at character 6");
        assert_eq!(err("x + 1"), "unexpected `x` at character 1");
        assert_eq!(err("sqrt(4)"), "unexpected `s` at character 1");
        assert_eq!(err("1 2"), "unexpected `2` at character 3");
        assert_eq!(err("."), "unexpected `.` at character 1");
        assert_eq!(err("1e"), "a number's exponent has no digits");
        assert_eq!(err("1e+x"), "unexpected `x` at character 4");
        assert_eq!(err("1..2"), "unexpected `.` at character 3");
        assert_eq!(err("٣"), "unexpected `٣` at character 1");
    }

    #[test]
    fn deep_nesting_and_long_input_are_refused_without_overflow() {
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert_eq!(
            err(&deep),
            format!("the expression is longer than {MAX_LENGTH} characters")
        );
        let deep = format!("{}1{}", "(".repeat(400), ")".repeat(400));
        assert_eq!(
            err(&deep),
            format!("the expression nests deeper than {MAX_DEPTH} levels")
        );
        assert_eq!(
            err(&"-".repeat(900)),
            format!("the expression nests deeper than {MAX_DEPTH} levels")
        );
        assert_eq!(
            err(&"2^".repeat(300)),
            format!("the expression nests deeper than {MAX_DEPTH} levels")
        );
        let nested = format!("{}1{}", "(".repeat(60), ")".repeat(60));
        assert_eq!(ok(&nested), json!(1));
        let many = vec!["1"; 400].join("+");
        assert_eq!(ok(&many), json!(400));
    }

    #[test]
    fn huge_literals_do_not_panic() {
        let digits = "9".repeat(400);
        assert_eq!(
            err(&digits),
            "the result is too large or undefined (not a finite number)"
        );
        assert_eq!(ok(&format!("0.{}", "0".repeat(500))), json!(0));
    }
}
