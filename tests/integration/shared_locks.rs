//! The locks `.ci/test`'s test processes share (the lab's guests, the measurements on this
//! machine: both are `shared_lock::hold`): while one process holds a lock, another process cannot
//! take it (util-linux `flock -n` on the same file stands in for the other test process), and
//! once the guard is dropped it can. The test's own lock names, so that the suite's other
//! processes, which hold the real ones for minutes, cannot disturb it.

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use crate::support::shared_lock::hold;

/// Whether another process gets the lock file `name` at once (`flock -n FILE true`).
fn another_process_gets(name: &str) -> bool {
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.lock"));
    let status = Command::new("flock").arg("-n").arg(&file).arg("true").status().expect("flock");
    match status.code() {
        Some(0) => true,
        Some(1) => false,
        other => panic!("flock -n {}: {other:?}", file.display()),
    }
}

#[test]
fn a_shared_lock_holds_against_another_process_until_it_is_dropped() {
    static FIRST: Mutex<()> = Mutex::new(());
    static SECOND: Mutex<()> = Mutex::new(());
    {
        let _held = hold(&FIRST, "shared-lock-test-first");
        assert!(!another_process_gets("shared-lock-test-first"), "another process took it");
        assert!(another_process_gets("shared-lock-test-second"), "one name locked another");
    }
    assert!(another_process_gets("shared-lock-test-first"), "the lock outlived its guard");
    let _held = hold(&SECOND, "shared-lock-test-second");
    assert!(!another_process_gets("shared-lock-test-second"), "another process took it");
}
