//! Narrow phase over the broad-phase candidates: proximity contacts at the start of the substep
//! (BFA02 §6.1) and continuous-collision events along x0 → x1 (BFA02 §6.2), as 4-point stencils.

use super::ccd::{edge_edge_ccd, vertex_triangle_ccd};
use super::contact::{Contact, NormalFrom};
use super::proximity::{
    point_triangle_distance, point_triangle_weights, segment_segment_distance,
    segment_segment_params,
};
use super::rest_close::{RestClose, NO_SLOT};
use glam::{DVec3, Vec3};

/// CCD distance tolerance as a fraction of the pair thickness (plus an absolute 1e-7 m for f32
/// round-off of positions near 1 m).
pub const CCD_TOLERANCE_FRACTION: f32 = 0.01;

/// Read-only data of one narrow-phase pass.
pub struct Narrow<'a> {
    pub x0: &'a [Vec3],
    pub x1: &'a [Vec3],
    pub triangles: &'a [[u32; 3]],
    pub edges: &'a [[u32; 2]],
    /// Thickness (m) and friction of each vertex's garment.
    pub thick: &'a [f32],
    pub friction: &'a [f32],
    /// |x1 − x0 − u| of each vertex (m), computed in f64 from the f32 positions, with one
    /// displacement u for all (the resolve's frame): |d_i − d_j| ≤ disp_i + disp_j.
    pub disp: &'a [f64],
    /// Pairs closer than their thickness at rest, which get no proximity repulsion, with their
    /// distance bounds (None: no rest positions were given).
    pub rest_close: Option<&'a RestClose>,
}

impl Narrow<'_> {
    /// Mean thickness (m) and friction of the layers of vertices `a` and `b`.
    #[inline]
    fn pair_params(&self, a: u32, b: u32) -> (f32, f32) {
        let (a, b) = (a as usize, b as usize);
        (
            0.5 * (self.thick[a] + self.thick[b]),
            0.5 * (self.friction[a] + self.friction[b]),
        )
    }

    /// Proximity contact of vertex `p` and triangle `t` at x0, if closer than the thickness.
    /// `sep` receives a lower bound of their distance at x0 (m), for [`Self::vertex_triangle_ccd`].
    /// `slot`: the pair's [`RestClose`] slot ([`RestClose::vertex_triangle_slots`]; [`NO_SLOT`]
    /// if it is not rest-close or there are no rest positions).
    pub fn vertex_triangle_proximity(
        &self,
        p: u32,
        t: u32,
        slot: u32,
        sep: &mut f64,
    ) -> Option<Contact> {
        let tri = self.triangles[t as usize];
        let g = |i: u32| self.x0[i as usize].as_dvec3();
        if let Some(rc) = self.rest_close.filter(|_| slot != NO_SLOT) {
            // Closer than the thickness at rest: no repulsion, only the distance's bound.
            *sep = rc.distance_bound::<1>(slot as usize, [p, tri[0], tri[1], tri[2]], || {
                point_triangle_distance(g(p), g(tri[0]), g(tri[1]), g(tri[2]))
            });
            return None;
        }
        let (th, mu) = self.pair_params(p, tri[0]);
        if !self.near_at_start(&[p], &tri, th) {
            *sep = th as f64;
            return None;
        }
        let (xp, a, b, c) = (g(p), g(tri[0]), g(tri[1]), g(tri[2]));
        let w = point_triangle_weights(xp, a, b, c);
        let delta = xp - (a * w[0] + b * w[1] + c * w[2]);
        let dist = delta.length();
        *sep = dist;
        if dist >= th as f64 {
            return None;
        }
        let idx = [p, tri[0], tri[1], tri[2]];
        let wts = [1.0, -w[0] as f32, -w[1] as f32, -w[2] as f32];
        let (normal, normal_from) = if dist > 1e-6 * th as f64 {
            ((delta / dist).as_vec3(), NormalFrom::Separation)
        } else {
            let n = self.motion_normal(NormalFrom::MotionVertexTriangle, idx, wts);
            (n, NormalFrom::MotionVertexTriangle)
        };
        Some(Contact {
            idx,
            w: wts,
            normal,
            gap: dist as f32,
            thickness: th,
            friction: mu,
            normal_from,
        })
    }

    /// Proximity contact of edges `e` and `f` at x0, if closer than the thickness. `sep`
    /// receives a lower bound of their distance at x0 (m), for [`Self::edge_edge_ccd`].
    /// `slot`: the pair's [`RestClose`] slot ([`RestClose::edge_edge_slots`]; [`NO_SLOT`] if it
    /// is not rest-close or there are no rest positions).
    pub fn edge_edge_proximity(&self, e: u32, f: u32, slot: u32, sep: &mut f64) -> Option<Contact> {
        let (ea, eb) = (self.edges[e as usize], self.edges[f as usize]);
        let g = |i: u32| self.x0[i as usize].as_dvec3();
        if let Some(rc) = self.rest_close.filter(|_| slot != NO_SLOT) {
            // Closer than the thickness at rest: no repulsion, only the distance's bound.
            *sep = rc.distance_bound::<2>(slot as usize, [ea[0], ea[1], eb[0], eb[1]], || {
                segment_segment_distance(g(ea[0]), g(ea[1]), g(eb[0]), g(eb[1]))
            });
            return None;
        }
        let (th, mu) = self.pair_params(ea[0], eb[0]);
        if !self.near_at_start(&ea, &eb, th) {
            *sep = th as f64;
            return None;
        }
        let (a, b, c, d) = (g(ea[0]), g(ea[1]), g(eb[0]), g(eb[1]));
        let (s, u) = segment_segment_params(a, b, c, d);
        let delta = a.lerp(b, s) - c.lerp(d, u);
        let dist = delta.length();
        *sep = dist;
        if dist >= th as f64 {
            return None;
        }
        let idx = [ea[0], ea[1], eb[0], eb[1]];
        let wts = [(1.0 - s) as f32, s as f32, -(1.0 - u) as f32, -u as f32];
        let (normal, normal_from) = if dist > 1e-6 * th as f64 {
            ((delta / dist).as_vec3(), NormalFrom::Separation)
        } else {
            let n = self.motion_normal(NormalFrom::MotionEdgeEdge, idx, wts);
            (n, NormalFrom::MotionEdgeEdge)
        };
        Some(Contact {
            idx,
            w: wts,
            normal,
            gap: dist as f32,
            thickness: th,
            friction: mu,
            normal_from,
        })
    }

    /// Continuous collision of vertex `p` and triangle `t` along x0 → x1. `sep`: a lower bound of
    /// their distance at x0 (m; 0 if unknown), used only to skip pairs that cannot touch.
    pub fn vertex_triangle_ccd(&self, p: u32, t: u32, sep: f64) -> Option<Contact> {
        let tri = self.triangles[t as usize];
        let idx = [p, tri[0], tri[1], tri[2]];
        let (th, mu) = self.pair_params(p, tri[0]);
        let tol = CCD_TOLERANCE_FRACTION * th + 1e-7;
        if self.separated_by_disp(sep, [p], tri, tol as f64) {
            return None;
        }
        let x0 = idx.map(|i| self.x0[i as usize].as_dvec3());
        let x1 = idx.map(|i| self.x1[i as usize].as_dvec3());
        let relative = relative_displacement(&x0, &x1, 1);
        if separated(sep, relative, 0.0, tol as f64)
            || !self.sweeps_overlap([p], [tri[0], tri[1], tri[2]], tol)
        {
            return None;
        }
        let d0 = point_triangle_distance(x0[0], x0[1], x0[2], x0[3]);
        if separated(d0, relative, 0.0, tol as f64) {
            return None;
        }
        let (t, w) = vertex_triangle_ccd(x0, x1, tol as f64)?;
        let at = |k: usize| x0[k].lerp(x1[k], t);
        let n = (at(2) - at(1)).cross(at(3) - at(1));
        let wts = [1.0, -w[0] as f32, -w[1] as f32, -w[2] as f32];
        Some(self.collision(idx, wts, n, th, mu))
    }

    /// Continuous collision of edges `e` and `f` along x0 → x1. `sep`: a lower bound of their
    /// distance at x0 (m; 0 if unknown), used only to skip pairs that cannot touch.
    pub fn edge_edge_ccd(&self, e: u32, f: u32, sep: f64) -> Option<Contact> {
        let (ea, eb) = (self.edges[e as usize], self.edges[f as usize]);
        let idx = [ea[0], ea[1], eb[0], eb[1]];
        let (th, mu) = self.pair_params(ea[0], eb[0]);
        let tol = CCD_TOLERANCE_FRACTION * th + 1e-7;
        if self.separated_by_disp(sep, ea, eb, tol as f64) {
            return None;
        }
        let x0 = idx.map(|i| self.x0[i as usize].as_dvec3());
        let x1 = idx.map(|i| self.x1[i as usize].as_dvec3());
        let relative = relative_displacement(&x0, &x1, 2);
        if separated(sep, relative, 0.0, tol as f64)
            || !self.sweeps_overlap([ea[0], ea[1]], [eb[0], eb[1]], tol)
        {
            return None;
        }
        let d0 = segment_segment_distance(x0[0], x0[1], x0[2], x0[3]);
        if separated(d0, relative, 0.0, tol as f64) {
            return None;
        }
        let (t, s, u) = edge_edge_ccd(x0, x1, tol as f64)?;
        let at = |k: usize| x0[k].lerp(x1[k], t);
        let mut n = edge_normal(at(1) - at(0), at(3) - at(2));
        let closest = at(0).lerp(at(1), s) - at(2).lerp(at(3), u);
        if n.length_squared() == 0.0 {
            n = closest;
        }
        let wts = [(1.0 - s) as f32, s as f32, -(1.0 - u) as f32, -u as f32];
        Some(self.collision(idx, wts, n, th, mu))
    }

    /// Collision record: normal oriented so the pair was on its positive side at the start of the
    /// substep (or, if it started in contact, so that the motion was along −normal).
    fn collision(&self, idx: [u32; 4], w: [f32; 4], n: DVec3, th: f32, mu: f32) -> Contact {
        let delta0: DVec3 = (0..4)
            .map(|k| w[k] as f64 * self.x0[idx[k] as usize].as_dvec3())
            .sum();
        let len = n.length();
        let normal = if len > 0.0 && (n / len).dot(delta0).abs() > 1e-9 {
            let n = n / len;
            if n.dot(delta0) >= 0.0 {
                n.as_vec3()
            } else {
                (-n).as_vec3()
            }
        } else {
            self.oriented_by_motion(n, idx, w)
        };
        let gap = normal.as_dvec3().dot(delta0) as f32;
        Contact {
            idx,
            w,
            normal,
            gap,
            thickness: th,
            friction: mu,
            normal_from: NormalFrom::Separation,
        }
    }

    /// The normal of a touching proximity pair of kind `from`: the triangle's normal (vertex
    /// against triangle) or the edges' common normal at x0, turned against the stencil's relative
    /// displacement x0 → x1 by [`Self::oriented_by_motion`]. Depends on x1 only for its sign (and,
    /// for degenerate geometry, its direction).
    pub fn motion_normal(&self, from: NormalFrom, idx: [u32; 4], w: [f32; 4]) -> Vec3 {
        let g = |k: usize| self.x0[idx[k] as usize].as_dvec3();
        let n = match from {
            NormalFrom::MotionEdgeEdge => edge_normal(g(1) - g(0), g(3) - g(2)),
            _ => (g(2) - g(1)).cross(g(3) - g(1)),
        };
        self.oriented_by_motion(n, idx, w)
    }

    /// Unit vector along ±`n` that opposes the stencil's relative displacement over the substep
    /// (an arbitrary axis if `n` is zero).
    fn oriented_by_motion(&self, n: DVec3, idx: [u32; 4], w: [f32; 4]) -> Vec3 {
        let disp: DVec3 = (0..4)
            .map(|k| w[k] as f64 * (self.x1[idx[k] as usize] - self.x0[idx[k] as usize]).as_dvec3())
            .sum();
        let mut n = n;
        if n.length_squared() == 0.0 {
            n = if disp.length_squared() > 0.0 {
                -disp
            } else {
                DVec3::Y
            };
        }
        let n = n.normalize();
        if n.dot(disp) > 0.0 {
            (-n).as_vec3()
        } else {
            n.as_vec3()
        }
    }

    /// Cheap rejection: do the boxes of the two vertex sets at x0 come within `th` (m)?
    fn near_at_start(&self, a: &[u32], b: &[u32], th: f32) -> bool {
        boxes_within(self.x0, a, b, th)
    }

    /// Cheap rejection in front of the CCD: [`separated`] with the vertices' displacements in the
    /// resolve's frame alone, before any position is loaded: every relative displacement
    /// d_i − d_j = (d_i − u) − (d_j − u) is at most the two largest, one of each primitive (a
    /// looser bound than [`relative_displacement`]'s, so it skips no pair that one keeps).
    fn separated_by_disp<const A: usize, const B: usize>(
        &self,
        sep: f64,
        a: [u32; A],
        b: [u32; B],
        tol: f64,
    ) -> bool {
        let max_disp = |ids: &[u32]| {
            ids.iter()
                .map(|&i| self.disp[i as usize])
                .fold(0.0, f64::max)
        };
        separated(sep, max_disp(&a), max_disp(&b), tol)
    }

    /// Do the tight swept boxes of the two vertex sets, inflated by `tol` (m), overlap?
    fn sweeps_overlap<const A: usize, const B: usize>(
        &self,
        a: [u32; A],
        b: [u32; B],
        tol: f32,
    ) -> bool {
        let sweep = |ids: &[u32]| {
            let mut lo = Vec3::splat(f32::INFINITY);
            let mut hi = Vec3::splat(f32::NEG_INFINITY);
            for &i in ids {
                let (p, q) = (self.x0[i as usize], self.x1[i as usize]);
                lo = lo.min(p).min(q);
                hi = hi.max(p).max(q);
            }
            (lo, hi)
        };
        let (alo, ahi) = sweep(&a);
        let (blo, bhi) = sweep(&b);
        (alo - Vec3::splat(tol)).cmple(bhi).all() && (blo - Vec3::splat(tol)).cmple(ahi).all()
    }
}

/// Conservative no-contact filter in front of the CCD (it never changes a result, it only skips
/// work, mostly for neighbouring pairs of flat cloth, whose cubic is identically ~0): every point
/// of either primitive is a fixed convex combination of its vertices, so over the substep the
/// relative displacement of a point of one and a point of the other is a convex combination of
/// the vertices' relative displacements d_i − d_j (vertices `..split` form the first primitive),
/// and the distance shrinks by at most their largest length, which this returns (m). If a lower
/// bound of the distance at x0 minus that still exceeds the tolerance ([`separated`]), no time in
/// \[0,1\] comes closer than it. (Cloth moving as a whole, falling, swinging or carried by a
/// walking body, has relative displacements near zero.) Tried first with the proximity pass's
/// distance bound, then with the distance itself: a mesh finer than its thickness lists many pairs
/// closer than the thickness at rest (the thin-triangle skirt: 28 per vertex), and the bound
/// spares most of them the closest-point computation.
fn relative_displacement(x0: &[DVec3; 4], x1: &[DVec3; 4], split: usize) -> f64 {
    let disp = |k: usize| x1[k] - x0[k];
    let mut relative: f64 = 0.0;
    for i in 0..split {
        for j in split..4 {
            relative = relative.max((disp(i) - disp(j)).length());
        }
    }
    relative
}

/// Does a pair at least `d0` (m) apart at x0 stay farther than `tol` (m) throughout the substep,
/// when its two primitives' points move by at most `a` and `b` (m), or relative to each other by
/// at most `a` (with `b` = 0; [`relative_displacement`])? The 1e-9 relative margin covers the
/// round-off of the distances the CCD would compute.
#[inline]
fn separated(d0: f64, a: f64, b: f64, tol: f64) -> bool {
    d0 - a - b > tol + 1e-9 * (d0 + tol)
}

/// Are the vertex `a` = \[p\] and the triangle `b`, or the edges `a` and `b`, of one garment and
/// closer at `rest` (m) than the mean thickness of their first vertices (`thick`, m per vertex)?
/// Such pairs get no proximity repulsion (BFA02 §6.1 for cloth finer than its thickness).
pub(super) fn rest_distance_below(
    rest: &[Vec3],
    layer: &[u32],
    thick: &[f32],
    a: &[u32],
    b: &[u32],
) -> bool {
    let th = 0.5 * (thick[a[0] as usize] + thick[b[0] as usize]);
    if layer[a[0] as usize] != layer[b[0] as usize] || !boxes_within(rest, a, b, th) {
        return false;
    }
    let r = |i: u32| rest[i as usize].as_dvec3();
    let dist = if let [p] = *a {
        point_triangle_distance(r(p), r(b[0]), r(b[1]), r(b[2]))
    } else {
        segment_segment_distance(r(a[0]), r(a[1]), r(b[0]), r(b[1]))
    };
    dist < th as f64
}

/// Do the boxes of the vertex sets `a` and `b` of `x` (m) come within `th` (m) of each other?
/// (If not, no point of one primitive is within `th` of the other.)
fn boxes_within(x: &[Vec3], a: &[u32], b: &[u32], th: f32) -> bool {
    let bound = |ids: &[u32]| {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for &i in ids {
            lo = lo.min(x[i as usize]);
            hi = hi.max(x[i as usize]);
        }
        (lo, hi)
    };
    let ((alo, ahi), (blo, bhi)) = (bound(a), bound(b));
    (alo - Vec3::splat(th)).cmple(bhi).all() && (blo - Vec3::splat(th)).cmple(ahi).all()
}

/// Normal of two (possibly parallel) edge directions: their cross product, or, for parallel
/// edges, zero.
fn edge_normal(a: DVec3, b: DVec3) -> DVec3 {
    let n = a.cross(b);
    if n.length_squared() > 1e-20 * a.length_squared() * b.length_squared() {
        n
    } else {
        DVec3::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random numbers in [-1, 1).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        }
        fn vec(&mut self, scale: f32) -> Vec3 {
            Vec3::new(self.next(), self.next(), self.next()) * scale
        }
    }

    /// The filters in front of the cubic only skip work: over pairs carried 0.1 m by a common
    /// motion (a walking body) with small relative motions, some of which collide, the filtered
    /// CCD finds exactly the events of the bare one (`ccd.rs`), and the displacement filter in
    /// the carried frame alone skips the pairs that stay well apart.
    #[test]
    fn the_filters_skip_only_pairs_that_cannot_collide() {
        let mut rng = Lcg(7);
        let th = 0.005f32;
        let tol = (CCD_TOLERANCE_FRACTION * th + 1e-7) as f64;
        let (mut events, mut apart, mut skipped_apart) = (0, 0, 0);
        for case in 0..4000 {
            let carry = Vec3::new(0.1, 0.02, -0.05) + rng.vec(0.01);
            let wiggle = if case % 2 == 0 { 0.001 } else { 0.006 };
            let x0: Vec<Vec3> = (0..4)
                .map(|_| Vec3::new(0.3, 0.8, 0.1) + rng.vec(0.006))
                .collect();
            let x1: Vec<Vec3> = x0.iter().map(|&p| p + carry + rng.vec(wiggle)).collect();
            let disp: Vec<f64> = x0
                .iter()
                .zip(&x1)
                .map(|(&a, &b)| (b.as_dvec3() - a.as_dvec3() - carry.as_dvec3()).length())
                .collect();
            let nar = Narrow {
                x0: &x0,
                x1: &x1,
                triangles: &[[1, 2, 3]],
                edges: &[[0, 1], [2, 3]],
                thick: &[th; 4],
                friction: &[0.3; 4],
                disp: &disp,
                rest_close: None,
            };
            let d = |i: usize| x0[i].as_dvec3();
            let e = |i: usize| x1[i].as_dvec3();
            let (p0, p1) = ([d(0), d(1), d(2), d(3)], [e(0), e(1), e(2), e(3)]);
            let vt_sep = point_triangle_distance(p0[0], p0[1], p0[2], p0[3]);
            let ee_sep = segment_segment_distance(p0[0], p0[1], p0[2], p0[3]);
            let vt_bare = vertex_triangle_ccd(p0, p1, tol).is_some();
            let ee_bare = edge_edge_ccd(p0, p1, tol).is_some();
            // With the exact distance, a lower bound of it, and none.
            for scale in [1.0, 0.5, 0.0] {
                let vt = nar.vertex_triangle_ccd(0, 0, vt_sep * scale).is_some();
                let ee = nar.edge_edge_ccd(0, 1, ee_sep * scale).is_some();
                assert_eq!(vt, vt_bare, "case {case}, vertex–triangle, bound ×{scale}");
                assert_eq!(ee, ee_bare, "case {case}, edge–edge, bound ×{scale}");
            }
            events += vt_bare as u32 + ee_bare as u32;
            for (bare, sep, a, b) in [
                (vt_bare, vt_sep, &[0u32][..], &[1u32, 2, 3][..]),
                (ee_bare, ee_sep, &[0, 1][..], &[2, 3][..]),
            ] {
                if !bare && sep > 0.004 && case % 2 == 0 {
                    apart += 1;
                    let max =
                        |ids: &[u32]| ids.iter().map(|&i| disp[i as usize]).fold(0.0, f64::max);
                    skipped_apart += separated(sep, max(a), max(b), tol) as u32;
                }
            }
        }
        assert!(events > 50, "only {events} collisions among the cases");
        // Moving 1 mm against each other at most 4 mm apart: every one (in the world frame, where
        // the vertices move 0.1 m, none would be).
        assert!(
            apart > 1000 && skipped_apart == apart,
            "the carried frame skipped {skipped_apart} of {apart} pairs apart"
        );
    }
}
