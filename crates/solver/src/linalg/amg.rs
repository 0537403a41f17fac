//! Smoothed-aggregation algebraic multigrid (SA-AMG) V-cycle on the filtered 3×3 block system, the
//! MPCG preconditioner of Tamstorf, Jones & McCormick, "Smoothed aggregation multigrid for cloth
//! simulation" (SIGGRAPH Asia 2015), after Vaněk, Mandel & Brezina (Computing 56, 1996).
//!
//! The fine operator is the SPD matrix Ã = S·A·S + (I − S) MPCG works with (Boxerman 2003 §5.2; the
//! same one [`super::IncompleteCholesky`] factors); Tamstorf et al. §4 precondition exactly this
//! "pre-filtered" system. Each level ℓ has:
//!
//! - **Aggregates**: vertices coupled strongly, ‖A_ij‖_F ≥ θ_ℓ·(‖A_ii‖_F‖A_jj‖_F)^½ (θ₀ = 0.08,
//!   halved per level; couplings the pattern marks weak, bending-only, never count), grouped by the
//!   greedy three-pass aggregation of Vaněk et al. §3 (a root and its strong neighbours; leftovers
//!   join a neighbouring aggregate; the rest form their own). On a thin-triangle mesh the strong
//!   couplings are the short, stiff edges, so aggregates follow them (the point of measuring
//!   strength on the matrix rather than on the mesh).
//! - **Tentative prolongator** T: the near-null space is the three translations, T_{i,agg(i)} = S_i
//!   on the fine level (the filter: no coarse correction along a prescribed direction) and I below,
//!   so every level keeps 3×3 blocks. (Tamstorf et al. add the three rotations; their 6×6 coarse
//!   blocks are not implemented.)
//! - **Smoothed prolongator** P = (I − ω D⁻¹ Ã_s) T, ω = 4/(3 ρ̂), ρ̂ ≥ ρ(D⁻¹Ã) the block Gershgorin
//!   bound, Ã_s = Ã's diagonal and strong couplings only (Vaněk et al.'s filtered matrix: on
//!   thin triangles P then extends along the stiff direction only, and the coarse stencils stay
//!   as sparse as the fine one instead of doubling per level).
//! - **Galerkin coarse operator** A_{ℓ+1} = Pᵀ·A_ℓ·P (all of A_ℓ, so it is SPD whenever A_ℓ is).
//! - **Smoother**: one damped block-Jacobi sweep x += ω D⁻¹(r − A x) before and after the coarse
//!   correction. Jacobi is symmetric, so the V-cycle is a symmetric operator, and positive definite
//!   because ω ρ(D⁻¹A) ≤ 4/3 < 2 (a convergent smoother); MPCG needs exactly that.
//!
//! The coarsest level (≤ [`DENSE_MAX`] vertices) is solved by a dense f64 Cholesky factor.
//!
//! Reuse: the matrix values change every substep, its pattern rarely. The aggregates are recomputed
//! from the values every solve (one cheap pass, so the hierarchy is a function of the current matrix
//! alone, the same after a checkpoint resume), and the symbolic part of a level (patterns of P,
//! A·P and the coarse matrix, all scratch vectors) is rebuilt only when its aggregates change; the
//! numeric part refills values in place. Every row of every product is computed by one thread in
//! a fixed order, so results are bit-identical at any thread count; the V-cycle's passes are
//! row-parallel above [`super::reduce::PARALLEL_FROM`] rows.

use super::block_sparse::{transpose_mul, BlockMatrix, BlockPattern};
use super::incomplete_cholesky::{filtered, filtered_diag};
use super::mpcg::Filter;
use super::reduce::for_each_indexed;
use glam::{Mat3A, Vec3A};

/// Strength threshold θ₀ of the fine level (Vaněk et al. §3: 0.08, halved on each coarser level).
const THETA: f32 = 0.08;
/// Largest level solved by the dense Cholesky factor (vertices; 3× that unknowns).
pub const DENSE_MAX: usize = 48;
/// Most levels (the last one is solved directly or, if larger than [`DENSE_MAX`], by block Jacobi).
const MAX_LEVELS: usize = 12;
/// Not aggregated (no strong coupling: e.g. a fixed vertex, whose filtered row is the identity).
const NONE: u32 = u32::MAX;

/// One level of the hierarchy: its matrix and, except on the coarsest, the transfer to the next.
#[derive(Debug, Default, Clone)]
struct Level {
    a: BlockMatrix,
    /// Block diagonal inverse D⁻¹ (identity where a diagonal block is not invertible).
    d_inv: Vec<Mat3A>,
    /// Smoother and prolongator-smoother weight 4/(3 ρ̂).
    omega: f32,
    /// Tentative prolongator block of each row (S_i on the fine level, I below).
    tent: Vec<Mat3A>,
    /// Per upper slot: a strong coupling (aggregation and the prolongator smoother use only these).
    strong: Vec<bool>,
    /// Aggregate of each row ([`NONE`] if not aggregated), and the count.
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
    /// Q = A·P by rows, coarse columns ascending.
    q_ptr: Vec<u32>,
    q_col: Vec<u32>,
    q_val: Vec<Mat3A>,
    /// Per off-diagonal slot: its row (for row-parallel fills of the upper blocks).
    slot_row: Vec<u32>,
    /// V-cycle vectors of this level: right-hand side, solution, residual.
    rhs: Vec<Vec3A>,
    sol: Vec<Vec3A>,
    tmp: Vec<Vec3A>,
    /// Per-row Gershgorin bounds (scratch).
    bound: Vec<f32>,
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
    /// Aggregation scratch.
    agg_new: Vec<u32>,
    strong_new: Vec<bool>,
    marker: Vec<u32>,
    /// Symbolic rebuilds (one per level whose aggregates changed) since creation.
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

/// Frobenius norm squared of a block.
#[inline]
fn norm2(m: &Mat3A) -> f32 {
    m.x_axis.length_squared() + m.y_axis.length_squared() + m.z_axis.length_squared()
}

/// Row-wise absolute sums of a block (as a vector: one entry per row).
#[inline]
fn abs_row_sums(m: &Mat3A) -> Vec3A {
    m.x_axis.abs() + m.y_axis.abs() + m.z_axis.abs()
}

/// r − A·x into `out`, row-parallel.
fn residual(a: &BlockMatrix, r: &[Vec3A], x: &[Vec3A], out: &mut [Vec3A]) {
    for_each_indexed(out, |i, o| *o = r[i] - a.row_mul_a(i, x));
}

impl Level {
    fn rows(&self) -> usize {
        self.a.diag.len()
    }

    /// Scratch sized for the current pattern (allocates only when the pattern changed).
    fn size_scratch(&mut self) {
        let n = self.rows();
        for v in [&mut self.rhs, &mut self.sol, &mut self.tmp] {
            v.resize(n, Vec3A::ZERO);
        }
        self.d_inv.resize(n, Mat3A::IDENTITY);
        self.tent.resize(n, Mat3A::IDENTITY);
        self.bound.resize(n, 0.0);
        let p = &self.a.pattern;
        self.slot_row.clear();
        for i in 0..n {
            for _ in p.row_ptr[i]..p.row_ptr[i + 1] {
                self.slot_row.push(i as u32);
            }
        }
    }

    /// D⁻¹ and ω from the current values.
    fn smoother(&mut self) {
        let a = &self.a;
        for_each_indexed(&mut self.d_inv, |i, d| {
            let inv = a.diag[i].inverse();
            *d = if inv.is_finite() && a.diag[i].determinant() > 0.0 {
                inv
            } else {
                Mat3A::IDENTITY
            };
        });
        let d_inv = &self.d_inv;
        for_each_indexed(&mut self.bound, |i, b| {
            let mut sum = Vec3A::ZERO;
            for_row(a, i, |_, m, _| sum += abs_row_sums(&(d_inv[i] * m)));
            *b = sum.max_element();
        });
        // max is order-independent: the same bits at any thread count.
        let rho = self.bound.iter().fold(0.0f32, |m, &b| m.max(b));
        self.omega = if rho.is_finite() && rho > 0.0 {
            4.0 / (3.0 * rho)
        } else {
            0.5
        };
    }

    /// Strength of connection into `strong` (per upper slot) and the aggregation (Vaněk et al. §3)
    /// into `agg`; returns the aggregate count. Aggregation is serial and in row order:
    /// deterministic.
    fn aggregate(&self, theta: f32, strong: &mut Vec<bool>, agg: &mut Vec<u32>) -> usize {
        let a = &self.a;
        let n = self.rows();
        let p = &a.pattern;
        strong.resize(a.off.len(), false);
        let (slot_row, diag) = (&self.slot_row, &a.diag);
        for_each_indexed(strong, |s, st| {
            let (i, j) = (slot_row[s] as usize, p.col[s] as usize);
            let dd = (norm2(&diag[i]) * norm2(&diag[j])).sqrt();
            *st = !p.weak[s] && norm2(&a.off[s]) >= theta * theta * dd;
        });
        agg.clear();
        agg.resize(n, NONE);
        let strong = &*strong;
        let strong = |_i: usize, _j: usize, _m: &Mat3A, s: usize| s != DIAG && strong[s];
        let mut count = 0u32;
        // Pass 1: a root whose strong neighbours are all free takes them.
        for i in 0..n {
            if agg[i] != NONE {
                continue;
            }
            let (mut any, mut free) = (false, true);
            for_row(a, i, |j, m, w| {
                if strong(i, j, &m, w) {
                    any = true;
                    free &= agg[j] == NONE;
                }
            });
            if any && free {
                agg[i] = count;
                for_row(a, i, |j, m, w| {
                    if strong(i, j, &m, w) {
                        agg[j] = count;
                    }
                });
                count += 1;
            }
        }
        // Pass 2: leftovers join the aggregate of their strongest neighbour's aggregate (one of
        // pass 1's; in row order).
        let pass1 = count;
        for i in 0..n {
            if agg[i] != NONE {
                continue;
            }
            let (mut best, mut best_norm) = (NONE, 0.0f32);
            for_row(a, i, |j, m, w| {
                if strong(i, j, &m, w) && agg[j] != NONE && agg[j] < pass1 {
                    let s = norm2(&m);
                    if s > best_norm {
                        (best, best_norm) = (agg[j], s);
                    }
                }
            });
            agg[i] = best;
        }
        // Pass 3: what is left with strong neighbours forms aggregates with its free neighbours.
        for i in 0..n {
            if agg[i] != NONE {
                continue;
            }
            let mut any = false;
            for_row(a, i, |j, m, w| any |= strong(i, j, &m, w));
            if !any {
                continue;
            }
            agg[i] = count;
            for_row(a, i, |j, m, w| {
                if strong(i, j, &m, w) && agg[j] == NONE {
                    agg[j] = count;
                }
            });
            count += 1;
        }
        count as usize
    }

    /// Patterns of P (over the strong couplings), Pᵀ, Q = A·P and the coarse matrix from `agg`;
    /// returns the coarse matrix.
    fn symbolic(&mut self, coarse_rows: usize, marker: &mut Vec<u32>) -> BlockMatrix {
        let a = &self.a;
        let n = self.rows();
        marker.clear();
        marker.resize(coarse_rows, NONE);
        // P: aggregates of i and of its non-weak neighbours.
        self.p_ptr.clear();
        self.p_col.clear();
        self.p_ptr.push(0);
        for i in 0..n {
            let start = self.p_col.len();
            for_row(a, i, |j, _, s| {
                let c = self.agg[j];
                if (s == DIAG || self.strong[s]) && c != NONE && marker[c as usize] != i as u32 {
                    marker[c as usize] = i as u32;
                    self.p_col.push(c);
                }
            });
            self.p_col[start..].sort_unstable();
            self.p_ptr.push(self.p_col.len() as u32);
        }
        self.p_val.resize(self.p_col.len(), Mat3A::ZERO);
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
        for i in 0..n {
            for s in self.p_ptr[i] as usize..self.p_ptr[i + 1] as usize {
                let c = self.p_col[s] as usize;
                let at = fill[c] as usize;
                self.pt_row[at] = i as u32;
                self.pt_slot[at] = s as u32;
                fill[c] += 1;
            }
        }
        // Q = A·P: union of P's rows over row i's blocks (weak ones included).
        marker.fill(NONE);
        self.q_ptr.clear();
        self.q_col.clear();
        self.q_ptr.push(0);
        for i in 0..n {
            let start = self.q_col.len();
            for_row(a, i, |j, _, _| {
                for s in self.p_ptr[j] as usize..self.p_ptr[j + 1] as usize {
                    let c = self.p_col[s];
                    if marker[c as usize] != i as u32 {
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
        BlockMatrix::new(BlockPattern::from_pairs(coarse_rows, &pairs))
    }

    /// P, Q and the coarse matrix's values from the current values (patterns from `symbolic`).
    fn numeric(&mut self, coarse: &mut BlockMatrix) {
        let a = &self.a;
        let n = self.rows();
        let (omega, d_inv, tent, agg) = (self.omega, &self.d_inv, &self.tent, &self.agg);
        // P_i,agg(j) += [i = j] T_i − ω D_i⁻¹ A_ij T_j over i and its strong neighbours.
        for i in 0..n {
            let (lo, hi) = (self.p_ptr[i] as usize, self.p_ptr[i + 1] as usize);
            let (cols, vals) = (&self.p_col[lo..hi], &mut self.p_val[lo..hi]);
            vals.fill(Mat3A::ZERO);
            let wd = d_inv[i] * -omega;
            if agg[i] != NONE {
                let k = cols.binary_search(&agg[i]).unwrap_or(0);
                vals[k] += tent[i];
            }
            let strong = &self.strong;
            for_row(a, i, |j, m, s| {
                if (s == DIAG || strong[s]) && agg[j] != NONE {
                    let k = cols.binary_search(&agg[j]).unwrap_or(0);
                    vals[k] += wd * (m * tent[j]);
                }
            });
        }
        // Q = A·P row by row.
        for i in 0..n {
            let (lo, hi) = (self.q_ptr[i] as usize, self.q_ptr[i + 1] as usize);
            let (cols, vals) = (&self.q_col[lo..hi], &mut self.q_val[lo..hi]);
            vals.fill(Mat3A::ZERO);
            let (p_ptr, p_col, p_val) = (&self.p_ptr, &self.p_col, &self.p_val);
            for_row(a, i, |j, m, _| {
                for s in p_ptr[j] as usize..p_ptr[j + 1] as usize {
                    let k = cols.binary_search(&p_col[s]).unwrap_or(0);
                    vals[k] += m * p_val[s];
                }
            });
        }
        // A_c = Pᵀ·Q, coarse row by coarse row (diagonal and upper blocks only).
        coarse.diag.fill(Mat3A::ZERO);
        coarse.off.fill(Mat3A::ZERO);
        let cp = &coarse.pattern;
        for c in 0..cp.rows() {
            let (lo, hi) = (cp.row_ptr[c] as usize, cp.row_ptr[c + 1] as usize);
            let cols = &cp.col[lo..hi];
            let mut diag = Mat3A::ZERO;
            for k in self.pt_ptr[c] as usize..self.pt_ptr[c + 1] as usize {
                let i = self.pt_row[k] as usize;
                let pt = self.p_val[self.pt_slot[k] as usize].transpose();
                for q in self.q_ptr[i] as usize..self.q_ptr[i + 1] as usize {
                    let b = self.q_col[q] as usize;
                    if b == c {
                        diag += pt * self.q_val[q];
                    } else if b > c {
                        if let Ok(s) = cols.binary_search(&(b as u32)) {
                            coarse.off[lo + s] += pt * self.q_val[q];
                        }
                    }
                }
            }
            // Symmetrize the diagonal block (rounding).
            coarse.diag[c] = (diag + diag.transpose()) * 0.5;
        }
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
        // In-place Cholesky (lower); a pivot that is not clearly positive keeps its original
        // diagonal (the factor stays SPD: a preconditioner, not an exact solve, there).
        let l = &mut self.l;
        for j in 0..m {
            let orig = l[j * m + j];
            let mut d = orig;
            for k in 0..j {
                d -= l[j * m + k] * l[j * m + k];
            }
            let d = if d > 1e-9 * orig.abs() && d.is_finite() {
                d
            } else {
                orig.abs().max(1e-30)
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

    /// Builds (or refills) the hierarchy for Ã = S·A·S + (I − S).
    pub fn build(&mut self, a: &BlockMatrix, filter: &[Filter]) {
        if self.levels.is_empty() {
            self.levels.push(Level::default());
        }
        if self.levels[0].a.pattern != a.pattern {
            self.levels.truncate(1);
            let l0 = &mut self.levels[0];
            l0.a = BlockMatrix::new(a.pattern.clone());
            l0.agg.clear();
            l0.size_scratch();
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
            for_each_indexed(&mut l0.tent, |i, t| *t = Mat3A::from(filter[i].matrix()));
        }
        let mut theta = THETA;
        let mut l = 0;
        loop {
            self.levels[l].smoother();
            let n = self.levels[l].rows();
            let last = n <= DENSE_MAX || l + 1 == MAX_LEVELS;
            let count = if last {
                0
            } else {
                self.levels[l].aggregate(theta, &mut self.strong_new, &mut self.agg_new)
            };
            // Stop where aggregation no longer coarsens (e.g. everything fixed or decoupled).
            if last || count == 0 || count * 10 > n * 9 {
                self.levels.truncate(l + 1);
                self.levels[l].agg.clear();
                self.levels[l].strong.clear();
                self.coarsest.factor(&self.levels[l].a);
                return;
            }
            let level = &self.levels[l];
            if level.agg != self.agg_new
                || level.strong != self.strong_new
                || self.levels.len() == l + 1
                || level.coarse_rows != count
            {
                let level = &mut self.levels[l];
                std::mem::swap(&mut level.agg, &mut self.agg_new);
                std::mem::swap(&mut level.strong, &mut self.strong_new);
                level.coarse_rows = count;
                let coarse = level.symbolic(count, &mut self.marker);
                self.rebuilds += 1;
                self.levels.truncate(l + 1);
                let mut next = Level {
                    a: coarse,
                    ..Default::default()
                };
                next.size_scratch();
                self.levels.push(next);
            }
            let (fine, rest) = self.levels.split_at_mut(l + 1);
            fine[l].numeric(&mut rest[0].a);
            theta *= 0.5;
            l += 1;
        }
    }

    /// x = M⁻¹·r, one V-cycle (symmetric positive definite on Ã's space).
    pub fn apply(&mut self, r: &[Vec3A], x: &mut [Vec3A]) {
        cycle(&mut self.levels, &mut self.coarsest, r, x);
    }
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
    let (d_inv, w) = (&lv.d_inv, lv.omega);
    // Pre-smoothing from x = 0: x = ω D⁻¹ r.
    for_each_indexed(x, |i, xi| *xi = w * (d_inv[i] * r[i]));
    residual(&lv.a, r, x, &mut lv.tmp);
    // Restriction r_c = Pᵀ·(r − A x), per coarse row in fine-row order.
    let next = &mut rest[0];
    let mut rc = std::mem::take(&mut next.rhs);
    let mut xc = std::mem::take(&mut next.sol);
    {
        let (pt_ptr, pt_row, pt_slot, p_val, t) =
            (&lv.pt_ptr, &lv.pt_row, &lv.pt_slot, &lv.p_val, &lv.tmp);
        for_each_indexed(&mut rc, |c, rc| {
            let mut acc = Vec3A::ZERO;
            for k in pt_ptr[c] as usize..pt_ptr[c + 1] as usize {
                acc += transpose_mul(&p_val[pt_slot[k] as usize], t[pt_row[k] as usize]);
            }
            *rc = acc;
        });
    }
    cycle(rest, coarsest, &rc, &mut xc);
    // Prolongation x += P·x_c.
    {
        let (p_ptr, p_col, p_val, xc) = (&lv.p_ptr, &lv.p_col, &lv.p_val, &xc);
        for_each_indexed(x, |i, xi| {
            for s in p_ptr[i] as usize..p_ptr[i + 1] as usize {
                *xi += p_val[s] * xc[p_col[s] as usize];
            }
        });
    }
    rest[0].rhs = rc;
    rest[0].sol = xc;
    // Post-smoothing: x += ω D⁻¹ (r − A x).
    residual(&lv.a, r, x, &mut lv.tmp);
    let t = &lv.tmp;
    for_each_indexed(x, |i, xi| *xi += w * (d_inv[i] * t[i]));
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use glam::Vec3;

    /// Membrane stiffness of a triangulated n×m grid with cell size (dx, dy): every edge a spring
    /// block k·(e eᵀ/|e|²)·(area of its triangles)/|e|² plus a small isotropic part (shear, bending
    /// proxy), plus a mass term; stiff like cloth at h = 1/120 s. Returns A and the filter (the
    /// first row fixed).
    pub(crate) fn membrane(nx: usize, ny: usize, dx: f32, dy: f32) -> (BlockMatrix, Vec<Filter>) {
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
        (a, filter)
    }

    fn rand_vec(n: usize, seed: u64) -> Vec<Vec3A> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                let mut f = || {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
                };
                Vec3A::new(f(), f(), f())
            })
            .collect()
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
        let (a, filter) = membrane(40, 30, 0.02, 0.02);
        let mut amg = Amg::new();
        amg.build(&a, &filter);
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

    /// Refilling the same values reuses the hierarchy: no symbolic rebuild, identical output.
    #[test]
    fn rebuild_with_same_values_reuses_the_hierarchy() {
        let (a, filter) = membrane(30, 30, 0.02, 0.02);
        let mut amg = Amg::new();
        amg.build(&a, &filter);
        let first = amg.rebuilds;
        let r: Vec<Vec3A> = rand_vec(900, 5)
            .iter()
            .zip(&filter)
            .map(|(x, s)| s.apply_a(*x))
            .collect();
        let mut z1 = vec![Vec3A::ZERO; 900];
        amg.apply(&r, &mut z1);
        amg.build(&a, &filter);
        assert_eq!(amg.rebuilds, first);
        let mut z2 = vec![Vec3A::ZERO; 900];
        amg.apply(&r, &mut z2);
        assert_eq!(z1, z2);
    }
}
