//! `verify`: is this really the RT kernel that was asked for? Reads a source (build folder,
//! kernel config, kernel image, qcomflash folder or tarball, Debian kernel package, or a live
//! target over ssh), gathers [`Evidence`], and checks it against the plan's [`Expectations`]:
//! `CONFIG_PREEMPT_RT=y`, every requested option (a dropped one with the unmet dependency that
//! dropped it), the RT command line, and `rt-tests` in the image.
//!
//! Sits after the build in the pipeline: `image` calls [`verify_build_dir`] after a successful
//! build, and `bundle` records the [`VerifyReport`] in its manifest.

mod archive;
mod build_dir;
mod checks;
mod cmdline;
mod deployed;
mod deps;
mod error;
mod evidence;
mod fat;
mod files;
pub(crate) mod junit;
pub(crate) mod kconfig;
pub(crate) mod kconfig_check;
mod latency;
mod remote;
mod report;

#[cfg(test)]
pub(crate) use error::ArchiveError;
pub(crate) use error::VerifyError;
pub(crate) use evidence::Evidence;
pub(crate) use report::{CheckStatus, VerifyReport};

use std::path::{Path, PathBuf};

use crate::host::SshTarget;
use crate::host::runner::Runner;
use crate::plan::Expectations;

/// Where the kernel to verify comes from. [`KernelSource::Auto`] is recognised by content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KernelSource {
    Auto(PathBuf),
    BuildDir(PathBuf),
    Config(PathBuf),
    Image(PathBuf),
    Qcomflash(PathBuf),
    Deb(PathBuf),
    Target(SshTarget),
    /// This machine's running kernel (`verify --local`), read as a target's.
    Local,
}

impl KernelSource {
    /// The source as the user gave it, for reports.
    pub(crate) fn name(&self) -> String {
        match self {
            KernelSource::Auto(p)
            | KernelSource::BuildDir(p)
            | KernelSource::Config(p)
            | KernelSource::Image(p)
            | KernelSource::Qcomflash(p)
            | KernelSource::Deb(p) => p.display().to_string(),
            KernelSource::Target(t) => t.to_string(),
            KernelSource::Local => crate::host::Host::Local.to_string(),
        }
    }
}

/// Verifies one source. `expected` is the plan; without it only PREEMPT_RT, command-line
/// consistency and `rt-tests` are checked.
pub(crate) fn verify(
    source: &KernelSource,
    expected: Option<&Expectations>,
    runner: &dyn Runner,
) -> Result<VerifyReport, VerifyError> {
    verify_with(source, expected, None, runner)
}

/// [`verify`], explaining a dropped option from the Kconfig files of `kernel_src` (`--kernel-src`)
/// or, without it, of the kernel source the build folder keeps; else from the built-in table.
pub(crate) fn verify_with(
    source: &KernelSource,
    expected: Option<&Expectations>,
    kernel_src: Option<&Path>,
    runner: &dyn Runner,
) -> Result<VerifyReport, VerifyError> {
    let mut evidence = gather(source, expected, runner)?;
    if let Some(src) = kernel_src {
        evidence.kernel_source = Some(src.to_path_buf());
    }
    read_kconfig(&mut evidence, kernel_src);
    Ok(judge(source.name(), &evidence, expected))
}

/// Reads the Kconfig files of `kernel_src`, or of the tree the evidence found, for the
/// architecture the config was made for.
fn read_kconfig(evidence: &mut Evidence, kernel_src: Option<&Path>) {
    let Some(config) = &evidence.config else { return };
    let Some(dir) = kernel_src.map(Path::to_path_buf).or_else(|| evidence.kernel_source.clone())
    else {
        return;
    };
    let arch = crate::verify::kconfig::tree::arch_of(&config.value);
    match crate::verify::kconfig::tree::KconfigTree::read(&dir, arch) {
        Ok(tree) => {
            evidence.notes.push(format!(
                "dependency hints come from the Kconfig files of {} ({}, {})",
                dir.display(),
                crate::text::counted(tree.files, "file"),
                arch.unwrap_or("architecture unknown: arch/ not read")
            ));
            evidence.kconfig = Some(std::sync::Arc::new(tree));
        }
        Err(err) => evidence.notes.push(format!("{err}; dependency hints use the built-in table")),
    }
}

/// The entry point for the build driver: verifies a BitBake build folder (`TOPDIR` or
/// `TMPDIR`) against the plan that produced it. Only files are read (no process starts).
pub(crate) fn verify_build_dir(
    dir: &Path,
    expected: &Expectations,
) -> Result<VerifyReport, VerifyError> {
    verify(&KernelSource::BuildDir(dir.to_path_buf()), Some(expected), &crate::host::runner::System)
}

/// Turns gathered evidence into a report.
pub(crate) fn judge(
    source: String,
    evidence: &Evidence,
    expected: Option<&Expectations>,
) -> VerifyReport {
    let checks = checks::run(evidence, expected);
    let warnings = evidence.config.as_ref().map_or_else(Vec::new, |config| {
        latency::warnings(config, evidence.kernel_source.as_deref(), &evidence.fragments)
    });
    VerifyReport {
        warnings,
        kernel_from: evidence.kernel_from.clone(),
        kernel_version: evidence.version.as_ref().map(|v| v.value.clone()),
        cmdline: evidence.cmdline.as_ref().map(|c| c.value.clone()),
        config_sha256: evidence.config.as_ref().map(|c| c.value.sha256().to_string()),
        ..VerifyReport::new(source, evidence.kind.clone(), checks, evidence.notes.clone())
    }
}

/// Reads what `source` shows; a live target through `runner` (ssh).
pub(crate) fn gather(
    source: &KernelSource,
    expected: Option<&Expectations>,
    runner: &dyn Runner,
) -> Result<Evidence, VerifyError> {
    match source {
        KernelSource::Target(target) => {
            remote::evidence(&crate::host::Host::Ssh(target.clone()), runner)
        }
        KernelSource::Local => remote::evidence(&crate::host::Host::Local, runner),
        KernelSource::BuildDir(dir) => build_dir::evidence(dir, expected),
        KernelSource::Qcomflash(path) if path.is_dir() => archive::qcomflash_dir_evidence(path),
        KernelSource::Qcomflash(path) => {
            archive::qcomflash_tarball_evidence(path, &files::read(path)?)
        }
        KernelSource::Config(path) => files::config_evidence(path, &files::read(path)?),
        KernelSource::Image(path) => {
            files::image_evidence(path, &files::read(path)?, &path.display().to_string())
        }
        KernelSource::Deb(path) => archive::deb_evidence(path, &files::read(path)?),
        KernelSource::Auto(path) => auto(path, expected),
    }
}

/// Evidence from one file of any supported kind (kernel config, image, `.deb`, qcomflash
/// tarball), told by its content.
fn file_evidence(path: &Path) -> Result<Evidence, VerifyError> {
    let data = files::read(path)?;
    match files::kind(&data) {
        files::FileKind::Config => files::config_evidence(path, &data),
        files::FileKind::Image => files::image_evidence(path, &data, &path.display().to_string()),
        files::FileKind::Deb => archive::deb_evidence(path, &data),
        files::FileKind::Tarball => archive::qcomflash_tarball_evidence(path, &data),
    }
}

fn auto(path: &Path, expected: Option<&Expectations>) -> Result<Evidence, VerifyError> {
    if !path.is_dir() {
        return file_evidence(path);
    }
    if archive::is_qcomflash_dir(path) {
        return archive::qcomflash_dir_evidence(path);
    }
    if build_dir::is_build_dir(path) {
        return build_dir::evidence(path, expected);
    }
    for name in [".config", "vmlinux"] {
        let file = path.join(name);
        if file.is_file() {
            return file_evidence(&file);
        }
    }
    Err(VerifyError::NoKernel {
        path: path.to_path_buf(),
        hint: "a build folder has tmp*/work, tmp*/work-shared or tmp*/deploy/images, a qcomflash folder has vmlinux, \
               a kernel build folder has .config"
            .to_string(),
    })
}
