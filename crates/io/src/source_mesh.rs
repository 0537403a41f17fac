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
    /// Triangles (source indices): quads and n-gons fan-triangulated from their first corner.
    pub triangles: Vec<[u32; 3]>,
    /// Per-triangle corner UVs, if the file has UVs for every face.
    pub tri_uvs: Option<Vec<[Vec2; 3]>>,
}

/// Fan triangulation of a polygon given by corner positions in the list `corners`
/// (indices into the polygon): (0, k, k+1) for k = 1..n-2.
pub(crate) fn fan(n: usize) -> impl Iterator<Item = [usize; 3]> {
    (1..n.saturating_sub(1)).map(|k| [0, k, k + 1])
}
