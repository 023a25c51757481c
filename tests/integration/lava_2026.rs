//! LAVA 2026.07, the lab's current release (from `../shared/upstream/lava-2026.07.tar.gz`, run on
//! Debian 12's Python packages), against the bundle a real `rtbuild image --bundle --gzip` makes
//! over the fixtures (kas 5.5, the FAKE bitbake of `support::project`) and the qdl job
//! `rtbuild lava` writes for it:
//!
//! - the dispatcher's own `decompress_file(path, "gz")` and `untar_file` (what its qdl deploy
//!   calls) unpack the `.tar.gz` flavour into the folder the job's `rootfs_image` and qdl
//!   `path`s name, and refuse the `.tar.zst` one as the lab did (`JobError`);
//! - the whole qdl job runs through LAVA 2026.07's dispatcher (`JobParser`, `Job.validate`,
//!   `Job.run`, the pipeline `lava-run` runs) against a `qcs6490-rb3gen2` device rendered
//!   from 2026.07's own device-type template: the download over HTTP on loopback (with the
//!   lab's header), the unpack, LAVA's overlay written into `rootfs.img` (real ext4, read back
//!   with debugfs), the power and EDL-entry commands, and the `qdl` argv, recorded by a FAKE
//!   `qdl` (there is no board).
//!
//! Where the run stops, exactly: (1) `lava-run` itself is not in the snapshot (the tarball
//! holds the Python packages, not `lava/dispatcher/lava-run`, and Debian's 2023.01 script
//! speaks the old logging API), so the test drives the same three calls on 2026.07's API;
//! (2) `wait-qdl-device` waits for a udev event of a board in EDL mode (USB 05c6:9008): there
//! is no USB device, so a RECORDING FAKE of `lava_dispatcher.utils.udev.wait_udev_event`
//! records what it would wait for and returns; (3) after flashing, the login boot reads the
//! board's serial console: the device's console command prints one line and exits, so the job
//! ends there with LAVA's own error, which the test checks.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::lab_snapshots::{lava_python, snapshots};
use crate::support::lava_job::lava_schema;
use crate::support::project::Project;

const MACHINE: &str = "rb3gen2-core-kit";
const DIR: &str = "qcom-multimedia-image-rb3gen2-core-kit";

/// `rtbuild image --bundle` (plus `extra`) over the fixtures: the archive.
fn bundle(project: &Project, extra: &[&str]) -> PathBuf {
    let mut args = vec!["--bundle", "--json"];
    args.extend(extra);
    let run = project.image(MACHINE, &args).run().success().stderr_contains("Bundled ");
    PathBuf::from(run.json()["bundle"]["archive"].as_str().unwrap())
}

/// The qdl job `rtbuild lava` writes for meta-qcom master's lab, checked by 2026.07's schema.
fn qdl_job(url: &str, extra: &[&str]) -> (String, Value) {
    let run = Test::new()
        .args(["lava", "--machine", MACHINE, "--meta-qcom-branch", "master", "--bundle-url", url])
        .args(extra.iter().copied())
        .env("RTBUILD_TEST_LAB_TOKEN", "Bearer 0123456789abcdef")
        .run()
        .success()
        .stderr_is("");
    let text = run.stdout();
    lava_schema(&text).unwrap_or_else(|why| panic!("LAVA 2026.07 refuses the job: {why}\n{text}"));
    let job = serde_yaml::from_str(&text).unwrap();
    (text, job)
}

fn actions<'a>(job: &'a Value, kind: &str) -> Vec<&'a Value> {
    job["actions"].as_array().unwrap().iter().filter_map(|a| a.get(kind)).collect()
}

/// LAVA 2026.07's `decompress_file(path, "gz")` and `untar_file` on a copy of `archive` in
/// `dest`: the files unpacked, or LAVA's exception.
const UNPACK: &str = r#"
import json, os, shutil, sys
from lava_common.exceptions import LAVAError
from lava_dispatcher.utils.compression import decompress_file, untar_file
archive, dest = sys.argv[1], sys.argv[2]
os.makedirs(dest)
copy = os.path.join(dest, os.path.basename(archive))
shutil.copy(archive, copy)
try:
    out = decompress_file(copy, "gz")
    untar_file(out, os.path.join(dest, "qdl"))
except LAVAError as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
    sys.exit(0)
files = []
for root, _, names in os.walk(os.path.join(dest, "qdl")):
    files += [os.path.relpath(os.path.join(root, n), os.path.join(dest, "qdl")) for n in names]
print(json.dumps({"files": sorted(files)}))
"#;

fn unpack(archive: &Path, dest: &Path) -> Value {
    let out = lava_python(UNPACK).arg(archive).arg(dest).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn lava_2026_dispatcher_unpacks_the_gzip_bundle_the_qdl_job_names() {
    let project = Project::new("ok");
    let gz = bundle(&project, &["--gzip"]);
    let name = gz.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(".qcomflash.tar.gz"), "{name}");
    // The manifest and `bundle --check` cover the .tar.gz flavour.
    // `bundle --check` reads every file of it: the one problem it finds is the fixture build's
    // unpinned lock, the same as for the .tar.zst of the same build below.
    let gz_check = Test::new().args(["bundle", "--check"]).arg_path(&gz).run().code_is(1);
    let gz_check = gz_check.stderr_contains("warning: 1 problem in ").stdout();
    assert!(
        gz_check.starts_with("lock       release/rb3gen2-core-kit-rt.lock.yml does not pin"),
        "{gz_check}"
    );
    let manifest = gz.with_file_name(name.replace(".tar.gz", ".manifest.json"));
    assert!(manifest.is_file(), "{}", manifest.display());

    let (_, job) = qdl_job(&format!("https://lab.example.com/b/{name}"), &[]);
    let deploy = actions(&job, "deploy")[0];
    assert_eq!(deploy["to"], "qdl");
    assert!(deploy.get("overlay_path").is_none(), "LAVA 2026.07 refuses it: {deploy}");
    assert_eq!(deploy["qcomflash"]["url"], format!("https://lab.example.com/b/{name}"));

    let dest = tempfile::tempdir().unwrap();
    let unpacked = unpack(&gz, &dest.path().join("gz"));
    let files: Vec<&str> = unpacked["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{unpacked}"))
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    // What the job names is where LAVA unpacked it: the rootfs image and each qdl stage's path.
    let rootfs = deploy["rootfs_image"].as_str().unwrap();
    assert_eq!(rootfs, format!("{DIR}/rootfs.img"));
    assert!(files.contains(&rootfs), "{files:?}");
    for boot in actions(&job, "boot").iter().filter(|b| b["method"] == "qdl") {
        let path = boot["path"].as_str().unwrap();
        assert!(files.iter().any(|f| f.starts_with(&format!("{path}/"))), "{path}: {files:?}");
    }
    assert!(files.contains(&format!("{DIR}/manifest.json").as_str()), "{files:?}");

    // The .tar.zst bundle of the same build: what the lab's qdl deploy choked on. rtbuild
    // refuses to point a qdl job at it; LAVA's own gunzip refuses it too.
    let zst_dir = project.root.join("zst");
    Test::new()
        .unprivileged()
        .cwd(project.root.join("proj"))
        .args(["bundle", "--machine", MACHINE, "--out"])
        .arg_path(&zst_dir)
        .run()
        .success()
        .ignore_stdout()
        .stderr_contains("Bundled ");
    let zst = std::fs::read_dir(&zst_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".tar.zst"))
        .expect("bundle wrote a .tar.zst");
    let refused = unpack(&zst, &dest.path().join("zst"));
    assert_eq!(refused["error"], "JobError", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("unable to decompress"), "{refused}");
    let zst_name = zst.file_name().unwrap().to_string_lossy().into_owned();
    Test::new()
        .args(["lava", "--machine", MACHINE, "--meta-qcom-branch", "master", "--bundle-url"])
        .args([format!("https://lab.example.com/b/{zst_name}")])
        .run()
        .usage_error(&format!(
            "--bundle-url names `{zst_name}`, but LAVA's qdl deploy unpacks the archive with gzip; pass the bundle's .tar.gz (`rtbuild bundle --gzip`, `rtbuild image --bundle --gzip`) or meta-qcom's *.qcomflash.tar.gz"
        ));
    let zst_check = Test::new().args(["bundle", "--check"]).arg_path(&zst).run().code_is(1);
    assert_eq!(zst_check.stderr_contains("warning: 1 problem in ").stdout(), gz_check);
    // Both flavours carry the same manifest.
    let zst_manifest = zst.with_file_name(zst_name.replace(".tar.zst", ".manifest.json"));
    assert_eq!(std::fs::read(&manifest).unwrap(), std::fs::read(&zst_manifest).unwrap());
}

/// Serves `file` over HTTP on loopback until the test ends; records each request's head.
fn serve(file: PathBuf) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            log.lock().unwrap().push(head.clone());
            let body = std::fs::read(&file).unwrap();
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            if head.starts_with("GET ") {
                let _ = stream.write_all(&body);
            }
        }
    });
    (port, seen)
}

/// The device dictionary a LAVA 2026.07 server renders for a `qcs6490-rb3gen2` board: its own
/// template, a board serial, power and EDL-entry commands that succeed, and a serial console
/// with no board behind it (it prints one line and closes).
const DEVICE: &str = r#"
import sys, jinja2
env = jinja2.Environment(loader=jinja2.FileSystemLoader(sys.argv[1]), autoescape=False, trim_blocks=True)
text = """{% extends 'qcs6490-rb3gen2.jinja2' %}
{% set board_qdl_id = '5A3C09F1' %}
{% set connection_command = 'sh -c "echo no board behind this console"' %}
{% set hard_reset_command = '/bin/true' %}
{% set power_off_command = '/bin/true' %}
{% set power_on_command = '/bin/true' %}
{% set qdl_enter_commands = ['/bin/true'] %}
"""
sys.stdout.write(env.from_string(text).render())
"#;

/// What `lava-run` does with a job, on LAVA 2026.07's API (see the module comment): parse it
/// against the device, validate, run; `wait_udev_event` replaced by a RECORDING FAKE.
const DRIVE: &str = r#"
import json, sys
from lava_common.log import YAMLLogger
from lava_dispatcher.device import NewDevice
from lava_dispatcher.parser import JobParser
import lava_dispatcher.utils.udev as udev
job_file, device_file, dispatcher_file, log_file, record = sys.argv[1:6]
def recorded_wait(match_dict, subsystem, devtype=None, devicepath=None):
    with open(record, "a") as f:
        f.write(json.dumps({"match": match_dict, "subsystem": subsystem}) + "\n")
udev.wait_udev_event = recorded_wait
logger = YAMLLogger()
logger.add_file_handler(log_file)
job = JobParser().parse(open(job_file).read(), NewDevice(device_file), "4242",
                        dispatcher_config=open(dispatcher_file).read(), logger=logger)
job.validate()
job.run()
"#;

/// The FAKE qdl: answers `--version` as qdl 2.7 does; otherwise records where it ran, its
/// argv, and the root folder of `rootfs.img` there (debugfs), then succeeds as a flash would.
const FAKE_QDL: &str = r#"#!/bin/sh
# FAKE qdl for rtbuild's tests: not Qualcomm's qdl. Records, flashes nothing.
if [ "$1" = "--version" ]; then echo "qdl version v2.7"; exit 0; fi
rec='@REC@'
pwd > "$rec/qdl.cwd"
printf '%s\n' "$@" > "$rec/qdl.argv"
/sbin/debugfs -R 'ls -p /' rootfs.img > "$rec/rootfs.ls" 2>/dev/null
echo "flashed (fake)"
"#;

#[test]
fn lava_2026_runs_the_qdl_job_through_download_unpack_overlay_and_the_qdl_argv() {
    let project = Project::new("ok");
    // A real ext4 root file system image for LAVA to write its overlay into.
    let image = project.control.join("rootfs.img");
    std::fs::File::create(&image).unwrap().set_len(16 << 20).unwrap();
    let out = Command::new("/sbin/mkfs.ext4").args(["-q", "-F"]).arg(&image).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::set_permissions(&image, std::fs::Permissions::from_mode(0o644)).unwrap();
    let gz = bundle(&project, &["--gzip"]);
    let name = gz.file_name().unwrap().to_string_lossy().into_owned();

    let (port, requests) = serve(gz.clone());
    let url = format!("http://127.0.0.1:{port}/b/{name}");
    let (text, job) =
        qdl_job(&url, &["--qcomflash-header", "QLIAuthorization=RTBUILD_TEST_LAB_TOKEN"]);

    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::write(w.join("job.yaml"), &text).unwrap();
    std::fs::write(
        w.join("dispatcher.yaml"),
        format!("dispatcher_download_dir: {}/tmp\n", w.display()),
    )
    .unwrap();
    let templates = snapshots().lava().join("etc/dispatcher-config/device-types");
    let device =
        Command::new("/usr/bin/python3").args(["-c", DEVICE]).arg(&templates).output().unwrap();
    assert!(device.status.success(), "{}", String::from_utf8_lossy(&device.stderr));
    std::fs::write(w.join("device.yaml"), &device.stdout).unwrap();
    let bin = w.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("qdl"), FAKE_QDL.replace("@REC@", &w.display().to_string())).unwrap();
    std::fs::set_permissions(bin.join("qdl"), std::fs::Permissions::from_mode(0o755)).unwrap();

    let run = lava_python(DRIVE)
        .args(["job.yaml", "device.yaml", "dispatcher.yaml", "log.yaml", "udev.jsonl"])
        .current_dir(w)
        .env("PATH", format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", bin.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    let log_text = std::fs::read_to_string(w.join("log.yaml")).unwrap_or_default();
    // One `- {dt, lvl, msg}` entry a line; a line that does not parse is kept as it is.
    let messages: Vec<String> = log_text
        .lines()
        .map(|line| {
            let entry = line.strip_prefix("- ").unwrap_or(line);
            match serde_json::from_str::<Value>(entry).or_else(|_| serde_yaml::from_str(entry)) {
                Ok(e) => match &e["msg"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
                Err(_) => line.to_string(),
            }
        })
        .collect();
    let said = |needle: &str| messages.iter().any(|m| m.contains(needle));
    let context = || format!("stderr:\n{stderr}\nlog:\n{}", messages.join("\n"));

    // The download, with the lab's header from the environment variable.
    let heads = requests.lock().unwrap().clone();
    let get = heads
        .iter()
        .find(|h| h.starts_with(&format!("GET /b/{name} ")))
        .unwrap_or_else(|| panic!("no download of {name}: {heads:?}\n{}", context()));
    assert!(get.contains("QLIAuthorization: Bearer 0123456789abcdef\r\n"), "{get}");
    // The unpack and the overlay, then the flashing stage.
    for step in ["end: 1.2 download-retry", "start: 1.3 apply-overlay-qdl", "end: 1 qdl-deploy"] {
        assert!(said(step), "{step}\n{}", context());
    }
    let ls = std::fs::read_to_string(w.join("rootfs.ls")).unwrap_or_default();
    assert!(ls.contains("/lava-4242/"), "LAVA's overlay is not in rootfs.img: {ls}\n{}", context());
    let udev = std::fs::read_to_string(w.join("udev.jsonl")).unwrap();
    assert!(udev.contains("\"ID_PRODUCT\": \"QUSB_BULK_CID:0420_SN:5A3C09F1\""), "{udev}");
    let cwd = std::fs::read_to_string(w.join("qdl.cwd")).unwrap();
    assert!(cwd.trim_end().ends_with(&format!("/qdl/common/{DIR}")), "{cwd}");
    let argv: Vec<String> =
        std::fs::read_to_string(w.join("qdl.argv")).unwrap().lines().map(str::to_string).collect();
    let stage = &actions(&job, "boot")[0];
    let mut want: Vec<String> =
        ["--skipblock=sha256", "--debug", "--storage", "ufs", "--serial", "5A3C09F1"]
            .map(str::to_string)
            .to_vec();
    want.push(stage["firehose_program"].as_str().unwrap().to_string());
    want.extend(stage["rawprogram"].as_str().unwrap().split(' ').map(str::to_string));
    want.extend(stage["patch"].as_str().unwrap().split(' ').map(str::to_string));
    assert_eq!(argv, want);
    assert!(said("end: 2 boot-qdl-retry"), "{}", context());
    // Where it stops: the login boot on a console with no board behind it.
    assert!(said("start: 3 minimal-boot"), "{}", context());
    assert!(!run.status.success(), "the job cannot log in to a board that is not there");
    assert!(!said("start: 4 lava-test-retry"), "{}", context());
    assert!(
        said("\"case\":\"minimal-boot\"") && said("\"fail\":\"Connection closed\""),
        "the run should end at the login boot, on the closed console: {}",
        context()
    );
    assert!(stderr.contains("InfrastructureError: Connection closed"), "{}", context());
}
