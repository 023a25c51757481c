//! irqbalance kept off the RT CPUs and restored, against a fake irqbalance service.

use super::*;

/// A recording fake service manager and a fake irqbalance in the fake tree: the process is
/// `proc/PID/{comm,environ}` under the test root (never a real process, so no other run on this
/// machine sees it); `systemctl restart irqbalance.service` replaces it with a new PID whose
/// environment is the unit's own plus the drop-ins in `run/systemd/system/irqbalance.service.d`.
struct FakeIrqbalance {
    dir: tempfile::TempDir,
}

impl FakeIrqbalance {
    /// irqbalance runs as PID 100 with `unit_env` (`NAME=value` or empty); `managed`: systemd
    /// runs it as irqbalance.service.
    fn start(root: &Path, unit_env: &str, managed: bool) -> FakeIrqbalance {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir_all(d.join("bin")).unwrap();
        crate::files::write::fixture(d.join("unit-env"), unit_env).unwrap();
        crate::files::write::fixture(d.join("pid"), "100").unwrap();
        if !managed {
            crate::files::write::fixture(d.join("unmanaged"), "").unwrap();
        }
        let script = format!(
            r#"#!/bin/sh
d='{d}'
root=$RTBUILD_SYSROOT
echo "$*" >>"$d/systemctl.log"
pid=$(cat "$d/pid")
case "$*" in
    "is-active --quiet irqbalance.service") [ ! -e "$d/unmanaged" ] && [ -d "$root/proc/$pid" ] ;;
    daemon-reload) ;;
    "restart irqbalance.service")
        rm -rf "$root/proc/$pid"
        pid=$((pid + 1))
        echo "$pid" >"$d/pid"
        mkdir -p "$root/proc/$pid"
        echo irqbalance >"$root/proc/$pid/comm"
        env=$(cat "$d/unit-env")
        for f in "$root"/run/systemd/system/irqbalance.service.d/*.conf; do
            [ -f "$f" ] && env=$(sed -n 's/^Environment=//p' "$f")
        done
        printf 'PATH=/usr/bin\000%s\000' "$env" >"$root/proc/$pid/environ"
        ;;
    *) exit 1 ;;
esac
"#,
            d = d.display()
        );
        let path = d.join("bin/systemctl");
        crate::files::write::fixture(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir_all(root.join("proc/100")).unwrap();
        crate::files::write::fixture(root.join("proc/100/comm"), "irqbalance\n").unwrap();
        crate::files::write::fixture(
            root.join("proc/100/environ"),
            format!("PATH=/usr/bin\0{unit_env}\0"),
        )
        .unwrap();
        FakeIrqbalance { dir }
    }

    /// Runs the tune script with the fake systemctl first on PATH.
    fn run(&self, fake: &Fake, action: &str) -> (i32, String) {
        let path =
            format!("{}:/usr/local/bin:/usr/bin:/bin", self.dir.path().join("bin").display());
        let out = duct::cmd("dash", [fake.script.as_os_str(), std::ffi::OsStr::new(action)])
            .env("RTBUILD_SYSROOT", fake.root())
            .env("PATH", path)
            .stdout_capture()
            .stderr_capture()
            .unchecked()
            .run()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.is_empty(), "stderr of {action}: {stderr}");
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn calls(&self) -> Vec<String> {
        fs::read_to_string(self.dir.path().join("systemctl.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with("is-"))
            .map(str::to_string)
            .collect()
    }

    /// The running irqbalance's PID and environment (NUL-separated, as /proc shows it).
    fn running(&self, fake: &Fake) -> (String, String) {
        let pid = fs::read_to_string(self.dir.path().join("pid")).unwrap().trim().to_string();
        let env = fs::read_to_string(fake.root().join(format!("proc/{pid}/environ"))).unwrap();
        (pid, env)
    }
}

/// Issue 39 item 7a with a recording fake irqbalance and service manager: apply bans the RT CPUs
/// in irqbalance (added to the ones it already bans) through a runtime drop-in and a restart,
/// verify reads the running irqbalance's environment, and revert restores it exactly.
#[test]
fn irqbalance_is_banned_from_the_rt_cpus_and_restored_exactly_with_a_fake_irqbalance() {
    let fake = Fake::new(8, "6-7");
    let irqb = FakeIrqbalance::start(fake.root(), "IRQBALANCE_BANNED_CPULIST=0", true);
    let (code, out) = irqb.run(&fake, "verify");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("mismatch irqbalance (pid 100) IRQBALANCE_BANNED_CPULIST want 6-7 got 0"),
        "{out}"
    );

    let (code, out) = irqb.run(&fake, "apply");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "set irqbalance IRQBALANCE_BANNED_CPULIST=0,6-7 (was 0; irqbalance.service restarted)"
        ),
        "{out}"
    );
    assert_eq!(irqb.calls(), ["daemon-reload", "restart irqbalance.service"]);
    assert_eq!(
        irqb.running(&fake),
        ("101".into(), "PATH=/usr/bin\0IRQBALANCE_BANNED_CPULIST=0,6-7\0".into())
    );
    let dropin = fake.root().join("run/systemd/system/irqbalance.service.d/50-rtbuild-tune.conf");
    assert_eq!(
        fs::read_to_string(&dropin).unwrap(),
        "[Service]\nEnvironment=IRQBALANCE_BANNED_CPULIST=0,6-7\n"
    );
    let (code, out) = irqb.run(&fake, "verify");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ok irqbalance (pid 101) bans RT CPUs 6-7"), "{out}");

    let (code, out) = irqb.run(&fake, "revert");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "restored irqbalance IRQBALANCE_BANNED_CPULIST=0 (irqbalance.service restarted)"
        ),
        "{out}"
    );
    assert!(!dropin.exists());
    assert_eq!(
        irqb.running(&fake),
        ("102".into(), "PATH=/usr/bin\0IRQBALANCE_BANNED_CPULIST=0\0".into())
    );
    assert_eq!(
        irqb.calls(),
        [
            "daemon-reload",
            "restart irqbalance.service",
            "daemon-reload",
            "restart irqbalance.service"
        ]
    );
}

/// An irqbalance that already bans the RT CPUs is left alone; one that systemd does not run
/// cannot be restarted by rtbuild, so apply fails naming it and what to do.
#[test]
fn irqbalance_that_bans_them_is_kept_and_one_outside_systemd_fails_apply_with_a_fake_irqbalance() {
    let fake = Fake::new(4, "3");
    let irqb = FakeIrqbalance::start(fake.root(), "IRQBALANCE_BANNED_CPULIST=2-3", true);
    let (code, out) = irqb.run(&fake, "apply");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("keep irqbalance (pid 100) bans RT CPUs 3"), "{out}");
    assert!(irqb.calls().is_empty(), "{:?}", irqb.calls());
    assert_eq!(irqb.run(&fake, "revert").0, 0);

    let fake = Fake::new(4, "3");
    let irqb = FakeIrqbalance::start(fake.root(), "", false);
    let (code, out) = irqb.run(&fake, "apply");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("fail irqbalance (pid 100) runs outside systemd without banning RT CPUs 3; restart it with IRQBALANCE_BANNED_CPULIST=3 or stop it"),
        "{out}"
    );
    assert!(irqb.calls().is_empty(), "{:?}", irqb.calls());
}
