//! `--out`, `--force`, `--dry-run`: where generated files go, shared by `generate`, `image`
//! and `shell`.

use std::path::PathBuf;

use clap::Args;

use crate::files::write::WriteOptions;
use crate::image::pipeline::OutputOptions;

/// Where generated files go.
#[derive(Debug, Clone, Args)]
pub(crate) struct OutputArgs {
    /// Output folder for the kas file and layer [default: rtbuild/<machine>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Overwrite generated files even if they were edited by hand.
    #[arg(long)]
    pub force: bool,
    /// Print what would change and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

impl OutputArgs {
    /// `--out` can be an output folder (a device, FIFO or file is refused in one line before
    /// anything is printed or written).
    pub(crate) fn check(&self) -> Result<(), crate::cli::error::Refusal> {
        if let Some(out) = &self.out {
            crate::files::output::check_folder("--out", &super::absolute(out))
                .map_err(crate::cli::error::Refusal::Output)?;
        }
        Ok(())
    }

    pub(crate) fn options(&self) -> OutputOptions {
        OutputOptions {
            out: self.out.clone(),
            work_dir: None,
            write: WriteOptions { force: self.force, dry_run: self.dry_run },
        }
    }
}
