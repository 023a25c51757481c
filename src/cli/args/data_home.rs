//! `XDG_DATA_HOME` and `HOME`: where rtbuild keeps its own data (the kas venv, the history
//! database), shared by `setup` and `history`.

use std::path::PathBuf;

use clap::Args;

/// The data-home variables, read here (clap `env =`) and passed in. Hidden: variables the
/// login sets, not flags a person types.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct DataHomeArgs {
    #[arg(long, hide = true, value_name = "DIR", env = "XDG_DATA_HOME")]
    pub env_xdg_data_home: Option<PathBuf>,
    #[arg(long, hide = true, value_name = "DIR", env = "HOME")]
    pub env_home: Option<PathBuf>,
}
