//! Fail-safe of BFA02 §7.4 (after Provot 1997): vertices of pairs that still collide after the
//! impulse iterations are merged into impact zones, and each zone moves as one rigid body for the
//! substep. A rigidly moving zone cannot cross itself, so repeating detect → merge → rigidify ends
//! crossing-free.
//!
//! The rigid motion is the linearised field v(x) = v_c + ω × (x0 − x_c): along the substep the zone
//! is mapped by I + t·h[ω]×, which is invertible for every ω and never shortens a distance, so the
//! linear path x0 → x0 + h·v that continuous collision detection checks stays crossing-free. The
//! field is the least-squares fit (mass-weighted, i.e. momentum-conserving for free zones) to the
//! members' velocities, subject to the constraints of BFA02 §7.4 extended to bodies:
//! - pinned vertices (inverse mass 0) have infinite mass: the field must reproduce their
//!   prescribed velocity, and they keep it exactly;
//! - a vertex resting on a body (outward normal n) may not move further into it: n·v(x) ≥ n·v_now
//!   (active-set least squares).
//!
//! A zone whose constraints admit no rigid motion (pins moving non-rigidly, a body contact that
//! cannot be kept) is not rigid: its pins and contacts keep their motion, the rest follows the
//! fit, and collisions left inside it are reported as unresolved.

use super::contact::{Contact, Mobility};
use glam::{DVec3, Vec3};

/// Weight of a constraint row relative to a free vertex of the zone's mean mass (penalty form of
/// the equality constraints; residual ≈ 1e-8 of the velocity mismatch).
const CONSTRAINT_WEIGHT: f64 = 1e8;
/// Active-set passes for the body-contact inequalities.
const MAX_ACTIVE_SET_PASSES: usize = 12;
/// A constraint counts as met when the fitted motion is within this fraction of the thickness of
/// the constrained velocity over the substep.
const CONSTRAINT_TOLERANCE: f64 = 1e-3;

/// Union–find over vertices plus the list of vertices that belong to a zone (reused scratch).
#[derive(Debug, Default)]
pub struct ImpactZones {
    parent: Vec<u32>,
    in_zone: Vec<bool>,
    /// Per root: did the zone's last rigidification meet all its constraints?
    rigid: Vec<bool>,
    members: Vec<u32>,
    groups: Vec<(u32, u32)>,
    active: Vec<bool>,
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
        self.rigid.clear();
        self.rigid.resize(n, false);
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

    /// True when all four stencil vertices belong to one zone that moves rigidly (so the pair
    /// cannot cross during the substep).
    pub fn resolved(&mut self, c: &Contact) -> bool {
        let r = self.find(c.idx[0]);
        self.rigid[r as usize] && c.idx[1..].iter().all(|&i| self.find(i) == r)
    }

    /// Merges the zones of the stencil's vertices (the smaller root index wins: deterministic).
    /// Returns false if they already formed one zone.
    pub fn merge(&mut self, c: &Contact) -> bool {
        let mut changed = false;
        for &i in &c.idx {
            if !self.in_zone[i as usize] {
                self.in_zone[i as usize] = true;
                self.members.push(i);
                changed = true;
            }
        }
        let mut root = self.find(c.idx[0]);
        for &i in &c.idx[1..] {
            let r = self.find(i);
            if r != root {
                let (lo, hi) = if r < root { (r, root) } else { (root, r) };
                self.parent[hi as usize] = lo;
                root = lo;
                changed = true;
            }
        }
        changed
    }

    /// Replaces the velocities of every zone's members by the zone's constrained rigid motion over
    /// the substep `h` (s) (see the module doc); `thick`: per-vertex thickness (m). Returns the
    /// number of zones.
    pub fn rigidify(
        &mut self,
        x0: &[Vec3],
        v: &mut [Vec3],
        h: f32,
        mob: &Mobility,
        thick: &[f32],
    ) -> u32 {
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
            let group = &self.groups[start..end];
            self.active.clear();
            self.active.resize(group.len(), false);
            self.rigid[root as usize] =
                rigid_zone(group, x0, v, h as f64, mob, thick, &mut self.active);
            zones += 1;
            start = end;
        }
        zones
    }
}

/// Constraint rows of one member: (row g ∈ R⁶ with v(x) = g·(v_c, ω), target velocity).
type Row = ([f64; 6], f64);

/// Row of the velocity component along unit `e` at offset `r` from the zone centre:
/// e·(v_c + ω × r) = e·v_c + (r × e)·ω.
fn row(e: DVec3, r: DVec3, target: f64) -> Row {
    let c = r.cross(e);
    ([e.x, e.y, e.z, c.x, c.y, c.z], target)
}

/// Sets the velocities of one zone (`group` = (root, vertex) pairs sorted by vertex) and returns
/// whether its motion is rigid and meets every pin and body constraint.
fn rigid_zone(
    group: &[(u32, u32)],
    x0: &[Vec3],
    v: &mut [Vec3],
    h: f64,
    mob: &Mobility,
    thick: &[f32],
    active: &mut [bool],
) -> bool {
    let inv_mass = |i: u32| mob.inv_mass[i as usize] as f64;
    let (mut free_mass, mut free_count) = (0.0, 0usize);
    let mut centre = DVec3::ZERO;
    let mut min_thick = f64::INFINITY;
    for &(_, i) in group {
        centre += x0[i as usize].as_dvec3();
        min_thick = min_thick.min(thick[i as usize] as f64);
        if inv_mass(i) > 0.0 {
            free_mass += 1.0 / inv_mass(i);
            free_count += 1;
        }
    }
    centre /= group.len() as f64;
    let unit_mass = if free_count > 0 {
        free_mass / free_count as f64
    } else {
        1.0
    };
    let big = CONSTRAINT_WEIGHT * unit_mass;
    let tol = CONSTRAINT_TOLERANCE * min_thick / h;
    let axes = [DVec3::X, DVec3::Y, DVec3::Z];
    let fitted = |theta: &[f64; 6], i: u32| -> DVec3 {
        let r = x0[i as usize].as_dvec3() - centre;
        DVec3::new(theta[0], theta[1], theta[2]) + DVec3::new(theta[3], theta[4], theta[5]).cross(r)
    };
    let mut theta = [0.0f64; 6];
    for _ in 0..MAX_ACTIVE_SET_PASSES {
        let mut a = [[0.0f64; 6]; 6];
        let mut b = [0.0f64; 6];
        let mut add = |(g, t): Row, w: f64| {
            for p in 0..6 {
                b[p] += w * g[p] * t;
                for q in 0..6 {
                    a[p][q] += w * g[p] * g[q];
                }
            }
        };
        for (k, &(_, i)) in group.iter().enumerate() {
            let r = x0[i as usize].as_dvec3() - centre;
            let vi = v[i as usize].as_dvec3();
            let im = inv_mass(i);
            let w = if im > 0.0 { 1.0 / im } else { big };
            for e in axes {
                add(row(e, r, e.dot(vi)), w);
            }
            if active[k] {
                let n = mob.body_normal(i as usize).as_dvec3();
                add(row(n, r, n.dot(vi)), big);
            }
        }
        match solve6(a, b) {
            Some(t) => theta = t,
            None => return false,
        }
        let mut added = false;
        for (k, &(_, i)) in group.iter().enumerate() {
            let n = mob.body_normal(i as usize).as_dvec3();
            if !active[k] && inv_mass(i) > 0.0 && n != DVec3::ZERO {
                let vi = v[i as usize].as_dvec3();
                if n.dot(fitted(&theta, i)) < n.dot(vi) - tol {
                    active[k] = true;
                    added = true;
                }
            }
        }
        if !added {
            break;
        }
    }
    let mut rigid = true;
    for &(_, i) in group {
        let vi = v[i as usize].as_dvec3();
        let f = fitted(&theta, i);
        let n = mob.body_normal(i as usize).as_dvec3();
        if inv_mass(i) <= 0.0 {
            rigid &= (f - vi).length() <= tol;
        } else if n.dot(f) < n.dot(vi) - tol {
            rigid = false;
        }
    }
    for &(_, i) in group {
        let i = i as usize;
        if mob.inv_mass[i] <= 0.0 {
            continue;
        }
        let f = fitted(&theta, i as u32);
        let n = mob.body_normal(i).as_dvec3();
        let vi = v[i].as_dvec3();
        // A body contact the fit could not keep keeps its own normal velocity.
        let f = if n.dot(f) < n.dot(vi) {
            f + (n.dot(vi) - n.dot(f)) * n
        } else {
            f
        };
        v[i] = f.as_vec3();
    }
    rigid
}

/// Solves the 6×6 symmetric positive semi-definite system A θ = b by Cholesky factorisation,
/// with a relative diagonal shift of 1e-12 so that rank-deficient fits (collinear members, zones
/// of pinned vertices only) pick the smallest solution. None if not finite.
fn solve6(mut a: [[f64; 6]; 6], b: [f64; 6]) -> Option<[f64; 6]> {
    let scale = (0..6).map(|k| a[k][k]).fold(0.0f64, f64::max);
    if !(scale.is_finite() && scale > 0.0) {
        return None;
    }
    for (k, row) in a.iter_mut().enumerate() {
        row[k] += 1e-12 * scale;
    }
    let mut l = [[0.0f64; 6]; 6];
    for i in 0..6 {
        for j in 0..=i {
            let s = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s.is_nan() || s <= 0.0 {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    let mut y = [0.0f64; 6];
    for i in 0..6 {
        let mut s = b[i];
        for k in 0..i {
            s -= l[i][k] * y[k];
        }
        y[i] = s / l[i][i];
    }
    let mut x = [0.0f64; 6];
    for i in (0..6).rev() {
        let mut s = y[i];
        for k in i + 1..6 {
            s -= l[k][i] * x[k];
        }
        x[i] = s / l[i][i];
    }
    x.iter().all(|t| t.is_finite()).then_some(x)
}
