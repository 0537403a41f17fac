//! Deterministic parallel gathering: items are split into fixed-size chunks (independent of the
//! thread count), each chunk fills its own reusable buffer, and the buffers are concatenated in
//! chunk order.

use rayon::prelude::*;

/// Items per chunk.
pub const CHUNK: usize = 256;

/// Calls `f(i, buf)` for every item `i < n` in parallel chunks; `out` receives every pushed value
/// in item order. `bufs` is reusable scratch (grows only).
pub fn par_gather<U, F>(n: usize, bufs: &mut Vec<Vec<U>>, out: &mut Vec<U>, f: F)
where
    U: Copy + Send,
    F: Fn(usize, &mut Vec<U>) + Sync,
{
    let filled = par_chunks(bufs, n.div_ceil(CHUNK), |c, buf| {
        buf.clear();
        for i in c * CHUNK..(n.min((c + 1) * CHUNK)) {
            f(i, buf);
        }
    });
    out.clear();
    for b in filled {
        out.extend_from_slice(b);
    }
}

/// Calls `f(c, &mut bufs[c])` for every chunk `c < chunks` in parallel and returns those buffers
/// in chunk order. `bufs` is reusable scratch (grows only; `f` clears what it reuses).
pub fn par_chunks<B, F>(bufs: &mut Vec<B>, chunks: usize, f: F) -> &[B]
where
    B: Default + Send,
    F: Fn(usize, &mut B) + Sync,
{
    if bufs.len() < chunks {
        bufs.resize_with(chunks, B::default);
    }
    bufs[..chunks]
        .par_iter_mut()
        .enumerate()
        .for_each(|(c, buf)| f(c, buf));
    &bufs[..chunks]
}

/// [`par_gather`] that also stores one value per item: `slots[i] = f(i, buf)`.
pub fn par_gather_with<U, S, F>(
    n: usize,
    bufs: &mut Vec<Vec<U>>,
    out: &mut Vec<U>,
    slots: &mut [S],
    f: F,
) where
    U: Copy + Send,
    S: Send,
    F: Fn(usize, &mut Vec<U>) -> S + Sync,
{
    let chunks = n.div_ceil(CHUNK);
    if bufs.len() < chunks {
        bufs.resize_with(chunks, Vec::new);
    }
    bufs[..chunks]
        .par_iter_mut()
        .zip(slots[..n].par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (buf, slot))| {
            buf.clear();
            for (k, s) in slot.iter_mut().enumerate() {
                *s = f(c * CHUNK + k, buf);
            }
        });
    out.clear();
    for b in &bufs[..chunks] {
        out.extend_from_slice(b);
    }
}
