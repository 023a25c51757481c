//! The history store over either backend: opened with its schema migrated, runs added in one
//! transaction each (once per content digest), and read back filtered.

mod rows;

use std::time::Duration;

use super::HistoryError;
use super::backend::{Backend, DbError, Value};
use super::location::Location;
use super::migrations::{self, Schema};
use crate::formats::history_json::HistoryRun;
use rows::{
    digest_list, insert, int, optional_text, prefix_range, real, result_from_row, run_from_row,
    text,
};

/// A digest column a prefix is looked up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrefixColumn {
    Digest,
    Bundle,
}

/// Machine, scenario, test and CPU: what a comparison's row is of.
pub(crate) type Key = (Option<String>, String, String, Option<u32>);

/// Per [`Key`], the worst max and p99.9 over valid rows of valid runs: what `compare` compares,
/// counted here by the database or from runs at hand by `compare`.
pub(crate) type Worst = std::collections::BTreeMap<Key, (Option<f64>, Option<f64>)>;

/// Runs whose result rows one query reads: a few hundred, since the driver holds the rows of
/// one query at once, and a board's five years are 200,000 of them.
pub(crate) const RUNS_A_QUERY: usize = 250;

/// A result row as the trend page reads it ([`Store::series_rows`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SeriesRow {
    pub run_digest: String,
    pub scenario: String,
    pub test: String,
    pub cpu: Option<u32>,
    pub max_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub valid: bool,
}

/// Which runs to read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    pub machine: Option<String>,
    /// Keep runs with this scenario, and only its results.
    pub scenario: Option<String>,
    /// Runs that started at or after this Unix time.
    pub since_unix: Option<i64>,
}

pub(crate) struct Store {
    db: Box<dyn Backend>,
    shown: String,
}

const RUN_COLUMNS: &str = "digest, source, kind, added_unix, machine, target, kernel_release, \
     kernel_version, kernel_config_digest, lock_digest, bundle_digest, tuning_fingerprint, \
     started_unix, duration_s, threshold_us, verdict, valid, reasons, inputs";

/// Result rows per INSERT: 15 parameters each stays under SQLite's 32,766 and PostgreSQL's
/// 65,535 parameters a statement.
const RESULT_ROWS_PER_INSERT: usize = 500;

const RESULT_COLUMNS: &str = "scenario, test, cpu, samples, min_us, avg_us, p99_us, p999_us, \
     max_us, overflows, verdict, valid, reasons";

impl Store {
    /// Opens the database (creating an SQLite file and its folder) and applies the missing
    /// migrations; a database from a newer rtbuild is refused. Another writer's lock on an
    /// SQLite file, and each statement on a server, are waited for `wait` (`--db-timeout`).
    pub(crate) fn open(location: &Location, wait: Duration) -> Result<Store, HistoryError> {
        let shown = location.shown();
        let open_error = |err: DbError| match (location, err.1) {
            (_, Some(bytes)) => HistoryError::Oversized { db: shown.clone(), bytes },
            (Location::Sqlite(_), None) => {
                HistoryError::OpenFile { db: shown.clone(), message: err.0 }
            }
            (Location::Postgres(_), None) => {
                HistoryError::Open { db: shown.clone(), message: err.0 }
            }
        };
        let mut db: Box<dyn Backend> = match location {
            Location::Sqlite(path) => {
                if let Ok(meta) = std::fs::metadata(path)
                    && !meta.is_file()
                {
                    return Err(open_error(DbError::new("it is not a regular file".to_string())));
                }
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        open_error(DbError::new(format!("cannot create {}: {e}", parent.display())))
                    })?;
                }
                Box::new(super::sqlite::Sqlite::open(path, wait).map_err(open_error)?)
            }
            Location::Postgres(url) => {
                Box::new(super::postgres::Postgres::connect(url, wait).map_err(open_error)?)
            }
        };
        match migrations::migrate(db.as_mut()).map_err(open_error)? {
            Schema::Current => Ok(Store { db, shown }),
            Schema::Newer(found) => {
                Err(HistoryError::Newer { db: shown, found, latest: migrations::LATEST })
            }
        }
    }

    /// Opens the database for a command that only reads (`list`, `show`, `compare`, `report`,
    /// `report --history`, `export`): an SQLite file is opened read-only and its schema version
    /// read without taking the write lock, so a reader never waits behind a writer and works on
    /// a file it may not write; on PostgreSQL the version is read outside any transaction,
    /// without the migrations' advisory lock (issue 34 item 14: only writers take it). Only a
    /// database that needs a migration (or does not exist yet) is opened as a writer would.
    /// Locks and statements are waited for `wait`, as [`Store::open`].
    pub(crate) fn open_read(location: &Location, wait: Duration) -> Result<Store, HistoryError> {
        let shown = location.shown();
        let mut db: Box<dyn Backend> = match location {
            Location::Sqlite(path) => {
                if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
                    return Store::open(location, wait);
                }
                Box::new(
                    super::sqlite::Sqlite::open_read_only(path, wait)
                        .map_err(|e| HistoryError::OpenFile { db: shown.clone(), message: e.0 })?,
                )
            }
            Location::Postgres(url) => {
                Box::new(super::postgres::Postgres::connect(url, wait).map_err(|e| match e.1 {
                    Some(bytes) => HistoryError::Oversized { db: shown.clone(), bytes },
                    None => HistoryError::Open { db: shown.clone(), message: e.0 },
                })?)
            }
        };
        match migrations::version(db.as_mut()) {
            Some(found) if found == migrations::LATEST => Ok(Store { db, shown }),
            Some(found) if found > migrations::LATEST => {
                Err(HistoryError::Newer { db: shown, found, latest: migrations::LATEST })
            }
            _ => {
                drop(db);
                Store::open(location, wait)
            }
        }
    }

    /// The database as it may be shown.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    fn failed(&self, err: DbError) -> HistoryError {
        match err.1 {
            Some(bytes) => HistoryError::Oversized { db: self.shown.clone(), bytes },
            None => HistoryError::Db { db: self.shown.clone(), message: err.0 },
        }
    }

    /// Records `run` unless a run with its digest is recorded; whether it was new.
    pub(crate) fn add(&mut self, run: &HistoryRun) -> Result<bool, HistoryError> {
        self.db.begin_write().map_err(|e| self.failed(e))?;
        let added = insert(self.db.as_mut(), run);
        let end = if added.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let ended = self.db.batch(end);
        let added = added.map_err(|e| self.failed(e))?;
        ended.map_err(|e| self.failed(e))?;
        Ok(added)
    }

    /// Records each of `runs` not recorded yet, all in one transaction (nothing of them when
    /// one fails); how many were new. The statements [`Store::add`] runs: for filling a large
    /// history fast (`benches/history.rs`).
    #[cfg(feature = "bench-support")]
    pub(crate) fn add_all(&mut self, runs: &[HistoryRun]) -> Result<usize, HistoryError> {
        self.db.begin_write().map_err(|e| self.failed(e))?;
        let mut added = Ok(0);
        for run in runs {
            added = match (added, insert(self.db.as_mut(), run)) {
                (Ok(n), Ok(new)) => Ok(n + usize::from(new)),
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
            if added.is_err() {
                break;
            }
        }
        let end = if added.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let ended = self.db.batch(end);
        let added = added.map_err(|e| self.failed(e))?;
        ended.map_err(|e| self.failed(e))?;
        Ok(added)
    }

    /// The runs `filter` selects, oldest first (by start time, then digest), each with its
    /// results: a query for the runs and one per [`RUNS_A_QUERY`] of them for their results.
    pub(crate) fn runs(&mut self, filter: &Filter) -> Result<Vec<HistoryRun>, HistoryError> {
        let runs = self.run_headers(filter)?;
        self.with_results(runs, filter.scenario.as_deref())
    }

    /// The runs `filter` selects, oldest first (by start time, then digest), without their
    /// results: one query.
    pub(crate) fn run_headers(&mut self, filter: &Filter) -> Result<Vec<HistoryRun>, HistoryError> {
        let mut clauses = Vec::new();
        let mut params: Vec<Value> = Vec::new();
        if let Some(machine) = &filter.machine {
            params.push(machine.as_str().into());
            clauses.push(format!("machine = ${}", params.len()));
        }
        if let Some(since) = filter.since_unix {
            params.push(since.into());
            clauses.push(format!("started_unix >= ${}", params.len()));
        }
        if let Some(scenario) = &filter.scenario {
            params.push(scenario.as_str().into());
            clauses.push(format!(
                "EXISTS (SELECT 1 FROM results WHERE results.run_digest = runs.digest AND results.scenario = ${})",
                params.len()
            ));
        }
        let mut selected = String::from("SELECT digest FROM runs");
        if !clauses.is_empty() {
            selected.push_str(" WHERE ");
            selected.push_str(&clauses.join(" AND "));
        }
        self.query_runs(
            &format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE digest IN ({selected}) \
                 ORDER BY COALESCE(started_unix, 0), digest"
            ),
            &params,
        )
    }

    /// Every result row of the runs `digests` (at most [`RUNS_A_QUERY`] a call: the driver
    /// holds a query's rows at once), each with its run's digest, in no order; of each row only
    /// what the trend page reads (scenario, test, CPU, max, p99.9 and whether it is valid). One
    /// query, which looks each run's rows up by the results' primary key on both backends
    /// (docs/performance.md): unsorted, since PostgreSQL's sort of a query's 25,000 rows took
    /// longer than finding them.
    pub(crate) fn series_rows(&mut self, digests: &[&str]) -> Result<Vec<SeriesRow>, HistoryError> {
        if digests.is_empty() {
            return Ok(Vec::new());
        }
        let (marks, params) = digest_list(digests);
        let rows = self
            .db
            .query(
                &format!(
                    "SELECT run_digest, scenario, test, cpu, max_us, p999_us, valid FROM results \
                     WHERE run_digest IN ({marks})"
                ),
                &params,
            )
            .map_err(|e| self.failed(e))?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let mut row = row.into_iter();
                let mut next = || row.next().unwrap_or(Value::Int(None));
                let owned = |value: Value| match value {
                    Value::Text(Some(text)) => text,
                    _ => String::new(),
                };
                SeriesRow {
                    run_digest: owned(next()),
                    scenario: owned(next()),
                    test: owned(next()),
                    cpu: next().int().and_then(|v| u32::try_from(v).ok()),
                    max_us: next().real(),
                    p999_us: next().real(),
                    valid: next().int() == Some(1),
                }
            })
            .collect())
    }

    /// The valid runs of `run`'s machine that started no later than it (or whose start, or its
    /// own, is unknown), newest first, other than `run` itself: at most `limit` of them, with
    /// their results. What a regression baseline is chosen from.
    pub(crate) fn earlier_valid_runs(
        &mut self,
        run: &HistoryRun,
        limit: usize,
    ) -> Result<Vec<HistoryRun>, HistoryError> {
        // A run that names no board has no baseline (`regression::check`).
        if run.machine.is_none() {
            return Ok(Vec::new());
        }
        let params: Vec<Value> = vec![
            run.machine.as_deref().into(),
            run.digest.as_str().into(),
            run.started_unix.into(),
            (limit as i64).into(),
        ];
        // `machine = $1` (not IS NOT DISTINCT FROM, which PostgreSQL cannot look up in an
        // index); the casts give PostgreSQL the parameters' types where they stand alone.
        let selected = "SELECT digest FROM runs \
             WHERE (machine = $1 OR (machine IS NULL AND CAST($1 AS TEXT) IS NULL)) \
             AND valid = 1 AND digest <> $2 \
             AND (started_unix IS NULL OR started_unix <= $3 OR CAST($3 AS BIGINT) IS NULL) \
             ORDER BY COALESCE(started_unix, 0) DESC, digest DESC LIMIT $4";
        let runs = self.query_runs(
            &format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE digest IN ({selected}) \
                 ORDER BY COALESCE(started_unix, 0) DESC, digest DESC"
            ),
            &params,
        )?;
        self.with_results(runs, None)
    }

    /// The runs whose `column` starts with `prefix` (lowercase hex), at most `limit`, with
    /// their results.
    pub(crate) fn runs_by_prefix(
        &mut self,
        column: PrefixColumn,
        prefix: &str,
        limit: Option<usize>,
    ) -> Result<Vec<HistoryRun>, HistoryError> {
        let (mut selected, mut params) = prefix_range(column, prefix);
        if let Some(limit) = limit {
            params.push((limit as i64).into());
            selected.push_str(&format!(" ORDER BY digest LIMIT ${}", params.len()));
        }
        self.selected_runs(&selected, &params)
    }

    /// The runs of the bundles whose digest starts with `prefix` (lowercase hex), without
    /// their results, and their worst figures counted by the database.
    pub(crate) fn bundle_runs_worst(
        &mut self,
        prefix: &str,
    ) -> Result<(Vec<HistoryRun>, Worst), HistoryError> {
        let (selected, params) = prefix_range(PrefixColumn::Bundle, prefix);
        self.runs_and_worst(&selected, &params)
    }

    /// The runs of kernel release `release`, without their results, and their worst figures
    /// counted by the database.
    pub(crate) fn release_runs_worst(
        &mut self,
        release: &str,
    ) -> Result<(Vec<HistoryRun>, Worst), HistoryError> {
        self.runs_and_worst("SELECT digest FROM runs WHERE kernel_release = $1", &[release.into()])
    }

    /// The runs `selected` returns (oldest first, results left out) and, per machine,
    /// scenario, test and CPU, the highest max and p99.9 of their valid rows of valid runs:
    /// one row per key however many runs, so a five-year kernel release costs kilobytes.
    fn runs_and_worst(
        &mut self,
        selected: &str,
        params: &[Value],
    ) -> Result<(Vec<HistoryRun>, Worst), HistoryError> {
        let runs = self.query_runs(
            &format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE digest IN ({selected}) \
                 ORDER BY COALESCE(started_unix, 0), digest"
            ),
            params,
        )?;
        if runs.is_empty() {
            return Ok((runs, Worst::new()));
        }
        let rows = self
            .db
            .query(
                &format!(
                    "SELECT runs.machine, results.scenario, results.test, results.cpu, \
                     MAX(results.max_us), MAX(results.p999_us) \
                     FROM results JOIN runs ON runs.digest = results.run_digest \
                     WHERE results.run_digest IN ({selected}) AND runs.valid = 1 \
                     AND results.valid = 1 \
                     GROUP BY runs.machine, results.scenario, results.test, results.cpu"
                ),
                params,
            )
            .map_err(|e| self.failed(e))?;
        let worst = rows
            .iter()
            .map(|row| {
                let machine = optional_text(row, 0);
                let cpu = int(row, 3).and_then(|v| u32::try_from(v).ok());
                ((machine, text(row, 1), text(row, 2), cpu), (real(row, 4), real(row, 5)))
            })
            .collect();
        Ok((runs, worst))
    }

    /// The run with `digest`, with its results.
    pub(crate) fn run(&mut self, digest: &str) -> Result<Option<HistoryRun>, HistoryError> {
        let runs =
            self.selected_runs("SELECT digest FROM runs WHERE digest = $1", &[digest.into()])?;
        Ok(runs.into_iter().next())
    }

    /// The runs whose digests `selected` (a query of one column) returns, oldest first.
    fn selected_runs(
        &mut self,
        selected: &str,
        params: &[Value],
    ) -> Result<Vec<HistoryRun>, HistoryError> {
        let runs = self.query_runs(
            &format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE digest IN ({selected}) \
                 ORDER BY COALESCE(started_unix, 0), digest"
            ),
            params,
        )?;
        self.with_results(runs, None)
    }

    fn query_runs(&mut self, sql: &str, params: &[Value]) -> Result<Vec<HistoryRun>, HistoryError> {
        let rows = self.db.query(sql, params).map_err(|e| self.failed(e))?;
        Ok(rows.iter().map(|row| run_from_row(row)).collect())
    }

    /// Fills in each run's results from the rows `results_where` selects, in one query.
    fn with_results(
        &mut self,
        mut runs: Vec<HistoryRun>,
        scenario: Option<&str>,
    ) -> Result<Vec<HistoryRun>, HistoryError> {
        let at: std::collections::HashMap<String, usize> =
            runs.iter().enumerate().map(|(at, run)| (run.digest.clone(), at)).collect();
        let digests: Vec<String> = runs.iter().map(|r| r.digest.clone()).collect();
        for chunk in digests.chunks(RUNS_A_QUERY) {
            let mut params: Vec<Value> = chunk.iter().map(|d| d.as_str().into()).collect();
            let marks: Vec<String> = (1..=chunk.len()).map(|n| format!("${n}")).collect();
            let mut sql = format!(
                "SELECT run_digest, {RESULT_COLUMNS} FROM results WHERE run_digest IN ({})",
                marks.join(", ")
            );
            if let Some(scenario) = scenario {
                params.push(scenario.into());
                sql.push_str(&format!(" AND scenario = ${}", params.len()));
            }
            sql.push_str(" ORDER BY run_digest, position");
            let rows = self.db.query(&sql, &params).map_err(|e| self.failed(e))?;
            for row in rows {
                if let Some(&at) = at.get(&text(&row, 0)) {
                    runs[at].results.push(result_from_row(&row[1..]));
                }
            }
        }
        Ok(runs)
    }

    /// How many runs and result rows the database holds.
    #[cfg(test)]
    pub(crate) fn counts(&mut self) -> Result<(i64, i64), HistoryError> {
        let count = |db: &mut dyn Backend, table: &str| -> Result<i64, DbError> {
            let rows = db.query(&format!("SELECT COUNT(*) FROM {table}"), &[])?;
            Ok(rows.first().and_then(|r| r.first()).and_then(Value::int).unwrap_or(0))
        };
        let runs = count(self.db.as_mut(), "runs").map_err(|e| self.failed(e))?;
        let results = count(self.db.as_mut(), "results").map_err(|e| self.failed(e))?;
        Ok((runs, results))
    }
}
