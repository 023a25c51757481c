//! Extra options a user passes through to a measuring program (`--cyclictest-args "-i 100"`),
//! checked before anything runs: split into words without a shell ([`words`]), then parsed the
//! way the program's own `getopt_long` would against its real option table ([`Program`]), so
//! that an unknown option, a missing value, or an option that would undo what rtbuild sets
//! (threads, pinning, result files) is refused up front with what to do instead.
//!
//! Each program has one table ([`CYCLICTEST`] here); another program gets its own table and
//! the same [`Program::check`].

mod cyclictest;
mod rttests;
mod words;

pub(crate) use cyclictest::CYCLICTEST;
pub(crate) use rttests::{
    CYCLICDEADLINE, HACKBENCH, HWLATDETECT, OSLAT, PI_STRESS, PMQTEST, PTSEMATEST, RT_MIGRATE_TEST,
    SIGNALTEST, SIGWAITTEST, SSDD, SVSEMATEST,
};
pub(crate) use words::{WordsError, split};

/// Whether an option takes a value, as in `getopt_long`'s table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value {
    None,
    /// `-p 90`, `-p90`, `--priority=90`, `--priority 90`.
    Required,
    /// `-a3`, `--affinity=3`, or (as cyclictest reads it) a following number.
    Optional,
}

/// What rtbuild does with a user's option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// Passed through as given.
    Allowed,
    /// rtbuild sets this itself; the text says why and what to pass instead.
    Reserved(&'static str),
}

/// One entry of a program's option table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opt {
    pub short: Option<char>,
    pub long: Option<&'static str>,
    pub value: Value,
    pub rule: Use,
}

/// A program's option table: what it accepts, and what rtbuild keeps for itself.
#[derive(Debug)]
pub(crate) struct Program {
    pub name: &'static str,
    /// Where the table comes from, for messages (`rt-tests 2.4`).
    pub source: &'static str,
    /// The flag users pass the options with (`--cyclictest-args`).
    pub flag: &'static str,
    pub options: &'static [Opt],
}

/// Why a user's options are refused (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OptionError {
    #[error(transparent)]
    Words(#[from] WordsError),
    #[error("{flag}: {program} ({origin}) has no option `{option}`{hint}; see `{program} --help`")]
    Unknown {
        flag: &'static str,
        program: &'static str,
        origin: &'static str,
        option: String,
        hint: String,
    },
    #[error(
        "{flag}: `{option}` is ambiguous for {program} (it could be {candidates}); spell the option out"
    )]
    Ambiguous { flag: &'static str, program: &'static str, option: String, candidates: String },
    #[error("{flag}: `{option}` needs a value; add one, e.g. `{option} 100`")]
    MissingValue { flag: &'static str, option: String },
    #[error("{flag}: `{option}` takes no value; drop `={value}`")]
    UnexpectedValue { flag: &'static str, option: String, value: String },
    #[error("{}", reserved_message(flag, option, why))]
    Reserved { flag: &'static str, option: String, why: &'static str },
    #[error(
        "{flag}: `{word}` is not an option; {program} takes options only, each starting with `-`"
    )]
    Positional { flag: &'static str, program: &'static str, word: String },
}

/// `why` either says what to do instead (`pass --interval-us instead`), holds its own fix after
/// a `;`, or only explains; in the last case the fix is to remove the option.
fn reserved_message(flag: &str, option: &str, why: &str) -> String {
    let head = format!("{flag}: `{option}` conflicts with what rtbuild sets");
    if why.starts_with("pass ") {
        format!("{head}; {why}")
    } else if why.contains("; ") {
        format!("{head}: {why}")
    } else {
        format!("{head}: {why}; remove `{option}` from {flag}")
    }
}

impl Program {
    /// Splits `text` and checks every option; returns the words to append to the argv.
    pub(crate) fn check_text(&self, text: &str) -> Result<Vec<String>, OptionError> {
        let words = split(self.flag, text)?;
        self.check(&words)?;
        Ok(words)
    }

    /// Checks `words` as `getopt_long` would parse them for this program.
    pub(crate) fn check(&self, words: &[String]) -> Result<(), OptionError> {
        let mut i = 0;
        while i < words.len() {
            let word = &words[i];
            i += 1;
            if let Some(long) = word.strip_prefix("--") {
                if long.is_empty() {
                    return Err(self.unknown("--"));
                }
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (long, None),
                };
                let opt = self.find_long(name)?;
                let shown = format!("--{}", opt.long.unwrap_or(name));
                match (opt.value, inline) {
                    (Value::None, Some(v)) => {
                        return Err(OptionError::UnexpectedValue {
                            flag: self.flag,
                            option: shown,
                            value: v.to_string(),
                        });
                    }
                    (Value::Required, None) => {
                        if i >= words.len() {
                            return Err(OptionError::MissingValue {
                                flag: self.flag,
                                option: shown,
                            });
                        }
                        i += 1;
                    }
                    (Value::Optional, None) => i += usize::from(takes_next(words.get(i))),
                    _ => {}
                }
                self.allowed(opt, &shown)?;
            } else if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
                for (at, c) in cluster.char_indices() {
                    let opt = self.find_short(c)?;
                    let shown = format!("-{c}");
                    let rest = &cluster[at + c.len_utf8()..];
                    match opt.value {
                        Value::None => {
                            self.allowed(opt, &shown)?;
                            continue;
                        }
                        Value::Required => {
                            if rest.is_empty() {
                                if i >= words.len() {
                                    return Err(OptionError::MissingValue {
                                        flag: self.flag,
                                        option: shown,
                                    });
                                }
                                i += 1;
                            }
                        }
                        Value::Optional => {
                            if rest.is_empty() {
                                i += usize::from(takes_next(words.get(i)));
                            }
                        }
                    }
                    self.allowed(opt, &shown)?;
                    break;
                }
            } else {
                return Err(OptionError::Positional {
                    flag: self.flag,
                    program: self.name,
                    word: word.chars().take(40).collect(),
                });
            }
        }
        Ok(())
    }

    /// The long names of the options in `words` (already [`check`](Self::check)ed), so that a
    /// caller can drop its own default for an option the user set (`-D 10m` replaces `-D 60`).
    pub(crate) fn given(&self, words: &[String]) -> Vec<&'static str> {
        let mut given = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let word = &words[i];
            i += 1;
            let found: Option<(&Opt, bool)> = if let Some(long) = word.strip_prefix("--") {
                let (name, inline) = long.split_once('=').map_or((long, false), |(n, _)| (n, true));
                self.find_long(name).ok().map(|o| (o, !inline))
            } else if let Some(cluster) = word.strip_prefix('-') {
                let mut hit = None;
                for (at, c) in cluster.char_indices() {
                    let Ok(opt) = self.find_short(c) else { break };
                    let last = at + c.len_utf8() == cluster.len();
                    if let Some(long) = opt.long {
                        given.push(long);
                    }
                    if opt.value != Value::None {
                        hit = Some((opt, last));
                        break;
                    }
                }
                hit.map(|(o, last)| {
                    given.pop();
                    (o, last)
                })
            } else {
                None
            };
            if let Some((opt, value_may_follow)) = found {
                given.extend(opt.long);
                if value_may_follow {
                    match opt.value {
                        Value::Required => i += 1,
                        Value::Optional => i += usize::from(takes_next(words.get(i))),
                        Value::None => {}
                    }
                }
            }
        }
        given
    }

    fn allowed(&self, opt: &Opt, shown: &str) -> Result<(), OptionError> {
        match opt.rule {
            Use::Allowed => Ok(()),
            Use::Reserved(why) => {
                Err(OptionError::Reserved { flag: self.flag, option: shown.to_string(), why })
            }
        }
    }

    fn find_short(&self, c: char) -> Result<&Opt, OptionError> {
        self.options
            .iter()
            .find(|o| o.short == Some(c))
            .ok_or_else(|| self.unknown(&format!("-{c}")))
    }

    /// An exact long name, or (as `getopt_long` allows) a unique prefix of one.
    fn find_long(&self, name: &str) -> Result<&Opt, OptionError> {
        if let Some(opt) = self.options.iter().find(|o| o.long == Some(name)) {
            return Ok(opt);
        }
        let matches: Vec<&Opt> = self
            .options
            .iter()
            .filter(|o| !name.is_empty() && o.long.is_some_and(|l| l.starts_with(name)))
            .collect();
        match matches[..] {
            [one] => Ok(one),
            [] => Err(self.unknown(&format!("--{name}"))),
            _ => Err(OptionError::Ambiguous {
                flag: self.flag,
                program: self.name,
                option: format!("--{name}"),
                candidates: matches
                    .iter()
                    .filter_map(|o| o.long.map(|l| format!("--{l}")))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    fn unknown(&self, option: &str) -> OptionError {
        let option: String = option.chars().take(40).collect();
        let closest = self
            .options
            .iter()
            .filter_map(|o| o.long)
            .map(|l| (strsim::jaro_winkler(option.trim_start_matches('-'), l), l))
            .filter(|(score, _)| *score > 0.85)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        OptionError::Unknown {
            flag: self.flag,
            program: self.name,
            origin: self.source,
            hint: closest.map_or_else(String::new, |(_, l)| format!(" (did you mean `--{l}`?)")),
            option,
        }
    }
}

/// cyclictest reads an optional value from the next word when it is a number.
fn takes_next(next: Option<&String>) -> bool {
    next.is_some_and(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests;
