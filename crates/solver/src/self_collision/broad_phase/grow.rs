//! Incremental update of the broad phase when a few vertices leave their boxes.
//!
//! The continuous-collision candidates must cover every vertex's sweep x0 → x1 (BFA02 §6.2);
//! when an impulse, or the solve itself, moves x1 of a vertex out of its swept 18-DOP, the
//! candidates no longer do. On the dress-walk sample the candidates were rebuilt 276 times in 455
//! substep tries (after the solve in 161 tries, after impulses 115 times), more than a third of
//! the broad phase, yet a median of 8 of the 10,212 vertices had left their boxes. So instead of
//! refitting and traversing the whole hierarchy, [`BroadPhase::grow`] widens only the escaped
//! vertices' 18-DOPs to also hold their new sweep, refreshes the bounds of the triangles, edges
//! and clusters around them (and of the clusters' ancestors in the hierarchy), and finds the new
//! pairs of just those features:
//!
//! * pairs of triangles sharing no vertex: each grown cluster's 18-DOP is queried against the
//!   refit hierarchy (whose bounds are all current); the overlapping cluster pairs, neighbours
//!   included, are expanded through the representative triangles (Curtis, Tamstorf & Manocha
//!   2008);
//! * pairs of triangles sharing a vertex: every triangle around an escaped vertex with each of its
//!   neighbours, as [`super::AdjacentPairs`] lists them.
//!
//! A pair none of whose features touches an escaped vertex keeps its bounds, so it is listed
//! before and after alike; every pair that does touch one has a grown triangle on at least one
//! side, so it is found above. The merged list is therefore exactly what a full build over the
//! grown bounds would give, in the same canonical order (the tests compare it with brute force).
//! Because the bounds only grow, the list stays a superset of what continuous collision needs,
//! and its contacts, tested pair by pair in canonical order, are the same as after a rebuild.

use super::{BroadPhase, Expand, Mesh, Task};
use crate::self_collision::dop18::Dop18;
use glam::Vec3;

/// Above this fraction of the clusters with grown bounds since the last build, a full (parallel)
/// build is used instead: the queries and the expansion here are serial, and the grown lists
/// only get longer. 1/32 (about 300 clusters on the dress sample, against a median of 8 escaped
/// vertices) is a safe guess, not a tuned value (kept from the spatial-hash version, whose
/// box-against-box tests among the grown clusters were quadratic, so that the same builds are
/// chosen and the candidates stay the same).
const MAX_STALE_FRACTION: usize = 32;

impl BroadPhase {
    /// Widens the 18-DOPs of the `escaped` vertices to also hold their sweep x0 → x1 (m) inflated
    /// by `inflate[i]` (m), and adds the candidates that this creates, keeping `vf` and `ee` in
    /// canonical order. Returns false — and leaves the candidates to a full [`Self::build`] — if
    /// there was no build yet or too many clusters have grown since the last one. Serial: it is
    /// meant for a few escaped vertices.
    pub fn grow(
        &mut self,
        mesh: &Mesh,
        x0: &[Vec3],
        x1: &[Vec3],
        inflate: &[f32],
        escaped: &[u32],
    ) -> bool {
        if !self.built || self.clusters.is_empty() {
            return false;
        }
        // Triangles around the escaped vertices, and their clusters.
        let (tris, clusters) = (&mut self.grown_tris, &mut self.grown_clusters);
        tris.clear();
        for &v in escaped {
            tris.extend_from_slice(self.around.of(v));
        }
        tris.sort_unstable();
        tris.dedup();
        clusters.clear();
        clusters.extend(tris.iter().map(|&t| self.tri_cluster[t as usize]));
        clusters.sort_unstable();
        clusters.dedup();
        let fresh = clusters
            .iter()
            .filter(|&&c| !self.stale[c as usize])
            .count();
        if (self.stale_list.len() + fresh) * MAX_STALE_FRACTION > self.clusters.len() {
            return false;
        }
        // Grown bounds: vertices, then their triangles, the edges those own, the clusters.
        for &v in escaped {
            let v = v as usize;
            let sweep = Dop18::swept(x0[v], x1[v] - self.shift, inflate[v] + self.pad);
            self.vdop[v] = self.vdop[v].union(&sweep);
        }
        let vdop = &self.vdop;
        for &t in tris.iter() {
            let [i, j, k] = mesh.triangles[t as usize].map(|v| v as usize);
            self.tdop[t as usize] = vdop[i].union(&vdop[j]).union(&vdop[k]);
            for s in self.features.edge_range(t) {
                let [a, b] = self.features.ends[s].map(|v| v as usize);
                self.ebox[s] = vdop[a].box_union(&vdop[b]);
            }
        }
        for &c in clusters.iter() {
            if !self.stale[c as usize] {
                self.stale[c as usize] = true;
                self.stale_list.push(c);
            }
        }
        self.bvh
            .refit_some(clusters, |t| self.tdop[t as usize], &self.fixed.cluster);
        let ex = Expand {
            mesh,
            features: &self.features,
            clusters: &self.clusters,
            fixed: &self.fixed,
            tdop: &self.tdop,
            vdop: &self.vdop,
            ebox: &self.ebox,
        };
        let task = &mut self.grown_pairs;
        task.clear();
        // Through the refit tree (each pair of this call's clusters twice; the merge removes
        // repeats).
        for &a in clusters.iter() {
            self.bvh
                .query(a, &mut self.stack, |b| ex.clusters(a, b, task));
        }
        // Neighbouring triangles (sharing a vertex): each grown triangle with all of its.
        let triangles = mesh.triangles;
        for &a in tris.iter() {
            let ta = &triangles[a as usize];
            for (k, &v) in ta.iter().enumerate() {
                for &b in self.around.of(v) {
                    let tb = &triangles[b as usize];
                    // Each neighbour once: through the first corner of `a` it shares.
                    if b == a || ta[..k].iter().any(|u| tb.contains(u)) {
                        continue;
                    }
                    ex.neighbours(a, b, task);
                }
            }
        }
        merge_sorted(&mut self.vf, &mut task.vf, &mut self.merged);
        merge_sorted(&mut self.ee, &mut task.ee, &mut self.merged);
        true
    }
}

impl Expand<'_> {
    /// Candidates of triangles `a` and `b` that share a vertex (same garment): the features of
    /// each against the other that share no vertex with it, if their 18-DOPs overlap and the
    /// garment collides with itself and the pair is not immovable. The pairs
    /// [`super::BroadPhase::set_fixed`] keeps of those [`super::AdjacentPairs`] lists for them.
    fn neighbours(&self, a: u32, b: u32, buf: &mut Task) {
        let (f, tris, edges) = (self.features, self.mesh.triangles, self.mesh.edges);
        if !self.mesh.self_collides(tris[a as usize][0]) {
            return;
        }
        for (p, t) in [(a, b), (b, a)] {
            let (tri, dt) = (&tris[t as usize], &self.tdop[t as usize]);
            for k in f.vert_range(p) {
                let v = f.verts[k];
                if !tri.contains(&v)
                    && self.vdop[v as usize].overlaps(dt)
                    && !self.fixed.vertex_triangle(v, t)
                {
                    buf.vf.push([v, t]);
                }
            }
        }
        for i in f.edge_range(a) {
            let e = f.edges[i];
            let ea = edges[e as usize];
            for j in f.edge_range(b) {
                let g = f.edges[j];
                let eb = edges[g as usize];
                if !(eb.contains(&ea[0]) || eb.contains(&ea[1]))
                    && self.edges_overlap(i, j)
                    && !self.fixed.edge_edge(e, g)
                {
                    buf.ee.push([e.min(g), e.max(g)]);
                }
            }
        }
    }
}

/// `list` (sorted, no repeats) ∪ `extra` (any order, repeats allowed) into `list`, sorted without
/// repeats. `extra` is sorted in place; `scratch` is reusable.
fn merge_sorted(list: &mut Vec<[u32; 2]>, extra: &mut [[u32; 2]], scratch: &mut Vec<[u32; 2]>) {
    if extra.is_empty() {
        return;
    }
    extra.sort_unstable();
    scratch.clear();
    scratch.reserve(list.len() + extra.len());
    let (mut i, mut j) = (0, 0);
    while i < list.len() || j < extra.len() {
        let next = if j == extra.len() || (i < list.len() && list[i] <= extra[j]) {
            i += 1;
            list[i - 1]
        } else {
            j += 1;
            extra[j - 1]
        };
        if scratch.last() != Some(&next) {
            scratch.push(next);
        }
    }
    std::mem::swap(list, scratch);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{brute_force_dops, crumpled_grids};
    use super::*;

    /// Vertices of both crumpled grids swept 2.7 edge lengths through the other grid, in two
    /// rounds (the second next to the first, whose clusters have grown already): the grown
    /// candidates are exactly those of brute force over the grown 18-DOPs, and hold every pair of
    /// the new motion's bounds (in the frame of the build they grew from).
    #[test]
    fn grown_candidates_equal_brute_force_over_the_grown_boxes() {
        let (x0, x1_start, tris, edges, layer) = crumpled_grids();
        let n = x0.len();
        let inflate = vec![0.002; n];
        let mut bp = BroadPhase::new(n, &tris, &edges);
        // A few immovable vertices, next to moved ones: grown pairs follow the skip rule too.
        let fixed: Vec<bool> = (0..n).map(|i| i % 16 < 3).collect();
        bp.set_fixed(&fixed, &tris, &edges);
        for self_collide in [true, false] {
            let mesh = Mesh {
                triangles: &tris,
                edges: &edges,
                layer: &layer,
                layer_self_collide: &[self_collide, self_collide],
            };
            let mut x1 = x1_start.clone();
            bp.build(&mesh, &x0, &x1, &inflate);
            let built = (bp.vf.len(), bp.ee.len());
            for moved in [[5u32, 40, 300], [41, 301, 511]] {
                for &v in &moved {
                    let dy = if v < 256 { 0.008 } else { -0.008 };
                    x1[v as usize] += Vec3::new(0.02, dy, -0.015);
                }
                let escaped: Vec<u32> = (0..n as u32)
                    .filter(|&i| !bp.contains_with_margin(i as usize, x1[i as usize], 1e-4))
                    .collect();
                assert_eq!(escaped, moved);
                assert!(bp.grow(&mesh, &x0, &x1, &inflate, &escaped));
                for &v in &moved {
                    assert!(bp.contains_with_margin(v as usize, x1[v as usize], 0.0019));
                }
                let (vf, ee) = brute_force_dops(&mesh, &bp.vdop, &fixed);
                assert_eq!(bp.vf, vf, "self-collision {self_collide}");
                assert_eq!(bp.ee, ee, "self-collision {self_collide}");
                // Every pair of the new motion's bounds in the frame of the build.
                let now: Vec<Dop18> = (0..n)
                    .map(|i| Dop18::swept(x0[i], x1[i] - bp.shift, inflate[i] + bp.pad))
                    .collect();
                let (fresh_vf, fresh_ee) = brute_force_dops(&mesh, &now, &fixed);
                assert!(fresh_vf.iter().all(|p| bp.vf.binary_search(p).is_ok()));
                assert!(fresh_ee.iter().all(|p| bp.ee.binary_search(p).is_ok()));
            }
            assert!(bp.vf.len() > built.0 + 40 && bp.ee.len() > built.1 + 40);
            // Every vertex escaped: a build is cheaper, grow declines.
            let all: Vec<u32> = (0..n as u32).collect();
            assert!(!bp.grow(&mesh, &x0, &x1, &inflate, &all));
        }
    }

    #[test]
    fn merge_keeps_order_and_drops_repeats() {
        let mut list = vec![[0, 3], [1, 1], [1, 4], [7, 2]];
        let mut extra = vec![[7, 2], [0, 1], [1, 4], [9, 0], [0, 1], [1, 2]];
        let mut scratch = Vec::new();
        merge_sorted(&mut list, &mut extra, &mut scratch);
        assert_eq!(
            list,
            [[0, 1], [0, 3], [1, 1], [1, 2], [1, 4], [7, 2], [9, 0]]
        );
        merge_sorted(&mut list, &mut [], &mut scratch);
        assert_eq!(list.len(), 7);
    }
}
