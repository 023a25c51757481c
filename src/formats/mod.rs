//! The files rtbuild writes and reads back, each defined once: one serde type per file, used by
//! the stage that writes it and by every stage that reads it.
//!
//! | file | type | written by | read by |
//! |---|---|---|---|
//! | `rtbuild-plan.json` | [`plan_json::PlanFile`] | `generate` | `verify`, `bundle`, `image` |
//! | `verify.json`, `verify --json` | [`verify_json::VerifyFile`] | `verify`, `image` | `bundle` |
//! | `run.json` | [`run_json::RunRecord`] | `test` | `report` |
//! | `report --json` | [`report_json::LatencyReport`] | `report` | `report --baseline` |
//! | SPDX 3 image SBOM / VEX | [`spdx_json::SpdxFile`] | oe-core `create-spdx`, `sbom-cve-check` | `verify`, `bundle` |
//! | kas provenance statement | [`provenance_json::Statement`] | `kas build --provenance` | `bundle` |
//! | `rtbuild-manifest.json` | [`generated_manifest_json::GeneratedManifest`] | `generate` | `generate` (hand edits) |
//! | bundle `manifest.json` | [`bundle_manifest_json::BundleManifest`] | `bundle` | `bundle --check`/`--diff`, `history add` |
//! | `bundle --diff --json` | [`bundle_diff_json::BundleDiff`] | `bundle --diff` | (people, CI) |
//! | `history list --json`, history rows | [`history_json::HistoryRun`] | `history add` | `history` |
//! | `report --junit`, `verify.junit.xml` | [`junit_xml::TestSuites`] | `report`, `image` | CI (Jenkins, GitLab) |
//! | `rtbuild lava` job | [`lava_job::Job`] | `lava` | LAVA |
//! | cyclictest `--json` | [`cyclictest_json::CyclictestJson`] | cyclictest | `report`, `test` |
//!
//! rtbuild's own files carry a `schema` number. [`read_json`] checks it before anything else:
//! a file without one is version 1 (the files written before the field existed), a newer
//! version than this rtbuild knows is refused with a message saying to upgrade. Unknown fields
//! are ignored, so a newer rtbuild may add fields within a version.

pub(crate) mod bundle_diff_json;
pub(crate) mod bundle_manifest_json;
pub(crate) mod cyclictest_json;
pub(crate) mod generated_manifest_json;
pub(crate) mod history_json;
pub(crate) mod judge;
pub(crate) mod junit_xml;
pub(crate) mod kas_yaml;
pub(crate) mod kconfig_lines;
pub(crate) mod lava_job;
pub(crate) mod openmetrics;
pub(crate) mod plan_json;
pub(crate) mod provenance_json;
pub(crate) mod report_json;
pub(crate) mod rt_tests;
pub(crate) mod run_json;
pub(crate) mod spdx_json;
pub(crate) mod verdict;
pub(crate) mod verify_json;

use serde::de::DeserializeOwned;

/// A file of rtbuild's own that cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FormatError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(
        "`schema` is {found}, but this rtbuild reads {file} up to schema {supported}; upgrade rtbuild"
    )]
    Newer { file: &'static str, found: u64, supported: u32 },
    #[error("unknown report schema; expected `{expected}`")]
    UnknownReport { expected: &'static str },
    #[error("`schema` must be a whole number, not {found}")]
    BadSchema { found: String },
    #[error("no boolean `{field}` field")]
    NoBoolean { field: &'static str },
}

/// One of rtbuild's versioned files.
pub(crate) trait Versioned: DeserializeOwned {
    /// The file's usual name (for messages).
    const FILE: &'static str;
    /// The newest schema this rtbuild writes and reads.
    const SCHEMA: u32;
}

/// Parses `text` as `T`, after checking its `schema` number.
///
/// Neither pass builds a tree of the whole document: the schema is read with every other
/// field skipped, and `T` straight from the text, so a list's budget ([`at_most`]) bites while
/// it is read (issue 34: 64 MiB of `0,` in `scenarios` was a 1 GiB `serde_json::Value` tree
/// before any budget was counted).
pub(crate) fn read_json<T: Versioned>(text: &str) -> Result<T, FormatError> {
    /// The document's `schema` alone.
    #[derive(serde::Deserialize)]
    struct Schema {
        #[serde(default)]
        schema: Scalar,
    }
    let Schema { schema } = serde_json::from_str(text).map_err(without_position)?;
    check_schema::<T>(&serde_json::json!({ "schema": schema.0 }))?;
    Ok(serde_json::from_str(text).map_err(without_position)?)
}

/// Refuses a JSON document of more than `max` values (every scalar, list, object and key
/// counts) in one pass that holds none of them: a reader that keeps what it reads is then
/// bounded by `max`, not by how small each value can be written (`"",` is three bytes and a
/// 24-byte `String`). A text that is not JSON passes: its reader says what is wrong with it.
pub(crate) fn within_values(text: &str, max: usize) -> Result<(), FormatError> {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::cell::Cell;

    #[derive(Clone, Copy)]
    struct Count<'a> {
        left: &'a Cell<usize>,
        over: &'a Cell<bool>,
        max: usize,
    }
    impl Count<'_> {
        fn tick<E: serde::de::Error>(self) -> Result<(), E> {
            match self.left.get().checked_sub(1) {
                Some(left) => {
                    self.left.set(left);
                    Ok(())
                }
                None => {
                    self.over.set(true);
                    Err(E::custom(format!("more than {} JSON values", self.max)))
                }
            }
        }
    }
    impl<'de> DeserializeSeed<'de> for Count<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Count<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
            self.tick()
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
            self.tick()
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
            self.tick()
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
            self.tick()
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
            self.tick()
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
            self.tick()
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            self.tick()?;
            while seq.next_element_seed(self)?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            self.tick()?;
            while map.next_key_seed(self)?.is_some() {
                map.next_value_seed(self)?;
            }
            Ok(())
        }
    }
    let (left, over) = (Cell::new(max), Cell::new(false));
    let mut de = serde_json::Deserializer::from_str(text);
    match (Count { left: &left, over: &over, max }).deserialize(&mut de) {
        Err(err) if over.get() => Err(without_position(err).into()),
        _ => Ok(()),
    }
}

/// A JSON value kept only when it is a scalar: a list or object is skipped without being held
/// (it stands as `"a list"` or `"an object"`, which no schema check takes).
#[derive(Default)]
pub(crate) struct Scalar(pub serde_json::Value);

impl<'de> serde::Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = serde_json::Value;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(v.into())
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(v.into())
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(v.into())
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(v.into())
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(v.chars().take(80).collect::<String>().into())
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(serde_json::Value::Null)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> Result<Self::Value, A::Error> {
                while s.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok("a list".into())
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Self::Value, A::Error> {
                while m.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
                Ok("an object".into())
            }
        }
        d.deserialize_any(Visit).map(Scalar)
    }
}

/// `err` without the ` at line L column C` serde_json adds when it reads text, so a message
/// says what is wrong as it did when rtbuild read through a `serde_json::Value`.
fn without_position(err: serde_json::Error) -> serde_json::Error {
    if err.line() == 0 || !err.is_data() {
        return err;
    }
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    <serde_json::Error as serde::de::Error>::custom(message)
}

/// A list of at most `max` items, refused past that while it is read (a reader holds every
/// item; a file of 200,000 empty scenarios needed 1.9 GB).
pub(crate) fn at_most<'de, D, T>(
    deserializer: D,
    max: usize,
    what: &str,
) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    struct Bounded<'a, T> {
        max: usize,
        what: &'a str,
        item: std::marker::PhantomData<T>,
    }
    impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Bounded<'_, T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "a list of at most {} {}", self.max, self.what)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                if items.len() == self.max {
                    return Err(serde::de::Error::custom(format!(
                        "more than {} {}",
                        self.max, self.what
                    )));
                }
                items.push(item);
            }
            Ok(items)
        }
    }
    deserializer.deserialize_seq(Bounded { max, what, item: std::marker::PhantomData })
}

/// Checks the `schema` number of an already parsed document.
pub(crate) fn check_schema<T: Versioned>(value: &serde_json::Value) -> Result<(), FormatError> {
    match value.get("schema") {
        None | Some(serde_json::Value::Null) => Ok(()),
        Some(schema) => match schema.as_u64() {
            Some(found) if found <= u64::from(T::SCHEMA) && found >= 1 => Ok(()),
            Some(found) if found > u64::from(T::SCHEMA) => {
                Err(FormatError::Newer { file: T::FILE, found, supported: T::SCHEMA })
            }
            _ => Err(FormatError::BadSchema { found: schema.to_string() }),
        },
    }
}

/// Serialises `value` as pretty JSON with a final newline (the form every rtbuild file has),
/// DEL, C1 and invisible format characters written as `\uXXXX` escapes
/// ([`crate::text::escape_json_text`]).
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let mut text = crate::text::escape_json_text(&serde_json::to_string_pretty(value)?);
    text.push('\n');
    Ok(text)
}

/// The `schema` field's default when a file has none.
pub(crate) fn first_schema() -> u32 {
    1
}

#[cfg(test)]
mod tests;
