//! What a bundle may pack: only what the build produced. A symlink in the qcomflash folder
//! that resolves outside it and outside the deploy folder (`DEPLOY_DIR_IMAGE`) is refused,
//! naming the link and its target, unless `--follow-external-links` is given; and a file the
//! build user could not read (a link to `/etc/shadow` followed by root) is never packed.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::BundleError;

/// The folders a bundle's files must resolve into, and the build user's ids.
pub(super) struct Confinement {
    roots: Vec<PathBuf>,
    uid: u32,
    gid: u32,
    follow_external: bool,
}

impl Confinement {
    /// Files must resolve into `qcomflash` (already canonical) or `deploy`; the build user is
    /// the owner of `qcomflash`.
    pub(super) fn new(
        qcomflash: &Path,
        deploy: &Path,
        follow_external: bool,
    ) -> Result<Confinement, BundleError> {
        let read = |source| BundleError::Read { path: qcomflash.to_path_buf(), cause: source };
        let owner = std::fs::metadata(qcomflash).map_err(read)?;
        let mut roots = vec![qcomflash.to_path_buf()];
        roots.extend(std::fs::canonicalize(deploy).ok());
        Ok(Confinement { roots, uid: owner.uid(), gid: owner.gid(), follow_external })
    }

    /// Checks one entry of the qcomflash folder (a file or folder, reached through links).
    pub(super) fn check(&self, path: &Path) -> Result<(), BundleError> {
        let read = |source| BundleError::Read { path: path.to_path_buf(), cause: source };
        let target = std::fs::canonicalize(path).map_err(read)?;
        if !self.follow_external && !self.roots.iter().any(|root| target.starts_with(root)) {
            return Err(BundleError::ExternalLink { link: path.to_path_buf(), target });
        }
        let meta = std::fs::metadata(&target).map_err(read)?;
        if meta.is_file() && !self.readable(&meta) {
            return Err(BundleError::NotBuildReadable {
                path: path.to_path_buf(),
                target,
                uid: self.uid,
            });
        }
        Ok(())
    }

    /// Whether the build user may read the file, by its mode bits (root's reach does not count).
    fn readable(&self, meta: &std::fs::Metadata) -> bool {
        let mode = meta.mode();
        if meta.uid() == self.uid {
            mode & 0o400 != 0
        } else if meta.gid() == self.gid {
            mode & 0o040 != 0
        } else {
            mode & 0o004 != 0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn links_outside_are_refused_unless_allowed_and_unreadable_files_always() {
        let dir = tempfile::tempdir().unwrap();
        let deploy = dir.path().join("deploy");
        let q = deploy.join("img.qcomflash");
        std::fs::create_dir_all(&q).unwrap();
        crate::files::write::fixture(deploy.join("Image"), b"k").unwrap();
        crate::files::write::fixture(dir.path().join("secret"), b"s").unwrap();
        std::os::unix::fs::symlink("../Image", q.join("Image")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), q.join("secret.img")).unwrap();
        let q = std::fs::canonicalize(&q).unwrap();
        let inside = Confinement::new(&q, &deploy, false).unwrap();
        inside.check(&q.join("Image")).unwrap();
        let err = inside.check(&q.join("secret.img")).unwrap_err().to_string();
        assert!(err.contains("secret.img is a symlink to `"), "{err}");
        assert!(err.contains("--follow-external-links"), "{err}");
        let follow = Confinement::new(&q, &deploy, true).unwrap();
        follow.check(&q.join("secret.img")).unwrap();
        // Not readable by its owner, the build user here: never packed, even when followed.
        let secret = dir.path().join("secret");
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o040)).unwrap();
        let err = follow.check(&q.join("secret.img")).unwrap_err().to_string();
        assert!(err.contains("is not readable by the build user"), "{err}");
    }
}
