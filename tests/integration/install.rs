//! The three ways docs/install.md gives to install rtbuild, each built here as a user would build
//! it and then run: `cargo install --locked --path .`, the `.deb` of `packaging/build-deb`
//! (cargo-deb, installed by `.ci/setup`), and the static binary of `packaging/build-static`, run in
//! an empty root holding nothing but itself. Each runs `rtbuild --version` and `rtbuild machines`.
//!
//! One test, the three one after the other, each reusing the build before it: `cargo install`
//! compiles rtbuild into `target/release` (several minutes on a 2-core machine),
//! `packaging/build-deb` finds that build fresh (the test fails if it compiles anything again),
//! and `packaging/build-static` compiles at most the rtbuild binary again, linked statically (the
//! test fails if it compiles anything else). As separate tests they would wait on each other: cargo
//! locks `target/release` for the whole of a build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::harness::project_root;

/// `program` as a user runs it: without `RUSTC_BOOTSTRAP`, which `.ci/test` gives the test
/// binaries (for `--report-time`) and which would let a build use unstable compiler features no
/// user's build may.
fn as_user(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    command.env_remove("RUSTC_BOOTSTRAP");
    command
}

/// The cargo running the tests (`$CARGO`), else the one on PATH.
fn cargo() -> Command {
    as_user(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn ok(what: &str, output: Output) -> Output {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `rtbuild --version` and `rtbuild machines` from `argv` (the binary, or a command that runs it),
/// with nothing from this environment but PATH.
fn assert_runs(what: &str, argv: &[&std::ffi::OsStr]) {
    let run = |args: &[&str]| {
        let output = Command::new(argv[0])
            .args(&argv[1..])
            .args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LANG", "C.UTF-8")
            .output()
            .unwrap_or_else(|e| panic!("{what}: cannot run {argv:?}: {e}"));
        ok(&format!("{what}: rtbuild {}", args.join(" ")), output)
    };
    let version = run(&["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("rtbuild {}", env!("CARGO_PKG_VERSION")),
        "{what}"
    );
    let machines = String::from_utf8_lossy(&run(&["machines"]).stdout).to_string();
    assert!(machines.starts_with("MACHINE "), "{what}: {machines}");
    assert!(
        machines.contains("rb3gen2-core-kit") && machines.contains("iq-8275-evk"),
        "{what}: {machines}"
    );
}

/// The three forms, each proved on its own: `cargo install` first (it compiles rtbuild, unless
/// `target/release` is already fresh), then `packaging/build-deb`, whose `cargo build --release`
/// finds that build fresh, then the static binary of `packaging/build-static`, which links that
/// build's parts into a static binary.
#[test]
fn cargo_install_the_deb_and_the_static_binary_each_give_a_working_rtbuild() {
    cargo_install_locked_from_the_source_folder_gives_a_working_rtbuild();
    deb_from_cargo_deb_carries_the_binary_completions_and_man_pages();
    static_binary_runs_in_an_empty_root();
}

fn cargo_install_locked_from_the_source_folder_gives_a_working_rtbuild() {
    let root = tempfile::tempdir().expect("tempdir");
    ok(
        "cargo install --locked --path .",
        cargo()
            .args(["install", "--locked", "--offline", "--quiet", "--path"])
            .arg(project_root())
            .arg("--root")
            .arg(root.path())
            .arg("--target-dir")
            .arg(project_root().join("target"))
            .output()
            .expect("run cargo"),
    );
    let bin = root.path().join("bin/rtbuild");
    assert_runs("cargo install", &[bin.as_os_str()]);
}

/// The paths of `dpkg-deb -c`, without the leading `.`.
fn deb_files(deb: &Path) -> Vec<String> {
    let listing =
        ok("dpkg-deb -c", Command::new("dpkg-deb").arg("-c").arg(deb).output().expect("dpkg-deb"));
    String::from_utf8_lossy(&listing.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(|p| p.trim_start_matches('.').to_string())
        .collect()
}

fn deb_from_cargo_deb_carries_the_binary_completions_and_man_pages() {
    let out = tempfile::tempdir().expect("tempdir");
    let deb = out.path().join("rtbuild.deb");
    let built = as_user("bash")
        .arg(project_root().join("packaging/build-deb"))
        .arg("--output")
        .arg(&deb)
        .output()
        .expect("run packaging/build-deb");
    assert!(
        built.status.success(),
        "packaging/build-deb failed; .ci/setup installs cargo-deb 3.8.0:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    // The build `cargo install` just made is the one packaged: cargo compiled nothing again.
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(
        !stderr.lines().any(|l| l.trim_start().starts_with("Compiling ")),
        "packaging/build-deb compiled again after cargo install built target/release:\n{stderr}"
    );
    let files = deb_files(&deb);
    for wanted in [
        "/usr/bin/rtbuild",
        "/usr/share/bash-completion/completions/rtbuild",
        "/usr/share/zsh/vendor-completions/_rtbuild",
        "/usr/share/fish/vendor_completions.d/rtbuild.fish",
        "/usr/share/man/man1/rtbuild.1",
        "/usr/share/man/man1/rtbuild-image.1",
        "/usr/share/man/man1/rtbuild-history-add.1",
    ] {
        assert!(files.iter().any(|f| f == wanted), "{wanted} not in the .deb: {files:#?}");
    }
    let fields = ok(
        "dpkg-deb -f",
        Command::new("dpkg-deb")
            .arg("-f")
            .arg(&deb)
            .args(["Package", "Version"])
            .output()
            .expect("dpkg-deb"),
    );
    assert_eq!(
        String::from_utf8_lossy(&fields.stdout),
        format!("Package: rtbuild\nVersion: {}-1\n", env!("CARGO_PKG_VERSION"))
    );
    // Unpacked as dpkg would install it: the binary runs, the completion and a page are real.
    let tree = tempfile::tempdir().expect("tempdir");
    ok(
        "dpkg-deb -x",
        Command::new("dpkg-deb").arg("-x").arg(&deb).arg(tree.path()).output().expect("dpkg-deb"),
    );
    assert_runs(".deb", &[tree.path().join("usr/bin/rtbuild").as_os_str()]);
    let bash =
        std::fs::read_to_string(tree.path().join("usr/share/bash-completion/completions/rtbuild"))
            .expect("bash completion");
    assert!(bash.contains("complete -F") && bash.contains("rtbuild"), "{bash}");
    let page = std::fs::read_to_string(tree.path().join("usr/share/man/man1/rtbuild-image.1"))
        .expect("page");
    // clap_mangen writes the name as it is (`rtbuild-image`); older roff writers escaped the dash.
    let titled = [".TH rtbuild-image 1", ".TH rtbuild\\-image 1"].iter().any(|t| page.contains(t));
    assert!(titled, "{}", &page[..200.min(page.len())]);
}

/// The static binary: no program interpreter and no shared library, and it runs in a root that
/// holds only itself and an empty /proc (a user namespace maps root, so no privilege is needed).
fn static_binary_runs_in_an_empty_root() {
    let built = ok(
        "packaging/build-static",
        as_user("bash")
            .arg(project_root().join("packaging/build-static"))
            .output()
            .expect("run build-static"),
    );
    // At most the binary is compiled again (nothing when an earlier run linked it already):
    // every dependency and the rtbuild library are the release build's.
    let stderr = String::from_utf8_lossy(&built.stderr);
    let compiled: Vec<&str> =
        stderr.lines().map(str::trim_start).filter(|l| l.starts_with("Compiling ")).collect();
    let binary =
        format!("Compiling rtbuild v{} ({})", env!("CARGO_PKG_VERSION"), project_root().display());
    assert!(
        compiled.len() <= 1 && compiled.iter().all(|l| *l == binary),
        "packaging/build-static compiled more than the rtbuild binary:\n{stderr}"
    );
    let relative = String::from_utf8_lossy(&built.stdout).trim().to_string();
    assert_eq!(relative, "target/static/rtbuild");
    let bin: PathBuf = project_root().join(relative);
    let headers = ok(
        "readelf",
        Command::new("readelf")
            .args(["--program-headers", "--dynamic"])
            .arg(&bin)
            .output()
            .expect("readelf"),
    );
    let headers = String::from_utf8_lossy(&headers.stdout);
    assert!(!headers.contains("INTERP"), "a program interpreter: not static:\n{headers}");
    assert!(!headers.contains("(NEEDED)"), "shared libraries needed:\n{headers}");

    let root = tempfile::tempdir().expect("tempdir");
    std::fs::copy(&bin, root.path().join("rtbuild")).expect("copy binary");
    std::fs::create_dir(root.path().join("proc")).expect("proc");
    let entries: Vec<_> =
        std::fs::read_dir(root.path()).expect("root").map(|e| e.expect("e").file_name()).collect();
    assert_eq!(entries.len(), 2, "the root holds more than the binary and /proc: {entries:?}");
    let unshare = Path::new("/usr/bin/unshare");
    let root_arg = format!("--root={}", root.path().display());
    assert_runs(
        "static, empty root",
        &[
            unshare.as_os_str(),
            "--user".as_ref(),
            "--map-root-user".as_ref(),
            "--mount".as_ref(),
            "--pid".as_ref(),
            "--fork".as_ref(),
            "--mount-proc".as_ref(),
            root_arg.as_ref(),
            "/rtbuild".as_ref(),
        ],
    );
}
