//! `cape-run`: a cape pinned along the shoulders of a figure running forward at 2.5 m/s. The cape is a
//! mesh node under the chest joint, so its top row follows the chest (`follow = "node"`).

use super::figure::{figure_glb, Attach, Gait};
use super::mesh::{index_list, Mesh};
use super::scene_template::{FigureGarment, SceneTemplate, BIND_POSE_AT_FRAME_1};
use super::SampleFile;

const WIDTH: f32 = 0.5; // m
const LENGTH: f32 = 0.8; // m
const TOP_Y: f32 = 0.12; // m above the chest joint (shoulder line)
const BACK_Z: f32 = -0.16; // m behind the chest joint

pub fn files(resolution: u32) -> Vec<SampleFile> {
    let nv = resolution;
    let nu = ((resolution as f32 * WIDTH / LENGTH).round() as u32).max(1);
    // Row 0 is the shoulder line; the cape flares slightly backwards as it hangs.
    let mesh = Mesh::grid(nu, nv, Some([WIDTH, LENGTH]), |s, t| {
        [(0.5 - s) * WIDTH, TOP_Y - t * LENGTH, BACK_Z - 0.06 * t]
    });
    let gait = Gait {
        cycle: 0.7,
        speed: 2.5,
        swing: 0.7,
        knee: 1.2,
        lean: 0.15,
        bob: 0.04,
        duration: 3.0,
    };
    let glb = figure_glb(&gait, Attach::Chest, "Cape", &mesh);
    let body = FigureGarment {
        name: "cape",
        node: "Cape",
        material: "silk",
        thickness: "0.006",
        friction: "0.2",
        extra: "",
        pins: index_list(0..=nu),
        pins_comment: "the shoulder row",
        follow: "node",
    }
    .body();
    let scene = SceneTemplate {
        name: "cape-run",
        description: "a cape pinned at the shoulders of a figure running forward",
        resolution,
        frame_end: 48,
        substeps: 6,
        scene: BIND_POSE_AT_FRAME_1,
        before_output: "\n\
[wind]                  # still air: drag against the cape's own motion makes it trail\n\
velocity = [0.0, 0.0, 0.0]\n\
drag = 1.0\n\
",
        body: &body,
        ground: false,
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
