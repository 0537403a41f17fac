//! Linear air damping (`SimSettings::air_damping`, f_i = −c·A_i·(v_i − v_air)).
//!
//! - A freely falling horizontal sheet reaches the terminal velocity v_t = m·g/(c·A) = ρ·g/c
//!   (ρ the areal density): backward Euler has exactly this fixed point, v = v + h·(g − (c/ρ)·v),
//!   so after many time constants τ = ρ/c the sheet's velocity matches v_t to float precision.
//! - With c = 0 the solver reproduces the behaviour from before air damping existed bit-for-bit.

use clothbake_solver::fixtures::{sheet, sheet_vertex};
use clothbake_solver::*;

/// FNV-1a over the bit patterns of every position and velocity.
fn fingerprint(sim: &Simulation) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let (x, v) = (sim.garment_positions(0), sim.garment_velocities(0));
    for p in x.iter().chain(v) {
        for c in p.to_array() {
            for byte in c.to_bits().to_le_bytes() {
                h = (h ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    h
}

/// An 8 × 8 sheet pinned at two corners, 10 frames of 1/30 s (5 substeps each) under gravity.
fn short_swing(settings: SimSettings) -> u64 {
    let n = 8;
    let mut g = sheet("sheet", n, 1.0, 0.0);
    g.pins = vec![
        Pin {
            vertex: sheet_vertex(n, 0, 0),
            weight: 1.0,
        },
        Pin {
            vertex: sheet_vertex(n, n - 1, 0),
            weight: 1.0,
        },
    ];
    let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
    for _ in 0..10 {
        sim.step_frame(1.0 / 30.0, &[], &[None]).expect("step");
    }
    fingerprint(&sim)
}

/// Fingerprint of `short_swing` with c = 0. First recorded from the solver before air damping was
/// added (commit eec3231: 0x0421_d2f7_a0a6_0888); re-recorded (identical with RAYON_NUM_THREADS=1)
/// when the MPCG preconditioner became block incomplete Cholesky and hinge blocks became rank one,
/// and again when the default CG tolerance became 3e-4, and when the system matrix went to
/// symmetric half storage with the fused MPCG passes (unit-triangular IC sweeps, δ from the forward
/// sweep) and the triangle blocks came in compact form (forces::stretch_shear_system): each changed
/// the solver's arithmetic, and when IC(0) took in the bending couplings (2026-11-26), and when the default CG tolerance became
/// 1e-3 (2026-11-26), 3e-3 and 1e-2 (2026-11-27), and when the element terms took the velocities
/// by their differences (2026-11-27, Galilean invariance). The assembly skips the damping term entirely at c = 0, so
/// c = 0 still is the undamped solver; a change to the solver's arithmetic legitimately changes
/// this value, air damping at c = 0 must not.
const FINGERPRINT_WITHOUT_AIR_DAMPING: u64 = 0x14c0_7854_af78_822f;

#[test]
fn zero_air_damping_reproduces_the_undamped_solver_bit_for_bit() {
    let settings = SimSettings {
        air_damping: 0.0,
        ..SimSettings::default()
    };
    assert_eq!(
        short_swing(settings),
        FINGERPRINT_WITHOUT_AIR_DAMPING,
        "c = 0 changed the result"
    );
    // And the damping does act: the default c gives a different trajectory.
    assert_ne!(
        short_swing(SimSettings::default()),
        FINGERPRINT_WITHOUT_AIR_DAMPING
    );
}

/// A horizontal 1 m² cotton sheet falls freely with c = 1 kg/(m²·s): τ = ρ/c = 0.15 s, so after
/// 2 s (≈ 13 τ, remaining transient e^-13 ≈ 2e-6) every vertex moves at v_t = m·g/(c·A) within 0.1 %.
#[test]
fn falling_sheet_reaches_terminal_velocity() {
    let c = 1.0f32;
    let settings = SimSettings {
        air_damping: c,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![sheet("sheet", 10, 1.0, 0.0)], settings).expect("valid");
    let model = sim.model();
    let mass: f32 = model.mass.iter().sum();
    let area: f32 = model.area.iter().sum();
    assert!((area - 1.0).abs() < 1e-5, "lumped areas sum to {area} m²");
    let g = SimSettings::default().gravity.length();
    let v_t = mass * g / (c * area);
    // Cotton: 0.15 kg/m² → 1.4715 m/s; a real check that the model's numbers are what we think.
    assert!((v_t - 1.4715).abs() < 1e-3, "v_t = {v_t}");
    for _ in 0..60 {
        sim.step_frame(1.0 / 30.0, &[], &[None]).expect("step");
    }
    for (i, v) in sim.garment_velocities(0).iter().enumerate() {
        assert!(
            (v.y + v_t).abs() < 1e-3 * v_t && v.x.abs() < 1e-4 && v.z.abs() < 1e-4,
            "vertex {i}: velocity {v}, terminal {v_t} m/s"
        );
    }
}

#[test]
fn negative_or_non_finite_air_damping_is_rejected() {
    for c in [-0.01, f32::NAN, f32::INFINITY] {
        let settings = SimSettings {
            air_damping: c,
            ..SimSettings::default()
        };
        match Simulation::new(vec![sheet("sheet", 3, 1.0, 0.0)], settings) {
            Err(ModelError::Settings { field, .. }) => assert_eq!(field, "air_damping"),
            Err(e) => panic!("c = {c}: wrong error {e}"),
            Ok(_) => panic!("c = {c} accepted"),
        }
    }
}
