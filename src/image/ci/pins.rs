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

/// The digest of kas's container image for the pinned kas version
/// (`ghcr.io/siemens/kas/kas:<PINNED_KAS>`), the multi-arch index's `sha256:…` as `docker
/// buildx imagetools inspect` prints it; `None` until one has been read from the registry
/// itself. The machine this table was last edited on could not reach ghcr.io, and no digest
/// is guessed: a wrong one would fail every job. Until it is filled in, `rtbuild ci
/// --kas-image REF@sha256:…` names the digest the user read (docs/build.md says how).
pub(crate) const KAS_IMAGE_DIGEST: Option<&str> = None;

/// Whether `image` names its digest: `REGISTRY/NAME[:TAG]@sha256:<64 lowercase hex>`, the
/// name of letters, digits and `._/:-` only (it goes into YAML and a comment unquoted).
pub(crate) fn is_pinned_image(image: &str) -> bool {
    let Some((name, digest)) = image.split_once("@sha256:") else {
        return false;
    };
    let name_ok = !name.is_empty()
        && name.contains('/')
        && !name.starts_with(['/', ':', '-', '.'])
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._/:-".contains(&b));
    name_ok
        && digest.len() == 64
        && digest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

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

    #[test]
    fn an_image_is_pinned_only_by_a_full_sha256_digest() {
        let hex = "0123456789abcdef".repeat(4);
        for good in [
            format!("ghcr.io/siemens/kas/kas:5.5@sha256:{hex}"),
            format!("ghcr.io/siemens/kas/kas@sha256:{hex}"),
            format!("registry.example.com:5000/kas/kas:5.5@sha256:{hex}"),
        ] {
            assert!(super::is_pinned_image(&good), "{good}");
        }
        for bad in [
            "ghcr.io/siemens/kas/kas:5.5".to_string(),
            format!("ghcr.io/siemens/kas/kas:5.5@sha256:{}", &hex[1..]),
            format!("ghcr.io/siemens/kas/kas:5.5@sha256:{}", hex.to_uppercase()),
            format!("ghcr.io/siemens/kas/kas:5.5@sha512:{hex}"),
            format!("kas@sha256:{hex}"),
            format!("ghcr.io/kas/kas $(id)@sha256:{hex}"),
            format!("ghcr.io/kas/kas:5.5@sha256:{hex} # x"),
            format!("-ghcr.io/kas/kas@sha256:{hex}"),
        ] {
            assert!(!super::is_pinned_image(&bad), "{bad}");
        }
        if let Some(digest) = super::KAS_IMAGE_DIGEST {
            assert!(super::is_pinned_image(&format!("ghcr.io/siemens/kas/kas@{digest}")));
        }
    }
}
