//! Issue 35 item 3: each input file is opened once per command. The bounded opener counts what
//! it opens on the test's thread ([`crate::files::input::opens`]); `report` (with
//! `--baseline`), `report --history` and `history add` read a result folder (run.json, a
//! cyclictest histogram, cyclictest's stderr, an oslat JSON), a LAVA job log, a raw cyclictest
//! file, a raw rt-tests text output and qcom-linux-testkit results, and no path is opened twice.

use std::path::{Path, PathBuf};

use crate::files::input::opens;
use crate::results::input::{Measurement, sniff};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// A result folder whose `run.json` lists a cyclictest histogram, cyclictest's stderr and an
/// oslat JSON output; the paths of every file in it.
fn result_folder(root: &Path) -> (PathBuf, Vec<PathBuf>) {
    let dir = root.join("run");
    std::fs::create_dir_all(dir.join("raw")).unwrap();
    std::fs::copy(data("cyclictest-2.4-hist-h50-2threads.txt"), dir.join("raw/idle.hist.txt"))
        .unwrap();
    std::fs::copy(
        data("cyclictest-2.4-status-blocks-h50-2threads.stderr.txt"),
        dir.join("raw/idle.stderr.txt"),
    )
    .unwrap();
    std::fs::copy(data("oslat-2.4-json-cpu1.json"), dir.join("raw/idle.oslat.json")).unwrap();
    let json = serde_json::json!({
        "threshold_us": 100000, "rt_cpus": "0", "measure_cpus": "0-1",
        "tests": ["cyclictest", "oslat"],
        "scenarios": [{
            "name": "idle",
            "files": ["raw/idle.hist.txt"],
            "raw_files": ["raw/idle.hist.txt", "raw/idle.stderr.txt"],
            "tests": [{"name": "oslat", "files": ["raw/idle.oslat.json"], "state": "done"}],
        }],
    });
    crate::files::write::fixture(dir.join("run.json"), json.to_string()).unwrap();
    let files = ["run.json", "raw/idle.hist.txt", "raw/idle.stderr.txt", "raw/idle.oslat.json"];
    (dir.clone(), files.iter().map(|f| dir.join(f)).collect())
}

/// A testkit results folder: one `.res` file that says PASS.
fn testkit_folder(root: &Path) -> (PathBuf, PathBuf) {
    let dir = root.join("testkit");
    let program = dir.join("RT-tests/OSLat");
    std::fs::create_dir_all(&program).unwrap();
    let res = program.join("OSLat.res");
    crate::files::write::fixture(&res, "OSLat PASS\n").unwrap();
    (dir, res)
}

/// Every path opened, each once; and each of `want` among them.
#[track_caller]
fn opened_once(opened: &[PathBuf], want: &[PathBuf]) {
    for (at, path) in opened.iter().enumerate() {
        assert!(!opened[..at].contains(path), "{} opened twice: {opened:#?}", path.display());
    }
    for path in want {
        assert!(opened.contains(path), "{} was never opened: {opened:#?}", path.display());
    }
}

#[test]
fn the_one_sniffer_names_each_kind_of_input() {
    let root = tempfile::tempdir().unwrap();
    let (folder, _) = result_folder(root.path());
    let (testkit, _) = testkit_folder(root.path());
    let lava = data("lava-run-2023.01-cyclictest-status-blocks-idle.log");
    let kind = |path: &Path| match sniff(path).unwrap() {
        Measurement::ResultFolder => "result folder".to_string(),
        Measurement::Testkit(_) => "testkit".to_string(),
        Measurement::LavaLog(_) => "lava log".to_string(),
        Measurement::RtTests { program, json, .. } => format!("{program} json={json}"),
        Measurement::Cyclictest(_) => "cyclictest".to_string(),
    };
    assert_eq!(kind(&folder), "result folder");
    assert_eq!(kind(&testkit), "testkit");
    assert_eq!(kind(&lava), "lava log");
    assert_eq!(kind(&data("oslat-2.4-json-cpu1.json")), "oslat json=true");
    assert_eq!(kind(&data("ssdd-2.4-text.txt")), "ssdd json=false");
    for cyclictest in [
        "cyclictest-2.4-json-1thread-cpu1.json",
        "cyclictest-2.4-hist-h50-2threads.txt",
        "cyclictest-2.4-quiet-2threads.txt",
        "cyclictest-2.4-verbose-2threads.txt",
        "cyclictest-2.4-live-ansi-2threads.txt",
        "cyclictest-2.7-sparse-histofall-H20-3threads.txt",
    ] {
        assert_eq!(kind(&data(cyclictest)), "cyclictest", "{cyclictest}");
    }
    // A path that is not there is named as the readers name it, with how to fix it.
    let err = sniff(&root.path().join("none")).unwrap_err().to_string();
    assert!(err.ends_with("does not exist; check the path"), "{err}");
}

#[test]
fn report_opens_each_input_file_once() {
    let root = tempfile::tempdir().unwrap();
    let (folder, folder_files) = result_folder(root.path());
    let (testkit, res) = testkit_folder(root.path());
    let raw = data("cyclictest-2.4-verbose-2threads.txt");
    let ssdd = data("ssdd-2.4-text.txt");
    let baseline = data("cyclictest-2.4-quiet-2threads.txt");
    let options = crate::results::report::Options {
        inputs: vec![folder, testkit, raw.clone(), ssdd.clone()],
        baseline: Some(baseline.clone()),
        ..Default::default()
    };
    let (built, opened) = opens::during(|| crate::results::report::build_with_runs(&options));
    let (report, _) = built.unwrap();
    assert_eq!(report.inputs.len(), 4);
    let mut want = folder_files;
    want.extend([res, raw, ssdd, baseline]);
    opened_once(&opened, &want);
}

#[test]
fn report_history_and_history_add_open_each_input_once() {
    let root = tempfile::tempdir().unwrap();
    let (folder, mut want) = result_folder(root.path());
    let lava = data("lava-run-2023.01-cyclictest-status-blocks-idle.log");
    want.push(lava.clone());
    let url = format!("sqlite:{}", root.path().join("history.db").display());
    let location = crate::results::history::location::Location::parse(&url).unwrap();
    let mut store = crate::results::history::store::Store::open(
        &location,
        crate::results::history::DEFAULT_WAIT,
    )
    .unwrap();

    // `history add RUN…`: every run read once, then recorded.
    let request = crate::results::history::add::AddRequest {
        runs: vec![folder.clone(), lava.clone()],
        check_pct: Some(20.0),
        now_unix: 1,
        ..Default::default()
    };
    let (added, opened) = opens::during(|| crate::results::history::add::add(&mut store, &request));
    assert_eq!(added.unwrap().len(), 2);
    opened_once(&opened, &want);
    drop(store);

    // `report --history URL`: the report's reading is what history checks.
    let options = crate::results::report::Options {
        inputs: vec![folder, lava],
        threshold_us: Some(100_000.0),
        ..Default::default()
    };
    let (checks, opened) = opens::during(|| {
        let (_, mut reading) = crate::results::report::build_with_runs(&options).unwrap();
        crate::results::history::check_report(
            &location,
            &options,
            &mut reading,
            20.0,
            crate::results::history::DEFAULT_WAIT,
        )
    });
    assert_eq!(checks.unwrap().len(), 2);
    opened_once(&opened, &want);
}

/// `report --history` judges each input alone from the command's reading: the same run
/// `history add` records from the path.
#[test]
fn report_history_judges_each_input_as_history_add_records_it() {
    let root = tempfile::tempdir().unwrap();
    let (folder, _) = result_folder(root.path());
    let lava = data("lava-run-2023.01-cyclictest-status-blocks-idle.log");
    let options = crate::results::report::Options {
        inputs: vec![folder.clone(), lava.clone()],
        ..Default::default()
    };
    let (_, mut reading) = crate::results::report::build_with_runs(&options).unwrap();
    for (at, path) in [folder, lava].iter().enumerate() {
        let one = reading.judge_one(&options, at).unwrap();
        let from_reading = crate::results::history::record::from_report(
            &path.display().to_string(),
            &one,
            reading.inputs[at].run_json.as_ref(),
            None,
        );
        let from_path = crate::results::history::record::read(path, None, None).unwrap();
        assert_eq!(from_reading, from_path, "{}", path.display());
    }
}

/// `history compare A B` with a result folder, a LAVA job log and a bundle manifest as sides:
/// the LAVA log was sniffed, then opened again by the record's reader; now the sniffer's open
/// file is what the log's reader (or the manifest's) reads on from.
#[test]
fn history_compare_opens_each_input_once() {
    let root = tempfile::tempdir().unwrap();
    let (folder, mut want) = result_folder(root.path());
    let lava = data("lava-run-2023.01-cyclictest-status-blocks-idle.log");
    want.push(lava.clone());
    let mut runs: &[crate::formats::history_json::HistoryRun] = &[];
    for side in [&folder, &lava] {
        let (resolved, opened) = opens::during(|| {
            crate::results::history::compare::resolve(&mut runs, &side.display().to_string())
        });
        assert_eq!(resolved.unwrap().runs.len(), 1, "{}", side.display());
        opened_once(
            &opened,
            &want.iter().filter(|p| p.starts_with(side)).cloned().collect::<Vec<_>>(),
        );
    }
    // A file that is neither: read as a bundle manifest from the sniffer's open file, refused.
    let manifest = root.path().join("bundle.manifest.json");
    crate::files::write::fixture(&manifest, "{\"schema\": 1}\n").unwrap();
    let (resolved, opened) = opens::during(|| {
        crate::results::history::compare::resolve(&mut runs, &manifest.display().to_string())
    });
    let err = resolved.unwrap_err().to_string();
    assert!(err.contains("not an rtbuild bundle manifest"), "{err}");
    opened_once(&opened, &[manifest]);
}
