//! `--local`, `--target`, `--ssh-config`: where on-target work runs, shared by `tune` and
//! `test`.

use std::path::PathBuf;

use clap::Args;

use crate::cli::error::Refusal;
use crate::host::Host;
use crate::host::SshTarget;

/// Where on-target work runs, shared by `tune` and `test`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct HostArgs {
    /// Run on this machine.
    #[arg(long)]
    pub local: bool,
    /// Run on a remote target over ssh (host-key checking stays on).
    #[arg(long, value_name = "ssh://USER@HOST[:PORT]")]
    pub target: Option<String>,
    /// ssh client configuration file, passed to ssh as `-F FILE`.
    #[arg(long, value_name = "FILE", requires = "target")]
    pub ssh_config: Option<PathBuf>,
    /// Seconds one step on the target may take before it is stopped (default 120); the
    /// measurement itself may take its length plus this. After one step ran past it, the
    /// steps still owed to the target (stop, clean up, revert) get 10 s each.
    #[arg(long, value_name = "SECONDS", requires = "target", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub target_timeout: Option<u64>,
}

impl HostArgs {
    /// The host, or `None` when neither --local nor --target was given.
    pub(crate) fn host(&self) -> crate::cli::error::Result<Option<Host>> {
        if self.local && self.target.is_some() {
            return Err(Refusal::LocalAndTarget.into());
        }
        if self.local {
            return Ok(Some(Host::Local));
        }
        match &self.target {
            Some(url) => {
                if let Some(config) = &self.ssh_config {
                    // ssh reads it whole: a FIFO would hang it, `/dev/zero` grow it without end.
                    crate::files::input::check_file(config).map_err(Refusal::SshConfig)?;
                }
                let target = SshTarget::parse(url)?
                    .with_ssh_config(self.ssh_config.clone())
                    .with_step_limit(self.target_timeout);
                Ok(Some(Host::Ssh(target)))
            }
            None => Ok(None),
        }
    }
}
