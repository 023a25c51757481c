//! What a meta-qcom checkout offers the composition (its `ci/*.yml` files, its revision, the
//! machine's `MACHINE_FEATURES`), or what rtbuild remembers of meta-qcom without one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{DISTRO_KVM_FILE, GUNYAH_FILE};
use crate::catalog::Machine;
use crate::catalog::meta_qcom::MetaQcom;

/// What a meta-qcom checkout offers the composition, or what rtbuild remembers of meta-qcom.
#[derive(Debug, Clone)]
pub(crate) struct Offer {
    /// The checkout, or `None` for the remembered facts.
    pub checkout: Option<Checkout>,
    /// The machine's `MACHINE_FEATURES` (its conf's appends, or the catalog's).
    pub machine_features: Vec<String>,
    /// The machine conf they were read from, relative to the checkout, or `None` (catalog).
    pub features_from: Option<PathBuf>,
}

/// A checkout's `ci/*.yml` files and revision.
#[derive(Debug, Clone)]
pub(crate) struct Checkout {
    pub dir: PathBuf,
    pub revision: Option<String>,
    /// `ci/NAME.yml`, sorted.
    pub ci_files: BTreeSet<String>,
}

impl Checkout {
    /// Reads `meta_qcom`'s `ci/` folder (regular `*.yml` files only) and its git HEAD.
    pub(crate) fn read(meta_qcom: &MetaQcom) -> Checkout {
        let dir = meta_qcom.dir.clone();
        let ci_files = ci_files(&dir);
        Checkout { revision: revision(&dir), dir, ci_files }
    }

    pub(crate) fn has(&self, file: &str) -> bool {
        self.ci_files.contains(file)
    }

    /// The revision as messages show it: the commit's first 12 digits, or that it is no git
    /// checkout.
    pub(crate) fn shown_revision(&self) -> String {
        match &self.revision {
            Some(commit) => commit.chars().take(12).collect(),
            None => "an unknown revision (not a git checkout)".to_string(),
        }
    }

    /// What the checkout has in place of `missing`, as a phrase.
    pub(crate) fn instead(&self, missing: &str) -> String {
        if missing == DISTRO_KVM_FILE && self.has(GUNYAH_FILE) {
            return format!(
                "{GUNYAH_FILE} (meta-qcom #2879 renamed it: KVM now comes from the machine's MACHINE_FEATURES; choose with --hypervisor kvm|gunyah)"
            );
        }
        let stem = |f: &str| f.trim_start_matches("ci/").trim_end_matches(".yml").to_string();
        let words: BTreeSet<String> = stem(missing)
            .split(['-', '_', '.'])
            .filter(|w| w.len() > 1 && *w != "qcom" && *w != "ci")
            .map(String::from)
            .collect();
        let like: Vec<&str> = self
            .ci_files
            .iter()
            .filter(|f| stem(f).split(['-', '_', '.']).any(|w| words.contains(w)))
            .map(String::as_str)
            .take(6)
            .collect();
        if like.is_empty() {
            format!("none like it among its {} ci/*.yml files", self.ci_files.len())
        } else {
            like.join(", ")
        }
    }
}

/// `dir/ci/*.yml`, regular files only, as `ci/NAME.yml`.
pub(crate) fn ci_files(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("ci")) else { return BTreeSet::new() };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|n| n.ends_with(".yml"))
        .map(|n| format!("ci/{n}"))
        .collect()
}

/// The commit `dir`'s HEAD names, when `dir` is the top of a git work tree. Read from the files
/// themselves (`.git/HEAD`, the branch's ref or `packed-refs`), through the bounded reader: a
/// checkout kas made as another user is one libgit2 refuses to open.
pub(crate) fn revision(dir: &Path) -> Option<String> {
    let read = |path: &Path| crate::files::input::read_to_string(path, 1 << 20).ok();
    let dot_git = dir.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        let text = read(&dot_git)?;
        dir.join(text.trim().strip_prefix("gitdir:")?.trim())
    };
    let common = match read(&git_dir.join("commondir")) {
        Some(text) => git_dir.join(text.trim()),
        None => git_dir.clone(),
    };
    let head = read(&git_dir.join("HEAD"))?;
    let head = head.trim();
    let is_commit = |text: &str| text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit());
    let Some(name) = head.strip_prefix("ref:").map(str::trim) else {
        return is_commit(head).then(|| head.to_string());
    };
    if !name.starts_with("refs/") || name.split('/').any(|part| part == "..") {
        return None;
    }
    for base in [&git_dir, &common] {
        if let Some(text) = read(&base.join(name)) {
            let commit = text.trim();
            return is_commit(commit).then(|| commit.to_string());
        }
    }
    let packed = read(&common.join("packed-refs"))?;
    packed.lines().find_map(|line| {
        let (commit, reference) = line.split_once(' ')?;
        (reference.trim() == name && is_commit(commit)).then(|| commit.to_string())
    })
}

impl Offer {
    /// What the checkout has for `machine` (its conf's `MACHINE_FEATURES` when the conf is
    /// there, else the catalog's).
    pub(crate) fn of_checkout(meta_qcom: &MetaQcom, machine: &Machine) -> Offer {
        let conf = PathBuf::from(format!("conf/machine/{}.conf", machine.name));
        let (features, from) = match meta_qcom.machine_features(&conf) {
            Some(features) => (features, Some(conf)),
            None => (machine.machine_features.clone(), None),
        };
        Offer {
            checkout: Some(Checkout::read(meta_qcom)),
            machine_features: features,
            features_from: from,
        }
    }

    /// rtbuild's remembered facts, for a plan made without a checkout: meta-qcom as the
    /// catalog describes it (after #2879 on master and wrynose).
    pub(crate) fn remembered(machine: &Machine) -> Offer {
        Offer {
            checkout: None,
            machine_features: machine.machine_features.clone(),
            features_from: None,
        }
    }

    pub(super) fn has(&self, file: &str) -> bool {
        match &self.checkout {
            Some(checkout) => checkout.has(file),
            // Remembered: meta-qcom after #2879.
            None => file != DISTRO_KVM_FILE,
        }
    }

    pub(super) fn layout(&self) -> &'static str {
        if self.has(GUNYAH_FILE) {
            "gunyah.yml"
        } else if self.has(DISTRO_KVM_FILE) {
            "qcom-distro-kvm.yml"
        } else {
            "none"
        }
    }

    pub(super) fn features_shown(&self, machine: &str) -> String {
        match &self.features_from {
            Some(conf) => conf.display().to_string(),
            None => format!("rtbuild's catalog entry for {machine}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_revision_is_read_from_head_its_ref_or_packed_refs() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        assert_eq!(revision(dir.path()), None, "no commit yet");
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let tree = repo.find_tree(repo.index().unwrap().write_tree().unwrap()).unwrap();
        let id = repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[]).unwrap();
        assert_eq!(revision(dir.path()), Some(id.to_string()));
        // The ref packed (as a clone leaves it).
        let head = repo.head().unwrap().name().unwrap().to_string();
        std::fs::remove_file(dir.path().join(".git").join(&head)).unwrap();
        crate::files::write::fixture(
            dir.path().join(".git/packed-refs"),
            format!("# pack-refs\n{id} {head}\n"),
        )
        .unwrap();
        assert_eq!(revision(dir.path()), Some(id.to_string()));
        assert_eq!(revision(&dir.path().join("nope")), None);
    }
}
