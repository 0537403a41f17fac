//! Typed errors of the collide module; every variant names the offending collider and field.

use thiserror::Error;

/// A collider shape that cannot be used: the message names the field (e.g. `capsule.radius_b`).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ShapeError {
    /// A coordinate or radius is NaN or infinite.
    #[error("field `{field}` is not finite")]
    NonFinite { field: &'static str },
    /// A radius (m) is zero or negative.
    #[error("field `{field}` must be > 0 m, got {value}")]
    NonPositiveRadius { field: &'static str, value: f32 },
    /// A plane normal of zero length.
    #[error("field `plane.normal` has zero length")]
    ZeroNormal,
    /// Interpolating between two different kinds of shape.
    #[error("cannot interpolate a {from} into a {to}: start and end shapes must be the same kind")]
    KindMismatch {
        from: &'static str,
        to: &'static str,
    },
    /// A plane whose normal turns by 90° or more between start and end (normalised lerp undefined).
    #[error("field `plane.normal` turns by 90 degrees or more between start and end")]
    PlaneFlip,
}

/// Errors of [`crate::collide::ContactDetector::detect`] and collider validation.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CollideError {
    /// Collider `index` is invalid at its `start` or `end` shape, or its motion is.
    #[error("collider {index} ({which}): {source}")]
    Collider {
        index: usize,
        which: &'static str,
        source: ShapeError,
    },
    /// A per-vertex array passed to `project_out` has the wrong length.
    #[error("array `{array}` has {len} entries, expected {expected} (one per vertex)")]
    ArrayLength {
        array: &'static str,
        len: usize,
        expected: usize,
    },
    /// The per-vertex arrays passed to `detect` disagree in length.
    #[error("vertex arrays differ in length: x0 {x0}, x1 {x1}, thickness {thickness}")]
    LengthMismatch {
        x0: usize,
        x1: usize,
        thickness: usize,
    },
}
