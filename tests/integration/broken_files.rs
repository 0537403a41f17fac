//! The committed broken-file corpus (crates/io/tests/corpus/, also replayed by the fuzz tests)
//! through the binary: `inspect FILE` for caches, meshes and glTF files, `check SCENE` and `bake
//! SCENE` for scenes, `bake --resume` over a damaged checkpoint. Each exits 2 with a message naming
//! the file and the element or field, never a panic, and leaves nothing in the output folder.

use std::path::Path;

use crate::harness::{Dir, Run};

/// Caches with non-finite coordinates: well-formed files whose values are the problem, so `inspect`
/// (a TD's tool for finding exactly that) reads them and reports each bad value by frame and point
/// (exit 0) instead of refusing them; the solver's readers (drivers) refuse them.
const NON_FINITE_CACHES: &[(&str, &str)] = &[
    ("pc2/inf-coordinate.pc2", r#""point":1"#),
    ("pc2/nan-coordinate.pc2", r#""point":2"#),
    ("mdd/nan-coordinate.mdd", r#""point":2"#),
];

/// `inspect` inputs and what the message must name besides the file.
const INSPECT: &[(&str, &[&str])] = &[
    ("pc2/bad-version.pc2", &["version", "unsupported version 2"]),
    ("pc2/header-only-half.pc2", &["header", "truncated"]),
    ("pc2/huge-counts.pc2", &["data", "2147483647 samples"]),
    ("pc2/negative-count.pc2", &["header", "negative"]),
    ("pc2/truncated.pc2", &["data", "need 104"]),
    ("pc2/wrong-magic.pc2", &["header", "POINTCACHE2"]),
    (
        "pc2/zero-points-many-samples.pc2",
        &["header", "of 0 points"],
    ),
    (
        "usdc/huge-token-size.usdc",
        &["TOKENS", "4611686018427387904 bytes of tokens announced"],
    ),
    (
        "usdc/point-count-past-end.usdc",
        &["points.timeSamples[0]", "past the end of the file"],
    ),
    (
        "usdc/truncated.usdc",
        &["table of contents", "past the end of the 1200-byte file"],
    ),
    ("usdc/wrong-magic.usdc", &["header", "PXR-USDC"]),
    ("mdd/huge-counts.mdd", &["data", "2147483647 frames"]),
    ("mdd/negative-count.mdd", &["header", "negative"]),
    ("mdd/short-header.mdd", &["header", "truncated"]),
    ("mdd/time-table-only.mdd", &["data", "1000 frames"]),
    ("mdd/truncated.mdd", &["data", "need 88"]),
    ("obj/binary-garbage.obj", &["line 1"]),
    ("obj/huge-index.obj", &["line 8", "99999999999999999999"]),
    (
        "obj/index-out-of-range.obj",
        &["line 9", "\"f 1 3 9\"", "out of range"],
    ),
    ("obj/index-zero.obj", &["line 8", "\"f 0 1 2\""]),
    ("obj/inf-coordinate.obj", &["v[2]", "non-finite"]),
    ("obj/nan-coordinate.obj", &["v[2]", "NaN"]),
    (
        "obj/negative-index-out-of-range.obj",
        &["line 8", "\"f -9 1 2\""],
    ),
    ("obj/no-faces.obj", &["f: ", "no faces"]),
    ("obj/repeated-vertex.obj", &["f[0]", "twice"]),
    ("obj/two-corners.obj", &["line 8", "\"f 1 2\""]),
    (
        "obj/uv-index-out-of-range.obj",
        &["line 8", "\"f 1/1 2/2 3/7\""],
    ),
    (
        "gltf/accessor-count-overruns-view.gltf",
        &[
            "attributes.POSITION (accessors[0])",
            "overrun bufferViews[0]",
        ],
    ),
    (
        "gltf/accessor-offset-overruns-view.gltf",
        &["attributes.POSITION (accessors[0])", "from byte 32"],
    ),
    (
        "gltf/animation-target-path-empty.gltf",
        &["animations[0].channels[10].target.path"],
    ),
    (
        "gltf/buffer-shorter-than-byte-length.gltf",
        &["buffers[0]", "byteLength says 4000"],
    ),
    (
        "gltf/buffer-view-out-of-range.gltf",
        &["(accessors[0])", "bufferViews[0] spans bytes 4000..4036"],
    ),
    (
        "gltf/channel-target-node-out-of-range.gltf",
        &["animations[0].channels[0].target.node"],
    ),
    (
        "gltf/channel-target-path-invalid.gltf",
        &["animations[0].channels[0].target.path"],
    ),
    (
        "gltf/chunk-length-huge.glb",
        &["truncated GLB", "Json chunk"],
    ),
    (
        "gltf/index-out-of-range.gltf",
        &["primitives[0].indices (accessors[1])", "index 7 at [2]"],
    ),
    (
        "gltf/missing-bin.gltf",
        &["buffers[0]", "missing.bin", "not found"],
    ),
    (
        "gltf/nan-position.gltf",
        &["(accessors[0])", "element 1 is not finite"],
    ),
    ("gltf/not-json.gltf", &["line 1 column 40"]),
    (
        "gltf/position-accessor-out-of-range.glb",
        &[
            "primitives[0].attributes.POSITION",
            "accessor 5 does not exist",
        ],
    ),
    (
        "gltf/position-accessor-out-of-range.gltf",
        &[
            "primitives[0].attributes.POSITION",
            "accessor 9 does not exist",
        ],
    ),
    ("gltf/truncated.glb", &["truncated GLB", "608 bytes"]),
    ("gltf/wrong-magic.glb", &["header", "not a GLB file"]),
];

/// Scenes, the file the message names (relative to the corpus) and the field or element.
const SCENES: &[(&str, &str, &[&str])] = &[
    (
        "scene/collider-gltf-bad-channel.toml",
        "gltf/channel-target-path-invalid.gltf",
        &["animations[0].channels[0].target.path"],
    ),
    (
        "scene/collider-gltf-position-out-of-range.toml",
        "gltf/position-accessor-out-of-range.glb",
        &["attributes.POSITION", "accessor 5"],
    ),
    (
        "scene/collider-missing-radius.toml",
        "scene/collider-missing-radius.toml",
        &["collider[0].radius", "missing"],
    ),
    (
        "scene/driver-nan.toml",
        "scene/driver-nan.toml",
        &[
            "garment[0].driver",
            "driver-nan.pc2",
            "sample 1 (frame 2), point 2",
        ],
    ),
    (
        "scene/frame-end-out-of-range.toml",
        "scene/frame-end-out-of-range.toml",
        &["scene.frame_end", "2147483647"],
    ),
    (
        "scene/frame-start-out-of-range.toml",
        "scene/frame-start-out-of-range.toml",
        &["scene.frame_start"],
    ),
    (
        "scene/garment-gltf-nan.toml",
        "gltf/nan-position.gltf",
        &["(accessors[0])", "not finite"],
    ),
    (
        "scene/garment-obj-index-out-of-range.toml",
        "obj/index-out-of-range.obj",
        &["line 9", "\"f 1 3 9\""],
    ),
    (
        "scene/missing-mesh.toml",
        "scene/missing-mesh.toml",
        &["garment[0].mesh", "nowhere.obj"],
    ),
    (
        "scene/missing-table-key.toml",
        "scene/missing-table-key.toml",
        &["garment[0]", "missing field `mesh`"],
    ),
    (
        "scene/nan-gravity.toml",
        "scene/nan-gravity.toml",
        &["scene.gravity[1]", "finite"],
    ),
    (
        "scene/negative-fps.toml",
        "scene/negative-fps.toml",
        &["scene.fps", "> 0"],
    ),
    ("scene/not-toml.toml", "scene/not-toml.toml", &["(line 1)"]),
    (
        "scene/pin-out-of-range.toml",
        "scene/pin-out-of-range.toml",
        &["garment[0].pin.vertices[1]", "vertex 99"],
    ),
    (
        "scene/preroll-huge.toml",
        "scene/preroll-huge.toml",
        &["scene.preroll", "4294967295"],
    ),
    (
        "scene/unknown-key.toml",
        "scene/unknown-key.toml",
        &["scene.fsp", "unknown field"],
    ),
    (
        "scene/wrong-type.toml",
        "scene/wrong-type.toml",
        &["scene.substeps", "invalid type"],
    ),
];

/// Damaged checkpoints (put where `bake --resume` looks) and the part of the container named.
const CHECKPOINTS: &[(&str, &str)] = &[
    ("checkpoint/checksum-mismatch.ckpt", "checksum"),
    ("checkpoint/empty.ckpt", "magic"),
    ("checkpoint/huge-length.ckpt", "payload"),
    ("checkpoint/ok-container-not-a-checkpoint.ckpt", "payload"),
    ("checkpoint/other-version.ckpt", "version"),
    ("checkpoint/truncated-header.ckpt", "header"),
    ("checkpoint/truncated-payload.ckpt", "payload"),
    ("checkpoint/wrong-magic.ckpt", "magic"),
];

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/io/tests/corpus")
}

/// A working folder with the corpus copied to `corpus/`.
fn with_corpus() -> Dir {
    let d = Dir::new();
    let mut stack = vec![corpus()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("corpus") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(corpus()).expect("inside the corpus");
                d.write(
                    &format!("corpus/{}", rel.display()),
                    std::fs::read(&p).expect("read"),
                );
            }
        }
    }
    d
}

fn assert_input_error(r: &Run, what: &str, file: &str, needles: &[&str]) {
    assert_eq!(
        r.code, 2,
        "{what}: expected exit 2:\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
    let name = Path::new(file).file_name().unwrap().to_str().unwrap();
    assert!(
        r.stderr.contains(name),
        "{what}: message lacks the file {name}: {}",
        r.stderr
    );
    for n in needles {
        assert!(
            r.stderr.contains(n),
            "{what}: message lacks {n:?}: {}",
            r.stderr
        );
    }
}

/// Every broken file of the corpus has a row here (and every row a file).
#[test]
fn every_corpus_file_is_covered() {
    let mut listed: Vec<&str> = INSPECT.iter().map(|r| r.0).collect();
    listed.extend(NON_FINITE_CACHES.iter().map(|r| r.0));
    listed.extend(SCENES.iter().map(|r| r.0));
    listed.extend(CHECKPOINTS.iter().map(|r| r.0));
    let d = with_corpus();
    for f in d.files_under("corpus") {
        let rel = f.trim_start_matches("corpus/");
        let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
        let helper = name.starts_with("ok-") && !rel.starts_with("checkpoint/")
            || rel == "scene/driver-nan.pc2"
            || rel.ends_with(".md");
        assert!(
            helper || listed.contains(&rel),
            "{rel} has no expectation here"
        );
    }
    for l in &listed {
        assert!(corpus().join(l).is_file(), "{l} is not in the corpus");
    }
}

#[test]
fn inspect_refuses_every_broken_file() {
    let d = with_corpus();
    for (file, needles) in INSPECT {
        let r = d.run(&["inspect", &format!("corpus/{file}")]);
        assert_input_error(&r, file, file, needles);
    }
}

#[test]
fn inspect_reports_the_non_finite_values_of_a_cache() {
    let d = with_corpus();
    for (file, point) in NON_FINITE_CACHES {
        let r = d.ok(&["inspect", "--json", &format!("corpus/{file}")]);
        let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).expect("JSON");
        assert_eq!(v["non_finite_values"], 1, "{file}: {v}");
        assert!(v["non_finite"].to_string().contains(point), "{file}: {v}");
    }
}

#[test]
fn check_and_bake_refuse_every_broken_scene() {
    let d = with_corpus();
    for (scene, named, needles) in SCENES {
        let path = format!("corpus/{scene}");
        let r = d.run(&["check", &path]);
        assert_input_error(&r, &format!("check {scene}"), named, needles);
        let r = d.run(&["bake", &path, "-o", "out"]);
        assert_input_error(&r, &format!("bake {scene}"), named, needles);
        assert!(
            d.files_under("out").is_empty(),
            "bake {scene} left {:?}",
            d.files_under("out")
        );
    }
}

#[test]
fn resume_refuses_every_damaged_checkpoint() {
    let d = with_corpus();
    // The corpus's good scene bakes (so what fails below is the checkpoint alone).
    d.ok(&["check", "corpus/scene/ok-scene.toml"]);
    for (file, field) in CHECKPOINTS {
        let _ = std::fs::remove_dir_all(d.path("out"));
        d.write(
            "out/.clothbake-resume/checkpoint",
            std::fs::read(corpus().join(file)).expect("read"),
        );
        let r = d.run(&[
            "bake",
            "corpus/scene/ok-scene.toml",
            "-o",
            "out",
            "--checkpoint-every",
            "1",
            "--resume",
        ]);
        assert_input_error(
            &r,
            file,
            "out/.clothbake-resume/checkpoint",
            &[".clothbake-resume/checkpoint", field],
        );
        // Nothing written: no cache, no report, no other staged file.
        let left: Vec<String> = d
            .files_under("out")
            .into_iter()
            .filter(|f| !f.ends_with(".clothbake-resume/checkpoint"))
            .collect();
        assert!(left.is_empty(), "{file}: left {left:?}");
    }
}
