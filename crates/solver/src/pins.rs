//! Pin targets over a frame: each pinned vertex follows a target given at frame ends and
//! interpolated linearly in between (e.g. a waistband riding skinned hips).

use crate::error::SimError;
use crate::model::Model;
use glam::Vec3;
use serde::{Deserialize, Serialize};

/// Start- and end-of-frame targets (m) of every pin, parallel to `Model::pins`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PinTargets {
    start: Vec<Vec3>,
    end: Vec<Vec3>,
}

impl PinTargets {
    /// Pins start at their initial positions.
    pub fn new(model: &Model) -> Self {
        let p: Vec<Vec3> = model
            .pins
            .iter()
            .map(|p| model.initial_positions[p.vertex as usize])
            .collect();
        PinTargets {
            start: p.clone(),
            end: p,
        }
    }

    /// Moves every target by `d` (m): a change of the simulation frame ([`crate::State::translate`]).
    pub fn translate(&mut self, d: Vec3) {
        for p in self.start.iter_mut().chain(self.end.iter_mut()) {
            *p += d;
        }
    }

    /// Copies `other` without reallocating once sized.
    pub fn copy_from(&mut self, other: &PinTargets) {
        self.start.clone_from(&other.start);
        self.end.clone_from(&other.end);
    }

    /// Starts a frame: last frame's end becomes the start; `targets[g]` (if `Some`) gives the new
    /// end-of-frame target of every vertex of garment g (only pinned vertices are read).
    pub fn begin_frame(
        &mut self,
        model: &Model,
        targets: &[Option<&[Vec3]>],
    ) -> Result<(), SimError> {
        self.start.copy_from_slice(&self.end);
        for (g, t) in targets.iter().enumerate() {
            let (Some(t), Some(range)) = (t, model.garments.get(g)) else {
                continue;
            };
            if t.len() != range.vertices.len() {
                return Err(SimError::Input(format!(
                    "pin targets of garment {g} ('{}'): {} positions, expected {}",
                    range.name,
                    t.len(),
                    range.vertices.len()
                )));
            }
            for (k, pin) in model.pins.iter().enumerate() {
                let v = pin.vertex as usize;
                if range.vertices.contains(&v) {
                    let p = t[v - range.vertices.start];
                    if !p.is_finite() {
                        return Err(SimError::Input(format!(
                            "pin target of garment {g}, vertex {} is not finite",
                            v - range.vertices.start
                        )));
                    }
                    self.end[k] = p;
                }
            }
        }
        Ok(())
    }

    /// Whether the frame-start and frame-end targets have one entry per pin each (a deserialised
    /// state may not).
    pub fn is_consistent(&self) -> bool {
        self.start.len() == self.end.len()
    }

    /// Number of frame-start targets (equal to [`Self::len`] when consistent).
    pub fn start_len(&self) -> usize {
        self.start.len()
    }

    /// Number of pins.
    pub fn len(&self) -> usize {
        self.end.len()
    }

    /// Whether there are no pins.
    pub fn is_empty(&self) -> bool {
        self.end.is_empty()
    }

    /// Whether every target is finite.
    pub fn is_finite(&self) -> bool {
        self.start.iter().chain(&self.end).all(|p| p.is_finite())
    }

    /// Target of pin `k` at frame fraction `s` ∈ [0, 1] (m).
    #[inline]
    pub fn at(&self, k: usize, s: f32) -> Vec3 {
        self.start[k].lerp(self.end[k], s)
    }

    /// Velocity (m/s) of pin `k`'s target over a frame of `dt` seconds.
    #[inline]
    pub fn velocity(&self, k: usize, dt: f32) -> Vec3 {
        (self.end[k] - self.start[k]) / dt
    }
}
