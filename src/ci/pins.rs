//! The commits rtbuild pins the GitHub actions of its generated workflows to (`rtbuild ci
//! --format github`, `--pin-actions`, on by default), each with the release it stands for.
//! A tag can be moved; a commit cannot, so the workflow runs the code that was reviewed here
//! (zizmor's `unpinned-uses`, the gate meta-qcom's CI runs).
//!
//! Every commit below was read from the action's own repository, not guessed: `git rev-parse
//! refs/tags/<release>^{commit}` in a clone of `https://github.com/<action>`, and the release's
//! moving major tag pointed at the same commit. docs/build.md says how to refresh the table.

/// One pinned action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pin {
    /// `owner/name`.
    pub action: &'static str,
    /// The tag the workflow would otherwise name (`v6`).
    pub major: &'static str,
    /// The exact release the commit is (`v6.1.0`).
    pub release: &'static str,
    /// The commit the release tag points at (40 hex digits).
    pub commit: &'static str,
}

/// The table. `actions/cache` stays on v5: the copy of its repository rtbuild's pins were read
/// from has no v6 tag, so no v6 commit could be checked.
pub(crate) const PINS: &[Pin] = &[
    Pin {
        action: "actions/checkout",
        major: "v6",
        release: "v6.1.0",
        commit: "d23441a48e516b6c34aea4fa41551a30e30af803",
    },
    Pin {
        action: "actions/cache",
        major: "v5",
        release: "v5.0.5",
        commit: "27d5ce7f107fe9357f9df03efb73ab90386fccae",
    },
    Pin {
        action: "actions/upload-artifact",
        major: "v6",
        release: "v6.0.0",
        commit: "b7c566a772e6b6bfb58ed0dc250532a479d7789f",
    },
    Pin {
        action: "actions/download-artifact",
        major: "v7",
        release: "v7.0.0",
        commit: "37930b1c2abaa49bbe596cd826c3c89aef350131",
    },
];

/// The pin of `action`; every action a generated workflow uses has one (a test checks).
pub(crate) fn pin(action: &str) -> Option<&'static Pin> {
    PINS.iter().find(|p| p.action == action)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_pin_is_a_full_commit_of_its_release() {
        for pin in super::PINS {
            assert_eq!(pin.commit.len(), 40, "{pin:?}");
            assert!(pin.commit.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
            assert!(pin.release.starts_with(&format!("{}.", pin.major)), "{pin:?}");
        }
        assert_eq!(super::pin("actions/checkout").unwrap().release, "v6.1.0");
    }
}
