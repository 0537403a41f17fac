//! Collider contact as MPCG constraints (issue 2, item 4): resting contact at the thickness, static
//! and kinetic friction from the constraint force, release when the force turns attractive.

use clothbake_solver::fixtures::{sheet, sheet_vertex};
use clothbake_solver::*;
use glam::Vec3;

const DT: f32 = 1.0 / 24.0;

#[test]
fn sheet_comes_to_rest_on_a_sphere_at_the_thickness() {
    let n = 20;
    let g = sheet("sheet", n, 0.8, 0.4);
    let thickness = g.thickness;
    let mut sim = Simulation::new(vec![g], SimSettings::default()).unwrap();
    let radius = 0.25;
    let sphere = MovingCollider::fixed(ColliderShape::Sphere {
        center: Vec3::ZERO,
        radius,
    });
    let mut touched = false;
    for f in 0..48 {
        let r = sim.step_frame(DT, &[sphere], &[]).unwrap();
        assert!(
            r.min_collider_distance >= 0.9 * thickness,
            "frame {f}: {r:?}"
        );
        for p in sim.garment_positions(0) {
            assert!(
                p.length() - radius >= 0.9 * thickness,
                "frame {f}: vertex at distance {}",
                p.length() - radius
            );
        }
        touched |= r.contacts > 0;
    }
    assert!(touched);
    // The middle of the sheet rests on top of the sphere, one thickness above it.
    let top = sim.garment_positions(0)[sheet_vertex(n, n / 2, n / 2) as usize];
    assert!(
        (top.length() - radius - thickness).abs() < 2e-3,
        "top vertex at distance {}",
        top.length() - radius
    );
    let speed = sim.garment_velocities(0)[sheet_vertex(n, n / 2, n / 2) as usize].length();
    assert!(speed < 0.05, "top vertex still moving at {speed} m/s");
}

/// Sheet lying on a plane tilted by `angle` about the z axis; returns how far its centre moved
/// along the slope in `frames` frames.
fn slide(angle: f32, friction: Friction, frames: usize) -> f32 {
    let n = 8;
    let mut g = sheet("sheet", n, 0.3, 0.0);
    g.friction = friction;
    let (s, c) = angle.sin_cos();
    // Rotate the sheet into the plane and lift it by the thickness.
    let normal = Vec3::new(-s, c, 0.0);
    for p in g.positions.iter_mut() {
        *p = Vec3::new(p.x * c, p.x * s, p.z) + normal * g.thickness;
    }
    let start = g.positions[sheet_vertex(n, n / 2, n / 2) as usize];
    let mut sim = Simulation::new(vec![g], SimSettings::default()).unwrap();
    let plane = MovingCollider::fixed(ColliderShape::Plane {
        point: Vec3::ZERO,
        normal,
    });
    for _ in 0..frames {
        sim.step_frame(DT, &[plane], &[]).unwrap();
    }
    let end = sim.garment_positions(0)[sheet_vertex(n, n / 2, n / 2) as usize];
    let downhill = Vec3::new(-c, -s, 0.0);
    (end - start).dot(downhill)
}

#[test]
fn static_friction_holds_on_a_gentle_slope() {
    // tan 20° = 0.36 < μs = 0.6: the sheet stays put.
    let moved = slide(
        20f32.to_radians(),
        Friction {
            static_: 0.6,
            kinetic: 0.5,
        },
        24,
    );
    assert!(moved.abs() < 5e-3, "moved {moved} m");
}

#[test]
fn kinetic_friction_slows_sliding() {
    // tan 20° = 0.36 > μ = 0.1: slides with a = g (sin θ − μk cos θ); over 1 s, d = a/2.
    let angle = 20f32.to_radians();
    let mu = 0.1;
    let moved = slide(
        angle,
        Friction {
            static_: mu,
            kinetic: mu,
        },
        24,
    );
    let expected = 0.5 * 9.81 * (angle.sin() - mu * angle.cos());
    assert!(
        (moved - expected).abs() < 0.2 * expected,
        "moved {moved} m, expected {expected} m"
    );
    let frictionless = slide(
        angle,
        Friction {
            static_: 0.0,
            kinetic: 0.0,
        },
        24,
    );
    let expected_free = 0.5 * 9.81 * angle.sin();
    assert!(
        (frictionless - expected_free).abs() < 0.2 * expected_free,
        "moved {frictionless} m, expected {expected_free} m"
    );
}

#[test]
fn contact_releases_when_the_cloth_is_lifted() {
    let n = 10;
    let mut g = sheet("sheet", n, 0.3, 0.005);
    let centre = sheet_vertex(n, n / 2, n / 2);
    g.pins = vec![Pin {
        vertex: centre,
        weight: 1.0,
    }];
    let mut sim = Simulation::new(vec![g.clone()], SimSettings::default()).unwrap();
    let ground = MovingCollider::fixed(ColliderShape::Plane {
        point: Vec3::ZERO,
        normal: Vec3::Y,
    });
    // Rest on the ground, then lift the centre 0.6 m over one second.
    for _ in 0..12 {
        sim.step_frame(DT, &[ground], &[]).unwrap();
    }
    for f in 1..=24 {
        let lift = Vec3::Y * (0.6 * f as f32 / 24.0);
        let targets: Vec<Vec3> = g.positions.iter().map(|p| *p + lift).collect();
        sim.step_frame(DT, &[ground], &[Some(&targets)]).unwrap();
    }
    for _ in 0..12 {
        let targets: Vec<Vec3> = g.positions.iter().map(|p| *p + Vec3::Y * 0.6).collect();
        sim.step_frame(DT, &[ground], &[Some(&targets)]).unwrap();
    }
    let min_y = sim
        .garment_positions(0)
        .iter()
        .map(|p| p.y)
        .fold(f32::INFINITY, f32::min);
    assert!(min_y > 0.3, "cloth stayed on the ground: min y = {min_y}");
}
