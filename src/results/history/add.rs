//! `history add RUN…`: every run is read (all of them before anything is recorded, so a bad
//! one records nothing), recorded in its own transaction, and with `--check` compared with the
//! recent valid runs of its machine.

use std::path::PathBuf;

use super::HistoryError;
use super::store::Store;
use crate::formats::history_json::{Added, HistoryRun};

#[derive(Debug, Clone, Default)]
pub(crate) struct AddRequest {
    pub runs: Vec<PathBuf>,
    pub bundle: Option<PathBuf>,
    /// `--check`: the `--regression-pct`.
    pub check_pct: Option<f64>,
    /// `--threshold-us`, as `rtbuild report` takes it.
    pub threshold_us: Option<f64>,
    /// The time recorded as `added_unix`.
    pub now_unix: i64,
}

pub(crate) fn add(store: &mut Store, request: &AddRequest) -> Result<Vec<Added>, HistoryError> {
    if let Some(pct) = request.check_pct {
        super::regression::check_pct(pct)?;
    }
    let bundle = request.bundle.as_deref().map(super::bundle_identity::read).transpose()?;
    let mut runs: Vec<HistoryRun> = request
        .runs
        .iter()
        .map(|path| super::record::read(path, bundle.as_ref(), request.threshold_us))
        .collect::<Result<_, _>>()?;
    let mut added = Vec::new();
    for run in &mut runs {
        run.added_unix = request.now_unix;
        let new = store.add(run)?;
        added.push(Added {
            digest: run.digest.clone(),
            source: run.source.clone(),
            verdict: run.verdict,
            new,
            check: None,
        });
    }
    if let Some(pct) = request.check_pct {
        for (entry, run) in added.iter_mut().zip(&runs) {
            let history = super::regression::baseline_history(store, run)?;
            entry.check = Some(super::regression::check(run, &history, pct));
        }
    }
    Ok(added)
}
