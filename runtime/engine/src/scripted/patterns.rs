//! The rules' regexes of scripted models, compiled once per process and shared by every run
//! (compiling a regex costs far more than a whole turn of the engine). Compiled exactly as
//! [`tenx_artifact::script::compile`] does, so the cache changes no answer.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use regex::Regex;

/// Compiled regexes stay cached up to this many; past it they are compiled on each use (the
/// patterns come from the artifact or a host's substituted script, so a real program never
/// gets near it).
const CACHE_LIMIT: usize = 1024;

static CACHE: LazyLock<RwLock<HashMap<String, Arc<Regex>>>> = LazyLock::new(|| RwLock::new(HashMap::new()));

/// The compiled form of a rule's `match`.
pub(crate) fn compiled(pattern: &str) -> Result<Arc<Regex>, regex::Error> {
    if let Some(found) = CACHE.read().unwrap_or_else(PoisonError::into_inner).get(pattern) {
        return Ok(Arc::clone(found));
    }
    let regex = Arc::new(tenx_artifact::script::compile(pattern)?);
    let mut cache = CACHE.write().unwrap_or_else(PoisonError::into_inner);
    if cache.len() < CACHE_LIMIT {
        cache.insert(pattern.to_owned(), Arc::clone(&regex));
    }
    Ok(regex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pattern_is_compiled_once() {
        let first = compiled("(?i)look up (?<order>[0-9]+)").unwrap();
        let second = compiled("(?i)look up (?<order>[0-9]+)").unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert!(compiled("(unclosed").is_err());
    }
}
