//! A 1 m × 1 m sheet of the default material (cotton), hanging in a vertical plane and pinned at its
//! two top corners, comes to rest under gravity — kinetic energy below 1e-6 J after 10 s of
//! simulated time — with every triangle's stretch strain below 5 %, at substep sizes 1/30, 1/120 and
//! 1/600 s.
//!
//! Why 5 % is expected to hold with margin: the weight per unit width at the top edge is
//! ρ g L = 0.15 · 9.81 · 1 ≈ 1.5 N/m (0.1 % strain at 1600 N/m); near a corner pin each corner
//! carries half the weight, ≈ 0.74 N, spread over a half-disc of radius ≈ one mesh spacing
//! (6.7 cm here), i.e. ≈ 7 N/m of line load → ≈ 0.5 % strain.
//!
//! At h = 1/600 s it needs the default linear air damping (see that test's doc comment).
//!
//! The sheet starts in its rest shape with a 1 mm out-of-plane ripple, so it is free to buckle
//! out of plane where the top edge sags (a perfectly planar start would stay planar exactly).

use clothbake_solver::forces::strain;
use clothbake_solver::*;
use glam::Vec3;

const N: usize = 16;
const SIZE: f32 = 1.0;

/// Vertical sheet in the XY plane, top edge at y = 0, with a small deterministic z ripple.
fn hanging_sheet() -> GarmentDesc {
    let step = SIZE / (N - 1) as f32;
    let mut positions = Vec::with_capacity(N * N);
    for j in 0..N {
        for i in 0..N {
            let (x, y) = (i as f32 * step - 0.5 * SIZE, -(j as f32) * step);
            let z = 1e-3 * (7.0 * x).sin() * (5.0 * y).cos();
            positions.push(Vec3::new(x, y, z));
        }
    }
    let id = |i: usize, j: usize| (j * N + i) as u32;
    let mut triangles = Vec::new();
    for j in 0..N - 1 {
        for i in 0..N - 1 {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if (i + j) % 2 == 0 {
                triangles.extend([[a, b, c], [a, c, d]]);
            } else {
                triangles.extend([[a, b, d], [b, c, d]]);
            }
        }
    }
    let mut g = GarmentDesc::new("sheet", positions, triangles);
    g.pins = vec![
        Pin {
            vertex: id(0, 0),
            weight: 1.0,
        },
        Pin {
            vertex: id(N - 1, 0),
            weight: 1.0,
        },
    ];
    g
}

fn kinetic_energy(sim: &Simulation) -> f64 {
    let m = &sim.model().mass;
    sim.garment_velocities(0)
        .iter()
        .zip(m)
        .map(|(v, m)| 0.5 * *m as f64 * v.length_squared() as f64)
        .sum()
}

fn max_strain(sim: &Simulation) -> f32 {
    let model = sim.model();
    let x = sim.garment_positions(0);
    model
        .triangles
        .iter()
        .zip(&model.triangle_rest)
        .map(|(t, rest)| strain(&t.map(|i| x[i as usize]), rest, &model.materials[0]))
        .fold(0.0, f32::max)
}

/// Hangs the sheet for `seconds` at substep `h` (one substep per step_frame call); returns the
/// kinetic energy at the end (J), the max strain at the end and over the run, and the lowest y (m).
fn hang(h: f32, seconds: f32) -> (f64, f32, f32, f32) {
    let settings = SimSettings {
        substeps: 1,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![hanging_sheet()], settings).expect("valid sheet");
    let steps = (seconds / h).round() as usize;
    let mut peak_strain = 0.0f32;
    for _ in 0..steps {
        sim.step_frame(h, &[], &[None]).expect("step");
        peak_strain = peak_strain.max(max_strain(&sim));
    }
    let ke = kinetic_energy(&sim);
    let final_strain = max_strain(&sim);
    let sag = sim
        .garment_positions(0)
        .iter()
        .map(|p| p.y)
        .fold(0.0, f32::min);
    println!(
        "h = 1/{:.0} s, {seconds} s: KE {ke:.3e} J, max strain {:.3} % (peak {:.3} %), lowest point y = {sag:.4} m",
        1.0 / h,
        100.0 * final_strain,
        100.0 * peak_strain
    );
    (ke, final_strain, peak_strain, sag)
}

/// 10 s at substep `h`: at rest, strain below 5 %, hanging about one sheet length.
fn settles(h: f32) {
    let (ke, final_strain, peak_strain, sag) = hang(h, 10.0);
    assert!(ke < 1e-6, "h = {h}: kinetic energy {ke} J after 10 s");
    assert!(
        final_strain < 0.05,
        "h = {h}: strain at rest {final_strain}"
    );
    assert!(peak_strain < 0.05, "h = {h}: peak strain {peak_strain}");
    // It neither fell nor stayed stuck, and stretched only a little.
    assert!(sag < -0.95 && sag > -1.1, "h = {h}: lowest point {sag}");
}

#[test]
fn pinned_sheet_comes_to_rest_at_h_1_30() {
    settles(1.0 / 30.0);
}

#[test]
fn pinned_sheet_comes_to_rest_at_h_1_120() {
    settles(1.0 / 120.0);
}

/// Without air damping this failed: kinetic energy 1.8e-6 J after 10 s (strain is fine: 1.1 % at rest, 2.1 % peak). The
/// remaining energy is in out-of-plane modes of the hanging sheet — its pendulum swing about the
/// pin line (period ≈ 1.6 s) and fold/membrane modes restored by the gravity-induced tension.
/// BW condition damping leaves rigid motion undamped by construction and sees transverse membrane
/// motion only to second order; the backward-Euler numerical damping that settles these modes at
/// h = 1/30 and 1/120 s shrinks with h; quadratic air drag is negligible at mm/s. Not a CG-accuracy
/// effect (identical with cg_tolerance 1e-7). A linear (viscous) air damping term — what Blender's
/// "air viscosity" provides — was the missing physics; with the default
/// `SimSettings::air_damping` (0.02 kg/(m²·s)) the kinetic energy after 10 s is ≈ 4e-7 J.
#[test]
fn pinned_sheet_strain_stays_below_5_percent_at_h_1_600() {
    let (_, final_strain, peak_strain, sag) = hang(1.0 / 600.0, 3.0);
    assert!(
        final_strain < 0.05 && peak_strain < 0.05,
        "strain {final_strain}, peak {peak_strain}"
    );
    assert!(sag < -0.95 && sag > -1.1, "lowest point {sag}");
}

/// Relies on the default air damping (see the doc comment above).
#[test]
fn pinned_sheet_comes_to_rest_at_h_1_600() {
    settles(1.0 / 600.0);
}
