//! The tune script, rendered and run for real by dash against a fake /proc + /sys tree.
//!
//! The fake tree is here; the tests are by subject: [`apply`], [`revert`], [`script`],
//! [`irqbalance`] (with its own fake service) and [`root`] (the check before apply and revert).

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

mod apply;
mod irqbalance;
mod revert;
mod root;
mod script;
