//! `revert`: the saved state restored exactly and read back, whatever the state file holds.

use super::*;

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
