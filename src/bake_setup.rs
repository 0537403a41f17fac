//! Setting up a bake from a scene file, shared by `bake` and `check` (`batch` runs `bake`): the
//! scene with every file it references loaded and checked, mapped onto the solver (in the
//! simulation frame of [`BakeOrigin`]), and the simulation built (which validates every garment).

use std::path::Path;

use clothbake_io::{load_scene, LoadedScene};
use clothbake_solver::{ModelError, Simulation};

use crate::bake_origin::BakeOrigin;
use crate::error::{CliError, Result};
use crate::scene_to_solver::{garment_descs, material_presets, sim_settings};

/// A scene ready to bake.
pub struct PreparedBake {
    pub scene: LoadedScene,
    pub sim: Simulation,
    /// Where the simulation frame's origin is in the world.
    pub origin: BakeOrigin,
}

impl PreparedBake {
    /// Loads `path` and builds the simulation. Errors name the scene file and the field or
    /// element (the solver's model errors name the garment and element).
    pub fn load(path: &Path) -> Result<Self> {
        let scene = load_scene(path, &material_presets())?;
        let origin = BakeOrigin::of_scene(&scene);
        let sim = Simulation::new(garment_descs(&scene, origin)?, sim_settings(&scene))
            .map_err(|source| model_error(path, source))?;
        Ok(PreparedBake { scene, sim, origin })
    }
}

fn model_error(path: &Path, source: ModelError) -> CliError {
    CliError::Model {
        scene: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bad scene's error keeps clothbake-io's file and field, not only its text, and maps to 2.
    #[test]
    fn errors_keep_their_typed_source() {
        let dir = tempfile::tempdir().unwrap();
        let scene = dir.path().join("scene.toml");
        std::fs::write(
            &scene,
            "[[garment]]\nname = \"cape\"\nmesh = \"missing.obj\"\nmaterial = \"cotton\"\n",
        )
        .unwrap();
        let err = PreparedBake::load(&scene)
            .err()
            .expect("missing mesh is an error");
        match &err {
            CliError::File(e) => {
                assert_eq!(e.file, scene);
                assert_eq!(e.field, "garment[0].mesh");
            }
            other => panic!("untyped error: {other:?}"),
        }
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("garment[0].mesh"), "{err}");
    }
}
