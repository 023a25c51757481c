//! UTC dates from Unix seconds and back (`YYYY-MM-DD[Thh:mm[:ss]][Z]`), without a date library
//! (Howard Hinnant's civil-from-days algorithms).

/// Seconds since 1970 → `YYYY-MM-DDThh:mm:ssZ` (UTC), without a date library.
pub(crate) fn iso_from_epoch(epoch: i64) -> String {
    let days = epoch.div_euclid(86_400);
    let secs = epoch.rem_euclid(86_400);
    // Howard Hinnant's civil-from-days algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-12-01`, `2026-12-01T21:30`, `2026-12-01T21:30:00Z` → Unix seconds (UTC); `None` when
/// it is not such a date.
pub(crate) fn parse_date(text: &str) -> Option<i64> {
    let text = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = match text.split_once(['T', ' ']) {
        Some((date, time)) => (date, Some(time)),
        None => (text, None),
    };
    let number = |s: &str, len: usize| -> Option<i64> {
        (s.len() == len && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
    };
    let mut parts = date.split('-');
    let (year, month, day) =
        (number(parts.next()?, 4)?, number(parts.next()?, 2)?, number(parts.next()?, 2)?);
    if parts.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut seconds = 0;
    if let Some(time) = time {
        let mut fields = time.split(':');
        let hour = number(fields.next()?, 2)?;
        let minute = number(fields.next()?, 2)?;
        let second = fields.next().map_or(Some(0), |s| number(s, 2))?;
        if fields.next().is_some() || hour > 23 || minute > 59 || second > 60 {
            return None;
        }
        seconds = hour * 3600 + minute * 60 + second;
    }
    let days = days_from_civil(year, month, day);
    // 2026-02-31 is not a date.
    (iso_from_epoch(days * 86_400).get(..10) == Some(date)).then_some(days * 86_400 + seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_become_utc_dates_including_leap_days() {
        assert_eq!(iso_from_epoch(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_from_epoch(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(iso_from_epoch(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn dates_round_trip_and_bad_ones_are_refused() {
        // `date -u -d 2026-12-01T21:30:00Z +%s`
        assert_eq!(super::parse_date("2026-12-01T21:30:00Z"), Some(1_796_160_600));
        assert_eq!(super::parse_date("2026-12-01"), Some(1_796_083_200));
        assert_eq!(super::parse_date("1970-01-01T00:01"), Some(60));
        assert_eq!(super::iso_from_epoch(1_796_160_600), "2026-12-01T21:30:00Z");
        for bad in ["2026-02-31", "2026-13-01", "26-12-01", "yesterday", "2026-12-01T25:00", ""] {
            assert_eq!(super::parse_date(bad), None, "{bad}");
        }
    }
}
