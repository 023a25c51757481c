//! Loading a document of rtbuild's own (a plan, a verify report, a `run.json`, a generated
//! manifest): read within [`crate::files::input::TEXT_LIMIT`] through the one bounded opener,
//! then parsed by its format in `crate::formats`.

/// Why a file of rtbuild's own could not be loaded: it is no readable input, or not in its
/// format. Shown as its cause says it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    #[error(transparent)]
    Input(#[from] crate::files::input::InputError),
    #[error(transparent)]
    Format(#[from] crate::formats::FormatError),
}

/// Reads the text file at `path` (at most [`crate::files::input::TEXT_LIMIT`]) and parses it.
pub(crate) fn load<T>(
    path: &std::path::Path,
    parse: impl FnOnce(&str) -> Result<T, crate::formats::FormatError>,
) -> Result<T, LoadError> {
    let text = crate::files::input::read_to_string(path, crate::files::input::TEXT_LIMIT)?;
    Ok(parse(&text)?)
}

/// An `rtbuild test` result folder's `run.json`, read once: its bytes (packed as they are) and
/// its record.
#[derive(Debug, Clone)]
pub(crate) struct RunJsonFile {
    pub path: std::path::PathBuf,
    pub text: String,
    pub record: crate::formats::run_json::RunRecord,
}

/// Reads `dir/run.json` once (bounded; a FIFO, a device or a folder is refused).
pub(crate) fn read_run_json(dir: &std::path::Path) -> Result<RunJsonFile, LoadError> {
    let path = dir.join(crate::formats::run_json::FILE);
    let text = crate::files::input::read_to_string(&path, crate::files::input::TEXT_LIMIT)?;
    let record = crate::formats::run_json::RunRecord::parse(&text)?;
    Ok(RunJsonFile { path, text, record })
}
