//! Bad input never panics: the checkpoint payload path of `bake --resume` (the checked container
//! holding arbitrary or mutated JSON → [`checkpoint::load`] → `Simulation::restore_state` → the
//! next frame), fuzzed from a real checkpoint of a small pinned sheet with proptest (fixed seed,
//! `CLOTHBAKE_FUZZ_CASES` for more cases; see crates/io/tests/fuzz/main.rs). A payload that does
//! not parse is an error naming the checkpoint file; a state that parses but does not fit the
//! scene's model and settings is refused by `restore_state`; one that fits steps without a panic.

#[path = "../crates/io/tests/fuzz/mutate.rs"]
mod mutate;

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use clothbake_io::{load_scene, write_checkpoint, CacheProgress, LoadedScene};
use clothbake_solver::{Simulation, STATE_VERSION};
use mutate::*;
use proptest::prelude::*;

use crate::bake_origin::BakeOrigin;
use crate::checkpoint::{self, Checkpoint};
use crate::scene_to_solver::{garment_descs, material_presets, sim_settings, PinTargetBuffers};

const FINGERPRINT: &str = "0123abcd";

/// A 5 × 5 sheet pinned at two corners (small, so that stepping even a wild but valid state is
/// quick), in a folder kept for the test run.
fn small_scene() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("clothbake-ckpt-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("folder");
    let mut obj = String::new();
    for j in 0..5 {
        for i in 0..5 {
            obj += &format!("v {} 1 {}\n", i as f32 * 0.1, j as f32 * 0.1);
        }
    }
    for j in 0..4 {
        for i in 0..4 {
            let a = j * 5 + i + 1;
            obj += &format!("f {} {} {} {}\n", a, a + 1, a + 6, a + 5);
        }
    }
    std::fs::write(dir.join("sheet.obj"), obj).expect("write");
    let scene = "[scene]\nframe_end = 6\nsubsteps = 2\n\n[[garment]]\nname = \"sheet\"\n\
                 mesh = \"sheet.obj\"\n\n[garment.pin]\nvertices = [0, 4]\n";
    std::fs::write(dir.join("scene.toml"), scene).expect("write");
    dir.join("scene.toml")
}

struct Bench {
    scene: LoadedScene,
    sim: Simulation,
    /// A good checkpoint's JSON payload.
    payload: serde_json::Value,
}

fn bench() -> &'static Mutex<Bench> {
    static BENCH: OnceLock<Mutex<Bench>> = OnceLock::new();
    BENCH.get_or_init(|| {
        let path = small_scene();
        let scene = load_scene(&path, &material_presets()).expect("small scene");
        // Everything is loaded; the files are not read again.
        let _ = std::fs::remove_dir_all(path.parent().expect("folder"));
        let mut sim = Simulation::new(
            garment_descs(&scene, BakeOrigin::of_scene(&scene)).expect("garments"),
            sim_settings(&scene),
        )
        .expect("simulation");
        // Two frames in, so the state has velocities, a warm start and a moving clock.
        let mut pins = PinTargetBuffers::new(&scene, BakeOrigin::of_scene(&scene));
        let dt = 1.0 / scene.clock.fps;
        for frame in scene.frame_start + 1..=scene.frame_start + 2 {
            let targets = pins.at(&scene, frame as f32);
            sim.step_frame(dt, &[], &targets).expect("step");
        }
        let ck = Checkpoint {
            clothbake_version: env!("CARGO_PKG_VERSION").to_string(),
            fingerprint: FINGERPRINT.to_string(),
            state_version: STATE_VERSION,
            frame: scene.frame_start + 2,
            caches: vec![CacheProgress {
                frames: 3,
                pc2_bytes: Some(32 + 3 * 12 * 25),
                mdd_bytes: None,
                usd_bytes: None,
                usdc_bytes: None,
            }],
            report_frames: Vec::new(),
            state: sim.state().clone(),
            simulation_origin: Some([0.0; 3]),
            unfinished_frame: None,
        };
        let payload = serde_json::to_value(&ck).expect("JSON");
        Mutex::new(Bench {
            scene,
            sim,
            payload,
        })
    })
}

/// How the checkpoint is damaged.
#[derive(Debug, Clone)]
enum Damage {
    /// JSON tree edits of the payload, in a valid container.
    Tree(Vec<JsonEdit>),
    /// Byte edits of the payload text, in a valid container.
    Text(Vec<ByteEdit>),
    /// Byte edits of the whole file (container included).
    File(Vec<ByteEdit>),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => json_edits(3).prop_map(Damage::Tree),
        2 => byte_edits(3).prop_map(Damage::Text),
        1 => byte_edits(3).prop_map(Damage::File),
    ]
}

/// Runs one damaged checkpoint through `load` and `restore_state`; returns whether the state was
/// restored (and then stepped one frame).
fn resume(d: &Damage) -> bool {
    let mut bench = bench().lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().expect("temporary folder");
    let stage = tmp.path();
    let file = stage.join("checkpoint");
    let good = serde_json::to_vec(&bench.payload).expect("JSON");
    match d {
        Damage::Tree(e) => {
            let mut v = bench.payload.clone();
            apply_json(&mut v, e);
            write_checkpoint(&file, &serde_json::to_vec(&v).expect("JSON")).expect("write");
        }
        Damage::Text(e) => write_checkpoint(&file, &apply_bytes(&good, e)).expect("write"),
        Damage::File(e) => {
            write_checkpoint(&file, &good).expect("write");
            let bytes = std::fs::read(&file).expect("read");
            std::fs::write(&file, apply_bytes(&bytes, e)).expect("write");
        }
    }
    let ck = match checkpoint::load(stage, FINGERPRINT) {
        Ok(Some((ck, _))) => ck,
        Ok(None) => panic!("the checkpoint was not found"),
        Err(e) => {
            let text = e.to_string();
            assert!(text.contains(&stage.display().to_string()), "{text}");
            return false;
        }
    };
    let good_state = bench.sim.state().clone();
    let Bench { scene, sim, .. } = &mut *bench;
    if let Err(e) = sim.restore_state(ck.state, ck.state_version) {
        assert!(!e.to_string().is_empty());
        assert_eq!(
            sim.state(),
            &good_state,
            "a refused state changed the simulation"
        );
        return false;
    }
    let mut pins = PinTargetBuffers::new(scene, BakeOrigin::of_scene(scene));
    let targets = pins.at(scene, (scene.frame_start + 3) as f32);
    // A state that fits may still fail to step (a wild but finite velocity): an error, no panic.
    let _ = sim.step_frame(1.0 / scene.clock.fps, &[], &targets);
    sim.restore_state(good_state, STATE_VERSION)
        .expect("the good state");
    true
}

proptest! {
    #![proptest_config(config(20, 300))]
    #[test]
    fn checkpoint_payloads_never_panic(d in damage()) {
        resume(&d);
    }
}

/// The good checkpoint resumes, and the fields `restore_state` must check are refused when bad.
#[test]
fn checkpoint_payload_edits_that_must_be_refused() {
    assert!(resume(&Damage::Tree(Vec::new())), "the good checkpoint");
    let payload = bench()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .payload
        .clone();
    for (pointer, value) in [
        ("/state_version", serde_json::json!(STATE_VERSION + 1)),
        ("/state/controller/h_scale", serde_json::json!(64)),
        ("/state/clock/substep_pos", serde_json::json!(u64::MAX)),
        ("/state/x", serde_json::json!([[0.0, 0.0, 0.0]])),
        ("/state/pins/start", serde_json::json!([])),
        ("/state/v/0", serde_json::json!([0.0, 1e39, 0.0])),
        ("/state/clock/time", serde_json::json!("soon")),
        ("/caches", serde_json::json!(null)),
    ] {
        let tmp = tempfile::tempdir().expect("temporary folder");
        let mut v = payload.clone();
        *v.pointer_mut(pointer).expect(pointer) = value;
        write_checkpoint(
            &tmp.path().join("checkpoint"),
            &serde_json::to_vec(&v).unwrap(),
        )
        .unwrap();
        let refused = match checkpoint::load(tmp.path(), FINGERPRINT) {
            Err(_) => true,
            Ok(Some((ck, _))) => {
                let mut bench = bench().lock().unwrap_or_else(|p| p.into_inner());
                bench.sim.restore_state(ck.state, ck.state_version).is_err()
            }
            Ok(None) => false,
        };
        assert!(refused, "{pointer} accepted");
    }
}
