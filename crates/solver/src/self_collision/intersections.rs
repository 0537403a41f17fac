//! Independent intersection counter: the number of intersecting triangle pairs of one
//! configuration (triangle–triangle test of Möller 1997, "A fast triangle-triangle intersection
//! test", in f64, with the coplanar case done in 2D). Pairs sharing a vertex are skipped.
//! Near-coplanar pairs (within [`COPLANAR_TOLERANCE`] × triangle size) go to the 2D test, which
//! counts only overlap with positive area. It uses
//! its own sort-based uniform grid, not the solver's broad phase, so tests and bake reports check
//! the collision code against something that does not share its bugs. Touching counts as
//! intersecting.

use glam::{DVec2, DVec3, Vec3, Vec3A};
use rayon::prelude::*;

/// Number of pairs of triangles (not sharing a vertex) that intersect at positions `x` (m).
/// Indices out of range are ignored (such triangles are skipped).
///
/// Each triangle's box is entered in every grid cell it covers; a pair is tested in the first
/// cell both boxes share (the componentwise larger of their lowest cells), so it is counted once.
/// The cell entries are keyed relative to the lowest cell in use and sorted by a radix sort on
/// the bits the keys use (made in triangle order, a stable sort by cell is the (cell, triangle)
/// order): on the dress-walk sample a comparison sort of the (cell, triangle) tuples was 45 % of
/// this count's samples (the count is what every bake report's frame measures); with the radix
/// sort and the boxes side by side, 144 counts of its cached frames at one thread take 0.5 s of
/// CPU instead of 0.9 s (callgrind: 402M instructions → 275M over its first 6 frames).
pub fn count_intersections(x: &[Vec3], triangles: &[[u32; 3]]) -> usize {
    count(x, triangles, true)
}

/// [`count_intersections`] (the same count) on the calling thread alone: for running beside other
/// work on the thread pool, whose thread would otherwise steal pieces of it while waiting for its
/// own (and come back late).
pub fn count_intersections_serial(x: &[Vec3], triangles: &[[u32; 3]]) -> usize {
    count(x, triangles, false)
}

/// [`count_intersections`], the boxes, cell spans and pair tests on the thread pool when
/// `parallel` (the same count either way). The cells without libm's `floorf` ([`floor_i64`])
/// and the entries allocated once at their exact number: the bake report's measurements of the
/// dress-walk sample's first 4 frames (callgrind, one thread, with the proxy distance) 203M →
/// 197.5M instructions; keys of up to 32 bits sorted packed with their triangle in one u64
/// (half the bytes per radix pass): 196.3M, and the stage's time at one thread in 3 alternating
/// rounds on a loaded machine 0.157 s → 0.146 s (mean; the two steps above alone 0.153 s).
/// Bucketing the entries by the key's top 16 bits and sorting each bucket
/// on the pool instead of the radix sort was slower (218M and 56 % more time at one thread:
/// the 2¹⁶-bucket scatter misses the cache).
fn count(x: &[Vec3], triangles: &[[u32; 3]], parallel: bool) -> usize {
    let n = x.len();
    let valid = |t: &[u32; 3]| t.iter().all(|&i| (i as usize) < n);
    let tri_box = |t: &[u32; 3]| {
        if !valid(t) {
            return (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        }
        let (a, b, c) = (x[t[0] as usize], x[t[1] as usize], x[t[2] as usize]);
        (a.min(b).min(c), a.max(b).max(c))
    };
    let boxes: Vec<(Vec3, Vec3)> = if parallel {
        triangles.par_iter().map(tri_box).collect()
    } else {
        triangles.iter().map(tri_box).collect()
    };
    let mut sum = 0.0f64;
    let mut max_ext = 0.0f32;
    let mut used = 0usize;
    for (lo, hi) in &boxes {
        let e = (*hi - *lo).max_element();
        if e.is_finite() {
            sum += e as f64;
            max_ext = max_ext.max(e);
            used += 1;
        }
    }
    if used < 2 {
        return 0;
    }
    let cell = ((sum / used as f64) as f32).max(max_ext / 4.0).max(1e-9);
    // Cell coordinates, offset and clamped to [0, 2²¹) per axis.
    let cell_of = |p: Vec3| -> [u64; 3] {
        let c = p / cell;
        let f = |v: f32| ((floor_i64(v) + (1 << 20)).clamp(0, (1 << 21) - 1)) as u64;
        [f(c.x), f(c.y), f(c.z)]
    };
    // Per triangle: its lowest and highest cell (None: skipped).
    let span_of = |((lo, hi), t): (&(Vec3, Vec3), &[u32; 3])| {
        (lo.is_finite() && hi.is_finite() && valid(t)).then(|| (cell_of(*lo), cell_of(*hi)))
    };
    let spans: Vec<Option<([u64; 3], [u64; 3])>> = if parallel {
        boxes.par_iter().zip(triangles).map(span_of).collect()
    } else {
        boxes.iter().zip(triangles).map(span_of).collect()
    };
    let (mut low, mut high) = ([u64::MAX; 3], [0u64; 3]);
    for (a, b) in spans.iter().flatten() {
        for k in 0..3 {
            low[k] = low[k].min(a[k]);
            high[k] = high[k].max(b[k]);
        }
    }
    // Cell keys relative to the lowest cell, ordered as (x, y, z): bits per axis.
    let bits = |k: usize| u64::BITS - (high[k] - low[k]).leading_zeros();
    let (by, bz) = (bits(1), bits(2));
    let key =
        |c: [u64; 3]| ((c[0] - low[0]) << (by + bz)) | ((c[1] - low[1]) << bz) | (c[2] - low[2]);
    let key_bits = bits(0) + by + bz;
    // (key, triangle) per covered cell, made in triangle order and sorted by key alone with a
    // stable radix sort: the result is sorted by (key, triangle).
    let cells = |s: &Option<([u64; 3], [u64; 3])>| {
        s.map_or(0, |(a, b)| {
            (0..3)
                .map(|k| (b[k] - a[k] + 1) as usize)
                .product::<usize>()
        })
    };
    let total: usize = spans.iter().map(cells).sum();
    let entries = if key_bits <= 32 {
        // Keys of up to 32 bits (cloth-sized meshes): sorted packed with the triangle as
        // key << 32 | triangle, half the bytes per radix pass, and read packed.
        let mut packed: Vec<u64> = Vec::with_capacity(total);
        each_entry(&spans, key, |k, t| packed.push((k << 32) | t as u64));
        radix_sort_by_key(&mut packed, |p| p >> 32, key_bits);
        Entries::Packed(packed)
    } else {
        let mut entries = Vec::with_capacity(total);
        each_entry(&spans, key, |k, t| entries.push((k, t)));
        radix_sort_by_key(&mut entries, |e| e.0, key_bits);
        Entries::Wide(entries)
    };
    let mut groups = Vec::new();
    let mut s = 0;
    let len = entries.len();
    while s < len {
        let first = entries.key(s);
        let mut e = s + 1;
        while e < len && entries.key(e) == first {
            e += 1;
        }
        if e - s > 1 {
            groups.push((s, e));
        }
        s = e;
    }
    // Per group, its triangles' boxes as SIMD vectors and their vertices side by side (one buffer
    // per rayon fold). On the dress-walk sample's frames two thirds of the pairs a cell holds
    // overlap and share a vertex, and 1 % overlap without one: both are decided before the one
    // branch that is rarely taken, so the pairs cost no mispredictions (the same pairs are tested,
    // in the same order).
    let in_group = |count: usize, local: &mut Vec<Member>, &(s, e): &(usize, usize)| {
        let mut count = count;
        let cell_key = entries.key(s);
        local.clear();
        local.extend((s..e).map(|k| {
            let t = entries.triangle(k);
            let (lo, hi) = boxes[t as usize];
            Member {
                lo: Vec3A::from(lo),
                hi: Vec3A::from(hi),
                v: triangles[t as usize],
                t,
            }
        }));
        for (i, m) in local.iter().enumerate() {
            for n in &local[i + 1..] {
                let overlap = (m.lo.cmple(n.hi) & n.lo.cmple(m.hi)).all();
                if !overlap | shares_vertex(m.v, n.v) {
                    continue;
                }
                // Report the pair only in the first cell both boxes share.
                let (ti, tj) = (m.t as usize, n.t as usize);
                let (ci, cj) = (lowest_cell(&spans[ti]), lowest_cell(&spans[tj]));
                if key([0, 1, 2].map(|k| ci[k].max(cj[k]))) != cell_key {
                    continue;
                }
                let p = |t: [u32; 3]| t.map(|k| x[k as usize].as_dvec3());
                if triangles_intersect(p(m.v), p(n.v)) {
                    count += 1;
                }
            }
        }
        count
    };
    if !parallel {
        let mut local = Vec::new();
        return groups
            .iter()
            .fold(0, |count, g| in_group(count, &mut local, g));
    }
    groups
        .par_iter()
        .fold(
            || (0usize, Vec::<Member>::new()),
            |(count, mut local), g| (in_group(count, &mut local, g), local),
        )
        .map(|(count, _)| count)
        .sum()
}

/// The cell entries sorted by (cell key, triangle): packed as key << 32 | triangle when the keys
/// fit in 32 bits, else as pairs.
enum Entries {
    Packed(Vec<u64>),
    Wide(Vec<(u64, u32)>),
}

impl Entries {
    fn len(&self) -> usize {
        match self {
            Entries::Packed(p) => p.len(),
            Entries::Wide(w) => w.len(),
        }
    }

    #[inline]
    fn key(&self, k: usize) -> u64 {
        match self {
            Entries::Packed(p) => p[k] >> 32,
            Entries::Wide(w) => w[k].0,
        }
    }

    #[inline]
    fn triangle(&self, k: usize) -> u32 {
        match self {
            Entries::Packed(p) => p[k] as u32,
            Entries::Wide(w) => w[k].1,
        }
    }
}

/// One triangle of a cell: its box, its vertices and its index.
#[derive(Clone, Copy)]
struct Member {
    lo: Vec3A,
    hi: Vec3A,
    v: [u32; 3],
    t: u32,
}

/// Whether triangles `a` and `b` share a vertex (all nine comparisons, without branches).
#[inline(always)]
fn shares_vertex(a: [u32; 3], b: [u32; 3]) -> bool {
    let has = |v: u32| (v == b[0]) | (v == b[1]) | (v == b[2]);
    has(a[0]) | has(a[1]) | has(a[2])
}

/// `f(key of the cell, triangle)` for every cell each triangle's span covers, in triangle order.
#[inline]
fn each_entry(
    spans: &[Option<([u64; 3], [u64; 3])>],
    key: impl Fn([u64; 3]) -> u64,
    mut f: impl FnMut(u64, u32),
) {
    for (t, span) in spans.iter().enumerate() {
        let Some((a, b)) = span else { continue };
        for cz in a[2]..=b[2] {
            for cy in a[1]..=b[1] {
                for cx in a[0]..=b[0] {
                    f(key([cx, cy, cz]), t as u32);
                }
            }
        }
    }
}

/// Most bits per pass of [`radix_sort_by_key`].
const RADIX_BITS: u32 = 11;

/// Stable LSD radix sort of `entries` by their `key`, whose bits above `key_bits` are zero:
/// ⌈key_bits / 11⌉ counting passes over equal shares of the bits (the dress-walk sample's 18-bit
/// keys: two passes of 9 bits, 512 buckets to scatter to instead of 2048).
fn radix_sort_by_key<T: Copy + Default>(
    entries: &mut Vec<T>,
    key: impl Fn(&T) -> u64,
    key_bits: u32,
) {
    if key_bits == 0 {
        return;
    }
    let passes = key_bits.div_ceil(RADIX_BITS);
    let bits = key_bits.div_ceil(passes);
    let mut other = vec![T::default(); entries.len()];
    let mut counts = vec![0usize; 1 << bits];
    let mask = (1u64 << bits) - 1;
    for p in 0..passes {
        let shift = p * bits;
        counts.fill(0);
        for e in entries.iter() {
            counts[((key(e) >> shift) & mask) as usize] += 1;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
        for &e in entries.iter() {
            let d = ((key(&e) >> shift) & mask) as usize;
            other[counts[d]] = e;
            counts[d] += 1;
        }
        std::mem::swap(entries, &mut other);
    }
}

/// `v.floor() as i64` (saturating; NaN gives 0) without the call to libm's `floorf` (the
/// baseline x86-64 target has no rounding instruction): the truncation, one less when it rounded
/// up. Exact: every f32 of magnitude 2²³ or more is an integer, and a smaller one's truncation
/// converts back to f32 exactly.
#[inline]
fn floor_i64(v: f32) -> i64 {
    let t = v as i64;
    if (t as f32) > v {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// The lowest cell of an entered triangle's span.
#[inline]
fn lowest_cell(span: &Option<([u64; 3], [u64; 3])>) -> [u64; 3] {
    span.map_or([0; 3], |(a, _)| a)
}

/// Relative tolerance of the coplanarity decision: a triangle whose three vertices all lie within
/// `COPLANAR_TOLERANCE` × (longest edge of the other triangle) of that triangle's plane is treated
/// as lying in it, and the pair is decided by the 2D test (positive overlap area). Otherwise the
/// exact f64 plane distances are used unmodified: snapping only some of them to zero would move
/// the computed intersection line by (snap size) / sin(angle between the planes), which for
/// nearly parallel triangles is many triangle sizes and produced false positives on flat sheets.
const COPLANAR_TOLERANCE: f64 = 1e-6;

/// Relative overlap area (fraction of the smaller triangle's area) above which two coplanar
/// triangles count as intersecting; below it they merely touch along an edge or at a vertex,
/// which for coplanar triangles (e.g. two triangles of a flat sheet) is not an intersection.
const COPLANAR_AREA_FRACTION: f64 = 1e-9;

/// Möller's interval test: do triangles `v` and `u` intersect (touching included, except for
/// near-coplanar pairs, within 1e-6 × the longest edge, which must overlap with positive area)?
pub fn triangles_intersect(v: [DVec3; 3], u: [DVec3; 3]) -> bool {
    let longest = |t: &[DVec3; 3]| {
        (0..3)
            .map(|k| t[k].distance(t[(k + 1) % 3]))
            .fold(0.0f64, f64::max)
    };
    let n1 = (v[1] - v[0]).cross(v[2] - v[0]);
    let n1_len = n1.length();
    if n1_len == 0.0 {
        return false;
    }
    let n1 = n1 / n1_len;
    let du = u.map(|p| n1.dot(p - v[0]));
    if du[0] * du[1] > 0.0 && du[0] * du[2] > 0.0 {
        return false;
    }
    let n2 = (u[1] - u[0]).cross(u[2] - u[0]);
    let n2_len = n2.length();
    if n2_len == 0.0 {
        return false;
    }
    let n2 = n2 / n2_len;
    let dv = v.map(|p| n2.dot(p - u[0]));
    if dv[0] * dv[1] > 0.0 && dv[0] * dv[2] > 0.0 {
        return false;
    }
    // Near-coplanar: one triangle lies (within tolerance) in the other's plane.
    let flat = |d: [f64; 3], eps: f64| d.iter().all(|x| x.abs() <= eps);
    if flat(du, COPLANAR_TOLERANCE * longest(&v)) {
        return coplanar_intersect(n1, v, u);
    }
    if flat(dv, COPLANAR_TOLERANCE * longest(&u)) {
        return coplanar_intersect(n2, v, u);
    }
    let d = n1.cross(n2);
    let ax = d.abs();
    let k = if ax.x >= ax.y && ax.x >= ax.z {
        0
    } else if ax.y >= ax.z {
        1
    } else {
        2
    };
    let vp = v.map(|p| p[k]);
    let up = u.map(|p| p[k]);
    let (Some(i1), Some(i2)) = (interval(vp, dv), interval(up, du)) else {
        return coplanar_intersect(n1, v, u);
    };
    !(i1.1 < i2.0 || i2.1 < i1.0)
}

/// Interval of the triangle on the intersection line (projections `p`, signed plane distances
/// `d`); None if the triangle lies in the other's plane.
fn interval(p: [f64; 3], d: [f64; 3]) -> Option<(f64, f64)> {
    // Pick the vertex alone on its side of the plane.
    let lone = if d[0] * d[1] > 0.0 {
        2
    } else if d[0] * d[2] > 0.0 {
        1
    } else if d[1] * d[2] > 0.0 || d[0] != 0.0 {
        0
    } else if d[1] != 0.0 {
        1
    } else if d[2] != 0.0 {
        2
    } else {
        return None;
    };
    let (a, b) = ((lone + 1) % 3, (lone + 2) % 3);
    let t1 = p[lone] + (p[a] - p[lone]) * d[lone] / (d[lone] - d[a]);
    let t2 = p[lone] + (p[b] - p[lone]) * d[lone] / (d[lone] - d[b]);
    Some(if t1 <= t2 { (t1, t2) } else { (t2, t1) })
}

/// Coplanar triangles: project along the plane normal `n` onto its dominant axes; they intersect
/// iff the projections overlap with positive area (more than [`COPLANAR_AREA_FRACTION`] of the
/// smaller one). Touching along an edge or at a vertex does not count, so two triangles of a flat
/// sheet that share no vertex never intersect.
fn coplanar_intersect(n: DVec3, v: [DVec3; 3], u: [DVec3; 3]) -> bool {
    let a = n.abs();
    let proj = |p: DVec3| -> DVec2 {
        if a.x >= a.y && a.x >= a.z {
            DVec2::new(p.y, p.z)
        } else if a.y >= a.z {
            DVec2::new(p.x, p.z)
        } else {
            DVec2::new(p.x, p.y)
        }
    };
    let v2 = v.map(proj);
    let mut u2 = u.map(proj);
    let (av, au) = (
        orient(v2[0], v2[1], v2[2]).abs(),
        orient(u2[0], u2[1], u2[2]),
    );
    if au < 0.0 {
        u2.swap(1, 2);
    }
    let min_area = av.min(au.abs());
    if min_area == 0.0 {
        return false;
    }
    // Clip v2 by the three half-planes of the counter-clockwise u2 (Sutherland–Hodgman).
    let mut poly: Vec<DVec2> = v2.to_vec();
    for j in 0..3 {
        let (c, d) = (u2[j], u2[(j + 1) % 3]);
        let mut out = Vec::with_capacity(poly.len() + 1);
        for i in 0..poly.len() {
            let (p, q) = (poly[i], poly[(i + 1) % poly.len()]);
            let (sp, sq) = (orient(c, d, p), orient(c, d, q));
            if sp >= 0.0 {
                out.push(p);
            }
            if (sp > 0.0 && sq < 0.0) || (sp < 0.0 && sq > 0.0) {
                out.push(p + (q - p) * (sp / (sp - sq)));
            }
        }
        poly = out;
        if poly.len() < 3 {
            return false;
        }
    }
    let twice_area: f64 = (0..poly.len())
        .map(|i| poly[i].perp_dot(poly[(i + 1) % poly.len()]))
        .sum();
    twice_area.abs() > COPLANAR_AREA_FRACTION * min_area
}

fn orient(a: DVec2, b: DVec2, c: DVec2) -> f64 {
    (b - a).perp_dot(c - a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`floor_i64`] is `floor` then the saturating cast, at integers, halves, tiny and huge
    /// values, infinities and NaN.
    #[test]
    fn floor_without_libm() {
        let mut cases = vec![
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.5,
            -1.5,
            1e-30,
            -1e-30,
            8_388_607.5,
            -8_388_607.5,
            8_388_609.0,
            -8_388_609.0,
            1e18,
            -1e18,
            1e30,
            -1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN,
        ];
        cases.extend((-2000..2000).map(|k| k as f32 * 0.37));
        for v in cases {
            assert_eq!(floor_i64(v), v.floor() as i64, "{v}");
        }
    }

    /// The grid count equals the all-pairs count with [`triangles_intersect`], for crumpled
    /// clusters of small triangles placed close together (one radix pass) and kilometres apart
    /// (cell keys of some 50 bits: several passes), and with out-of-range triangles skipped.
    #[test]
    fn grid_count_equals_all_pairs() {
        let mut unit = crate::fixtures::unit_random(0x9e37_79b9_7f4a_7c15u64);
        let mut rnd = || unit() - 0.5;
        for spread in [0.0f32, 1e4] {
            let mut x = Vec::new();
            let mut tris = Vec::new();
            for cluster in 0..6 {
                let centre = Vec3::new(rnd(), rnd(), rnd()) * spread;
                let first = x.len() as u32;
                for _ in 0..60 {
                    x.push(centre + Vec3::new(rnd(), rnd(), rnd()) * 0.1);
                }
                for k in 0..40u32 {
                    let v = [k, (k * 7 + 3) % 60, (k * 13 + 11) % 60];
                    if v[0] != v[1] && v[1] != v[2] && v[0] != v[2] {
                        tris.push(v.map(|i| first + i));
                    }
                }
                if cluster == 0 {
                    tris.push([0, 1, u32::MAX]);
                }
            }
            let valid = |t: &[u32; 3]| t.iter().all(|&i| (i as usize) < x.len());
            let p = |t: [u32; 3]| t.map(|k| x[k as usize].as_dvec3());
            let mut all_pairs = 0;
            for i in 0..tris.len() {
                for j in i + 1..tris.len() {
                    let (a, b) = (tris[i], tris[j]);
                    if !valid(&a) || !valid(&b) || a.iter().any(|v| b.contains(v)) {
                        continue;
                    }
                    all_pairs += usize::from(triangles_intersect(p(a), p(b)));
                }
            }
            assert!(all_pairs > 100, "spread {spread}: {all_pairs}");
            assert_eq!(count_intersections(&x, &tris), all_pairs, "spread {spread}");
            assert_eq!(count_intersections_serial(&x, &tris), all_pairs);
            // Many copies, shifted a little: on the pool and serially.
            let mut many_x = Vec::new();
            let mut many_tris = Vec::new();
            for copy in 0..40 {
                let first = many_x.len() as u32;
                let shift = Vec3::new(copy as f32 * 0.013, 0.0, copy as f32 * 0.007);
                many_x.extend(x.iter().map(|p| *p + shift));
                many_tris.extend(tris.iter().map(|t| t.map(|i| i.saturating_add(first))));
            }
            let (par, ser) = (
                count_intersections(&many_x, &many_tris),
                count_intersections_serial(&many_x, &many_tris),
            );
            assert_eq!(par, ser, "spread {spread}");
            assert!(par > 40 * all_pairs, "spread {spread}: {par}");
        }
    }
}
