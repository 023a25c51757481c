//! `rtbuild bundle` over a deploy folder laid out as meta-qcom's `image_types_qcom` leaves it:
//! the timestamped qcomflash folder, its relative symlink, the `.tar.gz` and its symlink.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::fixtures::{git, git_commit_all, write};
use crate::support::harness::Test;
use crate::support::project::generated;

const MACHINE: &str = "rb3gen2-core-kit";
const IMAGE: &str = "core-image-base";
const DATETIME: &str = "20260101120000";
const TOP: &str = "core-image-base-rb3gen2-core-kit";

/// A generated build folder with a deploy folder, a kernel `.config`, repo checkouts and a lock.
struct Build {
    dir: tempfile::TempDir,
}

impl Build {
    fn new() -> Build {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        Test::new()
            .cwd(root)
            .args(["generate", "--machine", MACHINE, "--distro", "nodistro"])
            .run()
            .ignore_stdout()
            .stderr_is(&generated(
                &format!("{MACHINE} (RT CPUs 7, housekeeping 0-6, nodistro, core-image-base)"),
                MACHINE,
                &root.join(format!("rtbuild/{MACHINE}")).display().to_string(),
                &[],
            ))
            .success();
        let deploy = root.join(format!("work/build/tmp/deploy/images/{MACHINE}"));
        let folder = format!("{TOP}.rootfs-{DATETIME}.qcomflash");
        let q = deploy.join(&folder);
        let files: &[(&str, &[u8])] = &[
            ("efi.bin", b"ESP vfat with systemd-boot and the UKI"),
            ("dtb.bin", b"dtb vfat"),
            ("rootfs.img", &[0x53, 0xef, 0, 1, 2, 3, 4, 5, 6, 7]),
            (
                "rawprogram0.xml",
                b"<?xml version=\"1.0\"?><data><program filename=\"rootfs.img\"/></data>\n",
            ),
            ("patch0.xml", b"<?xml version=\"1.0\"?><patches/>\n"),
            ("prog_firehose_ddr.elf", b"\x7fELF firehose"),
            ("gpt_main0.bin", b"EFI PART main"),
            ("gpt_backup0.bin", b"EFI PART backup"),
            ("zeros_5sectors.bin", &[0; 2560]),
            ("xbl_config.elf", b"\x7fELF xbl_config"),
            ("uefi.elf", b"\x7fELF uefi"),
            ("contents.xml", b"<contents/>\n"),
            ("sail_nor/sail.mbn", b"sail"),
        ];
        for (name, bytes) in files {
            let path = q.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(target, deploy.join(name)).unwrap();
        };
        link(&folder, &format!("{TOP}.rootfs.qcomflash"));
        let tarball = format!("{folder}.tar.gz");
        let status = Command::new("tar")
            .args(["-czf", &tarball, &folder])
            .current_dir(&deploy)
            .status()
            .unwrap();
        assert!(status.success());
        link(&tarball, &format!("{TOP}.rootfs.qcomflash.tar.gz"));
        write(
            &root
                .join("work/build/tmp/work/qcm6490-qcom-linux/linux-qcom-rt/6.18.37/build/.config"),
            "CONFIG_PREEMPT_RT=y\n",
        );
        for repo in ["oe-core", "meta-qcom"] {
            write(&root.join(format!("work/{repo}/README")), &format!("{repo}\n"));
            git_commit_all(&root.join(format!("work/{repo}")), &format!("{repo} fixture"));
        }
        write(&root.join("work/meta-qcom/README"), "local edit\n");
        let oe = git(&root.join("work/oe-core"), &["rev-parse", "HEAD"]);
        write(
            &root.join(format!("rtbuild/{MACHINE}/{MACHINE}-rt.lock.yml")),
            &format!(
                "header:\n  version: 14\noverrides:\n  repos:\n    oe-core:\n      commit: {}\n",
                oe.trim()
            ),
        );
        write(
            &root.join("passed.json"),
            r#"{"passed": true, "reports": [{"checks": [{"check": "CONFIG_PREEMPT_RT", "status": "pass"}]}]}"#,
        );
        write(
            &root.join("failed.json"),
            r#"{"passed": false, "reports": [{"checks": [{"check": "CONFIG_PREEMPT_RT", "status": "fail"}, {"check": "cmdline isolcpus", "status": "pass"}]}]}"#,
        );
        Build { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn rtbuild<I: IntoIterator<Item = S>, S: Into<std::ffi::OsString>>(&self, args: I) -> Test {
        Test::new().cwd(self.root()).env("KAS_WORK_DIR", self.root().join("work")).args(args)
    }

    /// Bundles into `out` with the passing verify report, `files` files in all (no warning);
    /// returns the archive path.
    fn bundle(&self, out: &str, files: usize) -> PathBuf {
        let run = self
            .rtbuild([
                "bundle",
                "--machine",
                MACHINE,
                "--out",
                out,
                "--verify-report",
                "passed.json",
            ])
            .run()
            .stderr_redacted_is(size_redacted, &bundled(files))
            .success();
        self.root().join(run.stdout().lines().next().unwrap())
    }
}

/// The `Bundling` and `Bundled` lines of a bundle of `files` files, its size written `[BYTES]`.
fn bundled(files: usize) -> String {
    format!(
        "    Bundling {TOP}\n     Bundled {files} files with the manifest and SHA256SUMS, [BYTES] \
         bytes\n"
    )
}

/// `rtbuild bundle`'s stderr with the archive's compressed size written `[BYTES]`: these tests
/// are not about zstd's output.
fn size_redacted(stderr: &str) -> String {
    stderr
        .lines()
        .map(|line| {
            let size = line.strip_suffix(" bytes").and_then(|l| l.rsplit_once(", "));
            match size {
                Some((head, n))
                    if line.starts_with("     Bundled ")
                        && !n.is_empty()
                        && n.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    format!("{head}, [BYTES] bytes\n")
                }
                _ => format!("{line}\n"),
            }
        })
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn bundle_records_everything_checks_clean_and_is_byte_identical() {
    let build = Build::new();
    let a = build.bundle("out-a", 23);
    assert_eq!(a, build.root().join(format!("out-a/{TOP}-{DATETIME}.qcomflash.tar.zst")));
    let b = build.bundle("out-b", 23);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&a).unwrap().permissions().mode();
    assert_eq!(mode & 0o044, 0o044, "archive must be readable by others: {mode:o}");
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), "bundles differ");

    let beside = build.root().join(format!("out-a/{TOP}-{DATETIME}.qcomflash.manifest.json"));
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&beside).unwrap()).unwrap();
    assert_eq!(m["machine"], MACHINE);
    assert_eq!(m["image"], IMAGE);
    assert_eq!(m["build_time"]["value"], "2026-01-01T12:00:00Z");
    assert_eq!(m["kernel"]["version"], "6.18.37");
    assert_eq!(m["kernel"]["config_sha256"], sha256(b"CONFIG_PREEMPT_RT=y\n"));
    assert!(m["kernel"]["cmdline"].as_str().unwrap().contains("isolcpus="), "{m}");
    assert_eq!(m["verify"]["status"], "passed");
    assert_eq!(m["rtbuild_version"], env!("CARGO_PKG_VERSION"));
    assert!(m["lock"]["content"].as_str().unwrap().contains("oe-core:"), "{m}");
    let repos = m["repos"].as_array().unwrap();
    let repo = |name: &str| repos.iter().find(|r| r["name"] == name).unwrap().clone();
    assert_eq!(repo("meta-qcom")["dirty"], true);
    assert_eq!(repo("oe-core")["dirty"], false);
    assert_eq!(repo("oe-core")["branch"], "wrynose");
    let files = m["files"].as_array().unwrap();
    let raw = files.iter().find(|f| f["path"] == "rawprogram0.xml").unwrap();
    assert_eq!(
        raw["sha256"],
        sha256(b"<?xml version=\"1.0\"?><data><program filename=\"rootfs.img\"/></data>\n")
    );
    assert!(files.iter().any(|f| f["path"] == "sail_nor/sail.mbn"), "{m}");
    let text = m.to_string();
    assert!(!text.contains(&build.root().display().to_string()), "host path in manifest: {text}");

    // Inside: sorted, root-owned, fixed mtime and modes, README with the qdl command.
    let decoder = zstd::stream::read::Decoder::new(std::fs::File::open(&a).unwrap()).unwrap();
    let mut archive = tar::Archive::new(decoder);
    let mut names = Vec::new();
    let mut readme = String::new();
    let mut regular_files = 0;
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let h = entry.header();
        regular_files += usize::from(h.entry_type().is_file());
        assert_eq!((h.uid().unwrap(), h.gid().unwrap(), h.mtime().unwrap()), (0, 0, 0));
        assert_eq!(h.username().unwrap(), Some(""));
        let name = entry.path().unwrap().display().to_string();
        if name.ends_with("README.md") {
            std::io::Read::read_to_string(&mut entry, &mut readme).unwrap();
        }
        names.push(name);
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(names.contains(&format!("{TOP}/manifest.json")));
    assert!(names.contains(&format!("{TOP}/SHA256SUMS")));
    assert!(
        readme.contains("qdl --debug prog_firehose_ddr.elf rawprogram*.xml patch*.xml"),
        "{readme}"
    );
    assert!(readme.contains("--serial") && readme.contains("EDL"), "{readme}");

    // `bundle` and `--check` count the same files, and both lines say what: the archive holds
    // them beside the manifest and SHA256SUMS (counted from the archive itself).
    let listed = regular_files - 2;
    assert_eq!(listed, 23, "{names:?}");
    build
        .rtbuild(["bundle", "--check", a.to_str().unwrap()])
        .run()
        .success()
        .stdout_is("")
        .stderr_is(&format!("     Checked {listed} files against the manifest and SHA256SUMS\n"));
    // sha256sum -c agrees inside the unpacked folder.
    let x = build.root().join("x");
    std::fs::create_dir_all(&x).unwrap();
    assert!(
        Command::new("tar")
            .args(["--zstd"])
            .arg("-xf")
            .arg(&a)
            .arg("-C")
            .arg(&x)
            .status()
            .unwrap()
            .success()
    );
    let sums = Command::new("sha256sum")
        .args(["-c", "--quiet", "SHA256SUMS"])
        .current_dir(x.join(TOP))
        .status()
        .unwrap();
    assert!(sums.success());
}

#[test]
fn check_names_a_changed_a_deleted_and_an_added_file() {
    let build = Build::new();
    let archive = build.bundle("out", 23);
    let x = build.root().join("x");
    std::fs::create_dir_all(&x).unwrap();
    let tar = |args: &[&str]| {
        assert!(Command::new("tar").args(args).current_dir(&x).status().unwrap().success());
    };
    tar(&["--zstd", "-xf", archive.to_str().unwrap()]);
    let top = x.join(TOP);
    let mut rootfs = std::fs::read(top.join("rootfs.img")).unwrap();
    rootfs[3] ^= 0xff;
    std::fs::write(top.join("rootfs.img"), rootfs).unwrap();
    std::fs::remove_file(top.join("patch0.xml")).unwrap();
    std::fs::write(top.join("extra.bin"), b"not from the build").unwrap();
    tar(&["--zstd", "-cf", "bad.tar.zst", TOP]);

    let run = build.rtbuild(["bundle", "--check", "x/bad.tar.zst"]).run().code_is(1);
    let out = run.stdout();
    assert!(out.contains("changed    rootfs.img"), "{out}");
    assert!(out.contains("missing    patch0.xml"), "{out}");
    assert!(out.contains("extra      extra.bin"), "{out}");
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(run.stderr().contains("3 problems in x/bad.tar.zst"), "{}", run.stderr());

    let json = build
        .rtbuild(["--json", "bundle", "--check", "x/bad.tar.zst"])
        .run()
        .stderr_is("warning: 3 problems in x/bad.tar.zst\n")
        .code_is(1)
        .json();
    assert_eq!(json["passed"], false);
    assert_eq!(json["problems"].as_array().unwrap().len(), 3);

    // A manifest beside the archive that no longer matches the one inside.
    let beside = build.root().join(format!("out/{TOP}-{DATETIME}.qcomflash.manifest.json"));
    std::fs::write(&beside, b"{}").unwrap();
    build
        .rtbuild(["bundle", "--check", archive.to_str().unwrap()])
        .run()
        .stderr_is(&format!("warning: 1 problem in {}\n", archive.display()))
        .code_is(1)
        .stdout_contains("differs from the manifest inside the archive");
}

#[test]
fn refuses_unverified_or_failed_builds_unless_allowed() {
    let build = Build::new();
    build
        .rtbuild(["bundle", "--machine", MACHINE, "--out", "out"])
        .run()
        .usage_error("no verify result for this build; pass --verify-report FILE (written by `rtbuild verify --json`), or --allow-unverified to bundle anyway and say so in the manifest")
        .nothing_written("out");
    let run = build
        .rtbuild(["bundle", "--machine", MACHINE, "--out", "out", "--verify-report", "failed.json"])
        .run()
        .code_is(1);
    assert_eq!(
        run.stderr(),
        "error: verification failed (CONFIG_PREEMPT_RT); fix the build, or pass --allow-unverified to bundle it anyway and say so in the manifest\n"
    );
    let run = run.nothing_written("out");
    drop(run);
    let run = build
        .rtbuild([
            "--json",
            "bundle",
            "--machine",
            MACHINE,
            "--out",
            "out",
            "--verify-report",
            "failed.json",
            "--allow-unverified",
        ])
        .run()
        .success();
    let m = &run.json()["manifest"];
    assert_eq!(m["verify"]["status"], "failed");
    assert_eq!(m["verify"]["allowed_unverified"], true);
    assert!(run.stderr().contains("warning: bundled with --allow-unverified"), "{}", run.stderr());
}

#[test]
fn bad_bundle_inputs_are_clear_errors() {
    let build = Build::new();
    build
        .rtbuild(["bundle", "--machine", MACHINE, "--image", "qcom-console-image", "--allow-unverified", "--out", "out"])
        .run()
        .code_is(2)
        .stderr_contains("error: no qcomflash output at ")
        .stderr_contains("rb3gen2-core-kit/qcom-console-image-rb3gen2-core-kit.rootfs.qcomflash; build the image first")
        .nothing_written("out");
    write(&build.root().join("bad-verify.json"), "{\"ok\": true}");
    let cases: [(&[&str], &str); 3] = [
        (
            &["--verify-report", "bad-verify.json"],
            "cannot read verify report bad-verify.json: no boolean `passed` field; pass the file `rtbuild verify --json` wrote",
        ),
        (
            &["--verify-report", "missing.json"],
            "cannot read verify report missing.json: `missing.json` does not exist; check the path",
        ),
        (
            &["--allow-unverified", "--source-date-epoch", "yesterday"],
            "`yesterday` is not a valid SOURCE_DATE_EPOCH; use whole seconds since 1970",
        ),
    ];
    for (extra, message) in cases {
        let mut args = vec!["bundle", "--machine", MACHINE, "--out", "out"];
        args.extend(extra);
        build.rtbuild(args).run().usage_error(message).nothing_written("out");
    }
    build
        .rtbuild(["bundle", "--check", "nope.tar.zst"])
        .run()
        .usage_error("nope.tar.zst is not a bundle rtbuild can read: no such file; pass a .tar.zst or .tar.gz made by `rtbuild bundle`");
    build.rtbuild(["bundle", "--check", "."]).run().usage_error(
        ". is not a bundle rtbuild can read: it is a folder; pass the .tar.zst (or .tar.gz) archive `rtbuild bundle` wrote",
    );
    std::fs::write(build.root().join("junk.tar.zst"), b"junk").unwrap();
    build
        .rtbuild(["bundle", "--check", "junk.tar.zst"])
        .run()
        .stderr_is("warning: 1 problem in junk.tar.zst\n")
        .code_is(1)
        .stdout_contains("archive");
}

/// The real `rtbuild verify --json` output is what `bundle --verify-report` reads: Debian's RT
/// kernel config passes and is bundled, the non-RT one is refused, naming the failed check.
#[test]
fn bundle_reads_real_verify_json() {
    let build = Build::new();
    for (config, name) in [("rt", "rt.json"), ("none", "none.json")] {
        let path = format!("/usr/src/linux-config-6.12/config.amd64_{config}_amd64.xz");
        let run = build
            // Debian's amd64 config stands in for the shipped kernel: checked against the
            // board's CPU plan, not its arm64 plan (an amd64 kernel fails that, issue 39).
            .rtbuild(["--json", "verify", "--rt-cpus", "7", "--housekeeping", "0-6"])
            .args(["--kernel-config", &path])
            .run();
        // The non-RT config fails verification, said in one line; its report is still written.
        let run = if config == "rt" {
            run.success().stderr_is("")
        } else {
            run.code_is(1).stderr_is(&format!(
                "warning: 1 of 3 checks failed for {path} (status `fail` in the JSON on stdout)\n"
            ))
        };
        std::fs::write(build.root().join(name), run.stdout()).unwrap();
    }
    let run = build
        .rtbuild([
            "--json",
            "bundle",
            "--machine",
            MACHINE,
            "--out",
            "out",
            "--verify-report",
            "rt.json",
        ])
        .run()
        .stderr_redacted_is(size_redacted, &bundled(23))
        .success();
    let m = &run.json()["manifest"];
    assert_eq!(m["verify"]["status"], "passed");
    // The kernel config's sha256 comes from the verify report: the uncompressed config's own.
    let xz = std::fs::read("/usr/src/linux-config-6.12/config.amd64_rt_amd64.xz").unwrap();
    let mut config = Vec::new();
    std::io::Read::read_to_end(&mut liblzma::read::XzDecoder::new(xz.as_slice()), &mut config)
        .unwrap();
    assert_eq!(
        m["kernel"]["config_sha256"],
        crate::support::fixtures::sha256_hex(&config).as_str()
    );
    assert!(
        m["verify"]["checks"].as_array().unwrap().iter().any(|c| c["check"] == "CONFIG_PREEMPT_RT")
    );
    let run = build
        .rtbuild(["bundle", "--machine", MACHINE, "--out", "out2", "--verify-report", "none.json"])
        .run()
        .code_is(1)
        .nothing_written("out2");
    assert!(
        run.stderr().contains("error: verification failed (CONFIG_PREEMPT_RT"),
        "{}",
        run.stderr()
    );
}

#[test]
fn source_date_epoch_sets_every_mtime() {
    let build = Build::new();
    let run = build
        .rtbuild(["bundle", "--machine", MACHINE, "--out", "out", "--allow-unverified"])
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .run()
        .stderr_redacted_is(size_redacted, &format!("    Bundling {TOP}\nwarning: bundled with --allow-unverified (verify: unverified); the manifest says so\n     Bundled 22 files with the manifest and SHA256SUMS, [BYTES] bytes\n"))
        .success();
    let archive = build.root().join(run.stdout().lines().next().unwrap());
    let decoder = zstd::stream::read::Decoder::new(std::fs::File::open(&archive).unwrap()).unwrap();
    let mut tar = tar::Archive::new(decoder);
    let mtimes: std::collections::BTreeSet<u64> =
        tar.entries().unwrap().map(|e| e.unwrap().header().mtime().unwrap()).collect();
    assert_eq!(mtimes.into_iter().collect::<Vec<_>>(), [1_700_000_000]);
    // The folder name's DATETIME stays the build time.
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(build.root().join(format!("out/{TOP}-{DATETIME}.qcomflash.manifest.json")))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(m["build_time"]["source"], "qcomflash folder name");
    assert_eq!(m["verify"]["status"], "unverified");
}

/// A verify report for the deployed kernel, with its version string and command line.
fn verify_report(root: &Path, name: &str, cmdline: &str) {
    let report = serde_json::json!({
        "passed": true,
        "kernel_version": "6.18.37-rt (oe@b) #1 SMP PREEMPT_RT Tue Jul 1",
        "cmdline": cmdline,
        "reports": [{"checks": [{"check": "CONFIG_PREEMPT_RT", "status": "pass"}]}],
    });
    write(&root.join(name), &report.to_string());
}

/// An `rtbuild test` result folder whose target ran `uname` and measured `max` per scenario.
fn run_dir(root: &Path, name: &str, uname: &str, max: &[(&str, i64)]) {
    let scenarios: Vec<serde_json::Value> =
        max.iter().map(|(s, m)| serde_json::json!({"name": s, "max_us": m})).collect();
    let run = serde_json::json!({"schema": 1, "target": "ssh://root@rb3", "state": "finished",
        "fingerprint": {"uname": uname}, "scenarios": scenarios});
    write(&root.join(format!("{name}/run.json")), &run.to_string());
}

/// Deploys an SBOM and a VEX written by oe-core's SPDX model, as BitBake links them.
fn deploy_documents(root: &Path, stamp: &str, spec: &crate::support::spdx_fixture::Spec) {
    let deploy = root.join(format!("work/build/tmp/deploy/images/{MACHINE}"));
    for doc in ["spdx.json", "sbom-cve-check.spdx.json"] {
        let link = deploy.join(format!("{TOP}.rootfs.{doc}"));
        let _ = std::fs::remove_file(&link);
    }
    let sbom = deploy.join(format!("{TOP}.rootfs-{stamp}.spdx.json"));
    let vex = deploy.join(format!("{TOP}.rootfs-{stamp}.sbom-cve-check.spdx.json"));
    crate::support::spdx_fixture::make(spec, &sbom, Some(&vex));
    for doc in ["spdx.json", "sbom-cve-check.spdx.json"] {
        std::os::unix::fs::symlink(
            format!("{TOP}.rootfs-{stamp}.{doc}"),
            deploy.join(format!("{TOP}.rootfs.{doc}")),
        )
        .unwrap();
    }
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

fn vex(items: &[(&str, &str, &str)]) -> Vec<(String, (String, String))> {
    items.iter().map(|(c, s, v)| (c.to_string(), (s.to_string(), v.to_string()))).collect()
}

/// Two releases of one board: the bundle carries the SBOM, VEX, plan, verdict, lock and a
/// measurement checked to be of this kernel; `--diff` names what changed between them; the
/// bundle stays byte-identical; a tampered release file is named by `--check`.
#[test]
fn release_bundles_carry_the_evidence_and_diff_names_every_change() {
    use crate::support::spdx_fixture::Spec;
    let build = Build::new();
    let root = build.root();
    let old_spec = Spec {
        kernel_config: pairs(&[
            ("CONFIG_PREEMPT_RT", "y"),
            ("CONFIG_HZ", "250"),
            ("CONFIG_KASAN", "y"),
        ]),
        packages: pairs(&[("busybox", "1.36.1"), ("rt-tests", "2.8"), ("strace", "6.1")]),
        vex: vex(&[
            ("CVE-2026-0001", "affected", "critical"),
            ("CVE-2026-0002", "affected", "high"),
        ]),
    };
    deploy_documents(root, "20260101120000", &old_spec);
    verify_report(root, "v-old.json", "isolcpus=7 nohz_full=7 efi=runtime");
    let uname = "Linux rb3 6.18.37-rt #1 SMP PREEMPT_RT Tue Jul 1 aarch64 GNU/Linux";
    run_dir(root, "run-old", uname, &[("idle", 41), ("stress", 88)]);
    run_dir(
        root,
        "run-other",
        "Linux rb3 6.18.30 #3 SMP PREEMPT Mon Jun 1 aarch64",
        &[("idle", 9)],
    );

    let bundle = |out: &str, verify: &str, run: &str| {
        let run = build
            .rtbuild(["bundle", "--machine", MACHINE, "--out", out, "--verify-report", verify])
            .args(["--measurement", run])
            .env("SOURCE_DATE_EPOCH", "1767225600")
            .run()
            .stderr_redacted_is(size_redacted, &format!("warning: {}/run.json records no kernel config digest (written by an older rtbuild, or the target has neither /proc/config.gz nor /boot/config-$(uname -r)): the measurement is bound to this image by kernel release and version only; run `rtbuild test` again to bind it by config too\n{}", root.join(run).display(), bundled(26)))
            .success();
        root.join(run.stdout().lines().next().unwrap())
    };
    // A measurement of another kernel is refused before anything is packed.
    build
        .rtbuild(["bundle", "--machine", MACHINE, "--out", "refused", "--verify-report", "v-old.json"])
        .args(["--measurement", "run-other"])
        .run()
        .code_is(1)
        .stdout_is("")
        .stderr_is(&format!(
            "error: cannot bundle {}: the run measured `Linux rb3 6.18.30 #3 SMP PREEMPT Mon Jun 1 aarch64`, \
             not this image's kernel 6.18.37-rt #1 SMP PREEMPT_RT Tue Jul 1; pass the result folder \
             of an `rtbuild test` run on this image\n",
            root.join("run-other/run.json").display()
        ));
    assert!(!root.join("refused").exists());

    let old = bundle("old", "v-old.json", "run-old");
    assert_eq!(
        std::fs::read(&old).unwrap(),
        std::fs::read(bundle("old-again", "v-old.json", "run-old")).unwrap()
    );
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join(format!("old/{TOP}-{DATETIME}.qcomflash.manifest.json"))).unwrap(),
    )
    .unwrap();
    let roles: Vec<(&str, &str)> = manifest["release"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["role"].as_str().unwrap(), r["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        roles,
        [
            (
                "vex",
                "release/core-image-base-rb3gen2-core-kit.rootfs-20260101120000.sbom-cve-check.spdx.json"
            ),
            ("sbom", "release/core-image-base-rb3gen2-core-kit.rootfs-20260101120000.spdx.json"),
            ("measurement", "release/measurement/run.json"),
            ("lock", "release/rb3gen2-core-kit-rt.lock.yml"),
            // The generated layer, so the bundle rebuilds (issue 38 item 3; no kas dump here,
            // so no rebuild kas file: bundle_rebuild.rs has both).
            ("rebuild-layer", "release/rebuild/meta-rtbuild/conf/layer.conf"),
            (
                "rebuild-layer",
                "release/rebuild/meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/rtbuild-rt.cfg"
            ),
            (
                "rebuild-layer",
                "release/rebuild/meta-rtbuild/recipes-kernel/linux/linux-qcom-rt_6.18.bbappend"
            ),
            (
                "rebuild-layer",
                "release/rebuild/meta-rtbuild/recipes-rt/rtbuild-tune/files/rtbuild-tune.service"
            ),
            (
                "rebuild-layer",
                "release/rebuild/meta-rtbuild/recipes-rt/rtbuild-tune/files/rtbuild-tune.sh"
            ),
            (
                "rebuild-layer",
                "release/rebuild/meta-rtbuild/recipes-rt/rtbuild-tune/rtbuild-tune_1.0.bb"
            ),
            ("plan", "release/rtbuild-plan.json"),
            ("verify", "release/verify.json"),
        ]
    );
    let sbom_sha = manifest["release"][1]["sha256"].as_str().unwrap();
    let sbom_bytes = std::fs::read(root.join(format!(
        "work/build/tmp/deploy/images/{MACHINE}/{TOP}.rootfs-20260101120000.spdx.json"
    )))
    .unwrap();
    assert_eq!(sbom_sha, sha256(&sbom_bytes));
    build
        .rtbuild(["bundle", "--check"])
        .arg_path(&old)
        .run()
        .stderr_contains("files against the manifest and SHA256SUMS")
        .success()
        .stdout_is("unpatched CVEs: 2 (critical 1, high 1)\n");

    // The next release: the kernel config, packages, CVEs, a repo, the command line and the
    // latency all moved.
    let new_spec = Spec {
        kernel_config: pairs(&[
            ("CONFIG_PREEMPT_RT", "y"),
            ("CONFIG_HZ", "1000"),
            ("CONFIG_NO_HZ_FULL", "y"),
        ]),
        packages: pairs(&[("busybox", "1.37.0"), ("rt-tests", "2.8"), ("stress-ng", "0.18.06")]),
        vex: vex(&[
            ("CVE-2026-0001", "fixed", "critical"),
            ("CVE-2026-0002", "affected", "high"),
            ("CVE-2026-0003", "affected", "medium"),
        ]),
    };
    deploy_documents(root, "20260201120000", &new_spec);
    verify_report(root, "v-new.json", "isolcpus=7 nohz_full=7 efi=runtime threadirqs");
    run_dir(root, "run-new", uname, &[("idle", 38), ("stress", 120)]);
    write(&root.join("work/oe-core/NEWS"), "next\n");
    git_commit_all(&root.join("work/oe-core"), "oe-core next");
    let new = bundle("new", "v-new.json", "run-new");

    let json = build
        .rtbuild(["--json", "bundle", "--diff"])
        .arg_path(&old)
        .arg_path(&new)
        .run()
        .success()
        .json();
    assert_eq!(json["schema"], 1);
    let names = |key: &str| -> Vec<String> {
        json[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("repos"), ["oe-core"]);
    assert_eq!(names("kernel_config"), ["CONFIG_HZ", "CONFIG_KASAN", "CONFIG_NO_HZ_FULL"]);
    assert_eq!(json["kernel_config"][0]["old"], "250");
    assert_eq!(json["kernel_config"][0]["new"], "1000");
    assert_eq!(json["kernel_config"][1]["new"], serde_json::Value::Null);
    assert_eq!(names("packages"), ["busybox", "strace", "stress-ng"]);
    assert_eq!(json["cves"]["fixed"], serde_json::json!(["CVE-2026-0001"]));
    assert_eq!(json["cves"]["new"], serde_json::json!(["CVE-2026-0003"]));
    assert_eq!(names("cmdline"), ["threadirqs"]);
    assert_eq!(
        json["latency"],
        serde_json::json!([
            {"scenario": "idle", "old_max_us": 41.0, "new_max_us": 38.0, "old_p999_us": null, "new_p999_us": null},
            {"scenario": "stress", "old_max_us": 88.0, "new_max_us": 120.0, "old_p999_us": null, "new_p999_us": null}
        ])
    );
    let text = build.rtbuild(["bundle", "--diff"]).arg_path(&old).arg_path(&new).run().success();
    text.stdout_contains("  ~ CONFIG_HZ 250 -> 1000\n")
        .stdout_contains("  - CONFIG_KASAN y\n")
        .stdout_contains("  + stress-ng 0.18.06\n")
        .stdout_contains("CVEs fixed: CVE-2026-0001\nCVEs new: CVE-2026-0003\n")
        .stdout_contains("boot arguments:\n  + threadirqs\n")
        .stdout_contains("  stress: max 88 -> 120, p99.9 - -> -\n");

    // A tampered SBOM inside the bundle is named.
    let x = root.join("x");
    std::fs::create_dir_all(&x).unwrap();
    let tar = |args: &[&str]| {
        assert!(Command::new("tar").args(args).current_dir(&x).status().unwrap().success());
    };
    tar(&["--zstd", "-xf", new.to_str().unwrap()]);
    let sbom = x.join(format!("{TOP}/release/{TOP}.rootfs-20260201120000.spdx.json"));
    let mut text = std::fs::read_to_string(&sbom).unwrap();
    text = text.replace("1.37.0", "1.37.9");
    std::fs::write(&sbom, text).unwrap();
    tar(&["--zstd", "-cf", "bad.tar.zst", TOP]);
    let run = build.rtbuild(["bundle", "--check", "x/bad.tar.zst"]).run().code_is(1);
    run.stderr_contains("1 problem in x/bad.tar.zst").stdout_contains(&format!(
        "changed    release/{TOP}.rootfs-20260201120000.spdx.json sha256 "
    ));
    // Diffing a file that is not a bundle is one clear line.
    build
        .rtbuild(["bundle", "--diff", "nothing.tar.zst"])
        .arg_path(&new)
        .run()
        .usage_error("nothing.tar.zst is not a bundle rtbuild can read: no such file; pass a .tar.zst or .tar.gz made by `rtbuild bundle`");
}

#[test]
fn bundle_with_nothing_built_says_to_run_image_first() {
    let test = Test::new();
    let dir = test.path().join("rtbuild/rb3gen2-core-kit");
    test.args(["bundle", "--machine", "qcs6490-rb3gen2"]).run().code_is(2).stderr_is(&format!(
        "error: nothing is built for rb3gen2-core-kit (no {}); run `rtbuild image --machine rb3gen2-core-kit` first, or pass --dir DIR where it generated\n",
        dir.display()
    ));
}

/// Issue 23 item 6: the manifest beside the archive as a link to `/dev/zero` (or a FIFO) was
/// read until it failed, the failure ignored, and the check said "match", exit 0. A read
/// failure is never a match.
#[test]
fn check_fails_when_the_manifest_beside_cannot_be_read() {
    let build = Build::new();
    let archive = build.bundle("out", 23);
    let beside = build.root().join(format!("out/{TOP}-{DATETIME}.qcomflash.manifest.json"));
    for (kind, said) in
        [("zero", "is a character device, not a file"), ("fifo", "is a FIFO, not a file")]
    {
        std::fs::remove_file(&beside).unwrap();
        match kind {
            "zero" => std::os::unix::fs::symlink("/dev/zero", &beside).unwrap(),
            _ => rustix::fs::mkfifoat(
                rustix::fs::CWD,
                &beside,
                rustix::fs::Mode::from_raw_mode(0o644),
            )
            .unwrap(),
        }
        let run = build
            .rtbuild(["bundle", "--check", archive.to_str().unwrap()])
            .within_secs(30)
            .run()
            .stderr_is(&format!("warning: 1 problem in {}\n", archive.display()))
            .code_is(1);
        let out = run.stdout();
        assert!(out.starts_with("manifest ") && out.contains(said), "{kind}: {out}");
    }
}

/// Issue 23 item 7: a symlink in the qcomflash folder to a file outside the build (the
/// adversarial pass used `/etc/shadow`) was followed and packed as `secret.img`. Refused now,
/// naming the link and its target, unless `--follow-external-links`; a link into the deploy
/// folder is fine; a file the build user cannot read is never packed.
#[test]
fn bundle_refuses_links_out_of_the_build_and_files_the_build_user_cannot_read() {
    use std::os::unix::fs::PermissionsExt;
    let build = Build::new();
    let deploy = build.root().join(format!("work/build/tmp/deploy/images/{MACHINE}"));
    let q = deploy.join(format!("{TOP}.rootfs-{DATETIME}.qcomflash"));
    write(&deploy.join("Image-extra.bin"), "in the deploy folder\n");
    std::os::unix::fs::symlink("../Image-extra.bin", q.join("extra.bin")).unwrap();
    let secret = build.root().join("secret");
    write(&secret, "root:$y$hash\n");
    std::os::unix::fs::symlink(&secret, q.join("secret.img")).unwrap();
    let args = ["bundle", "--machine", MACHINE, "--out", "out", "--verify-report", "passed.json"];
    build.rtbuild(args).run().code_is(2).stdout_is("").stderr_contains(&format!(
        "\nerror: {} is a symlink to `{}`, outside the qcomflash folder and the deploy folder; a release \
         holds only what the build produced: remove the link, or pass --follow-external-links",
        q.join("secret.img").display(),
        secret.display()
    ));
    assert!(!build.root().join("out").exists(), "nothing written");
    // Followed on request: packed and listed.
    let run = build
        .rtbuild(args)
        .args(["--follow-external-links"])
        .run()
        .stderr_redacted_is(size_redacted, &bundled(25))
        .success();
    let listed = run.stdout();
    let manifest = std::fs::read_to_string(
        build.root().join(format!("out/{TOP}-{DATETIME}.qcomflash.manifest.json")),
    )
    .unwrap();
    assert!(manifest.contains("\"secret.img\"") && manifest.contains("\"extra.bin\""), "{listed}");
    // Not readable by its owner, the build user: never packed, followed or not.
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o040)).unwrap();
    std::fs::remove_dir_all(build.root().join("out")).unwrap();
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&q).unwrap());
    build.rtbuild(args).args(["--follow-external-links"]).run().code_is(2).stderr_is(&format!(
        "    Bundling {TOP}\nerror: {} (`{}`) is not readable by the build user (uid {owner}, owner of \
         the qcomflash folder); a release holds only what the build produced: remove it from the \
         qcomflash folder\n",
        q.join("secret.img").display(),
        secret.display()
    ));
    assert!(!build.root().join("out").exists(), "nothing written");
}

/// Debian's RT kernel config, uncompressed, and its sha256 computed here.
fn debian_config(flavour: &str) -> (Vec<u8>, String) {
    let path = format!("/usr/src/linux-config-6.12/config.amd64_{flavour}_amd64.xz");
    let xz = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}; run `bash .ci/setup`"));
    let mut config = Vec::new();
    std::io::Read::read_to_end(&mut liblzma::read::XzDecoder::new(xz.as_slice()), &mut config)
        .unwrap();
    let sha = sha256(&config);
    (config, sha)
}

/// An `rtbuild test` result folder whose target recorded `config` (sha256, source) beside
/// `uname`, as `rtbuild test` writes the fingerprint.
fn run_dir_with_config(root: &Path, name: &str, uname: &str, config: Option<(&str, &str)>) {
    let mut fingerprint = serde_json::json!({"uname": uname});
    if let Some((sha, source)) = config {
        fingerprint["kernel_config_sha256"] = sha.into();
        fingerprint["kernel_config_source"] = source.into();
    }
    let run = serde_json::json!({"schema": 1, "target": "ssh://root@rb3", "state": "finished",
        "fingerprint": fingerprint, "scenarios": [{"name": "idle", "max_us": 40}]});
    write(&root.join(format!("{name}/run.json")), &run.to_string());
}

/// Issue 26 point 5: `--measurement` is bound to the shipped kernel by its config digest too.
/// The verify report is the real `rtbuild verify --json` of Debian's RT config (its
/// `config_sha256` is verify's own), with the deployed kernel's version string added; the
/// run.json digests are computed here from the config files. A run of the same release and
/// version whose config differs is refused (exit 1, one line, nothing written); a run.json
/// without a digest (older rtbuild, or a target with no readable config) is bundled on
/// release and version alone, with a warning that says so.
#[test]
fn a_measurement_must_have_run_the_kernel_config_that_ships() {
    let build = Build::new();
    let root = build.root();
    let (_, rt_sha) = debian_config("rt");
    let (_, other_sha) = debian_config("none");
    let run = build
        // Debian's amd64 config stands in for the shipped kernel: the board's CPU plan, not its
        // arm64 plan (an amd64 kernel fails that, issue 39).
        .rtbuild(["--json", "verify", "--rt-cpus", "7", "--housekeeping", "0-6", "--kernel-config"])
        .arg_path(Path::new("/usr/src/linux-config-6.12/config.amd64_rt_amd64.xz"))
        .run()
        .success();
    let mut report = run.json();
    assert_eq!(report["config_sha256"], rt_sha.as_str(), "verify digests the uncompressed config");
    let version = "6.18.37-rt (oe@b) #1 SMP PREEMPT_RT Tue Jul 1";
    report["kernel_version"] = version.into();
    write(&root.join("v.json"), &report.to_string());
    let uname = "Linux rb3 6.18.37-rt #1 SMP PREEMPT_RT Tue Jul 1 aarch64 GNU/Linux";
    run_dir_with_config(root, "run-same", uname, Some((&rt_sha, "/proc/config.gz")));
    run_dir_with_config(root, "run-rebuilt", uname, Some((&other_sha, "/proc/config.gz")));
    run_dir_with_config(root, "run-old", uname, None);
    let bundle = |out: &str, run: &str| {
        build
            .rtbuild(["bundle", "--machine", MACHINE, "--out", out, "--verify-report", "v.json"])
            .args(["--measurement", run])
            .run()
    };

    let same = bundle("same", "run-same").success();
    assert!(!same.stderr().contains("config digest"), "{}", same.stderr());
    let archive = root.join(same.stdout().lines().next().unwrap());
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join(format!("same/{TOP}-{DATETIME}.qcomflash.manifest.json")))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["kernel"]["config_sha256"], rt_sha.as_str());
    let measured = manifest["release"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "measurement")
        .expect("the measurement is bound in the manifest");
    assert_eq!(
        measured["sha256"],
        sha256(&std::fs::read(root.join("run-same/run.json")).unwrap()).as_str()
    );
    build
        .rtbuild(["bundle", "--check"])
        .arg_path(&archive)
        .run()
        .stderr_is("     Checked 24 files against the manifest and SHA256SUMS\n")
        .success();

    bundle("rebuilt", "run-rebuilt").code_is(1).stdout_is("").stderr_is(&format!(
        "error: cannot bundle {}: the measured kernel's config (/proc/config.gz, sha256 {other_sha}) is not this image's kernel config (sha256 {rt_sha}, as verify found it); pass the result folder of an `rtbuild test` run on this image\n",
        root.join("run-rebuilt/run.json").display()
    ));
    assert!(!root.join("rebuilt").exists(), "nothing written on a mismatch");

    let old = bundle("old", "run-old").success().ignore_stdout();
    let warning = old.stderr();
    assert!(
        warning.contains(&format!(
            "{} records no kernel config digest",
            root.join("run-old/run.json").display()
        )) && warning.contains("bound to this image by kernel release and version only"),
        "{warning}"
    );
}

/// Issue 26 point 2: the summary sbom-cve-check writes beside the VEX
/// (`${IMAGE_NAME}.sbom-cve-check.yocto.json`, its `yocto-cve-check-manifest` export, linked
/// by `IMAGE_LINK_NAME`) is bundled under `release/` and bound by sha256; `--check` names it
/// when it is changed. The fixture has the shape oe-core's cve-check JSON has (`version`,
/// `package[]` with `name`, `version`, `products`, `issue[]` of `id`, `status`, scores).
#[test]
fn the_sbom_cve_check_summary_is_bundled_and_checked() {
    let build = Build::new();
    let root = build.root();
    let deploy = root.join(format!("work/build/tmp/deploy/images/{MACHINE}"));
    let real = format!("{TOP}.rootfs-20260101120000.sbom-cve-check.yocto.json");
    let summary = serde_json::json!({
        "version": "1",
        "package": [
            {"name": "busybox", "layer": "meta", "version": "1.37.0",
             "products": [{"product": "busybox", "cvesInRecord": "Yes"}],
             "issue": [
                {"id": "CVE-2026-0101", "status": "Unpatched", "link": "https://nvd.nist.gov/vuln/detail/CVE-2026-0101",
                 "summary": "heap overflow in a fixture", "scorev2": "0.0", "scorev3": "9.8", "scorev4": "0.0",
                 "modified": "2026-01-01T00:00:00", "vector": "NETWORK", "vectorString": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
                 "detail": "version-in-range"},
                {"id": "CVE-2026-0102", "status": "Patched", "link": "https://nvd.nist.gov/vuln/detail/CVE-2026-0102",
                 "summary": "fixed in a fixture", "scorev2": "0.0", "scorev3": "5.5", "scorev4": "0.0",
                 "modified": "2026-01-01T00:00:00", "vector": "LOCAL", "vectorString": "CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:N/I:N/A:H",
                 "detail": "fix-file-included"}
             ]},
            {"name": "linux-qcom-rt", "layer": "meta-qcom", "version": "6.18.37",
             "products": [{"product": "linux_kernel", "cvesInRecord": "Yes"}], "issue": []}
        ]
    });
    let text = serde_json::to_string_pretty(&summary).unwrap();
    write(&deploy.join(&real), &text);
    std::os::unix::fs::symlink(
        &real,
        deploy.join(format!("{TOP}.rootfs.sbom-cve-check.yocto.json")),
    )
    .unwrap();
    let archive = build.bundle("out", 24);
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join(format!("out/{TOP}-{DATETIME}.qcomflash.manifest.json"))).unwrap(),
    )
    .unwrap();
    let entry = manifest["release"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "cve-summary")
        .unwrap_or_else(|| panic!("no cve-summary in {manifest:#}"));
    assert_eq!(entry["path"], format!("release/{real}").as_str());
    assert_eq!(entry["sha256"], sha256(text.as_bytes()).as_str());
    build
        .rtbuild(["bundle", "--check"])
        .arg_path(&archive)
        .run()
        .stderr_contains("files against the manifest and SHA256SUMS")
        .success()
        .ignore_stdout();
    // Marking the unpatched CVE patched inside the bundle is named by --check.
    let x = root.join("x");
    std::fs::create_dir_all(&x).unwrap();
    let tar = |args: &[&str]| {
        assert!(Command::new("tar").args(args).current_dir(&x).status().unwrap().success());
    };
    tar(&["--zstd", "-xf", archive.to_str().unwrap()]);
    let inside = x.join(format!("{TOP}/release/{real}"));
    let changed = std::fs::read_to_string(&inside).unwrap().replace("Unpatched", "Patched");
    std::fs::write(&inside, changed).unwrap();
    tar(&["--zstd", "-cf", "bad.tar.zst", TOP]);
    build
        .rtbuild(["bundle", "--check", "x/bad.tar.zst"])
        .run()
        .code_is(1)
        .stderr_contains("1 problem in x/bad.tar.zst")
        .stdout_contains(&format!("changed    release/{real} sha256 "));
}

/// Issue 34 item 6: Ctrl-C or SIGTERM (a cancelled CI job) at any point of a `bundle` over an
/// earlier one leaves `--out` wholly old or wholly new (archive and manifest together), with no
/// partial temp archive (before: `.tmpXXXX` files of hundreds of MB were left).
#[test]
fn a_signal_at_any_point_of_bundle_leaves_out_wholly_old_or_wholly_new() {
    use crate::support::interrupt::{Rng, interrupt_at_random, snapshot};
    let build = Build::new();
    let root = build.root().to_path_buf();
    // 24 MiB that zstd cannot shrink, so the archive takes a while to write.
    let mut rng = Rng::new(6);
    let big: Vec<u8> = (0..24 * 1024 * 1024 / 8).flat_map(|_| rng.next().to_le_bytes()).collect();
    let deploy = root.join(format!("work/build/tmp/deploy/images/{MACHINE}"));
    std::fs::write(deploy.join(format!("{TOP}.rootfs-{DATETIME}.qcomflash/system.img")), big)
        .unwrap();
    let (pristine, out) = (root.join("pristine"), root.join("out"));
    let bundle = |dir: &Path, verified: bool| {
        let mut cmd = Command::new(crate::support::harness::rtbuild_bin());
        cmd.current_dir(&root).env("KAS_WORK_DIR", root.join("work"));
        cmd.args(["bundle", "--machine", MACHINE, "--out"]).arg(dir);
        match verified {
            true => cmd.args(["--verify-report", "passed.json"]),
            false => cmd.arg("--allow-unverified"),
        };
        cmd
    };
    let restore = || {
        if out.exists() {
            std::fs::remove_dir_all(&out).unwrap();
        }
        assert!(Command::new("cp").arg("-a").arg(&pristine).arg(&out).status().unwrap().success());
    };
    let first = bundle(&pristine, false).output().unwrap();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let old = snapshot(&pristine);
    restore();
    let started = std::time::Instant::now();
    let run = bundle(&out, true).output().unwrap();
    let took = started.elapsed();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let new = snapshot(&out);
    assert_eq!(new.len(), 2, "an archive and its manifest: {:?}", new.keys());
    let seen = interrupt_at_random(
        0x5eed_0034_0006,
        50,
        took + took / 5,
        &out,
        &restore,
        &|| bundle(&out, true),
        (&old, &new),
    );
    assert!(seen.interrupted > 0, "no signal came while bundle ran: {seen:?}");
}

/// Issue 38 item 4: the SBOM and VEX a bundle carries pass `spdx3-validate` (the official SPDX
/// 3.0.1 JSON schema and SHACL model, offline) as they come out of the archive; the validator
/// does reject what the fixtures used to write (a Tool as `CreationInfo.createdBy`, which must
/// be an Agent); and `bundle --check` refuses an SBOM that is not SPDX 3 JSON-LD (here SPDX 2
/// JSON, which SPDX-2-only tools write) with one line naming it.
#[test]
fn bundled_spdx_passes_spdx3_validate_and_check_refuses_an_sbom_that_is_not_spdx3() {
    use crate::support::spdx_fixture::{self, Spec};
    let build = Build::new();
    let root = build.root();
    let spec = Spec {
        kernel_config: pairs(&[("CONFIG_PREEMPT_RT", "y")]),
        packages: pairs(&[("busybox", "1.37.0")]),
        vex: vex(&[("CVE-2026-0001", "affected", "high")]),
    };
    deploy_documents(root, "20260101120000", &spec);
    let archive = build.bundle("out", 25);
    let x = root.join("x");
    std::fs::create_dir_all(&x).unwrap();
    let status = Command::new("tar")
        .args(["--zstd", "-xf", archive.to_str().unwrap()])
        .current_dir(&x)
        .status()
        .unwrap();
    assert!(status.success());
    let sbom = x.join(format!("{TOP}/release/{TOP}.rootfs-20260101120000.spdx.json"));
    let vex_doc =
        x.join(format!("{TOP}/release/{TOP}.rootfs-20260101120000.sbom-cve-check.spdx.json"));
    let out = spdx_fixture::validate(&[&sbom, &vex_doc]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // The validator is not a rubber stamp: the tool as the creator is rejected.
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&sbom).unwrap()).unwrap();
    let info = doc["@graph"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|o| o["type"] == "CreationInfo")
        .unwrap();
    let tool = info["createdUsing"][0].clone();
    info["createdBy"] = serde_json::json!([tool]);
    let bad = root.join("tool-as-creator.spdx.json");
    std::fs::write(&bad, doc.to_string()).unwrap();
    let out = spdx_fixture::validate(&[&bad]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("Core/createdBy") && said.contains("Agent"), "{said}");

    // An SPDX 2 SBOM in the bundle: `bundle --check` names it, exit 1.
    let deploy = root.join(format!("work/build/tmp/deploy/images/{MACHINE}"));
    let spdx2 = serde_json::json!({"spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT", "name": "image", "packages": []});
    std::fs::write(
        deploy.join(format!("{TOP}.rootfs-20260101120000.spdx.json")),
        spdx2.to_string(),
    )
    .unwrap();
    let archive = build.bundle("spdx2", 25);
    build
        .rtbuild(["bundle", "--check"])
        .arg_path(&archive)
        .run()
        .code_is(1)
        .stderr_contains("1 problem in")
        .stdout_is(&format!(
            "sbom       release/{TOP}.rootfs-20260101120000.spdx.json is not SPDX 3 JSON-LD: it is an SPDX 2 document (SPDX-2.3); a release carries the SPDX 3 documents oe-core and sbom-cve-check write\nunpatched CVEs: 1 (high 1)\n"
        ));
}

/// An ed25519 key pair made by openssl: (private PKCS#8 PEM, public PEM) under `dir`.
pub(crate) fn key_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub.pem"));
    let ok = |args: &[&str]| {
        let out = Command::new("openssl").args(args).output().expect("openssl");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    ok(&["genpkey", "-algorithm", "ed25519", "-out", private.to_str().unwrap()]);
    ok(&["pkey", "-in", private.to_str().unwrap(), "-pubout", "-out", public.to_str().unwrap()]);
    (private, public)
}

/// in-toto's own library on the envelope beside `archive` with the public key `public`.
pub(crate) fn intoto_verify(archive: &Path, public: &Path) -> std::process::Output {
    let envelope = archive.to_string_lossy().replace(".tar.zst", ".intoto.json");
    Command::new(crate::support::harness::venv().join("bin/python3"))
        .arg(crate::support::harness::data("intoto/verify_envelope.py"))
        .arg(envelope)
        .arg(public)
        .arg(archive)
        .output()
        .expect("the test venv's python3")
}

/// Issue 38 item 2: `bundle --signing-key` signs an in-toto statement over the shipped archive,
/// its SBOM and its VEX in a DSSE envelope beside the archive; the manifest names the public
/// key. in-toto's own library (PyPI in-toto/securesystemslib) and `bundle --verify --key` both
/// accept it; a tampered archive and a wrong key each fail in both; a key file that is not a
/// key is one error line, exit 2, and nothing is written.
#[test]
fn a_signed_bundle_verifies_with_in_toto_and_rtbuild_and_tampering_or_a_wrong_key_fail() {
    use crate::support::spdx_fixture::Spec;
    let build = Build::new();
    let root = build.root();
    let spec = Spec {
        packages: pairs(&[("busybox", "1.37.0")]),
        vex: vex(&[("CVE-2026-0001", "affected", "high")]),
        ..Spec::default()
    };
    deploy_documents(root, "20260101120000", &spec);
    let (private, public) = key_pair(root, "release");
    let (_, wrong) = key_pair(root, "other");
    let run = build
        .rtbuild(["bundle", "--machine", MACHINE, "--out", "signed", "--verify-report"])
        .arg_path(&root.join("passed.json"))
        .args(["--signing-key"])
        .arg_path(&private)
        .run()
        .stderr_redacted_is(size_redacted, &bundled(25))
        .success();
    let stdout = run.stdout();
    let lines: Vec<&str> = stdout.lines().collect();
    let archive = root.join(lines[0]);
    assert!(lines[2].ends_with(".qcomflash.intoto.json"), "{lines:?}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(lines[1])).unwrap()).unwrap();
    let public_pem = std::fs::read_to_string(&public).unwrap();
    // The public key beside the archive, for `bundle --verify --key`: openssl's own.
    assert!(lines[3].ends_with(".qcomflash.pub.pem"), "{lines:?}");
    assert_eq!(std::fs::read_to_string(root.join(lines[3])).unwrap().trim(), public_pem.trim());
    assert_eq!(manifest["signing_key"]["algorithm"], "ed25519");
    assert_eq!(manifest["signing_key"]["public_key"].as_str().unwrap().trim(), public_pem.trim());

    let out = intoto_verify(&archive, &public);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.starts_with("signature: verified\n"), "{said}");
    let archive_name = archive.file_name().unwrap().to_string_lossy().to_string();
    assert!(said.contains(&format!("subject {archive_name}: ok")), "{said}");
    assert!(said.contains(&format!("subject release/{TOP}.rootfs-20260101120000.spdx.json: ok")));
    assert!(said.contains(&format!(
        "subject release/{TOP}.rootfs-20260101120000.sbom-cve-check.spdx.json: ok"
    )));
    build
        .rtbuild(["bundle", "--verify"])
        .arg_path(&archive)
        .args(["--key"])
        .arg_path(&public)
        .run()
        .success()
        .stdout_is("")
        .stderr_contains("Verified");

    // A wrong key: both refuse the signature.
    let out = intoto_verify(&archive, &wrong);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let run = build
        .rtbuild(["bundle", "--verify"])
        .arg_path(&archive)
        .args(["--key"])
        .arg_path(&wrong)
        .run()
        .code_is(1)
        .stderr_contains("2 problems in");
    assert!(
        run.stdout().contains("no signature of the envelope verifies with this key")
            && run.stdout().contains("the bundle names signing key"),
        "{}",
        run.stdout()
    );

    // A tampered subject (the shipped archive changed after signing): both name it.
    let mut bytes = std::fs::read(&archive).unwrap();
    bytes.extend_from_slice(&[0; 512]);
    std::fs::write(&archive, bytes).unwrap();
    let out = intoto_verify(&archive, &public);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!("subject {archive_name}: sha256 ")), "{said}");
    let run = build
        .rtbuild(["bundle", "--verify"])
        .arg_path(&archive)
        .args(["--key"])
        .arg_path(&public)
        .run()
        .code_is(1)
        .stderr_contains("1 problem in");
    assert!(
        run.stdout().contains(&format!("subject {archive_name}: signed sha256 ")),
        "{}",
        run.stdout()
    );

    // Not a key: one line, exit 2, nothing written.
    build
        .rtbuild([
            "bundle",
            "--machine",
            MACHINE,
            "--out",
            "nokey",
            "--verify-report",
            "passed.json",
        ])
        .args(["--signing-key"])
        .arg_path(&public)
        .run()
        .code_is(2)
        .stdout_is("")
        .stderr_contains(&format!(
            "error: --signing-key {}: not an ed25519 private key in PKCS#8 PEM",
            public.display()
        ))
        .stderr_contains("; make one with `openssl genpkey -algorithm ed25519 -out FILE`\n");
    assert!(!root.join("nokey").exists());
}

/// The characters no line `bundle --diff` prints may hold raw: ESC, CR, BEL, a C1 CSI, and the
/// invisible format characters that reorder or hide shown text.
const RAW: [char; 9] =
    ['\u{1b}', '\r', '\u{7}', '\u{9b}', '\u{202e}', '\u{2066}', '\u{200b}', '\u{feff}', '\u{7f}'];

/// Issue 34, probe round 10: `bundle --diff` prints package, kernel option and boot argument
/// names and values taken from the bundles: control and bidirectional characters in them are
/// escaped in its text (no line can be forged or reordered) and `\uXXXX`-escaped in its JSON
/// (which reads back to the very names).
#[test]
fn bundle_diff_escapes_control_and_bidi_characters_in_names_and_values() {
    use crate::support::spdx_fixture::Spec;
    let build = Build::new();
    let root = build.root();
    let evil = "evil\u{1b}[2J\rPASS\u{202e}x\u{200b}";
    let bundle = |out: &str, stamp: &str, spec: &Spec, cmdline: &str| {
        deploy_documents(root, stamp, spec);
        verify_report(root, &format!("{out}.json"), cmdline);
        let run = build
            .rtbuild(["bundle", "--machine", MACHINE, "--out", out])
            .args(["--verify-report", &format!("{out}.json")])
            .run()
            .stderr_redacted_is(size_redacted, &bundled(25))
            .success();
        root.join(run.stdout().lines().next().unwrap())
    };
    let old = bundle(
        "old",
        "20260101120000",
        &Spec {
            kernel_config: pairs(&[("CONFIG_PREEMPT_RT", "y")]),
            packages: pairs(&[("busybox", "1.36.1")]),
            vex: vex(&[]),
        },
        "isolcpus=7",
    );
    let new = bundle(
        "new",
        "20260201120000",
        &Spec {
            kernel_config: pairs(&[("CONFIG_PREEMPT_RT", "y\u{1b}[31m\u{2066}"), (evil, "m")]),
            packages: pairs(&[("busybox", "1.37\u{202e}\u{7f}\u{9b}31m"), (evil, "1\nPASS all")]),
            vex: vex(&[]),
        },
        &format!("isolcpus=7 {evil}"),
    );
    let text = build.rtbuild(["bundle", "--diff"]).arg_path(&old).arg_path(&new).run().success();
    let out = format!("{}{}", text.stdout(), text.stderr());
    for c in RAW {
        assert!(!out.contains(c), "{c:?} printed raw: {out:?}");
    }
    assert!(out.lines().all(|l| !l.trim_start().starts_with("PASS")), "a forged line: {out}");
    let shown = "evil\\u{1b}[2J\\rPASS\\u{202e}x\\u{200b}";
    // A value kas would read as a string is shown quoted; the command line splits at `\r`, as
    // the kernel does.
    text.stdout_contains("  ~ CONFIG_PREEMPT_RT y -> \"y\\u{1b}[31m\\u{2066}\"\n")
        .stdout_contains(&format!("  + {shown} m\n"))
        .stdout_contains("  ~ busybox 1.36.1 -> 1.37\\u{202e}\\u{7f}\\u{9b}31m\n")
        .stdout_contains(&format!("  + {shown} 1\\nPASS all\n"))
        .stdout_contains("boot arguments:\n  + PASS\\u{202e}x\\u{200b}\n  + evil\\u{1b}[2J\n");

    let run =
        build.rtbuild(["--json", "bundle", "--diff"]).arg_path(&old).arg_path(&new).run().success();
    for c in RAW {
        assert!(!run.stdout().contains(c), "{c:?} raw in the JSON: {}", run.stdout());
    }
    let json = run.json();
    let names = |key: &str| -> Vec<String> {
        json[key].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().into()).collect()
    };
    assert_eq!(names("kernel_config"), ["CONFIG_PREEMPT_RT", evil]);
    assert_eq!(json["kernel_config"][0]["new"], "\"y\u{1b}[31m\u{2066}\"");
    assert_eq!(names("packages"), ["busybox", evil]);
    assert_eq!(json["packages"][1]["new"], "1\nPASS all");
    assert_eq!(names("cmdline"), ["PASS\u{202e}x\u{200b}", "evil\u{1b}[2J"]);
}
