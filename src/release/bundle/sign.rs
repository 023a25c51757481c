//! Signed release provenance: an in-toto Statement v1 whose subjects are the bundle archive (what
//! is shipped) and the release documents it carries (SBOM, VEX), in a DSSE envelope signed with
//! an ed25519 key the user names (`bundle --signing-key FILE`, PKCS#8 PEM as `openssl genpkey
//! -algorithm ed25519` writes it). The envelope is `<archive stem>.intoto.json` beside the
//! archive (it names the archive's digest, so it cannot be inside it); the manifest records the
//! public key and its key id (sha256 of the public key's DER), and `<archive stem>.pub.pem`
//! beside the archive holds the same public key for `bundle --verify --key`. [`verify`] checks
//! the signature with a public key the verifier trusts and every subject's digest.
//!
//! The predicate is kas's SLSA provenance predicate when the bundle carries kas's statement,
//! else a minimal SLSA v1 predicate naming the machine, the image and rtbuild.

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};

use super::BundleError;
use super::archive::sha256_hex;
use crate::files::limits::KEY_LIMIT;
use crate::formats::bundle_manifest_json::{BundleManifest, SigningKeyRecord};

/// DSSE's payload type for in-toto statements.
pub(crate) const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
const SLSA_V1: &str = "https://slsa.dev/provenance/v1";

/// `x.qcomflash.tar.zst` (or `.tar.gz`) → `x.qcomflash.intoto.json`, the signed envelope
/// beside it.
pub(crate) fn envelope_beside(archive: &Path) -> PathBuf {
    beside(archive, "intoto.json")
}

/// `x.qcomflash.tar.zst` (or `.tar.gz`) → `x.qcomflash.pub.pem`, the signer's public key beside
/// it (the one the manifest names).
pub(crate) fn public_key_beside(archive: &Path) -> PathBuf {
    beside(archive, "pub.pem")
}

fn beside(archive: &Path, extension: &str) -> PathBuf {
    let name = archive.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem =
        name.strip_suffix(".tar.zst").or_else(|| name.strip_suffix(".tar.gz")).unwrap_or(&name);
    archive.with_file_name(format!("{stem}.{extension}"))
}

/// The private key of `--signing-key FILE`.
pub(crate) fn read_signing_key(path: &Path) -> Result<SigningKey, BundleError> {
    let bad = |message: String| BundleError::SigningKey { path: path.to_path_buf(), message };
    let text = crate::files::input::read_to_string(path, KEY_LIMIT).map_err(BundleError::Input)?;
    // Blank lines around the PEM (a key pasted into a CI secret, then written with a newline)
    // are no part of it; the PEM parser refuses them.
    SigningKey::from_pkcs8_pem(text.trim())
        .map_err(|e| bad(format!("not an ed25519 private key in PKCS#8 PEM ({e})")))
}

/// The public key of `--key FILE` (SubjectPublicKeyInfo PEM, as `openssl pkey -pubout` writes).
pub(crate) fn read_public_key(path: &Path) -> Result<VerifyingKey, BundleError> {
    let bad = |message: String| BundleError::PublicKey { path: path.to_path_buf(), message };
    let text = crate::files::input::read_to_string(path, KEY_LIMIT).map_err(BundleError::Input)?;
    VerifyingKey::from_public_key_pem(text.trim())
        .map_err(|e| bad(format!("not an ed25519 public key in PEM ({e})")))
}

/// What the manifest says about the key: the public key (PEM) and its id.
pub(crate) fn key_record(key: &VerifyingKey) -> SigningKeyRecord {
    let der = key.to_public_key_der().map(|d| d.as_bytes().to_vec()).unwrap_or_default();
    let pem = key.to_public_key_pem(Default::default()).unwrap_or_default();
    SigningKeyRecord { algorithm: "ed25519".into(), keyid: sha256_hex(&der), public_key: pem }
}

/// DSSE's pre-authentication encoding of `payload`.
fn pae(payload: &[u8]) -> Vec<u8> {
    let mut out =
        format!("DSSEv1 {} {} {} ", PAYLOAD_TYPE.len(), PAYLOAD_TYPE, payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Envelope {
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    pub payload: String,
    pub signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EnvelopeSignature {
    #[serde(default)]
    pub keyid: String,
    pub sig: String,
}

/// One subject: a name and its sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subject {
    pub name: String,
    pub sha256: String,
}

/// The statement over `subjects` with kas's predicate (`kas_statement`, the bundled
/// provenance) or a minimal one, signed into an envelope.
pub(crate) fn sign(
    key: &SigningKey,
    subjects: &[Subject],
    kas_statement: Option<&[u8]>,
    manifest: &BundleManifest,
) -> Envelope {
    let kas: Option<serde_json::Value> = kas_statement.and_then(|b| serde_json::from_slice(b).ok());
    let (predicate_type, predicate) = match kas.as_ref().and_then(|k| {
        Some((k.get("predicateType")?.as_str()?.to_string(), k.get("predicate")?.clone()))
    }) {
        Some(found) => found,
        None => (
            SLSA_V1.to_string(),
            serde_json::json!({
                "buildDefinition": {
                    "buildType": "https://github.com/qualcomm-linux/meta-qcom/rtbuild-bundle/v1",
                    "externalParameters": {"machine": manifest.machine, "image": manifest.image},
                },
                "runDetails": {"builder": {"id": format!("rtbuild {}", manifest.rtbuild_version)}},
            }),
        ),
    };
    let statement = serde_json::json!({
        "_type": STATEMENT_TYPE,
        "subject": subjects.iter().map(|s| serde_json::json!({"name": s.name, "digest": {"sha256": s.sha256}})).collect::<Vec<_>>(),
        "predicateType": predicate_type,
        "predicate": predicate,
    });
    let payload = serde_json::to_vec(&statement).unwrap_or_default();
    let signature: Signature = key.sign(&pae(&payload));
    Envelope {
        payload_type: PAYLOAD_TYPE.into(),
        payload: B64.encode(&payload),
        signatures: vec![EnvelopeSignature {
            keyid: key_record(&key.verifying_key()).keyid,
            sig: B64.encode(signature.to_bytes()),
        }],
    }
}

/// The statement's subjects when one signature of `envelope` verifies with `key`; otherwise
/// why not.
pub(crate) fn open(envelope: &Envelope, key: &VerifyingKey) -> Result<Vec<Subject>, String> {
    if envelope.payload_type != PAYLOAD_TYPE {
        return Err(format!(
            "payload type `{}` is not an in-toto statement",
            envelope.payload_type
        ));
    }
    let payload =
        B64.decode(&envelope.payload).map_err(|e| format!("the payload is not base64 ({e})"))?;
    let message = pae(&payload);
    let verified = envelope.signatures.iter().any(|s| {
        B64.decode(&s.sig)
            .ok()
            .and_then(|bytes| Signature::from_slice(&bytes).ok())
            .is_some_and(|sig| key.verify(&message, &sig).is_ok())
    });
    if !verified {
        return Err("no signature of the envelope verifies with this key".into());
    }
    let statement: serde_json::Value = serde_json::from_slice(&payload)
        .map_err(|e| format!("the signed payload is not JSON ({e})"))?;
    if statement.get("_type").and_then(serde_json::Value::as_str) != Some(STATEMENT_TYPE) {
        return Err("the signed payload is not an in-toto Statement v1".into());
    }
    let subjects = statement
        .get("subject")
        .and_then(serde_json::Value::as_array)
        .map(|list| {
            list.iter()
                .map(|s| Subject {
                    name: s
                        .get("name")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default()
                        .into(),
                    sha256: s
                        .pointer("/digest/sha256")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default()
                        .into(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(subjects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_and_public_key_sit_beside_either_flavour_of_archive() {
        for archive in ["out/x.qcomflash.tar.zst", "out/x.qcomflash.tar.gz"] {
            let archive = Path::new(archive);
            assert_eq!(envelope_beside(archive), Path::new("out/x.qcomflash.intoto.json"));
            assert_eq!(public_key_beside(archive), Path::new("out/x.qcomflash.pub.pem"));
        }
    }

    /// A key file with blank lines or spaces around the PEM (a CI secret pasted with its
    /// trailing newline, then written with one more) is the same key.
    #[test]
    fn keys_read_with_blank_lines_around_the_pem() {
        use ed25519_dalek::pkcs8::{EncodePrivateKey, EncodePublicKey};
        let key = SigningKey::from_bytes(&[9; 32]);
        let private = key.to_pkcs8_pem(Default::default()).unwrap();
        let public = key.verifying_key().to_public_key_pem(Default::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (private_file, public_file) = (dir.path().join("k.pem"), dir.path().join("k.pub.pem"));
        crate::files::write::fixture(&private_file, format!("\n{}\n\n", private.as_str())).unwrap();
        crate::files::write::fixture(&public_file, format!("  {public}\n\n")).unwrap();
        assert_eq!(read_signing_key(&private_file).unwrap().to_bytes(), [9; 32]);
        assert_eq!(read_public_key(&public_file).unwrap(), key.verifying_key());
    }

    #[test]
    fn pae_is_dsse_v1() {
        assert_eq!(pae(b"hi"), b"DSSEv1 28 application/vnd.in-toto+json 2 hi".to_vec());
    }

    #[test]
    fn a_signed_statement_opens_with_its_key_only() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let other = SigningKey::from_bytes(&[8; 32]);
        let manifest: BundleManifest = serde_json::from_value(serde_json::json!({
            "schema": 1, "rtbuild_version": "0", "machine": "m", "image": "i", "qcomflash": "q",
            "build_time": null, "kernel": {"version": null, "cmdline": null, "cmdline_source": null, "config_sha256": null},
            "verify": {"status": "passed", "allowed_unverified": false, "checks": []},
            "repos": [], "lock": null, "flash_command": [], "files": []
        }))
        .unwrap();
        let subjects = vec![Subject { name: "a.tar.zst".into(), sha256: "ab".repeat(32) }];
        let envelope = sign(&key, &subjects, None, &manifest);
        assert_eq!(open(&envelope, &key.verifying_key()).unwrap(), subjects);
        assert_eq!(
            open(&envelope, &other.verifying_key()).unwrap_err(),
            "no signature of the envelope verifies with this key"
        );
        let mut tampered = envelope.clone();
        tampered.payload = B64.encode(b"{}");
        assert!(open(&tampered, &key.verifying_key()).is_err());
    }
}
