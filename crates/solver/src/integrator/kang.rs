//! Kang's O(n) approximate implicit integration (Kang 2003, thesis ch. 4 "Real-time Cloth
//! Animation", §4.1–4.2, eqs. 4.1–4.9, with the damping of §4.4, eqs. 4.14–4.17; the problem is
//! set up in ch. 3, eq. 3.12): the backward-Euler system is not solved, its solution is
//! approximated by a fixed, small, odd number k of per-vertex block updates.
//!
//! # Kang's update on this solver's system
//!
//! Kang writes backward Euler for springs as W·Δv = h·f̃ (eq. 4.3) with W = M − h²J (eq. 4.1) and
//! f̃ = f + h·J·v (eq. 4.2); with damping (eq. 4.14/4.16) W gains h·C_d on its diagonal blocks and
//! J_ij becomes J'_ij. That is this solver's A·Δv = b (BW eq. 15, [`crate::integrator::assembly`]):
//! A = M − h·∂f/∂v − h²·∂f/∂x is Kang's W, its diagonal block A_ii is his W_i = M_i − h²J_ii
//! (eq. 4.7; here also the goal springs', contacts' and air damping's diagonal terms), an
//! off-diagonal block A_ij (i ≠ j) is his −h²J'_ij, and b is his h·f̃ (plus gravity, wind and the
//! goal springs). Row i of the system is then eq. 4.5,
//!
//!   Δv_i = A_ii⁻¹ (b_i − Σ_{j≠i} A_ij Δv_j),
//!
//! and Kang's approximation is eq. 4.8: start from p_i = A_ii⁻¹ b_i (eq. 4.7, the velocity change
//! that ignores the neighbours' changes) and apply the update k times,
//!
//!   Δv⁽⁰⁾_i = p_i,   Δv⁽ᵐ⁺¹⁾_i = p_i − A_ii⁻¹ Σ_{j≠i} A_ij Δv⁽ᵐ⁾_j,
//!
//! with k = 1 (eq. 4.9) by default, and k odd: §4.2 (end) observes that p over-estimates the
//! stable solution, an odd update brings it back towards it and an even one adds the unstable
//! estimate again, so small even k are unstable. The blocks are kept as 3×3 matrices (§4.1: the
//! scalar approximations of Desbrun et al. and Kang et al. 2001 damp every direction), and the
//! Jacobian is the stabilised one of eq. 4.11 (the assembly's [`crate::forces::Jacobian::Stabilized`]
//! drops the curvature term of a compressed stretch/shear condition, exactly Kang's treatment of a
//! contracted spring; a hinge keeps only its rank-one term).
//!
//! # How this differs from plain (block) Jacobi
//!
//! The recurrence is block-Jacobi's, but as an approximation, not a solver: (1) no convergence
//! test, a fixed k; (2) k counts updates after the start p, so it is k + 1 Jacobi sweeps from zero,
//! and only odd k (an even number of sweeps) is allowed; (3) every substep starts from p, never from
//! the previous substep's Δv (a warm start would make Δv depend on the history and would not vanish
//! at equilibrium, b = 0); (4) the Jacobian is the stabilised one of eq. 4.11. With k → ∞ (where
//! block Jacobi converges) it tends to backward Euler.
//!
//! # Constraints
//!
//! Hard pins and collider contacts are BW's filters (S_i, z_i, §5.3): Δv = (I − S)z + u with u in
//! the free directions, S·A·u = S·(b − A·(I − S)z); the update is applied to that filtered system
//! with A_ii⁻¹ replaced by (S_i A_ii S_i + I − S_i)⁻¹ restricted to the free directions.
//!
//! # Stability
//!
//! Kang's argument (§4.2: "the diagonal components … are usually more dominant than the
//! off-diagonal components", so p is already a good approximation) holds for soft springs. For
//! this solver's woven materials h²·k ≫ m: on a 0.8 m cotton sheet of 24 × 24 vertices hanging
//! from two corners, the update leaves a filtered residual |S(b − AΔv)| / |S b| of 0.96–1.06 at
//! every step from 1/240 to 1/1920 s, the stiff stretch modes are hardly resolved, and at
//! 24 fps × 5 substeps (1/120 s) the strain creeps past the tear limit within 0.25 s (k = 1; 0.8 s
//! with k = 3; with or without the translation step below), in substeps each below the
//! controller's strain-jump bound. At 20 substeps (1/480 s) the same sheet, also with wind, a
//! moving sphere, self-collision and a goal spring, runs without a rejection. So `kang` wants
//! about four times backward Euler's substeps on cotton (docs/scene-format.md).
//!
//! # Addition: the rigid translation is solved exactly
//!
//! Kang's truncated update does not keep free fall: with this solver's stiff woven materials
//! h²·Σ_j k_ij ≫ m_i at production steps, so p_i = A_ii⁻¹·h·m_i·g is a small fraction of h·g
//! (measured on tests/rigid_motion.rs' cotton sheet at 24 fps × 5 substeps: the centre of mass
//! lags g·t by 51 % after 1 s without this step, 8e-8 with it). So the filtered rigid translations
//! Z = S·[I I … I]ᵀ are solved exactly before and after Kang's update (a two-level method with a
//! 3-dimensional coarse space): Δv = (I − S)z + S·c₁ + δ + S·c₂ with (ZᵀAZ) c = Zᵀr on the
//! residual of the moment, and Kang's update approximating δ from the residual after c₁.
//! Internal forces are translation invariant (their Jacobian rows sum to zero), so ZᵀAZ = M_total
//! without constraints: free fall (r = h·M·g) gives c₁ = h·g and δ = 0 exactly; at a static
//! equilibrium (b = 0) every part is 0, so neither fixed point moves; and the step after the
//! update makes Σ_i (b − AΔv)_i = 0, so the momentum changes exactly as backward Euler's would.
//! (Adding the three rigid rotations to Z was tried: it tore the spinning sheet of
//! tests/rigid_motion.rs at k = 1, so it is not used.) All sums are in f64 over fixed chunks
//! ([`crate::linalg::reduce`]): the result is the same at any thread count.

use glam::{DMat3, DVec3, Mat3A, Vec3, Vec3A};
use rayon::prelude::*;

use crate::linalg::reduce::CHUNK;
use crate::linalg::{BlockMatrix, CgResult, Filter};

/// Default number of updates k (Kang 2003 eq. 4.9: k = 1).
pub const DEFAULT_ITERATIONS: u32 = 1;

/// Scratch of the approximate solve (sized on first use; no allocation afterwards).
#[derive(Debug, Default, Clone)]
pub struct KangSolve {
    /// (S_i A_ii S_i + I − S_i)⁻¹ restricted to the free directions, per vertex (Kang's W_i⁻¹).
    winv: Vec<Mat3A>,
    /// The velocity change without Kang's δ: (I − S)z plus the rigid-motion corrections.
    base: Vec<Vec3A>,
    /// Filtered residual S·(b − A·Δv).
    r: Vec<Vec3A>,
    /// Kang's iterates (current and next).
    cur: Vec<Vec3A>,
    next: Vec<Vec3A>,
    /// Per chunk: Σ S_i A_ij S_j (f64).
    parts: Vec<DMat3>,
    /// Per chunk: Σ r_i (f64).
    rhs: Vec<DVec3>,
    /// Per chunk: squared norms of the final and the initial filtered residual.
    norms: Vec<(f64, f64)>,
}

/// The rigid translations' Galerkin matrix ZᵀAZ (3×3, f64), inverted once per solve; `None`
/// when singular (no free direction).
struct Coarse(Option<DMat3>);

impl KangSolve {
    pub fn new() -> Self {
        Self::default()
    }

    /// Approximates the solution of the filtered system S·A·Δv = S·b, (I − S)·Δv = (I − S)·z: the
    /// rigid-translation step, `iterations` (odd, ≥ 1) updates of eq. 4.8, the rigid-translation
    /// step again. Writes Δv. The result reports
    /// `iterations` as CG iterations, the filtered residual |S(b − AΔv)| / |S b| (2-norms) and a
    /// non-finite Δv; `converged` is true when Δv is finite (there is no tolerance to reach).
    pub fn solve(
        &mut self,
        a: &BlockMatrix,
        b: &[Vec3],
        filter: &[Filter],
        z: &[Vec3],
        iterations: u32,
        dv: &mut [Vec3],
    ) -> CgResult {
        let n = b.len();
        for v in [&mut self.base, &mut self.r, &mut self.cur, &mut self.next] {
            v.resize(n, Vec3A::ZERO);
        }
        self.winv.resize(n, Mat3A::IDENTITY);
        let chunks = n.div_ceil(CHUNK);
        self.parts.resize(chunks, DMat3::ZERO);
        self.rhs.resize(chunks, DVec3::ZERO);
        self.norms.resize(chunks, (0.0, 0.0));

        // W_i⁻¹ on the free directions and the prescribed part (I − S)z.
        self.winv
            .par_iter_mut()
            .zip(self.base.par_iter_mut())
            .enumerate()
            .for_each(|(i, (w, base))| {
                let s = filter[i];
                let inv = match s {
                    Filter::Free => a.diag[i].inverse(),
                    Filter::Fixed => Mat3A::ZERO,
                    _ => {
                        let sm = Mat3A::from(s.matrix());
                        sm * (sm * a.diag[i] * sm + (Mat3A::IDENTITY - sm)).inverse() * sm
                    }
                };
                *w = if inv.is_finite() { inv } else { Mat3A::ZERO };
                let zi = z[i];
                *base = Vec3A::from(zi - s.apply(zi));
            });
        let coarse = self.coarse_system(a, filter);
        self.residual(a, b, filter);
        self.rigid_step(&coarse, filter);
        self.residual(a, b, filter);

        // Kang's eq. 4.8 on the residual: δ⁽⁰⁾ = p = W⁻¹r, δ⁽ᵐ⁺¹⁾ = p − W⁻¹ S Σ_{j≠i} A_ij δ⁽ᵐ⁾_j.
        let (winv, r) = (&self.winv, &self.r);
        self.cur
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, d)| *d = winv[i] * r[i]);
        for _ in 0..iterations {
            let cur = &self.cur;
            self.next.par_iter_mut().enumerate().for_each(|(i, d)| {
                let off = a.row_mul_a(i, cur) - a.diag[i] * cur[i];
                *d = winv[i] * (r[i] - filter[i].apply_a(off));
            });
            std::mem::swap(&mut self.cur, &mut self.next);
        }
        let cur = &self.cur;
        self.base
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, d)| *d += cur[i]);
        self.residual(a, b, filter);
        self.rigid_step(&coarse, filter);
        self.residual(a, b, filter);
        let base = &self.base;
        dv.par_iter_mut()
            .enumerate()
            .for_each(|(i, d)| *d = Vec3::from(base[i]));

        // Reported residual |S(b − AΔv)| / |S b| (0/0 reads as 0).
        let r = &self.r;
        self.norms.par_iter_mut().enumerate().for_each(|(c, out)| {
            let (mut rr, mut bb) = (0.0f64, 0.0f64);
            for i in c * CHUNK..n.min((c + 1) * CHUNK) {
                rr += r[i].as_dvec3().length_squared();
                bb += filter[i].apply(b[i]).as_dvec3().length_squared();
            }
            *out = (rr, bb);
        });
        let (rr, bb) = self
            .norms
            .iter()
            .fold((0.0, 0.0), |acc, p| (acc.0 + p.0, acc.1 + p.1));
        let non_finite = !dv.par_iter().all(|d| d.is_finite());
        CgResult {
            iterations,
            residual: if bb > 0.0 {
                (rr / bb).sqrt() as f32
            } else {
                0.0
            },
            converged: !non_finite,
            non_finite,
            ic_shift: None,
        }
    }

    /// r = S·(b − A·base).
    fn residual(&mut self, a: &BlockMatrix, b: &[Vec3], filter: &[Filter]) {
        let base = &self.base;
        self.r.par_iter_mut().enumerate().for_each(|(i, r)| {
            *r = filter[i].apply_a(Vec3A::from(b[i]) - a.row_mul_a(i, base));
        });
    }

    /// ZᵀAZ = Σ_ij S_i A_ij S_j for the filtered rigid translations Z_i = S_i, summed in f64
    /// over fixed chunks (thread-count independent), and inverted.
    fn coarse_system(&mut self, a: &BlockMatrix, filter: &[Filter]) -> Coarse {
        let n = filter.len();
        let dm = |m: Mat3A| {
            DMat3::from_cols(
                m.x_axis.as_dvec3(),
                m.y_axis.as_dvec3(),
                m.z_axis.as_dvec3(),
            )
        };
        // A_ij·S_j: the block itself for a free vertex (no product), else the filtered block.
        let times_s = |m: DMat3, j: usize| match filter[j] {
            Filter::Free => m,
            f => m * dm(Mat3A::from(f.matrix())),
        };
        let p = &a.pattern;
        self.parts.par_iter_mut().enumerate().for_each(|(c, out)| {
            let mut acc = DMat3::ZERO;
            let rows = c * CHUNK..n.min((c + 1) * CHUNK);
            for (i, &fi) in rows.clone().zip(&filter[rows]) {
                if fi == Filter::Fixed {
                    continue;
                }
                let mut t = times_s(dm(a.diag[i]), i);
                let (lo, hi) = (p.row_ptr[i] as usize, p.row_ptr[i + 1] as usize);
                for (m, &j) in a.off[lo..hi].iter().zip(&p.col[lo..hi]) {
                    t += times_s(dm(*m), j as usize);
                }
                let (lo, hi) = (p.lower_ptr[i] as usize, p.lower_ptr[i + 1] as usize);
                for (&slot, &j) in p.lower_slot[lo..hi].iter().zip(&p.lower_col[lo..hi]) {
                    t += times_s(dm(a.off[slot as usize]).transpose(), j as usize);
                }
                acc += match fi {
                    Filter::Free => t,
                    f => dm(Mat3A::from(f.matrix())) * t,
                };
            }
            *out = acc;
        });
        let m = self.parts.iter().fold(DMat3::ZERO, |acc, p| acc + *p);
        let scale = m.x_axis.x.abs().max(m.y_axis.y.abs()).max(m.z_axis.z.abs());
        let inv = m.inverse();
        Coarse(
            (m.determinant().abs() > 1e-12 * scale * scale * scale && inv.is_finite())
                .then_some(inv),
        )
    }

    /// base += S·c with (ZᵀAZ) c = Zᵀr = Σ r_i: the rigid translation in the residual, solved
    /// exactly.
    fn rigid_step(&mut self, coarse: &Coarse, filter: &[Filter]) {
        let Some(inv) = coarse.0 else {
            return;
        };
        let n = filter.len();
        let r = &self.r;
        self.rhs.par_iter_mut().enumerate().for_each(|(c, out)| {
            *out = (c * CHUNK..n.min((c + 1) * CHUNK))
                .map(|i| r[i].as_dvec3())
                .sum();
        });
        let c = inv * self.rhs.iter().copied().sum::<DVec3>();
        if !c.is_finite() || c == DVec3::ZERO {
            return;
        }
        let c = Vec3A::from(c.as_vec3());
        self.base
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, d)| *d += filter[i].apply_a(c));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::BlockPattern;
    use glam::Mat3;

    /// A 1-D chain of `n` vertices of mass m coupled by springs of stiffness k (isotropic blocks):
    /// A = m I + h²k·(graph Laplacian).
    fn chain(n: usize, m: f32, hk: f32) -> BlockMatrix {
        let pairs: Vec<[u32; 2]> = (0..n as u32 - 1).map(|i| [i, i + 1]).collect();
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, &pairs));
        for i in 0..n {
            let deg = if i == 0 || i == n - 1 { 1.0 } else { 2.0 };
            a.diag[i] = Mat3A::from(Mat3::from_diagonal(Vec3::splat(m + hk * deg)));
        }
        for o in a.off.iter_mut() {
            *o = Mat3A::from(Mat3::from_diagonal(Vec3::splat(-hk)));
        }
        a
    }

    #[test]
    fn uniform_acceleration_is_exact_and_equilibrium_stays() {
        // Stiff: h²k = 100 m. Without the translation step p = b/(m + 200m): 1/201 of h·g.
        let (n, m, hk) = (50, 0.01, 1.0);
        let a = chain(n, m, hk);
        let g = Vec3::new(0.0, -9.81, 0.0) * (1.0 / 120.0);
        let b: Vec<Vec3> = vec![g * m; n];
        let (filter, z) = (vec![Filter::Free; n], vec![Vec3::ZERO; n]);
        let mut dv = vec![Vec3::ZERO; n];
        let mut k = KangSolve::new();
        let r = k.solve(&a, &b, &filter, &z, 1, &mut dv);
        assert!(!r.non_finite);
        for d in &dv {
            assert!((*d - g).length() < 1e-4 * g.length(), "{d} vs {g}");
        }
        // b = 0 (equilibrium, at rest): Δv = 0 with a pinned end.
        let mut filter = filter;
        filter[0] = Filter::Fixed;
        let b0 = vec![Vec3::ZERO; n];
        k.solve(&a, &b0, &filter, &z, 3, &mut dv);
        assert!(dv.iter().all(|d| *d == Vec3::ZERO));
    }

    #[test]
    fn more_odd_updates_approach_the_exact_solution() {
        // Pinned chain pulled at its free end; Kang's iterate tends to A⁻¹b as k grows (block
        // Jacobi converges on this diagonally dominant A), and the prescribed end keeps z.
        let (n, m, hk) = (8, 1.0, 0.5);
        let a = chain(n, m, hk);
        let mut b = vec![Vec3::ZERO; n];
        b[n - 1] = Vec3::X;
        let mut filter = vec![Filter::Free; n];
        filter[0] = Filter::Fixed;
        let mut z = vec![Vec3::ZERO; n];
        z[0] = Vec3::Y * 0.25;
        let mut k = KangSolve::new();
        let mut errs = Vec::new();
        let mut exact = vec![Vec3::ZERO; n];
        k.solve(&a, &b, &filter, &z, 201, &mut exact);
        assert_eq!(exact[0], Vec3::Y * 0.25);
        for it in [1, 3, 5, 9] {
            let mut dv = vec![Vec3::ZERO; n];
            k.solve(&a, &b, &filter, &z, it, &mut dv);
            assert_eq!(dv[0], Vec3::Y * 0.25);
            let e: f32 = dv.iter().zip(&exact).map(|(a, b)| (*a - *b).length()).sum();
            errs.push(e);
        }
        assert!(errs.windows(2).all(|w| w[1] < w[0]), "{errs:?}");
        // The exact solution satisfies row n−1: (m + hk)·x_{n−1} − hk·x_{n−2} = 1.
        let row = (m + hk) * exact[n - 1].x - hk * exact[n - 2].x;
        assert!((row - 1.0).abs() < 1e-5, "{row}");
    }
}
