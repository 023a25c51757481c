//! A live target over the system `ssh`, or this machine (`verify --local`): `uname -v`, `/proc/config.gz`, `/proc/cmdline`, the
//! isolated and nohz_full CPU lists in sysfs, and whether `cyclictest`/`stress-ng` are
//! installed. Every remote command is a fixed argv, quoted by [`SshTarget::command`]; on this
//! machine the same argv runs directly.

use std::collections::BTreeSet;

use crate::host::Host;
use crate::host::runner::Cmd;
use crate::host::runner::Runner;
use crate::verify::kconfig::KernelConfig;

use super::error::VerifyError;
use super::evidence::{Evidence, Found, TuneInstall, sysfs_cpus};

/// Tools on the target that show a package is installed.
const TOOLS: [(&str, &str); 2] = [("rt-tests", "cyclictest"), ("stress-ng", "stress-ng")];

/// Where the `rtbuild-tune` recipe (layers/meta-rtbuild-tune) puts its files: `${sbindir}` and
/// `${systemd_system_unitdir}` (`/usr/lib` with usrmerge, else `/lib`), and the link
/// `SYSTEMD_AUTO_ENABLE = "enable"` makes for `WantedBy=multi-user.target`. A fixed script;
/// `RTBUILD_SYSROOT` (unset on a board) is prefixed to every path, for tests.
const TUNE_LOOK: &str = r#"root=${RTBUILD_SYSROOT:-}
s=/usr/sbin/rtbuild-tune.sh
if [ -f "$root$s" ] && [ -x "$root$s" ]; then
    echo "script $s"
    sed -n "s/^RT_CPUS='\([0-9 ]*\)'\$/rt \1/p" "$root$s" | head -n 1
fi
for d in /etc/systemd/system /usr/lib/systemd/system /lib/systemd/system; do
    if [ -f "$root$d/rtbuild-tune.service" ]; then
        echo "unit $d/rtbuild-tune.service"
        break
    fi
done
for d in /etc/systemd/system/multi-user.target.wants; do
    [ -e "$root$d/rtbuild-tune.service" ] && echo "enabled $d/rtbuild-tune.service"
done
exit 0
"#;

/// Warnings the kernel logged since boot (information: `test` judges the ones logged during a
/// run), as notes: how many, and the last three.
fn kernel_log_notes(
    target: &Host,
    runner: &dyn Runner,
    evidence: &mut Evidence,
) -> Result<(), VerifyError> {
    let look = format!(
        "dmesg >/dev/null 2>&1 || exit 3\ndmesg | grep -E '{}' | tail -n 200 | cut -c1-300\nexit 0\n",
        crate::measure::kernel_log::PATTERN
    );
    let Some(found) = remote(target, runner, &["sh", "-c", &look])? else {
        evidence.notes.push(
            "the kernel log could not be read (dmesg failed: kernel.dmesg_restrict?), so kernel warnings were not looked for; log in as root".into(),
        );
        return Ok(());
    };
    let found = String::from_utf8_lossy(&found).into_owned();
    let lines: Vec<&str> =
        found.lines().filter(|l| crate::measure::kernel_log::classify(l).is_some()).collect();
    if !lines.is_empty() {
        let last: Vec<&str> = lines.iter().rev().take(3).rev().copied().collect();
        evidence.notes.push(format!(
            "the kernel log holds {} since boot (BUG:, WARNING:, Oops, RT throttling, hrtimer; `rtbuild test` fails a run during which one is logged), the last: {}",
            crate::text::counted(lines.len(), "warning line"),
            last.iter().map(|l| crate::text::shown(l)).collect::<Vec<_>>().join(" | ")
        ));
    }
    Ok(())
}

/// The `rtbuild-tune` files [`TUNE_LOOK`] reported.
fn tune_install(text: &str) -> TuneInstall {
    let value =
        |key: &str| text.lines().find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()));
    TuneInstall {
        script: value("script "),
        unit: value("unit "),
        enabled: value("enabled ").is_some(),
        rt_cpus: value("rt ").and_then(|words| {
            crate::plan::CpuSet::parse(&words.split_whitespace().collect::<Vec<_>>().join(",")).ok()
        }),
    }
}

/// `uname -m` as the kernel's `SRCARCH` (`aarch64` → `arm64`, `x86_64` → `x86`).
pub(super) fn srcarch(machine: &str) -> Option<&'static str> {
    let m = machine.trim();
    Some(match m {
        "aarch64" | "aarch64_be" | "arm64" => "arm64",
        "x86_64" | "i386" | "i486" | "i586" | "i686" => "x86",
        _ if m.starts_with("armv") || m == "arm" => "arm",
        _ if m.starts_with("riscv") => "riscv",
        _ if m.starts_with("ppc") => "powerpc",
        _ if m.starts_with("s390") => "s390",
        _ if m.starts_with("mips") => "mips",
        _ if m.starts_with("loongarch") => "loongarch",
        _ => return None,
    })
}

/// The place as errors name it: `target ssh://…`, or `this machine`.
fn place(host: &Host) -> String {
    match host {
        Host::Ssh(ssh) => format!("target {ssh}"),
        Host::Local => host.to_string(),
    }
}

/// Runs `argv` on the target; `Ok(None)` when it ran but failed (a missing file).
fn remote(
    target: &Host,
    runner: &dyn Runner,
    argv: &[&str],
) -> Result<Option<Vec<u8>>, VerifyError> {
    let cmd = match target {
        Host::Ssh(ssh) => ssh.command(argv),
        Host::Local => Cmd::new(argv[0]).args(&argv[1..]),
    };
    // The step is the command; the runner's error names it and the target.
    let output = target
        .feed(runner, &cmd, b"", &format!("`{}`", argv.join(" ")))
        .map_err(VerifyError::TargetRun)?;
    match output.status.code() {
        Some(0) => Ok(Some(output.stdout)),
        // ssh itself failed: unreachable, refused, host key or login problem.
        Some(255) if matches!(target, Host::Ssh(_)) => Err(VerifyError::Target {
            target: place(target),
            message: format!(
                "ssh failed: {}; check the target URL, its host key and that ssh reaches it",
                crate::text::shown_tail(&String::from_utf8_lossy(&output.stderr), 3)
            ),
        }),
        None => Err(VerifyError::Target {
            target: place(target),
            message: format!(
                "`{}` was stopped by a signal{}",
                argv.join(" "),
                match target {
                    Host::Ssh(_) => " (ssh failed)",
                    Host::Local => "",
                }
            ),
        }),
        Some(_) => Ok(None),
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// The running kernel's configuration: `/proc/config.gz` when the kernel carries it
/// (`CONFIG_IKCONFIG_PROC`), else `/boot/config-$(uname -r)`, where distribution kernels (Debian's
/// `linux-image-*-rt-*` among them) install it. Neither found: a note, options not checked.
fn read_config(
    target: &Host,
    runner: &dyn Runner,
    evidence: &mut Evidence,
) -> Result<(), VerifyError> {
    let mut tried = vec!["/proc/config.gz".to_string()];
    // The release names a file in /boot: refuse one that could point anywhere else.
    let boot = |target: &Host| -> Result<Option<String>, VerifyError> {
        let release = remote(target, runner, &["uname", "-r"])?.map(text);
        Ok(release.filter(|r| release_ok(r)).map(|r| format!("/boot/config-{r}")))
    };
    let mut path = "/proc/config.gz".to_string();
    let mut bytes = remote(target, runner, &["cat", &path])?.filter(|b| !b.is_empty());
    if bytes.is_none()
        && let Some(boot_path) = boot(target)?
    {
        bytes = remote(target, runner, &["cat", &boot_path])?.filter(|b| !b.is_empty());
        tried.push(boot_path.clone());
        path = boot_path;
    }
    if let Some(bytes) = bytes {
        match KernelConfig::read(bytes.as_slice()) {
            Ok(config) => evidence.config = Some(Found::new(config, path)),
            Err(e) => evidence.notes.push(format!("{path} is unreadable: {e}")),
        }
        return Ok(());
    }
    evidence.notes.push(format!(
        "no kernel configuration on the target ({} missing; CONFIG_IKCONFIG_PROC off); options not checked",
        tried.join(", ")
    ));
    Ok(())
}

/// A kernel release as `uname -r` prints it: one file-name-safe word.
fn release_ok(release: &str) -> bool {
    !release.is_empty()
        && !release.starts_with('.')
        && release.bytes().all(|b| b.is_ascii_alphanumeric() || b"._+-~".contains(&b))
}

/// Evidence read from a running target.
pub(super) fn evidence(target: &Host, runner: &dyn Runner) -> Result<Evidence, VerifyError> {
    let mut evidence = Evidence::new("live target");
    let version = remote(target, runner, &["uname", "-v"])?.ok_or_else(|| VerifyError::Target {
        target: place(target),
        message: "`uname -v` failed; is it a Linux system?".to_string(),
    })?;
    evidence.version = Some(Found::new(text(version), "uname -v"));
    if let Some(machine) = remote(target, runner, &["uname", "-m"])?.map(text) {
        evidence.arch = Some(Found::new(machine, "uname -m"));
    }
    read_config(target, runner, &mut evidence)?;
    if let Some(cmdline) = remote(target, runner, &["cat", "/proc/cmdline"])? {
        evidence.cmdline = Some(Found::new(text(cmdline), "/proc/cmdline"));
    }
    let sysfs = |file: &str| -> Result<Option<Found<crate::plan::CpuSet>>, VerifyError> {
        let path = format!("/sys/devices/system/cpu/{file}");
        Ok(remote(target, runner, &["cat", &path])?
            .and_then(|bytes| sysfs_cpus(&text(bytes)))
            .map(|set| Found::new(set, path)))
    };
    evidence.isolated = sysfs("isolated")?;
    evidence.nohz_full = sysfs("nohz_full")?;
    evidence.possible_cpus = sysfs("possible")?;
    let mut installed = BTreeSet::new();
    for (package, tool) in TOOLS {
        if remote(target, runner, &["sh", "-c", &format!("command -v {tool}")])?.is_some() {
            installed.insert(package.to_string());
        }
    }
    let tools: Vec<&str> = TOOLS.iter().map(|(_, t)| *t).collect();
    evidence.packages = Some(Found::new(installed, format!("{} on PATH", tools.join(", "))));
    kernel_log_notes(target, runner, &mut evidence)?;
    if let Some(found) = remote(target, runner, &["sh", "-c", TUNE_LOOK])? {
        let found = text(found);
        evidence.tune = Some(Found::new(
            tune_install(&found),
            "/usr/sbin/rtbuild-tune.sh, rtbuild-tune.service",
        ));
    }
    Ok(evidence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_read_through_the_runner_it_is_given_recording_fake() {
        let target = Host::Ssh(crate::host::SshTarget::parse("ssh://root@board.example").unwrap());
        let runner = crate::host::runner::Recorder::new("", 255);
        let err = evidence(&target, &runner).unwrap_err().to_string();
        assert!(err.contains("ssh failed"), "{err}");
        let argvs = runner.argvs();
        assert_eq!(argvs.len(), 1, "{argvs:?}");
        assert_eq!(argvs[0][0], "ssh");
        assert_eq!(argvs[0].last().map(String::as_str), Some("uname -v"), "{argvs:?}");
    }

    /// `verify --local`: the same fixed argv, run directly (no ssh, no shell string); a
    /// program that exits 255 here is not taken for a lost connection.
    #[test]
    fn this_machine_is_read_with_the_same_argv_without_ssh_recording_fake() {
        let runner = crate::host::runner::Recorder::new("", 255);
        let err = evidence(&Host::Local, &runner).unwrap_err().to_string();
        assert_eq!(err, "this machine: `uname -v` failed; is it a Linux system?");
        let argvs = runner.argvs();
        assert_eq!(argvs, vec![vec!["uname".to_string(), "-v".to_string()]]);
    }

    #[test]
    fn a_release_is_one_file_name_word() {
        for good in ["6.1.0-41-rt-amd64", "6.18.0+rt", "5.15.0~rc1"] {
            assert!(release_ok(good), "{good}");
        }
        for bad in ["", "../../etc/shadow", "6.1 x", "..", "a/b", ".hidden", "6.1\n"] {
            assert!(!release_ok(bad), "{bad:?}");
        }
    }
}
