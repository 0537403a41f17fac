//! Ctrl+C / SIGTERM / SIGHUP during a bake: the signal only sets a flag that the bake checks between
//! frames and the solver before every substep; it then stops, its cache writers remove their
//! temporary files, and the process exits with [`EXIT_INTERRUPTED`]. A second signal ends the process
//! at once (temporary files may remain).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Exit code of an interrupted bake (128 + SIGINT, the shell convention), for SIGTERM and SIGHUP too.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Shared "stop requested" flag, set by the signal handler.
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    requested: Arc<AtomicBool>,
}

impl Interrupt {
    /// Installs the process's SIGINT/SIGTERM/SIGHUP handler, which sets this flag. Fails if a
    /// handler was installed already.
    pub fn install() -> Result<Self, ctrlc::Error> {
        let interrupt = Interrupt::default();
        let requested = Arc::clone(&interrupt.requested);
        ctrlc::set_handler(move || {
            if requested.swap(true, Ordering::SeqCst) {
                eprintln!("clothbake: interrupted again, stopping at once");
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
            eprintln!(
                "clothbake: interrupted, stopping before the next substep (again to stop at once)"
            );
        })?;
        Ok(interrupt)
    }

    /// The flag itself, for the solver to check before every substep.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.requested)
    }

    /// True once a stop was requested.
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }
}
