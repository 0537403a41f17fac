//! Body proxies: spheres and tapered capsules whose centre / end points are carried over time by a
//! glTF node or blended by a skin, evaluated into world-space [`Shape`]s.

use glam::{Mat3, Mat4, Vec3};

use crate::scene::Shape;

/// What moves a proxy point.
#[derive(Debug, Clone, PartialEq)]
pub enum Carrier {
    /// The node's world matrix (point given in the node's local frame).
    Node(usize),
    /// Linear blend skinning with skin `skin`: Σ w · (W_joint · IBM) over `(joint, weight)`
    /// (joint indices into the skin; weights sum to 1; point given in bind-pose mesh coordinates).
    Skin {
        /// Skin index.
        skin: usize,
        /// (joint, weight) pairs.
        weights: Vec<(u16, f32)>,
    },
}

impl Carrier {
    /// The carrier's matrix: `world[node]`, or the weighted sum of joint matrices.
    fn matrix(&self, world: &[Mat4], joint_mats: &[Vec<Mat4>]) -> Mat4 {
        match self {
            Carrier::Node(n) => world[*n],
            Carrier::Skin { skin, weights } => {
                let mut m = Mat4::ZERO;
                for &(j, w) in weights {
                    m += joint_mats[*skin][j as usize] * w;
                }
                m
            }
        }
    }
}

/// Uniform scale of a transform: cube root of |det| of its 3×3 part (radii scale by it).
fn uniform_scale(m: &Mat4) -> f32 {
    Mat3::from_mat4(*m).determinant().abs().cbrt()
}

/// The local (bind-pose) geometry of a proxy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LocalShape {
    /// Sphere.
    Sphere {
        /// Centre.
        center: Vec3,
        /// Radius (m, before the carrier's scale).
        radius: f32,
    },
    /// Tapered capsule.
    Capsule {
        /// End a.
        a: Vec3,
        /// End b.
        b: Vec3,
        /// Radius at a.
        radius_a: f32,
        /// Radius at b.
        radius_b: f32,
    },
}

/// One body proxy.
#[derive(Debug, Clone, PartialEq)]
pub struct Proxy {
    /// Node name (or `node <index>`), for reports.
    pub name: String,
    /// Local geometry.
    pub shape: LocalShape,
    /// Carrier of the centre (sphere) or of end a (capsule).
    pub carrier_a: Carrier,
    /// Carrier of end b (capsule; unused for spheres).
    pub carrier_b: Carrier,
    /// Metres added to every radius after scaling.
    pub inflate: f32,
}

impl Proxy {
    /// The world shape given the rig's node world matrices and each skin's joint matrices.
    pub fn shape_at(&self, world: &[Mat4], joint_mats: &[Vec<Mat4>]) -> Shape {
        let ma = self.carrier_a.matrix(world, joint_mats);
        match self.shape {
            LocalShape::Sphere { center, radius } => Shape::Sphere {
                center: ma.transform_point3(center),
                radius: radius * uniform_scale(&ma) + self.inflate,
            },
            LocalShape::Capsule {
                a,
                b,
                radius_a,
                radius_b,
            } => {
                let mb = self.carrier_b.matrix(world, joint_mats);
                Shape::Capsule {
                    a: ma.transform_point3(a),
                    b: mb.transform_point3(b),
                    radius_a: radius_a * uniform_scale(&ma) + self.inflate,
                    radius_b: radius_b * uniform_scale(&mb) + self.inflate,
                }
            }
        }
    }
}
