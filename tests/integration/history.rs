//! `rtbuild history`: the same tests against the embedded SQLite file and a private PostgreSQL
//! server (started per test as the unprivileged test user, Unix socket only; see
//! [`crate::support::pg_server`]). Golden runs are `rtbuild test` result folders made here from the real
//! cyclictest 2.4 outputs in tests/data, so every figure is known: CPU 1 of
//! `cyclictest-2.4-json-1thread-cpu1.json` has max 477 µs and p99.9 379 µs, CPU 1 of
//! `cyclictest-2.4-json-2threads-overflow.json` max 3000 µs (as `rtbuild report` reads them).

use std::path::{Path, PathBuf};

use crate::support::harness::{Test, data};
use crate::support::pg_server::PgServer;

/// A history database for one test.
struct Db {
    url: String,
    /// Where the golden runs are written.
    dir: tempfile::TempDir,
    server: Option<PgServer>,
}

/// `history add`'s stderr with each run's id (the first 12 hex digits of its digest, which
/// the code under test computes) written `[ID]`.
fn ids_redacted(stderr: &str) -> String {
    stderr
        .lines()
        .map(|line| {
            let said = line.trim_start();
            let pad = &line[..line.len() - said.len()];
            let id = said.split_once(' ').and_then(|(status, rest)| {
                let (id, tail) = rest.split_once(' ')?;
                let hex = id.len() == 12 && id.bytes().all(|b| b.is_ascii_hexdigit());
                (matches!(status, "Recorded" | "Known") && hex).then_some((status, tail))
            });
            match id {
                Some((status, tail)) => format!("{pad}{status} [ID] {tail}\n"),
                None => format!("{line}\n"),
            }
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Kind {
    Sqlite,
    Postgres,
}

impl Db {
    fn new(kind: Kind) -> Db {
        let dir = tempfile::Builder::new().prefix("rtbuild-history").tempdir().unwrap();
        match kind {
            Kind::Sqlite => Db {
                url: format!("sqlite:{}", dir.path().join("db/history.sqlite").display()),
                dir,
                server: None,
            },
            Kind::Postgres => {
                let server = PgServer::start();
                Db { url: server.url(), dir, server: Some(server) }
            }
        }
    }

    /// `rtbuild ARGS… --db URL`.
    fn rtbuild(&self, args: &[&str]) -> Test {
        Test::new().args(args).args(["--db", &self.url])
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The line `history add` prints for a run: `Recorded` (stored now) or `Known` (already
    /// held), its verdict, where it was read from and the database; its id is written `[ID]`.
    fn added(&self, status: &str, verdict: &str, source: &str) -> String {
        format!("{status:>12} [ID] {verdict} ({source}) in {}\n", self.url)
    }

    /// The line a command that wrote `file` prints.
    fn wrote(&self, file: &Path) -> String {
        format!("       Wrote {}\n", file.display())
    }

    /// Runs SQL straight on the database (what a newer rtbuild would have written).
    fn sql(&self, statement: &str) {
        match &self.server {
            None => {
                let file = self.url.strip_prefix("sqlite:").unwrap();
                let db = rusqlite::Connection::open(file).unwrap();
                db.execute_batch(statement).unwrap();
            }
            Some(server) => {
                let mut client = ::postgres::Config::new()
                    .host_path(server.socket_dir())
                    .user(crate::support::harness::TEST_USER)
                    .dbname("postgres")
                    .connect(::postgres::NoTls)
                    .unwrap();
                client.batch_execute(statement).unwrap();
            }
        }
    }

    /// The first column of the first row of `query`, as text.
    fn scalar(&self, query: &str) -> String {
        match &self.server {
            None => {
                let file = self.url.strip_prefix("sqlite:").unwrap();
                let db = rusqlite::Connection::open(file).unwrap();
                db.query_row(query, [], |row| row.get::<_, i64>(0)).unwrap().to_string()
            }
            Some(server) => {
                let mut client = ::postgres::Config::new()
                    .host_path(server.socket_dir())
                    .user(crate::support::harness::TEST_USER)
                    .dbname("postgres")
                    .connect(::postgres::NoTls)
                    .unwrap();
                client.query_one(query, &[]).unwrap().get::<_, i64>(0).to_string()
            }
        }
    }

    /// The first column of every row of `query`, which must be text.
    fn texts(&self, query: &str) -> Vec<String> {
        match &self.server {
            None => {
                let file = self.url.strip_prefix("sqlite:").unwrap();
                let db = rusqlite::Connection::open(file).unwrap();
                let mut statement = db.prepare(query).unwrap();
                statement
                    .query_map([], |row| row.get::<_, String>(0))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            }
            Some(server) => {
                let mut client = ::postgres::Config::new()
                    .host_path(server.socket_dir())
                    .user(crate::support::harness::TEST_USER)
                    .dbname("postgres")
                    .connect(::postgres::NoTls)
                    .unwrap();
                client.query(query, &[]).unwrap().iter().map(|row| row.get(0)).collect()
            }
        }
    }

    /// A golden result folder: one scenario per `(name, tests/data file)`, started at
    /// `started`, on `uname`; `invalid` marks every scenario invalid.
    fn run(
        &self,
        name: &str,
        started: u64,
        scenarios: &[(&str, &str)],
        invalid: Option<&str>,
    ) -> String {
        self.run_on(name, started, scenarios, invalid, "6.6.52-rt43", "isolcpus=1 nohz_full=1")
    }

    fn run_on(
        &self,
        name: &str,
        started: u64,
        scenarios: &[(&str, &str)],
        invalid: Option<&str>,
        release: &str,
        cmdline: &str,
    ) -> String {
        let dir = self.path(name);
        std::fs::create_dir_all(dir.join("raw")).unwrap();
        let mut list = Vec::new();
        for (scenario, file) in scenarios {
            let raw = format!("raw/{}.json", scenario.replace(['/', ' ', '\'', ';'], "_"));
            std::fs::copy(data(file), dir.join(&raw)).unwrap();
            list.push(serde_json::json!({
                "name": scenario, "state": "done", "files": [raw], "elapsed_s": 60.0,
                "invalid_reasons": invalid.map(|r| vec![r]).unwrap_or_default(),
            }));
        }
        let run_json = serde_json::json!({
            "machine": "rb3gen2-core-kit",
            "target": "ssh://root@rb3",
            "rt_cpus": "1",
            "housekeeping": "0",
            "threshold_us": 1000,
            "started_unix": started,
            "state": "finished",
            "fingerprint": {
                "uname": format!("Linux rb3 {release} #1 SMP PREEMPT_RT Tue Oct  1 00:00:00 UTC 2024 aarch64 GNU/Linux"),
                "cmdline": cmdline, "isolated": "1", "nohz_full": "1", "realtime": true,
                "governors": ["policy0 performance"]
            },
            "scenarios": list,
        });
        std::fs::write(dir.join("run.json"), run_json.to_string()).unwrap();
        dir.display().to_string()
    }

    /// `history list --json`.
    fn list(&self, filters: &[&str]) -> Vec<serde_json::Value> {
        let run = self.rtbuild(&["--json", "history", "list"]).args(filters).run().success();
        let json = run.json();
        assert_eq!(json["schema"], "rtbuild-history/1");
        json["runs"].as_array().unwrap().clone()
    }
}

const CPU1: &str = "cyclictest-2.4-json-1thread-cpu1.json";
const WORSE: &str = "cyclictest-2.4-json-2threads-overflow.json";

/// Each test, once per backend.
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $name() { super::$name(super::Kind::Sqlite) })*
        }
        mod postgres {
            $(#[test] fn $name() { super::$name(super::Kind::Postgres) })*
        }
    };
}

both!(
    add_records_every_field_and_a_second_add_records_nothing,
    eight_concurrent_adds_lose_and_duplicate_nothing,
    invalid_runs_are_stored_and_shown_invalid,
    compare_gives_the_change_and_the_inputs_that_differ,
    check_flags_a_regression_against_the_valid_runs_only,
    an_empty_database_is_migrated_on_first_use,
    a_database_from_a_newer_rtbuild_is_refused,
    sql_in_a_scenario_name_is_stored_as_text,
    the_views_answer_latest_run_and_max_per_day,
    the_trend_page_draws_the_worst_figures_and_regressions_the_database_counts,
);

fn add_records_every_field_and_a_second_add_records_nothing(kind: Kind) {
    let db = Db::new(kind);
    let first = db.run("first", 1_796_000_000, &[("stress", CPU1)], None);
    let second = db.run("second", 1_796_086_400, &[("idle", CPU1), ("stress", WORSE)], None);
    db.rtbuild(&["history", "add", &first, &second])
        .run()
        .success()
        .stderr_contains(&format!("FAIL ({second}) in {}\n", db.url))
        .stderr_contains("    Recorded ");
    let runs = db.list(&[]);
    assert_eq!(runs.len(), 2);
    let run = &runs[0];
    assert_eq!(run["source"], first.as_str());
    assert_eq!(run["kind"], "result-folder");
    assert_eq!(run["machine"], "rb3gen2-core-kit");
    assert_eq!(run["target"], "ssh://root@rb3");
    assert_eq!(run["kernel_release"], "6.6.52-rt43");
    assert_eq!(run["kernel_version"], "#1 SMP PREEMPT_RT Tue Oct 1 00:00:00 UTC 2024");
    assert_eq!(run["started_unix"], 1_796_000_000);
    assert_eq!(run["duration_s"], 60.0);
    assert_eq!(run["threshold_us"], 1000.0);
    assert_eq!(run["verdict"], "PASS");
    assert_eq!(run["valid"], true);
    assert_eq!(run["inputs"]["boot_args"], "isolcpus=1 nohz_full=1");
    assert!(run["inputs"]["tuning"].as_array().unwrap().contains(&"isolated 1".into()));
    assert_eq!(run["tuning_fingerprint"].as_str().unwrap().len(), 64);
    assert_eq!(run["digest"].as_str().unwrap().len(), 64);
    let row = &run["results"][0];
    assert_eq!(
        (&row["scenario"], &row["test"], &row["cpu"], &row["samples"]),
        (&"stress".into(), &"cyclictest".into(), &1.into(), &3000.into())
    );
    assert_eq!((row["max_us"].as_f64(), row["p999_us"].as_f64()), (Some(477.0), Some(379.0)));
    assert_eq!((row["overflows"].as_u64(), row["verdict"].as_str()), (Some(0), Some("PASS")));
    for key in ["min_us", "avg_us", "p99_us"] {
        assert!(row[key].as_f64().is_some(), "{key}: {row}");
    }
    // The second run: two scenarios, CPU 0 and 1 in `stress`, FAIL over 1000 µs.
    assert_eq!(runs[1]["verdict"], "FAIL");
    assert_eq!(runs[1]["results"].as_array().unwrap().len(), 3);

    // The same run again (even copied elsewhere) is known by its content digest.
    let copy = db.path("copy");
    copy_dir(Path::new(&first), &copy);
    db.rtbuild(&["history", "add", &first, copy.to_str().unwrap()])
        .run()
        .success()
        .stderr_contains("       Known ");
    assert_eq!(db.list(&[]).len(), 2);
    assert_eq!(db.scalar("SELECT COUNT(*) FROM results"), "4");
    // Filters.
    assert_eq!(db.list(&["--scenario", "idle"]).len(), 1);
    assert_eq!(db.list(&["--since", "2026-11-30T12:00:00Z"]).len(), 1);
    assert_eq!(db.list(&["--machine", "qcs6490-rb3gen2"]).len(), 0);
    db.rtbuild(&["history", "list"]).run().success().stdout_contains(
        "2026-11-30T00:53:20Z  rb3gen2-core-kit  6.6.52-rt43  -       PASS     477\n",
    );
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn eight_concurrent_adds_lose_and_duplicate_nothing(kind: Kind) {
    let db = Db::new(kind);
    let common = db.run("common", 1_795_000_000, &[("idle", CPU1)], None);
    let runs: Vec<String> = (0..8)
        .map(|i| db.run(&format!("run{i}"), 1_796_000_000 + i, &[("idle", CPU1)], None))
        .collect();
    // Eight rtbuild processes at once, each adding the common run and its own, on a database
    // none of them has created yet.
    let stored_common: Vec<bool> = std::thread::scope(|scope| {
        let adds: Vec<_> = runs
            .iter()
            .map(|run| {
                let (db, common) = (&db, &common);
                scope.spawn(move || {
                    let added = db.rtbuild(&["history", "add", common, run]).run().success();
                    let said = ids_redacted(&added.stderr());
                    let own = db.added("Recorded", "PASS", run);
                    let stored = said == db.added("Recorded", "PASS", common) + &own;
                    if !stored {
                        assert_eq!(said, db.added("Known", "PASS", common) + &own);
                    }
                    stored
                })
            })
            .collect();
        adds.into_iter().map(|add| add.join().unwrap()).collect()
    });
    let stored = stored_common.iter().filter(|s| **s).count();
    assert_eq!(stored, 1, "one add stores the common run, seven find it Known: {stored_common:?}");
    let listed = db.list(&[]);
    assert_eq!(listed.len(), 9, "{listed:?}");
    let mut sources: Vec<&str> = listed.iter().map(|r| r["source"].as_str().unwrap()).collect();
    sources.sort();
    let mut want: Vec<&str> = runs.iter().map(String::as_str).chain([common.as_str()]).collect();
    want.sort();
    assert_eq!(sources, want);
    assert_eq!(db.scalar("SELECT COUNT(*) FROM results"), "9");
    assert_eq!(db.scalar("SELECT COUNT(*) FROM rtbuild_schema"), "3");
}

fn invalid_runs_are_stored_and_shown_invalid(kind: Kind) {
    let db = Db::new(kind);
    let good = db.run("good", 1_796_000_000, &[("stress", CPU1)], None);
    let bad = db.run("bad", 1_796_086_400, &[("stress", WORSE)], Some("only 991 of 60000 cycles"));
    db.rtbuild(&["history", "add", &good, &bad]).run().success().stderr_redacted_is(
        ids_redacted,
        &(db.added("Recorded", "PASS", &good) + &db.added("Recorded", "INVALID", &bad)),
    );
    let runs = db.list(&[]);
    assert_eq!(
        (runs[1]["verdict"].as_str(), runs[1]["valid"].as_bool()),
        (Some("INVALID"), Some(false))
    );
    assert_eq!(runs[1]["reasons"][0], "stress: invalid run: only 991 of 60000 cycles");
    assert_eq!(runs[1]["results"][0]["valid"], false);
    // The list shows no worst case for it; show marks its rows.
    db.rtbuild(&["history", "list"])
        .run()
        .success()
        .stdout_contains("  INVALID  -\n")
        .stdout_contains("  PASS     477\n");
    db.rtbuild(&["history", "show", &runs[1]["digest"].as_str().unwrap()[..10]])
        .run()
        .success()
        .stdout_contains("  stress    cyclictest  1    3334     9    14.5  14   -      3000  11         INVALID\n");
}

/// Writes a bundle manifest as `rtbuild bundle` does, with the given build inputs.
fn manifest(db: &Db, name: &str, commit: &str, config_sha256: &str, lock: &str) -> String {
    let manifest = serde_json::json!({
        "format": 1, "rtbuild_version": "0.1.0", "machine": "rb3gen2-core-kit",
        "image": "qcom-multimedia-image", "qcomflash": "qcom-multimedia-image-rb3gen2-core-kit.rootfs-20261201.qcomflash",
        "build_time": null,
        "kernel": {"version": "6.6.52-rt43", "cmdline": "console=ttyMSM0", "cmdline_source": "rtbuild-plan.json", "config_sha256": config_sha256},
        "verify": {"status": "passed", "allowed_unverified": false, "checks": []},
        "repos": [{"name": "meta-qcom", "url": "https://github.com/qualcomm-linux/meta-qcom", "branch": "master", "commit": commit, "dirty": false},
                  {"name": "poky", "url": null, "branch": null, "commit": "1111111111111111111111111111111111111111", "dirty": false}],
        "lock": {"file": "rb3.lock.yml", "content": lock},
        "flash_command": ["qdl", "prog_firehose_ddr.elf", "rawprogram*.xml", "patch*.xml"],
        "files": []
    });
    let path = db.path(&format!("{name}.qcomflash.manifest.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    path.display().to_string()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn compare_gives_the_change_and_the_inputs_that_differ(kind: Kind) {
    let db = Db::new(kind);
    let (config_a, config_b) = (
        "CONFIG_PREEMPT_RT=y\nCONFIG_HZ=250\n# CONFIG_NO_HZ_FULL is not set\n",
        "CONFIG_PREEMPT_RT=y\nCONFIG_HZ=1000\nCONFIG_NO_HZ_FULL=y\n",
    );
    std::fs::write(db.path("a.config"), config_a).unwrap();
    std::fs::write(db.path("b.config"), config_b).unwrap();
    let old_commit = "a".repeat(40);
    let new_commit = "b".repeat(40);
    let bundle_a = manifest(&db, "a", &old_commit, &sha256_hex(config_a.as_bytes()), "lock: a\n");
    let bundle_b = manifest(&db, "b", &new_commit, &sha256_hex(config_b.as_bytes()), "lock: b\n");
    let old =
        db.run_on("old", 1_796_000_000, &[("stress", CPU1)], None, "6.6.52-rt43", "isolcpus=1");
    let new = db.run_on(
        "new",
        1_796_086_400,
        &[("stress", WORSE)],
        None,
        "6.6.60-rt46",
        "isolcpus=1 nohz_full=1",
    );
    db.rtbuild(&["history", "add", &old, "--bundle", &bundle_a])
        .run()
        .success()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "PASS", &old));
    db.rtbuild(&["history", "add", &new, "--bundle", &bundle_b])
        .run()
        .success()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "FAIL", &new));
    let runs = db.list(&[]);
    assert_eq!(runs[0]["kernel_config_digest"], sha256_hex(config_a.as_bytes()));
    assert_eq!(runs[0]["lock_digest"], sha256_hex(b"lock: a\n"));
    let bundle_bytes = std::fs::read(&bundle_a).unwrap();
    assert_eq!(runs[0]["bundle_digest"], sha256_hex(&bundle_bytes));
    // Two kernel releases, two bundles (by manifest) and two runs (by digest) compare alike.
    let expected_row = "rb3gen2-core-kit  stress    cyclictest  1    477    3000   +528.9 %  379      -        -\n";
    for (a, b) in [
        ("6.6.52-rt43".to_string(), "6.6.60-rt46".to_string()),
        (bundle_a.clone(), bundle_b.clone()),
        (runs[0]["digest"].as_str().unwrap()[..8].to_string(), new.clone()),
    ] {
        let configs =
            ["a.config", "b.config"].map(|c| format!("--config={}", db.path(c).display()));
        db.rtbuild(&["history", "compare", &a, &b])
            .args(configs)
            .run()
            .success()
            .stdout_contains(expected_row)
            .stdout_contains("  kernel_release: 6.6.52-rt43 → 6.6.60-rt46\n")
            .stdout_contains("  boot_args: isolcpus=1 → isolcpus=1 nohz_full=1\n")
            .stdout_contains(&format!("  repo meta-qcom: {old_commit} → {new_commit}\n"))
            .stdout_contains("  CONFIG_HZ: 250 → 1000\n")
            .stdout_contains("  CONFIG_NO_HZ_FULL: not set → y\n");
    }
    let json = db
        .rtbuild(&["--json", "history", "compare", "6.6.52-rt43", "6.6.60-rt46"])
        .run()
        .success()
        .json();
    assert_eq!(json["rows"][0]["max_change_pct"].as_f64().map(|p| p.round()), Some(529.0));
    let inputs: Vec<&str> = json["changed_inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["input"].as_str().unwrap())
        .collect();
    assert!(inputs.contains(&"lock_digest") && !inputs.contains(&"repo poky"), "{inputs:?}");
    db.rtbuild(&["history", "compare", "6.1.0", "6.6.60-rt46"]).run().usage_error(
        "no recorded run, bundle or kernel release matches `6.1.0`; see `rtbuild history list`",
    );
}

fn check_flags_a_regression_against_the_valid_runs_only(kind: Kind) {
    let db = Db::new(kind);
    let base1 = db.run("base1", 1_796_000_000, &[("stress", CPU1)], None);
    let base2 = db.run("base2", 1_796_010_000, &[("stress", CPU1)], None);
    // An invalid run with the worse figures: stored, never part of the baseline.
    let invalid = db.run("invalid", 1_796_020_000, &[("stress", WORSE)], Some("throttled"));
    db.rtbuild(&["history", "add", &base1, &base2, &invalid]).run().success().stderr_redacted_is(
        ids_redacted,
        &[
            db.added("Recorded", "PASS", &base1),
            db.added("Recorded", "PASS", &base2),
            db.added("Recorded", "INVALID", &invalid),
        ]
        .concat(),
    );
    let digests: Vec<String> =
        db.list(&[]).iter().map(|r| r["digest"].as_str().unwrap()[..12].to_string()).collect();

    let same = db.run("same", 1_796_030_000, &[("stress", CPU1)], None);
    db.rtbuild(&["history", "add", "--check", &same])
        .run()
        .success()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "PASS", &same))
        .stdout_contains("PASS run ")
        .stdout_contains("(rb3gen2-core-kit): within +20 % of 2 baseline runs\n");

    let worse = db.run_on(
        "worse",
        1_796_040_000,
        &[("stress", WORSE)],
        None,
        "6.6.60-rt46",
        "isolcpus=1 nohz_full=1",
    );
    // `report --history` compares without recording.
    Test::new()
        .args(["report", &worse, "--history", &db.url])
        .run()
        .code_is(1)
        .stdout_contains("REGRESSION rb3gen2-core-kit stress cyclictest CPU 1: max 3000 µs, baseline 477 µs (+528.9 %: more than +20 %, crosses the 1000 µs threshold); baseline runs ");
    assert_eq!(db.list(&[]).len(), 4, "report --history records nothing");
    let run = db
        .rtbuild(&["history", "add", "--check", "--regression-pct", "50", &worse])
        .run()
        .code_is(1)
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "FAIL", &worse));
    let out = run.stdout();
    let line = out.lines().find(|l| l.starts_with("REGRESSION ")).expect(&out);
    assert!(line.contains("(+528.9 %: more than +50 %, crosses the 1000 µs threshold)"), "{line}");
    // The baseline: the valid runs, newest first (`same`, base2, base1); the invalid one is
    // left out.
    let listed = db.list(&[]);
    let same_digest = &listed[3]["digest"].as_str().unwrap()[..12];
    assert_eq!(
        line.split("baseline runs ").nth(1),
        Some(format!("{same_digest}, {}, {}", digests[1], digests[0]).as_str()),
        "{line}"
    );
    assert!(out.ends_with("changed input kernel_release: 6.6.52-rt43 → 6.6.60-rt46\n"), "{out}");
    assert!(!out.contains("boot_args"), "the boot arguments did not change: {out}");
}

fn an_empty_database_is_migrated_on_first_use(kind: Kind) {
    let db = Db::new(kind);
    db.rtbuild(&["history", "list"]).run().success().stdout_is("no runs recorded\n");
    assert_eq!(db.scalar("SELECT MAX(version) FROM rtbuild_schema"), "3");
    assert_eq!(db.scalar("SELECT COUNT(*) FROM runs"), "0");
    // A database an older rtbuild wrote (schema 1: no lookup indexes, no views) gets
    // migrations 2 and 3 alone.
    db.sql("DROP VIEW max_per_machine_day");
    db.sql("DROP VIEW latest_run_per_machine_scenario");
    db.sql("DROP INDEX results_by_scenario");
    db.sql("DROP INDEX runs_by_machine_time");
    db.sql("DROP INDEX runs_by_bundle");
    db.sql("DROP INDEX runs_by_release");
    db.sql("DELETE FROM rtbuild_schema WHERE version >= 2");
    db.rtbuild(&["history", "list"]).run().success().stdout_is("no runs recorded\n");
    assert_eq!(db.scalar("SELECT COUNT(*) FROM rtbuild_schema"), "3");
    assert_eq!(db.scalar("SELECT COUNT(*) FROM max_per_machine_day"), "0");
    db.sql("DROP INDEX runs_by_release");
    db.sql("DROP INDEX runs_by_machine_time");
}

fn a_database_from_a_newer_rtbuild_is_refused(kind: Kind) {
    let db = Db::new(kind);
    db.rtbuild(&["history", "list"]).run().success().stdout_is("no runs recorded\n");
    db.sql("INSERT INTO rtbuild_schema (version) VALUES (4)");
    let run = db.run("r", 1_796_000_000, &[("stress", CPU1)], None);
    let shown = db.url.clone();
    db.rtbuild(&["history", "add", &run]).run().usage_error(&format!(
        "the history database {shown} has schema version 4, but this rtbuild knows up to 3; upgrade rtbuild"
    ));
    assert_eq!(db.scalar("SELECT COUNT(*) FROM runs"), "0", "nothing written");
}

fn sql_in_a_scenario_name_is_stored_as_text(kind: Kind) {
    let db = Db::new(kind);
    let name = "idle'); DROP TABLE runs; --";
    let run = db.run("inject", 1_796_000_000, &[(name, CPU1)], None);
    db.rtbuild(&["history", "add", &run])
        .run()
        .success()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "PASS", &run));
    let runs = db.list(&["--scenario", name]);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["results"][0]["scenario"], name);
    assert_eq!(db.scalar("SELECT COUNT(*) FROM runs"), "1");
}

/// Issue 38 item 7: the views of migration 3 answer a dashboard's two common questions, with
/// the figures of the golden runs (CPU1 max 477 µs; WORSE max 1250 µs on CPU 0, 3000 µs on
/// CPU 1): the latest run per machine and scenario (whatever its verdict: the view carries it),
/// and the max per machine per UTC day over valid results only.
fn the_views_answer_latest_run_and_max_per_day(kind: Kind) {
    let db = Db::new(kind);
    // Day 20787 (starts 1_795_996_800): A (stress, idle) and B (stress, worse).
    let a = db.run("a", 1_796_000_000, &[("stress", CPU1), ("idle", CPU1)], None);
    let b = db.run("b", 1_796_003_600, &[("stress", WORSE)], None);
    // Day 20788 (starts 1_796_083_200): C (stress), and D, invalid and worse, last.
    let c = db.run("c", 1_796_090_000, &[("stress", CPU1)], None);
    let d = db.run("d", 1_796_090_100, &[("stress", WORSE)], Some("the load died"));
    db.rtbuild(&["history", "add", &a, &b, &c, &d]).run().success().stderr_redacted_is(
        ids_redacted,
        &[
            db.added("Recorded", "PASS", &a),
            db.added("Recorded", "FAIL", &b),
            db.added("Recorded", "PASS", &c),
            db.added("Recorded", "INVALID", &d),
        ]
        .concat(),
    );
    let digest_of = |source: &str| -> String {
        let runs = db.list(&[]);
        let run = runs.iter().find(|r| r["source"] == source).unwrap();
        run["digest"].as_str().unwrap().to_string()
    };
    assert_eq!(
        db.texts(
            "SELECT scenario || ' ' || run_digest || ' ' || verdict FROM latest_run_per_machine_scenario \
             WHERE machine = 'rb3gen2-core-kit' ORDER BY scenario"
        ),
        [format!("idle {} PASS", digest_of(&a)), format!("stress {} INVALID", digest_of(&d))]
    );
    assert_eq!(
        db.scalar(
            "SELECT CAST(max_us AS BIGINT) FROM latest_run_per_machine_scenario WHERE scenario = 'stress'"
        ),
        "3000"
    );
    let day = |column: &str, day_unix: i64| {
        db.scalar(&format!(
            "SELECT CAST({column} AS BIGINT) FROM max_per_machine_day \
             WHERE machine = 'rb3gen2-core-kit' AND day_unix = {day_unix}"
        ))
    };
    assert_eq!(
        (day("max_us", 1_795_996_800), day("runs", 1_795_996_800)),
        ("3000".into(), "2".into())
    );
    // D's 3000 µs is invalid: the day's max is C's 477 µs.
    assert_eq!(
        (day("max_us", 1_796_083_200), day("runs", 1_796_083_200)),
        ("477".into(), "1".into())
    );
    assert_eq!(db.scalar("SELECT COUNT(*) FROM max_per_machine_day"), "2");
}

/// `history export --openmetrics` read back by prometheus_client's OpenMetrics parser (PyPI,
/// real): one series per machine, scenario, test, CPU and statistic, one point per run at its
/// start, oldest first; the figures are the golden runs' (CPU 1: 477 µs, then 3000 µs), in
/// seconds; a hostile scenario name comes back unchanged, as a label value.
#[test]
fn history_export_openmetrics_reads_back_in_prometheus_client() {
    let db = Db::new(Kind::Sqlite);
    let hostile = "idle\"} 1\n# EOF\\";
    let a = db.run("a", 1_796_000_000, &[("stress", CPU1), (hostile, CPU1)], None);
    let b = db.run("b", 1_796_003_600, &[("stress", WORSE)], None);
    db.rtbuild(&["history", "add", &b, &a]).run().success().stderr_redacted_is(
        ids_redacted,
        &[db.added("Recorded", "FAIL", &b), db.added("Recorded", "PASS", &a)].concat(),
    );
    let file = db.path("out/history.om");
    let file_arg = file.display().to_string();
    db.rtbuild(&["history", "export", "--openmetrics", &file_arg])
        .run()
        .success()
        .stderr_is(&db.wrote(&file));
    let families = parse_openmetrics(&file);
    assert_eq!(families[0]["name"], "rtbuild_latency_seconds");
    assert_eq!(
        (families[0]["type"].as_str(), families[0]["unit"].as_str()),
        (Some("gauge"), Some("seconds"))
    );
    assert_eq!(families[1]["name"], "rtbuild_latency_samples");
    let max_cpu1: Vec<(f64, i64)> = families[0]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            let l = &s["labels"];
            l["statistic"] == "max" && l["cpu"] == "1" && l["scenario"] == "stress"
        })
        .map(|s| (s["value"].as_f64().unwrap(), s["timestamp"].as_i64().unwrap()))
        .collect();
    assert_eq!(max_cpu1, [(0.000477, 1_796_000_000), (0.003, 1_796_003_600)]);
    let labels = &families[0]["samples"][0]["labels"];
    assert_eq!(labels["machine"], "rb3gen2-core-kit");
    assert_eq!(labels["test"], "cyclictest");
    assert_eq!(labels["kernel_release"], "6.6.52-rt43");
    let scenarios: std::collections::BTreeSet<&str> = families[0]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["labels"]["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(scenarios, [hostile, "stress"].into_iter().collect());
    // --machine narrows it; nothing recorded for that machine is a file with no series.
    db.rtbuild(&["history", "export", "--openmetrics", &file_arg, "--machine", "nope"])
        .run()
        .success()
        .stderr_is(&db.wrote(&file));
    let empty = parse_openmetrics(&file);
    assert!(empty.iter().all(|f| f["samples"].as_array().unwrap().is_empty()), "{empty:?}");
}

/// `report --openmetrics` (no timestamps: the current figures, as node_exporter's textfile
/// collector wants them), labelled with the bundle's digest from `--bundle`, read by
/// prometheus_client; two inputs of one series are refused, and nothing is written.
#[test]
fn report_openmetrics_reads_back_in_prometheus_client() {
    let db = Db::new(Kind::Sqlite);
    let a = db.run("a", 1_796_000_000, &[("stress", WORSE)], None);
    let manifest =
        manifest(&db, "b", "1111111111111111111111111111111111111111", &"3".repeat(64), "lock");
    let bundle_digest = sha256_hex(&std::fs::read(&manifest).unwrap());
    let file = db.path("report.om");
    let file_arg = file.display().to_string();
    Test::new()
        .args(["report", &a, "--openmetrics", &file_arg, "--bundle", &manifest])
        .run()
        .code_is(1)
        .ignore_stdout()
        .stderr_is(&db.wrote(&file));
    let families = parse_openmetrics(&file);
    let samples = families[0]["samples"].as_array().unwrap();
    let max: Vec<(&str, f64)> = samples
        .iter()
        .filter(|s| s["labels"]["statistic"] == "max")
        .map(|s| (s["labels"]["cpu"].as_str().unwrap(), s["value"].as_f64().unwrap()))
        .collect();
    assert_eq!(max, [("0", 0.00125), ("1", 0.003)]);
    assert!(samples.iter().all(|s| s["timestamp"].is_null()));
    assert!(samples.iter().all(|s| s["labels"]["bundle_digest"] == bundle_digest.as_str()));
    let counts: Vec<f64> = families[1]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["value"].as_f64().unwrap())
        .collect();
    assert_eq!(counts, [5000.0, 3334.0]);
    // The same run twice gives each series twice: refused, the old file left as it was.
    let before = std::fs::read(&file).unwrap();
    let again = db.run("again", 1_796_000_000, &[("stress", WORSE)], None);
    Test::new()
        .args(["report", &a, &again, "--openmetrics", &file_arg])
        .run()
        .code_is(2)
        .ignore_stdout()
        .stderr_contains("error: two inputs give the OpenMetrics series {machine=\"rb3gen2-core-kit\",scenario=\"stress\",test=\"cyclictest\",cpu=\"0\",kernel_release=\"6.6.52-rt43\"}; a report's");
    assert_eq!(std::fs::read(&file).unwrap(), before);
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
        "prometheus_client (pip install prometheus_client==0.26.0, .ci/setup) refused {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap()
}

#[test]
fn an_unreachable_server_is_one_error_line_without_the_password() {
    let gone = tempfile::tempdir().unwrap();
    let url =
        format!("postgresql://lab:hunter2@/rt?host={}", gone.path().join("nothing").display());
    let run = Test::new()
        .args(["history", "list", "--db", &url])
        .within_secs(60)
        .run()
        .code_is(2)
        .stdout_is("");
    let stderr = run.stderr();
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: cannot open the history database postgresql://lab:***@/rt?host={}: error connecting to server",
            gone.path().join("nothing").display()
        )),
        "{stderr}"
    );
    // The same from RTBUILD_DB.
    let run = Test::new()
        .args(["history", "list"])
        .env("RTBUILD_DB", &url)
        .run()
        .code_is(2)
        .stdout_is("");
    assert!(!run.stderr().contains("hunter2") && run.stderr().contains("lab:***@"));
}

#[test]
fn bad_history_input_is_one_error_line() {
    Test::new()
        .args(["history", "list", "--db", "mysql://u:pw@h/db"])
        .run()
        .usage_error("--db mysql://u:***@h/db: it is neither `sqlite:PATH` nor `postgres://…`; pass `sqlite:PATH` or `postgres://USER@HOST/DB`");
    Test::new()
        .args(["history", "list", "--since", "last week", "--db", "sqlite:h.db"])
        .run()
        .usage_error(
            "--since \"last week\" is not a date; pass YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ (UTC)",
        );
    let test = Test::new().file("notes.txt", "hello\n");
    let notes = test.path().join("notes.txt");
    test.args(["history", "add"])
        .arg_path(&notes)
        .args(["--db", "sqlite:h.db"])
        .run()
        .usage_error(&format!(
            "{} is neither an `rtbuild test` result folder nor a LAVA job log; pass what `rtbuild report` reads",
            notes.display()
        ));
    // A FIFO (or folder) where the database file should be is refused, not opened.
    let test = Test::new();
    let fifo = test.path().join("fifo.sqlite");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    test.args(["history", "list", "--db", &format!("sqlite:{}", fifo.display())])
        .within_secs(30)
        .run()
        .usage_error(&format!(
            "cannot open the history database sqlite:{}: it is not a regular file; check --db (or RTBUILD_DB): it must name an SQLite history file",
            fifo.display()
        ));
    // A FIFO as the run is refused without waiting for a writer.
    let test = Test::new();
    let fifo = test.path().join("run.fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    test.args(["history", "add"])
        .arg_path(&fifo)
        .args(["--db", "sqlite:h.db"])
        .within_secs(30)
        .run()
        .usage_error(&format!(
            "{} is neither an `rtbuild test` result folder nor a LAVA job log; pass what `rtbuild report` reads",
            fifo.display()
        ));
    Test::new()
        .args(["history", "add", "--check", "--regression-pct=-5", "--db", "sqlite:h.db", "."])
        .run()
        .usage_error(
            "--regression-pct -5 is not usable; pass a percentage from 0 to 1000, such as 20",
        );
    // A percentage that would pass every run is refused by every command that takes it, before
    // anything is read or written.
    for (pct, shown) in [("NaN", "NaN"), ("inf", "inf"), ("1e308", "1e308"), ("1000.5", "1000.5")] {
        let want = format!(
            "--regression-pct {shown} is not usable; pass a percentage from 0 to 1000, such as 20"
        );
        let flag = format!("--regression-pct={pct}");
        Test::new()
            .args(["history", "add", "--check", &flag, "--db", "sqlite:h.db", "."])
            .run()
            .usage_error(&want);
        let test = Test::new();
        let page = test.path().join("t.html");
        test.args(["history", "report", "--html", "t.html", &flag, "--db", "sqlite:h.db"])
            .run()
            .usage_error(&want);
        assert!(!page.exists(), "{pct}: no page written");
        Test::new()
            .args(["report", ".", "--history", "sqlite:h.db", &flag])
            .run()
            .usage_error(&want);
    }
}

#[test]
fn the_default_database_is_under_xdg_data_home() {
    let test = Test::new();
    let data_home = test.path().join("data");
    let dir = test.path().join("r");
    std::fs::create_dir_all(dir.join("raw")).unwrap();
    std::fs::copy(data(CPU1), dir.join("raw/stress.json")).unwrap();
    std::fs::write(
        dir.join("run.json"),
        r#"{"machine":"rb3gen2-core-kit","scenarios":[{"name":"stress","files":["raw/stress.json"]}]}"#,
    )
    .unwrap();
    let want = data_home.join("rtbuild/history.sqlite");
    let run = test
        .args(["history", "add"])
        .arg_path(&dir)
        .env("XDG_DATA_HOME", &data_home)
        .run()
        .success()
        .stderr_contains(&format!("in sqlite:{}\n", want.display()));
    assert!(want.is_file());
    drop(run);
}

/// The trend page: per board and scenario a log-scale chart with the threshold line, every
/// point linked to its run's build identity, the regression ringed and the invalid run crossed
/// out; text from run.json escaped; no script or external resource. Its width is read in real
/// headless Chromium at 1280 px, and a screenshot is taken.
#[test]
fn the_trend_page_marks_regressions_and_invalid_runs_and_fits_1280_px_in_chromium() {
    let db = Db::new(Kind::Sqlite);
    let base1 = db.run("base1", 1_796_000_000, &[("stress", CPU1), ("idle <b>&", CPU1)], None);
    let base2 = db.run("base2", 1_796_086_400, &[("stress", CPU1)], None);
    let invalid = db.run("invalid", 1_796_172_800, &[("stress", WORSE)], Some("throttled"));
    let worse = db.run("worse", 1_796_259_200, &[("stress", WORSE)], None);
    let bundle = manifest(&db, "b", &"c".repeat(40), &"d".repeat(64), "lock: x\n");
    db.rtbuild(&["history", "add", &base1, &base2, &invalid]).run().success().stderr_redacted_is(
        ids_redacted,
        &[
            db.added("Recorded", "PASS", &base1),
            db.added("Recorded", "PASS", &base2),
            db.added("Recorded", "INVALID", &invalid),
        ]
        .concat(),
    );
    db.rtbuild(&["history", "add", &worse, "--bundle", &bundle])
        .run()
        .success()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "FAIL", &worse));
    let page = db.path("trend.html");
    db.rtbuild(&["history", "report", "--html", page.to_str().unwrap()])
        .run()
        .success()
        .stderr_is(&format!("       Wrote {}\n", page.display()));
    let html = std::fs::read_to_string(&page).unwrap();
    for external in ["<script", "<link", "src=", "@import", "url("] {
        assert!(!html.contains(external), "self-contained: found {external}");
    }
    assert!(
        html.contains("<h2>rb3gen2-core-kit · idle &lt;b&gt;&amp; · cyclictest</h2>"),
        "escaped"
    );
    let stress =
        html.find("<h2>rb3gen2-core-kit · stress · cyclictest</h2>").expect("stress series");
    let section = &html[stress..];
    assert!(section.contains("threshold 1000 µs"));
    assert!(section.contains("<line class=\"threshold\""));
    assert!(section.contains("1 regression<") && section.contains("1 invalid run<"));
    assert_eq!(section.matches("<circle class=\"regression\"").count(), 1);
    // The invalid run's max; its p99.9 lies among overflowed samples (CPU 1), so it has none.
    assert_eq!(section.matches("<path class=\"invalid\"").count(), 1);
    // Each point links to its table row, which names the build.
    let runs = db.list(&[]);
    let worse_short = &runs[3]["digest"].as_str().unwrap()[..12];
    let anchor = format!("href=\"#s1-{worse_short}\"");
    assert!(section.contains(&anchor), "{anchor}");
    let row_at =
        section.find(&format!("<tr id=\"s1-{worse_short}\" class=\"regression\">")).expect("row");
    let row = &section[row_at..section[row_at..].find("</tr>").unwrap() + row_at];
    assert!(row.contains(&runs[3]["bundle_digest"].as_str().unwrap()[..12]), "{row}");
    assert!(
        row.contains("dddddddddddd") && row.contains("6.6.52-rt43") && row.contains("REGRESSION"),
        "{row}"
    );
    // The invalid run is not on the line: the max line has the three valid points only.
    let line_at = section.find("<polyline class=\"max\" points=\"").unwrap();
    let points = section[line_at..].split('"').nth(3).unwrap();
    assert_eq!(points.split(' ').count(), 3, "{points}");
    // p99.9 is unknown for `worse` too: not drawn as the best CPU's 14 µs.
    let line_at = section.find("<polyline class=\"p999\" points=\"").unwrap();
    assert_eq!(section[line_at..].split('"').nth(3).unwrap().split(' ').count(), 2);

    let probe = html.replace(
        "</body>",
        "<script>document.body.setAttribute('data-width', document.documentElement.scrollWidth)</script></body>",
    );
    let probe_path = db.path("probe.html");
    std::fs::write(&probe_path, probe).unwrap();
    let profile = db.path("chromium-profile");
    let dom = crate::support::chromium::chromium(
        &["--window-size=1280,900", "--dump-dom", &format!("file://{}", probe_path.display())],
        &profile,
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    let width: u32 = dom
        .split("data-width=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no width in the DOM: {dom}"));
    assert!(width > 0 && width <= 1280, "the page is {width} px wide in a 1280 px window");
    let shot = std::env::var_os("RTBUILD_TREND_SHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| db.path("trend.png"));
    crate::support::chromium::chromium(
        &[
            "--window-size=1280,1400",
            &format!("--screenshot={}", shot.display()),
            &format!("file://{}", page.display()),
        ],
        &profile,
    );
    let png = std::fs::read(&shot).expect("chromium wrote a screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "screenshot has content");
}

/// A LAVA job log of an `rtbuild lava` job (the console lines `lavacli jobs logs --raw` gives,
/// with rtbuild's markers around the real cyclictest JSON) is recorded like a result folder.
#[test]
fn a_lava_job_log_is_recorded_like_a_result_folder() {
    let db = Db::new(Kind::Sqlite);
    let entry = |msg: &str| {
        format!(
            "- {{\"dt\": \"2026-11-30T14:00:00.000000\", \"lvl\": \"target\", \"msg\": {}}}\n",
            serde_json::to_string(msg).unwrap()
        )
    };
    let mut log = entry(
        "<<<RTBUILD-RUN machine=rb3gen2-core-kit threshold_us=800 scenarios=stress duration=1m>>>",
    );
    log.push_str(&entry("<<<RTBUILD-RAW-BEGIN scenario=stress format=json>>>"));
    for line in std::fs::read_to_string(data(CPU1)).unwrap().lines() {
        log.push_str(&entry(line));
    }
    log.push_str(&entry("<<<RTBUILD-RAW-END scenario=stress exit=0>>>"));
    let path = db.path("lava-job-1234.yaml");
    std::fs::write(&path, log).unwrap();
    db.rtbuild(&["history", "add", path.to_str().unwrap()])
        .run()
        .success()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "FAIL", path.to_str().unwrap()));
    let runs = db.list(&[]);
    let run = &runs[0];
    assert_eq!(
        (run["kind"].as_str(), run["machine"].as_str()),
        (Some("lava-log"), Some("rb3gen2-core-kit"))
    );
    // The log's console printed threshold_us=800: never used; the default is, unless the
    // job's threshold is given (`history add --threshold-us`).
    assert_eq!(run["threshold_us"], 100.0);
    let row = &run["results"][0];
    assert_eq!(
        (row["scenario"].as_str(), row["cpu"].as_u64(), row["max_us"].as_f64()),
        (Some("stress"), Some(1), Some(477.0))
    );
    assert_eq!(row["p999_us"].as_f64(), Some(379.0));
}

/// The kernel config digest `rtbuild test` recorded on the target is the run's config digest in
/// the history (it is what ran); a bundle's fills it only for runs that recorded none.
#[test]
fn the_measured_kernel_config_digest_is_recorded() {
    let db = Db::new(Kind::Sqlite);
    let measured = "1".repeat(64);
    let with = db.run("measured", 1_764_000_000, &[("idle", CPU1)], None);
    let path = Path::new(&with).join("run.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json["fingerprint"]["kernel_config_sha256"] = measured.as_str().into();
    json["fingerprint"]["kernel_config_source"] = "/proc/config.gz".into();
    std::fs::write(&path, json.to_string()).unwrap();
    let without = db.run("older", 1_764_000_100, &[("idle", CPU1)], None);
    let shipped = "2".repeat(64);
    let bundle = manifest(&db, "rel", &"a".repeat(40), &shipped, "lock\n");
    for run in [&with, &without] {
        db.rtbuild(&["history", "add", run, "--bundle", &bundle])
            .run()
            .success()
            .stderr_redacted_is(ids_redacted, &db.added("Recorded", "PASS", run));
    }
    let runs = db.list(&[]);
    assert_eq!(runs[0]["kernel_config_digest"], measured.as_str(), "{:#}", runs[0]);
    assert_eq!(runs[1]["kernel_config_digest"], shipped.as_str(), "{:#}", runs[1]);
}

/// Issue 34 item 8: a server that accepts the connection and then says nothing (a TCP listener
/// on 127.0.0.1 that never answers) hung `history` forever: the connect timeout covered only
/// the socket connect. Now the whole login has the deadline (`connect_timeout` in the URL, else
/// 15 s, which the library's `a_urls_connect_timeout_is_capped_at_a_minute` checks without
/// waiting for it) and every statement one of its own; the error is one line naming the
/// deadline.
#[test]
fn a_server_that_accepts_and_never_answers_is_given_up_in_one_line() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let _held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in listener.incoming() {
            open.push(stream);
        }
    });
    for (query, seconds) in [("?connect_timeout=2", 2), ("?connect_timeout=1", 1)] {
        let url = format!("postgresql://lab:hunter2@127.0.0.1:{port}/rt{query}");
        let started = std::time::Instant::now();
        let run = Test::new()
            .args(["history", "list", "--db", &url])
            .within_secs(60)
            .run()
            .code_is(2)
            .stdout_is("");
        assert!(started.elapsed() < std::time::Duration::from_secs(seconds + 20));
        let stderr = run.stderr();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
        assert!(
            stderr.contains(&format!(
                ": the server did not answer within {seconds} s (connecting and logging in); it accepts connections but does not respond; check --db"
            )),
            "{stderr}"
        );
    }
}

/// Issue 34, the second probe: a server that answers the startup message with a message whose
/// length header claims 0x7fffffff bytes made the client library allocate ~2 GiB and abort
/// rtbuild (exit 134 under 1 GiB of address space, no error line). rtbuild reads the server
/// through a guard that refuses a message past 8 MiB: one line naming the size, exit 2. Also
/// after a normal login (`AuthenticationOk`), on the first statement's answer.
#[test]
fn a_server_that_sends_a_2_gib_message_is_refused_in_one_line() {
    use std::io::{Read, Write};
    // An `R` (authentication) message with a 2 GiB length, then the start of its body; and a
    // login that succeeds (`AuthenticationOk`, `ReadyForQuery`) followed by a 2 GiB `T`.
    let huge: &[u8] = &[b'R', 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0];
    let after_login: &[u8] =
        &[b'R', 0, 0, 0, 8, 0, 0, 0, 0, b'Z', 0, 0, 0, 5, b'I', b'T', 0x7f, 0xff, 0xff, 0xff, 0, 1];
    for answer in [huge, after_login] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let reply = answer.to_vec();
        let _server = std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let reply = reply.clone();
                std::thread::spawn(move || {
                    let mut startup = [0u8; 4096];
                    let _ = stream.read(&mut startup);
                    let _ = stream.write_all(&reply);
                    // Later messages (the first statement) get no answer beyond what was sent.
                    while stream.read(&mut startup).is_ok_and(|n| n > 0) {}
                });
            }
        });
        let url = format!("postgresql://lab:hunter2@127.0.0.1:{port}/rt?connect_timeout=20");
        let run = Test::new()
            .args(["history", "list", "--db", &url])
            .within_secs(60)
            .within_memory_mib(1024)
            .run()
            .code_is(2)
            .stdout_is("");
        let stderr = run.stderr();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!(
                "error: the history server at postgresql://lab:***@127.0.0.1:{port}/rt?connect_timeout=20 sent a message of 2147483647 bytes, more than the 8 MiB rtbuild reads from one; check that --db names a PostgreSQL server"
            )
        );
    }
}

/// A qcom-linux-testkit RT-tests results folder as the lab leaves it (layout of testkit
/// a12072a's `Runner/suites/Kernel/RT-tests/<Test>/run.sh` and `Runner/utils/lib_rt.sh`):
/// `<Test>/<TESTNAME>.res` with `<TESTNAME> PASS|FAIL`, and `<Test>/logs_<TESTNAME>/` holding
/// each iteration's JSON (`<prefix>-<N>.json`), the program's stdout log and `result.txt` KPI
/// lines. The raw outputs are the real rt-tests 2.4 files in tests/data (cyclictest: max
/// 477 µs on CPU 1).
fn testkit_results(root: &Path) -> PathBuf {
    let suite = root.join("Runner/suites/Kernel/RT-tests");
    let cyclic = suite.join("Cyclictest");
    let logs = cyclic.join("logs_CyclicTest");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(cyclic.join("CyclicTest.res"), "CyclicTest PASS\n").unwrap();
    std::fs::copy(data(CPU1), logs.join("cyclictest-1.json")).unwrap();
    std::fs::write(logs.join("cyclictest_stdout_iter1.log"), "# /dev/cpu_dma_latency set to 0us\n")
        .unwrap();
    std::fs::write(
        logs.join("result.txt"),
        "iteration-1-t0-max-latency pass 477 us\ncyclictest-all-max-latency-max pass 477 us\n\
         cyclictest-worst-thread-max-latency pass 477 us\ncyclictest-worst-thread-id pass 0 id\n",
    )
    .unwrap();
    let oslat = suite.join("OSLat");
    let logs = oslat.join("logs_OSLat");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(oslat.join("OSLat.res"), "OSLat PASS\n").unwrap();
    std::fs::copy(data("oslat-2.4-json-cpu1.json"), logs.join("oslat-1.json")).unwrap();
    std::fs::write(logs.join("result.txt"), "oslat-all-max-latency-max pass 19103 us\n").unwrap();
    suite
}

/// #33: a lab that runs testkit gets rtbuild's history from the same run: `history add` on a
/// testkit results folder records it (kind `testkit`, scenario `testkit`, cyclictest's figures
/// from testkit's JSON, oslat beside it) and `history report` draws it.
#[test]
fn a_testkit_results_folder_is_recorded_and_drawn_in_the_trend() {
    let db = Db::new(Kind::Sqlite);
    let suite = testkit_results(db.dir.path());
    db.rtbuild(&["history", "add", "--threshold-us", "1000", suite.to_str().unwrap()])
        .run()
        .success()
        .ignore_stdout()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "FAIL", suite.to_str().unwrap()));
    let runs = db.list(&[]);
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    assert_eq!(run["kind"], "testkit", "{run}");
    assert_eq!(run["threshold_us"], 1000.0, "{run}");
    let rows = run["results"].as_array().unwrap();
    let cyclictest = rows
        .iter()
        .find(|r| r["test"] == "cyclictest" || r["test"].is_null())
        .unwrap_or_else(|| panic!("no cyclictest row: {rows:?}"));
    assert_eq!(
        (
            cyclictest["scenario"].as_str(),
            cyclictest["cpu"].as_u64(),
            cyclictest["max_us"].as_f64()
        ),
        (Some("testkit"), Some(1), Some(477.0)),
        "{cyclictest}"
    );
    assert!(rows.iter().any(|r| r["test"] == "oslat"), "oslat recorded too: {rows:?}");
    // A second add of the same folder records nothing new.
    db.rtbuild(&["history", "add", suite.to_str().unwrap(), "--threshold-us", "1000"])
        .run()
        .success()
        .ignore_stdout()
        .stderr_redacted_is(ids_redacted, &db.added("Known", "FAIL", suite.to_str().unwrap()));
    assert_eq!(db.list(&[]).len(), 1);

    let page = db.path("trend.html");
    db.rtbuild(&["history", "report", "--html", page.to_str().unwrap()])
        .run()
        .success()
        .stderr_is(&db.wrote(&page));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(" · testkit · cyclictest</h2>"), "the testkit series: {html}");
    assert!(html.contains(" · testkit · oslat</h2>"), "{html}");
    assert!(html.contains("477"), "cyclictest's max on the page: {html}");
}

impl Db {
    /// A connection of the test's own to the private server, as a second lab user would have.
    fn client(&self) -> ::postgres::Client {
        let server = self.server.as_ref().expect("a PostgreSQL database");
        ::postgres::Config::new()
            .host_path(server.socket_dir())
            .user(crate::support::harness::TEST_USER)
            .dbname("postgres")
            .connect(::postgres::NoTls)
            .unwrap()
    }
}

/// rtbuild's migration lock on PostgreSQL: the advisory lock key "rtbuild" (a fact of the
/// schema every rtbuild shares, so a second client can hold it as a writer would).
const PG_SCHEMA_LOCK: i64 = 0x0072_7462_7569_6c64;

/// The only `error:` line of `stderr`.
fn one_error_line(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    lines[0].to_string()
}

/// Issue 34 item 14 on PostgreSQL: read-only commands (`list`, `show`, `report --html`) no
/// longer take the migrations' advisory lock, so they run while a writer holds it (here a
/// second session of the test, inside its transaction). Before, each waited behind it for the
/// statement deadline and failed.
#[test]
fn postgres_readers_run_while_a_writer_holds_the_migration_lock() {
    let db = Db::new(Kind::Postgres);
    let first = db.run("first", 1_796_000_000, &[("stress", CPU1)], None);
    db.rtbuild(&["history", "add", &first])
        .run()
        .success()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "PASS", &first));
    let mut writer = db.client();
    writer
        .batch_execute(&format!("BEGIN; SELECT pg_advisory_xact_lock({PG_SCHEMA_LOCK})"))
        .unwrap();
    let held: i64 = db
        .client()
        .query_one("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted", &[])
        .unwrap()
        .get(0);
    assert_eq!(held, 1, "the writer's lock is held");
    let list = db.rtbuild(&["--json", "history", "list"]).within_secs(60).run().success();
    assert_eq!(list.json()["runs"].as_array().unwrap().len(), 1);
    db.rtbuild(&["history", "show"]).within_secs(60).run().success().stdout_contains("477");
    let page = db.path("trend.html");
    db.rtbuild(&["history", "report", "--html", page.to_str().unwrap()])
        .within_secs(60)
        .run()
        .success()
        .stderr_is(&db.wrote(&page));
    assert!(std::fs::read_to_string(&page).unwrap().contains("rb3gen2-core-kit"));
    // Still held: the readers did not wait for it, nor take it.
    writer.batch_execute("ROLLBACK").unwrap();
}

/// Issue 34 item 8, the statement deadline on a real server: a second session holds an
/// exclusive lock on the `runs` table, so `history list`'s query waits on the server. rtbuild
/// gives up after its deadline (`--db-timeout 3` here; 120 s by default, as
/// `the_database_wait_is_120_s_unless_db_timeout_sets_1_s_to_a_day` checks) with one line
/// naming the statement and the fix, exit 1, never hangs; the password is not shown.
#[test]
fn a_postgres_statement_past_its_deadline_is_one_error_line() {
    let db = Db::new(Kind::Postgres);
    let first = db.run("first", 1_796_000_000, &[("stress", CPU1)], None);
    db.rtbuild(&["history", "add", &first])
        .run()
        .success()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "PASS", &first));
    let mut holder = db.client();
    holder.batch_execute("BEGIN; LOCK TABLE runs IN ACCESS EXCLUSIVE MODE").unwrap();
    let started = std::time::Instant::now();
    let run = db
        .rtbuild(&["history", "list", "--db-timeout", "3"])
        .within_secs(120)
        .run()
        .code_is(1)
        .stdout_is("");
    let elapsed = started.elapsed();
    assert!(elapsed >= std::time::Duration::from_secs(3), "gave up after {elapsed:?}");
    let line = one_error_line(&run.stderr());
    assert!(
        line.starts_with(&format!(
            "error: history database {}: the server did not answer within 3 s (`SELECT ",
            db.url
        )),
        "{line}"
    );
    assert!(
        line.ends_with("check that the server is healthy and that no other session holds a lock on rtbuild's tables (see pg_locks), then run again, or wait longer with --db-timeout SECONDS"),
        "{line}"
    );
    holder.batch_execute("ROLLBACK").unwrap();
    // The server is fine once the lock is gone.
    assert_eq!(db.list(&[]).len(), 1);
}

/// Issue 34 item 14 on SQLite: another process's connection holds the file's exclusive lock
/// (`BEGIN EXCLUSIVE`), so `history add` waits its deadline (`RTBUILD_DB_TIMEOUT=3` here, the
/// environment's form of `--db-timeout`) and then says so in one line with the file's own fix
/// (not "check that the server is running"), exit 1 or 2, no hang.
#[test]
fn a_locked_sqlite_history_is_one_error_line_with_its_own_fix() {
    let db = Db::new(Kind::Sqlite);
    let first = db.run("first", 1_796_000_000, &[("stress", CPU1)], None);
    let second = db.run("second", 1_796_086_400, &[("idle", CPU1)], None);
    db.rtbuild(&["history", "add", &first])
        .run()
        .success()
        .stderr_redacted_is(ids_redacted, &db.added("Recorded", "PASS", &first));
    let file = db.url.strip_prefix("sqlite:").unwrap().to_string();
    let holder = rusqlite::Connection::open(&file).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let started = std::time::Instant::now();
    let run = db
        .rtbuild(&["history", "add", &second])
        .env("RTBUILD_DB_TIMEOUT", "3")
        .within_secs(120)
        .run();
    let code = run.code();
    let run = run.ignore_stdout();
    assert!(started.elapsed() >= std::time::Duration::from_secs(3), "{:?}", started.elapsed());
    assert!(matches!(code, 1 | 2), "exit {code}: {}", run.stderr());
    let line = one_error_line(&run.stderr());
    assert!(line.contains(&file), "{line}");
    assert!(line.contains("database is locked"), "{line}");
    assert!(
        line.ends_with("another process held the file's write lock for over 3 s; wait for it to finish (`fuser FILE` names it) and run again, or wait longer with --db-timeout SECONDS"),
        "{line}"
    );
    assert!(!line.contains("server"), "{line}");
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_eq!(db.list(&[]).len(), 1, "nothing of the refused run was recorded");
}

/// Issue 37 part 3: the wait for a locked file or a slow statement is a user's choice
/// (`--db-timeout SECONDS` or `RTBUILD_DB_TIMEOUT`, on every history command and on `report
/// --history`), 120 s unless set, as the help says; a wait that is no whole number of seconds
/// from 1 to 86400 is one error line, exit 2, before the database is opened.
#[test]
fn the_database_wait_is_120_s_unless_db_timeout_sets_1_s_to_a_day() {
    for command in [&["history", "add"][..], &["history", "list"], &["report"]] {
        let help = Test::new().args(command).args(["--help"]).run().success().stdout();
        // The flag's line and the lines indented under it, up to the next flag.
        let lines: Vec<&str> = help.lines().collect();
        let flag = lines.iter().position(|l| l.contains("--db-timeout <SECONDS>"));
        let flag = flag.unwrap_or_else(|| panic!("{help}"));
        let indent = |l: &&str| l.len() - l.trim_start().len();
        let more = lines[flag + 1..].iter().take_while(|l| l.is_empty() || indent(l) > 6);
        let shown =
            std::iter::once(&lines[flag]).chain(more).copied().collect::<Vec<_>>().join("\n");
        assert!(shown.contains("[env: RTBUILD_DB_TIMEOUT=]"), "{shown}");
        assert!(shown.contains("[default: 120]"), "{shown}");
    }
    let db = Db::new(Kind::Sqlite);
    for bad in ["0", "86401", "-5", "2.5", "2m", ""] {
        let run = db
            .rtbuild(&["history", "list", &format!("--db-timeout={bad}")])
            .run()
            .code_is(2)
            .stdout_is("");
        let line = one_error_line(&run.stderr());
        assert!(
            line.starts_with(&format!(
                "error: invalid value '{bad}' for '--db-timeout <SECONDS>': "
            )),
            "{line}"
        );
        assert!(line.ends_with("; see `rtbuild history --help` for the values it takes"), "{line}");
        let run = db
            .rtbuild(&["history", "list"])
            .env("RTBUILD_DB_TIMEOUT", bad)
            .run()
            .code_is(2)
            .stdout_is("");
        one_error_line(&run.stderr());
    }
    assert!(!db.path("db").exists(), "no database was made for a bad wait");
    for good in ["1", "86400"] {
        db.rtbuild(&["history", "list", "--db-timeout", good])
            .run()
            .success()
            .stdout_is("no runs recorded\n");
    }
}

/// Issue 37 part 2: the trend page draws what the database counts (each run's worst figure per
/// series, and the regressions), on a small history written here straight into the tables,
/// whose every figure and verdict is worked out by hand (the same history as the library's
/// `the_trend_figures_and_regressions_counted_by_the_database_are_those_of_the_rows`, which
/// also compares them with the per-row path and `check`).
fn the_trend_page_draws_the_worst_figures_and_regressions_the_database_counts(kind: Kind) {
    let db = Db::new(kind);
    db.rtbuild(&["history", "list"]).run().success().stdout_is("no runs recorded\n");
    let runs = [
        ("u000", "rb3", "NULL", 1),
        ("a000", "rb3", "1000", 1),
        ("b000", "rb3", "2000", 1),
        ("c000", "rb3", "3000", 0),
        ("d000", "rb3", "4000", 1),
        ("f000", "iq8275", "4500", 1),
        ("e000", "rb3", "5000", 1),
    ];
    for (digest, machine, started, valid) in runs {
        let verdict = if valid == 1 { "PASS" } else { "INVALID" };
        db.sql(&format!(
            "INSERT INTO runs (digest, source, kind, added_unix, machine, started_unix, \
             threshold_us, verdict, valid, reasons, inputs) VALUES ('{digest}', '/lab/{digest}', \
             'result-folder', 500, '{machine}', {started}, 100, '{verdict}', {valid}, '[]', '{{}}')"
        ));
    }
    // (run, scenario, CPU, max, p99.9, valid row)
    let rows = [
        ("u000", "stress", 1, "40", "20", 1),
        ("u000", "stress", 2, "48", "24", 1),
        ("a000", "stress", 1, "40", "20", 1),
        ("a000", "stress", 2, "50", "25", 1),
        ("b000", "stress", 1, "42", "21", 1),
        ("b000", "stress", 2, "44", "NULL", 1),
        ("b000", "stress", 3, "900", "90", 0),
        ("b000", "memory", 1, "70", "35", 0),
        ("c000", "stress", 1, "300", "30", 0),
        ("c000", "stress", 2, "35", "28", 0),
        ("d000", "stress", 1, "60", "22", 1),
        ("d000", "stress", 2, "45", "24", 1),
        ("d000", "idle", 1, "10", "5", 1),
        ("f000", "idle", 1, "5", "2", 1),
        ("e000", "stress", 1, "41", "21", 1),
        ("e000", "stress", 2, "130", "26", 1),
        ("e000", "idle", 1, "11", "5", 1),
    ];
    for (position, (digest, scenario, cpu, max, p999, valid)) in rows.iter().enumerate() {
        db.sql(&format!(
            "INSERT INTO results (run_digest, position, scenario, test, cpu, max_us, p999_us, \
             verdict, valid, reasons) VALUES ('{digest}', {position}, '{scenario}', \
             'cyclictest', {cpu}, {max}, {p999}, 'PASS', {valid}, '[]')"
        ));
    }
    let page = db.path("trend.html");
    db.rtbuild(&["history", "report", "--html", page.to_str().unwrap()])
        .run()
        .success()
        .stderr_is(&db.wrote(&page));
    let html = std::fs::read_to_string(&page).unwrap();
    // (series, run, max, p99.9, the row's class: regression, INVALID or none)
    let mut drawn: Vec<(String, String, String, String, String)> = Vec::new();
    for section in html.split("<section").skip(1) {
        let title = section.split("<h2>").nth(1).unwrap().split("</h2>").next().unwrap();
        for row in section.split("<tr id=").skip(1) {
            let class = row.split("class=\"").nth(1).unwrap().split('"').next().unwrap();
            let digest = row.split("<code>").nth(1).unwrap().split("</code>").next().unwrap();
            let figures: Vec<&str> =
                row.split("<td>").skip(1).map(|td| td.split("</td>").next().unwrap()).collect();
            assert_eq!(figures.len(), 2, "{row}");
            drawn.push((
                title.to_string(),
                digest.to_string(),
                figures[0].to_string(),
                figures[1].to_string(),
                class.to_string(),
            ));
        }
    }
    drawn.sort();
    let want = |series: &str, run: &str, max: &str, p999: &str, class: &str| {
        let series = format!("{series} · cyclictest");
        (series, run.to_string(), max.to_string(), p999.to_string(), class.to_string())
    };
    let mut expected = vec![
        want("iq8275 · idle", "f000", "5", "2", ""),
        want("rb3 · idle", "d000", "10", "5", ""),
        // Within 20 % of d's 10 µs (f, another board, is no baseline).
        want("rb3 · idle", "e000", "11", "5", ""),
        // Its only row is invalid: no figure.
        want("rb3 · memory", "b000", "-", "-", ""),
        want("rb3 · stress", "a000", "50", "25", ""),
        // CPU 2's p99.9 is unknown; CPU 3's invalid 900 µs is not its worst.
        want("rb3 · stress", "b000", "44", "-", ""),
        // An invalid run's worst is over all its rows.
        want("rb3 · stress", "c000", "300", "30", "INVALID"),
        // CPU 1: 60 µs against the median 40 of b, a and u.
        want("rb3 · stress", "d000", "60", "24", "regression"),
        // CPU 2: 130 µs against the median 46.5 of d, b, a and u.
        want("rb3 · stress", "e000", "130", "26", "regression"),
        want("rb3 · stress", "u000", "48", "24", ""),
    ];
    expected.sort();
    assert_eq!(drawn, expected);
}
