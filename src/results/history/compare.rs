//! `history compare A B`: two runs, two bundles or two kernel releases side by side. Per
//! machine, scenario, test and CPU the change in max and p99.9 (each side's worst over its
//! valid runs; invalid runs are named and left out), and which build inputs differ.

use std::collections::BTreeMap;

use super::HistoryError;
use super::store::{Key, PrefixColumn, Store, Worst};
use crate::files::limits::MAX_CONFIG_BYTES;
use crate::formats::history_json::{
    CompareRow, CompareSide, Comparison, HistoryResult, HistoryRun, InputChange, SCHEMA,
};
use crate::verify::kconfig::KernelConfig;

/// The runs one side of a comparison names, and their worst figures.
#[derive(Debug, Clone)]
pub(crate) struct Side {
    pub selected: String,
    /// The runs, for their digests, validity and build inputs; a bundle's or a kernel
    /// release's come from the store without their result rows ([`Side::worst`] holds what
    /// the comparison needs of those).
    pub runs: Vec<HistoryRun>,
    pub worst: Worst,
}

/// Many runs as a lookup returns them: the runs (their results may be left out) and their
/// worst figures.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selection {
    pub runs: Vec<HistoryRun>,
    pub worst: Worst,
}

impl Selection {
    /// `runs` with their results at hand: the worst figures counted here.
    fn counted(runs: Vec<HistoryRun>) -> Selection {
        let worst = worst(&runs);
        Selection { runs, worst }
    }
}

/// Shortest digest prefix accepted for a run or a bundle.
const MIN_PREFIX: usize = 6;

/// Where [`select`] looks runs up: the store (one query per question, however long the
/// history) or runs already read.
pub(crate) trait Lookup {
    /// At most two runs whose digest starts with `prefix` (two: enough to call it ambiguous).
    fn by_digest_prefix(&mut self, prefix: &str) -> Result<Vec<HistoryRun>, HistoryError>;
    /// Every run of the bundles whose digest starts with `prefix`: a lab's bundle or kernel
    /// release may span thousands of runs, so the store answers with their worst figures
    /// (counted by the database) rather than millions of result rows.
    fn by_bundle_prefix(&mut self, prefix: &str) -> Result<Selection, HistoryError>;
    fn by_release(&mut self, release: &str) -> Result<Selection, HistoryError>;
    fn by_digest(&mut self, digest: &str) -> Result<Option<HistoryRun>, HistoryError>;
}

impl Lookup for Store {
    fn by_digest_prefix(&mut self, prefix: &str) -> Result<Vec<HistoryRun>, HistoryError> {
        self.runs_by_prefix(PrefixColumn::Digest, prefix, Some(2))
    }
    fn by_bundle_prefix(&mut self, prefix: &str) -> Result<Selection, HistoryError> {
        let (runs, worst) = self.bundle_runs_worst(prefix)?;
        Ok(Selection { runs, worst })
    }
    fn by_release(&mut self, release: &str) -> Result<Selection, HistoryError> {
        let (runs, worst) = self.release_runs_worst(release)?;
        Ok(Selection { runs, worst })
    }
    fn by_digest(&mut self, digest: &str) -> Result<Option<HistoryRun>, HistoryError> {
        self.run(digest)
    }
}

impl Lookup for &[HistoryRun] {
    fn by_digest_prefix(&mut self, prefix: &str) -> Result<Vec<HistoryRun>, HistoryError> {
        Ok(self.iter().filter(|r| r.digest.starts_with(prefix)).take(2).cloned().collect())
    }
    fn by_bundle_prefix(&mut self, prefix: &str) -> Result<Selection, HistoryError> {
        Ok(Selection::counted(
            self.iter()
                .filter(|r| r.bundle_digest.as_deref().is_some_and(|d| d.starts_with(prefix)))
                .cloned()
                .collect(),
        ))
    }
    fn by_release(&mut self, release: &str) -> Result<Selection, HistoryError> {
        Ok(Selection::counted(
            self.iter().filter(|r| r.kernel_release.as_deref() == Some(release)).cloned().collect(),
        ))
    }
    fn by_digest(&mut self, digest: &str) -> Result<Option<HistoryRun>, HistoryError> {
        Ok(self.iter().find(|r| r.digest == digest).cloned())
    }
}

/// A side as the user named it: a result folder or LAVA log (read, and matched to its record),
/// a bundle manifest or archive, or what [`select`] takes.
pub(crate) fn resolve(runs: &mut dyn Lookup, key: &str) -> Result<Side, HistoryError> {
    use crate::results::input::{self, Measurement};
    let path = std::path::Path::new(key);
    if path.is_dir() {
        let run = super::record::read(path, None, None)?;
        return select(runs, key, Some(run));
    }
    if path.is_file() {
        // Opened once: the sniffer's open file is the LAVA log's reader's or the manifest's.
        let bundle = match input::sniff_file(path) {
            Ok(found @ Measurement::LavaLog(_)) => {
                let run = super::record::read_found(path, Ok(found), None, None)?;
                return select(runs, key, Some(run));
            }
            Ok(found) => super::bundle_identity::read_opened(path, found.into_opened())?,
            // Unreadable: the bundle reader names what is wrong with the file.
            Err(_) => super::bundle_identity::read(path)?,
        };
        return select(runs, &bundle.digest, None);
    }
    select(runs, key, None)
}

/// Selects `key` among `runs`: a run digest (prefix), a bundle digest (prefix), or a kernel
/// release. `from_disk` is a run read from disk (a result folder passed as A or B), matched by
/// digest or used as it is.
pub(crate) fn select(
    runs: &mut dyn Lookup,
    key: &str,
    from_disk: Option<HistoryRun>,
) -> Result<Side, HistoryError> {
    if let Some(run) = from_disk {
        let run = runs.by_digest(&run.digest)?.unwrap_or(run);
        return Ok(one_run(run));
    }
    let hex = key.len() >= MIN_PREFIX && key.bytes().all(|b| b.is_ascii_hexdigit());
    if hex {
        let key = key.to_ascii_lowercase();
        let mut matching = runs.by_digest_prefix(&key)?;
        match matching.len() {
            1 => return Ok(one_run(matching.remove(0))),
            0 => {}
            _ => return Err(HistoryError::Ambiguous(key)),
        }
        let bundles = runs.by_bundle_prefix(&key)?;
        if !bundles.runs.is_empty() {
            let selected = format!("bundle {}", short(&key));
            return Ok(Side { selected, runs: bundles.runs, worst: bundles.worst });
        }
    }
    let releases = runs.by_release(key)?;
    if !releases.runs.is_empty() {
        let selected = format!("kernel release {key}");
        return Ok(Side { selected, runs: releases.runs, worst: releases.worst });
    }
    Err(HistoryError::NotFound(key.to_string()))
}

/// One run as a side, its worst figures counted from its results.
fn one_run(run: HistoryRun) -> Side {
    let selected = format!("run {}", short(&run.digest));
    let runs = vec![run];
    Side { selected, worst: worst(&runs), runs }
}

/// The first 12 characters of a digest (characters, not bytes: a stored row may hold anything).
pub(crate) fn short(digest: &str) -> &str {
    digest.char_indices().nth(12).map_or(digest, |(at, _)| &digest[..at])
}

/// Each side's worst max and p99.9 per machine, scenario, test and CPU (valid rows only).
fn worst(runs: &[HistoryRun]) -> Worst {
    let mut out: BTreeMap<Key, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for run in runs.iter().filter(|r| r.valid) {
        for row in run.results.iter().filter(|r| r.valid) {
            let entry = out
                .entry((run.machine.clone(), row.scenario.clone(), row.test.clone(), row.cpu))
                .or_default();
            entry.0 = higher(entry.0, row.max_us);
            entry.1 = higher(entry.1, row.p999_us);
        }
    }
    out
}

fn higher(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// (b − a) / a in %, when both are known and a is above 0.
pub(crate) fn change_pct(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => Some((b - a) / a * 100.0),
        _ => None,
    }
}

/// Compares the two sides; `configs` are kernel configs at hand, matched to the runs' config
/// digests to name the options that differ.
pub(crate) fn compare(a: &Side, b: &Side, configs: &[KernelConfig]) -> Comparison {
    let (worst_a, worst_b) = (&a.worst, &b.worst);
    let rows = worst_a
        .iter()
        .filter_map(|(key, (a_max, a_p999))| {
            let (b_max, b_p999) = worst_b.get(key)?;
            Some(CompareRow {
                machine: key.0.clone(),
                scenario: key.1.clone(),
                test: key.2.clone(),
                cpu: key.3,
                a_max_us: *a_max,
                b_max_us: *b_max,
                max_change_pct: change_pct(*a_max, *b_max),
                a_p999_us: *a_p999,
                b_p999_us: *b_p999,
                p999_change_pct: change_pct(*a_p999, *b_p999),
            })
        })
        .collect();
    let changed_inputs = match (newest(&a.runs), newest(&b.runs)) {
        (Some(old), Some(new)) => changed_inputs(old, new, configs),
        _ => Vec::new(),
    };
    Comparison { schema: SCHEMA.to_string(), a: side(a), b: side(b), rows, changed_inputs }
}

fn side(side: &Side) -> CompareSide {
    CompareSide {
        selected: side.selected.clone(),
        runs: side.runs.iter().map(|r| r.digest.clone()).collect(),
        invalid_runs: side.runs.iter().filter(|r| !r.valid).map(|r| r.digest.clone()).collect(),
    }
}

/// The most recent run (by start time).
pub(crate) fn newest(runs: &[HistoryRun]) -> Option<&HistoryRun> {
    runs.iter().max_by_key(|r| (r.started_unix.unwrap_or(0), r.digest.clone()))
}

/// The build and tuning inputs that differ from `old` to `new`.
pub(crate) fn changed_inputs(
    old: &HistoryRun,
    new: &HistoryRun,
    configs: &[KernelConfig],
) -> Vec<InputChange> {
    let mut changes = Vec::new();
    let mut field = |input: &str, a: &Option<String>, b: &Option<String>| {
        if a != b {
            changes.push(InputChange { input: input.to_string(), a: a.clone(), b: b.clone() });
        }
    };
    field("kernel_release", &old.kernel_release, &new.kernel_release);
    field("kernel_version", &old.kernel_version, &new.kernel_version);
    field("kernel_config_digest", &old.kernel_config_digest, &new.kernel_config_digest);
    field("lock_digest", &old.lock_digest, &new.lock_digest);
    field("bundle_digest", &old.bundle_digest, &new.bundle_digest);
    field("boot_args", &old.inputs.boot_args, &new.inputs.boot_args);
    let repos = |run: &HistoryRun| -> BTreeMap<String, String> {
        run.inputs.repos.iter().map(|r| (r.name.clone(), r.commit.clone())).collect()
    };
    let (repos_a, repos_b) = (repos(old), repos(new));
    let names: std::collections::BTreeSet<&String> = repos_a.keys().chain(repos_b.keys()).collect();
    for name in names {
        field(&format!("repo {name}"), &repos_a.get(name).cloned(), &repos_b.get(name).cloned());
    }
    let only = |these: &[String], those: &[String]| -> Vec<String> {
        these.iter().filter(|f| !those.contains(f)).cloned().collect()
    };
    let (gone, added) = (
        only(&old.inputs.tuning, &new.inputs.tuning),
        only(&new.inputs.tuning, &old.inputs.tuning),
    );
    if !gone.is_empty() || !added.is_empty() {
        let list = |facts: Vec<String>| (!facts.is_empty()).then(|| facts.join(", "));
        changes.push(InputChange { input: "tuning".to_string(), a: list(gone), b: list(added) });
    }
    let config = |digest: &Option<String>| {
        digest.as_ref().and_then(|d| configs.iter().find(|c| c.sha256() == d))
    };
    if old.kernel_config_digest != new.kernel_config_digest
        && let (Some(a), Some(b)) =
            (config(&old.kernel_config_digest), config(&new.kernel_config_digest))
    {
        let symbols: std::collections::BTreeSet<&str> = a.symbols().chain(b.symbols()).collect();
        for symbol in symbols {
            let (was, is) = (a.state(symbol), b.state(symbol));
            if was != is {
                changes.push(InputChange {
                    input: symbol.to_string(),
                    a: Some(was.describe()),
                    b: Some(is.describe()),
                });
            }
        }
    }
    changes
}

/// A row's figure by metric name.
pub(crate) fn figure(row: &HistoryResult, metric: &str) -> Option<f64> {
    match metric {
        "max" => row.max_us,
        _ => row.p999_us,
    }
}

/// Reads a `--config FILE` (plain or compressed, like `/proc/config.gz`), through the one
/// bounded opener (a FIFO, a device or a folder is refused on the open file).
pub(crate) fn read_config(path: &std::path::Path) -> Result<KernelConfig, HistoryError> {
    use crate::files::input::InputError;
    use std::io::{Error, ErrorKind, Read};
    let path_buf = || path.to_path_buf();
    let file = crate::files::input::open_within(path, MAX_CONFIG_BYTES).map_err(|e| match e {
        InputError::Folder { .. } | InputError::Special { .. } => {
            HistoryError::ConfigNotAFile { path: path_buf() }
        }
        InputError::Unreadable { cause, .. } => {
            HistoryError::ConfigUnreadable { path: path_buf(), cause }
        }
        InputError::Missing { .. } | InputError::DanglingLink { .. } => {
            HistoryError::ConfigUnreadable {
                path: path_buf(),
                cause: Error::new(ErrorKind::NotFound, "no such file"),
            }
        }
        InputError::TooBig { limit, .. } => HistoryError::ConfigUnreadable {
            path: path_buf(),
            cause: Error::other(format!("over {} MiB, more than a kernel config", limit >> 20)),
        },
        InputError::NotText { .. } => {
            HistoryError::ConfigUnreadable { path: path_buf(), cause: Error::other("not text") }
        }
    })?;
    KernelConfig::read(file.take(MAX_CONFIG_BYTES))
        .map_err(|cause| HistoryError::Config { path: path.to_path_buf(), cause })
}
