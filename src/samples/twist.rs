//! `twist`: a twisting test after Baraff & Witkin's figures (a cloth cylinder; a shirt being
//! twisted): a tube skinned to two joints. `Hold` keeps one end ring still, `Turn` turns the other end
//! once about the tube's axis while moving 15 cm inwards, so the cloth wrings into folds that press
//! against each other. Both end rings are pinned and follow the skin. No gravity: only the twist acts.

use serde_json::json;

use super::glb::{quat, translation, GltfBuilder};
use super::mesh::{index_list, Mesh};
use super::scene_template::{SceneTemplate, BIND_POSE_AT_FRAME_1};
use super::SampleFile;

const LENGTH: f32 = 0.6; // m, along x
const RADIUS: f32 = 0.1; // m
const AXIS_Y: f32 = 1.0; // m, height of the tube axis
const TURNS: f32 = 1.0;
const TWIST_TIME: f32 = 1.6; // s to complete the turns
const SLACK: f32 = 0.15; // m the turning end moves towards the held one

pub fn files(resolution: u32) -> Vec<SampleFile> {
    let around = resolution.max(6);
    let rings = resolution + 1;
    let mesh = Mesh::tube(around, rings, |s, t| {
        let a = s * std::f32::consts::TAU;
        [
            (t - 0.5) * LENGTH,
            AXIS_Y + RADIUS * a.cos(),
            RADIUS * a.sin(),
        ]
    });
    let n = mesh.positions.len();
    // Skin weights: blend along the tube; only the pinned end rings matter for pin targets.
    let joints = vec![[0u8, 1, 0, 0]; n];
    let weights: Vec<[f32; 4]> = (0..n)
        .map(|i| {
            let t = (i as u32 / around) as f32 / (rings - 1) as f32;
            [1.0 - t, t, 0.0, 0.0]
        })
        .collect();

    let mut g = GltfBuilder::default();
    let hold_p = [-0.5 * LENGTH, AXIS_Y, 0.0];
    let turn_p = [0.5 * LENGTH, AXIS_Y, 0.0];
    let hold = g.node(None, json!({"name": "Hold", "translation": hold_p}));
    let turn = g.node(None, json!({"name": "Turn", "translation": turn_p}));
    let m = g.mesh(
        "Tube",
        &mesh.positions,
        &mesh.triangles,
        Some((&joints, &weights)),
    );
    let tube = g.node(None, json!({"name": "Tube", "mesh": m}));
    let skin = g.skin(
        &[hold, turn],
        &[translation(neg(hold_p)), translation(neg(turn_p))],
    );
    g.set_skin(tube, skin);

    let keys = 61;
    let duration = 2.0;
    let times: Vec<f32> = (0..keys)
        .map(|k| k as f32 * duration / (keys - 1) as f32)
        .collect();
    let mut rot = Vec::new();
    let mut pos = Vec::new();
    for &t in &times {
        let x = (t / TWIST_TIME).clamp(0.0, 1.0);
        let ease = x * x * (3.0 - 2.0 * x);
        rot.extend(quat([1.0, 0.0, 0.0], ease * TURNS * std::f32::consts::TAU));
        pos.extend([turn_p[0] - ease * SLACK, turn_p[1], turn_p[2]]);
    }
    g.channel(turn, "rotation", &times, &rot);
    g.channel(turn, "translation", &times, &pos);
    let glb = g.to_glb("clothbake sample generator", "twist");

    let last = (rings - 1) * around;
    let pins = index_list((0..around).chain(last..last + around));
    let body = format!(
        "
[[garment]]
name = \"tube\"
mesh = \"tube.glb\"
node = \"Tube\"
material = \"cotton\"
self_collision = true
self_thickness = 0.004
self_friction = 0.2

[garment.pin]
vertices = {pins}   # both end rings
follow = \"skin\"
"
    );
    let scene = SceneTemplate {
        name: "twist",
        description: "a cloth tube wrung by turning one end ring while the other is held",
        resolution,
        frame_end: 48,
        substeps: 6,
        scene: &format!("gravity = [0.0, 0.0, 0.0]\n{BIND_POSE_AT_FRAME_1}"),
        before_output: "",
        body: &body,
        ground: false,
    }
    .render();
    vec![
        SampleFile::text("scene.toml", scene),
        SampleFile {
            path: "tube.glb".into(),
            bytes: glb,
        },
    ]
}

fn neg(p: [f32; 3]) -> [f32; 3] {
    [-p[0], -p[1], -p[2]]
}
