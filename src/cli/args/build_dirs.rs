//! Where a generated build lives, shared by `lock` and `bundle`: the generated folder
//! (`rtbuild/<machine>/` holding `<machine>-rt.yml`), kas's work folder (the checkouts) and the
//! build folder (`tmp/deploy/images/`).

use std::path::{Path, PathBuf};

use clap::Args;

pub(crate) use super::plan::absolute;

use super::MachineArgs;

#[derive(Debug, Clone, Default, Args)]
#[command(mut_arg("machine", |arg| arg.help(
    "Board the build is for (see `rtbuild machines`); aliases work"
)))]
pub(crate) struct BuildDirs {
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Folder `rtbuild generate` wrote [default: rtbuild/<machine>].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// kas work folder holding the repo checkouts [default: $KAS_WORK_DIR, else the parent of
    /// the generated folder (`rtbuild/`, where `rtbuild image` lets kas clone), else the current
    /// folder].
    #[arg(long, value_name = "DIR", env = "KAS_WORK_DIR")]
    pub work_dir: Option<PathBuf>,
}

impl BuildDirs {
    /// The machine's catalog name (aliases resolved), when `--machine` was given.
    pub(crate) fn machine_name(&self) -> crate::cli::error::Result<Option<String>> {
        Ok(self.machine.lookup()?.map(|machine| machine.name))
    }

    /// The generated folder, `--dir` or `rtbuild/<machine>`; `None` without either.
    pub(crate) fn out_dir(&self) -> crate::cli::error::Result<Option<PathBuf>> {
        if let Some(dir) = &self.dir {
            return Ok(Some(absolute(dir)));
        }
        let Some(machine) = self.machine_name()? else { return Ok(None) };
        Ok(Some(absolute(&crate::files::paths::machine_out(&machine))))
    }

    /// The generated kas file, `<dir>/<machine>-rt.yml`; `None` without `--machine`.
    pub(crate) fn kas_file(&self) -> crate::cli::error::Result<Option<PathBuf>> {
        let Some(machine) = self.machine_name()? else { return Ok(None) };
        let Some(dir) = self.out_dir()? else { return Ok(None) };
        Ok(Some(dir.join(format!("{machine}-rt.yml"))))
    }

    /// Where kas keeps the checkouts: as `rtbuild image` arranges it unless told otherwise.
    pub(crate) fn work_dir(&self) -> crate::cli::error::Result<PathBuf> {
        if let Some(dir) = &self.work_dir {
            return Ok(absolute(dir));
        }
        let parent = self.out_dir()?.and_then(|out| out.parent().map(Path::to_path_buf));
        Ok(parent.unwrap_or_else(|| absolute(Path::new("."))))
    }

    /// The build folder holding `tmp/deploy/images/`: `<work dir>/build` (kas's own default)
    /// when a work folder is given, else `<generated folder>/build` as `rtbuild image` uses it.
    pub(crate) fn build_dir(&self) -> crate::cli::error::Result<PathBuf> {
        match (&self.work_dir, self.out_dir()?) {
            (None, Some(out)) => Ok(out.join("build")),
            _ => Ok(self.work_dir()?.join("build")),
        }
    }
}
