//! Cloth–cloth collision together with body contact (public `Simulation` API): cloth squeezed
//! between a body and other cloth must neither be pushed into the body (every vertex stays at
//! least 0.9 × its collider thickness outside) nor cross the other cloth (zero triangle–triangle
//! intersections, counted by the independent `count_intersections`).

use clothbake_solver::fixtures::{sheet, EdgeFold};
use clothbake_solver::self_collision::count_intersections;
use clothbake_solver::*;
use glam::Vec3;

const SELF_THICKNESS: f32 = 0.004;

/// Smallest signed distance (m) of any vertex to any of the shapes.
fn min_distance(x: &[Vec3], shapes: &[ColliderShape]) -> f32 {
    x.iter()
        .flat_map(|&p| shapes.iter().map(move |s| s.distance(p).0))
        .fold(f32::INFINITY, f32::min)
}

/// A sheet lying on the ground is folded in half by its pinned edge (as in self_collision_sim.rs),
/// then a capsule comes down across the folded half and presses both layers onto the ground: its
/// bottom ends 2 × 5 mm collider thickness + 4 mm cloth thickness − 1.5 mm above the ground, so
/// the layers are squeezed 1.5 mm closer than their cloth thickness (still room for both at 0.9 ×
/// the collider thickness), and it stays there.
#[test]
fn folded_sheet_pressed_onto_the_ground_by_a_capsule_keeps_clear_of_both() {
    let n = 18;
    let size = 0.5;
    let y0 = 0.006;
    let mut g = sheet("sheet", n, size, y0);
    g.self_collision = Some(SelfCollisionParams {
        thickness: SELF_THICKNESS,
        friction: 0.3,
    });
    let thickness = g.thickness;
    let mut fold = EdgeFold::pin(&mut g, n, y0);
    let settings = SimSettings {
        substeps: 6,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
    let ground = ColliderShape::Plane {
        point: Vec3::ZERO,
        normal: Vec3::Y,
    };
    let radius = 0.03;
    let z = -0.12;
    let capsule_at = |bottom: f32| ColliderShape::Capsule {
        a: Vec3::new(-0.4, bottom + radius, z),
        b: Vec3::new(0.4, bottom + radius, z),
        radius_a: radius,
        radius_b: radius,
    };
    let lowest = 2.0 * thickness + SELF_THICKNESS - 0.0015;
    let bottom_at = |f: i32| -> f32 {
        // Frames 1–30: fold; 31–50: the capsule comes down from 40 cm (above the swinging half); 51–60: it stays.
        let s = ((f - 30) as f32 / 20.0).clamp(0.0, 1.0);
        0.4 + (lowest - 0.4) * s * s * (3.0 - 2.0 * s)
    };
    let (fps, swing_frames, frames) = (24.0f32, 30, 60);
    let mut capsule_contacts = 0;
    for f in 1..=frames {
        let targets = fold.targets(f as f32 / swing_frames as f32);
        let (c0, c1) = (capsule_at(bottom_at(f - 1)), capsule_at(bottom_at(f)));
        let colliders = [
            MovingCollider::fixed(ground),
            MovingCollider { start: c0, end: c1 },
        ];
        let r = sim
            .step_frame(1.0 / fps, &colliders, &[Some(targets)])
            .expect("frame");
        let x = sim.garment_positions(0);
        let ints = count_intersections(x, &sim.model().triangles);
        let d = min_distance(x, &[ground, c1]);
        let to_capsule = min_distance(x, &[c1]);
        eprintln!(
            "frame {f}: intersections {ints}, min distance {d:.5} (capsule {to_capsule:.5}), \
             substep min {:.5}, unresolved {}, self contacts {}",
            r.min_collider_distance, r.unresolved, r.self_contacts
        );
        assert_eq!(ints, 0, "frame {f}: {ints} triangle-triangle intersections");
        assert!(
            d >= 0.9 * thickness && r.min_collider_distance >= 0.9 * thickness,
            "frame {f}: a vertex {d} m (within the frame {} m) from a body, thickness {thickness}",
            r.min_collider_distance
        );
        assert_eq!(r.unresolved, 0, "frame {f}");
        if to_capsule < 1.5 * thickness {
            capsule_contacts += 1;
        }
    }
    assert!(
        capsule_contacts >= 10,
        "the capsule pressed the cloth in only {capsule_contacts} frames"
    );
}
