//! Deterministic parallel reductions: fixed-size chunks reduced in parallel into a per-chunk f64
//! array, then summed sequentially, so the result is bit-identical at any thread count.

use glam::Vec3A;
use rayon::prelude::*;

/// Vertices per reduction chunk (fixed, independent of the thread count).
pub const CHUNK: usize = 512;

/// Scratch for [`dot`]: one partial sum per chunk.
#[derive(Debug, Default, Clone)]
pub struct Partials(Vec<f64>);

impl Partials {
    /// One zeroed-or-stale slot per chunk of an n-vector (resized without reallocation once sized).
    pub fn prepare(&mut self, n: usize) -> &mut [f64] {
        self.0.resize(n.div_ceil(CHUNK), 0.0);
        &mut self.0
    }
}

/// Σ aᵢ·bᵢ accumulated in f64 in a fixed order (SIMD-aligned vectors).
pub fn dot(a: &[Vec3A], b: &[Vec3A], scratch: &mut Partials) -> f64 {
    let parts = scratch.prepare(a.len());
    parts
        .par_iter_mut()
        .zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
        .for_each(|(out, (ca, cb))| {
            *out = ca
                .iter()
                .zip(cb)
                .map(|(x, y)| x.as_dvec3().dot(y.as_dvec3()))
                .sum();
        });
    parts.iter().sum()
}

/// Σᵢ term(i) for i in 0..n, accumulated in f64 per fixed chunk, chunks summed in order.
pub fn sum_chunks(n: usize, scratch: &mut Partials, term: impl Fn(usize) -> f64 + Sync) -> f64 {
    let parts = scratch.prepare(n);
    parts.par_iter_mut().enumerate().for_each(|(c, out)| {
        *out = (c * CHUNK..n.min((c + 1) * CHUNK)).map(&term).sum();
    });
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
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| dot(&a, &b, &mut Partials::default()))
        };
        assert_eq!(run(1).to_bits(), run(3).to_bits());
    }
}
