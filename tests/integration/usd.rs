//! USD output through every way of asking for it: `[output] formats = ["usd"]` in a scene,
//! `bake --format usd` and `batch --format usd` give the same layer; a bake that fails writes none.
//! The binary layer (`usdc`) through the same ways; pxr reads it as the same layer as the text one
//! (tests/readers).

use crate::harness::Dir;

#[test]
fn scene_formats_bake_and_batch_write_the_same_usd_layer() {
    let d = Dir::new();
    d.ok(&[
        "sample",
        "sheet-on-sphere",
        "-o",
        "shots/sheet",
        "--resolution",
        "6",
    ]);
    let scene = "shots/sheet/scene.toml";
    d.ok(&[
        "bake", scene, "-o", "a", "--frames", "1..5", "--format", "usd",
    ]);
    assert_eq!(d.files_under("a"), vec!["report.json", "sheet.usda"]);
    let layer = std::fs::read_to_string(d.path("a/sheet.usda")).unwrap();
    for line in [
        "#usda 1.0",
        "    defaultPrim = \"sheet\"",
        "    startTimeCode = 1",
        "    endTimeCode = 5",
        "    timeCodesPerSecond = 24",
        "    metersPerUnit = 1",
        "    upAxis = \"Y\"",
        "def Mesh \"sheet\"",
        "    point3f[] points.timeSamples = {",
        "    float3[] extent.timeSamples = {",
    ] {
        assert!(
            layer.lines().any(|l| l == line),
            "{line:?} missing:\n{layer}"
        );
    }
    // 7×7 vertices, 36 quads; 5 samples of points and of extents.
    assert_eq!(
        layer.lines().filter(|l| l.starts_with("        ")).count(),
        10
    );
    // One "(" opens the layer metadata, then one per point and per extent corner.
    assert_eq!(layer.matches("(").count(), 1 + 5 * 49 + 5 * 2);

    // The scene's own [output] formats.
    let text = std::fs::read_to_string(d.path(scene)).unwrap();
    assert!(text.contains("formats = [\"pc2\"]"), "{text}");
    let text = text.replace("formats = [\"pc2\"]", "formats = [\"usd\", \"pc2\"]");
    d.write("shots/sheet/scene.toml", text);
    d.ok(&["bake", scene, "-o", "b", "--frames", "1..5"]);
    assert_eq!(
        d.files_under("b"),
        vec!["report.json", "sheet.pc2", "sheet.usda"]
    );
    assert_eq!(
        std::fs::read_to_string(d.path("b/sheet.usda")).unwrap(),
        layer
    );

    // batch passes --format on to each shot.
    d.ok(&["batch", "shots", "-o", "c", "--format", "usd"]);
    let full = std::fs::read_to_string(d.path("c/sheet/sheet.usda")).unwrap();
    d.ok(&["bake", scene, "-o", "ref", "--format", "usd"]);
    assert_eq!(
        full,
        std::fs::read_to_string(d.path("ref/sheet.usda")).unwrap()
    );
}

#[test]
fn a_failed_bake_leaves_no_usd_layer() {
    let d = Dir::new();
    d.ok(&["sample", "sheet-on-sphere", "-o", "s", "--resolution", "4"]);
    let text = std::fs::read_to_string(d.path("s/scene.toml")).unwrap();
    // Absurd wind: the simulation fails (exit 1) part-way (docs/scene-format.md, "CLI").
    d.write(
        "s/scene.toml",
        format!("{text}\n[wind]\nvelocity = [3e38, 0, 0]\n"),
    );
    let r = d.run(&[
        "bake",
        "s/scene.toml",
        "-o",
        "out",
        "--frames",
        "1..5",
        "--format",
        "usd,usdc,pc2",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let left: Vec<String> = d
        .files_under("out")
        .into_iter()
        .filter(|f| f.contains("sheet"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

/// The `.usdc` layer: the crate header, version 0.8.0 and a table of contents inside the file;
/// the same bytes from `--format usdc`, a scene's `formats = ["usdc"]` and `batch`; and the
/// same size for the same frames whatever the positions (a fixed stride per frame).
#[test]
fn scene_formats_bake_and_batch_write_the_same_usdc_layer() {
    let d = Dir::new();
    d.ok(&[
        "sample",
        "sheet-on-sphere",
        "-o",
        "shots/sheet",
        "--resolution",
        "6",
    ]);
    let scene = "shots/sheet/scene.toml";
    d.ok(&[
        "bake", scene, "-o", "a", "--frames", "1..5", "--format", "usdc,usd",
    ]);
    assert_eq!(
        d.files_under("a"),
        vec!["report.json", "sheet.usda", "sheet.usdc"]
    );
    let layer = std::fs::read(d.path("a/sheet.usdc")).unwrap();
    assert_eq!(&layer[..11], b"PXR-USDC\0\x08\0");
    let toc = u64::from_le_bytes(layer[16..24].try_into().unwrap()) as usize;
    assert!(
        toc > 88 && toc + 8 + 6 * 32 == layer.len(),
        "six sections listed at the end"
    );
    // One more frame: its points and extent (49 points and 2 corners), one more sample time and
    // one more value in each time-sample table (the compressed sections vary by a few bytes).
    d.ok(&[
        "bake", scene, "-o", "six", "--frames", "1..6", "--format", "usdc",
    ]);
    let six = std::fs::read(d.path("six/sheet.usdc")).unwrap();
    let more = six.len() as i64 - layer.len() as i64 - (8 + 12 * 49 + 8 + 24 + 3 * 8);
    assert!(more.abs() < 16, "{more}");
    // The same bytes (but the header's table offset) up to the end of frame 5's arrays, where
    // the six-frame file goes on with frame 6's points (49 of them) and the five-frame one with
    // its sample times (5 of them).
    assert_eq!(&six[..16], &layer[..16]);
    let at = 24
        + (24..layer.len())
            .take_while(|&k| six[k] == layer[k])
            .count();
    let count = |b: &[u8]| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    assert_eq!((count(&six), count(&layer)), (49, 5));

    let text = std::fs::read_to_string(d.path(scene)).unwrap();
    let text = text.replace("formats = [\"pc2\"]", "formats = [\"usdc\"]");
    d.write("shots/sheet/scene.toml", text);
    d.ok(&["bake", scene, "-o", "b", "--frames", "1..5"]);
    assert_eq!(d.files_under("b"), vec!["report.json", "sheet.usdc"]);
    assert_eq!(std::fs::read(d.path("b/sheet.usdc")).unwrap(), layer);
    d.ok(&["batch", "shots", "-o", "c", "--format", "usdc"]);
    d.ok(&["bake", scene, "-o", "ref", "--format", "usdc"]);
    assert_eq!(
        std::fs::read(d.path("c/sheet/sheet.usdc")).unwrap(),
        std::fs::read(d.path("ref/sheet.usdc")).unwrap()
    );
}
