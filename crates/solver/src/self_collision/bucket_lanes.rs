//! The entries of one spatial-hash bucket as SIMD lanes: groups of four, structure-of-arrays
//! inside a group (one `Vec4` per bound, i.e. one SSE2 register on x86-64), so that the bucket
//! join of [`SpatialHash`](super::spatial_hash::SpatialHash) tests a box against four others at
//! once and without branches: box overlap and the "reported only from the cell of the min corner
//! of the overlap" rule that makes every pair come out once (Kang 2003 §5.3 hash). Only the lanes
//! passing both reach the caller.
//!
//! The min-corner rule in lanes: both boxes contain the cell c of the bucket, and the min corner of
//! their overlap lies in cell max(first cell of p, first cell of q) (componentwise). That equals c
//! iff along every axis c is the first cell of p or of q, so each lane keeps three "first along
//! axis a" flags. (This needs c to be the only cell in the bucket; in buckets shared by several
//! cells the caller sets all flags and checks the rule by hand.)

use super::spatial_hash::Aabb;
use glam::{BVec4A, Vec4};

/// Four entries: lane k of every vector belongs to entry k.
#[derive(Clone, Copy, Debug)]
struct Group {
    /// Box bounds along x, y, z (m).
    min: [Vec4; 3],
    max: [Vec4; 3],
    /// Is the bucket's cell the primitive's first cell along x, y, z?
    first: [BVec4A; 3],
    /// Primitive of each lane ([`NONE`] for padding).
    prim: [u32; 4],
}

/// Primitive id of a padding lane.
pub const NONE: u32 = u32::MAX;

/// Padding lanes: empty boxes (min = +∞ > max = −∞), which overlap nothing.
const EMPTY_GROUP: Group = Group {
    min: [Vec4::INFINITY; 3],
    max: [Vec4::NEG_INFINITY; 3],
    first: [BVec4A::FALSE; 3],
    prim: [NONE; 4],
};

/// One entry's data broadcast to all four lanes, to test against a [`Group`].
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    min: [Vec4; 3],
    max: [Vec4; 3],
    first: [BVec4A; 3],
}

/// Flat array of entries (box, first-cell flags, primitive) in groups of four; every entry not
/// written since [`Self::reset`] is padding.
#[derive(Debug, Default)]
pub struct BucketLanes {
    groups: Vec<Group>,
}

impl BucketLanes {
    /// Makes room for `n` entries (a multiple of 4), all padding.
    pub fn reset(&mut self, n: usize) {
        self.groups.clear();
        self.groups.resize(n.div_ceil(4), EMPTY_GROUP);
    }

    /// Writes entry `slot`: primitive `prim` with box `b` (m) and first-cell flags `first`.
    #[inline]
    pub fn set(&mut self, slot: usize, prim: u32, b: &Aabb, first: [bool; 3]) {
        let (g, lane) = (&mut self.groups[slot / 4], slot % 4);
        for (a, &f) in first.iter().enumerate() {
            g.min[a][lane] = b.min[a];
            g.max[a][lane] = b.max[a];
            g.first[a].set(lane, f);
        }
        g.prim[lane] = prim;
    }

    /// Primitive of entry `slot` ([`NONE`] for padding).
    #[inline]
    pub fn prim(&self, slot: usize) -> u32 {
        self.groups[slot / 4].prim[slot % 4]
    }

    /// Entry `slot` broadcast for testing against other entries.
    #[inline]
    pub fn probe(&self, slot: usize) -> Probe {
        let (g, k) = (&self.groups[slot / 4], slot % 4);
        Probe {
            min: g.min.map(|v| Vec4::splat(v[k])),
            max: g.max.map(|v| Vec4::splat(v[k])),
            first: g.first.map(|v| BVec4A::splat(v.test(k))),
        }
    }

    /// Calls `f(slot, prim)`, in increasing slot order within `slots`, for every entry whose box
    /// overlaps that of `p` (closed boxes, as [`Aabb::overlaps`]; a NaN bound overlaps nothing) and
    /// for which, along every axis, the bucket's cell is the first cell of `p` or of the entry.
    /// With `all_first`, the first-cell flags are ignored (every entry passes that rule).
    #[inline]
    pub fn for_matches(
        &self,
        p: &Probe,
        slots: std::ops::Range<usize>,
        all_first: bool,
        mut f: impl FnMut(usize, u32),
    ) {
        if slots.is_empty() {
            return;
        }
        let (first_group, last_group) = (slots.start / 4, (slots.end - 1) / 4);
        let mut keep = !0u32 << (slots.start % 4);
        for k in first_group..=last_group {
            let g = &self.groups[k];
            if k == last_group {
                keep &= !0u32 >> (31 - (slots.end - 1) % 4);
            }
            let mut m = if all_first {
                BVec4A::TRUE
            } else {
                (p.first[0] | g.first[0]) & (p.first[1] | g.first[1]) & (p.first[2] | g.first[2])
            };
            for a in 0..3 {
                m &= p.min[a].cmple(g.max[a]) & g.min[a].cmple(p.max[a]);
            }
            let mut bits = m.bitmask() & keep;
            keep = !0;
            while bits != 0 {
                let lane = bits.trailing_zeros() as usize;
                f(4 * k + lane, g.prim[lane]);
                bits &= bits - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn matches_equal_scalar_tests_over_any_range() {
        let mut s = 0x5eed_1234_abcd_0001u64;
        let mut r = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut prims: Vec<(Aabb, [bool; 3])> = (0..41)
            .map(|_| {
                let (a, b) = (Vec3::new(r(), r(), r()), Vec3::new(r(), r(), r()) * 0.5);
                let rad = 0.2 * r();
                let flags = [r() < 0.5, r() < 0.5, r() < 0.7];
                (Aabb::swept(a, a + b, rad), flags)
            })
            .collect();
        let nan = Vec3::new(0.5, f32::NAN, 0.5);
        prims.push((Aabb::swept(nan, nan, 0.1), [true; 3]));
        prims.push((Aabb::EMPTY, [true; 3]));
        let n = prims.len();
        let mut lanes = BucketLanes::default();
        lanes.reset(n.next_multiple_of(4));
        for (i, (b, f)) in prims.iter().enumerate() {
            lanes.set(i, 100 + i as u32, b, *f);
        }
        assert_eq!(lanes.prim(5), 105);
        assert_eq!(lanes.prim(n), NONE, "padding");
        let mut total = 0;
        for (i, (b, f)) in prims.iter().enumerate() {
            let p = lanes.probe(i);
            for (from, to) in [
                (0, n),
                (1, n),
                (3, 4),
                (4, 9),
                (6, 6),
                (5, 42),
                (42, n),
                (n, n),
            ] {
                for all_first in [false, true] {
                    let mut got = Vec::new();
                    lanes.for_matches(&p, from..to, all_first, |j, prim| {
                        assert_eq!(prim, 100 + j as u32);
                        got.push(j);
                    });
                    let want: Vec<usize> = (from..to)
                        .filter(|&j| {
                            let (bj, fj) = &prims[j];
                            b.overlaps(bj) && (all_first || (0..3).all(|a| f[a] || fj[a]))
                        })
                        .collect();
                    assert_eq!(
                        got, want,
                        "probe {i} over {from}..{to}, all_first {all_first}"
                    );
                    total += want.len();
                }
            }
        }
        assert!(total > 100, "the boxes must overlap often: {total}");
        // Padding matches nothing, not even itself.
        let mut got = Vec::new();
        lanes.for_matches(&lanes.probe(n), 0..n + 1, true, |j, _| got.push(j));
        assert!(got.is_empty(), "{got:?}");
    }
}
