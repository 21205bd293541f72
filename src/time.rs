//! Points in time as people write them: Unix seconds or RFC 3339, and back (UTC).

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The date of a day number (the inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Unix seconds from `1767225600`, `2026-01-01T00:00:00Z`, `2026-01-01T08:00:00.5+08:00` (fractions
/// are dropped) or `2026-01-01` (midnight UTC). `None` for anything else, or a time before 1970.
pub fn parse(text: &str) -> Option<u64> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok();
    }
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(range)?;
        if part.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(part).ok()?.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = i64::from(num(0..4)?);
    let month = num(5..7)?;
    let day = num(8..10)?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let mut seconds = days_from_civil(year, month, day) * 86400;
    if b.len() > 10 {
        if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 19 || b[13] != b':' || b[16] != b':' {
            return None;
        }
        let (h, m, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if h > 23 || m > 59 || s > 60 {
            return None;
        }
        seconds += i64::from(h * 3600 + m * 60 + s.min(59));
        let mut rest = &b[19..];
        if let Some(frac) = rest.strip_prefix(b".") {
            let digits = frac.iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                return None;
            }
            rest = &frac[digits..];
        }
        match rest {
            b"Z" | b"z" => {}
            [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
                let digit = |c: &u8| c.is_ascii_digit().then(|| i64::from(c - b'0'));
                let oh = digit(h1)? * 10 + digit(h2)?;
                let om = digit(m1)? * 10 + digit(m2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                let offset = oh * 3600 + om * 60;
                seconds += if *sign == b'+' { -offset } else { offset };
            }
            _ => return None,
        }
    }
    u64::try_from(seconds).ok()
}

/// `2026-01-05T10:00:00Z` for Unix seconds.
pub fn format(seconds: u64) -> String {
    let seconds = i64::try_from(seconds).unwrap_or(i64::MAX / 2);
    let (days, rest) = (seconds.div_euclid(86400), seconds.rem_euclid(86400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_unix_seconds_and_rfc_3339() {
        assert_eq!(parse("0"), Some(0));
        assert_eq!(parse("1767225600"), Some(1767225600));
        assert_eq!(parse("2026-01-01T00:00:00Z"), Some(1767225600));
        assert_eq!(parse("2026-01-01"), Some(1767225600));
        assert_eq!(parse("2026-01-01T08:00:00+08:00"), Some(1767225600));
        assert_eq!(parse("2025-12-31T19:00:00.250-05:00"), Some(1767225600));
        assert_eq!(parse("2024-02-29 12:00:00z"), Some(1709208000));
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2025-02-29",
            "2026-01-01T00:00:00",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00+0800",
            "1969-12-31T23:59:59Z",
            "-5",
            "2026-01-01T00:00:00.Z",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_utc() {
        assert_eq!(format(0), "1970-01-01T00:00:00Z");
        assert_eq!(format(1767225600), "2026-01-01T00:00:00Z");
        assert_eq!(format(1709208000 + 3661), "2024-02-29T13:01:01Z");
        for t in [0, 86399, 951782400, 4102444800, 1767225600] {
            assert_eq!(parse(&format(t)), Some(t));
        }
    }
}
