//! File names as SARIF artifact locations: percent-encoded URI references, relative to a URI base
//! id the run declares in `originalUriBaseIds`.
//!
//! | display name | `uri` | `uriBaseId` |
//! |---|---|---|
//! | `src/my rules.tenx` (relative to where `tenxc` ran) | `src/my%20rules.tenx` | `%SRCROOT%` |
//! | `<stdlib>/tools.tenx` (embedded in `tenxc`) | `tools.tenx` | `TENXSTDLIB` |
//! | `/abs/main.tenx` | `file:///abs/main.tenx` | none |
//! | `C:/abs/main.tenx` | `file:///C:/abs/main.tenx` | none |
//!
//! Every path segment keeps only RFC 3986's unreserved characters, its sub-delimiters and `@`;
//! everything else, `:` included (so no first segment reads as a URI scheme) and every non-ASCII
//! character (as UTF-8 bytes), is percent-encoded. A relative reference carries its base id;
//! an absolute `file:` URI carries none, as SARIF §3.4.4 requires.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// The base of project files: the directory `tenxc` ran in, which file names are relative to.
pub const SRCROOT_BASE: &str = "%SRCROOT%";

/// The base of the standard library modules embedded in `tenxc` (`<stdlib>/name.tenx`).
pub const STDLIB_BASE: &str = "TENXSTDLIB";

/// The display-name prefix of standard library modules.
const STDLIB_PREFIX: &str = "<stdlib>/";

/// What a path segment percent-encodes: all but `ALPHA DIGIT - . _ ~`, the sub-delimiters
/// `! $ & ' ( ) * + , ; =` and `@` (RFC 3986 `pchar` without `:`).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b'@');

/// An `artifactLocation`'s `uri` and, for a relative one, its `uriBaseId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactUri {
    /// A URI reference.
    pub uri: String,
    /// The base id a relative `uri` is resolved against; `None` for an absolute URI.
    pub base: Option<&'static str>,
}

/// The artifact location of the file with this display name.
pub fn artifact_uri(name: &str) -> ArtifactUri {
    if let Some(module) = name.strip_prefix(STDLIB_PREFIX) {
        return ArtifactUri {
            uri: encode_path(module),
            base: Some(STDLIB_BASE),
        };
    }
    if name.starts_with("//") {
        // A UNC path: `//server/share/x` is `file://server/share/x`.
        return ArtifactUri {
            uri: format!("file:{}", encode_path(name)),
            base: None,
        };
    }
    if name.starts_with('/') {
        return ArtifactUri {
            uri: format!("file://{}", encode_path(name)),
            base: None,
        };
    }
    if let Some((drive, path)) = windows_drive_path(name) {
        return ArtifactUri {
            uri: format!("file:///{drive}:/{}", encode_path(path)),
            base: None,
        };
    }
    ArtifactUri {
        uri: encode_path(name),
        base: Some(SRCROOT_BASE),
    }
}

/// `C:/dir/x.tenx` as `('C', "dir/x.tenx")`.
fn windows_drive_path(name: &str) -> Option<(char, &str)> {
    let mut chars = name.chars();
    let drive = chars.next().filter(char::is_ascii_alphabetic)?;
    let rest = chars.as_str().strip_prefix(":/")?;
    Some((drive, rest))
}

/// Percent-encodes each `/`-separated segment of a path.
fn encode_path(path: &str) -> String {
    path.split('/')
        .map(|segment| utf8_percent_encode(segment, SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relative(uri: &str) -> ArtifactUri {
        ArtifactUri {
            uri: uri.to_string(),
            base: Some(SRCROOT_BASE),
        }
    }

    #[test]
    fn plain_relative_names_are_unchanged() {
        assert_eq!(artifact_uri("main.tenx"), relative("main.tenx"));
        assert_eq!(
            artifact_uri("examples/refund_approval/main.tenx"),
            relative("examples/refund_approval/main.tenx")
        );
        assert_eq!(
            artifact_uri("../shared/tools-v1.2~x.tenx"),
            relative("../shared/tools-v1.2~x.tenx")
        );
    }

    #[test]
    fn spaces_percent_and_delimiters_are_encoded() {
        assert_eq!(
            artifact_uri("my project/100% sure.tenx"),
            relative("my%20project/100%25%20sure.tenx")
        );
        assert_eq!(
            artifact_uri("a#b?c[d]<e>{f}|g\\h^i`j\"k.tenx"),
            relative("a%23b%3Fc%5Bd%5D%3Ce%3E%7Bf%7D%7Cg%5Ch%5Ei%60j%22k.tenx")
        );
        // A colon would make the first segment read as a scheme (`a:` in `a:b.tenx`).
        assert_eq!(artifact_uri("a:b.tenx"), relative("a%3Ab.tenx"));
        // Sub-delimiters and `@` are allowed in a path and kept.
        assert_eq!(artifact_uri("a+b,c;d=e@f!(g).tenx"), relative("a+b,c;d=e@f!(g).tenx"));
    }

    #[test]
    fn non_ascii_is_encoded_as_utf8() {
        assert_eq!(artifact_uri("règles/ä.tenx"), relative("r%C3%A8gles/%C3%A4.tenx"));
        assert_eq!(artifact_uri("🦀.tenx"), relative("%F0%9F%A6%80.tenx"));
    }

    #[test]
    fn stdlib_modules_are_relative_to_their_own_base() {
        assert_eq!(
            artifact_uri("<stdlib>/tools.tenx"),
            ArtifactUri {
                uri: "tools.tenx".into(),
                base: Some(STDLIB_BASE)
            }
        );
    }

    #[test]
    fn absolute_paths_are_file_uris_without_a_base() {
        let absolute = |uri: &str| ArtifactUri {
            uri: uri.to_string(),
            base: None,
        };
        assert_eq!(
            artifact_uri("/tmp/by pass.tenx"),
            absolute("file:///tmp/by%20pass.tenx")
        );
        assert_eq!(artifact_uri("C:/work/x y.tenx"), absolute("file:///C:/work/x%20y.tenx"));
        assert_eq!(
            artifact_uri("//server/share/x.tenx"),
            absolute("file://server/share/x.tenx")
        );
    }
}
