//! `--board NAME` ([`BoardArg`]): a board the catalog does not know, named on the command line
//! with its CPUs (`--rt-cpus`), wherever a catalog machine could be named: `test`, `tune`,
//! `verify` and `report`. The name is shown in the command's output and recorded where the
//! command records a machine; it never picks CPUs or a build.

use clap::Args;

/// `--board NAME`, the same flag and the same rule for a name in every command.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct BoardArg {
    /// Name of a board that is not in the catalog (with --rt-cpus), shown and recorded where a
    /// catalog machine's name would be: letters, digits, `-` and `_`, e.g. rk3588-evb.
    #[arg(long, value_name = "NAME", value_parser = board_name, conflicts_with = "machine")]
    pub board: Option<String>,
}

/// A name as the catalog allows one (it is shown in reports and the history).
pub(crate) fn board_name(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 64
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
    if ok {
        Ok(text.to_string())
    } else {
        Err("a board name is 1 to 64 letters, digits, `-` and `_`, e.g. rk3588-evb".into())
    }
}
