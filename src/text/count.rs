//! How rtbuild writes a number of things: [`counted`] is the one way, so that no line ever
//! reads `1 problems` or `1 repos`. `counted(1, "repo")` is `1 repo` and `counted(3, "repo")`
//! is `3 repos`; the noun is given in the singular and the plural follows English spelling
//! (`repository` → `repositories`, `match` → `matches`). A verb that goes with the count is
//! chosen where the sentence is written (`if n == 1 { "is" } else { "are" }`).

use std::fmt::Display;

/// `1 file`, `0 files`, `17 files`: the count, a space and the noun in the number it needs.
pub(crate) fn counted<N: Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    if n == N::from(1) { format!("{n} {noun}") } else { format!("{n} {}", plural(noun)) }
}

/// The plural of a singular noun: `-ies` after a consonant and `y`, `-es` after a hissing
/// sound (`s`, `x`, `z`, `ch`, `sh`), else `-s` (`IRQ` → `IRQs`).
fn plural(noun: &str) -> String {
    let mut chars = noun.chars().rev();
    let (last, before) = (chars.next(), chars.next());
    let vowel = |c: Option<char>| c.is_some_and(|c| "aeiouAEIOU".contains(c));
    if last == Some('y') && before.is_some() && !vowel(before) {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"].iter().any(|end| noun.ends_with(end)) {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thing_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1usize, "problem"), "1 problem");
        assert_eq!(counted(0usize, "problem"), "0 problems");
        assert_eq!(counted(2usize, "problem"), "2 problems");
        assert_eq!(counted(1u64, "repo"), "1 repo");
        assert_eq!(counted(15u32, "file"), "15 files");
        assert_eq!(counted(-1i64, "sample"), "-1 samples");
    }

    #[test]
    fn plurals_follow_english_spelling() {
        assert_eq!(counted(2usize, "repository"), "2 repositories");
        assert_eq!(counted(2usize, "day"), "2 days");
        assert_eq!(counted(2usize, "key"), "2 keys");
        assert_eq!(counted(2usize, "match"), "2 matches");
        assert_eq!(counted(2usize, "process"), "2 processes");
        assert_eq!(counted(2usize, "box"), "2 boxes");
        assert_eq!(counted(2usize, "IRQ"), "2 IRQs");
        assert_eq!(counted(3usize, "invalid run"), "3 invalid runs");
        assert_eq!(counted(1usize, "invalid run"), "1 invalid run");
        assert_eq!(counted(2usize, "time"), "2 times");
    }
}
