//! The kas command lines rtbuild runs, as argv vectors (never a shell string).
//!
//! `kas build [--target T]… [--task X] <kas file>:<caches.yml> [-- <bitbake args>]` with
//! `KAS_WORK_DIR`, `KAS_BUILD_DIR`, `DL_DIR` and `SSTATE_DIR` set, and `kas shell` on the same
//! configuration. kas runs BitBake through `subprocess` without a shell, so each argument
//! reaches BitBake as one argv element; the checks here keep them to what BitBake expects.

use std::path::Path;

use super::engine::Engine;
use super::error::KasError;
use super::paths::{BuildPaths, CacheDirs};
use super::version::PINNED_KAS;
use crate::host::runner::Cmd;
use crate::text::printable;

/// kas variables rtbuild decides itself; the user's values would silently change the build.
const KAS_OVERRIDES: [&str; 4] = ["KAS_MACHINE", "KAS_DISTRO", "KAS_TARGET", "KAS_TASK"];

/// What to ask BitBake for, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BuildSpec {
    pub targets: Vec<String>,
    pub task: Option<String>,
    pub bitbake_args: Vec<String>,
    /// `--provenance`: kas writes an in-toto SLSA v1 statement over the kas file's
    /// `artifacts:` (`kas build --provenance mode=max`).
    pub provenance: bool,
}

impl BuildSpec {
    /// A `--target`, `--task` or `--bitbake-args` build: not the whole image.
    pub(crate) fn is_partial(&self) -> bool {
        !self.targets.is_empty() || self.task.is_some() || !self.bitbake_args.is_empty()
    }

    /// What a partial build (`--target`, `--task`, `--bitbake-args`) of `image` builds, as the
    /// build's summary names it (`linux-qcom-rt, task listtasks`); `None` for the whole image.
    pub(crate) fn partial(&self, image: &str) -> Option<String> {
        if !self.is_partial() {
            return None;
        }
        let mut what =
            if self.targets.is_empty() { image.to_string() } else { self.targets.join(" ") };
        if let Some(task) = &self.task {
            what.push_str(&format!(", task {task}"));
        }
        if !self.bitbake_args.is_empty() {
            what.push_str(&format!(", bitbake {}", self.bitbake_args.join(" ")));
        }
        Some(what)
    }

    /// `bitbake_args` is split on whitespace (no quoting: it is not a shell).
    pub(crate) fn new(
        targets: &[String],
        task: Option<&str>,
        bitbake_args: Option<&str>,
    ) -> Result<BuildSpec, KasError> {
        for target in targets {
            let ok = !target.is_empty()
                && !target.starts_with('-')
                && target.chars().all(|c| c.is_ascii_alphanumeric() || "-_.+:".contains(c));
            if !ok {
                return Err(KasError::BadToken {
                    flag: "--target",
                    value: printable(target),
                    expected: "a recipe name such as qcom-multimedia-image (letters, digits, -_.+:)",
                });
            }
        }
        if let Some(task) = task {
            let bare = task.strip_prefix("do_").unwrap_or(task);
            let ok =
                !bare.is_empty() && bare.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(KasError::BadToken {
                    flag: "--task",
                    value: printable(task),
                    expected: "a task name such as compile or do_populate_sdk",
                });
            }
        }
        let args: Vec<String> =
            bitbake_args.unwrap_or("").split_whitespace().map(str::to_string).collect();
        for arg in &args {
            let ok = arg.chars().all(|c| !c.is_control() && !"'\"`$\\;&|<>".contains(c));
            if !ok {
                return Err(KasError::BadToken {
                    flag: "--bitbake-args",
                    value: printable(arg),
                    expected: "BitBake options separated by spaces, without quotes or shell \
                               characters (they are not passed through a shell)",
                });
            }
        }
        Ok(BuildSpec {
            targets: targets.to_vec(),
            task: task.map(str::to_string),
            bitbake_args: args,
            provenance: false,
        })
    }
}

/// Paths kas splits on `:` cannot hold one.
pub(crate) fn check_paths(layout: &BuildPaths) -> Result<(), KasError> {
    for path in [&layout.kas_file, &layout.caches_file] {
        if path.to_string_lossy().contains(':') {
            return Err(KasError::BadToken {
                flag: "--out",
                value: printable(&path.to_string_lossy()),
                expected: "kas splits its config argument on `:`; use a folder without `:`",
            });
        }
    }
    Ok(())
}

/// The environment kas runs in.
fn kas_env(cmd: Cmd, layout: &BuildPaths, dirs: &CacheDirs) -> Cmd {
    let mut cmd = cmd
        .cwd(&layout.work)
        .env("KAS_WORK_DIR", &layout.work)
        .env("KAS_BUILD_DIR", &layout.build_dir)
        .env("DL_DIR", &dirs.dl_dir)
        .env("SSTATE_DIR", &dirs.sstate_dir);
    for key in KAS_OVERRIDES {
        cmd = cmd.env_remove(key);
    }
    cmd
}

/// `kas build …`.
pub(crate) fn kas_build(
    kas: &Path,
    layout: &BuildPaths,
    dirs: &CacheDirs,
    spec: &BuildSpec,
) -> Cmd {
    // Options first: kas's parser takes the config and the BitBake arguments as two adjacent
    // positionals, so nothing may stand between them.
    let mut cmd = Cmd::new(kas).arg("build");
    for target in &spec.targets {
        cmd = cmd.arg("--target").arg(target);
    }
    if let Some(task) = &spec.task {
        cmd = cmd.arg("--task").arg(task);
    }
    if spec.provenance {
        cmd = cmd.arg("--provenance").arg("mode=max");
    }
    cmd = cmd.arg(layout.kas_config());
    if !spec.bitbake_args.is_empty() {
        cmd = cmd.arg("--").args(&spec.bitbake_args);
    }
    kas_env(cmd, layout, dirs)
}

/// `kas dump --resolve-refs --resolve-local --resolve-env …`: the exact configuration of the
/// build (every repo at its commit, the environment kas passed), kept in the release bundle.
pub(crate) fn kas_dump_resolved(kas: &Path, layout: &BuildPaths, dirs: &CacheDirs) -> Cmd {
    let cmd = Cmd::new(kas)
        .arg("dump")
        .args(["--resolve-refs", "--resolve-local", "--resolve-env"])
        .arg(layout.kas_config());
    kas_env(cmd, layout, dirs)
}

/// `kas checkout …`: clones or moves the repos to what the kas file (and its lock) says, and
/// runs no BitBake.
pub(crate) fn kas_checkout(kas: &Path, layout: &BuildPaths, dirs: &CacheDirs) -> Cmd {
    kas_env(Cmd::new(kas).arg("checkout").arg(layout.kas_config()), layout, dirs)
}

/// The same command through kas-container: `program` is kas-container, which takes kas's
/// arguments and mounts `KAS_WORK_DIR`, `KAS_BUILD_DIR`, `DL_DIR` and `SSTATE_DIR` into the kas
/// image; the engine and the image version (the pinned kas's) are chosen here, not guessed.
pub(crate) fn in_container(cmd: Cmd, engine: Option<Engine>) -> Cmd {
    match engine {
        Some(engine) => {
            cmd.env("KAS_CONTAINER_ENGINE", engine.name()).env("KAS_IMAGE_VERSION", PINNED_KAS)
        }
        None => cmd,
    }
}

/// `kas shell … [-c COMMAND]`. `command` is the user's own shell command, run by the shell kas
/// starts on the user's machine: it is passed on as one argument, unchanged.
pub(crate) fn kas_shell(
    kas: &Path,
    layout: &BuildPaths,
    dirs: &CacheDirs,
    command: Option<&str>,
) -> Cmd {
    let mut cmd = Cmd::new(kas).arg("shell").arg(layout.kas_config());
    if let Some(command) = command {
        cmd = cmd.arg("-c").arg(command);
    }
    kas_env(cmd, layout, dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_build_names_what_it_builds() {
        let spec = |targets: &[&str], task, args| {
            let targets: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
            BuildSpec::new(&targets, task, args).unwrap().partial("core-image-base")
        };
        assert_eq!(spec(&[], None, None), None);
        assert_eq!(
            spec(&[], Some("listtasks"), None).as_deref(),
            Some("core-image-base, task listtasks")
        );
        assert_eq!(
            spec(&["linux-qcom-rt", "u-boot"], None, Some("-k")).as_deref(),
            Some("linux-qcom-rt u-boot, bitbake -k")
        );
    }

    fn layout() -> BuildPaths {
        BuildPaths::new(Path::new("/w/rtbuild/m"), Path::new("/w/rtbuild/m/m-rt.yml"))
    }

    fn dirs() -> CacheDirs {
        CacheDirs {
            dl_dir: "/w/rtbuild/downloads".into(),
            sstate_dir: "/w/rtbuild/sstate-cache".into(),
        }
    }

    #[test]
    fn build_command_passes_each_value_as_one_argument() {
        let spec = BuildSpec::new(
            &["linux-qcom-rt".into(), "mc:x:core-image-base".into()],
            Some("do_compile"),
            Some(" -k  -DD --runall=fetch "),
        )
        .unwrap();
        let cmd = kas_build(Path::new("/v/bin/kas"), &layout(), &dirs(), &spec);
        assert_eq!(
            cmd.argv(),
            [
                "/v/bin/kas",
                "build",
                "--target",
                "linux-qcom-rt",
                "--target",
                "mc:x:core-image-base",
                "--task",
                "do_compile",
                "/w/rtbuild/m/m-rt.yml:/w/rtbuild/m/caches.yml",
                "--",
                "-k",
                "-DD",
                "--runall=fetch",
            ]
        );
        assert_eq!(cmd.get_cwd(), Some(Path::new("/w/rtbuild")));
        let env: Vec<(String, Option<String>)> = cmd
            .get_env()
            .iter()
            .map(|(k, v)| {
                (k.to_string_lossy().into(), v.as_ref().map(|v| v.to_string_lossy().into()))
            })
            .collect();
        assert!(env.contains(&("KAS_BUILD_DIR".into(), Some("/w/rtbuild/m/build".into()))));
        assert!(env.contains(&("SSTATE_DIR".into(), Some("/w/rtbuild/sstate-cache".into()))));
        assert!(env.contains(&("KAS_TARGET".into(), None)));
    }

    #[test]
    fn provenance_asks_kas_for_the_full_statement_before_the_config() {
        let mut spec = BuildSpec::new(&[], None, None).unwrap();
        spec.provenance = true;
        let cmd = kas_build(Path::new("kas"), &layout(), &dirs(), &spec);
        assert_eq!(
            cmd.argv(),
            [
                "kas",
                "build",
                "--provenance",
                "mode=max",
                "/w/rtbuild/m/m-rt.yml:/w/rtbuild/m/caches.yml"
            ]
        );
    }

    #[test]
    fn shell_command_is_one_argument() {
        let cmd = kas_shell(
            Path::new("kas"),
            &layout(),
            &dirs(),
            Some("bitbake -e linux-qcom-rt | less"),
        );
        assert_eq!(cmd.get_args().last().unwrap(), "bitbake -e linux-qcom-rt | less");
        assert_eq!(cmd.get_args().len(), 4);
    }

    #[test]
    fn injection_attempts_in_targets_tasks_and_args_fail() {
        let bad_targets = ["img; rm -rf /", "-c", "", "a b", "$(id)", "img\n"];
        for target in bad_targets {
            let err = BuildSpec::new(&[target.to_string()], None, None).unwrap_err();
            assert!(err.to_string().starts_with("bad --target `"), "{target:?}: {err}");
            assert!(err.is_input());
        }
        for task in ["compile; id", "do_", "", "x y"] {
            assert!(BuildSpec::new(&[], Some(task), None).is_err(), "{task:?}");
        }
        for args in ["-k; id", "--foo=$(id)", "'quoted'", "a|b", "x\u{7}"] {
            let err = BuildSpec::new(&[], None, Some(args)).unwrap_err();
            assert!(err.to_string().starts_with("bad --bitbake-args `"), "{args:?}: {err}");
        }
    }

    #[test]
    fn a_colon_in_the_output_folder_is_refused() {
        let layout = BuildPaths::new(Path::new("/w/a:b/m"), Path::new("/w/a:b/m/m-rt.yml"));
        assert!(
            check_paths(&layout)
                .unwrap_err()
                .to_string()
                .contains("splits its config argument on `:`")
        );
    }
}
