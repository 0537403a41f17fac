//! The garment mesh as its file has it: vertices in source order (the cache's order), polygons,
//! triangles, optional per-corner UVs.

use glam::{Vec2, Vec3};

/// A mesh in source vertex order, in the file's own coordinates.
#[derive(Debug, Clone, Default)]
pub struct SourceMesh {
    /// Positions in source order (OBJ `v` order, or glTF vertex order of the chosen primitives).
    pub positions: Vec<Vec3>,
    /// Polygons as in the file (source indices), used to write OBJ sequences.
    pub faces: Vec<Vec<u32>>,
    /// Triangles (source indices): quads and n-gons triangulated by ear clipping.
    pub triangles: Vec<[u32; 3]>,
    /// Per-triangle corner UVs, if the file has UVs for every face.
    pub tri_uvs: Option<Vec<[Vec2; 3]>>,
}

/// Triangulates a planar-ish polygon given its corner positions, returning corner-index triples.
///
/// Ear clipping in the polygon's Newell-normal orientation, trying ears from corner 1 onwards, so a
/// convex polygon gives the fan (0, k, k+1) from its first corner and a concave one (an L-shaped
/// n-gon) gets no flipped or overlapping triangles. If no ear is found (degenerate polygons) the
/// rest is fanned.
pub(crate) fn triangulate(corners: &[Vec3]) -> Vec<[usize; 3]> {
    let n = corners.len();
    if n < 3 {
        return Vec::new();
    }
    let mut normal = Vec3::ZERO;
    for i in 0..n {
        let (p, q) = (corners[i], corners[(i + 1) % n]);
        normal += Vec3::new(
            (p.y - q.y) * (p.z + q.z),
            (p.z - q.z) * (p.x + q.x),
            (p.x - q.x) * (p.y + q.y),
        );
    }
    let mut idx: Vec<usize> = (0..n).collect();
    let mut out = Vec::with_capacity(n - 2);
    let side =
        |a: usize, b: usize, p: Vec3| (corners[b] - corners[a]).cross(p - corners[a]).dot(normal);
    while idx.len() > 3 {
        let m = idx.len();
        let ear = (1..=m).map(|k| k % m).find(|&k| {
            let (a, b, c) = (idx[(k + m - 1) % m], idx[k], idx[(k + 1) % m]);
            if side(a, b, corners[c]) <= 0.0 {
                return false; // reflex or degenerate corner
            }
            idx.iter().all(|&o| {
                o == a
                    || o == b
                    || o == c
                    || side(a, b, corners[o]) < 0.0
                    || side(b, c, corners[o]) < 0.0
                    || side(c, a, corners[o]) < 0.0
            })
        });
        match ear {
            Some(k) => {
                out.push([idx[(k + m - 1) % m], idx[k], idx[(k + 1) % m]]);
                idx.remove(k);
            }
            None => break,
        }
    }
    for k in 1..idx.len() - 1 {
        out.push([idx[0], idx[k], idx[k + 1]]);
    }
    out
}
