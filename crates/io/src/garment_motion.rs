//! How a garment's source vertices move without simulation: a fixed transform (OBJ), the
//! animated glTF node, or the node's skin. Used for the rest pose, pins that follow, and the
//! garment's local frame.

use std::sync::Arc;

use glam::{Mat4, Vec3};

use crate::gltf_rig::GltfRig;
use crate::scene::Follow;
use crate::skinning::Influences;

/// Source-vertex motion of one garment.
pub(crate) enum GarmentMotion {
    /// A fixed local → world transform (OBJ garments).
    Fixed {
        /// Y-up local → world.
        local_to_world: Mat4,
        /// Source positions in the Y-up local frame.
        local: Vec<Vec3>,
    },
    /// A glTF mesh node, optionally skinned.
    Gltf {
        rig: Arc<GltfRig>,
        node: usize,
        /// Skin index and per-source-vertex influences.
        skin: Option<(usize, Influences)>,
        /// Source positions in mesh (bind-pose) coordinates.
        local: Vec<Vec3>,
    },
}

impl GarmentMotion {
    /// The garment's local frame → world at time `t` (s).
    pub(crate) fn local_to_world(&self, t: f32) -> Mat4 {
        match self {
            GarmentMotion::Fixed { local_to_world, .. } => *local_to_world,
            GarmentMotion::Gltf { rig, node, .. } => {
                let mut world = Vec::new();
                rig.world_matrices(t, &mut world);
                world[*node]
            }
        }
    }

    /// World positions at time `t` of the source vertices `sources`: skinned (`Follow::Skin` on a
    /// skinned node), else carried by the node (or the fixed transform).
    pub(crate) fn positions_at(
        &self,
        follow: Follow,
        t: f32,
        sources: &[u32],
        out: &mut Vec<Vec3>,
    ) {
        out.clear();
        match self {
            GarmentMotion::Fixed {
                local_to_world,
                local,
            } => out.extend(
                sources
                    .iter()
                    .map(|&s| local_to_world.transform_point3(local[s as usize])),
            ),
            GarmentMotion::Gltf {
                rig,
                node,
                skin,
                local,
            } => {
                let mut world = Vec::new();
                rig.world_matrices(t, &mut world);
                match (follow, skin) {
                    (Follow::Skin, Some((si, inf))) => {
                        let mut joints = Vec::new();
                        rig.skins[*si].joint_matrices(&world, &mut joints);
                        out.extend(
                            sources
                                .iter()
                                .map(|&s| inf.skin_point(s as usize, local[s as usize], &joints)),
                        );
                    }
                    _ => {
                        let m = world[*node];
                        out.extend(
                            sources
                                .iter()
                                .map(|&s| m.transform_point3(local[s as usize])),
                        );
                    }
                }
            }
        }
    }

    /// Whether this garment has a glTF skin.
    pub(crate) fn is_skinned(&self) -> bool {
        matches!(self, GarmentMotion::Gltf { skin: Some(_), .. })
    }

    /// Number of source vertices.
    pub(crate) fn len(&self) -> usize {
        match self {
            GarmentMotion::Fixed { local, .. } | GarmentMotion::Gltf { local, .. } => local.len(),
        }
    }
}
