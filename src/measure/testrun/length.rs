//! How long each scenario runs: bare seconds (`600`, as cyclictest's `-D 600`), a time (`30s`, `10m`, `2h`, `24h`, `1d`) or a preset —
//! `smoke` (5 minutes), `osadl` (100 million loops at 200 µs, about 5 h 33 min, as the OSADL QA
//! farm runs it) and `soak` (24 hours, the Qualcomm guide's run).

pub(crate) use crate::formats::run_json::Length;

/// A `--duration` value that is not a time or preset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad duration `{0}`; use seconds (600) or a time like 30s, 10m, 2h, 24h or 1d, or smoke, osadl or soak"
)]
pub(crate) struct BadDuration(pub String);

/// A parsed `--duration`, with the interval the preset implies (OSADL measures at 200 µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub length: Length,
    pub interval_us: Option<u32>,
}

impl Span {
    pub(crate) fn parse(text: &str) -> Result<Span, BadDuration> {
        let bad = || BadDuration(text.chars().take(40).collect());
        let secs = |s| Ok(Span { length: Length::Seconds(s), interval_us: None });
        match text {
            "smoke" => return secs(300),
            "soak" => return secs(86_400),
            "osadl" => {
                return Ok(Span { length: Length::Loops(100_000_000), interval_us: Some(200) });
            }
            _ => {}
        }
        // Bare seconds, as cyclictest's `-D 600`.
        let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let n: u64 = number.parse().map_err(|_| bad())?;
        let factor = match unit {
            "s" | "" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            _ => return Err(bad()),
        };
        match n.checked_mul(factor) {
            Some(s) if s > 0 && s <= 30 * 86_400 => secs(s),
            _ => Err(bad()),
        }
    }
}

impl Length {
    /// Seconds the run should take at `interval_us`.
    pub(crate) fn seconds(self, interval_us: u32) -> u64 {
        match self {
            Length::Seconds(s) => s,
            Length::Loops(l) => (l.saturating_mul(u64::from(interval_us))).div_ceil(1_000_000),
        }
    }

    /// Cycles each cyclictest thread should complete.
    pub(crate) fn cycles(self, interval_us: u32) -> u64 {
        match self {
            Length::Seconds(s) => s.saturating_mul(1_000_000) / u64::from(interval_us.max(1)),
            Length::Loops(l) => l,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_presets() {
        let cases = [
            ("3s", Length::Seconds(3)),
            ("600", Length::Seconds(600)),
            ("10m", Length::Seconds(600)),
            ("2h", Length::Seconds(7200)),
            ("24h", Length::Seconds(86_400)),
            ("1d", Length::Seconds(86_400)),
            ("smoke", Length::Seconds(300)),
            ("soak", Length::Seconds(86_400)),
            ("osadl", Length::Loops(100_000_000)),
        ];
        for (text, want) in cases {
            assert_eq!(Span::parse(text).unwrap().length, want, "{text}");
        }
        let osadl = Span::parse("osadl").unwrap();
        assert_eq!(osadl.interval_us, Some(200));
        assert_eq!(osadl.length.seconds(200), 20_000);
        assert_eq!(Length::Seconds(3).cycles(1000), 3000);
    }

    #[test]
    fn bad_durations() {
        for text in ["", "0", "s", "10x", "-5m", "0s", "99999d", "1h30m", "10 m"] {
            assert!(Span::parse(text).is_err(), "{text}");
        }
        assert_eq!(
            Span::parse("ten").unwrap_err().to_string(),
            "bad duration `ten`; use seconds (600) or a time like 30s, 10m, 2h, 24h or 1d, or smoke, osadl or soak"
        );
    }
}
