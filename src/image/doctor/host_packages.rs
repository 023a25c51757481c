//! The distribution packages a Yocto build host needs, for `rtbuild setup --host` and for the
//! fixes `doctor` prints. The lists follow the Yocto Project's "Required Packages for the Build
//! Host" (Debian/Ubuntu and Fedora), plus what oe-core `wrynose`'s HOSTTOOLS adds (rpcgen,
//! pzstd) and the locale BitBake switches to.

use crate::host::runner::Cmd;

/// The package family of this host, from `/etc/os-release`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Os {
    Debian,
    Fedora,
    Unknown,
}

/// `rtbuild setup --host` on Debian 12 / Ubuntu.
pub(crate) const DEBIAN: &[&str] = &[
    "build-essential",
    "chrpath",
    "cpio",
    "debianutils",
    "diffstat",
    "file",
    "gawk",
    "gcc",
    "git",
    "iputils-ping",
    "libacl1",
    "locales",
    "lz4",
    "python3",
    "python3-git",
    "python3-jinja2",
    "python3-pexpect",
    "python3-pip",
    "python3-subunit",
    "python3-venv",
    "rpcsvc-proto",
    "socat",
    "texinfo",
    "unzip",
    "wget",
    "xz-utils",
    "zstd",
];

/// `rtbuild setup --host` on Fedora.
pub(crate) const FEDORA: &[&str] = &[
    "bzip2",
    "ccache",
    "chrpath",
    "cpio",
    "cpp",
    "diffstat",
    "diffutils",
    "file",
    "findutils",
    "gawk",
    "gcc",
    "gcc-c++",
    "git",
    "glibc-devel",
    "glibc-langpack-en",
    "gzip",
    "hostname",
    "lz4",
    "make",
    "patch",
    "perl",
    "perl-Data-Dumper",
    "perl-File-Compare",
    "perl-File-Copy",
    "perl-FindBin",
    "perl-Text-ParseWords",
    "perl-Thread-Queue",
    "perl-bignum",
    "perl-locale",
    "python3",
    "python3-GitPython",
    "python3-jinja2",
    "python3-pexpect",
    "python3-pip",
    "rpcgen",
    "socat",
    "tar",
    "texinfo",
    "unzip",
    "wget",
    "which",
    "xz",
    "zstd",
];

impl Os {
    /// `ID`/`ID_LIKE` of an os-release file.
    pub(crate) fn detect(os_release: &str) -> Os {
        let mut ids = Vec::new();
        for line in os_release.lines() {
            if let Some(value) = line.strip_prefix("ID=").or_else(|| line.strip_prefix("ID_LIKE="))
            {
                ids.extend(value.trim_matches('"').split_whitespace().map(str::to_string));
            }
        }
        if ids.iter().any(|id| id == "debian" || id == "ubuntu") {
            Os::Debian
        } else if ids.iter().any(|id| id == "fedora" || id == "rhel" || id == "centos") {
            Os::Fedora
        } else {
            Os::Unknown
        }
    }

    /// The host packages `rtbuild setup --host` installs.
    pub(crate) fn host_packages(self) -> Option<&'static [&'static str]> {
        match self {
            Os::Debian => Some(DEBIAN),
            Os::Fedora => Some(FEDORA),
            Os::Unknown => None,
        }
    }

    /// The install command as argv (run as root).
    pub(crate) fn install(self, packages: &[String]) -> Option<Cmd> {
        let cmd = match self {
            Os::Debian => Cmd::new("apt-get")
                .args(["install", "-y", "--no-install-recommends"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
            Os::Fedora => Cmd::new("dnf").args(["install", "-y"]),
            Os::Unknown => return None,
        };
        Some(cmd.args(packages))
    }

    /// The install command a user types (`sudo apt-get install …`).
    pub(crate) fn install_command(self, packages: &[String]) -> String {
        let tool = match self {
            Os::Fedora => "dnf install -y",
            _ => "apt-get install -y",
        };
        format!("sudo {tool} {}", packages.join(" "))
    }

    /// How to make en_US.UTF-8 available.
    pub(crate) fn locale_fix(self) -> String {
        match self {
            Os::Fedora => "install it with `sudo dnf install -y glibc-langpack-en`".to_string(),
            _ => "enable it with `sudo sed -i 's/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/' \
                  /etc/locale.gen && sudo locale-gen` (package `locales`)"
                .to_string(),
        }
    }
}

/// What `rtbuild setup --host` runs, in order, as root: the package install, then (Debian)
/// enabling en_US.UTF-8 in /etc/locale.gen and generating it.
pub(crate) fn setup_commands(os: Os) -> Vec<Cmd> {
    let Some(packages) = os.host_packages() else { return Vec::new() };
    let packages: Vec<String> = packages.iter().map(|p| p.to_string()).collect();
    let mut cmds: Vec<Cmd> = os.install(&packages).into_iter().collect();
    if os == Os::Debian {
        cmds.insert(
            0,
            Cmd::new("apt-get").args(["update", "-q"]).env("DEBIAN_FRONTEND", "noninteractive"),
        );
        cmds.push(Cmd::new("sed").args([
            "-i",
            "s/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/",
            "/etc/locale.gen",
        ]));
        cmds.push(Cmd::new("locale-gen"));
    }
    cmds
}

/// The package providing `tool` on Debian/Ubuntu and on Fedora.
pub(crate) fn package(tool: &str) -> (&'static str, &'static str) {
    match tool {
        "ar" | "as" | "ld" | "nm" | "objcopy" | "objdump" | "ranlib" | "readelf" | "strings"
        | "strip" | "ld.bfd" | "ld.gold" | "size" => ("binutils", "binutils"),
        "awk" | "gawk" => ("gawk", "gawk"),
        "bash" => ("bash", "bash"),
        "bunzip2" | "bzip2" => ("bzip2", "bzip2"),
        "chrpath" => ("chrpath", "chrpath"),
        "cmp" | "diff" => ("diffutils", "diffutils"),
        "cpio" => ("cpio", "cpio"),
        "cpp" => ("cpp", "cpp"),
        "diffstat" => ("diffstat", "diffstat"),
        "egrep" | "fgrep" | "grep" => ("grep", "grep"),
        "file" => ("file", "file"),
        "find" | "xargs" => ("findutils", "findutils"),
        "flock" | "getopt" => ("util-linux", "util-linux"),
        "g++" => ("g++", "gcc-c++"),
        "gcc" => ("gcc", "gcc"),
        "getconf" | "iconv" | "ldd" => ("libc-bin", "glibc-common"),
        "git" => ("git", "git"),
        "gunzip" | "gzip" | "zcat" => ("gzip", "gzip"),
        "hostname" => ("hostname", "hostname"),
        "make" => ("make", "make"),
        "patch" => ("patch", "patch"),
        "perl" => ("perl", "perl"),
        "python3" => ("python3", "python3"),
        "pzstd" | "unzstd" | "zstd" => ("zstd", "zstd"),
        "rpcgen" => ("rpcsvc-proto", "rpcgen"),
        "sed" => ("sed", "sed"),
        "sh" => ("dash", "bash"),
        "tar" => ("tar", "tar"),
        "wget" => ("wget", "wget"),
        "which" => ("debianutils", "which"),
        "xz" => ("xz-utils", "xz"),
        _ => ("coreutils", "coreutils"),
    }
}

/// The packages providing `tools` on `os` (Debian names on an unknown host), once each.
pub(crate) fn packages_for(tools: &[String], os: Os) -> Vec<String> {
    let mut packages: Vec<String> = Vec::new();
    for tool in tools {
        let (debian, fedora) = package(tool);
        let name = if os == Os::Fedora { fedora } else { debian };
        if !packages.iter().any(|p| p == name) {
            packages.push(name.to_string());
        }
    }
    packages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_families() {
        assert_eq!(
            Os::detect("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"),
            Os::Debian
        );
        assert_eq!(Os::detect("ID=ubuntu\nID_LIKE=debian\n"), Os::Debian);
        assert_eq!(Os::detect("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n"), Os::Fedora);
        assert_eq!(Os::detect("ID=arch\n"), Os::Unknown);
    }

    #[test]
    fn the_four_tools_a_fresh_debian_lacks_map_to_their_packages() {
        let tools: Vec<String> =
            ["gawk", "cpio", "chrpath", "diffstat", "awk"].iter().map(|s| s.to_string()).collect();
        assert_eq!(packages_for(&tools, Os::Debian), ["gawk", "cpio", "chrpath", "diffstat"]);
        assert_eq!(package("g++"), ("g++", "gcc-c++"));
        assert_eq!(package("rpcgen"), ("rpcsvc-proto", "rpcgen"));
        assert_eq!(Os::Fedora.install_command(&["gawk".into()]), "sudo dnf install -y gawk");
    }

    #[test]
    fn ci_setup_installs_every_debian_host_package() {
        let setup =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/setup")).unwrap();
        let words: Vec<&str> = setup.split_whitespace().collect();
        for package in DEBIAN {
            assert!(words.contains(package), ".ci/setup does not install {package}");
        }
    }

    #[test]
    fn every_shipped_hosttool_is_provided_by_a_listed_host_package() {
        for tool in super::super::hosttools::SHIPPED {
            let (debian, fedora) = package(tool);
            let essential = [
                "coreutils",
                "bash",
                "dash",
                "grep",
                "sed",
                "tar",
                "gzip",
                "findutils",
                "diffutils",
                "util-linux",
                "libc-bin",
                "glibc-common",
                "hostname",
                "debianutils",
                "perl",
                "binutils",
                "cpp",
                "g++",
                "make",
                "patch",
                "bzip2",
            ];
            assert!(DEBIAN.contains(&debian) || essential.contains(&debian), "{tool}: {debian}");
            assert!(FEDORA.contains(&fedora) || essential.contains(&fedora), "{tool}: {fedora}");
        }
    }
}
