//! [`LavaProfile`]: how Qualcomm's LAVA lab names and flashes a board, as a machine file's
//! `lava:` section records it (facts from qualcomm-linux/lava-test-plans' meta-qcom device
//! files; each shipped file names the commit and files it was read from).
//!
//! The lab's view differs by meta-qcom branch: each branch's CI pins its own lava-test-plans
//! revision ([`LAB_PLANS`]). A machine file's `lava:` section is what the newest pin (master's)
//! renders; `lava.branches.<branch>` what an older pin renders, where it differs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One meta-qcom branch's lava-test-plans pin: what that branch's CI renders its LAVA jobs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LabPlansPin {
    /// The meta-qcom branch.
    pub branch: &'static str,
    /// The qualcomm-linux/lava-test-plans commit its CI checks out.
    pub revision: &'static str,
    /// The qcom-linux-testkit tag its CI passes (`TESTKIT_REF`).
    pub testkit: &'static str,
    /// Where the pin was read.
    pub source: &'static str,
}

/// The pins, newest first. The first is the default for branches not listed here.
pub(crate) const LAB_PLANS: [LabPlansPin; 2] = [
    LabPlansPin {
        branch: "master",
        revision: "a20c74e6827b",
        testkit: "testkit-2026.07.19",
        source: "meta-qcom master .github/workflows/test.yml (lava-test-plans ref, TESTKIT_REF)",
    },
    LabPlansPin {
        branch: "wrynose",
        revision: "62f75dda7cc3",
        testkit: "testkit-2026.06.21",
        source: "meta-qcom wrynose .github/workflows/test.yml (lava-test-plans ref, TESTKIT_REF)",
    },
];

/// The pin of meta-qcom `branch`, and whether the branch is listed (else master's pin).
pub(crate) fn lab_plans(branch: &str) -> (LabPlansPin, bool) {
    match LAB_PLANS.iter().find(|p| p.branch == branch) {
        Some(pin) => (*pin, true),
        None => (LAB_PLANS[0], false),
    }
}

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
#[error("unknown --deploy `{}`; use qdl, flasher or qemu", crate::text::printable(.text))]
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
    /// flasher: more `KEY=VALUE` lines the postprocess step adds to `flash.settings` (e.g.
    /// `FIREHOSE_PROGRAM=xbl_s_devprg_ns.melf`), after `DEVICE_TYPE`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flasher_settings: Vec<String>,
    /// The lab's view under an older meta-qcom branch's lava-test-plans pin ([`LAB_PLANS`]),
    /// where it differs from this one (master's). One level only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub branches: BTreeMap<String, LavaProfile>,
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

/// A `flasher_settings` line: `KEY=VALUE`, an upper-case shell-word key and a LAVA name value
/// (it reaches a postprocess shell step inside double quotes).
fn setting_ok(line: &str) -> bool {
    line.split_once('=').is_some_and(|(key, value)| {
        !key.is_empty()
            && key.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            && lava_name(value)
    })
}

impl LavaProfile {
    /// The profile meta-qcom `branch`'s lava-test-plans pin renders: its `branches` entry, else
    /// this one.
    pub(crate) fn for_branch(&self, branch: &str) -> &LavaProfile {
        self.branches.get(branch).unwrap_or(self)
    }

    /// Why the profile cannot make a job, if it cannot: every value reaches a job definition
    /// (and `flasher_device_type` a postprocess shell step), so each is a plain name.
    pub(crate) fn problem(&self) -> Option<String> {
        for (branch, profile) in &self.branches {
            if !LAB_PLANS.iter().any(|p| p.branch == branch) {
                let known: Vec<&str> = LAB_PLANS.iter().map(|p| p.branch).collect();
                return Some(format!(
                    "lava.branches names `{}`, a meta-qcom branch with no known lava-test-plans pin (known: {})",
                    crate::text::printable(branch),
                    known.join(", ")
                ));
            }
            if !profile.branches.is_empty() {
                return Some("lava.branches entries cannot have branches of their own".into());
            }
            if let Some(problem) = profile.problem() {
                return Some(format!("lava.branches.{branch}: {problem}"));
            }
        }
        if !self.flasher_settings.iter().all(|l| setting_ok(l)) {
            return Some(
                "lava.flasher_settings entries must be KEY=VALUE (KEY of A-Z, 0-9, `_`; VALUE a LAVA name)"
                    .into(),
            );
        }
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
