//! `--machine` and `--machines-dir`: the board and the catalog it is looked up in, flattened by
//! every command that names a board (`machines`, which names none, flattens the catalog alone).
//!
//! A command whose `--machine` means something more specific keeps its own help line (and, for
//! `report`, its value name) with `mut_arg` on its argument struct; the flag, its id and its
//! behaviour are this struct's everywhere.

use std::path::PathBuf;

use clap::Args;

use crate::catalog::Catalog;

#[derive(Debug, Clone, Default, Args)]
pub(crate) struct MachineArgs {
    /// Board to build for (see `rtbuild machines`); aliases such as qcs6490-rb3gen2 work.
    #[arg(id = "machine", long = "machine", short = 'm', value_name = "MACHINE")]
    pub name: Option<String>,
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

/// `--machines-dir`: the catalog the machine names are looked up in.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct CatalogArgs {
    /// Extra machine definitions (*.yaml) that add to or replace the shipped catalog.
    #[arg(long, value_name = "DIR", env = "RTBUILD_MACHINES_DIR")]
    pub machines_dir: Option<PathBuf>,
}

impl CatalogArgs {
    /// The shipped catalog with `--machines-dir`'s definitions over it.
    pub(crate) fn catalog(&self) -> anyhow::Result<Catalog> {
        Ok(Catalog::with_user_dir(self.machines_dir.as_deref())?)
    }
}

impl MachineArgs {
    /// The shipped catalog with `--machines-dir`'s definitions over it.
    pub(crate) fn catalog(&self) -> anyhow::Result<Catalog> {
        self.catalog.catalog()
    }

    /// The catalog entry `--machine` names (aliases resolved), when it was given.
    pub(crate) fn lookup(&self) -> anyhow::Result<Option<crate::catalog::Machine>> {
        let Some(name) = &self.name else { return Ok(None) };
        Ok(Some(self.catalog()?.lookup(name)?.machine.clone()))
    }
}
