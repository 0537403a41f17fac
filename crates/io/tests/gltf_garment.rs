//! glTF garments: split vertices welded and mapped back to glTF order, UVs, pins from an
//! attribute following the node, and errors naming the file and the element.

mod common;

use std::path::{Path, PathBuf};

use clothbake_io::{load_scene, Space, Up};
use common::GltfBuilder;
use glam::{Vec2, Vec3};
use serde_json::json;

/// Two quads sharing the edge x = 1, split there as a UV seam (8 glTF vertices, 6 cloth vertices).
const POS: [[f32; 3]; 8] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0],
    [1.0, 0.0, 0.0],
    [2.0, 0.0, 0.0],
    [2.0, 1.0, 0.0],
    [1.0, 1.0, 0.0],
];

struct Parts {
    pos: Vec<f32>,
    uv: Vec<f32>,
    pin: Vec<f32>,
    idx: Vec<u16>,
}

fn parts() -> Parts {
    Parts {
        pos: POS.iter().flatten().copied().collect(),
        uv: vec![
            0.0, 0.0, 0.5, 0.0, 0.5, 1.0, 0.0, 1.0, 0.6, 0.0, 1.0, 0.0, 1.0, 1.0, 0.6, 1.0,
        ],
        pin: vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.5, 0.0],
        idx: vec![0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7],
    }
}

fn build(p: &Parts) -> GltfBuilder {
    let mut b = GltfBuilder::new();
    let pos = b.floats(&p.pos, "VEC3");
    let uv = b.floats(&p.uv, "VEC2");
    let pin = b.floats(&p.pin, "SCALAR");
    let idx = b.u16s(&p.idx, "SCALAR");
    let mesh = b.mesh(
        "ClothMesh",
        json!({"POSITION": pos, "TEXCOORD_0": uv, "_PIN": pin}),
        Some(idx),
    );
    let node = b.node(
        json!({"name": "Cloth", "mesh": mesh, "translation": [0.0, 0.0, 0.0]}),
        true,
    );
    b.node(json!({"name": "Empty"}), true);
    let times = b.floats(&[0.0, 1.0], "SCALAR");
    let vals = b.floats(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    b.json["animations"] = json!([{
        "samplers": [{"input": times, "output": vals, "interpolation": "LINEAR"}],
        "channels": [{"sampler": 0, "target": {"node": node, "path": "translation"}}]
    }]);
    b
}

fn scene(dir: &Path, mesh: &str, extra: &str) -> PathBuf {
    let p = dir.join("scene.toml");
    std::fs::write(
        &p,
        format!(
            "[scene]\nframe_start = 0\n[[garment]]\nname = \"cloth\"\nmesh = \"{mesh}\"\n\
             [garment.pin]\nattribute = \"_PIN\"\nfollow = \"node\"\n{extra}"
        ),
    )
    .unwrap();
    p
}

fn load(dir: &Path, mesh: &str) -> Result<clothbake_io::LoadedScene, String> {
    load_scene(&scene(dir, mesh, ""), &["cotton"]).map_err(|e| e.to_string())
}

#[test]
fn split_vertices_are_welded_and_mapped_back() {
    let dir = tempfile::tempdir().unwrap();
    build(&parts()).write_gltf(&dir.path().join("c.gltf"));
    let s = load(dir.path(), "c.gltf").unwrap();
    assert_eq!((s.frame_start, s.frame_end), (0, 24));
    let g = &s.garments[0];
    assert_eq!(g.num_source_vertices(), 8);
    assert_eq!(g.positions.len(), 6);
    assert_eq!(g.triangles.len(), 4);
    assert_eq!(g.welded.source_to_sim, vec![0, 1, 2, 3, 1, 4, 5, 2]);
    assert_eq!(g.welded.sim_to_source, vec![0, 1, 2, 3, 5, 6]);
    // The two quads now share the edge (sim vertices 1 and 2).
    assert_eq!(g.triangles[2], [1, 4, 5]);
    assert_eq!(g.triangles[3], [1, 5, 2]);
    // UVs stay per corner, so the seam's two sides keep their own UVs.
    let uv = g.tri_uvs.as_ref().unwrap();
    assert_eq!(
        uv[2],
        [
            Vec2::new(0.6, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(1.0, 1.0)
        ]
    );
    assert_eq!(
        uv[1],
        [
            Vec2::new(0.0, 0.0),
            Vec2::new(0.5, 1.0),
            Vec2::new(0.0, 1.0)
        ]
    );
    // Back to glTF order: 8 positions, the duplicates carrying their welded vertex's position.
    let moved: Vec<Vec3> = g
        .positions
        .iter()
        .enumerate()
        .map(|(k, p)| *p + Vec3::Z * k as f32)
        .collect();
    let mut out = Vec::new();
    g.output_frame(&moved, Vec3::ZERO, 0, Space::World, Up::Y, &mut out);
    assert_eq!(out.len(), 8);
    for (src, o) in out.iter().enumerate() {
        let k = g.welded.source_to_sim[src] as usize;
        assert_eq!(*o, Vec3::from(POS[src]) + Vec3::Z * k as f32);
    }
    assert_eq!(out[4], out[1]);
    assert_eq!(out[7], out[2]);
}

#[test]
fn pins_from_attribute_follow_the_node() {
    let dir = tempfile::tempdir().unwrap();
    build(&parts()).write_gltf(&dir.path().join("c.gltf"));
    let s = load(dir.path(), "c.gltf").unwrap();
    let g = &s.garments[0];
    // _PIN: source 2 (= source 7, welded) -> 1, source 3 -> 1, source 6 -> 0.5.
    assert_eq!(g.pins.vertices, vec![2, 3, 5]);
    assert_eq!(g.pins.weights, vec![1.0, 1.0, 0.5]);
    let mut t = Vec::new();
    g.pin_targets(12.0, &mut t); // t = 0.5 s: translation (0, 0.5, 0)
    assert_eq!(
        t,
        vec![
            Vec3::new(1.0, 1.5, 0.0),
            Vec3::new(0.0, 1.5, 0.0),
            Vec3::new(2.0, 1.5, 0.0)
        ]
    );
    // Local output removes the node's motion at that frame.
    let world: Vec<Vec3> = g
        .positions
        .iter()
        .map(|p| *p + Vec3::new(0.0, 0.5, 0.0))
        .collect();
    let mut out = Vec::new();
    g.output_frame(&world, Vec3::ZERO, 12, Space::Local, Up::Y, &mut out);
    for (o, p) in out.iter().zip(POS) {
        assert!(o.distance(Vec3::from(p)) < 1e-6);
    }
    // Blender's local frame: (x, y, z) -> (x, -z, y).
    g.output_frame(&world, Vec3::ZERO, 12, Space::Local, Up::Z, &mut out);
    for (o, p) in out.iter().zip(POS) {
        assert!(o.distance(Vec3::new(p[0], -p[2], p[1])) < 1e-6);
    }
}

#[test]
fn glb_and_external_bin_load_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let b = build(&parts());
    std::fs::write(dir.path().join("c.glb"), b.glb_bytes()).unwrap();
    b.write_gltf_external(&dir.path().join("e.gltf"), "e.bin", true);
    b.write_gltf(&dir.path().join("c.gltf"));
    let a = load(dir.path(), "c.gltf").unwrap();
    for f in ["c.glb", "e.gltf"] {
        let s = load(dir.path(), f).unwrap();
        assert_eq!(s.garments[0].positions, a.garments[0].positions, "{f}");
        assert_eq!(s.garments[0].triangles, a.garments[0].triangles, "{f}");
        assert_eq!(s.garments[0].pins, a.garments[0].pins, "{f}");
    }
}

#[test]
fn errors_name_the_file_and_the_element() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    // Truncated GLB.
    let glb = build(&parts()).glb_bytes();
    std::fs::write(d.join("t.glb"), &glb[..glb.len() - 10]).unwrap();
    let e = load(d, "t.glb").err().unwrap();
    assert!(e.contains("t.glb: truncated GLB"), "{e}");
    // A header whose total length is shorter than the header itself (the gltf crate's
    // unchecked subtraction: a panic in a debug build).
    let mut short = glb.clone();
    short[8..12].copy_from_slice(&4u32.to_le_bytes());
    std::fs::write(d.join("s.glb"), &short).unwrap();
    let e = load(d, "s.glb").err().unwrap();
    assert!(
        e.contains(
            "s.glb: header: GLB header gives a total length of 4 bytes, less than the header's 12"
        ),
        "{e}"
    );

    // Wrong accessor count: 7 UVs for 8 positions.
    let mut p = parts();
    p.uv.truncate(14);
    build(&p).write_gltf(&d.join("w.gltf"));
    let e = load(d, "w.gltf").err().unwrap();
    assert!(e.contains("w.gltf: meshes[0].primitives[0].attributes.TEXCOORD_0 (accessors[1]): has 7 elements, POSITION has 8"), "{e}");

    // NaN vertex.
    let mut p = parts();
    p.pos[3 * 5 + 1] = f32::NAN;
    build(&p).write_gltf(&d.join("n.gltf"));
    let e = load(d, "n.gltf").err().unwrap();
    assert!(e.contains("n.gltf: meshes[0].primitives[0].attributes.POSITION (accessors[0]): element 5 is not finite (NaN)"), "{e}");

    // Index out of range.
    let mut p = parts();
    p.idx[4] = 8;
    build(&p).write_gltf(&d.join("i.gltf"));
    let e = load(d, "i.gltf").err().unwrap();
    assert!(e.contains("i.gltf: meshes[0].primitives[0].indices (accessors[3]): index 8 at [4] is not below the vertex count 8"), "{e}");

    // Accessor overrunning its buffer view.
    let mut b = build(&parts());
    b.json["accessors"][0]["count"] = json!(9);
    b.write_gltf(&d.join("o.gltf"));
    let e = load(d, "o.gltf").err().unwrap();
    assert!(
        e.contains("o.gltf: meshes[0].primitives[0].attributes.POSITION (accessors[0]): 9 elements from byte 0 (stride 12) overrun bufferViews[0] (96 bytes)"),
        "{e}"
    );

    // Missing external buffer.
    build(&parts()).write_gltf_external(&d.join("m.gltf"), "gone.bin", false);
    let e = load(d, "m.gltf").err().unwrap();
    assert!(e.contains("m.gltf: buffers[0]: uri \"gone.bin\""), "{e}");

    // Missing attribute named by pin.attribute.
    std::fs::write(
        d.join("s2.toml"),
        "[[garment]]\nname = \"c\"\nmesh = \"c.gltf\"\n[garment.pin]\nattribute = \"_MASK\"\n",
    )
    .unwrap();
    build(&parts()).write_gltf(&d.join("c.gltf"));
    let e = load_scene(&d.join("s2.toml"), &["cotton"])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("c.gltf: meshes[0].primitives[0].attributes: has no attribute \"_MASK\""),
        "{e}"
    );

    // Unknown node name.
    let e = load_scene(&scene(d, "c.gltf", "").with_file_name("x"), &["cotton"])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("file not found"), "{e}");
    std::fs::write(
        d.join("s3.toml"),
        "[[garment]]\nname = \"c\"\nmesh = \"c.gltf\"\nnode = \"Skirt\"\n",
    )
    .unwrap();
    let e = load_scene(&d.join("s3.toml"), &["cotton"])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("s3.toml: garment[0].node: no node or mesh named \"Skirt\""),
        "{e}"
    );

    // Draco-compressed geometry.
    let mut b = build(&parts());
    b.json["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
    b.write_gltf(&d.join("dr.gltf"));
    let e = load(d, "dr.gltf").err().unwrap();
    assert!(e.contains("dr.gltf: extensionsUsed: KHR_draco_mesh_compression: compressed geometry is not supported"), "{e}");

    // Not JSON at all.
    std::fs::write(d.join("j.gltf"), "{ nope").unwrap();
    let e = load(d, "j.gltf").err().unwrap();
    assert!(
        e.starts_with(&format!("{}: ", d.join("j.gltf").display())),
        "{e}"
    );
}

/// Source order = Blender's glTF import order: per primitive, the used vertices in increasing
/// index order (checked with Blender 4.5's importer on this same file: it creates these 7
/// vertices in this order).
#[test]
fn source_order_follows_blenders_importer() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = GltfBuilder::new();
    let p0 = b.floats(
        &[
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.5, 0.0,
        ],
        "VEC3",
    );
    let i0 = b.u16s(&[4, 2, 3, 2, 1, 3], "SCALAR");
    let p1 = b.floats(&[5.0, 0.0, 0.0, 6.0, 0.0, 0.0, 6.0, 1.0, 0.0], "VEC3");
    let i1 = b.u16s(&[0, 1, 2], "SCALAR");
    b.json["meshes"] = json!([{"name": "Two", "primitives": [
        {"attributes": {"POSITION": p0}, "indices": i0},
        {"attributes": {"POSITION": p1}, "indices": i1}]}]);
    b.node(json!({"name": "Two", "mesh": 0}), true);
    b.write_gltf(&dir.path().join("two.gltf"));
    std::fs::write(
        dir.path().join("s.toml"),
        "[[garment]]\nname = \"two\"\nmesh = \"two.gltf\"\n",
    )
    .unwrap();
    let s = load_scene(&dir.path().join("s.toml"), &["cotton"]).unwrap();
    let g = &s.garments[0];
    let mut out = Vec::new();
    g.output_frame(&g.positions, Vec3::ZERO, 1, Space::World, Up::Y, &mut out);
    let want = [
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [2.0, 0.5, 0.0],
        [5.0, 0.0, 0.0],
        [6.0, 0.0, 0.0],
        [6.0, 1.0, 0.0],
    ];
    assert_eq!(out, want.iter().map(|p| Vec3::from(*p)).collect::<Vec<_>>());
    assert_eq!(
        g.source_faces,
        vec![vec![3, 1, 2], vec![1, 0, 2], vec![4, 5, 6]]
    );
}

/// Pin weights from a vertex colour stored as normalized UNSIGNED_SHORT (as Blender exports
/// COLOR_0): weight = red / 65535; zero red = not pinned.
#[test]
fn pins_from_normalized_vertex_colour() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = build(&parts());
    let red: [u16; 8] = [0, 65535, 0, 0, 32768, 0, 0, 0];
    let rgba: Vec<u16> = red.iter().flat_map(|&r| [r, 7, 7, 65535]).collect();
    let c = b.u16s(&rgba, "VEC4");
    b.json["accessors"][c]["normalized"] = json!(true);
    b.json["meshes"][0]["primitives"][0]["attributes"]["COLOR_0"] = json!(c);
    b.write_gltf(&dir.path().join("c.gltf"));
    std::fs::write(
        dir.path().join("s.toml"),
        "[[garment]]\nname = \"c\"\nmesh = \"c.gltf\"\n[garment.pin]\nattribute = \"COLOR_0\"\n",
    )
    .unwrap();
    let s = load_scene(&dir.path().join("s.toml"), &["cotton"]).unwrap();
    let g = &s.garments[0];
    // Source 1 and source 4 weld into cloth vertex 1: the larger weight (1.0) wins.
    assert_eq!(g.pins.vertices, vec![1]);
    assert_eq!(g.pins.weights, vec![1.0]);
    // Only source 4 pinned: weight 32768 / 65535.
    let mut b = build(&parts());
    let red: [u16; 8] = [0, 0, 0, 0, 32768, 0, 0, 0];
    let rgba: Vec<u16> = red.iter().flat_map(|&r| [r, 7, 7, 65535]).collect();
    let c = b.u16s(&rgba, "VEC4");
    b.json["accessors"][c]["normalized"] = json!(true);
    b.json["meshes"][0]["primitives"][0]["attributes"]["COLOR_0"] = json!(c);
    b.write_gltf(&dir.path().join("c.gltf"));
    let s = load_scene(&dir.path().join("s.toml"), &["cotton"]).unwrap();
    assert_eq!(s.garments[0].pins.vertices, vec![1]);
    assert_eq!(s.garments[0].pins.weights, vec![32768.0 / 65535.0]);
}
