//! Triangle pairs of neighbouring clusters, listed once from the topology. Two clusters sharing a
//! vertex always overlap, and on smooth cloth they are nearly all of the overlapping cluster pairs
//! (on the dress-walk sample about 28,000 of 32,000 per build), yet their triangles that share no
//! vertex rarely overlap (one in ten). So the self-traversal of the hierarchy skips cluster pairs
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
            // same[i]: which corners of b equal corner i of a.
            let mut same = [0u8; 4];
            for (i, u) in a.verts.iter().enumerate() {
                for (j, v) in b.verts.iter().enumerate() {
                    same[i] |= ((u == v) as u8) << j;
                }
            }
            for (s, ms) in a.triangles().zip(a.masks) {
                let mut touched = 0u8;
                for (i, &row) in same.iter().enumerate() {
                    if ms >> i & 1 == 1 {
                        touched |= row;
                    }
                }
                for (t, mt) in b.triangles().zip(b.masks) {
                    if touched & mt == 0 {
                        out.push([s, t]);
                    }
                }
            }
        }
    }
    out
}
