//! Garment meshes for the samples: quad grids split into triangles, written as Wavefront OBJ.

use std::fmt::Write;

/// A triangle mesh with optional per-vertex UVs (metres along the cloth for sheets).
#[derive(Debug, Clone)]
pub struct Mesh {
    pub positions: Vec<[f32; 3]>,
    pub uvs: Option<Vec<[f32; 2]>>,
    pub triangles: Vec<[u32; 3]>,
}

impl Mesh {
    /// A (nu+1) x (nv+1) vertex grid, vertex (i, j) at index j*(nu+1)+i placed at `place(i/nu, j/nv)`.
    /// Quads are split along alternating diagonals so the sheet has no preferred shear direction.
    /// `uv_size` (metres) gives the UVs `(s*width, t*height)`; None: no UVs.
    pub fn grid(
        nu: u32,
        nv: u32,
        uv_size: Option<[f32; 2]>,
        place: impl Fn(f32, f32) -> [f32; 3],
    ) -> Mesh {
        let mut positions = Vec::new();
        let mut uvs = Vec::new();
        for j in 0..=nv {
            for i in 0..=nu {
                let (s, t) = (i as f32 / nu as f32, j as f32 / nv as f32);
                positions.push(place(s, t));
                if let Some([w, h]) = uv_size {
                    uvs.push([s * w, t * h]);
                }
            }
        }
        let idx = |i: u32, j: u32| j * (nu + 1) + i;
        let mut triangles = Vec::new();
        for j in 0..nv {
            for i in 0..nu {
                let quad = [idx(i, j), idx(i + 1, j), idx(i + 1, j + 1), idx(i, j + 1)];
                split_quad(quad, (i + j) % 2 == 0, &mut triangles);
            }
        }
        Mesh {
            positions,
            uvs: uv_size.map(|_| uvs),
            triangles,
        }
    }

    /// An open tube: `around` vertices per ring (closed, no seam duplicates), `rings` rings;
    /// vertex (k, r) at index r*around+k placed at `place(k/around, r/(rings-1))`.
    pub fn tube(around: u32, rings: u32, place: impl Fn(f32, f32) -> [f32; 3]) -> Mesh {
        let mut positions = Vec::new();
        for r in 0..rings {
            for k in 0..around {
                positions.push(place(
                    k as f32 / around as f32,
                    r as f32 / (rings - 1) as f32,
                ));
            }
        }
        let idx = |k: u32, r: u32| r * around + (k % around);
        let mut triangles = Vec::new();
        for r in 0..rings - 1 {
            for k in 0..around {
                let quad = [idx(k, r), idx(k + 1, r), idx(k + 1, r + 1), idx(k, r + 1)];
                split_quad(quad, (k + r) % 2 == 0, &mut triangles);
            }
        }
        Mesh {
            positions,
            uvs: None,
            triangles,
        }
    }

    /// Wavefront OBJ text (1-based indices; `vt` when the mesh has UVs), preceded by `# header` lines.
    pub fn to_obj(&self, header: &str) -> String {
        let mut s = String::new();
        for line in header.lines() {
            let _ = writeln!(s, "# {line}");
        }
        for p in &self.positions {
            let _ = writeln!(s, "v {:.6} {:.6} {:.6}", p[0], p[1], p[2]);
        }
        if let Some(uvs) = &self.uvs {
            for t in uvs {
                let _ = writeln!(s, "vt {:.6} {:.6}", t[0], t[1]);
            }
        }
        for t in &self.triangles {
            let [a, b, c] = t.map(|i| i + 1);
            if self.uvs.is_some() {
                let _ = writeln!(s, "f {a}/{a} {b}/{b} {c}/{c}");
            } else {
                let _ = writeln!(s, "f {a} {b} {c}");
            }
        }
        s
    }
}

/// TOML array text of vertex indices, e.g. `[0, 1, 2]`.
pub fn index_list(indices: impl IntoIterator<Item = u32>) -> String {
    let v: Vec<String> = indices.into_iter().map(|i| i.to_string()).collect();
    format!("[{}]", v.join(", "))
}

/// Splits quad `[a, b, c, d]` along a–c when `even`, else along b–d (alternating diagonals keep a
/// grid free of a preferred shear direction).
fn split_quad([a, b, c, d]: [u32; 4], even: bool, triangles: &mut Vec<[u32; 3]>) {
    if even {
        triangles.push([a, b, c]);
        triangles.push([a, c, d]);
    } else {
        triangles.push([a, b, d]);
        triangles.push([b, c, d]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_counts_and_orientation() {
        let m = Mesh::grid(3, 2, Some([1.0, 1.0]), |s, t| [s, 0.0, t]);
        assert_eq!(m.positions.len(), 12);
        assert_eq!(m.triangles.len(), 12);
        // Every triangle of a flat grid in the xz-plane has the same winding (normal along -y).
        for t in &m.triangles {
            let [a, b, c] = t.map(|i| m.positions[i as usize]);
            let e1 = [b[0] - a[0], b[2] - a[2]];
            let e2 = [c[0] - a[0], c[2] - a[2]];
            assert!(e1[0] * e2[1] - e1[1] * e2[0] > 0.0);
        }
    }

    #[test]
    fn tube_closes_without_seam_vertices() {
        let m = Mesh::tube(8, 3, |s, t| {
            let a = s * std::f32::consts::TAU;
            [a.cos(), t, a.sin()]
        });
        assert_eq!(m.positions.len(), 24);
        assert_eq!(m.triangles.len(), 2 * 8 * 2);
        assert!(m.triangles.iter().flatten().all(|&i| i < 24));
    }
}
