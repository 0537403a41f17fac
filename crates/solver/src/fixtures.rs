//! Small mesh builders for tests, benchmarks and samples.

use crate::collide::{ColliderShape, MovingCollider};
use crate::forces::Wind;
use crate::model::{GarmentDesc, Pin};
use glam::{Quat, Vec2, Vec3};

/// A square sheet of `n × n` vertices (n >= 2), side `size` (m), horizontal (XZ plane) at height `y`
/// (m), centred on the Y axis, with UVs in [0, 1]² and alternating diagonals. Cotton, no pins.
pub fn sheet(name: &str, n: usize, size: f32, y: f32) -> GarmentDesc {
    let n = n.max(2);
    let step = size / (n - 1) as f32;
    let mut positions = Vec::with_capacity(n * n);
    let mut uvs = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            positions.push(Vec3::new(
                i as f32 * step - 0.5 * size,
                y,
                j as f32 * step - 0.5 * size,
            ));
            uvs.push(Vec2::new(i as f32, j as f32) / (n - 1) as f32);
        }
    }
    let mut triangles = Vec::with_capacity(2 * (n - 1) * (n - 1));
    let id = |i: usize, j: usize| (j * n + i) as u32;
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if (i + j) % 2 == 0 {
                triangles.push([a, d, c]);
                triangles.push([a, c, b]);
            } else {
                triangles.push([a, d, b]);
                triangles.push([b, d, c]);
            }
        }
    }
    let mut g = GarmentDesc::new(name, positions, triangles);
    g.uvs = Some(uvs);
    g
}

/// Vertex index of grid point (i, j) of a [`sheet`] with `n` vertices per side.
pub fn sheet_vertex(n: usize, i: usize, j: usize) -> u32 {
    (j * n + i) as u32
}

/// Hard pins (weight 1) on `vertices`.
pub fn hard_pins<'a>(vertices: impl IntoIterator<Item = &'a u32>) -> Vec<Pin> {
    vertices
        .into_iter()
        .map(|&vertex| Pin {
            vertex,
            weight: 1.0,
        })
        .collect()
}

/// Hard pins on the two opposite edges i = 0 and i = n − 1 of a [`sheet`] of `n × n`.
pub fn edge_pins(n: usize) -> Vec<Pin> {
    let edges = (0..n).flat_map(|j| [sheet_vertex(n, 0, j), sheet_vertex(n, n - 1, j)]);
    hard_pins(&edges.collect::<Vec<_>>())
}

/// The determinism tests' pins on a [`sheet`] of `n × n`: corner (0, 0) hard, corner (n − 1, 0) a
/// goal spring of weight 0.5.
pub fn corner_pins(n: usize) -> Vec<Pin> {
    vec![
        Pin {
            vertex: sheet_vertex(n, 0, 0),
            weight: 1.0,
        },
        Pin {
            vertex: sheet_vertex(n, n - 1, 0),
            weight: 0.5,
        },
    ]
}

/// The determinism tests' wind: 1.1 m/s across the sheet, air 1.2 kg/m³, drag 1, lift 0.2.
pub fn breeze() -> Wind {
    Wind {
        velocity: Vec3::new(1.0, 0.0, 0.5),
        air_density: 1.2,
        drag: 1.0,
        lift: 0.2,
    }
}

/// Pin targets of a fold: the `pinned` vertices of `rest` turned about the x axis through `pivot`
/// (m) by −π·smoothstep(`progress`), `progress` in [0, 1] (clamped above), written into `targets`.
pub fn fold_pinned(
    rest: &[Vec3],
    pinned: &[u32],
    pivot: Vec3,
    progress: f32,
    targets: &mut [Vec3],
) {
    let s = progress.min(1.0);
    let rot = Quat::from_rotation_x(-std::f32::consts::PI * s * s * (3.0 - 2.0 * s));
    for &v in pinned {
        targets[v as usize] = pivot + rot * (rest[v as usize] - pivot);
    }
}

/// The far edge (row j = n − 1) of a [`sheet`] lying at height `y` (m), hard-pinned and swung over
/// the top about a hinge along x through the sheet's middle line, 1.2 cm above it, so that the
/// sheet folds in half onto itself (the fold of the self-collision tests and bench).
pub struct EdgeFold {
    /// Rest positions of the sheet (m).
    pub rest: Vec<Vec3>,
    /// The pinned edge's vertices.
    pub edge: Vec<u32>,
    /// A point of the hinge axis (m).
    pub pivot: Vec3,
    targets: Vec<Vec3>,
}

impl EdgeFold {
    /// Hard-pins the far edge of `g`, an `n × n` [`sheet`] at height `y` (m), and returns its fold.
    pub fn pin(g: &mut GarmentDesc, n: usize, y: f32) -> EdgeFold {
        let edge: Vec<u32> = (0..n).map(|i| sheet_vertex(n, i, n - 1)).collect();
        g.pins = hard_pins(&edge);
        EdgeFold {
            rest: g.positions.clone(),
            edge,
            pivot: Vec3::new(0.0, y + 0.012, 0.0),
            targets: g.positions.clone(),
        }
    }

    /// Pin targets (m) at `progress` of the swing (see [`fold_pinned`]).
    pub fn targets(&mut self, progress: f32) -> &[Vec3] {
        fold_pinned(
            &self.rest,
            &self.edge,
            self.pivot,
            progress,
            &mut self.targets,
        );
        &self.targets
    }
}

/// The ground: the fixed plane y = 0.
pub fn ground() -> MovingCollider {
    MovingCollider::fixed(ColliderShape::Plane {
        point: Vec3::ZERO,
        normal: Vec3::Y,
    })
}

/// A regular `n × n` grid in the XZ plane from the origin, `spacing` (m) apart, every quad split
/// along the same diagonal. Returns (positions, triangles).
pub fn regular_grid(n: usize, spacing: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut x = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            x.push(Vec3::new(i as f32 * spacing, 0.0, j as f32 * spacing));
        }
    }
    let mut t = Vec::new();
    let id = |i: usize, j: usize| (j * n + i) as u32;
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            t.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            t.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    (x, t)
}

/// Runs `f` on a new rayon pool of `threads` threads: for tests that results do not depend on the
/// thread count.
pub fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
        .install(f)
}

/// An assembled cotton system of an n×n [`sheet`] with wrinkles (so bending and shear are active),
/// stretched 1 % (the membrane under tension) and falling at about 0.3 m/s, at h = 1/120 s: a
/// real matrix for the linear-solve kernels' benches and tests. Returns the model and A.
pub fn wrinkled_sheet_system(n: usize) -> (crate::Model, crate::linalg::BlockMatrix) {
    use crate::constraints::Constraints;
    use crate::integrator::{Assembly, StepInputs};
    let mut g = sheet("sheet", n, 1.0, 0.0);
    for p in g.positions.iter_mut() {
        p.y = 0.01 * (p.x * 40.0).sin() * (p.z * 23.0).cos();
    }
    let model = crate::Model::new(&[g]).expect("a sheet is a valid model");
    let nv = model.vertex_count();
    let mut asm = Assembly::new(&model);
    let mut cons = Constraints::default();
    cons.begin(nv);
    let x0: Vec<Vec3> = model.initial_positions.iter().map(|&p| p * 1.01).collect();
    let v0: Vec<Vec3> = (0..nv)
        .map(|i| Vec3::new(0.0, -0.3 + 0.01 * (i % 7) as f32, 0.0))
        .collect();
    let inputs = StepInputs {
        x0: &x0,
        v0: &v0,
        h: 1.0 / 120.0,
        gravity: Vec3::new(0.0, -9.81, 0.0),
        wind: None,
        air_damping: 0.0,
        explicit_triangles: &[],
        explicit_hinges: &[],
        skip_pinned: false,
    };
    asm.assemble(&model, &inputs, &cons);
    (model, asm.matrix)
}

/// Test inputs: the xorshift64 sequence from `seed` (nonzero), each value's top 24 bits as an f32
/// in [0, 1) (exact, so the same in f32 and f64 arithmetic).
pub fn unit_random(mut seed: u64) -> impl FnMut() -> f32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32
    }
}
