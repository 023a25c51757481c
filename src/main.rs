//! The `rtbuild` binary: everything happens in [`rtbuild::run`].
use std::process::ExitCode;

fn main() -> ExitCode {
    rtbuild::run(std::env::args_os())
}
