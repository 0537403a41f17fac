//! A small generated character for the skirt and cape samples: a skeleton (hips, spine, chest,
//! thighs, shins) with a procedural walk or run cycle, capsule and sphere body proxies marked with
//! node extras `{"clothbake": {...}}`, and the garment as a mesh node parented to a joint.
//!
//! Y up, metres, facing +z. Animation time 0 is the bind pose; the gait fades in over `RAMP` seconds
//! so the garment starts at rest exactly as modelled.

use serde_json::json;

use super::glb::{quat, GltfBuilder};
use super::mesh::Mesh;

/// Seconds over which the gait amplitude ramps from 0 to 1 (smoothstep).
const RAMP: f32 = 0.5;
/// Animation keys per second.
const KEY_RATE: f32 = 30.0;

pub const HIP_HEIGHT: f32 = 0.95; // m, hips joint above the ground
pub const SPINE_OFFSET: f32 = 0.08; // m, spine joint above the hips joint
pub const CHEST_OFFSET: f32 = 0.30; // m, chest joint above the spine joint
const HIP_WIDTH: f32 = 0.09; // m, thigh joints left/right of the hips joint
const THIGH: f32 = 0.42; // m
const SHIN: f32 = 0.42; // m

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
}

/// Adds a marked sphere proxy node under `parent` (a sphere of `radius` at the node's origin).
fn sphere(g: &mut GltfBuilder, parent: usize, name: &str, center: [f32; 3], radius: f32) {
    g.node(
        Some(parent),
        json!({"name": format!("CB_SPHERE_{name}"), "translation": center,
               "extras": {"clothbake": {"collider": "sphere", "radius": radius}}}),
    );
}

/// The character as .glb bytes, with `garment` (vertices in the `attach` joint's bind-pose space)
/// as mesh node `garment_name`.
pub fn figure_glb(gait: &Gait, attach: Attach, garment_name: &str, garment: &Mesh) -> Vec<u8> {
    let mut g = GltfBuilder::default();
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
    let mut legs = Vec::new();
    for (side, x) in [("L", HIP_WIDTH), ("R", -HIP_WIDTH)] {
        let thigh = g.node(
            Some(hips),
            json!({"name": format!("Thigh_{side}"), "translation": [x, -0.05, 0.0]}),
        );
        let shin = g.node(
            Some(thigh),
            json!({"name": format!("Shin_{side}"), "translation": [0.0, -THIGH, 0.0]}),
        );
        legs.push((thigh, shin));
    }

    // Body proxies (tapered capsules follow the NvCloth convention).
    sphere(&mut g, hips, "pelvis", [0.0, 0.0, 0.0], 0.13);
    let up = CHEST_OFFSET + 0.05;
    capsule(
        &mut g,
        spine,
        "belly",
        [0.0, -0.05, 0.0],
        Axis::Up,
        up,
        0.13,
        0.12,
    );
    capsule(
        &mut g,
        chest,
        "shoulders",
        [-0.17, 0.1, 0.0],
        Axis::Right,
        0.34,
        0.07,
        0.07,
    );
    sphere(&mut g, chest, "head", [0.0, 0.33, 0.0], 0.11);
    for (i, &(thigh, shin)) in legs.iter().enumerate() {
        let side = ["L", "R"][i];
        let (t, s) = (format!("thigh_{side}"), format!("shin_{side}"));
        capsule(&mut g, thigh, &t, [0.0; 3], Axis::Down, THIGH, 0.075, 0.05);
        capsule(&mut g, shin, &s, [0.0; 3], Axis::Down, SHIN, 0.05, 0.035);
    }

    let mesh = g.mesh(garment_name, &garment.positions, &garment.triangles, None);
    let parent = if attach == Attach::Hips { hips } else { chest };
    g.node(Some(parent), json!({"name": garment_name, "mesh": mesh}));

    // The gait, sampled at KEY_RATE. Phase 0: left thigh forward.
    let keys = (gait.duration * KEY_RATE).ceil() as usize + 1;
    let times: Vec<f32> = (0..keys).map(|k| k as f32 / KEY_RATE).collect();
    let omega = std::f32::consts::TAU / gait.cycle;
    let mut hips_t = Vec::new();
    let mut hips_r = Vec::new();
    let mut spine_r = Vec::new();
    let mut leg_r = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
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
        }
    }
    g.channel(hips, "translation", &times, &hips_t);
    g.channel(hips, "rotation", &times, &hips_r);
    g.channel(spine, "rotation", &times, &spine_r);
    for (i, &(thigh, shin)) in legs.iter().enumerate() {
        g.channel(thigh, "rotation", &times, &leg_r[2 * i]);
        g.channel(shin, "rotation", &times, &leg_r[2 * i + 1]);
    }
    g.to_glb("clothbake sample generator", "gait")
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
