//! Kang 2003 §6's experiment (PhD thesis, ch. 6, the paragraph before Table 6.3): a 1 m × 1 m
//! cloth of 0.05 kg, 21 × 21 vertices, horizontal, two adjacent corners pinned, falling from rest
//! under gravity; check points every 1/30 s. One bake of it under a [`Setup`].

use std::time::Instant;

use clothbake_solver::fixtures::{hard_pins, sheet, sheet_vertex};
use clothbake_solver::{GarmentDesc, Integrator, Material, SimSettings, Simulation};
use glam::Vec3;

/// Vertices per side.
pub const N: usize = 21;
/// Check points per second (one per frame of 30 fps).
pub const FPS: f32 = 30.0;
/// Total mass of the 1 m² sheet (kg).
pub const MASS: f32 = 0.05;
/// Mesh spacing (m): 1 m over N − 1 intervals.
pub const SPACING: f32 = 1.0 / (N - 1) as f32;
/// Kang's spring constant times rest length, κ_ij·l⁰_ij (N): "the stiffness constant of each
/// spring e_ij is 0.03/l⁰_ij" (§6), with κ the Hooke constant of eq. 3.1 (f = κ(|x_j − x_i| − l⁰)).
pub const KANG_KAPPA_L0: f32 = 0.03;

/// Membrane stiffnesses (N/m) of a square spring grid of spacing `a` whose every spring has
/// κ = c/l⁰: (stretch from the structural springs alone, stretch with both diagonals, shear of the
/// diagonals, stretch adding skip-one bend springs). A spring of rest length l⁰ stores
/// ½·κ·(l⁰ε_s)² = ½·c·l⁰·ε_s² at axial strain ε_s; per grid cell (area a²):
/// - structural spring along u (l⁰ = a, ε_s = ε): C₁₁ += c/a;
/// - the two diagonals (l⁰ = a√2, ε_s = ε/2 under uniaxial ε, ±γ/2 under shear γ): C₁₁ += c/(√2·a),
///   G = c/(√2·a);
/// - the skip-one bend spring along u (l⁰ = 2a, one per vertex): C₁₁ += 2c/a.
pub fn kang_membrane(c: f32, a: f32) -> (f32, f32, f32, f32) {
    let structural = c / a;
    let diagonal = c / (std::f32::consts::SQRT_2 * a);
    (
        structural,
        structural + diagonal,
        diagonal,
        structural + diagonal + 2.0 * c / a,
    )
}

/// The BW-model material closest to Kang's cloth: stretch = structural + diagonal springs
/// (1.02 N/m at 5 cm spacing), shear = the diagonals' 0.42 N/m, no bending rigidity (a flat spring
/// grid has none to first order), no damping (Kang's §6 names none), 0.05 kg/m².
pub fn kang_material() -> Material {
    let (_, stretch, shear, _) = kang_membrane(KANG_KAPPA_L0, SPACING);
    Material {
        density: MASS,
        stretch: [stretch, stretch],
        shear,
        bend: 0.0,
        stretch_damping: 0.0,
        bend_damping: 0.0,
        rest_scale: [1.0, 1.0],
    }
}

/// The cotton preset at Kang's 0.05 kg/m² (what the harness compared before).
pub fn cotton_material() -> Material {
    let mut m = Material::preset("cotton").expect("cotton preset");
    m.density = MASS;
    m
}

/// The materials the experiment runs on: (name, material, what it is).
pub fn materials() -> Vec<(&'static str, Material, &'static str)> {
    vec![
        (
            "kang",
            kang_material(),
            "Kang's cloth (κ = 0.03/l⁰ per spring) as BW membrane stiffness",
        ),
        (
            "cotton",
            cotton_material(),
            "cotton preset, density 0.05 kg/m²",
        ),
    ]
}

/// Everything one bake depends on.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub material: Material,
    /// Applies the cloth model (`bw`, `springs`, …) to the garment; see `configs::model`.
    pub model: fn(&mut GarmentDesc),
    pub integrator: Integrator,
    /// Substeps per 1/30 s frame (5 = Kang's 1/150 s, 1 = his 1/30 s, 1000 = his 1/30000 s reference).
    pub substeps: u32,
    pub air_damping: f32,
    pub cg_tolerance: f32,
    /// The step controller (BW §6 halving on a strain jump or a failed solve).
    pub adaptive: bool,
    /// Newton iterations per substep (BW: 1).
    pub newton_iterations: u32,
}

impl Setup {
    pub fn new(
        material: Material,
        model: fn(&mut GarmentDesc),
        integrator: Integrator,
        substeps: u32,
    ) -> Self {
        Setup {
            material,
            model,
            integrator,
            substeps,
            air_damping: 0.0,
            cg_tolerance: SimSettings::default().cg_tolerance,
            adaptive: true,
            newton_iterations: 1,
        }
    }

    pub fn with_substeps(self, substeps: u32) -> Self {
        Setup { substeps, ..self }
    }
}

/// Positions at every check point (index 0 = start) and what the bake cost.
pub struct Bake {
    pub frames: Vec<Vec<Vec3>>,
    pub ms_per_frame: f64,
    /// Accepted substeps per frame, CG iterations per frame (over accepted substeps).
    pub substeps_per_frame: f64,
    pub cg_per_frame: f64,
    pub rejected: u32,
}

/// The sheet of Kang's experiment under `s` (optionally pinned).
pub fn garment(s: &Setup, pinned: bool) -> GarmentDesc {
    let mut g = sheet("kang", N, 1.0, 1.0);
    g.material = s.material;
    if pinned {
        g.pins = hard_pins(&[sheet_vertex(N, 0, 0), sheet_vertex(N, N - 1, 0)]);
    }
    (s.model)(&mut g);
    g
}

pub fn settings(s: &Setup) -> SimSettings {
    SimSettings {
        substeps: s.substeps,
        air_damping: s.air_damping,
        integrator: s.integrator,
        cg_tolerance: s.cg_tolerance,
        adaptive: s.adaptive,
        newton_iterations: s.newton_iterations,
        ..SimSettings::default()
    }
}

/// Bakes `checks` check points of Kang's experiment; a simulation error (e.g. the cloth tearing
/// apart) comes back as its message and the time it happened.
pub fn try_bake(s: &Setup, checks: usize) -> Result<Bake, String> {
    let mut sim = Simulation::new(vec![garment(s, true)], settings(s)).expect("valid scene");
    let mut frames = vec![sim.garment_positions(0).to_vec()];
    let (mut rejected, mut substeps, mut cg) = (0, 0u64, 0u64);
    let clock = Instant::now();
    for _ in 0..checks {
        let r = sim
            .step_frame(1.0 / FPS, &[], &[])
            .map_err(|e| format!("failed at check point {}: {e}", frames.len()))?;
        rejected += r.rejected_substeps;
        substeps += r.substeps as u64;
        cg += r.cg_iterations as u64;
        frames.push(sim.garment_positions(0).to_vec());
    }
    let n = checks as f64;
    Ok(Bake {
        frames,
        ms_per_frame: clock.elapsed().as_secs_f64() * 1e3 / n,
        substeps_per_frame: substeps as f64 / n,
        cg_per_frame: cg as f64 / n,
        rejected,
    })
}

/// [`try_bake`] for bakes that must succeed (the references).
pub fn bake(s: &Setup, checks: usize) -> Bake {
    try_bake(s, checks).expect("reference bake")
}
