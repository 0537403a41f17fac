//! Assembly of the backward-Euler system (BW eqs. 15–18 with §5.3's position alteration y):
//!
//!   A = M − h·∂f/∂v − h²·∂f/∂x,   b = h·(f0 + h·∂f/∂x·v0 + ∂f/∂x·y),   Δx = h(v0 + Δv) + y.
//!
//! Linear air damping f_i = −c·A_i·(v_i − v_air) (c in kg/(m²·s), A_i the lumped area) is per vertex:
//! ∂f/∂v = −c·A_i·I adds h·c·A_i·I to the diagonal block and h·f_i to b.
//!
//! Elements (triangles: stretch/shear + aero; hinges: bend) are evaluated in parallel into per-element
//! scratch, reading each vertex as one SIMD record (`Corner`: x0, v0 and w = h²v0 + h·y, made
//! once per vertex) and computing in SIMD vectors with the bits of the scalar formulas; each matrix
//! block and each row of b is then gathered in parallel, row by row (`Rows`), from a list of
//! element sources fixed at construction (no atomics, no scatter races: bit-identical at any thread
//! count).
//! Elements leave their blocks in compact form, one record per element with its rows of b: a
//! triangle's are α_aα_b·U + β_aβ_b·V + q_a·q_bᵀ ([`crate::forces::TriangleSystem`], plus one
//! constant block per triangle from stabilized drag), a hinge's are rank one, c·g_a·g_bᵀ (see
//! [`crate::forces::HingeGradient`]), so it leaves only its gradient g and the two scales √c and
//! s (its row a of b is s·g_a). A row's diagonal block and its row of b read the same records in
//! one pass. (On the dress-walk sample this layout took the gather from 0.33 to 0.26 s of
//! thread CPU time per bake at one thread, the whole assembly from 0.77 to 0.68 s, same bits.)
//! A spring (mass-spring garments, [`crate::forces::spring`]) leaves
//! one symmetric block S = h·∂f_i/∂v_j + h²·∂f_i/∂x_j (A gains +S at (i, i) and (j, j), −S at
//! (i, j)) and one vector, its row of b (−it for j). Only the upper blocks of the symmetric matrix
//! are gathered.

use crate::constraints::Constraints;
use crate::forces::{
    aero, bend_gradient_wide, spring_system, stretch_shear_system_wide, stretch_wide, Jacobian,
    SpringLaw, TriangleRest, Wind,
};
use crate::linalg::{BlockMatrix, BlockPattern};
use crate::model::Model;
use glam::{Mat3, Mat3A, Vec3, Vec3A};
use rayon::prelude::*;
use std::ops::Range;

/// Compressed lists of element-scratch indices, one list per target (row or block slot).
#[derive(Debug, Clone, Default)]
struct Gather {
    ptr: Vec<u32>,
    src: Vec<u32>,
}

impl Gather {
    /// From (target, source) pairs; sources of a target keep ascending source order (the pairs
    /// sorted as tuples). A counting sort by target, each target's sources then sorted (the
    /// callers make them ascending already): the comparison sort of the tuples was half of the
    /// set-up of the dress-walk sample's system (10.7 of 21 ms in `Assembly::new`, perf).
    fn new(targets: usize, pairs: Vec<(u32, u32)>) -> Self {
        let mut ptr = vec![0u32; targets + 1];
        for &(t, _) in &pairs {
            ptr[t as usize + 1] += 1;
        }
        for t in 0..targets {
            ptr[t + 1] += ptr[t];
        }
        let mut fill = ptr.clone();
        let mut src = vec![0u32; pairs.len()];
        for &(t, s) in &pairs {
            let at = &mut fill[t as usize];
            src[*at as usize] = s;
            *at += 1;
        }
        for t in 0..targets {
            let list = &mut src[ptr[t] as usize..ptr[t + 1] as usize];
            if list.windows(2).any(|w| w[0] > w[1]) {
                list.sort_unstable();
            }
        }
        Gather { ptr, src }
    }

    #[inline]
    fn sources(&self, t: usize) -> &[u32] {
        &self.src[self.ptr[t] as usize..self.ptr[t + 1] as usize]
    }
}

/// One triangle's terms, in one record for the gather: its stretch and shear blocks (A gains
/// α_aα_b·U + β_aβ_b·V + q_a·q_bᵀ at (a, b), α, β the rest frame's `du`, `dv`; see
/// [`crate::forces::TriangleSystem`]) and its rows of b, g_a = h·f_a + Σ_b ∂f_a/∂x_b·w_b (N·s,
/// drag included).
#[derive(Debug, Clone, Copy)]
struct TriangleTerms {
    u: Mat3A,
    v: Mat3A,
    q: [Vec3A; 3],
    g: [Vec3A; 3],
}

impl TriangleTerms {
    /// Nothing in A nor b. (Not `Mat3A::default()`: glam's default matrix is the identity.)
    const ZERO: Self = TriangleTerms {
        u: Mat3A::ZERO,
        v: Mat3A::ZERO,
        q: [Vec3A::ZERO; 3],
        g: [Vec3A::ZERO; 3],
    };
}

/// One hinge's terms in rank-one form ([`crate::forces::HingeGradient`]): A gains q_a·q_bᵀ with
/// q_a = √c·∂θ/∂x_a, c = h·k_d + h²·k_e, and row a of b gains s·∂θ/∂x_a. The gather forms the
/// products q_a, s·∂θ/∂x_a itself (the same bits as forming them here), so a hinge leaves 80
/// bytes instead of eight vectors.
#[derive(Debug, Clone, Copy)]
struct HingeTerms {
    /// ∂θ/∂x_a (1/m).
    grad: [Vec3A; 4],
    /// √c (√(N·m·s²)): 0 for an explicit hinge (nothing in A: its q_a are zeros, signed as
    /// its gradient).
    root_c: f32,
    /// s = h·f_θ − k_e·Σ_b ∂θ/∂x_b·w_b (N·m·s): b gains s·∂θ/∂x_a.
    scale: f32,
}

impl HingeTerms {
    /// Nothing in A nor b.
    const ZERO: Self = HingeTerms {
        grad: [Vec3A::ZERO; 4],
        root_c: 0.0,
        scale: 0.0,
    };
}

/// One vertex as the elements read it, in SIMD vectors (one 48-byte record, read by its ~6
/// triangles and ~12 hinges): x0, v0 and the position term w = h²·v0 + h·y that the Jacobian
/// multiplies in b (BW eqs. 15–18 with §5.3's y), computed once per vertex instead of per element
/// corner.
#[derive(Debug, Clone, Copy, Default)]
struct Corner {
    x: Vec3A,
    v: Vec3A,
    w: Vec3A,
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
    /// Per triangle / per hinge: handled explicitly (AIMEX, [`super::aimex`]): its force at
    /// (x0, v0) goes into b as h·f, nothing into A. Empty: every element is implicit.
    pub explicit_triangles: &'a [bool],
    pub explicit_hinges: &'a [bool],
    /// Leave out what only the rows of hard-pinned vertices hold: the MPCG filter (S_i = 0, BW
    /// §5.3) and every preconditioner (`filtered`, `filtered_diag`) never read a hard-pinned
    /// vertex's row of A or b, nor a block between two hard-pinned vertices (A_ij for a free i and
    /// a pinned j is kept: it carries the pin's motion z_j into row i). Those diagonal blocks are
    /// set to the mass, those rows of b and blocks to zero, and elements whose corners are all
    /// hard-pinned skip their forces (their stretch is still computed). On the dress-walk sample
    /// (the bodice pinned) that is a fifth of the elements. False where the whole matrix is read:
    /// AIMEX (its decoupling tests every slot) and Kang's approximate solve.
    pub skip_pinned: bool,
}

/// The system matrix, right-hand side and the reusable element scratch.
#[derive(Debug, Clone)]
pub struct Assembly {
    pub matrix: BlockMatrix,
    pub b: Vec<Vec3>,
    /// Per triangle: stretch at x0 (the positive part of the strain, [`crate::forces::stretch`];
    /// for the adaptive step).
    pub stretch: Vec<f32>,
    /// Diagonal blocks and rows of b from triangle vertices (source 4·triangle + a) and from
    /// hinge vertices (source 4·hinge + a).
    diag: Gather,
    diag_hinge: Gather,
    /// Upper off-diagonal slots (half storage, [`BlockMatrix`]) from triangle vertex pairs
    /// (16·triangle + 4·a + b) and from hinge vertex pairs (16·hinge + 4·a + b).
    off: Gather,
    off_hinge: Gather,
    /// Per triangle: its blocks and rows of b.
    triangle_terms: Vec<TriangleTerms>,
    /// Per triangle: −h·∂f_air/∂v, the same block for every vertex pair (stabilized drag; only
    /// with wind).
    air: Vec<Mat3A>,
    /// Per hinge: its gradient and scales.
    hinge_terms: Vec<HingeTerms>,
    /// Per vertex: x0, v0 and w = h²v0 + h·y ([`Corner`]).
    corners: Vec<Corner>,
    /// Springs: diagonal sources (vertex → spring), upper slots (slot → spring) and rows
    /// (vertex → 2·spring + side, side 1 taking −g).
    diag_spring: Gather,
    off_spring: Gather,
    rows_spring: Gather,
    /// Per spring: S = h·∂f_i/∂v_j + h²·∂f_i/∂x_j (stabilised, symmetric).
    spring_s: Vec<Mat3A>,
    /// Per spring: h·f_i + ∂f_i/∂x_j·(w_j − w_i) (w = h²v0 + h·y), vertex i's row of b; j gets −it.
    spring_g: Vec<Vec3>,
    /// Per triangle / hinge / upper slot: all its vertices hard-pinned ([`StepInputs::skip_pinned`]).
    pinned_triangle: Vec<bool>,
    pinned_hinge: Vec<bool>,
    pinned_slot: Vec<bool>,
}

impl Assembly {
    /// Builds the sparsity pattern (mesh edges plus hinge opposite-vertex pairs) and gather lists.
    pub fn new(model: &Model) -> Self {
        let n = model.vertex_count();
        // Hinge opposite vertices are coupled by bending alone: weak (the preconditioner drops them).
        // So are the bend (buckling) springs; structural and shear springs are strong.
        let mut opposite: Vec<[u32; 2]> = model.hinges.iter().map(|h| [h[2], h[3]]).collect();
        let mut strong = model.edges.clone();
        for (p, r) in model.springs.iter().zip(&model.spring_rest) {
            match r.law {
                SpringLaw::Linear => strong.push(*p),
                SpringLaw::Buckling => opposite.push(*p),
            }
        }
        let pattern = BlockPattern::with_weak_pairs(n, &strong, &opposite);
        let nt = model.triangles.len();
        // Sources as bit fields (element << 4 | a << 2 | b): ascending in (element, a, b), the
        // order in which every entry sums them.
        let (mut diag, mut off) = (Vec::new(), Vec::new());
        let (mut diag_hinge, mut off_hinge) = (Vec::new(), Vec::new());
        for (t, tri) in model.triangles.iter().enumerate() {
            for a in 0..3 {
                diag.push((tri[a], (t << 2 | a) as u32));
                for b in 0..3 {
                    if let Some(s) = pattern.slot(tri[a], tri[b]) {
                        off.push((s as u32, (t << 4 | a << 2 | b) as u32));
                    }
                }
            }
        }
        for (h, hinge) in model.hinges.iter().enumerate() {
            for a in 0..4 {
                diag_hinge.push((hinge[a], (h << 2 | a) as u32));
                for b in 0..4 {
                    if a != b {
                        if let Some(s) = pattern.slot(hinge[a], hinge[b]) {
                            off_hinge.push((s as u32, (h << 4 | a << 2 | b) as u32));
                        }
                    }
                }
            }
        }
        let (mut diag_spring, mut off_spring, mut rows_spring) =
            (Vec::new(), Vec::new(), Vec::new());
        for (k, &[i, j]) in model.springs.iter().enumerate() {
            let k = k as u32;
            diag_spring.push((i, k));
            diag_spring.push((j, k));
            rows_spring.push((i, 2 * k));
            rows_spring.push((j, 2 * k + 1));
            if let Some(s) = pattern.slot(i.min(j), i.max(j)) {
                off_spring.push((s as u32, k));
            }
        }
        let nnz = pattern.col.len();
        let nh = model.hinges.len();
        let ns = model.springs.len();
        let pinned = |i: &u32| model.hard_pinned.get(*i as usize).copied().unwrap_or(false);
        let mut pinned_slot = vec![false; nnz];
        for i in 0..n {
            let row = pattern.row_ptr[i] as usize..pattern.row_ptr[i + 1] as usize;
            for (p, j) in pinned_slot[row.clone()].iter_mut().zip(&pattern.col[row]) {
                *p = pinned(&(i as u32)) && pinned(j);
            }
        }
        let pinned_triangle = model
            .triangles
            .iter()
            .map(|t| t.iter().all(pinned))
            .collect();
        let pinned_hinge = model.hinges.iter().map(|h| h.iter().all(pinned)).collect();
        let mut pattern = pattern;
        pattern.pinned = (0..n as u32).map(|i| pinned(&i)).collect();
        Assembly {
            matrix: BlockMatrix::new(pattern),
            b: vec![Vec3::ZERO; n],
            stretch: vec![0.0; nt],
            diag: Gather::new(n, diag),
            diag_hinge: Gather::new(n, diag_hinge),
            off: Gather::new(nnz, off),
            off_hinge: Gather::new(nnz, off_hinge),
            triangle_terms: vec![TriangleTerms::ZERO; nt],
            air: Vec::new(),
            hinge_terms: vec![HingeTerms::ZERO; nh],
            corners: vec![Corner::default(); n],
            diag_spring: Gather::new(n, diag_spring),
            off_spring: Gather::new(nnz, off_spring),
            rows_spring: Gather::new(n, rows_spring),
            spring_s: vec![Mat3A::ZERO; ns],
            spring_g: vec![Vec3::ZERO; ns],
            pinned_triangle,
            pinned_hinge,
            pinned_slot,
        }
    }

    /// Evaluates all forces at (x0, v0) and fills `matrix` and `b`. Returns the largest stretch at x0.
    pub fn assemble(&mut self, model: &Model, inp: &StepInputs, cons: &Constraints) -> f32 {
        let nt = model.triangles.len();
        let (h, x0, v0, y) = (inp.h, inp.x0, inp.v0, &cons.y[..]);
        let (ex_t, ex_h) = (inp.explicit_triangles, inp.explicit_hinges);
        let explicit = |flags: &[bool], e: usize| flags.get(e).copied().unwrap_or(false);
        let skip = inp.skip_pinned;
        let (pinned_tri, pinned_hinge) = (&self.pinned_triangle, &self.pinned_hinge);
        if inp.wind.is_some() {
            self.air.resize(nt, Mat3A::ZERO);
        }
        let air = if inp.wind.is_some() {
            &mut self.air[..]
        } else {
            &mut []
        };
        self.corners.par_iter_mut().enumerate().for_each(|(i, c)| {
            *c = Corner {
                x: Vec3A::from(x0[i]),
                v: Vec3A::from(v0[i]),
                w: Vec3A::from(h * h * v0[i] + h * y[i]),
            };
        });
        let corners = &self.corners;
        let (tri_terms, stretch) = (&mut self.triangle_terms, &mut self.stretch);
        let hinge_terms = &mut self.hinge_terms;
        // Triangles (then their drag) beside the hinges: one parallel region, balanced by stealing.
        let triangles = || {
            let max_stretch = tri_terms
                .par_iter_mut()
                .zip(stretch.par_iter_mut())
                .enumerate()
                .map(|(t, (terms, s))| {
                    let c = model.triangles[t].map(|i| &corners[i as usize]);
                    let xs = c.map(|c| c.x);
                    let ex = explicit(ex_t, t);
                    let mat = &model.materials[model.triangle_material[t] as usize];
                    let rest = &model.triangle_rest[t];
                    if !model.triangle_membrane[t] || (skip && pinned_tri[t]) {
                        *s = stretch_wide(&xs, rest, mat);
                        *terms = TriangleTerms::ZERO;
                        return *s;
                    }
                    let vs = c.map(|c| c.v);
                    // An explicit triangle's b is h·f alone (w = 0) and it adds nothing to A.
                    let ws = if ex { [Vec3A::ZERO; 3] } else { c.map(|c| c.w) };
                    let sys = stretch_shear_system_wide(&xs, &vs, &ws, rest, mat, h);
                    *s = sys.stretch;
                    *terms = if ex {
                        TriangleTerms {
                            g: sys.g,
                            ..TriangleTerms::ZERO
                        }
                    } else {
                        TriangleTerms {
                            u: sys.u,
                            v: sys.v,
                            q: sys.q,
                            g: sys.g,
                        }
                    };
                    *s
                })
                .reduce(|| 0.0, f32::max);
            if let Some(w) = inp.wind {
                // Stabilized drag: ∂f_a/∂v_b is one block for all pairs, ∂f/∂x = 0 (forces::aero).
                air.par_iter_mut()
                    .zip(tri_terms.par_iter_mut())
                    .enumerate()
                    .for_each(|(t, (m, terms))| {
                        let tri = model.triangles[t];
                        let xs = tri.map(|i| x0[i as usize]);
                        let vs = tri.map(|i| v0[i as usize]);
                        let ef = aero(&xs, &vs, w, Jacobian::Stabilized);
                        for (g, f) in terms.g.iter_mut().zip(ef.f) {
                            *g += Vec3A::from(h * f);
                        }
                        *m = if explicit(ex_t, t) {
                            Mat3A::ZERO
                        } else {
                            Mat3A::from(ef.dfdv[0][0] * -h)
                        };
                    });
            }
            max_stretch
        };
        let hinges = || {
            hinge_terms
                .par_iter_mut()
                .enumerate()
                .for_each(|(k, terms)| {
                    let hinge = model.hinges[k];
                    if skip && pinned_hinge[k] {
                        *terms = HingeTerms::ZERO;
                        return;
                    }
                    let c = hinge.map(|i| &corners[i as usize]);
                    let (xs, vs) = (c.map(|c| c.x), c.map(|c| c.v));
                    let mat = &model.materials[model.hinge_material[k] as usize];
                    *terms = match bend_gradient_wide(&xs, &vs, &model.hinge_rest[k], mat) {
                        Some(hg) if explicit(ex_h, k) => HingeTerms {
                            grad: hg.grad,
                            root_c: 0.0,
                            scale: h * hg.scale,
                        },
                        Some(hg) => {
                            // b gains h·f_a + Σ_b ∂f_a/∂x_b·w_b = g_a·(h·s − k_e·Σ_b g_b·w_b),
                            // the sum from w_b − w_0 (Σ_b g_b = 0: a uniform w adds nothing).
                            let gw: f32 = (1..4).map(|b| hg.grad[b].dot(c[b].w - c[0].w)).sum();
                            HingeTerms {
                                grad: hg.grad,
                                root_c: (h * hg.damping + h * h * hg.stiffness).sqrt(),
                                scale: h * hg.scale - hg.stiffness * gw,
                            }
                        }
                        None => HingeTerms::ZERO,
                    };
                });
        };
        let (max_stretch, ()) = rayon::join(triangles, hinges);
        self.spring_s
            .par_iter_mut()
            .zip(self.spring_g.par_iter_mut())
            .enumerate()
            .for_each(|(k, (m, g))| {
                let [i, j] = model.springs[k].map(|i| i as usize);
                let sys = spring_system(&[x0[i], x0[j]], &[v0[i], v0[j]], &model.spring_rest[k]);
                let (wi, wj) = (h * h * v0[i] + h * y[i], h * h * v0[j] + h * y[j]);
                *g = h * sys.f + sys.k * (wj - wi);
                *m = Mat3A::from(sys.d * h + sys.k * (h * h));
            });
        let air = if inp.wind.is_some() {
            &self.air[..]
        } else {
            &[]
        };
        let rows = Rows {
            row_ptr: &self.matrix.pattern.row_ptr,
            diag: &self.diag,
            diag_hinge: &self.diag_hinge,
            diag_spring: &self.diag_spring,
            rows_spring: &self.rows_spring,
            off: &self.off,
            off_hinge: &self.off_hinge,
            off_spring: &self.off_spring,
            triangle_terms: &self.triangle_terms,
            hinge_terms: &self.hinge_terms,
            spring_s: &self.spring_s,
            spring_g: &self.spring_g,
            pinned_slot: &self.pinned_slot,
            air,
            model,
            inp,
            cons,
        };
        let (diag, off) = (&mut self.matrix.diag[..], &mut self.matrix.off[..]);
        rows.fill(0..diag.len(), diag, &mut self.b, off);
        max_stretch
    }
}

/// The gather of A's rows and b: row i's diagonal block, its row of b and its upper slots
/// (`row_ptr[i]..row_ptr[i + 1]`) in one parallel pass over row ranges, so that the element
/// blocks a row reads for its diagonal are still in cache for its off-diagonal slots. Every entry
/// sums its sources in the fixed order of its gather list (bit-identical at any thread count).
struct Rows<'a> {
    /// The matrix pattern's `row_ptr` (upper slots of each row).
    row_ptr: &'a [u32],
    /// [`Assembly`]'s gather lists and element scratch, as filled this substep.
    diag: &'a Gather,
    diag_hinge: &'a Gather,
    diag_spring: &'a Gather,
    rows_spring: &'a Gather,
    off: &'a Gather,
    off_hinge: &'a Gather,
    off_spring: &'a Gather,
    triangle_terms: &'a [TriangleTerms],
    hinge_terms: &'a [HingeTerms],
    spring_s: &'a [Mat3A],
    spring_g: &'a [Vec3],
    pinned_slot: &'a [bool],
    /// Per triangle drag block, empty without wind.
    air: &'a [Mat3A],
    model: &'a Model,
    inp: &'a StepInputs<'a>,
    cons: &'a Constraints,
}

/// Rows per task of [`Rows::fill`].
const ROWS_PER_TASK: usize = 256;

impl Rows<'_> {
    /// Fills rows `rows` (`diag`, `b` and `off` their parts of the matrix and of b), splitting
    /// in halves in parallel down to [`ROWS_PER_TASK`] rows.
    fn fill(&self, rows: Range<usize>, diag: &mut [Mat3A], b: &mut [Vec3], off: &mut [Mat3A]) {
        if rows.len() > ROWS_PER_TASK {
            let mid = rows.start + rows.len() / 2;
            let row_ptr = self.row_ptr;
            let split = (row_ptr[mid] - row_ptr[rows.start]) as usize;
            let (d0, d1) = diag.split_at_mut(mid - rows.start);
            let (b0, b1) = b.split_at_mut(mid - rows.start);
            let (o0, o1) = off.split_at_mut(split);
            rayon::join(
                || self.fill(rows.start..mid, d0, b0, o0),
                || self.fill(mid..rows.end, d1, b1, o1),
            );
            return;
        }
        let row_ptr = self.row_ptr;
        let first = row_ptr[rows.start] as usize;
        for (k, i) in rows.enumerate() {
            (diag[k], b[k]) = self.diagonal(i);
            for s in row_ptr[i] as usize..row_ptr[i + 1] as usize {
                off[s - first] = self.upper(s);
            }
        }
    }

    /// Diagonal block and row of b of vertex `i`.
    #[inline(always)]
    fn diagonal(&self, i: usize) -> (Mat3A, Vec3) {
        let (asm, model, inp, cons) = (self, self.model, self.inp, self.cons);
        let h = inp.h;
        let m = model.mass[i];
        if inp.skip_pinned && model.hard_pinned[i] {
            return (Mat3A::from_diagonal(Vec3::splat(m)), Vec3::ZERO);
        }
        // Block and row sum their sources in the same (ascending) order: triangles, then hinges,
        // then springs.
        let mut a = Mat3A::from(Mat3::from_diagonal(Vec3::splat(m)) + cons.diag[i]);
        let mut f = Vec3A::from(h * m * inp.gravity + cons.rhs[i]);
        for &s in asm.diag.sources(i) {
            let (t, k) = (s as usize >> 2, s as usize & 3);
            let terms = &asm.triangle_terms[t];
            let rest = &model.triangle_rest[t];
            a += triangle_block(terms, rest, self.air, t, k, k);
            f += terms.g[k];
        }
        for &s in asm.diag_hinge.sources(i) {
            let terms = &asm.hinge_terms[s as usize >> 2];
            let grad = terms.grad[s as usize & 3];
            let q = grad * terms.root_c;
            a += outer_a(q, q);
            f += grad * terms.scale;
        }
        for &s in asm.diag_spring.sources(i) {
            a += asm.spring_s[s as usize];
        }
        for &s in asm.rows_spring.sources(i) {
            let g = Vec3A::from(asm.spring_g[s as usize / 2]);
            f += if s % 2 == 0 { g } else { -g };
        }
        if inp.air_damping > 0.0 {
            let hca = h * inp.air_damping * model.area[i];
            let v_air = inp.wind.map_or(Vec3::ZERO, |w| w.velocity);
            a += Mat3A::from_diagonal(Vec3::splat(hca));
            f -= Vec3A::from(hca * (inp.v0[i] - v_air));
        }
        (a, Vec3::from(f))
    }

    /// Upper off-diagonal block of slot `s`.
    #[inline(always)]
    fn upper(&self, s: usize) -> Mat3A {
        let (asm, model) = (self, self.model);
        if self.inp.skip_pinned && asm.pinned_slot[s] {
            return Mat3A::ZERO;
        }
        let mut a = Mat3A::ZERO;
        for &k in asm.off.sources(s) {
            let (t, k) = (k as usize >> 4, k as usize);
            let rest = &model.triangle_rest[t];
            let terms = &asm.triangle_terms[t];
            a += triangle_block(terms, rest, self.air, t, (k >> 2) & 3, k & 3);
        }
        for &k in asm.off_hinge.sources(s) {
            let k = k as usize;
            let terms = &asm.hinge_terms[k >> 4];
            let rc = terms.root_c;
            a += outer_a(terms.grad[(k >> 2) & 3] * rc, terms.grad[k & 3] * rc);
        }
        for &k in asm.off_spring.sources(s) {
            a -= asm.spring_s[k as usize];
        }
        a
    }
}

/// a·bᵀ.
#[inline(always)]
fn outer_a(a: Vec3A, b: Vec3A) -> Mat3A {
    Mat3A::from_cols(a * b.x, a * b.y, a * b.z)
}

/// Block (a, b) of triangle `t` in A: α_aα_b·U + β_aβ_b·V + q_a·q_bᵀ, plus the drag block when
/// `air` is not empty.
#[inline(always)]
fn triangle_block(
    blk: &TriangleTerms,
    rest: &TriangleRest,
    air: &[Mat3A],
    t: usize,
    a: usize,
    b: usize,
) -> Mat3A {
    let m = blk.u * (rest.du[a] * rest.du[b])
        + blk.v * (rest.dv[a] * rest.dv[b])
        + outer_a(blk.q[a], blk.q[b]);
    match air.get(t) {
        Some(k) => m + *k,
        None => m,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{hard_pins, sheet, sheet_vertex};
    use crate::linalg::{CgSettings, Mpcg, Preconditioner, Problem};

    /// With `skip_pinned`, every entry a free row reads is bit-identical to the full assembly, and
    /// so is the filtered solve under each preconditioner; the skipped entries did hold something.
    /// Galilean invariance: the element terms see velocities only through their differences, so
    /// a wrinkled, stretched sheet moving as a whole at 30 m/s (no air, no gravity) gets the same
    /// system, bit for bit, as the same sheet at rest. Summed vertex by vertex (Σ_b α_b·v_b), the
    /// f32 rounding of the large uniform part left a force proportional to the speed in b.
    #[test]
    fn a_uniform_motion_changes_no_bit_of_the_system() {
        let n = 24;
        let model = Model::new(&[sheet("s", n, 0.5, 1.0)]).unwrap();
        let nv = model.vertex_count();
        let x0: Vec<Vec3> = (0..nv)
            .map(|i| {
                let k = i as f32;
                model.rest_positions[i] * 1.03
                    + Vec3::new((k * 0.7).sin(), (k * 1.3).cos(), (k * 0.4).sin()) * 0.003
            })
            .collect();
        let mut cons = Constraints::default();
        cons.begin(nv);
        let h = 1.0 / 120.0;
        let assemble = |v: Vec3| {
            let v0 = vec![v; nv];
            let mut asm = Assembly::new(&model);
            let inputs = StepInputs {
                x0: &x0,
                v0: &v0,
                h,
                gravity: Vec3::ZERO,
                wind: None,
                air_damping: 0.0,
                explicit_triangles: &[],
                explicit_hinges: &[],
                skip_pinned: true,
            };
            asm.assemble(&model, &inputs, &cons);
            asm
        };
        let (rest, moving) = (assemble(Vec3::ZERO), assemble(Vec3::new(30.0, -4.0, 12.0)));
        let vbits = |v: &Vec3| v.to_array().map(f32::to_bits);
        assert!(rest.b.iter().filter(|b| b.length() > 1e-6).count() > nv / 2);
        for (i, (r, m)) in rest.b.iter().zip(&moving.b).enumerate() {
            assert_eq!(vbits(r), vbits(m), "b {i}: {r} at rest, {m} moving");
        }
        let bits = |m: &Mat3A| m.to_cols_array().map(f32::to_bits);
        for (r, m) in rest.matrix.diag.iter().zip(&moving.matrix.diag) {
            assert_eq!(bits(r), bits(m));
        }
        for (r, m) in rest.matrix.off.iter().zip(&moving.matrix.off) {
            assert_eq!(bits(r), bits(m));
        }
    }

    #[test]
    fn skipping_pinned_rows_changes_no_free_row_nor_the_solve() {
        let n = 12;
        let mut g = sheet("s", n, 0.3, 1.0);
        let pinned: Vec<u32> = (0..n)
            .flat_map(|i| (0..4).map(move |j| sheet_vertex(n, i, j)))
            .collect();
        g.pins = hard_pins(&pinned);
        let model = Model::new(&[g]).unwrap();
        let nv = model.vertex_count();
        let wobble = |i: usize, k: f32| ((i as f32 * 0.7 + k).sin(), (i as f32 * 1.3 + k).cos());
        let x0: Vec<Vec3> = (0..nv)
            .map(|i| {
                let (a, b) = wobble(i, 0.0);
                model.rest_positions[i] * 1.02 + Vec3::new(a, b, a * b) * 0.002
            })
            .collect();
        let v0: Vec<Vec3> = (0..nv)
            .map(|i| {
                let (a, b) = wobble(i, 2.0);
                Vec3::new(a, -0.5 + b, 0.3 * a)
            })
            .collect();
        let h = 1.0 / 120.0;
        let mut cons = Constraints::default();
        cons.begin(nv);
        for &p in &pinned {
            let i = p as usize;
            let target = x0[i] + Vec3::new(0.01, 0.02, -0.01);
            cons.hard_pin(i, target, Vec3::new(1.2, 2.4, -1.2), x0[i], v0[i], h);
        }
        let assemble = |skip_pinned| {
            let mut asm = Assembly::new(&model);
            let inputs = StepInputs {
                x0: &x0,
                v0: &v0,
                h,
                gravity: Vec3::new(0.0, -9.81, 0.0),
                wind: None,
                air_damping: 0.02,
                explicit_triangles: &[],
                explicit_hinges: &[],
                skip_pinned,
            };
            let max = asm.assemble(&model, &inputs, &cons);
            (asm, max)
        };
        let ((full, max_full), (skip, max_skip)) = (assemble(false), assemble(true));
        assert_eq!(max_full.to_bits(), max_skip.to_bits());
        assert!(skip.pinned_triangle.iter().filter(|&&p| p).count() > 40);
        assert!(skip.pinned_hinge.iter().any(|&p| p));
        let bits = |m: &Mat3A| m.to_cols_array().map(f32::to_bits);
        let vbits = |v: &Vec3| v.to_array().map(f32::to_bits);
        let mut skipped_nonzero = 0;
        for i in 0..nv {
            if model.hard_pinned[i] {
                skipped_nonzero += usize::from(full.b[i] != Vec3::ZERO);
                continue;
            }
            assert_eq!(
                bits(&full.matrix.diag[i]),
                bits(&skip.matrix.diag[i]),
                "diag {i}"
            );
            assert_eq!(vbits(&full.b[i]), vbits(&skip.b[i]), "b {i}");
        }
        for (s, &both) in skip.pinned_slot.iter().enumerate() {
            if both {
                skipped_nonzero += usize::from(full.matrix.off[s] != Mat3A::ZERO);
            } else {
                assert_eq!(
                    bits(&full.matrix.off[s]),
                    bits(&skip.matrix.off[s]),
                    "slot {s}"
                );
            }
        }
        assert!(skipped_nonzero > 100, "{skipped_nonzero}");
        for (t, (a, b)) in full.stretch.iter().zip(&skip.stretch).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "stretch {t}");
        }
        for preconditioner in [
            Preconditioner::BlockJacobi,
            Preconditioner::IncompleteCholesky,
            Preconditioner::Amg,
        ] {
            let solve = |asm: &Assembly| {
                let problem = Problem {
                    a: &asm.matrix,
                    b: &asm.b,
                    filter: &cons.filter,
                    z: &cons.z,
                    mass: &model.mass,
                    positions: &x0,
                    rest: &model.rest_positions,
                };
                let mut dv = vec![Vec3::ZERO; nv];
                let settings = CgSettings {
                    tolerance: 1e-5,
                    max_iterations: 500,
                    velocity_floor: 0.0,
                    preconditioner,
                    first_shift: 0,
                    deflation: false,
                };
                let cg = Mpcg::new().solve(&problem, &mut dv, settings);
                assert!(cg.converged, "{preconditioner:?}");
                (cg.iterations, dv)
            };
            let (a, b) = (solve(&full), solve(&skip));
            assert_eq!(a.0, b.0, "{preconditioner:?}");
            assert!(a.0 > 3, "{preconditioner:?}: {}", a.0);
            for (i, (p, q)) in a.1.iter().zip(&b.1).enumerate() {
                assert_eq!(vbits(p), vbits(q), "{preconditioner:?} dv {i}");
            }
        }
    }
}
