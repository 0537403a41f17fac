//! An 18-DOP (discrete oriented polytope, Klosowski et al. 1998): the box of an [`Aabb`] and the
//! six diagonal ranges of [`Slabs`], packed as three lower and three upper `Vec4`s (x, y, z | x+y,
//! y+z, z+x | x−y, y−z, z−x, each with one unused lane), so that an overlap test is six SSE2
//! compares and one branch instead of eighteen scalar ones. Used for the per-pair tests of the
//! broad-phase expansion, where most tested pairs are rejected.

use super::diagonal_slabs::Slabs;
use super::spatial_hash::Aabb;
use glam::Vec4;

/// Lower and upper bounds along the nine axes (m for x, y, z; m·√2 for the diagonals).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dop18 {
    lo: [Vec4; 3],
    hi: [Vec4; 3],
}

impl Dop18 {
    /// Overlaps nothing.
    pub const EMPTY: Dop18 = Dop18 {
        lo: [Vec4::INFINITY; 3],
        hi: [Vec4::NEG_INFINITY; 3],
    };

    /// The 18-DOP of box `b` and slabs `s` (the unused lanes always overlap).
    #[inline]
    pub fn new(b: &Aabb, s: &Slabs) -> Dop18 {
        let (lo, hi) = s.bounds();
        let (l, h) = (f32::NEG_INFINITY, f32::INFINITY);
        Dop18 {
            lo: [
                b.min.extend(l),
                Vec4::new(lo[0], lo[1], lo[2], l),
                Vec4::new(lo[3], lo[4], lo[5], l),
            ],
            hi: [
                b.max.extend(h),
                Vec4::new(hi[0], hi[1], hi[2], h),
                Vec4::new(hi[3], hi[4], hi[5], h),
            ],
        }
    }

    /// Same as `Aabb::overlaps && Slabs::overlaps` of the parts (closed intervals; a NaN bound
    /// overlaps nothing).
    #[inline]
    pub fn overlaps(&self, o: &Dop18) -> bool {
        let m = (self.lo[0].cmple(o.hi[0]) & o.lo[0].cmple(self.hi[0]))
            & (self.lo[1].cmple(o.hi[1]) & o.lo[1].cmple(self.hi[1]))
            & (self.lo[2].cmple(o.hi[2]) & o.lo[2].cmple(self.hi[2]));
        m.all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn overlap_is_box_and_slab_overlap() {
        let mut s = 0xfeed_5eed_0123_4567u64;
        let mut r = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut prims: Vec<(Aabb, Slabs)> = (0..60)
            .map(|_| {
                let (a, d) = (Vec3::new(r(), r(), r()), 0.4 * Vec3::new(r(), r(), r()));
                let rad = 0.1 * r();
                (Aabb::swept(a, a + d, rad), Slabs::swept(a, a + d, rad))
            })
            .collect();
        let nan = Vec3::new(0.5, f32::NAN, 0.5);
        prims.push((Aabb::swept(nan, nan, 0.1), Slabs::swept(nan, nan, 0.1)));
        prims.push((Aabb::EMPTY, Slabs::EMPTY));
        let (mut both, mut box_only) = (0, 0);
        for (b, s) in &prims {
            for (c, t) in &prims {
                let want = b.overlaps(c) && s.overlaps(t);
                assert_eq!(Dop18::new(b, s).overlaps(&Dop18::new(c, t)), want);
                both += want as u32;
                box_only += (b.overlaps(c) && !want) as u32;
            }
        }
        assert!(both > 200 && box_only > 50, "{both} {box_only}");
        assert!(!Dop18::EMPTY.overlaps(&Dop18::EMPTY));
    }
}
