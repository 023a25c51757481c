//! A project folder whose `bitbake` is a FAKE that records its calls and prints real-looking
//! output.

use std::path::PathBuf;

use crate::support::fixtures::{Bitbake, Fixtures};
use crate::support::harness::{Test, Unprivileged, venv};

/// The FAKE bitbake. `@CONTROL@` is the folder where it records what it saw and reads its
/// mode (`ok`, `fail`, `sleep`, or `drop-rt`: a kernel config without PREEMPT_RT): kas gives BitBake a fresh environment, so a file is the only
/// way in.
pub(crate) const FAKE_BITBAKE: &str = r#"#!/bin/sh
# FAKE bitbake for rtbuild's tests: not BitBake. Records argv, prints BitBake-shaped output.
control='@CONTROL@'
echo "$*" >> "$control/argv"
pwd > "$control/cwd"
env | sort > "$control/env"
echo $$ >> "$control/pids"
machine=$(sed -n 's/^MACHINE ??= "\(.*\)"$/\1/p' conf/local.conf)
env | sort > "$control/env.$machine"
mode=$(cat "$control/mode.$machine" 2>/dev/null || cat "$control/mode" 2>/dev/null || echo ok)
for image; do :; done
arch=$(echo "$machine" | tr - _)
kernel="/layers/meta-qcom/recipes-kernel/linux/linux-qcom-rt_6.18.bb"
work="$PWD/tmp/work/$arch-qcom-linux/linux-qcom-rt/6.18.37"
echo "Loading cache...done."
echo "Parsing recipes...done."
echo "Parsing of 12 .bb files complete (0 cached, 12 parsed). 20 targets, 0 skipped, 0 masked, 0 errors."
echo "NOTE: Resolving any missing task queue dependencies"
echo "Sstate summary: Wanted 10 Local 8 Mirrors 0 Missed 2 Current 0 (80% match, 100% complete)"
echo "NOTE: Executing Tasks"
echo "NOTE: Running setscene task 1 of 10 (/layers/oe-core/meta/recipes-core/zlib/zlib_1.3.1.bb:do_populate_sysroot_setscene)"
echo "NOTE: Running task 11 of 14 ($kernel:do_compile)"
echo "NOTE: recipe linux-qcom-rt-6.18.37-r0: task do_compile: Started"
case "$mode" in
sleep)
    sleep 300 &
    echo $! >> "$control/pids"
    echo started > "$control/sleeping"
    wait
    exit 1
    ;;
fail)
    mkdir -p "$work/temp"
    printf 'make -C arch/arm64\n| kernel/sched/core.c:42: error: expected ; before }\n| make: *** [Makefile:1234] Error 2\n' > "$work/temp/log.do_compile.4242"
    echo "ERROR: linux-qcom-rt-6.18.37-r0 do_compile: oe_runmake failed" >&2
    echo "ERROR: Logfile of failure stored in: $work/temp/log.do_compile.4242" >&2
    echo "NOTE: recipe linux-qcom-rt-6.18.37-r0: task do_compile: Failed"
    echo "ERROR: Task ($kernel:do_compile) failed with exit code '1'" >&2
    echo "NOTE: Tasks Summary: Attempted 12 tasks of which 10 didn't need to be rerun and 1 failed."
    echo ""
    echo "Summary: 1 task failed:"
    echo "  $kernel:do_compile"
    echo "    log: $work/temp/log.do_compile.4242"
    echo "Summary: There were 2 ERROR messages, returning a non-zero exit code."
    exit 1
    ;;
esac
# The kernel .config: what merge_config.sh would make of the generated layer's fragments.
mkdir -p "$work/build"
# The generated layer, where kas's bblayers.conf puts it (`${TOPDIR}/…` is the build folder).
layer=$(grep -o '[^ "]*/meta-rtbuild' conf/bblayers.conf | head -n 1 | sed "s|\${TOPDIR}|$PWD|")
cat "${layer:-../meta-rtbuild}"/recipes-kernel/linux/*/*.cfg > "$work/build/.config"
if [ "$mode" = drop-rt ]; then
    sed -i 's/^CONFIG_PREEMPT_RT=y$/# CONFIG_PREEMPT_RT is not set/' "$work/build/.config"
fi
deploy="$PWD/tmp/deploy/images/$machine"
mkdir -p "$deploy"
printf 'busybox armv8a 1.37.0\nrt-tests armv8a 2.8\nstress-ng armv8a 0.18.06\nrtbuild-tune all 1.0\n' > "$deploy/$image-$machine.rootfs.manifest"
stamp=20261129211402
flash="$image-$machine.rootfs-$stamp.qcomflash"
mkdir -p "$deploy/$flash"
# A test may hand in a real file system image (a LAVA run writes its overlay into it).
if [ -f "@CONTROL@/rootfs.img" ]; then
    cp "@CONTROL@/rootfs.img" "$deploy/$flash/rootfs.img"
else
    echo fake > "$deploy/$flash/rootfs.img"
fi
ln -sfn "$flash" "$deploy/$image-$machine.rootfs.qcomflash"
(cd "$deploy" && tar -czf "$flash.tar.gz" "$flash")
# What the tests hand in for the release (an SBOM and VEX written by oe-core's SPDX model, a
# kernel image), deployed as BitBake does: timestamped files and IMAGE_LINK_NAME links.
ln -sfn "$flash.tar.gz" "$deploy/$image-$machine.rootfs.qcomflash.tar.gz"
for doc in spdx.json sbom-cve-check.spdx.json; do
    if [ -f "@CONTROL@/$doc" ]; then
        cp "@CONTROL@/$doc" "$deploy/$image-$machine.rootfs-$stamp.$doc"
        ln -sfn "$image-$machine.rootfs-$stamp.$doc" "$deploy/$image-$machine.rootfs.$doc"
    fi
done
if [ -f "@CONTROL@/Image" ]; then
    cp "@CONTROL@/Image" "$deploy/Image-$stamp.bin"
    ln -sfn "Image-$stamp.bin" "$deploy/Image"
fi
echo "NOTE: recipe linux-qcom-rt-6.18.37-r0: task do_compile: Succeeded"
echo "NOTE: Running noexec task 14 of 14 (/layers/meta-qcom-distro/recipes-products/images/$image.bb:do_build)"
echo "NOTE: Tasks Summary: Attempted 14 tasks of which 10 didn't need to be rerun and all succeeded."
"#;

/// A project folder with fixture repos whose `bitbake` is the FAKE above.
pub(crate) struct Project {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub control: PathBuf,
    pub fixtures: Fixtures,
}

impl Project {
    pub(crate) fn new(mode: &str) -> Project {
        let dir = tempfile::Builder::new().prefix("rtbuild-image").tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let control = root.join("control");
        std::fs::create_dir_all(&control).unwrap();
        std::fs::write(control.join("mode"), mode).unwrap();
        let script = FAKE_BITBAKE.replace("@CONTROL@", &control.to_string_lossy());
        let fixtures = Fixtures::create(&root.join("repos"), Bitbake::Fake(&script));
        std::fs::create_dir_all(root.join("proj")).unwrap();
        // kas and BitBake run as the unprivileged test user (BitBake refuses root, and so does
        // rtbuild's preflight), who must own the repos, the project and the control folder.
        Unprivileged::get().own(&root);
        Project { _dir: dir, root, control, fixtures }
    }

    pub(crate) fn out(&self, machine: &str) -> PathBuf {
        self.root.join("proj/rtbuild").join(machine)
    }

    /// `rtbuild image` (plus `extra`) for `machine` in the project folder.
    pub(crate) fn image(&self, machine: &str, extra: &[&str]) -> Test {
        let mut args: Vec<String> = vec![
            "image".into(),
            "--plain".into(),
            "--machine".into(),
            machine.into(),
            "--meta-qcom-url".into(),
            self.fixtures.url("meta-qcom"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        Test::new()
            .unprivileged()
            .cwd(self.root.join("proj"))
            .path_prepend(venv().join("bin"))
            .args(args)
    }

    /// A redactor for `stderr_redacted_is` of a build in this project: the project folder is
    /// written `[ROOT]` and the test venv `[VENV]`; the figures a build measures (the `[00:00:01]`
    /// clock of a progress line, the time after `Built … in` and `failed after`) are `[CLOCK]`
    /// and `[TIME]`; and the doctor's warning that this host's disk may be too small for a first
    /// real build (a fact of the machine the test runs on, not of the command) is left out.
    /// Every other byte stays as rtbuild wrote it.
    pub(crate) fn build_redacted(&self) -> impl Fn(&str) -> String {
        let root = self.root.display().to_string();
        let venv = venv().display().to_string();
        move |stderr: &str| {
            let mut out = String::new();
            for line in stderr.split_inclusive('\n') {
                if line.starts_with(
                    "warning: a first qcom-multimedia-image build may run out of space: ",
                ) {
                    continue;
                }
                out.push_str(&redact_build_figures(line));
            }
            out.replace(&root, "[ROOT]").replace(&venv, "[VENV]")
        }
    }

    pub(crate) fn recorded(&self, name: &str) -> String {
        std::fs::read_to_string(self.control.join(name)).unwrap_or_default()
    }
}

/// `line` with a progress clock (`  [00:00:01] …`) written `[CLOCK]` and the duration of
/// `Built … in 1.5s` or `failed after 4m 05s (…)` written `[TIME]`.
fn redact_build_figures(line: &str) -> String {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let clock = rest.get(..10).filter(|c| {
        let b = c.as_bytes();
        b[0] == b'['
            && b[3] == b':'
            && b[6] == b':'
            && b[9] == b']'
            && [1, 2, 4, 5, 7, 8].iter().all(|&i| b[i].is_ascii_digit())
    });
    if clock.is_some() {
        return format!("{}[CLOCK]{}", &line[..indent], &rest[10..]);
    }
    if rest.starts_with("Built ") {
        if let Some((head, _)) = line.rsplit_once(" in ") {
            return format!("{head} in [TIME]\n");
        }
    }
    if let Some((head, tail)) = line.split_once(" failed after ") {
        if line.starts_with("error: build of ") {
            let after = tail.find(" (").map_or("\n", |at| &tail[at..]);
            return format!("{head} failed after [TIME]{after}");
        }
    }
    line.to_string()
}

/// What `rtbuild generate` writes to stderr when it creates a layer from nothing: the
/// `Generating` line for `heading` (`rb3gen2-core-kit (RT CPUs 7, …)`), one `Created` line per
/// file in byte order (the kas files of `machine`, the layer's, and `extra` layer files such as
/// a fragment), and the count into `out`.
pub(crate) fn generated(heading: &str, machine: &str, out: &str, extra: &[&str]) -> String {
    let mut files: Vec<String> = [
        "meta-rtbuild/conf/layer.conf",
        "meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/rtbuild-rt.cfg",
        "meta-rtbuild/recipes-kernel/linux/linux-qcom-rt_6.18.bbappend",
        "meta-rtbuild/recipes-rt/rtbuild-tune/files/rtbuild-tune.service",
        "meta-rtbuild/recipes-rt/rtbuild-tune/files/rtbuild-tune.sh",
        "meta-rtbuild/recipes-rt/rtbuild-tune/rtbuild-tune_1.0.bb",
        "rtbuild-plan.json",
    ]
    .iter()
    .chain(extra)
    .map(|f| f.to_string())
    .chain([format!("{machine}-rt.lock.yml"), format!("{machine}-rt.yml")])
    .collect();
    files.sort();
    let mut text = format!("  Generating {heading}\n");
    for file in &files {
        text += &format!("     Created {file}\n");
    }
    text + &format!("   Generated {out}: {} new, 0 updated, 0 removed, 0 unchanged\n", files.len())
}

/// What `image` writes before it generates, on a first run: what kas checks out (the fixture
/// meta-qcom at the default branch) and where the checkout stays, `work`'s `meta-qcom` (through
/// [`Project::build_redacted`]). No temporary folder: it is gone when `image` ends.
pub(crate) fn checking_out(work: &str) -> String {
    format!(
        "Checking out meta-qcom file://[ROOT]/repos/meta-qcom (branch wrynose) into {work}/meta-qcom\n"
    )
}

/// What `image` (or a `matrix` cell) writes from running kas to the verify of a build of
/// `machine` that succeeds, generated into `out` and built in `build`, through
/// [`Project::build_redacted`].
pub(crate) fn built(machine: &str, out: &str, build: &str) -> String {
    build_started(machine, out, build) + &build_succeeded(machine, out, build)
}

/// What a build of `machine` writes from running kas up to the fake BitBake's kernel compile,
/// whether the build then succeeds or fails.
pub(crate) fn build_started(machine: &str, out: &str, build: &str) -> String {
    format!(
        "     Running [VENV]/bin/kas build {out}/{machine}-rt.yml:{out}/caches.yml
note: full log: {build}/rtbuild-image.log
  [CLOCK] {machine} parsed 12 recipes
  [CLOCK] {machine} sstate summary: 10 wanted, 8 local, 0 mirrors, 2 missed (80% match)
  [CLOCK] {machine} setscene 1/10 zlib_1.3.1:do_populate_sysroot_setscene
  [CLOCK] {machine} task 11/14 linux-qcom-rt_6.18:do_compile
"
    )
}

/// What a build of `machine` that succeeds writes after the kernel compile: the last task, the
/// build's summary, the image it made and the verify of it.
pub(crate) fn build_succeeded(machine: &str, out: &str, build: &str) -> String {
    let images = format!("{build}/tmp/deploy/images/{machine}");
    format!(
        "  [CLOCK] {machine} task 14/14 qcom-multimedia-image:do_build
       Built qcom-multimedia-image for {machine} in [TIME]
             14 tasks attempted, 10 reused without running
             sstate: 80% match (10 wanted, 8 local, 0 from mirrors, 2 missed)
       Image qcomflash folder {images}/qcom-multimedia-image-{machine}.rootfs.qcomflash
             tarball {images}/qcom-multimedia-image-{machine}.rootfs.qcomflash.tar.gz
             deploy folder {images}
         Log {build}/rtbuild-image.log
    Verified 8 checks passed ({out}/verify.json)
"
    )
}
