//! A sheet on a 20° incline: it stays put with μ = 1 and slides with μ = 0.05 at roughly
//! a = g(sin θ − μ cos θ).

use clothbake_solver::fixtures::sheet;
use clothbake_solver::{ColliderShape, Friction, MovingCollider, SimSettings, Simulation};
use glam::{Quat, Vec3};

const THETA_DEG: f32 = 20.0;
const THICKNESS: f32 = 0.005;
const DT: f32 = 1.0 / 24.0;

/// Runs a 0.4 m sheet lying on the incline (at its thickness) for `frames`; returns the
/// downhill displacement (m) of the sheet's centroid after every frame.
fn slide(mu: f32, frames: usize) -> Vec<f32> {
    let theta = THETA_DEG.to_radians();
    let rot = Quat::from_rotation_z(theta);
    let normal = rot * Vec3::Y;
    let downhill = rot * -Vec3::X;
    let mut g = sheet("sheet", 15, 0.4, THICKNESS);
    g.positions.iter_mut().for_each(|p| *p = rot * *p);
    g.thickness = THICKNESS;
    g.friction = Friction {
        static_: mu,
        kinetic: mu,
    };
    let settings = SimSettings {
        substeps: 4,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
    let plane = [MovingCollider::fixed(ColliderShape::Plane {
        point: Vec3::ZERO,
        normal,
    })];
    let centroid = |x: &[Vec3]| x.iter().copied().sum::<Vec3>() / x.len() as f32;
    let c0 = centroid(sim.garment_positions(0));
    (0..frames)
        .map(|_| {
            sim.step_frame(DT, &plane, &[None]).expect("step");
            let x = sim.garment_positions(0);
            for p in x {
                assert!(
                    p.dot(normal) > 0.9 * THICKNESS,
                    "vertex below the incline: {p}"
                );
            }
            (centroid(x) - c0).dot(downhill)
        })
        .collect()
}

#[test]
fn high_friction_holds_the_sheet_on_the_incline() {
    let s = slide(1.0, 48);
    let worst = s.iter().fold(0.0f32, |m, d| m.max(d.abs()));
    assert!(
        worst < 3e-3,
        "sheet crept {worst} m in 2 s with μ = 1 (tan 20° = 0.36)"
    );
}

/// Low friction (μ = 0.05 < tan 20°): the sheet slides down the incline at g(sin θ − μk cos θ).
#[test]
fn low_friction_slides_at_g_sin_minus_mu_cos() {
    let mu = 0.05;
    let theta = THETA_DEG.to_radians();
    let expected = 9.81 * (theta.sin() - mu * theta.cos());
    let frictionless = 9.81 * theta.sin();
    let s = slide(mu, 12);
    // Fit s = a t²/2 at t = 0.25 s and 0.5 s; backward Euler adds O(h) (≈ +h/t) to s.
    for (frame, tol) in [(5usize, 0.12f32), (11, 0.08)] {
        let t = (frame + 1) as f32 * DT;
        let a = 2.0 * s[frame] / (t * t);
        assert!(
            (a - expected).abs() < tol * expected,
            "t = {t} s: fitted a = {a} m/s², expected {expected} (±{}%), frictionless {frictionless}",
            tol * 100.0
        );
    }
}
