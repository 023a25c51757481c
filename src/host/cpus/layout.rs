//! [`CpuLayout`]: which CPUs do real-time work and which do everything else, checked once.
//! Every stage that takes RT or housekeeping CPUs (a build plan, `tune`, `test`, `lava`,
//! `verify` without a machine) builds its layout here, so the rules and their wording are the
//! same everywhere.

use std::fmt;

use super::CpuSet;

/// RT and housekeeping CPUs, checked: the RT CPUs are not empty and leave CPU 0 alone, both
/// sets lie within `cpus` and are disjoint, and at least one housekeeping CPU is left.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct CpuLayout {
    /// Every CPU of the board (`0..count`).
    pub cpus: CpuSet,
    pub rt: CpuSet,
    pub housekeeping: CpuSet,
}

/// Where the CPUs a layout is checked against come from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Board {
    /// A catalog (or meta-qcom) machine: every CPU it has.
    Machine(String),
    /// A live target (`this machine`, `ssh://…`): the CPUs it has online.
    Online(String),
    /// Nothing to ask: the CPUs from 0 up to the highest one the lists name.
    Given,
}

impl Board {
    /// `rb3gen2-core-kit, which has CPUs 0-7`, `this machine, which has CPUs 0-3 online`.
    fn with(&self, all: &CpuSet) -> String {
        match self {
            Board::Machine(name) => format!("{name}, which has CPUs {all}"),
            Board::Online(place) => format!("{place}, which has CPUs {all} online"),
            Board::Given => format!("the given CPU lists, which cover CPUs {all}"),
        }
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Board::Machine(name) | Board::Online(name) => f.write_str(name),
            Board::Given => f.write_str("the given CPU lists"),
        }
    }
}

/// A CPU layout that cannot be built, tuned or measured. Always the user's input (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LayoutError {
    #[error("no RT CPU given; pass --rt-cpus LIST (e.g. --rt-cpus 7) or --machine NAME")]
    NoRtCpu,
    #[error("{} outside {}; pick RT CPUs from {all}", cpus_are("RT CPU", .cpus), .board.with(.all))]
    RtOutside { cpus: CpuSet, board: Board, all: CpuSet },
    #[error(
        "CPU 0 cannot be an RT CPU: it keeps boot, timekeeping and unmovable interrupts; pick RT CPUs from {}",
        others_text(.others)
    )]
    CpuZero { others: CpuSet },
    #[error(
        "{} outside {}; pick housekeeping CPUs from {all}",
        cpus_are("housekeeping CPU", .cpus),
        .board.with(.all)
    )]
    HousekeepingOutside { cpus: CpuSet, board: Board, all: CpuSet },
    #[error(
        "{} both RT and housekeeping; give each CPU one role (--housekeeping must not overlap --rt-cpus)",
        cpus_are("CPU", .both)
    )]
    Overlap { both: CpuSet },
    #[error(
        "no housekeeping CPU is left beside RT CPUs {rt} on {board}; keep at least one CPU for the system out of --rt-cpus"
    )]
    NoHousekeeping { rt: CpuSet, board: Board },
}

/// `RT CPU 6 is`, `RT CPUs 6-7 are`: the noun and verb agree with how many CPUs the list holds.
fn cpus_are(noun: &str, cpus: &CpuSet) -> String {
    if cpus.len() == 1 { format!("{noun} {cpus} is") } else { format!("{noun}s {cpus} are") }
}

fn others_text(others: &CpuSet) -> String {
    if others.is_empty() { "CPU 1 up".to_string() } else { others.to_string() }
}

impl crate::error::ErrorCode for LayoutError {
    fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Usage
    }
}

impl CpuLayout {
    /// Checks `rt` and `housekeeping` (default: every other CPU of `all`) against `all`, the
    /// CPUs of `board`. The checks run in one order, so one input always gets one message.
    pub(crate) fn new(
        all: &CpuSet,
        rt: &CpuSet,
        housekeeping: Option<&CpuSet>,
        board: Board,
    ) -> Result<CpuLayout, LayoutError> {
        if rt.is_empty() {
            return Err(LayoutError::NoRtCpu);
        }
        let outside = rt.difference(all);
        if !outside.is_empty() {
            return Err(LayoutError::RtOutside { cpus: outside, board, all: all.clone() });
        }
        if rt.contains(0) {
            return Err(LayoutError::CpuZero { others: all.difference(&CpuSet::from_cpus([0])) });
        }
        let housekeeping = match housekeeping {
            Some(hk) => {
                let outside = hk.difference(all);
                if !outside.is_empty() {
                    return Err(LayoutError::HousekeepingOutside {
                        cpus: outside,
                        board,
                        all: all.clone(),
                    });
                }
                let both = hk.intersection(rt);
                if !both.is_empty() {
                    return Err(LayoutError::Overlap { both });
                }
                hk.clone()
            }
            None => all.difference(rt),
        };
        if housekeeping.is_empty() {
            return Err(LayoutError::NoHousekeeping { rt: rt.clone(), board });
        }
        let count = all.iter().max().map_or(0, |m| m + 1);
        Ok(CpuLayout { cpus: CpuSet::range(0, count), rt: rt.clone(), housekeeping })
    }

    /// The layout from the lists alone, with no board to ask ([`Board::Given`]): the board is
    /// taken to have CPUs 0 up to the highest CPU named. Without `housekeeping`, every other
    /// CPU of that range is one.
    pub(crate) fn given(
        rt: &CpuSet,
        housekeeping: Option<&CpuSet>,
    ) -> Result<CpuLayout, LayoutError> {
        let top = rt.iter().chain(housekeeping.iter().flat_map(|hk| hk.iter())).max().unwrap_or(0);
        CpuLayout::new(&CpuSet::range(0, top + 1), rt, housekeeping, Board::Given)
    }

    /// The housekeeping CPU of cyclictest's main thread when `--main-cpu` is not given, as
    /// Qualcomm's guide places it on each board: the nearest housekeeping CPU below the first
    /// RT CPU (`--mainaffinity 6` with RT CPU 7 on QCS6490, IQ-9075 and IQ-615;
    /// `--mainaffinity 2` with RT CPU 3 on IQ-8275), else the last housekeeping CPU.
    pub(crate) fn main_cpu(&self) -> u32 {
        let first_rt = self.rt.iter().next().unwrap_or(0);
        self.housekeeping
            .iter()
            .filter(|&cpu| cpu < first_rt)
            .last()
            .or_else(|| self.housekeeping.iter().last())
            .unwrap_or(0)
    }

    /// The same layout on a board with `cpus` (a catalog machine seen on a target whose
    /// online set is smaller keeps the machine's CPU count).
    pub(crate) fn with_cpus(self, cpus: CpuSet) -> CpuLayout {
        CpuLayout { cpus, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `""` is the empty set (a list the parser refuses, but a board's online set can leave
    /// nothing over).
    fn set(text: &str) -> CpuSet {
        if text.is_empty() { CpuSet::default() } else { CpuSet::parse(text).unwrap() }
    }

    #[test]
    fn a_good_layout_defaults_housekeeping_to_every_other_cpu() {
        let layout = CpuLayout::new(&set("0-7"), &set("6-7"), None, Board::Given).unwrap();
        assert_eq!(layout.housekeeping, set("0-5"));
        assert_eq!(layout.cpus, set("0-7"));
        let layout = CpuLayout::given(&set("3"), None).unwrap();
        assert_eq!((layout.cpus, layout.housekeeping), (set("0-3"), set("0-2")));
    }

    /// Every condition, with the one message each gives wherever the layout comes from.
    #[test]
    fn each_bad_layout_has_one_message() {
        let machine = || Board::Machine("rb3gen2-core-kit".into());
        let online = || Board::Online("this machine".into());
        let cases: [(&str, Option<&str>, Board, &str); 7] = [
            (
                "9",
                None,
                machine(),
                "RT CPU 9 is outside rb3gen2-core-kit, which has CPUs 0-7; pick RT CPUs from 0-7",
            ),
            (
                "9",
                None,
                online(),
                "RT CPU 9 is outside this machine, which has CPUs 0-7 online; pick RT CPUs from 0-7",
            ),
            (
                "0",
                None,
                machine(),
                "CPU 0 cannot be an RT CPU: it keeps boot, timekeeping and unmovable interrupts; pick RT CPUs from 1-7",
            ),
            (
                "3",
                Some("0,8"),
                machine(),
                "housekeeping CPU 8 is outside rb3gen2-core-kit, which has CPUs 0-7; pick housekeeping CPUs from 0-7",
            ),
            (
                "2-3",
                Some("0-2"),
                online(),
                "CPU 2 is both RT and housekeeping; give each CPU one role (--housekeeping must not overlap --rt-cpus)",
            ),
            (
                "3",
                Some(""),
                online(),
                "no housekeeping CPU is left beside RT CPUs 3 on this machine; keep at least one CPU for the system out of --rt-cpus",
            ),
            (
                "",
                None,
                machine(),
                "no RT CPU given; pass --rt-cpus LIST (e.g. --rt-cpus 7) or --machine NAME",
            ),
        ];
        for (rt, hk, board, want) in cases {
            let hk = hk.map(set);
            let err = CpuLayout::new(&set("0-7"), &set(rt), hk.as_ref(), board).unwrap_err();
            assert_eq!(err.to_string(), want, "rt {rt:?} hk {hk:?}");
        }
    }

    /// The guide's cyclictest lines (Qualcomm Linux RT guide, seed 002): `-a 7 … --mainaffinity 6`
    /// on QCS6490, IQ-9075 and IQ-615, `-a 3 … --mainaffinity 2` on IQ-8275: each catalog board's
    /// default main CPU is the guide's.
    #[test]
    fn the_default_main_cpu_follows_each_boards_guide() {
        let catalog = crate::catalog::Catalog::embedded();
        for (name, rt, main) in [
            ("rb3gen2-core-kit", 7, 6),
            ("iq-9075-evk", 7, 6),
            ("iq-615-evk", 7, 6),
            ("iq-8275-evk", 3, 2),
        ] {
            let m = catalog.lookup(name).unwrap().machine;
            let all = CpuSet::range(0, m.cpus);
            let layout =
                CpuLayout::new(&all, &m.rt.rt_cpus, Some(&m.rt.housekeeping), Board::Given)
                    .unwrap();
            assert_eq!(layout.rt.to_string(), rt.to_string(), "{name}");
            assert_eq!(layout.main_cpu(), main, "{name}");
        }
        // No housekeeping CPU below the RT CPUs: the last one; the 2-CPU lab guest: CPU 0.
        let top = CpuLayout::new(&set("0-7"), &set("1"), Some(&set("2-7")), Board::Given);
        assert_eq!(top.unwrap().main_cpu(), 7);
        assert_eq!(CpuLayout::given(&set("1"), None).unwrap().main_cpu(), 0);
    }

    #[test]
    fn a_single_cpu_board_has_no_rt_cpu_to_offer() {
        let err = CpuLayout::new(&set("0"), &set("0"), None, Board::Given).unwrap_err();
        assert!(err.to_string().ends_with("pick RT CPUs from CPU 1 up"), "{err}");
    }
}
