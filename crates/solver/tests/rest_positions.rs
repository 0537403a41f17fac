//! `GarmentDesc::rest_positions`: a garment that starts in one shape (e.g. a driver's animated pose)
//! with its rest shape (lengths, areas, angles) from another.

use clothbake_solver::fixtures::sheet;
use clothbake_solver::*;
use glam::Vec3;

/// A 5 × 5 sheet of side 1 m at y = 1.
fn base() -> GarmentDesc {
    sheet("sheet", 5, 1.0, 1.0)
}

#[test]
fn without_rest_positions_the_model_is_unchanged() {
    let a = Model::new(&[base()]).unwrap();
    let mut g = base();
    g.rest_positions = Some(g.positions.clone());
    let b = Model::new(&[g]).unwrap();
    assert_eq!(a.mass, b.mass);
    assert_eq!(a.triangle_rest, b.triangle_rest);
    assert_eq!(a.hinge_rest, b.hinge_rest);
    assert_eq!(a.rest_positions, a.initial_positions);
}

#[test]
fn rest_shape_comes_from_rest_positions_and_state_from_positions() {
    let rest = base();
    let mut g = base();
    // Start stretched 1.5× in x: masses and rest frames stay the 1 m sheet's.
    for p in &mut g.positions {
        p.x *= 1.5;
    }
    g.rest_positions = Some(rest.positions.clone());
    let m = Model::new(&[g.clone()]).unwrap();
    let r = Model::new(&[rest]).unwrap();
    assert_eq!(m.mass, r.mass);
    assert_eq!(m.triangle_rest, r.triangle_rest);
    assert_eq!(m.initial_positions, g.positions);
    let total: f32 = m.mass.iter().sum();
    assert!(
        (total - Material::default().density).abs() < 1e-5,
        "{total}"
    );
    // Released (no pins, no gravity), the stretched sheet contracts back towards 1 m.
    let settings = SimSettings {
        gravity: Vec3::ZERO,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![g], settings).unwrap();
    let width = |x: &[Vec3]| {
        x.iter().map(|p| p.x).fold(f32::MIN, f32::max)
            - x.iter().map(|p| p.x).fold(f32::MAX, f32::min)
    };
    assert!((width(sim.garment_positions(0)) - 1.5).abs() < 1e-6);
    for _ in 0..24 {
        sim.step_frame(1.0 / 24.0, &[], &[]).unwrap();
    }
    let w = width(sim.garment_positions(0));
    assert!(w < 1.1, "width {w} m after one second");
}

#[test]
fn bad_rest_positions_are_named() {
    let mut g = base();
    g.rest_positions = Some(vec![Vec3::ZERO; 3]);
    let e = Model::new(&[g]).unwrap_err();
    assert_eq!(
        e,
        ModelError::RestPositionCount {
            garment: "sheet".into(),
            expected: 25,
            got: 3
        }
    );
    let mut g = base();
    let mut r = g.positions.clone();
    r[7].y = f32::NAN;
    g.rest_positions = Some(r);
    let e = Model::new(&[g]).unwrap_err();
    assert_eq!(
        e,
        ModelError::NonFiniteRestPosition {
            garment: "sheet".into(),
            vertex: 7
        }
    );
    assert!(e.to_string().contains("rest position 7"), "{e}");
}
