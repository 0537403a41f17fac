//! Welding split vertices back into one cloth, with maps between source order (the cache's
//! order) and simulation order.
//!
//! glTF exporters split a vertex wherever its UV or normal differs between faces (a UV seam is
//! not a cut in the fabric); welding merges vertices whose positions lie within `epsilon`.
//! Simulation vertices are numbered in order of first use by a source vertex, so the result is
//! deterministic. Source vertices no face uses get no simulation vertex.

use std::collections::HashMap;

use glam::{Vec2, Vec3};

use crate::source_mesh::SourceMesh;

/// Marks a source vertex that has no simulation vertex (no face uses it).
pub const NO_VERTEX: u32 = u32::MAX;

/// Simulation topology and the maps back to source order.
#[derive(Debug, Clone, PartialEq)]
pub struct Welded {
    /// For each source vertex: its simulation vertex, or [`NO_VERTEX`].
    pub source_to_sim: Vec<u32>,
    /// For each simulation vertex: the first source vertex welded into it.
    pub sim_to_source: Vec<u32>,
    /// Triangles in simulation indices (triangles that collapse under welding are dropped).
    pub triangles: Vec<[u32; 3]>,
    /// Corner UVs of the kept triangles.
    pub tri_uvs: Option<Vec<[Vec2; 3]>>,
}

/// Welds `mesh`: with `epsilon = Some(e)` (metres) vertices closer than `e` merge; with `None`
/// only unused vertices are dropped (OBJ: its vertices already are the cloth's vertices).
pub fn weld(mesh: &SourceMesh, epsilon: Option<f32>) -> Welded {
    let n = mesh.positions.len();
    let mut used = vec![false; n];
    for t in &mesh.triangles {
        for &i in t {
            used[i as usize] = true;
        }
    }
    let mut source_to_sim = vec![NO_VERTEX; n];
    let mut sim_to_source = Vec::new();
    match epsilon {
        None => {
            for i in 0..n {
                if used[i] {
                    source_to_sim[i] = sim_to_source.len() as u32;
                    sim_to_source.push(i as u32);
                }
            }
        }
        Some(eps) => {
            let eps = eps.max(f32::MIN_POSITIVE);
            let cell = |p: Vec3| -> [i64; 3] {
                let c = (p / eps).floor();
                [c.x as i64, c.y as i64, c.z as i64]
            };
            let mut grid: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
            for i in 0..n {
                if !used[i] {
                    continue;
                }
                let p = mesh.positions[i];
                let c = cell(p);
                let mut found = None;
                'search: for dx in -1..=1 {
                    for dy in -1..=1 {
                        for dz in -1..=1 {
                            if let Some(list) = grid.get(&[c[0] + dx, c[1] + dy, c[2] + dz]) {
                                for &s in list {
                                    if mesh.positions[sim_to_source[s as usize] as usize]
                                        .distance(p)
                                        <= eps
                                    {
                                        found = Some(s);
                                        break 'search;
                                    }
                                }
                            }
                        }
                    }
                }
                let s = found.unwrap_or_else(|| {
                    let s = sim_to_source.len() as u32;
                    sim_to_source.push(i as u32);
                    grid.entry(c).or_default().push(s);
                    s
                });
                source_to_sim[i] = s;
            }
        }
    }
    let mut triangles = Vec::with_capacity(mesh.triangles.len());
    let mut tri_uvs = mesh
        .tri_uvs
        .as_ref()
        .map(|_| Vec::with_capacity(mesh.triangles.len()));
    for (k, t) in mesh.triangles.iter().enumerate() {
        let s = t.map(|i| source_to_sim[i as usize]);
        if s[0] == s[1] || s[1] == s[2] || s[0] == s[2] {
            continue;
        }
        triangles.push(s);
        if let (Some(out), Some(uv)) = (&mut tri_uvs, &mesh.tri_uvs) {
            out.push(uv[k]);
        }
    }
    Welded {
        source_to_sim,
        sim_to_source,
        triangles,
        tri_uvs,
    }
}

/// A welding distance for a mesh: 1e-6 of its bounding-box diagonal, at least 1e-7 m.
pub fn default_epsilon(positions: &[Vec3]) -> f32 {
    let (lo, hi) = positions.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    let diag = if positions.is_empty() {
        0.0
    } else {
        lo.distance(hi)
    };
    (diag * 1e-6).max(1e-7)
}
