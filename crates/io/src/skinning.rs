//! Linear blend skinning (glTF 2.0 "Skins"): a vertex at bind position p goes to
//! Σ_k w_k · (W_joint_k(t) · IBM_k) · p, with W the joint node's world matrix and IBM its inverse
//! bind matrix. Weights are normalised per vertex; several JOINTS_n/WEIGHTS_n sets are combined.
//! The skinned mesh node's own transform does not apply (as the spec says).

use glam::{Mat4, Vec3};

/// A skin: joint nodes and their inverse bind matrices.
#[derive(Debug, Clone, PartialEq)]
pub struct Skin {
    /// Node index of each joint.
    pub joints: Vec<usize>,
    /// Inverse bind matrix of each joint (identity when the file gives none).
    pub inverse_bind: Vec<Mat4>,
}

impl Skin {
    /// Joint matrices `W_joint(t) · IBM` from the nodes' world matrices.
    pub fn joint_matrices(&self, world: &[Mat4], out: &mut Vec<Mat4>) {
        out.clear();
        out.extend(
            self.joints
                .iter()
                .zip(&self.inverse_bind)
                .map(|(&j, ibm)| world[j] * *ibm),
        );
    }
}

/// Per-vertex joint influences (indices into the skin's joints) with normalised weights.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Influences {
    offsets: Vec<u32>,
    joints: Vec<u16>,
    weights: Vec<f32>,
}

impl Influences {
    /// Builds influences from explicit per-vertex (joint, weight) lists (weights normalised; a
    /// list summing to zero gives `Err(vertex)`).
    pub fn from_lists(lists: &[Vec<(u16, f32)>]) -> std::result::Result<Self, usize> {
        let mut out = Self {
            offsets: vec![0],
            ..Default::default()
        };
        for (v, list) in lists.iter().enumerate() {
            let sum: f32 = list.iter().map(|p| p.1).sum();
            if sum.is_nan() || sum <= 0.0 {
                return Err(v);
            }
            for &(j, w) in list {
                out.joints.push(j);
                out.weights.push(w / sum);
            }
            out.offsets.push(out.weights.len() as u32);
        }
        Ok(out)
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The (joint, weight) pairs of vertex `v`.
    pub fn of(&self, v: usize) -> impl Iterator<Item = (u16, f32)> + '_ {
        let r = self.offsets[v] as usize..self.offsets[v + 1] as usize;
        self.joints[r.clone()]
            .iter()
            .copied()
            .zip(self.weights[r].iter().copied())
    }

    /// The largest joint index used (to check against the skin's joint count).
    pub fn max_joint(&self) -> Option<u16> {
        self.joints.iter().copied().max()
    }

    /// Skinned position of vertex `v` at bind position `p`, with `joint_mats` from
    /// [`Skin::joint_matrices`]. The sum is taken in f64 in a fixed order.
    pub fn skin_point(&self, v: usize, p: Vec3, joint_mats: &[Mat4]) -> Vec3 {
        let mut acc = glam::DVec3::ZERO;
        for (j, w) in self.of(v) {
            acc += joint_mats[j as usize].transform_point3(p).as_dvec3() * w as f64;
        }
        acc.as_vec3()
    }
}
