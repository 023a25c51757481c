//! The store's rows: how a run and its results are inserted, and read back from the columns
//! the queries return; the digest lookups' ranges and parameter lists.

use super::{PrefixColumn, RESULT_COLUMNS, RESULT_ROWS_PER_INSERT, RUN_COLUMNS};
use crate::formats::history_json::{HistoryResult, HistoryRun};
use crate::formats::verdict::{TestVerdict, Verdict};
use crate::results::history::backend::{Backend, DbError, Value};

pub(super) fn insert(db: &mut dyn Backend, run: &HistoryRun) -> Result<bool, DbError> {
    let params: Vec<Value> = vec![
        run.digest.as_str().into(),
        run.source.as_str().into(),
        run.kind.as_str().into(),
        run.added_unix.into(),
        run.machine.as_deref().into(),
        run.target.as_deref().into(),
        run.kernel_release.as_deref().into(),
        run.kernel_version.as_deref().into(),
        run.kernel_config_digest.as_deref().into(),
        run.lock_digest.as_deref().into(),
        run.bundle_digest.as_deref().into(),
        run.tuning_fingerprint.as_deref().into(),
        run.started_unix.into(),
        run.duration_s.into(),
        Some(run.threshold_us).into(),
        run.verdict.as_str().into(),
        i64::from(run.valid).into(),
        json(&run.reasons).as_str().into(),
        json(&run.inputs).as_str().into(),
    ];
    let placeholders: Vec<String> = (1..=params.len()).map(|n| format!("${n}")).collect();
    let changed = db.execute(
        &format!(
            "INSERT INTO runs ({RUN_COLUMNS}) VALUES ({}) ON CONFLICT (digest) DO NOTHING",
            placeholders.join(", ")
        ),
        &params,
    )?;
    if changed == 0 {
        return Ok(false);
    }
    // The results in as few statements as the backends' parameter limits allow.
    let rows: Vec<Vec<Value>> = run
        .results
        .iter()
        .enumerate()
        .map(|(position, r)| {
            vec![
                run.digest.as_str().into(),
                (position as i64).into(),
                r.scenario.as_str().into(),
                r.test.as_str().into(),
                r.cpu.map(i64::from).into(),
                r.samples.map(|v| v as i64).into(),
                r.min_us.into(),
                r.avg_us.into(),
                r.p99_us.into(),
                r.p999_us.into(),
                r.max_us.into(),
                r.overflows.map(|v| v as i64).into(),
                r.verdict.as_str().into(),
                i64::from(r.valid).into(),
                json(&r.reasons).as_str().into(),
            ]
        })
        .collect();
    for chunk in rows.chunks(RESULT_ROWS_PER_INSERT) {
        let mut params: Vec<Value> = Vec::with_capacity(chunk.len() * 15);
        let mut tuples = Vec::with_capacity(chunk.len());
        for row in chunk {
            let first = params.len();
            params.extend(row.iter().cloned());
            let numbers: Vec<String> =
                (first + 1..=params.len()).map(|n| format!("${n}")).collect();
            tuples.push(format!("({})", numbers.join(", ")));
        }
        db.execute(
            &format!(
                "INSERT INTO results (run_digest, position, {RESULT_COLUMNS}) VALUES {}",
                tuples.join(", ")
            ),
            &params,
        )?;
    }
    Ok(true)
}

/// The first lowercase hex string after every string that starts with `prefix` ("ab" → "ac",
/// "af" → "b"); none after "fff…". Digits sort before letters in every collation, so the range
/// holds on PostgreSQL's locale collations too.
fn hex_successor(prefix: &str) -> Option<String> {
    let mut digits: Vec<u8> = prefix.bytes().collect();
    while let Some(last) = digits.pop() {
        let next = match last {
            b'0'..=b'8' | b'a'..=b'e' => last + 1,
            b'9' => b'a',
            _ => continue,
        };
        digits.push(next);
        return String::from_utf8(digits).ok();
    }
    None
}

/// `$1, $2, …` for `digests`, and the digests as parameters.
pub(super) fn digest_list(digests: &[&str]) -> (String, Vec<Value>) {
    let marks: Vec<String> = (1..=digests.len()).map(|n| format!("${n}")).collect();
    (marks.join(", "), digests.iter().map(|d| (*d).into()).collect())
}

/// A JSON text column.
fn json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The query of the digests of the runs whose `column` starts with `prefix` (lowercase hex),
/// and its parameters: a range on the column rather than LIKE, which the index serves on both
/// backends.
pub(super) fn prefix_range(column: PrefixColumn, prefix: &str) -> (String, Vec<Value>) {
    let column = match column {
        PrefixColumn::Digest => "digest",
        PrefixColumn::Bundle => "bundle_digest",
    };
    let mut params: Vec<Value> = vec![prefix.into()];
    let mut selected = format!("SELECT digest FROM runs WHERE {column} >= $1");
    if let Some(end) = hex_successor(prefix) {
        params.push(end.as_str().into());
        selected.push_str(&format!(" AND {column} < ${}", params.len()));
    }
    (selected, params)
}

pub(super) fn text(row: &[Value], at: usize) -> String {
    row.get(at).and_then(Value::text).unwrap_or_default()
}

pub(super) fn optional_text(row: &[Value], at: usize) -> Option<String> {
    row.get(at).and_then(Value::text)
}

pub(super) fn int(row: &[Value], at: usize) -> Option<i64> {
    row.get(at).and_then(Value::int)
}

pub(super) fn real(row: &[Value], at: usize) -> Option<f64> {
    row.get(at).and_then(Value::real)
}

pub(super) fn run_from_row(row: &[Value]) -> HistoryRun {
    HistoryRun {
        digest: text(row, 0),
        source: text(row, 1),
        kind: text(row, 2),
        added_unix: int(row, 3).unwrap_or(0),
        machine: optional_text(row, 4),
        target: optional_text(row, 5),
        kernel_release: optional_text(row, 6),
        kernel_version: optional_text(row, 7),
        kernel_config_digest: optional_text(row, 8),
        lock_digest: optional_text(row, 9),
        bundle_digest: optional_text(row, 10),
        tuning_fingerprint: optional_text(row, 11),
        started_unix: int(row, 12),
        duration_s: real(row, 13),
        threshold_us: real(row, 14).unwrap_or(0.0),
        // rtbuild writes the word; one it cannot read is no PASS.
        verdict: text(row, 15).parse().unwrap_or(Verdict::Invalid),
        valid: int(row, 16) == Some(1),
        reasons: serde_json::from_str(&text(row, 17)).unwrap_or_default(),
        inputs: serde_json::from_str(&text(row, 18)).unwrap_or_default(),
        results: Vec::new(),
    }
}

pub(super) fn result_from_row(row: &[Value]) -> HistoryResult {
    HistoryResult {
        scenario: text(row, 0),
        test: text(row, 1),
        cpu: int(row, 2).and_then(|v| u32::try_from(v).ok()),
        samples: int(row, 3).and_then(|v| u64::try_from(v).ok()),
        min_us: real(row, 4),
        avg_us: real(row, 5),
        p99_us: real(row, 6),
        p999_us: real(row, 7),
        max_us: real(row, 8),
        overflows: int(row, 9).and_then(|v| u64::try_from(v).ok()),
        verdict: text(row, 10).parse().unwrap_or(TestVerdict::Judged(Verdict::Invalid)),
        valid: int(row, 11) == Some(1),
        reasons: serde_json::from_str(&text(row, 12)).unwrap_or_default(),
    }
}
