//! Bundles: one flashable archive per build that says exactly what is inside.
//!
//! Where this sits: after a build (and `verify`), [`create`] takes the build's qcomflash folder
//! (following `<image>-<machine>.rootfs.qcomflash` to the timestamped folder), hashes every file,
//! records the repos, lock, kernel and verify verdict in `manifest.json`, and writes a
//! deterministic `.tar.zst` plus the manifest beside it. [`check`] re-reads an archive and names
//! every missing, extra or changed file. `rtbuild image --bundle` calls [`create`] after verify.

mod archive;
mod check;
mod deploy;
mod diff;
mod error;
mod links;
mod manifest;
mod release;
mod release_check;
mod sign;
mod sources;

pub(crate) use check::check;
pub(crate) use deploy::find as find_qcomflash;
pub(crate) use diff::diff;
pub(crate) use error::BundleError;
pub(crate) use manifest::{
    BuildTime, BundleManifest, FileEntry, KernelInfo, MANIFEST_SCHEMA, ReleaseRecord, VerifyRecord,
};
pub(crate) use release::KAS_DUMP_FILE;
pub(crate) use sources::VerifySummary;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::formats::plan_json::{self, PlanFile};
use archive::EntryContent;
use serde::Serialize;

/// Names rtbuild adds to the bundle's top folder.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";
pub(crate) const SUMS_FILE: &str = "SHA256SUMS";
pub(crate) const README_FILE: &str = "README.md";

/// Everything [`create`] needs.
#[derive(Debug, Clone)]
pub(crate) struct BundleRequest {
    pub machine: String,
    pub image: String,
    /// The kas build folder holding `tmp/deploy/images/`.
    pub build_dir: PathBuf,
    /// Where the archive and its manifest go (created when missing).
    pub out_dir: PathBuf,
    /// kas work folder with the repo checkouts.
    pub work_dir: PathBuf,
    /// The generated kas file (for the lock beside it and the local repo).
    pub kas_file: Option<PathBuf>,
    /// The verify verdict; `None` when verify did not run.
    pub verify: Option<VerifySummary>,
    pub allow_unverified: bool,
    /// The kernel command line and where it came from, when the caller knows it.
    pub cmdline: Option<(String, String)>,
    /// `SOURCE_DATE_EPOCH`: the archive mtime, and the build time when the qcomflash folder
    /// name has none.
    pub source_date_epoch: Option<i64>,
    /// The verify report file the verdict came from (packed as `release/verify.json`).
    pub verify_file: Option<PathBuf>,
    /// `kas dump --resolve-refs --resolve-local --resolve-env` of the build.
    pub kas_dump: Option<PathBuf>,
    /// `--measurement RUN_DIR`: an `rtbuild test` result folder of this image, its `run.json`
    /// read once ([`read_measurement`]).
    pub measurement: Option<Measured>,
    /// `--follow-external-links`: pack what a symlink outside the build points at.
    pub follow_external_links: bool,
    /// `--gzip`: write the `.tar.gz` flavour (what LAVA's qdl deploy unpacks), not `.tar.zst`.
    pub gzip: bool,
    /// `--signing-key FILE`: sign the release provenance with this ed25519 key.
    pub signing_key: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct BundleOutcome {
    pub archive: PathBuf,
    pub manifest_file: PathBuf,
    pub archive_bytes: u64,
    pub manifest: BundleManifest,
    /// The signed provenance beside the archive (`--signing-key`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub envelope: Option<PathBuf>,
    /// The signer's public key (PEM) beside the archive (`--signing-key`), for `bundle --verify
    /// --key`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_key: Option<PathBuf>,
}

/// Makes the bundle for `request`. Refuses a failed or missing verification unless
/// `allow_unverified`; writes nothing when it refuses.
pub(crate) fn create(request: &BundleRequest) -> Result<BundleOutcome, BundleError> {
    let verify = verify_record(request)?;
    let signing_key = request.signing_key.as_deref().map(sign::read_signing_key).transpose()?;
    let qcomflash = deploy::find(&request.build_dir, &request.machine, &request.image)?;
    let mut payload = BTreeMap::new();
    let mut files = Vec::new();
    let confinement = links::Confinement::new(
        &qcomflash.folder,
        &deploy::deploy_dir(&request.build_dir, &request.machine),
        request.follow_external_links,
    )?;
    for entry in walkdir::WalkDir::new(&qcomflash.folder).follow_links(true).sort_by_file_name() {
        let entry = entry
            .map_err(|e| BundleError::Read { path: qcomflash.folder.clone(), cause: e.into() })?;
        confinement.check(entry.path())?;
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(&qcomflash.folder)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        if [MANIFEST_FILE, SUMS_FILE, README_FILE].contains(&relative.as_str()) {
            continue;
        }
        let (size, sha256) = archive::hash_file(entry.path())?;
        files.push(FileEntry { path: relative.clone(), size, sha256: sha256.clone() });
        payload.insert(relative, EntryContent::File { path: entry.path().to_path_buf(), sha256 });
    }
    if files.is_empty() {
        return Err(BundleError::EmptyQcomflash { path: qcomflash.folder });
    }

    let kernel_build = deploy::kernel_config(&request.build_dir);
    let from_verify = request.verify.as_ref();
    let config_sha256 = match from_verify.and_then(|v| v.config_sha256.clone()) {
        Some(sha) => Some(sha),
        None => match &kernel_build {
            Some((_, config)) => Some(archive::hash_file(config)?.1),
            None => None,
        },
    };
    let (cmdline, cmdline_source) =
        match (from_verify.and_then(|v| v.cmdline.clone()), &request.cmdline) {
            (Some(line), _) => (Some(line), Some("verify report".to_string())),
            (None, Some((line, source))) => (Some(line.clone()), Some(source.clone())),
            (None, None) => (None, None),
        };
    let kernel = KernelInfo {
        version: from_verify
            .and_then(|v| v.kernel_version.clone())
            .or(kernel_build.map(|(version, _)| version)),
        cmdline,
        cmdline_source,
        config_sha256,
    };
    let build_time = match (&qcomflash.datetime, request.source_date_epoch) {
        (Some(dt), _) => Some(BuildTime {
            value: deploy::iso_datetime(dt),
            source: "qcomflash folder name".into(),
        }),
        (None, Some(epoch)) => Some(BuildTime {
            value: crate::text::iso_from_epoch(epoch),
            source: "SOURCE_DATE_EPOCH".into(),
        }),
        (None, None) => None,
    };

    let release = release_files(request)?;
    for packed in &release {
        files.push(FileEntry {
            path: packed.record.path.clone(),
            size: packed.record.size,
            sha256: packed.record.sha256.clone(),
        });
        payload.insert(packed.record.path.clone(), packed.source.clone());
    }
    let mut release: Vec<ReleaseRecord> = release.into_iter().map(|p| p.record).collect();
    release.sort_by(|a, b| a.path.cmp(&b.path));

    let top = format!("{}-{}", request.image, request.machine);
    let mut manifest = BundleManifest {
        schema: MANIFEST_SCHEMA,
        rtbuild_version: env!("CARGO_PKG_VERSION").to_string(),
        machine: request.machine.clone(),
        image: request.image.clone(),
        qcomflash: qcomflash.name.clone(),
        build_time,
        kernel,
        verify,
        repos: sources::repos(&request.work_dir, request.kas_file.as_deref()),
        lock: sources::lock(request.kas_file.as_deref()),
        flash_command: manifest::flash_command(),
        files,
        release,
        signing_key: signing_key.as_ref().map(|k| sign::key_record(&k.verifying_key())),
    };
    let readme = manifest::readme(&manifest, &top).into_bytes();
    manifest.files.push(FileEntry {
        path: README_FILE.into(),
        size: readme.len() as u64,
        sha256: archive::sha256_hex(&readme),
    });
    manifest.files.sort_by(|a, b| a.path.cmp(&b.path));
    payload.insert(README_FILE.into(), EntryContent::Bytes(readme));
    let manifest_json = manifest.to_json().into_bytes();
    let mut summed = manifest.files.clone();
    summed.push(FileEntry {
        path: MANIFEST_FILE.into(),
        size: manifest_json.len() as u64,
        sha256: archive::sha256_hex(&manifest_json),
    });
    summed.sort_by(|a, b| a.path.cmp(&b.path));
    payload
        .insert(SUMS_FILE.into(), EntryContent::Bytes(manifest::sha256sums(&summed).into_bytes()));
    payload.insert(MANIFEST_FILE.into(), EntryContent::Bytes(manifest_json.clone()));

    let stem = match &qcomflash.datetime {
        Some(dt) => format!("{top}-{dt}.qcomflash"),
        None => format!("{top}.qcomflash"),
    };
    let out = &request.out_dir;
    std::fs::create_dir_all(out)
        .map_err(|source| BundleError::Write { path: out.clone(), cause: source })?;
    let compression =
        if request.gzip { archive::Compression::Gzip } else { archive::Compression::Zstd };
    let archive_path = out.join(format!("{stem}.{}", compression.extension()));
    let manifest_path = manifest_beside(&archive_path);
    let mtime = request.source_date_epoch.unwrap_or(0).max(0) as u64;
    let staged = archive::write(&archive_path, &top, &payload, mtime, compression)?;
    {
        // Archive and manifest go into place together: a signal waits for both.
        let _swap = crate::host::runner::signals::critical();
        staged.persist(&archive_path)?;
        crate::files::write::write_atomic(&manifest_path, &manifest_json, false)?;
    }
    let archive_bytes = std::fs::metadata(&archive_path).map(|m| m.len()).unwrap_or(0);
    let (envelope, public_key) = match &signing_key {
        Some(key) => {
            let envelope = write_envelope(request, key, &archive_path, &manifest)?;
            let public_key = sign::public_key_beside(&archive_path);
            let pem = sign::key_record(&key.verifying_key()).public_key;
            crate::files::write::write_atomic(&public_key, pem.as_bytes(), false)?;
            (Some(envelope), Some(public_key))
        }
        None => (None, None),
    };
    Ok(BundleOutcome {
        archive: archive_path,
        manifest_file: manifest_path,
        archive_bytes,
        manifest,
        envelope,
        public_key,
    })
}

/// Signs the statement over the archive and its SBOM and VEX, and writes the envelope beside
/// the archive.
fn write_envelope(
    request: &BundleRequest,
    key: &ed25519_dalek::SigningKey,
    archive_path: &Path,
    manifest: &BundleManifest,
) -> Result<PathBuf, BundleError> {
    let (_, archive_sha) = archive::hash_file(archive_path)?;
    let mut subjects = vec![sign::Subject {
        name: archive_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        sha256: archive_sha,
    }];
    for record in &manifest.release {
        if [release::ROLE_SBOM, release::ROLE_VEX].contains(&record.role.as_str()) {
            subjects
                .push(sign::Subject { name: record.path.clone(), sha256: record.sha256.clone() });
        }
    }
    let provenance = request.build_dir.join(release::PROVENANCE_FILE);
    let kas = std::fs::symlink_metadata(&provenance)
        .is_ok_and(|m| m.is_file())
        .then(|| crate::files::input::read(&provenance, crate::files::input::TEXT_LIMIT))
        .transpose()
        .map_err(BundleError::Input)?;
    let envelope = sign::sign(key, &subjects, kas.as_deref(), manifest);
    let path = sign::envelope_beside(archive_path);
    let text = serde_json::to_string_pretty(&envelope).unwrap_or_default() + "\n";
    crate::files::write::write_atomic(&path, text.as_bytes(), false)?;
    Ok(path)
}

/// What `bundle --verify` found.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SignatureCheck {
    pub archive: PathBuf,
    pub envelope: PathBuf,
    pub passed: bool,
    /// The statement's subjects whose digest matched.
    pub subjects: Vec<String>,
    /// Everything wrong: the archive's own check, the signature, a subject's digest, the key.
    pub problems: Vec<String>,
}

/// `bundle --verify ARCHIVE --key PUB`: the archive passes [`check`], the envelope beside it is
/// signed by `key`, every subject's sha256 is the archive's or that of the file of the bundle
/// it names, and the manifest names this key.
pub(crate) fn verify_signed(
    archive: &Path,
    key_file: &Path,
) -> Result<SignatureCheck, BundleError> {
    let key = sign::read_public_key(key_file)?;
    let report = check(archive)?;
    let envelope_path = sign::envelope_beside(archive);
    let mut out = SignatureCheck {
        archive: archive.to_path_buf(),
        envelope: envelope_path.clone(),
        passed: false,
        subjects: Vec::new(),
        problems: report
            .problems
            .iter()
            .map(|p| format!("{} {} {}", p.kind, p.path, p.detail).replace("  ", " "))
            .collect(),
    };
    let manifest: Option<BundleManifest> =
        crate::files::input::read(&manifest_beside(archive), crate::files::input::TEXT_LIMIT)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
    let envelope: Result<sign::Envelope, String> =
        crate::files::input::read(&envelope_path, crate::files::input::TEXT_LIMIT)
            .map_err(|e| e.to_string())
            .and_then(|b| {
                serde_json::from_slice(&b).map_err(|e| format!("not a DSSE envelope ({e})"))
            });
    let subjects = envelope.and_then(|e| sign::open(&e, &key));
    match subjects {
        Err(why) => out.problems.push(format!("signature {}: {why}", envelope_path.display())),
        Ok(subjects) => {
            let archive_name =
                archive.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let (_, archive_sha) = archive::hash_file(archive)?;
            for subject in subjects {
                let have = if subject.name == archive_name {
                    Some(archive_sha.clone())
                } else {
                    manifest.as_ref().and_then(|m| {
                        m.files.iter().find(|f| f.path == subject.name).map(|f| f.sha256.clone())
                    })
                };
                match have {
                    Some(sha) if sha == subject.sha256 => out.subjects.push(subject.name),
                    Some(sha) => out.problems.push(format!(
                        "subject {}: signed sha256 {}, but the bundle's is {sha}",
                        subject.name, subject.sha256
                    )),
                    None => out
                        .problems
                        .push(format!("subject {} is not a file of the bundle", subject.name)),
                }
            }
        }
    }
    let want = sign::key_record(&key).keyid;
    match manifest.as_ref().and_then(|m| m.signing_key.as_ref()) {
        Some(named) if named.keyid == want => {}
        Some(named) => out.problems.push(format!(
            "manifest: the bundle names signing key {}, not this key ({want})",
            named.keyid
        )),
        None => out.problems.push("manifest: the bundle names no signing key".into()),
    }
    out.passed = out.problems.is_empty();
    Ok(out)
}

/// `--measurement RUN_DIR`: the result folder and its `run.json`, read once; the check and
/// the bundle take this reading.
#[derive(Debug, Clone)]
pub(crate) struct Measured {
    pub dir: PathBuf,
    pub run_json: crate::files::document::RunJsonFile,
}

/// Reads `--measurement RUN_DIR`'s `run.json` (once: [`check_measurement`] and [`create`]
/// take what it read).
pub(crate) fn read_measurement(run_dir: &Path) -> Result<Measured, BundleError> {
    let run_json = crate::files::document::read_run_json(run_dir).map_err(|cause| {
        BundleError::MeasurementUnreadable {
            path: run_dir.join(crate::formats::run_json::FILE),
            cause,
        }
    })?;
    Ok(Measured { dir: run_dir.to_path_buf(), run_json })
}

/// Refuses a `--measurement` that did not measure this image's kernel; callers may call it
/// early to fail before anything else runs ([`create`] checks again).
/// Returns the warnings to show (a measurement bound by kernel release and version only).
pub(crate) fn check_measurement(request: &BundleRequest) -> Result<Vec<String>, BundleError> {
    let Some(measured) = &request.measurement else { return Ok(Vec::new()) };
    release::measurement(&mut Vec::new(), measured, shipped_kernel(request))
}

/// The shipped kernel as the verify result names it.
fn shipped_kernel(request: &BundleRequest) -> release::ShippedKernel<'_> {
    let verify = request.verify.as_ref();
    release::ShippedKernel {
        version: verify.and_then(|v| v.kernel_version.as_deref()),
        config_sha256: verify.and_then(|v| v.config_sha256.as_deref()),
    }
}

/// The release evidence of `request` (see [`release`]).
fn release_files(request: &BundleRequest) -> Result<Vec<release::Packed>, BundleError> {
    let deploy = deploy::deploy_dir(&request.build_dir, &request.machine);
    let stem = format!("{}-{}.rootfs", request.image, request.machine);
    let mut out = Vec::new();
    release::image_documents(&mut out, &deploy, &stem)?;
    release::provenance(&mut out, &request.build_dir, &deploy)?;
    if let Some(dump) = &request.kas_dump {
        release::add(&mut out, release::ROLE_KAS_DUMP, dump, release::KAS_DUMP_FILE, None)?;
    }
    if let Some(kas_file) = &request.kas_file {
        let lock = crate::release::lock::lock_path_for(kas_file);
        if lock.is_file() {
            let name =
                lock.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            release::add(&mut out, release::ROLE_LOCK, &lock, &name, None)?;
        }
        let plan = kas_file.with_file_name(plan_json::FILE);
        if plan.is_file() {
            release::add(&mut out, release::ROLE_PLAN, &plan, plan_json::FILE, None)?;
        }
        release::rebuild(&mut out, kas_file, request.kas_dump.as_deref())?;
    }
    if let Some(verify) = &request.verify_file {
        let name = crate::formats::verify_json::FILE;
        release::add(&mut out, release::ROLE_VERIFY, verify, name, None)?;
    }
    if let Some(measured) = &request.measurement {
        // The warnings were shown by `check_measurement` before bundling started.
        release::measurement(&mut out, measured, shipped_kernel(request))?;
    }
    Ok(out)
}

/// What `rtbuild-plan.json` beside a generated kas file says about a bundle: the image to take
/// and the kernel command line the plan asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanDefaults {
    pub image: String,
    /// `(command line, where it came from)`, ready for [`BundleRequest::cmdline`].
    pub cmdline: (String, String),
}

/// Reads `rtbuild-plan.json` beside `kas_file`: `None` when there is none, an error when it
/// is there but cannot be read (a bundle must not silently fall back to other defaults).
pub(crate) fn plan_defaults(kas_file: &Path) -> Result<Option<PlanDefaults>, BundleError> {
    let Some(path) = kas_file.parent().map(|dir| dir.join(plan_json::FILE)) else {
        return Ok(None);
    };
    if path.symlink_metadata().is_err() {
        return Ok(None);
    }
    let plan = crate::files::document::load(&path, PlanFile::parse)
        .map_err(|cause| BundleError::PlanFile { path: path.clone(), cause })?;
    Ok(Some(PlanDefaults {
        image: plan.image,
        cmdline: (plan.cmdline.join(" "), format!("{} (requested)", plan_json::FILE)),
    }))
}

/// `x.qcomflash.tar.zst` (or `.tar.gz`) → `x.qcomflash.manifest.json`, the copy of the
/// manifest beside it.
pub(crate) fn manifest_beside(archive: &Path) -> PathBuf {
    let name = archive.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem =
        name.strip_suffix(".tar.zst").or_else(|| name.strip_suffix(".tar.gz")).unwrap_or(&name);
    archive.with_file_name(format!("{stem}.manifest.json"))
}

/// The verify verdict to record, or the refusal: a failed or missing verification without
/// `allow_unverified`. [`create`] calls it first; callers may call it early to fail fast.
pub(crate) fn verify_record(request: &BundleRequest) -> Result<VerifyRecord, BundleError> {
    match (&request.verify, request.allow_unverified) {
        (Some(v), allowed) if v.passed || allowed => Ok(VerifyRecord {
            status: if v.passed { "passed" } else { "failed" }.into(),
            allowed_unverified: allowed && !v.passed,
            checks: serde_json::to_value(&v.checks).unwrap_or_default(),
        }),
        (Some(v), _) => {
            let failed = v.failed_checks();
            let failed =
                if failed.is_empty() { "see the verify report".into() } else { failed.join(", ") };
            Err(BundleError::VerifyFailed { failed })
        }
        (None, true) => Ok(VerifyRecord {
            status: "unverified".into(),
            allowed_unverified: true,
            checks: serde_json::Value::Array(Vec::new()),
        }),
        (None, false) => Err(BundleError::Unverified),
    }
}
