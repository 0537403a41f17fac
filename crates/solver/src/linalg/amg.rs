//! Smoothed-aggregation algebraic multigrid (SA-AMG) V-cycle on the filtered 3×3 block system, the
//! MPCG preconditioner of Tamstorf, Jones & McCormick, "Smoothed aggregation multigrid for cloth
//! simulation" (SIGGRAPH Asia 2015), after Vaněk, Mandel & Brezina (Computing 56, 1996).
//!
//! The fine operator is the SPD matrix Ã = S·A·S + (I − S) MPCG works with (Boxerman 2003 §5.2; the
//! same one [`super::IncompleteCholesky`] factors); Tamstorf et al. §4 precondition exactly this
//! "pre-filtered" system. Each level ℓ has:
//!
//! - **Aggregates** of nodes (a vertex on the fine level; a coarse node below), by the greedy
//!   three-pass aggregation of Vaněk et al. §3 (a root and its strong neighbours; leftovers join
//!   their strongest neighbour's aggregate; the rest form their own) on a static weight graph:
//!   1/|x̄_i − x̄_j|² over the rest shape x̄ on the fine level (bending-only couplings excluded),
//!   summed between aggregates below; w_ij is strong if ≥ θ·(max_k w_ik · max_k w_jk)^½. On a
//!   thin-triangle mesh the strong couplings are the short, stiff edges, so aggregates follow them.
//!   Strength measured on the matrix values instead flips at its threshold from one substep to the
//!   next and rebuilt the structure every solve (tried first).
//! - **Tentative prolongator** T: the near-null space is the six rigid-body modes of each
//!   aggregate (Tamstorf et al. §4): translations t and rotations φ = θ·ℓ about the aggregate's
//!   centre (ℓ a level length scale, so both columns have unit size). Each coarse node is two 3×3
//!   block rows (translation 2A, rotation 2A + 1), so every level keeps 3×3 blocks and reuses
//!   [`BlockMatrix`]. On the fine level T's rows are multiplied by S_i (no coarse correction along
//!   a prescribed direction). Translations alone (tried first, with a Jacobi smoother weighted by
//!   an estimate of ρ) gave 120 iterations on a sheet draped on a sphere, where IC(0) needs 50;
//!   with rotations 25. Now the aggregates of the fine and the first two coarse levels keep only
//!   their translations (one block row per node, `next_k`), the coarser ones their rotations
//!   too: the large levels a fraction of their blocks, for a tenth more iterations on square
//!   cells and none on thin triangles.
//! - **Smoothed prolongator** P = (I − ω D⁻¹ Ã_s) T, ω = 4/(3 ρ̂), Ã_s = Ã's diagonal and strong
//!   couplings only (Vaněk et al.'s filtered matrix: on thin triangles P then extends along the
//!   stiff direction only, and the coarse stencils stay sparse).
//! - **ρ̂** = 1.7 × the larger of two Rayleigh quotients vᵀÃv / vᵀDv, v = (D⁻¹Ã)^k v₀, k = 0, 1,
//!   from a fixed pseudo-random v₀ (D⁻¹Ã is self-adjoint in the D inner product, so each is a
//!   lower bound of ρ(D⁻¹Ã)); the margin was tuned on the synthetic membranes (iterations at
//!   1.2 / 1.5 / 1.7 / 2.2: 12 / 10 / 10 / 15 on 256², 24 / 18 / 18 / 20 on the 20:1 strip). Its
//!   accuracy only affects the coarse space's quality: PᵀÃP is SPD for any ω. (A 10-step power
//!   iteration of ‖D⁻¹Ã v‖/‖v‖ cost ten products with A per level and solve.)
//! - **Galerkin coarse operator** A_{ℓ+1} = Pᵀ·A_ℓ·P (all of A_ℓ, so it is SPD whenever A_ℓ is),
//!   plus `ROTATION_FLOOR` on the rotation rows (a collinear aggregate cannot feel a rotation
//!   about its own line).
//! - **Smoother**: one ℓ1-scaled block-Jacobi sweep x += (ω/b_i)·D_i⁻¹(r − A x)_i before and after
//!   the coarse correction, b_i the Gershgorin bound of block row i of L⁻¹·Ã·L⁻ᵀ (D = L·Lᵀ per
//!   block: the largest absolute row sum of the scaled blocks; Baker, Falgout, Kolev & Yang,
//!   "Multigrid smoothers for ultraparallel computing", SISC 2011, §6 "ℓ1 smoothers"), ω = 1.8.
//!   By Schur's bound Ã ⪯ diag(b_i D_i), so ρ(diag(b_i D_i)⁻¹Ã) ≤ 1 and the sweep contracts
//!   the error in the energy norm for any ω < 2: the V-cycle (symmetric, as Jacobi is) is positive
//!   definite whatever the spectrum, which MPCG needs. A global weight 4/(3 ρ̂) from an estimate
//!   of ρ instead amplifies an isolated stiff mode the estimate misses (ω·λ > 2 for an estimate
//!   below 2ρ/3: an indefinite preconditioner, whose rᵀM⁻¹r can report convergence that is not
//!   there); the dress-walk sample with such a weight from a 3-step estimate tore at frame 17,
//!   with a 10-step one or a larger margin it did not.
//!
//! The coarsest level (≤ [`DENSE_MAX`] rows) is solved by a dense f64 Cholesky factor.
//!
//! Reuse: the structure (aggregates, patterns of P, A·P and the coarse matrices, and the maps of
//! where each term of those products lands, all scratch) is built once per matrix pattern from
//! the pattern and the rest shape; every solve refills the values in place (filtered fine matrix,
//! D⁻¹ and the smoother weights, ω, T from the current positions, P, A·P, coarse matrices, coarse
//! factor) with no searches, so the hierarchy is a function of the current matrix and positions
//! alone (nothing carried between substeps: the same after a checkpoint resume). Every row of
//! every product is computed by one thread in a fixed order and sums are reduced in fixed
//! chunks, so results are bit-identical at any thread count; the refill's products and the
//! V-cycle's passes are row-parallel above [`super::reduce::PARALLEL_FROM`] rows, and on a coarse
//! level of such a hierarchy with as many off-diagonal blocks (`Level::par`: the dress's first
//! coarse level has 3,130 rows but 51k blocks, as many as its 10,212 vertices). The V-cycle's
//! products with A read each half-stored block once ([`BlockMatrix::mul_rows`]).
//!
//! Cost (BENCHMARKS.md, "AMG per iteration"; skirt-walk, one thread): a V-cycle (two products
//! with A, P and Pᵀ with ~5 blocks per row, the first coarse level's two products) takes about
//! two IC(0) iterations' time (0.21 against 0.11 ms), and the per-solve refill about 13
//! V-cycles' (A·P and PᵀAP on the fine and the coarse levels, smoother weights, ρ̂): ~30 % of an
//! AMG solve. The stopping rule's norms b̂ᵀM⁻¹b̂ and wᵀM⁻¹w cost half a V-cycle each
//! ([`Amg::quadratic`]: the downward half of the cycle gives rᵀM⁻¹r exactly). On the dress the
//! first coarse level is as dense as the fine one and a V-cycle costs more. In return the
//! iteration count hardly grows with the vertex count or the
//! triangle shape. Which preconditioner a bake uses by default: [`super::choice`].

use super::block_sparse::{BlockMatrix, BlockPattern};
use super::incomplete_cholesky::{filtered, filtered_diag};
use super::mpcg::Filter;
use super::reduce::{dot, for_each_indexed, parallel, sum_chunks, Partials, CHUNK};
use glam::{Mat3A, Vec3A};
use rayon::prelude::*;

/// Strength threshold θ on the weight graph ([`Level::aggregate`]): on a regular mesh every edge
/// is strong; across a thin triangle (1/20² the weight of its short edges) the long edges are not.
const THETA: f32 = 0.1;
/// Largest level solved by the dense Cholesky factor (vertices; 3× that unknowns).
pub const DENSE_MAX: usize = 48;
/// Most levels (the last one is solved directly or, if larger than [`DENSE_MAX`], by block Jacobi).
const MAX_LEVELS: usize = 12;
/// Power-iteration steps of the spectral radius estimate of D⁻¹A, and the margin on it.
const POWER_STEPS: usize = 2;
const POWER_MARGIN: f32 = 1.7;
/// Weight ω of the ℓ1-scaled smoother x += ω·D_i⁻¹/b_i·(r − A x)_i: convergent for ω < 2.
const SMOOTHER_WEIGHT: f32 = 1.8;
/// Regularization of the coarse rotation blocks, relative to the translation block's mean
/// diagonal.
const ROTATION_FLOOR: f32 = 1e-3;
/// Diagonal shift of a smoother block before its Cholesky factor ([`chol_inv`]), relative to the
/// block's largest diagonal entry. A coarse node whose aggregate lies in contact with a body has its
/// translation along the contact normal almost filtered out (T's fine rows are multiplied by
/// S_i), so its diagonal block is near-singular: pivots of 1e-9 of the block's scale made L⁻¹
/// amplify f32 rounding in the bound and in r − A·(W·r) past the smoother's margin, and the
/// V-cycle indefinite (rᵀM⁻¹r < 0 ended MPCG early on the 65k sheet draped on a sphere). With
/// the shift, ‖L⁻¹‖² ≤ 1/ε (2/ε in the fallback).
const PIVOT_FLOOR: f32 = 1e-5;
/// [`Level::tent_kind`] values.
const TENT_ZERO: u8 = 0;
const TENT_IDENTITY: u8 = 1;
const TENT_OTHER: u8 = 2;
/// Not aggregated (no strong coupling: e.g. a fixed vertex, whose filtered row is the identity).
const NONE: u32 = u32::MAX;

/// Coarse rows per aggregate made by level l ([`Level::next_k`]): the aggregates of the fine
/// level and of the first two coarse levels keep only their translations, the coarser ones
/// translations and rotations (Vaněk et al. §2). The rotation rows double a level's rows and
/// more than double its blocks (coarse stencils are wide), where a V-cycle and a refill spend
/// most, for few iterations: rotations from the first coarse level on made the thin-triangle
/// skirt's first coarse level 1.8× the fine level's blocks for 1 % of its iterations; from the
/// second, its second coarse level 960 rows and 13,440 blocks (the first: 1,440 and 9,720), and
/// from the third 480 and 3,240, with 8.4 → 8.2 CG iterations per substep and its linear solve
/// 1.75 → 1.28 s. On the 20:1 strips of `explore` 18 iterations either way (each solve 1.6× faster),
/// on square cells 10–12 → 11–14 (BENCHMARKS.md, "AMG: rotations from the third coarse level").
/// The coarsest levels keep them: with translations alone on every level the 256² sheet's
/// coarsest aggregates could not follow its drape (more rejected substeps).
const ROTATIONS_FROM: usize = 3;

/// Coarse rows per aggregate made by level `level`: 1 (translation) before [`ROTATIONS_FROM`],
/// 2 (translation and rotation) from it.
fn next_k(level: usize) -> usize {
    if level < ROTATIONS_FROM {
        1
    } else {
        2
    }
}

/// One level of the hierarchy: its matrix and, except on the coarsest, the transfer to the next.
#[derive(Debug, Default, Clone)]
struct Level {
    a: BlockMatrix,
    /// Block diagonal inverse D⁻¹ (identity where a diagonal block is not invertible).
    d_inv: Vec<Mat3A>,
    /// Prolongator-smoother weight 4/(3 ρ̂).
    omega: f32,
    /// The smoother's weighted block inverses (SMOOTHER_WEIGHT / b_i)·D_i⁻¹.
    d_sm: Vec<Mat3A>,
    /// Whether this level's passes run on the thread pool: on the fine level from
    /// [`super::reduce::PARALLEL_FROM`] vertices; on a coarse level of a parallel hierarchy also
    /// with fewer rows but as many off-diagonal blocks (its products cost as much).
    par: bool,
    /// Rows per node: 1 on the fine level (a vertex) and on the first coarse level (the
    /// translation of an aggregate), 2 below (translation row 2b, rotation row 2b + 1 of node b).
    k: usize,
    /// Rows per node of the next level ([`next_k`]).
    next_k: usize,
    /// Position of each row's node (m): the vertex, or the centre of the aggregate it stands for.
    pos: Vec<Vec3A>,
    /// Length ℓ (m) scaling this level's rotation unknowns φ = θ·ℓ (θ in rad).
    scale: f32,
    /// Tentative prolongator blocks of each row: onto its aggregate's translation and rotation.
    tent_t: Vec<Mat3A>,
    tent_r: Vec<Mat3A>,
    /// Per row: T's translation block is zero, the identity or neither ([`TENT_ZERO`], ...).
    tent_kind: Vec<u8>,
    /// Aggregate centres (scratch).
    centers: Vec<Vec3A>,
    members: Vec<u32>,
    /// Per upper slot: a strong coupling (aggregation and the prolongator smoother use only these).
    strong: Vec<bool>,
    /// Per upper slot: the static coupling weight strength is measured on: 1/|x̄_i − x̄_j|² over
    /// the rest shape on the fine level (0 for weak couplings), summed over aggregates below.
    weight: Vec<f32>,
    /// Aggregate of each node ([`NONE`] if not aggregated), and the count.
    agg: Vec<u32>,
    coarse_rows: usize,
    /// P by rows: `p_ptr[i]..p_ptr[i+1]`, coarse columns ascending.
    p_ptr: Vec<u32>,
    p_col: Vec<u32>,
    p_val: Vec<Mat3A>,
    /// P by columns: per coarse row a, (fine row, P slot), fine rows ascending.
    pt_ptr: Vec<u32>,
    pt_row: Vec<u32>,
    pt_slot: Vec<u32>,
    /// Pᵀ's blocks in that order (refilled with P).
    pt_val: Vec<Mat3A>,
    /// Q = A·P by rows, coarse columns ascending.
    q_ptr: Vec<u32>,
    q_col: Vec<u32>,
    q_val: Vec<Mat3A>,
    /// Per off-diagonal slot: its row (for row-parallel fills of the upper blocks).
    slot_row: Vec<u32>,
    /// Term maps of [`Level::numeric`] (see [`Level::maps`]).
    p_map: Vec<u32>,
    q_map: Vec<u32>,
    q_map_ptr: Vec<u32>,
    ptq_first: Vec<u32>,
    ptq_target: Vec<u32>,
    ptq_ptr: Vec<u32>,
    /// The coarse matrix by rows, [diagonal, upper blocks] per row (`ac_ptr`), and the row of
    /// each coarse upper slot.
    ac_ptr: Vec<u32>,
    ac_val: Vec<Mat3A>,
    coarse_slot_row: Vec<u32>,
    /// V-cycle vectors of this level: right-hand side, solution, residual.
    rhs: Vec<Vec3A>,
    sol: Vec<Vec3A>,
    tmp: Vec<Vec3A>,
    /// Per-row Gershgorin bounds and inverse Cholesky factors of the diagonal blocks (scratch).
    bound: Vec<f32>,
    l_inv: Vec<Mat3A>,
    /// Per upper slot: absolute row and column sums of L_i⁻¹·A_ij·L_j⁻ᵀ (scratch).
    abs_sums: Vec<[Vec3A; 2]>,
    /// Per-chunk sums of the power estimate (scratch).
    sums: Vec<[f64; 2]>,
}

/// Dense f64 Cholesky factor of the coarsest level (lower triangle, row-major), or block Jacobi.
#[derive(Debug, Default, Clone)]
struct Coarsest {
    m: usize,
    l: Vec<f64>,
    work: Vec<f64>,
    dense: bool,
}

/// The SA-AMG hierarchy (module docs). Build with [`Amg::build`] each solve, apply with
/// [`Amg::apply`] each MPCG iteration.
#[derive(Debug, Default, Clone)]
pub struct Amg {
    levels: Vec<Level>,
    coarsest: Coarsest,
    /// Symbolic scratch.
    marker: Vec<u32>,
    /// Structure (aggregates, patterns) builds since creation: one per matrix pattern.
    pub rebuilds: u64,
}

/// Slot argument of [`for_row`]'s diagonal block.
const DIAG: usize = usize::MAX;

/// `f(j, A_ij, slot)` for every block of row i: the diagonal (slot [`DIAG`]), the upper blocks,
/// the (transposed) lower blocks (slot: the upper block's).
#[inline]
fn for_row(a: &BlockMatrix, i: usize, mut f: impl FnMut(usize, Mat3A, usize)) {
    let p = &a.pattern;
    f(i, a.diag[i], DIAG);
    for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
        f(p.col[s] as usize, a.off[s], s);
    }
    for k in p.lower_ptr[i] as usize..p.lower_ptr[i + 1] as usize {
        let s = p.lower_slot[k] as usize;
        f(p.lower_col[k] as usize, a.off[s].transpose(), s);
    }
}

/// Row-wise absolute sums of a block (as a vector: one entry per row).
#[inline]
fn abs_row_sums(m: &Mat3A) -> Vec3A {
    m.x_axis.abs() + m.y_axis.abs() + m.z_axis.abs()
}

/// L⁻¹ for the Cholesky factor L·Lᵀ = d + ε·I of the 3×3 block d, ε = [`PIVOT_FLOOR`] × d's
/// largest diagonal entry; if d is indefinite beyond that shift (a pivot below ε/2), L =
/// diag(√max(d_kk, ε)); the identity if d's diagonal is zero or not finite. The smoother's
/// bound holds for any invertible L ([`Level::gershgorin`]); the shift keeps L⁻¹ within what f32
/// products resolve.
#[inline]
fn chol_inv(d: Mat3A) -> Mat3A {
    let (a00, a10, a20) = (d.x_axis.x, d.x_axis.y, d.x_axis.z);
    let (a11, a21, a22) = (d.y_axis.y, d.y_axis.z, d.z_axis.z);
    let eps = PIVOT_FLOOR * a00.max(a11).max(a22);
    if !(eps > 0.0 && eps.is_finite()) {
        return Mat3A::IDENTITY;
    }
    let p0 = a00 + eps;
    let (l10, l20) = (a10 / p0.sqrt(), a20 / p0.sqrt());
    let p1 = a11 + eps - l10 * l10;
    let l21 = (a21 - l20 * l10) / p1.sqrt();
    let p2 = a22 + eps - l20 * l20 - l21 * l21;
    // `p > ε/2` is false for NaN too.
    let l = if p1 > 0.5 * eps && p2 > 0.5 * eps {
        Mat3A::from_cols(
            Vec3A::new(p0.sqrt(), l10, l20),
            Vec3A::new(0.0, p1.sqrt(), l21),
            Vec3A::new(0.0, 0.0, p2.sqrt()),
        )
    } else {
        Mat3A::from_diagonal(
            glam::Vec3::new(a00, a11, a22)
                .max(glam::Vec3::splat(eps))
                .powf(0.5),
        )
    };
    let inv = l.inverse();
    if inv.is_finite() {
        inv
    } else {
        Mat3A::IDENTITY
    }
}

/// Rows per range of the parallel products: a multiple of [`CHUNK`] (see
/// [`BlockMatrix::mul_rows`]).
const PRODUCT_ROWS: usize = 4 * CHUNK;

/// Rows per range of a parallel product on an n-row level: [`PRODUCT_ROWS`], or [`CHUNK`] on a
/// coarse level with fewer rows than [`super::reduce::PARALLEL_FROM`] but as many blocks
/// ([`Level::par`]).
fn range_rows(n: usize) -> usize {
    if parallel(n) {
        PRODUCT_ROWS
    } else {
        CHUNK
    }
}

/// `f(i, &mut v[i])` for every i, on the thread pool if `par` or above
/// [`super::reduce::PARALLEL_FROM`] elements.
fn each<T: Send>(par: bool, v: &mut [T], f: impl Fn(usize, &mut T) + Sync + Send) {
    if par {
        v.par_iter_mut().enumerate().for_each(|(i, x)| f(i, x));
    } else {
        for_each_indexed(v, f);
    }
}

/// y = A·x in one pass over the half-stored blocks, then `finish(i, &mut yᵢ)` per row; in fixed
/// row ranges ([`range_rows`]), in parallel if `par`. The same bits as the serial pass at any
/// thread count (and whether ranges run in parallel or not).
fn product(
    a: &BlockMatrix,
    x: &[Vec3A],
    y: &mut [Vec3A],
    par: bool,
    finish: impl Fn(usize, &mut Vec3A) + Sync,
) {
    if par {
        let rows = range_rows(y.len());
        y.par_chunks_mut(rows)
            .enumerate()
            .for_each(|(k, yk)| a.mul_rows(k * rows, x, yk, &finish));
    } else {
        a.mul_rows(0, x, y, &finish);
    }
}

/// Like [`product`], also summing `term(i, yᵢ)` (two f64 sums) per [`CHUNK`] of rows into
/// `parts` (one slot per chunk), returned summed in chunk order: the same bits at any thread
/// count.
fn product_sums(
    a: &BlockMatrix,
    x: &[Vec3A],
    y: &mut [Vec3A],
    parts: &mut Vec<[f64; 2]>,
    par: bool,
    term: impl Fn(usize, &mut Vec3A) -> [f64; 2] + Sync,
) -> [f64; 2] {
    let n = y.len();
    parts.resize(n.div_ceil(CHUNK), [0.0; 2]);
    let rows = range_rows(n);
    let range = |(k, (yk, pk)): (usize, (&mut [Vec3A], &mut [[f64; 2]]))| {
        let first = k * rows;
        let mut acc = [0.0f64; 2];
        a.mul_rows(first, x, yk, |i, yi| {
            let t = term(i, yi);
            acc[0] += t[0];
            acc[1] += t[1];
            if (i + 1) % CHUNK == 0 || i + 1 == n {
                pk[(i - first) / CHUNK] = acc;
                acc = [0.0; 2];
            }
        });
    };
    if par {
        y.par_chunks_mut(rows)
            .zip(parts.par_chunks_mut(rows / CHUNK))
            .enumerate()
            .for_each(range);
    } else {
        range((0, (y, &mut parts[..])));
    }
    parts
        .iter()
        .fold([0.0; 2], |s, p| [s[0] + p[0], s[1] + p[1]])
}

/// `f(i, row i's values)` for every row of a CSR array (`ptr`: n + 1 offsets into `vals`), each
/// row by one thread; split in halves over the thread pool if `par` (no allocation).
fn for_each_row<T: Send>(
    ptr: &[u32],
    vals: &mut [T],
    par: bool,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    fn split<T: Send>(
        ptr: &[u32],
        lo: usize,
        hi: usize,
        vals: &mut [T],
        f: &(impl Fn(usize, &mut [T]) + Sync),
    ) {
        if hi - lo <= CHUNK {
            let base = ptr[lo] as usize;
            for i in lo..hi {
                f(
                    i,
                    &mut vals[ptr[i] as usize - base..ptr[i + 1] as usize - base],
                );
            }
            return;
        }
        let mid = lo + (hi - lo) / 2;
        let (left, right) = vals.split_at_mut((ptr[mid] - ptr[lo]) as usize);
        rayon::join(
            || split(ptr, lo, mid, left, f),
            || split(ptr, mid, hi, right, f),
        );
    }
    let n = ptr.len() - 1;
    if par {
        split(ptr, 0, n, vals, &f);
    } else {
        let mut rest = vals;
        for i in 0..n {
            let (row, tail) = rest.split_at_mut((ptr[i + 1] - ptr[i]) as usize);
            f(i, row);
            rest = tail;
        }
    }
}

/// `neighbours(b, f)`: calls f(c, w_bc) for each strong neighbour c of node b.
type Neighbours<'a> = dyn Fn(usize, &mut dyn FnMut(usize, f32)) + 'a;

/// Greedy three-pass aggregation (Vaněk et al. §3) of `nodes` nodes over the strong graph given by
/// `neighbours(b, f)` (calls f(c, w_bc) for each strong neighbour c of b): pass 1, a root whose
/// strong neighbours are all free takes them; pass 2, leftovers join their strongest aggregated
/// neighbour's aggregate; pass 3, what is left with strong neighbours forms aggregates with its
/// free neighbours. Nodes without strong neighbours stay [`NONE`]. Serial, in node order.
fn greedy(nodes: usize, neighbours: &Neighbours, agg: &mut Vec<u32>) -> usize {
    agg.clear();
    agg.resize(nodes, NONE);
    let mut count = 0u32;
    for b in 0..nodes {
        if agg[b] != NONE {
            continue;
        }
        let (mut any, mut free) = (false, true);
        neighbours(b, &mut |c, _| {
            any = true;
            free &= agg[c] == NONE;
        });
        if any && free {
            agg[b] = count;
            neighbours(b, &mut |c, _| agg[c] = count);
            count += 1;
        }
    }
    for b in 0..nodes {
        if agg[b] != NONE {
            continue;
        }
        let (mut best, mut best_norm) = (NONE, 0.0f32);
        neighbours(b, &mut |c, wc| {
            if agg[c] != NONE && wc > best_norm {
                (best, best_norm) = (agg[c], wc);
            }
        });
        agg[b] = best;
    }
    for b in 0..nodes {
        if agg[b] != NONE {
            continue;
        }
        let mut any = false;
        neighbours(b, &mut |_, _| any = true);
        if !any {
            continue;
        }
        agg[b] = count;
        neighbours(b, &mut |c, _| {
            if agg[c] == NONE {
                agg[c] = count;
            }
        });
        count += 1;
    }
    count as usize
}

impl Level {
    fn rows(&self) -> usize {
        self.a.diag.len()
    }

    /// The first coarse column of Q = A·P that row `i` needs: its first P column (none if P's
    /// row is empty). The coarse matrix's upper blocks (a, b), b ≥ a, sum P_ia·Q_ib over the rows
    /// i with P_ia ≠ 0, so a is one of row i's P columns and b ≥ a ≥ this; Q_ib below it is never
    /// read. On the 256² sheet this leaves out 0.54M of the 4.32M block products of the fine
    /// level's Q (904k → 677k blocks) and 0.40M of the first coarse level's 2.69M, with the same
    /// bits (every kept entry sums the same terms in the same order).
    fn q_from(&self, i: usize) -> u32 {
        let (lo, hi) = (self.p_ptr[i] as usize, self.p_ptr[i + 1] as usize);
        if lo < hi {
            self.p_col[lo]
        } else {
            u32::MAX
        }
    }

    /// r_c = Pᵀ·t (t = [`Level::tmp`]), per coarse row in fine-row order.
    fn restrict(&self, rc: &mut [Vec3A]) {
        let (pt_ptr, pt_row, pt_val, t) = (&self.pt_ptr, &self.pt_row, &self.pt_val, &self.tmp);
        each(self.par, rc, |c, rc| {
            let mut acc = Vec3A::ZERO;
            for k in pt_ptr[c] as usize..pt_ptr[c + 1] as usize {
                acc += pt_val[k] * t[pt_row[k] as usize];
            }
            *rc = acc;
        });
    }

    /// Scratch sized for the current pattern (allocates only when the pattern changed).
    fn size_scratch(&mut self) {
        let n = self.rows();
        for v in [&mut self.rhs, &mut self.sol, &mut self.tmp] {
            v.resize(n, Vec3A::ZERO);
        }
        self.d_inv.resize(n, Mat3A::IDENTITY);
        self.d_sm.resize(n, Mat3A::IDENTITY);
        self.tent_t.resize(n, Mat3A::IDENTITY);
        self.tent_r.resize(n, Mat3A::ZERO);
        self.tent_kind.resize(n, TENT_ZERO);
        self.pos.resize(n, Vec3A::ZERO);
        self.bound.resize(n, 0.0);
        self.l_inv.resize(n, Mat3A::IDENTITY);
        self.abs_sums.resize(self.a.off.len(), [Vec3A::ZERO; 2]);
        let p = &self.a.pattern;
        self.slot_row.clear();
        for i in 0..n {
            for _ in p.row_ptr[i]..p.row_ptr[i + 1] {
                self.slot_row.push(i as u32);
            }
        }
    }

    /// The smoother's weighted inverses [`Level::d_sm`], D⁻¹ and the prolongator smoother's ω
    /// from the current values.
    fn smoother(&mut self) {
        // ℓ1-scaled block Jacobi (module docs): b_i = row i's Gershgorin bound of L⁻¹·A·L⁻ᵀ.
        self.gershgorin();
        let (l_inv, bound) = (&self.l_inv, &self.bound);
        // D⁻¹ = L⁻ᵀ·L⁻¹ from the same factor as the bound.
        for_each_indexed(&mut self.d_inv, |i, d| *d = l_inv[i].transpose() * l_inv[i]);
        let d_inv = &self.d_inv;
        for_each_indexed(&mut self.d_sm, |i, d| {
            let b = bound[i];
            *d = d_inv[i] * (SMOOTHER_WEIGHT / if b.is_finite() && b > 0.0 { b } else { 1.0 });
        });
        // Prolongator smoother ω = 4/(3ρ̂), ρ̂ = POWER_MARGIN × a lower bound of ρ(D⁻¹A) (the
        // Gershgorin bound if that fails). Its size only affects the coarse space's quality
        // (PᵀAP is SPD for any ω), not the V-cycle's definiteness.
        let est = self.power_estimate();
        let rho = if est.is_finite() && est > 0.0 {
            POWER_MARGIN * est
        } else {
            self.bound.iter().fold(0.0f32, |m, &b| m.max(b))
        };
        self.omega = if rho.is_finite() && rho > 0.0 {
            4.0 / (3.0 * rho)
        } else {
            0.5
        };
    }

    /// An upper bound of ρ(D⁻¹A) = ρ(L⁻¹·A·L⁻ᵀ), D = L·Lᵀ block by block: Gershgorin on the
    /// symmetrically scaled matrix (unit diagonal blocks), far tighter than on D⁻¹A when the
    /// diagonal blocks are anisotropic (stiff in the cloth's plane, soft across it). The
    /// fallback when the power estimate fails.
    fn gershgorin(&mut self) -> f32 {
        let a = &self.a;
        for_each_indexed(&mut self.l_inv, |i, li| *li = chol_inv(a.diag[i]));
        // Each upper block B = L_i⁻¹·A_ij·L_j⁻ᵀ once: its absolute row sums (row i's share) and
        // column sums (row j's); then per row, in `for_row` order.
        let (l_inv, slot_row, col) = (&self.l_inv, &self.slot_row, &a.pattern.col);
        for_each_indexed(&mut self.abs_sums, |s, sums| {
            let b = l_inv[slot_row[s] as usize] * a.off[s] * l_inv[col[s] as usize].transpose();
            let (x, y, z) = (b.x_axis.abs(), b.y_axis.abs(), b.z_axis.abs());
            *sums = [
                x + y + z,
                Vec3A::new(x.element_sum(), y.element_sum(), z.element_sum()),
            ];
        });
        let sums = &self.abs_sums;
        each(self.par, &mut self.bound, |i, b| {
            let mut sum = abs_row_sums(&(l_inv[i] * a.diag[i] * l_inv[i].transpose()));
            for_row(a, i, |_, _, s| {
                if s != DIAG {
                    sum += sums[s][if slot_row[s] as usize == i { 0 } else { 1 }];
                }
            });
            *b = sum.max_element();
        });
        // max is order-independent: the same bits at any thread count.
        self.bound.iter().fold(0.0f32, |m, &b| m.max(b))
    }

    /// A lower bound of ρ(D⁻¹A): the largest Rayleigh quotient vᵀAv / vᵀDv (D⁻¹A is
    /// self-adjoint in the D inner product, so each is ≤ ρ) over v = (D⁻¹A)^k v₀, k <
    /// [`POWER_STEPS`], from a fixed pseudo-random v₀; one product with A per step, sums in fixed
    /// chunks (the same bits at any thread count). 0 if it fails (non-finite).
    fn power_estimate(&mut self) -> f32 {
        let (a, d_inv) = (&self.a, &self.d_inv);
        for_each_indexed(&mut self.sol, |i, v| {
            let h = (i as u32).wrapping_mul(0x9e37_79b9) ^ 0x85eb_ca6b;
            let f = |s: u32| (h.rotate_left(s) >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            *v = Vec3A::new(f(0), f(11), f(22));
        });
        let (mut est, mut scale) = (0.0f32, 1.0f32);
        for _ in 0..POWER_STEPS {
            let v = &self.sol;
            // u = A v; vᵀu, vᵀDv; the next v = D⁻¹u, scaled by the previous ‖v‖_D⁻¹ (bounded).
            let par = self.par;
            let [num, den] = product_sums(a, v, &mut self.tmp, &mut self.sums, par, |i, u| {
                let vi = v[i].as_dvec3();
                let t = [vi.dot(u.as_dvec3()), vi.dot((a.diag[i] * v[i]).as_dvec3())];
                *u = d_inv[i] * *u * scale;
                t
            });
            if !(num.is_finite() && den > 0.0) {
                return 0.0;
            }
            est = est.max((num / den) as f32);
            scale = (1.0 / den.sqrt()) as f32;
            std::mem::swap(&mut self.sol, &mut self.tmp);
        }
        est
    }

    /// Strength of connection into `strong` (per upper slot) and the aggregation of the nodes
    /// (Vaněk et al. §3) into `agg`; returns the aggregate count. Strength comes from the static
    /// [`Level::weight`] graph, not from the matrix values, so the hierarchy's structure is a
    /// function of the pattern and the rest shape alone (built once; a value-based strength flips
    /// at its threshold from one substep to the next and would rebuild it every solve): nodes b, c
    /// are strongly coupled if w_bc ≥ θ·(max_d w_bd · max_d w_cd)^½; a node's own
    /// translation–rotation coupling always counts. Serial and in node order: deterministic.
    fn aggregate(&mut self, theta: f32) -> usize {
        let a = &self.a;
        let k = self.k;
        let nodes = self.rows() / k;
        let p = &a.pattern;
        let w = &self.weight;
        let mut wmax = vec![0.0f32; nodes];
        for (s, &ws) in w.iter().enumerate() {
            let (i, j) = (self.slot_row[s] as usize, p.col[s] as usize);
            wmax[i / k] = wmax[i / k].max(ws);
            wmax[j / k] = wmax[j / k].max(ws);
        }
        let mut strong = std::mem::take(&mut self.strong);
        strong.clear();
        strong.extend((0..w.len()).map(|s| {
            let (i, j) = (self.slot_row[s] as usize, p.col[s] as usize);
            let (ni, nj) = (i / k, j / k);
            ni == nj || (w[s] > 0.0 && w[s] >= theta * (wmax[ni] * wmax[nj]).sqrt())
        }));
        let mut agg = std::mem::take(&mut self.agg);
        let strong_ref = &strong;
        // Strong neighbours c of node b, with the coupling weight.
        let neighbours = |b: usize, f: &mut dyn FnMut(usize, f32)| {
            for_row(a, k * b, |j, _, s| {
                if s != DIAG && j % k == 0 && j / k != b && strong_ref[s] {
                    f(j / k, w[s])
                }
            })
        };
        let count = greedy(nodes, &neighbours, &mut agg);
        self.strong = strong;
        self.agg = agg;
        count as usize
    }

    /// Patterns of P (over the strong couplings; [`Level::next_k`] coarse rows per aggregate:
    /// translation mA, with two the rotation mA + 1), Pᵀ, Q = A·P and the coarse matrix from
    /// `agg`; returns the coarse matrix.
    fn symbolic(&mut self, aggregates: usize, marker: &mut Vec<u32>) -> (BlockMatrix, Vec<f32>) {
        let a = &self.a;
        let n = self.rows();
        let m = self.next_k as u32;
        let coarse_rows = m as usize * aggregates;
        marker.clear();
        marker.resize(coarse_rows, NONE);
        self.p_ptr.clear();
        self.p_col.clear();
        self.p_ptr.push(0);
        for i in 0..n {
            let start = self.p_col.len();
            for_row(a, i, |j, _, s| {
                let c = self.agg[j / self.k];
                if (s == DIAG || self.strong[s]) && c != NONE && marker[c as usize] != i as u32 {
                    marker[c as usize] = i as u32;
                    self.p_col.push(m * c);
                    if m == 2 {
                        self.p_col.push(m * c + 1);
                    }
                }
            });
            self.p_col[start..].sort_unstable();
            self.p_ptr.push(self.p_col.len() as u32);
        }
        self.p_val.resize(self.p_col.len(), Mat3A::ZERO);
        marker.clear();
        marker.resize(coarse_rows, NONE);
        // Pᵀ by counting sort (fine rows ascending within each coarse row).
        self.pt_ptr.clear();
        self.pt_ptr.resize(coarse_rows + 1, 0);
        for &c in &self.p_col {
            self.pt_ptr[c as usize + 1] += 1;
        }
        for c in 0..coarse_rows {
            self.pt_ptr[c + 1] += self.pt_ptr[c];
        }
        let mut fill = self.pt_ptr.clone();
        self.pt_row.resize(self.p_col.len(), 0);
        self.pt_slot.resize(self.p_col.len(), 0);
        self.pt_val.resize(self.p_col.len(), Mat3A::ZERO);
        for i in 0..n {
            for s in self.p_ptr[i] as usize..self.p_ptr[i + 1] as usize {
                let c = self.p_col[s] as usize;
                let at = fill[c] as usize;
                self.pt_row[at] = i as u32;
                self.pt_slot[at] = s as u32;
                fill[c] += 1;
            }
        }
        // Q = A·P: union of P's rows over row i's blocks (weak ones included), from row i's first
        // P column on ([`Level::q_from`]).
        marker.fill(NONE);
        self.q_ptr.clear();
        self.q_col.clear();
        self.q_ptr.push(0);
        for i in 0..n {
            let start = self.q_col.len();
            let from = self.q_from(i);
            for_row(a, i, |j, _, _| {
                for s in self.p_ptr[j] as usize..self.p_ptr[j + 1] as usize {
                    let c = self.p_col[s];
                    if c >= from && marker[c as usize] != i as u32 {
                        marker[c as usize] = i as u32;
                        self.q_col.push(c);
                    }
                }
            });
            self.q_col[start..].sort_unstable();
            self.q_ptr.push(self.q_col.len() as u32);
        }
        self.q_val.resize(self.q_col.len(), Mat3A::ZERO);
        // Coarse pattern: (a, b), b > a, for P_ia and Q_ib nonzero.
        marker.fill(NONE);
        let mut pairs = Vec::new();
        for c in 0..coarse_rows {
            for k in self.pt_ptr[c] as usize..self.pt_ptr[c + 1] as usize {
                let i = self.pt_row[k] as usize;
                for &b in &self.q_col[self.q_ptr[i] as usize..self.q_ptr[i + 1] as usize] {
                    if b as usize > c && marker[b as usize] != c as u32 {
                        marker[b as usize] = c as u32;
                        pairs.push([c as u32, b]);
                    }
                }
            }
        }
        let coarse = BlockMatrix::new(BlockPattern::from_pairs(coarse_rows, &pairs));
        // Coarse weights: the fine weights between two aggregates, summed (on all four blocks
        // of the node pair); fine couplings counted once, by their translation block.
        let mut weight = vec![0.0f32; coarse.off.len()];
        let (k, p) = (self.k, &self.a.pattern);
        for (s, &ws) in self.weight.iter().enumerate() {
            let (i, j) = (self.slot_row[s] as usize, p.col[s] as usize);
            if i % k != 0 || j % k != 0 {
                continue;
            }
            let (ca, cb) = (self.agg[i / k], self.agg[j / k]);
            if ca == NONE || cb == NONE || ca == cb {
                continue;
            }
            let (lo, hi) = (ca.min(cb), ca.max(cb));
            for (r, c) in (0..m).flat_map(|r| (0..m).map(move |c| (r, c))) {
                if let Some(t) = coarse.pattern.slot(m * lo + r, m * hi + c) {
                    weight[t] += ws;
                }
            }
        }
        self.maps(&coarse);
        (coarse, weight)
    }

    /// Where each term of the products in [`Level::numeric`] lands, so the per-solve refill
    /// needs no search: per entry of `for_row` (row i's entries start at i + row_ptr[i] +
    /// lower_ptr[i]) its P column's offset in P row i ([`NONE`]: no term); per (entry j of row i,
    /// P slot of row j) the offset in Q row i ([`NONE`]: a column below [`Level::q_from`], no
    /// term); per (coarse row c, Pᵀ entry, Q entry with column
    /// ≥ c) the offset in the coarse row's [diagonal, upper blocks] (0: the diagonal).
    fn maps(&mut self, coarse: &BlockMatrix) {
        let (a, n, k, m) = (&self.a, self.rows(), self.k, self.next_k as u32);
        self.p_map.clear();
        for i in 0..n {
            let cols = &self.p_col[self.p_ptr[i] as usize..self.p_ptr[i + 1] as usize];
            for_row(a, i, |j, _, s| {
                let aj = self.agg[j / k];
                self.p_map
                    .push(if (s == DIAG || self.strong[s]) && aj != NONE {
                        cols.binary_search(&(m * aj)).unwrap_or(0) as u32
                    } else {
                        NONE
                    });
            });
        }
        self.q_map.clear();
        self.q_map_ptr.clear();
        self.q_map_ptr.push(0);
        for i in 0..n {
            let cols = &self.q_col[self.q_ptr[i] as usize..self.q_ptr[i + 1] as usize];
            let from = self.q_from(i);
            for_row(a, i, |j, _, _| {
                for s in self.p_ptr[j] as usize..self.p_ptr[j + 1] as usize {
                    let c = self.p_col[s];
                    self.q_map.push(if c >= from {
                        cols.binary_search(&c).unwrap_or(0) as u32
                    } else {
                        NONE
                    });
                }
            });
            self.q_map_ptr.push(self.q_map.len() as u32);
        }
        let cp = &coarse.pattern;
        self.ptq_first.resize(self.pt_row.len(), 0);
        self.ptq_target.clear();
        self.ptq_ptr.clear();
        self.ptq_ptr.push(0);
        for c in 0..cp.rows() {
            let cols = &cp.col[cp.row_ptr[c] as usize..cp.row_ptr[c + 1] as usize];
            for e in self.pt_ptr[c] as usize..self.pt_ptr[c + 1] as usize {
                let i = self.pt_row[e] as usize;
                let (lo, hi) = (self.q_ptr[i] as usize, self.q_ptr[i + 1] as usize);
                let first = lo + self.q_col[lo..hi].partition_point(|&b| (b as usize) < c);
                self.ptq_first[e] = first as u32;
                for &b in &self.q_col[first..hi] {
                    self.ptq_target.push(if b as usize == c {
                        0
                    } else {
                        1 + cols.binary_search(&b).unwrap_or(0) as u32
                    });
                }
            }
            self.ptq_ptr.push(self.ptq_target.len() as u32);
        }
        self.coarse_slot_row.clear();
        for c in 0..cp.rows() {
            for _ in cp.row_ptr[c]..cp.row_ptr[c + 1] {
                self.coarse_slot_row.push(c as u32);
            }
        }
        self.ac_ptr.clear();
        self.ac_ptr
            .extend((0..=cp.rows()).map(|c| (c as u32) + cp.row_ptr[c]));
        self.ac_val.resize(cp.rows() + cp.col.len(), Mat3A::ZERO);
    }

    /// P, Q and the coarse matrix's values from the current values (patterns and term maps from
    /// `symbolic`). Every row of each product is summed by one thread in a fixed order, in
    /// parallel over row ranges above [`super::reduce::PARALLEL_FROM`] rows: the same bits at
    /// any thread count.
    fn numeric(&mut self, coarse: &mut BlockMatrix) {
        let a = &self.a;
        let (omega, d_inv, agg, k) = (self.omega, &self.d_inv, &self.agg, self.k);
        let rotations = self.next_k == 2;
        let (tt, tr, p_map) = (&self.tent_t, &self.tent_r, &self.p_map);
        let (row_ptr, lower_ptr) = (&a.pattern.row_ptr, &a.pattern.lower_ptr);
        // P_i,c += [i = j] T_ic − ω D_i⁻¹ A_ij T_jc over i and its strong neighbours j, c the
        // translation and rotation columns of j's aggregate.
        let tk = &self.tent_kind;
        let par = self.par;
        for_each_row(&self.p_ptr, &mut self.p_val, par, |i, vals| {
            vals.fill(Mat3A::ZERO);
            let first = i + (row_ptr[i] + lower_ptr[i]) as usize;
            // Σ_j A_ij·T_jc per column pair c first, then −ω_i D_i⁻¹ times each sum.
            let mut e = first;
            for_row(a, i, |j, m, _| {
                let c = p_map[e];
                e += 1;
                if c != NONE {
                    let c = c as usize;
                    match tk[j] {
                        TENT_ZERO => {}
                        TENT_IDENTITY => vals[c] += m,
                        _ => vals[c] += m * tt[j],
                    }
                    if rotations {
                        vals[c + 1] += m * tr[j];
                    }
                }
            });
            let wd = d_inv[i] * -omega;
            for v in vals.iter_mut() {
                *v = wd * *v;
            }
            if agg[i / k] != NONE {
                let c = p_map[first] as usize;
                vals[c] += tt[i];
                if rotations {
                    vals[c + 1] += tr[i];
                }
            }
        });
        // Pᵀ's blocks by coarse rows (the restriction reads them in order).
        let (p_val, pt_slot) = (&self.p_val, &self.pt_slot);
        for_each_indexed(&mut self.pt_val, |e, m| {
            *m = p_val[pt_slot[e] as usize].transpose()
        });
        // Q = A·P row by row.
        let (p_ptr, p_val, q_map, q_map_ptr) =
            (&self.p_ptr, &self.p_val, &self.q_map, &self.q_map_ptr);
        for_each_row(&self.q_ptr, &mut self.q_val, par, |i, vals| {
            vals.fill(Mat3A::ZERO);
            let mut e = q_map_ptr[i] as usize;
            for_row(a, i, |j, m, _| {
                for pv in &p_val[p_ptr[j] as usize..p_ptr[j + 1] as usize] {
                    let t = q_map[e];
                    e += 1;
                    if t != NONE {
                        vals[t as usize] += m * *pv;
                    }
                }
            });
        });
        // A_c = Pᵀ·Q, coarse row by coarse row (diagonal and upper blocks only), into `ac_val`
        // ([diagonal, upper blocks] per coarse row).
        let (pt_ptr, pt_row, pt_val, q_ptr, q_val) = (
            &self.pt_ptr,
            &self.pt_row,
            &self.pt_val,
            &self.q_ptr,
            &self.q_val,
        );
        let (first, target, ptq_ptr) = (&self.ptq_first, &self.ptq_target, &self.ptq_ptr);
        for_each_row(&self.ac_ptr, &mut self.ac_val, par, |c, row| {
            row.fill(Mat3A::ZERO);
            let mut t = ptq_ptr[c] as usize;
            for e in pt_ptr[c] as usize..pt_ptr[c + 1] as usize {
                let i = pt_row[e] as usize;
                let pt = pt_val[e];
                for qv in &q_val[first[e] as usize..q_ptr[i + 1] as usize] {
                    row[target[t] as usize] += pt * *qv;
                    t += 1;
                }
            }
        });
        // Symmetrize the diagonal blocks (rounding). A rotation about the line of a collinear
        // aggregate (or any rotation of a one-vertex aggregate) moves nothing: its coarse row is
        // zero. A small multiple of the translation stiffness keeps the coarse matrix SPD.
        let (ac_ptr, ac_val) = (&self.ac_ptr, &self.ac_val);
        let sym = |c: usize| {
            let d = ac_val[ac_ptr[c] as usize];
            (d + d.transpose()) * 0.5
        };
        for_each_indexed(&mut coarse.diag, |c, d| {
            *d = sym(c);
            if rotations && c % 2 == 1 {
                let t = sym(c - 1);
                let eps = ROTATION_FLOOR * (t.x_axis.x + t.y_axis.y + t.z_axis.z) / 3.0;
                *d += Mat3A::from_diagonal(glam::Vec3::splat(eps.max(f32::MIN_POSITIVE)));
            }
        });
        let slot_row = &self.coarse_slot_row;
        for_each_indexed(&mut coarse.off, |s, m| {
            let c = slot_row[s] as usize;
            *m = ac_val[s + c + 1];
        });
    }

    /// Tentative prolongator of the rigid-body modes (translations t and rotations φ = θ·ℓ of
    /// each aggregate about its centre c_A), the next level's node positions and its scale ℓ.
    /// A fine row (vertex at x): S·[I, −[x − c_A]×/ℓ]; a coarse translation row of node b (centre
    /// c_b): [I, −[c_b − c_A]×/ℓ]; a coarse rotation row: [0, (ℓ_b/ℓ) I]: the coarse nodes
    /// reproduce every rigid motion of their aggregate exactly (Vaněk et al. §2, Tamstorf et al. §4).
    fn tentative(
        &mut self,
        aggregates: usize,
        filter: Option<&[Filter]>,
        next_pos: &mut [Vec3A],
    ) -> f32 {
        let k = self.k;
        let nodes = self.rows() / k;
        self.centers.clear();
        self.centers.resize(aggregates, Vec3A::ZERO);
        self.members.clear();
        self.members.resize(aggregates, 0);
        for b in 0..nodes {
            let c = self.agg[b];
            if c != NONE {
                self.centers[c as usize] += self.pos[k * b];
                self.members[c as usize] += 1;
            }
        }
        for (c, &m) in self.centers.iter_mut().zip(&self.members) {
            *c /= m.max(1) as f32;
        }
        let (mut sum, mut count) = (0.0f64, 0usize);
        for b in 0..nodes {
            let c = self.agg[b];
            if c != NONE {
                sum += (self.pos[k * b] - self.centers[c as usize]).length_squared() as f64;
                count += 1;
            }
        }
        let ell = if sum > 0.0 {
            (sum / count as f64).sqrt() as f32
        } else {
            1.0
        };
        let (centers, pos, agg, own) = (&self.centers, &self.pos, &self.agg, self.scale);
        let cross = |d: Vec3A| -> Mat3A {
            // −[d]×: the displacement θ × d of a rotation θ about the centre, per unit θ.
            Mat3A::from_cols(
                Vec3A::new(0.0, d.z, -d.y),
                Vec3A::new(-d.z, 0.0, d.x),
                Vec3A::new(d.y, -d.x, 0.0),
            ) * (-1.0 / ell)
        };
        let rows = self.rows();
        let tent_r = &mut self.tent_r;
        for i in 0..rows {
            let c = agg[i / k];
            if c == NONE {
                self.tent_t[i] = Mat3A::ZERO;
                self.tent_kind[i] = TENT_ZERO;
                tent_r[i] = Mat3A::ZERO;
                continue;
            }
            let d = pos[i] - centers[c as usize];
            if k == 1 {
                let sm = filter.map_or(Mat3A::IDENTITY, |f| Mat3A::from(f[i].matrix()));
                self.tent_t[i] = sm;
                self.tent_kind[i] = match filter.map(|f| f[i]) {
                    None | Some(Filter::Free) => TENT_IDENTITY,
                    Some(Filter::Fixed) => TENT_ZERO,
                    _ => TENT_OTHER,
                };
                tent_r[i] = sm * cross(d);
            } else if i % 2 == 0 {
                self.tent_t[i] = Mat3A::IDENTITY;
                self.tent_kind[i] = TENT_IDENTITY;
                tent_r[i] = cross(d);
            } else {
                self.tent_t[i] = Mat3A::ZERO;
                self.tent_kind[i] = TENT_ZERO;
                tent_r[i] = Mat3A::from_diagonal(glam::Vec3::splat(own / ell));
            }
        }
        let m = self.next_k;
        for (i, p) in next_pos.iter_mut().enumerate() {
            *p = centers[i / m];
        }
        ell
    }
}

impl Coarsest {
    /// Factors `a` densely if it is small enough, else marks block Jacobi.
    fn factor(&mut self, a: &BlockMatrix) {
        let n = a.diag.len();
        self.dense = n <= DENSE_MAX;
        if !self.dense {
            return;
        }
        let m = 3 * n;
        self.m = m;
        self.l.clear();
        self.l.resize(m * m, 0.0);
        self.work.resize(m, 0.0);
        let set = |l: &mut Vec<f64>, i: usize, j: usize, b: &Mat3A| {
            for r in 0..3 {
                for c in 0..3 {
                    let v = b.col(c)[r] as f64;
                    l[(3 * i + r) * m + 3 * j + c] = v;
                    l[(3 * j + c) * m + 3 * i + r] = v;
                }
            }
        };
        for i in 0..n {
            set(&mut self.l, i, i, &a.diag[i]);
            let p = &a.pattern;
            for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                set(&mut self.l, i, p.col[s] as usize, &a.off[s]);
            }
        }
        // In-place Cholesky (lower) of the matrix with each node's diagonal shifted by
        // ε = PIVOT_FLOOR × its block's largest diagonal entry, as the smoother's blocks
        // ([`chol_inv`]); a pivot still below ε/2 (the matrix indefinite beyond rounding, or a
        // direction filtered out of every fine row) takes ε (1 for a zero block, whose
        // right-hand side is zero). The factor stays SPD with L⁻¹ bounded: a preconditioner,
        // not an exact solve, there.
        let l = &mut self.l;
        for j in 0..m {
            let block = &a.diag[j / 3];
            let eps = PIVOT_FLOOR * block.x_axis.x.max(block.y_axis.y).max(block.z_axis.z);
            let eps = if eps > 0.0 && eps.is_finite() {
                eps as f64
            } else {
                1.0
            };
            let mut d = l[j * m + j] + eps;
            for k in 0..j {
                d -= l[j * m + k] * l[j * m + k];
            }
            let d = if d > 0.5 * eps && d.is_finite() {
                d
            } else {
                eps
            };
            let dj = d.sqrt();
            l[j * m + j] = dj;
            for i in j + 1..m {
                let mut v = l[i * m + j];
                for k in 0..j {
                    v -= l[i * m + k] * l[j * m + k];
                }
                l[i * m + j] = v / dj;
            }
        }
    }

    /// rᵀ·M⁻¹·r of [`Coarsest::solve`]'s M⁻¹: ‖L⁻¹r‖² for the dense factor L·Lᵀ (the forward
    /// substitution only), Σ rᵢ·D_i⁻¹rᵢ for block Jacobi; f64.
    fn quadratic(&mut self, level: &Level, r: &[Vec3A], partials: &mut Partials) -> f64 {
        if !self.dense {
            let d_inv = &level.d_inv;
            return sum_chunks(r.len(), partials, |i| {
                r[i].as_dvec3().dot((d_inv[i] * r[i]).as_dvec3())
            });
        }
        let (m, l, w) = (self.m, &self.l, &mut self.work);
        for (i, ri) in r.iter().enumerate() {
            for k in 0..3 {
                w[3 * i + k] = ri[k] as f64;
            }
        }
        let mut sum = 0.0;
        for i in 0..m {
            let mut v = w[i];
            for k in 0..i {
                v -= l[i * m + k] * w[k];
            }
            w[i] = v / l[i * m + i];
            sum += w[i] * w[i];
        }
        sum
    }

    fn solve(&mut self, level: &Level, r: &[Vec3A], x: &mut [Vec3A]) {
        if !self.dense {
            for_each_indexed(x, |i, xi| *xi = level.d_inv[i] * r[i]);
            return;
        }
        let (m, l, w) = (self.m, &self.l, &mut self.work);
        for (i, ri) in r.iter().enumerate() {
            for k in 0..3 {
                w[3 * i + k] = ri[k] as f64;
            }
        }
        for i in 0..m {
            let mut v = w[i];
            for k in 0..i {
                v -= l[i * m + k] * w[k];
            }
            w[i] = v / l[i * m + i];
        }
        for i in (0..m).rev() {
            let mut v = w[i];
            for k in i + 1..m {
                v -= l[k * m + i] * w[k];
            }
            w[i] = v / l[i * m + i];
        }
        for (i, xi) in x.iter_mut().enumerate() {
            *xi = Vec3A::new(w[3 * i] as f32, w[3 * i + 1] as f32, w[3 * i + 2] as f32);
        }
    }
}

impl Amg {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of levels (1 = only the fine level, solved by the coarsest solver).
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Rows of each level, finest first.
    pub fn level_sizes(&self) -> Vec<usize> {
        self.levels.iter().map(|l| l.rows()).collect()
    }

    /// Off-diagonal blocks (upper half) of each level, finest first.
    pub fn level_blocks(&self) -> Vec<usize> {
        self.levels.iter().map(|l| l.a.off.len()).collect()
    }

    /// Builds the hierarchy's structure for `a`'s pattern and the rest shape `rest` (m):
    /// aggregates, patterns, scratch. Once per pattern.
    fn setup(&mut self, a: &BlockMatrix, rest: &[glam::Vec3]) {
        self.levels.clear();
        let mut l0 = Level {
            a: BlockMatrix::new(a.pattern.clone()),
            k: 1,
            scale: 1.0,
            par: parallel(a.diag.len()),
            ..Default::default()
        };
        l0.size_scratch();
        let p = &a.pattern;
        l0.weight = (0..p.col.len())
            .map(|s| {
                let (i, j) = (l0.slot_row[s] as usize, p.col[s] as usize);
                let d2 = (rest[i] - rest[j]).length_squared();
                if p.weak[s] {
                    0.0
                } else {
                    1.0 / d2.max(1e-12)
                }
            })
            .collect();
        self.levels.push(l0);
        self.rebuilds += 1;
        loop {
            let l = self.levels.len() - 1;
            let level = &mut self.levels[l];
            let (n, nodes) = (level.rows(), level.rows() / level.k);
            if n <= DENSE_MAX || l + 1 == MAX_LEVELS {
                break;
            }
            let count = level.aggregate(THETA);
            // Stop where aggregation no longer coarsens (e.g. everything fixed or decoupled).
            if count == 0 || count * 10 > nodes * 9 {
                level.agg.clear();
                level.strong.clear();
                break;
            }
            level.next_k = next_k(l);
            level.coarse_rows = level.next_k * count;
            let (coarse, weight) = level.symbolic(count, &mut self.marker);
            let par =
                self.levels[0].par && (parallel(coarse.diag.len()) || parallel(coarse.off.len()));
            let mut next = Level {
                a: coarse,
                k: next_k(l),
                weight,
                par,
                ..Default::default()
            };
            next.size_scratch();
            self.levels.push(next);
        }
    }

    /// Builds (or refills) the hierarchy for Ã = S·A·S + (I − S), with the rigid-body modes about
    /// the current vertex positions `x` (m) and the structure from the rest shape `rest` (m).
    pub fn build(
        &mut self,
        a: &BlockMatrix,
        filter: &[Filter],
        x: &[glam::Vec3],
        rest: &[glam::Vec3],
    ) {
        if self.levels.is_empty() || self.levels[0].a.pattern != a.pattern {
            self.setup(a, rest);
        }
        {
            let l0 = &mut self.levels[0];
            for_each_indexed(&mut l0.a.diag, |i, d| {
                *d = filtered_diag(a.diag[i], filter[i])
            });
            let slot_row = &l0.slot_row;
            let col = &a.pattern.col;
            for_each_indexed(&mut l0.a.off, |s, m| {
                *m = filtered(
                    a.off[s],
                    filter[slot_row[s] as usize],
                    filter[col[s] as usize],
                )
            });
            for_each_indexed(&mut l0.pos, |i, p| *p = x[i].into());
        }
        for l in 0..self.levels.len() {
            self.levels[l].smoother();
            if l + 1 == self.levels.len() {
                self.coarsest.factor(&self.levels[l].a);
                break;
            }
            let (fine, rest) = self.levels.split_at_mut(l + 1);
            let filter = (l == 0).then_some(filter);
            let count = fine[l].coarse_rows / fine[l].next_k;
            rest[0].scale = fine[l].tentative(count, filter, &mut rest[0].pos);
            fine[l].numeric(&mut rest[0].a);
        }
    }

    /// rᵀ·M⁻¹·r (f64) for the M⁻¹ of [`Amg::apply`], at about half a V-cycle's cost (the
    /// downward half: `quadratic`); equal to rᵀ·(M⁻¹r) up to rounding.
    pub fn quadratic(&mut self, r: &[Vec3A], partials: &mut Partials) -> f64 {
        quadratic(&mut self.levels, &mut self.coarsest, r, partials)
    }

    /// x = M⁻¹·r, one V-cycle (symmetric positive definite on Ã's space).
    pub fn apply(&mut self, r: &[Vec3A], x: &mut [Vec3A]) {
        cycle(&mut self.levels, &mut self.coarsest, r, x);
    }
}

/// rᵀ·M⁻¹·r of the V-cycle M⁻¹ ([`cycle`]) from its downward half. With W the smoother's
/// block-diagonal weights (symmetric), pre-smoothing x₁ = W·r, coarse correction and
/// post-smoothing make M⁻¹ = (2W − W·A·W) + (I − W·A)·P·M_c⁻¹·Pᵀ·(I − A·W), so
/// rᵀM⁻¹r = x₁ᵀ(r + t) + r_cᵀM_c⁻¹r_c with t = r − A·x₁ and r_c = Pᵀ·t, the same pre-smoothing
/// residual and restriction as the cycle's: one product with A per level instead of two, and no
/// prolongation. Each level's sum in f64 over fixed chunks (the same bits at any thread count).
fn quadratic(
    levels: &mut [Level],
    coarsest: &mut Coarsest,
    r: &[Vec3A],
    partials: &mut Partials,
) -> f64 {
    let Some((lv, rest)) = levels.split_first_mut() else {
        return dot(r, r, partials);
    };
    if rest.is_empty() {
        return coarsest.quadratic(lv, r, partials);
    }
    let d_sm = &lv.d_sm;
    let mut x = std::mem::take(&mut lv.sol);
    for_each_indexed(&mut x, |i, xi| *xi = d_sm[i] * r[i]);
    product(&lv.a, &x, &mut lv.tmp, lv.par, |i, t| *t = r[i] - *t);
    let t = &lv.tmp;
    let own = sum_chunks(r.len(), partials, |i| {
        let xi = x[i].as_dvec3();
        xi.dot(r[i].as_dvec3()) + xi.dot(t[i].as_dvec3())
    });
    lv.sol = x;
    let next = &mut rest[0];
    let mut rc = std::mem::take(&mut next.rhs);
    lv.restrict(&mut rc);
    let coarse = quadratic(rest, coarsest, &rc, partials);
    rest[0].rhs = rc;
    own + coarse
}

fn cycle(levels: &mut [Level], coarsest: &mut Coarsest, r: &[Vec3A], x: &mut [Vec3A]) {
    let Some((lv, rest)) = levels.split_first_mut() else {
        x.copy_from_slice(r);
        return;
    };
    if rest.is_empty() {
        coarsest.solve(lv, r, x);
        return;
    }
    let d_sm = &lv.d_sm;
    // Pre-smoothing from x = 0: x = ω D⁻¹ r.
    for_each_indexed(x, |i, xi| *xi = d_sm[i] * r[i]);
    product(&lv.a, x, &mut lv.tmp, lv.par, |i, t| *t = r[i] - *t);
    // Restriction r_c = Pᵀ·(r − A x), per coarse row in fine-row order.
    let next = &mut rest[0];
    let mut rc = std::mem::take(&mut next.rhs);
    let mut xc = std::mem::take(&mut next.sol);
    lv.restrict(&mut rc);
    cycle(rest, coarsest, &rc, &mut xc);
    // Prolongation x += P·x_c.
    {
        let (p_ptr, p_col, p_val, xc) = (&lv.p_ptr, &lv.p_col, &lv.p_val, &xc);
        each(lv.par, x, |i, xi| {
            for s in p_ptr[i] as usize..p_ptr[i + 1] as usize {
                *xi += p_val[s] * xc[p_col[s] as usize];
            }
        });
    }
    rest[0].rhs = rc;
    rest[0].sol = xc;
    // Post-smoothing: x += ω D⁻¹ (r − A x).
    product(&lv.a, x, &mut lv.tmp, lv.par, |i, t| *t = r[i] - *t);
    let t = &lv.tmp;
    for_each_indexed(x, |i, xi| *xi += d_sm[i] * t[i]);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use glam::Vec3;

    /// Membrane stiffness of a triangulated n×m grid with cell size (dx, dy): every edge a spring
    /// block k·(e eᵀ/|e|²)·(area of its triangles)/|e|² plus a small isotropic part (shear, bending
    /// proxy), plus a mass term; stiff like cloth at h = 1/120 s. Returns A and the filter (the
    /// first row fixed) and the positions.
    pub(crate) fn membrane(
        nx: usize,
        ny: usize,
        dx: f32,
        dy: f32,
    ) -> (BlockMatrix, Vec<Filter>, Vec<Vec3>) {
        let id = |x: usize, y: usize| (y * nx + x) as u32;
        let pos = |i: u32| {
            let (x, y) = (i as usize % nx, i as usize / nx);
            Vec3::new(x as f32 * dx, y as f32 * dy, 0.0)
        };
        let mut tris = Vec::new();
        for y in 0..ny - 1 {
            for x in 0..nx - 1 {
                tris.push([id(x, y), id(x + 1, y), id(x + 1, y + 1)]);
                tris.push([id(x, y), id(x + 1, y + 1), id(x, y + 1)]);
            }
        }
        let pairs: Vec<[u32; 2]> = tris
            .iter()
            .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[0], t[2]]])
            .collect();
        let n = nx * ny;
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, &pairs));
        let mass = 0.15 * dx * dy;
        for d in a.diag.iter_mut() {
            *d = Mat3A::from_diagonal(Vec3::splat(mass));
        }
        let area = 0.5 * dx * dy;
        let h2k = 2000.0 / (120.0 * 120.0);
        for t in &tris {
            for (i, j) in [(t[0], t[1]), (t[1], t[2]), (t[0], t[2])] {
                let e = pos(j) - pos(i);
                let l2 = e.length_squared();
                let k = Mat3A::from_cols(
                    (e * e.x / l2).into(),
                    (e * e.y / l2).into(),
                    (e * e.z / l2).into(),
                ) * (h2k * area / l2)
                    + Mat3A::from_diagonal(Vec3::splat(h2k * area * 0.01 / l2));
                a.diag[i as usize] += k;
                a.diag[j as usize] += k;
                let s = a.pattern.slot(i.min(j), i.max(j)).unwrap();
                a.off[s] -= k;
            }
        }
        let filter = (0..n)
            .map(|i| if i < nx { Filter::Fixed } else { Filter::Free })
            .collect();
        (a, filter, (0..n as u32).map(pos).collect())
    }

    fn rand_vec(n: usize, seed: u64) -> Vec<Vec3A> {
        let mut unit = crate::fixtures::unit_random(seed);
        let mut f = || unit() * 2.0 - 1.0;
        (0..n).map(|_| Vec3A::new(f(), f(), f())).collect()
    }

    fn dot(a: &[Vec3A], b: &[Vec3A]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.as_dvec3().dot(y.as_dvec3()))
            .sum()
    }

    /// The V-cycle is symmetric (uᵀM⁻¹v = vᵀM⁻¹u to rounding) and positive (rᵀM⁻¹r > 0) on
    /// filtered vectors, with a real hierarchy (several levels, dense coarsest).
    #[test]
    fn v_cycle_is_symmetric_positive() {
        let (a, filter, x) = membrane(40, 30, 0.02, 0.02);
        let mut amg = Amg::new();
        amg.build(&a, &filter, &x, &x);
        let sizes = amg.level_sizes();
        assert!(sizes.len() >= 3, "{sizes:?}");
        assert_eq!(sizes[0], 1200);
        assert!(*sizes.last().unwrap() <= DENSE_MAX, "{sizes:?}");
        let filt = |v: Vec<Vec3A>| -> Vec<Vec3A> {
            v.iter().zip(&filter).map(|(x, s)| s.apply_a(*x)).collect()
        };
        let n = a.diag.len();
        let (mut zu, mut zv) = (vec![Vec3A::ZERO; n], vec![Vec3A::ZERO; n]);
        for seed in 1..6u64 {
            let u = filt(rand_vec(n, seed));
            let v = filt(rand_vec(n, seed * 977 + 3));
            amg.apply(&u, &mut zu);
            amg.apply(&v, &mut zv);
            let (uv, vu) = (dot(&u, &zv), dot(&v, &zu));
            let scale = (dot(&u, &zu) * dot(&v, &zv)).sqrt();
            assert!((uv - vu).abs() < 1e-4 * scale, "{uv} vs {vu}");
            assert!(dot(&u, &zu) > 0.0 && dot(&v, &zv) > 0.0);
        }
    }

    /// The downward-half quadratic form equals rᵀ·(M⁻¹r) of the full V-cycle to rounding, on a
    /// several-level hierarchy and on one small enough to be only the dense coarsest level.
    #[test]
    fn quadratic_form_matches_the_v_cycle() {
        for (nx, ny) in [(40, 30), (5, 4)] {
            let (a, filter, x) = membrane(nx, ny, 0.02, 0.02);
            let mut amg = Amg::new();
            amg.build(&a, &filter, &x, &x);
            assert_cycle_is_its_quadratic_form(&mut amg, &filter, 1..4, 1e-5, (nx, ny));
        }
    }

    /// For filtered random r (`seeds`): rᵀ·(M⁻¹r) of the V-cycle is positive and equals the
    /// downward-half quadratic form within `tol` relative.
    fn assert_cycle_is_its_quadratic_form(
        amg: &mut Amg,
        filter: &[Filter],
        seeds: std::ops::Range<u64>,
        tol: f64,
        (nx, ny): (usize, usize),
    ) {
        let n = filter.len();
        let mut z = vec![Vec3A::ZERO; n];
        let mut partials = Partials::default();
        for seed in seeds {
            let r: Vec<Vec3A> = rand_vec(n, seed)
                .iter()
                .zip(filter)
                .map(|(v, f)| f.apply_a(*v))
                .collect();
            amg.apply(&r, &mut z);
            let full = dot(&r, &z);
            let half = amg.quadratic(&r, &mut partials);
            assert!(full > 0.0, "rᵀM⁻¹r = {full} ({nx}x{ny}, seed {seed})");
            assert!(
                (half - full).abs() < tol * full,
                "{half} vs {full} ({nx}x{ny}, seed {seed})"
            );
        }
    }

    /// Cloth lying on a body: every free vertex's contact normal prescribed. The aggregates'
    /// translations along that normal are filtered out of T up to f32 rounding, which leaves the
    /// first coarse level's diagonal blocks singular but for rounding; the V-cycle must stay
    /// positive definite (and equal to its quadratic form) regardless. Without the shift in
    /// [`chol_inv`], rᵀM⁻¹r came out negative here.
    #[test]
    fn v_cycle_stays_positive_definite_with_every_vertex_in_contact() {
        for (nx, ny) in [(60, 40), (33, 31)] {
            let (a, mut filter, x) = membrane(nx, ny, 0.01, 0.01);
            // A tilted normal, so that S·n is rounding rather than an exact zero.
            let normal = glam::Vec3::new(0.3, -0.2, 1.0).normalize();
            for f in filter.iter_mut().filter(|f| **f == Filter::Free) {
                *f = Filter::Plane(normal);
            }
            let mut amg = Amg::new();
            amg.build(&a, &filter, &x, &x);
            assert_cycle_is_its_quadratic_form(&mut amg, &filter, 1..9, 1e-4, (nx, ny));
        }
    }

    /// A coarse level with fewer rows than the parallel threshold but as many blocks runs its
    /// passes on the thread pool; the build and the V-cycle give the same bits on 1 and 2 threads.
    #[test]
    fn parallel_coarse_level_is_thread_count_independent() {
        // 32,400 vertices: a first coarse level (translations only) of about 3,600 rows.
        let (a, filter, x) = membrane(180, 180, 0.01, 0.01);
        let n = x.len();
        let run = |threads: usize| {
            crate::fixtures::on_threads(threads, || {
                let mut amg = Amg::new();
                amg.build(&a, &filter, &x, &x);
                let r = rand_vec(n, 3);
                let mut z = vec![Vec3A::ZERO; n];
                amg.apply(&r, &mut z);
                let q = amg.quadratic(&r, &mut Partials::default());
                (amg, z, q)
            })
        };
        let (amg, z1, q1) = run(1);
        let (_, z2, q2) = run(2);
        let l1 = &amg.levels[1];
        assert!(
            l1.par && !parallel(l1.rows()),
            "{:?} {:?}",
            amg.level_sizes(),
            amg.level_blocks()
        );
        assert!(z1
            .iter()
            .zip(&z2)
            .all(|(p, q)| p.to_array() == q.to_array()));
        assert_eq!(q1.to_bits(), q2.to_bits());
    }

    /// Refilling reuses the hierarchy's structure: no symbolic rebuild; the output depends on the
    /// current matrix only (the Workspace carries no state between substeps).
    #[test]
    fn refills_reuse_the_structure_and_carry_nothing_over() {
        let (a, filter, x) = membrane(30, 30, 0.02, 0.02);
        let mut amg = Amg::new();
        amg.build(&a, &filter, &x, &x);
        let first = amg.rebuilds;
        let r: Vec<Vec3A> = rand_vec(900, 5)
            .iter()
            .zip(&filter)
            .map(|(x, s)| s.apply_a(*x))
            .collect();
        let mut z1 = vec![Vec3A::ZERO; 900];
        amg.apply(&r, &mut z1);
        amg.build(&a, &filter, &x, &x);
        assert_eq!(amg.rebuilds, first);
        let mut z2 = vec![Vec3A::ZERO; 900];
        amg.apply(&r, &mut z2);
        assert_eq!(z1, z2);
        // New values and positions on the same pattern: values refilled, structure kept; a fresh
        // hierarchy built from the new matrix alone gives the same bits (nothing carried over).
        let mut b = a.clone();
        for d in b.diag.iter_mut() {
            *d *= 3.0;
        }
        for m in b.off.iter_mut().step_by(3) {
            *m *= 0.5;
        }
        let moved: Vec<Vec3> = x
            .iter()
            .map(|p| *p + Vec3::new(0.0, 0.0, p.x * p.y))
            .collect();
        amg.build(&b, &filter, &moved, &x);
        assert_eq!(amg.rebuilds, first);
        amg.apply(&r, &mut z1);
        let mut fresh = Amg::new();
        fresh.build(&b, &filter, &moved, &x);
        fresh.apply(&r, &mut z2);
        assert_eq!(z1, z2);
        assert_eq!(fresh.level_sizes(), amg.level_sizes());
    }

    /// Energy norm ‖e‖²_A of the level-0 matrix, f64.
    fn energy(a: &BlockMatrix, e: &[Vec3A]) -> f64 {
        let ae: Vec<Vec3A> = (0..e.len()).map(|i| a.row_mul_a(i, e)).collect();
        dot(e, &ae)
    }

    /// The ℓ1-scaled smoother contracts every error in the energy norm, ‖(I − W·A)e‖_A < ‖e‖_A
    /// (so the V-cycle is SPD), without a spectral estimate: also for the isolated stiff mode of
    /// two light vertices on a heavy sheet, which a power iteration from a random start misses
    /// (the prolongator's ω is taken from it; a smoother weighted by it amplifies that mode).
    #[test]
    fn smoother_contracts_in_the_energy_norm() {
        let (mut a, filter, x) = membrane(20, 20, 0.02, 0.02);
        // A heavy sheet (mass-dominated diagonal: D⁻¹A's spectrum near 1) with two light
        // vertices joined by a stiff spring (their mode near 2: an isolated eigenvalue of little
        // weight in a random start vector).
        let (i, j) = (210usize, 211usize);
        let light = a.diag[i].x_axis.x;
        for (v, d) in a.diag.iter_mut().enumerate() {
            if v != i && v != j {
                *d += Mat3A::from_diagonal(Vec3::splat(100.0 * light));
            }
        }
        let s = a.pattern.slot(i as u32, j as u32).unwrap();
        let k = Mat3A::from_diagonal(Vec3::new(1.0, 0.0, 0.0)) * (10.0 * light);
        a.diag[i] += k;
        a.diag[j] += k;
        a.off[s] -= k;
        let mut amg = Amg::new();
        amg.build(&a, &filter, &x, &x);
        let l0 = &amg.levels[0];
        let n = l0.rows();
        let mut errors: Vec<Vec<Vec3A>> = (1..5u64).map(|seed| rand_vec(n, seed)).collect();
        let mut spike = vec![Vec3A::ZERO; n];
        spike[i] = Vec3A::X;
        spike[j] = -Vec3A::X;
        errors.push(spike.clone());
        for e in &errors {
            let e: Vec<Vec3A> = e.iter().zip(&filter).map(|(v, f)| f.apply_a(*v)).collect();
            let ae: Vec<Vec3A> = (0..n).map(|r| l0.a.row_mul_a(r, &e)).collect();
            let next: Vec<Vec3A> = (0..n).map(|r| e[r] - l0.d_sm[r] * ae[r]).collect();
            let (before, after) = (energy(&l0.a, &e), energy(&l0.a, &next));
            assert!(after < 0.999 * before, "{after} vs {before}");
        }
        // The V-cycle is positive on the stiff mode too.
        let r: Vec<Vec3A> = (0..n).map(|r| a.row_mul_a(r, &spike)).collect();
        let mut z = vec![Vec3A::ZERO; n];
        amg.apply(&r, &mut z);
        assert!(dot(&r, &z) > 0.0);
    }

    /// The refilled coarse matrix (term maps, row-parallel products) is the Galerkin product PᵀÃP
    /// of the prolongator, plus the rotation floor on the rotation rows' diagonal.
    #[test]
    fn coarse_matrix_is_the_galerkin_product() {
        let (a, filter, x) = membrane(30, 24, 0.02, 0.01);
        let mut amg = Amg::new();
        amg.build(&a, &filter, &x, &x);
        // The first two coarse levels (translations only): 720 → 80 → 13 rows.
        assert!(amg.levels() >= 3, "{:?}", amg.level_sizes());
        for l in 0..2 {
            assert_eq!(amg.levels[l].next_k, 1);
            galerkin_level(&amg, l);
        }
        // A level with rotations: 32,400 → 3,600 → 402 → 52 → 16 rows (8 aggregates).
        let (a, filter, x) = membrane(180, 180, 0.01, 0.01);
        let mut amg = Amg::new();
        amg.build(&a, &filter, &x, &x);
        assert!(amg.levels() > ROTATIONS_FROM + 1, "{:?}", amg.level_sizes());
        assert_eq!(amg.levels[ROTATIONS_FROM].next_k, 2);
        galerkin_level(&amg, ROTATIONS_FROM);
    }

    /// Level l + 1's matrix against the dense PᵀÃP of level l's prolongator.
    fn galerkin_level(amg: &Amg, l: usize) {
        let (fine, coarse) = (&amg.levels[l], &amg.levels[l + 1].a);
        let (n, m) = (fine.rows(), coarse.diag.len());
        // Q = A·P keeps only the columns from each row's first P column on, which leaves out
        // 204 of 1,212 blocks here; the coarse matrix checked below is still the whole Galerkin
        // product.
        let mut whole = 0;
        for i in 0..n {
            let q = &fine.q_col[fine.q_ptr[i] as usize..fine.q_ptr[i + 1] as usize];
            assert!(q.iter().all(|&b| b >= fine.q_from(i)), "row {i}: {q:?}");
            let mut cols = std::collections::BTreeSet::<u32>::new();
            for_row(&fine.a, i, |j, _, _| {
                cols.extend(&fine.p_col[fine.p_ptr[j] as usize..fine.p_ptr[j + 1] as usize])
            });
            whole += cols.len();
        }
        assert!(
            fine.q_col.len() * 10 < whole * 9,
            "Q {} of {whole} blocks",
            fine.q_col.len()
        );
        // Dense P (3n × 3m) and Ã (3n × 3n), f64.
        let mut p = vec![0.0f64; 9 * n * m];
        for i in 0..n {
            for s in fine.p_ptr[i] as usize..fine.p_ptr[i + 1] as usize {
                let (c, b) = (fine.p_col[s] as usize, fine.p_val[s]);
                for (r, q) in (0..3).flat_map(|r| (0..3).map(move |q| (r, q))) {
                    p[(3 * i + r) * 3 * m + 3 * c + q] = b.col(q)[r] as f64;
                }
            }
        }
        let block = |i: usize, j: usize| -> Mat3A {
            if i == j {
                fine.a.diag[i]
            } else if let Some(s) = fine.a.pattern.slot(i.min(j) as u32, i.max(j) as u32) {
                if i < j {
                    fine.a.off[s]
                } else {
                    fine.a.off[s].transpose()
                }
            } else {
                Mat3A::ZERO
            }
        };
        // (PᵀÃP)_cd for coarse blocks c, d.
        let galerkin = |c: usize, d: usize| -> [[f64; 3]; 3] {
            let mut out = [[0.0f64; 3]; 3];
            for i in 0..n {
                for j in 0..n {
                    let aij = block(i, j);
                    if aij == Mat3A::ZERO {
                        continue;
                    }
                    for (r, q) in (0..3).flat_map(|r| (0..3).map(move |q| (r, q))) {
                        let mut sum = 0.0;
                        for u in 0..3 {
                            for v in 0..3 {
                                sum += p[(3 * i + u) * 3 * m + 3 * c + r]
                                    * aij.col(v)[u] as f64
                                    * p[(3 * j + v) * 3 * m + 3 * d + q];
                            }
                        }
                        out[r][q] += sum;
                    }
                }
            }
            out
        };
        let check = |got: Mat3A, want: [[f64; 3]; 3], scale: f64| {
            for (r, q) in (0..3).flat_map(|r| (0..3).map(move |q| (r, q))) {
                let g = got.col(q)[r] as f64;
                assert!(
                    (g - want[r][q]).abs() <= 1e-4 * scale,
                    "{g} vs {}",
                    want[r][q]
                );
            }
        };
        let cp = &coarse.pattern;
        for c in 0..m {
            let mut want = galerkin(c, c);
            let scale = (0..3).map(|r| want[r][r].abs()).fold(0.0, f64::max);
            if fine.next_k == 2 && c % 2 == 1 {
                let t = coarse.diag[c - 1];
                let eps = ROTATION_FLOOR * (t.x_axis.x + t.y_axis.y + t.z_axis.z) / 3.0;
                for (r, w) in want.iter_mut().enumerate() {
                    w[r] += eps as f64;
                }
            }
            check(coarse.diag[c], want, scale);
            for s in cp.row_ptr[c] as usize..cp.row_ptr[c + 1] as usize {
                check(coarse.off[s], galerkin(c, cp.col[s] as usize), scale);
            }
        }
    }
}
