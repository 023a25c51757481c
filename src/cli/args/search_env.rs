//! `PATH` and the data home: where kas, kas-container and the container engines are looked
//! for (`image`, `matrix`, `shell`, `doctor`).

use std::ffi::OsString;

use clap::Args;

use super::DataHomeArgs;
use crate::image::kas::find::SearchEnv;

/// The program search variables, read here (clap `env =`) and passed in. Hidden: variables the
/// login sets, not flags a person types.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SearchEnvArgs {
    #[arg(long, hide = true, value_name = "DIRS", env = "PATH")]
    pub env_path: Option<OsString>,
    #[command(flatten)]
    pub data_home: DataHomeArgs,
}

impl SearchEnvArgs {
    /// The values kas discovery starts from.
    pub(crate) fn env(&self) -> SearchEnv {
        SearchEnv {
            path: self.env_path.clone(),
            xdg_data_home: self.data_home.env_xdg_data_home.clone(),
            home: self.data_home.env_home.clone(),
        }
    }
}
