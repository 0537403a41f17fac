//! Fail-safe of BFA02 §7.4 (after Provot 1997): vertices of pairs that still collide after the
//! impulse iterations are merged into impact zones, and each zone moves as one rigid body for the
//! substep (momentum-conserving: linear and angular momentum of the zone are kept). A rigidly moving
//! zone cannot intersect itself, so repeating detect → merge → rigidify ends intersection-free.
//! Zones containing immovable vertices follow the rigid motion fitted to those vertices; if they do
//! not move rigidly themselves, they are moved with the zone for this substep.

use super::contact::Contact;
use glam::{DMat3, DQuat, DVec3, Vec3};

/// Union–find over vertices plus the list of vertices that belong to a zone (reused scratch).
#[derive(Debug, Default)]
pub struct ImpactZones {
    parent: Vec<u32>,
    in_zone: Vec<bool>,
    members: Vec<u32>,
    groups: Vec<(u32, u32)>,
}

impl ImpactZones {
    /// Vertices that belong to a zone, in the order they joined.
    pub fn members(&self) -> &[u32] {
        &self.members
    }

    /// Every vertex in its own zone.
    pub fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n as u32);
        self.in_zone.clear();
        self.in_zone.resize(n, false);
        self.members.clear();
    }

    fn find(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let gp = self.parent[self.parent[i as usize] as usize];
            self.parent[i as usize] = gp;
            i = gp;
        }
        i
    }

    /// True when all four stencil vertices already move together rigidly.
    pub fn same_zone(&mut self, c: &Contact) -> bool {
        let r = self.find(c.idx[0]);
        c.idx[1..].iter().all(|&i| self.find(i) == r)
    }

    /// Merges the zones of the stencil's vertices (the smaller root index wins: deterministic).
    pub fn merge(&mut self, c: &Contact) {
        for &i in &c.idx {
            if !self.in_zone[i as usize] {
                self.in_zone[i as usize] = true;
                self.members.push(i);
            }
        }
        let mut root = self.find(c.idx[0]);
        for &i in &c.idx[1..] {
            let r = self.find(i);
            if r != root {
                let (lo, hi) = if r < root { (r, root) } else { (root, r) };
                self.parent[hi as usize] = lo;
                root = lo;
            }
        }
    }

    /// Replaces the velocities of every zone's vertices by the zone's rigid motion over the
    /// substep `h` (s): x1 = x_c + h v_c + R(h ω)(x0 − x_c), v = (x1 − x0)/h, with v_c and ω from the
    /// zone's linear and angular momentum (ω = I⁻¹ L). Returns the number of zones.
    pub fn rigidify(&mut self, x0: &[Vec3], v: &mut [Vec3], h: f32, inv_mass: &[f32]) -> u32 {
        self.groups.clear();
        for k in 0..self.members.len() {
            let m = self.members[k];
            let r = self.find(m);
            self.groups.push((r, m));
        }
        self.groups.sort_unstable();
        let mut zones = 0;
        let mut start = 0;
        while start < self.groups.len() {
            let root = self.groups[start].0;
            let mut end = start;
            while end < self.groups.len() && self.groups[end].0 == root {
                end += 1;
            }
            rigid_zone(&self.groups[start..end], x0, v, h as f64, inv_mass);
            zones += 1;
            start = end;
        }
        zones
    }
}

/// Rigid motion of one zone (`group` = (root, vertex) pairs, sorted by vertex).
fn rigid_zone(group: &[(u32, u32)], x0: &[Vec3], v: &mut [Vec3], h: f64, inv_mass: &[f32]) {
    let pinned = group.iter().any(|&(_, i)| inv_mass[i as usize] <= 0.0);
    // Weight: mass for free zones; pinned zones follow their pinned vertices (equal weights).
    let weight = |i: usize| -> f64 {
        if pinned {
            if inv_mass[i] <= 0.0 {
                1.0
            } else {
                0.0
            }
        } else {
            1.0 / inv_mass[i] as f64
        }
    };
    let mut mass = 0.0;
    let mut xc = DVec3::ZERO;
    let mut vc = DVec3::ZERO;
    for &(_, i) in group {
        let m = weight(i as usize);
        mass += m;
        xc += m * x0[i as usize].as_dvec3();
        vc += m * v[i as usize].as_dvec3();
    }
    if mass <= 0.0 {
        return;
    }
    xc /= mass;
    vc /= mass;
    let mut l = DVec3::ZERO;
    let mut inertia = DMat3::ZERO;
    for &(_, i) in group {
        let m = weight(i as usize);
        let r = x0[i as usize].as_dvec3() - xc;
        l += m * r.cross(v[i as usize].as_dvec3() - vc);
        inertia += m * (DMat3::from_diagonal(DVec3::splat(r.length_squared())) - outer(r, r));
    }
    let trace = inertia.x_axis.x + inertia.y_axis.y + inertia.z_axis.z;
    let reg = inertia + DMat3::from_diagonal(DVec3::splat(1e-9 * trace + 1e-300));
    let det = reg.determinant();
    let omega = if det.is_finite() && det > 0.0 {
        reg.inverse() * l
    } else {
        DVec3::ZERO
    };
    let rot = DQuat::from_scaled_axis(omega * h);
    let rigid = |i: usize| -> DVec3 {
        let p0 = x0[i].as_dvec3();
        (xc + h * vc + rot * (p0 - xc) - p0) / h
    };
    // Immovable vertices keep their velocities only if they already move with the fitted rigid
    // motion; otherwise (e.g. several held vertices sliding differently) the zone would not be
    // rigid and could still cross itself, so they are moved rigidly too (the pin/contact gives
    // way for this substep; guaranteed crossing-free motion comes first).
    let scale = group.iter().fold(0.0f64, |m, &(_, i)| {
        m.max(v[i as usize].as_dvec3().length())
    }) + 1e-3;
    let consistent = group
        .iter()
        .filter(|&&(_, i)| inv_mass[i as usize] <= 0.0)
        .all(|&(_, i)| (rigid(i as usize) - v[i as usize].as_dvec3()).length() <= 1e-6 * scale);
    for &(_, i) in group {
        let i = i as usize;
        if inv_mass[i] <= 0.0 && consistent {
            continue;
        }
        v[i] = rigid(i).as_vec3();
    }
}

fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}
