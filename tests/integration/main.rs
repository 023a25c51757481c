//! Integration tests: run the real rtbuild binary (one test binary, modules by area).

mod harness;
mod machines;
