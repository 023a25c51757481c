//! The stage error types that carry an exit code ([`ErrorCode`](crate::exit::ErrorCode)),
//! listed once for [`crate::exit::classify`]. anyhow erases an error's type, so the exit map
//! reaches each type's code through this list; it sits above every stage (only the command
//! layer and `run` import it), which keeps `exit` free of imports.
//!
//! A new stage error that implements `ErrorCode` is added here, or its code is never read.

use crate::exit::{CodeOf, Exit, code_of};

/// Every stage error type that implements `ErrorCode`.
const STAGE_ERRORS: &[CodeOf] = &[
    code_of::<crate::plan::PlanError>,
    code_of::<crate::plan::values::ValueError>,
    code_of::<crate::catalog::CatalogError>,
    code_of::<crate::catalog::meta_qcom::MetaQcomError>,
    code_of::<crate::target::TargetError>,
    code_of::<crate::tune::LayoutError>,
    code_of::<crate::generate::GenerateError>,
    code_of::<crate::write::WriteError>,
    code_of::<crate::lock::LockError>,
    code_of::<crate::verify::VerifyError>,
    code_of::<crate::bundle::BundleError>,
    code_of::<crate::kasrun::BuildError>,
    code_of::<crate::doctor::NotReady>,
    code_of::<crate::image::ImageError>,
];

/// The exit code for an error that ended a command.
pub(crate) fn classify(err: &anyhow::Error) -> Exit {
    crate::exit::classify(err, STAGE_ERRORS)
}
