//! [`LavaProfile`]: how Qualcomm's LAVA lab names and flashes a board, as a machine file's
//! `lava:` section records it (facts from qualcomm-linux/lava-test-plans' meta-qcom device
//! files; each shipped file names the commit and files it was read from).

use serde::{Deserialize, Serialize};

/// How the lab flashes the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Deploy {
    /// LAVA's `qdl` deploy and boot: the qcomflash archive flashed over EDL with Qualcomm's
    /// `qdl`, one boot action per storage stage.
    Qdl,
    /// A download, then the lab's own flasher script (`flash.settings` names the board).
    Flasher,
    /// No board: LAVA boots a kernel, an initrd and a root file system image under QEMU (a
    /// smoke job for the image's RT mechanics; latencies under emulation mean nothing).
    Qemu,
}

impl Deploy {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Deploy::Qdl => "qdl",
            Deploy::Flasher => "flasher",
            Deploy::Qemu => "qemu",
        }
    }
}

/// A `--deploy` that names no way to flash.
#[derive(Debug, thiserror::Error)]
#[error("unknown --deploy `{}`; use qdl, flasher or qemu", .text.escape_debug())]
pub(crate) struct UnknownDeploy {
    pub text: String,
}

impl std::str::FromStr for Deploy {
    type Err = UnknownDeploy;
    fn from_str(text: &str) -> Result<Deploy, UnknownDeploy> {
        match text {
            "qdl" => Ok(Deploy::Qdl),
            "flasher" => Ok(Deploy::Flasher),
            "qemu" => Ok(Deploy::Qemu),
            _ => Err(UnknownDeploy { text: text.to_string() }),
        }
    }
}

/// The lab's view of one board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LavaProfile {
    /// The LAVA device type the lab's boards are registered as.
    pub device_type: String,
    pub deploy: Deploy,
    /// qdl: the firehose programmer in the qcomflash folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firehose: Option<String>,
    /// qdl: what to flash, in order, one qdl boot each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub qdl_stages: Vec<QdlStage>,
    /// The shell prompt the lab waits for after login (before the generic `root@…` one).
    pub boot_prompt: String,
    /// flasher: the board name the lab's flasher reads from `flash.settings` [default: the
    /// machine name].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flasher_device_type: Option<String>,
}

/// One qdl flashing stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QdlStage {
    /// `ufs`, `spinor`, `emmc`, …
    pub storage: String,
    /// The sub-folder of the qcomflash folder holding this stage's files; empty for the folder.
    #[serde(default)]
    pub path: String,
    pub rawprogram: Vec<String>,
    pub patch: Vec<String>,
}

/// A LAVA name: letters, digits, `-`, `_`, `.` (device types, tags, file names).
pub(crate) fn lava_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 200
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl LavaProfile {
    /// Why the profile cannot make a job, if it cannot: every value reaches a job definition
    /// (and `flasher_device_type` a postprocess shell step), so each is a plain name.
    pub(crate) fn problem(&self) -> Option<String> {
        let file = |s: &String| lava_name(s) && s != "." && s != "..";
        if !lava_name(&self.device_type) {
            return Some(
                "lava.device_type must be a LAVA name (letters, digits, `-`, `_`, `.`)".into(),
            );
        }
        if self.flasher_device_type.as_ref().is_some_and(|t| !lava_name(t)) {
            return Some("lava.flasher_device_type must be a LAVA name".into());
        }
        let prompt_ok = |p: &str| {
            !p.is_empty() && p.len() <= 200 && p.chars().all(|c| c.is_ascii_graphic() || c == ' ')
        };
        if !prompt_ok(&self.boot_prompt) {
            return Some("lava.boot_prompt must be printable ASCII, at most 200 characters".into());
        }
        match self.deploy {
            Deploy::Qdl => {
                if !self.firehose.as_ref().is_some_and(file) {
                    return Some("lava.deploy qdl needs lava.firehose, a file name".into());
                }
                if self.qdl_stages.is_empty() {
                    return Some("lava.deploy qdl needs at least one lava.qdl_stages entry".into());
                }
                for stage in &self.qdl_stages {
                    let path_ok = stage.path.is_empty()
                        || stage.path.split('/').all(|p| file(&p.to_string()));
                    if !lava_name(&stage.storage)
                        || !path_ok
                        || stage.rawprogram.is_empty()
                        || stage.patch.is_empty()
                        || !stage.rawprogram.iter().chain(&stage.patch).all(file)
                    {
                        return Some(
                            "each lava.qdl_stages entry needs a storage name, a relative path \
                             (or none) and non-empty rawprogram and patch lists of file names"
                                .into(),
                        );
                    }
                }
            }
            Deploy::Flasher | Deploy::Qemu => {
                if self.firehose.is_some() || !self.qdl_stages.is_empty() {
                    return Some("lava.firehose and lava.qdl_stages belong to deploy qdl".into());
                }
            }
        }
        None
    }
}
