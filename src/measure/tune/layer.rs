//! The static BitBake recipe and systemd unit that apply the tuning at every boot. `generate`
//! adds these files, plus the rendered script as `files/rtbuild-tune.sh`, to the generated layer and
//! puts [`RECIPE_NAME`] in `IMAGE_INSTALL`.

/// The recipe's name, for `IMAGE_INSTALL`.
pub(crate) const RECIPE_NAME: &str = crate::plan::layer_names::TUNE_RECIPE_NAME;
/// The script's file name inside the recipe's `files/` folder and on the target.
pub(crate) const SCRIPT_NAME: &str = "rtbuild-tune.sh";

const RECIPE_DIR: &str = "recipes-rt/rtbuild-tune";
const RECIPE: &str =
    include_str!("../../../layers/meta-rtbuild-tune/recipes-rt/rtbuild-tune/rtbuild-tune_1.0.bb");
const UNIT: &str = include_str!(
    "../../../layers/meta-rtbuild-tune/recipes-rt/rtbuild-tune/files/rtbuild-tune.service"
);

/// The recipe files, as (path relative to the layer root, bytes), with `script` (from
/// [`super::render_script`]) placed where the recipe fetches it.
pub(crate) fn layer_files(script: &str) -> Vec<(String, Vec<u8>)> {
    vec![
        (format!("{RECIPE_DIR}/{RECIPE_NAME}_1.0.bb"), RECIPE.as_bytes().to_vec()),
        (format!("{RECIPE_DIR}/files/{RECIPE_NAME}.service"), UNIT.as_bytes().to_vec()),
        (format!("{RECIPE_DIR}/files/{SCRIPT_NAME}"), script.as_bytes().to_vec()),
    ]
}

/// Adds the recipe, unit and the rendered `script` to `tree` under `layer_dir` (e.g.
/// `meta-rtbuild`). The caller also puts [`RECIPE_NAME`] in the image's `IMAGE_INSTALL`.
pub(crate) fn add_to_tree(tree: &mut crate::files::tree::Tree, layer_dir: &str, script: &str) {
    for (path, bytes) in layer_files(script) {
        tree.insert(format!("{layer_dir}/{path}"), bytes);
    }
}
