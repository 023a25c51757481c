use super::*;

/// The helper's `boot_flow` section as a Qualcomm KVM image, a Gunyah board and a PC write
/// it (the Gunyah `compatible` as the device tree binding names it), and the Boot Flow word
/// the results table shows for each.
#[test]
fn boot_facts_give_the_guides_boot_flow_word() {
    let kvm = boot_facts("kvm\nefi\nguest_checked\n");
    assert_eq!(
        kvm,
        BootFacts { kvm: true, efi: true, guest_checked: true, ..BootFacts::default() }
    );
    assert_eq!(kvm.flow(), "KVM");
    let gunyah = boot_facts("efi\nhypervisor gunyah-hypervisor-1.0 gunyah-hypervisor \n");
    assert_eq!(gunyah.hypervisor.as_deref(), Some("gunyah-hypervisor-1.0 gunyah-hypervisor"));
    assert_eq!(gunyah.flow(), "Gunyah (guest)");
    let other = boot_facts("hypervisor xen,xen-4.17 xen,xen\n");
    assert_eq!(other.flow(), "guest (xen,xen-4.17)");
    let plain = boot_facts("efi\nguest_checked\n");
    assert_eq!((plain.efi, plain.flow().as_str()), (true, "unknown"));
    assert_eq!(boot_facts(""), BootFacts::default());
    assert_eq!(boot_facts("hypervisor   \n").hypervisor, None);
}

/// /dev/kvm in a virtual machine (nested KVM, as on this lab's x86 guests) is no KVM host:
/// the `hypervisor` CPU flag makes it a guest. A record from before rtbuild looked for a
/// guest says only `kvm`: its boot flow is unknown, never KVM.
#[test]
fn dev_kvm_is_no_proof_of_a_kvm_host() {
    let nested = boot_facts("kvm\nguest_checked\nguest cpu-flag-hypervisor\nguest dmi-vendor\n");
    assert_eq!(nested.guest, ["cpu-flag-hypervisor", "dmi-vendor"]);
    assert_eq!(nested.flow(), "guest");
    assert_eq!(boot_facts("kvm\nefi\n").flow(), "unknown");
}
