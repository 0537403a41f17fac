//! The glTF node hierarchy evaluated at any time: world matrix = parent world × local, where the
//! local transform is the node's matrix or T·R·S with animated channels overriding its parts.

use glam::{Mat4, Quat, Vec3};

use crate::animation::{Animation, Property};

/// A node's own transform.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LocalTransform {
    /// `matrix` (column-major); decomposed into T·R·S only if an animation targets the node.
    Matrix(Mat4),
    /// Translation, rotation, scale.
    Trs {
        /// Translation (m).
        t: Vec3,
        /// Rotation (unit quaternion).
        r: Quat,
        /// Scale.
        s: Vec3,
    },
}

impl LocalTransform {
    fn trs(&self) -> (Vec3, Quat, Vec3) {
        match *self {
            LocalTransform::Trs { t, r, s } => (t, r, s),
            LocalTransform::Matrix(m) => {
                let (s, r, t) = m.to_scale_rotation_translation();
                (t, r, s)
            }
        }
    }
}

/// Parent links, rest transforms and an evaluation order with parents before children.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGraph {
    parents: Vec<Option<usize>>,
    locals: Vec<LocalTransform>,
    order: Vec<usize>,
}

/// Why a node list is not a forest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphError {
    /// Node `child` is listed as a child of two nodes.
    TwoParents {
        /// The node.
        child: usize,
    },
    /// Node `node` is its own ancestor.
    Cycle {
        /// A node on the cycle.
        node: usize,
    },
}

impl NodeGraph {
    /// Builds the graph from each node's children and local transform.
    pub fn new(
        children: &[Vec<usize>],
        locals: Vec<LocalTransform>,
    ) -> std::result::Result<Self, GraphError> {
        let n = locals.len();
        let mut parents = vec![None; n];
        for (p, cs) in children.iter().enumerate() {
            for &c in cs {
                if parents[c].is_some() {
                    return Err(GraphError::TwoParents { child: c });
                }
                parents[c] = Some(p);
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<usize> = (0..n).rev().filter(|&i| parents[i].is_none()).collect();
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(children[i].iter().rev());
        }
        if order.len() != n {
            let mut seen = vec![false; n];
            for &i in &order {
                seen[i] = true;
            }
            let node = seen.iter().position(|s| !s).unwrap_or(0);
            return Err(GraphError::Cycle { node });
        }
        Ok(Self {
            parents,
            locals,
            order,
        })
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.locals.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.locals.is_empty()
    }

    /// The parent of node `i`.
    pub fn parent(&self, i: usize) -> Option<usize> {
        self.parents[i]
    }

    /// World matrices of all nodes at time `t` (s) under `animation` (rest pose without one).
    pub fn world_matrices(&self, animation: Option<&Animation>, t: f32, out: &mut Vec<Mat4>) {
        let n = self.len();
        let mut local: Vec<Option<(Vec3, Quat, Vec3)>> = vec![None; n];
        if let Some(anim) = animation {
            for ch in &anim.channels {
                let trs = local[ch.node].get_or_insert_with(|| self.locals[ch.node].trs());
                match ch.property {
                    Property::Translation => trs.0 = ch.sampler.sample_vec3(t),
                    Property::Rotation => trs.1 = ch.sampler.sample_rotation(t),
                    Property::Scale => trs.2 = ch.sampler.sample_vec3(t),
                }
            }
        }
        out.clear();
        out.resize(n, Mat4::IDENTITY);
        for &i in &self.order {
            let m = match (local[i], self.locals[i]) {
                (Some((t, r, s)), _) | (None, LocalTransform::Trs { t, r, s }) => {
                    Mat4::from_scale_rotation_translation(s, r, t)
                }
                (None, LocalTransform::Matrix(m)) => m,
            };
            out[i] = match self.parents[i] {
                Some(p) => out[p] * m,
                None => m,
            };
        }
    }
}
