//! A keyed local→world transform (`garment.transform_keys`): exact at the keys, decomposed
//! scale (lerp) / rotation (shortest-arc slerp) / translation (lerp) in between, held outside the
//! key range.

use glam::{Mat4, Quat, Vec3};

use crate::animation::slerp_shortest;

/// Keys in increasing frame order (at least one), Y-up.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedTransform {
    frames: Vec<f32>,
    matrices: Vec<Mat4>,
    /// Per key: (scale, rotation, translation) of `matrices`.
    parts: Vec<(Vec3, Quat, Vec3)>,
}

impl KeyedTransform {
    /// From `(frame, matrix)` pairs with strictly increasing frames (validated by the scene
    /// parser); `None` when `keys` is empty.
    pub fn new(keys: impl IntoIterator<Item = (f32, Mat4)>) -> Option<Self> {
        let (frames, matrices): (Vec<f32>, Vec<Mat4>) = keys.into_iter().unzip();
        if frames.is_empty() {
            return None;
        }
        let parts = matrices
            .iter()
            .map(|m| m.to_scale_rotation_translation())
            .collect();
        Some(Self {
            frames,
            matrices,
            parts,
        })
    }

    /// The local→world matrix at (fractional) scene frame `frame`.
    pub fn at(&self, frame: f32) -> Mat4 {
        let n = self.frames.len();
        if frame <= self.frames[0] {
            return self.matrices[0];
        }
        if frame >= self.frames[n - 1] {
            return self.matrices[n - 1];
        }
        // frames[k] < frame < frames[k + 1] (an exact key hit returns that key's matrix).
        let k = self.frames.partition_point(|&f| f <= frame) - 1;
        if frame == self.frames[k] {
            return self.matrices[k];
        }
        let s = (frame - self.frames[k]) / (self.frames[k + 1] - self.frames[k]);
        let (s0, r0, t0) = self.parts[k];
        let (s1, r1, t1) = self.parts[k + 1];
        Mat4::from_scale_rotation_translation(
            s0.lerp(s1, s),
            slerp_shortest(r0, r1, s).normalize(),
            t0.lerp(t1, s),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> KeyedTransform {
        let a = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
        let b = Mat4::from_scale_rotation_translation(
            Vec3::splat(2.0),
            Quat::from_rotation_y(1.2),
            Vec3::new(3.0, 2.0, -1.0),
        );
        KeyedTransform::new([(1.0, a), (5.0, b)]).unwrap()
    }

    #[test]
    fn exact_at_keys_and_held_outside() {
        let k = keys();
        assert_eq!(k.at(1.0), k.matrices[0]);
        assert_eq!(k.at(5.0), k.matrices[1]);
        assert_eq!(k.at(-3.0), k.matrices[0]);
        assert_eq!(k.at(9.5), k.matrices[1]);
    }

    #[test]
    fn decomposed_interpolation_halfway() {
        let m = keys().at(3.0);
        let (s, r, t) = m.to_scale_rotation_translation();
        assert!((s - Vec3::splat(1.5)).abs().max_element() < 1e-5, "{s}");
        assert!(r.angle_between(Quat::from_rotation_y(0.6)) < 1e-5, "{r}");
        assert!(
            (t - Vec3::new(2.0, 2.0, 1.0)).abs().max_element() < 1e-5,
            "{t}"
        );
    }

    #[test]
    fn empty_is_none() {
        assert!(KeyedTransform::new([]).is_none());
    }
}
