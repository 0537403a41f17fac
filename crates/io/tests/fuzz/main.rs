//! Bad input never panics: fuzz targets for every reader of clothbake-io (PC2, MDD, the checkpoint
//! container, OBJ, glTF through the readers and through `load_scene`, scene TOML), run as ordinary
//! `#[test]`s on the stable toolchain: proptest with a fixed seed and a bounded number of cases
//! (`CLOTHBAKE_FUZZ_CASES` for more, `CLOTHBAKE_FUZZ_SEED` for other inputs), mutating the real
//! sample files (samples/) and caches written by clothbake's own writers, byte- and structure-wise.
//! Every input must give `Ok` or an error naming the file; a panic (or an abort) fails the test.
//! The committed corpus of broken files (tests/corpus/) is replayed first.
//!
//! Longer run, e.g.: `CLOTHBAKE_FUZZ_CASES=20000 cargo test --release -p clothbake-io --test fuzz`.

mod mutate;
mod targets;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::sample::Index;

use mutate::*;
use targets::*;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn read(p: impl AsRef<Path>) -> Vec<u8> {
    std::fs::read(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
}

/// Every committed broken file goes through its reader: an error naming it, never a panic.
#[test]
fn corpus_replays_without_panic() {
    let mut n = 0;
    let mut stack = vec![corpus()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("corpus folder") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            let done = match ext {
                "pc2" => Some(check_pc2(&p)),
                "mdd" => Some(check_mdd(&p)),
                "ckpt" => Some(check_checkpoint(&p)),
                "obj" => Some(check_obj(&p)),
                "glb" | "gltf" => Some(check_gltf(&p)),
                "toml" => Some(check_scene(&p)),
                "usdc" => Some(check_usdc(&p)),
                _ => None,
            };
            if let Some(ok) = done {
                n += 1;
                // Files named `ok-*` are the scenes' helpers; everything else is broken.
                let name = p.file_name().and_then(|s| s.to_str()).unwrap_or("");
                if !name.starts_with("ok-") {
                    assert!(!ok, "{} was accepted", p.display());
                }
            }
        }
    }
    assert!(n >= 30, "only {n} corpus files");
}

proptest! {
    #![proptest_config(config(1, 1500))]
    #[test]
    fn pc2_reader(seed in any::<Index>(), edits in byte_edits(4)) {
        let seeds = cache_seeds();
        let bytes = apply_bytes(&seeds.pc2[seed.index(seeds.pc2.len())], &edits);
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("c.pc2");
        std::fs::write(&p, &bytes).unwrap();
        guarded("pc2_reader.pc2", &bytes, || { check_pc2(&p); });
    }
}

proptest! {
    #![proptest_config(config(2, 1500))]
    #[test]
    fn mdd_reader(seed in any::<Index>(), edits in byte_edits(4)) {
        let seeds = cache_seeds();
        let bytes = apply_bytes(&seeds.mdd[seed.index(seeds.mdd.len())], &edits);
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("c.mdd");
        std::fs::write(&p, &bytes).unwrap();
        guarded("mdd_reader.mdd", &bytes, || { check_mdd(&p); });
    }
}

proptest! {
    #![proptest_config(config(11, 1500))]
    #[test]
    fn usdc_reader(seed in any::<Index>(), edits in byte_edits(4)) {
        let seeds = cache_seeds();
        let bytes = apply_bytes(&seeds.usdc[seed.index(seeds.usdc.len())], &edits);
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("c.usdc");
        std::fs::write(&p, &bytes).unwrap();
        guarded("usdc_reader.usdc", &bytes, || { check_usdc(&p); });
    }
}

proptest! {
    #![proptest_config(config(3, 500))]
    #[test]
    fn cache_readers_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200), magic in any::<bool>()) {
        let tmp = tempfile::tempdir().unwrap();
        let mut b = if magic { b"POINTCACHE2\0\x01\0\0\0".to_vec() } else { Vec::new() };
        b.extend_from_slice(&bytes);
        for (name, check) in [("a.pc2", check_pc2 as fn(&Path) -> bool), ("a.mdd", check_mdd), ("a.ckpt", check_checkpoint), ("a.usdc", check_usdc)] {
            let p = tmp.path().join(name);
            std::fs::write(&p, &b).unwrap();
            guarded(&format!("arbitrary-{name}"), &b, || { check(&p); });
        }
    }
}

proptest! {
    #![proptest_config(config(4, 1000))]
    #[test]
    fn checkpoint_container(seed in any::<Index>(), edits in byte_edits(4)) {
        let seeds = cache_seeds();
        let bytes = apply_bytes(&seeds.checkpoint[seed.index(seeds.checkpoint.len())], &edits);
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("checkpoint.ckpt");
        std::fs::write(&p, &bytes).unwrap();
        guarded("checkpoint_container.ckpt", &bytes, || { check_checkpoint(&p); });
    }
}

const OBJ_SAMPLES: &[(&str, &str)] = &[
    ("flag-wind", "flag.obj"),
    ("self-fold", "sheet.obj"),
    ("sheet-on-sphere", "sheet.obj"),
];

proptest! {
    #![proptest_config(config(5, 600))]
    #[test]
    fn obj_reader_and_scene(which in any::<Index>(), edits in text_edits(4), via_scene in any::<bool>()) {
        let (sample, file) = OBJ_SAMPLES[which.index(OBJ_SAMPLES.len())];
        let bytes = apply_text(&read(samples().join(sample).join(file)), &edits);
        let dir = SampleCopy::new(sample);
        let p = dir.write(file, &bytes);
        guarded(&format!("obj_reader-{sample}-{file}"), &bytes, || {
            check_obj(&p);
            if via_scene {
                check_scene(&dir.scene());
            }
        });
    }
}

const GLTF_SAMPLES: &[(&str, &str)] = &[
    ("skirt-walk", "figure.glb"),
    ("cape-run", "figure.glb"),
    ("twist", "tube.glb"),
    ("rigged-figure", "RiggedFigure.gltf"),
];

/// How a glTF sample is damaged.
#[derive(Debug, Clone)]
enum GltfDamage {
    /// Edits of the JSON document (and, for a .glb, byte edits of the BIN chunk; the container
    /// stays well-formed).
    Structure(Vec<JsonEdit>, Vec<ByteEdit>),
    /// Byte edits of the whole file.
    Bytes(Vec<ByteEdit>),
}

fn gltf_damage() -> impl Strategy<Value = GltfDamage> {
    prop_oneof![
        3 => (prop::collection::vec(json_edit(), 0..=3), prop::collection::vec(byte_edit(), 0..4))
            .prop_map(|(j, b)| GltfDamage::Structure(j, b)),
        1 => byte_edits(4).prop_map(GltfDamage::Bytes),
    ]
}

fn damage_gltf(bytes: &[u8], glb: bool, d: &GltfDamage) -> Vec<u8> {
    match d {
        GltfDamage::Bytes(e) => apply_bytes(bytes, e),
        GltfDamage::Structure(j, b) => {
            if glb {
                let (mut json, bin) = split_glb(bytes).expect("sample GLB");
                apply_json(&mut json, j);
                join_glb(&json, &apply_bytes(&bin, b))
            } else {
                let mut json: serde_json::Value =
                    serde_json::from_slice(bytes).expect("sample glTF");
                apply_json(&mut json, j);
                serde_json::to_vec(&json).expect("JSON")
            }
        }
    }
}

proptest! {
    #![proptest_config(config(6, 500))]
    #[test]
    fn gltf_readers_and_scene(which in any::<Index>(), damage in gltf_damage(), via_scene in any::<bool>()) {
        let (sample, file) = GLTF_SAMPLES[which.index(GLTF_SAMPLES.len())];
        let original = read(samples().join(sample).join(file));
        let bytes = damage_gltf(&original, file.ends_with(".glb"), &damage);
        let dir = SampleCopy::new(sample);
        let p = dir.write(file, &bytes);
        guarded(&format!("gltf-{sample}-{file}"), &bytes, || {
            check_gltf(&p);
            if via_scene {
                check_scene(&dir.scene());
            }
        });
    }
}

const SCENE_SAMPLES: &[&str] = &[
    "cape-run",
    "flag-wind",
    "rigged-figure",
    "self-fold",
    "sheet-on-sphere",
    "skirt-walk",
    "twist",
];

/// How a scene file is damaged.
#[derive(Debug, Clone)]
enum SceneDamage {
    Text(Vec<TextEdit>),
    /// Edits of the TOML tree (through its JSON form), written back as TOML.
    Tree(Vec<JsonEdit>),
}

fn scene_damage() -> impl Strategy<Value = SceneDamage> {
    prop_oneof![
        text_edits(4).prop_map(SceneDamage::Text),
        json_edits(3).prop_map(SceneDamage::Tree),
    ]
}

fn damage_scene(text: &[u8], d: &SceneDamage) -> Vec<u8> {
    match d {
        SceneDamage::Text(e) => apply_text(text, e),
        SceneDamage::Tree(e) => {
            let v: toml::Value =
                toml::from_str(std::str::from_utf8(text).expect("UTF-8")).expect("sample scene");
            let mut j = serde_json::to_value(&v).expect("JSON form");
            apply_json(&mut j, e);
            // Values TOML cannot hold (null) leave the text as it was.
            toml::to_string(&j)
                .map(String::into_bytes)
                .unwrap_or_else(|_| text.to_vec())
        }
    }
}

proptest! {
    #![proptest_config(config(7, 1000))]
    #[test]
    fn scene_loading(which in any::<Index>(), damage in scene_damage()) {
        let sample = SCENE_SAMPLES[which.index(SCENE_SAMPLES.len())];
        let text = read(samples().join(sample).join("scene.toml"));
        let dir = SampleCopy::new(sample);
        let bytes = damage_scene(&text, &damage);
        dir.write("scene.toml", &bytes);
        guarded(&format!("scene-{sample}.toml"), &bytes, || { check_scene(&dir.scene()); });
    }
}

/// The mutators themselves: a structure edit of a GLB keeps it a GLB, a TOML tree edit keeps TOML.
#[test]
fn mutators_keep_the_container() {
    let glb = read(samples().join("twist/tube.glb"));
    let (json, bin) = split_glb(&glb).expect("GLB");
    let again = join_glb(&json, &bin);
    assert_eq!(split_glb(&again).expect("GLB").1.len(), bin.len());
    let text = read(samples().join("flag-wind/scene.toml"));
    let same = damage_scene(&text, &SceneDamage::Tree(Vec::new()));
    assert!(toml::from_str::<toml::Value>(std::str::from_utf8(&same).unwrap()).is_ok());
}
