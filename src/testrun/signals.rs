//! Ctrl-C, SIGTERM and SIGHUP during a test run: the first one sets a flag the run loop checks
//! (so stress-ng is stopped, tuning reverted and partial results written); a second one ends
//! rtbuild at once with exit code 130.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// Set once a stop signal arrived.
#[derive(Debug, Clone)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// Installs the handlers. Failing to install them only loses the clean abort.
    pub fn install() -> StopFlag {
        let flag = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, flag.clone());
            let _ = signal_hook::flag::register(signal, flag.clone());
        }
        StopFlag(flag)
    }

    pub fn raised(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
