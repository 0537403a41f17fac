//! An 18-DOP (discrete oriented polytope, Klosowski et al. 1998): a box plus the six diagonal
//! ranges along x±y, y±z, z±x, packed as three lower and three upper `Vec4`s (x, y, z | x+y, y+z,
//! z+x | x−y, y−z, z−x, each with one unused lane), so that an overlap test is six SSE2 compares
//! and one branch. On a sheet lying in a coordinate plane the boxes of neighbouring triangles and
//! edges touch (their coordinate ranges differ by 0 or a whole edge length), while along the
//! diagonals most of those pairs are an edge length / √2 apart, so the broad phase keeps a pair
//! only if the whole 18-DOPs overlap.
//!
//! Diagonal projections are onto the unnormalised axes (|axis| = √2), so a ball of radius r
//! around a point projects to ± √2·r. Like a box, the DOP of a swept primitive is conservative:
//! every point in the convex hull of its swept, inflated vertices lies inside it.

use glam::{Vec3, Vec4};

/// Lower and upper bounds along the nine axes (m for x, y, z; m·√2 for the diagonals). The
/// unused fourth lanes hold −∞ / +∞, so they always overlap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dop18 {
    lo: [Vec4; 3],
    hi: [Vec4; 3],
}

/// `p` along the nine axes: (x, y, z), (x+y, y+z, z+x), (x−y, y−z, z−x).
#[inline]
fn project(p: Vec3) -> [Vec3; 3] {
    let q = Vec3::new(p.y, p.z, p.x);
    [p, p + q, p - q]
}

/// The box part of a [`Dop18`] (m; the fourth lanes −∞ / +∞): 32 bytes against 96, for bounds
/// stored for many primitives whose pairs are mostly apart along x, y or z, with the diagonal
/// ranges recomputed from their vertices for the few whose boxes overlap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DopBox {
    lo: Vec4,
    hi: Vec4,
}

impl DopBox {
    /// Overlaps nothing.
    pub const EMPTY: DopBox = DopBox {
        lo: Vec4::INFINITY,
        hi: Vec4::NEG_INFINITY,
    };

    /// Overlap along x, y and z (closed intervals; a NaN bound overlaps nothing), as
    /// [`Dop18::overlaps_box`] of the DOPs it is the box of.
    #[inline]
    pub fn overlaps(&self, o: &DopBox) -> bool {
        (self.lo.cmple(o.hi) & o.lo.cmple(self.hi)).all()
    }
}

impl Dop18 {
    /// Overlaps nothing.
    pub const EMPTY: Dop18 = Dop18 {
        lo: [Vec4::INFINITY; 3],
        hi: [Vec4::NEG_INFINITY; 3],
    };

    /// Overlaps everything (but a NaN).
    pub const EVERYTHING: Dop18 = Dop18 {
        lo: [Vec4::NEG_INFINITY; 3],
        hi: [Vec4::INFINITY; 3],
    };

    /// Is any bound NaN?
    #[inline]
    pub fn has_nan(&self) -> bool {
        (0..3).any(|k| self.lo[k].is_nan_mask().any() || self.hi[k].is_nan_mask().any())
    }

    /// The DOP of a linear motion a → b, inflated by a ball of radius `r` (m).
    #[inline]
    pub fn swept(a: Vec3, b: Vec3, r: f32) -> Dop18 {
        let (pa, pb) = (project(a), project(b));
        let pad = [
            r,
            std::f32::consts::SQRT_2 * r,
            std::f32::consts::SQRT_2 * r,
        ];
        let (l, h) = (f32::NEG_INFINITY, f32::INFINITY);
        Dop18 {
            lo: [0, 1, 2].map(|k| (pa[k].min(pb[k]) - Vec3::splat(pad[k])).extend(l)),
            hi: [0, 1, 2].map(|k| (pa[k].max(pb[k]) + Vec3::splat(pad[k])).extend(h)),
        }
    }

    /// Smallest DOP holding both.
    #[inline]
    pub fn union(&self, o: &Dop18) -> Dop18 {
        Dop18 {
            lo: [0, 1, 2].map(|k| self.lo[k].min(o.lo[k])),
            hi: [0, 1, 2].map(|k| self.hi[k].max(o.hi[k])),
        }
    }

    /// The box part (m).
    #[cfg(test)]
    pub fn aabb(&self) -> crate::collide::Aabb {
        crate::collide::Aabb {
            min: self.lo[0].truncate(),
            max: self.hi[0].truncate(),
        }
    }

    /// The box of `self` ∪ `o` ([`Self::union`]'s box lanes, bit for bit).
    #[inline]
    pub fn box_union(&self, o: &Dop18) -> DopBox {
        DopBox {
            lo: self.lo[0].min(o.lo[0]),
            hi: self.hi[0].max(o.hi[0]),
        }
    }

    /// Overlap along x, y and z (the box part of [`Self::overlaps`]).
    #[inline]
    pub fn overlaps_box(&self, o: &Dop18) -> bool {
        (self.lo[0].cmple(o.hi[0]) & o.lo[0].cmple(self.hi[0])).all()
    }

    /// [`Self::overlaps`], the box first: for pairs that are mostly apart (the neighbour lists:
    /// 81 % of them are apart along x, y or z on the dress-walk sample).
    #[inline]
    pub fn overlaps_box_first(&self, o: &Dop18) -> bool {
        self.overlaps_box(o) && self.overlaps_diagonals(o)
    }

    /// Overlap along the six diagonal axes (the rest of [`Self::overlaps`]).
    #[inline]
    pub fn overlaps_diagonals(&self, o: &Dop18) -> bool {
        ((self.lo[1].cmple(o.hi[1]) & o.lo[1].cmple(self.hi[1]))
            & (self.lo[2].cmple(o.hi[2]) & o.lo[2].cmple(self.hi[2])))
        .all()
    }

    /// Overlap along all nine axes (closed intervals; a NaN bound overlaps nothing).
    #[inline]
    pub fn overlaps(&self, o: &Dop18) -> bool {
        let m = (self.lo[0].cmple(o.hi[0]) & o.lo[0].cmple(self.hi[0]))
            & (self.lo[1].cmple(o.hi[1]) & o.lo[1].cmple(self.hi[1]))
            & (self.lo[2].cmple(o.hi[2]) & o.lo[2].cmple(self.hi[2]));
        m.all()
    }

    /// Does a ball of radius `r` (m) around `p` lie inside? (The unused lanes, ±∞, always hold
    /// it.)
    #[inline]
    pub fn contains_with_margin(&self, p: Vec3, r: f32) -> bool {
        let pp = project(p);
        let pad = [
            r,
            std::f32::consts::SQRT_2 * r,
            std::f32::consts::SQRT_2 * r,
        ];
        let inside = |k: usize| {
            let (q, d) = (pp[k].extend(0.0), Vec4::splat(pad[k]));
            (q - d).cmpge(self.lo[k]) & (q + d).cmple(self.hi[k])
        };
        (inside(0) & inside(1) & inside(2)).all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: scalar ranges along the nine axes, (lo, hi).
    fn ranges(pts: &[Vec3], r: f32) -> ([f32; 9], [f32; 9]) {
        let axes: [Vec3; 9] = [
            Vec3::X,
            Vec3::Y,
            Vec3::Z,
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 1.0),
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(1.0, -1.0, 0.0),
            Vec3::new(0.0, 1.0, -1.0),
            Vec3::new(-1.0, 0.0, 1.0),
        ];
        let mut lo = [f32::INFINITY; 9];
        let mut hi = [f32::NEG_INFINITY; 9];
        for (k, a) in axes.iter().enumerate() {
            for p in pts {
                let d = a.dot(*p);
                lo[k] = lo[k].min(d - a.length() * r);
                hi[k] = hi[k].max(d + a.length() * r);
            }
        }
        (lo, hi)
    }

    #[test]
    fn overlap_is_overlap_along_all_nine_axes() {
        let mut r = crate::fixtures::unit_random(0xfeed_5eed_0123_4567u64);
        let prims: Vec<(Vec3, Vec3, f32)> = (0..60)
            .map(|_| {
                let (a, d) = (Vec3::new(r(), r(), r()), 0.4 * Vec3::new(r(), r(), r()));
                (a, a + d, 0.1 * r())
            })
            .collect();
        let (mut both, mut box_only) = (0, 0);
        for &(a, b, ra) in &prims {
            for &(c, d, rc) in &prims {
                let (l1, h1) = ranges(&[a, b], ra);
                let (l2, h2) = ranges(&[c, d], rc);
                // 1e-5 m of slack for the rounding of the two computations.
                let apart = (0..9).any(|k| l1[k] > h2[k] + 1e-5 || l2[k] > h1[k] + 1e-5);
                let close = (0..9).all(|k| l1[k] < h2[k] - 1e-5 && l2[k] < h1[k] - 1e-5);
                let got = Dop18::swept(a, b, ra).overlaps(&Dop18::swept(c, d, rc));
                if apart {
                    assert!(!got);
                }
                if close {
                    assert!(got);
                }
                both += got as u32;
                let boxes = (0..3).all(|k| l1[k] <= h2[k] && l2[k] <= h1[k]);
                box_only += (boxes && !got) as u32;
            }
        }
        assert!(both > 200 && box_only > 50, "{both} {box_only}");
        let nan = Vec3::new(0.5, f32::NAN, 0.5);
        let d = Dop18::swept(nan, nan, 0.1);
        assert!(!d.overlaps(&d), "NaN overlaps nothing");
        assert!(!Dop18::EMPTY.overlaps(&Dop18::EMPTY));
    }

    #[test]
    fn box_parts_agree_with_the_whole() {
        let mut r = crate::fixtures::unit_random(0x0b0c_5eed_7777_1234u64);
        let dops: Vec<Dop18> = (0..40)
            .map(|_| {
                let a = Vec3::new(r(), r(), r());
                Dop18::swept(a, a + 0.3 * Vec3::new(r(), r(), r()), 0.05 * r())
            })
            .collect();
        let (mut boxes, mut whole) = (0, 0);
        for w in dops.windows(2) {
            for o in &dops {
                let (u, b) = (w[0].union(&w[1]), w[0].box_union(&w[1]));
                assert_eq!(
                    b,
                    DopBox {
                        lo: u.lo[0],
                        hi: u.hi[0]
                    }
                );
                assert_eq!(u.overlaps_box(o), b.overlaps(&o.box_union(o)));
                let full = u.overlaps(o);
                assert_eq!(full, u.overlaps_box(o) && u.overlaps_diagonals(o));
                assert_eq!(full, u.overlaps_box_first(o));
                boxes += u.overlaps_box(o) as u32;
                whole += full as u32;
            }
        }
        assert!(whole > 100 && boxes > whole + 50, "{boxes} {whole}");
    }

    #[test]
    fn union_and_containment_hold_the_swept_motion() {
        let (a, b, r) = (Vec3::new(0.3, -1.0, 2.0), Vec3::new(-0.5, 0.25, 1.0), 0.1);
        let s = Dop18::swept(a, b, r);
        for k in 0..=10 {
            let p = a.lerp(b, k as f32 / 10.0);
            assert!(s.contains_with_margin(p, 0.99 * r));
        }
        assert!(!s.contains_with_margin(a, 1.01 * r));
        let c = Vec3::new(2.0, 2.0, 2.0);
        let u = s.union(&Dop18::swept(c, c, 0.0));
        assert!(u.contains_with_margin(c, 0.0) && u.contains_with_margin(a, 0.99 * r));
        assert_eq!(u.aabb().max, Vec3::new(2.0, 2.0, 2.1));
        // Diagonal neighbours of a grid: boxes touch, the DOPs are 1/√2 apart (0.6 < 1/√2).
        let edge = |p: Vec3, q: Vec3, r| Dop18::swept(p, p, r).union(&Dop18::swept(q, q, r));
        let diag = edge(Vec3::ZERO, Vec3::new(1.0, 0.0, 1.0), 0.3);
        let next = edge(Vec3::X, Vec3::new(2.0, 0.0, 0.0), 0.3);
        assert!(diag.aabb().overlaps(&next.aabb()) && !diag.overlaps(&next));
        let diag = edge(Vec3::ZERO, Vec3::new(1.0, 0.0, 1.0), 0.36);
        let next = edge(Vec3::X, Vec3::new(2.0, 0.0, 0.0), 0.36);
        assert!(diag.overlaps(&next), "0.72 > 1/√2");
    }
}
