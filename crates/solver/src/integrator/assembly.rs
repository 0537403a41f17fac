//! Assembly of the backward-Euler system (BW eqs. 15–18 with §5.3's position alteration y):
//!
//!   A = M − h·∂f/∂v − h²·∂f/∂x,   b = h·(f0 + h·∂f/∂x·v0 + ∂f/∂x·y),   Δx = h(v0 + Δv) + y.
//!
//! Linear air damping f_i = −c·A_i·(v_i − v_air) (c in kg/(m²·s), A_i the lumped area) is per vertex:
//! ∂f/∂v = −c·A_i·I adds h·c·A_i·I to the diagonal block and h·f_i to b.
//!
//! Elements (triangles: stretch/shear + aero; hinges: bend) are evaluated in parallel into per-element
//! scratch; each matrix block and each row of b is then gathered in parallel from a list of element
//! sources fixed at construction (no atomics, no scatter races: bit-identical at any thread count).

use crate::constraints::Constraints;
use crate::forces::{aero, bend, strain, stretch_shear, ElementForce, Jacobian, Wind};
use crate::linalg::{BlockMatrix, BlockPattern};
use crate::model::Model;
use glam::{Mat3, Vec3};
use rayon::prelude::*;

/// Compressed lists of element-scratch indices, one list per target (row or block slot).
#[derive(Debug, Clone, Default)]
struct Gather {
    ptr: Vec<u32>,
    src: Vec<u32>,
}

impl Gather {
    /// From (target, source) pairs; sources of a target keep ascending source order.
    fn new(targets: usize, mut pairs: Vec<(u32, u32)>) -> Self {
        pairs.sort_unstable();
        let mut ptr = vec![0u32; targets + 1];
        for &(t, _) in &pairs {
            ptr[t as usize + 1] += 1;
        }
        for t in 0..targets {
            ptr[t + 1] += ptr[t];
        }
        Gather {
            ptr,
            src: pairs.into_iter().map(|(_, s)| s).collect(),
        }
    }

    #[inline]
    fn sources(&self, t: usize) -> &[u32] {
        &self.src[self.ptr[t] as usize..self.ptr[t + 1] as usize]
    }
}

/// Everything the assembly reads that is not in the model.
pub struct StepInputs<'a> {
    pub x0: &'a [Vec3],
    pub v0: &'a [Vec3],
    /// Substep length (s).
    pub h: f32,
    /// m/s².
    pub gravity: Vec3,
    pub wind: Option<&'a Wind>,
    /// Linear air damping coefficient c (kg/(m²·s) = N·s/m³); 0 disables it.
    pub air_damping: f32,
}

/// The system matrix, right-hand side and the reusable element scratch.
#[derive(Debug, Clone)]
pub struct Assembly {
    pub matrix: BlockMatrix,
    pub b: Vec<Vec3>,
    /// Per triangle: stretch strain at x0 (for the adaptive step and reports).
    pub strain: Vec<f32>,
    diag: Gather,
    off: Gather,
    rows: Gather,
    /// h·∂f/∂v + h²·∂f/∂x per element block: 9 per triangle, then 16 per hinge.
    blocks: Vec<Mat3>,
    /// h·f + ∂f/∂x·(h²v0 + h·y) per element vertex: 3 per triangle, then 4 per hinge.
    g: Vec<Vec3>,
}

impl Assembly {
    /// Builds the sparsity pattern (mesh edges plus hinge opposite-vertex pairs) and gather lists.
    pub fn new(model: &Model) -> Self {
        let n = model.vertex_count();
        let mut pairs = model.edges.clone();
        pairs.extend(model.hinges.iter().map(|h| [h[2], h[3]]));
        let pattern = BlockPattern::from_pairs(n, &pairs);
        let nt = model.triangles.len();
        let (mut diag, mut off, mut rows) = (Vec::new(), Vec::new(), Vec::new());
        let mut add = |verts: &[u32], block0: usize, g0: usize| {
            let k = verts.len();
            for a in 0..k {
                rows.push((verts[a], (g0 + a) as u32));
                for b in 0..k {
                    let src = (block0 + a * k + b) as u32;
                    if a == b {
                        diag.push((verts[a], src));
                    } else if let Some(s) = pattern.slot(verts[a], verts[b]) {
                        off.push((s as u32, src));
                    }
                }
            }
        };
        for (t, tri) in model.triangles.iter().enumerate() {
            add(tri, 9 * t, 3 * t);
        }
        for (h, hinge) in model.hinges.iter().enumerate() {
            add(hinge, 9 * nt + 16 * h, 3 * nt + 4 * h);
        }
        let nnz = pattern.col.len();
        let nh = model.hinges.len();
        Assembly {
            matrix: BlockMatrix::new(pattern),
            b: vec![Vec3::ZERO; n],
            strain: vec![0.0; nt],
            diag: Gather::new(n, diag),
            off: Gather::new(nnz, off),
            rows: Gather::new(n, rows),
            blocks: vec![Mat3::ZERO; 9 * nt + 16 * nh],
            g: vec![Vec3::ZERO; 3 * nt + 4 * nh],
        }
    }

    /// Evaluates all forces at (x0, v0) and fills `matrix` and `b`. Returns the largest strain at x0.
    pub fn assemble(&mut self, model: &Model, inp: &StepInputs, cons: &Constraints) -> f32 {
        let nt = model.triangles.len();
        let (h, x0, v0, y) = (inp.h, inp.x0, inp.v0, &cons.y[..]);
        let v_air = inp.wind.map_or(Vec3::ZERO, |w| w.velocity);
        let (tri_blocks, hinge_blocks) = self.blocks.split_at_mut(9 * nt);
        let (tri_g, hinge_g) = self.g.split_at_mut(3 * nt);
        tri_blocks
            .par_chunks_mut(9)
            .zip(tri_g.par_chunks_mut(3))
            .zip(self.strain.par_iter_mut())
            .enumerate()
            .for_each(|(t, ((blk, g), s))| {
                let tri = model.triangles[t];
                let xs = tri.map(|i| x0[i as usize]);
                let vs = tri.map(|i| v0[i as usize]);
                let mat = &model.materials[model.triangle_material[t] as usize];
                let rest = &model.triangle_rest[t];
                let mut ef = stretch_shear(&xs, &vs, rest, mat, Jacobian::Stabilized);
                if let Some(w) = inp.wind {
                    let air = aero(&xs, &vs, w, Jacobian::Stabilized);
                    for a in 0..3 {
                        ef.f[a] += air.f[a];
                        for b in 0..3 {
                            ef.dfdx[a][b] += air.dfdx[a][b];
                            ef.dfdv[a][b] += air.dfdv[a][b];
                        }
                    }
                }
                element_terms(&ef, &tri, v0, y, h, blk, g);
                *s = strain(&xs, rest, mat);
            });
        hinge_blocks
            .par_chunks_mut(16)
            .zip(hinge_g.par_chunks_mut(4))
            .enumerate()
            .for_each(|(k, (blk, g))| {
                let hinge = model.hinges[k];
                let xs = hinge.map(|i| x0[i as usize]);
                let vs = hinge.map(|i| v0[i as usize]);
                let mat = &model.materials[model.hinge_material[k] as usize];
                let ef = bend(&xs, &vs, &model.hinge_rest[k], mat, Jacobian::Stabilized);
                element_terms(&ef, &hinge, v0, y, h, blk, g);
            });
        let (blocks, gs) = (&self.blocks, &self.g);
        let (diag_g, rows_g, off_g) = (&self.diag, &self.rows, &self.off);
        self.matrix
            .diag
            .par_iter_mut()
            .zip(self.b.par_iter_mut())
            .enumerate()
            .for_each(|(i, (d, b))| {
                let m = model.mass[i];
                let mut a = Mat3::from_diagonal(Vec3::splat(m)) + cons.diag[i];
                for &s in diag_g.sources(i) {
                    a -= blocks[s as usize];
                }
                let mut f = h * m * inp.gravity + cons.rhs[i];
                for &s in rows_g.sources(i) {
                    f += gs[s as usize];
                }
                if inp.air_damping > 0.0 {
                    let hca = h * inp.air_damping * model.area[i];
                    a += Mat3::from_diagonal(Vec3::splat(hca));
                    f -= hca * (v0[i] - v_air);
                }
                *d = a;
                *b = f;
            });
        self.matrix
            .off
            .par_iter_mut()
            .enumerate()
            .for_each(|(s, o)| {
                let mut a = Mat3::ZERO;
                for &k in off_g.sources(s) {
                    a -= blocks[k as usize];
                }
                *o = a.into();
            });
        self.strain.par_iter().copied().reduce(|| 0.0, f32::max)
    }
}

/// Per element: blocks h·∂f/∂v + h²·∂f/∂x (subtracted from A) and vertex terms
/// h·f + ∂f/∂x·(h²·v0 + h·y) (added to b).
#[inline]
fn element_terms<const N: usize>(
    ef: &ElementForce<N>,
    verts: &[u32; N],
    v0: &[Vec3],
    y: &[Vec3],
    h: f32,
    blk: &mut [Mat3],
    g: &mut [Vec3],
) {
    let w: [Vec3; N] = verts.map(|i| h * h * v0[i as usize] + h * y[i as usize]);
    for a in 0..N {
        let mut ga = h * ef.f[a];
        for b in 0..N {
            ga += ef.dfdx[a][b] * w[b];
            blk[a * N + b] = h * ef.dfdv[a][b] + (h * h) * ef.dfdx[a][b];
        }
        g[a] = ga;
    }
}
