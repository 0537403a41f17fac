//! The pairs of one garment already closer than their thickness at rest, listed once. A mesh finer
//! than its thickness (the thin-triangle skirt: 3.5 mm between its columns, 5 mm thick; the 256²
//! sheet: 3.9 mm) has many: every proximity pass finds them again (28 per vertex on that skirt,
//! all of its candidates) and must not push them apart (a flat sheet would inflate itself), which
//! took a second closest-point computation at the rest positions for each. Looked up here instead:
//! per vertex its sorted rest-close triangles, per edge its sorted rest-close edges (compressed
//! rows), built from a broad phase over the rest positions with the proximity pass's own
//! inflation and the same test at rest, so a pair is listed exactly when that test holds (the same
//! contacts, to the bit).
//!
//! Such a pair needs only a lower bound of its distance, for the continuous collision's filter
//! (narrow.rs). The bound follows the pair's own relative motion, so that a garment carried and
//! turned as a whole keeps its bounds: every vertex's displacement δ since an anchor (the
//! positions of the epoch's first call) is known, and a pair whose distance d was computed when
//! the relative displacements δ_a − δ_b of its vertices (a of one primitive, b of the other) were
//! at most m long is, later, at least d − m − M apart, M the same maximum now (every point of a
//! primitive is a fixed convex combination of its vertices; see [`RestClose::distance_bound`]).
//! While M is at most a quarter of d − m the bound serves, then the distance is computed again.
//! After a call that computed a quarter of the pairs' distances again, the next one starts a new
//! epoch at its positions. (Until 2026-11-28 the bound subtracted each vertex's path length
//! relative to the garment's median motion: on the thin-triangle skirt, which turns with the
//! hips, 92 % of the bounds were computed again every call.) The bounds only decide which pairs
//! the filter skips, never a result: dropping them (a new stage) changes no bit.

use super::broad_phase::{BroadPhase, Mesh};
use super::narrow::rest_distance_below;
use super::PROXIMITY_INFLATION;
use crate::linalg::reduce::{for_each_indexed, parallel};
use glam::{Vec3, Vec3A};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Rest-close pairs for one set of garment thicknesses.
#[derive(Debug, Default)]
pub(super) struct RestClose {
    /// Thickness (m) of each vertex the lists hold for (empty: not built).
    thick: Vec<f32>,
    /// Vertex p's rest-close triangles: `vf[vf_start[p]..vf_start[p + 1]]`, ascending.
    vf_start: Vec<u32>,
    vf: Vec<u32>,
    /// Edge e's rest-close edges f (e < f): `ee[ee_start[e]..ee_start[e + 1]]`, ascending.
    ee_start: Vec<u32>,
    ee: Vec<u32>,
    /// Per listed pair (vertex–triangle slots first, then edge–edge), the f64 bits of d − m, the
    /// distance last computed less the largest relative displacement of its vertices then (m;
    /// −∞: none in this epoch). Atomics with relaxed order: each pair is a candidate at most once
    /// per pass, so each slot is touched by one task.
    base: Vec<AtomicU64>,
    /// Per vertex: its position at the epoch's first call (m), and its displacement δ since, at
    /// the last call (m; f32: each component the difference of two f32 positions, correctly
    /// rounded), and what the round-off of a relative displacement computed from them may reach
    /// (m, `slack`).
    anchor: Vec<Vec3>,
    delta: Vec<Vec3A>,
    slack: f64,
    /// Bounds computed again since the last call (per pool thread, so that the threads do not
    /// share a cache line), and whether that call started its epoch.
    refreshed: [Counter; COUNTERS],
    new_epoch: bool,
}

/// Per-thread counters of [`RestClose::refreshed`] (threads beyond share them).
const COUNTERS: usize = 8;

/// A counter alone on its cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Counter(AtomicU64);

/// Part of d − m (see [`RestClose::distance_bound`]) the pair's relative displacement may reach
/// before its distance is computed again; also the part of the pairs computed again in one call
/// after which the next call starts a new epoch.
const LOOSEST: f64 = 0.25;

impl RestClose {
    /// Are the lists those of the vertex thicknesses `thick` (m)?
    pub fn holds_for(&self, thick: &[f32]) -> bool {
        !self.thick.is_empty() && self.thick == thick
    }

    /// Lists the pairs of `mesh` of one garment whose distance at `rest` (m) is below the mean
    /// thickness of their vertices, `thick` (m per vertex), with `broad` (the stage's own: its
    /// candidates are replaced by the next build; its first build's tree, made here from the
    /// rest shape, serves every later one).
    pub fn build(&mut self, broad: &mut BroadPhase, mesh: &Mesh, rest: &[Vec3], thick: &[f32]) {
        let n = rest.len();
        let inflate: Vec<f32> = (0..n)
            .map(|i| {
                let size = rest[i].abs().max_element();
                PROXIMITY_INFLATION * thick[i] + 8.0 * f32::EPSILON * size
            })
            .collect();
        broad.build(mesh, rest, rest, &inflate);
        let close = |a: &[u32], b: &[u32]| rest_distance_below(rest, mesh.layer, thick, a, b);
        let tris = mesh.triangles;
        let edges = mesh.edges;
        let vf = broad
            .vf
            .iter()
            .filter(|&&[p, t]| close(&[p], &tris[t as usize]));
        (self.vf_start, self.vf) = compressed_rows(n, vf);
        let ee = broad
            .ee
            .iter()
            .filter(|&&[e, f]| close(&edges[e as usize], &edges[f as usize]));
        (self.ee_start, self.ee) = compressed_rows(edges.len(), ee);
        self.thick.clear();
        self.thick.extend_from_slice(thick);
        let slots = self.vf.len() + self.ee.len();
        let none = f64::NEG_INFINITY.to_bits();
        self.base = (0..slots).map(|_| AtomicU64::new(none)).collect();
        self.anchor.clear();
        self.delta.clear();
        self.refreshed = Default::default();
        self.new_epoch = false;
    }

    /// Each vertex's displacement δ since the epoch's anchor, for the bounds of this call at
    /// positions `x0` (m). A new epoch (anchor `x0`, no bounds) starts at the first call and
    /// after a call that computed a quarter of the pairs' distances again (not one that started
    /// an epoch itself: that one computes them all).
    pub fn advance(&mut self, x0: &[Vec3]) {
        if self.base.is_empty() {
            return;
        }
        let refreshed: u64 = self.refreshed.iter().map(|c| c.0.swap(0, Relaxed)).sum();
        let refreshed = refreshed as usize;
        let worn = !self.new_epoch && refreshed as f64 > LOOSEST * self.base.len() as f64;
        self.new_epoch = self.anchor.len() != x0.len() || worn;
        if self.new_epoch {
            self.anchor.clear();
            self.anchor.extend_from_slice(x0);
            let none = f64::NEG_INFINITY.to_bits();
            self.base.par_iter().for_each(|b| b.store(none, Relaxed));
        }
        self.delta.resize(x0.len(), Vec3A::ZERO);
        let anchor = &self.anchor;
        for_each_indexed(&mut self.delta, |i, d| *d = Vec3A::from(x0[i] - anchor[i]));
        // |δ_a − δ_b| in f32 is within 2ε·(|δ_a| + |δ_b|) + 3ε·|δ_a − δ_b| of the exact length
        // (ε = f32::EPSILON): the first part over every pair, the second in `relative_motion`.
        let largest = self
            .delta
            .par_iter()
            .map(|d| d.abs().max_element())
            .reduce(|| 0.0, f32::max) as f64;
        self.slack = 8.0 * f32::EPSILON as f64 * largest + 1e-9;
    }

    /// An upper bound (m) of the largest relative displacement |δ_a − δ_b| of vertices a of
    /// `idx[..A]` and b of `idx[A..]` (a vertex and a triangle: A = 1; two edges: A = 2), its
    /// round-off included.
    #[inline]
    fn relative_motion<const A: usize>(&self, idx: [u32; 4]) -> f64 {
        let d = idx.map(|i| self.delta[i as usize]);
        let mut m2: f32 = 0.0;
        for a in &d[..A] {
            for b in &d[A..] {
                m2 = m2.max((*a - *b).length_squared());
            }
        }
        m2.sqrt() as f64 * (1.0 + 4.0 * f32::EPSILON as f64) + self.slack
    }

    /// The slot of vertex `p` and triangle `t` if they are closer than the thickness at rest.
    #[cfg(test)]
    pub fn vertex_triangle(&self, p: u32, t: u32) -> Option<usize> {
        slot(&self.vf_start, &self.vf, p, t)
    }

    /// The slot of edges `e` < `f` if they are closer than the thickness at rest.
    #[cfg(test)]
    pub fn edge_edge(&self, e: u32, f: u32) -> Option<usize> {
        slot(&self.ee_start, &self.ee, e, f).map(|k| self.vf.len() + k)
    }

    /// Per vertex–triangle pair of `pairs` its [`Self::vertex_triangle`] slot ([`NO_SLOT`] if
    /// the pair is not rest-close), into `slots`.
    pub fn vertex_triangle_slots(&self, pairs: &[[u32; 2]], slots: &mut Vec<u32>) {
        slots_of(&self.vf_start, &self.vf, 0, pairs, slots);
    }

    /// Per edge–edge pair of `pairs` its [`Self::edge_edge`] slot ([`NO_SLOT`] if not
    /// rest-close), into `slots`.
    pub fn edge_edge_slots(&self, pairs: &[[u32; 2]], slots: &mut Vec<u32>) {
        slots_of(&self.ee_start, &self.ee, self.vf.len(), pairs, slots);
    }

    /// A lower bound (m) of the distance of the pair in `slot` with vertices `idx` (the first
    /// `A` one primitive's) at the positions of the last [`Self::advance`]: d − m − M, d the
    /// distance last computed in this epoch, m and M the pair's largest relative displacement
    /// since the anchor then and now (the relative displacement between then and now is at most
    /// m + M), while M is at most [`LOOSEST`] of d − m; else `exact()`, after which d − M is
    /// kept.
    #[inline]
    pub fn distance_bound<const A: usize>(
        &self,
        slot: usize,
        idx: [u32; 4],
        exact: impl FnOnce() -> f64,
    ) -> f64 {
        let base = f64::from_bits(self.base[slot].load(Relaxed));
        let moved = self.relative_motion::<A>(idx);
        if moved <= LOOSEST * base {
            return base - moved;
        }
        let d = exact();
        self.base[slot].store((d - moved).to_bits(), Relaxed);
        let thread = rayon::current_thread_index().unwrap_or(0) % COUNTERS;
        self.refreshed[thread].0.fetch_add(1, Relaxed);
        d
    }
}

/// [`RestClose::vertex_triangle_slots`]' value for a pair that is not listed.
pub(super) const NO_SLOT: u32 = u32::MAX;

/// Pairs per parallel task of [`slots_of`].
const SLOTS_CHUNK: usize = 4096;

/// Per pair `[r, c]` of `pairs`, `offset` + the index into `items` of column `c` of row `r`, or
/// [`NO_SLOT`]: what [`slot`] gives, found by walking each row's ascending columns beside the
/// pairs, which the broad phase lists in ascending order (a pair out of that order restarts its
/// row's walk, so any order gives the same slots). Lists not built yet give [`NO_SLOT`] for every
/// pair. On the 256² sheet, whose every vertex has dozens of rest-close pairs, a binary search per
/// candidate took about a tenth of the proximity pass (1.33 → 1.18 s, BENCHMARKS.md).
fn slots_of(start: &[u32], items: &[u32], offset: usize, pairs: &[[u32; 2]], slots: &mut Vec<u32>) {
    slots.clear();
    slots.resize(pairs.len(), NO_SLOT);
    if start.is_empty() {
        return;
    }
    let walk = |(pairs, slots): (&[[u32; 2]], &mut [u32])| {
        let (mut row, mut k, mut end, mut last) = (u32::MAX, 0usize, 0usize, 0u32);
        for (&[r, c], out) in pairs.iter().zip(slots) {
            if r != row || c < last {
                (row, k, end) = (
                    r,
                    start[r as usize] as usize,
                    start[r as usize + 1] as usize,
                );
            }
            last = c;
            while k < end && items[k] < c {
                k += 1;
            }
            if k < end && items[k] == c {
                *out = (offset + k) as u32;
            }
        }
    };
    if parallel(pairs.len()) {
        pairs
            .par_chunks(SLOTS_CHUNK)
            .zip(slots.par_chunks_mut(SLOTS_CHUNK))
            .for_each(walk);
    } else {
        walk((pairs, &mut slots[..]));
    }
}

/// Index into `items` of column `c` of row `r`, if listed.
#[cfg(test)]
fn slot(start: &[u32], items: &[u32], r: u32, c: u32) -> Option<usize> {
    let (first, end) = (start[r as usize] as usize, start[r as usize + 1] as usize);
    items[first..end].binary_search(&c).ok().map(|k| first + k)
}

/// Compressed rows of `rows` entries from pairs sorted by row, then column.
fn compressed_rows<'a>(
    rows: usize,
    pairs: impl Iterator<Item = &'a [u32; 2]>,
) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; rows + 1];
    let mut items = Vec::new();
    for &[r, c] in pairs {
        start[r as usize + 1] += 1;
        items.push(c);
    }
    for i in 0..rows {
        start[i + 1] += start[i];
    }
    (start, items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::self_collision::narrow::rest_distance_below;
    use crate::self_collision::proximity::{point_triangle_distance, segment_segment_distance};
    use crate::self_collision::topology::unique_edges;

    /// A strip of 12 columns of 4 mm and two rows of 60 mm (thin triangles, like the skirt), 5 mm
    /// thick: neighbouring columns are closer than the thickness at rest, farther ones not.
    struct Strip {
        rest: Vec<Vec3>,
        triangles: Vec<[u32; 3]>,
        edges: Vec<[u32; 2]>,
        layer: Vec<u32>,
        thick: Vec<f32>,
    }

    fn strip() -> Strip {
        let cols = 12u32;
        let rest: Vec<Vec3> = (0..3)
            .flat_map(|r| (0..cols).map(move |c| Vec3::new(0.004 * c as f32, 0.06 * r as f32, 0.0)))
            .collect();
        let mut triangles = Vec::new();
        for r in 0..2 {
            for c in 0..cols - 1 {
                let (a, b) = (r * cols + c, r * cols + c + 1);
                let (d, e) = (a + cols, b + cols);
                triangles.push([a, b, e]);
                triangles.push([a, e, d]);
            }
        }
        let edges = unique_edges(&triangles);
        let n = rest.len();
        Strip {
            rest,
            triangles,
            edges,
            layer: vec![0; n],
            thick: vec![0.005; n],
        }
    }

    fn built(s: &Strip) -> RestClose {
        let mesh = Mesh {
            triangles: &s.triangles,
            edges: &s.edges,
            layer: &s.layer,
            layer_self_collide: &[true],
        };
        let mut rc = RestClose::default();
        let mut broad = BroadPhase::new(s.rest.len(), &s.triangles, &s.edges);
        rc.build(&mut broad, &mesh, &s.rest, &s.thick);
        rc
    }

    #[test]
    fn lists_exactly_the_pairs_closer_than_the_thickness_at_rest() {
        let s = strip();
        let rc = built(&s);
        assert!(rc.holds_for(&s.thick));
        assert!(!rc.holds_for(&vec![0.004; s.rest.len()]));
        let close = |a: &[u32], b: &[u32]| rest_distance_below(&s.rest, &s.layer, &s.thick, a, b);
        let mut listed = 0;
        for p in 0..s.rest.len() as u32 {
            for (t, tri) in s.triangles.iter().enumerate() {
                if !tri.contains(&p) {
                    let want = close(&[p], tri);
                    let got = rc.vertex_triangle(p, t as u32).is_some();
                    assert_eq!(got, want, "vertex {p}, triangle {t}");
                    listed += want as usize;
                }
            }
        }
        for (e, a) in s.edges.iter().enumerate() {
            for (f, b) in s.edges.iter().enumerate().skip(e + 1) {
                if !a.iter().any(|v| b.contains(v)) {
                    let want = close(a, b);
                    let got = rc.edge_edge(e as u32, f as u32).is_some();
                    assert_eq!(got, want, "edges {e}, {f}");
                    listed += want as usize;
                }
            }
        }
        assert!(listed > 4 * s.rest.len(), "only {listed} rest-close pairs");
    }

    /// The slots found by walking the rows beside a list of pairs are those of a lookup per
    /// pair, for the broad phase's sorted lists, for shuffled ones and for lists with pairs
    /// that are not rest-close, listed twice or out of the mesh's range of columns.
    #[test]
    fn slots_of_pair_lists_match_the_lookup_per_pair() {
        let s = strip();
        let rc = built(&s);
        let mut vf: Vec<[u32; 2]> = (0..s.rest.len() as u32)
            .flat_map(|p| (0..s.triangles.len() as u32).map(move |t| [p, t]))
            .filter(|&[p, t]| !s.triangles[t as usize].contains(&p))
            .collect();
        let ne = s.edges.len() as u32;
        let mut ee: Vec<[u32; 2]> = (0..ne)
            .flat_map(|e| (e + 1..ne).map(move |f| [e, f]))
            .collect();
        let mut slots = Vec::new();
        let check = |vf: &[[u32; 2]], ee: &[[u32; 2]], slots: &mut Vec<u32>| {
            rc.vertex_triangle_slots(vf, slots);
            let want: Vec<u32> = vf
                .iter()
                .map(|&[p, t]| rc.vertex_triangle(p, t).map_or(NO_SLOT, |k| k as u32))
                .collect();
            assert_eq!(*slots, want);
            assert!(want.iter().filter(|&&k| k != NO_SLOT).count() > s.rest.len());
            rc.edge_edge_slots(ee, slots);
            let want: Vec<u32> = ee
                .iter()
                .map(|&[e, f]| rc.edge_edge(e, f).map_or(NO_SLOT, |k| k as u32))
                .collect();
            assert_eq!(*slots, want);
            assert!(want.iter().filter(|&&k| k != NO_SLOT).count() > s.rest.len());
        };
        check(&vf, &ee, &mut slots);
        // Reversed within each row, every other pair twice: each out-of-order pair restarts.
        let scramble = |v: &mut Vec<[u32; 2]>| {
            v.reverse();
            v.sort_by_key(|p| p[0]);
            let twice: Vec<[u32; 2]> = v.iter().step_by(2).copied().collect();
            v.extend(twice);
        };
        scramble(&mut vf);
        scramble(&mut ee);
        check(&vf, &ee, &mut slots);
    }

    /// A strip carried along a curve and turned slowly about an axis 0.15 m away (as a skirt
    /// turns with the hips) keeps most of its bounds: only the pairs' relative motion counts,
    /// θ times their extent, not each vertex's θ times 0.15 m.
    #[test]
    fn a_strip_carried_and_turned_keeps_most_bounds() {
        let s = strip();
        let rc = &mut built(&s);
        let (mut checked, mut computed) = (0u32, 0u32);
        for call in 0..200 {
            let t = call as f32 * 0.01;
            let (sin, cos) = (0.05 * t).sin_cos();
            let x: Vec<Vec3> = s
                .rest
                .iter()
                .map(|&p| {
                    let q = p + Vec3::new(0.0, 0.0, 0.15);
                    let turned = Vec3::new(cos * q.x - sin * q.z, q.y, sin * q.x + cos * q.z);
                    turned + Vec3::new(1.5 * t, -0.3 * t * t, (3.0 * t).sin() * 0.2)
                })
                .collect();
            rc.advance(&x);
            let g = |i: u32| x[i as usize].as_dvec3();
            for (e, a) in s.edges.iter().enumerate() {
                for (f, b) in s.edges.iter().enumerate().skip(e + 1) {
                    if let Some(slot) = rc.edge_edge(e as u32, f as u32) {
                        let exact = segment_segment_distance(g(a[0]), g(a[1]), g(b[0]), g(b[1]));
                        let mut fresh = false;
                        let bound = rc.distance_bound::<2>(slot, [a[0], a[1], b[0], b[1]], || {
                            fresh = true;
                            exact
                        });
                        assert!(
                            bound <= exact,
                            "call {call}: edges {e}, {f}: {bound} > {exact}"
                        );
                        checked += 1;
                        computed += fresh as u32;
                    }
                }
            }
        }
        // Each vertex moves 0.075 mm a call relative to the strip's mean motion, which wore the
        // bounds of the path-length rule (four vertices' sum against a quarter of 2–4 mm) out
        // every few calls; the pairs' relative displacement grows 0.03 mm a call at most.
        assert!(10 * computed < checked, "{computed} of {checked} computed");
    }

    /// Over 200 calls of a strip carried away, turned, squeezed, bent and wrinkled, every pair's
    /// bound stays at or below its distance, and most are cached ones.
    #[test]
    fn distance_bounds_hold_over_carried_turning_and_wrinkling_motion() {
        let s = strip();
        let rc = &mut built(&s);
        let (mut checked, mut cached) = (0, 0);
        for call in 0..200 {
            let t = call as f32 * 0.01;
            let x: Vec<Vec3> = s
                .rest
                .iter()
                .map(|&p| {
                    let bend = 0.02 * (p.x * 40.0 + t * 3.0).sin() * (t * 0.5).sin();
                    let wrinkle = if call % 7 == 0 {
                        0.0005 * (p.x * 900.0).cos()
                    } else {
                        0.0
                    };
                    // Columns pushed together by up to a fifth, and apart again.
                    let squeeze = 1.0 - 0.2 * (t * 2.0).sin().abs();
                    let local = Vec3::new(p.x * squeeze, p.y, bend + wrinkle);
                    let (sin, cos) = (0.3 * t).sin_cos();
                    let turned = Vec3::new(
                        cos * local.x - sin * local.z,
                        local.y,
                        sin * local.x + cos * local.z,
                    );
                    turned + Vec3::new(2.0 * t, -0.5 * t * t, 0.1 * t)
                })
                .collect();
            rc.advance(&x);
            let g = |i: u32| x[i as usize].as_dvec3();
            for p in 0..x.len() as u32 {
                for (t, tri) in s.triangles.iter().enumerate() {
                    if let Some(slot) = rc.vertex_triangle(p, t as u32) {
                        let exact = point_triangle_distance(g(p), g(tri[0]), g(tri[1]), g(tri[2]));
                        let mut computed = false;
                        let bound =
                            rc.distance_bound::<1>(slot, [p, tri[0], tri[1], tri[2]], || {
                                computed = true;
                                exact
                            });
                        assert!(
                            bound <= exact,
                            "call {call}: vertex {p}, triangle {t}: {bound} > {exact}"
                        );
                        checked += 1;
                        cached += !computed as u32;
                    }
                }
            }
            for (e, a) in s.edges.iter().enumerate() {
                for (f, b) in s.edges.iter().enumerate().skip(e + 1) {
                    if let Some(slot) = rc.edge_edge(e as u32, f as u32) {
                        let exact = segment_segment_distance(g(a[0]), g(a[1]), g(b[0]), g(b[1]));
                        let mut computed = false;
                        let bound = rc.distance_bound::<2>(slot, [a[0], a[1], b[0], b[1]], || {
                            computed = true;
                            exact
                        });
                        assert!(
                            bound <= exact,
                            "call {call}: edges {e}, {f}: {bound} > {exact}"
                        );
                        checked += 1;
                        cached += !computed as u32;
                    }
                }
            }
        }
        assert!(2 * cached > checked, "{cached} of {checked} bounds cached");
    }
}
