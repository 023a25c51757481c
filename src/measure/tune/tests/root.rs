//! `refuse_unless_root`: apply and revert ask the target for its user id before anything is
//! said or run, through a recording runner (no ssh is started).

use super::*;
use crate::host::Host;
use crate::host::runner::Recorder;

fn board() -> Host {
    Host::Ssh(crate::host::SshTarget::parse("ssh://me@board").unwrap())
}

#[test]
fn apply_and_revert_as_another_user_are_refused_naming_the_host_and_the_user_id() {
    for action in [Action::Apply, Action::Revert] {
        let runner = Recorder::new("1000\n", 0);
        let err = refuse_unless_root(&runner, &board(), action).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "tune --{} needs root on ssh://me@board, which runs it as user id 1000; run \
                 rtbuild as root for --local, or use --target ssh://root@HOST",
                action.word()
            )
        );
        assert_eq!(crate::error::ErrorCode::exit(&err), crate::error::Exit::Usage);
        // One call: `sh -s -- ACTION` on the target, `id -u` on its stdin.
        let argvs = runner.argvs();
        assert_eq!(argvs.len(), 1, "{argvs:?}");
        assert_eq!(argvs[0].last(), Some(&format!("sh -s -- {}", action.word())), "{argvs:?}");
    }
}

#[test]
fn root_verify_and_an_answer_that_is_no_user_id_go_on() {
    assert!(refuse_unless_root(&Recorder::new("0\n", 0), &board(), Action::Apply).is_ok());
    // The script's own check decides when the target's answer is not a user id.
    assert!(
        refuse_unless_root(&Recorder::new("id: not found\n", 0), &board(), Action::Apply).is_ok()
    );
    assert!(refuse_unless_root(&Recorder::new("1000\n", 127), &board(), Action::Revert).is_ok());
    // verify only reads: nothing is asked.
    let runner = Recorder::new("1000\n", 0);
    assert!(refuse_unless_root(&runner, &board(), Action::Verify).is_ok());
    assert!(runner.argvs().is_empty());
}

#[test]
fn a_lost_connection_is_said_as_such() {
    let err = refuse_unless_root(&Recorder::new("", 255), &board(), Action::Apply).unwrap_err();
    assert!(matches!(err, TuneRunError::Connection { .. }), "{err}");
}
