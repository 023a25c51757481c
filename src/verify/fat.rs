//! A read-only FAT12/16/32 reader, just enough to find the unified kernel images in a qcomflash
//! `efi.bin` (the ESP image holding systemd-boot and the UKI under `EFI/Linux/`), so the UKI's
//! `.cmdline` can be checked. Long file names are read; nothing is ever written.
//!
//! The image may be hostile: a cluster chain that loops ends at the first cluster it repeats,
//! no file is bigger than the image, and everything read (directories and files) together is
//! at most the image's size, as in any real FAT where no two files share a cluster.

use std::cell::Cell;
use std::collections::HashSet;

/// At most this many directory entries are visited, so a corrupt image cannot loop forever.
const MAX_ENTRIES: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fat12,
    Fat16,
    Fat32,
}

/// A FAT file system held in memory.
pub(super) struct Fat<'a> {
    data: &'a [u8],
    kind: Kind,
    cluster_bytes: usize,
    fat_start: usize,
    root_start: usize,
    root_bytes: usize,
    root_cluster: u32,
    data_start: usize,
    /// Bytes that may still be read, over every directory and file: the image's size.
    budget: Cell<usize>,
}

/// One file found in the file system: its path and bytes.
pub(super) struct File {
    pub path: String,
    pub data: Vec<u8>,
}

/// A file's directory entry: its path, first cluster and size, not yet read.
pub(super) struct Entry {
    pub path: String,
    cluster: u32,
    size: usize,
}

fn u16_at(data: &[u8], at: usize) -> Option<usize> {
    Some(u16::from_le_bytes(data.get(at..at + 2)?.try_into().ok()?) as usize)
}

fn u32_at(data: &[u8], at: usize) -> Option<usize> {
    Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?) as usize)
}

impl<'a> Fat<'a> {
    /// Reads the boot sector; `None` when `data` is not a FAT file system.
    pub(super) fn open(data: &'a [u8]) -> Option<Fat<'a>> {
        if data.get(510..512)? != [0x55, 0xaa] {
            return None;
        }
        let sector = u16_at(data, 11)?;
        let per_cluster = *data.get(13)? as usize;
        let reserved = u16_at(data, 14)?;
        let fats = *data.get(16)? as usize;
        let root_entries = u16_at(data, 17)?;
        let total = match u16_at(data, 19)? {
            0 => u32_at(data, 32)?,
            n => n,
        };
        let fat_sectors = match u16_at(data, 22)? {
            0 => u32_at(data, 36)?,
            n => n,
        };
        if ![512, 1024, 2048, 4096].contains(&sector) || per_cluster == 0 || fats == 0 {
            return None;
        }
        let root_sectors = (root_entries * 32).div_ceil(sector);
        let data_sector = reserved + fats * fat_sectors + root_sectors;
        let clusters = total.checked_sub(data_sector)? / per_cluster;
        let kind = match clusters {
            0..4085 => Kind::Fat12,
            4085..65525 => Kind::Fat16,
            _ => Kind::Fat32,
        };
        Some(Fat {
            data,
            kind,
            cluster_bytes: sector * per_cluster,
            fat_start: reserved * sector,
            root_start: (reserved + fats * fat_sectors) * sector,
            root_bytes: root_sectors * sector,
            root_cluster: if kind == Kind::Fat32 { u32_at(data, 44)? as u32 } else { 0 },
            data_start: data_sector * sector,
            budget: Cell::new(data.len()),
        })
    }

    /// The FAT entry of `cluster`: the next cluster, or `None` at the end of the chain.
    fn next(&self, cluster: u32) -> Option<u32> {
        let n = cluster as usize;
        let (value, end) = match self.kind {
            Kind::Fat12 => {
                let raw = u16_at(self.data, self.fat_start + n + n / 2)?;
                (if n % 2 == 1 { raw >> 4 } else { raw & 0xfff }, 0xff8)
            }
            Kind::Fat16 => (u16_at(self.data, self.fat_start + n * 2)?, 0xfff8),
            Kind::Fat32 => (u32_at(self.data, self.fat_start + n * 4)? & 0x0fff_ffff, 0x0fff_fff8),
        };
        (value >= 2 && value < end).then_some(value as u32)
    }

    /// The bytes of a cluster chain, at most `limit` of them and never more than the image
    /// still allows; a chain that comes back to a cluster it passed ends there.
    fn chain(&self, first: u32, limit: usize) -> Vec<u8> {
        let limit = limit.min(self.data.len()).min(self.budget.get());
        let mut out = Vec::new();
        let mut cluster = Some(first).filter(|c| *c >= 2);
        let mut seen = HashSet::new();
        while let Some(c) = cluster {
            if !seen.insert(c) {
                break;
            }
            let start = self.data_start + (c as usize - 2) * self.cluster_bytes;
            let Some(bytes) = self.data.get(start..start + self.cluster_bytes) else { break };
            out.extend_from_slice(&bytes[..bytes.len().min(limit - out.len())]);
            if out.len() >= limit {
                break;
            }
            cluster = self.next(c);
        }
        self.budget.set(self.budget.get() - out.len());
        out
    }

    /// Every file `wanted` accepts, with its path (`EFI/Linux/uki.efi`), up to a few thousand
    /// entries; read each with [`Fat::read`].
    pub(super) fn entries(&self, wanted: impl Fn(&str) -> bool) -> Vec<Entry> {
        let root = match self.kind {
            Kind::Fat32 => self.chain(self.root_cluster, 4 << 20),
            _ => self
                .data
                .get(self.root_start..self.root_start + self.root_bytes)
                .unwrap_or_default()
                .to_vec(),
        };
        let mut found = Vec::new();
        let mut walk = Walk { budget: MAX_ENTRIES, seen: HashSet::new() };
        self.walk(&root, "", &wanted, &mut found, &mut walk, 0);
        found
    }

    /// A file's bytes (fewer when its chain ends early, loops, or the image's budget is spent).
    pub(super) fn read(&self, entry: Entry) -> File {
        let data = self.chain(entry.cluster, entry.size);
        File { path: entry.path, data }
    }

    /// Every file `wanted` accepts, read (for tests; callers read one at a time).
    #[cfg(test)]
    fn files(&self, wanted: impl Fn(&str) -> bool) -> Vec<File> {
        self.entries(wanted).into_iter().map(|e| self.read(e)).collect()
    }

    fn walk(
        &self,
        dir: &[u8],
        prefix: &str,
        wanted: &dyn Fn(&str) -> bool,
        found: &mut Vec<Entry>,
        walk: &mut Walk,
        depth: usize,
    ) {
        let mut long: Vec<(u8, Vec<u16>)> = Vec::new();
        for entry in dir.chunks_exact(32) {
            if walk.budget == 0 || entry[0] == 0 {
                return;
            }
            walk.budget -= 1;
            let attr = entry[11];
            if entry[0] == 0xe5 {
                long.clear();
                continue;
            }
            if attr == 0x0f {
                let units = [1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30]
                    .iter()
                    .map(|&i| u16::from_le_bytes([entry[i], entry[i + 1]]))
                    .collect();
                long.push((entry[0] & 0x1f, units));
                continue;
            }
            let name = if long.is_empty() { short_name(entry) } else { long_name(&mut long) };
            long.clear();
            if attr & 0x08 != 0 || name == "." || name == ".." {
                continue;
            }
            let cluster =
                (u16_at(entry, 20).unwrap_or(0) << 16 | u16_at(entry, 26).unwrap_or(0)) as u32;
            let path = format!("{prefix}{name}");
            if attr & 0x10 != 0 {
                // A directory is read once: a crafted image whose directories loop cannot make
                // the walk copy the same clusters again and again.
                if depth < 6 && walk.seen.insert(cluster) {
                    let sub = self.chain(cluster, 4 << 20);
                    self.walk(&sub, &format!("{path}/"), wanted, found, walk, depth + 1);
                }
            } else if wanted(&path) {
                found.push(Entry { path, cluster, size: u32_at(entry, 28).unwrap_or(0) });
            }
        }
    }
}

/// What a directory walk may still do: entries left, and directory clusters already read.
struct Walk {
    budget: usize,
    seen: HashSet<u32>,
}

fn short_name(entry: &[u8]) -> String {
    let base = String::from_utf8_lossy(&entry[..8]).trim_end().to_string();
    let ext = String::from_utf8_lossy(&entry[8..11]).trim_end().to_string();
    if ext.is_empty() { base } else { format!("{base}.{ext}") }
}

fn long_name(parts: &mut [(u8, Vec<u16>)]) -> String {
    parts.sort_by_key(|(order, _)| *order);
    let units: Vec<u16> = parts
        .iter()
        .flat_map(|(_, u)| u.iter().copied())
        .take_while(|&u| u != 0 && u != 0xffff)
        .collect();
    String::from_utf16_lossy(&units)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny xorshift generator: the same "random" file systems on every run.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// A FAT12 image whose root holds `LOOP/`, and `LOOP/` holds `A.TXT` plus fifteen folders
    /// that all point back at `LOOP/` itself.
    fn looping_image() -> Vec<u8> {
        let mut data = vec![0u8; 64 * 512];
        data[11..13].copy_from_slice(&512u16.to_le_bytes());
        data[13] = 1; // sectors per cluster
        data[14..16].copy_from_slice(&1u16.to_le_bytes()); // reserved sectors
        data[16] = 1; // FATs
        data[17..19].copy_from_slice(&16u16.to_le_bytes()); // root entries
        data[19..21].copy_from_slice(&64u16.to_le_bytes()); // total sectors
        data[22..24].copy_from_slice(&1u16.to_le_bytes()); // sectors per FAT
        data[510..512].copy_from_slice(&[0x55, 0xaa]);
        data[512..518].copy_from_slice(&[0xf8, 0xff, 0xff, 0xff, 0xff, 0xff]); // clusters 2, 3: end
        let entry =
            |data: &mut Vec<u8>, at: usize, name: &[u8; 11], attr: u8, cluster: u16, size: u32| {
                data[at..at + 11].copy_from_slice(name);
                data[at + 11] = attr;
                data[at + 26..at + 28].copy_from_slice(&cluster.to_le_bytes());
                data[at + 28..at + 32].copy_from_slice(&size.to_le_bytes());
            };
        entry(&mut data, 2 * 512, b"LOOP       ", 0x10, 2, 0);
        entry(&mut data, 3 * 512, b"A       TXT", 0x20, 3, 5);
        for i in 1..16u8 {
            let mut name = *b"D0         ";
            name[1] = b'A' + i;
            entry(&mut data, 3 * 512 + 32 * i as usize, &name, 0x10, 2, 0);
        }
        data[4 * 512..4 * 512 + 5].copy_from_slice(b"hello");
        data
    }

    /// Issue 23 item 3: `count` root entries named `Fnnnn.EFI`, each 4 GiB long, whose cluster
    /// chains all loop on cluster 2, in a FAT12 image of 1 MiB.
    fn looping_chains(count: usize) -> Vec<u8> {
        let root_sectors = (count * 32).div_ceil(512);
        let mut data = vec![0u8; 1 << 20];
        data[11..13].copy_from_slice(&512u16.to_le_bytes());
        data[13] = 1;
        data[14..16].copy_from_slice(&1u16.to_le_bytes());
        data[16] = 1;
        data[17..19].copy_from_slice(&(count as u16).to_le_bytes());
        data[19..21].copy_from_slice(&2048u16.to_le_bytes());
        data[22..24].copy_from_slice(&8u16.to_le_bytes());
        data[510..512].copy_from_slice(&[0x55, 0xaa]);
        data[512 + 3] = 0x02; // cluster 2 → cluster 2
        let root = (1 + 8) * 512;
        for i in 0..count {
            let at = root + i * 32;
            data[at..at + 11].copy_from_slice(format!("F{i:04}   EFI").as_bytes());
            data[at + 11] = 0x20;
            data[at + 26..at + 28].copy_from_slice(&2u16.to_le_bytes());
            data[at + 28..at + 32].copy_from_slice(&u32::MAX.to_le_bytes());
        }
        let first = root + root_sectors * 512;
        data[first..first + 4].copy_from_slice(b"loop");
        data
    }

    #[test]
    fn looping_cluster_chains_end_and_reads_stay_within_the_image() {
        let image = looping_chains(2000);
        let fs = Fat::open(&image).unwrap();
        let entries = fs.entries(|p| p.ends_with(".EFI"));
        assert_eq!(entries.len(), 2000);
        assert_eq!(entries[0].path, "F0000.EFI");
        let mut total = 0;
        for entry in entries {
            let file = fs.read(entry);
            assert!(file.data.len() <= 512, "the loop ends after one cluster");
            total += file.data.len();
        }
        assert_eq!(total, 2000 * 512);
        // 9,000 of them aborted on allocation: now the image's own size bounds the whole read.
        let image = looping_chains(9000);
        let fs = Fat::open(&image).unwrap();
        let total: usize = fs.files(|_| true).iter().map(|f| f.data.len()).sum();
        assert!(total <= image.len(), "{total}");
    }

    #[test]
    fn a_directory_that_loops_is_read_once() {
        let image = looping_image();
        let fs = Fat::open(&image).unwrap();
        let files = fs.files(|_| true);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["LOOP/A.TXT"]);
        assert_eq!(files[0].data, b"hello");
    }

    /// Boot sectors that pass `open` over random FAT and directory bytes (loops, chains into
    /// nowhere, absurd sizes, long-name fragments): reading never panics and stays bounded.
    #[test]
    fn random_file_systems_never_panic() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut opened = 0;
        for _ in 0..400 {
            let len = 4096 + (next(&mut state) % 60_000) as usize;
            let mut data: Vec<u8> = (0..len).map(|_| next(&mut state) as u8).collect();
            data[510..512].copy_from_slice(&[0x55, 0xaa]);
            data[11..13].copy_from_slice(&512u16.to_le_bytes());
            data[13] = [1, 2, 4, 128][(next(&mut state) % 4) as usize];
            data[14..16].copy_from_slice(&(1 + next(&mut state) % 4).to_le_bytes()[..2]);
            data[16] = 1 + (next(&mut state) % 2) as u8;
            data[17..19].copy_from_slice(&(16 * (next(&mut state) % 8)).to_le_bytes()[..2]);
            let total = if next(&mut state) % 3 == 0 { 0 } else { next(&mut state) % 70_000 };
            data[19..21].copy_from_slice(&(total as u16).to_le_bytes());
            data[22..24].copy_from_slice(&(next(&mut state) % 3).to_le_bytes()[..2]);
            let Some(fs) = Fat::open(&data) else { continue };
            opened += 1;
            let total: usize = fs.files(|_| true).iter().map(|f| f.data.len()).sum();
            assert!(total <= data.len(), "read {total} bytes from a {}-byte image", data.len());
        }
        assert!(opened > 100, "only {opened} random file systems got past open()");
    }
}
