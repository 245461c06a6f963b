//! Files as the editor names them: `file://` URIs to paths and back, through the `url` crate
//! (percent-encoding, Windows drive letters). A URI of another scheme (`untitled:`, `git:`) is
//! no file on disk: the server answers for it from memory only.

use lsp_types::Uri;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The path of a `file://` URI, when it is one.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let url = url::Url::parse(uri.as_str()).ok()?;
    if url.scheme() != "file" {
        return None;
    }
    url.to_file_path().ok()
}

/// The `file://` URI of an absolute path.
pub fn from_path(path: &Path) -> Option<Uri> {
    let url = url::Url::from_file_path(path).ok()?;
    Uri::from_str(url.as_str()).ok()
}

#[cfg(test)]
mod tests {
    use super::{from_path, to_path};
    use lsp_types::Uri;
    use std::path::Path;
    use std::str::FromStr;

    #[test]
    fn a_path_with_spaces_survives_the_round_trip() {
        let path = Path::new("/tmp/my agents/main.tenx");
        let uri = from_path(path).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/my%20agents/main.tenx");
        assert_eq!(to_path(&uri).unwrap(), path);
    }

    #[test]
    fn an_untitled_document_has_no_path() {
        assert_eq!(to_path(&Uri::from_str("untitled:Untitled-1").unwrap()), None);
    }
}
