//! Post-solve projection out of the proxies (Kang 2003 §4 "velocity correction"): every free
//! vertex closer than its thickness to a collider's end-of-substep surface is moved out to the
//! thickness and loses its velocity into the surface. Culled with the detector's chunk boxes and
//! again per block of 16 vertices (by box, and unreported by the reach bound), so it costs
//! O(vertices near a proxy) rather than O(vertices × colliders): on the dress-walk sample the
//! blocks cut the vertex–collider visits from 12.1 M to 2.8 M per bake (before skipping pins).

use glam::Vec3;
use rayon::prelude::*;

use super::aabb::Aabb;
use super::ccd::{vertex_contact, SAME_SIDE_COSINE};
use super::contact::VertexContact;
use super::detector::{ContactDetector, CHUNK_VERTICES};
use super::error::CollideError;
use super::moving::MovingCollider;

fn check_len(array: &'static str, len: usize, expected: usize) -> Result<(), CollideError> {
    if len == expected {
        Ok(())
    } else {
        Err(CollideError::ArrayLength {
            array,
            len,
            expected,
        })
    }
}

impl ContactDetector {
    /// Projects end-of-substep positions `x` (m) out of the colliders' end shapes and corrects
    /// velocities `v` (m/s); vertices with `fixed[i]` (hard pins) are left alone. Colliders are
    /// visited in index order per vertex, as a plain loop over all of them would.
    ///
    /// For a vertex closer than `thickness[i]` to collider k: the side is the nearest one, unless
    /// the contact (i, k) — from `contacts` (this substep's [`ContactDetector::detect`] output on
    /// the predicted motion, sorted by vertex then collider) or, where that has none, found anew
    /// on the actual motion `x0[i]` → `x[i]` ([`vertex_contact`]) — has a normal that differs by
    /// more than ~45°: then the vertex went through and is pushed out on the entry side, to
    /// `thickness` beyond the contact's supporting plane (which the convex proxy lies behind). The
    /// normal velocity is raised to the surface's normal speed −∂φ/∂t = (φ_start(p) − φ_end(p))/h
    /// at the new position p.
    ///
    /// With [`DistanceReport::Within`] returns the smallest signed distance left (m) over
    /// vertex–collider pairs whose boxes are within the margin (m) of each other; farther pairs
    /// are not evaluated (+∞ if none). With [`DistanceReport::Unreported`] returns +∞ and
    /// leaves the same positions and velocities to the bit, without evaluating the pairs that
    /// only the distance needs (a vertex within the margin of a collider's box but provably
    /// farther than its thickness from the collider and from any contact with it on its motion).
    #[allow(clippy::too_many_arguments)]
    pub fn project_out(
        &mut self,
        colliders: &[MovingCollider],
        h: f32,
        contacts: &[VertexContact],
        x0: &[Vec3],
        thickness: &[f32],
        fixed: &[bool],
        report: DistanceReport,
        x: &mut [Vec3],
        v: &mut [Vec3],
    ) -> Result<f32, CollideError> {
        let (report_within, reported) = match report {
            DistanceReport::Within(m) => (m, true),
            DistanceReport::Unreported(m) => (m, false),
        };
        let n = x.len();
        check_len("x0", x0.len(), n)?;
        check_len("v", v.len(), n)?;
        check_len("thickness", thickness.len(), n)?;
        check_len("fixed", fixed.len(), n)?;
        for (k, c) in colliders.iter().enumerate() {
            c.validate(k)?;
        }
        // End boxes, for the thickness band and the reported distance; swept boxes, for vertices
        // whose motion may have crossed a proxy.
        self.boxes.clear();
        self.boxes.extend(colliders.iter().map(|c| c.end.aabb()));
        self.boxes
            .extend(colliders.iter().map(MovingCollider::swept_aabb));
        self.motion.clear();
        self.motion
            .extend(colliders.iter().map(MovingCollider::motion_bound));
        let chunk_count = n.div_ceil(CHUNK_VERTICES);
        if self.chunks.len() < chunk_count {
            self.chunks.resize_with(chunk_count, Default::default);
        }
        let (boxes, swept) = self.boxes.split_at(colliders.len());
        let motion = &self.motion;
        let margin = report_within.max(0.0);
        self.chunks[..chunk_count]
            .par_iter_mut()
            .zip(x.par_chunks_mut(CHUNK_VERTICES))
            .zip(v.par_chunks_mut(CHUNK_VERTICES))
            .enumerate()
            .for_each(|(ci, ((scratch, xs), vs))| {
                let first = ci * CHUNK_VERTICES;
                let th = &thickness[first..first + xs.len()];
                let fx = &fixed[first..first + xs.len()];
                let lo = contacts.partition_point(|c| (c.vertex as usize) < first);
                let hi = contacts.partition_point(|c| (c.vertex as usize) < first + xs.len());
                let chunk_contacts = &contacts[lo..hi];
                let th_max = th.iter().fold(0.0f32, |m, &t| m.max(t));
                let ends = points_box(xs);
                let moves = ends.union(points_box(&x0[first..first + xs.len()]));
                let moves = moves.inflate(th_max);
                let ends = ends.inflate(th_max + margin);
                scratch.candidates.clear();
                scratch
                    .candidates
                    .extend((0..boxes.len() as u32).filter(|&k| {
                        boxes[k as usize].overlaps(&ends) || swept[k as usize].overlaps(&moves)
                    }));
                let mut min_distance = f32::INFINITY;
                let mut next_contact = 0;
                scratch.moved.clear();
                scratch.push.clear();
                let blocks = xs
                    .chunks_mut(BLOCK_VERTICES)
                    .zip(vs.chunks_mut(BLOCK_VERTICES));
                for (bi, (xb, vb)) in blocks.enumerate() {
                    let bfirst = first + bi * BLOCK_VERTICES;
                    let range = bfirst - first..bfirst - first + xb.len();
                    // Unreported, hard-pinned vertices need nothing ([`Pair::project`]).
                    if !reported && fx[range.clone()].iter().all(|&f| f) {
                        scratch.moved.extend(xb.iter().map(|p| p.is_nan()));
                        scratch.push.extend(xb.iter().map(|_| Vec3::ZERO));
                        continue;
                    }
                    let lo = chunk_contacts.partition_point(|c| (c.vertex as usize) < bfirst);
                    let hi =
                        chunk_contacts.partition_point(|c| (c.vertex as usize) < bfirst + xb.len());
                    let block = Block {
                        x: xb,
                        x0: &x0[bfirst..bfirst + xb.len()],
                        thickness: &th[range.clone()],
                        contacts: &chunk_contacts[lo..hi],
                    };
                    let (candidates, kept) = (&scratch.candidates, &mut scratch.block);
                    block.cull(candidates, boxes, swept, motion, margin, reported, kept);
                    for (j, (xi, vi)) in xb.iter_mut().zip(vb.iter_mut()).enumerate() {
                        if !reported && fx[range.start + j] {
                            // As `*xi != before` below (NaN ≠ NaN).
                            scratch.moved.push(xi.is_nan());
                            scratch.push.push(Vec3::ZERO);
                            continue;
                        }
                        let before = *xi;
                        let vertex = (bfirst + j) as u32;
                        while next_contact < chunk_contacts.len()
                            && chunk_contacts[next_contact].vertex < vertex
                        {
                            next_contact += 1;
                        }
                        let mine = &chunk_contacts[next_contact..];
                        let mine = &mine[..mine.iter().take_while(|c| c.vertex == vertex).count()];
                        let pair = Pair {
                            h,
                            vertex,
                            x0: x0[bfirst + j],
                            thickness: th[range.start + j],
                            fixed: fx[range.start + j],
                            margin,
                            reported,
                            contacts: mine,
                        };
                        let mut moved_at = None;
                        let mut push = Vec3::ZERO;
                        for &k in &scratch.block {
                            let (c, b) = (
                                &colliders[k as usize],
                                [boxes[k as usize], swept[k as usize]],
                            );
                            if let Some(share) = pair.project(k, c, &b, xi, vi, &mut min_distance) {
                                push += share;
                                moved_at = Some(k);
                                break;
                            }
                        }
                        // Once moved, the vertex may have left the block box: test the remaining
                        // colliders against its new position, exactly as the plain loop would.
                        if let Some(first) = moved_at {
                            for k in first + 1..colliders.len() as u32 {
                                let (c, b) = (
                                    &colliders[k as usize],
                                    [boxes[k as usize], swept[k as usize]],
                                );
                                if let Some(share) =
                                    pair.project(k, c, &b, xi, vi, &mut min_distance)
                                {
                                    push += share;
                                }
                            }
                        }
                        scratch.moved.push(*xi != before);
                        scratch.push.push(push);
                    }
                }
                scratch.min_distance = min_distance;
            });
        if !reported {
            return Ok(f32::INFINITY);
        }
        Ok(self.chunks[..chunk_count]
            .iter()
            .fold(f32::INFINITY, |m, s| m.min(s.min_distance)))
    }
}

impl ContactDetector {
    /// Per vertex of the last [`Self::project_out`]: the part of its projection that the
    /// colliders' own motion over the substep made, along the normal (m): the lesser of the
    /// projection depth and the surface's normal displacement h·v_s (zero where the surface did not
    /// advance, or the vertex was not moved).
    pub fn body_pushes(&self, push: &mut [Vec3]) {
        for (part, scratch) in push.chunks_mut(CHUNK_VERTICES).zip(&self.chunks) {
            part.copy_from_slice(&scratch.push);
        }
    }

    /// Which vertices the last [`Self::project_out`] moved (its end position differs from the
    /// one it was given), into `moved` (one entry per vertex of that call).
    pub fn moved_by_projection(&self, moved: &mut [bool]) {
        for (part, scratch) in moved.chunks_mut(CHUNK_VERTICES).zip(&self.chunks) {
            part.copy_from_slice(&scratch.moved);
        }
    }
}

/// Vertices per block of a chunk in [`ContactDetector::project_out`]: the chunk's candidate
/// colliders are culled again per block ([`Block::cull`]), so each vertex visits only the few
/// that can matter to it. The projection does not depend on it (skipped pairs are no-ops).
const BLOCK_VERTICES: usize = 16;

/// Box of a point set.
fn points_box(points: &[Vec3]) -> Aabb {
    points
        .iter()
        .fold(Aabb::EMPTY, |b, &p| b.union(Aabb { min: p, max: p }))
}

/// A block of consecutive vertices of one chunk, before their projection.
struct Block<'a> {
    /// End-of-substep positions (m).
    x: &'a [Vec3],
    /// Start-of-substep positions (m).
    x0: &'a [Vec3],
    thickness: &'a [f32],
    /// The block's contacts of the substep, by vertex then collider.
    contacts: &'a [VertexContact],
}

impl Block<'_> {
    /// Into `kept` (cleared first), in order, the `candidates` for which [`Pair::project`] may do
    /// anything for some vertex of the block; every collider left out is a no-op there, so the
    /// projection and the reported distance stay the same to the bit.
    ///
    /// Left out: colliders whose swept box misses every vertex path (grown by the thickness) and
    /// whose end box misses every vertex (grown by the thickness and the report margin) — the
    /// pair's own first test, on boxes holding the vertices' — and, unreported, those which
    /// besides missing the paths are provably out of reach of every vertex as [`Pair::reach`]
    /// proves it for one: no contact with the block, and the block's lowered gap to the end box
    /// beyond the largest thickness by more than an upper bound of every vertex's rate bound,
    /// max |Δx| + [`MovingCollider::motion_bound`] widened by 1e-4 relative and 1e-7 m absolute
    /// for round-off. (Gap, lowering and the differences are monotone in f32, so each vertex's
    /// own lowered gap minus its thickness is at least the block's.)
    #[allow(clippy::too_many_arguments)]
    fn cull(
        &self,
        candidates: &[u32],
        boxes: &[Aabb],
        swept: &[Aabb],
        motion: &[f32],
        margin: f32,
        reported: bool,
        kept: &mut Vec<u32>,
    ) {
        kept.clear();
        let th_max = self.thickness.iter().fold(0.0f32, |m, &t| m.max(t));
        let ends = points_box(self.x);
        let paths = ends.union(points_box(self.x0)).inflate(th_max);
        let near = ends.inflate(th_max + margin);
        let step = self
            .x
            .iter()
            .zip(self.x0)
            .fold(0.0f32, |m, (&x, &x0)| m.max((x - x0).length()));
        kept.extend(candidates.iter().copied().filter(|&k| {
            let k_ = k as usize;
            if swept[k_].overlaps(&paths) {
                return true;
            }
            if !boxes[k_].overlaps(&near) {
                return false;
            }
            if reported {
                return true;
            }
            let gap = super::min_distance::box_gap(&boxes[k_], &ends);
            let below = gap * (1.0 - 1e-5) - 1e-6;
            let rate = (step + motion[k_]) * (1.0 + 1e-4) + 1e-7;
            let out = below - th_max > rate && !self.contacts.iter().any(|c| c.collider == k);
            !out
        }));
    }
}

/// What [`ContactDetector::project_out`] reports: the smallest distance over the pairs whose
/// boxes are within the margin (m) of each other, or nothing (the margin still decides which
/// pairs are examined, as with the report).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DistanceReport {
    Within(f32),
    Unreported(f32),
}

/// What [`Pair::reach`] proved: the collider cannot move the vertex, or it may (with the rate
/// bound of the vertex's motion if that was computed).
enum Reach {
    Out,
    Maybe(Option<f32>),
}

/// One vertex's per-collider projection parameters.
struct Pair<'a> {
    h: f32,
    vertex: u32,
    /// Position at the start of the substep (m).
    x0: Vec3,
    thickness: f32,
    fixed: bool,
    margin: f32,
    /// The smallest distance is wanted ([`DistanceReport::Within`]).
    reported: bool,
    /// This vertex's contacts of the substep, by collider.
    contacts: &'a [VertexContact],
}

impl Pair<'_> {
    /// Projects vertex (x, v) out of collider `k` with end and swept boxes `[end, swept]` if it
    /// is closer than the thickness (on its entry side if its motion went through); folds its
    /// distance into `min_distance` when the end box is within the report margin. Returns, if
    /// the vertex moved, the bodies' share of the move ([`ContactDetector::body_pushes`]).
    fn project(
        &self,
        k: u32,
        c: &MovingCollider,
        [end, swept]: &[Aabb; 2],
        x: &mut Vec3,
        v: &mut Vec3,
        min_distance: &mut f32,
    ) -> Option<Vec3> {
        let th = self.thickness;
        let near = end.overlaps(&Aabb { min: *x, max: *x }.inflate(th.max(0.0) + self.margin));
        let path = Aabb {
            min: self.x0.min(*x),
            max: self.x0.max(*x),
        };
        if !near && !swept.overlaps(&path.inflate(th.max(0.0))) {
            return None;
        }
        // Unreported, a hard-pinned vertex (never moved) or one out of reach needs nothing more.
        let mut rate = None;
        if !self.reported {
            if self.fixed {
                return None;
            }
            match self.reach(k, c, end, *x) {
                Reach::Out => return None,
                Reach::Maybe(bound) => rate = bound,
            }
        }
        let (mut d, mut normal) = c.end.distance(*x);
        // The contact of the predicted motion, or, without one, of the actual motion x0 → x when
        // that can have touched the proxy at all: f = φ − thickness changes at most at the rate
        // bound K over the substep, so f(1) > K rules any contact out (conservative advancement).
        let contact = self
            .contacts
            .iter()
            .find(|c| c.collider == k)
            .copied()
            .or_else(|| {
                let rate = rate.unwrap_or_else(|| c.rate_bound(self.x0, *x));
                let reachable = d - th <= rate;
                reachable
                    .then(|| vertex_contact(c, k, self.vertex, self.h, self.x0, *x, th))
                    .flatten()
            });
        if let Some(contact) = contact {
            if normal.dot(contact.normal) < SAME_SIDE_COSINE {
                normal = contact.normal;
                d = (*x - (contact.target - th * normal)).dot(normal);
            }
        }
        if d < th && !self.fixed {
            let p = *x + (th - d) * normal;
            let surface_speed = if self.h > 0.0 {
                (c.start.distance(p).0 - c.end.distance(p).0) / self.h
            } else {
                0.0
            };
            *x = p;
            let vn = v.dot(normal);
            if vn < surface_speed {
                *v += (surface_speed - vn) * normal;
            }
            *min_distance = min_distance.min(th);
            // The bodies' share of the projection: as far as the surface itself advanced.
            Some(normal * (th - d).min((surface_speed * self.h).max(0.0)))
        } else {
            if near {
                *min_distance = min_distance.min(d);
            }
            None
        }
    }

    /// Whether the vertex at `x` provably stays where it is for collider `k` (end box `end`)
    /// without evaluating the distance d: no contact of the predicted motion with k, and the gap
    /// g between `x` and the box (d ≥ g: the convex proxy lies in its box) beyond the thickness
    /// by more than the rate bound K of the actual motion, so that [`Self::project`] would find
    /// d ≥ thickness and not look for a contact on the actual motion (d − thickness > K). The
    /// gap is lowered by the round-off margin of [`super::min_distance`] first. K, once
    /// computed, is passed on.
    fn reach(&self, k: u32, c: &MovingCollider, end: &Aabb, x: Vec3) -> Reach {
        let th = self.thickness;
        let gap = super::min_distance::box_gap(end, &Aabb { min: x, max: x });
        let below = gap * (1.0 - 1e-5) - 1e-6;
        if below > th && !self.contacts.iter().any(|c| c.collider == k) {
            let rate = c.rate_bound(self.x0, x);
            if below - th > rate {
                Reach::Out
            } else {
                Reach::Maybe(Some(rate))
            }
        } else {
            Reach::Maybe(None)
        }
    }
}
