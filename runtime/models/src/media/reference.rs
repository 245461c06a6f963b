//! A media reference (reference-api.md §7 `MediaRef`: `{kind: "url" | "file_id" | "data", url,
//! file_id, data_base64, mime_type, filename, …}`) read and checked before anything is sent.
//!
//! The reference is untrusted (a client sent it): it must be an object; its `kind`, when given,
//! names the field that holds the media, else the first of `data_base64`, `url`, `file_id` it
//! has is used. A `url` is http(s), or a base64 `data:` URL (read as inline data); inline data is
//! standard base64 (padded) of at most [`MAX_MEDIA_BYTES`] decoded bytes; a `mime_type` is a
//! `type/subtype` (parameters dropped, lowercased); a `filename` is short and has no control
//! characters; a `detail` (OpenAI's image detail, an extension of the reference) is `auto`,
//! `low` or `high`. Reasons never quote the data or the URL (a signed URL is a credential).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Url;
use serde_json::{Map, Value};

/// The most decoded bytes one inline media item may hold: 25 MiB, the reference server's
/// `media_max_size_mb` default.
pub const MAX_MEDIA_BYTES: usize = 25 * 1024 * 1024;

/// The longest `url` accepted (a `data:` URL is bounded by [`MAX_MEDIA_BYTES`] instead).
const MAX_URL_CHARS: usize = 16 * 1024;

/// Where the media is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An http(s) URL.
    Url(String),
    /// A file id, the provider's own (the runtime keeps no file store).
    FileId(String),
    /// Inline data: checked standard base64 and its decoded length.
    Data {
        /// The base64 text.
        base64: String,
        /// How many bytes it decodes to.
        bytes: usize,
    },
}

/// A checked media reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRef {
    /// Where the media is.
    pub source: Source,
    /// The MIME type (`image/png`), lowercase, without parameters.
    pub mime_type: Option<String>,
    /// The file name.
    pub filename: Option<String>,
    /// OpenAI's image `detail` (`auto`, `low`, `high`), when the reference carries one.
    pub detail: Option<String>,
}

impl MediaRef {
    /// Reads a block's `media` reference; `mime_fallback` is the block's own `mime_type` (a
    /// `data` block's), used when the reference has none.
    pub fn read(media: &Value, mime_fallback: Option<&str>) -> Result<Self, String> {
        let Value::Object(fields) = media else {
            return Err("its `media` reference is not an object".into());
        };
        let mime = match optional_str(fields, "mime_type")?.or(mime_fallback) {
            Some(text) => Some(mime_type(text)?),
            None => None,
        };
        let filename = optional_str(fields, "filename")?.map(filename).transpose()?;
        let detail = match optional_str(fields, "detail")? {
            Some(detail @ ("auto" | "low" | "high")) => Some(detail.to_owned()),
            Some(_) => return Err("its `detail` is not `auto`, `low` or `high`".into()),
            None => None,
        };
        let kind = optional_str(fields, "kind")?;
        let field = match kind {
            Some("url") => "url",
            Some("file_id") => "file_id",
            Some("data") => "data_base64",
            Some(_) => return Err("its `media.kind` is not `url`, `file_id` or `data`".into()),
            None => ["data_base64", "url", "file_id"]
                .into_iter()
                .find(|field| fields.get(*field).is_some_and(|value| !value.is_null()))
                .ok_or("its `media` reference has no `data_base64`, `url` or `file_id`")?,
        };
        let value = optional_str(fields, field)?.ok_or_else(|| format!("its `media` reference has no `{field}`"))?;
        let (source, mime) = match field {
            "data_base64" => (inline(value)?, mime),
            "file_id" => (Source::FileId(file_id(value)?), mime),
            _ => url(value, mime)?,
        };
        Ok(Self {
            source,
            mime_type: mime,
            filename,
            detail,
        })
    }

    /// Inline data given beside the reference (a `data` block's `data_base64`).
    pub fn inline(base64: &str, mime: &str) -> Result<Self, String> {
        Ok(Self {
            source: inline(base64)?,
            mime_type: Some(mime_type(mime)?),
            filename: None,
            detail: None,
        })
    }

    /// The MIME type's top-level type (`image` of `image/png`).
    pub fn top_type(&self) -> Option<&str> {
        self.mime_type
            .as_deref()
            .and_then(|mime| mime.split_once('/'))
            .map(|(top, _)| top)
    }
}

/// A string field, absent or `null` as `None`.
fn optional_str<'a>(fields: &'a Map<String, Value>, field: &str) -> Result<Option<&'a str>, String> {
    match fields.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(format!("its `media.{field}` is not a string")),
    }
}

/// Checked inline base64.
fn inline(base64: &str) -> Result<Source, String> {
    // Four characters carry three bytes: refuse what is too large before decoding it.
    if base64.len() / 4 > MAX_MEDIA_BYTES / 3 + 1 {
        return Err(too_large());
    }
    let bytes = STANDARD
        .decode(base64)
        .map_err(|_| "its data is not standard, padded base64".to_owned())?
        .len();
    if bytes > MAX_MEDIA_BYTES {
        return Err(too_large());
    }
    if bytes == 0 {
        return Err("its data is empty".into());
    }
    Ok(Source::Data {
        base64: base64.to_owned(),
        bytes,
    })
}

/// The reason for data over [`MAX_MEDIA_BYTES`].
fn too_large() -> String {
    format!("its data is over {} MiB", MAX_MEDIA_BYTES / (1024 * 1024))
}

/// A URL: http(s), or a base64 `data:` URL whose MIME type wins over the reference's.
fn url(text: &str, mime: Option<String>) -> Result<(Source, Option<String>), String> {
    if let Some(rest) = text
        .get(..5)
        .filter(|head| head.eq_ignore_ascii_case("data:"))
        .and(text.get(5..))
    {
        let (head, payload) = rest.split_once(',').ok_or("its `data:` URL has no `,`")?;
        let Some(declared) = head.strip_suffix(";base64").or_else(|| head.strip_suffix(";BASE64")) else {
            return Err("its `data:` URL is not base64".into());
        };
        let mime = if declared.is_empty() {
            mime
        } else {
            Some(mime_type(declared)?)
        };
        return Ok((inline(payload)?, mime));
    }
    if text.len() > MAX_URL_CHARS {
        return Err("its `url` is too long".into());
    }
    match Url::parse(text) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.has_host() => {
            Ok((Source::Url(parsed.into()), mime))
        }
        _ => Err("its `url` is not an http(s) or base64 `data:` URL".into()),
    }
}

/// A provider file id: 1 to 256 visible ASCII characters.
fn file_id(text: &str) -> Result<String, String> {
    if text.is_empty() || text.len() > 256 || !text.bytes().all(|byte| byte.is_ascii_graphic()) {
        return Err("its `file_id` is not 1 to 256 visible ASCII characters".into());
    }
    Ok(text.to_owned())
}

/// A file name: 1 to 255 bytes, no control characters.
fn filename(text: &str) -> Result<String, String> {
    if text.is_empty() || text.len() > 255 || text.chars().any(char::is_control) {
        return Err("its `filename` is not 1 to 255 bytes without control characters".into());
    }
    Ok(text.to_owned())
}

/// A MIME type's essence, lowercase: `type/subtype`, both RFC 2045 tokens, at most 127 bytes.
pub fn mime_type(text: &str) -> Result<String, String> {
    let essence = text.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let token = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&byte))
    };
    match essence.split_once('/') {
        Some((top, sub)) if essence.len() <= 127 && token(top) && token(sub) => Ok(essence),
        _ => Err("its `mime_type` is not a MIME type".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_read_by_kind_or_by_the_field_they_have() {
        let read = MediaRef::read(&json!({"kind": "url", "url": "https://example.com/a.png"}), None).unwrap();
        assert_eq!(read.source, Source::Url("https://example.com/a.png".into()));
        let read = MediaRef::read(
            &json!({"data_base64": "aGVsbG8=", "mime_type": "Image/PNG; x=1", "filename": "a.png", "detail": "low"}),
            None,
        )
        .unwrap();
        assert_eq!(
            read,
            MediaRef {
                source: Source::Data {
                    base64: "aGVsbG8=".into(),
                    bytes: 5
                },
                mime_type: Some("image/png".into()),
                filename: Some("a.png".into()),
                detail: Some("low".into()),
            }
        );
        let read = MediaRef::read(
            &json!({"kind": "file_id", "file_id": "file-abc", "url": null}),
            Some("application/pdf"),
        )
        .unwrap();
        assert_eq!(read.source, Source::FileId("file-abc".into()));
        assert_eq!(read.mime_type.as_deref(), Some("application/pdf"));
        let read = MediaRef::read(&json!({"url": "data:image/jpeg;base64,/9j/4A=="}), Some("image/png")).unwrap();
        assert_eq!(
            read.mime_type.as_deref(),
            Some("image/jpeg"),
            "the data URL's type wins"
        );
        assert_eq!(
            read.source,
            Source::Data {
                base64: "/9j/4A==".into(),
                bytes: 4
            }
        );
    }

    #[test]
    fn bad_references_are_refused_without_quoting_them() {
        let cases = [
            (
                json!("https://example.com/a.png"),
                "its `media` reference is not an object",
            ),
            (
                json!({}),
                "its `media` reference has no `data_base64`, `url` or `file_id`",
            ),
            (
                json!({"kind": "blob", "url": "https://x.y"}),
                "its `media.kind` is not `url`, `file_id` or `data`",
            ),
            (
                json!({"kind": "data", "url": "https://x.y"}),
                "its `media` reference has no `data_base64`",
            ),
            (json!({"url": 7}), "its `media.url` is not a string"),
            (
                json!({"url": "file:///etc/passwd"}),
                "its `url` is not an http(s) or base64 `data:` URL",
            ),
            (
                json!({"url": "data:text/plain,SECRET"}),
                "its `data:` URL is not base64",
            ),
            (
                json!({"data_base64": "SECRET!!"}),
                "its data is not standard, padded base64",
            ),
            (
                json!({"data_base64": "aGVsbG8"}),
                "its data is not standard, padded base64",
            ),
            (json!({"data_base64": ""}), "its data is empty"),
            (
                json!({"data_base64": "aGVsbG8=", "mime_type": "png"}),
                "its `mime_type` is not a MIME type",
            ),
            (
                json!({"data_base64": "aGVsbG8=", "filename": "a\nb"}),
                "its `filename` is not 1 to 255 bytes without control characters",
            ),
            (
                json!({"url": "https://x.y", "detail": "ultra"}),
                "its `detail` is not `auto`, `low` or `high`",
            ),
            (
                json!({"file_id": "a b"}),
                "its `file_id` is not 1 to 256 visible ASCII characters",
            ),
        ];
        for (media, reason) in cases {
            assert_eq!(MediaRef::read(&media, None).unwrap_err(), reason, "{media}");
        }
    }

    #[test]
    fn data_over_the_limit_is_refused_before_it_is_decoded() {
        let big = "A".repeat((MAX_MEDIA_BYTES / 3 + 2) * 4);
        assert_eq!(
            MediaRef::read(&json!({"data_base64": big}), None).unwrap_err(),
            "its data is over 25 MiB"
        );
        let just = "A".repeat(MAX_MEDIA_BYTES / 3 * 4);
        assert!(MediaRef::read(&json!({"data_base64": just}), None).is_ok());
    }
}
