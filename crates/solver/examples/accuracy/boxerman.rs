//! Boxerman's check (2003, §4.4.3, "Experiment: Results of an AIMEX Scheme"): over random parameter
//! sets, bake the cloth with two integrators and take the largest ∞-norm difference of the position
//! vectors over one second of simulated time, in units of the mesh spacing; Boxerman found it under
//! 10 % of the spacing for most sets (AIMEX against semi-implicit backward Euler), approaching the
//! spacing only for very stretchy, dense "latex" sets. Here: the sheet of Kang's experiment
//! (21 × 21, 5 cm spacing, two corners pinned), parameters drawn with a fixed seed from Boxerman's
//! lists (stretch/shear 10–3000 N/m, density 0.03–1 kg/m², steps up to 0.02 s).

use clothbake_solver::{Material, Simulation};

use crate::setup::{garment, settings, Setup, FPS, SPACING};

/// xorshift64*: a fixed-seed generator, so every run draws the same parameter sets.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// One of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// One random parameter set.
#[derive(Clone, Copy, Debug)]
pub struct ParamSet {
    pub stretch: f32,
    pub shear: f32,
    pub density: f32,
    /// Condition-damping time (s) of stretch/shear.
    pub damping: f32,
    /// Substeps per 1/30 s frame.
    pub substeps: u32,
}

impl ParamSet {
    /// Draws a set from Boxerman's lists (§4.4.3; his step sizes 0.005–0.02 s as substeps of a
    /// 1/30 s frame: 2, 3, 4, 7 → 1/60 … 1/210 s).
    pub fn draw(rng: &mut Rng) -> Self {
        let stiffness = [10.0, 100.0, 1000.0, 3000.0];
        ParamSet {
            stretch: rng.pick(&stiffness),
            shear: rng.pick(&stiffness),
            density: rng.pick(&[0.03, 0.1, 0.3, 1.0]),
            damping: rng.pick(&[0.0, 1e-3, 1e-2]),
            substeps: rng.pick(&[2, 3, 4, 7]),
        }
    }

    /// Applies the set to a setup's material and step.
    pub fn apply(&self, base: &Setup) -> Setup {
        let material = Material {
            density: self.density,
            stretch: [self.stretch, self.stretch],
            shear: self.shear.min(self.stretch),
            stretch_damping: self.damping,
            ..base.material
        };
        Setup {
            material,
            substeps: self.substeps,
            ..*base
        }
    }
}

/// The largest ∞-norm difference of the positions of `a` and `b` over `frames` frames, in mesh
/// spacings (both baked with `set`), or `None` if either fails.
pub fn difference(a: &Setup, b: &Setup, set: &ParamSet, frames: usize) -> Option<f64> {
    let (a, b) = (set.apply(a), set.apply(b));
    let mut sa = Simulation::new(vec![garment(&a, true)], settings(&a)).ok()?;
    let mut sb = Simulation::new(vec![garment(&b, true)], settings(&b)).ok()?;
    let mut worst: f64 = 0.0;
    for _ in 0..frames {
        sa.step_frame(1.0 / FPS, &[], &[]).ok()?;
        sb.step_frame(1.0 / FPS, &[], &[]).ok()?;
        let d = sa
            .garment_positions(0)
            .iter()
            .zip(sb.garment_positions(0))
            .map(|(p, q)| (*p - *q).abs().max_element() as f64)
            .fold(0.0, f64::max);
        worst = worst.max(d);
    }
    Some(worst / SPACING as f64)
}
