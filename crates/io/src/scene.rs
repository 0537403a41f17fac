//! The scene TOML file (docs/scene-format.md is the contract): serde structs with unknown keys
//! rejected, defaults, validation with field paths, and relative paths resolved against the scene
//! file's folder.

use std::path::{Path, PathBuf};

use glam::Vec3;
use serde::Deserialize;

use crate::error::{IoError, Result};

/// An axis convention: `Y` is glTF's (Y up), `Z` is Blender's (Z up; `(x, y, z)_blender` is
/// `(x, z, -y)` in Y-up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Up {
    /// Y up (glTF, the scene's world frame).
    #[default]
    Y,
    /// Z up (Blender).
    Z,
}

/// Which frame the cache coordinates are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    /// The scene's world frame (converted to `output.up`).
    #[default]
    World,
    /// Each garment's own object-local frame (converted to `output.up`).
    Local,
}

/// A cache format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// `<name>.pc2`, little-endian point cache.
    Pc2,
    /// `<name>.mdd`, big-endian point cache.
    Mdd,
    /// `<name>.<frame:04>.obj`, one OBJ per frame.
    Obj,
    /// `<name>.usda`, a USD layer with a time-sampled `UsdGeomMesh` (see `cache_usd`).
    Usd,
    /// `<name>.usdc`, the same layer in USD's binary crate format (see `cache_usdc`).
    Usdc,
}

/// How the garment's rest shape (the unstretched state) is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RestShape {
    /// From the mesh positions.
    #[default]
    Mesh,
    /// From the UVs times `uv_scale` (metres per UV unit).
    Uv,
}

/// What pinned vertices follow over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Follow {
    /// Pins stay where they are at the rest frame.
    #[default]
    Rest,
    /// Pins follow the garment's own glTF skin (linear blend skinning).
    Skin,
    /// Pins follow the garment node's animated world transform (glTF), or the OBJ garment's
    /// `transform_keys` (a static `transform`: same as `Rest`).
    Node,
    /// Pins follow the garment's `driver` point cache (linear between frames).
    Cache,
}

impl Follow {
    /// The scene-file spelling (`"rest"`, `"skin"`, `"node"`, `"cache"`).
    pub fn name(self) -> &'static str {
        match self {
            Follow::Rest => "rest",
            Follow::Skin => "skin",
            Follow::Node => "node",
            Follow::Cache => "cache",
        }
    }
}

/// How the pre-roll frames are driven (`scene.preroll_from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrerollFrom {
    /// Every animated input is evaluated at the pre-roll frames themselves.
    #[default]
    Animation,
    /// Ease-in from the rest pose: `lerp(rest, value(frame_start), smoothstep(...))`.
    Rest,
}

impl PrerollFrom {
    /// The scene-file spelling (`"animation"`, `"rest"`).
    pub fn name(self) -> &'static str {
        match self {
            PrerollFrom::Animation => "animation",
            PrerollFrom::Rest => "rest",
        }
    }
}

/// In which space a `driver` cache's positions are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverSpace {
    /// World positions in the garment's `up` convention.
    #[default]
    World,
    /// Mesh-file local coordinates, carried by the garment's transform (static or keyed) or node.
    Local,
}

/// One `transform_keys` entry: the local→world matrix at a scene frame.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransformKey {
    /// Scene frame (fractions allowed).
    pub frame: f32,
    /// Column-major 4×4 local→world matrix in the mesh file's axis convention.
    pub matrix: [f32; 16],
}

/// Which animation of a glTF file drives it (`animation = "Walk"` or `animation = 1`): by name, or
/// by 0-based index into the file's `animations`. Without it a file plays its first animation.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum AnimationRef {
    /// 0-based index into `animations`.
    Index(usize),
    /// The animation's `name`.
    Name(String),
}

impl std::fmt::Display for AnimationRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnimationRef::Index(i) => write!(f, "animations[{i}]"),
            AnimationRef::Name(n) => write!(f, "\"{n}\""),
        }
    }
}

/// How body proxies are taken from a glTF character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProxyMode {
    /// Nodes marked by `extras.clothbake.collider` or named `CB_SPHERE*` / `CB_CAPSULE*`.
    #[default]
    Marked,
    /// One tapered capsule per bone of a skinned body mesh.
    Auto,
}

/// `scene.integrator`: the time integrator of the substeps (`clothbake_solver::Integrator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntegratorName {
    /// Backward Euler, one Newton step (Baraff & Witkin 1998 §3).
    #[default]
    Bw,
    /// Second-order BDF, one Newton step (Choi & Ko 2002).
    Bdf2,
    /// Adaptive implicit–explicit backward Euler (Boxerman 2003 §4.4).
    Aimex,
    /// Kang 2003's approximate implicit integration (thesis ch. 4, eqs. 4.8–4.9).
    Kang,
    /// Explicit Verlet with constraint relaxation (Jakobsen 2001).
    Verlet,
}

impl IntegratorName {
    /// The name as written in the scene file.
    pub fn name(self) -> &'static str {
        match self {
            IntegratorName::Bw => "bw",
            IntegratorName::Bdf2 => "bdf2",
            IntegratorName::Kang => "kang",
            IntegratorName::Verlet => "verlet",
            IntegratorName::Aimex => "aimex",
        }
    }
}

/// `garment.model`: the garment's internal-force model (`clothbake_solver::ForceModel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelName {
    /// Baraff & Witkin 1998 §4: triangle stretch/shear and hinge bending.
    #[default]
    Bw,
    /// Mass-spring network: structural, shear and Choi & Ko buckling bend springs, Kang's
    /// stabilised Jacobian.
    Springs,
}

impl ModelName {
    /// The name as written in the scene file.
    pub fn name(self) -> &'static str {
        match self {
            ModelName::Bw => "bw",
            ModelName::Springs => "springs",
        }
    }
}

/// `scene.preconditioner`: the MPCG preconditioner (`clothbake_solver::Preconditioner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum PreconditionerName {
    /// Block Jacobi (Boxerman 2003 eq. 5.4).
    #[serde(rename = "jacobi")]
    Jacobi,
    /// Block incomplete Cholesky IC(0) of the filtered matrix.
    #[serde(rename = "ic")]
    Ic,
    /// Smoothed-aggregation algebraic multigrid V-cycle (Tamstorf, Jones & McCormick 2015).
    #[serde(rename = "amg")]
    Amg,
    /// AMG if the rest mesh's median triangle is thin, else IC(0)
    /// (the default).
    #[serde(rename = "auto")]
    Auto,
}

impl PreconditionerName {
    /// The name as written in the scene file.
    pub fn name(self) -> &'static str {
        match self {
            PreconditionerName::Jacobi => "jacobi",
            PreconditionerName::Ic => "ic",
            PreconditionerName::Amg => "amg",
            PreconditionerName::Auto => "auto",
        }
    }
}

/// `[scene]`: timing, substeps, gravity, air damping, integrator and solver tolerances.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Frames per second (> 0).
    #[serde(default = "default_fps")]
    pub fps: f32,
    /// First output frame (inclusive); cache sample 0 is this frame, the rest state.
    #[serde(default = "default_frame_start")]
    pub frame_start: i32,
    /// Last output frame (inclusive); `None`: see [`crate::LoadedScene::frame_end`].
    pub frame_end: Option<i32>,
    /// Frames simulated before `frame_start` and not written (>= 0).
    #[serde(default)]
    pub preroll: u32,
    /// How the pre-roll frames are driven.
    #[serde(default)]
    pub preroll_from: PrerollFrom,
    /// Solver substeps per frame (>= 1).
    #[serde(default = "default_substeps")]
    pub substeps: u32,
    /// m/s², world frame.
    #[serde(default = "default_gravity")]
    pub gravity: [f32; 3],
    /// Seconds: the animation time of frame `f` is `f / fps + time_offset`.
    #[serde(default)]
    pub time_offset: f32,
    /// Relative residual of the MPCG solve.
    pub cg_tolerance: Option<f32>,
    /// MPCG iteration cap.
    pub cg_max_iterations: Option<u32>,
    /// Adaptive substeps: largest growth of the largest triangle strain (dimensionless, > 0) a
    /// substep may have before it is retried at half size (BW §6).
    pub strain_jump: Option<f32>,
    /// Stretch (dimensionless, >= 0; 0 = none) at or below which a substep's largest triangle
    /// stretch is not held against `strain_jump`; default the solver's (0.08).
    pub strain_jump_floor: Option<f32>,
    /// Stretch (dimensionless, >= 0; 0 = none) up to which a moving body's contacts may stretch
    /// their triangles without the substep being retried; default the solver's (0.15).
    pub body_strain_allowance: Option<f32>,
    /// Largest triangle strain (dimensionless, > 0) before the bake fails as torn apart; default
    /// the solver's (10).
    pub strain_limit: Option<f32>,
    /// Linear air damping c, kg/(m²·s) (>= 0): per-vertex drag −c·A·(v − v_wind), Blender's "air
    /// viscosity". Default [`DEFAULT_AIR_DAMPING`].
    #[serde(default = "default_air_damping")]
    pub air_damping: f32,
    /// Time integrator: `"bw"` (default), `"bdf2"`, `"aimex"`, `"kang"` or `"verlet"`; any other
    /// value is rejected at load.
    #[serde(default)]
    pub integrator: IntegratorName,
    /// Projected air damping (Boxerman 2003 §3.3): `air_damping` acts only on the non-rigid part
    /// of each piece of cloth's velocity (free fall and rigid rotation are not slowed by it).
    /// Default false.
    #[serde(default)]
    pub damping_projection: bool,
    /// Kang's updates per substep under `integrator = "kang"`: odd, >= 1 (Kang 2003 §4.2: small
    /// even counts are unstable); default the solver's (1).
    pub kang_iterations: Option<u32>,
    /// Relaxation passes per substep under `integrator = "verlet"` (>= 1); default the solver's.
    pub verlet_iterations: Option<u32>,
    /// MPCG preconditioner: `"jacobi"`, `"ic"`, `"amg"` or `"auto"`; `None`: the solver's
    /// default (`"auto"`).
    pub preconditioner: Option<PreconditionerName>,
    /// Cloth–cloth contacts as implicit normal damping inside the solve (dimensionless β >= 0,
    /// 0 = off: only the repulsion after the solve); `None`: the solver's default (4).
    pub self_contact_damping: Option<f32>,
    /// Deflate the translations of vertex aggregates inside the IC(0) solve (a coarse system
    /// solved exactly; `clothbake_solver::linalg::deflation`); default true.
    #[serde(default = "default_true")]
    pub deflation: bool,
}

/// Default `scene.air_damping` (kg/(m²·s)): the solver's default (`clothbake_solver::DEFAULT_AIR_DAMPING`,
/// kept equal by a test in the CLI crate).
pub const DEFAULT_AIR_DAMPING: f32 = 0.02;

/// Largest frame number (in magnitude) of `frame_start`, `frame_end` and `driver_frame_start`:
/// keeps every frame computation (pre-roll, ranges, driver sample frames) inside `i32`.
pub const MAX_FRAME_NUMBER: i32 = 1_000_000_000;
/// Most frames one bake may simulate (pre-roll included): 11.5 hours at 24 fps. A larger range is
/// a mistake (a stray `frame_end`, an animation key at an absurd time), not a shot.
pub const MAX_FRAMES: i64 = 1_000_000;

impl Default for Settings {
    fn default() -> Self {
        Self {
            fps: default_fps(),
            frame_start: default_frame_start(),
            frame_end: None,
            preroll: 0,
            preroll_from: PrerollFrom::Animation,
            substeps: default_substeps(),
            gravity: default_gravity(),
            time_offset: 0.0,
            cg_tolerance: None,
            cg_max_iterations: None,
            strain_jump: None,
            strain_jump_floor: None,
            body_strain_allowance: None,
            strain_limit: None,
            air_damping: default_air_damping(),
            integrator: IntegratorName::default(),
            damping_projection: false,
            kang_iterations: None,
            verlet_iterations: None,
            preconditioner: None,
            self_contact_damping: None,
            deflation: true,
        }
    }
}

/// `[wind]`: a uniform wind, drag and lift per triangle.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindSpec {
    /// m/s, world frame.
    pub velocity: [f32; 3],
    /// kg/m³.
    #[serde(default = "default_air_density")]
    pub air_density: f32,
    /// Drag coefficient (dimensionless).
    #[serde(default = "default_drag")]
    pub drag: f32,
    /// Lift coefficient (dimensionless).
    #[serde(default)]
    pub lift: f32,
}

/// `[output]`: where and how caches are written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Output folder (resolved against the scene folder).
    #[serde(default = "default_dir")]
    pub dir: PathBuf,
    /// Formats to write.
    #[serde(default = "default_formats")]
    pub formats: Vec<Format>,
    /// World or garment-local coordinates.
    #[serde(default)]
    pub space: Space,
    /// Axis convention of the written coordinates.
    #[serde(default)]
    pub up: Up,
    /// Bake report (JSON), resolved against the scene folder.
    pub report: Option<PathBuf>,
    /// Include collider shapes per frame in the report.
    #[serde(default)]
    pub report_colliders: bool,
    /// Include every attempted substep of each frame in the report.
    #[serde(default)]
    pub report_substeps: bool,
}

impl Default for OutputSpec {
    fn default() -> Self {
        Self {
            dir: default_dir(),
            formats: default_formats(),
            space: Space::World,
            up: Up::Y,
            report: None,
            report_colliders: false,
            report_substeps: false,
        }
    }
}

/// `[garment.pin]`: pinned vertices (all forms may be combined).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinSpec {
    /// Source-order vertex indices (OBJ `v` order, or glTF order before welding).
    #[serde(default)]
    pub vertices: Vec<u32>,
    /// Parallel to `vertices`: 1 = hard pin, < 1 = goal spring; default all 1.
    pub weights: Option<Vec<f32>>,
    /// glTF vertex attribute (`_PIN`, `COLOR_0`, ...): weight from its first channel.
    pub attribute: Option<String>,
    /// What pinned vertices follow.
    #[serde(default)]
    pub follow: Follow,
    /// N/m per unit weight for partial pins.
    #[serde(default = "default_pin_stiffness")]
    pub stiffness: f32,
}

/// `[[garment]]`: one cloth piece.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GarmentSpec {
    /// Names the outputs `<name>.pc2`, `<name>.mdd`, `<name>.<frame:04>.obj`.
    pub name: String,
    /// `.obj`, `.gltf` or `.glb` (resolved against the scene folder).
    pub mesh: PathBuf,
    /// glTF only: node (or mesh) name.
    pub node: Option<String>,
    /// glTF only: the animation that drives the garment's node and skin; default the first.
    pub animation: Option<AnimationRef>,
    /// Axis convention of the mesh file.
    #[serde(default)]
    pub up: Up,
    /// Column-major 4×4 local→world matrix in the mesh file's axis convention (OBJ only).
    pub transform: Option<[f32; 16]>,
    /// OBJ only: keyed local→world matrices (exclusive with `transform`), strictly increasing
    /// frames; decomposed scale/rotation/translation interpolation between keys, held outside.
    pub transform_keys: Option<Vec<TransformKey>>,
    /// PC2 or MDD cache (by extension) of the garment's animated positions, every source vertex,
    /// one sample per frame (resolved against the scene folder).
    pub driver: Option<PathBuf>,
    /// Scene frame of driver sample 0; `None`: the first simulated frame.
    pub driver_frame_start: Option<i32>,
    /// Space of the driver's positions.
    #[serde(default)]
    pub driver_space: DriverSpace,
    /// Internal-force model: `"bw"` (default) or `"springs"`.
    #[serde(default)]
    pub model: ModelName,
    /// `model = "springs"` only: `k·l₀` (N) of every mesh-edge spring (spring constant
    /// `spring_stiffness / l₀`, Kang 2003 §6) instead of the mapping from `stretch`.
    pub spring_stiffness: Option<f32>,
    /// Material preset name; `None`: the solver's default.
    pub material: Option<String>,
    /// kg/m² override.
    pub density: Option<f32>,
    /// N/m warp and weft override.
    pub stretch: Option<[f32; 2]>,
    /// N/m override.
    pub shear: Option<f32>,
    /// N·m override.
    pub bend: Option<f32>,
    /// s override.
    pub stretch_damping: Option<f32>,
    /// s override.
    pub bend_damping: Option<f32>,
    /// b_u, b_v override (dimensionless).
    pub rest_scale: Option<[f32; 2]>,
    /// Rest shape source.
    #[serde(default)]
    pub rest_shape: RestShape,
    /// Metres per UV unit for `rest_shape = "uv"`.
    #[serde(default = "default_one")]
    pub uv_scale: f32,
    /// m: collision distance kept from body proxies.
    #[serde(default = "default_thickness")]
    pub thickness: f32,
    /// Kinetic Coulomb coefficient against body proxies.
    #[serde(default = "default_friction")]
    pub friction: f32,
    /// Static coefficient; `None`: 1.2 × `friction`.
    pub static_friction: Option<f32>,
    /// Cloth-cloth collision for this garment.
    #[serde(default = "default_true")]
    pub self_collision: bool,
    /// m.
    #[serde(default = "default_self_thickness")]
    pub self_thickness: f32,
    /// Coulomb coefficient cloth-cloth.
    #[serde(default = "default_self_friction")]
    pub self_friction: f32,
    /// Pinned vertices.
    pub pin: Option<PinSpec>,
}

impl GarmentSpec {
    /// The static friction coefficient (given, or 1.2 × kinetic).
    pub fn static_friction(&self) -> f32 {
        self.static_friction.unwrap_or(1.2 * self.friction)
    }

    /// Whether the mesh file is glTF (`.gltf` / `.glb`), judged by extension.
    pub fn is_gltf(&self) -> bool {
        matches!(extension(&self.mesh).as_str(), "gltf" | "glb")
    }
}

/// An analytic collider shape (world frame, metres).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Half-space `dot(x - point, normal) >= 0` is outside.
    Plane {
        /// A point on the plane.
        point: Vec3,
        /// Outward normal (unit length after validation).
        normal: Vec3,
    },
    /// A sphere.
    Sphere {
        /// Centre.
        center: Vec3,
        /// Radius (> 0).
        radius: f32,
    },
    /// Tapered capsule: cone tangent to both end spheres.
    Capsule {
        /// End point a.
        a: Vec3,
        /// End point b.
        b: Vec3,
        /// Radius at a (> 0).
        radius_a: f32,
        /// Radius at b (> 0).
        radius_b: f32,
    },
}

/// `[[collider]]` after validation.
#[derive(Debug, Clone)]
pub enum ColliderSpec {
    /// Analytic shape; `keys` (sorted by frame) animate it linearly, held outside the key range.
    Analytic {
        /// The shape (also the value when `keys` is empty).
        shape: Shape,
        /// `(frame, shape)` keys, strictly increasing frames.
        keys: Vec<(f32, Shape)>,
    },
    /// Body proxies from a glTF character.
    Gltf {
        /// The glTF file (resolved).
        file: PathBuf,
        /// Marked or auto.
        proxies: ProxyMode,
        /// Auto: the skinned mesh (node or mesh name); default the first skinned mesh.
        mesh: Option<String>,
        /// m added to every fitted radius.
        inflate: f32,
        /// The animation that drives the character; default its first.
        animation: Option<AnimationRef>,
    },
}

/// A whole scene file, validated, with paths resolved.
#[derive(Debug, Clone)]
pub struct SceneFile {
    /// The scene file as given (used in error messages).
    pub path: PathBuf,
    /// `[scene]`.
    pub settings: Settings,
    /// `[wind]`.
    pub wind: Option<WindSpec>,
    /// `[output]`.
    pub output: OutputSpec,
    /// `[[garment]]`.
    pub garments: Vec<GarmentSpec>,
    /// `[[collider]]`.
    pub colliders: Vec<ColliderSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScene {
    #[serde(default)]
    scene: Settings,
    wind: Option<WindSpec>,
    #[serde(default)]
    output: OutputSpec,
    #[serde(default)]
    garment: Vec<GarmentSpec>,
    #[serde(default)]
    collider: Vec<RawCollider>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum ColliderType {
    Plane,
    Sphere,
    Capsule,
    Gltf,
}

/// Flat collider table: which keys are allowed depends on `type`, checked in validation so that
/// the error can name the key.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCollider {
    #[serde(rename = "type")]
    kind: ColliderType,
    point: Option<[f32; 3]>,
    normal: Option<[f32; 3]>,
    center: Option<[f32; 3]>,
    radius: Option<f32>,
    a: Option<[f32; 3]>,
    b: Option<[f32; 3]>,
    radius_a: Option<f32>,
    radius_b: Option<f32>,
    keys: Option<Vec<RawKey>>,
    file: Option<PathBuf>,
    proxies: Option<ProxyMode>,
    mesh: Option<String>,
    inflate: Option<f32>,
    animation: Option<AnimationRef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKey {
    frame: f32,
    point: Option<[f32; 3]>,
    normal: Option<[f32; 3]>,
    center: Option<[f32; 3]>,
    radius: Option<f32>,
    a: Option<[f32; 3]>,
    b: Option<[f32; 3]>,
    radius_a: Option<f32>,
    radius_b: Option<f32>,
}

fn default_fps() -> f32 {
    24.0
}
fn default_frame_start() -> i32 {
    1
}
fn default_substeps() -> u32 {
    5
}
fn default_air_damping() -> f32 {
    DEFAULT_AIR_DAMPING
}
fn default_gravity() -> [f32; 3] {
    [0.0, -9.81, 0.0]
}
fn default_air_density() -> f32 {
    1.2
}
fn default_drag() -> f32 {
    1.0
}
fn default_dir() -> PathBuf {
    PathBuf::from("clothbake-out")
}
fn default_formats() -> Vec<Format> {
    vec![Format::Pc2]
}
fn default_pin_stiffness() -> f32 {
    2000.0
}
fn default_one() -> f32 {
    1.0
}
fn default_thickness() -> f32 {
    0.005
}
fn default_friction() -> f32 {
    0.3
}
fn default_true() -> bool {
    true
}
fn default_self_thickness() -> f32 {
    0.004
}
fn default_self_friction() -> f32 {
    0.2
}

/// Lower-case file extension ("" if none).
pub(crate) fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

impl SceneFile {
    /// Reads and validates a scene file. `material_presets` are the preset names the solver knows
    /// (`garment[i].material` must be one of them).
    pub fn read(path: &Path, material_presets: &[&str]) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| IoError::io(path, e))?;
        Self::parse(path, &text, material_presets)
    }

    /// Parses and validates scene text; `path` names the file in errors and anchors relative paths.
    pub fn parse(path: &Path, text: &str, material_presets: &[&str]) -> Result<Self> {
        let de = toml::Deserializer::new(text);
        let raw: RawScene = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            let inner = e.into_inner();
            let line = inner
                .span()
                .map(|s| format!(" (line {})", line_of(text, s.start)))
                .unwrap_or_default();
            let field = if field == "." { String::new() } else { field };
            IoError::parse(path, field, format!("{}{line}", inner.message().trim()))
        })?;
        let folder = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let v = Validator { file: path };
        v.settings(&raw.scene)?;
        if let Some(w) = &raw.wind {
            v.vec3("wind.velocity", w.velocity)?;
            v.non_negative("wind.air_density", w.air_density)?;
            v.non_negative("wind.drag", w.drag)?;
            v.finite("wind.lift", w.lift)?;
        }
        let mut output = raw.output;
        if output.formats.is_empty() {
            return Err(v.err(
                "output.formats",
                "must list at least one of \"pc2\", \"mdd\", \"obj\"",
            ));
        }
        output.dir = folder.join(&output.dir);
        output.report = output.report.map(|r| folder.join(r));
        let mut garments = raw.garment;
        for (i, g) in garments.iter_mut().enumerate() {
            v.garment(i, g, material_presets)?;
            if g.model == ModelName::Springs && raw.scene.integrator == IntegratorName::Verlet {
                // Verlet relaxes edge lengths and applies the BW hinges' bending: a springs
                // garment has neither its springs' stiffness nor its bend springs there.
                return Err(v.err(
                    format!("garment[{i}].model"),
                    "\"springs\" does not work with scene.integrator = \"verlet\" (Verlet \
                     treats edges as constraints and bends with the bw model's hinges); use \
                     model = \"bw\" or another integrator",
                ));
            }
            g.mesh = folder.join(&g.mesh);
            if let Some(d) = &mut g.driver {
                *d = folder.join(&*d);
            }
        }
        for i in 0..garments.len() {
            for j in 0..i {
                if garments[i].name == garments[j].name {
                    return Err(v.err(
                        format!("garment[{i}].name"),
                        format!(
                            "\"{}\" is already the name of garment[{j}]",
                            garments[i].name
                        ),
                    ));
                }
            }
        }
        let colliders = raw
            .collider
            .into_iter()
            .enumerate()
            .map(|(i, c)| v.collider(i, c, &folder))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            path: path.to_path_buf(),
            settings: raw.scene,
            wind: raw.wind,
            output,
            garments,
            colliders,
        })
    }
}

/// 1-based line number of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

struct Validator<'a> {
    file: &'a Path,
}

impl Validator<'_> {
    fn err(&self, field: impl Into<String>, message: impl Into<String>) -> IoError {
        IoError::invalid(self.file, field, message)
    }

    fn finite(&self, field: &str, x: f32) -> Result<()> {
        if x.is_finite() {
            Ok(())
        } else {
            Err(self.err(field, format!("must be a finite number, got {x}")))
        }
    }

    fn positive(&self, field: &str, x: f32) -> Result<()> {
        if x.is_finite() && x > 0.0 {
            Ok(())
        } else {
            Err(self.err(field, format!("must be > 0, got {x}")))
        }
    }

    fn non_negative(&self, field: &str, x: f32) -> Result<()> {
        if x.is_finite() && x >= 0.0 {
            Ok(())
        } else {
            Err(self.err(field, format!("must be >= 0, got {x}")))
        }
    }

    fn vec3(&self, field: &str, v: [f32; 3]) -> Result<()> {
        for (k, x) in v.iter().enumerate() {
            self.finite(&format!("{field}[{k}]"), *x)?;
        }
        Ok(())
    }

    fn frame_number(&self, field: &str, f: i32) -> Result<()> {
        if f.unsigned_abs() > MAX_FRAME_NUMBER as u32 {
            return Err(self.err(
                field,
                format!("{f} is out of range (at most {MAX_FRAME_NUMBER} in magnitude)"),
            ));
        }
        Ok(())
    }

    fn settings(&self, s: &Settings) -> Result<()> {
        self.positive("scene.fps", s.fps)?;
        self.frame_number("scene.frame_start", s.frame_start)?;
        if let Some(end) = s.frame_end {
            self.frame_number("scene.frame_end", end)?;
        }
        if s.preroll as i64 >= MAX_FRAMES {
            return Err(self.err(
                "scene.preroll",
                format!(
                    "{} frames is more than a bake may simulate ({MAX_FRAMES})",
                    s.preroll
                ),
            ));
        }
        if let Some(end) = s.frame_end {
            if end < s.frame_start {
                return Err(self.err(
                    "scene.frame_end",
                    format!("{end} is before scene.frame_start = {}", s.frame_start),
                ));
            }
        }
        if s.substeps == 0 {
            return Err(self.err("scene.substeps", "must be >= 1, got 0"));
        }
        self.vec3("scene.gravity", s.gravity)?;
        self.finite("scene.time_offset", s.time_offset)?;
        self.non_negative("scene.air_damping", s.air_damping)?;
        if let Some(t) = s.cg_tolerance {
            self.positive("scene.cg_tolerance", t)?;
        }
        if let Some(l) = s.strain_limit {
            self.positive("scene.strain_limit", l)?;
        }
        if let Some(j) = s.strain_jump {
            self.positive("scene.strain_jump", j)?;
        }
        if let Some(f) = s.strain_jump_floor {
            self.non_negative("scene.strain_jump_floor", f)?;
        }
        if let Some(a) = s.body_strain_allowance {
            self.non_negative("scene.body_strain_allowance", a)?;
        }
        if let Some(d) = s.self_contact_damping {
            self.non_negative("scene.self_contact_damping", d)?;
        }
        if let Some(k) = s.kang_iterations {
            if k % 2 == 0 {
                return Err(self.err(
                    "scene.kang_iterations",
                    format!(
                        "must be odd (Kang 2003 §4.2: small even counts are unstable), got {k}"
                    ),
                ));
            }
        }
        if s.damping_projection && s.integrator == IntegratorName::Verlet {
            return Err(self.err(
                "scene.damping_projection",
                "does not work with integrator = \"verlet\" (its air damping is an explicit \
                 force of its own substep); use another integrator or leave it false",
            ));
        }
        if s.verlet_iterations == Some(0) {
            return Err(self.err("scene.verlet_iterations", "must be >= 1, got 0"));
        }
        if s.cg_max_iterations == Some(0) {
            return Err(self.err("scene.cg_max_iterations", "must be >= 1, got 0"));
        }
        Ok(())
    }

    fn garment(&self, i: usize, g: &GarmentSpec, presets: &[&str]) -> Result<()> {
        let f = |k: &str| format!("garment[{i}].{k}");
        if g.name.is_empty() || g.name.contains(['/', '\\', ':']) || g.name.trim() != g.name {
            return Err(self.err(
                f("name"),
                format!(
                    "\"{}\" cannot name a file (empty, surrounding spaces, or / \\ :)",
                    g.name
                ),
            ));
        }
        let ext = extension(&g.mesh);
        if !matches!(ext.as_str(), "obj" | "gltf" | "glb") {
            return Err(self.err(
                f("mesh"),
                format!(
                    "\"{}\": expected a .obj, .gltf or .glb file",
                    g.mesh.display()
                ),
            ));
        }
        let gltf = g.is_gltf();
        if g.node.is_some() && !gltf {
            return Err(self.err(f("node"), "only applies to glTF meshes"));
        }
        if g.animation.is_some() && !gltf {
            return Err(self.err(f("animation"), "only applies to glTF meshes"));
        }
        if let Some(m) = &g.transform {
            if gltf {
                return Err(self.err(
                    f("transform"),
                    "only applies to OBJ meshes (glTF uses its node)",
                ));
            }
            for (k, x) in m.iter().enumerate() {
                self.finite(&format!("{}[{k}]", f("transform")), *x)?;
            }
            let det = glam::Mat4::from_cols_array(m).determinant();
            if det.is_nan() || det.abs() <= 1e-12 {
                return Err(self.err(f("transform"), "matrix is not invertible"));
            }
        }
        if let Some(keys) = &g.transform_keys {
            self.transform_keys(i, g, keys)?;
        }
        self.driver(i, g)?;
        if let Some(name) = &g.material {
            if !presets.contains(&name.as_str()) {
                return Err(self.err(
                    f("material"),
                    format!("unknown preset \"{name}\" (known: {})", presets.join(", ")),
                ));
            }
        }
        if let Some(x) = g.density {
            self.positive(&f("density"), x)?;
        }
        if let Some(x) = g.spring_stiffness {
            if g.model != ModelName::Springs {
                return Err(self.err(f("spring_stiffness"), "only applies to model = \"springs\""));
            }
            self.positive(&f("spring_stiffness"), x)?;
        }
        if let Some(s) = g.stretch {
            self.positive(&format!("{}[0]", f("stretch")), s[0])?;
            self.positive(&format!("{}[1]", f("stretch")), s[1])?;
        }
        for (k, x) in [
            ("shear", g.shear),
            ("bend", g.bend),
            ("stretch_damping", g.stretch_damping),
            ("bend_damping", g.bend_damping),
        ] {
            if let Some(x) = x {
                self.non_negative(&f(k), x)?;
            }
        }
        if let Some(s) = g.rest_scale {
            self.positive(&format!("{}[0]", f("rest_scale")), s[0])?;
            self.positive(&format!("{}[1]", f("rest_scale")), s[1])?;
        }
        self.positive(&f("uv_scale"), g.uv_scale)?;
        self.non_negative(&f("thickness"), g.thickness)?;
        self.non_negative(&f("friction"), g.friction)?;
        if let Some(x) = g.static_friction {
            self.non_negative(&f("static_friction"), x)?;
        }
        self.positive(&f("self_thickness"), g.self_thickness)?;
        self.non_negative(&f("self_friction"), g.self_friction)?;
        if let Some(p) = &g.pin {
            if let Some(w) = &p.weights {
                if w.len() != p.vertices.len() {
                    return Err(self.err(
                        f("pin.weights"),
                        format!(
                            "has {} entries but pin.vertices has {}",
                            w.len(),
                            p.vertices.len()
                        ),
                    ));
                }
                for (k, x) in w.iter().enumerate() {
                    if !(x.is_finite() && *x > 0.0 && *x <= 1.0) {
                        return Err(self.err(
                            format!("{}[{k}]", f("pin.weights")),
                            format!("must be in (0, 1], got {x}"),
                        ));
                    }
                }
            }
            if p.attribute.is_some() && !gltf {
                return Err(self.err(f("pin.attribute"), "only applies to glTF meshes"));
            }
            if p.follow == Follow::Skin && !gltf {
                return Err(self.err(
                    f("pin.follow"),
                    "\"skin\" needs a glTF mesh (OBJ has no skin)",
                ));
            }
            if p.follow == Follow::Cache && g.driver.is_none() {
                return Err(self.err(
                    f("pin.follow"),
                    "\"cache\" needs the garment's `driver` (a PC2 or MDD of its animated positions)",
                ));
            }
            self.positive(&f("pin.stiffness"), p.stiffness)?;
        }
        Ok(())
    }

    fn transform_keys(&self, i: usize, g: &GarmentSpec, keys: &[TransformKey]) -> Result<()> {
        let f = |k: &str| format!("garment[{i}].{k}");
        if g.is_gltf() {
            return Err(self.err(
                f("transform_keys"),
                "only applies to OBJ meshes (glTF uses its node's animation)",
            ));
        }
        if g.transform.is_some() {
            return Err(self.err(
                f("transform_keys"),
                "give either `transform` (static) or `transform_keys` (keyed), not both",
            ));
        }
        if keys.is_empty() {
            return Err(self.err(f("transform_keys"), "is empty (give at least one key)"));
        }
        for (k, key) in keys.iter().enumerate() {
            let kf = |n: &str| format!("garment[{i}].transform_keys[{k}].{n}");
            self.finite(&kf("frame"), key.frame)?;
            if k > 0 && key.frame <= keys[k - 1].frame {
                return Err(self.err(
                    kf("frame"),
                    format!(
                        "{} is not after the previous key's frame {}",
                        key.frame,
                        keys[k - 1].frame
                    ),
                ));
            }
            for (c, x) in key.matrix.iter().enumerate() {
                self.finite(&format!("{}[{c}]", kf("matrix")), *x)?;
            }
            let det = glam::Mat4::from_cols_array(&key.matrix).determinant();
            if det.is_nan() || det.abs() <= 1e-12 {
                return Err(self.err(kf("matrix"), "matrix is not invertible"));
            }
        }
        Ok(())
    }

    fn driver(&self, i: usize, g: &GarmentSpec) -> Result<()> {
        let f = |k: &str| format!("garment[{i}].{k}");
        match &g.driver {
            Some(d) => {
                if let Some(f0) = g.driver_frame_start {
                    self.frame_number(&f("driver_frame_start"), f0)?;
                }
                if !matches!(extension(d).as_str(), "pc2" | "mdd") {
                    return Err(self.err(
                        f("driver"),
                        format!("\"{}\": expected a .pc2 or .mdd file", d.display()),
                    ));
                }
            }
            None => {
                if g.driver_frame_start.is_some() {
                    return Err(self.err(f("driver_frame_start"), "only applies with `driver`"));
                }
                if g.driver_space != DriverSpace::World {
                    return Err(self.err(f("driver_space"), "only applies with `driver`"));
                }
            }
        }
        Ok(())
    }

    fn collider(&self, i: usize, c: RawCollider, folder: &Path) -> Result<ColliderSpec> {
        let f = |k: &str| format!("collider[{i}].{k}");
        let kind = c.kind;
        let name = match kind {
            ColliderType::Plane => "plane",
            ColliderType::Sphere => "sphere",
            ColliderType::Capsule => "capsule",
            ColliderType::Gltf => "gltf",
        };
        let allowed: &[&str] = match kind {
            ColliderType::Plane => &["point", "normal", "keys"],
            ColliderType::Sphere => &["center", "radius", "keys"],
            ColliderType::Capsule => &["a", "b", "radius_a", "radius_b", "keys"],
            ColliderType::Gltf => &["file", "proxies", "mesh", "inflate", "animation"],
        };
        let present = [
            ("point", c.point.is_some()),
            ("normal", c.normal.is_some()),
            ("center", c.center.is_some()),
            ("radius", c.radius.is_some()),
            ("a", c.a.is_some()),
            ("b", c.b.is_some()),
            ("radius_a", c.radius_a.is_some()),
            ("radius_b", c.radius_b.is_some()),
            ("keys", c.keys.is_some()),
            ("file", c.file.is_some()),
            ("proxies", c.proxies.is_some()),
            ("mesh", c.mesh.is_some()),
            ("inflate", c.inflate.is_some()),
            ("animation", c.animation.is_some()),
        ];
        for (key, is) in present {
            if is && !allowed.contains(&key) {
                return Err(self.err(f(key), format!("is not a key of a \"{name}\" collider")));
            }
        }
        let need3 = |k: &str, v: Option<[f32; 3]>| -> Result<[f32; 3]> {
            let v =
                v.ok_or_else(|| self.err(f(k), format!("missing (required for type \"{name}\")")))?;
            self.vec3(&f(k), v)?;
            Ok(v)
        };
        let need1 = |k: &str, v: Option<f32>| -> Result<f32> {
            let v =
                v.ok_or_else(|| self.err(f(k), format!("missing (required for type \"{name}\")")))?;
            self.positive(&f(k), v)?;
            Ok(v)
        };
        let shape = match kind {
            ColliderType::Gltf => {
                let file = c
                    .file
                    .ok_or_else(|| self.err(f("file"), "missing (required for type \"gltf\")"))?;
                if !matches!(extension(&file).as_str(), "gltf" | "glb") {
                    return Err(self.err(
                        f("file"),
                        format!("\"{}\": expected a .gltf or .glb file", file.display()),
                    ));
                }
                let proxies = c.proxies.unwrap_or_default();
                if c.mesh.is_some() && proxies != ProxyMode::Auto {
                    return Err(self.err(f("mesh"), "only applies to proxies = \"auto\""));
                }
                let inflate = c.inflate.unwrap_or(0.0);
                self.finite(&f("inflate"), inflate)?;
                return Ok(ColliderSpec::Gltf {
                    file: folder.join(file),
                    proxies,
                    mesh: c.mesh,
                    inflate,
                    animation: c.animation,
                });
            }
            ColliderType::Plane => Shape::Plane {
                point: need3("point", c.point)?.into(),
                normal: self.unit(&f("normal"), need3("normal", c.normal)?)?,
            },
            ColliderType::Sphere => Shape::Sphere {
                center: need3("center", c.center)?.into(),
                radius: need1("radius", c.radius)?,
            },
            ColliderType::Capsule => Shape::Capsule {
                a: need3("a", c.a)?.into(),
                b: need3("b", c.b)?.into(),
                radius_a: need1("radius_a", c.radius_a)?,
                radius_b: need1("radius_b", c.radius_b)?,
            },
        };
        let mut keys = Vec::new();
        for (k, key) in c.keys.unwrap_or_default().into_iter().enumerate() {
            let kf = |n: &str| format!("collider[{i}].keys[{k}].{n}");
            self.finite(&kf("frame"), key.frame)?;
            if let Some((prev, _)) = keys.last() {
                if key.frame <= *prev {
                    return Err(self.err(
                        kf("frame"),
                        format!("{} is not after the previous key's frame {prev}", key.frame),
                    ));
                }
            }
            let opt3 = |n: &str, v: Option<[f32; 3]>, base: Vec3| -> Result<Vec3> {
                match v {
                    Some(v) => {
                        self.vec3(&kf(n), v)?;
                        Ok(v.into())
                    }
                    None => Ok(base),
                }
            };
            let opt1 = |n: &str, v: Option<f32>, base: f32| -> Result<f32> {
                match v {
                    Some(v) => {
                        self.positive(&kf(n), v)?;
                        Ok(v)
                    }
                    None => Ok(base),
                }
            };
            let key_present = [
                ("point", key.point.is_some()),
                ("normal", key.normal.is_some()),
                ("center", key.center.is_some()),
                ("radius", key.radius.is_some()),
                ("a", key.a.is_some()),
                ("b", key.b.is_some()),
                ("radius_a", key.radius_a.is_some()),
                ("radius_b", key.radius_b.is_some()),
            ];
            for (n, is) in key_present {
                if is && !allowed.contains(&n) {
                    return Err(self.err(kf(n), format!("is not a key of a \"{name}\" collider")));
                }
            }
            let s = match shape {
                Shape::Plane { point, normal } => Shape::Plane {
                    point: opt3("point", key.point, point)?,
                    normal: self.unit(&kf("normal"), opt3("normal", key.normal, normal)?.into())?,
                },
                Shape::Sphere { center, radius } => Shape::Sphere {
                    center: opt3("center", key.center, center)?,
                    radius: opt1("radius", key.radius, radius)?,
                },
                Shape::Capsule {
                    a,
                    b,
                    radius_a,
                    radius_b,
                } => Shape::Capsule {
                    a: opt3("a", key.a, a)?,
                    b: opt3("b", key.b, b)?,
                    radius_a: opt1("radius_a", key.radius_a, radius_a)?,
                    radius_b: opt1("radius_b", key.radius_b, radius_b)?,
                },
            };
            keys.push((key.frame, s));
        }
        Ok(ColliderSpec::Analytic { shape, keys })
    }

    fn unit(&self, field: &str, n: [f32; 3]) -> Result<Vec3> {
        let v = Vec3::from(n);
        let len = v.length();
        if len.is_nan() || len <= 1e-12 {
            return Err(self.err(field, "must not be the zero vector"));
        }
        Ok(v / len)
    }
}
