//! What `--dry-run` reports: the exact command with its environment, where the log goes and
//! the artifacts a successful build leaves.

use std::path::PathBuf;

use serde::Serialize;

use crate::host::runner::Cmd;
use crate::image::kasrun::run::BuildJob;

/// `rtbuild image --dry-run` (the `--json` form serialises this).
#[derive(Debug, Serialize)]
pub(crate) struct DryRun {
    #[serde(skip)]
    cmd: Cmd,
    command: Vec<String>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    log: PathBuf,
    expected_artifacts: Vec<PathBuf>,
}

impl DryRun {
    pub(crate) fn of(job: &BuildJob) -> DryRun {
        let cmd = job.command();
        let env: Vec<(String, String)> = cmd
            .get_env()
            .iter()
            .filter_map(|(k, v)| {
                v.as_ref()
                    .map(|v| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
            })
            .collect();
        DryRun {
            command: cmd.argv(),
            cmd,
            cwd: job.layout.work.clone(),
            env,
            log: job.layout.log.clone(),
            expected_artifacts: job.expected_artifacts(),
        }
    }

    /// The plain-text form: the folder, the command line a user could paste (environment
    /// first, values quoted for a POSIX shell), the log and the expected artifacts.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!("# in {}", self.cwd.display())];
        let assignments: Vec<String> =
            self.env.iter().map(|(k, v)| format!("{k}={}", crate::text::quote::sh(v))).collect();
        lines.push(format!("{} {}", assignments.join(" "), self.cmd));
        lines.push(format!("# log: {}", self.log.display()));
        for artifact in &self.expected_artifacts {
            lines.push(format!("# expected: {}", artifact.display()));
        }
        lines
    }
}
