//! Stability sweep over Boxerman's (2003) parameter ranges: 10²–40² vertices, area density
//! 0.03–1 kg/m², stretch stiffness 10–3000 N/m, substeps 1/1000–1/20 s, with no collider, a sphere
//! or a capsule under the sheet, pinned at two corners or free; the sheet starts stretched or
//! compressed by up to ±20 % relative to its rest shape. 240 cases, each with its own
//! deterministic xorshift stream.
//!
//! Checked for every case and every step: the step succeeds, all positions and velocities are
//! finite, the **strain bound** from energy and the **energy bound**:
//!
//! `E_kin + E_stretch+shear ≤ 1.05 · (E_elastic,0 + M g (y_com,0 − y_com)) + 1e-7 J`
//!
//! Backward Euler with condition damping (BW §4.5) does not create energy and pins are fixed, so
//! kinetic plus elastic energy can only come from the initial elastic energy and the gravitational
//! energy released by the fall (5 % allow for the linearised Newton step). A triangle with rest area
//! `a` and warp (or weft) strain `ε` stores at least `½ k a ε²`, hence
//! `ε ≤ sqrt(2 E_budget / (min(k_u, k_v) · a_min))` — the strain bound, which catches a blow-up
//! wherever it happens. The same bounds hold with a static sphere or capsule under the sheet: contact
//! (the position correction `y` towards the contact targets and the projection out of the colliders)
//! must not add energy either.

use clothbake_solver::fixtures::{sheet, sheet_vertex};
use clothbake_solver::forces::strain;
use clothbake_solver::*;
use glam::Vec3;

const CASES: u64 = 240;
/// Allowance on the energy budget for the linearised Newton step of backward Euler.
const NEWTON_ALLOWANCE: f64 = 1.05;
const G: f32 = 9.81;

/// xorshift64*.
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }
    fn log_uniform(&mut self, lo: f32, hi: f32) -> f32 {
        (self.uniform(lo.ln(), hi.ln())).exp()
    }
}

struct Case {
    n: usize,
    material: Material,
    h: f32,
    collider: Option<ColliderShape>,
    pinned: bool,
    /// Rest size / initial size.
    rest_scale: f32,
}

fn case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    // Small meshes dominate the sweep's run time budget: n³-skewed towards 10.
    let u = rng.uniform(0.0, 1.0);
    let n = 10 + (31.0 * u * u * u) as usize;
    let k = rng.log_uniform(10.0, 3000.0);
    let material = Material {
        density: rng.log_uniform(0.03, 1.0),
        stretch: [k, k * rng.uniform(0.5, 1.0)],
        shear: k * rng.uniform(0.01, 0.1),
        bend: rng.log_uniform(1e-6, 1e-3),
        stretch_damping: rng.uniform(0.0, 0.01),
        bend_damping: rng.uniform(0.0, 0.1),
        rest_scale: [1.0, 1.0],
    };
    let h = rng.log_uniform(1.0 / 1000.0, 1.0 / 20.0);
    let collider = match rng.next_u64() % 3 {
        0 => None,
        1 => Some(ColliderShape::Sphere {
            center: Vec3::new(rng.uniform(-0.1, 0.1), -0.35, rng.uniform(-0.1, 0.1)),
            radius: rng.uniform(0.15, 0.3),
        }),
        _ => Some(ColliderShape::Capsule {
            a: Vec3::new(-0.4, -0.3, rng.uniform(-0.2, 0.2)),
            b: Vec3::new(0.4, -0.3, rng.uniform(-0.2, 0.2)),
            radius_a: rng.uniform(0.05, 0.15),
            radius_b: rng.uniform(0.05, 0.15),
        }),
    };
    Case {
        n,
        material,
        h,
        collider,
        pinned: rng.next_u64() & 1 == 0,
        rest_scale: rng.uniform(0.8, 1.2),
    }
}

/// Kinetic and stretch+shear energy (J), centre-of-mass height (m), max strain.
fn measure(sim: &Simulation) -> (f64, f64, f64, f32) {
    let model = sim.model();
    let (x, v) = (sim.garment_positions(0), sim.garment_velocities(0));
    let mut kinetic = 0.0f64;
    let (mut mass, mut my) = (0.0f64, 0.0f64);
    for ((v, x), m) in v.iter().zip(x).zip(&model.mass) {
        kinetic += 0.5 * *m as f64 * v.length_squared() as f64;
        mass += *m as f64;
        my += *m as f64 * x.y as f64;
    }
    let mat = &model.materials[0];
    let mut elastic = 0.0f64;
    let mut max_strain = 0.0f32;
    for (t, rest) in model.triangles.iter().zip(&model.triangle_rest) {
        let xs = t.map(|i| x[i as usize]);
        let (wu, wv) = rest.w(&xs);
        let (cu, cv, cs) = (wu.length() - 1.0, wv.length() - 1.0, wu.dot(wv));
        elastic += 0.5
            * rest.area as f64
            * (mat.stretch[0] * cu * cu + mat.stretch[1] * cv * cv + mat.shear * cs * cs) as f64;
        max_strain = max_strain.max(strain(&xs, rest, mat));
    }
    (kinetic, elastic, my / mass, max_strain)
}

/// Runs one case, asserting `E ≤ energy_factor·budget + 1e-7 J` and the strain bound from
/// `energy_factor·budget` after every step.
fn run(seed: u64, energy_factor: f64) -> Result<(u32, f32), String> {
    let c = case(seed);
    let size = 1.0f32;
    let mut g = sheet("sheet", c.n, size, 0.0);
    g.material = c.material;
    // Rest shape from UVs: a rest size of `rest_scale · size` makes the initial sheet stretched
    // (rest_scale < 1) or compressed (> 1).
    g.rest = RestShape::Uv {
        metres_per_uv: size * c.rest_scale,
    };
    if c.pinned {
        g.pins = [(0, 0), (c.n - 1, 0)]
            .map(|(i, j)| Pin {
                vertex: sheet_vertex(c.n, i, j),
                weight: 1.0,
            })
            .to_vec();
    }
    let settings = SimSettings {
        substeps: 1,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![g], settings).expect("valid case");
    let colliders: Vec<MovingCollider> = c
        .collider
        .iter()
        .map(|s| MovingCollider { start: *s, end: *s })
        .collect();
    let (k0, e0, y0, s0) = measure(&sim);
    assert_eq!(k0, 0.0);
    let model = sim.model();
    let mass: f64 = model.mass.iter().map(|m| *m as f64).sum();
    let a_min = model
        .triangle_rest
        .iter()
        .map(|r| r.area)
        .fold(f32::MAX, f32::min) as f64;
    let k_min = c.material.stretch[0].min(c.material.stretch[1]) as f64;
    let steps = ((0.3 / c.h).ceil() as u32).min(30);
    let mut worst_strain = s0;
    for step in 0..steps {
        let report = sim.step_frame(c.h, &colliders, &[None]);
        let ctx = || {
            format!(
                "seed {seed}: n {} ρ {} k {:?} h 1/{:.0} collider {:?} pinned {} rest scale {} step {step}",
                c.n,
                c.material.density,
                c.material.stretch,
                1.0 / c.h,
                c.collider,
                c.pinned,
                c.rest_scale
            )
        };
        if report.is_err() {
            return Err(format!("{}: {:?}", ctx(), report.err()));
        }
        let finite = sim
            .garment_positions(0)
            .iter()
            .chain(sim.garment_velocities(0))
            .all(|p| p.is_finite());
        if !finite {
            return Err(format!("{}: non-finite state", ctx()));
        }
        let (k, e, y, s) = measure(&sim);
        let budget = e0 + mass * G as f64 * (y0 - y);
        if k + e > energy_factor * budget + 1e-7 {
            return Err(format!(
                "{}: energy {} (kinetic {k}, elastic {e}) exceeds budget {budget}",
                ctx(),
                k + e
            ));
        }
        let strain_bound = (2.0 * energy_factor * budget.max(0.0) / (k_min * a_min)).sqrt() + 1e-3;
        if s as f64 > strain_bound {
            return Err(format!(
                "{}: strain {s} above energy bound {strain_bound}",
                ctx()
            ));
        }
        worst_strain = worst_strain.max(s);
    }
    Ok((steps, worst_strain))
}

/// Runs every case of the sweep that matches `with_collider`, collecting failures.
fn sweep(with_collider: bool, energy_factor: f64) {
    let mut total_steps = 0;
    let (mut worst, mut count) = (0.0f32, 0);
    let mut failures = Vec::new();
    for seed in (0..CASES).filter(|s| case(*s).collider.is_some() == with_collider) {
        count += 1;
        match run(seed, energy_factor) {
            Ok((steps, s)) => {
                total_steps += steps;
                worst = worst.max(s);
            }
            Err(e) => failures.push(e),
        }
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    println!(
        "{count} cases (colliders: {with_collider}), {total_steps} steps, largest strain {worst:.3}"
    );
    assert!(count >= 60, "only {count} cases");
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed",
        failures.len()
    );
}

#[test]
fn without_colliders_states_stay_finite_and_energy_bounded() {
    sweep(false, NEWTON_ALLOWANCE);
}

/// With a static sphere or capsule under the sheet (172 cases), the same bound as without
/// colliders. This once failed in 7 cases (coarse 10²–12² sheets, h ≥ 1/170 s, up to 1.7× the
/// budget, energy added by the contact position corrections) and ran ignored, with a 2× allowance in
/// a weaker test; the contact handling as it is now passes it.
#[test]
fn with_colliders_states_stay_finite_and_energy_bounded() {
    sweep(true, NEWTON_ALLOWANCE);
}
