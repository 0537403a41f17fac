//! Symmetric 3×3 block sparse matrix in half storage: diagonal blocks separately, and each
//! off-diagonal coupling once, as the upper block (i, j), i < j, in block CSR by row. The lower block
//! (j, i) is its transpose, reached through a transposed index (row j's slots of (i, j), i < j), so a
//! row-parallel gather stays deterministic and a serial product needs one pass over the upper blocks
//! (half the memory traffic of full storage, which the CG repeats every iteration). The pattern is
//! built once per topology; values are refilled every substep.

use glam::{Mat3A, Vec3, Vec3A};

/// Off-diagonal sparsity in half storage.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BlockPattern {
    /// Upper blocks (i, j), j > i, of row i: slots `row_ptr[i]..row_ptr[i + 1]`, columns ascending.
    pub row_ptr: Vec<u32>,
    pub col: Vec<u32>,
    /// Per slot: the coupling is weak (e.g. bending-only, between the opposite vertices of a
    /// hinge); preconditioners may drop it.
    pub weak: Vec<bool>,
    /// Lower blocks (i, j), j < i, of row i: `lower_ptr[i]..lower_ptr[i + 1]`, columns `lower_col`
    /// ascending; each is the transpose of upper slot `lower_slot`.
    pub lower_ptr: Vec<u32>,
    pub lower_col: Vec<u32>,
    pub lower_slot: Vec<u32>,
    /// Per row (empty: none): its vertex is fixed in every solve (hard-pinned), so its row of a
    /// preconditioner is trivial; orderings weigh it as little work
    /// ([`super::dissection::Dissection`]).
    pub pinned: Vec<bool>,
}

impl BlockPattern {
    /// Pattern of an `n`-vertex system coupling every pair in `pairs` (either order; duplicates and
    /// `i == j` pairs are ignored).
    pub fn from_pairs(n: usize, pairs: &[[u32; 2]]) -> Self {
        Self::with_weak_pairs(n, pairs, &[])
    }

    /// Like [`Self::from_pairs`] over `pairs` and `weak_pairs`; slots only `weak_pairs` couple are
    /// marked [`Self::weak`].
    pub fn with_weak_pairs(n: usize, pairs: &[[u32; 2]], weak_pairs: &[[u32; 2]]) -> Self {
        let tagged = |list: &[[u32; 2]], weak: bool| -> Vec<(u32, u32, bool)> {
            list.iter()
                .filter(|p| p[0] != p[1])
                .map(|p| (p[0].min(p[1]), p[0].max(p[1]), weak))
                .collect()
        };
        let mut upper = tagged(pairs, false);
        upper.extend(tagged(weak_pairs, true));
        // Sorting puts a strong entry (false) before a weak duplicate; dedup keeps the first.
        upper.sort_unstable();
        upper.dedup_by_key(|e| (e.0, e.1));
        let count = |key: &dyn Fn(&(u32, u32, bool)) -> u32| {
            let mut ptr = vec![0u32; n + 1];
            for e in &upper {
                ptr[key(e) as usize + 1] += 1;
            }
            for i in 0..n {
                ptr[i + 1] += ptr[i];
            }
            ptr
        };
        let row_ptr = count(&|e| e.0);
        // Transposed index: upper slots are in (i, j) order, so filling by column j visits each
        // row j's lower entries with ascending i.
        let lower_ptr = count(&|e| e.1);
        let mut fill = lower_ptr.clone();
        let (mut lower_col, mut lower_slot) = (vec![0u32; upper.len()], vec![0u32; upper.len()]);
        for (s, &(i, j, _)) in upper.iter().enumerate() {
            let at = fill[j as usize] as usize;
            lower_col[at] = i;
            lower_slot[at] = s as u32;
            fill[j as usize] += 1;
        }
        BlockPattern {
            row_ptr,
            col: upper.iter().map(|e| e.1).collect(),
            weak: upper.iter().map(|e| e.2).collect(),
            lower_ptr,
            lower_col,
            lower_slot,
            pinned: Vec::new(),
        }
    }

    pub fn rows(&self) -> usize {
        self.row_ptr.len() - 1
    }

    /// Slot of the upper block (i, j), i < j, if it is in the pattern (None for i >= j).
    pub fn slot(&self, i: u32, j: u32) -> Option<usize> {
        if i >= j {
            return None;
        }
        let (a, b) = (
            self.row_ptr[i as usize] as usize,
            self.row_ptr[i as usize + 1] as usize,
        );
        self.col[a..b].binary_search(&j).ok().map(|k| a + k)
    }
}

/// Values on a [`BlockPattern`]. Blocks are SIMD-aligned (`Mat3A`) for the product.
#[derive(Debug, Clone, Default)]
pub struct BlockMatrix {
    pub pattern: BlockPattern,
    pub diag: Vec<Mat3A>,
    /// Upper blocks (i, j), i < j, by slot.
    pub off: Vec<Mat3A>,
}

/// Mᵀ·v.
#[inline(always)]
pub fn transpose_mul(m: &Mat3A, v: Vec3A) -> Vec3A {
    Vec3A::new(m.x_axis.dot(v), m.y_axis.dot(v), m.z_axis.dot(v))
}

impl BlockMatrix {
    pub fn new(pattern: BlockPattern) -> Self {
        let (n, nnz) = (pattern.rows(), pattern.col.len());
        BlockMatrix {
            pattern,
            diag: vec![Mat3A::ZERO; n],
            off: vec![Mat3A::ZERO; nnz],
        }
    }

    /// (A·x)ᵢ for SIMD-aligned vectors, gathered from row i's diagonal, upper and (transposed)
    /// lower blocks in that order.
    #[inline]
    pub fn row_mul_a(&self, i: usize, x: &[Vec3A]) -> Vec3A {
        let p = &self.pattern;
        let (a, b) = (p.row_ptr[i] as usize, p.row_ptr[i + 1] as usize);
        let mut acc = self.diag[i] * x[i];
        for (m, &j) in self.off[a..b].iter().zip(&p.col[a..b]) {
            acc += *m * x[j as usize];
        }
        let (a, b) = (p.lower_ptr[i] as usize, p.lower_ptr[i + 1] as usize);
        for (&s, &j) in p.lower_slot[a..b].iter().zip(&p.lower_col[a..b]) {
            acc += transpose_mul(&self.off[s as usize], x[j as usize]);
        }
        acc
    }

    /// (A·x)ᵢ.
    #[inline]
    pub fn row_mul(&self, i: usize, x: &[Vec3]) -> Vec3 {
        let p = &self.pattern;
        let (a, b) = (p.row_ptr[i] as usize, p.row_ptr[i + 1] as usize);
        let mut acc = self.diag[i] * Vec3A::from(x[i]);
        for s in a..b {
            acc += self.off[s] * Vec3A::from(x[p.col[s] as usize]);
        }
        let (a, b) = (p.lower_ptr[i] as usize, p.lower_ptr[i + 1] as usize);
        for k in a..b {
            let s = p.lower_slot[k] as usize;
            acc += transpose_mul(&self.off[s], Vec3A::from(x[p.lower_col[k] as usize]));
        }
        acc.into()
    }

    /// ([`Self::row_mul_a`]`(i, u)`, [`Self::row_mul`]`(i, x)`) in one pass over row i's blocks,
    /// each with the bits of its own call (the same products, summed in the same order).
    #[inline]
    pub fn row_mul_pair(&self, i: usize, u: &[Vec3A], x: &[Vec3]) -> (Vec3A, Vec3) {
        let p = &self.pattern;
        let (a, b) = (p.row_ptr[i] as usize, p.row_ptr[i + 1] as usize);
        let d = self.diag[i];
        let (mut acc_u, mut acc_x) = (d * u[i], d * Vec3A::from(x[i]));
        for (m, &j) in self.off[a..b].iter().zip(&p.col[a..b]) {
            acc_u += *m * u[j as usize];
            acc_x += *m * Vec3A::from(x[j as usize]);
        }
        let (a, b) = (p.lower_ptr[i] as usize, p.lower_ptr[i + 1] as usize);
        for (&s, &j) in p.lower_slot[a..b].iter().zip(&p.lower_col[a..b]) {
            let m = &self.off[s as usize];
            acc_u += transpose_mul(m, u[j as usize]);
            acc_x += transpose_mul(m, Vec3A::from(x[j as usize]));
        }
        (acc_u, acc_x.into())
    }

    /// y = A·x in one serial pass over the upper blocks: row i adds its diagonal and upper
    /// products to yᵢ and scatters the transposed products to the later rows yⱼ, so yᵢ is complete
    /// after row i; `finish(i, &mut yᵢ)` is then called, in row order. `y` is overwritten.
    #[inline]
    pub fn mul_serial(&self, x: &[Vec3A], y: &mut [Vec3A], finish: impl FnMut(usize, &mut Vec3A)) {
        self.mul_rows(0, x, y, finish);
    }

    /// Rows `first..first + y.len()` of y = A·x, bit-identical to the same rows of
    /// [`Self::mul_serial`], touching only that slice of y (so disjoint row ranges run in parallel
    /// and the result does not depend on how they are spread over threads). The transposed products
    /// from rows before `first` (a prefix of each row's ascending lower columns: only rows within the
    /// bandwidth of `first` have any) are gathered first, in ascending source row, then the rows of
    /// the range scatter theirs as in the serial pass: each yⱼ sums the same terms in the same order
    /// as there. Each off-diagonal block is read about once (the per-row gather [`Self::row_mul_a`]
    /// reads every block twice, the second time through the transposed index).
    /// `finish(i, &mut yᵢ)` with the global row i, in row order.
    #[inline]
    pub fn mul_rows(
        &self,
        first: usize,
        x: &[Vec3A],
        y: &mut [Vec3A],
        finish: impl FnMut(usize, &mut Vec3A),
    ) {
        self.mul_rows_skipping(first, x, y, &[], finish)
    }

    /// [`Self::mul_rows`] without the blocks of the rows i with `skip[i]` (an empty `skip`: none):
    /// for a product whose x is zero on those rows and whose y there is discarded (MPCG's S·A·p
    /// with the fixed vertices skipped), which then gives the same y everywhere else. `finish` is
    /// still called for every row.
    #[inline]
    pub fn mul_rows_skipping(
        &self,
        first: usize,
        x: &[Vec3A],
        y: &mut [Vec3A],
        skip: &[bool],
        mut finish: impl FnMut(usize, &mut Vec3A),
    ) {
        let p = &self.pattern;
        let end = first + y.len();
        for (l, yl) in y.iter_mut().enumerate() {
            let j = first + l;
            let mut acc = Vec3A::ZERO;
            for k in p.lower_ptr[j] as usize..p.lower_ptr[j + 1] as usize {
                let i = p.lower_col[k] as usize;
                if i >= first {
                    break;
                }
                acc += transpose_mul(&self.off[p.lower_slot[k] as usize], x[i]);
            }
            *yl = acc;
        }
        for i in first..end {
            if skip.get(i).copied().unwrap_or(false) {
                finish(i, &mut y[i - first]);
                continue;
            }
            let (a, b) = (p.row_ptr[i] as usize, p.row_ptr[i + 1] as usize);
            let xi = x[i];
            let mut acc = self.diag[i] * xi;
            for (m, &j) in self.off[a..b].iter().zip(&p.col[a..b]) {
                let j = j as usize;
                acc += *m * x[j];
                if j < end {
                    y[j - first] += transpose_mul(m, xi);
                }
            }
            let yi = &mut y[i - first];
            *yi += acc;
            finish(i, yi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_upper_with_a_transposed_index() {
        let p = BlockPattern::from_pairs(4, &[[2, 0], [0, 1], [1, 0], [3, 3], [1, 2]]);
        assert_eq!(p.row_ptr, vec![0, 2, 3, 3, 3]);
        assert_eq!(p.col, vec![1, 2, 2]);
        assert_eq!(p.slot(1, 2), Some(2));
        assert_eq!(p.slot(2, 1), None);
        assert_eq!(p.slot(0, 3), None);
        assert_eq!(p.lower_ptr, vec![0, 0, 1, 3, 3]);
        assert_eq!(p.lower_col, vec![0, 0, 1]);
        assert_eq!(p.lower_slot, vec![0, 1, 2]);
        assert!(p.weak.iter().all(|w| !w));
        let q = BlockPattern::with_weak_pairs(3, &[[0, 1]], &[[1, 0], [1, 2]]);
        assert_eq!(q.col, vec![1, 2]);
        assert_eq!(q.weak, vec![false, true]);
    }

    /// A matrix on the pattern of `pairs` whose entries are `val(k)`: diagonal block i takes
    /// k = 9i..9i + 9, off-diagonal slot s takes k = `off_from` + 9s.. `off_from` + 9s + 9.
    fn filled(
        n: usize,
        pairs: &[[u32; 2]],
        val: impl Fn(usize) -> f32,
        off_from: usize,
    ) -> BlockMatrix {
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, pairs));
        for (i, d) in a.diag.iter_mut().enumerate() {
            *d = Mat3A::from_cols_array(&std::array::from_fn(|k| val(9 * i + k)));
        }
        for (s, m) in a.off.iter_mut().enumerate() {
            *m = Mat3A::from_cols_array(&std::array::from_fn(|k| val(off_from + 9 * s + k)));
        }
        a
    }

    /// The paired row product has the bits of the two single ones.
    #[test]
    fn paired_row_product_has_the_single_bits() {
        let n = 9;
        let pairs: Vec<[u32; 2]> = (0..n as u32)
            .flat_map(|i| [[i, (i + 1) % n as u32], [i, (i * 4 + 3) % n as u32]])
            .collect();
        let a = filled(n, &pairs, |k| ((k * 31 % 17) as f32 - 8.0) * 0.37, 70);
        let u: Vec<Vec3A> = (0..n)
            .map(|i| Vec3A::new(0.3 * i as f32 - 1.1, 1.0 / (1.0 + i as f32), -0.7))
            .collect();
        let x: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(1.3, (i as f32).sin(), 0.01 * i as f32))
            .collect();
        for i in 0..n {
            let (pu, px) = a.row_mul_pair(i, &u, &x);
            assert_eq!(
                pu.to_array().map(f32::to_bits),
                a.row_mul_a(i, &u).to_array().map(f32::to_bits)
            );
            assert_eq!(
                px.to_array().map(f32::to_bits),
                a.row_mul(i, &x).to_array().map(f32::to_bits)
            );
        }
    }

    /// Skipping rows whose x is zero changes no other row of the product, in any row range.
    #[test]
    fn skipped_rows_change_no_other_row() {
        let n = 9;
        let pairs: Vec<[u32; 2]> = (0..n as u32)
            .flat_map(|i| [[i, (i + 1) % n as u32], [i, (i * 4 + 3) % n as u32]])
            .collect();
        let a = filled(n, &pairs, |k| ((k * 29 % 13) as f32 - 6.0) * 0.3, 50);
        let skip: Vec<bool> = (0..n).map(|i| i % 3 == 1).collect();
        let x: Vec<Vec3A> = (0..n)
            .map(|i| {
                if skip[i] {
                    Vec3A::ZERO
                } else {
                    Vec3A::new(1.0 + i as f32, -0.5 * i as f32, 0.75)
                }
            })
            .collect();
        let bits = |v: &Vec3A| v.to_array().map(f32::to_bits);
        for first in [0, 2, 5] {
            let (mut full, mut part) = (vec![Vec3A::ZERO; n - first], vec![Vec3A::ZERO; n - first]);
            let mut called = Vec::new();
            a.mul_rows(first, &x, &mut full, |_, _| {});
            a.mul_rows_skipping(first, &x, &mut part, &skip, |i, _| called.push(i));
            assert_eq!(called, (first..n).collect::<Vec<_>>());
            for i in first..n {
                if !skip[i] {
                    assert_eq!(bits(&full[i - first]), bits(&part[i - first]), "row {i}");
                }
            }
        }
    }

    /// The serial one-pass product and the row gather agree with the dense product.
    #[test]
    fn products_match_the_dense_matrix() {
        let n = 7;
        let pairs: Vec<[u32; 2]> = (0..n as u32)
            .flat_map(|i| [[i, (i + 1) % n as u32], [i, (i * 3 + 2) % n as u32]])
            .collect();
        let a = filled(n, &pairs, |k| ((k * 37 % 11) as f32 - 5.0) * 0.25, 100);
        let dense = |i: usize, j: usize| -> Mat3A {
            if i == j {
                a.diag[i]
            } else if let Some(s) = a.pattern.slot(i as u32, j as u32) {
                a.off[s]
            } else if let Some(s) = a.pattern.slot(j as u32, i as u32) {
                a.off[s].transpose()
            } else {
                Mat3A::ZERO
            }
        };
        let x: Vec<Vec3A> = (0..n)
            .map(|i| Vec3A::new(i as f32, 1.0 - i as f32 * 0.5, 0.25))
            .collect();
        let mut y = vec![Vec3A::splat(9.0); n];
        let mut order = Vec::new();
        a.mul_serial(&x, &mut y, |i, _| order.push(i));
        assert_eq!(order, (0..n).collect::<Vec<_>>());
        let xs: Vec<Vec3> = x.iter().map(|&v| v.into()).collect();
        // Any split into row ranges gives the serial product's bits.
        for split in [1, 3, 6] {
            let mut z = vec![Vec3A::splat(-1.0); n];
            let (lo, hi) = z.split_at_mut(split);
            let mut rows = Vec::new();
            a.mul_rows(split, &x, hi, |i, _| rows.push(i));
            a.mul_rows(0, &x, lo, |i, _| rows.push(i));
            assert_eq!(rows, (split..n).chain(0..split).collect::<Vec<_>>());
            for (zi, yi) in z.iter().zip(&y) {
                assert_eq!(zi.to_array(), yi.to_array());
            }
        }
        for (i, yi) in y.iter().enumerate() {
            let want: Vec3A = (0..n).map(|j| dense(i, j) * x[j]).sum();
            assert!((a.row_mul_a(i, &x) - want).length() < 1e-4);
            assert!((*yi - want).length() < 1e-4);
            assert!((Vec3A::from(a.row_mul(i, &xs)) - want).length() < 1e-4);
        }
    }
}
