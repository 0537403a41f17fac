//! How a garment's source vertices move without simulation: a fixed or keyed transform (OBJ), the
//! animated glTF node, or the node's skin. Used for the rest pose, pins that follow, and the
//! garment's local frame.

use std::sync::Arc;

use glam::{Mat4, Vec3};

use crate::clock::Clock;
use crate::gltf_rig::GltfRig;
use crate::scene::Follow;
use crate::skinning::Influences;
use crate::transform_keys::KeyedTransform;

/// When a garment is posed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Pose {
    /// At a (fractional) scene frame.
    Frame(f32),
    /// Without animation: a glTF rig's own node transforms; an OBJ's static transform, or its
    /// keyed transform at `frame_start`.
    Rest,
}

/// An OBJ garment's local → world transform.
pub(crate) enum Placement {
    /// `transform` (or identity).
    Static(Mat4),
    /// `transform_keys`, Y-up.
    Keyed(KeyedTransform),
}

/// Source-vertex motion of one garment.
pub(crate) enum GarmentMotion {
    /// An OBJ garment.
    Obj {
        /// Y-up local → world.
        placement: Placement,
        /// Source positions in the Y-up local frame.
        local: Vec<Vec3>,
        /// The frame whose keyed transform is the rest placement (`frame_start`).
        rest_frame: f32,
    },
    /// A glTF mesh node, optionally skinned.
    Gltf {
        rig: Arc<GltfRig>,
        node: usize,
        /// Skin index and per-source-vertex influences.
        skin: Option<(usize, Influences)>,
        /// Source positions in mesh (bind-pose) coordinates.
        local: Vec<Vec3>,
        clock: Clock,
    },
}

impl GarmentMotion {
    fn rig_world(rig: &GltfRig, clock: &Clock, pose: Pose, out: &mut Vec<Mat4>) {
        match pose {
            Pose::Frame(f) => rig.world_matrices(clock.time(f), out),
            Pose::Rest => rig.graph.world_matrices(None, 0.0, out),
        }
    }

    /// The garment's local frame → world at `pose`.
    pub(crate) fn local_to_world(&self, pose: Pose) -> Mat4 {
        match self {
            GarmentMotion::Obj {
                placement,
                rest_frame,
                ..
            } => match placement {
                Placement::Static(m) => *m,
                Placement::Keyed(k) => k.at(match pose {
                    Pose::Frame(f) => f,
                    Pose::Rest => *rest_frame,
                }),
            },
            GarmentMotion::Gltf {
                rig, node, clock, ..
            } => {
                let mut world = Vec::new();
                Self::rig_world(rig, clock, pose, &mut world);
                world[*node]
            }
        }
    }

    /// World positions at `pose` of the source vertices `sources`: skinned (`Follow::Skin` on a
    /// skinned node), else carried by the node (or the OBJ's transform).
    pub(crate) fn positions_at(
        &self,
        follow: Follow,
        pose: Pose,
        sources: &[u32],
        out: &mut Vec<Vec3>,
    ) {
        out.clear();
        match self {
            GarmentMotion::Obj { local, .. } => {
                let m = self.local_to_world(pose);
                out.extend(
                    sources
                        .iter()
                        .map(|&s| m.transform_point3(local[s as usize])),
                )
            }
            GarmentMotion::Gltf {
                rig,
                node,
                skin,
                local,
                clock,
            } => {
                let mut world = Vec::new();
                Self::rig_world(rig, clock, pose, &mut world);
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

    /// How the garment's shape follows its own motion: skinned if it has a skin, else carried.
    pub(crate) fn own_follow(&self) -> Follow {
        if matches!(self, GarmentMotion::Gltf { skin: Some(_), .. }) {
            Follow::Skin
        } else {
            Follow::Node
        }
    }

    /// Number of source vertices.
    pub(crate) fn len(&self) -> usize {
        match self {
            GarmentMotion::Obj { local, .. } | GarmentMotion::Gltf { local, .. } => local.len(),
        }
    }
}
