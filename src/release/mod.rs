//! What a release manager keeps: [`lock`] files that pin every repository of a build, and
//! [`bundle`]s (flashable `qcomflash` folders and archives with their manifest, provenance,
//! SBOM and signature).

pub(crate) mod bundle;
pub(crate) mod lock;
