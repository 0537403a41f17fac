//! Bad garment input gets a typed error naming the garment and the offending element (issue 2).

use clothbake_solver::fixtures::sheet;
use clothbake_solver::*;
use glam::Vec3;

fn build(g: GarmentDesc) -> Result<(), ModelError> {
    let ok = sheet("ok", 3, 1.0, 0.0);
    Simulation::new(vec![ok, g], SimSettings::default()).map(|_| ())
}

#[test]
fn zero_area_triangle() {
    let mut g = sheet("skirt", 3, 1.0, 0.0);
    // Move the centre vertex 4 onto the edge 0–1: triangle 1 = [0, 4, 1] has zero area.
    g.positions[4] = (g.positions[0] + g.positions[1]) * 0.5;
    let err = build(g).unwrap_err();
    assert!(
        matches!(&err, ModelError::ZeroAreaTriangle { garment, triangle: 1, vertices: [0, 4, 1] } if garment == "skirt"),
        "{err}"
    );
    assert!(
        err.to_string().contains("skirt") && err.to_string().contains("triangle 1"),
        "{err}"
    );
}

#[test]
fn non_manifold_edge() {
    let mut g = sheet("shirt", 3, 1.0, 0.0);
    g.positions.push(Vec3::new(0.1, 0.5, 0.1));
    g.triangles.push([0, 4, 9]);
    let err = build(g).unwrap_err();
    assert_eq!(
        err,
        ModelError::NonManifoldEdge {
            garment: "shirt".into(),
            edge: [0, 4],
            triangles: 3,
            triangle: 0
        }
    );
}

#[test]
fn nan_position() {
    let mut g = sheet("cape", 3, 1.0, 0.0);
    g.positions[7].y = f32::NAN;
    let err = build(g).unwrap_err();
    assert!(
        matches!(&err, ModelError::NonFinitePosition { garment, vertex: 7, .. } if garment == "cape"),
        "{err}"
    );
}

#[test]
fn duplicate_vertex() {
    let mut g = sheet("scarf", 3, 1.0, 0.0);
    g.positions[8] = g.positions[2];
    let err = build(g).unwrap_err();
    assert!(
        matches!(&err, ModelError::DuplicateVertex { garment, vertex: 8, duplicate_of: 2, .. } if garment == "scarf"),
        "{err}"
    );
}

#[test]
fn index_out_of_range() {
    let mut g = sheet("sock", 3, 1.0, 0.0);
    g.triangles[5][2] = 42;
    let err = build(g).unwrap_err();
    assert_eq!(
        err,
        ModelError::IndexOutOfRange {
            garment: "sock".into(),
            triangle: 5,
            vertex: 42,
            count: 9
        }
    );
}

#[test]
fn pins_and_parameters() {
    let mut g = sheet("belt", 3, 1.0, 0.0);
    g.pins = vec![
        Pin {
            vertex: 1,
            weight: 1.0,
        },
        Pin {
            vertex: 10,
            weight: 1.0,
        },
    ];
    assert_eq!(
        build(g).unwrap_err(),
        ModelError::PinOutOfRange {
            garment: "belt".into(),
            pin: 1,
            vertex: 10,
            count: 9
        }
    );
    let mut g = sheet("belt", 3, 1.0, 0.0);
    g.thickness = -1.0;
    assert!(matches!(
        build(g).unwrap_err(),
        ModelError::Parameter {
            field: "thickness",
            ..
        }
    ));
    let mut g = sheet("belt", 3, 1.0, 0.0);
    g.material.density = f32::NAN;
    assert!(
        matches!(build(g).unwrap_err(), ModelError::Material { garment, .. } if garment == "belt")
    );
}
