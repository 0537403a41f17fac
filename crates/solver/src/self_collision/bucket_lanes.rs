//! The primitives of one spatial-hash bucket in groups of four lanes, structure-of-arrays inside a
//! group (one `Vec4` per bound, i.e. one SSE2 register on x86-64), so that the bucket join of
//! [`SpatialHash`](super::spatial_hash::SpatialHash) tests a box against four others at once and
//! without branches: box overlap and the "reported only from the cell of the min corner of the
//! overlap" rule that makes every pair come out once (Kang 2003 §5.3 hash). Only the lanes passing
//! both reach the caller.
//!
//! The min-corner rule in lanes: both boxes contain the cell c of the bucket, and the min corner of
//! their overlap lies in cell max(first cell of p, first cell of q) (componentwise). That equals c
//! iff along every axis c is the first cell of p or of q, so each lane keeps three "first along
//! axis a" flags. (This needs c to be the only cell in the bucket; in buckets shared by several
//! cells the caller sets all flags and checks the rule by hand.)

use super::spatial_hash::Aabb;
use glam::{BVec4A, Vec4};

/// Four primitives: lane k of every vector belongs to primitive k.
#[derive(Clone, Copy, Debug)]
struct Group {
    /// Box bounds along x, y, z (m).
    min: [Vec4; 3],
    max: [Vec4; 3],
    /// Is the bucket's cell the primitive's first cell along x, y, z?
    first: [BVec4A; 3],
}

/// Unused lanes: empty boxes (min = +∞ > max = −∞), which overlap nothing.
const EMPTY_GROUP: Group = Group {
    min: [Vec4::INFINITY; 3],
    max: [Vec4::NEG_INFINITY; 3],
    first: [BVec4A::FALSE; 3],
};

/// One primitive's data broadcast to all four lanes, to test against a [`Group`].
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    min: [Vec4; 3],
    max: [Vec4; 3],
    first: [BVec4A; 3],
}

/// A growing list of primitives (box, first-cell flags, id), padded to whole groups.
#[derive(Debug, Default)]
pub struct BucketLanes {
    groups: Vec<Group>,
    /// Primitive id of each lane, in push order.
    prims: Vec<u32>,
}

impl BucketLanes {
    /// Empties the list and prepares room for `n` primitives.
    pub fn reset(&mut self, n: usize) {
        self.groups.clear();
        self.groups.resize(n.div_ceil(4), EMPTY_GROUP);
        self.prims.clear();
    }

    /// Number of primitives pushed.
    pub fn len(&self) -> usize {
        self.prims.len()
    }

    /// Primitive id of lane `i`.
    #[inline]
    pub fn prim(&self, i: usize) -> u32 {
        self.prims[i]
    }

    /// Appends primitive `prim` with box `b` (m) and first-cell flags `first` (x, y, z).
    #[inline]
    pub fn push(&mut self, prim: u32, b: &Aabb, first: [bool; 3]) {
        let (k, lane) = (self.prims.len() / 4, self.prims.len() % 4);
        if k == self.groups.len() {
            self.groups.push(EMPTY_GROUP);
        }
        let g = &mut self.groups[k];
        for (a, &f) in first.iter().enumerate() {
            g.min[a][lane] = b.min[a];
            g.max[a][lane] = b.max[a];
            g.first[a].set(lane, f);
        }
        self.prims.push(prim);
    }

    /// Sets every first-cell flag (the min-corner rule is then left to the caller).
    pub fn set_all_first(&mut self) {
        for g in &mut self.groups {
            g.first = [BVec4A::TRUE; 3];
        }
    }

    /// Lane `i` broadcast for testing against other lanes.
    #[inline]
    pub fn probe(&self, i: usize) -> Probe {
        let (g, k) = (&self.groups[i / 4], i % 4);
        Probe {
            min: g.min.map(|v| Vec4::splat(v[k])),
            max: g.max.map(|v| Vec4::splat(v[k])),
            first: g.first.map(|v| BVec4A::splat(v.test(k))),
        }
    }

    /// Calls `f(i)`, in increasing `i ≥ from`, for every lane whose box overlaps that of `p` (closed
    /// boxes, as [`Aabb::overlaps`]; a NaN bound overlaps nothing) and for which, along every axis, the
    /// bucket's cell is the first cell of `p` or of lane `i`.
    #[inline]
    pub fn for_matches(&self, p: &Probe, from: usize, mut f: impl FnMut(usize)) {
        let mut keep = !0u32 << (from % 4);
        for (k, g) in self.groups.iter().enumerate().skip(from / 4) {
            let mut m = p.first[0] | g.first[0];
            for a in 1..3 {
                m &= p.first[a] | g.first[a];
            }
            for a in 0..3 {
                m &= p.min[a].cmple(g.max[a]) & g.min[a].cmple(p.max[a]);
            }
            let mut bits = m.bitmask() & keep;
            keep = !0;
            while bits != 0 {
                f(4 * k + bits.trailing_zeros() as usize);
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
    fn matches_equal_scalar_tests_from_any_start() {
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
        let mut lanes = BucketLanes::default();
        lanes.reset(3);
        for (i, (b, f)) in prims.iter().enumerate() {
            lanes.push(100 + i as u32, b, *f);
        }
        assert_eq!(lanes.len(), prims.len());
        assert_eq!(lanes.prim(5), 105);
        let mut total = 0;
        for (i, (b, f)) in prims.iter().enumerate() {
            let p = lanes.probe(i);
            for from in [0, 1, 3, 4, 6, 42, prims.len()] {
                let mut got = Vec::new();
                lanes.for_matches(&p, from, |j| got.push(j));
                let want: Vec<usize> = (from..prims.len())
                    .filter(|&j| {
                        let (bj, fj) = &prims[j];
                        b.overlaps(bj) && (0..3).all(|a| f[a] || fj[a])
                    })
                    .collect();
                assert_eq!(got, want, "probe {i} from {from}");
                total += want.len();
            }
        }
        assert!(total > 100, "the primitives must match often: {total}");
        // Without the first-cell rule, a box matches itself.
        lanes.set_all_first();
        let mut got = Vec::new();
        lanes.for_matches(&lanes.probe(3), 3, |j| got.push(j));
        assert_eq!(got.first(), Some(&3));
    }
}
