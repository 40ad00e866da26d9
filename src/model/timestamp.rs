//! Timestamps: RFC 3339 in, the two ISO 8601 forms of the API out.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A moment, in microseconds since the Unix epoch (UTC). Sub-microsecond input is cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Parses an RFC 3339 timestamp with any offset.
    pub(crate) fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        let parsed = DateTime::parse_from_rfc3339(text).ok()?;
        Some(Timestamp(parsed.with_timezone(&Utc).timestamp_micros()))
    }

    fn utc(self) -> DateTime<Utc> {
        // Every value came from a parsed DateTime, so it is in range.
        DateTime::from_timestamp_micros(self.0).unwrap_or_default()
    }

    /// The list form: microseconds and `+00:00` (`2024-03-01T10:15:30.123456+00:00`).
    pub(crate) fn list_form(self) -> String {
        self.with_offset("+00:00")
    }

    /// The single-resource form: microseconds and `Z` (`2024-03-01T10:15:30.123456Z`).
    pub(crate) fn single_form(self) -> String {
        self.with_offset("Z")
    }

    // Written from the date's fields rather than a format string, which chrono parses
    // anew on every call: search renders one per result.
    fn with_offset(self, offset: &str) -> String {
        use chrono::{Datelike, Timelike};
        let t = self.utc();
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}{offset}",
            t.year(),
            t.month(),
            t.day(),
            t.hour(),
            t.minute(),
            t.second(),
            t.nanosecond() / 1_000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_with_microseconds() {
        let t = Timestamp::parse_rfc3339("2024-03-01T11:15:30.123456789+01:00").unwrap();
        assert_eq!(t.list_form(), "2024-03-01T10:15:30.123456+00:00");
        assert_eq!(t.single_form(), "2024-03-01T10:15:30.123456Z");
        // Dates before year 1000 and leap-year days keep their width.
        let early = Timestamp::parse_rfc3339("0999-02-28T23:59:59.000001Z").unwrap();
        assert_eq!(early.list_form(), "0999-02-28T23:59:59.000001+00:00");
        let whole = Timestamp::parse_rfc3339("2020-01-02T03:04:05Z").unwrap();
        assert_eq!(whole.list_form(), "2020-01-02T03:04:05.000000+00:00");
        assert_eq!(whole.single_form(), "2020-01-02T03:04:05.000000Z");
    }

    #[test]
    fn rejects_non_rfc3339() {
        for bad in ["", "2024-03-01", "2024-03-01 10:00:00", "yesterday", "2024-13-01T00:00:00Z"] {
            assert!(Timestamp::parse_rfc3339(bad).is_none(), "{bad}");
        }
    }
}
