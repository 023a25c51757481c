//! `rtbuild lava --deploy qemu`: the board-less job is valid under LAVA's own schema (lava-common,
//! strict), boots what it is given with the machine's RT arguments, keeps the board jobs' test
//! action exactly, and refuses bad input (exit 2, one line, nothing written) — an injection
//! attempt in a URL or the kernel arguments included. The real `lava-run` of such a job is in
//! `lava_run_qemu.rs`.

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::lava_job::lava_schema;

const QEMU: [&str; 8] = [
    "--machine",
    "qcs6490-rb3gen2",
    "--deploy",
    "qemu",
    "--kernel-url",
    "file:///srv/lab/vmlinuz",
    "--rootfs-url",
    "https://files.example.com/rt/rootfs.ext4.gz",
];

fn job(args: &[&str]) -> Value {
    let text = Test::new().args(["lava"]).args(args.iter().copied()).run().success().stdout();
    if let Err(why) = lava_schema(&text) {
        panic!("{args:?}: LAVA rejects the job: {why}\n{text}");
    }
    serde_yaml::from_str(&text).unwrap()
}

#[test]
fn a_qemu_job_is_valid_for_lava_and_runs_the_board_jobs_test() {
    let qemu =
        job(&[&QEMU[..], &["--initrd-url", "file:///srv/lab/initrd.img", "--no-login"]].concat());
    let board =
        job(&["--machine", "qcs6490-rb3gen2", "--bundle-url", "https://h.example/b.tar.zst"]);
    assert_eq!(qemu["device_type"], "qemu");
    assert_eq!(qemu["context"]["arch"], "amd64");
    // rb3gen2 has 8 CPUs: QEMU gets as many.
    assert_eq!(qemu["context"]["extra_options"][0], "-smp 8");
    assert!(qemu["context"].get("test_character_delay").is_none());
    let actions = qemu["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 3, "{qemu}");
    let deploy = &actions[0]["deploy"];
    assert_eq!(deploy["to"], "tmpfs");
    let images = &deploy["images"];
    assert_eq!(images["kernel"]["url"], "file:///srv/lab/vmlinuz");
    let kernel = images["kernel"]["image_arg"].as_str().unwrap();
    // The default command line, then the board's RT arguments, in one quoted -append.
    assert!(
        kernel.starts_with(
            "-kernel {kernel} -append \"console=ttyS0,115200 root=/dev/vda rw isolcpus=7 "
        ),
        "{kernel}"
    );
    assert!(kernel.ends_with(" nohz_full=7\"") && kernel.matches('"').count() == 2, "{kernel}");
    assert_eq!(images["initrd"]["image_arg"], "-initrd {initrd}");
    assert_eq!(images["rootfs"]["image_arg"], "-drive format=raw,file={rootfs},if=virtio");
    assert_eq!(images["rootfs"]["compression"], "gz");
    assert!(images["kernel"].get("compression").is_none());
    let boot = &actions[1]["boot"];
    assert_eq!((&boot["method"], &boot["media"]), (&"qemu".into(), &"tmpfs".into()));
    assert!(boot.get("auto_login").is_none(), "--no-login: {boot}");
    assert_eq!(boot["prompts"][1], "root@(.*):[/~]#");
    // The test action is the board job's, but for the device the metadata names.
    let mut test = actions[2]["test"].clone();
    let mut board_test = board["actions"].as_array().unwrap().last().unwrap()["test"].clone();
    for t in [&mut test, &mut board_test] {
        t["definitions"][0]["repository"]["metadata"]["devices"] = Value::Null;
    }
    assert_eq!(test, board_test);
    assert_eq!(qemu["metadata"]["rtbuild.rootfs"], "https://files.example.com/rt/rootfs.ext4.gz");
    assert!(qemu["metadata"].get("rtbuild.bundle").is_none());

    // Without --no-login the boot logs in as the board jobs do; --prompt and --arch reach it.
    let login =
        job(&[&QEMU[..], &["--prompt", "rtlab# ", "--arch", "arm64", "--distro", "nodistro"]]
            .concat());
    let boot = &login["actions"][1]["boot"];
    assert_eq!(boot["auto_login"]["username"], "root");
    assert_eq!(boot["prompts"][0], "rtlab# ");
    assert_eq!(login["context"]["arch"], "arm64");
    assert!(login["actions"][0]["deploy"]["images"].get("initrd").is_none());
    // arm64: what LAVA's qemu device type defaults wrong for the boards (cortex-a57, GICv2,
    // the overlay on IDE, which `virt` lacks), and the PL011 console.
    let context = &login["context"];
    assert_eq!(
        (&context["cpu"], &context["machine"]),
        (&"max".into(), &"virt,gic-version=3".into())
    );
    assert_eq!(context["guestfs_interface"], "virtio");
    assert_eq!(context["extra_options"][0], "-smp 8");
    let kernel = login["actions"][0]["deploy"]["images"]["kernel"]["image_arg"].as_str().unwrap();
    assert!(
        kernel.starts_with("-kernel {kernel} -append \"console=ttyAMA0,115200 root=/dev/vda rw "),
        "{kernel}"
    );
    assert!(qemu["context"].get("cpu").is_none() && qemu["context"].get("machine").is_none());
}

#[test]
fn bad_qemu_input_is_one_line_exit_2_and_writes_nothing() {
    let base = &QEMU[..4];
    let kernel = ["--kernel-url", "file:///l/vmlinuz"];
    let rootfs = ["--rootfs-url", "file:///l/rootfs.ext4"];
    let with = |extra: &[&'static str]| [base, &kernel, &rootfs, extra].concat();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [base, &rootfs].concat(),
            "error: --deploy qemu boots files, not a bundle; pass --kernel-url",
        ),
        ([base, &kernel].concat(), "error: --deploy qemu boots files, not a bundle"),
        (
            with(&["--bundle-url", "https://h/b.tar.zst"]),
            "error: --deploy qemu boots files, not a bundle",
        ),
        (
            vec![
                "--machine",
                "qcs6490-rb3gen2",
                "--bundle-url",
                "https://h/b.tar.zst",
                "--kernel-url",
                "file:///l/k",
            ],
            "error: --deploy flasher flashes a bundle on a board; pass --bundle-url URL",
        ),
        // wrynose, the default branch: its lab flashes rb3gen2 with the flasher.
        (
            vec!["--machine", "qcs6490-rb3gen2"],
            "error: --deploy flasher flashes a bundle on a board",
        ),
        (
            vec!["--machine", "iq-615-evk", "--bundle-url", "https://h/b.tar.zst", "--no-login"],
            "error: --deploy flasher flashes a bundle on a board",
        ),
        (
            [base, &["--kernel-url", "/l/vmlinuz"], &rootfs].concat(),
            "error: bad --kernel-url `/l/vmlinuz`: it is not a file://, http:// or https:// URL; pass",
        ),
        (
            [base, &kernel, &["--rootfs-url", "file://l/rootfs.ext4"]].concat(),
            "error: bad --rootfs-url `file://l/rootfs.ext4`: a file:// URL needs an absolute path",
        ),
        (
            [base, &kernel, &["--rootfs-url", "file:///l/../../etc/shadow"]].concat(),
            "error: bad --rootfs-url `file:///l/../../etc/shadow`: its path holds `..`",
        ),
        (
            with(&["--initrd-url", "https://h/x/initrd.img?a=\"b\""]),
            "error: bad --initrd-url `https://h/x/initrd.img?a=\"b\"`: it contains a character URLs must percent-encode",
        ),
        (with(&["--kernel-args", ""]), "error: bad --kernel-args: it is empty"),
        (with(&["--prompt", ""]), "error: bad --prompt ``; pass printable ASCII"),
        (with(&["--prompt", "a\tb"]), "error: bad --prompt `a\\tb`"),
        (with(&["--arch", "mips"]), "error: unknown --arch `mips`; use amd64 or arm64"),
    ];
    for (args, want) in &cases {
        refused(args, want);
    }
}

/// Injection attempts: a `,` in a file name would add `-drive` options (`if=none,...`), a quote in
/// the kernel arguments would end `-append "…"` and add QEMU options, `$(…)` would reach a shell.
#[test]
fn an_injection_attempt_in_a_qemu_url_or_the_kernel_arguments_is_refused() {
    let base = &QEMU[..4];
    let kernel = ["--kernel-url", "file:///l/vmlinuz"];
    let rootfs = ["--rootfs-url", "file:///l/rootfs.ext4"];
    for (flag, url, why) in [
        ("--rootfs-url", "file:///l/r.ext4,if=none,file=/etc/shadow", "its path holds characters"),
        ("--rootfs-url", "https://h/r,file=x.ext4", "its file name holds characters"),
        ("--rootfs-url", "file:///l/$(reboot).ext4", "its path holds characters"),
        ("--rootfs-url", "file:///l/a b.ext4", "its path holds characters"),
        ("--kernel-url", "https://h/vmlinuz;reboot", "its file name holds characters"),
        ("--initrd-url", "https://h/`id`.img", "it contains a character URLs must percent-encode"),
    ] {
        let mut args: Vec<&str> = [base, &kernel, &rootfs].concat();
        match args.iter().position(|a| *a == flag) {
            Some(at) => args[at + 1] = url,
            None => args.extend([flag, url]),
        }
        refused(&args, &format!("error: bad {flag} `{url}`: {why}"));
    }
    for (args, shown) in [
        ("rw\" -device pci-testdev \"", "it holds `\\\"`"),
        ("init=$(reboot)", "it holds `$`"),
        ("init=/bin/sh;reboot", "it holds `;`"),
        ("rw\\ -S", "it holds `\\\\`"),
        ("a\nb", "it holds `\\n`"),
    ] {
        let args = [base, &kernel, &rootfs, &["--kernel-args", args]].concat();
        refused(&args, &format!("error: bad --kernel-args: {shown}; pass kernel arguments"));
    }
}

fn refused(args: &[&str], want: &str) {
    let run = Test::new()
        .args(["lava"])
        .args(args.iter().copied())
        .args(["--out", "job.yaml"])
        .run()
        .code_is(2);
    let stderr = run.stderr();
    assert!(stderr.starts_with(want), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.contains("; "), "{args:?}: says how to fix: {stderr}");
    assert_eq!(run.stdout(), "");
    assert!(!run.path().join("job.yaml").exists(), "{args:?}");
}
