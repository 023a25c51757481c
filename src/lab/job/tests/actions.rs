//! The deploy and boot actions each board gets from the lab's view, per deploy and release.

use super::*;

/// The lab's facts for each catalog board, written by hand from qualcomm-linux/
/// lava-test-plans a20c74e (`projects/meta-qcom/devices/<machine>` and the `devices/*`
/// file it extends; `include/qdl.jinja2` for the action shapes): device type, firehose,
/// stages as (storage, path, rawprogram, patch), the board's prompt. Boards the lab does not
/// list get the machine name, the flasher and `root@<machine>`.
#[test]
fn every_catalog_board_gets_the_labs_device_type_qdl_stages_and_prompt() {
    let six_raw = "rawprogram0.xml rawprogram1.xml rawprogram2.xml rawprogram3.xml \
                   rawprogram4.xml rawprogram5.xml";
    let six_patch = "patch0.xml patch1.xml patch2.xml patch3.xml patch4.xml patch5.xml";
    let ufs = ("ufs", "", six_raw, six_patch);
    let sail = ("spinor", "/sail_nor", "rawprogram0.xml", "patch0.xml");
    let ddr = "prog_firehose_ddr.elf";
    type Stage<'a> = (&'a str, &'a str, &'a str, &'a str);
    let qdl: &[(&str, &str, &str, Vec<Stage<'_>>, &str)] = &[
        ("rb3gen2-core-kit", "qcs6490-rb3gen2", ddr, vec![ufs], "root@rb3gen2"),
        ("iq-9075-evk", "lemans-evk", ddr, vec![sail, ufs], "root@lemans-evk"),
        ("qcs8300-ride-sx", "monaco-ride", ddr, vec![sail, ufs], "root@monaco-ride"),
        ("iq-8275-evk", "monaco-evk", ddr, vec![sail, ufs], "root@monaco-evk"),
        ("qcs615-ride", "qcs615-ride", ddr, vec![ufs], "root@qcs615-ride"),
        ("qcs9100-ride-sx", "qcs9100-ride", ddr, vec![sail, ufs], "root@qcs9100-ride"),
        (
            "iq-x7181-evk",
            "hamoa-iot-evk",
            "xbl_s_devprg_ns.melf",
            vec![
                ("spinor", "/spinor", "rawprogram0.xml", "patch0.xml"),
                ("ufs", "", "rawprogram0.xml rawprogram1.xml", "patch0.xml patch1.xml"),
            ],
            "root@hamoa-iot-evk",
        ),
    ];
    let catalog = crate::catalog::Catalog::embedded();
    let job_for = |machine: &str| {
        let profile = catalog.lookup(machine).unwrap().machine.lava.clone();
        let mut req = request();
        req.machine = machine.to_string();
        req.lab = Lab::resolve(machine, profile.as_ref(), "master", None, None).unwrap();
        job(&req).unwrap()
    };
    for (machine, device_type, firehose, stages, prompt) in qdl {
        let job = job_for(machine);
        assert_eq!(job.device_type, *device_type, "{machine}");
        assert_eq!(
            job.context,
            [("test_character_delay".to_string(), ContextValue::Number(10))].into()
        );
        let dir = format!("qcom-multimedia-image-{machine}");
        let mut want = vec![Action::deploy(DeployAction::Qdl {
            rootfs_image: format!("{dir}/rootfs.img"),
            // LAVA 2026.07 (the default) refuses overlay_path.
            overlay_path: None,
            qcomflash: QcomflashImage {
                headers: BTreeMap::new(),
                url: "https://ci.example.com/b/rb3gen2-core-kit-rt.tar.gz".into(),
                apply_overlay: true,
            },
            timeout: Minutes::of(20),
        })];
        for (storage, path, rawprogram, patch) in stages {
            want.push(Action::boot(Boot::Qdl {
                firehose_program: firehose.to_string(),
                rawprogram: rawprogram.to_string(),
                patch: patch.to_string(),
                path: format!("{dir}{path}"),
                storage: storage.to_string(),
                debug: true,
                timeout: Minutes::of(15),
            }));
        }
        want.push(Action::boot(Boot::Minimal {
            timeout: Minutes::of(15 * stages.len() as u64),
            auto_login: AutoLogin {
                login_prompt: "login:".into(),
                username: "root".into(),
                password_prompt: Some("Password".into()),
                password: Some("oelinux123".into()),
            },
            prompts: vec![prompt.to_string(), "root@(.*):[/~]#".into()],
        }));
        assert_eq!(job.actions[..want.len()], want[..], "{machine}");
        assert!(matches!(job.actions.last(), Some(Action::Test { .. })), "{machine}");
        assert_eq!(job.actions.len(), want.len() + 1, "{machine}");
    }
    for machine in ["iq-615-evk", "qcm6490-idp"] {
        let job = job_for(machine);
        assert_eq!(job.device_type, machine);
        let Action::Boot { boot: Boot::Minimal { prompts, .. } } = &job.actions[2] else {
            panic!("{machine}: {:?}", job.actions[2]);
        };
        assert_eq!(prompts, &[format!("root@{machine}"), "root@(.*):[/~]#".to_string()]);
        assert!(matches!(job.actions[1], Action::Deploy { deploy: DeployAction::Flasher { .. } }));
    }
}

/// `--deploy flasher` on a qdl board: lava-test-plans' flasher deploy (the download as it
/// is, no `compression:`; `flash.settings` with the overlay and the board).
#[test]
fn the_flasher_deploy_hands_the_archive_over_unchanged() {
    let catalog = crate::catalog::Catalog::embedded();
    let profile = catalog.lookup("qcs8300-ride-sx").unwrap().machine.lava.clone();
    let mut req = request();
    req.machine = "qcs8300-ride-sx".into();
    let bundle = BundleUrl::parse(
        "https://h.example/qcom-multimedia-image-qcs8300-ride-sx.rootfs.qcomflash.tar.gz",
    )
    .unwrap();
    req.artifacts = Artifacts::Bundle(bundle.clone());
    req.lab = Lab::resolve(&req.machine, profile.as_ref(), "master", None, Some(Deploy::Flasher))
        .unwrap();
    let job = job(&req).unwrap();
    assert_eq!(job.device_type, "monaco-ride");
    let Action::Deploy { deploy: DeployAction::Downloads { images, postprocess, .. } } =
        &job.actions[0]
    else {
        panic!("{:?}", job.actions[0]);
    };
    assert_eq!(images["flasher"].url, bundle.url);
    let steps = &postprocess.as_ref().unwrap().docker.steps;
    assert_eq!(
        steps[1..5],
        [
            "cp overlay*.tar.gz overlay.tar.gz",
            "echo \"OVERLAY=overlay.tar.gz\" >> $IMAGE_PATH/flash.settings",
            "echo \"OVERLAY_PATH=/\" >> $IMAGE_PATH/flash.settings",
            // lava-test-plans' flasher_device_type for this board.
            "echo \"DEVICE_TYPE=qcs8300-ride-sx\" >> $IMAGE_PATH/flash.settings",
        ]
    );
    let Action::Deploy { deploy: DeployAction::Flasher { images, .. } } = &job.actions[1] else {
        panic!("{:?}", job.actions[1]);
    };
    assert_eq!(
        images["image"].url,
        "downloads://qcom-multimedia-image-qcs8300-ride-sx.rootfs.qcomflash.tar.gz"
    );
    assert_eq!(images["overlay"].url, "downloads://overlay.tar.gz");
    assert!(!render(&req).unwrap().contains("compression"));
    // --device-type wins over the profile; --deploy qdl needs a profile with stages.
    let lab = Lab::resolve("x", profile.as_ref(), "master", Some("my-type"), None).unwrap();
    assert_eq!((lab.device_type.as_str(), lab.deploy), ("my-type", Deploy::Qdl));
    assert_eq!(
        Lab::resolve("iq-615-evk", None, "master", None, Some(Deploy::Qdl)).unwrap_err(),
        JobError::NoQdlProfile("iq-615-evk".into())
    );
}

/// `--deploy qemu`: LAVA's `qemu` device type whatever board the profile names, the board's
/// prompt, the files QEMU boots, and the board job's test action unchanged.
#[test]
fn a_qemu_job_boots_the_files_and_runs_the_board_jobs_test() {
    let catalog = crate::catalog::Catalog::embedded();
    let profile = catalog.lookup("iq-9075-evk").unwrap().machine.lava.clone();
    let lab =
        Lab::resolve("iq-9075-evk", profile.as_ref(), "master", None, Some(Deploy::Qemu)).unwrap();
    assert_eq!((lab.device_type.as_str(), lab.prompts[0].as_str()), ("qemu", "root@lemans-evk"));
    let lab =
        Lab::resolve("x", profile.as_ref(), "master", Some("qemu-rt"), Some(Deploy::Qemu)).unwrap();
    assert_eq!(lab.device_type, "qemu-rt");

    let mut req = request();
    let mut board_test = test(&req);
    req.lab = Lab::resolve("rb3gen2-core-kit", None, "master", None, Some(Deploy::Qemu)).unwrap();
    assert_eq!(job(&req).unwrap_err(), JobError::QemuNeedsFiles);
    let url = |flag, u| crate::lab::qemu::ImageUrl::parse(flag, u).unwrap();
    req.artifacts = Artifacts::Qemu(QemuImages {
        kernel: url("--kernel-url", "file:///l/vmlinuz"),
        initrd: None,
        rootfs: url("--rootfs-url", "file:///l/rootfs.ext4"),
        kernel_args: vec!["root=/dev/vda".into()],
        arch: crate::lab::qemu::Arch::Amd64,
        cpus: 8,
        login: true,
    });
    let job = job(&req).unwrap();
    assert_eq!(job.device_type, "qemu");
    assert!(matches!(job.actions[0], Action::Deploy { deploy: DeployAction::Tmpfs { .. } }));
    let Action::Boot { boot: Boot::Qemu { auto_login: Some(login), prompts, .. } } =
        &job.actions[1]
    else {
        panic!("{:?}", job.actions[1]);
    };
    assert_eq!(login.username, "root");
    assert_eq!(prompts[0], "root@rb3gen2-core-kit");
    board_test.definitions[0].repository.metadata.devices = vec!["qemu".into()];
    assert_eq!(job.actions[2], Action::test(board_test));
    assert_eq!(job.actions.len(), 3);
    // A board deploy with QEMU files is refused the other way round.
    req.lab = Lab::resolve("rb3gen2-core-kit", None, "master", None, None).unwrap();
    assert_eq!(super::job(&req).unwrap_err(), JobError::BoardNeedsBundle("flasher"));
}

/// The lab's view under meta-qcom wrynose's pin, written by hand from lava-test-plans
/// 62f75dd (`projects/meta-qcom/devices/<machine>` for `flasher_device_type`, the
/// `devices/<machine>` it extends for the device type and `BOOT_OS_PROMPT`; flasher.jinja2).
#[test]
fn wrynose_boards_get_the_flasher_view_of_lava_test_plans_62f75dd() {
    let catalog = crate::catalog::Catalog::embedded();
    for (machine, flasher_type) in [
        ("rb3gen2-core-kit", "qcs6490"),
        ("iq-9075-evk", "iq-9075-evk"),
        ("qcs8300-ride-sx", "qcs8300-ride-sx"),
        ("iq-8275-evk", "iq-8275-evk"),
        ("qcs615-ride", "qcs615-ride"),
        ("qcs9100-ride-sx", "qcs9100-ride-sx"),
        ("iq-x7181-evk", "iq-x7181-evk"),
    ] {
        let profile = catalog.lookup(machine).unwrap().machine.lava.clone();
        let lab = Lab::resolve(machine, profile.as_ref(), "wrynose", None, None).unwrap();
        assert_eq!(lab.device_type, machine);
        assert_eq!(lab.deploy, Deploy::Flasher, "{machine}");
        assert_eq!(lab.prompts[0], format!("root@{machine}"));
        assert_eq!(lab.flasher_device_type, flasher_type);
        assert_eq!(lab.pin.revision, "62f75dda7cc3");
        let mut req = request();
        req.machine = machine.to_string();
        req.lab = lab;
        let steps = match &job(&req).unwrap().actions[0] {
            Action::Deploy { deploy: DeployAction::Downloads { postprocess, .. } } => {
                postprocess.as_ref().unwrap().docker.steps.clone()
            }
            other => panic!("{other:?}"),
        };
        let firehose =
            "echo \"FIREHOSE_PROGRAM=xbl_s_devprg_ns.melf\" >> $IMAGE_PATH/flash.settings";
        assert_eq!(steps.iter().any(|s| s == firehose), machine == "iq-x7181-evk", "{steps:?}");
    }
    // A branch with no known pin gets master's view.
    let profile = catalog.lookup("rb3gen2-core-kit").unwrap().machine.lava.clone();
    let lab = Lab::resolve("rb3gen2-core-kit", profile.as_ref(), "qli-2.0", None, None).unwrap();
    assert_eq!((lab.device_type.as_str(), lab.pin.branch), ("qcs6490-rb3gen2", "master"));
}

#[test]
fn overlay_path_only_for_lava_releases_that_read_it() {
    let catalog = crate::catalog::Catalog::embedded();
    let profile = catalog.lookup("rb3gen2-core-kit").unwrap().machine.lava.clone();
    let mut req = request();
    req.lab = Lab::resolve("rb3gen2-core-kit", profile.as_ref(), "master", None, None).unwrap();
    let overlay = |req: &JobRequest| match &job(req).unwrap().actions[0] {
        Action::Deploy { deploy: DeployAction::Qdl { overlay_path, .. } } => overlay_path.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(overlay(&req), None);
    req.lava_version = LavaVersion::parse("2026.06").unwrap();
    assert_eq!(overlay(&req).as_deref(), Some("/home"));
    req.lava_version = LavaVersion::parse("2025.10").unwrap();
    assert_eq!(job(&req).unwrap_err(), JobError::QdlNeedsNewerLava(req.lava_version));
    req.lava_version = LavaVersion::CURRENT;
    req.artifacts = Artifacts::Bundle(BundleUrl::parse("https://h/b.qcomflash.tar.zst").unwrap());
    assert_eq!(job(&req).unwrap_err(), JobError::QdlNeedsGzip("b.qcomflash.tar.zst".into()));
    assert_eq!(LavaVersion::parse("2026.07.1").unwrap(), LavaVersion::CURRENT);
    for bad in ["2026", "2026.7", "26.07", "2026.13", "2026.07.", "2026.07.1.2", "x.07", ""] {
        assert!(matches!(LavaVersion::parse(bad), Err(JobError::LavaVersion(_))), "{bad}");
    }
}

#[test]
fn download_headers_reach_the_qcomflash_download_and_never_the_metadata() {
    let catalog = crate::catalog::Catalog::embedded();
    let profile = catalog.lookup("rb3gen2-core-kit").unwrap().machine.lava.clone();
    let mut req = request();
    req.lab = Lab::resolve("rb3gen2-core-kit", profile.as_ref(), "master", None, None).unwrap();
    req.headers =
        vec![DownloadHeader::new("QLIAuthorization", "LAB_TOKEN", Some("Bearer s3cr3t")).unwrap()];
    let job = job(&req).unwrap();
    let Action::Deploy { deploy: DeployAction::Qdl { qcomflash, .. } } = &job.actions[0] else {
        panic!("{:?}", job.actions[0]);
    };
    assert_eq!(qcomflash.headers["QLIAuthorization"], "Bearer s3cr3t");
    assert_eq!(
        job.metadata["rtbuild.download-headers"],
        ContextValue::Text("QLIAuthorization".into())
    );
    assert!(!format!("{:?}", job.metadata).contains("s3cr3t"));
    // The flasher deploy sends them with the download.
    req.lab = Lab::resolve("rb3gen2-core-kit", profile.as_ref(), "wrynose", None, None).unwrap();
    let Action::Deploy { deploy: DeployAction::Downloads { images, .. } } =
        &super::job(&req).unwrap().actions[0]
    else {
        panic!()
    };
    assert_eq!(images["flasher"].headers["QLIAuthorization"], "Bearer s3cr3t");
    // Bad flags and values.
    assert_eq!(
        DownloadHeader::parse_flag("QLIAuthorization=LAB_TOKEN").unwrap(),
        ("QLIAuthorization".to_string(), "LAB_TOKEN".to_string())
    );
    for bad in ["QLIAuthorization", "=X", "A B=X", "A=1X", "A=X-Y", "A:=X", "A=$(id)"] {
        assert!(matches!(DownloadHeader::parse_flag(bad), Err(JobError::HeaderFlag(_))), "{bad}");
    }
    for (value, empty) in [(None, true), (Some(""), true), (Some("a\r\nX-Evil: 1"), false)] {
        assert_eq!(
            DownloadHeader::new("H", "V", value).unwrap_err(),
            JobError::HeaderValue { name: "H".into(), var: "V".into(), empty }
        );
    }
}
