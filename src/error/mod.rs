//! The one error a command ends with, and the exit code it ends rtbuild with.
//!
//! Every command returns `Result<Exit, Error>`. Each variant holds one stage's own error and is
//! shown as that error (`transparent`): [`Error::code`] reads the exit code off the variant
//! (each stage error says its own with [`ErrorCode`]), as just's `Error::code()` does. Nothing
//! is type-erased, so no code is looked for down a chain of causes.
//!
//! A wrapper is either `transparent` or a prefix of its own with the cause as its `#[source]`,
//! never both: [`crate::ui::Ui::error`] prints every cause under the message, so a message that
//! quoted its source would say it twice. Refusals of input (exit 2) are one line and keep
//! their cause as a field that is not a source.

mod refusal;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub(crate) use refusal::Refusal;

use crate::exit::{ErrorCode, Exit, Interrupted};

#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// Flags or values the command layer refuses (exit 2).
    #[error(transparent)]
    Refusal(#[from] Refusal),
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
    // The stages' own errors, each with the code it says.
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    #[error(transparent)]
    Value(#[from] crate::plan::values::ValueError),
    #[error(transparent)]
    Catalog(#[from] crate::catalog::CatalogError),
    #[error(transparent)]
    MetaQcom(#[from] crate::catalog::meta_qcom::MetaQcomError),
    #[error(transparent)]
    Target(#[from] crate::target::TargetError),
    #[error(transparent)]
    Layout(#[from] crate::tune::LayoutError),
    #[error(transparent)]
    Generate(#[from] crate::generate::GenerateError),
    #[error(transparent)]
    Write(#[from] crate::write::WriteError),
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    #[error("cannot compare the locks")]
    CompareLocks(#[source] crate::lock::LockError),
    #[error(transparent)]
    Verify(#[from] crate::verify::VerifyError),
    #[error(transparent)]
    KconfigCheck(#[from] crate::verify::kconfig_check::KconfigCheckError),
    #[error(transparent)]
    Bundle(#[from] crate::bundle::BundleError),
    #[error(transparent)]
    History(#[from] crate::history::HistoryError),
    #[error(transparent)]
    Build(#[from] crate::kasrun::BuildError),
    #[error(transparent)]
    NotReady(#[from] crate::doctor::NotReady),
    #[error(transparent)]
    Image(#[from] crate::image::ImageError),
    #[error(transparent)]
    Test(#[from] crate::testrun::TestError),
    // Failures of the system or a tool (exit 1).
    #[error(transparent)]
    Run(#[from] crate::runner::RunError),
    #[error(transparent)]
    Host(#[from] crate::tune::HostError),
    #[error(transparent)]
    Tune(#[from] crate::tune::TuneRunError),
    #[error("bug in rtbuild: the trend page template failed; please report it")]
    TrendPage(#[source] minijinja::Error),
    #[error("could not write {}; make sure you may write to that folder", .path.display())]
    Emit {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error("could not render the man pages")]
    ManPages(#[source] std::io::Error),
    #[error("could not print the JSON result")]
    Json(#[from] serde_json::Error),
    #[error("bug in rtbuild: the rendered LAVA job is not valid YAML; please report it")]
    LavaYaml(#[source] serde_yaml::Error),
    /// `rtbuild setup --host`: one of the install commands failed.
    #[error("`{command}` failed ({how}); fix what it printed and run `rtbuild setup --host` again")]
    HostSetup { command: String, how: String },
}

impl Error {
    /// The code this error ends rtbuild with.
    pub(crate) fn code(&self) -> Exit {
        match self {
            Error::Refusal(_) => Exit::Usage,
            Error::Interrupted(e) => e.exit(),
            Error::Plan(e) => e.exit(),
            Error::Value(e) => e.exit(),
            Error::Catalog(e) => e.exit(),
            Error::MetaQcom(e) => e.exit(),
            Error::Target(e) => e.exit(),
            Error::Layout(e) => e.exit(),
            Error::Generate(e) => e.exit(),
            Error::Write(e) => e.exit(),
            Error::Lock(e) | Error::CompareLocks(e) => e.exit(),
            Error::Verify(e) => e.exit(),
            Error::KconfigCheck(e) => e.exit(),
            Error::Bundle(e) => e.exit(),
            Error::History(e) => e.exit(),
            Error::Build(e) => e.exit(),
            Error::NotReady(e) => e.exit(),
            Error::Image(e) => e.exit(),
            Error::Test(e) => e.exit(),
            Error::Run(_)
            | Error::Host(_)
            | Error::Tune(_)
            | Error::TrendPage(_)
            | Error::Emit { .. }
            | Error::ManPages(_)
            | Error::Json(_)
            | Error::LavaYaml(_)
            | Error::HostSetup { .. } => Exit::Failed,
        }
    }
}

/// What a command returns.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;
