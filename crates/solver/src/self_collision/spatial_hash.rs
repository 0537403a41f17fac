//! Broad phase: a hierarchical uniform spatial hash rebuilt every substep in O(n) (Teschner et al.
//! 2003 hash; Kang 2003 §5.3 uses grids of different cell size for primitives of different size).
//!
//! Level k has cells of `cell·4^k` (m). Each primitive box goes to the finest level where it covers
//! at most [`MAX_CELLS`] cells and is stored in every cell it overlaps there; boxes too big even for
//! the coarsest level (or non-finite) go to an "oversize" list that is tested box against box. So a
//! single huge box (a teleported vertex) neither covers millions of cells nor inflates the cell size
//! of everything else. Buckets are filled by a counting sort in primitive order into flat arrays (no
//! per-cell allocation), so every bucket lists its primitives in increasing index order.
//!
//! A query with box q visits the cells of q at every level from its own upward and reports a stored
//! box b only in the cell holding the min corner of q ∩ b, after a box–box test: every overlapping
//! primitive is reported exactly once, in an order fixed by the input (not by the thread count).

use super::bucket_lanes::{BucketLanes, NONE};
use glam::Vec3;
use rayon::prelude::*;

/// Number of grid levels (cell size grows 4× per level).
pub const LEVELS: usize = 6;
/// A box is stored at the finest level where it covers at most this many cells.
pub const MAX_CELLS: u64 = 64;

/// Axis-aligned box (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    /// Box of a linear motion a → b, inflated by `r` (m).
    #[cfg(test)]
    pub fn swept(a: Vec3, b: Vec3, r: f32) -> Aabb {
        Aabb {
            min: a.min(b) - Vec3::splat(r),
            max: a.max(b) + Vec3::splat(r),
        }
    }

    pub fn union(self, o: Aabb) -> Aabb {
        Aabb {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }

    #[inline]
    pub fn overlaps(&self, o: &Aabb) -> bool {
        (self.min.cmple(o.max) & o.min.cmple(self.max)).all()
    }

    fn extent(&self) -> f32 {
        (self.max - self.min).max_element()
    }
}

/// Componentwise max of two cells.
#[inline]
fn max_cell(a: [i32; 3], b: [i32; 3]) -> [i32; 3] {
    [a[0].max(b[0]), a[1].max(b[1]), a[2].max(b[2])]
}

/// Cell coordinate of a point (clamped so that far-away input cannot overflow; floor without a
/// libm call). Monotone in `p`, and exact for power-of-two changes of `inv_cell`.
#[inline]
fn cell_of(p: Vec3, inv_cell: f32) -> [i32; 3] {
    let c = (p * inv_cell).clamp(Vec3::splat(-1.0e8), Vec3::splat(1.0e8));
    let fl = |v: f32| {
        let t = v as i32;
        t - ((t as f32) > v) as i32
    };
    [fl(c.x), fl(c.y), fl(c.z)]
}

/// First and last cell of a box, and the number of cells it covers (0 for an empty box).
#[inline]
fn cell_range(b: &Aabb, inv_cell: f32) -> ([i32; 3], [i32; 3], u64) {
    let (lo, hi) = (cell_of(b.min, inv_cell), cell_of(b.max, inv_cell));
    let mut count = 1u64;
    for k in 0..3 {
        count = count.saturating_mul((hi[k] as i64 - lo[k] as i64 + 1).max(0) as u64);
    }
    (lo, hi, count)
}

/// Bucket of a cell: x plus a Fibonacci hash of (y, z) (high bits of a 64-bit multiplicative
/// hash), modulo the power-of-two table. Cells consecutive in x land in consecutive buckets, so a
/// query's cells, and the cells of queries close in space, share cache lines.
#[inline]
fn bucket(c: [i32; 3], shift: u32) -> usize {
    let k = (c[1] as u32 as u64) ^ ((c[2] as u32 as u64) << 32);
    let row = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift;
    (row.wrapping_add(c[0] as u32 as u64) & (u64::MAX >> shift)) as usize
}

/// Calls `f(cell, bucket)` for every cell of `lo..=hi` (x fastest).
#[inline]
fn for_cells(lo: [i32; 3], hi: [i32; 3], shift: u32, mut f: impl FnMut([i32; 3], usize)) {
    for cz in lo[2]..=hi[2] {
        for cy in lo[1]..=hi[1] {
            for cx in lo[0]..=hi[0] {
                let c = [cx, cy, cz];
                f(c, bucket(c, shift));
            }
        }
    }
}

/// One level: a hash table of cells with the entries of its non-empty buckets in one flat array.
#[derive(Debug, Default)]
struct Grid {
    inv_cell: f32,
    /// 64 − log2(table size).
    shift: u32,
    /// Entries per bucket (all zero outside `nonempty` between builds).
    count: Vec<u32>,
    /// First entry of each non-empty bucket in `entries`.
    start: Vec<u32>,
    /// A cell of each non-empty bucket, and whether another cell shares the bucket.
    cell: Vec<[i32; 3]>,
    shared: Vec<bool>,
    /// Non-empty buckets in the order of their first entry.
    nonempty: Vec<u32>,
    /// Every (cell, primitive) entry, bucket after bucket; within a bucket in primitive order.
    entries: Vec<Entry>,
}

impl Grid {
    /// Entries of bucket `b` (empty if it holds nothing).
    #[inline]
    fn bucket(&self, b: usize) -> &[Entry] {
        let n = self.count[b] as usize;
        if n == 0 {
            return &[];
        }
        let s = self.start[b] as usize;
        &self.entries[s..s + n]
    }
}

/// One (cell, primitive) entry, 8 bytes so that the serial scatter stays in cache.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    prim: u32,
    /// Bit a set: the cell is the primitive's first cell along axis a.
    first: u32,
}

/// Reusable scratch of [`SpatialHash::join_bucket`]: one bucket's entries as SIMD lanes.
#[derive(Debug, Default)]
pub struct JoinScratch {
    lanes: BucketLanes,
}

/// Reusable hierarchical spatial hash over a set of primitive boxes.
#[derive(Debug, Default)]
pub struct SpatialHash {
    inv_cell: f32,
    grids: Vec<Grid>,
    /// Copy of the boxes of the last build, by primitive.
    boxes: Vec<Aabb>,
    /// Level of every primitive ([`LEVELS`] = oversize).
    level: Vec<u8>,
    /// First and last cell of every primitive at its level (the cell of the min corner of an
    /// overlap of two boxes is the componentwise max of their first cells, by monotonicity of the
    /// floor).
    ranges: Vec<([i32; 3], [i32; 3])>,
    /// Primitives too big for every level, in index order.
    oversize: Vec<u32>,
    /// Are primitives stored at levels above 0 (or oversize)?
    coarse: bool,
}

/// Finest level at which `b` covers at most [`MAX_CELLS`] cells of size 1/`inv_cell`·4^k, and
/// its cell range there.
#[inline]
fn level_for(b: &Aabb, inv_cell: f32) -> (u8, ([i32; 3], [i32; 3])) {
    let mut inv = inv_cell;
    for k in 0..LEVELS {
        let (lo, hi, count) = cell_range(b, inv);
        if count <= MAX_CELLS {
            return (k as u8, (lo, hi));
        }
        inv *= 0.25;
    }
    (LEVELS as u8, ([0; 3], [-1; 3]))
}

impl SpatialHash {
    /// Cell size for `boxes` (m): the median extent (largest side) of the finite ones, so that a
    /// few huge boxes do not coarsen the grid for everything else. `scratch` is reusable.
    pub fn cell_size_for(boxes: &[Aabb], scratch: &mut Vec<f32>) -> f32 {
        scratch.clear();
        scratch.extend(
            boxes
                .iter()
                .map(Aabb::extent)
                .filter(|e| e.is_finite() && *e >= 0.0),
        );
        if scratch.is_empty() {
            return 1.0;
        }
        let mid = scratch.len() / 2;
        let (_, median, _) = scratch.select_nth_unstable_by(mid, f32::total_cmp);
        median.max(1e-6)
    }

    /// Rebuilds the hash over `boxes` with finest cell size `cell` (m). O(n) counting sort, no
    /// allocation once the buffers have grown.
    pub fn build(&mut self, boxes: &[Aabb], cell: f32) {
        self.inv_cell = 1.0 / cell;
        let inv0 = self.inv_cell;
        self.grids.resize_with(LEVELS, Grid::default);
        self.boxes.clear();
        self.boxes.extend_from_slice(boxes);
        self.level.resize(boxes.len(), 0);
        self.ranges.resize(boxes.len(), ([0; 3], [0; 3]));
        self.level
            .par_iter_mut()
            .zip(self.ranges.par_iter_mut())
            .zip(boxes.par_iter())
            .for_each(|((l, r), b)| (*l, *r) = level_for(b, inv0));
        self.oversize.clear();
        let mut total = [0u64; LEVELS];
        for (i, &(lo, hi)) in self.ranges.iter().enumerate() {
            let l = self.level[i] as usize;
            if l == LEVELS {
                self.oversize.push(i as u32);
            } else {
                total[l] += (0..3)
                    .map(|k| (hi[k] as i64 - lo[k] as i64 + 1).max(0) as u64)
                    .product::<u64>();
            }
        }
        self.coarse = !self.oversize.is_empty() || total[1..].iter().any(|&t| t > 0);
        let mut inv = inv0;
        for (g, &t) in self.grids.iter_mut().zip(&total) {
            g.inv_cell = inv;
            inv *= 0.25;
            // Buckets emptied: the counts of the last build's non-empty buckets back to zero.
            for &b in &g.nonempty {
                g.count[b as usize] = 0;
            }
            g.nonempty.clear();
            let table = if t == 0 {
                0
            } else {
                (t as usize).next_power_of_two().max(16)
            };
            g.shift = 64 - table.max(1).trailing_zeros();
            if g.count.len() != table {
                g.count.clear();
                g.count.resize(table, 0);
                g.start.resize(table, 0);
                g.cell.resize(table, [0; 3]);
                g.shared.resize(table, false);
            }
        }
        // Count the entries per bucket, noting each bucket's first cell and whether another cell
        // hashes there too.
        for (i, &(lo, hi)) in self.ranges.iter().enumerate() {
            let l = self.level[i] as usize;
            if l == LEVELS {
                continue;
            }
            let g = &mut self.grids[l];
            for_cells(lo, hi, g.shift, |c, k| {
                if g.count[k] == 0 {
                    g.nonempty.push(k as u32);
                    g.cell[k] = c;
                    g.shared[k] = false;
                } else if g.cell[k] != c {
                    g.shared[k] = true;
                }
                g.count[k] += 1;
            });
        }
        // Bucket starts; the counts are refilled by the scatter.
        for g in self.grids.iter_mut() {
            let mut next = 0u32;
            for &b in &g.nonempty {
                let b = b as usize;
                g.start[b] = next;
                next += g.count[b];
                g.count[b] = 0;
            }
            // Every slot is overwritten by the scatter below; only new slots need a value.
            g.entries.resize(next as usize, Entry::default());
        }
        // Stable scatter: bucket contents stay in primitive order.
        for (i, &(lo, hi)) in self.ranges.iter().enumerate() {
            let l = self.level[i] as usize;
            if l == LEVELS {
                continue;
            }
            let g = &mut self.grids[l];
            for_cells(lo, hi, g.shift, |c, k| {
                let slot = (g.start[k] + g.count[k]) as usize;
                g.count[k] += 1;
                let first = (0..3).fold(0, |f, a| f | ((c[a] == lo[a]) as u32) << a);
                g.entries[slot] = Entry {
                    prim: i as u32,
                    first,
                };
            });
        }
    }

    /// Level of stored primitive `i` of the last build.
    pub fn level(&self, i: usize) -> usize {
        self.level[i] as usize
    }

    /// Are any primitives stored above level 0 (then queries from level 0 do not see every pair
    /// from the finer side, see [`Self::query`])?
    pub fn has_coarse(&self) -> bool {
        self.coarse
    }

    /// Non-empty buckets of `level` (pass each to [`Self::join_bucket`]).
    pub fn buckets(&self, level: usize) -> &[u32] {
        &self.grids[level].nonempty
    }

    /// Primitives too big for every level, in index order.
    pub fn oversize(&self) -> &[u32] {
        &self.oversize
    }

    /// Box of primitive `i` of the last build.
    pub fn bounds(&self, i: u32) -> &Aabb {
        &self.boxes[i as usize]
    }

    /// Calls `f(p, q)` (p ≠ q, in either order) for every pair of primitives of `level` whose
    /// boxes overlap, from the one bucket `b` that holds the cell of the min corner of the overlap,
    /// so each pair comes out once over all buckets. The bucket's boxes are gathered into
    /// `scratch` and tested four at a time ([`BucketLanes`]).
    pub fn join_bucket(
        &self,
        level: usize,
        b: usize,
        scratch: &mut JoinScratch,
        mut f: impl FnMut(u32, u32),
    ) {
        let g = &self.grids[level];
        let list = g.bucket(b);
        if list.len() < 2 {
            return;
        }
        let lanes = &mut scratch.lanes;
        lanes.reset(list.len().next_multiple_of(4));
        if !g.shared[b] {
            for (i, e) in list.iter().enumerate() {
                let first = [0, 1, 2].map(|a| e.first >> a & 1 == 1);
                lanes.set(i, e.prim, &self.boxes[e.prim as usize], first);
            }
            let n = list.len();
            for i in 0..n {
                let p = lanes.prim(i);
                lanes.for_matches(&lanes.probe(i), i + 1..n, false, |_, q| f(p, q));
            }
            return;
        }
        // Several cells share the bucket: a primitive may be listed more than once (one entry per
        // cell of it hashing here, next to each other); only its first entry takes part, and the
        // min-corner rule is checked by hand.
        let mut n = 0;
        let mut last = NONE;
        for e in list {
            if e.prim != last {
                lanes.set(n, e.prim, &self.boxes[e.prim as usize], [true; 3]);
                n += 1;
                last = e.prim;
            }
        }
        for i in 0..n {
            let p = lanes.prim(i);
            let lp = self.ranges[p as usize].0;
            lanes.for_matches(&lanes.probe(i), i + 1..n, true, |_, q| {
                if bucket(max_cell(lp, self.ranges[q as usize].0), g.shift) == b {
                    f(p, q);
                }
            });
        }
    }

    /// Calls `f(prim)` once for every stored primitive whose box overlaps `q` and whose level is
    /// above `from`, or equal to `from` with index ≥ `first`. Pass `from` ≥ the level of `q` (then
    /// `q` covers at most [`MAX_CELLS`] cells per level; otherwise that level is scanned box by box).
    pub fn query(&self, q: &Aabb, from: usize, first: u32, mut f: impl FnMut(u32)) {
        for k in from..LEVELS {
            let g = &self.grids[k];
            if g.nonempty.is_empty() {
                continue;
            }
            let first = if k == from { first } else { 0 };
            let (lo, hi, count) = cell_range(q, g.inv_cell);
            if count > MAX_CELLS {
                for (i, b) in self.boxes.iter().enumerate().skip(first as usize) {
                    if self.level[i] as usize == k && q.overlaps(b) {
                        f(i as u32);
                    }
                }
                continue;
            }
            for_cells(lo, hi, g.shift, |c, b| {
                // A bucket lists each primitive's entries together (one per cell of that primitive
                // hashing here); only the first of them is looked at.
                let mut last = NONE;
                for &Entry { prim: p, .. } in g.bucket(b) {
                    let repeat = p == last;
                    last = p;
                    if repeat
                        || p < first
                        || !q.overlaps(&self.boxes[p as usize])
                        || max_cell(lo, self.ranges[p as usize].0) != c
                    {
                        continue;
                    }
                    f(p);
                }
            });
        }
        if from <= LEVELS {
            let first = if from == LEVELS { first } else { 0 };
            for &i in &self.oversize {
                if i >= first && q.overlaps(&self.boxes[i as usize]) {
                    f(i);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(q: &Aabb, boxes: &[Aabb]) -> Vec<u32> {
        (0..boxes.len() as u32)
            .filter(|&i| q.overlaps(&boxes[i as usize]))
            .collect()
    }

    /// Pseudo-random boxes of very different sizes, including a huge and a non-finite one.
    fn boxes() -> Vec<Aabb> {
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut r = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut out = Vec::new();
        for k in 0..600 {
            let c = Vec3::new(r(), r(), r() * 0.2);
            let size = if k % 50 == 0 { 0.5 } else { 0.01 + 0.03 * r() };
            out.push(Aabb {
                min: c - Vec3::splat(size * r()),
                max: c + Vec3::splat(size * r()),
            });
        }
        out.push(Aabb {
            min: Vec3::splat(-1.0e9),
            max: Vec3::splat(1.0e9),
        });
        out.push(Aabb {
            min: Vec3::splat(f32::NAN),
            max: Vec3::splat(f32::NAN),
        });
        out.push(Aabb::EMPTY);
        out
    }

    #[test]
    fn queries_find_every_overlap_once() {
        let b = boxes();
        let mut h = SpatialHash::default();
        h.build(&b, SpatialHash::cell_size_for(&b, &mut Vec::new()));
        assert!(h.has_coarse());
        assert_eq!(h.level(600), LEVELS, "huge box is oversize");
        for (i, q) in b.iter().enumerate() {
            let mut got = Vec::new();
            h.query(q, 0, 0, |p| got.push(p));
            got.sort_unstable();
            assert_eq!(got, brute(q, &b), "query {i}");
        }
    }

    #[test]
    fn level_split_self_join_finds_every_pair_once() {
        let b = boxes();
        let mut h = SpatialHash::default();
        h.build(&b, SpatialHash::cell_size_for(&b, &mut Vec::new()));
        let mut got = Vec::new();
        for (i, q) in b.iter().enumerate() {
            h.query(q, h.level(i), i as u32 + 1, |p| {
                got.push([(i as u32).min(p), (i as u32).max(p)]);
            });
        }
        got.sort_unstable();
        let mut want = Vec::new();
        for i in 0..b.len() as u32 {
            for j in i + 1..b.len() as u32 {
                if b[i as usize].overlaps(&b[j as usize]) {
                    want.push([i, j]);
                }
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn bucket_joins_and_coarser_queries_find_every_pair_once() {
        let b = boxes();
        let mut h = SpatialHash::default();
        // A fine grid, so that boxes span several cells and buckets are shared by several cells.
        h.build(&b, 0.5 * SpatialHash::cell_size_for(&b, &mut Vec::new()));
        let mut got = Vec::new();
        let mut shared = 0;
        let mut scratch = JoinScratch::default();
        for level in 0..LEVELS {
            for &k in h.buckets(level) {
                shared += h.grids[level].shared[k as usize] as u32;
                h.join_bucket(level, k as usize, &mut scratch, |p, q| {
                    assert_ne!(p, q);
                    got.push([p.min(q), p.max(q)]);
                });
            }
        }
        assert!(
            shared > 0,
            "the test must exercise buckets shared by several cells"
        );
        for (i, q) in b.iter().enumerate() {
            if h.level(i) < LEVELS {
                h.query(q, h.level(i) + 1, 0, |p| {
                    got.push([(i as u32).min(p), (i as u32).max(p)]);
                });
            }
        }
        let big = h.oversize();
        for (k, &p) in big.iter().enumerate() {
            for &q in &big[k + 1..] {
                if b[p as usize].overlaps(&b[q as usize]) {
                    got.push([p, q]);
                }
            }
        }
        got.sort_unstable();
        let mut want = Vec::new();
        for i in 0..b.len() as u32 {
            for j in i + 1..b.len() as u32 {
                if b[i as usize].overlaps(&b[j as usize]) {
                    want.push([i, j]);
                }
            }
        }
        assert!(want.len() > 1000);
        assert_eq!(got, want);
    }
}
