//! The stage error types that carry an exit code ([`ErrorCode`](crate::exit::ErrorCode)),
//! listed once for [`crate::exit::classify`]. anyhow erases an error's type, so the exit map
//! reaches each type's code through this list; it sits above every stage (only the command
//! layer and `run` import it), which keeps `exit` free of imports.
//!
//! A new stage error that implements `ErrorCode` is added here, or its code is never read (a
//! unit test scans `src/` and fails on an unlisted one).

use crate::exit::{CodeOf, Exit, code_of};

/// Every stage error type that implements `ErrorCode`.
const STAGE_ERRORS: &[CodeOf] = &[
    code_of::<crate::plan::PlanError>,
    code_of::<crate::plan::values::ValueError>,
    code_of::<crate::catalog::CatalogError>,
    code_of::<crate::catalog::meta_qcom::MetaQcomError>,
    code_of::<crate::host::TargetError>,
    code_of::<crate::base::LayoutError>,
    code_of::<crate::generate::GenerateError>,
    code_of::<crate::write::WriteError>,
    code_of::<crate::lock::LockError>,
    code_of::<crate::verify::VerifyError>,
    code_of::<crate::bundle::BundleError>,
    code_of::<crate::history::HistoryError>,
    code_of::<crate::kas::KasError>,
    code_of::<crate::kasrun::BuildError>,
    code_of::<crate::doctor::NotReady>,
    code_of::<crate::image::ImageError>,
];

/// The exit code for an error that ended a command.
pub(crate) fn classify(err: &anyhow::Error) -> Exit {
    crate::exit::classify(err, STAGE_ERRORS)
}

#[cfg(test)]
mod tests {
    /// Every error type that implements `ErrorCode` somewhere in `src/` is in the list (else
    /// its exit code would silently be 1).
    #[test]
    fn every_error_that_carries_a_code_is_listed() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let list = std::fs::read_to_string(src.join("stage_errors.rs")).unwrap();
        let mut found = Vec::new();
        for entry in walkdir::WalkDir::new(&src) {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "rs")
                || entry.path().ends_with("exit.rs")
                || entry.path().ends_with("stage_errors.rs")
            {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for rest in text.split("ErrorCode for ").skip(1) {
                let name: String =
                    rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                found.push(name);
            }
        }
        assert!(found.len() >= 10, "the scan found too few: {found:?}");
        for name in &found {
            assert!(
                list.contains(&format!("::{name}>,")),
                "{name} implements ErrorCode but is not listed"
            );
        }
    }
}
