//! One test body, two targets: [`local_and_ssh!`] writes a test twice, once against this
//! machine (`--local`) and once over ssh to an sshd on loopback ([`Sshd`]), so what a user sees
//! locally and on a remote board is checked by the same lines.

#![allow(dead_code)]

use std::path::Path;

use crate::support::sshd::Sshd;

/// Where `rtbuild test` runs in a [`local_and_ssh!`] test.
pub(crate) enum Target {
    /// `--local`.
    Local,
    /// `--target ssh://…` to the sshd it holds (stopped when the target is dropped).
    Ssh(Sshd),
}

impl Target {
    pub(crate) fn local() -> Target {
        Target::Local
    }

    /// Starts an sshd on loopback (`.ci/setup` installs openssh-server).
    pub(crate) fn ssh() -> Target {
        Target::Ssh(Sshd::start())
    }

    /// The flags that name the target.
    pub(crate) fn args(&self) -> Vec<String> {
        match self {
            Target::Local => vec!["--local".into()],
            Target::Ssh(sshd) => ssh_args(sshd, &sshd.config()),
        }
    }

    /// The flags that name the target, whose programs see `root` as the machine's root
    /// (`RTBUILD_SYSROOT`: the caller sets it in rtbuild's environment for a local run; over
    /// ssh the client config sends it).
    pub(crate) fn args_with_sysroot(&self, root: &Path) -> Vec<String> {
        match self {
            Target::Local => self.args(),
            Target::Ssh(sshd) => ssh_args(sshd, &sshd.config_with_sysroot(root)),
        }
    }

    /// What `run.json` records as the run's `target`.
    pub(crate) fn recorded(&self) -> String {
        match self {
            Target::Local => "local".into(),
            Target::Ssh(sshd) => sshd.url(),
        }
    }
}

fn ssh_args(sshd: &Sshd, config: &Path) -> Vec<String> {
    vec!["--target".into(), sshd.url(), "--ssh-config".into(), config.display().to_string()]
}

/// `local_and_ssh! { fn name(target) { body } }` makes a module `name` with two tests,
/// `name::local` and `name::ssh`, each running `body` with `target` bound to its [`Target`].
/// Doc comments and attributes before `fn` go on both tests (`#[ignore = "…"]` included). The
/// body sees the enclosing file's items.
macro_rules! local_and_ssh {
    ($(#[$attr:meta])* fn $name:ident($target:ident) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            $(#[$attr])*
            #[test]
            fn local() {
                let $target = $crate::support::target::Target::local();
                $body
            }

            $(#[$attr])*
            #[test]
            fn ssh() {
                let $target = $crate::support::target::Target::ssh();
                $body
            }
        }
    };
}

pub(crate) use local_and_ssh;
