//! Broad phase: a uniform spatial hash rebuilt every substep in O(n) (Teschner et al. 2003 hash,
//! Kang 2003 §5.3 buckets). Each primitive box is stored in every cell it overlaps (cell size = mean
//! box extent, at least a quarter of the largest, so a box covers a bounded number of cells).
//! Overlapping pairs are enumerated bucket by bucket (contiguous memory) and reported only in the
//! first cell the two boxes share, so each pair is reported once. Buckets are filled by a counting
//! sort in primitive order, so pairs come out in a fixed order, whatever the thread count.

use glam::Vec3;

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

    pub fn overlaps(&self, o: &Aabb) -> bool {
        self.min.cmple(o.max).all() && o.min.cmple(self.max).all()
    }

    /// Is `p` inside the box shrunk by `r` on every side?
    pub fn contains_with_margin(&self, p: Vec3, r: f32) -> bool {
        (p - Vec3::splat(r)).cmpge(self.min).all() && (p + Vec3::splat(r)).cmple(self.max).all()
    }

    fn extent(&self) -> f32 {
        (self.max - self.min).max_element()
    }
}

/// One (cell, primitive) entry; the primitive's box is stored inline so that a bucket scan reads
/// contiguous memory.
#[derive(Clone, Copy, Debug)]
struct Entry {
    min: Vec3,
    max: Vec3,
    cell: [i32; 3],
    /// Cell of the box's min corner (for the first-shared-cell rule).
    first: [i32; 3],
    prim: u32,
}

/// Reusable spatial hash over a set of primitive boxes.
#[derive(Debug, Default)]
pub struct SpatialHash {
    inv_cell: f32,
    /// 64 − log2(table size).
    shift: u32,
    starts: Vec<u32>,
    entries: Vec<Entry>,
    scratch: Vec<Entry>,
}

/// Cell coordinate of a point (clamped so that far-away input cannot overflow; floor without a
/// libm call).
#[inline]
fn cell_of(p: Vec3, inv_cell: f32) -> [i32; 3] {
    let c = (p * inv_cell).clamp(Vec3::splat(-1.0e8), Vec3::splat(1.0e8));
    let fl = |v: f32| {
        let t = v as i32;
        t - ((t as f32) > v) as i32
    };
    [fl(c.x), fl(c.y), fl(c.z)]
}

/// Bucket of a cell: Fibonacci hashing of the packed coordinates (high bits of a 64-bit
/// multiplicative hash, which spreads neighbouring cells evenly over any power-of-two table).
#[inline]
fn bucket(c: [i32; 3], shift: u32) -> usize {
    let k = (c[0] as u32 as u64) ^ ((c[1] as u32 as u64) << 21) ^ ((c[2] as u32 as u64) << 42);
    (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl SpatialHash {
    /// Chooses the cell size from the boxes: max(mean extent, max extent / 4) (m).
    pub fn cell_size_for(boxes: &[Aabb]) -> f32 {
        let mut sum = 0.0f64;
        let mut max = 0.0f32;
        for b in boxes {
            let e = b.extent();
            sum += e as f64;
            max = max.max(e);
        }
        let mean = if boxes.is_empty() {
            0.0
        } else {
            (sum / boxes.len() as f64) as f32
        };
        mean.max(max * 0.25).max(1e-6)
    }

    /// Rebuilds the hash over `boxes` with cell size `cell` (m). O(n) counting sort, no
    /// allocation once the buffers have grown.
    pub fn build(&mut self, boxes: &[Aabb], cell: f32) {
        self.inv_cell = 1.0 / cell;
        self.scratch.clear();
        for (i, b) in boxes.iter().enumerate() {
            let (lo, hi) = (cell_of(b.min, self.inv_cell), cell_of(b.max, self.inv_cell));
            for cz in lo[2]..=hi[2] {
                for cy in lo[1]..=hi[1] {
                    for cx in lo[0]..=hi[0] {
                        self.scratch.push(Entry {
                            min: b.min,
                            max: b.max,
                            cell: [cx, cy, cz],
                            first: lo,
                            prim: i as u32,
                        });
                    }
                }
            }
        }
        let table = (2 * self.scratch.len()).next_power_of_two().max(16);
        self.shift = 64 - table.trailing_zeros();
        self.starts.clear();
        self.starts.resize(table + 1, 0);
        for e in &self.scratch {
            self.starts[bucket(e.cell, self.shift) + 1] += 1;
        }
        for k in 0..table {
            self.starts[k + 1] += self.starts[k];
        }
        self.entries.clear();
        self.entries.resize(
            self.scratch.len(),
            Entry {
                min: Vec3::ZERO,
                max: Vec3::ZERO,
                cell: [0; 3],
                first: [0; 3],
                prim: 0,
            },
        );
        // Stable scatter: bucket contents stay in primitive order. `starts[b]` advances to the end
        // of bucket b, which is the start of bucket b + 1; shifted back afterwards.
        for e in &self.scratch {
            let b = bucket(e.cell, self.shift);
            let slot = self.starts[b];
            self.entries[slot as usize] = *e;
            self.starts[b] = slot + 1;
        }
        for k in (1..=table).rev() {
            self.starts[k] = self.starts[k - 1];
        }
        self.starts[0] = 0;
    }

    /// Number of buckets of the current table.
    pub fn bucket_count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Calls `f(a, b)` (a stored before b) once for every pair of stored primitives whose boxes
    /// overlap and whose first shared cell hashes into one of `buckets`, in a fixed order.
    pub fn for_each_pair(&self, buckets: std::ops::Range<usize>, mut f: impl FnMut(u32, u32)) {
        for b in buckets {
            let (s, e) = (self.starts[b] as usize, self.starts[b + 1] as usize);
            let bucket = &self.entries[s..e];
            for (k, p) in bucket.iter().enumerate() {
                for q in &bucket[k + 1..] {
                    if p.cell != q.cell || !(p.min.cmple(q.max).all() && q.min.cmple(p.max).all()) {
                        continue;
                    }
                    // Report only in the first shared cell: max of the two min corners.
                    let (cp, cq) = (p.first, q.first);
                    if p.cell == [cp[0].max(cq[0]), cp[1].max(cq[1]), cp[2].max(cq[2])] {
                        f(p.prim, q.prim);
                    }
                }
            }
        }
    }
}
