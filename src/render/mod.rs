//! Rendering: [`Plan`] → [`Tree`], pure (no filesystem, environment or clock). The same plan
//! always gives the same bytes.

use crate::plan::Plan;
use crate::tree::Tree;

/// rtbuild's own kernel fragment in the layer.
pub const RT_FRAGMENT_NAME: &str = "rtbuild-rt.cfg";

/// Renders the kas file and the layer for `plan`.
pub fn render(_plan: &Plan) -> Result<Tree, RenderError> {
    Ok(Tree::new())
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("bug in rtbuild: template {name} failed: {source}")]
    Template {
        name: String,
        #[source]
        source: minijinja::Error,
    },
}
