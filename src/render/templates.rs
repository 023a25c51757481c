//! The minijinja environment over the templates in `templates/`, compiled into the binary.

use minijinja::{AutoEscape, Environment};
use serde::Serialize;

use super::RenderError;

const TEMPLATES: &[(&str, &str)] = &[
    ("kas.yml", include_str!("../../templates/kas.yml.j2")),
    ("local.conf", include_str!("../../templates/local.conf.j2")),
    ("layer.conf", include_str!("../../templates/layer.conf.j2")),
    ("bbappend", include_str!("../../templates/bbappend.j2")),
    ("rt-fragment.cfg", include_str!("../../templates/rt-fragment.cfg.j2")),
];

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    // Values are validated before they reach a template; YAML scalars go through `tojson`.
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .unwrap_or_else(|e| panic!("bug in rtbuild: template {name}: {e}"));
    }
    env
}

/// Renders the template `name` with `ctx`; the result always ends in one newline.
pub(super) fn render(name: &'static str, ctx: &impl Serialize) -> Result<String, RenderError> {
    let env = environment();
    let template =
        env.get_template(name).map_err(|source| RenderError::Template { name, source })?;
    let mut text = template
        .render(minijinja::Value::from(minijinja::value::Serde(ctx)))
        .map_err(|source| RenderError::Template { name, source })?;
    let trimmed = text.trim_end_matches('\n').len();
    text.truncate(trimmed);
    text.push('\n');
    Ok(text)
}
