//! The rules of a tool's run binding that both the compiler and the loader apply: HTTP header
//! names and values of an `http` tool, and the handler names of `native` tools.
//!
//! The compiler reports a broken rule with a coded diagnostic (`TENX0117`–`TENX0119`,
//! `TENX0820`, `TENX0824`); the artifact's self-check refuses an artifact that breaks one. Both
//! call these functions, so the two cannot drift apart.

/// Header names the runtime writes itself, compared case-insensitively: framing, the body's
/// type, the idempotency key it sends, and hop-by-hop headers. Every name starting with
/// `Proxy-` is reserved too (see [`is_reserved_header`]).
pub const RESERVED_HEADERS: &[&str] = &[
    "Connection",
    "Content-Length",
    "Content-Type",
    "Host",
    "Idempotency-Key",
    "Keep-Alive",
    "TE",
    "Trailer",
    "Transfer-Encoding",
    "Upgrade",
];

/// Whether `name` is an HTTP token (RFC 9110 §5.6.2): one or more `tchar`s, that is ASCII
/// letters, digits and ``!#$%&'*+-.^_`|~``.
pub fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether the runtime owns the header `name` (case-insensitive): one of [`RESERVED_HEADERS`] or
/// any `Proxy-…` header.
pub fn is_reserved_header(name: &str) -> bool {
    RESERVED_HEADERS.iter().any(|r| r.eq_ignore_ascii_case(name))
        || name
            .get(..6)
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case("proxy-"))
}

/// Whether a header value may be sent as written: no control character (CR or LF would start a
/// new header).
pub fn is_header_value(value: &str) -> bool {
    !value.chars().any(char::is_control)
}

/// Whether `name` is a native handler name: 1 to 128 characters matching
/// `^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`, such as `crm.lookup`.
pub fn is_native_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name.split('.').all(|part| {
            let mut bytes = part.bytes();
            bytes.next().is_some_and(|b| b.is_ascii_lowercase())
                && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names() {
        for good in ["Authorization", "X-Api-Key", "x_trace", "a!#$%&'*+-.^_`|~9"] {
            assert!(is_header_name(good), "{good}");
        }
        for bad in ["", "X Api", "X:Y", "Ä", "a\r\nb", "(x)", "${TOKEN}"] {
            assert!(!is_header_name(bad), "{bad}");
        }
    }

    #[test]
    fn reserved_headers() {
        for reserved in [
            "host",
            "CONTENT-TYPE",
            "Idempotency-Key",
            "te",
            "Proxy-Authorization",
            "proxy-x",
        ] {
            assert!(is_reserved_header(reserved), "{reserved}");
        }
        for free in ["Authorization", "X-Host", "Proxy", "Accept"] {
            assert!(!is_reserved_header(free), "{free}");
        }
    }

    #[test]
    fn header_values() {
        assert!(is_header_value("Bearer ${PAY_TOKEN}"));
        assert!(is_header_value(""));
        assert!(!is_header_value("a\r\nX-Evil: 1"));
        assert!(!is_header_value("tab\there"));
    }

    #[test]
    fn native_names() {
        for good in ["crm", "crm.lookup", "a1_b.c_2", &"a".repeat(128)] {
            assert!(is_native_name(good), "{good}");
        }
        for bad in [
            "",
            "Crm",
            "crm.",
            ".crm",
            "crm..x",
            "1crm",
            "crm.Lookup",
            "crm-x",
            "_x",
            &"a".repeat(129),
        ] {
            assert!(!is_native_name(bad), "{bad}");
        }
    }
}
