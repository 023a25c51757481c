//! Integration tests: run the real rtbuild binary.
