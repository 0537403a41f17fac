//! Symmetric 3×3 block sparse matrix: diagonal blocks stored separately, off-diagonal blocks in block
//! CSR with both (i, j) and (j, i) present, so that a row-parallel product is deterministic. The
//! pattern is built once per topology; values are refilled every substep.

use glam::{Mat3, Mat3A, Vec3, Vec3A};

/// Off-diagonal sparsity: row `i` owns slots `row_ptr[i]..row_ptr[i + 1]`, columns sorted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BlockPattern {
    pub row_ptr: Vec<u32>,
    pub col: Vec<u32>,
    /// Per slot: the coupling is weak (e.g. bending-only, between the opposite vertices of a
    /// hinge); preconditioners may drop it.
    pub weak: Vec<bool>,
}

impl BlockPattern {
    /// Pattern of an `n`-vertex system coupling every pair in `pairs` (both orders; duplicates and
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
                .flat_map(|p| [(p[0], p[1], weak), (p[1], p[0], weak)])
                .collect()
        };
        let mut both = tagged(pairs, false);
        both.extend(tagged(weak_pairs, true));
        // Sorting puts a strong entry (false) before a weak duplicate; dedup keeps the first.
        both.sort_unstable();
        both.dedup_by_key(|e| (e.0, e.1));
        let mut row_ptr = vec![0u32; n + 1];
        for &(i, _, _) in &both {
            row_ptr[i as usize + 1] += 1;
        }
        for i in 0..n {
            row_ptr[i + 1] += row_ptr[i];
        }
        BlockPattern {
            row_ptr,
            col: both.iter().map(|e| e.1).collect(),
            weak: both.iter().map(|e| e.2).collect(),
        }
    }

    pub fn rows(&self) -> usize {
        self.row_ptr.len() - 1
    }

    /// Slot of block (i, j), i ≠ j, if it is in the pattern.
    pub fn slot(&self, i: u32, j: u32) -> Option<usize> {
        let (a, b) = (
            self.row_ptr[i as usize] as usize,
            self.row_ptr[i as usize + 1] as usize,
        );
        self.col[a..b].binary_search(&j).ok().map(|k| a + k)
    }
}

/// Values on a [`BlockPattern`]. Off-diagonal blocks are SIMD-aligned (`Mat3A`) for the product.
#[derive(Debug, Clone, Default)]
pub struct BlockMatrix {
    pub pattern: BlockPattern,
    pub diag: Vec<Mat3>,
    pub off: Vec<Mat3A>,
}

impl BlockMatrix {
    pub fn new(pattern: BlockPattern) -> Self {
        let (n, nnz) = (pattern.rows(), pattern.col.len());
        BlockMatrix {
            pattern,
            diag: vec![Mat3::ZERO; n],
            off: vec![Mat3A::ZERO; nnz],
        }
    }

    /// (A·x)ᵢ for SIMD-aligned vectors (the MPCG's internal storage).
    #[inline]
    pub fn row_mul_a(&self, i: usize, x: &[Vec3A]) -> Vec3A {
        let p = &self.pattern;
        let (a, b) = (p.row_ptr[i] as usize, p.row_ptr[i + 1] as usize);
        let mut acc = Mat3A::from(self.diag[i]) * x[i];
        for (m, &j) in self.off[a..b].iter().zip(&p.col[a..b]) {
            acc += *m * x[j as usize];
        }
        acc
    }

    /// (A·x)ᵢ.
    #[inline]
    pub fn row_mul(&self, i: usize, x: &[Vec3]) -> Vec3 {
        let p = &self.pattern;
        let (a, b) = (p.row_ptr[i] as usize, p.row_ptr[i + 1] as usize);
        let mut acc = Vec3A::from(self.diag[i] * x[i]);
        for s in a..b {
            acc += self.off[s] * Vec3A::from(x[p.col[s] as usize]);
        }
        acc.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_symmetric_and_sorted() {
        let p = BlockPattern::from_pairs(4, &[[2, 0], [0, 1], [1, 0], [3, 3], [1, 2]]);
        assert_eq!(p.row_ptr, vec![0, 2, 4, 6, 6]);
        assert_eq!(p.col, vec![1, 2, 0, 2, 0, 1]);
        assert_eq!(p.slot(2, 1), Some(5));
        assert_eq!(p.slot(3, 0), None);
        assert!(p.weak.iter().all(|w| !w));
        let q = BlockPattern::with_weak_pairs(3, &[[0, 1]], &[[1, 0], [1, 2]]);
        assert_eq!(q.col, vec![1, 0, 2, 1]);
        assert_eq!(q.weak, vec![false, false, true, true]);
    }
}
