//! Resumable bakes (`bake --checkpoint-every N`, `--resume`): the caches are staged in
//! `<output>/.clothbake-resume/` (partial PC2/MDD files, complete OBJ frames) and every N frames,
//! and when SIGTERM/SIGINT/SIGHUP stops the bake between substeps, a checkpoint is written there
//! (clothbake-io's checked container; JSON payload): the solver [`State`] (everything the next
//! substep depends on), the last complete frame, how far each cache is, the report's frames so
//! far, and a fingerprint of the inputs. `--resume` continues from the newest valid checkpoint
//! (falling back to the one before if the newest is damaged, with a warning) and gives caches
//! byte-identical to an uninterrupted bake; a checkpoint of other inputs, settings or another
//! clothbake version is an error, never a silent restart.

use std::path::{Path, PathBuf};

use clothbake_io::{read_checkpoint, write_checkpoint, CacheProgress, ColliderSpec, SceneFile};
use clothbake_solver::{FrameReport, State, STATE_VERSION};
use serde::{Deserialize, Serialize};

use crate::error::{CliError, Result};
use crate::report::{FrameRecord, TryRecord};

/// Exit code of a bake stopped by a signal after writing a checkpoint: rerun with `--resume`
/// (HTCondor: `checkpoint_exit_code = 85`).
pub const EXIT_CHECKPOINTED: u8 = 85;
/// Staging folder of a resumable bake, inside the output folder.
pub const STAGE_DIR: &str = ".clothbake-resume";
const NEWEST: &str = "checkpoint";
const PREVIOUS: &str = "checkpoint.prev";

/// What a checkpoint holds (serialised as JSON inside the container).
#[derive(Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    pub clothbake_version: String,
    /// Of the scene file, every file it references and the bake's frame range and formats.
    pub fingerprint: String,
    pub state_version: u32,
    /// Last frame simulated completely (its outputs are in the caches); the state may be inside
    /// the next one (`state.clock.substep_pos` > 0) when a signal stopped the bake.
    pub frame: i32,
    /// Per garment, in scene order.
    pub caches: Vec<CacheProgress>,
    /// The bake report's frame records so far.
    pub report_frames: Vec<FrameRecord>,
    pub state: State,
    /// Where the state's frame (`src/bake_origin.rs`) is in the world (m); None in checkpoints of
    /// earlier builds (the scene's starting frame, as the resumed bake then takes).
    #[serde(default)]
    pub simulation_origin: Option<[f32; 3]>,
    /// With the state inside frame `frame + 1`: what that frame did before the stop, so that the
    /// resumed bake reports the frame whole (substeps, rejections, CG iterations, stage and wall
    /// times). None at a frame boundary (and in checkpoints of earlier builds).
    #[serde(default)]
    pub unfinished_frame: Option<UnfinishedFrame>,
}

/// The frame a signal stopped between its substeps.
#[derive(Debug, Serialize, Deserialize)]
pub struct UnfinishedFrame {
    /// The solver's report of its substeps so far ([`clothbake_solver::Simulation::unfinished_frame`]).
    pub report: FrameReport,
    /// Wall time the frame had taken when it stopped (s).
    pub seconds: f64,
    /// Its substeps attempted so far, for the report's `tries` (absent in checkpoints of earlier
    /// builds).
    #[serde(default)]
    pub tries: Vec<TryRecord>,
}

/// The staging folder of a bake into `out_dir`.
pub fn stage_dir(out_dir: &Path) -> PathBuf {
    out_dir.join(STAGE_DIR)
}

/// Every file a scene reads: the scene itself, garment meshes, drivers, character glTFs.
pub fn input_files(scene: &SceneFile) -> Vec<PathBuf> {
    let mut files = vec![scene.path.clone()];
    for g in &scene.garments {
        files.push(g.mesh.clone());
        files.extend(g.driver.clone());
    }
    for c in &scene.colliders {
        if let ColliderSpec::Gltf { file, .. } = c {
            files.push(file.clone());
        }
    }
    files
}

/// CRC-32 over the clothbake version, the bytes of every input file (in the scene's order; not
/// their paths, so a shot folder that was moved or named by another path still resumes — the
/// scene file's own bytes hold the relative paths) and `settings` (the command line's choices
/// that change the caches: frame range, formats), hex.
pub fn fingerprint(files: &[PathBuf], settings: &str) -> Result<String> {
    let mut h = crc32fast::Hasher::new();
    let mut field = |bytes: &[u8]| {
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(env!("CARGO_PKG_VERSION").as_bytes());
    field(settings.as_bytes());
    for f in files {
        let bytes = std::fs::read(f).map_err(|e| CliError::input(f, e))?;
        field(&bytes);
    }
    Ok(format!("{:08x}", h.finalize()))
}

/// Writes `ck` as the newest checkpoint in `stage`, keeping the one before as the fallback.
pub fn save(stage: &Path, ck: &Checkpoint) -> Result<()> {
    let payload =
        serde_json::to_vec(ck).map_err(|e| CliError::Output(format!("checkpoint: {e}")))?;
    let (newest, previous) = (stage.join(NEWEST), stage.join(PREVIOUS));
    if newest.is_file() {
        std::fs::rename(&newest, &previous).map_err(|source| CliError::Write {
            path: previous.clone(),
            source,
        })?;
    }
    write_checkpoint(&newest, &payload).map_err(|e| CliError::Output(e.to_string()))
}

/// The newest valid checkpoint in `stage` (None when there is none at all) and, if the newest
/// file was damaged and the one before it used, a warning saying so. A checkpoint of another
/// bake (`fingerprint`), clothbake version or state version is an error.
pub fn load(stage: &Path, fingerprint: &str) -> Result<Option<(Checkpoint, Option<String>)>> {
    let (newest, previous) = (stage.join(NEWEST), stage.join(PREVIOUS));
    let mut damaged: Option<String> = None;
    for path in [&newest, &previous] {
        if !path.is_file() {
            continue;
        }
        let ck = read_checkpoint(path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                serde_json::from_slice::<Checkpoint>(&bytes)
                    .map_err(|e| format!("{}: payload: {e}", path.display()))
            });
        let ck = match ck {
            Ok(ck) => ck,
            Err(e) => {
                damaged.get_or_insert(e);
                continue;
            }
        };
        let refuse = |what: String| {
            CliError::Input(format!(
                "{}: {what}; remove {} (or bake without --resume) to start over",
                path.display(),
                stage.display()
            ))
        };
        if ck.clothbake_version != env!("CARGO_PKG_VERSION") {
            return Err(refuse(format!(
                "written by clothbake {}, this is {}",
                ck.clothbake_version,
                env!("CARGO_PKG_VERSION")
            )));
        }
        if ck.state_version != STATE_VERSION {
            return Err(refuse(format!(
                "solver state version {}, this clothbake has {STATE_VERSION}",
                ck.state_version
            )));
        }
        if ck.fingerprint != fingerprint {
            return Err(refuse(
                "written by a bake of other inputs or settings (the scene, a file it reads, the frame range or the formats changed)".into(),
            ));
        }
        let warning = damaged.map(|e| format!("{e}; resuming from the checkpoint before it"));
        return Ok(Some((ck, warning)));
    }
    match damaged {
        Some(e) => Err(CliError::Input(format!(
            "{e}; no valid checkpoint left in {}: remove it (or bake without --resume) to start over",
            stage.display()
        ))),
        None => Ok(None),
    }
}

/// Removes the checkpoints in `stage` (the staged caches stay).
pub fn discard(stage: &Path) -> Result<()> {
    for name in [NEWEST, PREVIOUS] {
        let path = stage.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(CliError::Write { path, source }),
        }
    }
    Ok(())
}

/// Removes the staging folder (after a finished bake, or before a fresh resumable one).
pub fn remove_stage(stage: &Path) -> Result<()> {
    match std::fs::remove_dir_all(stage) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(CliError::Write {
            path: stage.to_path_buf(),
            source,
        }),
    }
}
