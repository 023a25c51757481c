//! The folders rtbuild picks when the user names none.

use std::path::{Path, PathBuf};

/// The work folder rtbuild creates in the current folder: generated files per machine, the kas
/// work folder, and the build folders live under it.
pub(crate) const WORK_DIR: &str = "rtbuild";

/// The default output folder of `machine`: `rtbuild/<machine>` (relative to the current folder).
pub(crate) fn machine_out(machine: &str) -> PathBuf {
    Path::new(WORK_DIR).join(machine)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_machine_gets_its_own_folder_under_rtbuild() {
        assert_eq!(
            super::machine_out("rb3gen2-core-kit"),
            std::path::Path::new("rtbuild/rb3gen2-core-kit")
        );
    }
}
