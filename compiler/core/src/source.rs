//! Turning file bytes into source text. Invalid UTF-8 is a diagnostic (`TENX0006`) pointing at
//! the first bad byte, never an IO error; the file is kept, lossily decoded, so the diagnostic
//! can show it. Pure: the caller reads the bytes.

use tenx_diagnostics::{Code, Diagnostic, FileId, SourceSet, Span};

/// Adds a file from its bytes. Returns its id and, for invalid UTF-8, the `TENX0006`
/// diagnostic; such a file should not be parsed.
pub fn add_source_bytes(sources: &mut SourceSet, name: &str, bytes: Vec<u8>) -> (FileId, Option<Diagnostic>) {
    match String::from_utf8(bytes) {
        Ok(text) => (sources.add(name, text), None),
        Err(error) => {
            let at = error.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(error.as_bytes()).into_owned();
            let id = sources.add(name, text);
            (id, Some(invalid_utf8(name, id, at)))
        }
    }
}

/// The `TENX0006` diagnostic for the file `name` (added as `id`, lossily decoded) whose first
/// invalid byte is at offset `at`.
pub fn invalid_utf8(name: &str, id: FileId, at: usize) -> Diagnostic {
    // The invalid byte became U+FFFD in the decoded text.
    let span = Span::new(at, at + char::REPLACEMENT_CHARACTER.len_utf8());
    Diagnostic::new(Code::TENX0006, format!("`{name}` is not valid UTF-8"), id, span)
        .label(format!("invalid byte at offset {at}"))
        .help("save the file as UTF-8")
}
