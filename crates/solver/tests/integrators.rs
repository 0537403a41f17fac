//! Kang's approximate implicit integrator and Verlet with relaxation (issue 15, item 2) against
//! backward Euler's statics, on moving colliders, and their settings.
//! (Free fall: tests/rigid_motion.rs; thread counts: tests/determinism.rs; resume:
//! tests/state_workspace.rs.)

use clothbake_solver::fixtures::{sheet, sheet_vertex};
use clothbake_solver::integrator::verlet::max_edge_strain;
use clothbake_solver::*;
use glam::Vec3;

const N: usize = 15;
const SIZE: f32 = 0.6;

/// A 0.6 m cotton sheet, 15 × 15, vertical (x–y plane, top edge at y = 1 m), hard-pinned at its
/// two top corners, at rest in its rest shape, simulated with the default settings but these.
fn hanging(integrator: Integrator, substeps: u32, verlet_iterations: u32) -> Simulation {
    let mut g = sheet("sheet", N, SIZE, 1.0);
    for p in g.positions.iter_mut() {
        *p = Vec3::new(p.x, 1.0 - (p.z + 0.5 * SIZE), 0.0);
    }
    g.pins = fixtures::hard_pins(&[sheet_vertex(N, 0, 0), sheet_vertex(N, N - 1, 0)]);
    let settings = SimSettings {
        integrator,
        substeps,
        verlet_iterations,
        ..SimSettings::default()
    };
    Simulation::new(vec![g], settings).unwrap()
}

/// The largest vertex speed of the garment (m/s).
fn largest_speed(sim: &Simulation) -> f32 {
    sim.garment_velocities(0)
        .iter()
        .map(|v| v.length())
        .fold(0.0, f32::max)
}

/// [`hanging`] from rest for `seconds` at 24 fps. Returns the final positions and the final
/// frame's largest speed (m/s).
fn hang(
    integrator: Integrator,
    substeps: u32,
    seconds: f32,
    verlet_iterations: u32,
) -> (Vec<Vec3>, f32) {
    let mut sim = hanging(integrator, substeps, verlet_iterations);
    for _ in 0..(seconds * 24.0) as usize {
        sim.step_frame(1.0 / 24.0, &[], &[]).unwrap();
    }
    (sim.garment_positions(0).to_vec(), largest_speed(&sim))
}

fn max_distance(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (*p - *q).length())
        .fold(0.0, f32::max)
}

#[test]
fn kang_settles_to_the_backward_euler_static_solution() {
    // Both integrators have the same fixed points (Δv = 0 where b = 0: the forces balance at
    // rest); Kang's method gets there with less numerical damping, so it is given longer.
    let (bw, bw_speed) = hang(Integrator::BackwardEuler, 20, 6.0, 1);
    let (kang, kang_speed) = hang(Integrator::Kang, 20, 6.0, 1);
    let d = max_distance(&bw, &kang);
    let sag = bw.iter().map(|p| 1.0 - SIZE - p.y).fold(0.0, f32::max);
    eprintln!(
        "kang vs bw after 6 s: largest distance {d:.2e} m (sag {sag:.3} m), speeds {bw_speed:.2e} \
         / {kang_speed:.2e} m/s"
    );
    assert!(sag > 0.0, "the sheet did not hang: sag {sag}");
    assert!(kang_speed < 1e-3 && bw_speed < 1e-3);
    assert!(
        d < 1e-5,
        "kang settled {d} m away from backward Euler's rest"
    );
}

/// Cloth at rest stays at rest. Near rest the right-hand side vanishes and the linear solve is
/// held to `cg_tolerance` times the reference impulse of `REST_VELOCITY_FLOOR`; its errors keep
/// the cloth moving at about that level. The largest speed of the hanging sheet (backward Euler,
/// 20 substeps) over every frame from 4 to 24 s: 0.65 mm/s at the default tolerance × floor
/// (1e-2 × 0.03; 0.64 at 3e-3 × 0.1 and 1e-3 × 0.3, the earlier defaults), 1.9 mm/s at 3e-3 ×
/// 0.3.
#[test]
fn a_hanging_sheet_stays_still_once_it_has_settled() {
    let mut sim = hanging(Integrator::BackwardEuler, 20, 1);
    let mut speed = 0.0f32;
    for frame in 0..24 * 24 {
        sim.step_frame(1.0 / 24.0, &[], &[]).unwrap();
        if frame >= 4 * 24 {
            speed = speed.max(largest_speed(&sim));
        }
    }
    eprintln!("largest speed from 4 to 24 s: {speed:.2e} m/s");
    assert!(speed < 1e-3, "resting cloth moves at {speed} m/s");
}

#[test]
fn verlet_keeps_edge_lengths_while_hanging() {
    // Gauss–Seidel relaxation leaves the weight's stretch on the edges near the pins; it shrinks
    // with substeps × passes (measured largest edge strain after 3 s: 5 substeps × 10 passes
    // 0.132, 5 × 20 0.068, 5 × 50 0.027, 10 × 10 0.037, 10 × 20 0.018, 20 × 10 0.0094).
    let (x, speed) = hang(Integrator::Verlet, 20, 3.0, 20);
    let model = Simulation::new(vec![sheet("sheet", N, SIZE, 1.0)], SimSettings::default())
        .unwrap()
        .model()
        .clone();
    let strain = max_edge_strain(&model, &x);
    let sag = x.iter().map(|p| 1.0 - SIZE - p.y).fold(0.0, f32::max);
    eprintln!(
        "verlet after 3 s: largest edge strain {strain:.2e}, sag {sag:.3} m, speed {speed:.2e}"
    );
    assert!(sag > 0.0, "the sheet did not hang: sag {sag}");
    assert!(
        strain < 0.01,
        "edges stretched by {strain} at 20 substeps × 20 passes"
    );
    assert!(speed < 1e-3, "still moving at {speed} m/s");
}

/// A sheet dropped on a sphere that moves sideways and up (0.6 m/s) for 1 s; returns the smallest
/// distance of any vertex to the sphere at the end of any frame (m) and the final positions.
fn on_moving_sphere(integrator: Integrator, substeps: u32) -> (f32, Vec<Vec3>) {
    let thickness = 0.01;
    let mut g = sheet("sheet", N, SIZE, 0.3);
    g.thickness = thickness;
    g.self_collision = Some(SelfCollisionParams {
        thickness: 0.004,
        friction: 0.3,
    });
    let settings = SimSettings {
        integrator,
        substeps,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![g], settings).unwrap();
    let at = |t: f32| ColliderShape::Sphere {
        center: Vec3::new(0.4 * t, 0.45 * t, 0.0),
        radius: 0.2,
    };
    let mut min = f32::INFINITY;
    for f in 0..24 {
        let (t0, t1) = (f as f32 / 24.0, (f + 1) as f32 / 24.0);
        let c = [MovingCollider {
            start: at(t0),
            end: at(t1),
        }];
        sim.step_frame(1.0 / 24.0, &c, &[]).unwrap();
        for &x in sim.garment_positions(0) {
            min = min.min(at(t1).distance(x).0);
        }
    }
    (min, sim.garment_positions(0).to_vec())
}

#[test]
fn no_penetration_of_a_moving_sphere() {
    for (integrator, substeps) in [(Integrator::Kang, 20), (Integrator::Verlet, 5)] {
        let (min, x) = on_moving_sphere(integrator, substeps);
        eprintln!(
            "{}: smallest distance to the sphere {min:.4} m",
            integrator.name()
        );
        assert!(x.iter().all(|p| p.is_finite()));
        // The sheet lay on the sphere (at its thickness, 0.01 m) at some frame's end.
        assert!(
            min < 0.0101,
            "{}: the sheet never touched the sphere ({min} m)",
            integrator.name()
        );
        assert!(
            min >= 0.0,
            "{}: a vertex is {min} m inside the sphere",
            integrator.name()
        );
    }
}

#[test]
fn kang_iterations_must_be_odd_and_verlet_iterations_positive() {
    let g = || vec![sheet("sheet", 4, 0.2, 0.0)];
    for (settings, field) in [
        (
            SimSettings {
                kang_iterations: 2,
                ..SimSettings::default()
            },
            "kang_iterations",
        ),
        (
            SimSettings {
                verlet_iterations: 0,
                ..SimSettings::default()
            },
            "verlet_iterations",
        ),
    ] {
        match Simulation::new(g(), settings) {
            Err(ModelError::Settings { field: f, .. }) => assert_eq!(f, field),
            Err(e) => panic!("{field}: wrong error {e}"),
            Ok(_) => panic!("{field}: accepted"),
        }
    }
    assert!(Simulation::new(
        g(),
        SimSettings {
            kang_iterations: 3,
            ..SimSettings::default()
        }
    )
    .is_ok());
}
