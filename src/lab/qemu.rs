//! The board-less job of `rtbuild lava --deploy qemu`: LAVA's `tmpfs` deploy downloads a
//! kernel, an optional initrd and an ext4 root file system image, and its `qemu` boot starts
//! them (LAVA adds its test overlay as a second disk). The test action is the board jobs' own.
//! Under emulation latencies mean nothing: the job proves the mechanics (PREEMPT_RT, isolation,
//! every test and scenario reported), not the numbers.
//!
//! Every value reaching QEMU's command line (LAVA joins `image_arg`s with spaces and splits
//! the line again, shell-like, without a shell) is a checked word: the downloaded file names
//! are LAVA names (no `,` that would add `-drive` options, no quote or space), the kernel
//! arguments are words of a small character set inside one `-append "…"`.

use std::collections::BTreeMap;

use crate::catalog::lava_name;
use crate::formats::lava_job::{AutoLogin, Boot, ContextValue, Deploy, Minutes, QemuImage};

/// Bad `--deploy qemu` input: the files' URLs and the kernel arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum QemuError {
    #[error(
        "bad {flag} `{url}`: {why}; pass a file:///ABSOLUTE/PATH on the dispatcher or an http(s) URL, whose file name is letters, digits, `-`, `_`, `.`"
    )]
    ImageUrl { flag: &'static str, url: String, why: &'static str },
    #[error(
        "bad --kernel-args: {0}; pass kernel arguments made of letters, digits and `-_.,=:/+@`, separated by spaces"
    )]
    KernelArgs(String),
}

/// Minutes to download (or copy) the files, and to boot to the prompt under emulation.
pub(crate) const DEPLOY_MIN: u64 = 10;
pub(crate) const BOOT_MIN: u64 = 10;

/// A file LAVA downloads for QEMU: `file:///ABSOLUTE/PATH` on the dispatcher or an
/// `http(s)://HOST/PATH` URL, whose file name is a LAVA name. A `.gz`, `.xz`, `.zst` or
/// `.bz2` file is decompressed by LAVA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImageUrl {
    pub url: String,
    pub compression: Option<&'static str>,
}

impl ImageUrl {
    pub(crate) fn parse(flag: &'static str, text: &str) -> Result<ImageUrl, QemuError> {
        let bad = |why| QemuError::ImageUrl { flag, url: text.chars().take(80).collect(), why };
        let path = if let Some(path) = text.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(bad("a file:// URL needs an absolute path (file:///…)"));
            }
            // A path LAVA reads as it is: no percent-encoding, nothing to quote.
            if path.chars().any(|c| !(c.is_ascii_alphanumeric() || "-._~+/".contains(c))) {
                return Err(bad(
                    "its path holds characters other than letters, digits and `-._~+/`",
                ));
            }
            if path.split('/').any(|p| p == "..") {
                return Err(bad("its path holds `..`"));
            }
            path
        } else {
            let rest = text
                .strip_prefix("https://")
                .or_else(|| text.strip_prefix("http://"))
                .ok_or_else(|| bad("it is not a file://, http:// or https:// URL"))?;
            let allowed =
                |c: char| c.is_ascii_alphanumeric() || "-._~:/?#[]@!&()*+,;=%".contains(c);
            if text.chars().any(|c| !allowed(c)) {
                return Err(bad("it contains a character URLs must percent-encode"));
            }
            let (host, path) = rest.split_once('/').ok_or_else(|| bad("it names no file"))?;
            if host.is_empty() || host.starts_with(':') {
                return Err(bad("it names no host"));
            }
            path.split(['?', '#']).next().unwrap_or_default()
        };
        let file = path.rsplit('/').next().unwrap_or_default();
        if file.is_empty() || file == "." || file == ".." {
            return Err(bad("it names no file"));
        }
        if !lava_name(file) {
            return Err(bad(
                "its file name holds characters other than letters, digits, `-`, `_` and `.`",
            ));
        }
        let compression = [(".gz", "gz"), (".xz", "xz"), (".zst", "zstd"), (".bz2", "bz2")]
            .iter()
            .find(|(ext, _)| file.len() > ext.len() && file.ends_with(ext))
            .map(|(_, kind)| *kind);
        Ok(ImageUrl { url: text.to_string(), compression })
    }

    fn image(&self, image_arg: String) -> QemuImage {
        QemuImage {
            url: self.url.clone(),
            image_arg,
            compression: self.compression.map(str::to_string),
        }
    }
}

/// The kernel command line: `--kernel-args` words, then the RT arguments of the plan.
pub(crate) fn kernel_args(given: &str, rt: &[String]) -> Result<Vec<String>, QemuError> {
    if let Some(c) = given.chars().find(|c| *c != ' ' && !word_char(*c)) {
        return Err(QemuError::KernelArgs(format!(
            "it holds `{}`",
            crate::text::printable(&c.to_string())
        )));
    }
    let given: Vec<&str> = given.split(' ').filter(|w| !w.is_empty()).collect();
    if given.is_empty() {
        return Err(QemuError::KernelArgs("it is empty".into()));
    }
    let words: Vec<String> =
        given.into_iter().chain(rt.iter().map(String::as_str)).map(str::to_string).collect();
    // The plan's RT arguments are checked CPU lists and names; check them all the same.
    if let Some(w) = words.iter().find(|w| w.len() > 200 || !w.chars().all(word_char)) {
        return Err(QemuError::KernelArgs(format!(
            "`{}` is not a kernel argument",
            crate::text::printable(w)
        )));
    }
    Ok(words)
}

fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.,=:/+@".contains(c)
}

/// The QEMU guest's architecture (LAVA's job context `arch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arch {
    Amd64,
    Arm64,
}

/// An `--arch` that names no QEMU architecture rtbuild knows.
#[derive(Debug, thiserror::Error)]
#[error("unknown --arch `{}`; use amd64 or arm64", crate::text::printable(.text))]
pub(crate) struct UnknownArch {
    pub text: String,
}

impl std::str::FromStr for Arch {
    type Err = UnknownArch;
    fn from_str(text: &str) -> Result<Arch, UnknownArch> {
        match text {
            "amd64" => Ok(Arch::Amd64),
            "arm64" => Ok(Arch::Arm64),
            _ => Err(UnknownArch { text: text.to_string() }),
        }
    }
}

impl Arch {
    fn name(self) -> &'static str {
        match self {
            Arch::Amd64 => "amd64",
            Arch::Arm64 => "arm64",
        }
    }

    /// The kernel arguments without `--kernel-args`: the serial console QEMU's machine has (the
    /// PC's 16550 is ttyS0, `virt`'s PL011 ttyAMA0) and the virtio root disk.
    pub(crate) fn default_kernel_args(self) -> &'static str {
        match self {
            Arch::Amd64 => "console=ttyS0,115200 root=/dev/vda rw",
            Arch::Arm64 => "console=ttyAMA0,115200 root=/dev/vda rw rootwait",
        }
    }

    /// The guest's memory (LAVA's qemu device type gives 512 MB unless the job asks): the
    /// arm64 guest has the boards' 8 CPUs, each housekeeping one with a load worker.
    fn memory_mb(self) -> u64 {
        match self {
            Arch::Amd64 => 1024,
            Arch::Arm64 => 2048,
        }
    }
}

/// What a QEMU job boots, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QemuImages {
    pub kernel: ImageUrl,
    pub initrd: Option<ImageUrl>,
    /// An ext4 image: the guest's `/dev/vda`.
    pub rootfs: ImageUrl,
    pub kernel_args: Vec<String>,
    pub arch: Arch,
    /// Virtual CPUs: the machine's.
    pub cpus: u32,
    /// Log in on the console (false: the console is already a root shell).
    pub login: bool,
}

impl QemuImages {
    /// `tmpfs` deploy: the kernel with its command line, the initrd, the root disk.
    pub(crate) fn deploy(&self) -> Deploy {
        let append = self.kernel_args.join(" ");
        let mut images = BTreeMap::from([
            (
                "kernel".to_string(),
                self.kernel.image(format!("-kernel {{kernel}} -append \"{append}\"")),
            ),
            (
                "rootfs".to_string(),
                self.rootfs.image("-drive format=raw,file={rootfs},if=virtio".to_string()),
            ),
        ]);
        if let Some(initrd) = &self.initrd {
            images.insert("initrd".to_string(), initrd.image("-initrd {initrd}".to_string()));
        }
        Deploy::Tmpfs { timeout: Minutes::of(DEPLOY_MIN), images }
    }

    /// `qemu` boot from tmpfs, waiting for `prompts` (after `login`, when there is one).
    pub(crate) fn boot(&self, login: AutoLogin, prompts: &[String]) -> Boot {
        Boot::Qemu {
            media: "tmpfs".to_string(),
            timeout: Minutes::of(BOOT_MIN),
            auto_login: self.login.then_some(login),
            prompts: prompts.to_vec(),
        }
    }

    /// The job context a LAVA qemu device type reads: the architecture, the memory and the
    /// CPU count (`-smp`) the layout needs. On arm64 also what the device type's defaults get
    /// wrong for these boards: `-cpu max` (its default, cortex-a57, is an ARMv8.0 core), the
    /// `virt` machine with a GICv3 (as the Qualcomm SoCs have; `virt`'s default GICv2 stops at
    /// 8 CPUs), and LAVA's test overlay on virtio (its default, IDE, does not exist on `virt`).
    pub(crate) fn context(&self) -> BTreeMap<String, ContextValue> {
        let text = |s: &str| ContextValue::Text(s.to_string());
        let mut context = BTreeMap::from([
            ("arch".to_string(), text(self.arch.name())),
            ("memory".to_string(), ContextValue::Number(self.arch.memory_mb())),
            ("extra_options".to_string(), ContextValue::List(vec![format!("-smp {}", self.cpus)])),
        ]);
        if self.arch == Arch::Arm64 {
            context.insert("cpu".to_string(), text("max"));
            context.insert("machine".to_string(), text("virt,gic-version=3"));
            context.insert("guestfs_interface".to_string(), text("virtio"));
        }
        context
    }

    /// `rtbuild.*` metadata naming the files.
    pub(crate) fn metadata(&self) -> Vec<(&'static str, ContextValue)> {
        let text = |s: &str| ContextValue::Text(s.to_string());
        let mut out = vec![("rtbuild.kernel", text(&self.kernel.url))];
        if let Some(initrd) = &self.initrd {
            out.push(("rtbuild.initrd", text(&initrd.url)));
        }
        out.push(("rtbuild.rootfs", text(&self.rootfs.url)));
        out.push(("rtbuild.kernel-args", text(&self.kernel_args.join(" "))));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_urls() {
        let ok = ImageUrl::parse("--rootfs-url", "file:///srv/lab/rootfs.ext4").unwrap();
        assert_eq!(ok.compression, None);
        let gz =
            ImageUrl::parse("--rootfs-url", "https://h:8080/x/rootfs.ext4.gz?sig=a%2F").unwrap();
        assert_eq!(gz.compression, Some("gz"));
        for (bad, why) in [
            ("/srv/rootfs.ext4", "not a file://"),
            ("ftp://h/rootfs.ext4", "not a file://"),
            ("file://srv/rootfs.ext4", "absolute path"),
            ("file:///srv/a b.ext4", "characters other than"),
            ("file:///srv/$(reboot).ext4", "characters other than"),
            ("file:///srv/../etc/shadow", "`..`"),
            ("file:///srv/", "no file"),
            ("https://h/a,if=none.ext4", "file name holds"),
            ("https://h/a\".ext4", "percent-encode"),
            ("https:///rootfs.ext4", "no host"),
        ] {
            let err = ImageUrl::parse("--rootfs-url", bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.starts_with("bad --rootfs-url `"), "{err}");
        }
    }

    #[test]
    fn kernel_args_are_plain_words_and_end_with_the_rt_arguments() {
        let rt = vec!["isolcpus=1".to_string(), "nohz_full=1".to_string()];
        assert_eq!(
            kernel_args(" console=ttyS0,115200  root=/dev/vda rw", &rt).unwrap(),
            ["console=ttyS0,115200", "root=/dev/vda", "rw", "isolcpus=1", "nohz_full=1"]
        );
        for bad in ["rw\" -device foo \"", "init=$(reboot)", "a\tb", "x'y", "a\\b"] {
            let err = kernel_args(bad, &rt).unwrap_err().to_string();
            assert!(err.starts_with("bad --kernel-args: it holds `"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_deploy_puts_each_file_on_qemus_command_line_once() {
        let images = QemuImages {
            kernel: ImageUrl::parse("--kernel-url", "file:///l/vmlinuz").unwrap(),
            initrd: Some(ImageUrl::parse("--initrd-url", "file:///l/initrd.img").unwrap()),
            rootfs: ImageUrl::parse("--rootfs-url", "file:///l/rootfs.ext4.xz").unwrap(),
            kernel_args: vec!["root=/dev/vda".into(), "isolcpus=1".into()],
            arch: Arch::Amd64,
            cpus: 2,
            login: false,
        };
        let Deploy::Tmpfs { images: files, .. } = images.deploy() else { panic!() };
        assert_eq!(
            files["kernel"].image_arg,
            "-kernel {kernel} -append \"root=/dev/vda isolcpus=1\""
        );
        assert_eq!(files["initrd"].image_arg, "-initrd {initrd}");
        assert_eq!(files["rootfs"].image_arg, "-drive format=raw,file={rootfs},if=virtio");
        assert_eq!(files["rootfs"].compression.as_deref(), Some("xz"));
        assert_eq!(images.context()["extra_options"], ContextValue::List(vec!["-smp 2".into()]));
        assert_eq!(images.context().len(), 3, "amd64: LAVA's own defaults");
    }

    #[test]
    fn an_arm64_guest_gets_the_boards_cpu_machine_and_a_virtio_overlay() {
        let text = |s: &str| ContextValue::Text(s.to_string());
        let images = QemuImages {
            kernel: ImageUrl::parse("--kernel-url", "file:///l/vmlinuz").unwrap(),
            initrd: None,
            rootfs: ImageUrl::parse("--rootfs-url", "file:///l/rootfs.ext4").unwrap(),
            kernel_args: vec!["root=/dev/vda".into()],
            arch: Arch::Arm64,
            cpus: 8,
            login: false,
        };
        let context = images.context();
        assert_eq!(context["arch"], text("arm64"));
        assert_eq!(context["cpu"], text("max"));
        assert_eq!(context["machine"], text("virt,gic-version=3"));
        assert_eq!(context["guestfs_interface"], text("virtio"));
        assert_eq!(context["memory"], ContextValue::Number(2048));
        assert_eq!(context["extra_options"], ContextValue::List(vec!["-smp 8".into()]));
        assert!(Arch::Arm64.default_kernel_args().starts_with("console=ttyAMA0,115200 "));
        assert!(Arch::Amd64.default_kernel_args().starts_with("console=ttyS0,115200 "));
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever is typed, an accepted URL or kernel command line holds nothing that QEMU's
        /// command line (split again by LAVA) or a shell would read as more than one word.
        #[test]
        fn accepted_values_hold_no_quote_space_or_shell_character(v in any::<String>()) {
            let special = ['"', '\'', ' ', '\t', '\n', '\\', '$', '`', '|', '<', '>'];
            match ImageUrl::parse("--rootfs-url", &v) {
                Ok(url) => prop_assert!(!url.url.contains(special)),
                Err(e) => prop_assert!(e.to_string().starts_with("bad --rootfs-url `")),
            }
            match kernel_args(&v, &[]) {
                Ok(words) => {
                    prop_assert!(words.iter().all(|w| !w.is_empty() && w.chars().all(word_char)));
                }
                Err(e) => prop_assert!(e.to_string().starts_with("bad --kernel-args: ")),
            }
        }
    }
}
