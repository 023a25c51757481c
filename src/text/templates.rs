//! The one minijinja environment, over every template in `templates/` (compiled into the
//! binary): the kas file, its `caches.yml` include and the layer (`render`), the tuning script (`tune`), the HTML
//! report (`report`) and the history trend page (`history`).
//!
//! Values are typed and validated before they reach a template, so nothing is escaped in the
//! text templates (YAML scalars go through `tojson`); the HTML pages are auto-escaped as HTML
//! (only the SVG charts, drawn by rtbuild, are marked `safe`). An undefined variable is an
//! error.
//!
//! Two files in `templates/` are not minijinja templates and are not in this environment:
//! `onhost-functions.sh` and `onhost-commands.sh`, the two parts of `rtbuild test`'s on-target
//! helper, a static script sent as it is on `sh -s`'s stdin
//! ([`HELPER`](crate::measure::testrun::HELPER) joins them at compile time).

use std::sync::LazyLock;

use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;

const TEMPLATES: &[(&str, &str)] = &[
    ("kas.yml", include_str!("../../templates/kas.yml.j2")),
    ("kas-include.yml", include_str!("../../templates/kas-include.yml.j2")),
    ("local.conf", include_str!("../../templates/local.conf.j2")),
    ("layer.conf", include_str!("../../templates/layer.conf.j2")),
    ("bbappend", include_str!("../../templates/bbappend.j2")),
    ("rt-fragment.cfg", include_str!("../../templates/rt-fragment.cfg.j2")),
    ("rtbuild-tune.sh", include_str!("../../templates/rtbuild-tune.sh.j2")),
    ("rtbuild-rt.sh", include_str!("../../templates/rtbuild-rt.sh.j2")),
    ("report.html", include_str!("../../templates/report.html.j2")),
    ("history.html", include_str!("../../templates/history.html.j2")),
];

static ENVIRONMENT: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    // HTML pages are escaped as HTML; every other template holds checked values only.
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html") { AutoEscape::Html } else { AutoEscape::None }
    });
    // HTML escaping of `& < > " '` only: minijinja's own also escapes `/`, which turns every
    // path and command line in the page source into `&#x2f;` soup.
    env.set_formatter(|out, state, value| {
        if matches!(state.auto_escape(), AutoEscape::Html) && !value.is_safe() {
            let text = value.to_string();
            let mut escaped = String::with_capacity(text.len());
            for c in text.chars() {
                match c {
                    '&' => escaped.push_str("&amp;"),
                    '<' => escaped.push_str("&lt;"),
                    '>' => escaped.push_str("&gt;"),
                    '"' => escaped.push_str("&quot;"),
                    '\'' => escaped.push_str("&#39;"),
                    c => escaped.push(c),
                }
            }
            out.write_str(&escaped).map_err(|_| {
                minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "cannot write")
            })
        } else {
            minijinja::escape_formatter(out, state, value)
        }
    });
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // `{{ runs|counted("run") }}`: `1 run`, `2 runs`, as every count rtbuild prints.
    env.add_filter("counted", |n: u64, noun: &str| super::counted(n, noun));
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .unwrap_or_else(|e| panic!("bug in rtbuild: template {name}: {e}"));
    }
    env
});

/// Renders the template `name` with `ctx`; the result always ends in exactly one newline.
pub(crate) fn render(name: &str, ctx: &impl Serialize) -> Result<String, minijinja::Error> {
    let template = ENVIRONMENT.get_template(name)?;
    let mut text = template.render(minijinja::Value::from(minijinja::value::Serde(ctx)))?;
    let trimmed = text.trim_end_matches('\n').len();
    text.truncate(trimmed);
    text.push('\n');
    if name.ends_with(".html") && text.chars().any(crate::text::is_hidden_format) {
        text = neutralised(&text);
    }
    Ok(text)
}

/// `page` with every invisible format character (a right-to-left override in a scenario name,
/// in a cell, a chart label or an attribute) written as the visible text `\u{202e}`: a page
/// shows names as they are spelt, never reordered ("Trojan Source"). rtbuild's own templates
/// hold none.
fn neutralised(page: &str) -> String {
    let mut out = String::with_capacity(page.len() + 64);
    for c in page.chars() {
        if crate::text::is_hidden_format(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// Issue 34 round 5 item H: a name's right-to-left override reached the page as it was.
    #[test]
    fn html_pages_show_bidirectional_overrides_as_text() {
        assert_eq!(
            super::neutralised("<td>a\u{202e}b\u{2066}\u{feff}</td>"),
            "<td>a\\u{202e}b\\u{2066}\\u{feff}</td>"
        );
    }

    #[test]
    fn every_template_compiles() {
        for (name, _) in super::TEMPLATES {
            assert!(super::ENVIRONMENT.get_template(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn an_unknown_template_or_an_undefined_variable_is_an_error() {
        assert!(super::render("nope", &()).is_err());
        assert!(super::render("rt-fragment.cfg", &()).is_err());
    }

    #[test]
    fn html_templates_escape_and_the_others_do_not() {
        let env = &*super::ENVIRONMENT;
        let html = env.template_from_named_str("x.html", "{{ v }}").unwrap();
        assert_eq!(html.render(minijinja::context! { v => "<a&\"" }).unwrap(), "&lt;a&amp;&quot;");
        let plain = env.template_from_named_str("x.sh", "{{ v }}").unwrap();
        assert_eq!(plain.render(minijinja::context! { v => "<a&" }).unwrap(), "<a&");
    }
}
