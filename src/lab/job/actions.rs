//! The lab's deploy and boot actions for a board: lava-test-plans' qdl deploy and qdl boots,
//! or its flasher deploy (download, `flash.settings`, flash), then the minimal boot with
//! auto-login. (A QEMU job's come from [`QemuImages`](crate::lab::qemu::QemuImages).)

use std::collections::BTreeMap;

use super::request::{Artifacts, BundleUrl, JobRequest, LavaVersion};
use super::{
    BOOT_MIN, DOWNLOAD_MIN, FLASH_MIN, POSTPROCESS_IMAGE, QDL_BOOT_MIN, QDL_DEPLOY_MIN,
    QDL_OVERLAY_PATH,
};
use crate::catalog::Deploy;
use crate::formats::lava_job::{
    Action, AutoLogin, Boot, Deploy as DeployAction, Docker, Image, Minutes, Postprocess,
    QcomflashImage,
};
use crate::plan::Distro;

/// The download headers as LAVA's `headers:` map.
fn header_map(req: &JobRequest) -> BTreeMap<String, String> {
    req.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect()
}

/// The qcomflash folder inside the bundle (meta-qcom's and `rtbuild bundle`'s alike).
fn image_dir(req: &JobRequest) -> String {
    format!("{}-{}", req.image, req.machine)
}

/// lava-test-plans' qdl deploy: the archive as it is, LAVA's overlay applied to the rootfs
/// image; then one qdl boot per storage stage.
pub(super) fn qdl_actions(req: &JobRequest, bundle: &BundleUrl) -> Vec<Action> {
    let dir = image_dir(req);
    let mut actions = vec![Action::deploy(DeployAction::Qdl {
        rootfs_image: format!("{dir}/rootfs.img"),
        overlay_path: (req.lava_version < LavaVersion::NO_OVERLAY_PATH)
            .then(|| QDL_OVERLAY_PATH.to_string()),
        qcomflash: QcomflashImage {
            headers: header_map(req),
            url: bundle.url.clone(),
            apply_overlay: true,
        },
        timeout: Minutes::of(QDL_DEPLOY_MIN),
    })];
    for stage in &req.lab.qdl_stages {
        actions.push(Action::boot(Boot::Qdl {
            firehose_program: req.lab.firehose.clone(),
            rawprogram: stage.rawprogram.join(" "),
            patch: stage.patch.join(" "),
            path: if stage.path.is_empty() { dir.clone() } else { format!("{dir}/{}", stage.path) },
            storage: stage.storage.clone(),
            debug: true,
            timeout: Minutes::of(QDL_BOOT_MIN),
        }));
    }
    actions
}

/// lava-test-plans' flasher deploy: download the archive unchanged; a postprocess step writes
/// `flash.settings` (the LAVA overlay, where it goes, the board); the lab's flasher flashes it.
pub(super) fn flasher_actions(req: &JobRequest, bundle: &BundleUrl) -> Vec<Action> {
    let mut steps = vec![
        "export IMAGE_PATH=$PWD".to_string(),
        "cp overlay*.tar.gz overlay.tar.gz".to_string(),
        "echo \"OVERLAY=overlay.tar.gz\" >> $IMAGE_PATH/flash.settings".to_string(),
        "echo \"OVERLAY_PATH=/\" >> $IMAGE_PATH/flash.settings".to_string(),
        format!(
            "echo \"DEVICE_TYPE={}\" >> $IMAGE_PATH/flash.settings",
            req.lab.flasher_device_type
        ),
    ];
    steps.extend(
        req.lab
            .flasher_settings
            .iter()
            .map(|line| format!("echo \"{line}\" >> $IMAGE_PATH/flash.settings")),
    );
    steps.push("cat $IMAGE_PATH/flash.settings".to_string());
    let download = |name: &str| Image::of(format!("downloads://{name}"));
    vec![
        Action::deploy(DeployAction::Downloads {
            timeout: Minutes::of(DOWNLOAD_MIN),
            images: [(
                "flasher".to_string(),
                Image { headers: header_map(req), url: bundle.url.clone() },
            )]
            .into(),
            postprocess: Some(Postprocess {
                docker: Docker { image: POSTPROCESS_IMAGE.to_string(), steps },
            }),
        }),
        Action::deploy(DeployAction::Flasher {
            timeout: Minutes::of(FLASH_MIN),
            images: [
                ("image".to_string(), download(&bundle.file)),
                ("settings".to_string(), download("flash.settings")),
                ("overlay".to_string(), download("overlay.tar.gz")),
            ]
            .into(),
        }),
    ]
}

/// Power on and log in: as root, with a password on the qcom-distro flavours (as meta-qcom's
/// test workflow passes it to lava-test-plans), waiting for the lab's prompts.
pub(super) fn login_boot(req: &JobRequest) -> Boot {
    let password = match req.distro {
        Distro::Nodistro => None,
        Distro::QcomDistro | Distro::QcomDistroKvm => {
            Some(("Password".to_string(), "oelinux123".to_string()))
        }
    };
    let auto_login = AutoLogin {
        login_prompt: "login:".to_string(),
        username: "root".to_string(),
        password_prompt: password.as_ref().map(|p| p.0.clone()),
        password: password.map(|p| p.1),
    };
    let minutes = match (&req.artifacts, req.lab.deploy) {
        (Artifacts::Qemu(images), _) => return images.boot(auto_login, &req.lab.prompts),
        (_, Deploy::Qdl) => QDL_BOOT_MIN * req.lab.qdl_stages.len() as u64,
        _ => BOOT_MIN,
    };
    Boot::Minimal { timeout: Minutes::of(minutes), auto_login, prompts: req.lab.prompts.clone() }
}
