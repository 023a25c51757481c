//! The shared-cache flags (`--sstate-mirror`, `--hashserv`, `--prserv`, `--premirror`,
//! `--mirror-tarballs`), shared by `image`, `matrix`, `shell` and `ci`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use crate::image::kasrun::BuildError;
use crate::image::kasrun::caches::{CacheEnv, CacheSettings, Hashserv, HostPort, MirrorUrl};

/// The caches' environment (`DL_DIR`, `SSTATE_DIR`, `KAS_PREMIRRORS`), read here and nowhere
/// else. Hidden: these are variables kas reads, not flags a person types.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct CacheEnvArgs {
    #[arg(long, hide = true, value_name = "DIR", env = "DL_DIR")]
    pub env_dl_dir: Option<PathBuf>,
    #[arg(long, hide = true, value_name = "DIR", env = "SSTATE_DIR")]
    pub env_sstate_dir: Option<PathBuf>,
    #[arg(long, hide = true, value_name = "URLS", env = "KAS_PREMIRRORS")]
    pub env_kas_premirrors: Option<OsString>,
}

impl CacheEnvArgs {
    /// The values (a `KAS_PREMIRRORS` that is blank or not UTF-8 is none).
    pub(crate) fn env(&self) -> CacheEnv {
        CacheEnv {
            dl_dir: self.env_dl_dir.clone(),
            sstate_dir: self.env_sstate_dir.clone(),
            kas_premirrors: self
                .env_kas_premirrors
                .clone()
                .and_then(|v| v.into_string().ok())
                .filter(|v| !v.trim().is_empty()),
        }
    }
}

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
            env: Default::default(),
        })
    }
}
