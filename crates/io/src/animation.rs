//! glTF animation samplers evaluated at any time (glTF 2.0 spec, "Animations" and Appendix C):
//! STEP, LINEAR (spherical linear for rotations, shortest path) and CUBICSPLINE (Hermite with
//! tangents scaled by the key interval). Times before the first key take the first value, after
//! the last key the last value.

use glam::{Quat, Vec3, Vec4};

/// Key interpolation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    /// Hold the value of the key at or before t.
    Step,
    /// Linear (slerp for rotations).
    Linear,
    /// Cubic Hermite spline; outputs hold (in-tangent, value, out-tangent) per key.
    CubicSpline,
}

/// Which node property a channel drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    /// Translation (Vec3, m).
    Translation,
    /// Rotation (unit quaternion x, y, z, w).
    Rotation,
    /// Scale (Vec3).
    Scale,
}

/// One sampler: key times (s, increasing) and output values as Vec4 (xyz for Vec3 properties).
/// For CUBICSPLINE `values` has 3 entries per key: in-tangent, value, out-tangent.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampler {
    /// Key times in seconds, strictly increasing.
    pub times: Vec<f32>,
    /// Output values (see the type's docs).
    pub values: Vec<Vec4>,
    /// Interpolation.
    pub interpolation: Interpolation,
}

/// A channel: a sampler driving one property of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// Target node index.
    pub node: usize,
    /// Target property.
    pub property: Property,
    /// Its sampler.
    pub sampler: Sampler,
}

/// The channels of one glTF animation (morph-target weight channels are not kept).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Animation {
    /// Channels in file order.
    pub channels: Vec<Channel>,
}

impl Animation {
    /// Start and end of all key times (s); `None` without channels.
    pub fn time_range(&self) -> Option<(f32, f32)> {
        self.channels.iter().fold(None, |acc, c| {
            let (a, b) = (*c.sampler.times.first()?, *c.sampler.times.last()?);
            Some(match acc {
                None => (a, b),
                Some((lo, hi)) => (f32::min(lo, a), f32::max(hi, b)),
            })
        })
    }
}

impl Sampler {
    /// The key interval containing `t`: `Err(k)` when t is clamped to key `k`, `Ok((k, s))` when
    /// t lies in [t_k, t_k+1) with s = (t − t_k)/(t_k+1 − t_k).
    fn locate(&self, t: f32) -> std::result::Result<(usize, f32), usize> {
        let n = self.times.len();
        if n == 0 || t <= self.times[0] {
            return Err(0);
        }
        if t >= self.times[n - 1] {
            return Err(n - 1);
        }
        let k = self.times.partition_point(|&x| x <= t) - 1;
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        Ok((k, (t - t0) / (t1 - t0)))
    }

    /// The value of key `k` (skipping the tangents of cubic splines).
    fn key(&self, k: usize) -> Vec4 {
        match self.interpolation {
            Interpolation::CubicSpline => self.values[3 * k + 1],
            _ => self.values[k],
        }
    }

    /// Component-wise value at `t` (for translation, scale; and rotations before normalising
    /// for STEP / CUBICSPLINE).
    fn sample_linear_space(&self, t: f32) -> Vec4 {
        match self.locate(t) {
            Err(k) => self.key(k),
            Ok((k, s)) => match self.interpolation {
                Interpolation::Step => self.key(k),
                Interpolation::Linear => self.key(k).lerp(self.key(k + 1), s),
                Interpolation::CubicSpline => {
                    let td = self.times[k + 1] - self.times[k];
                    let (v0, b0) = (self.values[3 * k + 1], self.values[3 * k + 2]);
                    let (a1, v1) = (self.values[3 * (k + 1)], self.values[3 * (k + 1) + 1]);
                    let (s2, s3) = (s * s, s * s * s);
                    v0 * (2.0 * s3 - 3.0 * s2 + 1.0)
                        + b0 * (td * (s3 - 2.0 * s2 + s))
                        + v1 * (-2.0 * s3 + 3.0 * s2)
                        + a1 * (td * (s3 - s2))
                }
            },
        }
    }

    /// A Vec3 property (translation, scale) at time `t` (s).
    pub fn sample_vec3(&self, t: f32) -> Vec3 {
        self.sample_linear_space(t).truncate()
    }

    /// A rotation at time `t` (s): LINEAR uses slerp along the shortest arc, CUBICSPLINE the
    /// component-wise spline normalised, STEP the key.
    pub fn sample_rotation(&self, t: f32) -> Quat {
        let q = |v: Vec4| Quat::from_vec4(v).normalize();
        match (self.interpolation, self.locate(t)) {
            (Interpolation::Linear, Ok((k, s))) => {
                slerp_shortest(q(self.key(k)), q(self.key(k + 1)), s)
            }
            _ => q(self.sample_linear_space(t)),
        }
    }
}

/// Spherical linear interpolation between unit quaternions along the shorter arc
/// (`b` is negated when `a·b < 0`); falls back to normalised lerp for nearly equal rotations.
pub fn slerp_shortest(a: Quat, b: Quat, s: f32) -> Quat {
    let mut d = a.dot(b);
    let b = if d < 0.0 {
        d = -d;
        -b
    } else {
        b
    };
    if d > 0.9995 {
        return Quat::from_vec4(Vec4::from(a).lerp(Vec4::from(b), s)).normalize();
    }
    let theta = d.clamp(-1.0, 1.0).acos();
    let sin = theta.sin();
    let wa = ((1.0 - s) * theta).sin() / sin;
    let wb = (s * theta).sin() / sin;
    Quat::from_vec4(Vec4::from(a) * wa + Vec4::from(b) * wb)
}
