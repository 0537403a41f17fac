//! AIMEX (Boxerman 2003 §4.4, `Integrator::Aimex`) against backward Euler, and projected air
//! damping (Boxerman §3.3, `SimSettings::damping_projection`).

mod rigid_support;

use clothbake_solver::fixtures::{breeze, corner_pins, hard_pins, sheet, sheet_vertex};
use clothbake_solver::*;
use glam::{DVec3, Vec3};

/// A deterministic generator (64-bit LCG, Knuth's constants) for the parameter sets.
struct Lcg(u64);

impl Lcg {
    fn pick<T: Copy>(&mut self, options: &[T]) -> T {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        options[((self.0 >> 33) % options.len() as u64) as usize]
    }
}

/// One parameter set of Boxerman's experiment (§4.4.3, "visual results"), in his ranges.
#[derive(Debug, Clone, Copy)]
struct Params {
    n: usize,
    /// Mesh spacing (m).
    spacing: f32,
    density: f32,
    stretch: f32,
    shear: f32,
    bend: f32,
    damping: f32,
    /// Substep (s).
    h: f32,
}

/// Frame length (s) of the comparison runs.
const DT: f32 = 0.02;

/// A sheet hanging from two adjacent corners, released horizontal (Boxerman fig. 4.1), for 1 s.
/// Returns per frame the positions, and the explicit triangles, hinges and vertices summed over
/// the substeps, and the CG iterations.
fn hang(p: Params, integrator: Integrator) -> (Vec<Vec<Vec3>>, [u64; 3], u64, u64) {
    let mut g = sheet("sheet", p.n, p.spacing * (p.n - 1) as f32, 0.0);
    g.material = Material {
        density: p.density,
        stretch: [p.stretch, p.stretch],
        shear: p.shear,
        bend: p.bend,
        stretch_damping: p.damping,
        bend_damping: p.damping,
        rest_scale: [1.0, 1.0],
    };
    g.pins = hard_pins(&[sheet_vertex(p.n, 0, 0), sheet_vertex(p.n, p.n - 1, 0)]);
    let substeps = (DT / p.h).round() as u32;
    let settings = SimSettings {
        integrator,
        substeps,
        air_damping: 0.0,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![g], settings).unwrap();
    let (mut frames, mut split, mut substeps_run, mut iterations) = (Vec::new(), [0u64; 3], 0, 0);
    for _ in 0..(1.0 / DT).round() as usize {
        let r = sim.step_frame(DT, &[], &[]).unwrap();
        assert_eq!(r.cg_failures, 0, "{p:?} {integrator:?}");
        for s in sim
            .substep_reports()
            .iter()
            .filter(|s| s.rejected.is_none())
        {
            split[0] += s.aimex.explicit_triangles as u64;
            split[1] += s.aimex.explicit_hinges as u64;
            split[2] += s.aimex.explicit_vertices as u64;
            substeps_run += 1;
        }
        iterations += r.cg_iterations as u64;
        frames.push(sim.garment_positions(0).to_vec());
    }
    (frames, split, substeps_run, iterations)
}

/// Boxerman §4.4.3: over random parameter sets the AIMEX result stays within 10 % of the mesh
/// spacing of the implicit one "for most cases"; his worst, a heavy latex-like sheet, reached
/// 1.68 spacings. Largest ∞-norm difference of the positions per set over the first 0.5 s:
/// asserted < 0.1 spacing for at least 6 of 8 sets and < 0.5 for all (measured: 7 of 8 under
/// 0.05, the worst 0.13, a very stretchy sheet — 100 N/m, 0.3 kg/m², 10 cm spacing — that the
/// split makes fully explicit: there backward Euler's numerical damping of the stretch
/// oscillation, not AIMEX, is the larger error, Boxerman eq. 4.16). Over a whole second the
/// hanging sheet folds and swings and the two first-order methods part as any two nearby runs
/// do (up to 2.9 spacings here): on two sets backward Euler at h and at h/10 differed by 1.7 and
/// 1.5 spacings at 0.9 s while AIMEX was as close to the h/10 run as backward Euler was (1.67 vs
/// 1.68, 1.53 vs 1.58); that part is printed, not asserted. The sets are drawn from his ranges
/// (density ≤ 0.3 kg/m²); only sets the split makes partly explicit count (else the check would
/// be vacuous), and some must have explicit triangles, not only hinges.
#[test]
fn aimex_stays_within_a_tenth_of_the_spacing_of_backward_euler() {
    let mut rng = Lcg(15);
    let (mut worst_half, mut worst, mut within) = (0.0f32, 0.0f32, 0);
    let mut sets = 0;
    let mut with_explicit_triangles = 0;
    while sets < 8 {
        let p = Params {
            n: rng.pick(&[10, 15]),
            spacing: rng.pick(&[0.01, 0.05, 0.1]),
            density: rng.pick(&[0.03, 0.1, 0.3]),
            stretch: rng.pick(&[10.0, 100.0, 1000.0, 3000.0]),
            shear: rng.pick(&[10.0, 100.0, 1000.0]),
            bend: rng.pick(&[1e-6, 1e-5, 1e-4]),
            damping: rng.pick(&[0.0, 1e-3]),
            h: rng.pick(&[0.0001, 0.0005, 0.001, 0.005]),
        };
        let (be, _, _, _) = hang(p, Integrator::BackwardEuler);
        let (ai, split, substeps, _) = hang(p, Integrator::Aimex);
        let nt = 2 * (p.n - 1) * (p.n - 1);
        let fraction = |k: u64, per: usize| k as f64 / (substeps as f64 * per as f64);
        if split[0] + split[1] == 0 {
            eprintln!("{p:?}: nothing explicit, skipped");
            continue;
        }
        sets += 1;
        with_explicit_triangles += usize::from(split[0] > 0);
        let per_frame: Vec<f32> = be
            .iter()
            .zip(&ai)
            .map(|(a, b)| {
                a.iter()
                    .zip(b)
                    .map(|(a, b)| (*a - *b).abs().max_element())
                    .fold(0.0f32, f32::max)
                    / p.spacing
            })
            .collect();
        let half = per_frame[..per_frame.len() / 2]
            .iter()
            .fold(0.0f32, |a, &b| a.max(b));
        let all = per_frame.iter().fold(0.0f32, |a, &b| a.max(b));
        eprintln!(
            "{p:?}: explicit triangles {:.3}, hinges {:.3}, vertices {:.3}; max |x_aimex − x_bw| \
             = {half:.4} spacing over 0.5 s, {all:.4} over 1 s",
            fraction(split[0], nt),
            fraction(split[1], 3 * nt / 2),
            fraction(split[2], p.n * p.n),
        );
        assert!(ai.last().unwrap().iter().all(|x| x.is_finite()));
        worst_half = worst_half.max(half);
        within += usize::from(half < 0.1);
        worst = worst.max(all);
    }
    eprintln!(
        "{within} of {sets} sets within 0.1 spacing over 0.5 s, worst {worst_half:.4}; worst over \
         1 s {worst:.4}; {with_explicit_triangles} sets with explicit triangles"
    );
    assert!(
        with_explicit_triangles >= 2,
        "the sets should split stretch too"
    );
    assert!(
        within >= 6,
        "only {within} of {sets} sets within 0.1 spacing over 0.5 s"
    );
    assert!(
        worst_half < 0.5,
        "AIMEX differs from backward Euler by {worst_half} spacings"
    );
}

/// With every element above the bound (cotton, fine mesh, 1/120 s) AIMEX is backward Euler to the
/// bit: the split is the only difference between the two.
#[test]
fn aimex_with_nothing_explicit_is_backward_euler() {
    let run = |integrator| {
        let mut g = sheet("sheet", 16, 0.3, 0.0);
        g.pins = hard_pins(&[sheet_vertex(16, 0, 0)]);
        let settings = SimSettings {
            integrator,
            ..SimSettings::default()
        };
        let mut sim = Simulation::new(vec![g], settings).unwrap();
        for _ in 0..6 {
            sim.step_frame(1.0 / 24.0, &[], &[]).unwrap();
            for s in sim.substep_reports() {
                assert_eq!(s.aimex.explicit_triangles + s.aimex.explicit_hinges, 0);
            }
        }
        sim.garment_positions(0).to_vec()
    };
    let (a, b) = (run(Integrator::Aimex), run(Integrator::BackwardEuler));
    assert!(a
        .iter()
        .zip(&b)
        .all(|(p, q)| p.to_array().map(f32::to_bits) == q.to_array().map(f32::to_bits)));
}

/// Pins (hard and partial), two moving spheres, self-collision, wind and projected damping under
/// AIMEX on a coarse sheet (some hinges explicit): bit-identical with one and two threads.
#[test]
fn aimex_and_projected_damping_are_bit_identical_with_one_and_two_threads() {
    let run = |threads: usize| {
        clothbake_solver::fixtures::on_threads(threads, || {
            let n = 12;
            let mut g = sheet("sheet", n, 0.8, 0.35);
            g.self_collision = Some(SelfCollisionParams {
                thickness: 0.004,
                friction: 0.3,
            });
            g.pins = corner_pins(n);
            let settings = SimSettings {
                wind: Some(breeze()),
                integrator: Integrator::Aimex,
                damping_projection: true,
                air_damping: 0.2,
                substeps: 20,
                ..Default::default()
            };
            let mut sim = Simulation::new(vec![g], settings).unwrap();
            let sphere = |x: f32| ColliderShape::Sphere {
                center: Vec3::new(x, 0.0, 0.0),
                radius: 0.25,
            };
            let (mut explicit, mut contacts) = (0, 0);
            for _ in 0..12 {
                let r = sim
                    .step_frame(
                        1.0 / 24.0,
                        &[MovingCollider {
                            start: sphere(0.0),
                            end: sphere(0.05),
                        }],
                        &[],
                    )
                    .unwrap();
                explicit += sim
                    .substep_reports()
                    .iter()
                    .map(|s| s.aimex.explicit_hinges)
                    .sum::<u32>();
                contacts += r.contacts;
            }
            (sim.garment_positions(0).to_vec(), explicit, contacts)
        })
    };
    let (a, ea, ca) = run(1);
    let (b, eb, cb) = run(2);
    assert!(ea > 0, "no hinge was explicit");
    assert!(ca > 0, "the sheet did not reach the sphere");
    assert_eq!((ea, ca), (eb, cb));
    for (i, (p, q)) in a.iter().zip(&b).enumerate() {
        assert_eq!(
            p.to_array().map(f32::to_bits),
            q.to_array().map(f32::to_bits),
            "vertex {i}: {p} vs {q}"
        );
    }
}

/// (centre-of-mass velocity, angular momentum about the centre) of garment 0, f64.
fn momenta(sim: &Simulation) -> (DVec3, DVec3) {
    let (_, vc, l) = rigid_support::rigid(sim);
    (vc, l)
}

/// A cotton sheet thrown up while spinning at 2 rad/s about its normal, for 1 s at 1/120 s, with
/// air damping `c`: (largest |v_c − (v0 + g·t)| / (g·1 s), relative angular momentum change).
fn throw(integrator: Integrator, c: f32, projected: bool) -> (f64, f64) {
    let mut sim = Simulation::new(
        vec![sheet("sheet", 21, 1.0, 1.0)],
        SimSettings {
            integrator,
            air_damping: c,
            damping_projection: projected,
            // The solve's own error in the fall must stay well below the 1e-4 the assertions
            // resolve: at the default 1e-2 it is 1.8e-4 with no damping at all.
            cg_tolerance: 3e-3,
            ..SimSettings::default()
        },
    )
    .unwrap();
    let v0 = Vec3::new(0.5, 3.0, -0.25);
    let mut state = sim.state().clone();
    for (x, v) in state.x.iter().zip(state.v.iter_mut()) {
        *v = v0 + Vec3::new(0.0, 2.0, 0.0).cross(Vec3::new(x.x, 0.0, x.z));
    }
    sim.restore_state(state, STATE_VERSION).unwrap();
    let (vc0, l0) = momenta(&sim);
    let g = sim.settings().gravity.as_dvec3();
    let mut worst: f64 = 0.0;
    for f in 1..=24 {
        sim.step_frame(1.0 / 24.0, &[], &[]).unwrap();
        let (vc, _) = momenta(&sim);
        worst = worst.max((vc - (vc0 + g * (f as f64 / 24.0))).length());
    }
    let (_, l) = momenta(&sim);
    (worst / g.length(), (l - l0).length() / l0.length())
}

/// Projected air damping does not slow free fall or rigid rotation: with c = 0.5 kg/(m²·s) (25×
/// the default; 3.3 s⁻¹ on cotton) the centre of mass falls as without damping and the angular
/// momentum changes as without damping (the integrator's own numerical loss, which this option
/// does not touch), under backward Euler and AIMEX; unprojected, the same c slows both.
#[test]
fn projected_damping_spares_free_fall_and_spin() {
    for integrator in [Integrator::BackwardEuler, Integrator::Aimex] {
        let (v_free, l_free) = throw(integrator, 0.0, false);
        let (v_proj, l_proj) = throw(integrator, 0.5, true);
        let (v_air, l_air) = throw(integrator, 0.5, false);
        eprintln!(
            "{integrator:?}: centre-of-mass velocity error / (g·1 s): c = 0 {v_free:.2e}, \
             projected {v_proj:.2e}, unprojected {v_air:.2e}; angular momentum change: \
             {l_free:.4}, {l_proj:.4}, {l_air:.4}"
        );
        assert!(
            v_proj < 1e-4,
            "projected damping slows the fall: {v_proj:.2e}"
        );
        // (Not identical: damping the deformation changes the integrator's own loss a little.)
        assert!(
            (l_proj - l_free).abs() < 0.01,
            "projected damping changes the spin: {l_proj} vs {l_free}"
        );
        assert!(
            v_air > 0.1,
            "unprojected damping should slow the fall: {v_air}"
        );
        assert!(
            l_air > l_free + 0.5,
            "unprojected damping should slow the spin: {l_air}"
        );
    }
}

/// Projected air damping still damps deformation: a weightless soft sheet released stretched 5 %
/// in its plane (stretch damping off) and spinning at 1 rad/s oscillates; after 1 s the kinetic
/// energy of its non-rigid motion is far below the undamped run's, while the spin is kept.
#[test]
fn projected_damping_damps_stretch_oscillation() {
    let run = |c: f32, projected: bool| {
        // Soft enough that AIMEX integrates the triangles explicitly (FB Euler does not damp
        // numerically, Boxerman §4.1.4): the oscillation is the model's, not the integrator's.
        let mut g = sheet("sheet", 6, 0.5, 0.0);
        g.material = Material {
            density: 0.3,
            stretch: [10.0, 10.0],
            shear: 10.0,
            stretch_damping: 0.0,
            ..Material::default()
        };
        let mut sim = Simulation::new(
            vec![g],
            SimSettings {
                gravity: Vec3::ZERO,
                air_damping: c,
                damping_projection: projected,
                integrator: Integrator::Aimex,
                substeps: 20,
                ..SimSettings::default()
            },
        )
        .unwrap();
        let mut state = sim.state().clone();
        for (x, v) in state.x.iter_mut().zip(state.v.iter_mut()) {
            *x = Vec3::new(x.x * 1.05, x.y, x.z * 1.05);
            *v = Vec3::new(0.0, 1.0, 0.0).cross(*x);
        }
        sim.restore_state(state, STATE_VERSION).unwrap();
        let (_, l0) = momenta(&sim);
        for _ in 0..24 {
            sim.step_frame(1.0 / 24.0, &[], &[]).unwrap();
        }
        // Non-rigid kinetic energy: total minus that of the best rigid fit (½Mv_c² + ½ω·L).
        let (x, v, m) = (
            sim.garment_positions(0),
            sim.garment_velocities(0),
            &sim.model().mass,
        );
        let (vc, l) = momenta(&sim);
        let total: f64 = m.iter().map(|&m| m as f64).sum();
        let c0 = x
            .iter()
            .zip(m)
            .map(|(p, &m)| p.as_dvec3() * m as f64)
            .sum::<DVec3>()
            / total;
        let mut inertia = glam::DMat3::ZERO;
        let mut kinetic = 0.0;
        for ((p, u), &m) in x.iter().zip(v).zip(m) {
            let r = p.as_dvec3() - c0;
            inertia += (glam::DMat3::IDENTITY * r.length_squared()
                - glam::DMat3::from_cols(r * r.x, r * r.y, r * r.z))
                * m as f64;
            kinetic += 0.5 * m as f64 * u.as_dvec3().length_squared();
        }
        let omega = inertia.inverse() * l;
        let rigid = 0.5 * total * vc.length_squared() + 0.5 * omega.dot(l);
        (kinetic - rigid, (l - l0).length() / l0.length())
    };
    let (free, l_free) = run(0.0, false);
    let (damped, l_damped) = run(1.0, true);
    eprintln!(
        "non-rigid kinetic energy after 1 s: undamped {free:.3e} J, projected c = 1 {damped:.3e} J; \
         angular momentum change {l_free:.4} / {l_damped:.4}"
    );
    assert!(free > 1e-6, "the sheet should oscillate: {free:.3e} J");
    assert!(
        damped < 0.25 * free,
        "{damped:.3e} J vs {free:.3e} J undamped"
    );
    assert!((l_damped - l_free).abs() < 1e-3, "{l_damped} vs {l_free}");
}

/// A soft, coarse sheet at a small step is integrated fully explicitly (every vertex solved
/// outside the MPCG, Boxerman §6.1.1: no CG iteration at all), and the directly solved rows still
/// obey the constraints: a hard-pinned corner stays on its target to the bit, the sheet drapes on
/// a sphere without entering it (collider contacts become filters of decoupled rows) and nothing
/// blows up. Backward Euler's CG iterations and both wall times are printed for comparison.
#[test]
fn fully_explicit_aimex_keeps_pins_and_contacts() {
    let n = 11;
    let run = |integrator| {
        let mut g = sheet("sheet", n, 1.0, 0.45);
        g.material = Material {
            density: 0.3,
            stretch: [100.0, 100.0],
            shear: 10.0,
            bend: 1e-6,
            stretch_damping: 0.0,
            bend_damping: 0.0,
            rest_scale: [1.0, 1.0],
        };
        let corner = sheet_vertex(n, 0, 0) as usize;
        g.pins = hard_pins(&[corner as u32]);
        let start = g.positions[corner];
        let mut sim = Simulation::new(
            vec![g],
            SimSettings {
                integrator,
                substeps: 100,
                ..SimSettings::default()
            },
        )
        .unwrap();
        let sphere = ColliderShape::Sphere {
            center: Vec3::ZERO,
            radius: 0.3,
        };
        let still = MovingCollider {
            start: sphere,
            end: sphere,
        };
        let (mut contacts, mut min_distance) = (0, f32::INFINITY);
        let (mut explicit, mut substeps, mut iterations) = (0, 0u64, 0u64);
        let clock = std::time::Instant::now();
        for _ in 0..24 {
            let r = sim.step_frame(1.0 / 24.0, &[still], &[]).unwrap();
            assert_eq!(r.cg_failures, 0);
            contacts = contacts.max(r.contacts);
            min_distance = min_distance.min(r.min_collider_distance);
            explicit += r.explicit_vertices;
            substeps += r.substeps as u64;
            iterations += r.cg_iterations as u64;
            assert_eq!(sim.garment_positions(0)[corner], start);
        }
        let seconds = clock.elapsed().as_secs_f64();
        eprintln!(
            "{integrator:?}: {substeps} substeps, {iterations} CG iterations, {seconds:.3} s"
        );
        assert!(sim
            .garment_positions(0)
            .iter()
            .all(|x| x.is_finite() && x.y > -1.0));
        let fraction = explicit as f64 / (substeps as f64 * (n * n) as f64);
        (fraction, contacts, min_distance, iterations, seconds)
    };
    let (_, _, _, be_iterations, be_seconds) = run(Integrator::BackwardEuler);
    let (fraction, contacts, min_distance, iterations, seconds) = run(Integrator::Aimex);
    eprintln!(
        "explicit vertices {fraction:.3}, most contacts {contacts}, closest to the sphere \
         {min_distance:.5} m; CG iterations {iterations} (backward Euler {be_iterations}); \
         {seconds:.3} s (backward Euler {be_seconds:.3} s)"
    );
    assert!(fraction > 0.99, "explicit fraction {fraction}");
    assert_eq!(iterations, 0);
    assert!(be_iterations > 0);
    assert!(
        contacts > 10,
        "the sheet should lie on the sphere: {contacts}"
    );
    assert!(
        min_distance > 0.0,
        "a vertex ended inside the sphere: {min_distance}"
    );
}
