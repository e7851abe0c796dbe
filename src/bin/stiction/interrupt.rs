//! SIGINT (Ctrl-C) as a request to stop: the commands that poll [`requested`] between steps
//! or iterations (`simulate`, `sweep`, `optimize`, `mpc`, `identify`) install the handler
//! ([`install`]), finish the step or iteration under way, write what exists (for `optimize`
//! the best trajectory so far, for `mpc` the closed loop so far, for `identify` the best
//! start's last iterate with Wald intervals) and exit with code 130 (128 + SIGINT,
//! as a shell reports a process the signal killed). Commands that do not poll keep the
//! default: Ctrl-C ends them at once.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Exit code of a run stopped by SIGINT.
pub const EXIT_CODE: u8 = 130;

/// Installs the SIGINT handler: from now on Ctrl-C sets the flag [`requested`] reads (a
/// second Ctrl-C while the run winds down changes nothing; SIGKILL still ends it at once).
pub fn install() {
    // A handler already installed (a second call) is not an error worth stopping for: the
    // flag is the same.
    let _ = ctrlc::set_handler(|| REQUESTED.store(true, Ordering::SeqCst));
}

/// Whether SIGINT arrived since [`install`].
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The flag itself, for library calls that poll an [`AtomicBool`]
/// (`stiction::identify::identify_until`).
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}

/// [`ControlFlow::Break`] once SIGINT arrived, else [`ControlFlow::Continue`]: the answer of a
/// step or iteration observer.
pub fn flow() -> ControlFlow<()> {
    if requested() {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
}
