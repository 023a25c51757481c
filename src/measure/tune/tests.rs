//! The tune script, rendered and run for real by dash against a fake /proc + /sys tree.

use std::fs;
use std::path::{Path, PathBuf};

use super::layer::layer_files;
use super::*;
use crate::host::cpus::{Board, CpuSet};

/// A mask the way the kernel prints it for `count` CPUs: every hex digit of the CPU count,
/// in comma-separated groups of eight (`0fff`-style padding included).
fn kernel_mask(set: &CpuSet, count: u32) -> String {
    let digits = count.div_ceil(4) as usize;
    let plain = set.to_mask().replace(',', "");
    let padded = format!("{plain:0>digits$}");
    let mut groups: Vec<String> = Vec::new();
    let mut rest = padded.as_str();
    while rest.len() > 8 {
        let (head, tail) = rest.split_at(rest.len() - 8);
        groups.insert(0, tail.to_string());
        rest = head;
    }
    groups.insert(0, rest.to_string());
    groups.join(",")
}

struct Fake {
    dir: tempfile::TempDir,
    script: PathBuf,
    count: u32,
}

impl Fake {
    /// A fake tree for `count` CPUs and the script for RT CPUs `rt`.
    fn new(count: u32, rt: &str) -> Fake {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let all = CpuSet::range(0, count);
        let full = kernel_mask(&all, count);
        let put = |rel: &str, text: &str| {
            let path = root.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            crate::files::write::fixture(path, format!("{text}\n")).unwrap();
        };
        put("proc/sys/kernel/timer_migration", "1");
        put("proc/sys/kernel/sched_rt_runtime_us", "950000");
        put("proc/sys/kernel/printk", "4\t4\t1\t7");
        put("sys/devices/virtual/workqueue/cpumask", &full);
        put("sys/devices/virtual/workqueue/cpumask_isolated", "0");
        put("sys/devices/virtual/workqueue/writeback/cpumask", &full);
        put("sys/devices/virtual/workqueue/blkcg_punt_bio/cpumask", &full);
        // As in real sysfs: the bus entry is a symlink to the device folder, one knob by two names.
        fs::create_dir_all(root.join("sys/bus/workqueue/devices")).unwrap();
        std::os::unix::fs::symlink(
            "../../../devices/virtual/workqueue/writeback",
            root.join("sys/bus/workqueue/devices/writeback"),
        )
        .unwrap();
        put("sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "schedutil");
        put("sys/devices/system/cpu/cpufreq/policy4/scaling_governor", "powersave");
        for cpu in 0..count {
            for state in 0..3 {
                put(&format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{state}/disable"), "0");
            }
        }
        put("proc/irq/default_smp_affinity", &full);
        for irq in [1, 2, 10, 200] {
            put(&format!("proc/irq/{irq}/smp_affinity"), &full);
        }
        // IRQ 3 cannot be read or written (a folder where the file should be); IRQ 4 reads but
        // refuses writes, even for root (a per-CPU interrupt behaves like this).
        fs::create_dir_all(root.join("proc/irq/3/smp_affinity")).unwrap();
        fs::create_dir_all(root.join("proc/irq/4")).unwrap();
        std::os::unix::fs::symlink("/proc/version", root.join("proc/irq/4/smp_affinity")).unwrap();

        let all_online = CpuSet::range(0, count);
        let layout =
            CpuLayout::new(&all_online, &CpuSet::parse(rt).unwrap(), None, Board::Given).unwrap();
        let options = TuneOptions { cpuidle_off: true, printk: Some(1), overcommit_never: false };
        let script = root.join("rtbuild-tune.sh");
        crate::files::write::fixture(&script, render_script("test-board", &layout, &options))
            .unwrap();
        Fake { dir, script, count }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root().join(rel)).unwrap().trim_end().to_string()
    }

    fn write(&self, rel: &str, text: &str) {
        crate::files::write::fixture(self.root().join(rel), format!("{text}\n")).unwrap();
    }

    /// Runs the script with dash; returns (exit code, stdout).
    fn run(&self, action: &str) -> (i32, String) {
        self.run_args(&[action])
    }

    fn run_args(&self, args: &[&str]) -> (i32, String) {
        let action = args[0];
        let mut argv = vec![self.script.as_os_str()];
        argv.extend(args.iter().map(std::ffi::OsStr::new));
        let out = duct::cmd("dash", argv)
            .env("RTBUILD_SYSROOT", self.root())
            .stdout_capture()
            .stderr_capture()
            .unchecked()
            .run()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.is_empty() || out.status.code() == Some(2), "stderr of {action}: {stderr}");
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Every file of the tree except the script and the state, with its contents.
    fn snapshot(&self) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = walkdir::WalkDir::new(self.root())
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(self.root()).unwrap().display().to_string();
                let text = fs::read_to_string(e.path()).unwrap().replace('\t', " ");
                (rel, text)
            })
            .filter(|(rel, _)| rel != "rtbuild-tune.sh" && !rel.starts_with("run/"))
            .collect();
        files.sort();
        files
    }
}

#[test]
fn apply_verify_revert_for_4_8_12_and_64_cpus() {
    let cases = [(4, "3", "7"), (8, "7", "7f"), (12, "10-11", "3ff"), (64, "32-63", "ffffffff")];
    for (count, rt, hk_mask) in cases {
        let fake = Fake::new(count, rt);
        let before = fake.snapshot();

        let (code, out) = fake.run("verify");
        assert_eq!(code, 1, "{count} CPUs: verify before apply must fail\n{out}");
        assert!(out.contains("mismatch /proc/sys/kernel/timer_migration want 0 got 1"), "{out}");

        let (code, out) = fake.run("apply");
        assert_eq!(code, 0, "{count} CPUs apply\n{out}");
        assert_eq!(fake.read("proc/sys/kernel/timer_migration"), "0");
        assert_eq!(fake.read("proc/sys/kernel/sched_rt_runtime_us"), "-1");
        assert_eq!(fake.read("proc/sys/kernel/printk"), "1");
        for wq in
            ["virtual/workqueue", "virtual/workqueue/writeback", "virtual/workqueue/blkcg_punt_bio"]
        {
            assert_eq!(fake.read(&format!("sys/devices/{wq}/cpumask")), hk_mask, "{count}: {wq}");
        }
        assert_eq!(fake.read("sys/bus/workqueue/devices/writeback/cpumask"), hk_mask);
        assert_eq!(fake.read("sys/devices/virtual/workqueue/cpumask_isolated"), "0");
        assert_eq!(fake.read("proc/irq/default_smp_affinity"), hk_mask);
        for irq in [1, 2, 10, 200] {
            assert_eq!(fake.read(&format!("proc/irq/{irq}/smp_affinity")), hk_mask);
        }
        for policy in [0, 4] {
            let gov = fake
                .read(&format!("sys/devices/system/cpu/cpufreq/policy{policy}/scaling_governor"));
            assert_eq!(gov, "performance");
        }
        let rt_set = CpuSet::parse(rt).unwrap();
        for cpu in 0..count {
            let want = if rt_set.contains(cpu) { "1" } else { "0" };
            let got = fake.read(&format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state1/disable"));
            assert_eq!(got, want, "{count} CPUs: cpuidle of cpu{cpu}");
        }
        assert!(out.contains("refused /proc/irq/3/smp_affinity (cannot be read)"), "{out}");
        assert!(out.contains("refused /proc/irq/4/smp_affinity (refused"), "{out}");

        let (code, out) = fake.run("verify");
        assert_eq!(code, 0, "{count} CPUs verify after apply\n{out}");
        assert!(!out.contains("mismatch"), "{out}");
        assert!(out.contains("refused /proc/irq/4/smp_affinity"), "{out}");

        let (code, out) = fake.run("revert");
        assert_eq!(code, 0, "{count} CPUs revert\n{out}");
        assert_eq!(fake.snapshot(), before, "{count} CPUs: revert must restore every file");
        assert!(!fake.root().join("run/rtbuild-tune.state").exists());
        let _ = fake.count;
    }
}

#[test]
fn verify_names_each_knob_that_changed_and_accepts_kernel_padded_masks() {
    let fake = Fake::new(40, "39");
    assert_eq!(fake.run("apply").0, 0);
    // The kernel prints a 40-CPU mask with its leading zero digits: still the same mask.
    fake.write("proc/irq/1/smp_affinity", "7f,ffffffff");
    fake.write("proc/irq/2/smp_affinity", "00,7fffffff");
    fake.write("proc/sys/kernel/timer_migration", "1");
    fake.write("sys/devices/system/cpu/cpufreq/policy4/scaling_governor", "ondemand");
    let (code, out) = fake.run("verify");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ok /proc/irq/1/smp_affinity 7f,ffffffff"), "{out}");
    let mismatches: Vec<&str> = out.lines().filter(|l| l.starts_with("mismatch")).collect();
    assert_eq!(
        mismatches,
        [
            "mismatch /proc/sys/kernel/timer_migration want 0 got 1",
            "mismatch /sys/devices/system/cpu/cpufreq/policy4/scaling_governor want performance got ondemand",
            "mismatch /proc/irq/2/smp_affinity want 7f,ffffffff got 00,7fffffff",
        ]
    );
}

#[test]
fn applying_twice_keeps_the_first_saved_values() {
    let fake = Fake::new(8, "7");
    let before = fake.snapshot();
    assert_eq!(fake.run("apply").0, 0);
    let (code, out) = fake.run("apply");
    assert_eq!(code, 0);
    assert!(out.contains("note already applied"), "{out}");
    assert!(out.contains("keep /proc/sys/kernel/timer_migration 0"), "{out}");
    assert_eq!(fake.run("revert").0, 0);
    assert_eq!(fake.snapshot(), before);
    let (code, out) = fake.run("revert");
    assert_eq!(
        (code, out.trim()),
        (
            0,
            format!(
                "note nothing to revert: {}/run/rtbuild-tune.state does not exist",
                fake.root().display()
            )
            .as_str()
        )
    );
}

/// Issue 40: a kernel without cpufreq or cpuidle (the arm64 QEMU guest) skips those steps, and
/// says so per step in text and JSON, rather than doing nothing silently.
#[test]
fn missing_knobs_are_skipped_and_unknown_actions_fail() {
    let fake = Fake::new(4, "3");
    fs::remove_dir_all(fake.root().join("sys/devices/system/cpu/cpufreq")).unwrap();
    for state in 0..3 {
        fs::remove_dir_all(
            fake.root().join(format!("sys/devices/system/cpu/cpu3/cpuidle/state{state}")),
        )
        .unwrap();
    }
    for action in ["apply", "verify"] {
        let (code, out) = fake.run(action);
        assert_eq!(code, 0, "{action}: {out}");
        let skips: Vec<&str> = out.lines().filter(|l| l.starts_with("skip ")).collect();
        assert_eq!(
            skips,
            ["skip governor (skipped: no cpufreq)", "skip cpuidle-cpu3 (skipped: no cpuidle)"],
            "{action}: {out}"
        );
        let outcome = super::run::outcome(Action::Apply, true, &out);
        assert_eq!(
            outcome.skipped,
            ["governor (skipped: no cpufreq)", "cpuidle-cpu3 (skipped: no cpuidle)"]
        );
        let json = serde_json::to_value(&outcome).unwrap();
        assert_eq!(json["skipped"][0], "governor (skipped: no cpufreq)");
    }
    // Every knob there: nothing is skipped.
    let whole = Fake::new(4, "3");
    assert!(!whole.run("apply").1.contains("skip"));
    assert_eq!(fake.run("bogus").0, 2);
}

/// Issue 40: a virtio-blk queue interrupt the kernel fixed to RT CPU 7 (`smp_affinity_list` 7,
/// writes refused) is named with its handler, and marked pinned; IRQ 4, refused but allowed on
/// every CPU, is only refused.
#[test]
fn a_managed_irq_fixed_to_the_rt_cpu_is_named_with_the_managed_irq_hint() {
    let fake = Fake::new(8, "7");
    let irq = fake.root().join("proc/irq/25");
    fs::create_dir_all(irq.join("virtio1-req.7")).unwrap();
    std::os::unix::fs::symlink("/proc/version", irq.join("smp_affinity")).unwrap();
    fake.write("proc/irq/25/smp_affinity_list", "7");
    fake.write("proc/irq/4/smp_affinity_list", "0-7");
    let rt = CpuSet::parse("7").unwrap();
    for action in ["apply", "verify"] {
        let (code, out) = fake.run(action);
        assert_eq!(code, 0, "{action}: {out}");
        assert!(out.contains("\naffinity 25 7 virtio1-req.7\n"), "{action}: {out}");
        assert!(out.contains("\naffinity 4 0-7 -\n"), "{action}: {out}");
        let mut outcome = super::run::outcome(Action::Verify, code == 0, &out);
        outcome.mark_pinned(&rt);
        let pinned: Vec<String> = outcome.pinned.iter().map(|p| p.label()).collect();
        assert_eq!(pinned, ["IRQ 25 (virtio1-req.7)"], "{action}");
        assert_eq!(
            outcome.pinned_warnings(&rt),
            [
                "IRQ 25 (virtio1-req.7) is fixed to RT CPU 7 by the kernel (a managed interrupt: its affinity cannot be written) and can fire there during a measurement; boot with isolcpus=managed_irq,7 to keep managed interrupts off the RT CPUs"
            ]
        );
        let json = serde_json::to_value(&outcome).unwrap();
        assert_eq!(json["pinned"][0]["names"][0], "virtio1-req.7");
    }
    assert_eq!(fake.run("revert").0, 0);
}

#[test]
fn rendered_values_are_masks_and_lists_only() {
    let online = CpuSet::range(0, 8);
    let layout =
        CpuLayout::new(&online, &CpuSet::parse("6-7").unwrap(), None, Board::Given).unwrap();
    let script = render_script("x\n$(reboot)", &layout, &TuneOptions::default());
    assert!(!script.contains("reboot"));
    assert!(script.contains("generated by rtbuild for a custom target"));
    assert!(script.contains(
        "HK_MASK='3f'\nRT_CPUS='6 7'\nRT_LIST='6-7'\nCPUIDLE_OFF='0'\nPRINTK_LEVEL='1'\n"
    ));
    assert_eq!(script, render_script("x\n$(reboot)", &layout, &TuneOptions::default()));
}

#[test]
fn layer_files_carry_the_script() {
    let files = layer_files("#!/bin/sh\n");
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "recipes-rt/rtbuild-tune/rtbuild-tune_1.0.bb",
            "recipes-rt/rtbuild-tune/files/rtbuild-tune.service",
            "recipes-rt/rtbuild-tune/files/rtbuild-tune.sh",
        ]
    );
    let unit = String::from_utf8(files[1].1.clone()).unwrap();
    assert!(unit.contains("Type=oneshot") && unit.contains("RemainAfterExit=yes"));
    assert!(unit.contains("ExecStart=@SBINDIR@/rtbuild-tune.sh apply"));
    assert!(unit.contains("ExecStop=@SBINDIR@/rtbuild-tune.sh revert"));
}

#[test]
fn shellcheck_finds_nothing() {
    let layout =
        CpuLayout::new(&CpuSet::range(0, 8), &CpuSet::parse("7").unwrap(), None, Board::Given)
            .unwrap();
    let script = render_script("rb3gen2-core-kit", &layout, &TuneOptions::default());
    let out = duct::cmd!("shellcheck", "-s", "sh", "-")
        .stdin_bytes(script)
        .stdout_capture()
        .unchecked()
        .run()
        .expect("shellcheck is installed by .ci/setup");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn the_layer_gets_the_plans_script() {
    let request = crate::plan::PlanRequest {
        machine: Some("iq-8275-evk".into()),
        ..crate::plan::PlanRequest::default()
    };
    let plan = crate::plan::Plan::new(&request, &crate::catalog::Catalog::embedded()).unwrap();
    let mut tree = crate::files::tree::Tree::new();
    add_to_tree(&mut tree, "meta-rtbuild", &crate::layer::render::tune_script(&plan));
    let script = tree.text("meta-rtbuild/recipes-rt/rtbuild-tune/files/rtbuild-tune.sh").unwrap();
    assert!(script.contains("HK_MASK='f7'\nRT_CPUS='3'\n"), "{script}");
    assert!(tree.get("meta-rtbuild/recipes-rt/rtbuild-tune/rtbuild-tune_1.0.bb").is_some());
}

#[test]
fn a_test_run_with_its_own_state_file_keeps_the_boot_time_tuning() {
    let fake = Fake::new(8, "7");
    let before = fake.snapshot();
    // The boot-time service applied the tuning; `rtbuild test --tune` applies and reverts its own.
    assert_eq!(fake.run("apply").0, 0);
    let tuned = fake.snapshot();
    assert_eq!(fake.run_args(&["apply", "rtbuild-test-tune.state"]).0, 0);
    assert_eq!(fake.run_args(&["revert", "rtbuild-test-tune.state"]).0, 0);
    assert_eq!(fake.snapshot(), tuned, "ending a test must not undo the boot-time tuning");
    assert!(fake.root().join("run/rtbuild-tune.state").exists());
    assert_eq!(fake.run("revert").0, 0);
    assert_eq!(fake.snapshot(), before);
    for bad in ["../etc/passwd", ".hidden", "a b", "$(reboot)"] {
        assert_eq!(fake.run_args(&["apply", bad]).0, 2, "{bad}");
    }
    assert_eq!(fake.snapshot(), before);
}

/// `vm.overcommit_memory=2` (RK3562J guide) is opt-in: absent from the default script, and with
/// `overcommit_never` applied, verified and reverted by dash like every other knob.
#[test]
fn overcommit_never_is_opt_in_and_reverted() {
    let fake = Fake::new(4, "3");
    fs::create_dir_all(fake.root().join("proc/sys/vm")).unwrap();
    fake.write("proc/sys/vm/overcommit_memory", "0");
    // The default script leaves it alone.
    let (code, out) = fake.run("apply");
    assert_eq!(code, 0, "{out}");
    assert_eq!(fake.read("proc/sys/vm/overcommit_memory"), "0");
    assert_eq!(fake.run("revert").0, 0);
    let layout =
        CpuLayout::new(&CpuSet::range(0, 4), &CpuSet::parse("3").unwrap(), None, Board::Given)
            .unwrap();
    let options = TuneOptions { overcommit_never: true, ..TuneOptions::default() };
    crate::files::write::fixture(&fake.script, render_script("test-board", &layout, &options))
        .unwrap();
    let (code, out) = fake.run("apply");
    assert_eq!(code, 0, "{out}");
    assert_eq!(fake.read("proc/sys/vm/overcommit_memory"), "2");
    assert_eq!(fake.run("verify").0, 0);
    fake.write("proc/sys/vm/overcommit_memory", "1");
    let (code, out) = fake.run("verify");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("overcommit_memory"), "{out}");
    fake.write("proc/sys/vm/overcommit_memory", "2");
    let (code, out) = fake.run("revert");
    assert_eq!(code, 0, "{out}");
    assert_eq!(fake.read("proc/sys/vm/overcommit_memory"), "0");
}

/// Issue 23 item 10: the writeback knob has two names (a sysfs symlink). It is tuned, saved and
/// restored once, by its real path, so revert really restores it.
#[test]
fn a_knob_with_two_names_is_saved_once_and_really_restored() {
    let fake = Fake::new(4, "3");
    let before = fake.snapshot();
    let (code, out) = fake.run("apply");
    assert_eq!(code, 0, "{out}");
    let writeback: Vec<&str> = out.lines().filter(|l| l.contains("writeback")).collect();
    assert_eq!(writeback, ["set /sys/devices/virtual/workqueue/writeback/cpumask 7 (was f)"]);
    let state = fs::read_to_string(fake.root().join("run/rtbuild-tune.state")).unwrap();
    assert_eq!(state.matches("writeback").count(), 1, "{state}");
    let (code, out) = fake.run("verify");
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("writeback").count(), 1, "{out}");
    let (code, out) = fake.run("revert");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("restored /sys/devices/virtual/workqueue/writeback/cpumask f"), "{out}");
    assert_eq!(fake.read("sys/bus/workqueue/devices/writeback/cpumask"), "f");
    assert_eq!(fake.snapshot(), before);
}

/// The reproducer of issue 23 item 10: a state file (written by the old script) that saved the
/// writeback knob under both names, the second after the first had been tuned (3 then 1). Revert
/// restores the value saved first, once, and reads it back.
#[test]
fn an_old_state_file_naming_a_knob_twice_restores_the_first_saved_value() {
    let fake = Fake::new(2, "1");
    fake.write("sys/devices/virtual/workqueue/writeback/cpumask", "1");
    let root = fake.root().display().to_string();
    fs::create_dir_all(fake.root().join("run")).unwrap();
    crate::files::write::fixture(
        fake.root().join("run/rtbuild-tune.state"),
        format!(
            "{root}/sys/devices/virtual/workqueue/writeback/cpumask\t3\n\
             {root}/sys/bus/workqueue/devices/writeback/cpumask\t1\n"
        ),
    )
    .unwrap();
    let (code, out) = fake.run("revert");
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.trim(), "restored /sys/devices/virtual/workqueue/writeback/cpumask 3");
    assert_eq!(fake.read("sys/bus/workqueue/devices/writeback/cpumask"), "3");
}

/// A knob that takes the write but does not hold it (here: replaced by a link to /dev/null after
/// apply) fails revert with exit 1 naming it; the others are still restored.
#[test]
fn revert_reads_every_knob_back_and_names_one_that_differs() {
    let fake = Fake::new(4, "3");
    assert_eq!(fake.run("apply").0, 0);
    let knob = fake.root().join("proc/sys/kernel/sched_rt_runtime_us");
    fs::remove_file(&knob).unwrap();
    std::os::unix::fs::symlink("/dev/null", &knob).unwrap();
    let (code, out) = fake.run("revert");
    assert_eq!(code, 1, "{out}");
    let fails: Vec<&str> = out.lines().filter(|l| l.starts_with("fail ")).collect();
    assert_eq!(
        fails,
        ["fail /proc/sys/kernel/sched_rt_runtime_us (restored 950000, reads (unreadable))"]
    );
    assert_eq!(fake.read("proc/sys/kernel/timer_migration"), "1");
    assert!(!fake.root().join("run/rtbuild-tune.state").exists());
}

/// Issue 21: a knob apply found already tuned is never written back. A kernel refuses writes to
/// some IRQs' affinity (EIO on /proc/irq/0 and 2 of a real guest): when they already hold the
/// housekeeping mask, revert must leave them alone and succeed.
#[test]
fn a_knob_that_apply_kept_is_never_written_back() {
    let fake = Fake::new(4, "3");
    // Already the housekeeping mask: nothing to save, so nothing to write back.
    fake.write("proc/irq/1/smp_affinity", "7");
    fake.write("proc/sys/kernel/timer_migration", "0");
    let (code, out) = fake.run("apply");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("keep /proc/irq/1/smp_affinity 7"), "{out}");
    assert!(out.contains("keep /proc/sys/kernel/timer_migration 0"), "{out}");
    let state = fs::read_to_string(fake.root().join("run/rtbuild-tune.state")).unwrap();
    assert!(!state.contains("irq/1/") && !state.contains("timer_migration"), "{state}");
    let (code, out) = fake.run("revert");
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("irq/1/") && !out.contains("timer_migration"), "{out}");
}

/// Issue 24 leftover: the overcommit knob goes through `knob` like every other one, so it is
/// tuned, saved and restored by its real path (here `vm` is a symlink to another folder).
#[test]
fn the_overcommit_knob_is_tuned_once_by_its_real_path() {
    let fake = Fake::new(4, "3");
    fs::create_dir_all(fake.root().join("proc/sys/vm-real")).unwrap();
    std::os::unix::fs::symlink("vm-real", fake.root().join("proc/sys/vm")).unwrap();
    fake.write("proc/sys/vm-real/overcommit_memory", "0");
    let layout =
        CpuLayout::new(&CpuSet::range(0, 4), &CpuSet::parse("3").unwrap(), None, Board::Given)
            .unwrap();
    let options = TuneOptions { overcommit_never: true, ..TuneOptions::default() };
    crate::files::write::fixture(&fake.script, render_script("test-board", &layout, &options))
        .unwrap();
    let (code, out) = fake.run("apply");
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("overcommit")).collect();
    assert_eq!(lines, ["set /proc/sys/vm-real/overcommit_memory 2 (was 0)"], "{out}");
    let state = fs::read_to_string(fake.root().join("run/rtbuild-tune.state")).unwrap();
    assert_eq!(state.matches("overcommit").count(), 1, "{state}");
    let (code, out) = fake.run("revert");
    assert_eq!(code, 0, "{out}");
    assert_eq!(fake.read("proc/sys/vm/overcommit_memory"), "0");
}

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
