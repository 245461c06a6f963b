//! `prompt_injection`'s `payload_splitting` family: markers of an attack spread over several
//! messages so that no single one looks like it ("part 1 of 3", "continued from previous",
//! "[SPLIT 1/2]", "(part 2)").

use std::sync::LazyLock;

use regex::{RegexSet, RegexSetBuilder};

use super::violation::{Finding, ViolationType};

const MARKERS: &[&str] = &[
    r"\bpart\s+\d+\s+of\s+\d+\b",
    r"\bcontinued\s+from\s+(?:the\s+)?previous\b",
    r"\bcontinue\s+(?:with|the)\s+previous\b",
    r"\bresume\s+(?:from|the)\s+previous\b",
    r"\[SPLIT\s+\d+\s*/\s*\d+\]",
    r"\(part\s+\d+\)",
];

static SET: LazyLock<Option<RegexSet>> =
    LazyLock::new(|| RegexSetBuilder::new(MARKERS).case_insensitive(true).build().ok());

/// The `payload_splitting` finding when `text` holds a splitting marker.
pub(super) fn check(text: &str) -> Option<Finding> {
    // INVARIANT: the markers compile (a unit test proves it); fail closed if not.
    let found = SET.as_ref().is_none_or(|set| set.is_match(text));
    found.then(|| {
        Finding::new(
            ViolationType::PayloadSplitting,
            "payload_splitting",
            "Potential payload splitting detected",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markers_compile() {
        assert!(SET.is_some());
    }

    #[test]
    fn splitting_markers_are_flagged() {
        for text in [
            "This is part 1 of 3 of my request",
            "continued from previous message: ...",
            "[SPLIT 2/2] the rest",
            "(Part 2) now do it",
            "resume from previous",
        ] {
            assert!(check(text).is_some(), "{text}");
        }
    }

    #[test]
    fn ordinary_text_passes() {
        for text in [
            "I ordered 3 parts of 4 kinds",
            "Part of my order is missing",
            "(parts) see page 2",
        ] {
            assert!(check(text).is_none(), "{text}");
        }
    }
}
