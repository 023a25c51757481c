//! A fake /proc + /sys tree that `rtbuild tune` and `rtbuild test` run against.

use std::fs;
use std::path::Path;

/// A fake /proc + /sys tree for a 4-CPU machine with CPUs `online` online.
pub(crate) fn fake_tree(root: &Path, online: &str) {
    let put = |rel: &str, text: &str| {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, format!("{text}\n")).unwrap();
    };
    put("sys/devices/system/cpu/online", online);
    put("proc/sys/kernel/timer_migration", "1");
    put("proc/sys/kernel/sched_rt_runtime_us", "950000");
    put("proc/sys/kernel/printk", "4\t4\t1\t7");
    put("sys/devices/virtual/workqueue/cpumask", "f");
    put("sys/devices/virtual/workqueue/writeback/cpumask", "f");
    put("sys/bus/workqueue/devices/writeback/cpumask", "f");
    put("sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "schedutil");
    put("proc/irq/default_smp_affinity", "f");
    put("proc/irq/9/smp_affinity", "f");
    fs::create_dir_all(root.join("proc/irq/11/smp_affinity")).unwrap();
}
