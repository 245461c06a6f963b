//! The tenx standard library: the `.tenx` sources of the `std` modules, embedded in the binary.
//!
//! This crate owns the text of the standard library and nothing else. Each module is a `.tenx`
//! file under `stdlib/std/`, embedded with `include_str!`:
//!
//! - `std.approval`: the response schemas `yes_no` and `approve_edit_reject`;
//! - `std.validators`: the validators `prompt_injection` and `message_content`;
//! - `std.tools`: the builtin tools `current_time`, `calculator` and `random_id`.
//!
//! The compiler parses and checks these sources like any other file when a program imports them
//! (`import std.approval.yes_no`) and shows their spans as `<stdlib>/approval.tenx`. The runtime
//! implements the `builtin(...)` validators and tools they declare; it never reads this crate.

/// One module of the standard library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module {
    /// The module's name, the segment after `std.` in an import: `approval` for `std.approval`.
    pub name: &'static str,
    /// The path shown in diagnostics: `<stdlib>/approval.tenx`.
    pub path: &'static str,
    /// The module's `.tenx` source.
    pub source: &'static str,
}

/// Every module of the standard library, sorted by name.
pub const MODULES: &[Module] = &[
    Module {
        name: "approval",
        path: "<stdlib>/approval.tenx",
        source: include_str!("../std/approval.tenx"),
    },
    Module {
        name: "tools",
        path: "<stdlib>/tools.tenx",
        source: include_str!("../std/tools.tenx"),
    },
    Module {
        name: "validators",
        path: "<stdlib>/validators.tenx",
        source: include_str!("../std/validators.tenx"),
    },
];

/// The module called `name` (`"approval"`, not `"std.approval"`), if the standard library has it.
pub fn module(name: &str) -> Option<&'static Module> {
    MODULES.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::{MODULES, module};

    #[test]
    fn modules_are_sorted_and_named_after_their_path() {
        let names: Vec<&str> = MODULES.iter().map(|m| m.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        for m in MODULES {
            assert_eq!(m.path, format!("<stdlib>/{}.tenx", m.name));
            assert!(!m.source.trim().is_empty(), "{} is empty", m.path);
        }
    }

    #[test]
    fn module_finds_by_short_name_only() {
        assert_eq!(module("approval").map(|m| m.name), Some("approval"));
        assert!(module("std.approval").is_none());
        assert!(module("nope").is_none());
    }
}
