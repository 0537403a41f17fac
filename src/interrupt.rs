//! Ctrl+C / SIGTERM / SIGHUP during a bake: the signal only sets a flag that the bake checks between
//! frames and the solver before every substep; it then stops, its cache writers remove their
//! temporary files, and the process exits with [`EXIT_INTERRUPTED`] (a resumable bake writes a
//! checkpoint first and exits with [`crate::checkpoint::EXIT_CHECKPOINTED`]). A second signal, more
//! than a second after the first, ends the process at once (temporary files may remain).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit code of an interrupted bake (128 + SIGINT, the shell convention), for SIGTERM and SIGHUP too.
pub const EXIT_INTERRUPTED: u8 = 130;

/// A second signal within this time of the first is taken as the same request (not "stop at once").
const REPEAT_GRACE: Duration = Duration::from_secs(1);

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
        let first: std::sync::Mutex<Option<Instant>> = std::sync::Mutex::new(None);
        ctrlc::set_handler(move || {
            let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
            match *first {
                // A scheduler that signals a whole process group (and a wrapper passing it on) can
                // deliver one stop twice: a repeat within REPEAT_GRACE is the same request.
                Some(t) if t.elapsed() < REPEAT_GRACE => {}
                Some(_) => {
                    eprintln!("clothbake: interrupted again, stopping at once");
                    std::process::exit(i32::from(EXIT_INTERRUPTED));
                }
                None => {
                    *first = Some(Instant::now());
                    requested.store(true, Ordering::SeqCst);
                    eprintln!(
                        "clothbake: interrupted, stopping before the next substep (again to stop at once)"
                    );
                }
            }
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
