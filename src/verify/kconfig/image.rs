//! What a kernel image says about itself: the embedded config (IKCONFIG: a gzip stream between
//! the markers `IKCFG_ST` and `IKCFG_ED`), the version banner (`Linux version … PREEMPT_RT …`)
//! and, for a unified kernel image (UKI), the built-in command line.
//!
//! Handles `vmlinux` and arm64 `Image` (searched as they are), `Image.gz` and other compressed
//! files (decompressed first), x86 `bzImage`/`vmlinuz` (the version from the setup header, the
//! config from the gzip/xz/zstd payload inside), and UKIs (PE files whose `.linux` section holds
//! the kernel and `.cmdline` the command line). Used by `verify` for image sources.

use std::time::Duration;

use super::compress::{Budget, BudgetError, Compression, GZIP_MAGIC, XZ_MAGIC, ZSTD_MAGIC};
use super::config::{ConfigError, KernelConfig};
use super::pe;
use crate::files::limits::MAX_CONFIG;
use crate::files::limits::{MAX_KERNEL, MAX_KERNEL_INPUT};

/// The IKCONFIG start marker, followed directly by the gzip stream.
pub(crate) const IKCFG_START: &[u8] = b"IKCFG_ST";
/// The IKCONFIG end marker.
pub(crate) const IKCFG_END: &[u8] = b"IKCFG_ED";

/// How many compressed-payload candidates to try in one file before giving up.
const MAX_CANDIDATES: usize = 64;
/// How deep layers may nest (UKI → zboot → gzip payload → IKCONFIG is three).
const MAX_LAYERS: usize = 4;
pub(crate) const BUDGET_TIME: Duration = Duration::from_secs(20);

/// Everything found in a kernel image.
#[derive(Debug, Default)]
pub(crate) struct ImageInfo {
    /// The embedded config, when the kernel was built with `CONFIG_IKCONFIG`.
    pub config: Option<KernelConfig>,
    /// `6.18.37-rt #1 SMP PREEMPT_RT Tue …`: the release and `UTS_VERSION`.
    pub version: Option<String>,
    /// A UKI's `.cmdline` section.
    pub cmdline: Option<String>,
    /// How the config was reached, e.g. `["UKI .linux section", "gzip payload at 0x4a00"]`.
    pub config_layers: Vec<String>,
    /// How the version string was reached.
    pub version_layers: Vec<String>,
}

/// An image held an IKCONFIG marker whose config could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImageError {
    #[error("cannot read {format} data: {cause}; the file is truncated or corrupt")]
    Corrupt { format: &'static str, cause: std::io::Error },
    #[error(
        "the embedded config (IKCONFIG at offset {offset:#x}) is unreadable: {cause}; the image is truncated or corrupt, pass its .config instead"
    )]
    BadIkconfig { offset: usize, cause: ConfigError },
    #[error(
        "gave up after decompressing {} MiB or {} s, more than any kernel image needs: the file nests compressed data (a decompression bomb?); pass the kernel .config instead",
        .total >> 20, .time.as_secs()
    )]
    Spent { total: u64, time: Duration },
}

impl ImageError {
    fn from_budget(format: Compression, error: BudgetError) -> ImageError {
        match error {
            BudgetError::Corrupt(cause) => ImageError::Corrupt { format: format.name(), cause },
            BudgetError::Spent { total, time } => ImageError::Spent { total, time },
        }
    }
}

/// Looks through `data` (a whole image file) for the config, version and command line, within
/// the default budget ([`MAX_KERNEL_INPUT`], [`BUDGET_TIME`]).
pub(crate) fn inspect(data: &[u8]) -> Result<ImageInfo, ImageError> {
    inspect_within(data, &mut Budget::new(MAX_KERNEL_INPUT, BUDGET_TIME))
}

/// [`inspect`], spending `budget` (which the caller may share with other members of the same
/// input, as the UKIs of one `efi.bin`).
pub(crate) fn inspect_within(data: &[u8], budget: &mut Budget) -> Result<ImageInfo, ImageError> {
    // A file that is itself compressed (Image.gz) must decompress cleanly.
    let format = Compression::detect(data);
    let mut info = ImageInfo::default();
    if format != Compression::None {
        let inner = budget
            .decompress(format, data, MAX_KERNEL)
            .map_err(|e| ImageError::from_budget(format, e))?;
        let mut layers = vec![format!("{} payload at 0x0", format.name())];
        scan(&inner, &mut info, &mut layers, budget)?;
        return Ok(info);
    }
    scan(data, &mut info, &mut Vec::new(), budget)?;
    Ok(info)
}

/// Searches `data`, reached through `layers`, and the compressed payloads inside it. Returns
/// whether `data` (or what it holds) is a kernel: a config or a version string was found in it.
fn scan(
    data: &[u8],
    info: &mut ImageInfo,
    layers: &mut Vec<String>,
    budget: &mut Budget,
) -> Result<bool, ImageError> {
    if layers.len() > MAX_LAYERS {
        return Ok(false);
    }
    if let Some(sections) = pe::sections(data) {
        if info.cmdline.is_none() {
            info.cmdline = uki_cmdline(data);
        }
        // A section lies inside its file, after the headers: one as big as the file is forged
        // (and scanning it would scan the same bytes again, forever).
        if let Some(linux) = sections.get(".linux").filter(|s| s.len() < data.len()) {
            layers.push("UKI .linux section".to_string());
            let found = scan(linux, info, layers, budget)?;
            layers.pop();
            return Ok(found);
        }
    }
    let mut found = false;
    if info.config.is_none() {
        info.config = ikconfig_within(data, budget)?;
        if info.config.is_some() {
            info.config_layers = layers.clone();
            found = true;
        }
    }
    if info.version.is_none() {
        info.version = bzimage_version(data).or_else(|| banner_version(data));
        if info.version.is_some() {
            info.version_layers = layers.clone();
            found = true;
        }
    }
    if info.config.is_some() || layers.len() >= MAX_LAYERS - 1 {
        return Ok(found);
    }
    // No config in the plain bytes: look inside compressed payloads (Image.gz, bzImage). The
    // first stream that decompresses is the kernel or nothing: a second one is not looked for.
    for (offset, format) in payload_candidates(data) {
        let inner = match budget.decompress(format, &data[offset..], MAX_KERNEL) {
            Ok(inner) => inner,
            Err(BudgetError::Corrupt(_)) => continue,
            Err(spent) => return Err(ImageError::from_budget(format, spent)),
        };
        if inner.len() < 4096 {
            continue;
        }
        layers.push(format!("{} payload at {offset:#x}", format.name()));
        found |= scan(&inner, info, layers, budget)?;
        layers.pop();
        break;
    }
    Ok(found)
}

/// Whether `data` is a unified kernel image (a PE file with a `.linux` section).
pub(crate) fn is_uki(data: &[u8]) -> bool {
    pe::sections(data).is_some_and(|s| s.contains_key(".linux"))
}

/// A UKI's `.cmdline` section, trimmed.
pub(crate) fn uki_cmdline(data: &[u8]) -> Option<String> {
    let sections = pe::sections(data)?;
    let text = String::from_utf8_lossy(sections.get(".cmdline")?).into_owned();
    Some(text.trim_matches(['\0', ' ', '\n']).to_string())
}

/// The config between `IKCFG_ST` and `IKCFG_ED`, if the image has one.
fn ikconfig_within(data: &[u8], budget: &mut Budget) -> Result<Option<KernelConfig>, ImageError> {
    let mut from = 0;
    while let Some(pos) = find(&data[from..], IKCFG_START).map(|p| p + from) {
        let start = pos + IKCFG_START.len();
        // The marker also appears as a plain string in `scripts/extract-ikconfig`-like code;
        // only a marker followed by gzip magic is the real thing.
        if data[start..].starts_with(GZIP_MAGIC) {
            let end = find(&data[start..], IKCFG_END).map_or(data.len(), |e| start + e);
            let text = match budget.decompress(Compression::Gzip, &data[start..end], MAX_CONFIG) {
                Ok(text) => text,
                Err(BudgetError::Corrupt(source)) => {
                    return Err(ImageError::BadIkconfig {
                        offset: pos,
                        cause: ConfigError::Corrupt { format: "gzip", cause: source },
                    });
                }
                Err(spent) => return Err(ImageError::from_budget(Compression::Gzip, spent)),
            };
            let config = KernelConfig::parse(&text)
                .map_err(|source| ImageError::BadIkconfig { offset: pos, cause: source })?;
            return Ok(Some(config));
        }
        from = start;
    }
    Ok(None)
}

/// x86 boot protocol: `HdrS` at 0x202, and at 0x20e a pointer (minus 0x200) to the version.
fn bzimage_version(data: &[u8]) -> Option<String> {
    if data.get(0x202..0x206)? != b"HdrS" {
        return None;
    }
    let ptr = u16::from_le_bytes([*data.get(0x20e)?, *data.get(0x20f)?]) as usize + 0x200;
    c_string(data.get(ptr..)?).filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

/// The `Linux version 6.18.37 (…) #1 SMP PREEMPT_RT …` banner, without its prefix.
///
/// A kernel built by kbuild since 6.0 holds the banner twice: first the one compiled into
/// `init/version.o` before the build number is known (`… # SMP PREEMPT_RT …`, a placeholder),
/// then the one linked in last (`… #1 SMP PREEMPT_RT …`), which is what `uname -v` prints. The
/// banner with a build number wins; a kernel with only placeholders gives its first banner.
fn banner_version(data: &[u8]) -> Option<String> {
    const PREFIX: &[u8] = b"Linux version ";
    let mut first = None;
    let mut from = 0;
    while let Some(pos) = find(&data[from..], PREFIX).map(|p| p + from) {
        let start = pos + PREFIX.len();
        if data.get(start).is_some_and(u8::is_ascii_digit) {
            if let Some(banner) = c_string(&data[start..]) {
                if has_build_number(&banner) {
                    return Some(banner);
                }
                first.get_or_insert(banner);
            }
        }
        from = start;
    }
    first
}

/// Whether a banner's `UTS_VERSION` carries the build number: a word `#<digits>`.
fn has_build_number(banner: &str) -> bool {
    banner.split_whitespace().any(|word| {
        word.strip_prefix('#')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The printable text up to the first NUL or newline (at most 512 bytes).
fn c_string(data: &[u8]) -> Option<String> {
    let end = data.iter().take(512).position(|&b| b == 0 || b == b'\n')?;
    let text = &data[..end];
    if text.is_empty() || !text.iter().all(|b| (0x20..0x7f).contains(b)) {
        return None;
    }
    Some(String::from_utf8_lossy(text).trim().to_string())
}

/// Offsets where a gzip, xz or zstd stream may start, in file order.
fn payload_candidates(data: &[u8]) -> Vec<(usize, Compression)> {
    let mut found = Vec::new();
    for (magic, format) in [
        (GZIP_MAGIC, Compression::Gzip),
        (XZ_MAGIC, Compression::Xz),
        (ZSTD_MAGIC, Compression::Zstd),
    ] {
        let mut from = 0;
        while let Some(pos) = find(&data[from..], magic).map(|p| p + from) {
            found.push((pos, format));
            from = pos + 1;
            if found.len() >= MAX_CANDIDATES * 3 {
                break;
            }
        }
    }
    found.sort_by_key(|(pos, _)| *pos);
    found.truncate(MAX_CANDIDATES);
    found
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// Whether a version string (`uname -v`, or the banner) names a PREEMPT_RT kernel.
pub(crate) fn version_is_rt(version: &str) -> bool {
    version.split_whitespace().any(|word| word == "PREEMPT_RT")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const CONFIG: &[u8] = b"CONFIG_EXPERT=y\nCONFIG_PREEMPT_RT=y\n# CONFIG_PREEMPT is not set\n";
    const BANNER: &[u8] = b"Linux version 6.18.37-rt (oe@host) #1 SMP PREEMPT_RT Tue Jul 1\n\0";

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(data).unwrap();
        gz.finish().unwrap()
    }

    /// A fake kernel: noise, the banner, then the config in the kernel's own IKCONFIG layout.
    fn kernel() -> Vec<u8> {
        let mut k: Vec<u8> = (0..20_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        k.extend_from_slice(BANNER);
        k.extend_from_slice(b"IKCFG_ST");
        k.extend_from_slice(&gzip(CONFIG));
        k.extend_from_slice(b"IKCFG_ED");
        k.extend((0..5000u32).map(|i| (i % 13) as u8));
        k
    }

    #[test]
    fn finds_config_and_banner_in_a_plain_kernel() {
        let info = inspect(&kernel()).unwrap();
        assert!(info.config.unwrap().is_preempt_rt());
        let version = info.version.unwrap();
        assert!(version.starts_with("6.18.37-rt (oe@host) #1 SMP PREEMPT_RT"), "{version}");
        assert!(version_is_rt(&version));
    }

    /// The strings of Debian 12's `linux-image-6.1.0-57-rt-arm64` `Image` in their order there:
    /// `init/version.o`'s placeholder banner (no build number), `linux_proc_banner`'s format,
    /// the placeholder `UTS_VERSION`, then the banner and `init_uts_ns` version linked in last.
    #[test]
    fn an_arm64_image_gives_the_banner_with_the_build_number_not_the_placeholder() {
        const BUILT: &str = "(debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) \
                             12.2.0, GNU ld (GNU Binutils for Debian) 2.40)";
        const UTS: &str = "SMP PREEMPT_RT Debian 6.1.192-3 (2026-11-26)";
        let mut image = vec![0u8; 64];
        image[0x38..0x3c].copy_from_slice(b"ARM\x64");
        let noise = |image: &mut Vec<u8>| image.extend((0..3000u32).map(|i| (i * 31 % 251) as u8));
        for (i, string) in [
            format!("Linux version 6.1.0-57-rt-arm64 {BUILT} # {UTS}\n"),
            format!("%s version %s {BUILT} %s\n"),
            format!("# {UTS}"),
            format!("Linux version 6.1.0-57-rt-arm64 {BUILT} #1 {UTS}\n"),
            format!("#1 {UTS}"),
        ]
        .iter()
        .enumerate()
        {
            noise(&mut image);
            image.extend_from_slice(string.as_bytes());
            image.push(0);
            if i == 2 {
                image.extend_from_slice(b"IKCFG_ST");
                image.extend_from_slice(&gzip(CONFIG));
                image.extend_from_slice(b"IKCFG_ED");
            }
        }
        let expected = format!("6.1.0-57-rt-arm64 {BUILT} #1 {UTS}");
        assert_eq!(inspect(&image).unwrap().version.as_deref(), Some(expected.as_str()));
        let info = inspect(&gzip(&image)).unwrap();
        assert_eq!(info.version.as_deref(), Some(expected.as_str()), "Image.gz");
        assert_eq!(info.version_layers, ["gzip payload at 0x0"]);
        // A kernel built before 6.0 has one banner; one with only the placeholder keeps it.
        let placeholder = format!("Linux version 6.1.0-57-rt-arm64 {BUILT} # {UTS}\n\0");
        let only = inspect(placeholder.as_bytes()).unwrap().version.unwrap();
        assert_eq!(only, format!("6.1.0-57-rt-arm64 {BUILT} # {UTS}"));
        assert!(!has_build_number(&only) && has_build_number(&expected));
        assert!(!has_build_number("6.1 #x SMP") && !has_build_number("6.1 # SMP"));
    }

    #[test]
    fn finds_config_inside_image_gz_and_a_uki() {
        let info = inspect(&gzip(&kernel())).unwrap();
        assert!(info.config.unwrap().is_preempt_rt());
        assert_eq!(info.config_layers, ["gzip payload at 0x0"]);
        let uki =
            pe::build(&[(".cmdline", b"isolcpus=7 nohz_full=7\0"), (".linux", &gzip(&kernel()))]);
        let info = inspect(&uki).unwrap();
        assert!(info.config.is_some());
        assert_eq!(info.cmdline.as_deref(), Some("isolcpus=7 nohz_full=7"));
    }

    #[test]
    fn reads_a_bzimage_version_and_xz_payload() {
        let mut bz = vec![0u8; 0x800];
        bz[0x202..0x206].copy_from_slice(b"HdrS");
        bz[0x20e..0x210].copy_from_slice(&0x300u16.to_le_bytes());
        bz[0x500..0x500 + 40].copy_from_slice(b"6.1.0-57-rt-amd64 #1 SMP PREEMPT_RT Deb\0");
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(&kernel()).unwrap();
        bz.extend_from_slice(&xz.finish().unwrap());
        bz.extend_from_slice(b"trailing setup data");
        let info = inspect(&bz).unwrap();
        assert_eq!(info.version.as_deref(), Some("6.1.0-57-rt-amd64 #1 SMP PREEMPT_RT Deb"));
        assert!(info.version_layers.is_empty());
        assert_eq!(info.config_layers, ["xz payload at 0x800"]);
        assert!(info.config.unwrap().is_preempt_rt());
    }

    #[test]
    fn corrupt_ikconfig_is_an_error_and_no_marker_is_none() {
        let mut k = kernel();
        let start = find(&k, IKCFG_START).unwrap() + 8;
        k[start + 12..start + 40].fill(0xff);
        assert!(matches!(inspect(&k), Err(ImageError::BadIkconfig { .. })));
        let info = inspect(b"just some bytes, no kernel here").unwrap();
        assert!(info.config.is_none() && info.version.is_none());
        assert!(!version_is_rt("#1 SMP PREEMPT_DYNAMIC Thu"));
    }

    /// Issue 23 item 1 (`tests/data/reproducers/uki-linux-covers-file.efi`): a PE file whose
    /// `.linux` section is the whole file made the scan call itself until the stack overflowed.
    #[test]
    fn a_uki_whose_linux_section_covers_the_file_is_not_scanned_again() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/reproducers/uki-linux-covers-file.efi"
        );
        let data = std::fs::read(path).unwrap();
        assert_eq!(data.len(), 4096);
        assert_eq!(pe::sections(&data).unwrap()[".linux"].len(), 4096, "the reproducer holds");
        let info = inspect(&data).unwrap();
        assert!(info.config.is_none() && info.version.is_none());
        // UKIs nested in UKIs, each one a little smaller: the depth limit ends it.
        let mut nested = gzip(&kernel());
        for _ in 0..200 {
            nested = pe::build(&[(".linux", &nested)]);
        }
        let info = inspect(&nested).unwrap();
        assert!(info.config.is_none(), "200 levels deep is not looked into");
        let mut shallow = gzip(&kernel());
        for _ in 0..2 {
            shallow = pe::build(&[(".linux", &shallow)]);
        }
        assert!(inspect(&shallow).unwrap().config.is_some(), "two UKI levels are read");
    }

    /// Issue 23 item 2: 64 streams that are not a kernel are not all decompressed: the first
    /// one ends the search, and every level spends one shared budget.
    #[test]
    fn nested_payloads_share_one_budget_and_stop_at_the_first_non_kernel_stream() {
        let zeros = gzip(&vec![0u8; 64 << 10]);
        let mut file = b"noise before the payloads".to_vec();
        for _ in 0..64 {
            file.extend_from_slice(&zeros);
        }
        // All 64 would need 4 MiB; the first one is 64 KiB.
        let mut budget = Budget::new(1 << 20, Duration::from_secs(60));
        let info = inspect_within(&file, &mut budget).unwrap();
        assert!(info.config.is_none() && info.version.is_none());
        // Nested: a stream of 64 streams of 8 MiB of zeros each, in a stream of those; the
        // budget of the whole input runs out in the second level.
        let inner = gzip(&vec![0u8; 8 << 20]);
        let mut level = Vec::new();
        for _ in 0..64 {
            level.extend_from_slice(&inner);
        }
        let mut outer = b"x".repeat(100);
        for _ in 0..64 {
            outer.extend_from_slice(&gzip(&level));
        }
        let mut budget = Budget::new(4 << 20, Duration::from_secs(60));
        assert!(matches!(
            inspect_within(&outer, &mut budget),
            Err(ImageError::Spent { total, .. }) if total == 4 << 20
        ));
        // The kernel inside a payload is still found with the default budget.
        let mut bz = b"setup code, no magic".repeat(50);
        bz.extend_from_slice(&gzip(&kernel()));
        assert!(inspect(&bz).unwrap().config.is_some());
    }
}
