//! Closest points between cloth primitives (Ericson, "Real-Time Collision Detection" §5.1.5 and
//! §5.1.9), in f64. Used for proximity repulsion (BFA02 §6.1) and for the distance check at a
//! coplanarity root of continuous collision detection (BFA02 §6.2).

use glam::DVec3;

/// Barycentric weights `[wa, wb, wc]` (summing to 1, all ≥ 0) of the point of triangle `abc`
/// closest to `p` (Ericson §5.1.5). Degenerate triangles fall back to their closest edge.
pub fn point_triangle_weights(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> [f64; 3] {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - w, w];
    }
    let sum = va + vb + vc;
    if sum > 0.0 && sum.is_finite() {
        let v = vb / sum;
        let w = vc / sum;
        return [1.0 - v - w, v, w];
    }
    degenerate_triangle_weights(p, a, b, c)
}

/// Closest point of a zero-area triangle: best of its three edges.
fn degenerate_triangle_weights(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> [f64; 3] {
    let on_ab = point_segment_param(p, a, b);
    let on_bc = point_segment_param(p, b, c);
    let on_ca = point_segment_param(p, c, a);
    let cands = [
        [1.0 - on_ab, on_ab, 0.0],
        [0.0, 1.0 - on_bc, on_bc],
        [on_ca, 0.0, 1.0 - on_ca],
    ];
    let mut best = cands[0];
    let mut best_d = f64::INFINITY;
    for w in cands {
        let q = a * w[0] + b * w[1] + c * w[2];
        let d = (p - q).length_squared();
        if d < best_d {
            best_d = d;
            best = w;
        }
    }
    best
}

/// Parameter s ∈ \[0,1\] of the point of segment `ab` closest to `p`.
fn point_segment_param(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let d = b - a;
    let len2 = d.length_squared();
    if len2 <= 0.0 {
        return 0.0;
    }
    ((p - a).dot(d) / len2).clamp(0.0, 1.0)
}

/// Parameters `(s, t)` ∈ \[0,1\]² of the closest points `p1 + s (q1 - p1)` and `p2 + t (q2 - p2)`
/// of two segments (Ericson §5.1.9); parallel segments get one of the closest pairs.
pub fn segment_segment_params(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> (f64, f64) {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    let tiny = 1e-30;
    if a <= tiny && e <= tiny {
        return (0.0, 0.0);
    }
    if a <= tiny {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e <= tiny {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    if denom <= 1e-6 * a * e {
        return near_parallel_params(p1, q1, p2, q2);
    }
    let mut s = ((b * f - c * e) / denom).clamp(0.0, 1.0);
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}

/// Nearly parallel segments (sin² of the angle below 1e-6): the interior solution is
/// ill-conditioned, so take the best of the four endpoint-to-segment projections (the minimum of
/// the convex distance over \[0,1\]² then lies on the boundary up to round-off).
fn near_parallel_params(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> (f64, f64) {
    let cands = [
        (0.0, point_segment_param(p1, p2, q2)),
        (1.0, point_segment_param(q1, p2, q2)),
        (point_segment_param(p2, p1, q1), 0.0),
        (point_segment_param(q2, p1, q1), 1.0),
    ];
    let mut best = cands[0];
    let mut best_d = f64::INFINITY;
    for (s, t) in cands {
        let d = (p1.lerp(q1, s) - p2.lerp(q2, t)).length_squared();
        if d < best_d {
            best_d = d;
            best = (s, t);
        }
    }
    best
}

/// Distance (m) from `p` to triangle `abc`.
pub fn point_triangle_distance(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let w = point_triangle_weights(p, a, b, c);
    (p - (a * w[0] + b * w[1] + c * w[2])).length()
}

/// Distance (m) between segments `p1q1` and `p2q2`.
pub fn segment_segment_distance(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> f64 {
    let (s, t) = segment_segment_params(p1, q1, p2, q2);
    (p1.lerp(q1, s) - p2.lerp(q2, t)).length()
}
