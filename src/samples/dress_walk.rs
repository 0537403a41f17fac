//! `dress-walk`: the production-scale sample and the default `clothbake bake`. The generated figure
//! (skinned low-poly body, arms, marked capsule and sphere proxies) walks forward with root motion
//! (1.6 m in the 48 frames, hips bobbing and turning, legs and arms swinging) in a long strapless
//! cotton dress: a fitted bodice and hip yoke pinned to the rig (`follow = "skin"`: the dress is
//! skinned to the same skeleton) and a flared skirt to the ankles that the legs push and that folds
//! onto itself (self-collision). At the default resolution (148 around) the dress has 10,212
//! vertices, 2,220 of them pinned.

use super::figure::{dressed_figure_glb, Gait, HIP_HEIGHT, J_HIPS, J_SPINE};
use super::mesh::{index_list, Mesh};
use super::scene_template::{FigureGarment, SceneTemplate, BIND_POSE_AT_FRAME_1};
use super::SampleFile;

/// m above the hips joint: top edge of the bodice, the waist, the lowest pinned ring (the hip line,
/// below the thigh joints), the hem.
const TOP_Y: f32 = 0.27;
const WAIST_Y: f32 = 0.10;
const HIP_LINE_Y: f32 = -0.07;
const HEM_Y: f32 = -0.82;
/// m: radius of the bodice (around the 0.12–0.13 m torso proxies).
const BODICE_R: f32 = 0.143;
/// Radius r(d) = BODICE_R + FLARE * d - CURVE * d^2 at depth d below the waist (m): 0.22 m at the
/// hip line, clear of the thigh proxies (outer edge 0.165 m from the axis) as they swing, 0.5 m at
/// the hem.
const FLARE: f32 = 0.5;
const CURVE: f32 = 0.12;
/// m: ring spacing of the pinned part (bodice and hip yoke), which only follows the skin.
const PINNED_SPACING: f32 = 0.025;
/// Ring spacing of the free skirt is the spacing around at this radius or more (m): square cells.
const MIN_SPACING_R: f32 = 0.2;

/// Radius of the dress at height `y` above the hips joint.
fn radius(y: f32) -> f32 {
    let d = (WAIST_Y - y).max(0.0);
    BODICE_R + FLARE * d - CURVE * d * d
}

/// Ring heights from the top edge down to the hem, and how many of them are pinned. The pinned
/// part (top edge to hip line) has rings about PINNED_SPACING apart with one exactly at the waist;
/// the skirt steps along the profile by the spacing around (2 pi r / around, r at least
/// MIN_SPACING_R), scaled so its last ring is exactly at the hem.
fn ring_heights(around: u32) -> (Vec<f32>, usize) {
    let mut ys = Vec::new();
    for (from, to) in [(TOP_Y, WAIST_Y), (WAIST_Y, HIP_LINE_Y)] {
        let n = ((from - to) / PINNED_SPACING).round().max(1.0) as u32;
        ys.extend((0..n).map(|k| from - (from - to) * k as f32 / n as f32));
    }
    let pinned = ys.len() + 1;
    let step = |y: f32| std::f32::consts::TAU * radius(y).max(MIN_SPACING_R) / around as f32;
    let mut skirt = vec![HIP_LINE_Y];
    let mut y = HIP_LINE_Y;
    while y > HEM_Y {
        let slope = FLARE - 2.0 * CURVE * (WAIST_Y - y); // dr/dd
        y -= step(y) / (1.0 + slope * slope).sqrt();
        skirt.push(y);
    }
    // Whichever of the last two rings is nearer the hem becomes the hem.
    let n = skirt.len() - 1;
    let keep = if (skirt[n - 1] - HEM_Y).abs() < (y - HEM_Y).abs() {
        n - 1
    } else {
        n
    };
    let scale = (HIP_LINE_Y - HEM_Y) / (HIP_LINE_Y - skirt[keep]);
    ys.extend(
        skirt[..=keep]
            .iter()
            .map(|&s| HIP_LINE_Y - (HIP_LINE_Y - s) * scale),
    );
    (ys, pinned)
}

/// The dress in the bind pose (world space) with its skin influences, and the number of pinned
/// vertices (the rings from the top edge to the hip line, at the start of the vertex order).
pub fn dress(around: u32) -> (Mesh, Vec<[u8; 4]>, Vec<[f32; 4]>, u32) {
    let around = around.max(8);
    let (ys, pinned_rings) = ring_heights(around);
    let rings = ys.len() as u32;
    let mesh = Mesh::tube(around, rings, |s, t| {
        let y = ys[(t * (rings - 1) as f32).round() as usize];
        let a = s * std::f32::consts::TAU;
        let r = radius(y);
        [r * a.cos(), HIP_HEIGHT + y, r * a.sin()]
    });
    // The bodice on the spine joint (with the belly proxy), blending to the hips joint (pelvis
    // proxy) from the waist to the hip line; the free skirt on the hips (what Blender shows without
    // the cache: only the pinned vertices use the skin in the bake).
    let (mut joints, mut weights) = (Vec::new(), Vec::new());
    for &y in &ys {
        let w = ((WAIST_Y - y) / (WAIST_Y - HIP_LINE_Y)).clamp(0.0, 1.0);
        for _ in 0..around {
            joints.push([J_SPINE, J_HIPS, 0, 0]);
            weights.push([1.0 - w, w, 0.0, 0.0]);
        }
    }
    (mesh, joints, weights, pinned_rings as u32 * around)
}

pub fn files(resolution: u32) -> Vec<SampleFile> {
    let (mesh, joints, weights, pinned) = dress(resolution);
    let gait = Gait {
        cycle: 1.1,
        speed: 0.95,
        swing: 0.35,
        knee: 0.55,
        lean: 0.04,
        bob: 0.025,
        duration: 2.5,
    };
    let glb = dressed_figure_glb(&gait, "Dress", &mesh, (&joints, &weights));
    let body = FigureGarment {
        name: "dress",
        node: "Dress",
        material: "cotton",
        thickness: "0.005",
        friction: "0.1",
        extra: "self_collision = true\n",
        pins: index_list(0..pinned),
        pins_comment: "bodice and hip yoke: the rings from the top edge to the hip line",
        follow: "skin",
    }
    .body();
    let scene = SceneTemplate {
        name: "dress-walk",
        description: DESCRIPTION,
        resolution,
        frame_end: 48,
        substeps: 4,
        scene: BIND_POSE_AT_FRAME_1,
        before_output: "",
        body: &body,
        ground: true,
    }
    .render();
    vec![
        SampleFile::text("scene.toml", scene),
        SampleFile {
            path: "figure.glb".into(),
            bytes: glb,
        },
    ]
}

pub const DESCRIPTION: &str =
    "a long dress on a skinned figure walking 1.6 m forward (the default bake)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dress_rings_reach_the_hem_and_pin_down_to_the_hip_line() {
        let (ys, pinned) = ring_heights(148);
        assert_eq!(ys[0], TOP_Y);
        assert!((ys[ys.len() - 1] - HEM_Y).abs() < 1e-5);
        assert!(ys.windows(2).all(|w| w[1] < w[0]));
        assert!(ys.iter().any(|&y| (y - WAIST_Y).abs() < 1e-6));
        assert!((ys[pinned - 1] - HIP_LINE_Y).abs() < 1e-6);
        let (mesh, joints, _, pinned) = dress(148);
        assert_eq!(mesh.positions.len(), joints.len());
        assert!(mesh.positions.len() >= 10_000, "{}", mesh.positions.len());
        let last = mesh.positions[pinned as usize - 1];
        assert!((last[1] - HIP_HEIGHT - HIP_LINE_Y).abs() < 1e-5);
        // The hip line clears the thigh proxies (0.165 m from the axis) by 5 cm.
        assert!(radius(HIP_LINE_Y) > 0.215);
    }
}
