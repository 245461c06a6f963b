//! The standard library's files as files an editor can open: go to definition on `yes_no`
//! lands in `approval.tenx`, which lives only inside the compiler. Each module is written once
//! per compiler version under the temporary folder, read-only, and named by its URI there.

use super::uri;
use lsp_types::Uri;
use std::path::PathBuf;

/// The folder the stdlib's files are written to.
fn folder() -> PathBuf {
    std::env::temp_dir().join(format!("tenx-stdlib-{}", env!("CARGO_PKG_VERSION")))
}

/// The URI of the stdlib file `module` (`approval.tenx`) holding `text`, written if missing or
/// different; `None` when it cannot be written.
pub fn uri_of(module: &str, text: &str) -> Option<Uri> {
    if module.contains(['/', '\\']) || module.starts_with('.') {
        return None;
    }
    let folder = folder();
    std::fs::create_dir_all(&folder).ok()?;
    let path = folder.join(module);
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
        // A read-only copy from an earlier run is replaced, not written through.
        let _ = std::fs::remove_file(&path);
        std::fs::write(&path, text).ok()?;
        if let Ok(metadata) = std::fs::metadata(&path) {
            let mut permissions = metadata.permissions();
            permissions.set_readonly(true);
            let _ = std::fs::set_permissions(&path, permissions);
        }
    }
    uri::from_path(&path)
}
