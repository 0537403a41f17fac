//! Sheets dropped on a sphere and on a tapered capsule through the public Simulation API: at the
//! end of every substep (1 substep per frame, adaptive off) no vertex is closer than 0.9 × the
//! thickness to the proxy, and the sheet really came to rest on top of it.

use clothbake_solver::fixtures::{sheet, sheet_vertex};
use clothbake_solver::{ColliderShape, MovingCollider, SimSettings, Simulation};
use glam::Vec3;

const THICKNESS: f32 = 0.01;
const N: usize = 21;

/// Drops a 0.6 m sheet from 0.1 m above the proxy's top (y = 0.15) for `frames` substeps of
/// `dt`, checking every substep; returns the final positions and the smallest distance seen.
fn drop_on(shape: ColliderShape, frames: usize, dt: f32) -> (Vec<Vec3>, f32) {
    let mut g = sheet("sheet", N, 0.6, 0.25);
    g.thickness = THICKNESS;
    let settings = SimSettings {
        substeps: 1,
        adaptive: false,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
    let colliders = [MovingCollider::fixed(shape)];
    let mut min_seen = f32::INFINITY;
    for frame in 0..frames {
        let report = sim.step_frame(dt, &colliders, &[None]).expect("step");
        assert_eq!(report.substeps, 1);
        for (i, &x) in sim.garment_positions(0).iter().enumerate() {
            let (d, _) = shape.distance(x);
            assert!(
                d >= 0.9 * THICKNESS,
                "substep {frame}: vertex {i} at {x} is {d} m from the proxy (< 0.9 × {THICKNESS})"
            );
            min_seen = min_seen.min(d);
        }
    }
    (sim.garment_positions(0).to_vec(), min_seen)
}

#[test]
fn sheet_dropped_on_a_sphere_keeps_its_thickness_every_substep() {
    let sphere = ColliderShape::Sphere {
        center: Vec3::ZERO,
        radius: 0.15,
    };
    let (x, min_seen) = drop_on(sphere, 90, 1.0 / 120.0);
    let centre = x[sheet_vertex(N, N / 2, N / 2) as usize];
    // Resting on top: the centre vertex sits at the thickness above the pole (±3 mm).
    assert!(
        (centre.y - (0.15 + THICKNESS)).abs() < 3e-3,
        "centre at {centre}"
    );
    assert!(
        centre.x.abs() < 0.01 && centre.z.abs() < 0.01,
        "centre slid off: {centre}"
    );
    // The sheet really touches (the check above is not vacuous) and drapes below the pole.
    assert!(min_seen < 1.1 * THICKNESS, "closest approach {min_seen}");
    assert!(x.iter().any(|p| p.y < 0.05), "sheet did not drape");
}

#[test]
fn sheet_dropped_on_a_tapered_capsule_keeps_its_thickness_every_substep() {
    let capsule = ColliderShape::Capsule {
        a: Vec3::new(-0.25, 0.0, 0.0),
        b: Vec3::new(0.25, 0.05, 0.0),
        radius_a: 0.15,
        radius_b: 0.06,
    };
    let (x, min_seen) = drop_on(capsule, 90, 1.0 / 120.0);
    assert!(min_seen < 1.1 * THICKNESS, "closest approach {min_seen}");
    // Vertices above the capsule's thick end rest on it (y near the top of that end: 0.15 + t).
    let top = x
        .iter()
        .filter(|p| p.x < -0.2 && p.z.abs() < 0.02)
        .map(|p| p.y)
        .fold(f32::NEG_INFINITY, f32::max);
    assert!(
        top > 0.12 && top < 0.15 + THICKNESS + 0.01,
        "sheet over the thick end at y = {top}"
    );
}
