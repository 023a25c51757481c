//! SBOM and VEX fixtures made at test time with openembedded-core's own SPDX 3 model (the
//! `oe.spdx30` package of the upstream snapshot, run by python3 through
//! `tests/data/spdx/make_sbom.py`), so rtbuild's reader is tested against documents the real
//! serializer wrote, not against JSON written by hand. Every document made here is checked with
//! `spdx3-validate` (PyPI, in the test venv) against the official SPDX 3.0.1 JSON schema and
//! SHACL model, offline ([`validate`]): rtbuild is only ever tested on valid SPDX 3.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::harness::venv;
use crate::support::upstream::{snapshot_dir, upstream};

/// What the fixture documents hold.
#[derive(Debug, Default, serde::Serialize)]
pub(crate) struct Spec {
    /// `CONFIG_X` → value as oe-core records it (quotes stripped).
    pub kernel_config: Vec<(String, String)>,
    /// Package → version.
    pub packages: Vec<(String, String)>,
    /// CVE → (`affected` | `fixed` | `not_affected`, CVSS severity).
    pub vex: Vec<(String, (String, String))>,
}

/// The model's files, copied once per test process from the snapshot's oe-core.
fn model_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let up = upstream();
        let dir = up.dir.join("spdx-model");
        let package = dir.join("oe/spdx30");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(dir.join("oe/__init__.py"), "").unwrap();
        for file in ["__init__.py", "cmd.py", "model.py"] {
            let text = up.file("oe-core", &format!("meta/lib/oe/spdx30/{file}"));
            std::fs::write(package.join(file), text).unwrap();
        }
        dir
    })
    .clone()
}

/// Writes the image SBOM to `sbom` and, when `vex` is given, the VEX document there.
pub(crate) fn make(spec: &Spec, sbom: &Path, vex: Option<&Path>) {
    let object = |pairs: &[(String, String)]| {
        serde_json::Value::Object(
            pairs.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.clone()))).collect(),
        )
    };
    let doc = serde_json::json!({
        "kernel_config": object(&spec.kernel_config),
        "packages": object(&spec.packages),
        "vex": spec.vex.iter().map(|(cve, (status, severity))| (cve.clone(), serde_json::json!([status, severity]))).collect::<serde_json::Map<_, _>>(),
    });
    let spec_file = sbom.with_extension("spec.json");
    std::fs::write(&spec_file, doc.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spdx/make_sbom.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script).arg(&spec_file).arg(sbom).env("PYTHONPATH", model_dir());
    if let Some(vex) = vex {
        cmd.arg(vex);
    }
    let out = cmd.output().expect("python3 is installed by .ci/setup");
    assert!(out.status.success(), "make_sbom.py: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_file(spec_file).unwrap();
    let made: Vec<&Path> = std::iter::once(sbom).chain(vex).collect();
    let out = validate(&made);
    assert!(
        out.status.success(),
        "spdx3-validate rejects the fixture {made:?}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The official SPDX 3.0.1 JSON schema, SHACL model and JSON-LD context (spdx/spdx-spec
/// gh-pages `v3.0.1/rdf/`), unpacked once per test process from the snapshot folder's
/// `spdx-3.0.1-rdf.tar.gz`.
pub(crate) fn rdf_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let archive = snapshot_dir().join("spdx-3.0.1-rdf.tar.gz");
        let parent = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("spdx-rdf")
            .join(std::process::id().to_string());
        std::fs::create_dir_all(&parent).unwrap();
        let out = Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(&parent).output();
        let out = out.expect("tar");
        assert!(
            out.status.success(),
            "cannot unpack {}: {}",
            archive.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = parent.join("spdx-3.0.1-rdf");
        for file in ["schema.json", "spdx-model.ttl", "spdx-context.jsonld"] {
            assert!(dir.join(file).is_file(), "{} holds no {file}", archive.display());
        }
        dir
    })
    .clone()
}

/// `spdx3-validate` on `documents`, offline: `tests/data/spdx/validate_offline.py` serves it
/// the local copies of [`rdf_dir`] for the URLs it would download, and refuses any other.
pub(crate) fn validate(documents: &[&Path]) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spdx/validate_offline.py");
    Command::new(venv().join("bin/python3"))
        .arg(script)
        .arg(rdf_dir())
        .args(documents)
        .output()
        .expect("the test venv's python3")
}

/// `CONFIG_X=value` lines as (key, value) pairs, quotes stripped as oe-core strips them.
pub(crate) fn config_pairs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
        .collect()
}
