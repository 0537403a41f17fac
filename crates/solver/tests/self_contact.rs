//! The self-collision hook of the step: two garments dropped onto each other on a sphere do not
//! pass through each other.

use clothbake_solver::fixtures::sheet;
use clothbake_solver::self_collision::count_intersections;
use clothbake_solver::*;
use glam::Vec3;

#[test]
fn stacked_sheets_do_not_intersect() {
    let n = 12;
    let mut lower = sheet("lower", n, 0.5, 0.30);
    let mut upper = sheet("upper", n, 0.5, 0.33);
    for g in [&mut lower, &mut upper] {
        g.self_collision = Some(SelfCollisionParams {
            thickness: 0.004,
            friction: 0.3,
        });
    }
    // Shift the upper sheet diagonally so its vertices do not sit exactly above the lower ones.
    for p in upper.positions.iter_mut() {
        *p += Vec3::new(0.011, 0.0, 0.017);
    }
    let mut sim = Simulation::new(vec![lower, upper], SimSettings::default()).unwrap();
    let sphere = MovingCollider::fixed(ColliderShape::Sphere {
        center: Vec3::ZERO,
        radius: 0.2,
    });
    let mut self_contacts = 0;
    for f in 0..24 {
        let r = sim.step_frame(1.0 / 24.0, &[sphere], &[]).unwrap();
        self_contacts += r.self_contacts;
        let x = &sim.state().x;
        eprintln!(
            "frame {f} ints {} lower-only {} self {} contacts {}",
            count_intersections(x, &sim.model().triangles),
            count_intersections(&x[..144], &sim.model().triangles[..242]),
            r.self_contacts,
            r.contacts
        );
    }
    assert!(self_contacts > 0, "the sheets never touched");
    // Draped over the sphere: the upper sheet's top is above the lower sheet's.
    let top = |g: usize| {
        sim.garment_positions(g)
            .iter()
            .map(|p| p.y)
            .fold(f32::MIN, f32::max)
    };
    assert!(top(1) > top(0) + 0.002, "upper {} lower {}", top(1), top(0));
}
