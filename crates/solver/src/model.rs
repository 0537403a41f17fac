//! The immutable simulation model: every garment concatenated into one system (so garments can
//! collide with each other), with per-vertex lumped masses, per-triangle rest frames, per-hinge rest
//! angles, per-vertex contact parameters and pins (warp.sim style `Model`; changing data is in
//! [`crate::state::State`]).

use crate::error::ModelError;
use crate::forces::{HingeRest, SpringRest, TriangleRest};
use crate::material::Material;
use crate::mesh::build_topology;
use crate::self_collision::SelfCollisionParams;
use crate::spring_network::build_springs;
use glam::{Vec2, Vec3};
use std::ops::Range;

/// Where a garment's rest (unstretched) shape comes from.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum RestShape {
    /// The given positions: each triangle flattened isometrically into its own plane; hinges keep
    /// their rest dihedral angle (pre-curved garments keep their shape).
    #[default]
    Positions,
    /// The mesh UVs times `metres_per_uv` (sewing patterns); flat rest hinges.
    Uv { metres_per_uv: f32 },
}

/// The internal-force model of a garment (scene key `[[garment]] model`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ForceModel {
    /// Baraff & Witkin 1998 §4: per-triangle stretch/shear conditions and per-hinge bending.
    #[default]
    Bw,
    /// Mass-spring network (Provot structural/shear/flexion springs, Choi & Ko buckling bend,
    /// Kang's stabilised Jacobian): see [`crate::spring_network`] and [`crate::forces::spring`].
    Springs {
        /// `k·l₀` (N) of every mesh-edge spring instead of the mapping from `stretch` (Kang 2003
        /// §6 uses 0.03 N); `None`: from the material.
        spring_stiffness: Option<f32>,
    },
}

impl ForceModel {
    /// The scene-file name (`bw`, `springs`).
    pub fn name(self) -> &'static str {
        match self {
            ForceModel::Bw => "bw",
            ForceModel::Springs { .. } => "springs",
        }
    }

    pub fn is_bw(self) -> bool {
        self == ForceModel::Bw
    }
}

/// Coulomb friction coefficients against colliders (dimensionless).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Friction {
    pub static_: f32,
    pub kinetic: f32,
}

impl Default for Friction {
    fn default() -> Self {
        Friction {
            static_: 0.36,
            kinetic: 0.3,
        }
    }
}

/// A pinned vertex: `weight` 1 = held exactly on its target (hard constraint, ndof 0), 0 < weight < 1
/// = goal spring of stiffness `weight · pin_stiffness` towards the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pin {
    pub vertex: u32,
    pub weight: f32,
}

/// One garment as given by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct GarmentDesc {
    /// Names the garment in errors.
    pub name: String,
    /// World positions (m) of the welded mesh: the initial state and, with [`RestShape::Positions`]
    /// and no `rest_positions`, the rest shape.
    pub positions: Vec<Vec3>,
    /// World positions (m) of the rest (unstretched) shape when it differs from the initial state
    /// (a garment that starts in an animated pose, e.g. from a driver cache, with edge lengths, areas
    /// and hinge angles from its undeformed mesh). Parallel to `positions`; `None`: `positions`.
    /// Used by [`RestShape::Positions`] (triangle and hinge rest state, masses), by the UV-warp
    /// direction, and by self-collision's rest proximity; ignored by [`RestShape::Uv`] except there.
    pub rest_positions: Option<Vec<Vec3>>,
    pub triangles: Vec<[u32; 3]>,
    /// Per-vertex texture coordinates: needed by [`RestShape::Uv`]; when present they also orient the
    /// warp (u) direction of [`RestShape::Positions`] rest frames.
    pub uvs: Option<Vec<Vec2>>,
    pub rest: RestShape,
    pub material: Material,
    /// Internal-force model (BW membrane + hinges, or springs).
    pub model: ForceModel,
    /// Collision distance (m) kept from colliders.
    pub thickness: f32,
    pub friction: Friction,
    /// `Some`: this garment collides with itself (and other garments).
    pub self_collision: Option<SelfCollisionParams>,
    pub pins: Vec<Pin>,
    /// Goal-spring stiffness (N/m) per unit pin weight.
    pub pin_stiffness: f32,
}

impl GarmentDesc {
    /// A garment with default material (cotton), 5 mm thickness, default friction, no pins.
    pub fn new(name: impl Into<String>, positions: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Self {
        GarmentDesc {
            name: name.into(),
            positions,
            rest_positions: None,
            triangles,
            uvs: None,
            rest: RestShape::Positions,
            material: Material::default(),
            model: ForceModel::Bw,
            thickness: 0.005,
            friction: Friction::default(),
            self_collision: None,
            pins: Vec::new(),
            pin_stiffness: 2000.0,
        }
    }
}

/// Index ranges of one garment inside the concatenated model.
#[derive(Debug, Clone, PartialEq)]
pub struct GarmentRange {
    pub name: String,
    pub vertices: Range<usize>,
    pub triangles: Range<usize>,
}

/// The concatenated, immutable model. Vertex, triangle and hinge indices are global.
#[derive(Debug, Clone)]
pub struct Model {
    pub garments: Vec<GarmentRange>,
    /// Initial positions (m).
    pub initial_positions: Vec<Vec3>,
    /// Rest-shape positions (m): each garment's `rest_positions`, else its initial positions.
    pub rest_positions: Vec<Vec3>,
    /// Lumped mass (kg): density · area / 3 from each adjacent triangle (rest areas).
    pub mass: Vec<f32>,
    /// Lumped area (m²): one third of each adjacent triangle's rest area (for air damping).
    pub area: Vec<f32>,
    pub triangles: Vec<[u32; 3]>,
    pub triangle_rest: Vec<TriangleRest>,
    /// Index into `materials` (= the garment index).
    pub triangle_material: Vec<u32>,
    /// Per triangle: it carries BW stretch/shear forces (its garment's model is [`ForceModel::Bw`]).
    /// Triangles of spring garments still carry mass, wind, collisions and the strain measure.
    pub triangle_membrane: Vec<bool>,
    /// `[e0, e1, o0, o1]` per interior edge of the BW garments (see [`crate::mesh::Topology`]).
    pub hinges: Vec<[u32; 4]>,
    pub hinge_rest: Vec<HingeRest>,
    pub hinge_material: Vec<u32>,
    /// Springs of the [`ForceModel::Springs`] garments: vertex pairs and constants
    /// ([`crate::spring_network`]).
    pub springs: Vec<[u32; 2]>,
    pub spring_rest: Vec<SpringRest>,
    /// Unique mesh edges `[a, b]`, a < b.
    pub edges: Vec<[u32; 2]>,
    /// One material per garment.
    pub materials: Vec<Material>,
    /// One force model per garment.
    pub force_models: Vec<ForceModel>,
    /// Per vertex: collision thickness (m) and friction against colliders.
    pub thickness: Vec<f32>,
    pub friction: Vec<Friction>,
    /// Pins sorted by vertex (global indices), at most one per vertex.
    pub pins: Vec<Pin>,
    /// Per pin: goal-spring stiffness (N/m) = weight · pin_stiffness (unused for hard pins).
    pub pin_spring: Vec<f32>,
    /// Per vertex: held by a hard pin (weight 1).
    pub hard_pinned: Vec<bool>,
    /// Per garment: self-collision parameters if enabled.
    pub self_collision: Vec<Option<SelfCollisionParams>>,
}

fn positive(
    garment: &str,
    field: &'static str,
    value: f32,
    allow_zero: bool,
) -> Result<(), ModelError> {
    let ok = value.is_finite() && (value > 0.0 || (allow_zero && value == 0.0));
    if ok {
        Ok(())
    } else {
        let expected = if allow_zero {
            "finite and >= 0"
        } else {
            "finite and > 0"
        };
        Err(ModelError::Parameter {
            garment: garment.to_string(),
            field,
            value,
            expected,
        })
    }
}

impl Model {
    /// Validates and concatenates the garments.
    pub fn new(garments: &[GarmentDesc]) -> Result<Self, ModelError> {
        let mut m = Model {
            garments: Vec::new(),
            initial_positions: Vec::new(),
            rest_positions: Vec::new(),
            mass: Vec::new(),
            area: Vec::new(),
            triangles: Vec::new(),
            triangle_rest: Vec::new(),
            triangle_material: Vec::new(),
            triangle_membrane: Vec::new(),
            hinges: Vec::new(),
            hinge_rest: Vec::new(),
            hinge_material: Vec::new(),
            springs: Vec::new(),
            spring_rest: Vec::new(),
            edges: Vec::new(),
            materials: Vec::new(),
            force_models: Vec::new(),
            thickness: Vec::new(),
            friction: Vec::new(),
            pins: Vec::new(),
            pin_spring: Vec::new(),
            hard_pinned: Vec::new(),
            self_collision: Vec::new(),
        };
        for (gi, g) in garments.iter().enumerate() {
            m.add_garment(gi as u32, g)?;
        }
        Ok(m)
    }

    pub fn vertex_count(&self) -> usize {
        self.mass.len()
    }

    /// Garment index owning global vertex `v`.
    pub fn garment_of(&self, v: usize) -> usize {
        self.garments
            .iter()
            .position(|g| g.vertices.contains(&v))
            .unwrap_or(0)
    }

    fn add_garment(&mut self, gi: u32, g: &GarmentDesc) -> Result<(), ModelError> {
        let name = g.name.as_str();
        let topo = build_topology(name, &g.positions, &g.triangles)?;
        g.material.validate().map_err(|e| ModelError::Material {
            garment: name.to_string(),
            message: e.to_string(),
        })?;
        positive(name, "thickness", g.thickness, false)?;
        positive(name, "friction.static", g.friction.static_, true)?;
        positive(name, "friction.kinetic", g.friction.kinetic, true)?;
        positive(name, "pin_stiffness", g.pin_stiffness, true)?;
        if let ForceModel::Springs {
            spring_stiffness: Some(k),
        } = g.model
        {
            positive(name, "spring_stiffness", k, false)?;
        }
        if let Some(sc) = &g.self_collision {
            positive(name, "self_collision.thickness", sc.thickness, false)?;
            positive(name, "self_collision.friction", sc.friction, true)?;
        }
        let n = g.positions.len();
        let rest_positions: &[Vec3] = match &g.rest_positions {
            Some(r) if r.len() != n => {
                return Err(ModelError::RestPositionCount {
                    garment: name.to_string(),
                    expected: n,
                    got: r.len(),
                })
            }
            Some(r) => {
                if let Some(i) = r.iter().position(|p| !p.is_finite()) {
                    return Err(ModelError::NonFiniteRestPosition {
                        garment: name.to_string(),
                        vertex: i as u32,
                    });
                }
                r
            }
            None => &g.positions,
        };
        let uvs = match (&g.uvs, g.rest) {
            (Some(uv), _) if uv.len() != n => {
                return Err(ModelError::UvCount {
                    garment: name.to_string(),
                    expected: n,
                    got: uv.len(),
                })
            }
            (None, RestShape::Uv { .. }) => {
                return Err(ModelError::UvCount {
                    garment: name.to_string(),
                    expected: n,
                    got: 0,
                })
            }
            (uv, _) => uv.as_deref(),
        };
        if let Some(uv) = uvs {
            if let Some(i) = uv.iter().position(|u| !u.is_finite()) {
                return Err(ModelError::NonFiniteUv {
                    garment: name.to_string(),
                    vertex: i as u32,
                });
            }
        }
        if let RestShape::Uv { metres_per_uv } = g.rest {
            positive(name, "metres_per_uv", metres_per_uv, false)?;
        }
        let base = self.mass.len() as u32;
        let tri_base = self.triangles.len();
        self.materials.push(g.material);
        self.force_models.push(g.model);
        let bw = g.model.is_bw();
        let mut local_rest = Vec::with_capacity(g.triangles.len());
        let mut mass = vec![0.0f32; n];
        let mut area = vec![0.0f32; n];
        for (t, tri) in g.triangles.iter().enumerate() {
            let p = tri.map(|i| rest_positions[i as usize]);
            let rest = match (g.rest, uvs) {
                (RestShape::Uv { metres_per_uv }, Some(uv)) => {
                    TriangleRest::from_uv(tri.map(|i| uv[i as usize]), metres_per_uv).ok_or_else(
                        || ModelError::ZeroAreaUv {
                            garment: name.to_string(),
                            triangle: t,
                            vertices: *tri,
                        },
                    )?
                }
                (_, Some(uv)) => TriangleRest::from_positions_oriented(
                    p,
                    uv_warp(p, tri.map(|i| uv[i as usize])),
                )
                .ok_or_else(|| ModelError::ZeroAreaTriangle {
                    garment: name.to_string(),
                    triangle: t,
                    vertices: *tri,
                })?,
                _ => TriangleRest::from_positions_oriented(p, Vec3::X).ok_or_else(|| {
                    ModelError::ZeroAreaTriangle {
                        garment: name.to_string(),
                        triangle: t,
                        vertices: *tri,
                    }
                })?,
            };
            for &i in tri {
                mass[i as usize] += g.material.density * rest.area / 3.0;
                area[i as usize] += rest.area / 3.0;
            }
            self.triangles.push(tri.map(|i| i + base));
            self.triangle_rest.push(rest);
            self.triangle_material.push(gi);
            self.triangle_membrane.push(bw);
            local_rest.push(rest);
        }
        if let ForceModel::Springs { spring_stiffness } = g.model {
            let rest_point = |i: u32| match (g.rest, uvs) {
                (RestShape::Uv { metres_per_uv }, Some(uv)) => {
                    (uv[i as usize] * metres_per_uv).extend(0.0)
                }
                _ => rest_positions[i as usize],
            };
            let springs = build_springs(
                &g.triangles,
                &local_rest,
                &topo,
                &rest_point,
                &g.material,
                spring_stiffness,
            );
            for s in springs {
                self.springs.push(s.vertices.map(|i| i + base));
                self.spring_rest.push(s.rest);
            }
        }
        let hinges = if bw { &topo.hinges[..] } else { &[] };
        for (hinge, &t) in hinges.iter().zip(&topo.hinge_triangle) {
            let rest = match (g.rest, uvs) {
                (RestShape::Uv { metres_per_uv }, Some(uv)) => {
                    HingeRest::from_uv(hinge.map(|i| uv[i as usize]), metres_per_uv)
                }
                _ => HingeRest::from_positions(hinge.map(|i| rest_positions[i as usize])),
            };
            // Lazily: an eager error (its garment name allocated) per element was 18 % of the
            // dress-walk sample's model building (callgrind).
            let rest = rest.ok_or_else(|| ModelError::ZeroAreaTriangle {
                garment: name.to_string(),
                triangle: t as usize,
                vertices: g.triangles[t as usize],
            })?;
            self.hinges.push(hinge.map(|i| i + base));
            self.hinge_rest.push(rest);
            self.hinge_material.push(gi);
        }
        self.edges
            .extend(topo.edges.iter().map(|e| e.map(|i| i + base)));
        // Pins: validated, one per vertex (the last given wins), sorted by vertex.
        let mut pins: Vec<Pin> = Vec::with_capacity(g.pins.len());
        for (k, p) in g.pins.iter().enumerate() {
            if p.vertex as usize >= n {
                return Err(ModelError::PinOutOfRange {
                    garment: name.to_string(),
                    pin: k,
                    vertex: p.vertex,
                    count: n,
                });
            }
            if !(p.weight.is_finite() && p.weight > 0.0 && p.weight <= 1.0) {
                return Err(ModelError::PinWeight {
                    garment: name.to_string(),
                    pin: k,
                    vertex: p.vertex,
                    weight: p.weight,
                });
            }
            pins.push(Pin {
                vertex: p.vertex + base,
                weight: p.weight,
            });
        }
        pins.reverse();
        pins.sort_by_key(|p| p.vertex);
        pins.dedup_by_key(|p| p.vertex);
        self.pin_spring
            .extend(pins.iter().map(|p| p.weight * g.pin_stiffness));
        self.hard_pinned.resize(base as usize + n, false);
        for p in &pins {
            self.hard_pinned[p.vertex as usize] = p.weight >= 1.0;
        }
        self.pins.extend(pins);
        self.initial_positions.extend_from_slice(&g.positions);
        self.rest_positions.extend_from_slice(rest_positions);
        self.mass.extend(mass);
        self.area.extend(area);
        self.thickness.resize(base as usize + n, g.thickness);
        self.friction.resize(base as usize + n, g.friction);
        self.self_collision.push(g.self_collision);
        self.garments.push(GarmentRange {
            name: name.to_string(),
            vertices: base as usize..base as usize + n,
            triangles: tri_base..self.triangles.len(),
        });
        Ok(())
    }
}

/// World direction of increasing u over a triangle (the warp), from its positions and UVs; falls back
/// to the first edge when the UV map is degenerate.
fn uv_warp(p: [Vec3; 3], uv: [Vec2; 3]) -> Vec3 {
    let (e1, e2) = (p[1] - p[0], p[2] - p[0]);
    let (d1, d2) = (uv[1] - uv[0], uv[2] - uv[0]);
    let det = d1.x * d2.y - d2.x * d1.y;
    if det.abs() <= f32::EPSILON * (d1.length_squared() + d2.length_squared()) {
        return e1;
    }
    // [e1 e2] = [∂x/∂u ∂x/∂v] [d1 d2]  ⇒  ∂x/∂u = (e1·d2.y − e2·d1.y)/det.
    (e1 * d2.y - e2 * d1.y) / det
}
