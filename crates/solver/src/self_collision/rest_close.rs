//! The pairs of one garment already closer than their thickness at rest, listed once. A mesh finer
//! than its thickness (the thin-triangle skirt: 3.5 mm between its columns, 5 mm thick) has many:
//! every proximity pass finds them again (28 per vertex on that skirt, all of its candidates) and
//! must not push them apart (a flat sheet would inflate itself), which took a second closest-point
//! computation at the rest positions for each. Looked up here instead: per vertex its sorted
//! rest-close triangles, per edge its sorted rest-close edges (compressed rows), built from a
//! broad phase over the rest positions with the proximity pass's own inflation and the same test
//! at rest, so a pair is listed exactly when that test holds (the same contacts, to the bit).

use super::broad_phase::{BroadPhase, Mesh};
use super::narrow::rest_distance_below;
use super::PROXIMITY_INFLATION;
use glam::Vec3;

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
}

impl RestClose {
    /// Are the lists those of the vertex thicknesses `thick` (m)?
    pub fn holds_for(&self, thick: &[f32]) -> bool {
        !self.thick.is_empty() && self.thick == thick
    }

    /// Lists the pairs of `mesh` of one garment whose distance at `rest` (m) is below the mean
    /// thickness of their vertices, `thick` (m per vertex).
    pub fn build(&mut self, mesh: &Mesh, rest: &[Vec3], thick: &[f32]) {
        let n = rest.len();
        let mut broad = BroadPhase::new(n, mesh.triangles, mesh.edges);
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
    }

    /// Is vertex `p` closer than the thickness to triangle `t` at rest?
    #[inline]
    pub fn vertex_triangle(&self, p: u32, t: u32) -> bool {
        row(&self.vf_start, &self.vf, p).binary_search(&t).is_ok()
    }

    /// Are edges `e` < `f` closer than the thickness at rest?
    #[inline]
    pub fn edge_edge(&self, e: u32, f: u32) -> bool {
        row(&self.ee_start, &self.ee, e).binary_search(&f).is_ok()
    }
}

fn row<'a>(start: &[u32], items: &'a [u32], i: u32) -> &'a [u32] {
    let i = i as usize;
    &items[start[i] as usize..start[i + 1] as usize]
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
    use crate::self_collision::topology::unique_edges;

    /// A strip of `cols` columns of 4 mm and two rows of 60 mm (thin triangles, like the skirt):
    /// at 5 mm thickness the pairs of neighbouring columns are rest-close, farther ones not.
    #[test]
    fn lists_exactly_the_pairs_closer_than_the_thickness_at_rest() {
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
        let layer = vec![0u32; rest.len()];
        let mesh = Mesh {
            triangles: &triangles,
            edges: &edges,
            layer: &layer,
            layer_self_collide: &[true],
        };
        let thick = vec![0.005f32; rest.len()];
        let mut rc = RestClose::default();
        rc.build(&mesh, &rest, &thick);
        assert!(rc.holds_for(&thick));
        assert!(!rc.holds_for(&vec![0.004; rest.len()]));
        let mut listed = 0;
        for p in 0..rest.len() as u32 {
            for (t, tri) in triangles.iter().enumerate() {
                if tri.contains(&p) {
                    continue;
                }
                let want = rest_distance_below(&rest, &layer, &thick, &[p], tri);
                assert_eq!(
                    rc.vertex_triangle(p, t as u32),
                    want,
                    "vertex {p}, triangle {t}"
                );
                listed += want as usize;
            }
        }
        for e in 0..edges.len() {
            for f in e + 1..edges.len() {
                let (a, b) = (edges[e], edges[f]);
                if a.iter().any(|v| b.contains(v)) {
                    continue;
                }
                let want = rest_distance_below(&rest, &layer, &thick, &a, &b);
                assert_eq!(rc.edge_edge(e as u32, f as u32), want, "edges {e}, {f}");
                listed += want as usize;
            }
        }
        assert!(listed > 4 * rest.len(), "only {listed} rest-close pairs");
    }
}
