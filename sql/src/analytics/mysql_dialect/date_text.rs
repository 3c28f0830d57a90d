//! MySQL date and time text: the proleptic Gregorian calendar on microseconds since
//! 1970-01-01 00:00:00 (UTC, no time zone), parsing of date/datetime literals, and the
//! `DATE_FORMAT` / `STR_TO_DATE` format specifiers.
//!
//! Invariants: every function returns `None` for text MySQL would not read as a valid date
//! (month 0, day 0, 2026-02-30, years outside 0–9999), which the callers turn into NULL as MySQL
//! does; a specifier we do not implement is an `Err` naming it, never a wrong string.

/// Microseconds in a day.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;
const MICROS_PER_SECOND: i64 = 1_000_000;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// Day names from Monday (MySQL's WEEKDAY() 0).
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// The civil calendar conversions shared with the row codec.
pub use crate::value::{civil_from_days, days_from_civil};

fn leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// Days in month `m` of year `y`.
#[must_use]
pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Broken-down date and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub micro: u32,
}

impl Parts {
    /// The parts of `micros` since the epoch.
    #[must_use]
    pub fn of(micros: i64) -> Self {
        let days = micros.div_euclid(MICROS_PER_DAY);
        let rest = micros.rem_euclid(MICROS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        let secs = rest / MICROS_PER_SECOND;
        let part = |v: i64| u32::try_from(v).unwrap_or(0);
        Self {
            year,
            month,
            day,
            hour: part(secs / 3600),
            minute: part(secs / 60 % 60),
            second: part(secs % 60),
            micro: part(rest % MICROS_PER_SECOND),
        }
    }

    /// Microseconds since the epoch; `None` if the parts are not a valid MySQL datetime.
    #[must_use]
    pub fn micros(&self) -> Option<i64> {
        let valid = (0..=9999).contains(&self.year)
            && (1..=12).contains(&self.month)
            && self.day >= 1
            && self.day <= days_in_month(self.year, self.month)
            && self.hour < 24
            && self.minute < 60
            && self.second < 60
            && self.micro < 1_000_000;
        if !valid {
            return None;
        }
        let secs =
            i64::from(self.hour) * 3600 + i64::from(self.minute) * 60 + i64::from(self.second);
        Some(
            days_from_civil(self.year, self.month, self.day) * MICROS_PER_DAY
                + secs * MICROS_PER_SECOND
                + i64::from(self.micro),
        )
    }

    /// Day of the week, Monday = 0.
    #[must_use]
    pub fn weekday(&self) -> u32 {
        let days = days_from_civil(self.year, self.month, self.day);
        u32::try_from((days + 3).rem_euclid(7)).unwrap_or(0)
    }

    /// Day of the year, from 1.
    #[must_use]
    pub fn day_of_year(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day) - days_from_civil(self.year, 1, 1) + 1
    }
}

fn two_digit_year(y: i64) -> i64 {
    if y < 70 { y + 2000 } else { y + 1900 }
}

fn num(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn digits(s: &str, at: usize, len: usize) -> Option<u32> {
    s.get(at..at + len).and_then(num)
}

/// Reads MySQL date or datetime text (`YYYY-MM-DD`, `YY-MM-DD`, `YYYY-MM-DD HH:MM:SS[.ffffff]`,
/// `T` between date and time, `/` or `.` as date delimiter, `YYYYMMDD`, `YYYYMMDDHHMMSS`) as
/// microseconds since the epoch.
#[must_use]
pub fn parse_datetime(text: &str) -> Option<i64> {
    let s = text.trim();
    if s.bytes().all(|b| b.is_ascii_digit()) {
        let (year, rest) = match s.len() {
            6 | 12 => (two_digit_year(i64::from(digits(s, 0, 2)?)), 2),
            8 | 14 => (i64::from(digits(s, 0, 4)?), 4),
            _ => return None,
        };
        let time = s.len() > 8;
        return Parts {
            year,
            month: digits(s, rest, 2)?,
            day: digits(s, rest + 2, 2)?,
            hour: if time { digits(s, rest + 4, 2)? } else { 0 },
            minute: if time { digits(s, rest + 6, 2)? } else { 0 },
            second: if time { digits(s, rest + 8, 2)? } else { 0 },
            micro: 0,
        }
        .micros();
    }
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (s.get(..i)?, Some(s.get(i + 1..)?.trim_start())),
        None => (s, None),
    };
    let mut fields = date.split(['-', '/', '.']);
    let (y, m, d) = (fields.next()?, fields.next()?, fields.next()?);
    if fields.next().is_some() {
        return None;
    }
    let year = i64::from(num(y)?);
    let year = if y.len() <= 2 {
        two_digit_year(year)
    } else {
        year
    };
    let mut p = Parts {
        year,
        month: num(m)?,
        day: num(d)?,
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
    };
    if let Some(t) = time {
        let (hms, frac) = match t.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (t, None),
        };
        let mut f = hms.split(':');
        p.hour = num(f.next()?)?;
        p.minute = f.next().map_or(Some(0), num)?;
        p.second = f.next().map_or(Some(0), num)?;
        if f.next().is_some() {
            return None;
        }
        if let Some(frac) = frac {
            p.micro = fraction(frac)?;
        }
    }
    p.micros()
}

/// Up to six digits of a fraction of a second as microseconds (more digits are truncated).
fn fraction(frac: &str) -> Option<u32> {
    let digits = frac.get(..frac.len().min(6))?;
    let v = num(digits)?;
    Some(v * 10u32.pow(u32::try_from(6 - digits.len()).unwrap_or(0)))
}

fn hour12(h: u32) -> u32 {
    match h % 12 {
        0 => 12,
        v => v,
    }
}

fn ordinal_suffix(d: u32) -> &'static str {
    match (d % 10, d % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// `DATE_FORMAT(micros, format)` with MySQL's specifiers. The week specifiers (`%U %u %V %v
/// %X %x`) are not implemented and give an error.
pub fn date_format(micros: i64, format: &str) -> Result<String, String> {
    use std::fmt::Write;
    let p = Parts::of(micros);
    let mut out = String::with_capacity(format.len() + 8);
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else {
            out.push('%');
            break;
        };
        let month = MONTHS
            .get((p.month as usize).wrapping_sub(1))
            .copied()
            .unwrap_or("");
        let day = DAYS.get(p.weekday() as usize).copied().unwrap_or("");
        let pm = if p.hour >= 12 { "PM" } else { "AM" };
        // Writing to a String cannot fail.
        let _ = match spec {
            'Y' => write!(out, "{:04}", p.year),
            'y' => write!(out, "{:02}", p.year % 100),
            'm' => write!(out, "{:02}", p.month),
            'c' => write!(out, "{}", p.month),
            'd' => write!(out, "{:02}", p.day),
            'e' => write!(out, "{}", p.day),
            'D' => write!(out, "{}{}", p.day, ordinal_suffix(p.day)),
            'H' => write!(out, "{:02}", p.hour),
            'k' => write!(out, "{}", p.hour),
            'h' | 'I' => write!(out, "{:02}", hour12(p.hour)),
            'l' => write!(out, "{}", hour12(p.hour)),
            'i' => write!(out, "{:02}", p.minute),
            's' | 'S' => write!(out, "{:02}", p.second),
            'f' => write!(out, "{:06}", p.micro),
            'p' => write!(out, "{pm}"),
            'W' => write!(out, "{day}"),
            'a' => write!(out, "{}", day.get(..3).unwrap_or("")),
            'M' => write!(out, "{month}"),
            'b' => write!(out, "{}", month.get(..3).unwrap_or("")),
            'j' => write!(out, "{:03}", p.day_of_year()),
            'w' => write!(out, "{}", (p.weekday() + 1) % 7),
            'T' => write!(out, "{:02}:{:02}:{:02}", p.hour, p.minute, p.second),
            'r' => write!(
                out,
                "{:02}:{:02}:{:02} {pm}",
                hour12(p.hour),
                p.minute,
                p.second
            ),
            'U' | 'u' | 'V' | 'v' | 'X' | 'x' => {
                return Err(format!("DATE_FORMAT specifier %{spec}"));
            }
            // MySQL prints any other character after % as itself (`%%` is `%`).
            other => write!(out, "{other}"),
        };
    }
    Ok(out)
}

/// True if `format` has a time-of-day specifier (STR_TO_DATE then returns a DATETIME).
#[must_use]
pub fn format_has_time(format: &str) -> bool {
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c == '%'
            && matches!(
                chars.next(),
                Some('H' | 'k' | 'h' | 'I' | 'l' | 'i' | 's' | 'S' | 'f' | 'p' | 'T' | 'r')
            )
        {
            return true;
        }
    }
    false
}

/// Leading ASCII digits of `s` (at most `max`) as a number, and the rest.
fn take_num(s: &str, max: usize) -> Option<(u32, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    Some((num(s.get(..n)?)?, s.get(n..)?))
}

/// A name from `names` (full or its first three letters, case-insensitive) at the start of `s`.
fn take_name<'a>(s: &'a str, names: &[&str]) -> Option<(u32, &'a str)> {
    for (i, name) in names.iter().enumerate() {
        for n in [*name, name.get(..3).unwrap_or(name)] {
            if let Some(head) = s.get(..n.len())
                && head.eq_ignore_ascii_case(n)
            {
                return Some((u32::try_from(i).ok()?, s.get(n.len()..)?));
            }
        }
    }
    None
}

/// `format` with `%T` and `%r` spelled out as their parts.
fn expand_composites(format: &str) -> String {
    let mut out = String::with_capacity(format.len() + 16);
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('T') => out.push_str("%H:%i:%s"),
            Some('r') => out.push_str("%I:%i:%S %p"),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// `STR_TO_DATE(text, format)`: `Ok(None)` when `text` does not match `format` or is not a
/// valid date (MySQL's NULL); `Err` for a specifier we do not implement. Text after the matched
/// format is ignored, as MySQL does (with a warning).
pub fn str_to_date(text: &str, format: &str) -> Result<Option<i64>, String> {
    let mut p = Parts {
        year: 0,
        month: 0,
        day: 0,
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
    };
    let mut pm: Option<bool> = None;
    let mut s = text;
    let format = expand_composites(format);
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            if c.is_whitespace() {
                s = s.trim_start();
                continue;
            }
            match s.strip_prefix(c) {
                Some(rest) => s = rest,
                None => return Ok(None),
            }
            continue;
        }
        let Some(spec) = chars.next() else {
            return Ok(None);
        };
        let step = match spec {
            'Y' => take_num(s, 4).map(|(v, r)| {
                p.year = i64::from(v);
                r
            }),
            'y' => take_num(s, 2).map(|(v, r)| {
                p.year = two_digit_year(i64::from(v));
                r
            }),
            'm' | 'c' => take_num(s, 2).map(|(v, r)| {
                p.month = v;
                r
            }),
            'd' | 'e' => take_num(s, 2).map(|(v, r)| {
                p.day = v;
                r
            }),
            'H' | 'k' | 'h' | 'I' | 'l' => take_num(s, 2).map(|(v, r)| {
                p.hour = v;
                r
            }),
            'i' => take_num(s, 2).map(|(v, r)| {
                p.minute = v;
                r
            }),
            's' | 'S' => take_num(s, 2).map(|(v, r)| {
                p.second = v;
                r
            }),
            'f' => {
                let n = s.bytes().take(6).take_while(u8::is_ascii_digit).count();
                s.get(..n).and_then(fraction).and_then(|v| {
                    p.micro = v;
                    s.get(n..)
                })
            }
            'p' => {
                let head = s.get(..2).unwrap_or("");
                pm = if head.eq_ignore_ascii_case("PM") {
                    Some(true)
                } else if head.eq_ignore_ascii_case("AM") {
                    Some(false)
                } else {
                    return Ok(None);
                };
                s.get(2..)
            }
            'M' | 'b' => take_name(s, &MONTHS).map(|(i, r)| {
                p.month = i + 1;
                r
            }),
            'W' | 'a' => take_name(s, &DAYS).map(|(_, r)| r),
            '%' => s.strip_prefix('%'),
            other => return Err(format!("STR_TO_DATE specifier %{other}")),
        };
        match step {
            Some(rest) => s = rest,
            None => return Ok(None),
        }
    }
    match pm {
        Some(_) if p.hour == 0 || p.hour > 12 => return Ok(None),
        Some(true) => p.hour = p.hour % 12 + 12,
        Some(false) => p.hour %= 12,
        None => {}
    }
    Ok(p.micros())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> i64 {
        parse_datetime(text).unwrap()
    }

    #[test]
    fn calendar_round_trips() {
        for days in [-719_528, -1, 0, 1, 59, 10_957, 20_454, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(2026, 1, 2), 20_455);
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
    }

    #[test]
    fn parses_mysql_date_text() {
        assert_eq!(at("2026-01-02"), 20_455 * MICROS_PER_DAY);
        assert_eq!(at("2026-01-02 03:04:05"), at("20260102030405"));
        assert_eq!(at("26-1-2"), at("2026-01-02"));
        assert_eq!(at(" 2026/01/02T03:04:05.5 ") % 1_000_000, 500_000);
        for bad in [
            "",
            "2026-02-30",
            "2026-13-01",
            "2026-00-10",
            "abc",
            "2026-01-02 25:00:00",
        ] {
            assert_eq!(parse_datetime(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_mysql_specifiers() {
        let t = at("2026-03-04 15:06:07.000123");
        assert_eq!(
            date_format(t, "%Y-%m-%d %H:%i").unwrap(),
            "2026-03-04 15:06"
        );
        assert_eq!(
            date_format(t, "%y %c %e %k %h %I %l %s %S %p %f %%").unwrap(),
            "26 3 4 15 03 03 3 07 07 PM 000123 %"
        );
        assert_eq!(
            date_format(t, "%W %a %M %b %j %D %w").unwrap(),
            "Wednesday Wed March Mar 063 4th 3"
        );
        assert_eq!(date_format(t, "%T|%r").unwrap(), "15:06:07|03:06:07 PM");
        assert!(date_format(t, "%U").is_err());
    }

    #[test]
    fn str_to_date_reads_formats() {
        assert_eq!(
            str_to_date("04/03/2026", "%d/%m/%Y").unwrap(),
            Some(at("2026-03-04"))
        );
        assert_eq!(
            str_to_date("March 4 2026 3:06:07 PM", "%M %e %Y %r").unwrap(),
            Some(at("2026-03-04 15:06:07"))
        );
        assert_eq!(
            str_to_date("2026-03-04 15:06", "%Y-%m-%d %H:%i").unwrap(),
            Some(at("2026-03-04 15:06:00"))
        );
        assert_eq!(str_to_date("2026-02-30", "%Y-%m-%d").unwrap(), None);
        assert_eq!(str_to_date("x", "%Y").unwrap(), None);
        assert!(str_to_date("2026", "%U").is_err());
    }
}
