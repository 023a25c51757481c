//! The one sniffer: what a measurement path is, decided once, and the typed reading every
//! consumer takes (`report`, `report --history`, `history add`). A folder is an `rtbuild test`
//! result folder (it has `run.json`) or qcom-linux-testkit's results (`<TESTNAME>.res` files);
//! a file is opened once, and its first bytes say whether it is a LAVA job log, another
//! rt-tests program's output (JSON or text) or cyclictest's (any format: its parser tells
//! them apart on the same open file). Nothing opens the path again: the reader of each kind
//! reads on from the bytes the sniffer saw.

use std::path::Path;

use crate::files::input::Opened;
use crate::measure::rttests::Program;
use crate::measure::rttests::output::{self, Sniffed};
use crate::results::report::error::ReportError;
use crate::results::report::input::Input;
use crate::results::report::{lava_log, testkit};

/// How much of a file the sniffer reads: enough for the rt-tests programs' first lines; a LAVA
/// log is told by its first [`LAVA_HEAD`] bytes.
const HEAD: usize = 64 * 1024;
/// The bytes a LAVA job log is told by (a YAML list of `{dt, lvl, msg}` entries).
const LAVA_HEAD: usize = 4096;

/// What a measurement path is, with what the sniffer already read of it.
#[derive(Debug)]
pub(crate) enum Measurement {
    /// A folder with `run.json` (or a folder that is none of the others: its reader says
    /// `run.json` is missing).
    ResultFolder,
    /// qcom-linux-testkit's RT-tests results, as found.
    Testkit(testkit::Results),
    /// A LAVA job log of `rtbuild lava`'s job.
    LavaLog(Opened),
    /// Another rt-tests program's output, and whether it is JSON.
    RtTests { program: Program, json: bool, file: Opened },
    /// cyclictest's output, any format (or something only its parser can judge).
    Cyclictest(Opened),
}

/// Decides what `path` is; a file is opened here, once.
pub(crate) fn sniff(path: &Path) -> Result<Measurement, ReportError> {
    if path.is_dir() {
        return Ok(match testkit::find_results(path) {
            Some(found) => Measurement::Testkit(found),
            None => Measurement::ResultFolder,
        });
    }
    // An unreadable file is reported as cyclictest's reader reports it, with how to fix it.
    Ok(sniff_opened(open(path)?))
}

/// Opens the file at `path` for [`sniff_opened`] (for a caller that looks at the file's start
/// itself first: `report --baseline`'s report JSON).
pub(crate) fn open(path: &Path) -> Result<Opened, ReportError> {
    Opened::open(path, HEAD).map_err(|cause| {
        ReportError::from(crate::results::cyclictest::FileError::Open {
            path: path.to_path_buf(),
            cause: crate::results::cyclictest::OpenError(cause),
        })
    })
}

/// What an opened file is, from its first bytes.
pub(crate) fn sniff_opened(opened: Opened) -> Measurement {
    let head = &opened.head()[..opened.head().len().min(LAVA_HEAD)];
    if crate::lab::log::looks_like(&String::from_utf8_lossy(head)) {
        return Measurement::LavaLog(opened);
    }
    match output::sniff_opened(&opened, None) {
        Sniffed::Other { program, json } => Measurement::RtTests { program, json, file: opened },
        Sniffed::Cyclictest => Measurement::Cyclictest(opened),
    }
}

/// Reads one INPUT, whatever it is ([`sniff`]).
pub(crate) fn read(path: &Path, nsecs: bool) -> Result<Input, ReportError> {
    read_sniffed(path, sniff(path)?, nsecs)
}

/// Reads what [`sniff`] found at `path`.
pub(crate) fn read_sniffed(
    path: &Path,
    found: Measurement,
    nsecs: bool,
) -> Result<Input, ReportError> {
    use crate::results::report::input;
    match found {
        Measurement::ResultFolder => input::read_folder(path, nsecs),
        Measurement::Testkit(found) => testkit::read(path, found, nsecs),
        Measurement::LavaLog(file) => lava_log::read(file, nsecs),
        Measurement::RtTests { program, json, file } => {
            input::read_program_output(file, program, json)
        }
        Measurement::Cyclictest(file) => input::read_cyclictest(file, nsecs),
    }
}

/// Opens the file at `path` once and says what it is, keeping the opener's own refusal (for a
/// caller that reads a file of another kind on from the same open file: `history compare`'s
/// bundle manifest).
pub(crate) fn sniff_file(path: &Path) -> Result<Measurement, crate::files::input::InputError> {
    Opened::open(path, HEAD).map(sniff_opened)
}

impl Measurement {
    /// The open file a file's measurement holds (none for a folder).
    pub(crate) fn into_opened(self) -> Option<Opened> {
        match self {
            Measurement::ResultFolder | Measurement::Testkit(_) => None,
            Measurement::LavaLog(file)
            | Measurement::RtTests { file, .. }
            | Measurement::Cyclictest(file) => Some(file),
        }
    }
}
