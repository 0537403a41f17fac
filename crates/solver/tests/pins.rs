//! Pins (issue 2, item 3): hard pins follow moving targets and reach a jumping target in one step
//! with the target's velocity; partial pins act as goal springs.

use clothbake_solver::fixtures::{sheet, sheet_vertex};
use clothbake_solver::*;
use glam::Vec3;

const DT: f32 = 1.0 / 24.0;

#[test]
fn hard_pin_reaches_a_jumping_target_in_one_frame_without_explosion() {
    let n = 10;
    let mut g = sheet("cape", n, 0.5, 0.0);
    let (a, b) = (sheet_vertex(n, 0, 0), sheet_vertex(n, n - 1, 0));
    g.pins = vec![
        Pin {
            vertex: a,
            weight: 1.0,
        },
        Pin {
            vertex: b,
            weight: 1.0,
        },
    ];
    let mut sim = Simulation::new(vec![g.clone()], SimSettings::default()).unwrap();
    // Both pins jump 10 cm sideways in one frame, then hold still.
    let jump = Vec3::new(0.1, 0.0, 0.0);
    let targets: Vec<Vec3> = g.positions.iter().map(|p| *p + jump).collect();
    let r = sim.step_frame(DT, &[], &[Some(&targets)]).unwrap();
    for v in [a, b] {
        let p = sim.garment_positions(0)[v as usize];
        let vel = sim.garment_velocities(0)[v as usize];
        assert!(
            (p - targets[v as usize]).length() < 1e-5,
            "pin {v} at {p}, target {}",
            targets[v as usize]
        );
        // Velocity is the target's (jump / dt), not the correction's.
        assert!((vel - jump / DT).length() < 1e-3, "pin {v} velocity {vel}");
    }
    assert!(r.max_strain < 1.0, "{r:?}");
    for _ in 0..24 {
        sim.step_frame(DT, &[], &[Some(&targets)]).unwrap();
    }
    let x = sim.garment_positions(0);
    let v = sim.garment_velocities(0);
    assert!((x[a as usize] - targets[a as usize]).length() < 1e-5);
    assert!(
        v[a as usize].length() < 1e-4,
        "pin velocity once the target stops: {}",
        v[a as usize]
    );
    let vmax = v.iter().map(|v| v.length()).fold(0.0, f32::max);
    assert!(vmax < 5.0, "cloth exploded: max speed {vmax} m/s");
    assert!(x.iter().all(|p| p.is_finite()));
}

#[test]
fn moving_target_is_followed_exactly_at_frame_times() {
    let n = 6;
    let mut g = sheet("band", n, 0.3, 1.0);
    let v0 = sheet_vertex(n, 2, 2);
    g.pins = vec![Pin {
        vertex: v0,
        weight: 1.0,
    }];
    let mut sim = Simulation::new(vec![g.clone()], SimSettings::default()).unwrap();
    for f in 1..=12 {
        let t = f as f32 * DT;
        let offset = Vec3::new(0.2 * t.sin(), 0.1 * t, 0.0);
        let targets: Vec<Vec3> = g.positions.iter().map(|p| *p + offset).collect();
        sim.step_frame(DT, &[], &[Some(&targets)]).unwrap();
        let p = sim.garment_positions(0)[v0 as usize];
        assert!(
            (p - targets[v0 as usize]).length() < 1e-5,
            "frame {f}: {p} vs {}",
            targets[v0 as usize]
        );
    }
}

#[test]
fn partial_pins_are_goal_springs() {
    let n = 8;
    let mut g = sheet("tablecloth", n, 1.0, 0.0);
    let corners = [
        sheet_vertex(n, 0, 0),
        sheet_vertex(n, n - 1, 0),
        sheet_vertex(n, 0, n - 1),
        sheet_vertex(n, n - 1, n - 1),
    ];
    g.pins = corners
        .iter()
        .map(|&vertex| Pin {
            vertex,
            weight: 0.5,
        })
        .collect();
    g.pin_stiffness = 2000.0;
    let mass = g.material.density * 1.0;
    let mut sim = Simulation::new(vec![g.clone()], SimSettings::default()).unwrap();
    for _ in 0..72 {
        sim.step_frame(DT, &[], &[]).unwrap();
    }
    // At rest each corner spring carries a quarter of the weight: sag = m g / (4 · 0.5 · 2000).
    let expected = mass * 9.81 / (4.0 * 1000.0);
    for c in corners {
        let sag = g.positions[c as usize].y - sim.garment_positions(0)[c as usize].y;
        assert!(
            (sag - expected).abs() < 0.15 * expected,
            "corner {c}: sag {sag} m, expected {expected} m"
        );
    }
}
