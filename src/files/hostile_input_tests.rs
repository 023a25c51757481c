//! Property tests: table rendering, chart rendering and every parser of user or tool input end,
//! without a panic, on arbitrary input (issue 13 item 8). Inputs are random text and bytes, and
//! real files (the golden cyclictest outputs, shipped machine files, the reproducers in
//! `tests/data/reproducers/`) with random bytes overwritten, cut short or repeated.
//!
//! "Ends" is checked by a watchdog, not a stopwatch: each call runs on its own thread and the
//! test fails when it has not returned after [`BOUND`], far above the microseconds a call takes,
//! so a loaded CI machine cannot make it flaky while a hang (like the chart's, which never
//! returned) still fails instead of stalling the suite.

use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::collection::vec;
use proptest::prelude::*;

use crate::formats::report_json::ThreadReport;
use crate::plan::CpuSet;
use crate::verify::kconfig::KernelConfig;
use crate::verify::kconfig::tree::KconfigTree;

/// How long one call may take before it counts as a hang.
const BOUND: Duration = Duration::from_secs(30);

/// Runs `work` on its own thread; panics when it panicked or has not returned within [`BOUND`].
fn ends<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    match rx.recv_timeout(BOUND) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} did not return within {BOUND:?}")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// A file of the project (test data, machine files), read at test time.
fn project_file(relative: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One of `seeds`, with up to 8 bytes overwritten, then maybe cut short or doubled.
fn mutated(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let count = seeds.len();
    (0..count, vec(any::<(usize, u8)>(), 0..8), any::<usize>(), 0u8..4).prop_map(
        move |(pick, edits, at, shape)| {
            let mut data = seeds[pick].clone();
            if !data.is_empty() {
                for (pos, byte) in edits {
                    let len = data.len();
                    data[pos % len] = byte;
                }
                let cut = at % data.len();
                match shape {
                    0 => data.truncate(cut),
                    1 => data.extend_from_within(cut..),
                    _ => {}
                }
            }
            data
        },
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn cyclictest_seeds() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("cyclictest-")))
        .collect();
    names.sort();
    let mut seeds: Vec<Vec<u8>> = names.iter().map(|p| std::fs::read(p).unwrap()).collect();
    seeds.push(project_file("tests/data/reproducers/h2-idle.txt"));
    seeds
}

fn ftrace_seeds() -> Vec<Vec<u8>> {
    ["61us-softirq-rcu", "439us-late-timer", "158us-slow-timer-irq", "338us-late-switch"]
        .iter()
        .map(|name| project_file(&format!("tests/data/ftrace-6.18-x86-breach-{name}.txt")))
        .collect()
}

const KCONFIG_SEED: &str = "mainmenu \"x\"\nsource \"Kconfig\"\nsource \"sub/Kconfig\"\n\
    menu \"M\"\n\tdepends on A\nif B && !(C || D = \"y\")\nchoice\n\tprompt \"P\"\n\
    config X\n\tbool \"X\"\n\tdepends on $(cc-option,-m) && E\n\tselect Y if Z\n\thelp\n\
    \t  text\n\t  config NOT\nendif\nconfig Y\n\tdef_bool y\nendchoice\nendmenu\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Issue 13 item 2: any cell, of any width (65,536 and beyond included), lays out.
    #[test]
    fn table_renders_any_cells(
        cells in vec(vec("[^\n\r]{0,12}", 3), 0..6),
        wide in prop_oneof![Just(0usize), 65_530usize..65_540],
    ) {
        let mut rows: Vec<[String; 3]> =
            cells.into_iter().map(|r| [r[0].clone(), r[1].clone(), r[2].clone()]).collect();
        if let Some(row) = rows.first_mut() {
            row[1].push_str(&"w".repeat(wide));
        }
        let count = rows.len();
        let out = ends("table", move || {
            crate::text::table::table(&["A".to_string(), "B".to_string(), "C".to_string()], &rows)
        });
        prop_assert_eq!(out.split('\n').count(), count + 1);
    }

    /// Issue 13 item 4: any histogram and any threshold give a chart (or none for no data).
    #[test]
    fn chart_renders_any_histogram_and_threshold(
        buckets in vec((any::<f64>(), any::<u64>()), 0..40),
        threshold in prop_oneof![any::<f64>(), Just(1.72e308), Just(f64::INFINITY), Just(f64::NAN)],
    ) {
        let empty = buckets.is_empty();
        let thread = ThreadReport { buckets, ..ThreadReport::default() };
        let svg = ends("chart", move || crate::results::report::chart::latency_svg(&[thread], threshold));
        match svg {
            None => prop_assert!(empty),
            Some(svg) => prop_assert!(svg.starts_with("<svg") || svg.starts_with("<p class=\"warn\">")),
        }
    }

    /// Every cyclictest format (text, histogram, verbose, JSON) on damaged real outputs.
    #[test]
    fn cyclictest_parser_ends_on_damaged_outputs(data in mutated(cyclictest_seeds())) {
        let parsed = ends("cyclictest::parse", move || {
            crate::results::cyclictest::parse(data.as_slice()).map(|run| run.threads.len())
        });
        if let Ok(threads) = parsed {
            prop_assert!(threads <= crate::results::cyclictest::MAX_THREADS as usize);
        }
    }

    /// The ftrace parser, the kept window and the spike explanation on damaged real traces
    /// (captured from this machine's tracefs), and rtla's analysis text on any input.
    #[test]
    fn ftrace_traces_and_rtla_output_end(data in mutated(ftrace_seeds()), window in any::<u64>()) {
        let text = text(&data);
        let kept = ends("ftrace::keep_window", {
            let text = text.clone();
            move || crate::measure::ftrace::keep_window(&text, window, 50)
        });
        prop_assert!(kept.len() <= text.len() + text.lines().count() + 1);
        ends("ftrace::spike::analyze", move || {
            let spike = crate::measure::ftrace::spike::analyze(&crate::measure::ftrace::parse(&text));
            let _ = crate::measure::ftrace::rtla::stop(&text);
            let _ = crate::measure::ftrace::rtla::explanation(&text);
            spike.map(|s| s.explanation.len())
        });
    }

    /// `rtbuild report` end to end (parse, judge, text, HTML with charts) on damaged outputs.
    #[test]
    fn report_ends_on_damaged_outputs(data in mutated(cyclictest_seeds()), threshold in 0.5f64..1e6) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        crate::files::write::fixture(&path, &data).unwrap();
        let rendered = ends("report", move || {
            let options = crate::results::report::Options {
                inputs: vec![path],
                threshold_us: Some(threshold),
                ..crate::results::report::Options::default()
            };
            crate::results::report::build(&options).map(|r| {
                (crate::results::report::text::render(&r), crate::results::report::html::render(&r))
            })
        });
        if let Ok((text, html)) = rendered {
            prop_assert!(!text.is_empty() && html.contains("</html>"));
        }
    }

    /// Kernel configs, plain and compressed (gzip, xz, zstd streams cut or damaged), fragments
    /// and single lines.
    #[test]
    fn kernel_config_readers_end_on_any_input(
        data in mutated(vec![
            project_file("tests/data/reproducers/preempt-rt-70000.config"),
            b"CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\nCONFIG_D=0x1f\n".to_vec(),
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03".to_vec(),
            b"\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4F".to_vec(),
            b"\x28\xb5\x2f\xfd\x00\x58\x61\x00\x00".to_vec(),
        ]),
        line in any::<String>(),
    ) {
        let lines = data.split(|b| *b == b'\n').count();
        let copy = data.clone();
        let plain = ends("KernelConfig::parse", move || KernelConfig::parse(&copy).map(|c| c.len()));
        let read = ends("KernelConfig::read", move || KernelConfig::read(data.as_slice()).map(|c| c.len()));
        // One setting per line at most, however the bytes were decoded.
        prop_assert!(plain.iter().all(|&n| n <= lines));
        prop_assert!(read.iter().all(|&n| n <= 1 << 20));
        let has_prefix = line.contains("CONFIG_");
        let setting = ends("kconfig::parse_line", move || {
            matches!(crate::verify::kconfig::parse_line(&line), Ok(crate::verify::kconfig::Line::Setting(_)))
        });
        prop_assert!(!setting || has_prefix, "a setting always names a CONFIG_ symbol");
    }

    /// Kernel images: any bytes, and damaged headers of the formats `verify` recognises.
    #[test]
    fn kernel_image_inspection_ends_on_any_bytes(
        data in mutated(vec![
            b"MZ\0\0PE\0\0".repeat(64),
            b"Linux version 6.18.0-rt #1 SMP PREEMPT_RT IKCFG_ST\x1f\x8b\x08\0IKCFG_ED".to_vec(),
            vec![0u8; 4096],
        ]),
    ) {
        let len = data.len();
        let copy = data.clone();
        ends("image::inspect", move || crate::verify::kconfig::image::inspect(&copy).is_ok());
        let uki = ends("image::uki_cmdline", move || crate::verify::kconfig::image::uki_cmdline(&data));
        // A command line is read from inside the file, never made up.
        prop_assert!(uki.is_none_or(|c| c.len() <= len));
    }

    /// Kconfig dependency expressions and whole Kconfig trees (with self-sourcing files).
    #[test]
    fn kconfig_expressions_and_trees_end(
        expr in any::<String>(),
        kconfig in mutated(vec![KCONFIG_SEED.as_bytes().to_vec()]),
    ) {
        let parsed = ends("kconfig::expr::parse", move || {
            crate::verify::kconfig::expr::parse(&expr).map(|e| e.eval(&KernelConfig::default()))
        });
        prop_assert!(parsed.is_none_or(|v| v <= 2));
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        crate::files::write::fixture(dir.path().join("Kconfig"), &kconfig).unwrap();
        crate::files::write::fixture(dir.path().join("sub/Kconfig"), &kconfig).unwrap();
        let root = dir.path().to_path_buf();
        let files = ends("KconfigTree::read", move || {
            KconfigTree::read(&root, Some("arm64")).map(|t| t.files).unwrap_or(0)
        });
        prop_assert!(files <= 2);
    }

    /// CPU lists and cpumasks (issue 13 item 3: bounded before anything is allocated).
    #[test]
    fn cpu_lists_and_masks_end(
        list in prop_oneof![any::<String>(), "[0-9,\\-]{0,40}".prop_map(String::from)],
        mask in prop_oneof![any::<String>(), "[0-9a-f,]{0,1200}".prop_map(String::from)],
    ) {
        let set = ends("CpuSet::parse", move || CpuSet::parse(&list).map(|s| s.len()));
        let masked = ends("CpuSet::from_mask", move || CpuSet::from_mask(&mask).map(|s| s.len()));
        let max = crate::host::cpus::MAX_CPUS as usize;
        prop_assert!(set.iter().all(|&n| n <= max));
        prop_assert!(masked.iter().all(|&n| n <= max));
    }

    /// User machine catalogs: damaged shipped files and the reproducers.
    #[test]
    fn machine_catalogs_end(
        yaml in mutated(vec![
            project_file("machines/qcs615-ride.yaml"),
            project_file("machines/rb3gen2-core-kit.yaml"),
            project_file("tests/data/reproducers/catalog-cpus-4294967295/big.yaml"),
        ]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        crate::files::write::fixture(dir.path().join("board.yaml"), &yaml).unwrap();
        let path = dir.path().to_path_buf();
        let loaded = ends("Catalog::with_user_dir", move || {
            crate::catalog::Catalog::with_user_dir(Some(&path))
                .map(|c| c.machines().map(|m| m.all_cpus().len()).max().unwrap_or(0))
        });
        prop_assert!(loaded.iter().all(|&n| n <= crate::host::cpus::MAX_CPUS as usize));
    }

    /// The one-line values users type: ssh targets, git refs, durations, scenario lists,
    /// cache and mirror flags, and what kas and BitBake print.
    #[test]
    fn value_and_line_parsers_end(value in any::<String>()) {
        let v = value.clone();
        let results = ends("value parsers", move || {
            [
                crate::host::SshTarget::parse(&v).is_ok(),
                crate::plan::values::GitRef::parse(&v).is_ok(),
                crate::measure::testrun::Span::parse(&v).is_ok(),
                crate::measure::testrun::parse_list(&v).is_ok(),
                crate::image::kasrun::caches::Hashserv::parse(&v).is_ok(),
                crate::image::kasrun::caches::HostPort::parse("--x", &v).is_ok(),
                crate::image::kasrun::caches::MirrorUrl::parse("--x", &v).is_ok(),
                crate::image::kas::version::KasVersion::parse(&v).is_some(),
                crate::image::kasrun::events::parse(&v).is_some(),
                crate::lab::job::BundleUrl::parse(&v).is_ok(),
            ]
        });
        prop_assert_eq!(results.len(), 10);
    }

    /// Lock files and LAVA logs, damaged.
    #[test]
    fn lock_files_and_lava_logs_end(
        data in mutated(vec![
            b"header:\n  version: 14\noverrides:\n  repos:\n    oe-core:\n      commit: 0123456789abcdef0123456789abcdef01234567\n".to_vec(),
            b"- {\"dt\": \"2026-01-01T00:00:00\", \"lvl\": \"target\", \"msg\": \"T: 0 ( 1) P:99 I:1000 C: 10 Min: 1 Act: 2 Avg: 2 Max: 5\"}\n".to_vec(),
        ]),
    ) {
        let body = text(&data);
        let lines = body.lines().count();
        let copy = body.clone();
        let lock = ends("LockFile::parse", move || {
            crate::release::lock::LockFile::parse(&copy, Path::new("x.lock.yml")).map(|l| l.repos.len())
        });
        let lava = ends("lava::log::parse", move || {
            crate::lab::log::parse(&body).map(|l| l.scenarios.len())
        });
        // Nothing is invented: at most one repo or scenario per line of input.
        prop_assert!(lock.iter().all(|&n| n <= lines));
        prop_assert!(lava.iter().all(|&n| n <= lines));
    }
}

#[test]
fn the_reproducers_are_kept_as_fixtures() {
    for name in [
        "preempt-rt-70000.config",
        "catalog-name-65536/long.yaml",
        "catalog-cpus-4294967295/big.yaml",
        "h2-idle.txt",
        "threshold-1.72e308/run.json",
    ] {
        assert!(!project_file(&format!("tests/data/reproducers/{name}")).is_empty(), "{name}");
    }
}
