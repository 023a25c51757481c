//! The JUnit files rtbuild writes pass the schema Jenkins' xunit plugin validates them against
//! (`tests/data/junit-10.xsd`, checked by the real xmllint): `report --junit` here, and
//! `verify.junit.xml` in `image_fake_bitbake`. Suites are named
//! `rtbuild.<command>.<machine>.<scenario>` and carry `time` and `timestamp` where the input
//! says when it ran.

use std::process::Command;

use crate::support::harness::{Test, assert_junit_valid, data};

/// A result folder of `rtbuild test` on rb3gen2-core-kit: `idle` invalid (too few cycles),
/// `stress <&>` valid with oslat skipped; both with their start and duration.
fn result_folder(test: Test) -> Test {
    let verbose = std::fs::read(data("cyclictest-2.4-verbose-2threads.txt")).unwrap();
    let run_json = serde_json::json!({
        "machine": "rb3gen2-core-kit",
        "threshold_us": 300,
        "tests": ["cyclictest", "oslat"],
        "scenarios": [
            {"name": "idle", "files": ["idle/cyclictest.txt"], "started_unix": 1_764_600_000u64,
             "elapsed_s": 61.5, "invalid_reasons": ["only 991 of 60000 cycles"]},
            {"name": "stress <&>", "files": ["stress/cyclictest.txt"],
             "started_unix": 1_764_600_070u64, "elapsed_s": 60.25,
             "tests": [{"name": "oslat", "kind": "noise", "state": "skipped", "verdict": "skipped",
                        "skipped": "oslat is not installed on the target"}]}
        ]
    });
    test.file("results/idle/cyclictest.txt", &verbose)
        .file("results/stress/cyclictest.txt", &verbose)
        .file("results/run.json", run_json.to_string())
}

#[test]
fn report_junit_of_a_result_folder_and_a_raw_file_passes_the_jenkins_schema() {
    let run = result_folder(Test::new())
        .args(["report", "results", "--junit", "junit.xml"])
        .arg_path(&data("cyclictest-2.4-hist-h50-2threads.txt"))
        .run()
        .code_is(1)
        .ignore_stdout()
        .stderr_is("       Wrote junit.xml\n");
    let path = run.path().join("junit.xml");
    assert_junit_valid(&path);
    let xml = std::fs::read_to_string(&path).unwrap();
    assert!(
        xml.contains(
            "<testsuite name=\"rtbuild.report.rb3gen2-core-kit.idle\" tests=\"1\" failures=\"1\" \
             errors=\"0\" skipped=\"0\" time=\"61.500\" timestamp=\"2025-12-01T14:40:00Z\">"
        ),
        "{xml}"
    );
    assert!(
        xml.contains(
            "<testsuite name=\"rtbuild.report.rb3gen2-core-kit.stress &lt;&amp;&gt;\" tests=\"2\" \
             failures=\"0\" errors=\"0\" skipped=\"1\" time=\"60.250\" \
             timestamp=\"2025-12-01T14:41:10Z\">"
        ),
        "{xml}"
    );
    assert!(xml.contains("<skipped message=\"oslat is not installed on the target\"/>"), "{xml}");
    // A raw file says neither when nor how long: its suite has no time attributes.
    assert!(
        xml.contains(
            "<testsuite name=\"rtbuild.report.rb3gen2-core-kit.cyclictest-2.4-hist-h50-2threads\" \
             tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">"
        ),
        "{xml}"
    );
    assert!(
        xml.contains(
            "<testsuites name=\"rtbuild report\" tests=\"4\" failures=\"2\" errors=\"0\">"
        ),
        "the totals carry no time when one suite has none: {xml}"
    );
}

/// The check above is not vacuous: xmllint with this schema refuses what rtbuild used to write
/// (`skipped` on `<testsuites>`, no `errors` on `<testsuite>`), as Jenkins did.
#[test]
fn the_schema_refuses_the_old_junit_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.xml");
    std::fs::write(
        &path,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"rtbuild report\" tests=\"1\" failures=\"0\" skipped=\"0\">\n\
         \x20 <testsuite name=\"/tmp/x\" tests=\"1\" failures=\"0\" skipped=\"0\">\n\
         \x20   <testcase classname=\"rtbuild.report.cyclictest\" name=\"idle\"/>\n\
         \x20 </testsuite>\n\
         </testsuites>\n",
    )
    .unwrap();
    let out = Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(data("junit-10.xsd"))
        .arg(&path)
        .output()
        .expect("xmllint runs (.ci/setup installs libxml2-utils)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("The attribute 'skipped' is not allowed"), "{stderr}");
    assert!(stderr.contains("The attribute 'errors' is required but missing"), "{stderr}");
}
