//! The changing simulation state: positions and velocities of every vertex of the model.

use glam::Vec3;

/// Positions (m) and velocities (m/s), flat arrays over the model's global vertex indices.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct State {
    pub x: Vec<Vec3>,
    pub v: Vec<Vec3>,
}

impl State {
    /// At rest at `x`.
    pub fn at_rest(x: &[Vec3]) -> Self {
        State {
            x: x.to_vec(),
            v: vec![Vec3::ZERO; x.len()],
        }
    }

    /// Copies `other` into `self` without reallocating (same size).
    pub fn copy_from(&mut self, other: &State) {
        self.x.copy_from_slice(&other.x);
        self.v.copy_from_slice(&other.v);
    }
}
