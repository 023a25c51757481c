//! What runs kas's commands: the host's kas, or kas-container with a container engine.

use std::path::{Path, PathBuf};

use super::engine::{Engine, kas_container};
use super::error::KasError;
use super::find::{Kas, find_kas, search_path};
use crate::runner::Runner;

/// The program that runs kas's commands, and the container engine when it is kas-container.
#[derive(Debug, Clone)]
pub(crate) struct Launcher {
    pub program: PathBuf,
    pub engine: Option<Engine>,
    /// The host's kas, when one was found.
    pub kas: Option<Kas>,
}

impl Launcher {
    /// kas (`kas`, the program given, or the one on [`search_path`]), or kas-container with a
    /// container `engine`. Without a container a missing or too old kas is an error, except in
    /// a dry run (nothing runs).
    pub(crate) fn find(
        kas: Option<&Path>,
        engine: Option<Engine>,
        dry_run: bool,
        runner: &dyn Runner,
    ) -> Result<Launcher, KasError> {
        let found = find_kas(kas, runner);
        let program = match (engine, found) {
            (Some(_), found) => {
                let host_kas = found.as_ref().ok().map(|k| k.program.clone());
                let program = kas_container(host_kas.as_deref(), Some(&search_path()))
                    .unwrap_or_else(|| PathBuf::from("kas-container"));
                return Ok(Launcher { program, engine, kas: found.ok() });
            }
            (None, Ok(kas)) => {
                return Ok(Launcher { program: kas.program.clone(), engine: None, kas: Some(kas) });
            }
            (None, Err(_)) if dry_run => {
                kas.map_or_else(|| PathBuf::from("kas"), Path::to_path_buf)
            }
            (None, Err(err)) => return Err(err),
        };
        Ok(Launcher { program, engine: None, kas: None })
    }
}
