//! SPDX 3.0.1 JSON-LD, as oe-core's `create-spdx` writes the image SBOM
//! (`${IMAGE_NAME}.spdx.json`) and `sbom-cve-check` its VEX (`.sbom-cve-check.spdx.json`): a
//! `@graph` of typed objects. rtbuild reads three things from it: the kernel `.config`
//! (`SPDX_INCLUDE_KERNEL_CONFIG`: a `build_Build` of type
//! `https://openembedded.org/kernel-configuration` whose parameters are the `CONFIG_*` lines),
//! the packages and their versions, and the VEX verdict per CVE with its CVSS severity. A
//! foreign format (no `schema`): unknown types and fields are ignored.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `build_buildType` of the kernel configuration oe-core's `kernel.bbclass` records.
pub(crate) const KERNEL_CONFIG_BUILD_TYPE: &str = "https://openembedded.org/kernel-configuration";

/// The whole document.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct SpdxFile {
    #[serde(rename = "@graph", default)]
    pub graph: Vec<SpdxObject>,
}

/// One object of the graph, with the fields rtbuild reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct SpdxObject {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(rename = "spdxId", alias = "@id", default)]
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(rename = "software_packageVersion", default)]
    pub package_version: Option<String>,
    #[serde(rename = "build_buildType", default)]
    pub build_type: Option<String>,
    #[serde(rename = "build_parameter", default)]
    pub build_parameter: Vec<DictionaryEntry>,
    #[serde(default)]
    pub from: Option<serde_json::Value>,
    #[serde(rename = "security_severity", default)]
    pub severity: Option<String>,
    #[serde(rename = "externalIdentifier", default)]
    pub external_identifier: Vec<ExternalIdentifier>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct DictionaryEntry {
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub value: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ExternalIdentifier {
    #[serde(rename = "externalIdentifierType", default)]
    pub kind: String,
    #[serde(default)]
    pub identifier: String,
}

/// A CVE's verdict in a VEX document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct VexEntry {
    pub cve: String,
    /// `affected`, `fixed`, `not_affected` or `under_investigation`.
    pub status: String,
    /// CVSS severity (`critical`, `high`, `medium`, `low`, `none`), `unknown` without a score.
    pub severity: String,
}

impl SpdxFile {
    pub(crate) fn parse(bytes: &[u8]) -> Result<SpdxFile, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The kernel `.config` the SBOM carries, as config text (`CONFIG_X=value` lines, string
    /// values quoted again: oe-core strips the quotes).
    pub(crate) fn kernel_config(&self) -> Option<String> {
        let build = self
            .graph
            .iter()
            .find(|o| o.build_type.as_deref() == Some(KERNEL_CONFIG_BUILD_TYPE))?;
        let mut text = String::new();
        for entry in &build.build_parameter {
            let value = entry.value.as_deref().unwrap_or_default();
            if bare_value(value) {
                text.push_str(&format!("{}={value}\n", entry.key));
            } else {
                text.push_str(&format!("{}=\"{}\"\n", entry.key, value.replace('"', "\\\"")));
            }
        }
        Some(text)
    }

    /// Every package and its version (the last one named, when a name repeats).
    pub(crate) fn packages(&self) -> BTreeMap<String, String> {
        self.graph
            .iter()
            .filter(|o| o.kind == "software_Package")
            .filter_map(|o| Some((o.name.clone()?, o.package_version.clone().unwrap_or_default())))
            .collect()
    }

    /// Every CVE the VEX assessments name, sorted, with its verdict and severity.
    pub(crate) fn vex(&self) -> Vec<VexEntry> {
        let cve_of: BTreeMap<&str, String> = self
            .graph
            .iter()
            .filter(|o| o.kind == "security_Vulnerability")
            .map(|o| {
                let cve = o
                    .external_identifier
                    .iter()
                    .find(|e| e.kind == "cve")
                    .map(|e| e.identifier.clone())
                    .or_else(|| o.name.clone())
                    .unwrap_or_else(|| o.id.clone());
                (o.id.as_str(), cve)
            })
            .collect();
        let from = |o: &SpdxObject| -> Option<String> {
            let id = match o.from.as_ref()? {
                serde_json::Value::String(id) => id.clone(),
                other => other.get("spdxId")?.as_str()?.to_string(),
            };
            Some(cve_of.get(id.as_str()).cloned().unwrap_or(id))
        };
        let mut severity: BTreeMap<String, String> = BTreeMap::new();
        for o in self.graph.iter().filter(|o| o.kind.starts_with("security_Cvss")) {
            if let (Some(cve), Some(level)) = (from(o), &o.severity) {
                severity.entry(cve).or_insert_with(|| level.clone());
            }
        }
        let mut entries: Vec<VexEntry> = self
            .graph
            .iter()
            .filter_map(|o| {
                let status = match o.kind.as_str() {
                    "security_VexAffectedVulnAssessmentRelationship" => "affected",
                    "security_VexFixedVulnAssessmentRelationship" => "fixed",
                    "security_VexNotAffectedVulnAssessmentRelationship" => "not_affected",
                    "security_VexUnderInvestigationVulnAssessmentRelationship" => {
                        "under_investigation"
                    }
                    _ => return None,
                };
                let cve = from(o)?;
                let level = severity.get(&cve).cloned().unwrap_or_else(|| "unknown".into());
                Some(VexEntry { cve, status: status.into(), severity: level })
            })
            .collect();
        entries.sort();
        entries.dedup();
        entries
    }
}

/// The JSON-LD context of every SPDX 3 document (`https://spdx.org/rdf/3.0.1/spdx-context.jsonld`
/// for 3.0.1).
const SPDX3_CONTEXT_PREFIX: &str = "https://spdx.org/rdf/3.";

/// Why `bytes` is not an SPDX 3 JSON-LD document (a JSON object whose `@context` is an SPDX 3
/// context and whose `@graph` is a list), as one phrase; `None` when it is one. An SPDX 2
/// document (`spdxVersion`) is named as such: SPDX-2-only tools and SPDX 3 readers cannot read
/// each other's files.
pub(crate) fn not_spdx3(bytes: &[u8]) -> Option<String> {
    let value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => return Some(format!("it is not JSON ({e})")),
    };
    let Some(object) = value.as_object() else {
        return Some("it is not a JSON object".into());
    };
    if let Some(version) = object.get("spdxVersion").and_then(serde_json::Value::as_str) {
        return Some(format!(
            "it is an SPDX 2 document ({})",
            crate::text::printable_first(version, 40)
        ));
    }
    match object.get("@context").and_then(serde_json::Value::as_str) {
        Some(context) if context.starts_with(SPDX3_CONTEXT_PREFIX) => {}
        Some(context) => {
            return Some(format!(
                "its @context `{}` is not an SPDX 3 context",
                crate::text::printable_first(context, 100)
            ));
        }
        None => return Some("it has no SPDX 3 @context".into()),
    }
    if !object.get("@graph").is_some_and(serde_json::Value::is_array) {
        return Some("it has no @graph list".into());
    }
    None
}

/// A config value written without quotes: `y`, `m`, `n`, a number or a hex number.
fn bare_value(value: &str) -> bool {
    matches!(value, "y" | "m" | "n")
        || (!value.is_empty() && value.trim_start_matches('-').bytes().all(|b| b.is_ascii_digit()))
        || value
            .strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_values_are_quoted_again_and_numbers_are_not() {
        assert!(bare_value("y") && bare_value("1000") && bare_value("0x1f") && bare_value("-1"));
        assert!(!bare_value("-rt") && !bare_value("") && !bare_value("0x"));
        let doc = serde_json::json!({"@graph": [{"type": "build_Build",
            "build_buildType": KERNEL_CONFIG_BUILD_TYPE,
            "build_parameter": [{"key": "CONFIG_LOCALVERSION", "value": "-rt"},
                                {"key": "CONFIG_HZ", "value": "1000"}]}]});
        let file = SpdxFile::parse(doc.to_string().as_bytes()).unwrap();
        assert_eq!(file.kernel_config().unwrap(), "CONFIG_LOCALVERSION=\"-rt\"\nCONFIG_HZ=1000\n");
        assert!(SpdxFile::parse(b"{}").unwrap().kernel_config().is_none());
    }

    #[test]
    fn only_spdx3_json_ld_is_spdx3() {
        let ok = br#"{"@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld", "@graph": []}"#;
        assert_eq!(not_spdx3(ok), None);
        let spdx2 = br#"{"spdxVersion": "SPDX-2.3", "SPDXID": "SPDXRef-DOCUMENT", "packages": []}"#;
        assert_eq!(not_spdx3(spdx2).unwrap(), "it is an SPDX 2 document (SPDX-2.3)");
        let other = br#"{"@context": "https://schema.org/", "@graph": []}"#;
        assert_eq!(
            not_spdx3(other).unwrap(),
            "its @context `https://schema.org/` is not an SPDX 3 context"
        );
        let no_graph = br#"{"@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"}"#;
        assert_eq!(not_spdx3(no_graph).unwrap(), "it has no @graph list");
        assert_eq!(not_spdx3(b"{}").unwrap(), "it has no SPDX 3 @context");
        assert_eq!(not_spdx3(b"[]").unwrap(), "it is not a JSON object");
        assert!(not_spdx3(b"<xml/>").unwrap().starts_with("it is not JSON ("));
    }
}
