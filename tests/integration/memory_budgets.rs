//! Issue 34 item 11: every reader holds a bounded amount, counted in items as well as bytes.
//! Each input is generated here (none is committed) and read by the binary under
//! `prlimit --as` 1 GiB and a time limit: a legal one is reported, one past a budget is refused
//! in one line. Before, each of them needed 1.9 to 3 GB or aborted.

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::path::Path;

use crate::support::harness::Test;

/// rtbuild under 1 GiB of address space and five minutes.
fn bounded() -> Test {
    Test::new().within_memory_mib(1024).within_secs(300)
}

/// A report of a legal input: judged (exit 0 or 1), never aborted.
fn reported(run: crate::support::harness::Run, what: &str) {
    let code = run.code();
    assert!([0, 1].contains(&code), "{what}: exit {code}: {}", run.stderr());
    let run = run.code_is(code).ignore_stdout();
    assert!(!run.stderr().contains("error:"), "{what}: {}", run.stderr());
}

/// A refusal: exit 2 and one `error:` line holding `want`.
fn refused(run: crate::support::harness::Run, want: &str) {
    let run = run.code_is(2).ignore_stdout();
    let stderr = run.stderr();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains(want), "{stderr}");
}

/// A small valid cyclictest JSON file of one thread.
fn small_json() -> String {
    r#"{"file_version": 1, "cmdline:": "cyclictest -q -h 50 --json=x.json", "rt_test_version:": "2.40",
        "return_code": 0, "num_threads": 1, "resolution_in_ns": 0,
        "thread": {"0": {"histogram": {"8": 3, "9": 8}, "cycles": 11, "min": 8, "max": 9, "avg": 8.7, "cpu": 1, "node": 0}}}"#
        .to_string()
}

#[test]
fn a_run_json_of_200000_empty_scenarios_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("{\"schema\": 1, \"scenarios\": [");
    text.push_str(&vec!["{}"; 200_000].join(","));
    text.push_str("]}");
    std::fs::write(dir.path().join("run.json"), text).unwrap();
    let run = bounded().args(["report"]).arg_path(dir.path()).run();
    refused(run, "more than 1000 scenarios");
}

/// Issue 34, the second probe: the scenario budget was counted only after the whole document
/// was parsed into a tree. A run.json just under the 64 MiB text limit whose `scenarios` list
/// holds 22 million `{}` (or 33 million zeros) made a 1 GiB tree and aborted; the budget now bites while the list
/// is read. The same in `schema`, read before anything else.
#[test]
fn a_run_json_of_millions_of_list_items_is_refused_while_it_is_read() {
    for (field, item, want) in [
        ("scenarios", "{}", "more than 1000 scenarios"),
        ("schema", "0", "`schema` must be a whole number"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::with_capacity(64 << 20);
        text.push_str(&format!("{{\"machine\": \"rb3\", \"{field}\": ["));
        while text.len() < (64 << 20) - 100 {
            text.push_str(item);
            text.push(',');
        }
        text.push_str(item);
        text.push_str("]}");
        std::fs::write(dir.path().join("run.json"), text).unwrap();
        let run = bounded().args(["report"]).arg_path(dir.path()).run();
        refused(run, want);
    }
}

#[test]
fn a_folder_naming_one_file_20000_times_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("raw")).unwrap();
    std::fs::write(dir.path().join("raw/x.json"), small_json()).unwrap();
    // 20 scenarios of 1,000 names each: every list is within its own limit.
    let files = vec!["\"raw/x.json\""; 1_000].join(",");
    let scenarios: Vec<String> =
        (0..20).map(|i| format!("{{\"name\": \"s{i}\", \"files\": [{files}]}}")).collect();
    let text = format!("{{\"schema\": 1, \"scenarios\": [{}]}}", scenarios.join(","));
    std::fs::write(dir.path().join("run.json"), text).unwrap();
    let run = bounded().args(["report"]).arg_path(dir.path()).run();
    refused(run, "names more than 4096 files to read");
}

#[test]
fn a_192_mib_lava_log_is_reported_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.log");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let entry = |lvl: &str, msg: &str| {
        format!(
            "- {{\"dt\": \"2026-12-01T22:00:00.000000\", \"lvl\": \"{lvl}\", \"msg\": {}}}\n",
            serde_json::to_string(msg).unwrap()
        )
    };
    out.write_all(
        entry("target", "<<<RTBUILD-RUN machine=qemux86-64 threshold_us=100 scenarios=idle>>>")
            .as_bytes(),
    )
    .unwrap();
    out.write_all(entry("target", "<<<RTBUILD-RAW-BEGIN scenario=idle format=json>>>").as_bytes())
        .unwrap();
    for line in small_json().lines() {
        out.write_all(entry("target", &line.replace('"', "\\\"")).as_bytes()).unwrap();
    }
    out.write_all(entry("target", "<<<RTBUILD-RAW-END scenario=idle exit=0>>>").as_bytes())
        .unwrap();
    // Console chatter after the output, up to 192 MiB (under the 256 MiB limit).
    let chatter = entry("target", &format!("[ok] {}", "x".repeat(200)));
    let mut written = 0;
    while written < 192 << 20 {
        out.write_all(chatter.as_bytes()).unwrap();
        written += chatter.len();
    }
    drop(out);
    let run = bounded().args(["report"]).arg_path(&path).run();
    reported(run, "192 MiB LAVA log");
}

#[test]
fn a_cyclictest_json_of_4096_threads_by_2000_buckets_is_reported_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.json");
    let mut text = String::from(
        "{\"file_version\": 1, \"cmdline:\": \"cyclictest -q -h 2000 --json=wide.json\", \"return_code\": 0, \"num_threads\": 4096, \"resolution_in_ns\": 0, \"thread\": {",
    );
    for thread in 0..4096 {
        if thread > 0 {
            text.push(',');
        }
        write!(text, "\"{thread}\": {{\"histogram\": {{").unwrap();
        for bucket in 0..2000 {
            if bucket > 0 {
                text.push(',');
            }
            write!(text, "\"{bucket}\": 1").unwrap();
        }
        write!(text, "}}, \"cycles\": 2000, \"min\": 0, \"max\": 1999, \"avg\": 999.5, \"cpu\": {thread}, \"node\": 0}}").unwrap();
    }
    text.push_str("}}");
    assert!(text.len() > 70 << 20, "{} bytes", text.len());
    std::fs::write(&path, text).unwrap();
    let run = bounded().args(["report"]).arg_path(&path).run();
    reported(run, "4096 x 2000 JSON");
}

/// `rows` rows of `-h` output (pre-2.7 layout) of 4,096 threads, one sample in every bucket:
/// 4,096 × `rows` non-zero buckets.
fn dense_histogram(path: &Path, rows: u64) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, "# Histogram").unwrap();
    let counts = vec!["000001"; 4096].join("\t");
    for row in 0..rows {
        writeln!(out, "{row:06} {counts}").unwrap();
    }
}

/// 4,096 threads by 5,000 non-zero buckets are 20 million entries (a 143 MB file): refused
/// before, now reported under 1 GiB (each column is built as a packed tree, and `report`
/// borrows the threads' histograms instead of copying them).
#[test]
fn a_143_mb_dense_text_histogram_is_reported_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dense.txt");
    dense_histogram(&path, 5000);
    assert!(std::fs::metadata(&path).unwrap().len() > 140_000_000);
    // 20 million buckets take minutes in a debug build on a busy host: a longer limit.
    let run = bounded().within_secs(900).args(["report", "--json"]).arg_path(&path).run();
    let json = run.json();
    reported(run, "143 MB dense text histogram");
    let threads = json["inputs"][0]["scenarios"][0]["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 4096);
    assert!(threads.iter().all(|t| t["samples"] == 5000), "{:#}", threads[0]);
}

/// Past the budget of 21 Mi non-zero buckets (4,096 threads by 5,400 buckets): refused at the
/// row that passes it, in one line, not aborted.
#[test]
fn a_dense_text_histogram_past_the_bucket_budget_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("denser.txt");
    dense_histogram(&path, 5400);
    let run = bounded().within_secs(900).args(["report"]).arg_path(&path).run();
    refused(run, "the histograms hold more than 22020096 non-zero buckets");
}

/// A `.tar.zst` whose `release/` members are `members` files of `size` zero bytes each: a few
/// KB on disk.
fn bomb_bundle(path: &Path, members: usize, size: u64) {
    let file = std::fs::File::create(path).unwrap();
    let encoder = zstd::stream::write::Encoder::new(file, 1).unwrap();
    let mut tar = tar::Builder::new(encoder);
    let mut add = |name: &str, size: u64, data: &mut dyn std::io::Read| {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(0o644);
        header.set_size(size);
        tar.append_data(&mut header, name, data).unwrap();
    };
    let manifest = b"{}";
    add("top/manifest.json", manifest.len() as u64, &mut &manifest[..]);
    for i in 0..members {
        add(&format!("top/release/doc{i}.json"), size, &mut std::io::repeat(0).take(size));
    }
    tar.into_inner().unwrap().finish().unwrap();
}

#[test]
fn a_bundle_of_release_members_past_the_budget_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.tar.zst");
    // Eight members of 250 MiB, each under the 256 MiB a release document may have.
    bomb_bundle(&path, 8, 250 << 20);
    assert!(std::fs::metadata(&path).unwrap().len() < 1 << 20);
    let check = bounded().args(["bundle", "--check"]).arg_path(&path).run();
    refused(check, "its members read into memory hold over 96 MiB");
    let diff = bounded().args(["bundle", "--diff"]).arg_path(&path).arg_path(&path).run();
    refused(diff, "its members read into memory hold over 96 MiB");
}

/// Issue 34 item 11, the `-v` reader: 4,096 threads with one 65,535 µs sample each (a 110 KB
/// file) grew 64 Ki counters per thread, 2 GiB, and aborted under 1 GiB. Now reported.
#[test]
fn a_verbose_file_of_4096_threads_each_with_a_spike_is_reported_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spikes.txt");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for thread in 0..4096 {
        writeln!(out, "{thread:>8}:{:>8}:{:>8}", 0, 65_535).unwrap();
    }
    drop(out);
    let run = bounded().args(["report", "--json"]).arg_path(&path).run();
    let json = run.json();
    reported(run, "4096 threads of one spike each");
    let threads = json["inputs"][0]["scenarios"][0]["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 4096);
    assert!(threads.iter().all(|t| t["max_us"] == 65_535.0), "{:#}", threads[0]);
}

/// The `-v` path's budget per thread: more than 2 Mi distinct latency values in one thread
/// (2 Mi + 1 samples of thread 5, each a new value) are refused in one line, in bounded memory.
#[test]
fn a_verbose_thread_of_more_than_2_mi_distinct_values_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("distinct.txt");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for cycle in 0..=(2u64 << 20) {
        writeln!(out, "{:>8}:{cycle:>8}:{:>8}", 5, 100_000 + cycle).unwrap();
    }
    drop(out);
    let run = bounded().args(["report"]).arg_path(&path).run();
    refused(
        run,
        "the `-v` samples of thread 5 hold more than 2097152 distinct latency values, more than rtbuild keeps in memory; record microseconds (no -N) or split the run into shorter ones (-l)",
    );
}

/// A `--baseline` report document is counted before it is read: 60 MiB of empty strings
/// (`"",`: 20 million values) was read into a tree of `serde_json::Value`s first, about 1.3 GB,
/// and aborted under 1 GiB; now the count stops it at the budget, in one line.
#[test]
fn a_baseline_report_of_millions_of_values_is_refused_before_it_is_held() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("now.json"), small_json()).unwrap();
    let mut text = String::with_capacity(60 << 20);
    text.push_str("{\"schema\": \"rtbuild-report/1\", \"unknown\": [");
    while text.len() < (60 << 20) - 100 {
        text.push_str("\"\",");
    }
    text.push_str("\"\"]}");
    std::fs::write(dir.path().join("base.json"), text).unwrap();
    let run = bounded()
        .args(["report"])
        .arg_path(&dir.path().join("now.json"))
        .args(["--baseline"])
        .arg_path(&dir.path().join("base.json"))
        .run();
    refused(run, "more than 4194304 JSON values");
}
