//! Modified preconditioned conjugate gradient for A·x = b under per-vertex velocity constraints
//! (Baraff & Witkin 1998 §5.3), in the corrected form of Boxerman (MSc thesis 2003, fig. 5.2):
//! warm start x = S·x_prev + (I−S)·z, stopping on the filtered residual relative to the filtered
//! right-hand side b̂ = S(b − A(I−S)z), and the constrained block-Jacobi preconditioner
//! P = S·C + (I−S) (eq. 5.4, C = the 3×3 diagonal blocks of A).

use super::amg::Amg;
use super::block_sparse::BlockMatrix;
use super::deflation::{Deflation, RangeSums, DEFLATE_FROM};
use super::ic_shift::IC_SHIFTS;
use super::incomplete_cholesky::{IncompleteCholesky, SPLIT_FROM};
use super::reduce::{dot, for_each_indexed, for_each_indexed_if, Partials, CHUNK};
use super::solve_times::SolveTimes;
use crate::stopwatch::Lap;
use glam::{Mat3, Mat3A, Vec3, Vec3A};
use rayon::prelude::*;

/// Per-vertex filter S_i (eq. 5.1): which directions of the velocity change are free.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Filter {
    /// ndof 3: S = I.
    #[default]
    Free,
    /// ndof 2: the unit direction `n` is prescribed, S = I − n nᵀ.
    Plane(Vec3),
    /// ndof 1: only the unit direction `p` is free, S = p pᵀ.
    Line(Vec3),
    /// ndof 0: everything prescribed, S = 0.
    Fixed,
}

impl Filter {
    /// S·v (exact for `Free` and `Fixed`).
    #[inline]
    pub fn apply(&self, v: Vec3) -> Vec3 {
        match *self {
            Filter::Free => v,
            Filter::Plane(n) => v - n * n.dot(v),
            Filter::Line(p) => p * p.dot(v),
            Filter::Fixed => Vec3::ZERO,
        }
    }

    /// S·v on a SIMD-aligned vector.
    #[inline]
    pub fn apply_a(&self, v: Vec3A) -> Vec3A {
        match *self {
            Filter::Free => v,
            Filter::Plane(n) => {
                let n = Vec3A::from(n);
                v - n * n.dot(v)
            }
            Filter::Line(p) => {
                let p = Vec3A::from(p);
                p * p.dot(v)
            }
            Filter::Fixed => Vec3A::ZERO,
        }
    }

    /// S·x + (I−S)·z: free components from `x`, prescribed ones from `z`.
    #[inline]
    pub fn combine(&self, x: Vec3, z: Vec3) -> Vec3 {
        match *self {
            Filter::Free => x,
            Filter::Fixed => z,
            _ => self.apply(x) + (z - self.apply(z)),
        }
    }

    /// The matrix S.
    pub fn matrix(&self) -> Mat3 {
        match *self {
            Filter::Free => Mat3::IDENTITY,
            Filter::Plane(n) => Mat3::IDENTITY - outer(n, n),
            Filter::Line(p) => outer(p, p),
            Filter::Fixed => Mat3::ZERO,
        }
    }

    /// Number of free degrees of freedom.
    pub fn ndof(&self) -> u8 {
        match self {
            Filter::Free => 3,
            Filter::Plane(_) => 2,
            Filter::Line(_) => 1,
            Filter::Fixed => 0,
        }
    }
}

/// a bᵀ.
#[inline]
pub fn outer(a: Vec3, b: Vec3) -> Mat3 {
    Mat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// Which SPD approximation P of the filtered matrix MPCG inverts each iteration (z = S·P⁻¹·r).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Preconditioner {
    /// P = S·C + (I − S), C the 3×3 diagonal blocks of A (Boxerman 2003 eq. 5.4): one block
    /// product per vertex.
    BlockJacobi,
    /// Block IC(0) of S·A·S + (I − S) ([`IncompleteCholesky`]): a factorization per solve and two
    /// sparse triangular sweeps per iteration (about one extra product with A, about 2× the cost of
    /// a block-Jacobi iteration), in exchange for a fifth to a quarter of the iterations on stiff
    /// cloth (BENCHMARKS.md).
    IncompleteCholesky,
    /// Smoothed-aggregation algebraic multigrid V-cycle on S·A·S + (I − S) ([`Amg`]; Tamstorf,
    /// Jones & McCormick 2015): a hierarchy refilled per solve (rebuilt only when its aggregates
    /// change; about 13 V-cycles' cost) and one V-cycle per iteration (about two IC(0)
    /// iterations' time), for iteration counts that grow slowly with the vertex count
    /// and hardly with triangle shape (BENCHMARKS.md).
    Amg,
    /// Chosen from the rest mesh when the simulation is built ([`super::choice::resolve`]):
    /// AMG where the typical triangle is thin or the mesh has 32,768 vertices or more, IC(0)
    /// otherwise. A solve
    /// given `Auto` directly
    /// (no mesh at hand) uses IC(0).
    #[default]
    Auto,
}

impl Preconditioner {
    /// The name as written in a scene file (`[scene] preconditioner`).
    pub fn name(self) -> &'static str {
        match self {
            Preconditioner::BlockJacobi => "jacobi",
            Preconditioner::IncompleteCholesky => "ic",
            Preconditioner::Amg => "amg",
            Preconditioner::Auto => "auto",
        }
    }
}

/// Stopping rule: filtered residual below `tolerance` relative to the larger of the filtered
/// right-hand side and the reference impulse (see [`Problem::mass`]); at most `max_iterations`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CgSettings {
    pub tolerance: f32,
    pub max_iterations: u32,
    /// Velocity change (m/s) whose impulse m_i·velocity_floor per vertex is the smallest reference the
    /// residual is measured against (so a system near equilibrium, b ≈ 0, is not solved to rounding
    /// noise). 0 = purely relative.
    pub velocity_floor: f32,
    pub preconditioner: Preconditioner,
    /// Index into [`IC_SHIFTS`] of the first diagonal shift IC(0) tries
    /// ([`super::ic_shift::ShiftMemory`]; 0 = the unshifted factor first).
    pub first_shift: u8,
    /// Deflate the aggregates' translations on a coarse system ([`Deflation`]) when the
    /// preconditioner is IC(0) and the system has at least [`DEFLATE_FROM`] vertices.
    pub deflation: bool,
}

/// The constrained system S·A·x = S·b, (I−S)·x = (I−S)·z.
#[derive(Debug, Clone, Copy)]
pub struct Problem<'a> {
    pub a: &'a BlockMatrix,
    pub b: &'a [Vec3],
    pub filter: &'a [Filter],
    pub z: &'a [Vec3],
    /// Per-vertex mass (kg), scaling the reference impulse of [`CgSettings::velocity_floor`].
    pub mass: &'a [f32],
    /// Vertex positions (m): the rigid-body modes of [`Preconditioner::Amg`] (others ignore them).
    pub positions: &'a [Vec3],
    /// Rest positions (m): the static structure of [`Preconditioner::Amg`]'s hierarchy.
    pub rest: &'a [Vec3],
}

/// Outcome of one solve.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CgResult {
    pub iterations: u32,
    /// sqrt(|rᵀP⁻¹r| / b̂ᵀP⁻¹b̂) at exit: the filtered residual relative to the filtered right-hand
    /// side.
    pub residual: f32,
    /// |rᵀP⁻¹r| reached the tolerance: a negative rᵀP⁻¹r (a preconditioner that is not positive
    /// definite) larger than that is not convergence.
    pub converged: bool,
    /// A non-finite value appeared (the solution is not usable).
    pub non_finite: bool,
    /// The [`IC_SHIFTS`] index the IC(0) factor held at (None for the other preconditioners).
    pub ic_shift: Option<u8>,
}

/// The preconditioner's values for the current matrix.
#[derive(Debug, Default, Clone)]
struct Factor {
    kind: Preconditioner,
    /// Whether the passes run on the thread pool (from [`SPLIT_FROM`] rows, whatever the kind).
    par: bool,
    /// Block Jacobi: (S C + (I − S))⁻¹ per vertex.
    pinv: Vec<Mat3A>,
    ic: IncompleteCholesky,
    amg: Amg,
}

impl Factor {
    /// Builds the preconditioner of `kind` for `a`; for IC(0) trying the shifts from
    /// [`IC_SHIFTS`]`[first_shift]` on and returning the index of the one that held.
    fn build(
        &mut self,
        kind: Preconditioner,
        a: &BlockMatrix,
        filter: &[Filter],
        positions: &[Vec3],
        rest: &[Vec3],
        first_shift: u8,
    ) -> Option<u8> {
        self.kind = kind;
        self.par = a.diag.len() >= SPLIT_FROM;
        match kind {
            Preconditioner::BlockJacobi => {
                self.pinv.resize(a.diag.len(), Mat3A::IDENTITY);
                for_each_indexed(&mut self.pinv, |i, pinv| {
                    let s = filter[i];
                    let inv = match s {
                        Filter::Free => a.diag[i].inverse(),
                        Filter::Fixed => Mat3A::IDENTITY,
                        _ => {
                            let sm = Mat3A::from(s.matrix());
                            (sm * a.diag[i] + (Mat3A::IDENTITY - sm)).inverse()
                        }
                    };
                    *pinv = if inv.is_finite() {
                        inv
                    } else {
                        Mat3A::IDENTITY
                    };
                });
            }
            Preconditioner::IncompleteCholesky | Preconditioner::Auto => {
                self.kind = Preconditioner::IncompleteCholesky;
                // From the shift `first_shift` on; failed shifts stop at their first breakdown,
                // the last is kept whatever happens.
                let last = IC_SHIFTS.len() - 1;
                let first = (first_shift as usize).min(last);
                let held = (first..last).find(|&k| self.ic.try_factor(a, filter, IC_SHIFTS[k]));
                return Some(held.unwrap_or_else(|| {
                    self.ic.factor(a, filter, IC_SHIFTS[last]);
                    last
                }) as u8);
            }
            Preconditioner::Amg => self.amg.build(a, filter, positions, rest),
        }
        None
    }

    /// Second half of h = P⁻¹·r: `uh` from [`Factor::delta`]'s forward result to h (the IC
    /// backward sweep; nothing for the others), calling `step(side, first, k, hᵢ)` for each row
    /// (vertex first + k; side: the caller's `x` and `p` split at `first`) as hᵢ is final.
    /// False, with only h computed (in the factor's order, [`Factor::positions`]; the caller
    /// then steps every row in a pass of its own), for block Jacobi and AMG (h = u, in the
    /// original order) and where the IC order does not split the original one
    /// ([`super::dissection::Dissection::cut`]).
    #[inline]
    fn backward_each(
        &self,
        uh: &mut [Vec3A],
        x: &mut [Vec3],
        p: &mut [Vec3A],
        step: &(impl Fn(&mut Side, usize, usize, Vec3A) + Sync),
    ) -> bool {
        let m = match self.kind {
            Preconditioner::IncompleteCholesky => match self.ic.order().cut() {
                Some(m) => m,
                None => {
                    self.ic.backward(uh);
                    return false;
                }
            },
            _ => return false,
        };
        let (x_lo, x_hi) = x.split_at_mut(m);
        let (p_lo, p_hi) = p.split_at_mut(m);
        self.ic
            .backward_each(
                uh,
                (0, (x_lo, p_lo)),
                (m, (x_hi, p_hi)),
                |(first, side), k, h| step(side, *first, k, h),
            )
            .is_some()
    }

    /// The inverse of [`Factor::perm`]: vertex i is row `pos[i]` of r, u and h, or row i (None).
    #[inline]
    fn positions(&self) -> Option<&[u32]> {
        let order = self.ic.order();
        (self.kind == Preconditioner::IncompleteCholesky && order.split()).then_some(&order.pos)
    }

    /// rᵀ·P⁻¹·r (f64, fixed order) where P⁻¹·r itself is not needed (`u` is scratch): for AMG
    /// from the V-cycle's downward half ([`Amg::quadratic`]), else [`Factor::delta`]. `r` in the
    /// factor's row order ([`Factor::perm`]), not changed.
    fn norm(&mut self, r: &mut [Vec3A], u: &mut [Vec3A], partials: &mut Partials) -> f64 {
        if self.kind == Preconditioner::Amg {
            return self.amg.quadratic(r, partials);
        }
        self.delta(r, None, None, u, partials)
    }

    /// δ = rᵀ·P⁻¹·r (f64, fixed order), leaving the forward half of P⁻¹·r in `u`: y = L⁻¹·P·r for
    /// IC, h = P⁻¹·r for the others. With `update` = (α, s), first r −= α·s (fused into the IC
    /// forward sweep), s less the coarse correction ÃZ·y of `deflation` (IC only) where it is
    /// read. r, u in the factor's row order ([`Factor::perm`]), s in the original.
    fn delta(
        &mut self,
        r: &mut [Vec3A],
        update: Option<(f32, &[Vec3A])>,
        deflation: Option<&Deflation>,
        u: &mut [Vec3A],
        partials: &mut Partials,
    ) -> f64 {
        if self.kind == Preconditioner::IncompleteCholesky {
            let parts = partials.slots(self.ic.slots());
            match deflation {
                Some(d) => self
                    .ic
                    .forward_corrected(r, update, &|k| d.az_row(k), u, parts),
                None => self.ic.forward(r, update, u, parts),
            }
            return parts.iter().sum();
        }
        debug_assert!(deflation.is_none(), "deflation is for IC(0) only");
        if let Some((alpha, s)) = update {
            for_each_indexed_if(self.par, r, |i, r| *r -= alpha * s[i]);
        }
        if self.kind == Preconditioner::Amg {
            self.amg.apply(r, u);
        } else {
            let pinv = &self.pinv;
            for_each_indexed_if(self.par, u, |i, u| *u = pinv[i] * r[i]);
        }
        dot(r, u, partials)
    }

    /// The factor's row order, if not the original: row l of r, u and h is vertex `perm[l]`.
    #[inline]
    fn perm(&self) -> Option<&[u32]> {
        let order = self.ic.order();
        (self.kind == Preconditioner::IncompleteCholesky && order.split()).then_some(&order.perm)
    }
}

/// A deflated solve whose δ = rᵀP⁻¹r rises this far above its smallest value has diverged
/// ([`Mpcg::solve`]); CG's δ is not monotone, but it rises by a few times at most.
const DIVERGED: f64 = 100.0;

/// Most rows per range of the parallel product s = A·p: a multiple of [`CHUNK`], small enough to
/// balance two threads on a ~10k-vertex mesh, large against the bandwidth (the transposed products
/// from rows before a range are gathered, the rest scattered; see [`BlockMatrix::mul_rows`]).
const PRODUCT_ROWS: usize = 4 * CHUNK;

/// A row range of MPCG's product: its index, s, its chunks' partial dot products and its part
/// of the restriction ([`RangeSums`]).
type ProductRange<'a> = (usize, ((&'a mut [Vec3A], &'a mut [f64]), &'a mut [f64]));

/// One side of [`Factor::backward_each`]'s split: x and p from the side's first vertex on.
type Side<'a> = (&'a mut [Vec3], &'a mut [Vec3A]);

/// Rows per range of the product on an n-row system: [`PRODUCT_ROWS`], or half the rows (in whole
/// [`CHUNK`]s) if that is less, so a small system still gives both cores a range. Any split gives
/// the serial product's bits ([`BlockMatrix::mul_rows`]).
fn product_rows(n: usize) -> usize {
    n.div_ceil(2)
        .next_multiple_of(CHUNK)
        .clamp(CHUNK, PRODUCT_ROWS)
}

/// Reusable MPCG workspace (no allocation once sized).
#[derive(Debug, Default, Clone)]
pub struct Mpcg {
    r: Vec<Vec3A>,
    p: Vec<Vec3A>,
    s: Vec<Vec3A>,
    h: Vec<Vec3A>,
    /// Per vertex: fixed this solve (S_i = 0): p_i = 0 and (S·A·p)_i = 0, so the product skips
    /// its row's blocks ([`BlockMatrix::mul_rows_skipping`]).
    fixed: Vec<bool>,
    factor: Factor,
    partials: Partials,
    /// The factor's row order for this solve ([`Factor::perm`]).
    order: Vec<u32>,
    /// The coarse correction, when on ([`CgSettings::deflation`]).
    deflation: Deflation,
    /// Per row range of the product: its part of Zᵀ·s' ([`Deflation::solve_restricted`]).
    restriction: RangeSums,
    /// Wall time per phase of the last solve.
    times: SolveTimes,
}

impl Mpcg {
    pub fn new() -> Self {
        Self::default()
    }

    /// Wall time per phase of the last [`Mpcg::solve`] (timing only: nothing else reads it).
    pub fn times(&self) -> SolveTimes {
        self.times
    }

    /// Solves S·A·x = S·b, (I−S)·x = (I−S)·z (eqs. 5.2). `x` holds the previous solution on entry (warm
    /// start) and the solution on exit. Stops when rᵀP⁻¹r <= tol²·b̂ᵀP⁻¹b̂ or after `max_iterations`.
    ///
    /// Each iteration makes three passes over the vertices: (1) the second half of the
    /// preconditioner (IC backward sweep) with x += α·p (the previous iteration's α) and
    /// p = S(h + βp) as each row of h is final; (2) s = S·A·p and pᵀs (one pass over the
    /// half-stored matrix); (3) r −= αs fused into the first half of the preconditioner (IC
    /// forward sweep), which also yields δ = rᵀP⁻¹r, so the convergence test needs no backward
    /// sweep and the last iteration skips it (its x += α·p is done after the loop). r, h and the
    /// IC's sweeps are in the factor's row order ([`IncompleteCholesky`]'s dissection: rows of
    /// two independent parts, then their separator), x, p and s in the original one; where the
    /// dissection does not split the original order at one row (or for block Jacobi and AMG),
    /// the updates of (1) take a pass of their own.
    pub fn solve(&mut self, problem: &Problem, x: &mut [Vec3], settings: CgSettings) -> CgResult {
        let Problem {
            a,
            b,
            filter,
            z,
            mass,
            positions,
            rest,
        } = *problem;
        let n = b.len();
        let mut lap = Lap::start();
        self.times = SolveTimes::default();
        for v in [&mut self.r, &mut self.p, &mut self.s, &mut self.h] {
            v.resize(n, Vec3A::ZERO);
        }
        self.fixed.clear();
        self.fixed
            .extend(filter.iter().map(|f| *f == Filter::Fixed));
        let ic_shift = self.factor.build(
            settings.preconditioner,
            a,
            filter,
            positions,
            rest,
            settings.first_shift,
        );
        // The passes before the first iteration on both cores where the iterations' are.
        let par = self.factor.par;
        let mut deflate = settings.deflation
            && self.factor.kind == Preconditioner::IncompleteCholesky
            && n >= DEFLATE_FROM;
        lap.lap(&mut self.times.preconditioner);
        if deflate {
            self.deflation.build(a, filter);
        }
        lap.lap(&mut self.times.coarse);
        // Warm start: x = S x_prev + (I − S) z.
        for_each_indexed_if(par, x, |i, x| *x = filter[i].combine(*x, z[i]));
        // r and the preconditioner's vectors are in the factor's row order: row l is vertex
        // `orig(l)` ([`Factor::perm`]; a copy of the order's borrow, so the factor stays free).
        let perm: Option<&[u32]> = self.factor.perm().map(|p| {
            self.order.clear();
            self.order.extend_from_slice(p);
            &self.order[..]
        });
        let orig = |l: usize| perm.map_or(l, |p| p[l] as usize);
        // b̂ = S(b − A(I − S)z) in r, δ_b = b̂ᵀP⁻¹b̂.
        for_each_indexed_if(par, &mut self.h, |i, h| {
            *h = (z[i] - filter[i].apply(z[i])).into()
        });
        // A·(I − S)z into s and, for the start's residual below, A·x into p, in one pass over
        // A's rows (each with the bits of its own product; p is free until the iterations).
        let (h_vec, xs): (&[Vec3A], &[Vec3]) = (&self.h, x);
        let both = |(i, (s, ax)): (usize, (&mut Vec3A, &mut Vec3A))| {
            let (ah, axi) = a.row_mul_pair(i, h_vec, xs);
            (*s, *ax) = (ah, axi.into());
        };
        if par {
            self.s
                .par_iter_mut()
                .zip(self.p.par_iter_mut())
                .enumerate()
                .for_each(both);
        } else {
            self.s
                .iter_mut()
                .zip(self.p.iter_mut())
                .enumerate()
                .for_each(both);
        }
        let s_vec = &self.s;
        for_each_indexed_if(par, &mut self.r, |l, r| {
            let i = orig(l);
            *r = filter[i].apply_a(Vec3A::from(b[i]) - s_vec[i])
        });
        let delta_b = self
            .factor
            .norm(&mut self.r, &mut self.h, &mut self.partials);
        // Reference impulse w_i = m_i·velocity_floor·(1,1,1)/√3, filtered, in the P⁻¹ norm.
        let floor = settings.velocity_floor / 3f32.sqrt();
        for_each_indexed_if(par, &mut self.s, |l, s| {
            let i = orig(l);
            *s = filter[i].apply_a(Vec3A::splat(mass[i] * floor))
        });
        let delta_ref = self
            .factor
            .norm(&mut self.s, &mut self.h, &mut self.partials);
        let delta0 = delta_b.max(delta_ref);
        if !delta0.is_finite() {
            lap.lap(&mut self.times.start);
            return CgResult {
                non_finite: true,
                ic_shift,
                ..Default::default()
            };
        }
        if delta_b == 0.0 {
            for_each_indexed_if(par, x, |i, x| *x = filter[i].combine(Vec3::ZERO, z[i]));
            lap.lap(&mut self.times.start);
            return CgResult {
                iterations: 0,
                residual: 0.0,
                converged: true,
                non_finite: false,
                ic_shift,
            };
        }
        // r = S(b − A x), deflated: r − ÃZ·E⁻¹·Zᵀr ([`Deflation`]); δ = rᵀP⁻¹r (forward half
        // of P⁻¹r in h).
        let ax = &self.p;
        if deflate {
            for_each_indexed_if(par, &mut self.s, |i, s| {
                *s = filter[i].apply_a(Vec3A::from(b[i] - Vec3::from(ax[i])))
            });
            self.deflation.start(par, &mut self.s, filter, x);
            let s_vec = &self.s;
            for_each_indexed_if(par, &mut self.r, |l, r| *r = s_vec[orig(l)]);
        } else {
            for_each_indexed_if(par, &mut self.r, |l, r| {
                let i = orig(l);
                *r = filter[i].apply_a(Vec3A::from(b[i] - Vec3::from(ax[i])))
            });
        }
        let mut delta = self
            .factor
            .delta(&mut self.r, None, None, &mut self.h, &mut self.partials);
        let target = (settings.tolerance as f64).powi(2) * delta0;
        lap.lap(&mut self.times.start);
        let mut it = 0;
        // The smallest δ so far: the deflated recurrence guards against divergence below.
        let mut delta_min = delta;
        // β of the next direction update; None: p = S·h (the first direction).
        let mut beta: Option<f32> = None;
        // α of the last iteration, whose x += α·p is still to be done (with the next p update).
        let mut pending: Option<f32> = None;
        while delta > target && it < settings.max_iterations {
            if !delta.is_finite() {
                break;
            }
            // (1) h = P⁻¹r (backward half); x += α·p (the last α), p = S(h + βp), as each hᵢ is
            // final where the factor's order allows ([`IncompleteCholesky::backward_each`]),
            // else in a pass of its own. Deflated ([`Deflation`]), the stored p is p' and the
            // direction p = p' − S·Z·y, y = E⁻¹·Zᵀ·Ã·p' from (2), Ã-orthogonal to the
            // aggregates' translations; the correction is applied wherever p is read.
            let defl = &self.deflation;
            let step = |(x, p): &mut Side, first: usize, k: usize, h: Vec3A| {
                let i = first + k;
                let (x, p) = (&mut x[k], &mut p[k]);
                let p_old = if deflate {
                    *p - filter[i].apply_a(defl.coarse_at(i))
                } else {
                    *p
                };
                if let Some(alpha) = pending {
                    *x += alpha * Vec3::from(p_old);
                }
                let d = match beta {
                    Some(beta) => h + beta * p_old,
                    None => h,
                };
                *p = filter[i].apply_a(d);
            };
            let fused = self
                .factor
                .backward_each(&mut self.h, x, &mut self.p, &step);
            if !fused {
                let (h, pos) = (&self.h, self.factor.positions());
                let update = |(i, (x, p)): (usize, (&mut Vec3, &mut Vec3A))| {
                    let hi = match pos {
                        Some(pos) => h[pos[i] as usize],
                        None => h[i],
                    };
                    let mut one = (std::slice::from_mut(x), std::slice::from_mut(p));
                    step(&mut one, i, 0, hi);
                };
                if par {
                    x.par_iter_mut()
                        .zip(self.p.par_iter_mut())
                        .enumerate()
                        .with_min_len(CHUNK)
                        .for_each(update);
                } else {
                    x.iter_mut()
                        .zip(self.p.iter_mut())
                        .enumerate()
                        .for_each(update);
                }
            }
            pending = None;
            // (2) s' = S·A·p', p'ᵀs' (per-chunk f64 partials, summed in chunk order) and,
            // deflated, Zᵀs' (per row range, summed in range order).
            let (p, fixed) = (&self.p, &self.fixed);
            let parts = self.partials.prepare(n);
            // Row ranges of product_rows(n), each a slice of the serial one-pass product (same bits
            // whichever thread runs it, and the same as the serial pass).
            let rows = product_rows(n);
            let width = if deflate {
                self.deflation.coarse_len()
            } else {
                1 // unused, but every range still gets its slice to zip with
            };
            let sums = self.restriction.prepare(width, n.div_ceil(rows));
            let agg = self.deflation.aggregates();
            let product = |(k, ((sk, pk), zk)): ProductRange| {
                let first = k * rows;
                let mut acc = 0.0f64;
                a.mul_rows_skipping(first, p, sk, fixed, |i, s| {
                    *s = filter[i].apply_a(*s);
                    acc += p[i].as_dvec3().dot(s.as_dvec3());
                    if deflate {
                        // Zᵀs' over the range: Z_iᵀ = S_i, and s' is filtered.
                        let (g, si) = (3 * agg[i] as usize, s.as_dvec3());
                        zk[g] += si.x;
                        zk[g + 1] += si.y;
                        zk[g + 2] += si.z;
                    }
                    if (i + 1) % CHUNK == 0 || i + 1 == n {
                        pk[(i - first) / CHUNK] = acc;
                        acc = 0.0;
                    }
                });
            };
            if par {
                self.s
                    .par_chunks_mut(rows)
                    .zip(parts.par_chunks_mut(rows / CHUNK))
                    .zip(sums.par_chunks_mut(width))
                    .enumerate()
                    .for_each(product);
            } else {
                for (k, ((sk, pk), zk)) in self
                    .s
                    .chunks_mut(rows)
                    .zip(parts.chunks_mut(rows / CHUNK))
                    .zip(sums.chunks_mut(width))
                    .enumerate()
                {
                    product((k, ((sk, pk), zk)));
                }
            }
            let mut ps: f64 = parts.iter().sum();
            if deflate {
                // y = E⁻¹·Zᵀs' makes p = p' − S·Z·y Ã-orthogonal to Z: Zᵀ·Ã·p = Zᵀs' − E·y = 0
                // (the deflated CG of Saad et al. 2000, its restriction (ÃZ)ᵀh = ZᵀÃp' read off
                // the product, as (ÃZ)ᵀp_old = 0), s = Ã·p = s' − ÃZ·y (corrected where (3)
                // reads it) and pᵀs = p'ᵀs' − (Zᵀs')ᵀ·y.
                ps -= self.deflation.solve_restricted(&self.restriction);
            }
            let alpha = (delta / ps) as f32;
            if !ps.is_finite() {
                delta = f64::NAN;
                break;
            }
            if ps <= 0.0 || !alpha.is_finite() {
                break; // breakdown at rounding level: stop with the current (finite) residual
            }
            // (3) r −= αs fused into the forward half of P⁻¹r (δ); x += αp with the next p.
            pending = Some(alpha);
            let old = delta;
            delta = self.factor.delta(
                &mut self.r,
                Some((alpha, &self.s)),
                deflate.then_some(&self.deflation),
                &mut self.h,
                &mut self.partials,
            );
            beta = Some((delta / old) as f32);
            it += 1;
            if deflate && delta > DIVERGED * delta_min {
                // Deflated CG run on after its residual reached the rounding of the coarse
                // projection (far below any bake's tolerance: a 64×64 membrane at 1e-6) can grow
                // without bound; go on from here with the plain iteration instead.
                let (p, defl) = (&self.p, &self.deflation);
                for_each_indexed_if(par, x, |i, x| {
                    let pi = p[i] - filter[i].apply_a(defl.coarse_at(i));
                    *x += alpha * Vec3::from(pi)
                });
                pending = None;
                beta = None;
                deflate = false;
                let xs: &[Vec3] = x;
                for_each_indexed_if(par, &mut self.r, |l, r| {
                    let i = orig(l);
                    *r = filter[i].apply_a(Vec3A::from(b[i] - a.row_mul(i, xs)))
                });
                delta = self
                    .factor
                    .delta(&mut self.r, None, None, &mut self.h, &mut self.partials);
            }
            delta_min = delta_min.min(delta);
        }
        if let Some(alpha) = pending {
            let (p, defl) = (&self.p, &self.deflation);
            for_each_indexed_if(par, x, |i, x| {
                let pi = if deflate {
                    p[i] - filter[i].apply_a(defl.coarse_at(i))
                } else {
                    p[i]
                };
                *x += alpha * Vec3::from(pi)
            });
        }
        lap.lap(&mut self.times.iterations);
        let finite = delta.is_finite();
        // δ = rᵀP⁻¹r < 0 beyond the target's size means P⁻¹ is not positive definite on r (a
        // V-cycle with a smoother past its bound did this: BENCHMARKS.md, "An indefinite V-cycle
        // on cloth in contact"): the loop stops there, but r is not small, so it is no
        // convergence. Within ±target it is rounding near convergence.
        CgResult {
            iterations: it,
            residual: if finite {
                (delta.abs() / delta0).sqrt() as f32
            } else {
                f32::NAN
            },
            converged: finite && delta.abs() <= target,
            non_finite: !finite,
            ic_shift,
        }
    }
}

/// Tests: MPCG on `a` from x = 0 with z = 0 (the membranes of [`super::amg`]'s tests), the
/// rest shape `positions`; the result and the solution.
#[cfg(test)]
pub(crate) fn solve_from_zero(
    a: &BlockMatrix,
    filter: &[Filter],
    positions: &[Vec3],
    b: &[Vec3],
    mass: &[f32],
    settings: CgSettings,
) -> (CgResult, Vec<Vec3>) {
    let n = b.len();
    let (z, mut x) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    let problem = Problem {
        a,
        b,
        filter,
        z: &z,
        mass,
        positions,
        rest: positions,
    };
    let res = Mpcg::new().solve(&problem, &mut x, settings);
    (res, x)
}

#[cfg(test)]
mod tests {
    use super::super::block_sparse::BlockPattern;
    use super::*;

    /// xorshift, deterministic test data.
    struct Rng(u64);
    impl Rng {
        fn f(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        }
        fn v(&mut self) -> Vec3 {
            Vec3::new(self.f(), self.f(), self.f())
        }
    }

    /// Positions along a line (the AMG's rigid modes; the random systems have no geometry).
    pub(super) fn line(n: usize) -> Vec<Vec3> {
        (0..n)
            .map(|i| Vec3::new(i as f32 * 0.01, 0.0, 0.0))
            .collect()
    }

    /// Random SPD system on a ring-plus-chords graph: A = M + Σ_edges [K −K; −K K], K = RᵀR + 0.1 I.
    fn system(n: usize, rng: &mut Rng) -> BlockMatrix {
        let pairs: Vec<[u32; 2]> = (0..n as u32)
            .flat_map(|i| [[i, (i + 1) % n as u32], [i, (i * 7 + 3) % n as u32]])
            .collect();
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, &pairs));
        for d in a.diag.iter_mut() {
            *d = Mat3A::from_diagonal(Vec3::splat(0.5 + rng.f().abs()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for &[i, j] in &pairs {
            if i == j || !seen.insert((i.min(j), i.max(j))) {
                continue;
            }
            let r = Mat3::from_cols(rng.v(), rng.v(), rng.v());
            let k = (r.transpose() * r + Mat3::from_diagonal(Vec3::splat(0.1))) * 20.0;
            a.diag[i as usize] += Mat3A::from(k);
            a.diag[j as usize] += Mat3A::from(k);
            let sij = a.pattern.slot(i.min(j), i.max(j)).unwrap();
            a.off[sij] -= glam::Mat3A::from(k);
        }
        a
    }

    #[test]
    fn solves_filtered_spd_system() {
        for preconditioner in [
            Preconditioner::BlockJacobi,
            Preconditioner::IncompleteCholesky,
            Preconditioner::Amg,
        ] {
            solves_filtered_spd_system_with(preconditioner, 300);
        }
        // In dissection order, A and B on two threads.
        solves_filtered_spd_system_with(Preconditioner::IncompleteCholesky, SPLIT_FROM + 200);
    }

    fn solves_filtered_spd_system_with(preconditioner: Preconditioner, n: usize) {
        let mut rng = Rng(0x9e3779b97f4a7c15);
        let a = system(n, &mut rng);
        let b: Vec<Vec3> = (0..n).map(|_| rng.v()).collect();
        let z: Vec<Vec3> = (0..n).map(|_| rng.v()).collect();
        let filter: Vec<Filter> = (0..n)
            .map(|i| match i % 7 {
                0 => Filter::Fixed,
                1 => Filter::Plane(rng.v().normalize()),
                2 => Filter::Line(rng.v().normalize()),
                _ => Filter::Free,
            })
            .collect();
        let mut x: Vec<Vec3> = (0..n).map(|_| rng.v()).collect();
        let res = Mpcg::new().solve(
            &Problem {
                a: &a,
                b: &b,
                filter: &filter,
                z: &z,
                mass: &vec![1.0; n],
                positions: &line(n),
                rest: &line(n),
            },
            &mut x,
            CgSettings {
                tolerance: 1e-5,
                max_iterations: 1000,
                velocity_floor: 0.0,
                preconditioner,
                first_shift: 0,
                deflation: false,
            },
        );
        assert!(res.converged, "{res:?}");
        assert!(res.iterations > 5 && res.iterations < 300, "{res:?}");
        // Constrained components equal z: exactly for ndof 0, to rounding for ndof 1–2.
        for i in 0..n {
            let s = filter[i];
            match s {
                Filter::Fixed => assert_eq!(x[i], z[i]),
                Filter::Free => {}
                _ => {
                    let d = (x[i] - s.apply(x[i])) - (z[i] - s.apply(z[i]));
                    assert!(d.length() < 1e-5, "vertex {i}: {d}");
                }
            }
        }
        // Filtered residual S(b − A x), recomputed in f64, is small relative to b̂ = S(b − A(I−S)z).
        let zc: Vec<Vec3> = (0..n).map(|i| z[i] - filter[i].apply(z[i])).collect();
        let (mut rr, mut bb) = (0.0f64, 0.0f64);
        for i in 0..n {
            let r = filter[i].apply(b[i] - a.row_mul(i, &x)).as_dvec3();
            rr += r.length_squared();
            bb += filter[i]
                .apply(b[i] - a.row_mul(i, &zc))
                .as_dvec3()
                .length_squared();
        }
        assert!(
            (rr / bb).sqrt() < 1e-3,
            "relative filtered residual {}",
            (rr / bb).sqrt()
        );
    }

    /// With the IC rows in dissection order (A and B factored and swept in parallel: a mid-size
    /// system, below the reductions' parallel threshold, and a larger one above it) the solution
    /// is bit-identical on 1 and 3 threads.
    #[test]
    fn split_systems_are_thread_count_independent() {
        let mid = SPLIT_FROM + 900;
        assert!(!super::super::reduce::parallel(mid));
        let large = super::super::reduce::PARALLEL_FROM + 2300;
        for n in [mid, large] {
            thread_count_independent(n);
        }
    }

    fn thread_count_independent(n: usize) {
        let mut rng = Rng(0x5eed);
        let a = system(n, &mut rng);
        let b: Vec<Vec3> = (0..n).map(|_| rng.v()).collect();
        let filter: Vec<Filter> = (0..n)
            .map(|i| match i % 11 {
                0 => Filter::Fixed,
                1 => Filter::Plane(Vec3::Y),
                _ => Filter::Free,
            })
            .collect();
        let z = vec![Vec3::ZERO; n];
        let mass = vec![1.0; n];
        let solve = |threads: usize| {
            crate::fixtures::on_threads(threads, || {
                let mut x = vec![Vec3::ZERO; n];
                let res = Mpcg::new().solve(
                    &Problem {
                        a: &a,
                        b: &b,
                        filter: &filter,
                        z: &z,
                        mass: &mass,
                        positions: &line(n),
                        rest: &line(n),
                    },
                    &mut x,
                    CgSettings {
                        tolerance: 1e-5,
                        max_iterations: 1000,
                        velocity_floor: 0.0,
                        preconditioner: Preconditioner::IncompleteCholesky,
                        first_shift: 0,
                        deflation: false,
                    },
                );
                (res, x)
            })
        };
        let (r1, x1) = solve(1);
        let (r3, x3) = solve(3);
        let mut ic = IncompleteCholesky::new();
        ic.factor(&a, &filter, 1.0);
        assert!(ic.order().split());
        assert!(r1.converged, "{r1:?}");
        assert_eq!(r1, r3);
        assert!(x1
            .iter()
            .zip(&x3)
            .all(|(p, q)| p.to_array() == q.to_array()));
    }

    /// A preconditioner that is not positive definite (block Jacobi of a matrix with an indefinite
    /// diagonal block) gives rᵀP⁻¹r < 0 at the start: MPCG stops there, and must say it did not
    /// converge (it reported convergence after 0 iterations before).
    #[test]
    fn negative_delta_is_not_convergence() {
        let n = 4;
        let pairs: Vec<[u32; 2]> = (0..n as u32 - 1).map(|i| [i, i + 1]).collect();
        let mut a = BlockMatrix::new(BlockPattern::from_pairs(n, &pairs));
        for d in a.diag.iter_mut() {
            *d = Mat3A::from_diagonal(Vec3::splat(4.0));
        }
        for o in a.off.iter_mut() {
            *o = Mat3A::from_diagonal(Vec3::splat(-1.0));
        }
        a.diag[0] = Mat3A::from_diagonal(Vec3::new(4.0, 4.0, -4.0));
        let mut b = vec![Vec3::ZERO; n];
        b[0] = Vec3::Z;
        let filter = vec![Filter::Free; n];
        let (res, _) = solve_from_zero(
            &a,
            &filter,
            &line(n),
            &b,
            &vec![1.0; n],
            CgSettings {
                tolerance: 1e-3,
                max_iterations: 100,
                velocity_floor: 0.1,
                preconditioner: Preconditioner::BlockJacobi,
                first_shift: 0,
                deflation: false,
            },
        );
        assert!(!res.converged, "{res:?}");
        assert!(res.residual > 1.0, "{res:?}");
    }

    #[test]
    fn warm_start_from_solution_needs_no_iterations() {
        for preconditioner in [
            Preconditioner::BlockJacobi,
            Preconditioner::IncompleteCholesky,
            Preconditioner::Amg,
        ] {
            warm_start_with(preconditioner);
        }
    }

    fn warm_start_with(preconditioner: Preconditioner) {
        let mut rng = Rng(7);
        let n = 50;
        let a = system(n, &mut rng);
        let b: Vec<Vec3> = (0..n).map(|_| rng.v()).collect();
        let z = vec![Vec3::ZERO; n];
        let filter = vec![Filter::Free; n];
        let mut x = vec![Vec3::ZERO; n];
        let mut cg = Mpcg::new();
        let first = cg.solve(
            &Problem {
                a: &a,
                b: &b,
                filter: &filter,
                z: &z,
                mass: &vec![1.0; n],
                positions: &line(n),
                rest: &line(n),
            },
            &mut x,
            CgSettings {
                tolerance: 1e-5,
                max_iterations: 500,
                velocity_floor: 0.0,
                preconditioner,
                first_shift: 0,
                deflation: false,
            },
        );
        let second = cg.solve(
            &Problem {
                a: &a,
                b: &b,
                filter: &filter,
                z: &z,
                mass: &vec![1.0; n],
                positions: &line(n),
                rest: &line(n),
            },
            &mut x,
            CgSettings {
                tolerance: 1e-5,
                max_iterations: 500,
                velocity_floor: 0.0,
                preconditioner,
                first_shift: 0,
                deflation: false,
            },
        );
        assert!(first.iterations > 3);
        assert_eq!(second.iterations, 0);
    }
}

#[cfg(test)]
mod amg_iterations {
    use super::super::amg::tests::membrane;
    use super::super::reduce::PARALLEL_FROM;
    use super::*;

    /// MPCG on a cotton-like membrane ([`membrane`]) hanging from its first row under gravity:
    /// (iterations, solution).
    fn solve(nx: usize, ny: usize, dx: f32, dy: f32, pc: Preconditioner) -> (CgResult, Vec<Vec3>) {
        let (a, filter, positions) = membrane(nx, ny, dx, dy);
        let n = nx * ny;
        let mass: Vec<f32> = a.diag.iter().map(|_| 0.15 * dx * dy).collect();
        let b: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(0.3, -1.0, 0.5 + (i % 7) as f32 * 0.1) * mass[i])
            .collect();
        let (res, x) = super::solve_from_zero(
            &a,
            &filter,
            &positions,
            &b,
            &mass,
            CgSettings {
                tolerance: 3e-4,
                max_iterations: 2000,
                velocity_floor: 0.0,
                preconditioner: pc,
                first_shift: 0,
                deflation: false,
            },
        );
        assert!(res.converged, "{res:?}");
        (res, x)
    }

    /// The membrane with its vertices numbered scattered (as an exporter may number them): the
    /// IC(0) order is then the level-structure dissection (no index cut), and MPCG updates its
    /// search direction in a pass of its own. The solve still converges in not many more
    /// iterations than in the grid's own order (index cut; measured 52 and 48, each part in
    /// the twisted order of [`super::super::dissection`]), its residual recomputed in f64 is
    /// small, and the bits are the same on 1 and 2 threads.
    #[test]
    fn scattered_numbering_solves_in_the_level_structure_order() {
        use super::super::block_sparse::BlockPattern;
        let (nx, ny, d) = (40, 40, 1.0 / 39.0);
        let n = nx * ny;
        let (a0, filter0, positions0) = membrane(nx, ny, d, d);
        // Old vertex i is new vertex q(i) (7919 is prime, so this is a bijection).
        let q = |i: usize| i * 7919 % n;
        let p0 = &a0.pattern;
        let (mut pairs, mut weak) = (Vec::new(), Vec::new());
        for i in 0..n {
            for s in p0.row_ptr[i] as usize..p0.row_ptr[i + 1] as usize {
                let pair = [q(i) as u32, q(p0.col[s] as usize) as u32];
                if p0.weak[s] {
                    weak.push(pair);
                } else {
                    pairs.push(pair);
                }
            }
        }
        let mut a = BlockMatrix::new(BlockPattern::with_weak_pairs(n, &pairs, &weak));
        let (mut filter, mut positions) = (vec![Filter::Free; n], vec![Vec3::ZERO; n]);
        for i in 0..n {
            a.diag[q(i)] = a0.diag[i];
            filter[q(i)] = filter0[i];
            positions[q(i)] = positions0[i];
            for s in p0.row_ptr[i] as usize..p0.row_ptr[i + 1] as usize {
                let (ni, nj) = (q(i), q(p0.col[s] as usize));
                let t = a
                    .pattern
                    .slot(ni.min(nj) as u32, ni.max(nj) as u32)
                    .unwrap();
                a.off[t] = if ni < nj {
                    a0.off[s]
                } else {
                    a0.off[s].transpose()
                };
            }
        }
        let mut ic = IncompleteCholesky::new();
        ic.factor(&a, &filter, 1.0);
        assert!(ic.order().split() && ic.order().cut().is_none());
        let mass = vec![0.15 * d * d; n];
        let b: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(0.3, -1.0, 0.5 + (i % 7) as f32 * 0.1) * mass[i])
            .collect();
        let z = vec![Vec3::ZERO; n];
        let run = |a: &BlockMatrix, filter: &[Filter], positions: &[Vec3], threads: usize| {
            crate::fixtures::on_threads(threads, || {
                let mut x = vec![Vec3::ZERO; n];
                let res = Mpcg::new().solve(
                    &Problem {
                        a,
                        b: &b,
                        filter,
                        z: &z,
                        mass: &mass,
                        positions,
                        rest: positions,
                    },
                    &mut x,
                    CgSettings {
                        tolerance: 1e-5,
                        max_iterations: 2000,
                        velocity_floor: 0.0,
                        preconditioner: Preconditioner::IncompleteCholesky,
                        first_shift: 0,
                        deflation: false,
                    },
                );
                assert!(res.converged, "{res:?}");
                (res, x)
            })
        };
        let (r1, x1) = run(&a, &filter, &positions, 1);
        let (r2, x2) = run(&a, &filter, &positions, 2);
        assert_eq!(r1, r2);
        assert!(x1
            .iter()
            .zip(&x2)
            .all(|(p, q)| p.to_array() == q.to_array()));
        let (own, _) = run(&a0, &filter0, &positions0, 2);
        assert!(
            r1.iterations <= own.iterations * 4 / 3,
            "{} vs {}",
            r1.iterations,
            own.iterations
        );
        let (mut rr, mut bb) = (0.0f64, 0.0f64);
        for i in 0..n {
            rr += filter[i]
                .apply(b[i] - a.row_mul(i, &x1))
                .as_dvec3()
                .length_squared();
            bb += filter[i].apply(b[i]).as_dvec3().length_squared();
        }
        assert!((rr / bb).sqrt() < 1e-3, "{}", (rr / bb).sqrt());
    }

    /// The AMG V-cycle keeps the iteration count low on a well-shaped sheet and on a strip of
    /// 20:1 triangles of about the same vertex count, where incomplete Cholesky needs several
    /// times more (measured: AMG 9 and 25, IC 66 and 90 iterations).
    #[test]
    fn amg_iterations_on_well_shaped_and_thin_triangles() {
        let well = |pc| solve(64, 64, 1.0 / 63.0, 1.0 / 63.0, pc).0.iterations;
        let thin = |pc| {
            solve(20, 200, 1.0 / 19.0, 1.0 / 19.0 / 20.0, pc)
                .0
                .iterations
        };
        let (amg_well, amg_thin) = (well(Preconditioner::Amg), thin(Preconditioner::Amg));
        let (ic_well, ic_thin) = (
            well(Preconditioner::IncompleteCholesky),
            thin(Preconditioner::IncompleteCholesky),
        );
        assert!(amg_well <= 12, "AMG, well-shaped: {amg_well}");
        assert!(amg_thin <= 30, "AMG, 20:1 triangles: {amg_thin}");
        assert!(ic_well >= 4 * amg_well, "IC {ic_well} vs AMG {amg_well}");
        assert!(ic_thin >= 2 * amg_thin, "IC {ic_thin} vs AMG {amg_thin}");
    }

    /// Above the parallel threshold the AMG-preconditioned solve is bit-identical on 1 and 2
    /// threads (every hierarchy product row by row in a fixed order, reductions in fixed chunks).
    #[test]
    fn amg_is_thread_count_independent() {
        let nx = 100;
        assert!(nx * nx >= PARALLEL_FROM);
        let run = |threads: usize| {
            crate::fixtures::on_threads(threads, || solve(nx, nx, 0.01, 0.01, Preconditioner::Amg))
        };
        let (r1, x1) = run(1);
        let (r2, x2) = run(2);
        assert_eq!(r1, r2);
        assert!(x1
            .iter()
            .zip(&x2)
            .all(|(p, q)| p.to_array() == q.to_array()));
    }

    /// Iteration counts and timings vs size and triangle shape (`--ignored --nocapture`).
    #[test]
    #[ignore]
    fn explore() {
        for pc in [Preconditioner::IncompleteCholesky, Preconditioner::Amg] {
            for (nx, ny, dx, dy) in [
                (32, 32, 1.0 / 31.0, 1.0 / 31.0),
                (64, 64, 1.0 / 63.0, 1.0 / 63.0),
                (128, 128, 1.0 / 127.0, 1.0 / 127.0),
                (256, 256, 1.0 / 255.0, 1.0 / 255.0),
                (20, 200, 1.0 / 19.0, 1.0 / 19.0 / 20.0),
                (20, 800, 1.0 / 19.0, 1.0 / 19.0 / 20.0),
                (64, 64, 1.0 / 63.0, 1.0 / 63.0 / 5.0),
            ] {
                let t = std::time::Instant::now();
                let (res, _) = solve(nx, ny, dx, dy, pc);
                println!(
                    "{pc:?} {nx}x{ny} aspect {:.1}: {} it, {:?}",
                    dx / dy,
                    res.iterations,
                    t.elapsed()
                );
            }
        }
    }
}
