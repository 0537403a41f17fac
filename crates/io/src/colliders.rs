//! All colliders of a scene as functions of time: analytic shapes (optionally keyed) and glTF
//! body proxies, evaluated together so each character is posed once per call.

use std::sync::Arc;

use glam::Mat4;

use crate::clock::Clock;
use crate::gltf_rig::GltfRig;
use crate::proxy::Proxy;
use crate::scene::Shape;
use crate::shape_keys::shape_at;

/// One collider.
pub(crate) enum Track {
    /// `[[collider]]` with an analytic shape and optional keys (frames).
    Analytic {
        shape: Shape,
        keys: Vec<(f32, Shape)>,
    },
    /// A body proxy of rig `rig` (index into `Colliders::rigs`).
    Proxy { rig: usize, proxy: Proxy },
}

/// The colliders of a scene; [`Colliders::shapes_at`] gives their world shapes at any frame.
pub struct Colliders {
    pub(crate) tracks: Vec<Track>,
    pub(crate) names: Vec<String>,
    pub(crate) rigs: Vec<Arc<GltfRig>>,
    pub(crate) clock: Clock,
    world: Vec<Vec<Mat4>>,
    joints: Vec<Vec<Vec<Mat4>>>,
}

impl Colliders {
    pub(crate) fn new(
        tracks: Vec<Track>,
        names: Vec<String>,
        rigs: Vec<Arc<GltfRig>>,
        clock: Clock,
    ) -> Self {
        let n = rigs.len();
        Self {
            tracks,
            names,
            rigs,
            clock,
            world: vec![Vec::new(); n],
            joints: vec![Vec::new(); n],
        }
    }

    /// Number of colliders.
    pub fn len(&self) -> usize {
        self.tracks.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tracks.is_empty()
    }

    /// A name per collider (`collider[i]` for analytic ones, the proxy node's name for proxies).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// World shapes (Y up, m) of all colliders at (fractional) scene frame `frame`, in order.
    pub fn shapes_at(&mut self, frame: f32, out: &mut Vec<Shape>) {
        let t = self.clock.time(frame);
        for (r, rig) in self.rigs.iter().enumerate() {
            rig.world_matrices(t, &mut self.world[r]);
            let world = &self.world[r];
            let joints = &mut self.joints[r];
            joints.resize_with(rig.skins.len(), Vec::new);
            for (s, skin) in rig.skins.iter().enumerate() {
                skin.joint_matrices(world, &mut joints[s]);
            }
        }
        out.clear();
        for tr in &self.tracks {
            out.push(match tr {
                Track::Analytic { shape, keys } => shape_at(shape, keys, frame),
                Track::Proxy { rig, proxy } => {
                    proxy.shape_at(&self.world[*rig], &self.joints[*rig])
                }
            });
        }
    }
}
