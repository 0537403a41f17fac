//! Deterministic parallel reductions: fixed-size chunks reduced in parallel into a per-chunk f64
//! array, then summed sequentially, so the result is bit-identical at any thread count. Small
//! systems run the same chunks on the calling thread (same partition, same bits): below
//! [`PARALLEL_FROM`] elements a rayon dispatch costs more than the pass itself.

use glam::Vec3A;
use rayon::prelude::*;

/// Vertices per reduction chunk (fixed, independent of the thread count).
pub const CHUNK: usize = 512;

/// Elements from which a pass is split over the thread pool (16 chunks); smaller passes run serially.
pub const PARALLEL_FROM: usize = 16 * CHUNK;

/// Whether an n-element pass runs on the thread pool.
#[inline]
pub fn parallel(n: usize) -> bool {
    n >= PARALLEL_FROM
}

/// `f(i, &mut v[i])` for every i, serially below [`PARALLEL_FROM`] elements.
pub fn for_each_indexed<T: Send>(v: &mut [T], f: impl Fn(usize, &mut T) + Sync + Send) {
    for_each_indexed_if(parallel(v.len()), v, f)
}

/// `f(i, &mut v[i])` for every i, on the thread pool if `parallel` (elementwise: the same result
/// either way).
pub fn for_each_indexed_if<T: Send>(
    parallel: bool,
    v: &mut [T],
    f: impl Fn(usize, &mut T) + Sync + Send,
) {
    if parallel {
        v.par_iter_mut().enumerate().for_each(|(i, x)| f(i, x));
    } else {
        v.iter_mut().enumerate().for_each(|(i, x)| f(i, x));
    }
}

/// Scratch for [`dot`]: one partial sum per chunk.
#[derive(Debug, Default, Clone)]
pub struct Partials(Vec<f64>);

impl Partials {
    /// One zeroed-or-stale slot per chunk of an n-vector (resized without reallocation once sized).
    pub fn prepare(&mut self, n: usize) -> &mut [f64] {
        self.slots(n.div_ceil(CHUNK))
    }

    /// `count` zeroed-or-stale slots (resized without reallocation once sized).
    pub fn slots(&mut self, count: usize) -> &mut [f64] {
        self.0.resize(count, 0.0);
        &mut self.0
    }
}

/// Σ aᵢ·bᵢ accumulated in f64 in a fixed order (SIMD-aligned vectors).
pub fn dot(a: &[Vec3A], b: &[Vec3A], scratch: &mut Partials) -> f64 {
    sum_chunks(a.len(), scratch, |i| a[i].as_dvec3().dot(b[i].as_dvec3()))
}

/// Σᵢ term(i) for i in 0..n, accumulated in f64 per fixed chunk, chunks summed in order.
pub fn sum_chunks(n: usize, scratch: &mut Partials, term: impl Fn(usize) -> f64 + Sync) -> f64 {
    let parts = scratch.prepare(n);
    let chunk = |c: usize| -> f64 { (c * CHUNK..n.min((c + 1) * CHUNK)).map(&term).sum() };
    if parallel(n) {
        parts
            .par_iter_mut()
            .enumerate()
            .for_each(|(c, out)| *out = chunk(c));
    } else {
        parts
            .iter_mut()
            .enumerate()
            .for_each(|(c, out)| *out = chunk(c));
    }
    parts.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_is_thread_count_independent() {
        let a: Vec<Vec3A> = (0..5000)
            .map(|i| Vec3A::new((i as f32).sin(), 1.0 / (1.0 + i as f32), 0.3))
            .collect();
        let b: Vec<Vec3A> = (0..5000)
            .map(|i| Vec3A::new((i as f32).cos(), 2.0, -(i as f32) * 1e-3))
            .collect();
        let run = |threads| {
            crate::fixtures::on_threads(threads, || dot(&a, &b, &mut Partials::default()))
        };
        assert_eq!(run(1).to_bits(), run(3).to_bits());
        // Serial (small) and parallel (large) paths share the chunk partition: a large vector's
        // sum equals the in-order sum of its chunks' serial sums.
        let big: Vec<Vec3A> = (0..PARALLEL_FROM + 700)
            .map(|i| Vec3A::new((i as f32).sin(), 0.5, (i as f32) * 1e-4))
            .collect();
        let whole = dot(&big, &big, &mut Partials::default());
        let by_chunk: f64 = big
            .chunks(CHUNK)
            .map(|c| {
                c.iter()
                    .map(|x| x.as_dvec3().dot(x.as_dvec3()))
                    .sum::<f64>()
            })
            .sum();
        assert_eq!(whole.to_bits(), by_chunk.to_bits());
    }
}
