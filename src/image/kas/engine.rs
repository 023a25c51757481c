//! The container engine a kas-container build uses, and where kas-container is.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::host::find_program;

/// The container engines `--container` accepts (kas-container's `KAS_CONTAINER_ENGINE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Engine {
    Docker,
    Podman,
}

impl Engine {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }

    /// `docker`, `podman`; anything else is refused with the accepted names.
    pub(crate) fn parse(value: &str) -> Result<Engine, String> {
        match value {
            "docker" => Ok(Engine::Docker),
            "podman" => Ok(Engine::Podman),
            other => Err(format!(
                "unknown container engine `{}`; use --container docker or --container podman \
                 (or --container alone to use whichever is installed)",
                crate::text::printable(other)
            )),
        }
    }

    /// What `--container` asks for: none, the engine named, or (`auto`) the one installed on
    /// `path`.
    pub(crate) fn requested(
        request: Option<&str>,
        path: Option<&OsStr>,
    ) -> Result<Option<Engine>, String> {
        match request {
            None => Ok(None),
            Some("auto") => Ok(Some(pick_engine(None, path))),
            Some(name) => Engine::parse(name).map(Some),
        }
    }
}

/// For a container build, the engine: the one asked for, else docker when installed, else
/// podman (kas-container's own order).
pub(crate) fn pick_engine(asked: Option<Engine>, path: Option<&OsStr>) -> Engine {
    asked.unwrap_or_else(|| {
        if find_program("docker", path).is_none() && find_program("podman", path).is_some() {
            Engine::Podman
        } else {
            Engine::Docker
        }
    })
}

/// kas-container: beside the kas in use (it ships in the same wheel), else on `path`.
pub(crate) fn kas_container(kas: Option<&Path>, path: Option<&OsStr>) -> Option<PathBuf> {
    let beside = kas.and_then(Path::parent).map(|dir| dir.join("kas-container"));
    beside.filter(|p| p.is_file()).or_else(|| find_program("kas-container", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_engines_are_refused_by_name() {
        assert_eq!(Engine::parse("podman"), Ok(Engine::Podman));
        let err = Engine::parse("lxc").unwrap_err();
        assert!(
            err.starts_with("unknown container engine `lxc`; use --container docker or"),
            "{err}"
        );
    }

    #[test]
    fn container_requests_are_none_an_engine_or_refused() {
        assert_eq!(Engine::requested(None, None), Ok(None));
        assert_eq!(Engine::requested(Some("docker"), None), Ok(Some(Engine::Docker)));
        let err = Engine::requested(Some("dock\ner"), None).unwrap_err();
        assert!(err.starts_with("unknown container engine `dock\\ner`;"), "{err}");
    }
}
