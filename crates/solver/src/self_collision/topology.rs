//! Static input of the self-collision stage: triangles of every garment in one index space, the
//! garment ("layer") of each vertex, the per-garment self-collision switch and per-garment
//! thickness/friction (Bridson, Fedkiw & Anderson 2002, §5–§7).

use glam::Vec3;
use thiserror::Error;

/// Per-garment collision parameters, indexed by layer in [`super::SelfCollision::resolve`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelfCollisionParams {
    /// Cloth thickness h (m): two cloth primitives closer than the mean thickness of their
    /// garments are pushed apart (BFA02 §7.2); typical 1e-3..5e-3. Must be below ~0.7× the
    /// shortest rest edge unless `rest_positions` are given (see [`SelfCollisionTopology`]).
    pub thickness: f32,
    /// Coulomb friction coefficient μ (dimensionless) between cloth layers (BFA02 §7.2).
    pub friction: f32,
}

impl Default for SelfCollisionParams {
    fn default() -> Self {
        Self {
            thickness: 3e-3,
            friction: 0.3,
        }
    }
}

impl SelfCollisionParams {
    /// Checks that thickness is finite and > 0 and friction finite and ≥ 0.
    pub fn validate(&self) -> Result<(), SelfCollisionError> {
        if !(self.thickness.is_finite() && self.thickness > 0.0) {
            return Err(SelfCollisionError::Thickness(self.thickness));
        }
        if !(self.friction.is_finite() && self.friction >= 0.0) {
            return Err(SelfCollisionError::Friction(self.friction));
        }
        Ok(())
    }
}

/// Mesh description for [`super::SelfCollision::new`]. All garments of a scene share one vertex
/// index space (concatenate them); `vertex_layer[i]` says which garment vertex `i` belongs to.
#[derive(Clone, Debug, Default)]
pub struct SelfCollisionTopology {
    /// Triangles (vertex indices) of all garments.
    pub triangles: Vec<[u32; 3]>,
    /// Garment (layer) of each vertex; its length is the vertex count.
    pub vertex_layer: Vec<u32>,
    /// Per layer: does the garment collide with itself? Different layers always collide with each
    /// other (layered garments), whatever this switch says.
    pub layer_self_collide: Vec<bool>,
    /// Optional rest positions (m): pairs of one garment whose rest distance is already below the
    /// thickness (fine meshes, thickness > edge length) get no proximity repulsion, so a flat
    /// sheet does not push itself apart. Continuous collision still applies to them.
    pub rest_positions: Option<Vec<Vec3>>,
}

impl SelfCollisionTopology {
    /// One garment with self-collision enabled, no rest-distance exclusion.
    pub fn single(vertex_count: usize, triangles: Vec<[u32; 3]>) -> Self {
        Self {
            triangles,
            vertex_layer: vec![0; vertex_count],
            layer_self_collide: vec![true],
            rest_positions: None,
        }
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.vertex_layer.len()
    }

    /// Checks indices, layers and lengths; names the offending element.
    pub fn validate(&self) -> Result<(), SelfCollisionError> {
        let n = self.vertex_layer.len();
        for (t, tri) in self.triangles.iter().enumerate() {
            for &vtx in tri {
                if vtx as usize >= n {
                    return Err(SelfCollisionError::VertexOutOfRange {
                        triangle: t,
                        vertex: vtx,
                        vertex_count: n,
                    });
                }
            }
            if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
                return Err(SelfCollisionError::DegenerateTriangle { triangle: t });
            }
        }
        let layers = self.layer_self_collide.len();
        for (vtx, &layer) in self.vertex_layer.iter().enumerate() {
            if layer as usize >= layers {
                return Err(SelfCollisionError::LayerOutOfRange {
                    vertex: vtx,
                    layer,
                    layers,
                });
            }
        }
        if let Some(rest) = &self.rest_positions {
            if rest.len() != n {
                return Err(SelfCollisionError::RestLength {
                    got: rest.len(),
                    expected: n,
                });
            }
            if let Some(i) = rest.iter().position(|p| !p.is_finite()) {
                return Err(SelfCollisionError::RestNonFinite { vertex: i });
            }
        }
        Ok(())
    }
}

/// Errors of the self-collision stage (bad topology or parameters).
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SelfCollisionError {
    #[error("self-collision: triangle {triangle} references vertex {vertex}, but there are only {vertex_count} vertices")]
    VertexOutOfRange {
        triangle: usize,
        vertex: u32,
        vertex_count: usize,
    },
    #[error("self-collision: triangle {triangle} uses the same vertex twice")]
    DegenerateTriangle { triangle: usize },
    #[error("self-collision: vertex {vertex} is in layer {layer}, but only {layers} layers are configured")]
    LayerOutOfRange {
        vertex: usize,
        layer: u32,
        layers: usize,
    },
    #[error("self-collision: rest_positions has {got} entries, expected {expected}")]
    RestLength { got: usize, expected: usize },
    #[error("self-collision: rest position of vertex {vertex} is not finite")]
    RestNonFinite { vertex: usize },
    #[error("self-collision: thickness must be finite and > 0 m, got {0}")]
    Thickness(f32),
    #[error("self-collision: friction must be finite and >= 0, got {0}")]
    Friction(f32),
}
/// The distinct edges of `triangles`, each as [lower, higher] vertex, sorted.
pub(super) fn unique_edges(triangles: &[[u32; 3]]) -> Vec<[u32; 2]> {
    let mut edges: Vec<[u32; 2]> = triangles
        .iter()
        .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
        .map(|[a, b]| [a.min(b), a.max(b)])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// The triangles around each vertex, in triangle order (compressed rows).
#[derive(Debug, Default)]
pub(super) struct VertexTriangles {
    start: Vec<u32>,
    around: Vec<u32>,
}

impl VertexTriangles {
    /// For `n` vertices and these triangles.
    pub fn new(n: usize, triangles: &[[u32; 3]]) -> Self {
        let mut start = vec![0u32; n + 1];
        for &v in triangles.iter().flatten() {
            start[v as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut around = vec![0u32; 3 * triangles.len()];
        for (t, tri) in triangles.iter().enumerate() {
            for &v in tri {
                around[fill[v as usize] as usize] = t as u32;
                fill[v as usize] += 1;
            }
        }
        Self { start, around }
    }

    /// The triangles with corner `v`, in increasing order.
    pub fn of(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.around[self.start[v] as usize..self.start[v + 1] as usize]
    }
}
