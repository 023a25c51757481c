//! How rtbuild shows a length of time. Every duration it prints (a build's time, a test's
//! length, the time left) has one format, [`duration`]: `42s`, `6.2s`, `4m 05s`,
//! `1h 02m 03s`. The live build status lines start with a [`clock`] instead (`[00:04:05]`): a
//! fixed-width reading of the time since the build started, which keeps the lines aligned as
//! it ticks; it is a clock, not a duration in a sentence.

/// `42s` and `6.2s` under a minute (tenths only when the seconds are not whole), then
/// `4m 05s` and `1h 02m 03s`.
pub(crate) fn duration(secs: f64) -> String {
    let whole = secs as u64;
    match whole {
        0..60 if secs.fract() == 0.0 => format!("{whole}s"),
        0..60 => format!("{secs:.1}s"),
        60..3600 => format!("{}m {:02}s", whole / 60, whole % 60),
        _ => format!("{}h {:02}m {:02}s", whole / 3600, whole % 3600 / 60, whole % 60),
    }
}

/// `[00:04:05]`: hours, minutes and seconds since a start, two digits each (more for hours
/// past 99).
pub(crate) fn clock(secs: u64) -> String {
    format!("[{:02}:{:02}:{:02}]", secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(42.0), "42s");
        assert_eq!(duration(6.24), "6.2s");
        assert_eq!(duration(90.0), "1m 30s");
        assert_eq!(duration(245.0), "4m 05s");
        assert_eq!(duration(3723.0), "1h 02m 03s");
        assert_eq!(duration(86_400.0), "24h 00m 00s");
    }

    #[test]
    fn the_clock_is_fixed_width() {
        assert_eq!(clock(245), "[00:04:05]");
        assert_eq!(clock(3723), "[01:02:03]");
    }
}
