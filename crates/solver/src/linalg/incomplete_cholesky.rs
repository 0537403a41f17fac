//! Block incomplete Cholesky preconditioner IC(0) of the filtered system matrix (Saad, "Iterative
//! Methods for Sparse Linear Systems", 2nd ed., §10.3; 3×3 blocks, no fill beyond A's pattern).
//!
//! MPCG solves S·A·x = S·b on the free subspace of every vertex's filter S (Baraff & Witkin §5.3).
//! On that subspace the system is the SPD matrix Ã = S·A·S + (I − S) (blocks Ã_ij = S_i A_ij S_j,
//! Ã_ii = S_i A_ii S_i + (I − S_i)), which this module factors as
//!
//!   M = (D + W)·D⁻¹·(D + Wᵀ) ≈ Ã,   W strictly block-lower on A's pattern, D block-diagonal SPD,
//!   W_ij = Ã_ij − Σ_{k<j} W_ik D_k⁻¹ W_jkᵀ,   D_i = Ã_ii − Σ_{k<i} W_ik D_k⁻¹ W_ikᵀ,
//!
//! with the sums over k in the pattern of both rows. M is SPD whenever every D_i is (W arbitrary), so a
//! pivot that is not clearly positive definite (IC(0) breakdown) is replaced by Ã_ii and its row of
//! W dropped. MPCG then uses z = S·M⁻¹·r, SPD on the free subspace (Boxerman 2003 §5.2 asks exactly
//! this of a preconditioner). SPD is not enough, though: after a breakdown the other rows' L = W·D⁻¹
//! can be large and the triangular sweeps grow exponentially along the rows (an 80×80 cotton sheet at
//! rest, in-plane stiffness 1500× its out-of-plane mass term, broke down in 367 pivots and gave
//! rᵀM⁻¹r ≈ 1e36). The caller therefore refactors with the diagonal blocks scaled by 1 + α until no
//! pivot breaks down (shifted incomplete Cholesky: Manteuffel 1980, "An incomplete factorization
//! technique for positive definite linear systems", Math. Comp. 34).
//!
//! Couplings the pattern marks weak (bending-only ones between a hinge's opposite vertices) are
//! left out of W: half the entries, for a few more iterations.
//!
//! Rows are split into [`Partitions`] (their sizes depend on the row count only) and couplings
//! between partitions are dropped (a block-diagonal part of an SPD matrix is SPD): partitions factor
//! and solve independently, in parallel from [`SPLIT_FROM`] rows, with results independent of the
//! thread count. The triangular solves inside a partition are sequential and in row order (their
//! cost is the latency of the row-to-row chain, so a second partition on a second core nearly
//! halves it).

use super::block_sparse::BlockMatrix;
use super::mpcg::Filter;
use super::reduce::{CHUNK, PARALLEL_FROM};
use glam::{Mat3A, Vec3A};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Most rows per independent partition (a multiple of [`CHUNK`]).
pub const PARTITION: usize = 8 * CHUNK;

/// Systems from this many rows are split into partitions, so two cores share every sweep (the
/// chain of a sweep is latency-bound: two halves on two cores take about 0.55× the time of one
/// whole, from 1,900 rows; examples/linalg_kernels.rs); smaller ones are one partition on one
/// thread.
pub const SPLIT_FROM: usize = 1024;

/// Partition lengths are multiples of this many rows.
const ALIGN: usize = 64;

/// The split of an n-row system into consecutive partitions of [`Partitions::size`] rows (the last
/// may be shorter): one below [`SPLIT_FROM`] rows, two halves (in multiples of 64 rows) below
/// [`PARALLEL_FROM`], and [`PARTITION`] rows each from there. It depends on n only, so the factor
/// and every sweep give the same bits at any thread count. Each split drops the couplings across
/// it: measured on the same trajectory, the halves cost the 3.6k-vertex skirt 2.8 % more CG
/// iterations (the 1.9k-vertex cape's bake took 8.6 % more with the same substeps); four
/// partitions of 2,560 rows instead of 4,096, 4,096 and 1,808 would cost the 10k dress 1.3 %.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Partitions {
    n: usize,
    len: usize,
}

impl Partitions {
    pub fn of(n: usize) -> Self {
        let len = if n < SPLIT_FROM {
            n
        } else if n < PARALLEL_FROM {
            n.div_ceil(2)
        } else {
            PARTITION
        };
        Partitions {
            n,
            len: len.next_multiple_of(ALIGN).max(ALIGN),
        }
    }

    /// Rows per partition (the last may have fewer).
    #[inline]
    pub fn size(&self) -> usize {
        self.len
    }

    /// Number of partitions.
    #[inline]
    pub fn count(&self) -> usize {
        self.n.div_ceil(self.len)
    }

    /// Rows of partition `k`.
    #[inline]
    pub fn rows(&self, k: usize) -> Range<usize> {
        k * self.len..self.n.min((k + 1) * self.len)
    }

    /// Partial-sum slots per partition: one per [`CHUNK`] of its rows (unused ones of a short
    /// last partition are written 0).
    #[inline]
    pub fn slots(&self) -> usize {
        self.len.div_ceil(CHUNK)
    }

    /// Whether the per-partition passes run on the thread pool (two or more partitions).
    #[inline]
    pub fn parallel(&self) -> bool {
        self.count() >= 2
    }
}

/// A pivot whose Cholesky pivots fall below this fraction of Ã_ii's diagonal is replaced by Ã_ii.
const PIVOT_FLOOR: f32 = 1e-3;

/// Pattern-derived data (built once per sparsity pattern) and the factor's values, in the factor's
/// own compact row storage (only strong couplings inside a partition).
///
/// The sweeps use the equivalent unit-triangular form M = L·D·Lᵀ, L = I + W·D⁻¹: forward
/// L·y = r needs one block product per coupling on the row-to-row dependency chain (the
/// triangular sweeps are latency-bound, not bandwidth-bound), backward Lᵀ·h = D⁻¹·y likewise with a
/// row-ordered copy of Lᵀ.
#[derive(Debug, Default, Clone)]
pub struct IncompleteCholesky {
    /// Strictly lower entries (i, j), j < i, by row: `lower_ptr[i]..lower_ptr[i + 1]`, columns
    /// ascending; A_ij is the transpose of A's upper slot `lower_slot`.
    lower_ptr: Vec<u32>,
    lower_col: Vec<u32>,
    lower_slot: Vec<u32>,
    /// Strictly upper entries (i, j), j > i, by row, columns descending (so the sweep's latest
    /// row comes last); `upper_of` the lower entry (j, i) they mirror.
    upper_ptr: Vec<u32>,
    upper_col: Vec<u32>,
    upper_of: Vec<u32>,
    /// Per lower entry (i, j): the lower-entry pairs ((i, k), (j, k)) with k < j in both rows.
    update_ptr: Vec<u32>,
    update: Vec<[u32; 2]>,
    /// Per partition: W and L = W·D⁻¹ on its lower entries, Lᵀ on its upper entries; separate
    /// per partition so partitions factor in parallel without splitting per call.
    values: Vec<PartitionValues>,
    d_inv: Vec<Mat3A>,
    /// Per row: its vertex is fixed (S_i = 0), so every entry of its row and column of the
    /// factor is zero and the sweeps skip its couplings (a hard-pinned bodice is a fifth of the
    /// dress-walk sample's rows).
    fixed: Vec<bool>,
    /// Pattern size the symbolic data was built for (rows, blocks).
    shape: (usize, usize),
    parts: Partitions,
}

/// One partition's factor values, indexed by entry − the partition's first entry.
#[derive(Debug, Default, Clone)]
struct PartitionValues {
    w: Vec<Mat3A>,
    l: Vec<Mat3A>,
    l_upper: Vec<Mat3A>,
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
    ok.then(|| d.inverse()).filter(|m| m.is_finite())
}

impl IncompleteCholesky {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the compact lower structure and the update lists for `a`'s pattern: strong
    /// couplings ([`super::BlockPattern::weak`] unset) between rows of the same partition.
    fn symbolic(&mut self, a: &BlockMatrix) {
        let p = &a.pattern;
        let n = p.rows();
        let nnz = p.col.len();
        let parts = Partitions::of(n);
        if self.shape == (n, nnz) && self.parts == parts && self.lower_ptr.len() == n + 1 {
            return;
        }
        let mut lower_ptr = vec![0u32];
        let (mut lower_col, mut lower_slot) = (Vec::new(), Vec::new());
        for i in 0..n {
            let part = parts.rows(i / parts.size());
            for k in p.lower_ptr[i] as usize..p.lower_ptr[i + 1] as usize {
                let (j, s) = (p.lower_col[k] as usize, p.lower_slot[k] as usize);
                if !p.weak[s] && j >= part.start {
                    lower_col.push(j as u32);
                    lower_slot.push(s as u32);
                }
            }
            lower_ptr.push(lower_col.len() as u32);
        }
        // Upper entries of row j mirror lower entries (i, j), i > j: transposed counting sort,
        // then each row reversed (descending columns).
        let mut upper_ptr = vec![0u32; n + 1];
        for &j in &lower_col {
            upper_ptr[j as usize + 1] += 1;
        }
        for j in 0..n {
            upper_ptr[j + 1] += upper_ptr[j];
        }
        let mut fill = upper_ptr.clone();
        let mut upper_col = vec![0u32; lower_col.len()];
        let mut upper_of = vec![0u32; lower_col.len()];
        for i in 0..n {
            let row = lower_ptr[i] as usize..lower_ptr[i + 1] as usize;
            for (e, &j) in row.clone().zip(&lower_col[row]) {
                let j = j as usize;
                let at = fill[j] as usize;
                upper_col[at] = i as u32;
                upper_of[at] = e as u32;
                fill[j] += 1;
            }
        }
        for j in 0..n {
            let row = upper_ptr[j] as usize..upper_ptr[j + 1] as usize;
            upper_col[row.clone()].reverse();
            upper_of[row].reverse();
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
        let values = (0..parts.count())
            .map(|k| {
                let rows = parts.rows(k);
                let m = (lower_ptr[rows.end] - lower_ptr[rows.start]) as usize;
                PartitionValues {
                    w: vec![Mat3A::ZERO; m],
                    l: vec![Mat3A::ZERO; m],
                    l_upper: vec![Mat3A::ZERO; m],
                }
            })
            .collect();
        *self = IncompleteCholesky {
            lower_ptr,
            lower_col,
            lower_slot,
            upper_ptr,
            upper_col,
            upper_of,
            update_ptr,
            update,
            values,
            d_inv: vec![Mat3A::IDENTITY; n],
            fixed: vec![false; n],
            shape: (n, nnz),
            parts,
        };
    }

    /// Factors Ã' = S·A·S + (I − S) with every diagonal block scaled by `shift` (1 = Ã itself; see
    /// the module doc). Returns the number of pivots that broke down and were replaced by Ã'_ii.
    pub fn factor(&mut self, a: &BlockMatrix, filter: &[Filter], shift: f32) -> u32 {
        self.factor_or_stop(a, filter, shift, None)
    }

    /// [`Self::factor`] if no pivot breaks down (true; the same factor to the bit); otherwise
    /// false as soon as one does (every partition stops), leaving the factor unusable until the
    /// next factorization. A caller trying shifts in turn then pays only for the rows up to the
    /// first breakdown of each failed shift (the 3.6k-vertex skirt and the 10k dress try about
    /// three shifts per solve).
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
        self.fixed.clear();
        self.fixed
            .extend(filter.iter().map(|f| *f == Filter::Fixed));
        let sym = Symbolic {
            lower_ptr: &self.lower_ptr,
            lower_col: &self.lower_col,
            lower_slot: &self.lower_slot,
            upper_ptr: &self.upper_ptr,
            upper_of: &self.upper_of,
            update_ptr: &self.update_ptr,
            update: &self.update,
        };
        let parts = self.parts;
        let job = |(k, (values, d_inv)): (usize, (&mut PartitionValues, &mut [Mat3A]))| {
            factor_partition(&sym, a, filter, shift, parts.rows(k), values, d_inv, stop)
        };
        if parts.parallel() {
            self.values
                .par_iter_mut()
                .zip(self.d_inv.par_chunks_mut(parts.size()))
                .enumerate()
                .map(job)
                .sum()
        } else {
            self.values
                .iter_mut()
                .zip(self.d_inv.chunks_mut(parts.size()))
                .enumerate()
                .map(job)
                .sum()
        }
    }

    /// The partitions of the system last factored.
    pub fn partitions(&self) -> Partitions {
        self.parts
    }

    /// Forward sweep on the rows of partition `k`: L·y = r with rᵢ = `rhs(i − first row)`
    /// (called once per row, in row order, so the caller can compute r on the fly). Writes y (the
    /// partition's slice) and, per [`CHUNK`] of rows ([`Partitions::slots`] of them), Σ yᵢᵀ·D_i⁻¹·yᵢ into `dots`: their total is
    /// rᵀ·M⁻¹·r, the MPCG's δ, without the backward sweep.
    #[inline]
    pub fn forward_partition(
        &self,
        k: usize,
        mut rhs: impl FnMut(usize) -> Vec3A,
        y: &mut [Vec3A],
        dots: &mut [f64],
    ) {
        let base = k * self.parts.size();
        let l_val = &self.values[k].l;
        let e_base = self.lower_ptr[base] as usize;
        for (c, dot) in dots.iter_mut().enumerate() {
            let mut sum = 0.0f64;
            for l in c * CHUNK..y.len().min((c + 1) * CHUNK) {
                let i = base + l;
                let mut acc = rhs(l);
                let (e0, e1) = (self.lower_ptr[i] as usize, self.lower_ptr[i + 1] as usize);
                // A fixed row's couplings are zero (see `fixed`).
                let e1 = if self.fixed[i] { e0 } else { e1 };
                for (m, &j) in l_val[e0 - e_base..e1 - e_base]
                    .iter()
                    .zip(&self.lower_col[e0..e1])
                {
                    acc -= *m * y[j as usize - base];
                }
                y[l] = acc;
                sum += acc.as_dvec3().dot((self.d_inv[i] * acc).as_dvec3());
            }
            *dot = sum;
        }
    }

    /// Backward sweep on the rows of partition `k`: Lᵀ·h = D⁻¹·y, in place (`yh` holds y on
    /// entry, h = M⁻¹·r on exit), from the last row: hᵢ = D_i⁻¹·yᵢ − Σ_{j>i} L_jiᵀ·hⱼ.
    /// `each(i − first row, hᵢ)` is called as soon as hᵢ is final.
    #[inline]
    pub fn backward_partition(
        &self,
        k: usize,
        yh: &mut [Vec3A],
        mut each: impl FnMut(usize, Vec3A),
    ) {
        let base = k * self.parts.size();
        let lu = &self.values[k].l_upper;
        let e_base = self.upper_ptr[base] as usize;
        for l in (0..yh.len()).rev() {
            let i = base + l;
            let mut acc = self.d_inv[i] * yh[l];
            let (e0, e1) = (self.upper_ptr[i] as usize, self.upper_ptr[i + 1] as usize);
            let e1 = if self.fixed[i] { e0 } else { e1 };
            for (m, &j) in lu[e0 - e_base..e1 - e_base]
                .iter()
                .zip(&self.upper_col[e0..e1])
            {
                acc -= *m * yh[j as usize - base];
            }
            yh[l] = acc;
            each(l, acc);
        }
    }
}

/// Borrowed symbolic data for the partition workers.
struct Symbolic<'a> {
    lower_ptr: &'a [u32],
    lower_col: &'a [u32],
    lower_slot: &'a [u32],
    upper_ptr: &'a [u32],
    upper_of: &'a [u32],
    update_ptr: &'a [u32],
    update: &'a [[u32; 2]],
}

/// Factors one partition in row order into its `values` and `d_inv` (the partition's slice), with
/// the diagonal blocks scaled by `shift`.
/// Returns the number of replaced pivots. With `stop`: returns 1 at the first breakdown, raising
/// `stop`, and returns 1 as soon as another partition has raised it.
#[allow(clippy::too_many_arguments)]
fn factor_partition(
    sym: &Symbolic,
    a: &BlockMatrix,
    filter: &[Filter],
    shift: f32,
    rows: Range<usize>,
    values: &mut PartitionValues,
    d_inv: &mut [Mat3A],
    stop: Option<&AtomicBool>,
) -> u32 {
    let (w, wd) = (&mut values.w, &mut values.l);
    let e_base = sym.lower_ptr[rows.start] as usize;
    let base = rows.start;
    let mut replaced = 0;
    for i in rows.clone() {
        if stop.is_some_and(|s| s.load(Relaxed)) {
            return 1;
        }
        let si = filter[i];
        let mut d = filtered_diag(a.diag[i], si) * shift;
        let reference = d;
        for e in sym.lower_ptr[i] as usize..sym.lower_ptr[i + 1] as usize {
            let j = sym.lower_col[e] as usize;
            // A_ij = (upper block (j, i))ᵀ.
            let aij = a.off[sym.lower_slot[e] as usize].transpose();
            let mut m = filtered(aij, si, filter[j]);
            let updates = sym.update_ptr[e] as usize..sym.update_ptr[e + 1] as usize;
            for &[eik, ejk] in &sym.update[updates] {
                m -= wd[eik as usize - e_base] * w[ejk as usize - e_base].transpose();
            }
            let md = m * d_inv[j - base];
            w[e - e_base] = m;
            wd[e - e_base] = md;
            d -= md * m.transpose();
        }
        d_inv[i - base] = match spd_inverse(d, reference) {
            Some(inv) => inv,
            None => {
                if let Some(s) = stop {
                    s.store(true, Relaxed);
                    return 1;
                }
                replaced += 1;
                let row =
                    sym.lower_ptr[i] as usize - e_base..sym.lower_ptr[i + 1] as usize - e_base;
                w[row.clone()].fill(Mat3A::ZERO);
                wd[row].fill(Mat3A::ZERO);
                spd_inverse(reference, reference).unwrap_or(Mat3A::IDENTITY)
            }
        };
    }
    // Upper entries: L_jiᵀ (row-ordered copy for the backward sweep).
    let upper = sym.upper_ptr[rows.start] as usize..sym.upper_ptr[rows.end] as usize;
    for (lu, &e) in values.l_upper.iter_mut().zip(&sym.upper_of[upper]) {
        *lu = values.l[e as usize - e_base].transpose();
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::super::block_sparse::BlockPattern;
    use super::*;
    use glam::{Mat3, Vec3};

    /// Partitions cover the rows in order and are aligned: one, then two about equal halves,
    /// then [`PARTITION`] rows each.
    #[test]
    fn partitions_depend_on_the_row_count() {
        assert_eq!(Partitions::of(SPLIT_FROM - 1).count(), 1);
        assert_eq!(Partitions::of(1936).size(), 1024);
        assert_eq!(Partitions::of(3584).size(), 1792);
        assert_eq!(Partitions::of(PARALLEL_FROM - 1).count(), 2);
        assert_eq!(Partitions::of(10_000).size(), PARTITION);
        for n in [
            1,
            100,
            SPLIT_FROM - 1,
            SPLIT_FROM,
            3584,
            8191,
            8192,
            10_000,
            40_000,
        ] {
            let p = Partitions::of(n);
            assert!(
                p.size().is_multiple_of(ALIGN) && p.size() <= PARTITION.max(n),
                "{n}: {p:?}"
            );
            assert_eq!(p.rows(0).start, 0);
            assert_eq!(p.rows(p.count() - 1).end, n);
            let last = p.rows(p.count() - 1).len();
            assert!(last > 0, "{n}: {p:?}");
            if n < PARALLEL_FROM {
                assert!(p.size() - last < 2 * ALIGN, "{n}: {p:?}");
            }
        }
    }

    /// The sweeps skip the couplings of fixed rows: the same y and h to the bit as sweeping them
    /// (every such entry of the factor is zero), on a chain whose every third vertex is fixed.
    #[test]
    fn sweeps_skipping_fixed_rows_give_the_same_bits() {
        let n = 300;
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
        let filter: Vec<Filter> = (0..n)
            .map(|i| match i % 3 {
                0 => Filter::Fixed,
                1 => Filter::Plane(Vec3::Y),
                _ => Filter::Free,
            })
            .collect();
        let mut ic = IncompleteCholesky::new();
        assert_eq!(ic.factor(&a, &filter, 1.0), 0);
        assert_eq!(ic.fixed.iter().filter(|&&f| f).count(), n / 3);
        let mut all = ic.clone();
        all.fixed.fill(false);
        let r: Vec<Vec3A> = (0..n)
            .map(|i| {
                let v = Vec3A::new((i as f32 * 0.37).sin(), 1.0, (i as f32 * 0.11).cos());
                filter[i].apply_a(v)
            })
            .collect();
        let sweep = |ic: &IncompleteCholesky| {
            let mut h = vec![Vec3A::ZERO; n];
            let mut dots = vec![0.0; n.div_ceil(CHUNK)];
            ic.forward_partition(0, |i| r[i], &mut h, &mut dots);
            let y = h.clone();
            ic.backward_partition(0, &mut h, |_, _| {});
            (y, h, dots)
        };
        let bits = |v: &[Vec3A]| -> Vec<[u32; 3]> {
            v.iter().map(|x| x.to_array().map(f32::to_bits)).collect()
        };
        let ((y1, h1, d1), (y2, h2, d2)) = (sweep(&ic), sweep(&all));
        assert_eq!(bits(&y1), bits(&y2));
        assert_eq!(bits(&h1), bits(&h2));
        assert_eq!(d1, d2);
        assert!(h1.iter().any(|v| v.length() > 0.1));
    }

    /// `try_factor` stops (in every partition) at a breakdown that `factor` repairs, and where none
    /// occurs gives `factor`'s factor to the bit.
    #[test]
    fn try_factor_stops_at_a_breakdown() {
        let n = SPLIT_FROM + 500;
        let pairs: Vec<[u32; 2]> = (0..n as u32 - 1).map(|i| [i, i + 1]).collect();
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, &pairs));
        for (i, d) in a.diag.iter_mut().enumerate() {
            // Weak pivots in the second partition: IC(0) of the unshifted matrix breaks down there.
            let s = if i == n - 100 { 1.2 } else { 4.0 };
            *d = Mat3::from_diagonal(Vec3::new(s, s + 1.0, s + 2.0)).into();
        }
        for i in 0..n - 1 {
            let s = a.pattern.slot(i as u32, i as u32 + 1).unwrap();
            a.off[s] = Mat3::from_diagonal(Vec3::new(-1.9, -2.4, -2.9)).into();
        }
        let filter = vec![Filter::Free; n];
        assert_eq!(Partitions::of(n).count(), 2);
        let mut ic = IncompleteCholesky::new();
        assert!(ic.factor(&a, &filter, 1.0) > 0);
        assert!(!ic.try_factor(&a, &filter, 1.0));
        assert!(ic.try_factor(&a, &filter, 2.0));
        let mut whole = IncompleteCholesky::new();
        assert_eq!(whole.factor(&a, &filter, 2.0), 0);
        assert_eq!(ic.d_inv, whole.d_inv);
        for (p, q) in ic.values.iter().zip(&whole.values) {
            assert_eq!((&p.w, &p.l, &p.l_upper), (&q.w, &q.l, &q.l_upper));
        }
    }

    /// A 1D chain (tridiagonal) has no fill: IC(0) is the exact block LDLᵀ, M⁻¹·(A·x) = x.
    #[test]
    fn exact_on_a_chain() {
        let n = 40;
        let pairs: Vec<[u32; 2]> = (0..n as u32 - 1).map(|i| [i, i + 1]).collect();
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, &pairs));
        for (i, d) in a.diag.iter_mut().enumerate() {
            let mut m = Mat3::from_diagonal(Vec3::new(4.0, 5.0, 6.0 + i as f32 * 0.01));
            m.x_axis.y = 0.5;
            m.y_axis.x = 0.5;
            *d = m.into();
        }
        for i in 0..n - 1 {
            let k = Mat3::from_cols(
                Vec3::new(-1.0, 0.2, 0.0),
                Vec3::new(0.3, -1.5, 0.1),
                Vec3::new(0.0, 0.4, -2.0),
            );
            let s = a.pattern.slot(i as u32, i as u32 + 1).unwrap();
            a.off[s] = k.into();
        }
        let filter: Vec<Filter> = (0..n)
            .map(|i| match i % 5 {
                0 => Filter::Plane(Vec3::new(0.6, 0.8, 0.0)),
                3 => Filter::Fixed,
                _ => Filter::Free,
            })
            .collect();
        let mut ic = IncompleteCholesky::new();
        assert_eq!(ic.factor(&a, &filter, 1.0), 0);
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
        let mut h = vec![Vec3A::ZERO; n];
        let mut dots = vec![0.0; 1];
        ic.forward_partition(0, |i| ax[i], &mut h, &mut dots);
        let mut order = Vec::new();
        ic.backward_partition(0, &mut h, |i, _| order.push(i));
        assert_eq!(order, (0..n).rev().collect::<Vec<_>>());
        // δ from the forward sweep is (Ãx)ᵀ·M⁻¹·(Ãx) = xᵀ·Ã·x.
        let xax: f64 = (0..n).map(|i| x[i].as_dvec3().dot(ax[i].as_dvec3())).sum();
        assert!((dots[0] - xax).abs() < 1e-4 * xax, "{} vs {xax}", dots[0]);
        for i in 0..n {
            assert!(
                (h[i] - x[i]).length() < 1e-4,
                "row {i}: {} vs {}",
                h[i],
                x[i]
            );
        }
    }
}
