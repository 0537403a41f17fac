//! A small generated character for the skirt, cape and dress samples: a skeleton (hips, spine, chest,
//! thighs, shins; arms optional) with a procedural walk or run cycle (forward travel on the hips:
//! root motion), capsule and sphere body proxies marked with node extras `{"clothbake": {...}}`, and
//! the garment either as an unskinned mesh node parented to a joint ([`figure_glb`]) or, with arms and
//! a skinned low-poly body (`body.rs`), as a mesh skinned to the same skeleton
//! ([`dressed_figure_glb`]).
//!
//! Y up, metres, facing +z. Animation time 0 is the bind pose; the gait fades in over `RAMP` seconds
//! so the garment starts at rest exactly as modelled.

use serde_json::json;

use super::body::body_mesh;
use super::glb::{quat, translation, GltfBuilder, SkinWeights};
use super::mesh::Mesh;

/// Seconds over which the gait amplitude ramps from 0 to 1 (smoothstep).
const RAMP: f32 = 0.5;
/// Animation keys per second.
const KEY_RATE: f32 = 30.0;

pub const HIP_HEIGHT: f32 = 0.95; // m, hips joint above the ground
pub const SPINE_OFFSET: f32 = 0.08; // m, spine joint above the hips joint
pub const CHEST_OFFSET: f32 = 0.30; // m, chest joint above the spine joint
pub const HIP_WIDTH: f32 = 0.09; // m, thigh joints left/right of the hips joint
pub const THIGH: f32 = 0.42; // m
pub const SHIN: f32 = 0.42; // m

/// Parameters of a procedural gait.
pub struct Gait {
    pub cycle: f32,    // s, one full stride (left + right step)
    pub speed: f32,    // m/s forward (+z); 0 walks in place
    pub swing: f32,    // rad, thigh swing amplitude
    pub knee: f32,     // rad, largest knee bend
    pub lean: f32,     // rad, forward lean of the spine
    pub bob: f32,      // m, vertical bob amplitude of the hips
    pub duration: f32, // s, animation length
}

/// The joint a garment node hangs from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Attach {
    Hips,
    Chest,
}

fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Adds a marked capsule proxy node under `parent`: from `origin` (in the parent's space) along
/// `dir` (a unit axis: the node's +Y is rotated onto it) for `length` m, radii `ra` at the origin and
/// `rb` at the far end. clothbake-io's convention: a mesh-less node with extras
/// `{"clothbake": {"collider": "capsule", "length", "radius_a", "radius_b"}}` is a capsule from
/// the node's origin along its +Y.
#[allow(clippy::too_many_arguments)]
fn capsule(
    g: &mut GltfBuilder,
    parent: usize,
    name: &str,
    origin: [f32; 3],
    dir: Axis,
    length: f32,
    ra: f32,
    rb: f32,
) {
    let rotation = match dir {
        Axis::Up => [0.0, 0.0, 0.0, 1.0],
        Axis::Down => quat([1.0, 0.0, 0.0], std::f32::consts::PI),
        Axis::Right => quat([0.0, 0.0, 1.0], -std::f32::consts::FRAC_PI_2),
        // A unit direction in the xy-plane: rotate +Y about z onto it.
        Axis::Along(d) => quat([0.0, 0.0, 1.0], (-d[0]).atan2(d[1])),
    };
    g.node(
        Some(parent),
        json!({"name": format!("CB_CAPSULE_{name}"), "translation": origin, "rotation": rotation,
               "extras": {"clothbake": {"collider": "capsule", "length": length,
                                        "radius_a": ra, "radius_b": rb}}}),
    );
}

/// Directions a capsule proxy can point in its parent's space.
#[derive(Clone, Copy)]
enum Axis {
    Up,
    Down,
    Right,
    /// A unit direction in the parent's xy-plane.
    Along([f32; 3]),
}

/// Adds a marked sphere proxy node under `parent` (a sphere of `radius` at the node's origin).
fn sphere(g: &mut GltfBuilder, parent: usize, name: &str, center: [f32; 3], radius: f32) {
    g.node(
        Some(parent),
        json!({"name": format!("CB_SPHERE_{name}"), "translation": center,
               "extras": {"clothbake": {"collider": "sphere", "radius": radius}}}),
    );
}

/// The joints of the figure (node indices), built by [`skeleton`].
pub struct Skeleton {
    pub hips: usize,
    pub spine: usize,
    pub chest: usize,
    /// (thigh, shin), left then right.
    pub legs: [(usize, usize); 2],
    /// (upper arm, forearm), left then right; only figures built with arms.
    pub arms: Option<[(usize, usize); 2]>,
}

impl Skeleton {
    /// Every joint in skin order: hips, spine, chest, thigh/shin L, thigh/shin R, then (with arms)
    /// upper arm/forearm L, upper arm/forearm R. The `J_*` constants index this list.
    pub fn joints(&self) -> Vec<usize> {
        let mut j = vec![self.hips, self.spine, self.chest];
        for (a, b) in self.legs {
            j.extend([a, b]);
        }
        for (a, b) in self.arms.into_iter().flatten() {
            j.extend([a, b]);
        }
        j
    }
}

/// Skin joint indices (positions in [`Skeleton::joints`]).
pub const J_HIPS: u8 = 0;
pub const J_SPINE: u8 = 1;
pub const J_CHEST: u8 = 2;
/// Thigh of side 0 (left) / 1 (right): `J_THIGH + 2 * side`; the shin follows it.
pub const J_THIGH: u8 = 3;
/// Upper arm of side 0 / 1: `J_UPPER_ARM + 2 * side`; the forearm follows it.
pub const J_UPPER_ARM: u8 = 7;

pub const SHOULDER_X: f32 = 0.2; // m, upper-arm joints left/right of the chest joint
pub const SHOULDER_Y: f32 = 0.07; // m, upper-arm joints above the chest joint
pub const UPPER_ARM: f32 = 0.28; // m
pub const FOREARM: f32 = 0.25; // m
/// rad, the arms hang this far out from the body (abduction in the bind pose), clear of a skirt.
pub const ARM_SPREAD: f32 = 0.24;

/// Bind-pose world position of every joint, in [`Skeleton::joints`] order (all joints have an
/// identity bind rotation, so an inverse bind matrix is the translation by minus this).
pub fn joint_positions(arms: bool) -> Vec<[f32; 3]> {
    let hy = HIP_HEIGHT;
    let mut p = vec![
        [0.0, hy, 0.0],
        [0.0, hy + SPINE_OFFSET, 0.0],
        [0.0, hy + SPINE_OFFSET + CHEST_OFFSET, 0.0],
    ];
    for x in [HIP_WIDTH, -HIP_WIDTH] {
        p.push([x, hy - 0.05, 0.0]);
        p.push([x, hy - 0.05 - THIGH, 0.0]);
    }
    if arms {
        let top = hy + SPINE_OFFSET + CHEST_OFFSET + SHOULDER_Y;
        for side in [1.0, -1.0] {
            let d = arm_dir(side);
            let x = side * SHOULDER_X;
            p.push([x, top, 0.0]);
            p.push([x + d[0] * UPPER_ARM, top + d[1] * UPPER_ARM, 0.0]);
        }
    }
    p
}

/// Unit direction of the arm of `side` (+1 left, -1 right) in the bind pose: down and out.
pub fn arm_dir(side: f32) -> [f32; 3] {
    [side * ARM_SPREAD.sin(), -ARM_SPREAD.cos(), 0.0]
}

/// Adds the joints (node hierarchy under a root `Hips`) with their bind-pose translations.
pub fn skeleton(g: &mut GltfBuilder, arms: bool) -> Skeleton {
    let hips = g.node(
        None,
        json!({"name": "Hips", "translation": [0.0, HIP_HEIGHT, 0.0]}),
    );
    let spine = g.node(
        Some(hips),
        json!({"name": "Spine", "translation": [0.0, SPINE_OFFSET, 0.0]}),
    );
    let chest = g.node(
        Some(spine),
        json!({"name": "Chest", "translation": [0.0, CHEST_OFFSET, 0.0]}),
    );
    let mut legs = [(0, 0); 2];
    for (i, (side, x)) in [("L", HIP_WIDTH), ("R", -HIP_WIDTH)]
        .into_iter()
        .enumerate()
    {
        let thigh = g.node(
            Some(hips),
            json!({"name": format!("Thigh_{side}"), "translation": [x, -0.05, 0.0]}),
        );
        let shin = g.node(
            Some(thigh),
            json!({"name": format!("Shin_{side}"), "translation": [0.0, -THIGH, 0.0]}),
        );
        legs[i] = (thigh, shin);
    }
    let arms = arms.then(|| {
        let mut arms = [(0, 0); 2];
        for (i, (side, s)) in [("L", 1.0), ("R", -1.0)].into_iter().enumerate() {
            let d = arm_dir(s);
            let upper = g.node(
                Some(chest),
                json!({"name": format!("UpperArm_{side}"),
                       "translation": [s * SHOULDER_X, SHOULDER_Y, 0.0]}),
            );
            let fore = g.node(
                Some(upper),
                json!({"name": format!("Forearm_{side}"),
                       "translation": [d[0] * UPPER_ARM, d[1] * UPPER_ARM, 0.0]}),
            );
            arms[i] = (upper, fore);
        }
        arms
    });
    Skeleton {
        hips,
        spine,
        chest,
        legs,
        arms,
    }
}

/// Adds the marked body proxies (tapered capsules follow the NvCloth convention). Arm proxies
/// (upper arm, forearm, hand) come after the others when the skeleton has arms.
pub fn proxies(g: &mut GltfBuilder, sk: &Skeleton) {
    sphere(g, sk.hips, "pelvis", [0.0, 0.0, 0.0], 0.13);
    let up = CHEST_OFFSET + 0.05;
    capsule(
        g,
        sk.spine,
        "belly",
        [0.0, -0.05, 0.0],
        Axis::Up,
        up,
        0.13,
        0.12,
    );
    capsule(
        g,
        sk.chest,
        "shoulders",
        [-0.17, 0.1, 0.0],
        Axis::Right,
        0.34,
        0.07,
        0.07,
    );
    sphere(g, sk.chest, "head", [0.0, 0.33, 0.0], 0.11);
    for (i, &(thigh, shin)) in sk.legs.iter().enumerate() {
        let side = ["L", "R"][i];
        let (t, s) = (format!("thigh_{side}"), format!("shin_{side}"));
        capsule(g, thigh, &t, [0.0; 3], Axis::Down, THIGH, 0.075, 0.05);
        capsule(g, shin, &s, [0.0; 3], Axis::Down, SHIN, 0.05, 0.035);
    }
    for (i, &(upper, fore)) in sk.arms.iter().flatten().enumerate() {
        let (side, s) = [("L", 1.0), ("R", -1.0)][i];
        let d = Axis::Along(arm_dir(s));
        let (ua, fa, h) = (
            format!("upper_arm_{side}"),
            format!("forearm_{side}"),
            format!("hand_{side}"),
        );
        capsule(
            g,
            upper,
            &ua,
            [0.0; 3],
            d,
            UPPER_ARM,
            ARM_RADII[0],
            ARM_RADII[1],
        );
        capsule(
            g,
            fore,
            &fa,
            [0.0; 3],
            d,
            FOREARM,
            ARM_RADII[1],
            ARM_RADII[2],
        );
        let dir = arm_dir(s);
        let c = [dir[0] * HAND_AT, dir[1] * HAND_AT, 0.0];
        sphere(g, fore, &h, c, HAND_RADIUS);
    }
}

/// m: arm proxy radii at the shoulder, the elbow and the wrist.
pub const ARM_RADII: [f32; 3] = [0.045, 0.037, 0.03];
/// m: hand proxy sphere radius, and its centre's distance from the elbow along the forearm.
pub const HAND_RADIUS: f32 = 0.045;
pub const HAND_AT: f32 = FOREARM + 0.06;

/// The character as .glb bytes, with `garment` (vertices in the `attach` joint's bind-pose space)
/// as mesh node `garment_name`.
pub fn figure_glb(gait: &Gait, attach: Attach, garment_name: &str, garment: &Mesh) -> Vec<u8> {
    let mut g = GltfBuilder::default();
    let sk = skeleton(&mut g, false);
    proxies(&mut g, &sk);
    let mesh = g.mesh(garment_name, &garment.positions, &garment.triangles, None);
    let parent = if attach == Attach::Hips {
        sk.hips
    } else {
        sk.chest
    };
    g.node(Some(parent), json!({"name": garment_name, "mesh": mesh}));
    animate(&mut g, gait, &sk);
    g.to_glb("clothbake sample generator", "gait")
}

/// The figure with arms and a low-poly skinned body mesh (node `Body`, see [`body_mesh`]) wearing
/// `garment`, a skinned mesh node `garment_name` with vertices in world bind-pose space (Y up,
/// metres) and `garment_skin` influences indexing [`Skeleton::joints`] (the `J_*` constants). Both
/// meshes share one skin; the proxies are marked nodes as in [`figure_glb`].
pub fn dressed_figure_glb(
    gait: &Gait,
    garment_name: &str,
    garment: &Mesh,
    garment_skin: SkinWeights,
) -> Vec<u8> {
    let mut g = GltfBuilder::default();
    let sk = skeleton(&mut g, true);
    proxies(&mut g, &sk);
    let inverse_bind: Vec<_> = joint_positions(true)
        .into_iter()
        .map(|p| translation([-p[0], -p[1], -p[2]]))
        .collect();
    let skin = g.skin(&sk.joints(), &inverse_bind);
    let body = body_mesh();
    let m = g.mesh(
        "Body",
        &body.mesh.positions,
        &body.mesh.triangles,
        Some((&body.joints, &body.weights)),
    );
    let node = g.node(None, json!({"name": "Body", "mesh": m}));
    g.set_skin(node, skin);
    let m = g.mesh(
        garment_name,
        &garment.positions,
        &garment.triangles,
        Some(garment_skin),
    );
    let node = g.node(None, json!({"name": garment_name, "mesh": m}));
    g.set_skin(node, skin);
    animate(&mut g, gait, &sk);
    g.to_glb("clothbake sample generator", "walk")
}

/// rad: arm swing amplitude (opposite to the legs) and constant elbow bend of figures with arms.
const ARM_SWING: f32 = 0.3;
const ELBOW_BEND: f32 = 0.25;

/// Adds the gait, sampled at KEY_RATE, as channels on the skeleton's joints. Phase 0: left thigh
/// forward. The arms (if any) swing opposite to the legs about the shoulder's x axis, so they keep
/// their sideways spread.
pub fn animate(g: &mut GltfBuilder, gait: &Gait, sk: &Skeleton) {
    let keys = (gait.duration * KEY_RATE).ceil() as usize + 1;
    let times: Vec<f32> = (0..keys).map(|k| k as f32 / KEY_RATE).collect();
    let omega = std::f32::consts::TAU / gait.cycle;
    let mut hips_t = Vec::new();
    let mut hips_r = Vec::new();
    let mut spine_r = Vec::new();
    let mut leg_r = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut arm_r = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for &t in &times {
        let amp = smoothstep(t / RAMP);
        let ph = omega * t;
        // Forward travel eases in with the gait: integral of speed * smoothstep.
        let travel = gait.speed * ramp_integral(t);
        hips_t.extend([
            0.0,
            HIP_HEIGHT - amp * gait.bob * (0.5 - 0.5 * (2.0 * ph).cos()),
            travel,
        ]);
        hips_r.extend(quat([0.0, 1.0, 0.0], amp * 0.08 * ph.sin()));
        spine_r.extend(quat([1.0, 0.0, 0.0], amp * gait.lean));
        for (i, side_phase) in [0.0, std::f32::consts::PI].into_iter().enumerate() {
            let p = ph + side_phase;
            // Negative rotation about x swings the leg forward (+z).
            leg_r[2 * i].extend(quat([1.0, 0.0, 0.0], -amp * gait.swing * p.sin()));
            // The knee bends (shin back) mostly while the leg swings forward.
            let bend = amp * gait.knee * (0.5 - 0.5 * (p + 0.9).cos()).powi(2);
            leg_r[2 * i + 1].extend(quat([1.0, 0.0, 0.0], bend));
            // The arm of this side swings back while its leg swings forward; the elbow bends forward.
            arm_r[2 * i].extend(quat([1.0, 0.0, 0.0], amp * ARM_SWING * p.sin()));
            let elbow = amp * ELBOW_BEND * (1.0 - 0.5 * p.sin());
            arm_r[2 * i + 1].extend(quat([1.0, 0.0, 0.0], -elbow));
        }
    }
    g.channel(sk.hips, "translation", &times, &hips_t);
    g.channel(sk.hips, "rotation", &times, &hips_r);
    g.channel(sk.spine, "rotation", &times, &spine_r);
    for (i, &(thigh, shin)) in sk.legs.iter().enumerate() {
        g.channel(thigh, "rotation", &times, &leg_r[2 * i]);
        g.channel(shin, "rotation", &times, &leg_r[2 * i + 1]);
    }
    for (i, &(upper, fore)) in sk.arms.iter().flatten().enumerate() {
        g.channel(upper, "rotation", &times, &arm_r[2 * i]);
        g.channel(fore, "rotation", &times, &arm_r[2 * i + 1]);
    }
}

/// Integral over [0, t] of smoothstep(s / RAMP) ds (s): the distance covered at unit speed.
fn ramp_integral(t: f32) -> f32 {
    if t >= RAMP {
        // Integral of the full smoothstep over [0, RAMP] is RAMP / 2.
        RAMP * 0.5 + (t - RAMP)
    } else {
        let x = t / RAMP;
        RAMP * (x * x * x - 0.5 * x * x * x * x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_integral_is_continuous() {
        let below = ramp_integral(RAMP - 1e-4);
        let above = ramp_integral(RAMP + 1e-4);
        assert!((below - above).abs() < 1e-3, "{below} vs {above}");
        assert_eq!(ramp_integral(0.0), 0.0);
    }
}
