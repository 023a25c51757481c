//! The history schema, as numbered migrations applied in order on first use. Table
//! `rtbuild_schema` holds one row per applied migration; a database with a migration this
//! rtbuild does not know is refused (it was written by a newer rtbuild).
//!
//! A migration, once released, never changes: a new column is a new migration.

use super::backend::{Backend, DbError};

/// Each migration's statements, migration 1 first.
const MIGRATIONS: &[&str] = &[
    // 1: runs and their per-scenario, test and CPU results.
    "CREATE TABLE runs (
        digest TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        kind TEXT NOT NULL,
        added_unix BIGINT NOT NULL,
        machine TEXT,
        target TEXT,
        kernel_release TEXT,
        kernel_version TEXT,
        kernel_config_digest TEXT,
        lock_digest TEXT,
        bundle_digest TEXT,
        tuning_fingerprint TEXT,
        started_unix BIGINT,
        duration_s DOUBLE PRECISION,
        threshold_us DOUBLE PRECISION NOT NULL,
        verdict TEXT NOT NULL,
        valid BIGINT NOT NULL,
        reasons TEXT NOT NULL,
        inputs TEXT NOT NULL
    );
    CREATE INDEX runs_by_machine ON runs (machine, started_unix);
    CREATE TABLE results (
        run_digest TEXT NOT NULL REFERENCES runs (digest),
        position BIGINT NOT NULL,
        scenario TEXT NOT NULL,
        test TEXT NOT NULL,
        cpu BIGINT,
        samples BIGINT,
        min_us DOUBLE PRECISION,
        avg_us DOUBLE PRECISION,
        p99_us DOUBLE PRECISION,
        p999_us DOUBLE PRECISION,
        max_us DOUBLE PRECISION,
        overflows BIGINT,
        verdict TEXT NOT NULL,
        valid BIGINT NOT NULL,
        reasons TEXT NOT NULL,
        PRIMARY KEY (run_digest, position)
    );",
    // 2: the lookups `compare` makes by bundle digest prefix and by kernel release (chosen with
    // benches/history.rs; the machine, start-time and digest lookups use the indexes above).
    "CREATE INDEX runs_by_bundle ON runs (bundle_digest);
    CREATE INDEX runs_by_release ON runs (kernel_release);",
    // 3: views for the questions a lab's dashboard asks in SQL (docs/history.md has the
    // queries), in SQL both SQLite and PostgreSQL run, and the indexes they use: a run's time
    // is its start, else when it was added; the results of a scenario are found by scenario.
    "CREATE INDEX runs_by_machine_time ON runs (machine, (COALESCE(started_unix, added_unix)));
    CREATE INDEX results_by_scenario ON results (scenario, run_digest);
    CREATE VIEW latest_run_per_machine_scenario AS
    SELECT machine, scenario, run_digest, run_unix, kernel_release, bundle_digest, verdict,
        valid, max_us, p999_us
    FROM (
        SELECT r.machine AS machine, s.scenario AS scenario, r.digest AS run_digest,
            COALESCE(r.started_unix, r.added_unix) AS run_unix,
            r.kernel_release AS kernel_release, r.bundle_digest AS bundle_digest,
            r.verdict AS verdict, r.valid AS valid,
            MAX(s.max_us) AS max_us, MAX(s.p999_us) AS p999_us,
            ROW_NUMBER() OVER (
                PARTITION BY r.machine, s.scenario
                ORDER BY COALESCE(r.started_unix, r.added_unix) DESC, r.digest DESC
            ) AS newest
        FROM runs r JOIN results s ON s.run_digest = r.digest
        GROUP BY r.machine, s.scenario, r.digest, r.started_unix, r.added_unix,
            r.kernel_release, r.bundle_digest, r.verdict, r.valid
    ) ranked
    WHERE newest = 1;
    CREATE VIEW max_per_machine_day AS
    SELECT r.machine AS machine,
        (COALESCE(r.started_unix, r.added_unix) / 86400) * 86400 AS day_unix,
        MAX(s.max_us) AS max_us, MAX(s.p999_us) AS p999_us,
        COUNT(DISTINCT r.digest) AS runs
    FROM runs r JOIN results s ON s.run_digest = r.digest
    WHERE r.valid = 1 AND s.valid = 1
    GROUP BY r.machine, (COALESCE(r.started_unix, r.added_unix) / 86400) * 86400;",
];

/// The schema version this rtbuild writes and reads.
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

/// What [`migrate`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Schema {
    /// At [`LATEST`] (after applying the missing migrations).
    Current,
    /// Written by a newer rtbuild: the version found.
    Newer(i64),
}

/// The schema version, read without a transaction or a lock (for read-only commands); `None`
/// when the database has no schema yet or cannot be read so (the writer's path then migrates
/// it, or says what is wrong).
pub(crate) fn version(db: &mut dyn Backend) -> Option<i64> {
    let rows = db.query("SELECT MAX(version) FROM rtbuild_schema", &[]).ok()?;
    rows.first().and_then(|row| row.first()).and_then(|v| v.int())
}

/// Brings the schema to [`LATEST`] inside one transaction that no other rtbuild migrates in at
/// the same time; changes nothing in a newer database.
pub(crate) fn migrate(db: &mut dyn Backend) -> Result<Schema, DbError> {
    db.begin_write()?;
    let applied = (|| {
        db.lock_schema()?;
        db.batch("CREATE TABLE IF NOT EXISTS rtbuild_schema (version BIGINT PRIMARY KEY)")?;
        let rows = db.query("SELECT MAX(version) FROM rtbuild_schema", &[])?;
        let found = rows.first().and_then(|row| row.first()).and_then(|v| v.int()).unwrap_or(0);
        if found > LATEST {
            return Ok(Schema::Newer(found));
        }
        for (at, statements) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            db.batch(statements)?;
            db.execute(
                "INSERT INTO rtbuild_schema (version) VALUES ($1)",
                &[(at as i64 + 1).into()],
            )?;
        }
        Ok(Schema::Current)
    })();
    match applied {
        Ok(schema) => {
            db.batch("COMMIT")?;
            Ok(schema)
        }
        Err(err) => {
            let _ = db.batch("ROLLBACK");
            Err(err)
        }
    }
}
