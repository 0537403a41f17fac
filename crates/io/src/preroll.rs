//! Pre-roll (`scene.preroll`, `scene.preroll_from`): frames simulated before `frame_start` and
//! not written, so the cloth settles before the first output frame.

use crate::scene::PrerollFrom;

/// The simulated frame range's head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preroll {
    /// First output frame.
    pub frame_start: i32,
    /// Number of pre-roll frames (0: the simulation starts at `frame_start`).
    pub frames: u32,
    /// How the pre-roll frames are driven.
    pub from: PrerollFrom,
}

impl Preroll {
    /// The first simulated frame, `frame_start − frames` (the initial state).
    pub fn first_simulated(&self) -> i32 {
        self.frame_start - self.frames as i32
    }

    /// Whether the inputs ease in from their rest pose (`preroll_from = "rest"` with frames > 0).
    pub fn from_rest(&self) -> bool {
        self.from == PrerollFrom::Rest && self.frames > 0
    }

    /// For `preroll_from = "rest"` at a pre-roll frame (`frame < frame_start`): the weight `w` of
    /// the `frame_start` value in `lerp(rest, value(frame_start), w)`,
    /// `w = smoothstep((frame − first_simulated) / frames)` (0 at the first simulated frame, 1 at
    /// `frame_start`, zero slope at both ends). `None` otherwise (evaluate the input at `frame`).
    pub fn rest_weight(&self, frame: f32) -> Option<f32> {
        if !self.from_rest() || frame >= self.frame_start as f32 {
            return None;
        }
        let x = ((frame - self.first_simulated() as f32) / self.frames as f32).clamp(0.0, 1.0);
        Some(x * x * (3.0 - 2.0 * x))
    }

    /// The first frame at which animated inputs are evaluated: the first simulated frame, or
    /// `frame_start` when easing in from rest (then earlier values are never read).
    pub fn first_evaluated(&self) -> i32 {
        if self.from_rest() {
            self.frame_start
        } else {
            self.first_simulated()
        }
    }
}

impl Default for Preroll {
    fn default() -> Self {
        Self {
            frame_start: 1,
            frames: 0,
            from: PrerollFrom::Animation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_weight_eases_from_zero_to_one() {
        let p = Preroll {
            frame_start: 1,
            frames: 10,
            from: PrerollFrom::Rest,
        };
        assert_eq!(p.first_simulated(), -9);
        assert_eq!(p.rest_weight(-9.0), Some(0.0));
        assert_eq!(p.rest_weight(-4.0), Some(0.5));
        assert!((p.rest_weight(0.0).unwrap() - 0.972).abs() < 1e-6);
        assert_eq!(p.rest_weight(1.0), None);
        assert_eq!(p.first_evaluated(), 1);
        let a = Preroll {
            from: PrerollFrom::Animation,
            ..p
        };
        assert_eq!(a.rest_weight(-9.0), None);
        assert_eq!(a.first_evaluated(), -9);
    }
}
