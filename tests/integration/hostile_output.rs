//! Issue 34, round 5: what rtbuild prints and writes from outside text, through the binary
//! under a time limit and `prlimit --as` 1 GiB. Paths echoed raw in `Wrote` lines (J), names
//! whose bidirectional overrides reordered a line or a page (H), archive member names printed
//! raw and uncut by `bundle --check` (D), symlinks in a result folder followed out of it (I),
//! OpenMetrics label values with raw control characters (M), and output folder flags that took
//! a device, a FIFO or a file (K).

use std::path::{Path, PathBuf};

use crate::support::harness::{Test, data};

const SECS: u64 = 60;
const MIB: u64 = 1024;

fn bounded() -> Test {
    Test::new().within_secs(SECS).within_memory_mib(MIB)
}

/// The characters no printed line may hold raw: ESC, CR, BEL, a C1 CSI, and the invisible
/// format characters of "Trojan Source".
const RAW: [char; 10] = [
    '\u{1b}', '\r', '\u{7}', '\u{9b}', '\u{202e}', '\u{202a}', '\u{2066}', '\u{2069}', '\u{200b}',
    '\u{feff}',
];

fn assert_no_raw(what: &str, text: &str) {
    for c in RAW {
        assert!(!text.contains(c), "{what}: {c:?} printed raw: {text:?}");
    }
}

/// A one-scenario `rtbuild test` result folder at `dir` (CPU 1: max 477 µs) with `machine`
/// and `scenario` in its run.json.
fn result_folder(dir: &Path, machine: &str, scenario: &str) {
    std::fs::create_dir_all(dir.join("raw")).unwrap();
    std::fs::copy(data("cyclictest-2.4-json-1thread-cpu1.json"), dir.join("raw/s.json")).unwrap();
    let run = serde_json::json!({
        "machine": machine, "target": "ssh://root@rb3", "rt_cpus": "1", "housekeeping": "0",
        "threshold_us": 1000, "started_unix": 1_796_000_000u64, "state": "finished",
        "kernel_release": "6.6.52-rt43",
        "fingerprint": {"uname": "Linux rb3 6.6.52-rt43 #1 SMP PREEMPT_RT aarch64"},
        "scenarios": [{"name": scenario, "state": "done", "files": ["raw/s.json"], "elapsed_s": 60.0}],
    });
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
}

/// Item J: `Wrote <path>` (and the folder `man-pages` prints) echoed the path raw, so a path
/// holding a newline and an escape sequence forged a line and drove the terminal.
#[test]
fn paths_in_status_lines_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = dir.path().join("a\n\u{1b}[2JPASS\u{202e}x");
    std::fs::create_dir(&hostile).unwrap();
    let junit = hostile.join("j\runit.xml");
    let run = bounded()
        .args(["report", "--junit"])
        .arg_path(&junit)
        .arg_path(&data("cyclictest-2.4-hist-h50-2threads.txt"))
        .run()
        .ignore_stdout();
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let stderr = run.stderr();
    assert_no_raw("report --junit", &stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.contains("a\\n\\u{1b}[2JPASS\\u{202e}x/j\\runit.xml"), "{stderr:?}");
    assert!(junit.is_file());
    let pages = hostile.join("man\npages");
    let run = bounded().args(["man-pages", "--out-dir"]).arg_path(&pages).run().success();
    let (stdout, stderr) = (run.stdout(), run.stderr());
    for text in [&stdout, &stderr] {
        assert_no_raw("man-pages", text);
        assert!(text.lines().all(|l| !l.starts_with("PASS") && !l.starts_with("pages")), "{text}");
    }
    assert!(stderr.lines().all(|l| l.starts_with("       Wrote ")), "{stderr}");
    assert_eq!(
        stdout.trim_end(),
        pages
            .display()
            .to_string()
            .replace('\n', "\\n")
            .replace('\u{1b}', "\\u{1b}")
            .replace('\u{202e}', "\\u{202e}")
    );
    assert!(pages.join("rtbuild.1").is_file());
}

/// Item H: a right-to-left override (or an isolate, a zero-width space, a BOM) in a folder,
/// machine or scenario name went through the escaping and could reorder a printed line; the
/// HTML page showed it as it was.
#[test]
fn bidirectional_overrides_in_names_are_escaped_in_lines_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    let folder = dir.path().join("run\u{202e}1");
    result_folder(&folder, "rb3\u{202e}gen2\u{2066}", "idle\u{200b}\u{feff}x\u{202a}");
    let run =
        bounded().args(["history", "add", "--check"]).arg_path(&folder).args(["--db", &db]).run();
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    assert_no_raw("history add", &format!("{}{}", run.stdout(), run.stderr()));
    assert!(run.stderr().contains("run\\u{202e}1"), "{}", run.stderr());
    for args in [&["history", "list"][..], &["history", "show"]] {
        let run = bounded().args(args).args(["--db", &db]).run().success();
        assert_no_raw(&format!("{args:?}"), &format!("{}{}", run.stdout(), run.stderr()));
    }
    let html = dir.path().join("r.html");
    let run = bounded().args(["report"]).arg_path(&folder).args(["--html"]).arg_path(&html).run();
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let stdout = run.stdout();
    assert_no_raw("report", &format!("{stdout}{}", run.stderr()));
    assert!(stdout.contains("idle\\u{200b}\\u{feff}x\\u{202a}"), "{stdout}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_no_raw("report --html", &page);
    assert!(page.contains("rb3\\u{202e}gen2\\u{2066}"), "the machine is not shown escaped");
    let trend = dir.path().join("t.html");
    bounded()
        .args(["history", "report", "--db", &db, "--html"])
        .arg_path(&trend)
        .run()
        .stderr_is(&format!("       Wrote {}\n", trend.display()))
        .success();
    assert_no_raw("history report --html", &std::fs::read_to_string(&trend).unwrap());
}

/// A `.tar.zst` at `path` with `members` (name, symlink?): regular files hold `x`.
fn archive(path: &Path, members: &[(String, bool)]) {
    let file = std::fs::File::create(path).unwrap();
    let encoder = zstd::stream::write::Encoder::new(file, 3).unwrap().auto_finish();
    let mut tar = tar::Builder::new(encoder);
    for (name, link) in members {
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o644);
        if *link {
            header.set_entry_type(tar::EntryType::Symlink);
            header.set_size(0);
            tar.append_link(&mut header, name, "target").unwrap();
        } else {
            header.set_size(1);
            tar.append_data(&mut header, name, &b"x"[..]).unwrap();
        }
    }
    tar.into_inner().unwrap();
}

/// Item D: `bundle --check` printed member names raw and whole: a member named with escape
/// sequences drove the terminal, one 100 KB long gave a 100 KB line.
#[test]
fn bundle_check_prints_member_names_escaped_and_cut() {
    let dir = tempfile::tempdir().unwrap();
    let long = "y".repeat(100_000);
    let hostile = "\u{1b}[2J\rPASS\u{202e}\u{9b}31m".to_string();
    // Two top folders: both named in the problem line.
    let two = dir.path().join("two.tar.zst");
    archive(&two, &[(format!("{hostile}/f"), false), (format!("{long}/f"), false)]);
    // One top folder whose members are not regular files: each named as an extra.
    let links = dir.path().join("links.tar.zst");
    archive(&links, &[(format!("top/{hostile}\nPASS x"), true), (format!("top/{long}"), true)]);
    for file in [&two, &links] {
        let run = bounded().args(["bundle", "--check"]).arg_path(file).run();
        assert!(matches!(run.code(), 1 | 2), "{}", run.stderr());
        let both = format!("{}{}", run.stdout(), run.stderr());
        assert_no_raw("bundle --check", &both);
        for line in both.lines() {
            assert!(line.chars().count() < 2_000, "{} characters: {}", line.len(), &line[..200]);
            assert!(!line.trim_start().starts_with("PASS"), "{line}");
        }
        assert!(both.contains("\\u{1b}[2J\\rPASS\\u{202e}\\u{9b}31m"), "{both}");
        assert!(both.contains(&format!("{}…", "y".repeat(200))), "the long name is not cut");
    }
}

/// Item I: a symlink in a result folder was followed: `raw/s.json -> /anywhere` was read as
/// the run's output (and `-> /dev/zero` reached the reader). Each link, out of the folder or
/// dangling, is refused in one line naming it, by `report` and by `history add`.
#[test]
fn symlinks_in_a_result_folder_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // A valid output outside the folder: followed, it would be reported as the run's.
    let outside = dir.path().join("outside.json");
    std::fs::copy(data("cyclictest-2.4-json-1thread-cpu1.json"), &outside).unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    for (name, target) in [("out", outside.clone()), ("dangling", PathBuf::from("gone.json"))] {
        let folder = dir.path().join(name);
        result_folder(&folder, "rb3", "idle");
        std::fs::remove_file(folder.join("raw/s.json")).unwrap();
        std::os::unix::fs::symlink(&target, folder.join("raw/s.json")).unwrap();
        for args in [vec!["report".to_string()], vec!["history".into(), "add".into()]] {
            let mut test = bounded().args(&args).arg_path(&folder);
            if args.len() == 2 {
                test = test.args(["--db", &db]);
            }
            let run = test.run().code_is(2).stdout_is("");
            let line = run.stderr();
            assert_eq!(line.lines().count(), 1, "{args:?} {name}: {line}");
            assert!(
                line.contains(&format!(
                    "`raw/s.json` is a symlink to `{}`; rtbuild reads no symlinks in a result folder",
                    target.display()
                )),
                "{args:?} {name}: {line}"
            );
        }
    }
    // A link to the raw folder itself is a link too.
    let folder = dir.path().join("dirlink");
    result_folder(&folder, "rb3", "idle");
    std::fs::rename(folder.join("raw"), dir.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), folder.join("raw")).unwrap();
    bounded()
        .args(["report"])
        .arg_path(&folder)
        .run()
        .code_is(2)
        .stderr_contains("`raw` is a symlink to");
}

/// What prometheus_client's OpenMetrics parser reads in `file` (tests/data/openmetrics/parse.py).
fn parse_openmetrics(file: &Path) -> Vec<serde_json::Value> {
    let out = std::process::Command::new(crate::support::harness::venv().join("bin/python3"))
        .arg(data("openmetrics/parse.py"))
        .arg(file)
        .output()
        .expect("the test venv's python3");
    assert!(
        out.status.success(),
        "prometheus_client refused {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap()
}

/// Item M: label values held raw control characters (ESC, CR, tab). A machine and a scenario
/// named with quotes, backslashes, newlines, ESC, CR and a right-to-left override: the file has
/// no raw control character on any line, prometheus_client's parser reads it, and gives back
/// each name, the three escapes of the format undone and the others as escape text.
#[test]
fn openmetrics_label_values_escape_every_control_character() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    let machine = "rb3\"} 1\n# EOF\\\u{1b}[2J";
    let scenario = "idle\r\t\u{202e}\"x\\n";
    let folder = dir.path().join("run");
    result_folder(&folder, machine, scenario);
    // The run's id is a digest rtbuild computes: written [ID].
    let id_redacted = |stderr: &str| match stderr.split_once("Recorded ") {
        Some((head, tail)) if tail.len() > 12 => format!("{head}Recorded [ID]{}", &tail[12..]),
        _ => stderr.to_string(),
    };
    bounded()
        .args(["history", "add", "--db", &db])
        .arg_path(&folder)
        .run()
        .stderr_redacted_is(
            id_redacted,
            &format!("    Recorded [ID] PASS ({}) in {db}\n", folder.display()),
        )
        .success();
    for args in [
        vec!["history", "export", "--db", &db, "--openmetrics"],
        vec!["report", folder.to_str().unwrap(), "--openmetrics"],
    ] {
        let file = dir.path().join("out.om");
        let run = bounded()
            .args(&args)
            .arg_path(&file)
            .run()
            .stderr_is(&format!("       Wrote {}\n", file.display()))
            .ignore_stdout();
        assert!(matches!(run.code(), 0 | 1), "{args:?}");
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines() {
            assert!(!line.chars().any(|c| c.is_control()), "{args:?}: {line:?}");
            assert!(!line.contains('\u{202e}'), "{args:?}: {line:?}");
        }
        let families = parse_openmetrics(&file);
        let labels = &families[0]["samples"][0]["labels"];
        assert_eq!(labels["machine"], "rb3\"} 1\n# EOF\\\\u{1b}[2J", "{args:?}");
        assert_eq!(labels["scenario"], "idle\\r\\t\\u{202e}\"x\\n", "{args:?}");
    }
}

/// Item K: an output folder flag given a device, a FIFO or a file: `man-pages --out-dir
/// /dev/null` wrote nothing and said little. Each is refused in one line, exit 2, and the
/// path is left as it was.
#[test]
fn output_folder_flags_refuse_a_device_a_fifo_and_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o644)).unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "keep").unwrap();
    let commands: &[&[&str]] = &[
        &["man-pages", "--out-dir", "@"],
        &["generate", "--machine", "rb3gen2-core-kit", "--out", "@"],
        &["image", "--machine", "rb3gen2-core-kit", "--dry-run", "--out", "@"],
        &["shell", "--machine", "rb3gen2-core-kit", "--dry-run", "--out", "@"],
        &["bundle", "--machine", "rb3gen2-core-kit", "--out", "@"],
        &["test", "--target", "ssh://root@127.0.0.1:9", "--rt-cpus", "1", "--out", "@"],
        &["kconfig-check", "--kernel-src", ".", "--out", "@"],
        &["tune", "--emit", "@", "--machine", "rb3gen2-core-kit"],
    ];
    for (path, kind) in [
        (Path::new("/dev/null"), "a character device"),
        (fifo.as_path(), "a FIFO"),
        (file.as_path(), "a file"),
    ] {
        for command in commands {
            let args: Vec<String> = command
                .iter()
                .map(|a| if *a == "@" { path.display().to_string() } else { a.to_string() })
                .collect();
            let run = bounded().args(&args).run().code_is(2).stdout_is("");
            let line = run.stderr();
            assert_eq!(line.lines().count(), 1, "{args:?}: {line}");
            assert!(
                line.contains(&format!("is {kind}, not a folder; pass a folder")),
                "{args:?}: {line}"
            );
        }
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "something was written");
}

/// Issue 34, probe round 10: `--json` output kept bidirectional overrides and zero-width
/// characters raw (valid JSON, but shown raw by `cat` or a CI log it reorders the line), and
/// JUnit XML kept them raw for CI pages to show. JSON now writes them as `\\uXXXX` escapes
/// (reading back to the very name); JUnit writes them as the terminal lines do (`\\u{202e}`).
#[test]
fn json_and_junit_outputs_hold_no_raw_invisible_characters() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    let machine = "rb3\u{202e}gen2\u{2066}";
    let scenario = "idle\u{200b}\u{feff}x\u{202a}\u{9b}\u{7f}";
    result_folder(&folder, machine, scenario);
    let junit = dir.path().join("j.xml");
    let run = bounded()
        .args(["--json", "report"])
        .arg_path(&folder)
        .args(["--junit"])
        .arg_path(&junit)
        .run()
        .stderr_is(&format!("       Wrote {}\n", junit.display()));
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    assert_no_raw("report --json", &run.stdout());
    assert!(!run.stdout().contains('\u{7f}'), "DEL raw in the JSON");
    assert!(run.stdout().contains("idle\\u200b\\ufeffx\\u202a\\u009b\\u007f"), "{}", run.stdout());
    let json = run.json();
    fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            serde_json::Value::Object(o) => o.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    strings(&json, &mut all);
    assert!(all.iter().any(|s| s == scenario), "the scenario reads back as it was: {all:?}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_no_raw("report --junit", &xml);
    assert!(!xml.contains('\u{7f}'), "DEL raw in the JUnit file");
    assert!(xml.contains("idle\\u{200b}\\u{feff}x\\u{202a}\\u{9b}\\u{7f}"), "{xml}");
    crate::support::harness::assert_junit_valid(&junit);
}

/// Issue 34, probe round 10: U+2028 and U+2029 (Unicode line and paragraph separators) were
/// printed raw in a refusal, so an editor, a log tool or Python's `splitlines` saw the one
/// `error:` line split in two, the second starting `PASS`. They are escaped as `\u{2028}`.
#[test]
fn unicode_line_separators_in_values_are_escaped() {
    for sep in ['\u{2028}', '\u{2029}'] {
        let value = format!("rb3{sep}PASS all");
        let run = bounded()
            .args([
                "lava",
                "--machine",
                "rb3gen2-core-kit",
                "--bundle-url",
                "https://x.example/b.tar.zst",
            ])
            .args(["--device-type", &value])
            .run()
            .code_is(2)
            .stdout_is("");
        let stderr = run.stderr();
        assert!(!stderr.contains(sep), "{sep:?} printed raw: {stderr:?}");
        let shown = format!("rb3\\u{{{:x}}}PASS all", sep as u32);
        assert!(stderr.contains(&shown), "{stderr:?} lacks {shown:?}");
    }
}

/// Issue 34, probe round 10: a command rtbuild runs is shown shell-quoted (`Running …`, and the
/// error when it fails), and quoting kept a newline in a path raw: `setup --venv 'v<LF>PASS x'`
/// printed a line starting `PASS`. The command is shown with its controls escaped.
#[test]
fn a_command_shown_in_a_status_or_error_line_cannot_split_it() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("v\nPASS x\u{1b}[2J\u{202e}");
    let run = bounded()
        .args(["setup", "--python", "/bin/false", "--venv"])
        .arg_path(&venv)
        .run()
        .code_is(1)
        .stdout_is("");
    let stderr = run.stderr();
    assert_no_raw("setup", &stderr);
    assert!(stderr.lines().all(|l| !l.starts_with("PASS")), "a forged line: {stderr}");
    assert!(stderr.contains("v\\nPASS x\\u{1b}[2J\\u{202e}"), "{stderr}");
}

/// Issue 34, probe round 10: a command that fails says, on its `error:` line, where to look:
/// its last lines shown below it, or, when it printed nothing, to run it by hand.
#[test]
fn a_failed_command_says_where_to_see_why() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("v");
    let quiet = bounded()
        .args(["setup", "--python", "/bin/false", "--venv"])
        .arg_path(&venv)
        .run()
        .code_is(1);
    let error = quiet.stderr().lines().find(|l| l.starts_with("error: ")).unwrap().to_string();
    assert_eq!(
        error,
        format!(
            "error: `/bin/false -m venv {}` failed with exit code 1; it printed nothing: run it by hand to see why",
            venv.display()
        )
    );
    let talking =
        bounded().args(["setup", "--python", "/bin/sh", "--venv"]).arg_path(&venv).run().code_is(1);
    let stderr = talking.stderr();
    assert!(
        stderr.contains("failed with exit code 2; its last lines, below, say why\n---"),
        "{stderr}"
    );
    assert!(stderr.contains("cannot open venv"), "{stderr}");
}
