//! Typed errors of the solver: bad input names the garment and the offending element; failures while
//! stepping are reported as values, never as panics.

use thiserror::Error;

/// Invalid garment or settings given to [`crate::Simulation::new`]. Every variant names the garment
/// (by its `name`) and the element (triangle, vertex, edge, pin index) at fault.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ModelError {
    #[error("garment '{garment}': no triangles")]
    NoTriangles { garment: String },
    #[error("garment '{garment}': triangle {triangle} refers to vertex {vertex}, but the garment has only {count} vertices")]
    IndexOutOfRange {
        garment: String,
        triangle: usize,
        vertex: u32,
        count: usize,
    },
    #[error("garment '{garment}': triangle {triangle} uses vertex {vertex} twice")]
    RepeatedIndex {
        garment: String,
        triangle: usize,
        vertex: u32,
    },
    #[error("garment '{garment}': vertex {vertex} has a non-finite position {position:?}")]
    NonFinitePosition {
        garment: String,
        vertex: u32,
        position: [f32; 3],
    },
    #[error("garment '{garment}': vertex {vertex} is a duplicate of vertex {duplicate_of} (same position {position:?}); weld the mesh")]
    DuplicateVertex {
        garment: String,
        vertex: u32,
        duplicate_of: u32,
        position: [f32; 3],
    },
    #[error("garment '{garment}': vertex {vertex} is not used by any triangle")]
    UnreferencedVertex { garment: String, vertex: u32 },
    #[error("garment '{garment}': triangle {triangle} (vertices {vertices:?}) has zero area")]
    ZeroAreaTriangle {
        garment: String,
        triangle: usize,
        vertices: [u32; 3],
    },
    #[error("garment '{garment}': triangle {triangle} (vertices {vertices:?}) has zero area in UV space")]
    ZeroAreaUv {
        garment: String,
        triangle: usize,
        vertices: [u32; 3],
    },
    #[error("garment '{garment}': edge {edge:?} is shared by {triangles} triangles (non-manifold; first triangle {triangle})")]
    NonManifoldEdge {
        garment: String,
        edge: [u32; 2],
        triangles: usize,
        triangle: usize,
    },
    #[error("garment '{garment}': triangles {triangle} and {other} have the same three vertices")]
    DuplicateTriangle {
        garment: String,
        triangle: usize,
        other: usize,
    },
    #[error("garment '{garment}': rest shape from UVs needs {expected} UVs, got {got}")]
    UvCount {
        garment: String,
        expected: usize,
        got: usize,
    },
    #[error("garment '{garment}': UV {vertex} is not finite")]
    NonFiniteUv { garment: String, vertex: u32 },
    #[error("garment '{garment}': {got} rest positions, expected {expected} (one per vertex)")]
    RestPositionCount {
        garment: String,
        expected: usize,
        got: usize,
    },
    #[error("garment '{garment}': rest position {vertex} is not finite")]
    NonFiniteRestPosition { garment: String, vertex: u32 },
    #[error("garment '{garment}': pin {pin} refers to vertex {vertex}, but the garment has only {count} vertices")]
    PinOutOfRange {
        garment: String,
        pin: usize,
        vertex: u32,
        count: usize,
    },
    #[error("garment '{garment}': pin {pin} (vertex {vertex}) has weight {weight}; expected 0 < weight <= 1")]
    PinWeight {
        garment: String,
        pin: usize,
        vertex: u32,
        weight: f32,
    },
    #[error("garment '{garment}': {field} = {value} is invalid ({expected})")]
    Parameter {
        garment: String,
        field: &'static str,
        value: f32,
        expected: &'static str,
    },
    #[error("garment '{garment}': material: {message}")]
    Material { garment: String, message: String },
    #[error("garment '{garment}': self-collision: {message}")]
    SelfCollision { garment: String, message: String },
    #[error("settings: {field} = {value} is invalid ({expected})")]
    Settings {
        field: &'static str,
        value: f64,
        expected: &'static str,
    },
}

/// A frame that could not be advanced. The simulation state is left at the last good substep.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SimError {
    #[error("garment {garment}: vertex {vertex} became non-finite at t = {time} s")]
    NonFinite {
        garment: usize,
        vertex: u32,
        time: f64,
    },
    /// The implicit solve (BW §5) produced non-finite values at the smallest substep allowed (or with
    /// adaptive stepping off): the state cannot be advanced. Seen with absurd loads (wind 1e38 m/s).
    #[error(
        "the linear solve produced non-finite values at t = {time} s, down to h = {h} s ({halvings} halvings)"
    )]
    SolveNonFinite { time: f64, h: f32, halvings: u32 },
    /// A triangle stretched beyond [`crate::SimSettings::strain_limit`] in an accepted substep:
    /// the cloth is being torn apart (pins left behind by the body they belong to, a collider
    /// driven through pinned cloth) and the bake stops instead of going on with a meaningless and
    /// ever costlier state.
    #[error(
        "garment {garment}: triangle {triangle} stretched to strain {strain} (limit {limit}) at t = {time} s"
    )]
    Torn {
        garment: usize,
        /// Triangle index within the garment's simulated mesh.
        triangle: u32,
        strain: f32,
        limit: f32,
        time: f64,
    },
    #[error("bad step input: {0}")]
    Input(String),
    /// The stop flag ([`crate::Simulation::set_stop_flag`]) was raised; the frame was left
    /// unfinished at the last accepted substep.
    #[error("stopped on request at t = {time} s")]
    Stopped { time: f64 },
}
