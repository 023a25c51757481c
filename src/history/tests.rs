//! Unit tests of the history store against SQLite.
