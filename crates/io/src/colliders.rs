//! All colliders of a scene as functions of time: analytic shapes (optionally keyed) and glTF
//! body proxies, evaluated together so each character is posed once per call.

use std::sync::Arc;

use glam::Mat4;

use crate::clock::Clock;
use crate::gltf_rig::GltfRig;
use crate::preroll::Preroll;
use crate::proxy::Proxy;
use crate::scene::Shape;
use crate::shape_keys::{lerp_shape, shape_at};

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
    preroll: Preroll,
    world: Vec<Vec<Mat4>>,
    joints: Vec<Vec<Vec<Mat4>>>,
    rest: Vec<Shape>,
}

impl Colliders {
    pub(crate) fn new(
        tracks: Vec<Track>,
        names: Vec<String>,
        rigs: Vec<Arc<GltfRig>>,
        clock: Clock,
        preroll: Preroll,
    ) -> Self {
        let n = rigs.len();
        Self {
            tracks,
            names,
            rigs,
            clock,
            preroll,
            world: vec![Vec::new(); n],
            joints: vec![Vec::new(); n],
            rest: Vec::new(),
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

    /// World shapes (Y up, m) of all colliders at (fractional) scene frame `frame`, in order. At
    /// pre-roll frames with `preroll_from = "rest"`: `lerp(rest, shapes(frame_start), w)` (see
    /// [`Preroll::rest_weight`]); rest = an analytic collider's base shape, a proxy on its rig
    /// without animation.
    pub fn shapes_at(&mut self, frame: f32, out: &mut Vec<Shape>) {
        match self.preroll.rest_weight(frame) {
            Some(w) => {
                self.posed(Some(self.preroll.frame_start as f32), out);
                let mut rest = std::mem::take(&mut self.rest);
                self.posed(None, &mut rest);
                for (s, r) in out.iter_mut().zip(&rest) {
                    *s = lerp_shape(r, s, w);
                }
                self.rest = rest;
            }
            None => self.posed(Some(frame), out),
        }
    }

    /// Shapes at `frame`, or at rest (`None`).
    fn posed(&mut self, frame: Option<f32>, out: &mut Vec<Shape>) {
        for (r, rig) in self.rigs.iter().enumerate() {
            match frame {
                Some(f) => rig.world_matrices(self.clock.time(f), &mut self.world[r]),
                None => rig.graph.world_matrices(None, 0.0, &mut self.world[r]),
            }
            let world = &self.world[r];
            let joints = &mut self.joints[r];
            joints.resize_with(rig.skins.len(), Vec::new);
            for (s, skin) in rig.skins.iter().enumerate() {
                skin.joint_matrices(world, &mut joints[s]);
            }
        }
        out.clear();
        for tr in &self.tracks {
            out.push(match (tr, frame) {
                (Track::Analytic { shape, keys }, Some(f)) => shape_at(shape, keys, f),
                (Track::Analytic { shape, .. }, None) => *shape,
                (Track::Proxy { rig, proxy }, _) => {
                    proxy.shape_at(&self.world[*rig], &self.joints[*rig])
                }
            });
        }
    }
}
