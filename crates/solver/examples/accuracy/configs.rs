//! The named configurations the harness runs: every cloth model × every integrator of issue 15.
//! An integrator is available as soon as [`Integrator::from_name`] knows its scene-file name (no
//! change here); a model when [`model`] maps its name (one line: `"springs" => Some(|g| …)`).

use clothbake_solver::{ForceModel, GarmentDesc, Integrator};

/// Scene-file names of the cloth models (`[[garment]] model = …`), in table order.
pub const MODELS: [&str; 2] = ["bw", "springs"];
/// Scene-file names of the integrators (`[scene] integrator = …`), in table order.
pub const INTEGRATORS: [&str; 6] = ["bw", "bdf2", "midpoint", "kang", "aimex", "verlet"];

/// What selects a cloth model on a garment.
pub type ModelFn = fn(&mut GarmentDesc);

/// Baraff & Witkin's triangle model: the garment as built.
fn bw(_: &mut GarmentDesc) {}

/// The mass-spring model, its spring constants mapped from the material (docs/scene-format.md,
/// "The springs model"; on this square grid Kang's material maps to his 0.03/l₀ structural and
/// diagonal springs, setup.rs).
fn springs(g: &mut GarmentDesc) {
    g.model = ForceModel::Springs {
        spring_stiffness: None,
    };
}

/// What selects the model `name` on a garment, if this build has it.
pub fn model(name: &str) -> Option<ModelFn> {
    match name {
        "bw" => Some(bw),
        "springs" => Some(springs),
        _ => None,
    }
}

/// The integrator `name`, if this build has it.
pub fn integrator(name: &str) -> Option<Integrator> {
    Integrator::from_name(name)
}

/// One named configuration: a model and an integrator, or why it cannot run.
pub struct Config {
    pub model: &'static str,
    pub integrator: &'static str,
    pub available: Option<(ModelFn, Integrator)>,
}

impl Config {
    pub fn label(&self) -> String {
        format!("{} + {}", self.model, self.integrator)
    }
}

/// Every model × integrator, available or not.
pub fn all() -> Vec<Config> {
    MODELS
        .iter()
        .flat_map(|&m| {
            INTEGRATORS.iter().map(move |&i| Config {
                model: m,
                integrator: i,
                available: model(m).zip(integrator(i)),
            })
        })
        .collect()
}
