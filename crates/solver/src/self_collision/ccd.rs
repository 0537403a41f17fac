//! Continuous collision detection for linearly moving cloth primitives (Provot 1997; BFA02 §6.2):
//! the four points of a vertex–triangle or edge–edge pair become coplanar at the roots of a cubic
//! in t ∈ \[0,1\]; at each root (earliest first) the closest-point distance decides whether the
//! primitives actually touch (within `tol`, m). The end of the substep is always checked as well:
//! a pair that ends (nearly) coplanar and touching has f(1) ≈ 0 without a sign change, which the
//! root search alone misses (two layers pressed onto the same ground plane end exactly at the
//! contact height). All arithmetic in f64.

use super::proximity::{point_triangle_weights, segment_segment_params};
use glam::DVec3;

/// Coefficients `[c0, c1, c2, c3]` of f(t) = (q1-q0)×(q2-q0)·(q3-q0) for points q_i(t) = x0_i + t·d_i
/// (signed six-fold volume of the tetrahedron, m³).
pub fn coplanarity_cubic(x0: [DVec3; 4], d: [DVec3; 4]) -> [f64; 4] {
    let (a, b, c) = (x0[1] - x0[0], x0[2] - x0[0], x0[3] - x0[0]);
    let (va, vb, vc) = (d[1] - d[0], d[2] - d[0], d[3] - d[0]);
    let c0 = a.cross(b).dot(c);
    let c1 = va.cross(b).dot(c) + a.cross(vb).dot(c) + a.cross(b).dot(vc);
    let c2 = va.cross(vb).dot(c) + va.cross(b).dot(vc) + a.cross(vb).dot(vc);
    let c3 = va.cross(vb).dot(vc);
    [c0, c1, c2, c3]
}

fn eval_cubic(c: &[f64; 4], t: f64) -> f64 {
    ((c[3] * t + c[2]) * t + c[1]) * t + c[0]
}

/// Candidate contact times in \[0,1\], ascending: every sign change of the cubic (bisected to f64
/// precision), every exact zero, and every interior extremum with |f| ≤ `near_zero` (grazing
/// contact without a sign change). When the whole cubic is below `near_zero` (coplanar motion) the
/// times 0, ¼, ½, ¾, 1 are returned. Returns the count written to `out`.
pub fn cubic_candidate_times(c: [f64; 4], near_zero: f64, out: &mut [f64; 8]) -> usize {
    if c.iter().all(|k| k.abs() <= near_zero) {
        *out = [0.0, 0.25, 0.5, 0.75, 1.0, 0.0, 0.0, 0.0];
        return 5;
    }
    // Breakpoints: 0, real roots of f' = c1 + 2 c2 t + 3 c3 t² inside (0,1), 1.
    let mut brk = [0.0f64; 4];
    let mut nb = 1;
    let (qa, qb, qc) = (3.0 * c[3], 2.0 * c[2], c[1]);
    let mut crit = [f64::NAN; 2];
    if qa.abs() > 1e-300 {
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            // Numerically stable quadratic roots.
            let q = -0.5 * (qb + qb.signum() * disc.sqrt());
            crit[0] = q / qa;
            crit[1] = if q != 0.0 { qc / q } else { f64::NAN };
        }
    } else if qb.abs() > 1e-300 {
        crit[0] = -qc / qb;
    }
    if crit[0] > crit[1] {
        crit.swap(0, 1);
    }
    for t in crit {
        if t > 0.0 && t < 1.0 {
            brk[nb] = t;
            nb += 1;
        }
    }
    brk[nb] = 1.0;
    nb += 1;
    let mut n = 0;
    let mut push = |t: f64, out: &mut [f64; 8]| {
        if n < out.len() {
            out[n] = t;
            n += 1;
        }
    };
    for k in 0..nb - 1 {
        let (mut lo, mut hi) = (brk[k], brk[k + 1]);
        let mut flo = eval_cubic(&c, lo);
        let fhi = eval_cubic(&c, hi);
        if flo == 0.0 || (k > 0 && flo.abs() <= near_zero) {
            push(lo, out);
        }
        if flo * fhi < 0.0 {
            for _ in 0..64 {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                let fm = eval_cubic(&c, mid);
                if fm == 0.0 {
                    lo = mid;
                    hi = mid;
                    break;
                }
                if (fm < 0.0) == (flo < 0.0) {
                    lo = mid;
                    flo = fm;
                } else {
                    hi = mid;
                }
            }
            push(0.5 * (lo + hi), out);
        }
    }
    if eval_cubic(&c, 1.0) == 0.0 {
        push(1.0, out);
    }
    n
}

/// Scale for the "near zero" test of the cubic: 1e-6 · L³ with L the largest relative extent.
fn near_zero_volume(x0: &[DVec3; 4], d: &[DVec3; 4]) -> f64 {
    let mut l = 0.0f64;
    for i in 1..4 {
        l = l.max((x0[i] - x0[0]).length() + (d[i] - d[0]).length());
    }
    1e-6 * l * l * l
}

/// Vertex–triangle CCD: point `x[0]` against triangle `x[1..4]`, moving linearly from `x0` to `x1`
/// over the substep. Returns the earliest normalized time t ∈ \[0,1\] where the distance is < `tol`
/// (m), with the barycentric weights of the closest triangle point at that time.
pub fn vertex_triangle_ccd(x0: [DVec3; 4], x1: [DVec3; 4], tol: f64) -> Option<(f64, [f64; 3])> {
    let d = [x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2], x1[3] - x0[3]];
    // Order (a, b, c, p): the cubic is the signed volume of the tetrahedron.
    let q0 = [x0[1], x0[2], x0[3], x0[0]];
    let dq = [d[1], d[2], d[3], d[0]];
    let coef = coplanarity_cubic(q0, dq);
    let mut times = [0.0; 8];
    let n = cubic_candidate_times(coef, near_zero_volume(&q0, &dq), &mut times);
    let mut sorted = times;
    sorted[..n].sort_unstable_by(f64::total_cmp);
    for &t in sorted[..n].iter().chain(&[1.0]) {
        let p = x0[0] + d[0] * t;
        let a = x0[1] + d[1] * t;
        let b = x0[2] + d[2] * t;
        let c = x0[3] + d[3] * t;
        let w = point_triangle_weights(p, a, b, c);
        let q = a * w[0] + b * w[1] + c * w[2];
        if (p - q).length_squared() < tol * tol {
            return Some((t, w));
        }
    }
    None
}

/// Edge–edge CCD: edge `x[0]x[1]` against edge `x[2]x[3]`, moving linearly from `x0` to `x1`.
/// Returns the earliest t ∈ \[0,1\] where the segments are closer than `tol` (m), with the closest
/// point parameters `(s, u)` along the two edges at that time.
pub fn edge_edge_ccd(x0: [DVec3; 4], x1: [DVec3; 4], tol: f64) -> Option<(f64, f64, f64)> {
    let d = [x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2], x1[3] - x0[3]];
    let coef = coplanarity_cubic(x0, d);
    let mut times = [0.0; 8];
    let n = cubic_candidate_times(coef, near_zero_volume(&x0, &d), &mut times);
    let mut sorted = times;
    sorted[..n].sort_unstable_by(f64::total_cmp);
    for &t in sorted[..n].iter().chain(&[1.0]) {
        let a = x0[0] + d[0] * t;
        let b = x0[1] + d[1] * t;
        let c = x0[2] + d[2] * t;
        let e = x0[3] + d[3] * t;
        let (s, u) = segment_segment_params(a, b, c, e);
        if (a.lerp(b, s) - c.lerp(e, u)).length_squared() < tol * tol {
            return Some((t, s, u));
        }
    }
    None
}
