//! The repos a build uses, as kas sees them: `kas dump --format json` on the kas file, with
//! `KAS_WORK_DIR` set. kas resolves every include (cloning what is missing) and prints the merged
//! config; rtbuild reads the `repos:` of it. Repos without a `url` are local (the folder holding
//! the kas file) and are not pinned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::LockError;
use crate::host::runner::{Cmd, Runner, check_status};

/// Where kas runs: the kas file, its work folder, and the kas program.
#[derive(Debug, Clone)]
pub(crate) struct KasConfig {
    pub kas_file: PathBuf,
    pub work_dir: PathBuf,
    /// `kas` (from PATH) unless the caller names another program.
    pub kas_program: PathBuf,
}

/// One repo of the merged config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct BuildRepo {
    pub name: String,
    pub url: Option<String>,
    pub branch: Option<String>,
    pub commit: Option<String>,
    /// Where kas checks it out.
    pub path: PathBuf,
}

impl BuildRepo {
    /// A repo kas manages (has a URL); local repos are the user's own folder.
    pub(crate) fn is_remote(&self) -> bool {
        self.url.is_some()
    }
}

/// Runs `kas dump` and returns the build's repos, sorted by name.
pub(crate) fn kas_dump(
    config: &KasConfig,
    runner: &dyn Runner,
) -> Result<Vec<BuildRepo>, LockError> {
    if !config.kas_file.is_file() {
        return Err(LockError::NoKasFile { path: config.kas_file.clone() });
    }
    // kas wants an existing work folder.
    std::fs::create_dir_all(&config.work_dir)
        .map_err(|source| LockError::Write { path: config.work_dir.clone(), cause: source })?;
    // kas runs in the work folder: hand it an absolute path.
    let kas_file = std::path::absolute(&config.kas_file).unwrap_or(config.kas_file.clone());
    let cmd = Cmd::new(&config.kas_program)
        .args(["dump", "--format", "json"])
        .arg(&kas_file)
        .env("KAS_WORK_DIR", &config.work_dir)
        .cwd(&config.work_dir);
    let output =
        runner.capture(&cmd).and_then(|o| check_status(&cmd, o)).map_err(LockError::Kas)?;
    parse_dump(&String::from_utf8_lossy(&output.stdout), &config.work_dir)
}

/// Reads the `repos:` of a `kas dump --format json` output.
pub(super) fn parse_dump(text: &str, work_dir: &Path) -> Result<Vec<BuildRepo>, LockError> {
    let bad = |message: &str| LockError::KasOutput { message: message.to_string() };
    let doc: Value = serde_json::from_str(text).map_err(|cause| LockError::KasJson { cause })?;
    let repos = doc.get("repos").and_then(Value::as_object).ok_or_else(|| bad("no `repos`"))?;
    let mut out = BTreeMap::new();
    for (name, entry) in repos {
        let field = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
        let url = field("url");
        let path = match (&url, field("path")) {
            (Some(_), Some(p)) => work_dir.join(p),
            (Some(_), None) => work_dir.join(name),
            // Local repo: kas uses the folder of the kas file; rtbuild does not pin it.
            (None, p) => PathBuf::from(p.unwrap_or_default()),
        };
        out.insert(
            name.clone(),
            BuildRepo {
                name: name.clone(),
                url,
                branch: field("branch"),
                commit: field("commit"),
                path,
            },
        );
    }
    Ok(out.into_values().collect())
}

/// The names under `repos:` of one kas file (no includes followed), for name checks when kas
/// is not run.
pub(crate) fn declared_repos(kas_file: &Path) -> Vec<String> {
    let Ok(text) = crate::files::input::read_to_string(kas_file, crate::files::input::TEXT_LIMIT)
    else {
        return Vec::new();
    };
    let Ok(serde_yaml::Value::Mapping(top)) =
        crate::text::yaml::from_str::<serde_yaml::Value>(&text)
    else {
        return Vec::new();
    };
    match top.get("repos") {
        Some(serde_yaml::Value::Mapping(repos)) => {
            repos.keys().filter_map(|k| k.as_str().map(str::to_string)).collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_repos_with_and_without_url() {
        let text = r#"{"header":{"version":14},"repos":{
            "oe-core":{"url":"file:///s/oe-core","branch":"master"},
            "meta-qcom":{"url":"file:///s/meta-qcom","branch":"wrynose","path":"layers/mq"},
            "rtbuild":{"layers":{"meta-rtbuild":null}}}}"#;
        let repos = parse_dump(text, Path::new("/w")).unwrap();
        let names: Vec<_> = repos.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["meta-qcom", "oe-core", "rtbuild"]);
        assert_eq!(repos[0].path, Path::new("/w/layers/mq"));
        assert_eq!(repos[1].path, Path::new("/w/oe-core"));
        assert!(!repos[2].is_remote());
        assert!(parse_dump("[]", Path::new("/w")).is_err());
    }

    #[test]
    fn kas_dump_runs_through_the_runner_it_is_given_recording_fake() {
        let dir = tempfile::tempdir().unwrap();
        let kas_file = dir.path().join("m-rt.yml");
        crate::files::write::fixture(&kas_file, "header:\n  version: 14\n").unwrap();
        let work = dir.path().join("work");
        let config = KasConfig {
            kas_file: kas_file.clone(),
            work_dir: work.clone(),
            kas_program: "my-kas".into(),
        };
        let dump = r#"{"repos":{"oe-core":{"url":"file:///s/oe-core"}}}"#;
        let runner = crate::host::runner::Recorder::new(dump, 0);
        let repos = kas_dump(&config, &runner).unwrap();
        assert_eq!(repos[0].path, work.join("oe-core"));
        let argv = ["my-kas", "dump", "--format", "json", kas_file.to_str().unwrap()];
        assert_eq!(runner.argvs(), [argv.map(String::from).to_vec()]);
        let failing = crate::host::runner::Recorder::new("", 1);
        assert!(matches!(kas_dump(&config, &failing), Err(LockError::Kas(_))));
    }
}
