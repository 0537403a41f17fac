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

/// Centre vertex's velocity along x after each frame of a 0.3 m sheet dropped from 1 cm onto a
/// ground plane moving along x at `belt` m/s (a conveyor), μs = μk = `mu`.
fn dropped_on_a_belt(belt: f32, mu: f32, frames: usize) -> Vec<f32> {
    let n = 8;
    let mut g = sheet("sheet", n, 0.3, 0.0);
    g.friction = Friction {
        static_: mu,
        kinetic: mu,
    };
    let lift = g.thickness + 0.01;
    for p in g.positions.iter_mut() {
        p.y = lift;
    }
    let centre = sheet_vertex(n, n / 2, n / 2) as usize;
    let mut sim = Simulation::new(vec![g], SimSettings::default()).unwrap();
    let mut speeds = Vec::with_capacity(frames);
    for f in 0..frames {
        let at = |f: usize| ColliderShape::Plane {
            point: Vec3::X * (belt * DT * f as f32),
            normal: Vec3::Y,
        };
        let moving = MovingCollider {
            start: at(f),
            end: at(f + 1),
        };
        sim.step_frame(DT, &[moving], &[]).unwrap();
        speeds.push(sim.garment_velocities(0)[centre].x);
    }
    speeds
}

/// A new contact slides when the impact's impulses are outside Coulomb's cone (|v_t| > μs·v_in,
/// `Constraints::add_contacts`): cloth dropped from 1 cm (0.44 m/s) onto a belt running at 2 m/s
/// is accelerated by kinetic friction, μk·g, until it runs with the belt; it is not grabbed to
/// the belt's speed at first touch (the earlier rule made every new contact stick).
#[test]
fn cloth_dropped_on_a_moving_belt_is_dragged_by_kinetic_friction() {
    let (belt, mu) = (2.0, 0.3);
    let speeds = dropped_on_a_belt(belt, mu, 30);
    // Contact after ~45 ms (frame 2); by the end of frame 6 (0.25 s) friction can have given at
    // most μk·(v_in + g·t) ≈ 0.3·(0.44 + 9.81·0.25) = 0.87 m/s.
    let bound = mu * (0.44 + 9.81 * 6.0 * DT);
    assert!(
        speeds[5] > 0.3 * bound && speeds[5] < 1.1 * bound,
        "speed after frame 6: {} m/s (Coulomb bound {bound} m/s); all: {speeds:?}",
        speeds[5]
    );
    // While it slips, the belt accelerates it at μk·g = 2.9 m/s² (Coulomb).
    let accel = (speeds[15] - speeds[5]) / (10.0 * DT);
    assert!(
        (accel - mu * 9.81).abs() < 0.1 * mu * 9.81,
        "acceleration {accel} m/s² while slipping, μk·g = {} m/s²; all: {speeds:?}",
        mu * 9.81
    );
    // At the belt's speed within ~0.75 s of the impact, then sticking to it.
    let last = *speeds.last().unwrap();
    assert!(
        (last - belt).abs() < 0.05 * belt,
        "speed after 30 frames: {last} m/s; all: {speeds:?}"
    );
}

/// A new contact the cloth's motion makes is constrained in the solve only if the free flight
/// reaches the thickness within the first `FRESH_CONTACT_LATEST_TOI` of the substep; one it
/// reaches later is left to the projection after the solve (the solve's motion often does not
/// reach it). A contact held in the previous substep, or one the body's motion makes, is
/// constrained whatever its time of first contact.
#[test]
fn a_contact_reached_late_in_the_substep_is_left_to_the_projection() {
    use clothbake_solver::collide::vertex_contact;
    use clothbake_solver::constraints::{
        Constraints, ContactMemory, FrictionMode, BODY_MADE_FRACTION, FRESH_CONTACT_LATEST_TOI,
    };
    use clothbake_solver::linalg::Filter;
    let g = sheet("sheet", 2, 0.1, 0.0);
    let thickness = g.thickness;
    let sim = Simulation::new(vec![g], SimSettings::default()).unwrap();
    let model = sim.model();
    let n = model.mass.len();
    let ground = MovingCollider::fixed(ColliderShape::Plane {
        point: Vec3::ZERO,
        normal: Vec3::Y,
    });
    let h = 0.01;
    // Closing speed (m/s): 1 cm per substep.
    let speed = 1.0;
    // The ground rising at `body` (m/s) and the vertex falling at `speed − body` close at `speed`.
    let contact_of = |toi: f32, body: f32, remembered: ContactMemory| {
        // Vertex 0 starts toi·h·speed above the thickness.
        let mut x0 = sim.garment_positions(0).to_vec();
        let mut v0 = vec![Vec3::ZERO; n];
        x0[0] = Vec3::Y * (thickness + toi * h * speed);
        v0[0] = -Vec3::Y * (speed - body);
        let rising = MovingCollider {
            start: ground.start,
            end: ColliderShape::Plane {
                point: Vec3::Y * (h * body),
                normal: Vec3::Y,
            },
        };
        let contact = vertex_contact(&rising, 0, 0, h, x0[0], x0[0] + h * v0[0], thickness)
            .expect("the free flight reaches the thickness");
        assert!((contact.toi - toi).abs() < 0.02, "toi {}", contact.toi);
        let mut memory = vec![ContactMemory::default(); n];
        memory[0] = remembered;
        let mut c = Constraints::default();
        c.begin(n);
        c.add_contacts(
            &[contact],
            &memory,
            model,
            &x0,
            &v0,
            h,
            SimSettings::default().gravity,
        );
        c.filter[0] != Filter::Free
    };
    let constrained = |toi: f32, remembered: ContactMemory| contact_of(toi, 0.0, remembered);
    let new = ContactMemory::default();
    let held = ContactMemory {
        mode: FrictionMode::Stick,
        released: false,
        normal_force: 0.1,
    };
    let early = 0.5 * FRESH_CONTACT_LATEST_TOI;
    let late = 0.5 * (1.0 + FRESH_CONTACT_LATEST_TOI);
    assert!(constrained(early, new), "new contact at toi {early}");
    assert!(!constrained(late, new), "new contact at toi {late}");
    assert!(constrained(late, held), "held contact at toi {late}");
    // The body closing at BODY_MADE_FRACTION of the speed (and just below it).
    let body = BODY_MADE_FRACTION * speed;
    assert!(
        contact_of(late, body, new),
        "body-made contact at toi {late}"
    );
    assert!(
        !contact_of(late, 0.9 * body, new),
        "cloth-made contact at toi {late}"
    );
}
