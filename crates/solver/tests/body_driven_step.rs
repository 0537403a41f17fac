//! The adaptive step does not hold against it the stretch a moving body's contacts impose
//! (`SimSettings::body_strain_allowance`; `step/accept.rs`, `judge`): a leg swinging into a hanging
//! hem takes fewer substeps with the allowance than without (its contacts and its pushing the hem
//! out of its way excused), stays out of the leg and under a strain bound; a body at rest gives the
//! same bits with and without it.

use clothbake_solver::fixtures::{hard_pins, sheet, sheet_vertex};
use clothbake_solver::*;
use glam::Vec3;

const DT: f32 = 1.0 / 24.0;
const N: usize = 24;
const THICKNESS: f32 = 0.005;
/// The leg's radius (m) and speed (m/s), as a walking character's shin, and the height of its
/// top end (m): it meets the sheet's lowest 0.16 m (the sheet hangs from y = 0 to −0.5).
const RADIUS: f32 = 0.06;
const SPEED: f32 = 1.5;
const LEG_TOP: f32 = -0.40;

/// A 0.5 m cotton sheet hanging at rest from its top row (x–y plane, top at y = 0).
fn hem() -> GarmentDesc {
    let mut g = sheet("hem", N, 0.5, 0.0);
    for p in &mut g.positions {
        *p = Vec3::new(p.x, -(p.z + 0.25), 0.0);
    }
    let top: Vec<u32> = (0..N).map(|i| sheet_vertex(N, i, 0)).collect();
    g.pins = hard_pins(&top);
    g.thickness = THICKNESS;
    g
}

/// A vertical leg under the sheet's hem, its axis at x = 0 and depth `z`.
fn leg(z: f32) -> ColliderShape {
    ColliderShape::Capsule {
        a: Vec3::new(0.0, -0.7, z),
        b: Vec3::new(0.0, LEG_TOP, z),
        radius_a: RADIUS,
        radius_b: RADIUS,
    }
}

struct Swing {
    /// Accepted and rejected substeps.
    tries: u32,
    rejected: u32,
    /// Largest triangle |strain| the frames report.
    max_strain: f32,
    /// Vertices in contact with the leg, summed over the frames.
    contacts: usize,
    /// Smallest vertex–leg distance after any frame (m).
    min_distance: f32,
    /// Largest edge stretch (|e|/|e_rest| − 1) of any frame's end positions.
    max_edge_stretch: f32,
    positions: Vec<Vec3>,
}

/// 24 frames: the leg's axis starts at depth `z_start` (m; the sheet hangs at z = 0) and moves
/// at `speed` (m/s) along +z.
fn swing(allowance: f32, speed: f32, z_start: f32) -> Swing {
    let settings = SimSettings {
        substeps: 4,
        body_strain_allowance: allowance,
        // The tolerance the counts below were measured at. At the default 1e-3 this single
        // swing takes 140 (11) tries without the allowance and 144 (11) with it: one event is
        // within the spread of a perturbed trajectory there. The bpy skirt-walk at 1e-3 takes
        // 298 (38) without it and 236 (20) with it, the dress-walk 343 (50) and 264 (28).
        cg_tolerance: 3e-4,
        ..Default::default()
    };
    let garment = hem();
    let edges: Vec<[usize; 2]> = garment
        .triangles
        .iter()
        .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
        .map(|[a, b]| [a as usize, b as usize])
        .collect();
    let rest = garment.positions.clone();
    let mut sim = Simulation::new(vec![garment], settings).expect("valid sheet");
    let mut z = z_start;
    let mut out = Swing {
        tries: 0,
        rejected: 0,
        max_strain: 0.0,
        contacts: 0,
        min_distance: f32::INFINITY,
        max_edge_stretch: 0.0,
        positions: Vec::new(),
    };
    for _ in 0..24 {
        let z1 = z + speed * DT;
        let c = MovingCollider {
            start: leg(z),
            end: leg(z1),
        };
        let r = sim.step_frame(DT, &[c], &[None]).expect("step");
        z = z1;
        out.tries += r.substeps + r.rejected_substeps;
        out.rejected += r.rejected_substeps;
        out.max_strain = out.max_strain.max(r.max_strain);
        out.contacts += r.contacts as usize;
        let x = sim.garment_positions(0);
        for &p in x {
            out.min_distance = out.min_distance.min(c.end.distance(p).0);
        }
        for &[a, b] in &edges {
            let stretch = x[a].distance(x[b]) / rest[a].distance(rest[b]) - 1.0;
            out.max_edge_stretch = out.max_edge_stretch.max(stretch);
        }
    }
    out.positions = sim.garment_positions(0).to_vec();
    out
}

#[test]
fn a_leg_dragging_a_hem_is_not_halved_for_the_stretch_it_imposes() {
    // From 0.1 m behind the sheet through where it hung, carrying its hem along.
    let strict = swing(0.0, SPEED, -0.1 - RADIUS);
    let allowed = swing(
        SimSettings::default().body_strain_allowance,
        SPEED,
        -0.1 - RADIUS,
    );
    eprintln!(
        "allowance 0: {} tries ({} rejected), max strain {:.3}, edge stretch {:.3}, min distance \
         {:.4} m; default: {} tries ({} rejected), max strain {:.3}, edge stretch {:.3}, min \
         distance {:.4} m",
        strict.tries,
        strict.rejected,
        strict.max_strain,
        strict.max_edge_stretch,
        strict.min_distance,
        allowed.tries,
        allowed.rejected,
        allowed.max_strain,
        allowed.max_edge_stretch,
        allowed.min_distance
    );
    // The leg carries the hem: without the allowance the step halves at its contacts and where
    // it pushes the hem out of its way (measured: 148 tries, 12 rejected, max edge stretch
    // 0.104; with it 134, 10, 0.213 — 140, 10, 0.157 when only contacts were excused).
    assert!(strict.rejected >= 5, "{} rejected", strict.rejected);
    assert!(
        allowed.tries < strict.tries && allowed.rejected < strict.rejected,
        "{} tries ({} rejected) against {} ({})",
        allowed.tries,
        allowed.rejected,
        strict.tries,
        strict.rejected
    );
    for (name, s) in [("allowance 0", &strict), ("default", &allowed)] {
        assert!(
            s.min_distance >= 0.9 * THICKNESS,
            "{name}: a vertex came within {} m of the leg",
            s.min_distance
        );
        assert!(s.max_strain < 0.3, "{name}: max strain {}", s.max_strain);
        assert!(
            s.max_edge_stretch < 0.25,
            "{name}: edge stretch {}",
            s.max_edge_stretch
        );
    }
}

#[test]
fn a_body_at_rest_is_judged_as_without_the_allowance() {
    // The leg stands 1 cm into where the sheet hangs: the hem drapes over it (contacts), with no
    // body motion to excuse.
    let strict = swing(0.0, 0.0, 0.01 - RADIUS);
    let allowed = swing(1.0, 0.0, 0.01 - RADIUS);
    eprintln!(
        "at rest: {} tries ({} rejected), {} contacts",
        strict.tries, strict.rejected, strict.contacts
    );
    assert!(strict.contacts > 0 && strict.rejected > 0);
    let bits = |x: &[Vec3]| -> Vec<u32> {
        x.iter()
            .flat_map(|p| p.to_array())
            .map(f32::to_bits)
            .collect()
    };
    assert_eq!(bits(&strict.positions), bits(&allowed.positions));
}
