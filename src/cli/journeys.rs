//! `rtbuild examples`: the common journeys, each as commands a user can copy. A test parses
//! every printed command with rtbuild's own parser, so no example can drift from the CLI.

use clap::Args;
use serde::Serialize;

use crate::error::Exit;
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct ExamplesArgs {}

/// One journey: what it is for and its commands, in the order they run.
#[derive(Debug, Serialize)]
pub(crate) struct Journey {
    pub title: &'static str,
    pub commands: &'static [&'static str],
}

pub(crate) const JOURNEYS: &[Journey] = &[
    Journey {
        title: "Build the main image (RB3 Gen 2; kas in a venv, then generate, build, verify)",
        commands: &["rtbuild setup", "rtbuild image --machine qcs6490-rb3gen2"],
    },
    Journey {
        title: "Check a kernel is really PREEMPT_RT (a build folder, or a live board)",
        commands: &[
            "rtbuild verify --machine rb3gen2-core-kit rtbuild/rb3gen2-core-kit/build",
            "rtbuild verify --machine rb3gen2-core-kit --target ssh://root@board",
        ],
    },
    Journey {
        title: "Measure a seed board over ssh (RK3588, measuring only), tuned for the run",
        commands: &[
            "rtbuild test --machine rk3588-evb --target ssh://root@rk3588 --tune --scenario idle,stress --duration 1h --out results",
        ],
    },
    Journey {
        title: "Measure a board the catalog does not know: its name and its RT CPUs",
        commands: &[
            "rtbuild tune --board my-board --rt-cpus 3 --target ssh://root@board --apply",
            "rtbuild test --board my-board --rt-cpus 3 --target ssh://root@board --duration 1h --out results",
            "rtbuild verify --board my-board --rt-cpus 3 --target ssh://root@board",
        ],
    },
    Journey {
        title: "Read the results: verdict, statistics, an HTML page and JUnit for CI",
        commands: &["rtbuild report results --html report.html --junit junit.xml"],
    },
    Journey {
        title: "A release bundle: build, pin what was built, pack the lock with it, check it",
        commands: &[
            "rtbuild image --machine rb3gen2-core-kit",
            "rtbuild lock --machine rb3gen2-core-kit",
            "rtbuild bundle --machine rb3gen2-core-kit",
            "rtbuild bundle --check rtbuild/rb3gen2-core-kit/bundle/*.tar.zst",
        ],
    },
];

/// The text `rtbuild examples` prints: each journey's title as a `#` comment, then its
/// commands, one a line.
pub(crate) fn text() -> String {
    JOURNEYS
        .iter()
        .map(|j| {
            let commands: String = j.commands.iter().map(|c| format!("{c}\n")).collect();
            format!("# {}\n{commands}", j.title)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn run(_args: ExamplesArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    if ui.json() {
        ui.out_json(&JOURNEYS)?;
    } else {
        ui.out(text().trim_end());
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::Cli;

    /// Every line `rtbuild examples` prints is a comment, a blank line or a command that
    /// rtbuild's own parser accepts (the files it names are made up: values are not read).
    #[test]
    fn every_printed_command_parses() {
        let text = super::text();
        let mut commands = 0;
        for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            assert!(line.starts_with("rtbuild "), "{line}");
            let words = crate::measure::toolargs::split("example", line).expect("words");
            if let Err(e) = Cli::try_parse_from(&words) {
                panic!("`{line}` does not parse:\n{e}");
            }
            commands += 1;
        }
        let expected: usize = super::JOURNEYS.iter().map(|j| j.commands.len()).sum();
        assert_eq!(commands, expected);
        for journey in ["main image", "PREEMPT_RT", "seed board", "results", "release bundle"] {
            assert!(text.contains(journey), "no journey names `{journey}`:\n{text}");
        }
    }
}
