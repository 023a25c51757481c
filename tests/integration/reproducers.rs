//! The reproducers of issue 13 (panic, abort, hang), kept in `tests/data/reproducers/`, run
//! through the real binary: each must end with one line and the documented exit code, never a
//! panic (101), an abort (134) or a hang (the run is killed after 60 s and fails).

use std::io::Read;
use std::path::PathBuf;

use crate::support::harness::{Test, data, project_root};

fn repro(name: &str) -> PathBuf {
    project_root().join("tests/data/reproducers").join(name)
}

#[test]
fn verify_of_a_70000_character_option_value_prints_its_table() {
    let run = Test::new()
        .args(["verify", "--kernel-config"])
        .args([repro("preempt-rt-70000.config")])
        .within_secs(60)
        .run()
        .stderr_is(&format!(
            "note: no plan given (--machine or --plan): only PREEMPT_RT, the command line and \
             rt-tests were checked\nwarning: 1 of 1 check failed for {} (FAIL rows in the table \
             on stdout)\n",
            repro("preempt-rt-70000.config").display()
        ))
        .code_is(1);
    let out = run.stdout();
    let row = out
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["FAIL", "CONFIG_PREEMPT_RT"]))
        .unwrap_or_else(|| {
            panic!("no CONFIG_PREEMPT_RT row in {} bytes of output", out.len());
        });
    // The found value is cut at 2,048 characters with an ellipsis (issue 34: a cell never
    // carries a whole hostile value), and the row still names the file it came from.
    let found = format!("\"{}…", "x".repeat(2_047));
    assert!(row.contains(&found), "the value is shown cut: {} bytes", row.len());
    assert!(!row.contains(&"x".repeat(2_048)), "no more of it than the cut");
    assert!(row.trim_end().ends_with("preempt-rt-70000.config"), "{}", &row[row.len() - 80..]);
    assert!(out.contains("verdict: FAIL"));
}

#[test]
fn machines_lists_a_board_with_a_65536_character_name() {
    let name = "b".repeat(65_536);
    let run = Test::new()
        .args(["machines", "--machines-dir"])
        .args([repro("catalog-name-65536")])
        .within_secs(60)
        .run()
        .success();
    let out = run.stdout();
    assert!(out.lines().any(|l| l.starts_with(&format!("{name}  "))), "the long name is a row");
    assert!(out.lines().any(|l| l.starts_with("rb3gen2-core-kit ")), "shipped boards stay");
}

#[test]
fn a_catalog_with_4294967295_cpus_is_refused_not_allocated() {
    let dir = repro("catalog-cpus-4294967295");
    let file = dir.join("big.yaml");
    let message = format!(
        "machine file {} is not valid: cpus must be 1 to 4096; fix the file or remove it",
        file.display()
    );
    Test::new()
        .args(["machines", "--machines-dir"])
        .args([&dir])
        .within_secs(60)
        .run()
        .usage_error(&message);
    Test::new()
        .args(["generate", "--machine", "big", "--out", "o", "--machines-dir"])
        .args([&dir])
        .within_secs(60)
        .run()
        .usage_error(&message)
        .nothing_written("o");
}

#[test]
fn report_refuses_a_threshold_of_1_72e308_from_the_flag_or_run_json() {
    let message = |from: &str| {
        format!(
            "threshold 1.72e308 µs ({from}) is not usable: it must be a number of microseconds \
             from 0.001 (1 ns) to 1000000 (1 s); pass --threshold-us with a latency limit such as 100"
        )
    };
    Test::new()
        .args(["report"])
        .args([repro("h2-idle.txt")])
        .args(["--threshold-us", "1.72e308", "--html", "x.html"])
        .within_secs(60)
        .run()
        .usage_error(&message("--threshold-us"))
        .nothing_written("x.html");
    Test::new()
        .args(["report"])
        .args([repro("threshold-1.72e308")])
        .args(["--html", "x.html"])
        .within_secs(60)
        .run()
        .usage_error(&message("run.json threshold_us"))
        .nothing_written("x.html");
    for bad in ["inf", "NaN", "0", "-1", "1000001"] {
        let run = Test::new()
            .args(["report"])
            .args([repro("h2-idle.txt")])
            .args([format!("--threshold-us={bad}")])
            .within_secs(60)
            .run()
            .code_is(2);
        let stderr = run.stderr();
        assert!(stderr.starts_with("error: threshold ") && stderr.lines().count() == 1, "{stderr}");
    }
}

#[test]
fn report_draws_its_chart_at_the_largest_threshold() {
    let run = Test::new()
        .args(["report"])
        .args([data("cyclictest-2.4-hist-h50-2threads.txt")])
        .args(["--threshold-us", "1000000", "--html", "x.html"])
        .within_secs(60)
        .run()
        .ignore_stdout()
        .stderr_is("       Wrote x.html\n");
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let html = std::fs::read_to_string(run.path().join("x.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("threshold 1000000 µs"), "chart drawn");
}

/// The thresholds other commands take are bounded the same way, so no run.json or LAVA job
/// carries one `report` would refuse.
#[test]
fn test_and_lava_thresholds_stop_at_one_second() {
    for (args, flag) in [
        (&["test", "--local", "--max-us", "1000001"][..], "--max-us <US>"),
        (
            &["lava", "--machine", "rb3gen2-core-kit", "--threshold-us", "1000001"][..],
            "--threshold-us <US>",
        ),
    ] {
        let run = Test::new().args(args).within_secs(60).run().code_is(2);
        let stderr = run.stderr();
        assert!(
            stderr.starts_with(&format!(
                "error: invalid value '1000001' for '{flag}': 1000001 is not in 1..=1000000"
            )),
            "{stderr}"
        );
    }
}

/// Issue 23 item 1: a 4 KB PE file whose `.linux` section covers the whole file overflowed the
/// stack (exit 134) in `verify FILE` and `verify --kernel-image FILE`.
#[test]
fn verify_of_a_uki_whose_linux_section_is_the_whole_file_is_refused() {
    let file = repro("uki-linux-covers-file.efi");
    for flag in [None, Some("--kernel-image")] {
        let message = format!(
            "`{}` holds no kernel config, kernel image or version string; pass a kernel config, \
             a kernel image (Image, Image.gz, vmlinux, bzImage, UKI), a .deb, a qcomflash folder \
             or tarball, or a build folder",
            file.display()
        );
        Test::new()
            .args(["verify"])
            .args(flag)
            .args([&file])
            .within_secs(60)
            .run()
            .usage_error(&message);
    }
}

/// Issue 23 item 2, built here (1 MB): 64 concatenated zstd frames of 512 MiB of zeros took
/// 78 s and 796 MB; in a zstd frame of its own (one more level), over an hour. Now the first
/// stream that is no kernel ends the search, under one budget for the whole input: one line,
/// exit 2, in bounded time and memory.
#[test]
fn verify_of_64_zstd_frames_of_512_mib_of_zeros_stops_at_the_first() {
    let frame = zstd::bulk::compress(&vec![0u8; 512 << 20], 3).unwrap();
    let mut bomb = b"MZ not a kernel, ".to_vec();
    for _ in 0..64 {
        bomb.extend_from_slice(&frame);
    }
    let nested = zstd::bulk::compress(&bomb, 3).unwrap();
    for (name, bytes) in [("frames.bin", &bomb), ("nested.zst", &nested)] {
        Test::new()
            .file(name, bytes)
            .args(["verify", "--kernel-image", name])
            .within_secs(60)
            .within_memory_mib(1024)
            .run()
            .usage_error(&format!(
                "`{name}` holds no kernel config, kernel image or version string; pass a kernel \
                 config, a kernel image (Image, Image.gz, vmlinux, bzImage, UKI), a .deb, a \
                 qcomflash folder or tarball, or a build folder"
            ));
    }
}

/// Issue 23 item 3, built here: a 1 MiB FAT12 `efi.bin` whose `count` root entries `*.EFI`
/// (4 GiB each) all have the cluster chain 2 → 2. 2,000 took 2.06 GB; 9,000 aborted.
fn efi_bin_with_looping_chains(count: usize) -> Vec<u8> {
    let mut data = vec![0u8; 1 << 20];
    data[11..13].copy_from_slice(&512u16.to_le_bytes()); // bytes per sector
    data[13] = 1; // sectors per cluster
    data[14..16].copy_from_slice(&1u16.to_le_bytes()); // reserved sectors
    data[16] = 1; // FATs
    data[17..19].copy_from_slice(&(count as u16).to_le_bytes()); // root entries
    data[19..21].copy_from_slice(&2048u16.to_le_bytes()); // total sectors
    data[22..24].copy_from_slice(&8u16.to_le_bytes()); // sectors per FAT
    data[510..512].copy_from_slice(&[0x55, 0xaa]);
    data[512 + 3] = 0x02; // FAT12: cluster 2 → cluster 2
    for i in 0..count {
        let at = 9 * 512 + i * 32;
        data[at..at + 11].copy_from_slice(format!("F{i:04}   EFI").as_bytes());
        data[at + 11] = 0x20;
        data[at + 26..at + 28].copy_from_slice(&2u16.to_le_bytes());
        data[at + 28..at + 32].copy_from_slice(&u32::MAX.to_le_bytes());
    }
    data
}

#[test]
fn verify_of_an_efi_bin_whose_cluster_chains_loop_is_bounded_by_its_size() {
    for count in [2000, 9000] {
        let dir = "img-m.rootfs.qcomflash";
        Test::new()
            .file(&format!("{dir}/efi.bin"), efi_bin_with_looping_chains(count))
            .file(&format!("{dir}/rawprogram0.xml"), "<data/>\n")
            .args(["verify", dir])
            .within_secs(60)
            .within_memory_mib(512)
            .run()
            .usage_error(&format!(
                "`{dir}` holds no kernel config, kernel image or version string; a qcomflash \
                 folder holds vmlinux and efi.bin"
            ));
    }
}

/// A zstd tar stream of `names`, each `size` bytes of zeros, streamed (nothing held in memory).
fn zero_members_tar_zst(names: &[&str], size: u64) -> Vec<u8> {
    let encoder = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    let mut tar = tar::Builder::new(encoder);
    for name in names {
        let mut header = tar::Header::new_gnu();
        header.set_size(size);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, std::io::repeat(0).take(size)).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// An `ar` archive (a `.deb`) of `members`.
fn ar(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    for (name, body) in members {
        out.extend_from_slice(
            format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", 0, 0, 0, 100644, body.len())
                .as_bytes(),
        );
        out.extend_from_slice(body);
        if body.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    out
}

/// Issue 23 item 4, built here: a 135 KB `.deb` with four 1 GiB `boot/config-*` members took
/// 5.3 GB (`verify`); a `.tar.zst` with four 1 GiB `*/manifest.json` members 6.3 GB
/// (`bundle --check`). A member read into memory is capped; a larger one is refused, exit 2.
#[test]
fn members_of_1_gib_in_a_deb_or_a_bundle_are_refused_not_read() {
    let configs: Vec<String> = (1..=4).map(|i| format!("./boot/config-6.12.{i}-rt")).collect();
    let names: Vec<&str> = configs.iter().map(String::as_str).collect();
    let data = zero_members_tar_zst(&names, 1 << 30);
    let deb = ar(&[("debian-binary", b"2.0\n"), ("control.tar.zst", b""), ("data.tar.zst", &data)]);
    Test::new()
        .file("bomb.deb", &deb)
        .args(["verify", "bomb.deb"])
        .within_secs(60)
        .within_memory_mib(512)
        .run()
        .usage_error(
            "`bomb.deb` is not a usable Debian package: data.tar.zst: member \
             `boot/config-6.12.1-rt` is over 16 MiB, more than any kernel config is (a \
             decompression bomb?); pass an intact copy, or the kernel .config",
        );
    let manifests = ["a/manifest.json", "b/manifest.json", "c/manifest.json", "d/manifest.json"];
    Test::new()
        .file("bomb.tar.zst", zero_members_tar_zst(&manifests, 1 << 30))
        .args(["bundle", "--check", "bomb.tar.zst"])
        .within_secs(60)
        .within_memory_mib(512)
        .run()
        .usage_error(
            "bomb.tar.zst: member `a/manifest.json` is over 8 MiB, more than any rtbuild \
             bundle's metadata (a decompression bomb?); pass a .tar.zst or .tar.gz made by `rtbuild bundle`",
        );
}

/// Issue 23 item 5, built here: `verify nl.zst` (134 KB inflating to 4 GiB of newlines) was
/// still running after 120 s. As a config (`--kernel-config`) it has the 16 MiB cap of one
/// inside an image; recognised by content (no `CONFIG_` in its head) it is read as an image,
/// within the image budget.
#[test]
fn verify_of_a_config_zst_of_a_gib_of_newlines_is_refused_at_16_mib() {
    let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    // 1 GiB: as far past every cap as 4 GiB, and quicker to build.
    std::io::copy(&mut std::io::repeat(b'\n').take(1 << 30), &mut encoder).unwrap();
    let zst = encoder.finish().unwrap();
    let too_big = "`nl.zst`: the config is over 16 MiB once decompressed, more than any kernel \
                   config (a decompression bomb?); pass the kernel's .config";
    let no_kernel = "`nl.zst` holds no kernel config, kernel image or version string; pass a \
                     kernel config, a kernel image (Image, Image.gz, vmlinux, bzImage, UKI), a \
                     .deb, a qcomflash folder or tarball, or a build folder";
    for (flag, message) in [(Some("--kernel-config"), too_big), (None, no_kernel)] {
        Test::new()
            .file("nl.zst", &zst)
            .args(["verify"])
            .args(flag)
            .args(["nl.zst"])
            .within_secs(60)
            .within_memory_mib(512)
            .run()
            .usage_error(message);
    }
}

/// Issue 34, probe round 10: YAML whose flow collections nest deep (`[a: [a: …`, `{"a": {…`)
/// cost the YAML scanner time in the square of the depth before its depth limit refused it: a
/// 360 KB LAVA log took 75 s in `report`, a 3 MB lock hours in `lock --diff`. Now refused in
/// one pass, one line, exit 2.
#[test]
fn yaml_nested_a_million_deep_is_refused_at_once() {
    let n = 500_000;
    let lock = format!("{}1{}", "{\"a\": ".repeat(n), "}".repeat(n));
    let log = format!(
        "- {{\"dt\": \"2026-01-01T00:00:00\", \"lvl\": \"target\", \"msg\": {}1{}}}\n",
        "[a: ".repeat(n),
        "]".repeat(n)
    );
    Test::new()
        .file("deep.lock.yml", &lock)
        .args(["lock", "--diff", "deep.lock.yml", "deep.lock.yml"])
        .within_secs(60)
        .within_memory_mib(1024)
        .run()
        .usage_error(
            "lock file deep.lock.yml is not valid YAML: collections nested more than 128 deep \
             at line 1 column 769; fix it, or write it again with `rtbuild lock`",
        );
    Test::new()
        .file("lava.yaml", &log)
        .args(["report", "lava.yaml"])
        .within_secs(60)
        .within_memory_mib(1024)
        .run()
        .usage_error(
            "lava.yaml: it is not a LAVA job log (collections nested more than 128 deep at line \
             1 column 565); save one with `lavacli jobs logs --raw JOB-ID > FILE`",
        );
    Test::new()
        .file("plan.yml", &lock)
        .args(["generate", "--project", "plan.yml", "--dry-run"])
        .within_secs(60)
        .within_memory_mib(1024)
        .run()
        .code_is(2)
        .stderr_contains("collections nested more than 128 deep at line 1 column 769");
}
