//! The cloth–cloth collision hook of the step: after the implicit solve and the body projection,
//! as the last thing that moves x1, the self-collision stage corrects the substep's effective
//! velocities (x1 − x0)/h so that the motion x0 → x1 has no cloth crossings (Bridson, Fedkiw &
//! Anderson 2002). Hard-pinned vertices have infinite mass, and vertices held by a body cannot be
//! pushed into it. Present only when some garment enables self-collision; garments collide with
//! each other then.

use crate::collide::{Aabb, MovingCollider};
use crate::error::ModelError;
use crate::model::Model;
use crate::self_collision::{
    SelfCollision, SelfCollisionParams, SelfCollisionReport, SelfCollisionTimes,
    SelfCollisionTopology,
};
use glam::Vec3;
use rayon::prelude::*;

/// Vertices closer than this many collider thicknesses to a body are treated as resting on it by
/// the cloth–cloth impulses (a vertex just above the thickness could otherwise be pushed into the
/// body by cloth landing on it).
const BODY_BAND: f32 = 2.0;

/// Self-collision stage with its per-vertex inputs and scratch.
#[derive(Debug)]
pub struct SelfContact {
    stage: SelfCollision,
    /// Per garment (layer); garments without self-collision still collide with other garments using
    /// their collider thickness and the default friction.
    params: Vec<SelfCollisionParams>,
    /// 1/kg, 0 for hard-pinned vertices.
    inv_mass: Vec<f32>,
    /// Outward unit normal of the body each vertex rests on this substep (zero if none).
    body_normal: Vec<Vec3>,
    /// Collider thickness per vertex (m) and its maximum.
    body_thickness: Vec<f32>,
    max_body_thickness: f32,
    /// Per collider: end-of-substep box inflated by the body band (reused scratch).
    body_boxes: Vec<Aabb>,
    v_eff: Vec<Vec3>,
    v_orig: Vec<Vec3>,
    /// Predicted end positions for [`Self::prepare`] (m).
    x_pred: Vec<Vec3>,
}

impl SelfContact {
    /// `None` when no garment enables self-collision.
    pub fn new(model: &Model) -> Result<Option<Self>, ModelError> {
        if model.self_collision.iter().all(Option::is_none) {
            return Ok(None);
        }
        let n = model.vertex_count();
        let mut layer = vec![0u32; n];
        for (g, r) in model.garments.iter().enumerate() {
            layer[r.vertices.clone()]
                .iter_mut()
                .for_each(|l| *l = g as u32);
        }
        let topology = SelfCollisionTopology {
            triangles: model.triangles.clone(),
            vertex_layer: layer,
            layer_self_collide: model.self_collision.iter().map(Option::is_some).collect(),
            rest_positions: Some(model.rest_positions.clone()),
        };
        let err = |g: usize, e: &dyn std::fmt::Display| ModelError::SelfCollision {
            garment: model
                .garments
                .get(g)
                .map_or(String::new(), |r| r.name.clone()),
            message: e.to_string(),
        };
        let stage = SelfCollision::new(&topology).map_err(|e| err(0, &e))?;
        let params: Vec<SelfCollisionParams> = model
            .self_collision
            .iter()
            .zip(&model.garments)
            .map(|(p, r)| {
                p.unwrap_or(SelfCollisionParams {
                    thickness: model.thickness[r.vertices.start],
                    ..Default::default()
                })
            })
            .collect();
        for (g, p) in params.iter().enumerate() {
            p.validate().map_err(|e| err(g, &e))?;
        }
        let inv_mass = model
            .mass
            .iter()
            .zip(&model.hard_pinned)
            .map(|(&m, &pinned)| if pinned || m <= 0.0 { 0.0 } else { 1.0 / m })
            .collect();
        Ok(Some(SelfContact {
            stage,
            params,
            inv_mass,
            body_normal: vec![Vec3::ZERO; n],
            body_thickness: model.thickness.clone(),
            max_body_thickness: model.thickness.iter().copied().fold(0.0, f32::max),
            body_boxes: Vec::new(),
            v_eff: vec![Vec3::ZERO; n],
            v_orig: vec![Vec3::ZERO; n],
            x_pred: vec![Vec3::ZERO; n],
        }))
    }

    /// Finds the proximity contacts at `x0` (m) ahead of the solve ([`SelfCollision::prepare`]),
    /// sweeping the candidate boxes to the free-flight prediction x0 + h·(v0 + h·g) (`v0` m/s,
    /// `h` s, `gravity` m/s²). Returns the time spent per part.
    pub fn prepare(
        &mut self,
        x0: &[Vec3],
        v0: &[Vec3],
        h: f32,
        gravity: Vec3,
    ) -> SelfCollisionTimes {
        self.x_pred
            .par_iter_mut()
            .zip(x0.par_iter().zip(v0.par_iter()))
            .for_each(|(p, (x, v))| *p = *x + h * (*v + h * gravity));
        self.stage.prepare(x0, &self.x_pred, &self.params)
    }

    /// Makes x0 → x1 crossing-free: x1 = x0 + h·v_eff with corrected v_eff, the same correction added
    /// to `v1`. Vertices held by a collider this substep (`held[i]`) or ending within twice their
    /// collider thickness of one get the outward normal of the nearest collider at the end of the
    /// substep (`colliders`), along which cloth–cloth impulses and impact zones never push them
    /// inwards: cloth pressed onto other cloth lying on a body moves away from the body instead.
    pub fn apply(
        &mut self,
        x0: &[Vec3],
        x1: &mut [Vec3],
        v1: &mut [Vec3],
        h: f32,
        held: &[bool],
        colliders: &[MovingCollider],
    ) -> SelfCollisionReport {
        let thickness = &self.body_thickness;
        let band = BODY_BAND * self.max_body_thickness;
        self.body_boxes.clear();
        self.body_boxes
            .extend(colliders.iter().map(|c| c.end.aabb().inflate(band)));
        let boxes = &self.body_boxes;
        let x1r: &[Vec3] = x1;
        self.body_normal
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, bn)| {
                let p = Aabb {
                    min: x1r[i],
                    max: x1r[i],
                };
                *bn = colliders
                    .iter()
                    .zip(boxes)
                    .filter(|(_, b)| b.overlaps(&p))
                    .map(|(c, _)| c.end.distance(x1r[i]))
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .filter(|&(d, _)| held[i] || d < BODY_BAND * thickness[i])
                    .map_or(Vec3::ZERO, |(_, n)| n);
            });
        for i in 0..x0.len() {
            self.v_eff[i] = (x1[i] - x0[i]) / h;
            self.v_orig[i] = self.v_eff[i];
        }
        let report = self.stage.resolve_with_bodies(
            x0,
            &mut self.v_eff,
            h,
            &self.inv_mass,
            &self.body_normal,
            &self.params,
        );
        // x1 exactly as `resolve` checked it (x0 + h·v in f32) for every vertex.
        for i in 0..x0.len() {
            x1[i] = x0[i] + h * self.v_eff[i];
            v1[i] += self.v_eff[i] - self.v_orig[i];
        }
        report
    }
}
