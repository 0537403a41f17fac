//! Fitting spheres and tapered capsules to vertex sets.

use glam::{Mat3, Vec3};

/// Sphere around points: centre of the bounding box, radius to the farthest point.
pub fn fit_sphere(points: &[Vec3]) -> (Vec3, f32) {
    let (lo, hi) = bounds(points);
    let c = (lo + hi) * 0.5;
    let r = points.iter().map(|p| p.distance(c)).fold(0.0, f32::max);
    (c, r)
}

/// Bounding box of points.
pub fn bounds(points: &[Vec3]) -> (Vec3, Vec3) {
    points.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    )
}

/// Principal axis of points (largest-variance direction of the covariance, by power iteration
/// started on the bounding box's longest side; deterministic), and the centroid.
pub fn principal_axis(points: &[Vec3]) -> (Vec3, Vec3) {
    let n = points.len().max(1) as f32;
    let c = points.iter().copied().sum::<Vec3>() / n;
    let mut cov = Mat3::ZERO;
    for p in points {
        let d = *p - c;
        cov += Mat3::from_cols(d * d.x, d * d.y, d * d.z);
    }
    let (lo, hi) = bounds(points);
    let ext = hi - lo;
    let mut v = if ext.x >= ext.y && ext.x >= ext.z {
        Vec3::X
    } else if ext.y >= ext.z {
        Vec3::Y
    } else {
        Vec3::Z
    };
    for _ in 0..64 {
        let w = cov * v;
        match w.try_normalize() {
            Some(w) => v = w,
            None => break,
        }
    }
    (c, v)
}

/// How an end radius is taken from the radial distances of the points in the end region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RadiusStat {
    /// The largest distance (encloses a clean primitive mesh exactly).
    Max,
    /// The mean distance (the radius of a circular cross-section; robust on body skin).
    Mean,
}

/// A tapered capsule fitted along `axis` (unit) through `origin`: each point projects to
/// s = (p − origin)·axis at radial distance ρ. The radius at each end is `stat` of ρ over the
/// points in that end's quarter of the projection range. With `pull_in` the end points are pulled
/// in from the extreme projections by their radii (the caps are the mesh's ends: a closed proxy
/// mesh), meeting at the middle if the capsule is shorter than its radii; without, they sit at the
/// extreme projections (an open tube such as a limb's skin between two joints). Returns (a, b, radius_a, radius_b) and, for each point,
/// which end region it fell in (−1 a, +1 b, 0 middle).
pub fn fit_capsule_along(
    points: &[Vec3],
    origin: Vec3,
    axis: Vec3,
    stat: RadiusStat,
    pull_in: bool,
) -> ((Vec3, Vec3, f32, f32), Vec<i8>) {
    let proj: Vec<(f32, f32)> = points
        .iter()
        .map(|p| {
            let d = *p - origin;
            let s = d.dot(axis);
            (s, (d - axis * s).length())
        })
        .collect();
    let smin = proj.iter().map(|p| p.0).fold(f32::MAX, f32::min);
    let smax = proj.iter().map(|p| p.0).fold(f32::MIN, f32::max);
    let q = (smax - smin) * 0.25;
    let region: Vec<i8> = proj
        .iter()
        .map(|&(s, _)| {
            if s <= smin + q {
                -1
            } else if s >= smax - q {
                1
            } else {
                0
            }
        })
        .collect();
    let radius_in = |want: i8| {
        let rho = proj
            .iter()
            .zip(&region)
            .filter(|(_, &r)| r == want)
            .map(|(p, _)| p.1);
        match stat {
            RadiusStat::Max => rho.fold(0.0f32, f32::max),
            RadiusStat::Mean => {
                let (sum, n) = rho.fold((0.0f64, 0usize), |(s, n), r| (s + r as f64, n + 1));
                (sum / n.max(1) as f64) as f32
            }
        }
    };
    let (ra, rb) = (radius_in(-1), radius_in(1));
    let (mut sa, mut sb) = if pull_in {
        (smin + ra, smax - rb)
    } else {
        (smin, smax)
    };
    if sa > sb {
        let mid = 0.5 * (smin + smax);
        sa = mid;
        sb = mid;
    }
    ((origin + axis * sa, origin + axis * sb, ra, rb), region)
}

/// Mean absolute distance of points from the surface of the tapered capsule (a, b, ra, rb),
/// measured to the axis segment with the radius interpolated along it (a fit-quality measure).
pub fn mean_surface_gap(points: &[Vec3], a: Vec3, b: Vec3, ra: f32, rb: f32) -> f32 {
    let ab = b - a;
    let l2 = ab.length_squared();
    let sum: f64 = points
        .iter()
        .map(|p| {
            let t = if l2 > 0.0 {
                ((*p - a).dot(ab) / l2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            (p.distance(a + ab * t) - (ra + (rb - ra) * t)).abs() as f64
        })
        .sum();
    (sum / points.len().max(1) as f64) as f32
}
