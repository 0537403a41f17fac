//! The impact-zone fail-safe and the impulses with constrained vertices (SelfCollision API
//! directly): pinned vertices (inverse mass 0) keep their prescribed motion exactly, even inside a
//! zone, vertices resting on a body are never pushed into it, and what cannot be resolved is
//! reported as `unresolved` instead of being hidden.

use clothbake_solver::self_collision::{
    count_intersections, SelfCollision, SelfCollisionParams, SelfCollisionReport,
    SelfCollisionTopology,
};
use glam::Vec3;

const THICKNESS: f32 = 2e-3;

/// Small square grids ("plates") of 3 × 3 vertices, 2 cm wide, stacked along y at the given
/// heights, slightly jittered (deterministically) so that nothing is exactly parallel.
fn stack(heights: &[f32]) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut x = Vec::new();
    let mut tris = Vec::new();
    for (layer, &y) in heights.iter().enumerate() {
        let base = x.len() as u32;
        for j in 0..3 {
            for i in 0..3 {
                let k = (layer * 9 + j * 3 + i) as f32;
                let jitter = 1e-4 * (k * 1.7).sin();
                let shift = 7e-4 * (layer as f32 * 2.3).sin();
                x.push(Vec3::new(
                    i as f32 * 0.01 + shift,
                    y + jitter,
                    j as f32 * 0.01 - shift,
                ));
            }
        }
        let id = |i: u32, j: u32| base + j * 3 + i;
        for j in 0..2 {
            for i in 0..2 {
                tris.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
                tris.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
            }
        }
    }
    (x, tris)
}

fn resolve(
    x0: &[Vec3],
    v: &mut [Vec3],
    tris: &[[u32; 3]],
    inv_mass: &[f32],
    body_normal: &[Vec3],
    h: f32,
) -> SelfCollisionReport {
    let params = [SelfCollisionParams {
        thickness: THICKNESS,
        friction: 0.3,
    }];
    let mut sc =
        SelfCollision::new(&SelfCollisionTopology::single(x0.len(), tris.to_vec())).unwrap();
    sc.resolve_with_bodies(x0, v, h, inv_mass, body_normal, &params)
}

fn end_positions(x0: &[Vec3], v: &[Vec3], h: f32) -> Vec<Vec3> {
    x0.iter().zip(v).map(|(p, u)| *p + *u * h).collect()
}

/// A pinned plate driven 3 cm down in one substep onto a stack of twelve free plates 3 mm apart:
/// the impulses cannot clear the stack within their passes, so the impact zones take over. The
/// zone containing the plate moves with the plate's prescribed motion (infinite mass, BFA02
/// §7.4): the pins keep their velocity bit for bit, nothing crosses, nothing is left unresolved,
/// and the stack keeps its order below the plate.
#[test]
fn impact_zone_with_pinned_vertices_moves_with_the_pins() {
    let layers = 12;
    let heights: Vec<f32> = (0..=layers).map(|k| 0.003 * k as f32).collect();
    let (x0, tris) = stack(&heights);
    let h = 1.0 / 240.0;
    let plate = layers * 9..(layers + 1) * 9;
    let mut inv_mass = vec![50.0f32; x0.len()];
    let mut v = vec![Vec3::ZERO; x0.len()];
    for i in plate.clone() {
        inv_mass[i] = 0.0;
        v[i] = Vec3::new(0.1, -0.03 / h, 0.05);
    }
    let prescribed = v.clone();
    let r = resolve(&x0, &mut v, &tris, &inv_mass, &[], h);
    eprintln!("{r:?}");
    assert!(r.zone_iterations > 0, "the impact zones were not needed");
    assert_eq!(r.unresolved, 0);
    for i in plate.clone() {
        assert_eq!(v[i], prescribed[i], "pinned vertex {i} moved off its pin");
    }
    let x1 = end_positions(&x0, &v, h);
    assert_eq!(count_intersections(&x1, &tris), 0);
    let mean_y = |k: usize| (k * 9..(k + 1) * 9).map(|i| x1[i].y).sum::<f32>() / 9.0;
    for k in 0..layers {
        assert!(
            mean_y(k) < mean_y(k + 1),
            "layer {k} ({}) not below layer {} ({})",
            mean_y(k),
            k + 1,
            mean_y(k + 1)
        );
    }
}

/// A pinned plate driven straight through a pinned floor with a free plate between them: no
/// motion can avoid the crossing without moving a pin. The pins keep their prescribed motion
/// exactly and the stage reports the collisions it could not resolve.
#[test]
fn conflicting_pins_keep_their_motion_and_are_reported_unresolved() {
    let (x0, tris) = stack(&[0.0, 0.003, 0.006]);
    let h = 1.0 / 240.0;
    let mut inv_mass = vec![50.0f32; x0.len()];
    let mut v = vec![Vec3::ZERO; x0.len()];
    for i in (0..9).chain(18..27) {
        inv_mass[i] = 0.0;
    }
    for vi in &mut v[18..27] {
        *vi = Vec3::new(0.0, -0.012 / h, 0.0);
    }
    let prescribed = v.clone();
    let r = resolve(&x0, &mut v, &tris, &inv_mass, &[], h);
    eprintln!("{r:?}");
    assert!(
        r.unresolved > 0,
        "an unresolvable crossing was not reported"
    );
    for i in (0..9).chain(18..27) {
        assert_eq!(v[i], prescribed[i], "pinned vertex {i} moved off its pin");
    }
    assert!(v.iter().all(|u| u.is_finite()));
}

/// A plate resting on a body (outward normal +y for each of its vertices, at rest) is hit by a
/// plate falling at 2 m/s from 3 mm above. Cloth–cloth impulses and zones may push the lower
/// plate sideways or up, never down into the body; the upper plate is stopped on top of it.
#[test]
fn cloth_resting_on_a_body_is_not_pushed_into_it() {
    let (x0, tris) = stack(&[0.0, 0.003]);
    let h = 1.0 / 240.0;
    let inv_mass = vec![50.0f32; x0.len()];
    let mut v = vec![Vec3::ZERO; x0.len()];
    for vi in &mut v[9..18] {
        *vi = Vec3::new(0.05, -2.0, 0.0);
    }
    let mut body_normal = vec![Vec3::ZERO; x0.len()];
    for n in &mut body_normal[..9] {
        *n = Vec3::Y;
    }
    let r = resolve(&x0, &mut v, &tris, &inv_mass, &body_normal, h);
    eprintln!("{r:?}");
    assert_eq!(r.unresolved, 0);
    assert!(r.collisions + r.repulsions > 0, "the plates never met");
    // The zone fit may leave a body contact at most 1e-3 × thickness deeper over the substep.
    for (i, u) in v[..9].iter().enumerate() {
        assert!(
            u.y * h >= -1e-3 * THICKNESS,
            "vertex {i} pushed into the body: v = {u}"
        );
    }
    let x1 = end_positions(&x0, &v, h);
    assert_eq!(count_intersections(&x1, &tris), 0);
    for i in 9..18 {
        assert!(
            x1[i].y > x1[i - 9].y,
            "vertex {i} went below the lower plate"
        );
    }
}

/// Twelve free plates 3 mm apart on a plate resting on a body (outward normal +y), hit by a heavy
/// free plate moving 3 cm down in one substep: the impulses run out of passes and the impact zone
/// takes over. Its rigid motion is constrained by the body contacts (active set), so the stack is
/// stopped instead of being carried into the body; nothing crosses and nothing is left unresolved.
#[test]
fn impact_zone_resting_on_a_body_is_not_carried_into_it() {
    let layers = 13;
    let heights: Vec<f32> = (0..=layers).map(|k| 0.003 * k as f32).collect();
    let (x0, tris) = stack(&heights);
    let h = 1.0 / 240.0;
    let top = layers * 9..(layers + 1) * 9;
    let mut inv_mass = vec![50.0f32; x0.len()];
    let mut v = vec![Vec3::ZERO; x0.len()];
    for i in top.clone() {
        inv_mass[i] = 0.5;
        v[i] = Vec3::new(0.1, -0.03 / h, 0.05);
    }
    let mut body_normal = vec![Vec3::ZERO; x0.len()];
    for n in &mut body_normal[..9] {
        *n = Vec3::Y;
    }
    let r = resolve(&x0, &mut v, &tris, &inv_mass, &body_normal, h);
    eprintln!("{r:?}");
    assert!(r.zone_iterations > 0, "the impact zones were not needed");
    assert_eq!(r.unresolved, 0);
    for (i, u) in v[..9].iter().enumerate() {
        assert!(
            u.y * h >= -1e-3 * THICKNESS,
            "vertex {i} carried into the body: v = {u}"
        );
    }
    let x1 = end_positions(&x0, &v, h);
    assert_eq!(count_intersections(&x1, &tris), 0);
    let mean_y = |k: usize| (k * 9..(k + 1) * 9).map(|i| x1[i].y).sum::<f32>() / 9.0;
    for k in 0..layers {
        assert!(
            mean_y(k) < mean_y(k + 1),
            "layer {k} not below layer {}",
            k + 1
        );
    }
}
