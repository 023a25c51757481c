//! The hypervisor the image boots under, as asked for.

use std::fmt;
use std::str::FromStr;

use crate::plan::PlanError;

/// The hypervisor the image boots under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hypervisor {
    /// KVM (`kvm` in `MACHINE_FEATURES`): what meta-qcom's RT CI builds.
    Kvm,
    /// Qualcomm's Gunyah (no `kvm` in `MACHINE_FEATURES`).
    Gunyah,
}

impl Hypervisor {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Hypervisor::Kvm => "kvm",
            Hypervisor::Gunyah => "gunyah",
        }
    }
}

impl fmt::Display for Hypervisor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Hypervisor {
    type Err = PlanError;
    fn from_str(s: &str) -> Result<Hypervisor, PlanError> {
        match s {
            "kvm" => Ok(Hypervisor::Kvm),
            "gunyah" => Ok(Hypervisor::Gunyah),
            other => Err(PlanError::Hypervisor { given: crate::plan::values::printable(other) }),
        }
    }
}

/// What the hypervisor request is, once `--distro qcom-distro-kvm` (an alias) is unfolded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HypervisorRequest {
    /// `--hypervisor`, or `kvm` from the alias; `None`: the default (KVM where the checkout
    /// gives it).
    pub wanted: Option<Hypervisor>,
    /// The user typed `--distro qcom-distro-kvm`.
    pub from_alias: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_hypervisors_are_refused() {
        let err = "xen".parse::<Hypervisor>().unwrap_err().to_string();
        assert_eq!(
            err,
            "--hypervisor `xen` is not a hypervisor; pass --hypervisor kvm or --hypervisor gunyah"
        );
    }
}
