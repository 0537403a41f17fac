//! Which diagonal shift of the incomplete Cholesky factor a solve tries first.
//!
//! IC(0) of the filtered system can break down (a pivot that is not positive definite); the
//! factor is then rebuilt with every diagonal block scaled by the next of [`IC_SHIFTS`] (shifted
//! incomplete Cholesky, Manteuffel 1980; [`super::IncompleteCholesky`]). A failed try costs the
//! factorization up to its first breakdown. On the character garments the same shift holds for
//! most of a bake: the 10k dress of the character bench broke down at 1 and 1.01 and held at
//! 1.05 in 325 of its 337 solves, the bpy skirt in 240 of 319 (62 at 1.01, 17 at 1), so two
//! failed tries preceded nearly every solve: 2.8 ms per solve on the dress where one
//! factorization takes about 1 ms (2026-11-26, loaded machine). The simulation therefore
//! remembers, in its state ([`crate::state::StepController`], so a resumed bake starts where an
//! uninterrupted one is), the shift the last solve needed and starts there; after
//! [`PROBE_AFTER`] solves in a row that held at it, the next one tries the shift below again,
//! so a garment that calms down returns to the stronger factor within a few frames.

use serde::{Deserialize, Serialize};

/// Diagonal scalings 1 + α tried in turn until the incomplete Cholesky factor has no pivot
/// breakdown. The last one is kept even if it breaks down.
pub const IC_SHIFTS: [f32; 6] = [1.0, 1.01, 1.05, 1.25, 2.0, 5.0];

/// Solves in a row that held at the remembered shift, after which the next solve tries the one
/// below it (one failed try at most every this many solves).
pub const PROBE_AFTER: u8 = 16;

/// The remembered shift ([`IC_SHIFTS`] index) and how long it has held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShiftMemory {
    /// Index of the first shift the next solve tries.
    pub first: u8,
    /// Solves in a row whose factor held at `first`.
    pub held: u8,
}

impl ShiftMemory {
    /// Notes the shift index a solve's factor used (≥ `first`).
    pub fn note(&mut self, used: u8) {
        if used != self.first {
            *self = ShiftMemory {
                first: used,
                held: 0,
            };
            return;
        }
        self.held = self.held.saturating_add(1);
        if self.held >= PROBE_AFTER {
            *self = ShiftMemory {
                first: self.first.saturating_sub(1),
                held: 0,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_moves_up_and_probes_down() {
        let mut m = ShiftMemory::default();
        m.note(2);
        assert_eq!(m, ShiftMemory { first: 2, held: 0 });
        for k in 1..PROBE_AFTER {
            m.note(2);
            assert_eq!(m, ShiftMemory { first: 2, held: k });
        }
        m.note(2);
        assert_eq!(m, ShiftMemory { first: 1, held: 0 });
        // The probe fails: back up to 2, counting afresh.
        m.note(2);
        assert_eq!(m, ShiftMemory { first: 2, held: 0 });
        // At 0 there is nothing below to probe.
        let mut z = ShiftMemory::default();
        for _ in 0..3 * PROBE_AFTER {
            z.note(0);
        }
        assert_eq!(z.first, 0);
        assert!(z.held < PROBE_AFTER);
    }
}
