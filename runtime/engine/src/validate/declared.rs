//! Validators a program declares: `max_length` (characters) → `length_exceeded`,
//! `deny_patterns` (Rust `regex` syntax, as written: case-sensitive unless the pattern says
//! `(?i)`; any match refuses) → `denied_pattern`, `deny_keywords` (containment, ignoring case)
//! → `denied_keyword`, checked in that order. A declared validator takes no arguments.

use std::sync::Arc;

use regex::Regex;
use serde_json::Value;

use super::patterns;
use super::violation::{Finding, ViolationType};

/// A declared validator, compiled.
pub(super) struct Declared {
    max_length: Option<u64>,
    deny_patterns: Vec<Arc<Regex>>,
    deny_keywords: Vec<Arc<Regex>>,
}

impl Declared {
    /// Compiles the validator's patterns and keywords; `used` must be `{}`.
    pub(super) fn new(
        deny_patterns: &[String],
        deny_keywords: &[String],
        max_length: Option<u64>,
        used: &Value,
    ) -> Result<Self, Finding> {
        if used.as_object().is_none_or(|args| !args.is_empty()) {
            return Err(Finding::misconfigured(
                "args",
                "a declared validator takes no arguments",
            ));
        }
        let deny_patterns = deny_patterns
            .iter()
            .enumerate()
            .map(|(index, pattern)| {
                patterns::compile(pattern, false)
                    .map_err(|why| Finding::misconfigured(format!("deny_patterns[{index}]"), &why))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let deny_keywords = deny_keywords
            .iter()
            .enumerate()
            .map(|(index, keyword)| {
                let rule = || format!("deny_keywords[{index}]");
                if keyword.is_empty() {
                    return Err(Finding::misconfigured(rule(), "the keyword is empty"));
                }
                patterns::containment(keyword).map_err(|why| Finding::misconfigured(rule(), &why))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            max_length,
            deny_patterns,
            deny_keywords,
        })
    }

    /// The first problem of `text`, if any.
    pub(super) fn check(&self, text: &str) -> Option<Finding> {
        if let Some(max_length) = self.max_length {
            let limit = usize::try_from(max_length).unwrap_or(usize::MAX);
            if text.chars().take(limit.saturating_add(1)).count() > limit {
                return Some(Finding::new(
                    ViolationType::LengthExceeded,
                    "max_length",
                    format!("Input exceeds maximum length of {max_length} characters"),
                ));
            }
        }
        if let Some(index) = self.deny_patterns.iter().position(|pattern| pattern.is_match(text)) {
            return Some(Finding::new(
                ViolationType::DeniedPattern,
                format!("deny_patterns[{index}]"),
                format!("Input matches denied pattern {index}"),
            ));
        }
        let index = self.deny_keywords.iter().position(|keyword| keyword.is_match(text))?;
        Some(Finding::new(
            ViolationType::DeniedKeyword,
            format!("deny_keywords[{index}]"),
            format!("Input contains denied keyword {index}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn card_validator() -> Declared {
        Declared::new(
            &[r"\b(?:[0-9][ -]?){13,16}\b".to_owned(), "(?i)secret".to_owned()],
            &["gift card code".to_owned(), "Coupon".to_owned()],
            Some(40),
            &json!({}),
        )
        .unwrap()
    }

    #[test]
    fn a_matching_pattern_is_denied_without_echoing_it() {
        let finding = card_validator().check("card 4111 1111 1111 1111").unwrap();
        assert_eq!(finding.violation_type, ViolationType::DeniedPattern);
        assert_eq!(finding.rule, "deny_patterns[0]");
        assert!(!finding.message.contains("4111"));
        assert_eq!(card_validator().check("my SECRET").unwrap().rule, "deny_patterns[1]");
    }

    #[test]
    fn patterns_are_case_sensitive_as_written() {
        let validator = Declared::new(&["Secret".to_owned()], &[], None, &json!({})).unwrap();
        assert!(validator.check("secret").is_none());
        assert!(validator.check("Secret").is_some());
    }

    #[test]
    fn keywords_are_contained_ignoring_case() {
        let finding = card_validator().check("My GIFT CARD CODE is").unwrap();
        assert_eq!(finding.violation_type, ViolationType::DeniedKeyword);
        assert_eq!(finding.rule, "deny_keywords[0]");
        assert_eq!(card_validator().check("couponcode").unwrap().rule, "deny_keywords[1]");
    }

    #[test]
    fn length_is_checked_first_in_characters() {
        let validator = card_validator();
        assert!(validator.check(&"é".repeat(40)).is_none());
        let finding = validator.check(&format!("{}coupon", "é".repeat(40))).unwrap();
        assert_eq!(finding.violation_type, ViolationType::LengthExceeded);
        assert_eq!(finding.message, "Input exceeds maximum length of 40 characters");
    }

    #[test]
    fn ordinary_text_passes() {
        assert!(card_validator().check("Order 12345 arrived late").is_none());
    }

    #[test]
    fn bad_declarations_fail_closed() {
        let bad_pattern = Declared::new(&["(".to_owned()], &[], None, &json!({})).err().unwrap();
        assert_eq!(bad_pattern.rule, "deny_patterns[0]");
        let empty_keyword = Declared::new(&[], &[String::new()], None, &json!({})).err().unwrap();
        assert_eq!(empty_keyword.rule, "deny_keywords[0]");
        let with_args = Declared::new(&[], &[], None, &json!({"max_length": 3})).err().unwrap();
        assert_eq!(with_args.violation_type, ViolationType::ValidatorMisconfigured);
    }
}
