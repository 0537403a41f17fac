//! Broad phase: a uniform spatial hash rebuilt every substep in O(n) (Teschner et al. 2003 hash,
//! Kang 2003 §5.3 bucket idea). Each primitive is stored once, in the cell of its box's min corner;
//! the cell size is at least a quarter of the largest box so a query only needs to look `reach`
//! cells towards −x/−y/−z. Buckets are filled by a counting sort in primitive order, so every query
//! reports candidates in a fixed order independent of the thread count.

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

#[derive(Clone, Copy, Debug)]
struct Entry {
    cell: [i32; 3],
    prim: u32,
}

/// Reusable spatial hash over a set of primitive boxes.
#[derive(Debug, Default)]
pub struct SpatialHash {
    inv_cell: f32,
    reach: i32,
    mask: u32,
    starts: Vec<u32>,
    entries: Vec<Entry>,
    scratch: Vec<Entry>,
}

/// Cell coordinate of a point (clamped so that far-away input cannot overflow).
#[inline]
fn cell_of(p: Vec3, inv_cell: f32) -> [i32; 3] {
    let c = (p * inv_cell)
        .floor()
        .clamp(Vec3::splat(-1.0e8), Vec3::splat(1.0e8));
    [c.x as i32, c.y as i32, c.z as i32]
}

#[inline]
fn bucket(c: [i32; 3], mask: u32) -> usize {
    // Teschner et al. 2003, "Optimized spatial hashing for collision detection of deformable objects".
    let h = (c[0] as u32).wrapping_mul(73_856_093)
        ^ (c[1] as u32).wrapping_mul(19_349_663)
        ^ (c[2] as u32).wrapping_mul(83_492_791);
    (h & mask) as usize
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
        let max_extent = boxes.iter().fold(0.0f32, |m, b| m.max(b.extent()));
        self.reach = ((max_extent * self.inv_cell).ceil() as i32).max(1);
        let table = (2 * boxes.len()).next_power_of_two().max(16);
        self.mask = (table - 1) as u32;
        self.starts.clear();
        self.starts.resize(table + 1, 0);
        self.scratch.clear();
        for (i, b) in boxes.iter().enumerate() {
            let cell = cell_of(b.min, self.inv_cell);
            self.starts[bucket(cell, self.mask) + 1] += 1;
            self.scratch.push(Entry {
                cell,
                prim: i as u32,
            });
        }
        for k in 0..table {
            self.starts[k + 1] += self.starts[k];
        }
        self.entries.clear();
        self.entries.resize(
            boxes.len(),
            Entry {
                cell: [0; 3],
                prim: 0,
            },
        );
        // Scatter in primitive order (stable): bucket contents are sorted by primitive index.
        let mut fill: u32;
        for e in &self.scratch {
            let b = bucket(e.cell, self.mask);
            fill = self.starts[b];
            self.entries[fill as usize] = *e;
            self.starts[b] = fill + 1;
        }
        // Restore bucket starts (they were advanced to the bucket ends).
        for k in (1..=table).rev() {
            self.starts[k] = self.starts[k - 1];
        }
        self.starts[0] = 0;
    }

    /// Calls `f(prim)` once for every stored primitive whose box overlaps `q`, in a fixed order.
    /// `boxes` must be the slice given to [`SpatialHash::build`].
    pub fn for_each_overlap(&self, q: &Aabb, boxes: &[Aabb], mut f: impl FnMut(u32)) {
        if self.entries.is_empty() {
            return;
        }
        let lo = cell_of(q.min, self.inv_cell);
        let hi = cell_of(q.max, self.inv_cell);
        let r = self.reach;
        for cz in lo[2] - r..=hi[2] {
            for cy in lo[1] - r..=hi[1] {
                for cx in lo[0] - r..=hi[0] {
                    let cell = [cx, cy, cz];
                    let b = bucket(cell, self.mask);
                    let (s, e) = (self.starts[b] as usize, self.starts[b + 1] as usize);
                    for entry in &self.entries[s..e] {
                        if entry.cell == cell && boxes[entry.prim as usize].overlaps(q) {
                            f(entry.prim);
                        }
                    }
                }
            }
        }
    }
}
