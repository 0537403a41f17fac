//! Diagonal slabs: the six axes x±y, y±z, z±x that, with the three coordinate axes of an
//! [`Aabb`](super::spatial_hash::Aabb), make an 18-DOP (discrete oriented polytope, Klosowski et
//! al. 1998). A box–box overlap of the broad phase is kept only if these slabs overlap too: on a
//! sheet lying in a coordinate plane, the boxes of neighbouring triangles and edges touch (their
//! coordinate ranges differ by 0 or a whole edge length), while along the diagonals most of those
//! pairs are an edge length / √2 apart.
//!
//! Projections are onto the unnormalised axes (|axis| = √2), so a ball of radius r around a point
//! projects to ± √2·r. Like the box test, the test is conservative: a point in the convex hull of a
//! primitive's swept, inflated vertices projects inside the primitive's slabs.

use glam::Vec3;

/// Ranges of a primitive along x+y, y+z, z+x (`sum_*`) and x−y, y−z, z−x (`diff_*`), in m·√2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slabs {
    sum_lo: Vec3,
    sum_hi: Vec3,
    diff_lo: Vec3,
    diff_hi: Vec3,
}

/// Projections of `p` onto (x+y, y+z, z+x) and (x−y, y−z, z−x).
#[inline]
fn project(p: Vec3) -> (Vec3, Vec3) {
    let q = Vec3::new(p.y, p.z, p.x);
    (p + q, p - q)
}

impl Slabs {
    pub const EMPTY: Slabs = Slabs {
        sum_lo: Vec3::splat(f32::INFINITY),
        sum_hi: Vec3::splat(f32::NEG_INFINITY),
        diff_lo: Vec3::splat(f32::INFINITY),
        diff_hi: Vec3::splat(f32::NEG_INFINITY),
    };

    /// Slabs of a linear motion a → b, inflated by a ball of radius `r` (m).
    pub fn swept(a: Vec3, b: Vec3, r: f32) -> Slabs {
        let ((sa, da), (sb, db)) = (project(a), project(b));
        let pad = Vec3::splat(std::f32::consts::SQRT_2 * r);
        Slabs {
            sum_lo: sa.min(sb) - pad,
            sum_hi: sa.max(sb) + pad,
            diff_lo: da.min(db) - pad,
            diff_hi: da.max(db) + pad,
        }
    }

    pub fn union(self, o: Slabs) -> Slabs {
        Slabs {
            sum_lo: self.sum_lo.min(o.sum_lo),
            sum_hi: self.sum_hi.max(o.sum_hi),
            diff_lo: self.diff_lo.min(o.diff_lo),
            diff_hi: self.diff_hi.max(o.diff_hi),
        }
    }

    /// Do the slabs overlap? (The broad phase tests box and slabs together, see
    /// [`Dop18`](super::dop18::Dop18); this is the reference for its tests.)
    #[cfg(test)]
    pub fn overlaps(&self, o: &Slabs) -> bool {
        (self.sum_lo.cmple(o.sum_hi)
            & o.sum_lo.cmple(self.sum_hi)
            & self.diff_lo.cmple(o.diff_hi)
            & o.diff_lo.cmple(self.diff_hi))
        .all()
    }

    /// Lower and upper bounds along the six axes x+y, y+z, z+x, x−y, y−z, z−x (m·√2).
    pub fn bounds(&self) -> ([f32; 6], [f32; 6]) {
        let (sl, sh, dl, dh) = (self.sum_lo, self.sum_hi, self.diff_lo, self.diff_hi);
        (
            [sl.x, sl.y, sl.z, dl.x, dl.y, dl.z],
            [sh.x, sh.y, sh.z, dh.x, dh.y, dh.z],
        )
    }

    /// Does a ball of radius `r` (m) around `p` lie inside the slabs?
    pub fn contains_with_margin(&self, p: Vec3, r: f32) -> bool {
        let (s, d) = project(p);
        let pad = Vec3::splat(std::f32::consts::SQRT_2 * r);
        (s - pad).cmpge(self.sum_lo).all()
            && (s + pad).cmple(self.sum_hi).all()
            && (d - pad).cmpge(self.diff_lo).all()
            && (d + pad).cmple(self.diff_hi).all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separates_diagonal_neighbours_that_boxes_do_not() {
        // Diagonal edge (0,0,0)–(1,0,1) and the edge (1,0,0)–(2,0,0) of the next quad: their
        // boxes touch, but they are 1/√2 apart.
        let r = 0.3;
        let d = Slabs::swept(Vec3::ZERO, Vec3::ZERO, r).union(Slabs::swept(
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(1.0, 0.0, 1.0),
            r,
        ));
        let e = Slabs::swept(Vec3::X, Vec3::X, r).union(Slabs::swept(
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
            r,
        ));
        assert!(!d.overlaps(&e), "0.6 < 1/√2");
        let r = 0.36;
        let grow = |p: Vec3| Slabs::swept(p, p, r);
        let d = grow(Vec3::ZERO).union(grow(Vec3::new(1.0, 0.0, 1.0)));
        let e = grow(Vec3::X).union(grow(Vec3::new(2.0, 0.0, 0.0)));
        assert!(d.overlaps(&e), "0.72 > 1/√2");
    }

    #[test]
    fn swept_slabs_contain_the_inflated_motion() {
        let (a, b, r) = (Vec3::new(0.3, -1.0, 2.0), Vec3::new(-0.5, 0.25, 1.0), 0.1);
        let s = Slabs::swept(a, b, r);
        for k in 0..=10 {
            let p = a.lerp(b, k as f32 / 10.0);
            assert!(s.contains_with_margin(p, 0.99 * r));
        }
        assert!(!s.contains_with_margin(a, 1.01 * r));
    }
}
