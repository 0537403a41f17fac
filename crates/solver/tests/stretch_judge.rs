//! The step-size controller judges the stretch (BW §6: "a drastic change in stretch"), not
//! |strain|: a sheet draping over a sphere (self-collision on) compresses into folds, and a substep whose only large
//! rise is that compression is kept, while every kept substep's stretch rose by at most
//! `strain_jump` (no pins: the rule is then exactly max stretch(x1) − max stretch(x0)).

use clothbake_solver::fixtures::sheet;
use clothbake_solver::{
    ColliderShape, MovingCollider, SelfCollisionParams, SimSettings, Simulation,
};
use glam::Vec3;

#[test]
fn compression_does_not_reject_but_stretch_does() {
    let mut g = sheet("sheet", 32, 0.8, 0.2);
    g.thickness = 0.005;
    g.self_collision = Some(SelfCollisionParams {
        thickness: 0.005,
        friction: 0.1,
    });
    // The jump rule alone: its floor would keep every substep of this drape (its stretch stays
    // below 0.08); tests/adaptive.rs tests the floor.
    let settings = SimSettings {
        strain_jump_floor: 0.0,
        ..SimSettings::default()
    };
    let (sj, floor) = (settings.strain_jump, settings.max_halvings);
    let nominal = 1.0 / 24.0 / settings.substeps as f32;
    let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
    let colliders = [MovingCollider::fixed(ColliderShape::Sphere {
        center: Vec3::ZERO,
        radius: 0.15,
    })];
    let (mut kept_compressions, mut stretch_rejections) = (0, 0);
    let mut last_strain: Option<f32> = None;
    for _ in 0..48 {
        sim.step_frame(1.0 / 24.0, &colliders, &[None])
            .expect("step");
        for s in sim.substep_reports() {
            // Without pins the jump is the rise of the largest stretch over the start's.
            assert_eq!(s.strain_jump, s.max_stretch - s.start_strain);
            assert!(s.max_stretch <= s.max_strain, "stretch is part of |strain|");
            if s.rejected.is_some() {
                stretch_rejections += usize::from(s.strain_jump > sj);
                continue;
            }
            let at_floor = s.h <= nominal / (1u32 << floor) as f32 * 1.001;
            assert!(
                s.strain_jump <= sj || at_floor,
                "kept a substep whose stretch rose by {}",
                s.strain_jump
            );
            // The start of a kept substep is the end of the last kept one.
            if let Some(before) = last_strain {
                if s.max_strain - before > sj && !at_floor {
                    kept_compressions += 1;
                }
            }
            last_strain = Some(s.max_strain);
        }
    }
    // The draping really compressed the sheet past the bound in kept substeps above the floor
    // (the earlier |strain| rule would have rejected them: 3 here), and the stretch rule still
    // rejected some (2).
    assert!(
        kept_compressions > 0,
        "no kept substep with a compression rise"
    );
    assert!(stretch_rejections > 0, "no substep rejected for stretch");
}
