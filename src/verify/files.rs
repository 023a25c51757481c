//! Reading single files: a kernel config or a kernel image, told apart by content, plus the
//! dispatch that also recognises packages and tarballs by their first bytes.

use std::io::Read;
use std::path::Path;

use crate::files::input;

use crate::verify::kconfig::compress::Compression;
use crate::verify::kconfig::{KernelConfig, image};

use super::error::VerifyError;
use super::evidence::{Evidence, Found};
use crate::files::limits::MAX_SOURCE;

/// What a file is, judged from its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileKind {
    Config,
    Image,
    Deb,
    Tarball,
}

/// Reads a whole source file (a regular file, at most [`MAX_SOURCE`]), with an error naming it.
pub(super) fn read(path: &Path) -> Result<Vec<u8>, VerifyError> {
    let data = input::read(path, MAX_SOURCE).map_err(VerifyError::from_input)?;
    if data.is_empty() {
        return Err(VerifyError::Empty { path: path.to_path_buf() });
    }
    Ok(data)
}

/// Recognises a file by its (decompressed) first bytes.
pub(super) fn kind(data: &[u8]) -> FileKind {
    if data.starts_with(b"!<arch>\n") {
        return FileKind::Deb;
    }
    let format = Compression::detect(data);
    let mut head = Vec::new();
    if let Ok(decoder) = format.decoder(data) {
        // A corrupt stream yields a short head; the reader that follows reports the error.
        let _ = decoder.take(8192).read_to_end(&mut head);
    }
    if head.get(257..262) == Some(b"ustar") {
        FileKind::Tarball
    } else if looks_like_config(&head) {
        FileKind::Config
    } else if format != Compression::None && head.is_empty() {
        // Compressed, but unreadable: let the config reader name the corruption.
        FileKind::Config
    } else {
        FileKind::Image
    }
}

/// Text whose lines are kconfig comments or settings.
fn looks_like_config(head: &[u8]) -> bool {
    if head.is_empty() || head.contains(&0) {
        return false;
    }
    let text = String::from_utf8_lossy(head);
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines.next().is_some_and(|first| first.starts_with('#') || first.starts_with("CONFIG_"))
        && text.contains("CONFIG_")
}

/// A text file of the source (an image manifest, a `bitbake -e` dump), at most
/// [`input::TEXT_LIMIT`].
pub(super) fn read_text(path: &Path) -> Result<String, VerifyError> {
    input::read_to_string(path, input::TEXT_LIMIT).map_err(VerifyError::from_input)
}

/// A kernel config file (plain, gzip, xz or zstd).
pub(super) fn config_evidence(path: &Path, data: &[u8]) -> Result<Evidence, VerifyError> {
    let config = KernelConfig::read(data)
        .map_err(|source| VerifyError::Config { path: path.to_path_buf(), cause: source })?;
    let mut evidence = Evidence::new("kernel config");
    evidence.config = Some(Found::new(config, path.display().to_string()));
    Ok(evidence)
}

/// A kernel image: embedded config, version banner, UKI command line. `from` names the image
/// in the report (a path, or `member in archive`).
pub(super) fn image_evidence(
    path: &Path,
    data: &[u8],
    from: &str,
) -> Result<Evidence, VerifyError> {
    let info = image::inspect(data)
        .map_err(|source| VerifyError::Image { path: path.to_path_buf(), cause: source })?;
    let mut evidence = Evidence::new("kernel image");
    let via = |layers: &[String], what: &str| {
        let mut parts = vec![from.to_string()];
        parts.extend(layers.iter().cloned());
        parts.push(what.to_string());
        parts.join(" → ")
    };
    if info.config.is_none() && info.version.is_none() {
        return Err(VerifyError::NoKernel {
            path: path.to_path_buf(),
            hint: "pass a kernel config, a kernel image (Image, Image.gz, vmlinux, bzImage, UKI), \
                   a .deb, a qcomflash folder or tarball, or a build folder"
                .to_string(),
        });
    }
    if info.config.is_none() {
        evidence.notes.push(format!(
            "{from} has no embedded config (CONFIG_IKCONFIG off); only its version string was checked"
        ));
    }
    if let Some(cmdline) = info.cmdline.clone() {
        evidence.kind = "unified kernel image".to_string();
        evidence.cmdline = Some(Found::new(cmdline, via_uki(from)));
    }
    evidence.config = info.config.map(|c| Found::new(c, via(&info.config_layers, "IKCONFIG")));
    evidence.version =
        info.version.map(|v| Found::new(v, via(&info.version_layers, "version string")));
    Ok(evidence)
}

fn via_uki(from: &str) -> String {
    format!("{from} → UKI .cmdline")
}
