//! Unit tests of the formatter on small inputs; the fixtures and the same-artifact property are
//! tested in `tests/tests/fmt.rs`.

use super::{FmtOptions, format_source};
use tenx_diagnostics::FileId;

fn fmt(text: &str) -> String {
    match format_source(FileId(0), text, &FmtOptions::default()) {
        Ok(out) => out,
        Err(refused) => panic!("not formatted: {refused:?}"),
    }
}

fn fmt_width(text: &str, width: usize) -> String {
    format_source(FileId(0), text, &FmtOptions { line_width: width }).unwrap()
}

#[test]
fn blocks_are_indented_and_aligned() {
    let text = "model m {provider=scripted\nturns=[{text:\"hi\"}]}\n";
    assert_eq!(
        fmt(text),
        "model m {\n  provider = scripted\n  turns    = [{ text: \"hi\" }]\n}\n"
    );
}

#[test]
fn comments_and_blank_lines_are_kept() {
    let text = "// head\n\n\n\ntag a \"A\" // after a\n/* before b */\ntag b\n\n\n// end\n";
    assert_eq!(
        fmt(text),
        "// head\n\ntag a \"A\"  // after a\n/* before b */\ntag b\n\n// end\n"
    );
}

#[test]
fn long_lists_break_one_element_per_line() {
    let text = "model m {\n  provider = scripted\n  turns = [{ text: \"aaaaaaaaaa\" }, { text: \"bbbbbbbbbb\" }]\n}\n";
    let out = fmt_width(text, 40);
    assert_eq!(
        out,
        "model m {\n  provider = scripted\n  turns = [\n    { text: \"aaaaaaaaaa\" },\n    { text: \"bbbbbbbbbb\" }\n  ]\n}\n"
    );
    assert_eq!(fmt_width(&out, 40), out);
}

#[test]
fn a_syntax_error_is_refused() {
    let refused = format_source(FileId(0), "model m {\n  provider => x\n", &FmtOptions::default()).unwrap_err();
    assert!(matches!(refused, super::Refused::SyntaxErrors(errors) if !errors.is_empty()));
}

#[test]
fn empty_and_comment_only_files() {
    assert_eq!(fmt(""), "");
    assert_eq!(fmt("\n\n// only\n\n"), "// only\n");
}
