//! Wall-clock laps charged to stage timers (the report's per-stage seconds): each lap adds the
//! time since the previous one to the slot it is given.

use std::time::Instant;

/// Consecutive wall-clock laps, each added to a chosen slot (s).
pub(crate) struct Lap(Instant);

impl Lap {
    pub(crate) fn start() -> Self {
        Lap(Instant::now())
    }

    /// Adds the seconds since the last lap (or the start) to `slot`.
    pub(crate) fn lap(&mut self, slot: &mut f64) {
        let now = Instant::now();
        *slot += (now - self.0).as_secs_f64();
        self.0 = now;
    }
}
