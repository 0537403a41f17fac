//! Kang 2003 §6's error measures between a reference bake and an experimental one. With Δx_i the
//! motion of vertex i from the previous check point to this one:
//!
//!   E = (1/n) Σ_i |Δx_i^ref − Δx_i^exp|² / |Δx_i^ref|²        (eqs. 6.1–6.2)
//!   S = (1/n) Σ_i (Δx̂_i^ref · Δx̂_i^exp)²                    (eq. 6.3)
//!
//! over the n = 439 free vertices (the two pinned corners do not move: Δx^ref = 0).

use crate::setup::{Bake, N};

/// Per check point (E, S) of `exp` against `reference` (over the check points both have).
pub fn errors(reference: &Bake, exp: &Bake) -> Vec<(f64, f64)> {
    let checks = reference.frames.len().min(exp.frames.len()) - 1;
    (1..=checks)
        .map(|k| {
            let (mut e, mut s, mut n) = (0.0f64, 0.0f64, 0usize);
            for i in 0..N * N {
                let dr = (reference.frames[k][i] - reference.frames[k - 1][i]).as_dvec3();
                let dx = (exp.frames[k][i] - exp.frames[k - 1][i]).as_dvec3();
                if dr.length_squared() == 0.0 {
                    continue; // pinned
                }
                e += (dr - dx).length_squared() / dr.length_squared();
                let c = dr.normalize_or_zero().dot(dx.normalize_or_zero());
                s += c * c;
                n += 1;
            }
            (e / n as f64, s / n as f64)
        })
        .collect()
}

/// Σ|Δx_ref − Δx_exp|² / Σ|Δx_ref|² over all vertices and check points: a relative error that
/// vertices which barely move in the reference cannot dominate (not Kang's measure).
pub fn aggregate(reference: &Bake, exp: &Bake) -> f64 {
    let checks = reference.frames.len().min(exp.frames.len()) - 1;
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for k in 1..=checks {
        for i in 0..N * N {
            let dr = (reference.frames[k][i] - reference.frames[k - 1][i]).as_dvec3();
            let dx = (exp.frames[k][i] - exp.frames[k - 1][i]).as_dvec3();
            num += (dr - dx).length_squared();
            den += dr.length_squared();
        }
    }
    num / den
}

/// The figures a results row shows.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    /// Mean E and S over all check points.
    pub e: f64,
    pub s: f64,
    /// Mean E and S over the first 12 (Kang's Table 6.4 has 12 at 1/30 s).
    pub e12: f64,
    pub s12: f64,
    /// At the first check point.
    pub first_e: f64,
    pub first_s: f64,
    pub aggregate: f64,
}

fn mean(v: &[(f64, f64)]) -> (f64, f64) {
    let n = v.len() as f64;
    (
        v.iter().map(|p| p.0).sum::<f64>() / n,
        v.iter().map(|p| p.1).sum::<f64>() / n,
    )
}

pub fn summarize(reference: &Bake, exp: &Bake) -> Summary {
    let es = errors(reference, exp);
    let (e, s) = mean(&es);
    let (e12, s12) = mean(&es[..es.len().min(12)]);
    Summary {
        e,
        s,
        e12,
        s12,
        first_e: es[0].0,
        first_s: es[0].1,
        aggregate: aggregate(reference, exp),
    }
}

/// How concentrated E is at check point `k`: (share of the sum of E_i carried by the 5 % of
/// vertices with the largest E_i, the median E_i, |Δx_ref| of the vertex with the largest E_i (m),
/// the mean |Δx_ref| (m)).
pub fn concentration(reference: &Bake, exp: &Bake, k: usize) -> (f64, f64, f64, f64) {
    let mut ei: Vec<(f64, f64)> = (0..N * N)
        .filter_map(|i| {
            let dr = (reference.frames[k][i] - reference.frames[k - 1][i]).as_dvec3();
            let dx = (exp.frames[k][i] - exp.frames[k - 1][i]).as_dvec3();
            (dr.length_squared() > 0.0).then(|| {
                (
                    (dr - dx).length_squared() / dr.length_squared(),
                    dr.length(),
                )
            })
        })
        .collect();
    ei.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total: f64 = ei.iter().map(|p| p.0).sum();
    let top: f64 = ei.iter().take(ei.len() / 20).map(|p| p.0).sum();
    let mean_dr = ei.iter().map(|p| p.1).sum::<f64>() / ei.len() as f64;
    (top / total, ei[ei.len() / 2].0, ei[0].1, mean_dr)
}
