//! The LAVA job definition `rtbuild lava` writes, as LAVA's job schema (lava-common) and
//! Qualcomm's lava-test-plans templates shape it. One action is one enum variant: a new deploy
//! (QEMU, tmpfs) is a new [`Deploy`] variant and, when it boots differently, a [`Boot`] one.

use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Job {
    pub device_type: String,
    pub job_name: String,
    pub timeouts: Timeouts,
    pub priority: String,
    pub visibility: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Job context variables (`test_character_delay`, QEMU's `arch`, …).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub context: BTreeMap<String, ContextValue>,
    pub metadata: BTreeMap<String, ContextValue>,
    pub actions: Vec<Action>,
}

/// A context or metadata value: a word, a number, or a list of words (QEMU's `extra_options`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum ContextValue {
    Number(u64),
    Text(String),
    List(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Timeouts {
    pub job: Minutes,
    pub connection: Minutes,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub connections: BTreeMap<String, Minutes>,
    pub actions: ActionTimeouts,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ActionTimeouts {
    pub finalize: Seconds,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Minutes {
    pub minutes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Seconds {
    pub seconds: u64,
}

impl Minutes {
    /// At least one minute (LAVA refuses 0).
    pub(crate) fn of(n: u64) -> Minutes {
        Minutes { minutes: n.max(1) }
    }
}

/// One action: a map with one key, as LAVA reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum Action {
    Deploy { deploy: Deploy },
    Boot { boot: Boot },
    Test { test: TestAction },
}

impl Action {
    pub(crate) fn deploy(deploy: Deploy) -> Action {
        Action::Deploy { deploy }
    }
    pub(crate) fn boot(boot: Boot) -> Action {
        Action::Boot { boot }
    }
    pub(crate) fn test(test: TestAction) -> Action {
        Action::Test { test }
    }
}

/// `deploy:`, by its `to:`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "to", rename_all = "lowercase")]
pub(crate) enum Deploy {
    /// Fetch files onto the dispatcher, unchanged, for a later deploy (`downloads://NAME`).
    Downloads {
        timeout: Minutes,
        images: BTreeMap<String, Image>,
        #[serde(skip_serializing_if = "Option::is_none")]
        postprocess: Option<Postprocess>,
    },
    /// The lab's flasher script flashes `images`.
    Flasher { timeout: Minutes, images: BTreeMap<String, Image> },
    /// Qualcomm's qdl deploy: the qcomflash archive, the LAVA overlay applied to
    /// `rootfs_image` (at `overlay_path` for LAVA 2026.06, which reads it; 2026.07's schema
    /// refuses the key).
    Qdl {
        rootfs_image: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        overlay_path: Option<String>,
        qcomflash: QcomflashImage,
        timeout: Minutes,
    },
    /// QEMU's deploy: download `images` to the dispatcher; each one's `image_arg` puts it on
    /// the QEMU command line (`{NAME}` becomes the downloaded file).
    Tmpfs { timeout: Minutes, images: BTreeMap<String, QemuImage> },
}

/// One file of a QEMU deploy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct QemuImage {
    pub url: String,
    pub image_arg: String,
    /// How LAVA decompresses the download (`gz`, `xz`, `zstd`, `bz2`), if it is compressed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Image {
    /// HTTP headers LAVA sends with the download (the lab's authorization token).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    pub url: String,
}

impl Image {
    pub(crate) fn of(url: String) -> Image {
        Image { headers: BTreeMap::new(), url }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct QcomflashImage {
    /// HTTP headers LAVA sends with the download (the lab's authorization token).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    pub url: String,
    #[serde(rename = "apply-overlay")]
    pub apply_overlay: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Postprocess {
    pub docker: Docker,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Docker {
    pub image: String,
    pub steps: Vec<String>,
}

/// `boot:`, by its `method:`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "method", rename_all = "lowercase")]
pub(crate) enum Boot {
    /// One qdl flashing stage (EDL): `rawprogram`/`patch` are space-separated file lists.
    Qdl {
        firehose_program: String,
        rawprogram: String,
        patch: String,
        path: String,
        storage: String,
        debug: bool,
        timeout: Minutes,
    },
    /// Power on and wait for the login prompt.
    Minimal { timeout: Minutes, auto_login: AutoLogin, prompts: Vec<String> },
    /// Start QEMU with the deployed files and wait for the prompt (after logging in, unless the
    /// console is already a shell).
    Qemu {
        media: String,
        timeout: Minutes,
        #[serde(skip_serializing_if = "Option::is_none")]
        auto_login: Option<AutoLogin>,
        prompts: Vec<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct AutoLogin {
    pub login_prompt: String,
    pub username: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TestAction {
    pub timeout: Minutes,
    pub definitions: Vec<Definition>,
}

/// An inline test definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Definition {
    pub from: String,
    pub name: String,
    pub path: String,
    pub repository: TestDefinition,
}

/// A Lava-Test Test Definition 1.0 (Linaro test-definitions' metadata).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TestDefinition {
    pub metadata: TestMetadata,
    pub run: RunSteps,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TestMetadata {
    pub format: String,
    pub name: String,
    pub description: String,
    pub maintainer: Vec<String>,
    pub os: Vec<String>,
    pub devices: Vec<String>,
    pub scope: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RunSteps {
    pub steps: Vec<String>,
}

impl Job {
    /// The job as YAML (deterministic: every map is ordered).
    pub(crate) fn to_yaml(&self) -> String {
        // Strings, numbers and lists only: serializing cannot fail.
        serde_yaml::to_string(self).unwrap_or_default()
    }
}
