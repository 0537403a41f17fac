//! The parts every sample's scene.toml shares: the header comment, `[scene]` at 24 fps from frame 1,
//! the `[output]` table (PC2 and a report in ./clothbake-out) and the ground plane.

/// The `time_offset` line of samples whose frame 1 shows their glTF's animation time 0 (bind pose).
pub const BIND_POSE_AT_FRAME_1: &str =
    "time_offset = -0.041666668  # frame 1 is animation time 0 (the bind pose)\n";

/// A garment worn by the generated figure (`figure.glb`: the garment is one of its mesh nodes, the
/// body proxies are its marked nodes).
pub struct FigureGarment<'a> {
    pub name: &'a str,
    /// The garment's node in figure.glb.
    pub node: &'a str,
    pub material: &'a str,
    /// Written as given (m).
    pub thickness: &'a str,
    pub friction: &'a str,
    /// More `[[garment]]` lines, each ending in a newline.
    pub extra: &'a str,
    /// The pinned vertices (a TOML array) and the comment that says which they are.
    pub pins: String,
    pub pins_comment: &'a str,
    /// `pin.follow`.
    pub follow: &'a str,
}

impl FigureGarment<'_> {
    /// Its `[[garment]]` and `[garment.pin]` tables and the figure's `[[collider]]` (a scene
    /// template's `body`).
    pub fn body(&self) -> String {
        let FigureGarment {
            name,
            node,
            material,
            thickness,
            friction,
            extra,
            pins,
            pins_comment,
            follow,
        } = self;
        format!(
            "
[[garment]]
name = \"{name}\"
mesh = \"figure.glb\"
node = \"{node}\"
material = \"{material}\"
thickness = {thickness}
friction = {friction}
{extra}
[garment.pin]
vertices = {pins}   # {pins_comment}
follow = \"{follow}\"

[[collider]]
type = \"gltf\"
file = \"figure.glb\"
proxies = \"marked\"
"
        )
    }
}

/// One sample scene file.
pub struct SceneTemplate<'a> {
    /// Sample name and the description in its header comment.
    pub name: &'a str,
    pub description: &'a str,
    /// Mesh resolution the files were generated at (named in the header).
    pub resolution: u32,
    pub frame_end: i32,
    pub substeps: u32,
    /// More `[scene]` lines (gravity, time_offset), each ending in a newline.
    pub scene: &'a str,
    /// Tables between `[scene]` and `[output]` (`[wind]`), starting with a blank line.
    pub before_output: &'a str,
    /// The `[[garment]]` and `[[collider]]` tables, starting with a blank line.
    pub body: &'a str,
    /// Append the ground: a plane collider at y = 0, normal +Y.
    pub ground: bool,
}

impl SceneTemplate<'_> {
    /// The scene.toml text.
    pub fn render(&self) -> String {
        let SceneTemplate {
            name,
            description,
            resolution,
            frame_end,
            substeps,
            scene,
            before_output,
            body,
            ground,
        } = self;
        let ground = if *ground {
            "\n[[collider]]\ntype = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\n"
        } else {
            ""
        };
        format!(
            "# clothbake sample `{name}`: {description}.\n\
             # Written by `clothbake sample {name} -o DIR --resolution {resolution}`; bake it with\n\
             # `clothbake bake DIR/scene.toml`. Format: docs/scene-format.md.\n\n\
             [scene]\nfps = 24.0\nframe_start = 1\nframe_end = {frame_end}\nsubsteps = {substeps}\n\
             {scene}{before_output}\n\
             [output]\ndir = \"clothbake-out\"\nformats = [\"pc2\"]\nreport = \"report.json\"\n\
             {body}{ground}"
        )
    }
}
