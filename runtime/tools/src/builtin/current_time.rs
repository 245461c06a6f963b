//! The `current_time` builtin: now, from the injected clock (never the wall clock directly), as
//! an RFC 3339 timestamp with whole seconds and the zone's offset, in the IANA time zone the
//! model names (UTC when it names none). The time zone database is compiled in (jiff's bundled
//! tzdb), so the answer does not depend on the machine's files.

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The longest time zone name looked up (the declared parameter allows 64).
const MAX_ZONE_LENGTH: usize = 64;

/// Why there is no answer; the message is shown to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TimeError(String);

/// `now_ms` (milliseconds since the Unix epoch) in `zone` (UTC when `None`), e.g.
/// `2026-03-29T03:30:00+02:00`.
pub fn current_time(now_ms: u64, zone: Option<&str>) -> Result<String, TimeError> {
    let millis = i64::try_from(now_ms).map_err(|_| TimeError("the clock is out of range".into()))?;
    let now = Timestamp::from_millisecond(millis).map_err(|_| TimeError("the clock is out of range".into()))?;
    let time_zone = match zone {
        None => TimeZone::UTC,
        Some(name) if name.is_empty() || name.chars().count() > MAX_ZONE_LENGTH => {
            return Err(TimeError(format!(
                "a time zone name has 1 to {MAX_ZONE_LENGTH} characters"
            )));
        }
        Some(name) => TimeZone::get(name).map_err(|_| {
            TimeError(format!(
                "unknown time zone `{name}`: use an IANA name such as `Europe/Berlin` or `UTC`"
            ))
        })?,
    };
    Ok(now
        .to_zoned_datetime(time_zone)
        .strftime("%Y-%m-%dT%H:%M:%S%:z")
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-03-29T01:30:00Z, half an hour after Berlin moved to summer time (01:00Z).
    const AFTER_DST: u64 = 1_774_747_800_000;

    #[test]
    fn utc_by_default_and_zones_by_name() {
        assert_eq!(current_time(AFTER_DST, None).unwrap(), "2026-03-29T01:30:00+00:00");
        assert_eq!(
            current_time(AFTER_DST, Some("UTC")).unwrap(),
            "2026-03-29T01:30:00+00:00"
        );
        assert_eq!(
            current_time(AFTER_DST, Some("Europe/Berlin")).unwrap(),
            "2026-03-29T03:30:00+02:00"
        );
        assert_eq!(
            current_time(AFTER_DST - 3_600_000, Some("Europe/Berlin")).unwrap(),
            "2026-03-29T01:30:00+01:00"
        );
        assert_eq!(
            current_time(AFTER_DST + 999, Some("Asia/Kolkata")).unwrap(),
            "2026-03-29T07:00:00+05:30"
        );
        assert_eq!(current_time(0, None).unwrap(), "1970-01-01T00:00:00+00:00");
    }

    #[test]
    fn unknown_zones_and_bad_clocks_are_errors() {
        assert_eq!(
            current_time(0, Some("Mars/Olympus")).unwrap_err().to_string(),
            "unknown time zone `Mars/Olympus`: use an IANA name such as `Europe/Berlin` or `UTC`"
        );
        assert!(current_time(0, Some("")).is_err());
        assert!(current_time(0, Some(&"A".repeat(65))).is_err());
        assert!(current_time(0, Some("../../etc/passwd")).is_err());
        assert_eq!(
            current_time(u64::MAX, None).unwrap_err().to_string(),
            "the clock is out of range"
        );
        assert!(current_time(i64::MAX as u64, None).is_err());
    }
}
