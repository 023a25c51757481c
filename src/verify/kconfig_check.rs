//! `kconfig-check`: before any build, runs the kernel's own `make defconfig`,
//! `scripts/kconfig/merge_config.sh -m` and `make olddefconfig` on a kernel source tree, as
//! meta-qcom's `linux-qcom-rt` recipe does, and reports every requested option that did not
//! survive (with the unmet dependency), so a bad fragment is caught in seconds, not hours.

use std::path::{Path, PathBuf};

use crate::host::runner::{self, Cmd, RunError, Runner};
use crate::verify::kconfig::tree::KconfigTree;
use crate::verify::kconfig::{KernelConfig, Line, Setting, parse_line};

use super::checks::option_check;
use super::error::{ArchiveError, VerifyError};
use super::evidence::Found;
use super::report::VerifyReport;

/// What to merge, and where.
#[derive(Debug, Clone)]
pub(crate) struct KconfigCheck {
    /// A kernel source tree (has `scripts/kconfig/merge_config.sh`).
    pub kernel_src: PathBuf,
    /// `ARCH` for make and merge_config.sh (`arm64`).
    pub arch: String,
    /// The defconfig target (`defconfig`, `qcom_defconfig`).
    pub defconfig: String,
    /// Fragment files, merged in order.
    pub fragments: Vec<PathBuf>,
    /// Single options (`CONFIG_X=y`), merged after the fragments.
    pub configs: Vec<Setting>,
    /// The output folder (`O=`) that keeps the final `.config`; a temporary one when `None`.
    pub out: Option<PathBuf>,
}

/// Why the check could not run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KconfigCheckError {
    #[error(transparent)]
    Input(#[from] VerifyError),
    #[error(transparent)]
    Run(#[from] RunError),
}

/// A file that cannot be used is the user's input (exit 2); a tool that failed is not (exit 1).
impl crate::error::ErrorCode for KconfigCheckError {
    fn exit(&self) -> crate::error::Exit {
        match self {
            KconfigCheckError::Input(e) => crate::error::ErrorCode::exit(e),
            KconfigCheckError::Run(_) => crate::error::Exit::Failed,
        }
    }
}

fn input(path: &Path, what: &'static str, cause: ArchiveError) -> KconfigCheckError {
    KconfigCheckError::Input(VerifyError::Archive { path: path.to_path_buf(), what, cause })
}

/// The requested settings: each fragment in order, then `configs`, later ones winning.
fn requested(check: &KconfigCheck) -> Result<Vec<Setting>, KconfigCheckError> {
    let mut merged: Vec<Setting> = Vec::new();
    let mut all = Vec::new();
    for path in &check.fragments {
        let text = crate::files::input::read_to_string(path, crate::files::input::TEXT_LIMIT)
            .map_err(VerifyError::Input)?;
        for (n, line) in text.lines().enumerate() {
            match parse_line(line) {
                Ok(Line::Setting(setting)) => all.push(setting),
                Ok(_) => {}
                Err(e) => {
                    return Err(input(
                        path,
                        "kernel config fragment",
                        ArchiveError::FragmentLine { line: n + 1, cause: e },
                    ));
                }
            }
        }
    }
    all.extend(check.configs.iter().cloned());
    for setting in all {
        match merged.iter_mut().find(|s| s.symbol == setting.symbol) {
            Some(existing) => existing.value = setting.value,
            None => merged.push(setting),
        }
    }
    Ok(merged)
}

fn make(check: &KconfigCheck, out: &Path, target: &str) -> Cmd {
    Cmd::new("make")
        .arg("-s")
        .arg("-C")
        .arg(&check.kernel_src)
        .arg(format!("O={}", out.display()))
        .arg(format!("ARCH={}", check.arch))
        .arg(target)
        .env("ARCH", &check.arch)
}

/// The commands the check runs in `out`, in order (also shown with `-v`).
pub(crate) fn commands(
    check: &KconfigCheck,
    out: &Path,
    extra_fragment: Option<&Path>,
) -> Vec<Cmd> {
    let config = out.join(".config");
    let mut merge = Cmd::new(check.kernel_src.join("scripts/kconfig/merge_config.sh"))
        .args(["-m", "-O"])
        .arg(out)
        .arg(&config)
        .args(check.fragments.iter().map(|f| std::path::absolute(f).unwrap_or_else(|_| f.clone())))
        .env("ARCH", &check.arch)
        .cwd(&check.kernel_src);
    if let Some(extra) = extra_fragment {
        merge = merge.arg(extra);
    }
    vec![make(check, out, &check.defconfig), merge, make(check, out, "olddefconfig")]
}

/// Runs defconfig + merge + olddefconfig and checks every requested option in the result.
pub(crate) fn run(
    check: &KconfigCheck,
    on_command: impl Fn(&Cmd),
    runner: &dyn Runner,
) -> Result<VerifyReport, KconfigCheckError> {
    let src = &check.kernel_src;
    if !src.is_dir() {
        return Err(input(src, "kernel source tree", ArchiveError::NoSourceTree));
    }
    if !src.join("scripts/kconfig/merge_config.sh").is_file() {
        return Err(input(src, "kernel source tree", ArchiveError::NoMergeConfig));
    }
    let arch_ok = !check.arch.is_empty()
        && check.arch.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && src.join("arch").join(&check.arch).join("Kconfig").is_file();
    if !arch_ok {
        return Err(input(
            src,
            "kernel source tree",
            ArchiveError::NoArchKconfig { arch: check.arch.clone() },
        ));
    }
    let wanted = requested(check)?;
    if wanted.is_empty() {
        return Err(input(src, "kernel config request", ArchiveError::NoRequest));
    }
    let temp = tempfile::Builder::new()
        .prefix("rtbuild-kconfig")
        .tempdir()
        .map_err(|cause| VerifyError::Unreadable { path: std::env::temp_dir(), cause })?;
    let out = check.out.as_deref().unwrap_or(temp.path());
    std::fs::create_dir_all(out)
        .map_err(|cause| VerifyError::Unreadable { path: out.to_path_buf(), cause })?;
    let extra = (!check.configs.is_empty()).then(|| out.join("rtbuild-requested.cfg"));
    if let Some(extra) = &extra {
        let text: String = check.configs.iter().map(|s| format!("{s}\n")).collect();
        crate::files::write::write_atomic(extra, text.as_bytes(), false).map_err(|e| {
            let (path, cause) = e.into_io();
            VerifyError::Unreadable { path, cause }
        })?;
    }
    for cmd in commands(check, out, extra.as_deref()) {
        on_command(&cmd);
        runner::check_status(&cmd, runner.capture(&cmd)?)?;
    }
    let path = out.join(".config");
    let data = crate::files::input::read(&path, crate::files::input::TEXT_LIMIT)
        .map_err(VerifyError::Input)?;
    let config = KernelConfig::read(data.as_slice())
        .map_err(|cause| VerifyError::Config { path: path.clone(), cause })?;
    let from = match check.out {
        Some(_) => path.display().to_string(),
        None => "merged .config (temporary; keep it with --out)".to_string(),
    };
    // The tree is at hand: a dropped option is explained from its own Kconfig files.
    let kconfig = KconfigTree::read(src, Some(&check.arch)).ok();
    let found = Found::new(config, from);
    let checks = wanted
        .iter()
        .map(|s| option_check(&found, s.symbol.as_str(), &s.value.to_string(), kconfig.as_ref()))
        .collect();
    let kind = format!("{} {} + fragments + olddefconfig", check.arch, check.defconfig);
    Ok(VerifyReport::new(src.display().to_string(), kind, checks, Vec::new()))
}
