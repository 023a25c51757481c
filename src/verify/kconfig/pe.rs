//! The section table of a PE/COFF file, just enough to pull the `.linux` (kernel) and
//! `.cmdline` sections out of a unified kernel image (UKI). An arm64 `Image` also starts with
//! `MZ` (its EFI stub) but has no `.linux` section, so callers treat it as a plain kernel.

use std::collections::BTreeMap;

/// Section name → section bytes, or `None` when `data` is not a well-formed PE file.
pub(super) fn sections(data: &[u8]) -> Option<BTreeMap<String, &[u8]>> {
    if !data.starts_with(b"MZ") {
        return None;
    }
    let pe = u32_at(data, 0x3c)? as usize;
    if data.get(pe..pe + 4)? != b"PE\0\0" {
        return None;
    }
    let coff = pe + 4;
    let count = u16_at(data, coff + 2)? as usize;
    let optional_size = u16_at(data, coff + 16)? as usize;
    let table = coff + 20 + optional_size;
    let mut found = BTreeMap::new();
    for i in 0..count.min(96) {
        let header = data.get(table + i * 40..table + (i + 1) * 40)?;
        let name_len = header[..8].iter().position(|&b| b == 0).unwrap_or(8);
        let name = String::from_utf8_lossy(&header[..name_len]).into_owned();
        let virtual_size = u32_at(header, 8)? as usize;
        let raw_size = u32_at(header, 16)? as usize;
        let raw_offset = u32_at(header, 20)? as usize;
        // The raw size is padded to the file alignment; the virtual size is the real length
        // (when it is not zero).
        let size = if virtual_size == 0 { raw_size } else { virtual_size.min(raw_size) };
        if let Some(bytes) = data.get(raw_offset..raw_offset.checked_add(size)?) {
            found.insert(name, bytes);
        }
    }
    Some(found)
}

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(data.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

/// Builds a minimal PE file with the given sections (for tests here and in `verify`).
#[cfg(test)]
pub(super) fn build(sections: &[(&str, &[u8])]) -> Vec<u8> {
    let pe = 0x80usize;
    let optional_size = 0xf0usize;
    let table = pe + 4 + 20 + optional_size;
    let mut data = vec![0u8; table + sections.len() * 40];
    data[..2].copy_from_slice(b"MZ");
    data[0x3c..0x40].copy_from_slice(&(pe as u32).to_le_bytes());
    data[pe..pe + 4].copy_from_slice(b"PE\0\0");
    data[pe + 6..pe + 8].copy_from_slice(&(sections.len() as u16).to_le_bytes());
    data[pe + 20..pe + 22].copy_from_slice(&(optional_size as u16).to_le_bytes());
    for (i, (name, bytes)) in sections.iter().enumerate() {
        let offset = data.len();
        data.extend_from_slice(bytes);
        data.resize(data.len().next_multiple_of(512), 0);
        let h = table + i * 40;
        data[h..h + name.len()].copy_from_slice(name.as_bytes());
        data[h + 8..h + 12].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        let raw = (data.len() - offset) as u32;
        data[h + 16..h + 20].copy_from_slice(&raw.to_le_bytes());
        data[h + 20..h + 24].copy_from_slice(&(offset as u32).to_le_bytes());
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_named_sections() {
        let data = build(&[(".cmdline", b"isolcpus=7\0"), (".linux", b"kernel bytes")]);
        let found = sections(&data).unwrap();
        assert_eq!(found[".cmdline"], b"isolcpus=7\0");
        assert_eq!(found[".linux"], b"kernel bytes");
    }

    #[test]
    fn rejects_non_pe_and_truncated_files() {
        assert!(sections(b"\x7fELF").is_none());
        assert!(sections(b"MZ").is_none());
        let data = build(&[(".linux", b"x")]);
        assert!(sections(&data[..0x90]).is_none());
    }

    /// Every single-byte change to a UKI's headers (offsets, counts, sizes near `u32::MAX`)
    /// gives sections inside the file or `None`, never a panic.
    #[test]
    fn mutated_headers_never_panic() {
        let data = build(&[(".cmdline", b"isolcpus=7\0"), (".linux", b"kernel bytes")]);
        let headers = data.len().min(0x80 + 24 + 0xf0 + 2 * 40);
        for at in 0..headers {
            for value in [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff] {
                let mut bad = data.clone();
                bad[at] = value;
                for bytes in sections(&bad).into_iter().flat_map(|s| s.into_values()) {
                    assert!(bytes.len() <= bad.len());
                }
            }
        }
    }
}
