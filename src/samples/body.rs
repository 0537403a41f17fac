//! The visible body of the generated figure: a low-poly mannequin of capsules and spheres, each part
//! bound rigidly to one joint (weight 1) of the figure's skin. The parts are the body proxies shrunk
//! by [`INSET`], so the mesh lies inside what the cloth collides with and never shows through a
//! garment; the neck and the feet are visual only (no proxy; no garment reaches them).

use super::figure::{
    arm_dir, joint_positions, ARM_RADII, FOREARM, HAND_AT, HAND_RADIUS, J_CHEST, J_HIPS, J_SPINE,
    J_THIGH, J_UPPER_ARM, SHIN, THIGH, UPPER_ARM,
};
use super::mesh::Mesh;

/// m: how far every part lies inside its proxy.
const INSET: f32 = 0.004;
/// Vertices around each part.
const AROUND: u32 = 12;
/// Latitude rings in each end cap, the equator included, the pole excluded.
const CAP_RINGS: u32 = 3;

/// A skinned mesh: every vertex has one joint (in `Skeleton::joints` order) with weight 1.
pub struct SkinnedMesh {
    pub mesh: Mesh,
    pub joints: Vec<[u8; 4]>,
    pub weights: Vec<[f32; 4]>,
}

/// The body in the bind pose (world space, Y up, metres).
pub fn body_mesh() -> SkinnedMesh {
    let jp = joint_positions(true);
    let at = |j: u8, o: [f32; 3]| {
        let p = jp[j as usize];
        [p[0] + o[0], p[1] + o[1], p[2] + o[2]]
    };
    let mut b = SkinnedMesh {
        mesh: Mesh {
            positions: Vec::new(),
            uvs: None,
            triangles: Vec::new(),
        },
        joints: Vec::new(),
        weights: Vec::new(),
    };
    let r = |x: f32| x - INSET;
    // Torso and head: the pelvis, belly, shoulders and head proxies of `figure::proxies`.
    let pelvis = at(J_HIPS, [0.0; 3]);
    b.part(J_HIPS, pelvis, pelvis, r(0.13), r(0.13));
    let belly = [
        at(J_SPINE, [0.0, -0.05, 0.0]),
        at(J_SPINE, [0.0, 0.30, 0.0]),
    ];
    b.part(J_SPINE, belly[0], belly[1], r(0.13), r(0.12));
    let shoulders = [
        at(J_CHEST, [-0.17, 0.1, 0.0]),
        at(J_CHEST, [0.17, 0.1, 0.0]),
    ];
    b.part(J_CHEST, shoulders[0], shoulders[1], r(0.07), r(0.07));
    let neck = [at(J_CHEST, [0.0, 0.14, 0.0]), at(J_CHEST, [0.0, 0.24, 0.0])];
    b.part(J_CHEST, neck[0], neck[1], 0.05, 0.045);
    let head = at(J_CHEST, [0.0, 0.33, 0.0]);
    b.part(J_CHEST, head, head, r(0.11), r(0.11));
    for side in 0..2u8 {
        let (thigh, shin) = (J_THIGH + 2 * side, J_THIGH + 2 * side + 1);
        let knee = at(thigh, [0.0, -THIGH, 0.0]);
        b.part(thigh, at(thigh, [0.0; 3]), knee, r(0.075), r(0.05));
        let ankle = at(shin, [0.0, -SHIN, 0.0]);
        b.part(shin, at(shin, [0.0; 3]), ankle, r(0.05), r(0.035));
        let foot = [
            at(shin, [0.0, -SHIN - 0.02, -0.02]),
            at(shin, [0.0, -SHIN - 0.025, 0.13]),
        ];
        b.part(shin, foot[0], foot[1], 0.035, 0.03);

        let (upper, fore) = (J_UPPER_ARM + 2 * side, J_UPPER_ARM + 2 * side + 1);
        let d = arm_dir(if side == 0 { 1.0 } else { -1.0 });
        let along = |j: u8, l: f32| at(j, [d[0] * l, d[1] * l, 0.0]);
        b.part(
            upper,
            along(upper, 0.0),
            along(upper, UPPER_ARM),
            r(ARM_RADII[0]),
            r(ARM_RADII[1]),
        );
        b.part(
            fore,
            along(fore, 0.0),
            along(fore, FOREARM),
            r(ARM_RADII[1]),
            r(ARM_RADII[2]),
        );
        let hand = along(fore, HAND_AT);
        b.part(fore, hand, hand, r(HAND_RADIUS), r(HAND_RADIUS));
    }
    b
}

impl SkinnedMesh {
    /// Appends a closed capsule from `a` (radius `ra`) to `b` (radius `rb`) bound to `joint`: a
    /// hemisphere on each end joined by the cone between their equators (inside the tapered
    /// capsule, the convex hull of the two spheres). `a == b`: a sphere.
    fn part(&mut self, joint: u8, a: [f32; 3], b: [f32; 3], ra: f32, rb: f32) {
        let axis = sub(b, a);
        let len = dot(axis, axis).sqrt();
        let w = if len > 1e-6 {
            scale(axis, 1.0 / len)
        } else {
            [0.0, 1.0, 0.0]
        };
        // Any unit vector not parallel to w, then an orthonormal frame (u, v, w).
        let helper = if w[1].abs() < 0.9 {
            [0.0, 1.0, 0.0]
        } else {
            [1.0, 0.0, 0.0]
        };
        let u = normalize(cross(helper, w));
        let v = cross(w, u);
        let base = self.mesh.positions.len() as u32;
        let mut push = |p: [f32; 3]| {
            self.mesh.positions.push(p);
            self.joints.push([joint, 0, 0, 0]);
            self.weights.push([1.0, 0.0, 0.0, 0.0]);
        };
        push(add(a, scale(w, -ra)));
        // Latitudes of the rings from the `a` pole to the `b` pole (a sphere shares its equator).
        let mut rings: Vec<([f32; 3], f32, f32)> = Vec::new();
        for k in 1..=CAP_RINGS {
            let phi = -std::f32::consts::FRAC_PI_2 * (1.0 - k as f32 / CAP_RINGS as f32);
            rings.push((a, ra, phi));
        }
        let first_b = if len > 1e-6 { 0 } else { 1 };
        for k in first_b..CAP_RINGS {
            let phi = std::f32::consts::FRAC_PI_2 * k as f32 / CAP_RINGS as f32;
            rings.push((b, rb, phi));
        }
        for &(c, r, phi) in &rings {
            for i in 0..AROUND {
                let t = std::f32::consts::TAU * i as f32 / AROUND as f32;
                let radial = add(scale(u, t.cos()), scale(v, t.sin()));
                push(add(
                    c,
                    add(scale(radial, r * phi.cos()), scale(w, r * phi.sin())),
                ));
            }
        }
        push(add(b, scale(w, rb)));
        let n = rings.len() as u32;
        let ring = |k: u32, i: u32| base + 1 + k * AROUND + i % AROUND;
        let top = base + 1 + n * AROUND;
        let tris = &mut self.mesh.triangles;
        for i in 0..AROUND {
            // Outward winding (counter-clockwise seen from outside).
            tris.push([base, ring(0, i + 1), ring(0, i)]);
            for k in 0..n - 1 {
                tris.push([ring(k, i), ring(k, i + 1), ring(k + 1, i + 1)]);
                tris.push([ring(k, i), ring(k + 1, i + 1), ring(k + 1, i)]);
            }
            tris.push([ring(n - 1, i), ring(n - 1, i + 1), top]);
        }
    }
}

fn add(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scale(a: [f32; 3], s: f32) -> [f32; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn normalize(a: [f32; 3]) -> [f32; 3] {
    scale(a, 1.0 / dot(a, a).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every part is closed (each edge shared by exactly two triangles) and outward facing (the
    /// signed volume is positive and close to the capsules' own).
    #[test]
    fn body_parts_are_closed_and_outward() {
        let b = body_mesh();
        let mut edges = std::collections::HashMap::new();
        for t in &b.mesh.triangles {
            for k in 0..3 {
                let (p, q) = (t[k], t[(k + 1) % 3]);
                *edges.entry((p.min(q), p.max(q))).or_insert(0) += 1;
            }
        }
        assert!(edges.values().all(|&c| c == 2));
        let volume: f32 = b
            .mesh
            .triangles
            .iter()
            .map(|t| {
                let [p, q, r] = t.map(|i| b.mesh.positions[i as usize]);
                dot(p, cross(q, r)) / 6.0
            })
            .sum();
        // As smooth solids the parts hold about 0.066 m^3 (pelvis 0.0084, belly 0.0236, head 0.0050,
        // thighs 2 x 0.0055, the rest smaller); 12-gons with 3-ring caps hold about 93 % of that.
        assert!(volume > 0.055 && volume < 0.066, "{volume}");
        assert_eq!(b.joints.len(), b.mesh.positions.len());
    }
}
