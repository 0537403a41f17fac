//! OBJ garments: vertex order kept, n-gons triangulated, errors named; scene loading with the
//! output frame conversions.

use std::path::Path;

use clothbake_io::obj_mesh::read_obj;
use clothbake_io::{load_scene, Space, Up};
use glam::Vec3;

const PRESETS: &[&str] = &["cotton"];

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A quad and a pentagon sharing an edge, with vertices listed out of spatial order, plus an
/// unused vertex.
const OBJ: &str = "o cloth
v 1 0 0
v 0 0 0
v 9 9 9
v 1 1 0
v 0 1 0
v 0.5 1.5 0
v 2 0.5 0
vt 0 0
vt 1 0
vt 1 1
vt 0 1
f 2/1 1/2 4/3 5/4
f 1 7 4 6 5
";

#[test]
fn obj_keeps_v_order_and_triangulates() {
    let dir = tempfile::tempdir().unwrap();
    let m = read_obj(&write(dir.path(), "c.obj", OBJ)).unwrap();
    assert_eq!(m.positions.len(), 7);
    assert_eq!(m.positions[0], Vec3::new(1.0, 0.0, 0.0));
    assert_eq!(m.positions[2], Vec3::new(9.0, 9.0, 9.0));
    assert_eq!(m.positions[6], Vec3::new(2.0, 0.5, 0.0));
    assert_eq!(m.faces, vec![vec![1, 0, 3, 4], vec![0, 6, 3, 5, 4]]);
    assert_eq!(
        m.triangles,
        vec![[1, 0, 3], [1, 3, 4], [0, 6, 3], [0, 3, 5], [0, 5, 4]]
    );
    // The pentagon has no UVs, so the mesh has no complete UV set.
    assert!(m.tri_uvs.is_none());
}

#[test]
fn obj_errors_name_file_and_element() {
    let dir = tempfile::tempdir().unwrap();
    let e = read_obj(&write(
        dir.path(),
        "n.obj",
        "v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n",
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.ends_with("n.obj: v[1]: non-finite coordinate [1, NaN, 0]"),
        "{e}"
    );
    let e = read_obj(&write(
        dir.path(),
        "d.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 2\n",
    ))
    .unwrap_err()
    .to_string();
    assert!(e.ends_with("d.obj: f[0]: uses vertex 2 twice"), "{e}");
    let e = read_obj(&write(dir.path(), "r.obj", "v 0 0 0\nv 1 0 0\nf 1 2 3\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("r.obj: "), "{e}");
    let e = read_obj(&dir.path().join("missing.obj"))
        .unwrap_err()
        .to_string();
    assert!(e.ends_with("missing.obj: file not found"), "{e}");
}

#[test]
fn scene_with_obj_garment_maps_back_to_source_order() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "c.obj", OBJ);
    // Raw Blender coordinates, moved by +2 along Blender's Z (up).
    let scene = write(
        dir.path(),
        "s.toml",
        "[scene]\nframe_end = 3\n[[garment]]\nname = \"c\"\nmesh = \"c.obj\"\nup = \"z\"\n\
         transform = [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,2,1]\n[garment.pin]\nvertices = [1, 4]\n",
    );
    let s = load_scene(&scene, PRESETS).unwrap();
    assert_eq!((s.frame_start, s.frame_end, s.num_frames()), (1, 3, 3));
    let g = &s.garments[0];
    assert_eq!(g.num_source_vertices(), 7);
    // The unused vertex 2 is not simulated.
    assert_eq!(g.positions.len(), 6);
    assert_eq!(g.triangles.len(), 5);
    // Blender (x, y, z) -> glTF (x, z, -y), after the +2 Z move: source vertex 3 = (1, 1, 0).
    let s3 = g.welded.source_to_sim[3] as usize;
    assert_eq!(g.positions[s3], Vec3::new(1.0, 2.0, -1.0));
    assert_eq!(
        g.pins.vertices,
        vec![g.welded.source_to_sim[1], g.welded.source_to_sim[4]]
    );
    let mut targets = Vec::new();
    g.pin_targets(2.0, &mut targets);
    assert_eq!(
        targets,
        vec![Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -1.0)]
    );

    // Output in Blender's object-local space gives back the file's coordinates exactly, in order.
    let src = read_obj(&dir.path().join("c.obj")).unwrap();
    let mut out = Vec::new();
    g.output_frame(&g.positions, Vec3::ZERO, 1, Space::Local, Up::Z, &mut out);
    assert_eq!(out.len(), 7);
    for (a, b) in out.iter().zip(&src.positions) {
        assert!(a.distance(*b) < 1e-6, "{a} vs {b}");
    }
    // World, Z-up: the Blender world coordinates (file + 2 along Z).
    g.output_frame(&g.positions, Vec3::ZERO, 1, Space::World, Up::Z, &mut out);
    for (a, b) in out.iter().zip(&src.positions) {
        assert!(
            a.distance(*b + Vec3::new(0.0, 0.0, 2.0)) < 1e-6,
            "{a} vs {b}"
        );
    }
}

#[test]
fn scene_errors_name_scene_field() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "c.obj", OBJ);
    let scene = write(
        dir.path(),
        "s.toml",
        "[[garment]]\nname = \"c\"\nmesh = \"nope.obj\"\n",
    );
    let e = load_scene(&scene, PRESETS).err().unwrap().to_string();
    assert!(
        e.contains("s.toml: garment[0].mesh: file not found: "),
        "{e}"
    );
    let scene = write(
        dir.path(),
        "s.toml",
        "[[garment]]\nname = \"c\"\nmesh = \"c.obj\"\n[garment.pin]\nvertices = [0, 7]\n",
    );
    let e = load_scene(&scene, PRESETS).err().unwrap().to_string();
    assert!(
        e.contains("s.toml: garment[0].pin.vertices[1]: vertex 7 is out of range"),
        "{e}"
    );
    let scene = write(
        dir.path(),
        "s.toml",
        "[[garment]]\nname = \"c\"\nmesh = \"c.obj\"\nrest_shape = \"uv\"\n",
    );
    let e = load_scene(&scene, PRESETS).err().unwrap().to_string();
    assert!(
        e.contains("s.toml: garment[0].rest_shape: \"uv\" but "),
        "{e}"
    );
    assert!(e.ends_with("c.obj has no UVs on every face"), "{e}");
}

#[test]
fn keyed_sphere_collider_interpolates_and_holds() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write(
        dir.path(),
        "s.toml",
        "[[collider]]\ntype = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\n\
         [[collider.keys]]\nframe = 1\n[[collider.keys]]\nframe = 5\ncenter = [4.0, 0.0, 0.0]\nradius = 3.0\n",
    );
    let mut s = load_scene(&scene, PRESETS).unwrap();
    assert_eq!(s.frame_end, 48);
    let mut shapes = Vec::new();
    let cases = [
        (0.0, 0.0, 1.0),
        (2.0, 1.0, 1.5),
        (3.5, 2.5, 2.25),
        (9.0, 4.0, 3.0),
    ];
    for (frame, x, r) in cases {
        s.colliders.shapes_at(frame, &mut shapes);
        assert_eq!(
            shapes,
            vec![clothbake_io::Shape::Sphere {
                center: Vec3::new(x, 0.0, 0.0),
                radius: r
            }]
        );
    }
    assert_eq!(s.colliders.names(), ["collider[0]"]);
}

/// A concave U-shaped octagon: a fan from its first corner would flip triangles; ear clipping
/// gives 6 triangles, all with the polygon's orientation, covering exactly its area (5).
#[test]
fn concave_ngon_is_triangulated_without_flips() {
    let dir = tempfile::tempdir().unwrap();
    let obj = "v 0 0 0\nv 3 0 0\nv 3 2 0\nv 2 2 0\nv 2 1 0\nv 1 1 0\nv 1 2 0\nv 0 2 0\nf 1 2 3 4 5 6 7 8\n";
    let m = read_obj(&write(dir.path(), "u.obj", obj)).unwrap();
    assert_eq!(m.triangles.len(), 6);
    let mut total = 0.0;
    for t in &m.triangles {
        let [a, b, c] = t.map(|i| m.positions[i as usize]);
        let z = (b - a).cross(c - a).z * 0.5;
        assert!(z > 0.0, "flipped or degenerate triangle {t:?}");
        total += z;
    }
    assert!((total - 5.0).abs() < 1e-6, "area {total}");
}

/// obj-rs's own errors (an index out of range, zero, too few corners) name the line and its text.
#[test]
fn syntax_errors_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let quad = "v 0 0 0\nv 1 0 0\nv 1 0 1\n# comment\nv 0 0 1\n";
    for (body, line, text) in [
        ("f 1 2 3\nf 1 3 9\n", "line 7", "\"f 1 3 9\""),
        ("f 0 1 2\n", "line 6", "\"f 0 1 2\""),
        ("f 1 2 3\nf -9 1 2\nf 1 2 3\n", "line 7", "\"f -9 1 2\""),
        ("f 1/1 2/2 3/7\n", "line 6", "\"f 1/1 2/2 3/7\""),
    ] {
        let e = read_obj(&write(dir.path(), "e.obj", &format!("{quad}{body}")))
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("e.obj: {line}: {text}: ")), "{e}");
        assert!(e.contains("out of range"), "{e}");
    }
}
