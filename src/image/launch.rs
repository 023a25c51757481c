//! What runs kas's commands: the host's kas, or kas-container with a container engine, and the
//! preflight that checks the host once before the first build of a command.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use super::ImageError;
use crate::doctor::{self, Engine};
use crate::kasrun::BuildError;
use crate::kasrun::kas::Kas;
use crate::plan::Plan;
use crate::runner::System;
use crate::ui::Ui;

/// The container engine `--container` asks for: none, the one named, or (`auto`) the one
/// installed. An unknown engine is an input error.
pub(crate) fn container_engine(request: Option<&str>) -> Result<Option<Engine>, ImageError> {
    match request {
        None => Ok(None),
        Some("auto") => {
            Ok(Some(doctor::facts::pick_engine(None, Some(&doctor::facts::search_path()))))
        }
        Some(name) => Ok(Some(Engine::parse(name).map_err(ImageError::Engine)?)),
    }
}

/// The program that runs kas's commands, and the container engine when it is kas-container.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub program: PathBuf,
    pub engine: Option<Engine>,
    /// The host's kas, when one was found.
    pub kas: Option<Kas>,
    /// The preflight ran (once per command, before the first build).
    checked: Cell<bool>,
}

impl Launch {
    /// kas (`kas`, the program given, or the one on PATH), or kas-container with a `container`
    /// engine. Without a container a missing or too old kas is an error, except in a dry run
    /// (nothing runs).
    pub(crate) fn find(
        kas: Option<&Path>,
        container: Option<&str>,
        dry_run: bool,
    ) -> Result<Launch, ImageError> {
        let engine = container_engine(container)?;
        let found = doctor::facts::find_kas(kas, &System);
        let program = match (engine, found) {
            (Some(_), found) => {
                let host_kas = found.as_ref().ok().map(|k| k.program.clone());
                let program = doctor::facts::kas_container(
                    host_kas.as_deref(),
                    Some(&doctor::facts::search_path()),
                )
                .unwrap_or_else(|| PathBuf::from("kas-container"));
                return Ok(Launch::new(program, engine, found.ok()));
            }
            (None, Ok(kas)) => return Ok(Launch::new(kas.program.clone(), None, Some(kas))),
            (None, Err(_)) if dry_run => {
                kas.map_or_else(|| PathBuf::from("kas"), Path::to_path_buf)
            }
            (None, Err(err)) => return Err(ImageError::Build(err)),
        };
        Ok(Launch::new(program, None, None))
    }

    fn new(program: PathBuf, engine: Option<Engine>, kas: Option<Kas>) -> Launch {
        Launch { program, engine, kas, checked: Cell::new(false) }
    }

    /// The preflight: the same checks as `rtbuild doctor` for the folders of `out`; a problem
    /// stops the command with exit 2 before anything is generated or kas is asked to build.
    pub(crate) fn preflight(&self, plan: &Plan, out: &Path, ui: &Ui) -> Result<(), ImageError> {
        self.preflight_of(|| doctor::target_for(plan, out, self.engine), ui)
    }

    /// The preflight for the build `target` makes, before its plan exists (the meta-qcom
    /// checkout runs after it).
    pub(crate) fn preflight_of(
        &self,
        target: impl FnOnce() -> doctor::Target,
        ui: &Ui,
    ) -> Result<(), ImageError> {
        if self.checked.replace(true) {
            return Ok(());
        }
        let kas =
            self.kas.clone().ok_or_else(|| BuildError::KasMissing { looked: "PATH".to_string() });
        doctor::preflight(&target(), kas, ui)?;
        Ok(())
    }
}
