//! The contact record handed to the core solver (BW §5 constraint per vertex and collider).

use glam::Vec3;

/// One vertex touching (or reaching within `thickness` of) one collider during a substep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VertexContact {
    /// Cloth vertex index.
    pub vertex: u32,
    /// Collider index (position in the `colliders` slice given to `detect`).
    pub collider: u32,
    /// Outward unit normal at the end of the substep, on the side the vertex was on at first
    /// contact (also after tunnelling through a thin or fast proxy).
    pub normal: Vec3,
    /// Velocity (m/s) of the collider's material point under the contact, averaged over the substep.
    pub surface_velocity: Vec3,
    /// End-of-substep position that sits exactly `thickness` outside along `normal`:
    /// `x1 + (thickness − distance)·normal`. It may lie further out than needed if `distance`
    /// already exceeds `thickness` (the vertex touched mid-substep and is leaving); the core
    /// decides whether to constrain or release such a contact.
    pub target: Vec3,
    /// Fraction of the substep in [0, 1] at which the distance first drops below `thickness`
    /// (0 = already in contact at the start).
    pub toi: f32,
    /// Signed distance (m) of the predicted end position `x1` along `normal`, before correction:
    /// the exact signed distance when the vertex is on its first-contact side, otherwise (tunnelled)
    /// its distance to the tangent plane at the first-contact point (negative = past it).
    pub distance: f32,
}
