//! The one error a command ends with, and the exit code it ends rtbuild with.
//!
//! Every command returns `Result<Exit, Error>`. An [`Error`] is one [`Kind`], boxed so the
//! `Result` stays small. Each kind holds one stage's own error and is shown as that error
//! (`transparent`): [`Error::code`] reads the exit code off the kind (each stage error says its
//! own with [`ErrorCode`]), as just's `Error::code()` does. Nothing is type-erased, so no code
//! is looked for down a chain of causes.
//!
//! A wrapper is either `transparent` or a prefix of its own with the cause as its `#[source]`,
//! never both: [`crate::text::ui::Ui::error`] prints every cause under the message, so a message that
//! quoted its source would say it twice. Refusals of input (exit 2) are one line and keep
//! their cause as a field that is not a source.

mod refusal;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub(crate) use refusal::Refusal;

use crate::error::{ErrorCode, Exit, Interrupted};

/// The error a command ends with.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct Error(Box<Kind>);

impl Error {
    /// The code this error ends rtbuild with.
    pub(crate) fn code(&self) -> Exit {
        self.0.code()
    }

    /// What went wrong.
    #[cfg(test)]
    pub(crate) fn kind(&self) -> &Kind {
        &self.0
    }
}

impl From<Kind> for Error {
    fn from(kind: Kind) -> Error {
        Error(Box::new(kind))
    }
}

/// `?` turns each stage's error into an [`Error`] through its [`Kind`].
macro_rules! from_kind {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for Error {
            fn from(error: $error) -> Error {
                Error(Box::new(Kind::from(error)))
            }
        })*
    };
}

from_kind!(
    Refusal,
    Interrupted,
    crate::plan::PlanError,
    crate::plan::values::ValueError,
    crate::catalog::CatalogError,
    crate::catalog::meta_qcom::MetaQcomError,
    crate::host::TargetError,
    crate::host::cpus::LayoutError,
    crate::layer::generate::GenerateError,
    crate::files::write::WriteError,
    crate::release::lock::LockError,
    crate::verify::VerifyError,
    crate::verify::kconfig_check::KconfigCheckError,
    crate::release::bundle::BundleError,
    crate::results::history::HistoryError,
    crate::image::kasrun::BuildError,
    crate::image::kas::KasError,
    crate::image::doctor::NotReady,
    crate::image::pipeline::ImageError,
    crate::measure::testrun::TestError,
    crate::host::runner::RunError,
    crate::host::HostError,
    crate::measure::tune::TuneRunError,
    serde_json::Error,
);

/// What went wrong: one stage's error, or a failure of the command layer itself.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Kind {
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
    Target(#[from] crate::host::TargetError),
    #[error(transparent)]
    Layout(#[from] crate::host::cpus::LayoutError),
    #[error(transparent)]
    Generate(#[from] crate::layer::generate::GenerateError),
    #[error(transparent)]
    Write(#[from] crate::files::write::WriteError),
    #[error(transparent)]
    Lock(#[from] crate::release::lock::LockError),
    #[error("cannot compare the locks")]
    CompareLocks(#[source] crate::release::lock::LockError),
    #[error(transparent)]
    Verify(#[from] crate::verify::VerifyError),
    #[error(transparent)]
    KconfigCheck(#[from] crate::verify::kconfig_check::KconfigCheckError),
    #[error(transparent)]
    Bundle(#[from] crate::release::bundle::BundleError),
    #[error(transparent)]
    History(#[from] crate::results::history::HistoryError),
    #[error(transparent)]
    Build(#[from] crate::image::kasrun::BuildError),
    #[error(transparent)]
    Kas(#[from] crate::image::kas::KasError),
    #[error(transparent)]
    NotReady(#[from] crate::image::doctor::NotReady),
    #[error(transparent)]
    Image(#[from] crate::image::pipeline::ImageError),
    #[error(transparent)]
    Test(#[from] crate::measure::testrun::TestError),
    // Failures of the system or a tool (exit 1).
    #[error(transparent)]
    Run(#[from] crate::host::runner::RunError),
    #[error(transparent)]
    Host(#[from] crate::host::HostError),
    #[error(transparent)]
    Tune(#[from] crate::measure::tune::TuneRunError),
    #[error("bug in rtbuild: the trend page template failed; please report it")]
    TrendPage(#[source] minijinja::Error),
    #[error("could not write {}; {}", .path.display(), crate::files::output::write_fix(.cause))]
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
    /// An input error a value from the environment caused: said with the variable it came from.
    #[error("{flag} {value} (from {var}): {cause}")]
    FromEnvironment { flag: String, var: String, value: String, cause: Error },
    /// `rtbuild setup --host`: one of the install commands failed.
    #[error("`{command}` failed ({how}); fix what it printed and run `rtbuild setup --host` again")]
    HostSetup { command: String, how: String },
}

impl Kind {
    /// The code this error ends rtbuild with.
    pub(crate) fn code(&self) -> Exit {
        match self {
            Kind::Refusal(_) => Exit::Usage,
            Kind::FromEnvironment { cause, .. } => cause.code(),
            Kind::Interrupted(e) => e.exit(),
            Kind::Plan(e) => e.exit(),
            Kind::Value(e) => e.exit(),
            Kind::Catalog(e) => e.exit(),
            Kind::MetaQcom(e) => e.exit(),
            Kind::Target(e) => e.exit(),
            Kind::Layout(e) => e.exit(),
            Kind::Generate(e) => e.exit(),
            Kind::Write(e) => e.exit(),
            Kind::Lock(e) | Kind::CompareLocks(e) => e.exit(),
            Kind::Verify(e) => e.exit(),
            Kind::KconfigCheck(e) => e.exit(),
            Kind::Bundle(e) => e.exit(),
            Kind::History(e) => e.exit(),
            Kind::Build(e) => e.exit(),
            Kind::Kas(e) => e.exit(),
            Kind::NotReady(e) => e.exit(),
            Kind::Image(e) => e.exit(),
            Kind::Test(e) => e.exit(),
            Kind::Tune(e) => e.exit(),
            Kind::Run(_)
            | Kind::Host(_)
            | Kind::TrendPage(_)
            | Kind::Emit { .. }
            | Kind::ManPages(_)
            | Kind::Json(_)
            | Kind::LavaYaml(_)
            | Kind::HostSetup { .. } => Exit::Failed,
        }
    }
}

/// A flag whose value rtbuild took from an environment variable (clap's `env =`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvValue {
    /// `--machine`
    pub flag: String,
    /// `KAS_MACHINE`
    pub var: String,
    pub value: String,
}

impl Error {
    /// Names the environment variable behind an input error (exit 2) that one of `env` caused:
    /// the value appears in the message, or `--machine` came from the environment and the error
    /// is the machine's (unknown, or a CPU layout it does not have).
    pub(crate) fn naming_environment(self, env: &[EnvValue]) -> Error {
        if self.code() != Exit::Usage {
            return self;
        }
        let text = self.to_string();
        let machine_error = matches!(*self.0, Kind::Catalog(_) | Kind::Layout(_))
            || (matches!(*self.0, Kind::Plan(_)) && text.contains("machine"));
        let culprit = env
            .iter()
            .find(|e| names_whole(&text, &e.value))
            .or_else(|| env.iter().find(|e| e.flag == "--machine" && machine_error));
        match culprit {
            Some(e) => Kind::FromEnvironment {
                flag: e.flag.clone(),
                var: e.var.clone(),
                value: e.value.clone(),
                cause: self,
            }
            .into(),
            None => self,
        }
    }
}

/// Whether `text` names `value` as a whole word: not a part of a longer name or path (a work
/// folder is not the culprit of every error about a file below it).
fn names_whole(text: &str, value: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || "/._-".contains(c);
    value.len() >= 2
        && text.match_indices(value).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + value.len()..].chars().next();
            !before.is_some_and(part) && !after.is_some_and(part)
        })
}

/// What a command returns.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;
