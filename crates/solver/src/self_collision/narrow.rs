//! Narrow phase over the broad-phase candidates: proximity contacts at the start of the substep
//! (BFA02 §6.1) and continuous-collision events along x0 → x1 (BFA02 §6.2), as 4-point stencils.

use super::ccd::{edge_edge_ccd, vertex_triangle_ccd};
use super::contact::{Contact, NormalFrom};
use super::proximity::{
    point_triangle_distance, point_triangle_weights, segment_segment_distance,
    segment_segment_params,
};
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
    pub layer: &'a [u32],
    /// Thickness (m) and friction of each vertex's garment.
    pub thick: &'a [f32],
    pub friction: &'a [f32],
    /// |x1 − x0| of each vertex (m), computed in f64 from the f32 positions.
    pub disp: &'a [f64],
    pub rest: Option<&'a [Vec3]>,
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

    fn same_layer(&self, a: u32, b: u32) -> bool {
        self.layer[a as usize] == self.layer[b as usize]
    }

    /// Proximity contact of vertex `p` and triangle `t` at x0, if closer than the thickness.
    /// `sep` receives a lower bound of their distance at x0 (m), for [`Self::vertex_triangle_ccd`].
    pub fn vertex_triangle_proximity(&self, p: u32, t: u32, sep: &mut f64) -> Option<Contact> {
        let tri = self.triangles[t as usize];
        let (th, mu) = self.pair_params(p, tri[0]);
        if !self.near_at_start(&[p], &tri, th) {
            *sep = th as f64;
            return None;
        }
        let g = |i: u32| self.x0[i as usize].as_dvec3();
        let (xp, a, b, c) = (g(p), g(tri[0]), g(tri[1]), g(tri[2]));
        let w = point_triangle_weights(xp, a, b, c);
        let delta = xp - (a * w[0] + b * w[1] + c * w[2]);
        let dist = delta.length();
        *sep = dist;
        if dist >= th as f64 {
            return None;
        }
        if let Some(rest) = self.rest {
            if self.same_layer(p, tri[0]) && boxes_within(rest, &[p], &tri, th) {
                let r = |i: u32| rest[i as usize].as_dvec3();
                let rw = point_triangle_weights(r(p), r(tri[0]), r(tri[1]), r(tri[2]));
                let rq = r(tri[0]) * rw[0] + r(tri[1]) * rw[1] + r(tri[2]) * rw[2];
                if (r(p) - rq).length() < th as f64 {
                    return None;
                }
            }
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
    pub fn edge_edge_proximity(&self, e: u32, f: u32, sep: &mut f64) -> Option<Contact> {
        let (ea, eb) = (self.edges[e as usize], self.edges[f as usize]);
        let (th, mu) = self.pair_params(ea[0], eb[0]);
        if !self.near_at_start(&ea, &eb, th) {
            *sep = th as f64;
            return None;
        }
        let g = |i: u32| self.x0[i as usize].as_dvec3();
        let (a, b, c, d) = (g(ea[0]), g(ea[1]), g(eb[0]), g(eb[1]));
        let (s, u) = segment_segment_params(a, b, c, d);
        let delta = a.lerp(b, s) - c.lerp(d, u);
        let dist = delta.length();
        *sep = dist;
        if dist >= th as f64 {
            return None;
        }
        if let Some(rest) = self.rest {
            if self.same_layer(ea[0], eb[0]) && boxes_within(rest, &ea, &eb, th) {
                let r = |i: u32| rest[i as usize].as_dvec3();
                let (ra, rb, rc, rd) = (r(ea[0]), r(ea[1]), r(eb[0]), r(eb[1]));
                let (rs, ru) = segment_segment_params(ra, rb, rc, rd);
                if (ra.lerp(rb, rs) - rc.lerp(rd, ru)).length() < th as f64 {
                    return None;
                }
            }
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
        if self.separated_by_disp(sep, [p], tri, tol as f64)
            || !self.sweeps_overlap([p], [tri[0], tri[1], tri[2]], tol)
        {
            return None;
        }
        let x0 = idx.map(|i| self.x0[i as usize].as_dvec3());
        let x1 = idx.map(|i| self.x1[i as usize].as_dvec3());
        let d0 = point_triangle_distance(x0[0], x0[1], x0[2], x0[3]);
        if separated_throughout(d0, &x0, &x1, 1, tol as f64) {
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
        if self.separated_by_disp(sep, ea, eb, tol as f64)
            || !self.sweeps_overlap([ea[0], ea[1]], [eb[0], eb[1]], tol)
        {
            return None;
        }
        let x0 = idx.map(|i| self.x0[i as usize].as_dvec3());
        let x1 = idx.map(|i| self.x1[i as usize].as_dvec3());
        let d0 = segment_segment_distance(x0[0], x0[1], x0[2], x0[3]);
        if separated_throughout(d0, &x0, &x1, 2, tol as f64) {
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

    /// Cheap rejection in front of the CCD: [`separated_throughout`] from the per-vertex
    /// displacements alone, before any position is loaded (same arithmetic, same verdict).
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
/// and the distance shrinks by at most their largest length. If the distance `d0` (m) at x0 minus
/// that still exceeds `tol` (m), no time in \[0,1\] comes closer than `tol`. (Cloth moving as a
/// whole, falling or swinging, has relative displacements near zero.) The 1e-9 relative margin
/// covers the round-off of the distances the CCD would compute.
fn separated_throughout(d0: f64, x0: &[DVec3; 4], x1: &[DVec3; 4], split: usize, tol: f64) -> bool {
    let disp = |k: usize| x1[k] - x0[k];
    let mut relative: f64 = 0.0;
    for i in 0..split {
        for j in split..4 {
            relative = relative.max((disp(i) - disp(j)).length());
        }
    }
    separated(d0, relative, 0.0, tol)
}

/// [`separated_throughout`] given the largest vertex displacement `a` and `b` (m) of each
/// primitive.
#[inline]
fn separated(d0: f64, a: f64, b: f64, tol: f64) -> bool {
    d0 - a - b > tol + 1e-9 * (d0 + tol)
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
