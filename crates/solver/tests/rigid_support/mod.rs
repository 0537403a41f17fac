//! The rigid-body measures the free-fall and spin tests share (rigid_motion.rs, springs.rs,
//! aimex.rs).

use clothbake_solver::Simulation;
use glam::{DVec3, Vec3};

/// Garment 0's (centre of mass, its velocity, angular momentum about it), in f64.
pub fn rigid(sim: &Simulation) -> (DVec3, DVec3, DVec3) {
    let (x, v, m) = (
        sim.garment_positions(0),
        sim.garment_velocities(0),
        &sim.model().mass,
    );
    let total: f64 = m.iter().map(|&m| m as f64).sum();
    let weighted = |p: &[Vec3]| {
        p.iter()
            .zip(m)
            .map(|(p, &m)| p.as_dvec3() * m as f64)
            .sum::<DVec3>()
            / total
    };
    let (c, vc) = (weighted(x), weighted(v));
    let l = x
        .iter()
        .zip(v)
        .zip(m)
        .map(|((x, v), &m)| (x.as_dvec3() - c).cross(v.as_dvec3() - vc) * m as f64)
        .sum();
    (c, vc, l)
}
