//! Feature pairs of neighbouring triangles, listed once from the topology. On smooth cloth most
//! triangle pairs whose boxes overlap share a vertex (about 70 % on the benchmark fold), yet they
//! yield few candidates: most of their vertex–triangle and edge–edge pairs share a vertex too, and
//! the rest are usually apart along some 18-DOP axis. So the cluster expansion of the broad phase
//! skips triangle pairs that share a vertex, and their remaining feature pairs — the ones the representative-triangle
//! expansion of [`super::broad_phase`] would produce from them (Curtis, Tamstorf & Manocha 2008) —
//! are kept here as a flat list whose 18-DOPs are tested directly every build. The candidates are
//! the same as if the triangle pairs had been expanded, and no traversal of the hierarchy is needed
//! for them.

use super::broad_phase::Features;
use super::topology::VertexTriangles;

/// Vertex–triangle and edge–edge pairs of triangles that share at least one vertex, excluding
/// pairs that share a vertex themselves. `vf`: [vertex, triangle]; `ee`: [edge slot, edge slot],
/// indices into the feature order of [`Features`], which is also the order of the per-build edge
/// bounds.
#[derive(Debug, Default)]
pub struct AdjacentPairs {
    pub vf: Vec<[u32; 2]>,
    pub ee: Vec<[u32; 2]>,
}

impl AdjacentPairs {
    /// Lists the pairs of every two distinct triangles sharing a vertex. `n`: vertex count.
    pub fn new(n: usize, triangles: &[[u32; 3]], edges: &[[u32; 2]], f: &Features) -> Self {
        let around = VertexTriangles::new(n, triangles);
        let mut out = Self::default();
        for (a, ta) in triangles.iter().enumerate() {
            let a = a as u32;
            for (k, &v) in ta.iter().enumerate() {
                for &b in around.of(v) {
                    let tb = &triangles[b as usize];
                    // Each unordered pair once: b > a, found through their first shared corner of a.
                    if b <= a || ta[..k].iter().any(|u| tb.contains(u)) {
                        continue;
                    }
                    out.push_pair(a, b, triangles, edges, f);
                }
            }
        }
        out
    }

    /// The feature pairs of triangles `a` and `b`, as [`super::broad_phase`] expands a pair.
    fn push_pair(
        &mut self,
        a: u32,
        b: u32,
        triangles: &[[u32; 3]],
        edges: &[[u32; 2]],
        f: &Features,
    ) {
        for (p, t) in [(a, b), (b, a)] {
            for k in f.vert_range(p) {
                if !triangles[t as usize].contains(&f.verts[k]) {
                    self.vf.push([f.verts[k], t]);
                }
            }
        }
        for i in f.edge_range(a) {
            let ea = edges[f.edges[i] as usize];
            for j in f.edge_range(b) {
                let eb = edges[f.edges[j] as usize];
                if !(eb.contains(&ea[0]) || eb.contains(&ea[1])) {
                    self.ee.push([i as u32, j as u32]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::self_collision::topology::unique_edges;

    #[test]
    fn lists_the_feature_pairs_of_neighbours_that_share_no_vertex() {
        // A fan of three triangles around vertex 0, and a far triangle sharing nothing. Owners:
        // triangle 0 owns vertices 0, 1, 2 and edges 0–1, 0–2, 1–2; triangle 1 owns vertex 3 and
        // edges 0–3, 2–3; triangle 2 owns vertex 4 and edges 0–4, 3–4.
        let tris = [[0, 1, 2], [0, 2, 3], [0, 3, 4], [5, 6, 7]];
        let edges = unique_edges(&tris);
        let f = Features::new(8, &tris, &edges);
        let adj = AdjacentPairs::new(8, &tris, &edges, &f);
        let mut vf = adj.vf.clone();
        vf.sort_unstable();
        assert_eq!(vf, [[1, 1], [1, 2], [2, 2], [3, 0], [4, 0], [4, 1]]);
        let mut ee: Vec<[[u32; 2]; 2]> = adj
            .ee
            .iter()
            .map(|&[i, j]| {
                let (a, b) = (
                    edges[f.edges[i as usize] as usize],
                    edges[f.edges[j as usize] as usize],
                );
                [a.min(b), a.max(b)]
            })
            .collect();
        ee.sort_unstable();
        let want = [
            [[0, 1], [2, 3]],
            [[0, 1], [3, 4]],
            [[0, 2], [3, 4]],
            [[0, 3], [1, 2]],
            [[0, 4], [1, 2]],
            [[0, 4], [2, 3]],
            [[1, 2], [3, 4]],
        ];
        assert_eq!(ee, want);
    }
}
