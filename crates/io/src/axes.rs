//! Axis conventions and output frames.
//!
//! The scene's world frame is glTF's: Y up, metres. Blender is Z up; its exporters convert
//! `(x, y, z)_blender → (x, z, −y)`, so Z-up → Y-up is `(x, y, z) → (x, z, −y)` and back is
//! `(x, y, z) → (x, −z, y)`.

use glam::{DMat4, Mat4, Vec3, Vec4};

use crate::scene::{Space, Up};

/// The matrix taking coordinates in convention `up` to Y-up.
pub fn to_y_up(up: Up) -> Mat4 {
    match up {
        Up::Y => Mat4::IDENTITY,
        // columns: x → x, y → −z, z → y
        Up::Z => Mat4::from_cols(Vec4::X, Vec4::new(0.0, 0.0, -1.0, 0.0), Vec4::Y, Vec4::W),
    }
}

/// The matrix taking Y-up coordinates to convention `up`.
pub fn from_y_up(up: Up) -> Mat4 {
    to_y_up(up).transpose()
}

/// Converts a point between conventions (via Y-up).
pub fn convert(p: Vec3, from: Up, to: Up) -> Vec3 {
    (from_y_up(to) * to_y_up(from)).transform_point3(p)
}

/// The matrix from world (Y-up) to output coordinates.
///
/// `local_to_world` is the garment's Y-up local frame → world at the frame being written (the
/// OBJ `transform` in Y-up form, or the glTF node's world matrix at that time). `World`: the world
/// frame in convention `up`; `Local`: the garment's local frame in convention `up`.
/// The Blender case: `space = "local", up = "z"` gives Blender's object-local coordinates, which is
/// what its Mesh Cache modifier expects with its default axes, for a glTF garment imported by
/// Blender and for an OBJ whose `up` describes how it was exported.
/// In f64 (the inverse of a frame far from the world origin keeps its precision).
pub fn world_to_output(space: Space, up: Up, local_to_world: Mat4) -> DMat4 {
    let axes = from_y_up(up).as_dmat4();
    match space {
        Space::World => axes,
        Space::Local => axes * local_to_world.as_dmat4().inverse(),
    }
}

/// An OBJ garment's Y-up local frame → world: `C · T · C⁻¹` with `C` the file's `up` → Y-up
/// conversion and `T` the scene's `transform` (given in the file's convention).
pub fn obj_local_to_world(up: Up, transform: Option<[f32; 16]>) -> Mat4 {
    let t = transform
        .map(|m| Mat4::from_cols_array(&m))
        .unwrap_or(Mat4::IDENTITY);
    to_y_up(up) * t * from_y_up(up)
}
