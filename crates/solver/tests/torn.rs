//! A cloth pulled apart far beyond any real stretch fails the frame with [`SimError::Torn`]
//! (naming the garment and triangle) instead of going on with a meaningless, ever costlier state;
//! below the limit the same bake runs.

use clothbake_solver::fixtures::{hard_pins, sheet, sheet_vertex};
use clothbake_solver::*;
use glam::Vec3;

/// A 12×12, 0.5 m sheet hard-pinned along two opposite edges whose pins are pulled apart by
/// `pull` metres per frame; returns the first error and the frame it came in.
fn pull_apart(pull: f32, limit: f32) -> Option<(usize, SimError)> {
    let n = 12;
    let mut g = sheet("cape", n, 0.5, 1.0);
    let near: Vec<u32> = (0..n).map(|i| sheet_vertex(n, i, 0)).collect();
    let far: Vec<u32> = (0..n).map(|i| sheet_vertex(n, i, n - 1)).collect();
    g.pins = hard_pins(near.iter().chain(&far));
    let rest = g.positions.clone();
    let other = sheet("other", 4, 0.2, -2.0);
    let settings = SimSettings {
        strain_limit: limit,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![other, g], settings).unwrap();
    let mut targets = rest.clone();
    for frame in 1..=20 {
        for &v in &far {
            targets[v as usize] = rest[v as usize] + Vec3::new(0.0, 0.0, pull * frame as f32);
        }
        if let Err(e) = sim.step_frame(1.0 / 24.0, &[], &[None, Some(&targets)]) {
            assert!(sim.state().x.iter().all(|p| p.is_finite()));
            return Some((frame, e));
        }
    }
    None
}

#[test]
fn a_sheet_pulled_ten_times_its_length_fails_as_torn() {
    let (frame, err) = pull_apart(0.5, DEFAULT_STRAIN_LIMIT).expect("the sheet is torn");
    match err {
        SimError::Torn {
            garment,
            strain,
            limit,
            ..
        } => {
            assert_eq!(garment, 1, "the second garment is named");
            assert!(strain > limit && limit == DEFAULT_STRAIN_LIMIT);
        }
        e => panic!("frame {frame}: {e}"),
    }
    // 0.5 m per frame on a 0.5 m sheet: strain 10 after about ten frames.
    assert!((9..=14).contains(&frame), "torn at frame {frame}");
    // With a higher limit the same frames run.
    assert!(pull_apart(0.5, 1e3).is_none());
}
