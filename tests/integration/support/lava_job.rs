//! LAVA job definitions checked by LAVA's own schema, and their test steps run here as the
//! board runs them.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

pub(crate) const VALIDATE: &str = r#"
import sys, yaml
try:
    import lava_common
    from lava_common.schemas import validate
except ImportError as e:
    print("LAVA 2026.07's lava_common does not import (run .ci/setup for its Debian packages): %s" % e)
    sys.exit(3)
if "lava-2026.07" not in lava_common.__file__:
    print("lava_common comes from %s, not the LAVA 2026.07 snapshot" % lava_common.__file__)
    sys.exit(3)
job = yaml.safe_load(sys.stdin)
try:
    validate(job, strict=True)
except Exception as e:
    print("%s: %s" % (type(e).__name__, e))
    sys.exit(1)
"#;

/// LAVA's verdict on a job definition: `Ok` or the schema's message. The schema is LAVA
/// 2026.07's (the lab's current release, from the snapshot), strict: every key it does not
/// know is refused, qdl actions included.
pub(crate) fn lava_schema(job: &str) -> Result<(), String> {
    let mut child = crate::support::lab_snapshots::lava_python(VALIDATE)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the system python3 runs");
    child.stdin.take().unwrap().write_all(job.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    match out.status.code() {
        Some(0) => Ok(()),
        Some(1) => Err(text),
        _ => panic!("cannot validate with LAVA 2026.07's lava_common: {text}"),
    }
}

/// This machine's online CPUs as a catalog board: the last CPU is the RT CPU.
pub(crate) fn host_board(dir: &Path) -> (u32, String) {
    let online = fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let last: u32 = online.trim().rsplit([',', '-']).next().unwrap().parse().unwrap();
    assert!(last >= 1, "the LAVA step test needs two CPUs (one RT, one housekeeping)");
    let housekeeping = if last == 1 { "0".to_string() } else { format!("0-{}", last - 1) };
    let yaml = format!(
        "name: host-board\ndescription: this machine\nkas_file: ci/x.yml\nsoc: X\nsoc_family: x\n\
         cpus: {}\nrt: {{rt_cpus: \"{last}\", housekeeping: \"{housekeeping}\", rcu_expedited: '1', cpuidle_off: '1'}}\n\
         serial_console: ttyS0\nstorage: ufs\n",
        last + 1
    );
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("host-board.yaml"), yaml).unwrap();
    (last, housekeeping)
}

/// The parts of a report scenario that must not depend on where the output was read from (the
/// convergence does: a LAVA log holds cyclictest's status blocks, a raw JSON file none).
pub(crate) fn comparable(scenario: &Value) -> Value {
    let mut s = scenario.clone();
    let obj = s.as_object_mut().unwrap();
    for key in ["files", "warnings", "notes", "convergence_unknown"] {
        obj.remove(key);
    }
    for thread in obj.get_mut("threads").unwrap().as_array_mut().unwrap() {
        thread.as_object_mut().unwrap().remove("file");
        thread.as_object_mut().unwrap().remove("convergence");
    }
    obj.get_mut("all").unwrap().as_object_mut().unwrap().remove("file");
    s
}

pub(crate) const FAKE_LAVA_TEST_CASE: &str = r#"#!/bin/sh
# FAKE lava-test-case: records its arguments (and runs --shell commands like LAVA's helper).
name=$1; shift
if [ "$1" = --shell ]; then
    shift
    if "$@"; then r=pass; else r=fail; fi
    echo "$name --result $r" >> "$RTBUILD_FAKE_CASES"
else
    echo "$name $*" >> "$RTBUILD_FAKE_CASES"
fi
"#;

/// Runs the test steps of `root/job.yaml` here as LAVA runs them on the board (one script,
/// `set -e` and `set -x`), with the FAKE `lava-test-case` (recording into `root/cases.txt`)
/// and `rtbuild-tune.sh`, `$TMPDIR` in `root/tmp`; returns the console output.
pub(crate) fn run_job_steps(root: &Path) -> String {
    let job: Value =
        serde_yaml::from_str(&fs::read_to_string(root.join("job.yaml")).unwrap()).unwrap();
    let test = job["actions"].as_array().unwrap().last().unwrap().clone();
    let steps: Vec<String> = test["test"]["definitions"][0]["repository"]["run"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let fake = root.join("fake");
    fs::create_dir_all(&fake).unwrap();
    crate::support::fixtures::write_executable(&fake.join("lava-test-case"), FAKE_LAVA_TEST_CASE);
    crate::support::fixtures::write_executable(
        &fake.join("rtbuild-tune.sh"),
        "#!/bin/sh\n# FAKE rtbuild-tune.sh\n[ \"$1\" = verify ] && echo 'ok rt cpus tuned'\n",
    );
    let script = format!("set -e\nset -x\n{}\n", steps.join("\n"));
    fs::write(root.join("run.sh"), script).unwrap();
    let tmp = root.join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("sh run.sh 2>&1")
        .current_dir(root)
        .env("PATH", format!("{}:{}", fake.display(), std::env::var("PATH").unwrap()))
        .env("TMPDIR", &tmp)
        .env("RTBUILD_FAKE_CASES", root.join("cases.txt"))
        .output()
        .unwrap();
    let console = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "the steps failed: {console}");
    console
}
