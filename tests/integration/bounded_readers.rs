//! Issue 23 item 12: every file reader of `verify`, `bundle --check`, `report` and `lock`
//! finishes within a bound of time and memory on arbitrary input, compressed and nested
//! included. Each case is a random payload (bytes, a run of zeros up to 64 MiB, a kernel-like
//! banner with an IKCONFIG marker, a config, a tar of `manifest.json` / `boot/config-*`
//! members) wrapped in up to four random layers (gzip, xz, zstd, 64 concatenated copies, a UKI
//! `.linux` section, a `.deb`), then maybe damaged. The real binary reads it with its address
//! space limited to 1 GiB (`prlimit --as`) and is killed after 60 s: a bomb that allocates
//! aborts it (exit 134), a hang times it out (exit 124), and either fails the property. The
//! bounds are generous, never a latency measured here: they catch what is unbounded.

use std::io::Write;

use proptest::prelude::*;

use crate::support::harness::Test;

/// What the payload starts as.
#[derive(Debug, Clone)]
enum Payload {
    Bytes(Vec<u8>),
    Zeros(u32),
    Kernel,
    Config,
    Tar { names: Vec<&'static str>, size: u32 },
}

/// One wrapping layer.
#[derive(Debug, Clone, Copy)]
enum Layer {
    Gzip,
    Xz,
    Zstd,
    Repeat64,
    Uki,
    Deb,
}

fn payload() -> impl Strategy<Value = Payload> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..4096).prop_map(Payload::Bytes),
        (0u32..=26).prop_map(|shift| Payload::Zeros(1 << shift)),
        Just(Payload::Kernel),
        Just(Payload::Config),
        (
            proptest::collection::vec(
                prop_oneof![
                    Just("top/manifest.json"),
                    Just("top/SHA256SUMS"),
                    Just("./boot/config-6.12-rt"),
                    Just("top/vmlinux"),
                    Just("top/efi.bin"),
                ],
                1..5
            ),
            0u32..(32 << 20),
        )
            .prop_map(|(names, size)| Payload::Tar { names, size }),
    ]
}

fn layer() -> impl Strategy<Value = Layer> {
    prop_oneof![
        Just(Layer::Gzip),
        Just(Layer::Xz),
        Just(Layer::Zstd),
        Just(Layer::Repeat64),
        Just(Layer::Uki),
        Just(Layer::Deb),
    ]
}

fn build(payload: &Payload) -> Vec<u8> {
    match payload {
        Payload::Bytes(bytes) => bytes.clone(),
        Payload::Zeros(n) => vec![0; *n as usize],
        Payload::Kernel => {
            let mut k = b"Linux version 6.18.0-rt #1 SMP PREEMPT_RT\n\0IKCFG_ST".to_vec();
            k.extend(gzip(b"CONFIG_PREEMPT_RT=y\n"));
            k.extend(b"IKCFG_ED");
            k.resize(8192, 0x5a);
            k
        }
        Payload::Config => b"CONFIG_EXPERT=y\nCONFIG_PREEMPT_RT=y\n".to_vec(),
        Payload::Tar { names, size } => {
            let mut tar = tar::Builder::new(Vec::new());
            for name in names {
                let mut header = tar::Header::new_gnu();
                header.set_size(u64::from(*size));
                header.set_mode(0o644);
                header.set_cksum();
                let body = std::io::Read::take(std::io::repeat(0), u64::from(*size));
                tar.append_data(&mut header, name, body).unwrap();
            }
            tar.into_inner().unwrap()
        }
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

/// A minimal PE file whose `.linux` section holds `data`.
fn uki(data: &[u8]) -> Vec<u8> {
    let table = 0x80 + 24;
    let mut pe = vec![0u8; 0x200];
    pe[..2].copy_from_slice(b"MZ");
    pe[0x3c..0x40].copy_from_slice(&0x80u32.to_le_bytes());
    pe[0x80..0x84].copy_from_slice(b"PE\0\0");
    pe[0x86..0x88].copy_from_slice(&1u16.to_le_bytes());
    pe[table..table + 6].copy_from_slice(b".linux");
    pe[table + 8..table + 12].copy_from_slice(&(data.len() as u32).to_le_bytes());
    pe[table + 16..table + 20].copy_from_slice(&(data.len() as u32).to_le_bytes());
    pe[table + 20..table + 24].copy_from_slice(&0x200u32.to_le_bytes());
    pe.extend_from_slice(data);
    pe
}

/// A `.deb` (an `ar` archive) whose `data.tar.gz` is `data`.
fn deb(data: &[u8]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    for (name, body) in [("debian-binary", &b"2.0\n"[..]), ("data.tar.gz", data)] {
        out.extend(
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

fn wrap(data: Vec<u8>, layer: Layer) -> Vec<u8> {
    match layer {
        Layer::Gzip => gzip(&data),
        // xz is slow to write: only small inputs get it.
        Layer::Xz if data.len() <= 4 << 20 => {
            let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 0);
            xz.write_all(&data).unwrap();
            xz.finish().unwrap()
        }
        Layer::Xz | Layer::Zstd => zstd::bulk::compress(&data, 1).unwrap(),
        // Only what stays small is repeated (64 copies of a 1 MB stream of bombs is the point).
        Layer::Repeat64 if data.len() <= 1 << 20 => data.repeat(64),
        Layer::Repeat64 => data,
        Layer::Uki => uki(&data),
        Layer::Deb => deb(&data),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_file_reader_ends_within_time_and_memory_bounds(
        payload in payload(),
        layers in proptest::collection::vec(layer(), 0..5),
        damage in proptest::option::of((any::<usize>(), any::<u8>())),
    ) {
        let mut data = build(&payload);
        for layer in &layers {
            data = wrap(data, *layer);
        }
        if let Some((at, byte)) = damage.filter(|_| !data.is_empty()) {
            let len = data.len();
            data[at % len] = byte;
        }
        let commands: [&[&str]; 5] = [
            &["verify", "input"],
            &["verify", "--kernel-config", "input"],
            &["bundle", "--check", "input"],
            &["report", "input"],
            &["lock", "--diff", "input", "input"],
        ];
        for args in commands {
            let run = Test::new()
                .file("input", &data)
                .args(args)
                .within_secs(60)
                .within_memory_mib(1024)
                .run()
                .ignore_stdout();
            let code = run.code();
            let stderr = run.stderr();
            prop_assert!(
                matches!(code, 0..=2) && !stderr.contains("panicked"),
                "{args:?} on {payload:?} in {layers:?}: exit {code}: {stderr}"
            );
        }
    }
}

/// Issue 34 item 9: `doctor` (and the `image` preflight, which shares its reader) read
/// meta-qcom's kas files and their includes with plain reads, so an include that is a FIFO hung
/// it and one of `/dev/zero` exhausted its memory; 5,000 repository URLs started 5,000 probe
/// threads at once and panicked (exit 101) under 1 GiB. Here the includes are a FIFO, a link to
/// `/dev/zero` and a kas file naming 5,000 repositories on a listener whose accept queue is
/// full (each probe waits for its timeout).
#[test]
fn doctor_reads_kas_files_bounded_and_probes_5000_repositories_with_a_pool() {
    let test = Test::new();
    let ci = test.path().join("work/meta-qcom/ci");
    std::fs::create_dir_all(&ci).unwrap();
    // Never accepted: past the first 128 (the queue), connects wait for their timeout.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let board = "header:\n  version: 14\n  includes:\n    - ci/fifo.yml\n    - ci/zero.yml\n    - ci/many.yml\n";
    std::fs::write(ci.join("rb3gen2-core-kit.yml"), board).unwrap();
    assert!(
        std::process::Command::new("mkfifo").arg(ci.join("fifo.yml")).status().unwrap().success()
    );
    std::os::unix::fs::symlink("/dev/zero", ci.join("zero.yml")).unwrap();
    let mut many = String::from("header:\n  version: 14\nrepos:\n");
    for i in 0..5_000 {
        many.push_str(&format!("  r{i}:\n    url: https://127.0.0.1:{port}/r{i}\n"));
    }
    std::fs::write(ci.join("many.yml"), many).unwrap();
    let work = test.path().join("work");
    let run = test
        .args(["doctor", "--machine", "rb3gen2-core-kit", "--meta-qcom-url"])
        .args([format!("https://127.0.0.1:{port}/meta-qcom")])
        .args(["--work-dir".into(), work.into_os_string()])
        .within_secs(60)
        .within_memory_mib(1024)
        .run();
    assert_eq!(run.code(), 2, "{}", run.stderr());
    let stdout = run.stdout();
    // How many problems depends on this host (its user, its disk); the line is doctor's summary.
    let problems = stdout.lines().filter(|l| l.starts_with("problem ")).count();
    assert_eq!(
        run.stderr(),
        format!(
            "warning: {problems} of 10 checks failed for this host (`problem` rows on stdout)\n"
        )
    );
    let repos = stdout.lines().find(|l| l.starts_with("problem  repos")).unwrap_or_else(|| {
        panic!("no repos problem in {stdout}");
    });
    assert!(repos.contains("no answer within 4 s"), "{repos}");
    assert!(repos.ends_with(" more"), "{}", &repos[..repos.len().min(600)]);
    assert!(repos.len() < 4_000, "{} bytes", repos.len());
    drop(listener);
}
