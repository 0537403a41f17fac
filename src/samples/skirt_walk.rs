//! `skirt-walk`: a long, wide skirt (an open cone flaring to 0.55 m at mid-calf) pinned at the waist
//! of a figure walking in place. It drapes in folds that touch and that the swinging legs press into
//! each other, so self-collision works in most frames (cloth–cloth contact in 30 of the 48 frames at
//! the default resolution). The skirt is a mesh node under the hips joint, so its waist pins follow
//! the hips (`follow = "node"`).

use super::figure::{figure_glb, Attach, Gait};
use super::mesh::{index_list, Mesh};
use super::scene_template::{FigureGarment, SceneTemplate, BIND_POSE_AT_FRAME_1};
use super::SampleFile;

const WAIST_Y: f32 = 0.05; // m above the hips joint
const WAIST_R: f32 = 0.17; // m
const HEM_Y: f32 = -0.75; // m (below the hips joint)
const HEM_R: f32 = 0.55; // m

/// The skirt in the hips joint's bind-pose space: ring 0 is the waist.
pub fn skirt(resolution: u32) -> (Mesh, u32) {
    let around = resolution.max(6);
    let rings = (resolution / 3).max(2) + 1;
    let mesh = Mesh::tube(around, rings, |s, t| {
        let a = s * std::f32::consts::TAU;
        let r = WAIST_R + t * (HEM_R - WAIST_R);
        [r * a.cos(), WAIST_Y + t * (HEM_Y - WAIST_Y), r * a.sin()]
    });
    (mesh, around)
}

pub fn files(resolution: u32) -> Vec<SampleFile> {
    let (mesh, around) = skirt(resolution);
    let gait = Gait {
        cycle: 1.1,
        speed: 0.0,
        swing: 0.45,
        knee: 0.6,
        lean: 0.03,
        bob: 0.02,
        duration: 3.0,
    };
    let glb = figure_glb(&gait, Attach::Hips, "Skirt", &mesh);
    let body = FigureGarment {
        name: "skirt",
        node: "Skirt",
        material: "cotton",
        thickness: "0.006",
        friction: "0.3",
        extra: "",
        pins: index_list(0..around),
        pins_comment: "the waist ring",
        follow: "node",
    }
    .body();
    let scene = SceneTemplate {
        name: "skirt-walk",
        description: "a long, wide skirt on a walking figure (capsule proxies); its folds press on each other",
        resolution,
        frame_end: 48,
        substeps: 5,
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
