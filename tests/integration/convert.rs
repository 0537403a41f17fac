//! `clothbake convert`: every format to every other reproduces the bake's own caches byte for
//! byte (PC2, MDD, OBJ frames, USD text and binary); bad inputs exit 2 naming the file and element and leave no
//! output behind.

use crate::harness::Dir;

/// Bakes skirt-walk frames 1..4 in every format into `out/`.
fn baked() -> Dir {
    let d = Dir::new();
    let scene = d.sample("skirt-walk");
    d.ok(&[
        "bake",
        &scene,
        "-o",
        "out",
        "--frames",
        "1..4",
        "--format",
        "pc2,mdd,obj,usd,usdc",
    ]);
    d
}

fn same(d: &Dir, a: &str, b: &str) {
    let (x, y) = (std::fs::read(d.path(a)), std::fs::read(d.path(b)));
    assert!(
        x.as_ref().unwrap() == y.as_ref().unwrap(),
        "{a} differs from {b}"
    );
}

#[test]
fn conversions_reproduce_the_bakes_caches_exactly() {
    let d = baked();
    let scene = "skirt-walk/scene.toml";
    d.ok(&["convert", "out/skirt.pc2", "c/1.mdd"]);
    same(&d, "c/1.mdd", "out/skirt.mdd");
    d.ok(&["convert", "out/skirt.mdd", "c/2.pc2"]);
    same(&d, "c/2.pc2", "out/skirt.pc2");
    // USD from PC2 with the scene's topology; the prim is named after --garment.
    d.ok(&[
        "convert",
        "out/skirt.pc2",
        "c/skirt.usda",
        "--scene",
        scene,
        "--garment",
        "skirt",
    ]);
    same(&d, "c/skirt.usda", "out/skirt.usda");
    // USD from the MDD with an OBJ frame as --mesh (fps from the MDD's times).
    d.ok(&[
        "convert",
        "out/skirt.mdd",
        "c/m/skirt.usda",
        "--mesh",
        "out/skirt.0001.obj",
    ]);
    same(&d, "c/m/skirt.usda", "out/skirt.usda");
    // USD -> OBJ sequence (topology from the layer) -> PC2 and USD again.
    let r = d.ok(&[
        "convert",
        "out/skirt.usda",
        "c/seq/skirt.####.obj",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["frames"], 4);
    assert_eq!(v["points"], 216);
    assert_eq!(v["input_format"], "usd");
    assert_eq!(v["output_format"], "obj");
    for f in 1..=4 {
        same(
            &d,
            &format!("c/seq/skirt.{f:04}.obj"),
            &format!("out/skirt.{f:04}.obj"),
        );
    }
    d.ok(&["convert", "c/seq", "c/3.pc2"]);
    same(&d, "c/3.pc2", "out/skirt.pc2");
    d.ok(&[
        "convert",
        "c/seq/skirt.####.obj",
        "c/4.usda",
        "--garment",
        "skirt",
    ]);
    same(&d, "c/4.usda", "out/skirt.usda");
    d.ok(&["convert", "out/skirt.usda", "c/5.mdd"]);
    same(&d, "c/5.mdd", "out/skirt.mdd");
    // The binary layer: from PC2 and from the text layer, and back to both.
    d.ok(&[
        "convert",
        "out/skirt.pc2",
        "c/b/skirt.usdc",
        "--scene",
        scene,
        "--garment",
        "skirt",
    ]);
    same(&d, "c/b/skirt.usdc", "out/skirt.usdc");
    d.ok(&["convert", "out/skirt.usda", "c/t/skirt.usdc"]);
    same(&d, "c/t/skirt.usdc", "out/skirt.usdc");
    let r = d.ok(&["convert", "out/skirt.usdc", "c/6.pc2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        (v["input_format"].as_str(), v["frames"].as_u64()),
        (Some("usdc"), Some(4))
    );
    same(&d, "c/6.pc2", "out/skirt.pc2");
    d.ok(&["convert", "out/skirt.usdc", "c/u/skirt.usda"]);
    same(&d, "c/u/skirt.usda", "out/skirt.usda");
    d.ok(&["convert", "out/skirt.usdc", "c/seq2/skirt.####.obj"]);
    for f in 1..=4 {
        same(
            &d,
            &format!("c/seq2/skirt.{f:04}.obj"),
            &format!("out/skirt.{f:04}.obj"),
        );
    }
}

#[test]
fn bad_inputs_exit_2_by_name_and_write_nothing() {
    let d = baked();
    std::fs::create_dir_all(d.path("c")).unwrap();
    let fail = |args: &[&str], needle: &str| {
        let r = d.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
        assert_eq!(
            d.files_under("c"),
            Vec::<String>::new(),
            "{args:?} left files"
        );
    };
    // No topology for USD/OBJ output from a point cache.
    fail(
        &["convert", "out/skirt.pc2", "c/x.usda"],
        "out/skirt.pc2: has no topology",
    );
    fail(
        &["convert", "out/skirt.pc2", "c/x.####.obj"],
        "has no topology",
    );
    // A topology of another vertex count.
    d.ok(&[
        "sample",
        "sheet-on-sphere",
        "-o",
        "sheet",
        "--resolution",
        "4",
    ]);
    d.ok(&[
        "bake",
        "sheet/scene.toml",
        "-o",
        "sheet-out",
        "--frames",
        "1..2",
        "--format",
        "obj",
    ]);
    fail(
        &["convert", "out/skirt.pc2", "c/x.usda", "--mesh", "sheet-out/sheet.0001.obj"],
        "sheet-out/sheet.0001.obj: the topology has 25 vertices, the cache out/skirt.pc2 has 216 points",
    );
    // Truncated PC2, damaged MDD.
    let pc2 = std::fs::read(d.path("out/skirt.pc2")).unwrap();
    d.write("bad/t.pc2", &pc2[..pc2.len() - 5]);
    fail(&["convert", "bad/t.pc2", "c/x.mdd"], "bad/t.pc2: data:");
    d.write("bad/m.mdd", b"\xff\xff\xff\xff\0\0\0\x01");
    fail(
        &["convert", "bad/m.mdd", "c/x.pc2"],
        "bad/m.mdd: header: negative counts",
    );
    // A USD layer broken in its third sample: the error names the line; no partial output.
    let usda = std::fs::read_to_string(d.path("out/skirt.usda")).unwrap();
    let broken = usda.replacen("        3: [(", "        3: [(x", 1);
    let line = broken.lines().position(|l| l.contains("3: [(x")).unwrap() + 1;
    d.write("bad/b.usda", broken);
    fail(
        &["convert", "bad/b.usda", "c/x.pc2"],
        &format!("bad/b.usda: points.timeSamples (line {line}): time code 3: bad number \"x"),
    );
    // A missing frame in an OBJ sequence.
    for f in [1, 2, 4] {
        let src = format!("out/skirt.{f:04}.obj");
        d.write(
            &format!("seq/skirt.{f:04}.obj"),
            std::fs::read(d.path(&src)).unwrap(),
        );
    }
    fail(&["convert", "seq", "c/x.pc2"], "frames 3..3 are missing");
    // An OBJ frame with a vertex too few.
    let obj = std::fs::read_to_string(d.path("out/skirt.0003.obj")).unwrap();
    let first_v = obj.lines().find(|l| l.starts_with("v ")).unwrap();
    d.write(
        "seq/skirt.0003.obj",
        obj.replacen(&format!("{first_v}\n"), "", 1),
    );
    let r = d.run(&["convert", "seq", "c/x.pc2"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("seq/skirt.0003.obj"), "{}", r.stderr);
    assert_eq!(d.files_under("c"), Vec::<String>::new());
    // Binary USD is refused by name.
    d.write("bad/c.usd", b"PXR-USDC\0\0\0\0");
    fail(
        &["convert", "bad/c.usd", "c/x.pc2"],
        "bad/c.usd: line 1: not a USD text layer",
    );
    // Unknown output type, bad pattern.
    fail(
        &["convert", "out/skirt.pc2", "c/x.abc"],
        "unknown output type",
    );
    fail(
        &["convert", "out/skirt.usda", "c/x.##.obj"],
        "NAME.####.obj",
    );
}
