//! `rtbuild report` bounds the length of a line (issue 23 item 6): a file without a newline is
//! read in a few MB, not held whole, and refused in one line; an over-long line between real
//! `-v` samples is skipped and the samples still count.

use std::io::Write;
use std::process::Command;

use crate::support::harness::{Test, rtbuild_bin};

#[test]
fn a_64_mib_file_without_newline_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-newline.log");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let block = vec![b'x'; 1 << 20];
    for _ in 0..64 {
        file.write_all(&block).unwrap();
    }
    file.flush().unwrap();
    drop(file);
    // GNU time (installed by .ci/setup) reports the peak RSS of the finished process.
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak-kb %M"])
        .arg(rtbuild_bin())
        .arg("report")
        .arg(&path)
        .output()
        .expect("/usr/bin/time: install GNU time (.ci/setup does)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // GNU time adds its own two lines (`Command exited with non-zero status 2`, `peak-kb N`).
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("peak-kb ") && !l.starts_with("Command exited"))
        .collect();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains("no cyclictest output"),
        "{stderr}"
    );
    let peak_kb: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak-kb "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in {stderr}"));
    // The line is 64 MiB; holding it would take at least that.
    assert!(peak_kb < 48 * 1024, "peak RSS {peak_kb} KB for a 64 MiB line");
}

#[test]
fn an_over_long_line_between_samples_is_skipped_and_the_samples_count() {
    let long = "y".repeat(300 << 10);
    let text = format!("       0:       0:      10\n{long}\n       0:       1:      12\n");
    let run = Test::new().file("v.log", text).args(["--json", "report", "v.log"]).run();
    let run = run.stderr_is("warning: v.log:2: line ignored: 307200 bytes long, longer than any cyclictest line (lines over 256 KiB are skipped unread)\n");
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let json = run.json();
    let all = &json["inputs"][0]["scenarios"][0]["all"];
    assert_eq!(all["samples"], 2, "{json}");
    assert_eq!(all["max_us"], 12.0, "{json}");
    let warning = "v.log:2: line ignored: 307200 bytes long, longer than any cyclictest line (lines over 256 KiB are skipped unread)";
    assert_eq!(json["inputs"][0]["scenarios"][0]["warnings"], serde_json::json!([warning]));
}
