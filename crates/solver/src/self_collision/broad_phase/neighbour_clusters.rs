//! Triangle pairs of neighbouring clusters, listed once from the topology. Two clusters sharing a
//! vertex always overlap, and on smooth cloth they are nearly all of the overlapping cluster pairs
//! (dress-walk sample: 32,410 overlapping cluster pairs per build on the first 12 frames, and over
//! the whole bake 2,458 per build that share no vertex), yet their triangles that share no vertex
//! rarely overlap (2,537 of 25,777 per build on those 12 frames). So the self-traversal of the hierarchy skips cluster pairs
//! that share a vertex, and their triangle pairs that share no vertex — those the cluster
//! expansion ([`super::Expand::clusters`]) would make of them — are kept here as a flat list whose
//! 18-DOPs are tested directly every build, like [`super::AdjacentPairs`] one level down.

use super::Cluster;
use crate::self_collision::topology::VertexTriangles;

/// The triangle pairs `[s, t]` (s in one cluster, t in another sharing a vertex with it, s and t
/// sharing none), each unordered pair once, in the order of the first cluster.
pub(super) fn neighbour_cluster_triangles(
    clusters: &[Cluster],
    tri_cluster: &[u32],
    around: &VertexTriangles,
) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    let mut near: Vec<u32> = Vec::new();
    for (ia, a) in clusters.iter().enumerate() {
        near.clear();
        for &v in &a.verts {
            near.extend(
                around
                    .of(v)
                    .iter()
                    .map(|&t| tri_cluster[t as usize])
                    .filter(|&b| b as usize > ia),
            );
        }
        near.sort_unstable();
        near.dedup();
        for &ib in &near {
            let b = &clusters[ib as usize];
            a.disjoint_pairs(b, a.shared_corners(b), |s, t| out.push([s, t]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{alternating_grid, pair_triangles};
    use super::*;

    /// On a 5×5-vertex grid (quads split along alternating diagonals, so clusters touch along
    /// edges and at corners), the list is every pair of triangles sharing no vertex whose clusters
    /// share one, each once.
    #[test]
    fn lists_the_disjoint_triangles_of_touching_clusters_once() {
        let (x, tris) = alternating_grid(5);
        let clusters = pair_triangles(&tris, &x);
        let mut tri_cluster = vec![0u32; tris.len()];
        for (c, cl) in clusters.iter().enumerate() {
            for t in cl.triangles() {
                tri_cluster[t as usize] = c as u32;
            }
        }
        let around = VertexTriangles::new(x.len(), &tris);
        let mut got: Vec<[u32; 2]> = neighbour_cluster_triangles(&clusters, &tri_cluster, &around)
            .into_iter()
            .map(|[s, t]| [s.min(t), s.max(t)])
            .collect();
        let len = got.len();
        got.sort_unstable();
        got.dedup();
        assert_eq!(got.len(), len, "a pair came out twice");
        let share = |a: &[u32], b: &[u32]| a.iter().any(|v| b.contains(v));
        let mut want = Vec::new();
        for s in 0..tris.len() {
            for t in s + 1..tris.len() {
                let (cs, ct) = (
                    &clusters[tri_cluster[s] as usize],
                    &clusters[tri_cluster[t] as usize],
                );
                if tri_cluster[s] != tri_cluster[t]
                    && share(&cs.verts, &ct.verts)
                    && !share(&tris[s], &tris[t])
                {
                    want.push([s as u32, t as u32]);
                }
            }
        }
        assert!(want.len() > 20, "{}", want.len());
        assert_eq!(got, want);
    }
}
