//! `--machine` and `--machines-dir`: the board and the catalog it is looked up in, flattened by
//! every command that names a board (`machines`, which names none, flattens the catalog alone).
//!
//! A command whose `--machine` means something more specific keeps its own help line (and, for
//! `report`, its value name) with `mut_arg` on its argument struct; the flag, its id and its
//! behaviour are this struct's everywhere.

use std::path::PathBuf;

use clap::Args;

use crate::catalog::Catalog;

#[derive(Debug, Clone, Default, Args)]
pub(crate) struct MachineArgs {
    /// Board to build for (see `rtbuild machines`); aliases such as qcs6490-rb3gen2 work.
    #[arg(
        id = "machine",
        long = "machine",
        short = 'm',
        value_name = "MACHINE",
        env = "KAS_MACHINE"
    )]
    pub name: Option<String>,
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

/// `--machines-dir`: the catalog the machine names are looked up in.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct CatalogArgs {
    /// Extra machine definitions (*.yaml) that add to or replace the shipped catalog.
    #[arg(long, value_name = "DIR", env = "RTBUILD_MACHINES_DIR")]
    pub machines_dir: Option<PathBuf>,
}

impl CatalogArgs {
    /// The shipped catalog with `--machines-dir`'s definitions over it.
    pub(crate) fn catalog(&self) -> crate::cli::error::Result<Catalog> {
        Ok(Catalog::with_user_dir(self.machines_dir.as_deref())?)
    }
}

impl MachineArgs {
    /// The shipped catalog with `--machines-dir`'s definitions over it.
    pub(crate) fn catalog(&self) -> crate::cli::error::Result<Catalog> {
        self.catalog.catalog()
    }

    /// The catalog entry `--machine` names (aliases resolved), when it was given.
    pub(crate) fn lookup(&self) -> crate::cli::error::Result<Option<crate::catalog::Machine>> {
        let Some(name) = &self.name else { return Ok(None) };
        Ok(Some(self.catalog()?.lookup(name)?.machine.clone()))
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::cli::Cli;

    /// `--machine` of `command`: its short flag, value name and help line.
    fn machine_flag(command: &str) -> (Option<char>, String, String) {
        let cli = Cli::command();
        let sub = cli.find_subcommand(command).expect("a subcommand");
        let arg = sub.get_arguments().find(|a| a.get_id() == "machine").expect("--machine");
        assert_eq!(arg.get_long(), Some("machine"), "{command}");
        let value = arg.get_value_names().map(|v| v.join(" ")).unwrap_or_default();
        (arg.get_short(), value, arg.get_help().map(ToString::to_string).unwrap_or_default())
    }

    #[test]
    fn flattened_argument_groups_make_a_consistent_command_line() {
        // Duplicate ids, a `mut_arg` on a flag that is not there, conflicting shorts: clap's
        // own checks, over every subcommand.
        Cli::command().debug_assert();
    }

    #[test]
    fn one_machine_flag_keeps_each_commands_own_help() {
        let build =
            "Board to build for (see `rtbuild machines`); aliases such as qcs6490-rb3gen2 work";
        for command in ["generate", "doctor", "image", "shell", "matrix", "ci", "verify"] {
            assert_eq!(machine_flag(command), (Some('m'), "MACHINE".into(), build.into()));
        }
        let found = "Board the build is for (see `rtbuild machines`); aliases work";
        for command in ["lock", "bundle"] {
            assert_eq!(machine_flag(command), (Some('m'), "MACHINE".into(), found.into()));
        }
        let cpus = "Catalog board (see `rtbuild machines`); gives the RT and housekeeping CPUs";
        for command in ["tune", "test", "lava"] {
            assert_eq!(machine_flag(command), (Some('m'), "MACHINE".into(), cpus.into()));
        }
        let reference =
            "Machine whose published reference numbers to compare against (see `rtbuild machines`)";
        assert_eq!(machine_flag("report"), (None, "NAME".into(), reference.into()));
    }

    /// kas's own variables (and RTBUILD_KAS, the kas program) mean the same flag in every
    /// command that has it; `ci` (whose jobs take them from the matrix), report's reference
    /// machine and the board `test` and `tune` measure or tune (a build variable must not pick
    /// a target's CPUs, issue 39 item 7) are the exceptions.
    #[test]
    fn kas_environment_variables_mean_one_flag_everywhere() {
        let cli = Cli::command();
        let want = [
            ("machine", "KAS_MACHINE"),
            ("distro", "KAS_DISTRO"),
            ("targets", "KAS_TARGET"),
            ("task", "KAS_TASK"),
            ("kas", "RTBUILD_KAS"),
            ("work_dir", "KAS_WORK_DIR"),
        ];
        let mut seen = Vec::new();
        for sub in cli.get_subcommands() {
            for arg in sub.get_arguments() {
                let Some((id, env)) = want.iter().find(|(id, _)| arg.get_id() == *id) else {
                    continue;
                };
                let exempt = matches!(
                    (sub.get_name(), *id),
                    ("ci" | "report" | "test" | "tune", "machine") | ("ci", "distro")
                );
                let got = arg.get_env().and_then(|e| e.to_str());
                if exempt {
                    assert_eq!(got, None, "{} --{id}", sub.get_name());
                } else {
                    assert_eq!(got, Some(*env), "{} --{id}", sub.get_name());
                    seen.push(format!("{} {id}", sub.get_name()));
                }
            }
        }
        for must in [
            "image kas",
            "lock kas",
            "doctor kas",
            "image work_dir",
            "shell work_dir",
            "lock work_dir",
            "bundle work_dir",
            "image targets",
            "image task",
            "lava distro",
            "image distro",
            "lava machine",
            "verify machine",
            "generate machine",
        ] {
            assert!(seen.iter().any(|s| s == must), "{must}: {seen:?}");
        }
    }

    #[test]
    fn machines_dir_reads_the_same_environment_everywhere_and_is_global_for_machines() {
        let cli = Cli::command();
        let mut with = Vec::new();
        for sub in cli.get_subcommands() {
            let Some(arg) = sub.get_arguments().find(|a| a.get_id() == "machines_dir") else {
                continue;
            };
            with.push(sub.get_name());
            assert_eq!(arg.get_env(), Some(std::ffi::OsStr::new("RTBUILD_MACHINES_DIR")));
            assert_eq!(arg.is_global_set(), sub.get_name() == "machines", "{}", sub.get_name());
        }
        let mut expected = [
            "machines", "generate", "doctor", "image", "shell", "matrix", "ci", "lava", "tune",
            "test", "verify", "report", "lock", "bundle",
        ];
        expected.sort_unstable();
        with.sort_unstable();
        assert_eq!(with, expected);
    }
}
