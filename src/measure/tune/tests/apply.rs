//! `apply` and `verify` on 4 to 64 CPUs: each knob set, each change named, saved values kept,
//! missing knobs skipped, managed IRQs and the overcommit knob.

use super::*;

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
