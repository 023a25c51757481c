//! [`CpuSet`]: a validated set of CPU numbers, written the way the kernel writes CPU lists
//! (`0-2,4-7`) and convertible to the kernel's hex cpumask (`ff`, `ffffffff,ffffffff`).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The highest CPU count rtbuild accepts (the kernel's `NR_CPUS` default for arm64 is 512).
pub(crate) const MAX_CPUS: u32 = 4096;

/// A CPU list that is not well formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed CPU list `{input}`: {reason}; write it like `7`, `6,7` or `0-2,4-7`")]
pub(crate) struct CpuListError {
    pub input: String,
    pub reason: String,
}

/// A non-empty or empty set of CPU numbers, kept sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct CpuSet(BTreeSet<u32>);

impl CpuSet {
    /// CPUs `start..end`.
    pub(crate) fn range(start: u32, end: u32) -> CpuSet {
        CpuSet((start..end).collect())
    }

    pub(crate) fn from_cpus(cpus: impl IntoIterator<Item = u32>) -> CpuSet {
        CpuSet(cpus.into_iter().collect())
    }

    pub(crate) fn parse(input: &str) -> Result<CpuSet, CpuListError> {
        let fail = |reason: &str| CpuListError { input: input.to_string(), reason: reason.into() };
        let text = input.trim();
        if text.is_empty() {
            return Err(fail("it is empty"));
        }
        let number = |s: &str| -> Result<u32, CpuListError> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(fail(&format!("`{s}` is not a CPU number")));
            }
            match s.parse::<u32>() {
                Ok(n) if n < MAX_CPUS => Ok(n),
                _ => Err(fail(&format!("CPU {s} is above {}", MAX_CPUS - 1))),
            }
        };
        let mut set = BTreeSet::new();
        for part in text.split(',') {
            let part = part.trim();
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (number(a.trim())?, number(b.trim())?);
                    if a > b {
                        return Err(fail(&format!("range `{part}` runs backwards")));
                    }
                    set.extend(a..=b);
                }
                None => {
                    set.insert(number(part)?);
                }
            }
        }
        Ok(CpuSet(set))
    }

    pub(crate) fn contains(&self, cpu: u32) -> bool {
        self.0.contains(&cpu)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    pub(crate) fn is_subset(&self, other: &CpuSet) -> bool {
        self.0.is_subset(&other.0)
    }

    pub(crate) fn difference(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.difference(&other.0).copied().collect())
    }

    pub(crate) fn union(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.union(&other.0).copied().collect())
    }

    pub(crate) fn intersection(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.intersection(&other.0).copied().collect())
    }

    /// The kernel's hex cpumask format: 32-bit words, most significant first, separated by
    /// commas, leading zero words dropped (`7f`, `f7`, `ffffffff,ffffffff`).
    pub(crate) fn to_mask(&self) -> String {
        let Some(&max) = self.0.last() else { return "0".to_string() };
        let words = (max / 32 + 1) as usize;
        let mut bits = vec![0u32; words];
        for &cpu in &self.0 {
            bits[(cpu / 32) as usize] |= 1 << (cpu % 32);
        }
        let mut parts: Vec<String> = Vec::with_capacity(words);
        for (i, word) in bits.iter().rev().enumerate() {
            parts.push(if i == 0 { format!("{word:x}") } else { format!("{word:08x}") });
        }
        parts.join(",")
    }

    /// Parses a kernel cpumask (`7f`, `00000000,000000ff`), as read from sysfs or procfs.
    #[cfg(test)]
    pub(crate) fn from_mask(mask: &str) -> Result<CpuSet, CpuListError> {
        let fail = |reason: &str| CpuListError { input: mask.to_string(), reason: reason.into() };
        let mut set = BTreeSet::new();
        let words: Vec<&str> = mask.trim().split(',').collect();
        if words.len() > (MAX_CPUS / 32) as usize {
            return Err(fail(&format!("it has more than {MAX_CPUS} CPUs")));
        }
        for (i, word) in words.iter().rev().enumerate() {
            let value = u32::from_str_radix(word, 16).map_err(|_| fail("not a hex cpumask"))?;
            for bit in 0..32 {
                if value & (1 << bit) != 0 {
                    set.insert(i as u32 * 32 + bit);
                }
            }
        }
        Ok(CpuSet(set))
    }
}

impl fmt::Display for CpuSet {
    /// Compact ranges: `0-2,4-7`, `7`, `6-7`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        let mut iter = self.0.iter().copied().peekable();
        while let Some(start) = iter.next() {
            let mut end = start;
            while iter.peek() == Some(&(end + 1)) {
                end += 1;
                iter.next();
            }
            parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        }
        f.write_str(&parts.join(","))
    }
}

impl FromStr for CpuSet {
    type Err = CpuListError;
    fn from_str(s: &str) -> Result<CpuSet, CpuListError> {
        CpuSet::parse(s)
    }
}

impl Serialize for CpuSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CpuSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CpuSet, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Number(u32),
        }
        let text = match Raw::deserialize(deserializer)? {
            Raw::Text(s) => s,
            Raw::Number(n) => n.to_string(),
        };
        CpuSet::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_compact_ranges() {
        let cases = [
            ("7", "7"),
            ("6,7", "6-7"),
            ("6-7", "6-7"),
            ("0-2,4-7", "0-2,4-7"),
            ("4,0,1,2,7,6,5", "0-2,4-7"),
            (" 1 , 3 ", "1,3"),
            ("0-0", "0"),
        ];
        for (input, want) in cases {
            assert_eq!(CpuSet::parse(input).unwrap().to_string(), want, "input {input:?}");
        }
    }

    #[test]
    fn rejects_malformed_lists() {
        let cases = [
            ("", "it is empty"),
            ("a", "`a` is not a CPU number"),
            ("7-", "`` is not a CPU number"),
            ("7-5", "range `7-5` runs backwards"),
            ("1,,2", "`` is not a CPU number"),
            ("-1", "`` is not a CPU number"),
            ("99999", "CPU 99999 is above 4095"),
            ("1;reboot", "`1;reboot` is not a CPU number"),
        ];
        for (input, reason) in cases {
            let err = CpuSet::parse(input).unwrap_err();
            assert_eq!(err.reason, reason, "input {input:?}");
        }
    }

    #[test]
    fn masks_for_any_cpu_count() {
        let cases = [
            ("0-6", "7f"),
            ("0-2,4-7", "f7"),
            ("0-3", "f"),
            ("0-10", "7ff"),
            ("0-63", "ffffffff,ffffffff"),
            ("1-63", "ffffffff,fffffffe"),
            ("40", "100,00000000"),
        ];
        for (list, mask) in cases {
            let set = CpuSet::parse(list).unwrap();
            assert_eq!(set.to_mask(), mask, "list {list}");
            assert_eq!(CpuSet::from_mask(mask).unwrap(), set, "mask {mask}");
        }
        assert_eq!(CpuSet::from_mask("00000000,000000ff").unwrap().to_string(), "0-7");
        // Bounded like a CPU list: one word more than 4096 CPUs is refused, not expanded.
        let huge = vec!["ffffffff"; 129].join(",");
        assert!(CpuSet::from_mask(&huge).unwrap_err().to_string().contains("more than 4096"));
        assert_eq!(CpuSet::from_mask(&vec!["ffffffff"; 128].join(",")).unwrap().len(), 4096);
    }
}
