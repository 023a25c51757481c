//! [`Distro`]: which meta-qcom distro kas file the build composes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The distro flavours rtbuild builds (which meta-qcom `ci/` files back each is decided from
/// the checkout: `plan::compose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
// The variants are meta-qcom's distro names (`qcom-distro`, `qcom-distro-kvm`).
#[allow(clippy::enum_variant_names)]
pub(crate) enum Distro {
    /// meta-qcom's `ci/base.yml` alone (`DISTRO = "nodistro"`, `core-image-base`).
    Nodistro,
    /// `ci/qcom-distro.yml` (meta-qcom-distro and its layers).
    QcomDistro,
    /// Kept as an alias of qcom-distro with `--hypervisor kvm`: meta-qcom before #2879 had
    /// `ci/qcom-distro-kvm.yml` (qcom-distro plus `kvm` in `MACHINE_FEATURES`), since #2879 the
    /// machine conf has `kvm` (see `plan::compose`). A plan never holds it.
    QcomDistroKvm,
}

impl Distro {
    pub(crate) const ALL: [Distro; 3] =
        [Distro::Nodistro, Distro::QcomDistro, Distro::QcomDistroKvm];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Distro::Nodistro => "nodistro",
            Distro::QcomDistro => "qcom-distro",
            Distro::QcomDistroKvm => "qcom-distro-kvm",
        }
    }

    /// The image built when none is named.
    pub(crate) fn default_image(self) -> &'static str {
        match self {
            Distro::Nodistro => "core-image-base",
            Distro::QcomDistro | Distro::QcomDistroKvm => "qcom-multimedia-image",
        }
    }
}

impl fmt::Display for Distro {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown distro name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown distro `{0}`; use one of nodistro, qcom-distro, qcom-distro-kvm")]
pub(crate) struct UnknownDistro(pub String);

impl FromStr for Distro {
    type Err = UnknownDistro;
    fn from_str(s: &str) -> Result<Distro, UnknownDistro> {
        Distro::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| UnknownDistro(s.into()))
    }
}
