//! RFC 3339 timestamps as records carry them (`createdAt`, `updatedAt`).
//!
//! The accepted form is `YYYY-MM-DD`, a separator (`T`, `t` or a space), `HH:MM:SS`, an optional
//! fraction of any number of digits, and an offset (`Z`, `z` or `±hh:mm`), per SPEC §1 and §11:
//!
//! - a leap second `:60` counts as the next second (`23:59:60Z` is the next day's `00:00:00Z`);
//! - fraction digits beyond the ninth are truncated;
//! - `-00:00` ("offset unknown") is UTC;
//! - month, day (with leap years), hour (< 24), minute (< 60), second (≤ 60) and the offset
//!   (hours < 24, minutes < 60) are checked.
//!
//! A [`Timestamp`] keeps the text exactly as given, so that an export writes it back unchanged,
//! together with the instant it names.

use std::cmp::Ordering;
use std::fmt;

/// One RFC 3339 timestamp: the text as given and the instant it names.
///
/// Equality and ordering compare the instant first and then the text, so two spellings of one
/// instant (`2024-01-01T00:00:00Z` and `2024-01-01T01:00:00+01:00`) are ordered next to each
/// other but are not equal. Use [`Timestamp::unix_seconds`] and [`Timestamp::subsec_nanos`] to
/// compare instants alone.
///
/// # Example
///
/// ```
/// use reliora::record::Timestamp;
///
/// let t = Timestamp::parse("2024-05-01 14:30:00.5+02:00").unwrap();
/// assert_eq!(t.as_str(), "2024-05-01 14:30:00.5+02:00");
/// assert_eq!(t.unix_seconds(), 1_714_566_600);
/// assert_eq!(t.subsec_nanos(), 500_000_000);
/// ```
#[derive(Debug, Clone)]
pub struct Timestamp {
    text: String,
    seconds: i64,
    nanos: u32,
}

const NANOS_PER_SECOND: u32 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;

impl Timestamp {
    /// Parse an RFC 3339 timestamp with an offset (see the module docs for the exact form).
    ///
    /// The error describes what is wrong with the text, e.g. `month 13 is out of range`.
    ///
    /// # Example
    ///
    /// ```
    /// use reliora::record::Timestamp;
    ///
    /// let leap = Timestamp::parse("2016-12-31T23:59:60Z").unwrap();
    /// let next = Timestamp::parse("2017-01-01T00:00:00Z").unwrap();
    /// assert_eq!(leap.unix_seconds(), next.unix_seconds());
    /// assert!(Timestamp::parse("2023-02-29T00:00:00Z").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Timestamp, String> {
        let (seconds, nanos) = parse_instant(text.as_bytes())?;
        Ok(Timestamp {
            text: text.to_owned(),
            seconds,
            nanos,
        })
    }

    /// The text exactly as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whole seconds since 1970-01-01T00:00:00Z (negative before).
    pub fn unix_seconds(&self) -> i64 {
        self.seconds
    }

    /// Nanoseconds past [`Timestamp::unix_seconds`], in `0..1_000_000_000`. Fraction digits
    /// beyond the ninth are truncated.
    pub fn subsec_nanos(&self) -> u32 {
        self.nanos
    }

    /// Seconds since the Unix epoch as a float, fraction included.
    pub fn unix_seconds_f64(&self) -> f64 {
        self.seconds as f64 + f64::from(self.nanos) / f64::from(NANOS_PER_SECOND)
    }

    /// The timestamp of an instant, written in UTC as `YYYY-MM-DDTHH:MM:SS[.fffffffff]Z`; the
    /// fraction appears only when `nanos` is not zero, with trailing zeros trimmed. `nanos` of a
    /// second or more are carried into `seconds`.
    ///
    /// The text parses back to the same instant for years 0000 to 9999.
    ///
    /// # Example
    ///
    /// ```
    /// use reliora::record::Timestamp;
    ///
    /// assert_eq!(Timestamp::from_unix(0, 0).as_str(), "1970-01-01T00:00:00Z");
    /// assert_eq!(Timestamp::from_unix(1, 250_000_000).as_str(), "1970-01-01T00:00:01.25Z");
    /// ```
    pub fn from_unix(seconds: i64, nanos: u32) -> Timestamp {
        let seconds = seconds.saturating_add(i64::from(nanos / NANOS_PER_SECOND));
        let nanos = nanos % NANOS_PER_SECOND;
        let days = seconds.div_euclid(SECONDS_PER_DAY);
        let second_of_day = seconds.rem_euclid(SECONDS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        let mut text = format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            second_of_day / 3600,
            second_of_day / 60 % 60,
            second_of_day % 60
        );
        if nanos != 0 {
            let fraction = format!("{nanos:09}");
            text.push('.');
            text.push_str(fraction.trim_end_matches('0'));
        }
        text.push('Z');
        Timestamp {
            text,
            seconds,
            nanos,
        }
    }

    /// The system clock's reading, as [`Timestamp::from_unix`] writes it.
    pub fn now() -> Timestamp {
        match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => Timestamp::from_unix(
                i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
                after.subsec_nanos(),
            ),
            Err(before) => {
                let before = before.duration();
                let seconds = -i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
                match before.subsec_nanos() {
                    0 => Timestamp::from_unix(seconds, 0),
                    nanos => Timestamp::from_unix(seconds - 1, NANOS_PER_SECOND - nanos),
                }
            }
        }
    }

    fn instant(&self) -> (i64, u32) {
        (self.seconds, self.nanos)
    }
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        self.instant() == other.instant() && self.text == other.text
    }
}

impl Eq for Timestamp {}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> Ordering {
        self.instant()
            .cmp(&other.instant())
            .then_with(|| self.text.cmp(&other.text))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A cursor over the bytes of a timestamp, with errors that say what was expected where.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, count: usize, what: &str) -> Result<u32, String> {
        let end = self.at + count;
        match self.bytes.get(self.at..end) {
            Some(slice) if slice.iter().all(u8::is_ascii_digit) => {
                self.at = end;
                Ok(slice.iter().fold(0, |n, &b| n * 10 + u32::from(b - b'0')))
            }
            _ => Err(format!(
                "expected {count} digits of the {what} at position {}",
                self.at + 1
            )),
        }
    }

    fn expect(&mut self, allowed: &[u8], what: &str) -> Result<u8, String> {
        match self.bytes.get(self.at) {
            Some(&b) if allowed.contains(&b) => {
                self.at += 1;
                Ok(b)
            }
            _ => Err(format!("expected {what} at position {}", self.at + 1)),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }
}

fn parse_instant(bytes: &[u8]) -> Result<(i64, u32), String> {
    let mut c = Cursor { bytes, at: 0 };
    let year = c.digits(4, "year")?;
    c.expect(b"-", "'-' after the year")?;
    let month = c.digits(2, "month")?;
    c.expect(b"-", "'-' after the month")?;
    let day = c.digits(2, "day")?;
    c.expect(b"Tt ", "'T', 't' or ' ' between date and time")?;
    let hour = c.digits(2, "hour")?;
    c.expect(b":", "':' after the hour")?;
    let minute = c.digits(2, "minute")?;
    c.expect(b":", "':' after the minute")?;
    let second = c.digits(2, "second")?;
    let mut nanos = 0u32;
    if c.peek() == Some(b'.') {
        c.at += 1;
        let start = c.at;
        while c.peek().is_some_and(|b| b.is_ascii_digit()) {
            if c.at - start < 9 {
                nanos = nanos * 10 + u32::from(bytes[c.at] - b'0');
            }
            c.at += 1;
        }
        let count = c.at - start;
        if count == 0 {
            return Err(format!(
                "expected fraction digits at position {}",
                start + 1
            ));
        }
        for _ in count..9 {
            nanos *= 10;
        }
    }
    let offset_seconds = match c.expect(b"Zz+-", "an offset ('Z' or ±hh:mm)")? {
        b'Z' | b'z' => 0,
        sign => {
            let offset_hour = c.digits(2, "offset hours")?;
            c.expect(b":", "':' in the offset")?;
            let offset_minute = c.digits(2, "offset minutes")?;
            if offset_hour > 23 {
                return Err(format!("offset hour {offset_hour} is out of range"));
            }
            if offset_minute > 59 {
                return Err(format!("offset minute {offset_minute} is out of range"));
            }
            let magnitude = i64::from(offset_hour * 3600 + offset_minute * 60);
            if sign == b'-' {
                -magnitude
            } else {
                magnitude
            }
        }
    };
    if c.at != bytes.len() {
        return Err(format!(
            "unexpected text after the offset at position {}",
            c.at + 1
        ));
    }
    if !(1..=12).contains(&month) {
        return Err(format!("month {month} is out of range"));
    }
    let month_days = days_in_month(year, month);
    if !(1..=month_days).contains(&day) {
        return Err(format!(
            "day {day} is out of range for {year:04}-{month:02}, which has {month_days} days"
        ));
    }
    if hour > 23 {
        return Err(format!("hour {hour} is out of range"));
    }
    if minute > 59 {
        return Err(format!("minute {minute} is out of range"));
    }
    if second > 60 {
        return Err(format!("second {second} is out of range"));
    }
    let days = days_from_civil(i64::from(year), month, day);
    // A leap second (:60) simply runs into the next minute: it counts as the next second.
    let local = days * SECONDS_PER_DAY + i64::from(hour * 3600 + minute * 60 + second);
    Ok((local - offset_seconds, nanos))
}

fn is_leap_year(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (inverse of
/// [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_valid_forms() {
        // (text, unix seconds, nanos)
        let cases: &[(&str, i64, u32)] = &[
            ("1970-01-01T00:00:00Z", 0, 0),
            ("1970-01-01t00:00:00z", 0, 0),
            ("1970-01-01 00:00:00Z", 0, 0),
            ("2024-05-01T12:00:00Z", 1_714_564_800, 0),
            ("2024-05-01T14:00:00+02:00", 1_714_564_800, 0),
            ("2024-05-01T07:30:00-04:30", 1_714_564_800, 0),
            ("2024-05-01T12:00:00-00:00", 1_714_564_800, 0),
            ("2024-05-01T12:00:00+00:00", 1_714_564_800, 0),
            ("2024-02-29T00:00:00Z", 1_709_164_800, 0),
            ("2000-02-29T00:00:00Z", 951_782_400, 0),
            ("1969-12-31T23:59:59Z", -1, 0),
            ("1969-12-31T23:59:59.5Z", -1, 500_000_000),
            ("0000-01-01T00:00:00Z", -62_167_219_200, 0),
            ("9999-12-31T23:59:59Z", 253_402_300_799, 0),
            ("2024-05-01T12:00:00.1Z", 1_714_564_800, 100_000_000),
            ("2024-05-01T12:00:00.123456789Z", 1_714_564_800, 123_456_789),
            (
                "2024-05-01T12:00:00.1234567891234Z",
                1_714_564_800,
                123_456_789,
            ),
            ("2024-05-01T12:00:00.000000000001Z", 1_714_564_800, 0),
            // Leap seconds count as the next second.
            ("2016-12-31T23:59:60Z", 1_483_228_800, 0),
            ("2016-12-31T15:59:60-08:00", 1_483_228_800, 0),
            ("2016-12-31T23:59:60.25Z", 1_483_228_800, 250_000_000),
            ("2024-05-01T12:00:00+23:59", 1_714_564_800 - 86_340, 0),
        ];
        for &(text, seconds, nanos) in cases {
            let t = Timestamp::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(t.as_str(), text);
            assert_eq!(
                (t.unix_seconds(), t.subsec_nanos()),
                (seconds, nanos),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_invalid_forms() {
        // (text, a word the error must contain)
        let cases: &[(&str, &str)] = &[
            ("", "year"),
            ("2024-05-01", "between date and time"),
            ("2024-05-01T12:00:00", "offset"),
            ("2024-05-01T12:00Z", "':' after the minute"),
            ("2024-05-01X12:00:00Z", "between date and time"),
            ("2024-5-01T12:00:00Z", "month"),
            ("24-05-01T12:00:00Z", "year"),
            ("2024-13-01T12:00:00Z", "month 13"),
            ("2024-00-01T12:00:00Z", "month 0"),
            ("2024-05-00T12:00:00Z", "day 0"),
            ("2024-04-31T12:00:00Z", "day 31"),
            ("2023-02-29T12:00:00Z", "day 29"),
            ("1900-02-29T12:00:00Z", "day 29"),
            ("2024-05-01T24:00:00Z", "hour 24"),
            ("2024-05-01T12:60:00Z", "minute 60"),
            ("2024-05-01T12:00:61Z", "second 61"),
            ("2024-05-01T12:00:00.Z", "fraction"),
            ("2024-05-01T12:00:00+24:00", "offset hour 24"),
            ("2024-05-01T12:00:00+01:60", "offset minute 60"),
            ("2024-05-01T12:00:00+0100", "':' in the offset"),
            ("2024-05-01T12:00:00+01", "':' in the offset"),
            ("2024-05-01T12:00:00ZZ", "after the offset"),
            ("2024-05-01T12:00:00Z ", "after the offset"),
            (" 2024-05-01T12:00:00Z", "year"),
            ("２０２４-05-01T12:00:00Z", "year"),
        ];
        for &(text, needle) in cases {
            let err = Timestamp::parse(text).expect_err(text);
            assert!(err.contains(needle), "{text}: {err:?} lacks {needle:?}");
        }
    }

    #[test]
    fn from_unix_formats_utc() {
        let cases: &[(i64, u32, &str)] = &[
            (0, 0, "1970-01-01T00:00:00Z"),
            (1_714_564_800, 0, "2024-05-01T12:00:00Z"),
            (1_714_564_800, 500_000_000, "2024-05-01T12:00:00.5Z"),
            (1_714_564_800, 123_456_789, "2024-05-01T12:00:00.123456789Z"),
            (1_714_564_800, 1_000, "2024-05-01T12:00:00.000001Z"),
            (-1, 0, "1969-12-31T23:59:59Z"),
            (951_782_400, 0, "2000-02-29T00:00:00Z"),
            (0, 1_500_000_000, "1970-01-01T00:00:01.5Z"),
        ];
        for &(seconds, nanos, text) in cases {
            assert_eq!(Timestamp::from_unix(seconds, nanos).as_str(), text);
        }
    }

    #[test]
    fn ordering_is_by_instant_then_text() {
        let utc = Timestamp::parse("2024-01-01T00:00:00Z").unwrap();
        let plus = Timestamp::parse("2024-01-01T01:00:00+01:00").unwrap();
        let later = Timestamp::parse("2024-01-01T00:00:01Z").unwrap();
        assert_ne!(utc, plus);
        assert_eq!(utc.unix_seconds(), plus.unix_seconds());
        assert!(plus < later && utc < later);
        assert_eq!(
            utc.cmp(&plus),
            "2024-01-01T00:00:00Z".cmp("2024-01-01T01:00:00+01:00")
        );
    }

    #[test]
    fn now_parses_back() {
        let now = Timestamp::now();
        let again = Timestamp::parse(now.as_str()).unwrap();
        assert_eq!(now, again);
        assert!(now.unix_seconds() > 1_700_000_000);
    }

    #[test]
    fn unix_seconds_f64_adds_the_fraction() {
        let t = Timestamp::from_unix(10, 250_000_000);
        assert_eq!(t.unix_seconds_f64(), 10.25);
    }

    proptest! {
        #[test]
        fn from_unix_round_trips(seconds in -62_167_219_200i64..253_402_300_800, nanos in 0u32..1_000_000_000) {
            let t = Timestamp::from_unix(seconds, nanos);
            let parsed = Timestamp::parse(t.as_str()).unwrap();
            prop_assert_eq!((parsed.unix_seconds(), parsed.subsec_nanos()), (seconds, nanos));
            prop_assert_eq!(parsed, t);
        }

        #[test]
        fn civil_days_round_trip(days in -1_000_000i64..1_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
