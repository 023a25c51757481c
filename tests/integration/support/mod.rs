//! Helpers the integration test files share; only test files live beside this folder.

pub(crate) mod chromium;
pub(crate) mod cpus;
pub(crate) mod fake_tree;
pub(crate) mod fixtures;
pub(crate) mod harness;
pub(crate) mod interrupt;
pub(crate) mod kernel_image;
pub(crate) mod kernel_source;
pub(crate) mod lab;
pub(crate) mod lab_snapshots;
pub(crate) mod lava_job;
pub(crate) mod measuring;
pub(crate) mod pg_server;
pub(crate) mod processes;
pub(crate) mod project;
pub(crate) mod shared_lock;
pub(crate) mod spdx_fixture;
pub(crate) mod sshd;
pub(crate) mod target;
pub(crate) mod tracefs;
pub(crate) mod upstream;
