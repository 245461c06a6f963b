//! Regular expressions written by programs (`deny_patterns`, `blocked_patterns`) and keyword
//! matchers built from their lists, compiled once per process and shared. Only the linear-time
//! `regex` crate is used: no look-around, no back-references, no catastrophic backtracking,
//! whatever a program or a message holds.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use regex::{Regex, RegexBuilder};

/// Compiled patterns stay cached up to this many; past it they are compiled on each use (the
/// patterns come from the artifact, so a real program never gets near it).
const CACHE_LIMIT: usize = 4096;

/// Compiled patterns by (pattern, case-insensitive).
type Cache = HashMap<(String, bool), Arc<Regex>>;

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(|| Mutex::new(Cache::new()));

/// The compiled form of `pattern` (case-insensitive when `ignore_case`), or the compiler's
/// complaint.
pub(super) fn compile(pattern: &str, ignore_case: bool) -> Result<Arc<Regex>, String> {
    let key = (pattern.to_owned(), ignore_case);
    if let Some(found) = CACHE.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return Ok(Arc::clone(found));
    }
    let compiled = RegexBuilder::new(pattern)
        .case_insensitive(ignore_case)
        .build()
        .map(Arc::new)
        .map_err(|error| match error {
            regex::Error::CompiledTooBig(limit) => format!("the pattern compiles to more than {limit} bytes"),
            _ => "the pattern is not a valid regular expression".to_owned(),
        })?;
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() < CACHE_LIMIT {
        cache.insert(key, Arc::clone(&compiled));
    }
    Ok(compiled)
}

/// A case-insensitive matcher of `phrase` as whole words: the words in order, any run of
/// white space between them, and no word character just before or after (so `ignore` does not
/// match inside `ignorance`). `None` for a phrase without any word.
pub(super) fn phrase(phrase: &str) -> Option<Result<Arc<Regex>, String>> {
    let words: Vec<String> = phrase.split_whitespace().map(regex::escape).collect();
    let first = phrase.split_whitespace().next()?;
    let last = phrase.split_whitespace().last()?;
    let starts_with_word = first.chars().next().is_some_and(is_word);
    let ends_with_word = last.chars().last().is_some_and(is_word);
    let pattern = format!(
        "{}{}{}",
        if starts_with_word { r"\b" } else { "" },
        words.join(r"\s+"),
        if ends_with_word { r"\b" } else { "" },
    );
    Some(compile(&pattern, true))
}

/// A case-insensitive matcher of `text` anywhere (a declared `deny_keywords` entry:
/// containment, as the language reference says).
pub(super) fn containment(text: &str) -> Result<Arc<Regex>, String> {
    compile(&regex::escape(text), true)
}

fn is_word(character: char) -> bool {
    character.is_alphanumeric() || character == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_compiled_once_and_shared() {
        let first = compile("ab+c", false).unwrap();
        let second = compile("ab+c", false).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        let insensitive = compile("ab+c", true).unwrap();
        assert!(!Arc::ptr_eq(&first, &insensitive));
        assert!(insensitive.is_match("ABBC"));
        assert!(!first.is_match("ABBC"));
    }

    #[test]
    fn look_around_and_back_references_are_refused() {
        assert!(compile("(?=a)", false).is_err());
        assert!(compile(r"(a)\1", false).is_err());
    }

    #[test]
    fn a_phrase_matches_whole_words_ignoring_case_and_spacing() {
        let matcher = phrase("refund  everything").unwrap().unwrap();
        assert!(matcher.is_match("please REFUND\n everything now"));
        assert!(!matcher.is_match("refund everythings"));
        assert!(!matcher.is_match("prerefund everything"));
        let punctuated = phrase("c++").unwrap().unwrap();
        assert!(punctuated.is_match("I like C++."));
        assert!(phrase("   ").is_none());
    }

    #[test]
    fn containment_ignores_case_and_escapes_metacharacters() {
        let matcher = containment("gift card (code)").unwrap();
        assert!(matcher.is_match("my GIFT CARD (CODE) is"));
        assert!(!matcher.is_match("gift card code"));
        let unicode = containment("STRASSE").unwrap();
        assert!(unicode.is_match("die strasse"));
    }
}
