//! The release evidence a bundle carries under `release/`, beside the flash files, each bound
//! by sha256 in the manifest (`release`): the image SBOM (`${IMAGE_NAME}.spdx.json`), the
//! sbom-cve-check VEX and summary, kas's provenance statement (and the artifacts it names
//! that the bundle does not already hold), the resolved kas configuration (`kas dump
//! --resolve-refs --resolve-local --resolve-env`), the lock, `rtbuild-plan.json`,
//! `verify.json`, and an `rtbuild test` run of the image. Files are taken only when they are
//! regular files of a bounded size; symlinks in the deploy folder are followed to their target
//! inside it (BitBake's `IMAGE_LINK_NAME` links), never out of it.

use std::path::{Path, PathBuf};

use super::BundleError;
use super::archive::{self, EntryContent};
use super::manifest::ReleaseRecord;
use crate::files::limits::MAX_RELEASE_FILE;

/// The folder inside the bundle.
pub(crate) const RELEASE_DIR: &str = "release";
/// The name `rtbuild image --bundle` keeps the resolved kas configuration under, beside the
/// generated kas file.
pub(crate) const KAS_DUMP_FILE: &str = "kas-dump.yml";
/// Where kas writes the provenance statement, in the build folder.
pub(crate) const PROVENANCE_FILE: &str = "attestation/kas-build.provenance.json";

/// The roles, as the manifest names them.
pub(crate) const ROLE_SBOM: &str = "sbom";
pub(crate) const ROLE_VEX: &str = "vex";
pub(crate) const ROLE_CVE_SUMMARY: &str = "cve-summary";
pub(crate) const ROLE_PROVENANCE: &str = "provenance";
pub(crate) const ROLE_ARTIFACT: &str = "provenance-subject";
pub(crate) const ROLE_KAS_DUMP: &str = "resolved-config";
pub(crate) const ROLE_LOCK: &str = "lock";
pub(crate) const ROLE_PLAN: &str = "plan";
pub(crate) const ROLE_VERIFY: &str = "verify";
pub(crate) const ROLE_MEASUREMENT: &str = "measurement";
/// A file of the generated layer (`meta-rtbuild`, with every user fragment and patch).
pub(crate) const ROLE_LAYER: &str = "rebuild-layer";
/// The kas file that rebuilds the image from the unpacked bundle.
pub(crate) const ROLE_REBUILD: &str = "rebuild-config";

/// Where the rebuild kas file and the generated layer go, under [`RELEASE_DIR`]: kas takes the
/// folder of the kas file (outside a git work tree) as the root of the kas file's own repo, so
/// the layer sits beside it.
pub(crate) const REBUILD_DIR: &str = "rebuild";
/// The rebuild kas file's name in [`REBUILD_DIR`].
pub(crate) const REBUILD_FILE: &str = "kas.yml";
/// The generated layer's folder name, beside the generated kas file.
const LAYER_DIR: &str = "meta-rtbuild";

/// One file to pack: its record and where its bytes come from.
pub(super) struct Packed {
    pub record: ReleaseRecord,
    pub source: EntryContent,
}

/// Adds `path` as `release/<name>` with `role`; `subject` is the name a provenance statement
/// gives it.
pub(super) fn add(
    out: &mut Vec<Packed>,
    role: &str,
    path: &Path,
    name: &str,
    subject: Option<String>,
) -> Result<(), BundleError> {
    let meta = std::fs::metadata(path)
        .map_err(|source| BundleError::Read { path: path.to_path_buf(), cause: source })?;
    if !meta.is_file() || meta.len() > MAX_RELEASE_FILE {
        return Err(BundleError::Read {
            path: path.to_path_buf(),
            cause: std::io::Error::other("not a regular file of a sane size"),
        });
    }
    let (size, sha256) = archive::hash_file(path)?;
    let inside = format!("{RELEASE_DIR}/{name}");
    out.push(Packed {
        record: ReleaseRecord {
            role: role.into(),
            path: inside,
            size,
            sha256: sha256.clone(),
            subject,
        },
        source: EntryContent::File { path: path.to_path_buf(), sha256 },
    });
    Ok(())
}

/// `deploy/<link>` followed to the file it names inside `deploy`: `(real path, real name)`.
/// `None` when missing, or when the link leaves the folder.
pub(super) fn deployed(deploy: &Path, link: &str) -> Option<(PathBuf, String)> {
    let path = deploy.join(link);
    let real = std::fs::canonicalize(&path).ok()?;
    let root = std::fs::canonicalize(deploy).ok()?;
    if !real.starts_with(&root) || !real.is_file() {
        return None;
    }
    let name = real.file_name()?.to_string_lossy().into_owned();
    Some((real, name))
}

/// The image SBOM, the VEX and the CVE summary of `<image>-<machine>.rootfs` in `deploy`.
pub(super) fn image_documents(
    out: &mut Vec<Packed>,
    deploy: &Path,
    stem: &str,
) -> Result<(), BundleError> {
    for (role, suffix) in [
        (ROLE_SBOM, ".spdx.json"),
        (ROLE_VEX, ".sbom-cve-check.spdx.json"),
        (ROLE_CVE_SUMMARY, ".sbom-cve-check.yocto.json"),
    ] {
        let link = format!("{stem}{suffix}");
        if let Some((real, name)) = deployed(deploy, &link) {
            add(out, role, &real, &name, Some(link))?;
        }
    }
    Ok(())
}

/// What the shipped kernel is, as `verify` found it: the measurement must be of this one.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ShippedKernel<'a> {
    /// `uname -r` then the `#…` version string (verify's `kernel_version`).
    pub version: Option<&'a str>,
    /// sha256 of its config, uncompressed (verify's `config_sha256`).
    pub config_sha256: Option<&'a str>,
}

/// The `rtbuild test` result folder of `--measurement`: its `run.json` (and `report.json`,
/// `report.html` when `rtbuild report` left them), refused unless the run measured this
/// image's kernel: `uname -a` carries the release and the version string verify found, and
/// the config digest the target recorded is the shipped config's. A run.json without a
/// config digest (an older rtbuild, or a target with neither `/proc/config.gz` nor
/// `/boot/config-$(uname -r)`) is bundled on the release and version alone, with a warning;
/// the returned lines are those warnings.
pub(super) fn measurement(
    out: &mut Vec<Packed>,
    measured: &super::Measured,
    shipped: ShippedKernel<'_>,
) -> Result<Vec<String>, BundleError> {
    let run_dir = measured.dir.as_path();
    let run_json = measured.run_json.path.clone();
    let bad = |message: String| BundleError::Measurement { path: run_json.clone(), message };
    let other = |message: String| BundleError::NotThisImage { path: run_json.clone(), message };
    let record = &measured.run_json.record;
    let fingerprint = record.fingerprint.clone().unwrap_or_default();
    let uname = fingerprint.uname.clone().unwrap_or_default();
    let Some(version) = shipped.version else {
        return Err(bad("the verify result names no kernel version to compare the run with; \
                        verify the deployed image first"
            .into()));
    };
    let release = version.split_whitespace().next().unwrap_or_default();
    let uts = version.find('#').map_or("", |at| version[at..].trim());
    let tokens: Vec<&str> = uname.split_whitespace().collect();
    if release.is_empty() || !tokens.contains(&release) || (!uts.is_empty() && !uname.contains(uts))
    {
        return Err(other(format!(
            "the run measured `{}`, not this image's kernel {release} {uts}",
            printable(&uname)
        )));
    }
    let mut warnings = Vec::new();
    match (&fingerprint.kernel_config_sha256, shipped.config_sha256) {
        (Some(measured), Some(shipped)) if measured != shipped => {
            let source = fingerprint.kernel_config_source.as_deref().unwrap_or("the target");
            return Err(other(format!(
                "the measured kernel's config ({}, sha256 {}) is not this image's kernel config (sha256 {shipped}, as verify found it)",
                printable(source),
                printable(measured)
            )));
        }
        (Some(_), Some(_)) => {}
        (None, _) => warnings.push(format!(
            "{} records no kernel config digest (written by an older rtbuild, or the target has neither /proc/config.gz nor /boot/config-$(uname -r)): the measurement is bound to this image by kernel release and version only; run `rtbuild test` again to bind it by config too",
            run_json.display()
        )),
        (Some(_), None) => warnings.push(
            "the verify result carries no kernel config digest: the measurement is bound to this image by kernel release and version only; verify the deployed image (`rtbuild verify --json`) to compare the configs".to_string(),
        ),
    }
    // The bytes read once for the check are the ones packed: run.json is not opened again.
    let bytes = measured.run_json.text.as_bytes().to_vec();
    out.push(Packed {
        record: ReleaseRecord {
            role: ROLE_MEASUREMENT.into(),
            path: format!("{RELEASE_DIR}/measurement/run.json"),
            size: bytes.len() as u64,
            sha256: archive::sha256_hex(&bytes),
            subject: None,
        },
        source: EntryContent::Bytes(bytes),
    });
    for name in ["report.json", "report.html"] {
        let path = run_dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            add(out, ROLE_MEASUREMENT, &path, &format!("measurement/{name}"), None)?;
        }
    }
    Ok(warnings)
}

/// The generated layer beside `kas_file` (`meta-rtbuild/`, every file of it, which holds the
/// user's fragments and patches too), as `release/rebuild/meta-rtbuild/…`; and, from the
/// resolved configuration `kas_dump`, the kas file `release/rebuild/kas.yml` that builds it
/// again: the dump with the repo of the generated layer pointed at the layer beside it. Nothing when there is no generated layer. A symlink or
/// anything but a regular file or folder in the layer is refused: the bundle must carry the
/// layer's bytes, not a pointer out of it.
pub(super) fn rebuild(
    out: &mut Vec<Packed>,
    kas_file: &Path,
    kas_dump: Option<&Path>,
) -> Result<(), BundleError> {
    let Some(layer) = kas_file.parent().map(|dir| dir.join(LAYER_DIR)) else { return Ok(()) };
    if !std::fs::symlink_metadata(&layer).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    for entry in walkdir::WalkDir::new(&layer).follow_links(false).sort_by_file_name() {
        let entry =
            entry.map_err(|e| BundleError::Read { path: layer.clone(), cause: e.into() })?;
        let kind = entry.file_type();
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            return Err(BundleError::Read {
                path: entry.path().to_path_buf(),
                cause: std::io::Error::other(
                    "not a regular file: the generated layer must hold its own files; run `rtbuild generate` again",
                ),
            });
        }
        let relative = entry.path().strip_prefix(&layer).unwrap_or(entry.path());
        let name =
            format!("{REBUILD_DIR}/{LAYER_DIR}/{}", relative.to_string_lossy().replace('\\', "/"));
        add(out, ROLE_LAYER, entry.path(), &name, None)?;
    }
    let Some(dump) = kas_dump else { return Ok(()) };
    let bytes = crate::files::input::read(dump, crate::files::input::TEXT_LIMIT)
        .map_err(BundleError::Input)?;
    let config = rebuild_config(&bytes).map_err(|message| BundleError::Read {
        path: dump.to_path_buf(),
        cause: std::io::Error::other(message),
    })?;
    let sha256 = archive::sha256_hex(&config);
    out.push(Packed {
        record: ReleaseRecord {
            role: ROLE_REBUILD.into(),
            path: format!("{RELEASE_DIR}/{REBUILD_DIR}/{REBUILD_FILE}"),
            size: config.len() as u64,
            sha256,
            subject: None,
        },
        source: EntryContent::Bytes(config),
    });
    Ok(())
}

/// The rebuild kas file from a `kas dump --resolve-refs --resolve-local --resolve-env`: every
/// repo as the dump pinned it, but the repo holding the generated layer (at build time the
/// folder or git work tree of the generated kas file) reduced to that layer, so kas takes it
/// from the folder of the rebuild file.
pub(crate) fn rebuild_config(dump: &[u8]) -> Result<Vec<u8>, String> {
    use serde_yaml::Value;
    let mut config: Value = crate::text::yaml::from_slice(dump).map_err(|e| {
        format!("not a kas configuration ({e}); run `rtbuild image --bundle` again")
    })?;
    let repos = config.get_mut("repos").and_then(Value::as_mapping_mut).ok_or(
        "the resolved kas configuration has no `repos`; run `rtbuild image --bundle` again",
    )?;
    let mut found = false;
    for (_, repo) in repos.iter_mut() {
        let Some(repo) = repo.as_mapping_mut() else { continue };
        // Outside git the dump names it without a URL; inside a work tree `--resolve-local`
        // gives it the work tree's remote and commit: either way it is the repo whose layer is
        // the generated one, and the bundle carries that layer.
        let ours = repo.get("layers").and_then(Value::as_mapping).is_some_and(|layers| {
            layers
                .keys()
                .any(|k| k.as_str().is_some_and(|k| k.rsplit('/').next() == Some(LAYER_DIR)))
        });
        if !ours {
            continue;
        }
        let mut layers = serde_yaml::Mapping::new();
        layers.insert(Value::from(LAYER_DIR), Value::Null);
        repo.clear();
        repo.insert(Value::from("layers"), Value::Mapping(layers));
        found = true;
    }
    if !found {
        return Err(format!(
            "the resolved kas configuration has no local repo with the {LAYER_DIR} layer (it is not the build of the generated kas file beside it); run `rtbuild image --bundle` again"
        ));
    }
    let yaml = serde_yaml::to_string(&config).map_err(|e| e.to_string())?;
    Ok(format!(
        "# Rebuilds this bundle's image: the resolved kas configuration of its build, every repo at\n\
         # the commit it was built from, the generated layer ({LAYER_DIR}, beside this file) from the\n\
         # bundle. Unpack the bundle outside any git work tree (kas takes a work tree's top as this\n\
         # file's repo), then: kas checkout {RELEASE_DIR}/{REBUILD_DIR}/{REBUILD_FILE}; kas build …\n{yaml}"
    )
    .into_bytes())
}

/// A value from run.json as one printable line (control characters escaped), at most 200
/// characters.
fn printable(text: &str) -> String {
    crate::text::printable_first(text, 200)
}

/// kas's provenance statement in the build folder, and every subject it names that the bundle
/// does not already carry (taken from the deploy folder by name).
pub(super) fn provenance(
    out: &mut Vec<Packed>,
    build_dir: &Path,
    deploy: &Path,
) -> Result<(), BundleError> {
    let path = build_dir.join(PROVENANCE_FILE);
    if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let bytes = std::fs::read(&path)
        .map_err(|source| BundleError::Read { path: path.clone(), cause: source })?;
    let statement = crate::formats::provenance_json::Statement::parse(&bytes)
        .map_err(|cause| BundleError::Provenance { path: path.clone(), cause })?;
    add(out, ROLE_PROVENANCE, &path, "kas-build.provenance.json", None)?;
    for subject in &statement.subject {
        if out.iter().any(|p| p.record.subject.as_deref() == Some(subject.name.as_str())) {
            continue;
        }
        if let Some((real, _)) = deployed(deploy, &subject.name) {
            let name = format!("artifacts/{}", subject.name);
            add(out, ROLE_ARTIFACT, &real, &name, Some(subject.name.clone()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repo of the generated layer (without a URL outside git; with the work tree's URL and
    /// commit inside one) becomes that layer alone; every other repo stays as kas pinned it.
    #[test]
    fn the_rebuild_config_takes_the_generated_layer_from_beside_it() {
        for (repo, layer) in [
            ("  rtbuild:\n    url:\n    commit: wrynose\n", "meta-rtbuild"),
            (
                "  bsp:\n    url: https://example.com/bsp.git\n    commit: 1234567\n",
                "rtbuild/rb3/meta-rtbuild",
            ),
        ] {
            let dump = format!(
                "header:\n  version: 14\nrepos:\n  meta-qcom:\n    url: https://github.com/qualcomm-linux/meta-qcom\n    commit: f415a09a64e1a282fe9ca1efa47b911caaffe1b8\n{repo}    layers:\n      {layer}:\n"
            );
            let config = String::from_utf8(rebuild_config(dump.as_bytes()).unwrap()).unwrap();
            let yaml: serde_yaml::Value = serde_yaml::from_str(&config).unwrap();
            let name = repo.trim().split(':').next().unwrap();
            let ours = yaml["repos"][name].as_mapping().unwrap();
            assert_eq!(ours.len(), 1, "{config}");
            assert!(yaml["repos"][name]["layers"]["meta-rtbuild"].is_null(), "{config}");
            assert_eq!(
                yaml["repos"]["meta-qcom"]["commit"].as_str(),
                Some("f415a09a64e1a282fe9ca1efa47b911caaffe1b8")
            );
            assert!(config.starts_with("# Rebuilds this bundle's image"), "{config}");
        }
        let none = "header:\n  version: 14\nrepos:\n  meta-qcom:\n    url: https://x\n";
        assert!(rebuild_config(none.as_bytes()).unwrap_err().contains("no local repo"));
        assert!(rebuild_config(b"[1, 2]").is_err());
    }

    #[test]
    fn a_deploy_link_is_followed_inside_the_folder_only() {
        let dir = tempfile::tempdir().unwrap();
        let deploy = dir.path().join("deploy");
        std::fs::create_dir_all(&deploy).unwrap();
        crate::files::write::fixture(deploy.join("img-m.rootfs-20260101.spdx.json"), "{}").unwrap();
        std::os::unix::fs::symlink(
            "img-m.rootfs-20260101.spdx.json",
            deploy.join("img-m.rootfs.spdx.json"),
        )
        .unwrap();
        crate::files::write::fixture(dir.path().join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(
            "../secret",
            deploy.join("img-m.rootfs.sbom-cve-check.spdx.json"),
        )
        .unwrap();
        let (_, name) = deployed(&deploy, "img-m.rootfs.spdx.json").unwrap();
        assert_eq!(name, "img-m.rootfs-20260101.spdx.json");
        assert!(deployed(&deploy, "img-m.rootfs.sbom-cve-check.spdx.json").is_none());
        let mut out = Vec::new();
        image_documents(&mut out, &deploy, "img-m.rootfs").unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].record.path, "release/img-m.rootfs-20260101.spdx.json");
        assert_eq!(out[0].record.subject.as_deref(), Some("img-m.rootfs.spdx.json"));
    }
}
