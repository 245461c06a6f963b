//! The `.tenx` grammar (`grammar/tenx.pest`) and the pest parser generated from it.
//!
//! Nothing else lives here: pest types never leave `tenx-compiler`'s `syntax` module, which turns
//! pairs into the typed AST straight away.

#![expect(missing_docs, reason = "pest_derive generates an undocumented `Rule` enum")]

// pest is built without its `std` feature (its per-rule stack probe cost ~10% of parse time;
// the compiler refuses deep nesting before parsing instead), so the generated parser names
// `alloc` directly.
extern crate alloc;

use pest_derive::Parser;

/// The parser for `.tenx` sources. Use [`Rule::item_chunk`] for one top-level item.
#[derive(Parser)]
#[grammar = "../tenx.pest"]
pub struct TenxParser;

pub use pest;
