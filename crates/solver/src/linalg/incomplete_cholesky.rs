//! Block incomplete Cholesky preconditioner IC(0) of the filtered system matrix (Saad, "Iterative
//! Methods for Sparse Linear Systems", 2nd ed., §10.3; 3×3 blocks, no fill beyond A's pattern).
//!
//! MPCG solves S·A·x = S·b on the free subspace of every vertex's filter S (Baraff & Witkin §5.3).
//! On that subspace the system is the SPD matrix Ã = S·A·S + (I − S) (blocks Ã_ij = S_i A_ij S_j,
//! Ã_ii = S_i A_ii S_i + (I − S_i)), which this module factors, in the rows' [`Dissection`]
//! order P (below), as
//!
//!   M = (D + W)·D⁻¹·(D + Wᵀ) ≈ P·Ã·Pᵀ,   W strictly block-lower on the pattern, D block-diagonal SPD,
//!   W_ij = Ã_ij − Σ_{k<j} W_ik D_k⁻¹ W_jkᵀ,   D_i = Ã_ii − Σ_{k<i} W_ik D_k⁻¹ W_ikᵀ,
//!
//! with the sums over k in the pattern of both rows. M is SPD whenever every D_i is (W arbitrary), so a
//! pivot that is not clearly positive definite (IC(0) breakdown) is replaced by Ã_ii and its row of
//! W dropped. MPCG then uses z = S·Pᵀ·M⁻¹·P·r, SPD on the free subspace (Boxerman 2003 §5.2 asks
//! exactly this of a preconditioner). SPD is not enough, though: after a breakdown the other rows'
//! L = W·D⁻¹ can be large and the triangular sweeps grow exponentially along the rows (an 80×80
//! cotton sheet at rest, in-plane stiffness 1500× its out-of-plane mass term, broke down in 367
//! pivots and gave rᵀM⁻¹r ≈ 1e36). The caller therefore refactors with the diagonal blocks scaled
//! by 1 + α until no pivot breaks down (shifted incomplete Cholesky: Manteuffel 1980, "An
//! incomplete factorization technique for positive definite linear systems", Math. Comp. 34),
//! starting from the shift the last solve needed ([`super::ic_shift`]).
//!
//! Every coupling of A's pattern is in W, the bending-only ones between a hinge's opposite
//! vertices ([`super::BlockPattern::weak`]) too. Until 2026-11-26 those were left out (half the
//! entries, "for a few more iterations"); on the character garments they are worth far more than
//! they cost: with them the cape takes 36.8 instead of 58.2 CG iterations per substep (0.53 →
//! 0.45 s wall), the 10k dress 51.5 instead of 81.4, and the bpy skirt's IC(0) no longer fails to
//! converge (so `auto` stays on IC(0) instead of moving to AMG: 3.39 → 2.26 s wall), one run
//! each, BENCHMARKS.md.
//!
//! Parallelism without dropping couplings: from [`SPLIT_FROM`] rows the order is a one-level
//! nested dissection [A, B, S] of the couplings ([`Dissection`]; Saad §3.3.3, §12.4): no
//! coupling joins A and B, so their rows factor in parallel and then the separator S's (which
//! take updates from both); the forward sweep runs A ‖ B, then S; the backward sweep S, then
//! A ‖ B. Each part is factored and swept sequentially in row order, so the bits do not depend on
//! the thread count. Inside the parts the order is twisted (van der Vorst 1987: A and B both
//! end at the separator, B's rows taken backwards), which gives the split the convergence of
//! the one-thread order (hanging membrane: 66 iterations either way, 74 with B forwards; the
//! garments −5 to −15 % iterations against B forwards at the same accuracy; [`Dissection`]'s
//! doc). (Until this order, the rows were cut into consecutive ranges and every
//! coupling across a cut dropped: the 64×64 sheet-on-sphere bake of benches/blender_compare.py
//! needed 55.8 CG iterations per substep, 34.4 now (47.2 and 31.6 with self-collision); the
//! cape, on the same trajectory, 62.6 and 59.5.) Smaller systems keep their own order as one part (the sweeps' row-to-row chains are
//! latency-bound, so a second part on a second core nearly halves them only from about a
//! thousand rows).

use super::block_sparse::BlockMatrix;
use super::dissection::Dissection;
use super::mpcg::Filter;
use super::reduce::CHUNK;
use glam::{Mat3A, Vec3A, Vec3Swizzles};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Systems from this many rows are ordered by [`Dissection`] and factored and swept on two
/// threads (the chain of a sweep is latency-bound: two halves on two cores take about 0.55× the
/// time of one whole, from 1,900 rows; examples/linalg_kernels.rs); smaller ones keep their order
/// and run on one thread.
pub const SPLIT_FROM: usize = 1024;

/// A pivot whose Cholesky pivots fall below this fraction of Ã_ii's diagonal is replaced by Ã_ii.
const PIVOT_FLOOR: f32 = 1e-3;

/// Flag on a lower entry's slot: the original block is A's upper block as stored (the row's
/// original index is below the column's), not its transpose.
const UPRIGHT: u32 = 1 << 31;

/// Pattern-derived data (built once per sparsity pattern) and the factor's values, in the factor's
/// own compact row storage (every coupling of the pattern), all indexed by the new (dissection) row
/// numbers.
///
/// The sweeps use the equivalent unit-triangular form M = L·D·Lᵀ, L = I + W·D⁻¹: forward
/// L·y = P·r needs one block product per coupling on the row-to-row dependency chain (the
/// triangular sweeps are latency-bound, not bandwidth-bound), backward Lᵀ·h = D⁻¹·y likewise with a
/// row-ordered copy of Lᵀ.
#[derive(Debug, Default, Clone)]
pub struct IncompleteCholesky {
    /// The row order and its parts A, B, S.
    order: Dissection,
    /// Strictly lower entries (i, j), j < i, by row: `lower_ptr[i]..lower_ptr[i + 1]`, columns
    /// ascending; entries before `lower_mid[i]` have their column in an earlier part (only S's
    /// rows have such: columns in A and B). `lower_slot`: A's upper slot holding the block,
    /// transposed unless flagged [`UPRIGHT`].
    lower_ptr: Vec<u32>,
    lower_mid: Vec<u32>,
    lower_col: Vec<u32>,
    lower_slot: Vec<u32>,
    /// Strictly upper entries (i, j), j > i, by row, columns descending (so the sweep's latest
    /// row comes last); entries before `upper_mid[i]` have their column in a later part (S, for
    /// rows of A and B). `upper_at`: per lower entry (i, j), the upper entry (j, i) mirroring it
    /// (where the factorization writes L_ijᵀ).
    upper_ptr: Vec<u32>,
    upper_mid: Vec<u32>,
    upper_col: Vec<u32>,
    upper_at: Vec<u32>,
    /// Per lower entry (i, j): the lower-entry pairs ((i, k), (j, k)) with k < j in both rows.
    update_ptr: Vec<u32>,
    update: Vec<[u32; 2]>,
    /// W and L = W·D⁻¹ per lower entry, Lᵀ per upper entry, D⁻¹ per row.
    w: Vec<Mat3A>,
    l: Vec<Mat3A>,
    l_upper: Vec<Mat3A>,
    d_inv: Vec<Mat3A>,
    /// Per row: its vertex is fixed (S_i = 0), so every entry of its row and column of the
    /// factor is zero and the sweeps skip its couplings (a hard-pinned bodice is a fifth of the
    /// dress-walk sample's rows).
    fixed: Vec<bool>,
    /// Per row: W, L and Lᵀ of its lower entries hold +0 (the row was fixed in the factorization
    /// that last wrote them, or was never written), as a fixed row's are: [`factor_rows`] then
    /// leaves them, and only sets D⁻¹. A hard-pinned bodice's rows cost part A of the dress-walk
    /// sample's factor ~27 % more than part B while it wrote their zeros again in every solve.
    zeroed: Vec<bool>,
    /// Rows whose entries this factorization leaves: fixed now and [`Self::zeroed`].
    skip: Vec<bool>,
    /// The pattern the symbolic data was built for (upper row pointers, columns, weak and pinned
    /// flags), to
    /// rebuild only when it changes.
    key: (Vec<u32>, Vec<u32>, Vec<bool>, Vec<bool>),
}

/// The filtered block S_i·A_ij·S_j.
#[inline]
pub(crate) fn filtered(m: Mat3A, si: Filter, sj: Filter) -> Mat3A {
    match (si, sj) {
        (Filter::Free, Filter::Free) => m,
        (Filter::Fixed, _) | (_, Filter::Fixed) => Mat3A::ZERO,
        _ => Mat3A::from(si.matrix()) * m * Mat3A::from(sj.matrix()),
    }
}

/// The filtered diagonal block S·A_ii·S + (I − S).
#[inline]
pub(crate) fn filtered_diag(m: Mat3A, s: Filter) -> Mat3A {
    match s {
        Filter::Free => m,
        Filter::Fixed => Mat3A::IDENTITY,
        _ => {
            let sm = Mat3A::from(s.matrix());
            sm * m * sm + (Mat3A::IDENTITY - sm)
        }
    }
}

/// Inverse of the symmetric 3×3 pivot `d` if its Cholesky pivots all exceed [`PIVOT_FLOOR`] times
/// the matching diagonal entry of `reference`.
#[inline]
fn spd_inverse(d: Mat3A, reference: Mat3A) -> Option<Mat3A> {
    let p0 = d.x_axis.x;
    let p1 = d.y_axis.y - d.y_axis.x * d.y_axis.x / p0;
    let p2 = d.determinant() / (p0 * p1);
    let ok = p0 > PIVOT_FLOOR * reference.x_axis.x
        && p1 > PIVOT_FLOOR * reference.y_axis.y
        && p2 > PIVOT_FLOOR * reference.z_axis.z;
    if !ok {
        return None;
    }
    // `Mat3A::is_finite`, inlined (a call per column otherwise).
    let inv = d.inverse();
    let finite = |v: Vec3A| v.abs().cmplt(Vec3A::INFINITY);
    (finite(inv.x_axis) & finite(inv.y_axis) & finite(inv.z_axis))
        .all()
        .then_some(inv)
}

/// Partial-sum slots of a part of `len` rows: one per [`CHUNK`].
#[inline]
fn slots_of(len: usize) -> usize {
    len.div_ceil(CHUNK)
}

impl IncompleteCholesky {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the order, the compact lower structure and the update lists for `a`'s pattern
    /// (every coupling). Nothing is done when the pattern is the one of the last call (the
    /// simulation's pattern is fixed per topology).
    fn symbolic(&mut self, a: &BlockMatrix) {
        let p = &a.pattern;
        if self.key.0 == p.row_ptr
            && self.key.1 == p.col
            && self.key.2 == p.weak
            && self.key.3 == p.pinned
        {
            return;
        }
        let n = p.rows();
        let order = if n >= SPLIT_FROM {
            Dissection::bisect(p, |_| true)
        } else {
            Dissection::identity(n)
        };
        self.symbolic_in(a, order);
    }

    /// [`Self::symbolic`] in the given row order.
    fn symbolic_in(&mut self, a: &BlockMatrix, order: Dissection) {
        let p = &a.pattern;
        let n = p.rows();
        let (perm, pos) = (&order.perm, &order.pos);
        let part_start = |i: usize| (0..3).map(|k| order.part(k)).find(|r| r.contains(&i));
        // Lower entries of new row i: its neighbours with a smaller new index.
        let mut lower_ptr = vec![0u32];
        let mut lower_mid = Vec::with_capacity(n);
        let (mut lower_col, mut lower_slot) = (Vec::new(), Vec::new());
        let mut row: Vec<(u32, u32)> = Vec::new();
        for (i, &o) in perm.iter().enumerate() {
            let o = o as usize;
            row.clear();
            for k in p.lower_ptr[o] as usize..p.lower_ptr[o + 1] as usize {
                let s = p.lower_slot[k];
                let j = pos[p.lower_col[k] as usize];
                if (j as usize) < i {
                    row.push((j, s));
                }
            }
            for s in p.row_ptr[o] as usize..p.row_ptr[o + 1] as usize {
                let j = pos[p.col[s] as usize];
                if (j as usize) < i {
                    row.push((j, s as u32 | UPRIGHT));
                }
            }
            row.sort_unstable();
            let first = part_start(i).map_or(0, |r| r.start) as u32;
            lower_mid
                .push(lower_col.len() as u32 + row.iter().filter(|e| e.0 < first).count() as u32);
            lower_col.extend(row.iter().map(|e| e.0));
            lower_slot.extend(row.iter().map(|e| e.1));
            lower_ptr.push(lower_col.len() as u32);
        }
        // Upper entries of row j mirror lower entries (i, j), i > j: transposed counting sort,
        // each row filled from its end (descending columns).
        let mut upper_ptr = vec![0u32; n + 1];
        for &j in &lower_col {
            upper_ptr[j as usize + 1] += 1;
        }
        for j in 0..n {
            upper_ptr[j + 1] += upper_ptr[j];
        }
        let mut fill = upper_ptr[1..].to_vec();
        let mut upper_col = vec![0u32; lower_col.len()];
        let mut upper_at = vec![0u32; lower_col.len()];
        for i in 0..n {
            let row = lower_ptr[i] as usize..lower_ptr[i + 1] as usize;
            for (e, &j) in row.clone().zip(&lower_col[row]) {
                let j = j as usize;
                fill[j] -= 1;
                let at = fill[j] as usize;
                upper_col[at] = i as u32;
                upper_at[e] = at as u32;
            }
        }
        let mut upper_mid = Vec::with_capacity(n);
        for j in 0..n {
            let row = upper_ptr[j] as usize..upper_ptr[j + 1] as usize;
            let end = part_start(j).map_or(n, |r| r.end) as u32;
            let later = upper_col[row.clone()].iter().filter(|&&c| c >= end).count();
            upper_mid.push((row.start + later) as u32);
        }
        // Updates: merge row i's and row j's lower columns k < j.
        let mut update_ptr = vec![0u32];
        let mut update = Vec::new();
        for i in 0..n {
            let row_i = lower_ptr[i] as usize..lower_ptr[i + 1] as usize;
            for e in row_i.clone() {
                let j = lower_col[e] as usize;
                let (mut a_e, a_end) = (row_i.start, e);
                let (mut b_e, b_end) = (lower_ptr[j] as usize, lower_ptr[j + 1] as usize);
                while a_e < a_end && b_e < b_end {
                    let (ka, kb) = (lower_col[a_e], lower_col[b_e]);
                    if ka == kb {
                        update.push([a_e as u32, b_e as u32]);
                        a_e += 1;
                        b_e += 1;
                    } else if ka < kb {
                        a_e += 1;
                    } else {
                        b_e += 1;
                    }
                }
                update_ptr.push(update.len() as u32);
            }
        }
        let m = lower_col.len();
        *self = IncompleteCholesky {
            order,
            lower_ptr,
            lower_mid,
            lower_col,
            lower_slot,
            upper_ptr,
            upper_mid,
            upper_col,
            upper_at,
            update_ptr,
            update,
            w: vec![Mat3A::ZERO; m],
            l: vec![Mat3A::ZERO; m],
            l_upper: vec![Mat3A::ZERO; m],
            d_inv: vec![Mat3A::IDENTITY; n],
            fixed: vec![false; n],
            zeroed: vec![true; n],
            skip: vec![false; n],
            key: (
                p.row_ptr.clone(),
                p.col.clone(),
                p.weak.clone(),
                p.pinned.clone(),
            ),
        };
    }

    /// Factors Ã' = S·A·S + (I − S) with every diagonal block scaled by `shift` (1 = Ã itself; see
    /// the module doc). Returns the number of pivots that broke down and were replaced by Ã'_ii.
    pub fn factor(&mut self, a: &BlockMatrix, filter: &[Filter], shift: f32) -> u32 {
        self.factor_or_stop(a, filter, shift, None)
    }

    /// [`Self::factor`] if no pivot breaks down (true; the same factor to the bit); otherwise
    /// false as soon as one does (every part stops), leaving the factor unusable until the
    /// next factorization. A caller trying shifts in turn then pays only for the rows up to the
    /// first breakdown of each failed shift: with [`super::ic_shift::ShiftMemory`] the bpy skirt
    /// had 15 failed tries in 248 solves (8 ms of the bake's 120 ms of factorizations), the 10k
    /// dress 17 in 281 (11 of 360 ms), the 64×64 sheet 6 in 158 (1 of 78 ms; 2026-11-26, one
    /// run each on a loaded machine).
    pub fn try_factor(&mut self, a: &BlockMatrix, filter: &[Filter], shift: f32) -> bool {
        let stop = AtomicBool::new(false);
        self.factor_or_stop(a, filter, shift, Some(&stop)) == 0
    }

    fn factor_or_stop(
        &mut self,
        a: &BlockMatrix,
        filter: &[Filter],
        shift: f32,
        stop: Option<&AtomicBool>,
    ) -> u32 {
        self.symbolic(a);
        let perm = &self.order.perm;
        self.fixed.clear();
        self.fixed
            .extend(perm.iter().map(|&o| filter[o as usize] == Filter::Fixed));
        self.skip.clear();
        self.skip
            .extend(self.fixed.iter().zip(&self.zeroed).map(|(&f, &z)| f && z));
        // Once this factorization has run, a fixed row's entries are +0; one that stops at a
        // breakdown may leave later rows unwritten, so there only rows that were +0 and are fixed
        // now are known to be (the next factorization writes the others).
        for (z, &f) in self.zeroed.iter_mut().zip(&self.fixed) {
            *z = if stop.is_some() { *z && f } else { f };
        }
        let sym = Symbolic {
            perm,
            fixed: &self.fixed,
            skip: &self.skip,
            lower_ptr: &self.lower_ptr,
            lower_col: &self.lower_col,
            lower_slot: &self.lower_slot,
            upper_at: &self.upper_at,
            update_ptr: &self.update_ptr,
            update: &self.update,
        };
        let (pa, pb, ps) = (self.order.part(0), self.order.part(1), self.order.part(2));
        let (ea, eb) = (
            self.lower_ptr[pa.end] as usize,
            self.lower_ptr[pb.end] as usize,
        );
        // Lower entries of A's (B's) rows mirror upper entries of A's (B's) rows.
        let (ua, ub) = (
            self.upper_ptr[pa.end] as usize,
            self.upper_ptr[pb.end] as usize,
        );
        // A and B: each its own slices of the values (no coupling joins them).
        let (replaced_a, replaced_b) = {
            let (w_ab, _) = self.w.split_at_mut(eb);
            let (l_ab, _) = self.l.split_at_mut(eb);
            let (lu_ab, _) = self.l_upper.split_at_mut(ub);
            let (d_ab, _) = self.d_inv.split_at_mut(pb.end);
            let (wa, wb) = w_ab.split_at_mut(ea);
            let (la, lb) = l_ab.split_at_mut(ea);
            let (lua, lub) = lu_ab.split_at_mut(ua);
            let (da, db) = d_ab.split_at_mut(pa.end);
            let mut job_a = || {
                factor_rows(
                    &sym,
                    a,
                    filter,
                    shift,
                    pa.clone(),
                    Values {
                        w: wa,
                        l: la,
                        l_upper: lua,
                        d_inv: da,
                        base: (0, 0, 0),
                    },
                    stop,
                )
            };
            let mut job_b = || {
                factor_rows(
                    &sym,
                    a,
                    filter,
                    shift,
                    pb.clone(),
                    Values {
                        w: wb,
                        l: lb,
                        l_upper: lub,
                        d_inv: db,
                        base: (ea, ua, pa.end),
                    },
                    stop,
                )
            };
            if self.order.split() {
                rayon::join(job_a, job_b)
            } else {
                (job_a(), job_b())
            }
        };
        let replaced = replaced_a + replaced_b;
        if stop.is_some() && replaced > 0 {
            return replaced;
        }
        let replaced = replaced
            + factor_rows(
                &sym,
                a,
                filter,
                shift,
                ps,
                Values {
                    w: &mut self.w,
                    l: &mut self.l,
                    l_upper: &mut self.l_upper,
                    d_inv: &mut self.d_inv,
                    base: (0, 0, 0),
                },
                stop,
            );
        if stop.is_none() || replaced == 0 {
            // Every row was written.
            self.zeroed.copy_from_slice(&self.fixed);
        }
        replaced
    }

    /// The row order of the factor last built.
    pub fn order(&self) -> &Dissection {
        &self.order
    }

    /// Partial-sum slots [`Self::forward`] writes: one per [`CHUNK`] of each part's rows.
    pub fn slots(&self) -> usize {
        (0..3).map(|k| slots_of(self.order.part(k).len())).sum()
    }

    /// Forward sweep L·y = P·r, r and y in the factor's row order (row i is original row
    /// `order().perm[i]`), A ‖ B, then S. With `update` = (α, s), s in the original order, each
    /// rᵢ −= α·`s_perm[i]` first (MPCG's residual update, fused). Writes per [`CHUNK`] of each part's
    /// rows ([`Self::slots`] in all, parts in order) Σ yᵢᵀ·D_i⁻¹·yᵢ into `dots`: their total is
    /// rᵀ·M⁻¹·r, the MPCG's δ, without the backward sweep.
    pub fn forward(
        &self,
        r: &mut [Vec3A],
        update: Option<(f32, &[Vec3A])>,
        y: &mut [Vec3A],
        dots: &mut [f64],
    ) {
        self.forward_corrected(r, update, &|_| Vec3A::ZERO, y, dots)
    }

    /// [`Self::forward`] with rᵢ −= α·(s_k − `correction(k)`), k = `order().perm[i]` (the
    /// original row): MPCG's deflated product s = s' − ÃZ·y, corrected where it is read
    /// ([`super::deflation::Deflation::az_row`]). A zero correction gives [`Self::forward`]'s
    /// bits.
    pub fn forward_corrected(
        &self,
        r: &mut [Vec3A],
        update: Option<(f32, &[Vec3A])>,
        correction: &(impl Fn(usize) -> Vec3A + Sync),
        y: &mut [Vec3A],
        dots: &mut [f64],
    ) {
        let update = update.map(|(alpha, s)| (alpha, s, correction));
        let (pa, pb, ps) = (self.order.part(0), self.order.part(1), self.order.part(2));
        let (r_ab, r_s) = r.split_at_mut(pb.end);
        let (y_ab, y_s) = y.split_at_mut(pb.end);
        let (d_ab, d_s) = dots.split_at_mut(slots_of(pa.len()) + slots_of(pb.len()));
        {
            let (r_a, r_b) = r_ab.split_at_mut(pa.end);
            let (y_a, y_b) = y_ab.split_at_mut(pa.end);
            let (d_a, d_b) = d_ab.split_at_mut(slots_of(pa.len()));
            let mut job_a = || self.forward_rows(pa.clone(), r_a, update, &[], y_a, d_a);
            let mut job_b = || self.forward_rows(pb.clone(), r_b, update, &[], y_b, d_b);
            if self.order.split() {
                rayon::join(job_a, job_b);
            } else {
                job_a();
                job_b();
            }
        }
        self.forward_rows(ps, r_s, update, y_ab, y_s, d_s);
    }

    /// Forward sweep on `rows` (one part): `r` and `own` hold r and y of those rows, `earlier` y
    /// of the rows before the part (from 0).
    #[inline]
    fn forward_rows(
        &self,
        rows: Range<usize>,
        r: &mut [Vec3A],
        update: Option<(f32, &[Vec3A], &impl Fn(usize) -> Vec3A)>,
        earlier: &[Vec3A],
        own: &mut [Vec3A],
        dots: &mut [f64],
    ) {
        let base = rows.start;
        for (c, dot) in dots.iter_mut().enumerate() {
            let mut sum = 0.0f64;
            for l in c * CHUNK..own.len().min((c + 1) * CHUNK) {
                let i = base + l;
                // A fixed row's s and correction are zero: r stays.
                if let (Some((alpha, s, correction)), false) = (update, self.fixed[i]) {
                    let k = self.order.perm[i] as usize;
                    r[l] -= alpha * (s[k] - correction(k));
                }
                let mut acc = r[l];
                // A fixed row's couplings are zero (see `fixed`).
                if !self.fixed[i] {
                    let (e0, em, e1) = (
                        self.lower_ptr[i] as usize,
                        self.lower_mid[i] as usize,
                        self.lower_ptr[i + 1] as usize,
                    );
                    for (m, &j) in self.l[e0..em].iter().zip(&self.lower_col[e0..em]) {
                        acc -= *m * earlier[j as usize];
                    }
                    for (m, &j) in self.l[em..e1].iter().zip(&self.lower_col[em..e1]) {
                        acc -= *m * own[j as usize - base];
                    }
                }
                own[l] = acc;
                sum += acc.as_dvec3().dot((self.d_inv[i] * acc).as_dvec3());
            }
            *dot = sum;
        }
    }

    /// Backward sweep Lᵀ·h = D⁻¹·y in place (`yh` holds y on entry, h = M⁻¹·P·r on exit, both in
    /// the factor's order): S, then A ‖ B, each from its last row: hᵢ = D_i⁻¹·yᵢ − Σ_{j>i} L_jiᵀ·hⱼ.
    pub fn backward(&self, yh: &mut [Vec3A]) {
        let (pa, pb, ps) = (self.order.part(0), self.order.part(1), self.order.part(2));
        let (yh_ab, yh_s) = yh.split_at_mut(pb.end);
        self.backward_rows(ps, &[], yh_s, |_, _| {});
        let (yh_a, yh_b) = yh_ab.split_at_mut(pa.end);
        let yh_s: &[Vec3A] = yh_s;
        let mut job_a = || self.backward_rows(pa.clone(), yh_s, yh_a, |_, _| {});
        let mut job_b = || self.backward_rows(pb.clone(), yh_s, yh_b, |_, _| {});
        if self.order.split() {
            rayon::join(job_a, job_b);
        } else {
            job_a();
            job_b();
        }
    }

    /// [`Self::backward`] for an order with a [`Dissection::cut`] m (None otherwise, doing
    /// nothing), handing each hᵢ as soon as it is final to `each(side, k, hᵢ)`: `low` and `high`
    /// are the caller's data for the original rows below m and from m, k the row's original
    /// index relative to its side's first. S's rows come first (on the calling thread), then A's
    /// (with `low`) and B's (with `high`) in parallel, each part from its last row. MPCG updates
    /// its search direction here, in the original order, without a pass of its own.
    pub fn backward_each<T: Send>(
        &self,
        yh: &mut [Vec3A],
        mut low: T,
        mut high: T,
        each: impl Fn(&mut T, usize, Vec3A) + Sync,
    ) -> Option<()> {
        let m = self.order.cut()?;
        let (pa, pb, ps) = (self.order.part(0), self.order.part(1), self.order.part(2));
        let perm = &self.order.perm;
        let (yh_ab, yh_s) = yh.split_at_mut(pb.end);
        self.backward_rows(ps, &[], yh_s, |i, h| {
            let o = perm[i] as usize;
            if o < m {
                each(&mut low, o, h)
            } else {
                each(&mut high, o - m, h)
            }
        });
        let (yh_a, yh_b) = yh_ab.split_at_mut(pa.end);
        let yh_s: &[Vec3A] = yh_s;
        let each = &each;
        let mut job_a = || {
            self.backward_rows(pa.clone(), yh_s, yh_a, |i, h| {
                each(&mut low, perm[i] as usize, h)
            })
        };
        let mut job_b = || {
            self.backward_rows(pb.clone(), yh_s, yh_b, |i, h| {
                each(&mut high, perm[i] as usize - m, h)
            })
        };
        if self.order.split() {
            rayon::join(job_a, job_b);
        } else {
            job_a();
            job_b();
        }
        Some(())
    }

    /// Backward sweep on `rows` (one part): `own` holds their y, `later` h of S (the rows from
    /// the separator's first on; empty for S itself). `each(i, hᵢ)` once hᵢ is final.
    #[inline]
    fn backward_rows(
        &self,
        rows: Range<usize>,
        later: &[Vec3A],
        own: &mut [Vec3A],
        mut each: impl FnMut(usize, Vec3A),
    ) {
        let base = rows.start;
        let s0 = self.order.part(2).start;
        for l in (0..own.len()).rev() {
            let i = base + l;
            let mut acc = self.d_inv[i] * own[l];
            if !self.fixed[i] {
                let (e0, em, e1) = (
                    self.upper_ptr[i] as usize,
                    self.upper_mid[i] as usize,
                    self.upper_ptr[i + 1] as usize,
                );
                for (m, &j) in self.l_upper[e0..em].iter().zip(&self.upper_col[e0..em]) {
                    acc -= *m * later[j as usize - s0];
                }
                for (m, &j) in self.l_upper[em..e1].iter().zip(&self.upper_col[em..e1]) {
                    acc -= *m * own[j as usize - base];
                }
            }
            own[l] = acc;
            each(i, acc);
        }
    }
}

/// Borrowed symbolic data for the part workers.
struct Symbolic<'a> {
    perm: &'a [u32],
    fixed: &'a [bool],
    /// Rows whose entries are left as they are ([`IncompleteCholesky::skip`]).
    skip: &'a [bool],
    lower_ptr: &'a [u32],
    lower_col: &'a [u32],
    lower_slot: &'a [u32],
    upper_at: &'a [u32],
    update_ptr: &'a [u32],
    update: &'a [[u32; 2]],
}

/// A part worker's slices of the factor's values: W and L from lower entry `base.0`, Lᵀ from
/// upper entry `base.1`, D⁻¹ from row `base.2`, holding every entry and row the part's rows
/// write and their updates read.
struct Values<'a> {
    w: &'a mut [Mat3A],
    l: &'a mut [Mat3A],
    l_upper: &'a mut [Mat3A],
    d_inv: &'a mut [Mat3A],
    base: (usize, usize, usize),
}

/// a·bᵀ with the products and sums of `a * b.transpose()` in the same order (the same bits),
/// without the transpose: column c is Σ_k a.col(k)·b.col(k)[c], k = x, y, z in turn.
#[inline(always)]
fn mul_transpose(a: Mat3A, b: Mat3A) -> Mat3A {
    Mat3A::from_cols(
        a.x_axis * b.x_axis.xxx() + a.y_axis * b.y_axis.xxx() + a.z_axis * b.z_axis.xxx(),
        a.x_axis * b.x_axis.yyy() + a.y_axis * b.y_axis.yyy() + a.z_axis * b.z_axis.yyy(),
        a.x_axis * b.x_axis.zzz() + a.y_axis * b.y_axis.zzz() + a.z_axis * b.z_axis.zzz(),
    )
}

/// Factors `rows` (new numbering) in order into `values` (W, L, its row-ordered copy Lᵀ and
/// D⁻¹), with the diagonal blocks scaled by `shift`. Returns the number of replaced pivots.
/// With `stop`: returns 1 at the first breakdown, raising `stop`, and returns 1 as soon as
/// another part has raised it.
///
/// An entry (i, j) whose row or column is fixed is +0 in W, L and Lᵀ and leaves D_i as it is,
/// exactly as the full computation gives it (so it is skipped; a pinned bodice is a fifth of the
/// dress-walk sample's rows): Ã_ij = 0; every update W_ik·D_k⁻¹·W_jkᵀ is a matrix of signed zeros
/// (W of a fixed row is +0, by induction; the other factor is finite), so W_ij = +0 − (±0) = +0;
/// each entry of L_ij = (+0)·D_j⁻¹ sums three signed-zero products, one with D_j⁻¹'s positive
/// diagonal, so it is +0; and D_i −= L_ij·W_ijᵀ subtracts +0.
fn factor_rows(
    sym: &Symbolic,
    a: &BlockMatrix,
    filter: &[Filter],
    shift: f32,
    rows: Range<usize>,
    values: Values,
    stop: Option<&AtomicBool>,
) -> u32 {
    let Values {
        w,
        l: wd,
        l_upper,
        d_inv,
        base: (e_base, u_base, base),
    } = values;
    let mut replaced = 0;
    for i in rows {
        if stop.is_some_and(|s| s.load(Relaxed)) {
            return 1;
        }
        let o = sym.perm[i] as usize;
        let si = filter[o];
        let fixed_i = sym.fixed[i];
        let mut d = filtered_diag(a.diag[o], si) * shift;
        let reference = d;
        let entries = sym.lower_ptr[i] as usize..sym.lower_ptr[i + 1] as usize;
        // A fixed row's entries leave D_i as it is (below); already +0, they need no writing.
        let entries_to_write = if sym.skip[i] {
            entries.start..entries.start
        } else {
            entries.clone()
        };
        for e in entries_to_write {
            let j = sym.lower_col[e] as usize;
            let (m, md) = if fixed_i || sym.fixed[j] {
                (Mat3A::ZERO, Mat3A::ZERO)
            } else {
                let slot = sym.lower_slot[e];
                let stored = a.off[(slot & !UPRIGHT) as usize];
                let aij = if slot & UPRIGHT != 0 {
                    stored
                } else {
                    stored.transpose()
                };
                let mut m = filtered(aij, si, filter[sym.perm[j] as usize]);
                let updates = sym.update_ptr[e] as usize..sym.update_ptr[e + 1] as usize;
                for &[eik, ejk] in &sym.update[updates] {
                    m -= mul_transpose(wd[eik as usize - e_base], w[ejk as usize - e_base]);
                }
                let md = m * d_inv[j - base];
                d -= mul_transpose(md, m);
                (m, md)
            };
            w[e - e_base] = m;
            wd[e - e_base] = md;
            l_upper[sym.upper_at[e] as usize - u_base] = md.transpose();
        }
        d_inv[i - base] = match spd_inverse(d, reference) {
            Some(inv) => inv,
            None => {
                if let Some(s) = stop {
                    s.store(true, Relaxed);
                    return 1;
                }
                replaced += 1;
                let row = entries.start - e_base..entries.end - e_base;
                w[row.clone()].fill(Mat3A::ZERO);
                wd[row].fill(Mat3A::ZERO);
                for e in entries {
                    l_upper[sym.upper_at[e] as usize - u_base] = Mat3A::ZERO;
                }
                spd_inverse(reference, reference).unwrap_or(Mat3A::IDENTITY)
            }
        };
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::super::block_sparse::BlockPattern;
    use super::*;
    use glam::{Mat3, Vec3};

    /// A chain of n vertices (i, i + 1) with general, non-symmetric-looking off-diagonal blocks
    /// and SPD diagonal ones; plus `chords` couplings (i, i + 7), all strong.
    fn chain(n: usize, chords: bool) -> BlockMatrix {
        let mut pairs: Vec<[u32; 2]> = (0..n as u32 - 1).map(|i| [i, i + 1]).collect();
        if chords {
            pairs.extend((0..n as u32 - 7).map(|i| [i, i + 7]));
        }
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, &pairs));
        for (i, d) in a.diag.iter_mut().enumerate() {
            // Diagonally dominant with the chords too.
            let c = if chords { 4.0 } else { 0.0 };
            let mut m = Mat3::from_diagonal(Vec3::new(4.0, 5.0, 6.0 + (i % 13) as f32 * 0.01) + c);
            m.x_axis.y = 0.5;
            m.y_axis.x = 0.5;
            *d = m.into();
        }
        for (s, m) in a.off.iter_mut().enumerate() {
            let t = if s % 2 == 0 { 1.0 } else { 0.3 };
            *m = Mat3::from_cols(
                Vec3::new(-1.0, 0.2, 0.0) * t,
                Vec3::new(0.3, -1.5, 0.1) * t,
                Vec3::new(0.0, 0.4, -2.0) * t,
            )
            .into();
        }
        a
    }

    fn bits(v: &[Vec3A]) -> Vec<[u32; 3]> {
        v.iter().map(|x| x.to_array().map(f32::to_bits)).collect()
    }

    /// (y, h, dots) of both sweeps on r (original order; y and h in the factor's).
    fn sweep(ic: &IncompleteCholesky, r: &[Vec3A]) -> (Vec<Vec3A>, Vec<Vec3A>, Vec<f64>) {
        let mut h = vec![Vec3A::ZERO; r.len()];
        let mut dots = vec![0.0; ic.slots()];
        let mut rp: Vec<Vec3A> = ic.order().perm.iter().map(|&o| r[o as usize]).collect();
        ic.forward(&mut rp, None, &mut h, &mut dots);
        let y = h.clone();
        ic.backward(&mut h);
        (y, h, dots)
    }

    /// Preconditioned CG on Ã·x = S·b from x = 0 with `ic` as the preconditioner (dot products
    /// in f64): the iterations to rᵀM⁻¹r <= tol²·bᵀM⁻¹b (MPCG's rule).
    fn pcg(
        ic: &IncompleteCholesky,
        a: &BlockMatrix,
        filter: &[Filter],
        b: &[Vec3A],
        tol: f64,
    ) -> u32 {
        let n = b.len();
        let perm = &ic.order().perm;
        let precondition = |r: &[Vec3A]| -> (Vec<Vec3A>, f64) {
            let (_, h, dots) = sweep(ic, r);
            let mut z = vec![Vec3A::ZERO; n];
            for (i, &o) in perm.iter().enumerate() {
                z[o as usize] = filter[o as usize].apply_a(h[i]);
            }
            (z, dots.iter().sum())
        };
        let mul = |x: &[Vec3A]| -> Vec<Vec3A> {
            let mut y = vec![Vec3A::ZERO; n];
            a.mul_serial(x, &mut y, |_, _| {});
            (0..n).map(|i| filter[i].apply_a(y[i])).collect()
        };
        let mut r: Vec<Vec3A> = (0..n).map(|i| filter[i].apply_a(b[i])).collect();
        let (mut z, mut delta) = precondition(&r);
        let target = tol * tol * delta;
        let mut p = z.clone();
        let mut it = 0;
        while delta > target && it < 1000 {
            let s = mul(&p);
            let ps: f64 = p
                .iter()
                .zip(&s)
                .map(|(p, s)| p.as_dvec3().dot(s.as_dvec3()))
                .sum();
            let alpha = (delta / ps) as f32;
            for i in 0..n {
                r[i] -= alpha * s[i];
            }
            let old = delta;
            (z, delta) = precondition(&r);
            let beta = (delta / old) as f32;
            for i in 0..n {
                p[i] = z[i] + beta * p[i];
            }
            it += 1;
        }
        it
    }

    /// The factorization as it was written before 2026-11-26's rework (every entry's updates
    /// and `a * b.transpose()` products, L copied to Lᵀ in a pass of its own, parts in turn):
    /// (W, L, Lᵀ, D⁻¹, replaced pivots) of `ic`'s symbolic data.
    fn reference(
        ic: &IncompleteCholesky,
        a: &BlockMatrix,
        filter: &[Filter],
        shift: f32,
    ) -> Reference {
        let m = ic.lower_col.len();
        let n = ic.d_inv.len();
        let perm = &ic.order().perm;
        let (mut w, mut wd) = (vec![Mat3A::ZERO; m], vec![Mat3A::ZERO; m]);
        let mut d_inv = vec![Mat3A::IDENTITY; n];
        let mut replaced = 0;
        for i in 0..n {
            let o = perm[i] as usize;
            let si = filter[o];
            let mut d = filtered_diag(a.diag[o], si) * shift;
            let reference = d;
            for e in ic.lower_ptr[i] as usize..ic.lower_ptr[i + 1] as usize {
                let j = ic.lower_col[e] as usize;
                let slot = ic.lower_slot[e];
                let stored = a.off[(slot & !UPRIGHT) as usize];
                let aij = if slot & UPRIGHT != 0 {
                    stored
                } else {
                    stored.transpose()
                };
                let mut m = filtered(aij, si, filter[perm[j] as usize]);
                for &[eik, ejk] in
                    &ic.update[ic.update_ptr[e] as usize..ic.update_ptr[e + 1] as usize]
                {
                    m -= wd[eik as usize] * w[ejk as usize].transpose();
                }
                let md = m * d_inv[j];
                w[e] = m;
                wd[e] = md;
                d -= md * m.transpose();
            }
            let ok = {
                let p0 = d.x_axis.x;
                let p1 = d.y_axis.y - d.y_axis.x * d.y_axis.x / p0;
                let p2 = d.determinant() / (p0 * p1);
                p0 > PIVOT_FLOOR * reference.x_axis.x
                    && p1 > PIVOT_FLOOR * reference.y_axis.y
                    && p2 > PIVOT_FLOOR * reference.z_axis.z
            };
            d_inv[i] = match ok.then(|| d.inverse()).filter(|m| m.is_finite()) {
                Some(inv) => inv,
                None => {
                    replaced += 1;
                    let row = ic.lower_ptr[i] as usize..ic.lower_ptr[i + 1] as usize;
                    w[row.clone()].fill(Mat3A::ZERO);
                    wd[row].fill(Mat3A::ZERO);
                    spd_inverse(reference, reference).unwrap_or(Mat3A::IDENTITY)
                }
            };
        }
        let mut l_upper = vec![Mat3A::ZERO; m];
        for (e, &u) in ic.upper_at.iter().enumerate() {
            l_upper[u as usize] = wd[e].transpose();
        }
        (w, wd, l_upper, d_inv, replaced)
    }

    type Reference = (Vec<Mat3A>, Vec<Mat3A>, Vec<Mat3A>, Vec<Mat3A>, u32);

    fn mat_bits(m: &[Mat3A]) -> Vec<[u32; 9]> {
        m.iter()
            .map(|m| m.to_cols_array().map(f32::to_bits))
            .collect()
    }

    /// The factor (W, L, Lᵀ, D⁻¹, zeros' signs included) is the [`reference`]'s to the bit, on
    /// an assembled wrinkled and stretched cotton sheet (40×40, split into parts) with fixed,
    /// plane- and line-filtered rows, unshifted and shifted, through `factor` and
    /// `try_factor`, on one thread and two; and on a chain whose weak pivot breaks down
    /// (replaced by `factor`).
    #[test]
    fn factor_matches_the_reference_to_the_bit() {
        let nx = 40;
        let (model, a) = crate::fixtures::wrinkled_sheet_system(nx);
        let (n, a) = (model.vertex_count(), &a);
        // A fixed edge, a fixed patch inside, plane and line filters scattered.
        let filter: Vec<Filter> = (0..n)
            .map(|i| {
                let (x, y) = (i % nx, i / nx);
                if x == 0 || (10..14).contains(&x) && (20..25).contains(&y) {
                    Filter::Fixed
                } else if i % 11 == 3 {
                    Filter::Plane(Vec3::new(0.6, 0.0, 0.8))
                } else if i % 17 == 5 {
                    Filter::Line(Vec3::Y)
                } else {
                    Filter::Free
                }
            })
            .collect();
        let check = |ic: &IncompleteCholesky, want: &Reference, what: &str| {
            let (w, l, lu, d, _) = want;
            assert!(mat_bits(&ic.w) == mat_bits(w), "{what}: W");
            assert!(mat_bits(&ic.l) == mat_bits(l), "{what}: L");
            assert!(mat_bits(&ic.l_upper) == mat_bits(lu), "{what}: Lᵀ");
            assert!(mat_bits(&ic.d_inv) == mat_bits(d), "{what}: D⁻¹");
        };
        for threads in [1, 2] {
            crate::fixtures::on_threads(threads, || {
                let mut ic = IncompleteCholesky::new();
                for shift in [1.0, 1.05] {
                    assert_eq!(ic.factor(a, &filter, shift), 0);
                    assert!(ic.order().split());
                    let want = reference(&ic, a, &filter, shift);
                    check(&ic, &want, &format!("factor {shift} on {threads}"));
                    ic.w.fill(Mat3A::ZERO);
                    assert!(ic.try_factor(a, &filter, shift));
                    check(&ic, &want, &format!("try_factor {shift} on {threads}"));
                }
                // Signed zeros do occur (L of the fixed rows), so the check sees them.
                assert!(ic.l.iter().any(|m| m
                    .to_cols_array()
                    .iter()
                    .any(|x| x.to_bits() == (-0.0f32).to_bits())));
            });
        }
        // Breakdowns replaced: the weak-pivot chain of `try_factor_stops_at_a_breakdown`.
        let m = SPLIT_FROM + 500;
        let pairs: Vec<[u32; 2]> = (0..m as u32 - 1).map(|i| [i, i + 1]).collect();
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(m, &pairs));
        for (i, d) in a.diag.iter_mut().enumerate() {
            let s = if i % 300 == 100 { 1.2 } else { 4.0 };
            *d = Mat3::from_diagonal(Vec3::new(s, s + 1.0, s + 2.0)).into();
        }
        for i in 0..m - 1 {
            let s = a.pattern.slot(i as u32, i as u32 + 1).unwrap();
            a.off[s] = Mat3::from_diagonal(Vec3::new(-1.9, -2.4, -2.9)).into();
        }
        let filter: Vec<Filter> = (0..m)
            .map(|i| {
                if i % 7 == 2 {
                    Filter::Fixed
                } else {
                    Filter::Free
                }
            })
            .collect();
        let mut ic = IncompleteCholesky::new();
        let replaced = ic.factor(&a, &filter, 1.0);
        let want = reference(&ic, &a, &filter, 1.0);
        assert!(replaced > 1);
        assert_eq!(replaced, want.4);
        check(&ic, &want, "chain");
    }

    /// The twisted order (an index cut's B descending, so that A and B both end at the
    /// separator; module doc) parallelizes IC(0) at the convergence of the mesh's own order on
    /// one thread, where B ascending (eliminated from the separator away) or A descending too
    /// cost more: on the hanging membrane, measured 50 / 66 / 60 iterations in its own order
    /// and twisted, 56 / 74 / 65 with B ascending, 55 / 74 / 66 with both parts descending.
    #[test]
    fn twisted_order_converges_like_the_unsplit_one() {
        for (nx, ny) in [(48, 48), (64, 64), (40, 90)] {
            let d = 1.0 / (nx - 1) as f32;
            let (a, filter, _) = super::super::amg::tests::membrane(nx, ny, d, d);
            let n = nx * ny;
            let b: Vec<Vec3A> = (0..n)
                .map(|i| Vec3A::new(0.3, -1.0, 0.5 + (i % 7) as f32 * 0.1) * 0.15 * d * d)
                .collect();
            let twisted = Dissection::bisect(&a.pattern, |_| true);
            assert!(twisted.split() && twisted.cut().is_some());
            let iterations = |order: Dissection| {
                let mut ic = IncompleteCholesky::new();
                ic.symbolic_in(&a, order);
                assert_eq!(ic.factor(&a, &filter, 1.0), 0);
                pcg(&ic, &a, &filter, &b, 3e-4)
            };
            let own = iterations(Dissection::identity(n));
            let ascending = iterations(twisted.with_part_reversed(1));
            let descending = iterations(twisted.with_part_reversed(0));
            let tw = iterations(twisted);
            assert!(
                20 * tw <= 21 * own && 20 * ascending >= 21 * tw && 20 * descending >= 21 * tw,
                "{nx}x{ny}: own order {own}, twisted {tw}, B ascending {ascending}, both \
                 descending {descending}"
            );
        }
    }

    /// The sweeps skip the couplings of fixed rows: the same y and h to the bit as sweeping them
    /// (every such entry of the factor is zero), on a chain whose every third vertex is fixed.
    /// An n-vertex ring with chords (i, i + 7): SPD, diagonally dominant, general 3×3 blocks.
    fn ring_with_chords(n: usize) -> BlockMatrix {
        let pairs: Vec<[u32; 2]> = (0..n as u32)
            .flat_map(|i| [[i, (i + 1) % n as u32], [i, (i + 7) % n as u32]])
            .collect();
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, &pairs));
        for (i, d) in a.diag.iter_mut().enumerate() {
            let s = 6.0 + (i % 5) as f32 * 0.3;
            *d = Mat3::from_diagonal(Vec3::new(s, s + 1.0, s + 2.0)).into();
        }
        for (k, m) in a.off.iter_mut().enumerate() {
            let t = -0.7 - (k % 3) as f32 * 0.2;
            *m = Mat3::from_cols(
                Vec3::new(t, 0.1, 0.0),
                Vec3::new(0.1, t, 0.05),
                Vec3::new(0.0, 0.05, t),
            )
            .into();
        }
        a
    }

    /// A factor whose fixed rows keep the +0 entries an earlier factorization left
    /// ([`IncompleteCholesky::zeroed`]) is the fresh factor to the bit: across fixed sets that
    /// change between solves (rows fixed, freed, fixed again) and after a factorization stopped
    /// at a breakdown (rows not reached keep their old values).
    #[test]
    fn factors_leaving_the_zeros_of_fixed_rows_equal_fresh_ones() {
        for n in [300, SPLIT_FROM + 300] {
            let a = ring_with_chords(n);
            // Fixed: every k-th row (k = 3, 4, 5, then 3 again), a pinned band on every set.
            let filter = |k: usize| -> Vec<Filter> {
                (0..n)
                    .map(|i| {
                        if i < n / 5 || i % k == 0 {
                            Filter::Fixed
                        } else {
                            Filter::Free
                        }
                    })
                    .collect()
            };
            let values = |ic: &IncompleteCholesky| {
                let all: Vec<&Mat3A> =
                    ic.w.iter()
                        .chain(&ic.l)
                        .chain(&ic.l_upper)
                        .chain(&ic.d_inv)
                        .collect();
                all.iter()
                    .flat_map(|m| m.to_cols_array())
                    .map(f32::to_bits)
                    .collect::<Vec<u32>>()
            };
            let mut reused = IncompleteCholesky::new();
            for k in [3, 4, 5, 3] {
                let f = filter(k);
                assert_eq!(reused.factor(&a, &f, 1.0), 0);
                let mut fresh = IncompleteCholesky::new();
                assert_eq!(fresh.factor(&a, &f, 1.0), 0);
                assert_eq!(values(&reused), values(&fresh), "fixed every {k}th row");
                assert!(reused.skip.iter().any(|&s| s) || k == 3);
            }
            // A shift too small for this matrix breaks down part-way; the next factor is exact.
            let mut weak = a.clone();
            for d in weak.diag.iter_mut().skip(n / 2) {
                *d = Mat3A::from_diagonal(Vec3::splat(0.5));
            }
            let f = filter(4);
            assert!(!reused.try_factor(&weak, &f, 1.0));
            assert_eq!(reused.factor(&a, &filter(5), 1.0), 0);
            let mut fresh = IncompleteCholesky::new();
            assert_eq!(fresh.factor(&a, &filter(5), 1.0), 0);
            assert_eq!(
                values(&reused),
                values(&fresh),
                "after a stopped factorization"
            );
        }
    }

    #[test]
    fn sweeps_skipping_fixed_rows_give_the_same_bits() {
        for n in [300, SPLIT_FROM + 300] {
            let a = ring_with_chords(n);
            let filter: Vec<Filter> = (0..n)
                .map(|i| match i % 3 {
                    0 => Filter::Fixed,
                    1 => Filter::Plane(Vec3::Y),
                    _ => Filter::Free,
                })
                .collect();
            let mut ic = IncompleteCholesky::new();
            assert_eq!(ic.factor(&a, &filter, 1.0), 0);
            assert_eq!(ic.order().split(), n >= SPLIT_FROM);
            assert_eq!(ic.fixed.iter().filter(|&&f| f).count(), n.div_ceil(3));
            let mut all = ic.clone();
            all.fixed.fill(false);
            let r: Vec<Vec3A> = (0..n)
                .map(|i| {
                    let v = Vec3A::new((i as f32 * 0.37).sin(), 1.0, (i as f32 * 0.11).cos());
                    filter[i].apply_a(v)
                })
                .collect();
            let ((y1, h1, d1), (y2, h2, d2)) = (sweep(&ic, &r), sweep(&all, &r));
            assert_eq!(bits(&y1), bits(&y2));
            assert_eq!(bits(&h1), bits(&h2));
            assert_eq!(d1, d2);
            assert!(h1.iter().any(|v| v.length() > 0.1));
        }
    }

    /// `try_factor` stops (in every part) at a breakdown that `factor` repairs, and where none
    /// occurs gives `factor`'s factor to the bit.
    #[test]
    fn try_factor_stops_at_a_breakdown() {
        let n = SPLIT_FROM + 500;
        let pairs: Vec<[u32; 2]> = (0..n as u32 - 1).map(|i| [i, i + 1]).collect();
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, &pairs));
        for (i, d) in a.diag.iter_mut().enumerate() {
            // A weak pivot near one end: IC(0) of the unshifted matrix breaks down there.
            let s = if i == n - 100 { 1.2 } else { 4.0 };
            *d = Mat3::from_diagonal(Vec3::new(s, s + 1.0, s + 2.0)).into();
        }
        for i in 0..n - 1 {
            let s = a.pattern.slot(i as u32, i as u32 + 1).unwrap();
            a.off[s] = Mat3::from_diagonal(Vec3::new(-1.9, -2.4, -2.9)).into();
        }
        let filter = vec![Filter::Free; n];
        let mut ic = IncompleteCholesky::new();
        assert!(ic.factor(&a, &filter, 1.0) > 0);
        assert!(ic.order().split());
        assert!(!ic.try_factor(&a, &filter, 1.0));
        assert!(ic.try_factor(&a, &filter, 2.0));
        let mut whole = IncompleteCholesky::new();
        assert_eq!(whole.factor(&a, &filter, 2.0), 0);
        assert_eq!(ic.d_inv, whole.d_inv);
        assert_eq!(
            (&ic.w, &ic.l, &ic.l_upper),
            (&whole.w, &whole.l, &whole.l_upper)
        );
    }

    /// Every coupling is in the factor (in either direction), the weak (bending-only) ones too.
    #[test]
    fn keeps_every_coupling() {
        let n = 2000;
        let strong: Vec<[u32; 2]> = (0..n as u32)
            .flat_map(|i| [[i, (i + 1) % n as u32], [i, (i * 13 + 5) % n as u32]])
            .collect();
        let weak: Vec<[u32; 2]> = (0..n as u32).map(|i| [i, (i + 40) % n as u32]).collect();
        let a = BlockMatrix::new(BlockPattern::with_weak_pairs(n, &strong, &weak));
        let mut ic = IncompleteCholesky::new();
        ic.symbolic(&a);
        let p = &a.pattern;
        let perm = &ic.order().perm;
        let mut got: Vec<(u32, u32)> = (0..n)
            .flat_map(|i| {
                let row = ic.lower_ptr[i] as usize..ic.lower_ptr[i + 1] as usize;
                let (oi, perm) = (perm[i], &perm);
                ic.lower_col[row].iter().map(move |&j| {
                    let oj = perm[j as usize];
                    (oi.min(oj), oi.max(oj))
                })
            })
            .collect();
        got.sort_unstable();
        let want: Vec<(u32, u32)> = (0..n)
            .flat_map(|i| {
                (p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize)
                    .map(move |s| (i as u32, p.col[s]))
            })
            .collect();
        assert!(ic.order().split());
        assert_eq!(got, want);
        assert!(p.weak.iter().filter(|&&w| w).count() > n / 2);
    }

    /// A 1D chain (tridiagonal) has no fill in its own order, nor in the dissection order (each
    /// half in chain order, the one separator vertex last): IC(0) is the exact block LDLᵀ,
    /// M⁻¹·(A·x) = x.
    #[test]
    fn exact_on_a_chain() {
        for n in [40, SPLIT_FROM + 301] {
            let a = chain(n, false);
            let filter: Vec<Filter> = (0..n)
                .map(|i| match i % 5 {
                    0 => Filter::Plane(Vec3::new(0.6, 0.8, 0.0)),
                    3 => Filter::Fixed,
                    _ => Filter::Free,
                })
                .collect();
            let mut ic = IncompleteCholesky::new();
            assert_eq!(ic.factor(&a, &filter, 1.0), 0);
            if n >= SPLIT_FROM {
                let o = ic.order();
                assert_eq!(o.part(2).len(), 1, "{:?}", o.part(2));
                assert!(o.part(0).len().abs_diff(o.part(1).len()) <= 2);
            }
            // x in the free subspace; Ã·x = S·A·x.
            let x: Vec<Vec3A> = (0..n)
                .map(|i| {
                    let v = Vec3::new((i as f32).sin(), 1.0, (i as f32 * 0.3).cos());
                    filter[i].apply(v).into()
                })
                .collect();
            let ax: Vec<Vec3A> = (0..n)
                .map(|i| filter[i].apply_a(a.row_mul_a(i, &x)))
                .collect();
            let (_, h, dots) = sweep(&ic, &ax);
            // δ from the forward sweep is (Ãx)ᵀ·M⁻¹·(Ãx) = xᵀ·Ã·x.
            let xax: f64 = (0..n).map(|i| x[i].as_dvec3().dot(ax[i].as_dvec3())).sum();
            let delta: f64 = dots.iter().sum();
            assert!((delta - xax).abs() < 1e-4 * xax, "{delta} vs {xax}");
            for (hi, &i) in h.iter().zip(&ic.order().perm) {
                let xi = x[i as usize];
                assert!((*hi - xi).length() < 1e-4, "row {i}: {hi} vs {xi}");
            }
        }
    }

    /// With chords (fill dropped, so not exact) the factor and both sweeps give the same bits on
    /// one thread and on two.
    #[test]
    fn same_bits_on_one_and_two_threads() {
        let n = SPLIT_FROM + 777;
        let a = chain(n, true);
        let filter: Vec<Filter> = (0..n)
            .map(|i| {
                if i % 9 == 4 {
                    Filter::Fixed
                } else {
                    Filter::Free
                }
            })
            .collect();
        let r: Vec<Vec3A> = (0..n)
            .map(|i| filter[i].apply_a(Vec3A::new((i as f32).cos(), 0.5, 1.0)))
            .collect();
        let run = |threads: usize| {
            crate::fixtures::on_threads(threads, || {
                let mut ic = IncompleteCholesky::new();
                assert_eq!(ic.factor(&a, &filter, 1.0), 0);
                let (y, h, dots) = sweep(&ic, &r);
                (ic, y, h, dots)
            })
        };
        let (ic1, y1, h1, d1) = run(1);
        let (ic2, y2, h2, d2) = run(2);
        assert!(ic1.order().split());
        assert_eq!(
            (&ic1.w, &ic1.l_upper, &ic1.d_inv),
            (&ic2.w, &ic2.l_upper, &ic2.d_inv)
        );
        assert_eq!((bits(&y1), bits(&h1)), (bits(&y2), bits(&h2)));
        assert_eq!(d1, d2);
    }
}
