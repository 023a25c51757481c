//! The shared-cache flags (`--sstate-mirror`, `--hashserv`, `--prserv`, `--premirror`,
//! `--mirror-tarballs`), shared by `image`, `matrix`, `shell` and `ci`.

use clap::Args;

use crate::kasrun::BuildError;
use crate::kasrun::caches::{CacheSettings, Hashserv, HostPort, MirrorUrl};

/// Shared caches beyond this machine.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct CacheArgs {
    /// Shared sstate to read from (SSTATE_MIRRORS): https://…, http://… or file:///…; repeatable.
    #[arg(long = "sstate-mirror", value_name = "URL")]
    pub sstate_mirrors: Vec<String>,
    /// Hash equivalence: auto (local server, database in SSTATE_DIR), none (OEBasicHash), or
    /// HOST:PORT of a shared bitbake-hashserv.
    #[arg(long, value_name = "auto|none|HOST:PORT")]
    pub hashserv: Option<String>,
    /// Shared PR server (PRSERV_HOST), HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    pub prserv: Option<String>,
    /// Source mirror tried before upstream (PREMIRRORS) for git, http(s) and ftp; repeatable.
    #[arg(long = "premirror", value_name = "URL")]
    pub premirrors: Vec<String>,
    /// Keep tarballs of git sources in DL_DIR so that it can serve as a premirror for others.
    #[arg(long)]
    pub mirror_tarballs: bool,
}

impl CacheArgs {
    /// These flags over the project file's cache settings (`sstate-mirrors`, `hashserv`,
    /// `prserv`, `premirrors`, `mirror-tarballs` in `rtbuild.yaml`): a flag wins.
    pub(crate) fn over_project(&self, project: &crate::plan::PlanRequest) -> CacheArgs {
        let list = |flag: &Vec<String>, file: &Vec<String>| {
            if flag.is_empty() { file.clone() } else { flag.clone() }
        };
        CacheArgs {
            sstate_mirrors: list(&self.sstate_mirrors, &project.sstate_mirrors),
            hashserv: self.hashserv.clone().or_else(|| project.hashserv.clone()),
            prserv: self.prserv.clone().or_else(|| project.prserv.clone()),
            premirrors: list(&self.premirrors, &project.premirrors),
            mirror_tarballs: self.mirror_tarballs || project.mirror_tarballs.unwrap_or(false),
        }
    }

    /// The flags again, as arguments for another rtbuild run (e.g. in a CI job).
    pub(crate) fn flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        for url in &self.sstate_mirrors {
            flags.extend(["--sstate-mirror".to_string(), url.clone()]);
        }
        if let Some(h) = &self.hashserv {
            flags.extend(["--hashserv".to_string(), h.clone()]);
        }
        if let Some(p) = &self.prserv {
            flags.extend(["--prserv".to_string(), p.clone()]);
        }
        for url in &self.premirrors {
            flags.extend(["--premirror".to_string(), url.clone()]);
        }
        if self.mirror_tarballs {
            flags.push("--mirror-tarballs".to_string());
        }
        flags
    }

    pub(crate) fn settings(&self) -> Result<CacheSettings, BuildError> {
        Ok(CacheSettings {
            sstate_mirrors: self
                .sstate_mirrors
                .iter()
                .map(|u| MirrorUrl::parse("--sstate-mirror", u))
                .collect::<Result<_, _>>()?,
            hashserv: self.hashserv.as_deref().map(Hashserv::parse).transpose()?,
            prserv: self.prserv.as_deref().map(|h| HostPort::parse("--prserv", h)).transpose()?,
            premirrors: self
                .premirrors
                .iter()
                .map(|u| MirrorUrl::parse("--premirror", u))
                .collect::<Result<_, _>>()?,
            mirror_tarballs: self.mirror_tarballs,
        })
    }
}
