//! What runs kas's commands: the host's kas, or kas-container with a container engine.

use std::path::{Path, PathBuf};

use super::engine::{Engine, kas_container};
use super::error::KasError;
use super::find::{Kas, SearchEnv, find_kas_for_build};
use crate::host::runner::Runner;

/// The program that runs kas's commands, and the container engine when it is kas-container.
#[derive(Debug, Clone)]
pub(crate) struct Launcher {
    pub program: PathBuf,
    pub engine: Option<Engine>,
    /// The host's kas, when one was found.
    pub kas: Option<Kas>,
}

impl Launcher {
    /// kas (`kas`, the program given, or the one on [`SearchEnv::search_path`]), or kas-container with a
    /// container `engine`. Without a container a missing or too old kas is an error, except in
    /// a dry run (nothing runs).
    pub(crate) fn find(
        kas: Option<&Path>,
        engine: Option<Engine>,
        dry_run: bool,
        env: &SearchEnv,
        runner: &dyn Runner,
    ) -> Result<Launcher, KasError> {
        let found = find_kas_for_build(kas, env, runner);
        let program = match (engine, found) {
            (Some(_), found) => {
                let host_kas = found.as_ref().ok().map(|k| k.program.clone());
                let program = kas_container(host_kas.as_deref(), Some(&env.search_path()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::runner::Recorder;

    #[test]
    fn without_a_container_a_missing_kas_is_an_error_except_in_a_dry_run_recording_fake() {
        let runner = Recorder::new("", 0);
        let missing = Path::new("/nonexistent/kas");
        let err =
            Launcher::find(Some(missing), None, false, &SearchEnv::default(), &runner).unwrap_err();
        assert!(matches!(err, KasError::Missing { .. }), "{err}");
        let dry =
            Launcher::find(Some(missing), None, true, &SearchEnv::default(), &runner).unwrap();
        assert_eq!((dry.program.as_path(), dry.engine, dry.kas), (missing, None, None));
        assert!(runner.argvs().is_empty(), "a missing kas is not run: {:?}", runner.argvs());
    }

    #[test]
    fn a_container_build_runs_kas_container_without_a_host_kas_recording_fake() {
        let runner = Recorder::new("", 0);
        let launcher = Launcher::find(
            Some(Path::new("/nonexistent/kas")),
            Some(Engine::Podman),
            false,
            &SearchEnv::default(),
            &runner,
        )
        .unwrap();
        assert_eq!((launcher.engine, launcher.kas), (Some(Engine::Podman), None));
        assert!(launcher.program.ends_with("kas-container"), "{}", launcher.program.display());
    }
}
