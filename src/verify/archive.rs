//! Kernels inside archives: a Debian kernel package (`.deb`: an `ar` archive whose
//! `data.tar.{xz,zst,gz}` holds `boot/config-*` and `boot/vmlinuz-*`) and a qcomflash tarball
//! (`<image>-<machine>.rootfs.qcomflash.tar.gz`, members under `<image>-<machine>/`, with the
//! kernel as `vmlinux`). Also the qcomflash folder, which holds the same files unpacked.

use std::io::Read;
use std::path::Path;

use crate::verify::kconfig::compress::Compression;
use crate::verify::kconfig::image;

use super::error::{ArchiveError, VerifyError};
use super::evidence::{Evidence, Found};
use super::{fat, files};
use crate::files::limits::{MAX_CONFIG, MAX_IMAGE_MEMBER};

/// What a wanted archive member is: a name for its kind (only the first member of each kind
/// is read) and the most it may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Wanted {
    kind: &'static str,
    limit: u64,
}

const CONFIG: Wanted = Wanted { kind: "kernel config", limit: MAX_CONFIG };
const IMAGE: Wanted = Wanted { kind: "kernel image", limit: MAX_IMAGE_MEMBER };
const EFI_BIN: Wanted = Wanted { kind: "efi.bin", limit: MAX_IMAGE_MEMBER };

/// The members of an `ar` archive: name and bytes.
fn ar_members(data: &[u8]) -> Result<Vec<(String, &[u8])>, ArchiveError> {
    let mut rest = data.strip_prefix(b"!<arch>\n").ok_or(ArchiveError::NoArHeader)?;
    let mut members = Vec::new();
    while rest.len() >= 60 {
        let header = &rest[..60];
        if &header[58..60] != b"`\n" {
            return Err(ArchiveError::ArHeader);
        }
        let name =
            String::from_utf8_lossy(&header[..16]).trim_end().trim_end_matches('/').to_string();
        let size: usize = String::from_utf8_lossy(&header[48..58])
            .trim()
            .parse()
            .map_err(|_| ArchiveError::ArSize { name: name.clone() })?;
        let body = rest
            .get(60..60 + size)
            .ok_or_else(|| ArchiveError::ArTruncated { name: name.clone() })?;
        members.push((name, body));
        let next = 60 + size + size % 2;
        rest = rest.get(next..).unwrap_or_default();
    }
    Ok(members)
}

/// A Debian kernel package: its `boot/config-*`, else its `boot/vmlinuz-*` image.
pub(super) fn deb_evidence(path: &Path, data: &[u8]) -> Result<Evidence, VerifyError> {
    let bad =
        |cause| VerifyError::Archive { path: path.to_path_buf(), what: "Debian package", cause };
    let members = ar_members(data).map_err(bad)?;
    let (name, tar) = members
        .iter()
        .find(|(name, _)| name.starts_with("data.tar"))
        .ok_or_else(|| bad(ArchiveError::NoDataTar))?;
    let wanted = |member: &str| {
        let file = member.trim_start_matches("./");
        if file.starts_with("boot/config-") {
            Some(CONFIG)
        } else if file.starts_with("boot/vmlinuz-")
            || file.starts_with("boot/vmlinux-")
            || file.starts_with("boot/Image")
        {
            Some(IMAGE)
        } else {
            None
        }
    };
    let found = tar_members(tar, wanted).map_err(|cause| {
        bad(ArchiveError::InMember { member: name.clone(), cause: Box::new(cause) })
    })?;
    let mut evidence =
        pick(path, &found, |m| m.contains("boot/config-"), |m| !m.contains("boot/config-"))?
            .ok_or_else(|| bad(ArchiveError::NoDebKernel))?;
    evidence.kind = "Debian kernel package".to_string();
    Ok(evidence)
}

/// A qcomflash tarball: the `vmlinux` member, and the UKI inside the `efi.bin` member.
pub(super) fn qcomflash_tarball_evidence(
    path: &Path,
    data: &[u8],
) -> Result<Evidence, VerifyError> {
    let bad =
        |cause| VerifyError::Archive { path: path.to_path_buf(), what: "qcomflash tarball", cause };
    let base = |m: &str| m.rsplit('/').next().unwrap_or_default().to_string();
    let found = tar_members(data, |m| match base(m).as_str() {
        "vmlinux" => Some(IMAGE),
        "efi.bin" => Some(EFI_BIN),
        _ => None,
    })
    .map_err(bad)?;
    let member = |name: &str| {
        found
            .iter()
            .find(|(m, _)| base(m) == name)
            .map(|(m, d)| (format!("{} → {m}", path.display()), d.as_slice()))
    };
    let mut evidence = qcomflash_evidence(path, member("vmlinux"), member("efi.bin"))?
        .ok_or_else(|| bad(ArchiveError::NoTarballKernel))?;
    evidence.kind = "qcomflash tarball".to_string();
    Ok(evidence)
}

/// A qcomflash folder (`<image>-<machine>.rootfs.qcomflash/`): its `vmlinux` and the UKI in
/// its `efi.bin`.
pub(super) fn qcomflash_dir_evidence(dir: &Path) -> Result<Evidence, VerifyError> {
    let read = |name: &str| -> Result<Option<(String, Vec<u8>)>, VerifyError> {
        let file = dir.join(name);
        if file.is_file() {
            Ok(Some((file.display().to_string(), files::read(&file)?)))
        } else {
            Ok(None)
        }
    };
    let (vmlinux, efi) = (read("vmlinux")?, read("efi.bin")?);
    let mut evidence =
        qcomflash_evidence(dir, borrow(&vmlinux), borrow(&efi))?.ok_or_else(|| {
            VerifyError::NoKernel {
                path: dir.to_path_buf(),
                hint: "a qcomflash folder holds vmlinux and efi.bin".to_string(),
            }
        })?;
    evidence.kind = "qcomflash folder".to_string();
    Ok(evidence)
}

fn borrow(file: &Option<(String, Vec<u8>)>) -> Option<(String, &[u8])> {
    file.as_ref().map(|(name, data)| (name.clone(), data.as_slice()))
}

/// The kernel from `vmlinux` (else from the UKI), plus the UKI's command line.
fn qcomflash_evidence(
    path: &Path,
    vmlinux: Option<(String, &[u8])>,
    efi: Option<(String, &[u8])>,
) -> Result<Option<Evidence>, VerifyError> {
    let uki = efi.as_ref().and_then(|(from, data)| {
        let fs = fat::Fat::open(data)?;
        // One file in memory at a time: the first that is a UKI is kept.
        let file = fs
            .entries(|p| p.to_ascii_lowercase().ends_with(".efi"))
            .into_iter()
            .map(|entry| fs.read(entry))
            .find(|f| image::is_uki(&f.data))?;
        Some((format!("{from} → {}", file.path), file.data))
    });
    let mut evidence = match (&vmlinux, &uki) {
        (Some((from, data)), _) => files::image_evidence(path, data, from)?,
        (None, Some((from, data))) => files::image_evidence(path, data, from)?,
        (None, None) => return Ok(None),
    };
    match &uki {
        Some((from, data)) if evidence.cmdline.is_none() => {
            evidence.cmdline =
                image::uki_cmdline(data).map(|c| Found::new(c, format!("{from} → .cmdline")));
        }
        None if efi.is_some() => evidence.notes.push(
            "efi.bin holds no unified kernel image; the command line was not checked".to_string(),
        ),
        _ => {}
    }
    Ok(Some(evidence))
}

/// Whether `dir` looks like a qcomflash folder.
pub(super) fn is_qcomflash_dir(dir: &Path) -> bool {
    dir.join("vmlinux").is_file()
        || (dir.join("efi.bin").is_file() && dir.join("rawprogram0.xml").is_file())
}

/// The first config member, else the first image member, as evidence.
fn pick(
    path: &Path,
    found: &[(String, Vec<u8>)],
    is_config: impl Fn(&str) -> bool,
    is_image: impl Fn(&str) -> bool,
) -> Result<Option<Evidence>, VerifyError> {
    let from = |member: &str| format!("{} → {member}", path.display());
    if let Some((member, data)) = found.iter().find(|(m, _)| is_config(m)) {
        let mut evidence = files::config_evidence(path, data)?;
        if let Some(config) = &mut evidence.config {
            config.from = from(member);
        }
        return Ok(Some(evidence));
    }
    if let Some((member, data)) = found.iter().find(|(m, _)| is_image(m)) {
        return files::image_evidence(path, data, &from(member)).map(Some);
    }
    Ok(None)
}

/// The members of a (possibly compressed) tar stream whose names `wanted` accepts, the first
/// of each kind; one larger than its kind's limit is refused, never read whole.
fn tar_members(
    data: &[u8],
    wanted: impl Fn(&str) -> Option<Wanted>,
) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
    let format = Compression::detect(data);
    let decoder = format.decoder(data).map_err(|cause| ArchiveError::Decoder { cause })?;
    let mut archive = tar::Archive::new(decoder);
    let mut found = Vec::new();
    let mut read_kinds = Vec::new();
    let corrupt = |cause| ArchiveError::Corrupt { format: format.name(), cause };
    for entry in archive.entries().map_err(corrupt)? {
        let entry = entry.map_err(corrupt)?;
        let name = entry.path().map_err(corrupt)?.to_string_lossy().into_owned();
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let Some(want) = wanted(&name).filter(|w| !read_kinds.contains(&w.kind)) else {
            continue;
        };
        let mut bytes = Vec::new();
        entry.take(want.limit + 1).read_to_end(&mut bytes).map_err(corrupt)?;
        if bytes.len() as u64 > want.limit {
            return Err(ArchiveError::TooBig { member: name, limit: want.limit, kind: want.kind });
        }
        read_kinds.push(want.kind);
        found.push((name, bytes));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ar_members_with_padding() {
        let mut ar = b"!<arch>\n".to_vec();
        for (name, body) in [("debian-binary", &b"2.0\n"[..]), ("odd", b"abc"), ("data.tar", b"xy")]
        {
            ar.extend_from_slice(
                format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", 0, 0, 0, 100644, body.len())
                    .as_bytes(),
            );
            ar.extend_from_slice(body);
            if body.len() % 2 == 1 {
                ar.push(b'\n');
            }
        }
        let members = ar_members(&ar).unwrap();
        let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["debian-binary", "odd", "data.tar"]);
        assert_eq!(members[2].1, b"xy");
        assert!(ar_members(&ar[..ar.len() - 1]).unwrap_err().to_string().contains("truncated"));
    }
}
