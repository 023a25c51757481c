SUMMARY = "Run-time tuning of the RT CPUs, applied at every boot"
DESCRIPTION = "Installs rtbuild-tune.sh (rendered by rtbuild from the build plan's RT and \
housekeeping CPUs) and a systemd unit that runs 'rtbuild-tune.sh apply' at boot and \
'rtbuild-tune.sh revert' at shutdown: timer migration off, workqueues and IRQs on the \
housekeeping CPUs, performance governor, RT throttling off."
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

SRC_URI = "file://rtbuild-tune.sh \
           file://rtbuild-tune.service"

S = "${UNPACKDIR}"

inherit systemd allarch

SYSTEMD_SERVICE:${PN} = "rtbuild-tune.service"
SYSTEMD_AUTO_ENABLE = "enable"

do_install() {
    install -d ${D}${sbindir} ${D}${systemd_system_unitdir}
    install -m 0755 ${UNPACKDIR}/rtbuild-tune.sh ${D}${sbindir}/rtbuild-tune.sh
    install -m 0644 ${UNPACKDIR}/rtbuild-tune.service ${D}${systemd_system_unitdir}/rtbuild-tune.service
    sed -i -e 's,@SBINDIR@,${sbindir},g' ${D}${systemd_system_unitdir}/rtbuild-tune.service
}

FILES:${PN} += "${systemd_system_unitdir}/rtbuild-tune.service"
