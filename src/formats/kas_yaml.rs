//! Every kas configuration file rtbuild writes is produced here: the generated kas file (from
//! its template, for the comments that explain each setting), the `caches.yml` include, and lock
//! files. They share one format version, [`KAS_FORMAT_VERSION`], and one way of writing a
//! leading comment.

use std::collections::BTreeMap;

use serde::Serialize;

/// The kas config format version rtbuild writes in every `header:`: 14, the lowest that knows
/// `overrides:` (kas's `LOCKFILE_VERSION_MIN`), so the same number serves the kas file and its
/// lock.
pub(crate) const KAS_FORMAT_VERSION: u32 = 14;

/// The generated kas file, rendered from `templates/kas.yml.j2` with `ctx` (plus
/// `kas_version`).
pub(crate) fn generated(ctx: &impl Serialize) -> Result<String, minijinja::Error> {
    let ctx = minijinja::context! {
        kas_version => KAS_FORMAT_VERSION,
        ..minijinja::Value::from(minijinja::value::Serde(ctx))
    };
    crate::text::templates::render("kas.yml", &ctx)
}

/// A kas include that adds one `local_conf_header` block `id` holding `lines` (left out when
/// there are none), under `comment`. Each line must already be checked: it is written as it is
/// inside a literal block.
pub(crate) fn local_conf_include(comment: &str, id: &str, lines: &[String]) -> String {
    let ctx = minijinja::context! {
        comment => comment_block(comment),
        kas_version => KAS_FORMAT_VERSION,
        id => id,
        lines => lines.to_vec(),
    };
    // The template compiles (a test renders every one) and its values are strings.
    crate::text::templates::render("kas-include.yml", &ctx).unwrap_or_default()
}

/// A lock file in kas's own form (`overrides: repos:`, what `kas lock` writes), `repos`
/// sorted by name, under `comment`.
pub(crate) fn lock_file<P: Serialize>(comment: &str, repos: &BTreeMap<String, P>) -> String {
    #[derive(Serialize)]
    struct Header {
        version: u32,
    }
    #[derive(Serialize)]
    struct Overrides<'a, P> {
        repos: &'a BTreeMap<String, P>,
    }
    #[derive(Serialize)]
    struct Doc<'a, P> {
        header: Header,
        overrides: Overrides<'a, P>,
    }
    let doc =
        Doc { header: Header { version: KAS_FORMAT_VERSION }, overrides: Overrides { repos } };
    let body = serde_yaml::to_string(&doc).unwrap_or_default();
    comment_block(comment) + &body
}

/// `comment` as YAML comment lines: `# text`, and `#` alone for an empty line.
fn comment_block(comment: &str) -> String {
    comment.lines().map(|line| format!("# {line}\n").replace("# \n", "#\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_conf_include_is_a_comment_a_header_and_one_literal_block() {
        let lines = ["A = \"1\"".to_string(), "B += \"x \\".to_string(), "\"".to_string()];
        let text = local_conf_include("first\n\nsecond", "rtbuild-caches", &lines);
        assert_eq!(
            text,
            "# first\n#\n# second\nheader:\n  version: 14\nlocal_conf_header:\n  rtbuild-caches: |\n    A = \"1\"\n    B += \"x \\\n    \"\n"
        );
        let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(yaml["local_conf_header"]["rtbuild-caches"], "A = \"1\"\nB += \"x \\\n\"\n");
    }

    #[test]
    fn an_include_without_lines_has_no_local_conf_header() {
        assert_eq!(local_conf_include("c", "id", &[]), "# c\nheader:\n  version: 14\n");
    }

    #[test]
    fn an_empty_lock_says_repos_is_an_empty_mapping() {
        let repos: BTreeMap<String, String> = BTreeMap::new();
        assert_eq!(
            lock_file("no pins", &repos),
            "# no pins\nheader:\n  version: 14\noverrides:\n  repos: {}\n"
        );
    }
}
