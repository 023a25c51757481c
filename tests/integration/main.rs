//! Integration tests: run the real rtbuild binary (one test binary, modules by area).

// Test code may unwrap and start processes directly (the harness is the test's runner).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod bounded_readers;
mod bundle;
mod ci_lint;
mod doctor;
mod error_contract;
mod generate_cli;
mod generate_kas;
mod generate_rollback;
mod guides;
mod history;
mod hostile_target;
mod hostile_values;
mod image_errors;
mod image_fake_bitbake;
mod junit_schema;
mod kconfig_check;
mod lava;
mod lava_2026;
mod lava_qemu_job;
mod lava_real_log;
mod lava_run_qemu;
mod lava_test_plans;
mod lock;
mod machines;
mod matrix_ci_setup;
mod memory_budgets;
mod output_devices;
mod path_injection;
mod real_upstream;
mod real_upstream_layouts;
mod report;
mod report_long_lines;
mod reproducers;
mod rt_guest;
mod rt_guest_arm64;
mod rt_suite;
mod signals;
mod support;
mod target_spoilers;
mod testkit;
mod testrun;
mod testrun_abort;
mod testrun_footprint;
mod testrun_knobs;
mod testrun_trace;
mod testrun_verdict;
mod tune_cli;
mod verify;
mod verify_kconfig;
mod verify_remote;
mod verify_shipped;
