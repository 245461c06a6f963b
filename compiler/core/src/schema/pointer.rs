//! JSON pointers (RFC 6901) as the span map and `jsonschema` write them, and their URI-fragment
//! form (`#/properties/a`) used by `$ref`.

use std::borrow::Cow;

/// One reference token, escaped: `~` → `~0`, `/` → `~1`.
pub fn escape_token(token: &str) -> Cow<'_, str> {
    if token.bytes().any(|b| b == b'~' || b == b'/') {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// The unescaped form of one reference token.
pub(crate) fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// `pointer` extended by one (unescaped) token.
pub(crate) fn child(pointer: &str, token: &str) -> String {
    let token = escape_token(token);
    let mut out = String::with_capacity(pointer.len() + 1 + token.len());
    out.push_str(pointer);
    out.push('/');
    out.push_str(&token);
    out
}

/// `pointer` extended by an array index.
pub(crate) fn index(pointer: &str, i: usize) -> String {
    format!("{pointer}/{i}")
}

/// The parent pointer; `None` for the root `""`.
pub(crate) fn parent(pointer: &str) -> Option<&str> {
    pointer.rfind('/').map(|i| pointer.get(..i).unwrap_or(""))
}

/// The last token, unescaped; `None` for the root.
pub(crate) fn last(pointer: &str) -> Option<String> {
    pointer
        .rfind('/')
        .map(|i| unescape_token(pointer.get(i + 1..).unwrap_or("")))
}

/// The URI fragment of a pointer, `#` included: `/properties/a b` → `#/properties/a%20b`.
pub fn fragment(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + 1);
    out.push('#');
    for byte in pointer.bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&byte);
        if keep {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes of a URI fragment; `None` when they do not make UTF-8.
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers() {
        assert_eq!(child("/properties", "a/b~c"), "/properties/a~1b~0c");
        assert_eq!(last("/properties/a~1b~0c").as_deref(), Some("a/b~c"));
        assert_eq!(parent("/properties/a"), Some("/properties"));
        assert_eq!(parent("/properties"), Some(""));
        assert_eq!(parent(""), None);
        assert_eq!(fragment("/$defs/a b"), "#/$defs/a%20b");
        assert_eq!(percent_decode("/$defs/a%20b").as_deref(), Some("/$defs/a b"));
        assert_eq!(percent_decode("%zz"), None);
    }
}
