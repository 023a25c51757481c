//! LAVA on the boards' architecture: `rtbuild lava --deploy qemu --arch arm64` writes a job for
//! the lab's 8-CPU arm64 PREEMPT_RT guest (the kernel, initrd and ext4 root file system
//! `tests/lab/rt-guest.sh --arch arm64 build` caches) with the RB3 Gen 2 layout of the built-in
//! `rb3gen2-core-kit` (RT CPU 7); the real `lava-run` of `lava_run_qemu.rs` boots it under
//! `qemu-system-aarch64 -M virt,gic-version=3 -cpu max -smp 8` through a `qemu` device rendered
//! from lava-server's own device-type template, and `rtbuild report` reads the log it wrote.
//!
//! One boot. TCG: short scenarios and wide limits; the test judges mechanics (QEMU ran what the
//! job's context asked, every scenario ran and was parsed from the real log, the measuring thread
//! ran on CPU 7, LAVA's verdicts and the report's agree), never a latency value. LAVA's test
//! overlay is written by libguestfs, whose appliance is a host (x86) VM: it boots the x86 lab
//! guest's kernel, so this test needs both lab images. Nothing is left running (see
//! `lava_run_qemu.rs`).

use std::fs;

use serde_json::Value;

use crate::lava_run_qemu::{dispatcher, lava_verdicts_and_report_agree, render_device, run_lava};
use crate::support::harness::Test;
use crate::support::lab;
use crate::support::lava_job::lava_schema;

#[test]
fn a_real_lava_run_boots_the_8_cpu_arm64_guest_with_the_rb3gen2_layout_and_report_reads_it() {
    let _one_guest_at_a_time = lab::exclusive();
    let image = lab::arm64_image();
    // libguestfs's appliance runs on the host's architecture.
    let appliance = lab::image();
    dispatcher();
    let test = Test::new();
    let root = test.path().to_path_buf();
    let url = |file: &str| format!("file://{}", image.join(file).display());
    let made = test
        .args(["lava", "--machine", "rb3gen2-core-kit", "--deploy", "qemu", "--arch", "arm64"])
        .args(["--distro", "nodistro"])
        .args(["--kernel-url", &url("vmlinuz"), "--initrd-url", &url("initrd.img")])
        .args(["--rootfs-url", &url("rootfs.ext4")])
        // The lab's own init: a root shell on the PL011 console (no login), then sshd.
        .args([
            "--kernel-args",
            "console=ttyAMA0 root=/dev/vda rw rootwait init=/sbin/rtlab-init panic=-1",
        ])
        .args(["--no-login", "--prompt", "# "])
        // 8 s, not the x86 test's 5 s: the job asks cyclictest for its status only once its
        // threads are up and before the last 2 s; under the guide's load on 7 emulated CPUs they
        // took 4 s to come up on a busy host, and a 5 s run then has no status snapshot.
        .args(["--scenario", "idle,stress", "--duration", "8s", "--interval-us", "10000"])
        .args(["--histogram-us", "200000", "--threshold-us", "1000000", "--out", "job.yaml"])
        .run()
        .ignore_stdout()
        .stderr_is("       Wrote job.yaml (LAVA job for rb3gen2-core-kit)\n")
        .success();
    let job_text = fs::read_to_string(root.join("job.yaml")).unwrap();
    if let Err(why) = lava_schema(&job_text) {
        panic!("LAVA rejects the job: {why}\n{job_text}");
    }
    let job: Value = serde_yaml::from_str(&job_text).unwrap();
    // The board's RT layout reaches the guest's command line.
    let kernel_arg = job["actions"][0]["deploy"]["images"]["kernel"]["image_arg"].as_str().unwrap();
    for arg in [" isolcpus=7", " nohz_full=7", " rcu_nocbs=7", " irqaffinity=0-6"] {
        assert!(kernel_arg.contains(arg), "no {arg}: {kernel_arg}");
    }
    // The worker runs TCG; pointer authentication with QEMU's own algorithm is several times
    // cheaper there (a worker's choice: the guest cannot tell, and KVM refuses the option).
    render_device(
        &job,
        &root.join("device.yaml"),
        &["-accel tcg,thread=multi", "-cpu max,pauth-impdef=on"],
    );
    let log_text = run_lava(&root, &appliance, "qemu-system-aarch64");

    // QEMU ran what the job's context asked of LAVA's qemu device type: the aarch64 binary, the
    // `virt` machine with a GICv3, `-cpu max` (not the template's cortex-a57), the board's 8
    // CPUs, and LAVA's overlay on virtio (there is no IDE on `virt`).
    let command = log_text
        .lines()
        .find(|l| l.contains("qemu-system-aarch64") && l.contains("-append"))
        .unwrap_or_else(|| panic!("no QEMU command line in the log"));
    for option in [
        "-machine virt,gic-version=3",
        "-cpu max ",
        "-smp 8",
        "if=virtio,id=lavatest",
        "console=ttyAMA0",
    ] {
        assert!(command.contains(option), "no `{option}` in {command}");
    }
    // The kernel's own console: the arm64 RT kernel, on 8 CPUs, with a GICv3.
    let banner = log_text
        .lines()
        .find(|l| l.contains("\"lvl\": \"target\"") && l.contains("] Linux version "))
        .unwrap_or_default();
    assert!(banner.contains("-rt-arm64 "), "not the arm64 RT kernel: {banner}");
    for line in ["SMP: Total of 8 processors activated", "GICv3: "] {
        assert!(log_text.contains(line), "the guest's console has no `{line}`");
    }

    lava_verdicts_and_report_agree(&root, &log_text, 7);
    drop(made);
}
