//! What runs kas's commands ([`crate::image::kas::Launcher`]: the host's kas, or kas-container with a
//! container engine), and the preflight that checks the host once before the first build of a
//! command.

use std::cell::Cell;
use std::ffi::{OsStr, OsString};
use std::path::Path;

use super::ImageError;
use crate::host::runner::System;
use crate::image::doctor;
use crate::image::kas::{Engine, Kas, KasError, Launcher, find::SearchEnv};
use crate::image::kasrun::caches::CacheEnv;
use crate::plan::Plan;
use crate::text::ui::Ui;

/// The container engine `--container` asks for: none, the one named, or (`auto`) the one
/// installed (on `env`'s search path). An unknown engine is an input error.
pub(crate) fn container_engine(
    request: Option<&str>,
    env: &SearchEnv,
) -> Result<Option<Engine>, ImageError> {
    Engine::requested(request, Some(&env.search_path())).map_err(ImageError::Engine)
}

/// The preflight's checks: [`doctor::preflight`], or a fake in tests.
type Preflight =
    fn(&doctor::Target, Result<Kas, KasError>, &OsStr, &Ui) -> Result<(), doctor::NotReady>;

/// The kas launcher of a command, and whether its preflight ran.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub launcher: Launcher,
    /// Where programs were looked for, which the preflight checks again.
    search_path: OsString,
    /// The preflight ran (once per command, before the first build).
    checked: Cell<bool>,
    /// How many times the command asked for the preflight (`image` asks once; each cell of a
    /// `matrix` asks, and only the first is answered).
    asked: Cell<u32>,
    preflight: Preflight,
}

impl Launch {
    /// kas (`kas`, the program given, or the one on `env`'s search path), or kas-container with
    /// a `container` engine. Without a container a missing or too old kas is an error, except in a dry run
    /// (nothing runs).
    pub(crate) fn find(
        kas: Option<&Path>,
        container: Option<&str>,
        dry_run: bool,
        env: &SearchEnv,
    ) -> Result<Launch, ImageError> {
        let engine = container_engine(container, env)?;
        let launcher = Launcher::find(kas, engine, dry_run, env, &System)
            .map_err(|e| ImageError::Build(e.into()))?;
        Ok(Launch {
            launcher,
            search_path: env.search_path(),
            checked: Cell::new(false),
            asked: Cell::new(0),
            preflight: doctor::preflight,
        })
    }

    /// `launcher` with a fake preflight that finds the host ready and counts how often it is
    /// asked for ([`Launch::preflights_asked`]).
    #[cfg(test)]
    pub(crate) fn with_counting_fake_preflight(launcher: Launcher) -> Launch {
        Launch {
            launcher,
            search_path: OsString::new(),
            checked: Cell::new(false),
            asked: Cell::new(0),
            preflight: |_, _, _, _| Ok(()),
        }
    }

    /// How many times the preflight was asked for so far.
    #[cfg(test)]
    pub(crate) fn preflights_asked(&self) -> u32 {
        self.asked.get()
    }

    /// The preflight: the same checks as `rtbuild doctor` for the folders of `out`; a problem
    /// stops the command with exit 2 before anything is generated or kas is asked to build.
    pub(crate) fn preflight(
        &self,
        plan: &Plan,
        out: &Path,
        work_dir: Option<&Path>,
        env: &CacheEnv,
        ui: &Ui,
    ) -> Result<(), ImageError> {
        self.preflight_of(|| doctor::target_for(plan, out, work_dir, self.launcher.engine, env), ui)
    }

    /// The preflight for the build `target` makes, before its plan exists (the meta-qcom
    /// checkout runs after it).
    pub(crate) fn preflight_of(
        &self,
        target: impl FnOnce() -> doctor::Target,
        ui: &Ui,
    ) -> Result<(), ImageError> {
        self.asked.set(self.asked.get() + 1);
        if self.checked.replace(true) {
            return Ok(());
        }
        let kas = self
            .launcher
            .kas
            .clone()
            .ok_or_else(|| KasError::Missing { looked: "PATH".to_string() });
        (self.preflight)(&target(), kas, &self.search_path, ui)?;
        Ok(())
    }
}
