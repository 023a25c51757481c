//! Kernel images built the way the kernel lays IKCONFIG out, and the PREEMPT_RT config they carry.

use std::io::Write;

/// A kernel image built the way the kernel lays IKCONFIG out (`kernel/configs.c`): arbitrary
/// code bytes, the version banner, `IKCFG_ST`, the gzip'd config, `IKCFG_ED`, more bytes.
pub(crate) fn test_built_image(config: &[u8], uts_version: &str) -> Vec<u8> {
    let mut image: Vec<u8> =
        (0..65_536u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    image.extend_from_slice(
        format!("Linux version 6.18.37-rt (oe@build) {uts_version}\n\0").as_bytes(),
    );
    image.extend_from_slice(b"IKCFG_ST");
    image.extend_from_slice(&gzip(config));
    image.extend_from_slice(b"IKCFG_ED");
    image.extend((0..4096u32).map(|i| (i % 251) as u8));
    image
}

pub(crate) const RT_CONFIG: &str = "CONFIG_EXPERT=y\nCONFIG_ARCH_SUPPORTS_RT=y\nCONFIG_PREEMPT_RT=y\n\
    CONFIG_NO_HZ_FULL=y\nCONFIG_CPUSETS=y\nCONFIG_RCU_EXPERT=y\nCONFIG_RCU_NOCB_CPU=y\n\
    CONFIG_IKCONFIG=y\n";

pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}
