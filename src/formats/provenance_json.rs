//! kas's provenance statement (`kas build --provenance`, `attestation/kas-build.provenance.json`
//! in the build folder): an in-toto v1 statement whose `subject`s are the configuration's
//! `artifacts:`, each by file name with its sha256, and whose predicate is SLSA provenance v1.
//! A foreign format (no `schema`); rtbuild reads the subjects and the types.

use serde::Deserialize;

/// The in-toto statement type kas writes.
pub(crate) const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Statement {
    #[serde(rename = "_type")]
    pub kind: String,
    #[serde(default)]
    pub subject: Vec<Subject>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Subject {
    pub name: String,
    #[serde(default)]
    pub digest: Digest,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Digest {
    #[serde(default)]
    pub sha256: Option<String>,
}

/// Why a provenance statement could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StatementError {
    #[error("{cause}")]
    Json { cause: serde_json::Error },
    #[error("`_type` is `{kind}`, not {STATEMENT_TYPE}")]
    NotAStatement { kind: String },
}

impl Statement {
    pub(crate) fn parse(bytes: &[u8]) -> Result<Statement, StatementError> {
        let statement: Statement =
            serde_json::from_slice(bytes).map_err(|cause| StatementError::Json { cause })?;
        if statement.kind != STATEMENT_TYPE {
            return Err(StatementError::NotAStatement { kind: statement.kind });
        }
        Ok(statement)
    }
}
