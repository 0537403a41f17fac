//! Skinned positions of RiggedFigure's vertices at several times against a reference computed
//! here independently of the importer: the JSON is parsed with serde_json, the base64 buffer is
//! decoded by hand, accessors are read by hand, the animation is sampled and the node hierarchy
//! composed with plain glam, and linear blend skinning applied directly.

use std::path::Path;

use clothbake_io::gltf_mesh::read_mesh_node;
use clothbake_io::gltf_rig::GltfRig;
use clothbake_io::load_scene;
use glam::{Mat4, Quat, Vec3, Vec4};
use serde_json::Value;

const FILE: &str = "/work/shared/third_party/gltf/RiggedFigure.gltf";

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a') as u32 + 26,
            b'0'..=b'9' => (c - b'0') as u32 + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("bad base64 {c}"),
        }
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= val(c) << (18 - 6 * i);
        }
        let k = chunk.len() - 1;
        for i in 0..k {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

struct Reference {
    json: Value,
    buf: Vec<u8>,
}

impl Reference {
    fn load() -> Self {
        let json: Value = serde_json::from_str(&std::fs::read_to_string(FILE).unwrap()).unwrap();
        let uri = json["buffers"][0]["uri"].as_str().unwrap();
        let b64 = &uri[uri.find(',').unwrap() + 1..];
        let buf = base64_decode(b64);
        assert_eq!(
            buf.len() as u64,
            json["buffers"][0]["byteLength"].as_u64().unwrap()
        );
        Self { json, buf }
    }

    /// Accessor `i` as f64 components, element by element (FLOAT and UNSIGNED_SHORT only).
    fn accessor(&self, i: usize) -> Vec<Vec<f64>> {
        let a = &self.json["accessors"][i];
        let v = &self.json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let n = match a["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            t => panic!("{t}"),
        };
        let ct = a["componentType"].as_u64().unwrap();
        let cs = if ct == 5126 { 4 } else { 2 };
        let stride = v["byteStride"]
            .as_u64()
            .map(|s| s as usize)
            .unwrap_or(n * cs);
        let base = v["byteOffset"].as_u64().unwrap_or(0) as usize
            + a["byteOffset"].as_u64().unwrap_or(0) as usize;
        (0..a["count"].as_u64().unwrap() as usize)
            .map(|e| {
                (0..n)
                    .map(|k| {
                        let o = base + e * stride + k * cs;
                        let b = &self.buf[o..o + cs];
                        if ct == 5126 {
                            f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64
                        } else {
                            u16::from_le_bytes([b[0], b[1]]) as f64
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// World matrices of all nodes at time t, by recursion from the scene roots.
    fn world(&self, t: f32) -> Vec<Mat4> {
        let nodes = self.json["nodes"].as_array().unwrap();
        let mut local: Vec<Mat4> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let f = |k: &str, d: &[f32]| -> Vec<f32> {
                n.get(k)
                    .map(|a| {
                        a.as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_f64().unwrap() as f32)
                            .collect()
                    })
                    .unwrap_or(d.to_vec())
            };
            if n.get("matrix").is_some() {
                local.push(Mat4::from_cols_slice(&f("matrix", &[])));
                continue;
            }
            let mut tr = Vec3::from_slice(&f("translation", &[0.0; 3]));
            let mut r = Quat::from_slice(&f("rotation", &[0.0, 0.0, 0.0, 1.0]));
            let mut s = Vec3::from_slice(&f("scale", &[1.0; 3]));
            let anim = &self.json["animations"][0];
            for ch in anim["channels"].as_array().unwrap() {
                if ch["target"]["node"].as_u64().unwrap() as usize != i {
                    continue;
                }
                let smp = &anim["samplers"][ch["sampler"].as_u64().unwrap() as usize];
                assert_eq!(smp["interpolation"], "LINEAR");
                let times: Vec<f32> = self
                    .accessor(smp["input"].as_u64().unwrap() as usize)
                    .iter()
                    .map(|x| x[0] as f32)
                    .collect();
                let vals: Vec<Vec4> = self
                    .accessor(smp["output"].as_u64().unwrap() as usize)
                    .iter()
                    .map(|x| {
                        let mut v = [0.0f32; 4];
                        for (k, c) in x.iter().enumerate() {
                            v[k] = *c as f32;
                        }
                        Vec4::from(v)
                    })
                    .collect();
                // Clamp outside, linear inside.
                let (k, u) = if t <= times[0] {
                    (0, 0.0)
                } else if t >= *times.last().unwrap() {
                    (times.len() - 1, 0.0)
                } else {
                    let k = times.iter().rposition(|&x| x <= t).unwrap();
                    (k, (t - times[k]) / (times[k + 1] - times[k]))
                };
                let next = (k + 1).min(times.len() - 1);
                match ch["target"]["path"].as_str().unwrap() {
                    "translation" => tr = vals[k].truncate().lerp(vals[next].truncate(), u),
                    "scale" => s = vals[k].truncate().lerp(vals[next].truncate(), u),
                    "rotation" => {
                        r = Quat::from_vec4(vals[k])
                            .normalize()
                            .slerp(Quat::from_vec4(vals[next]).normalize(), u)
                    }
                    p => panic!("{p}"),
                }
            }
            local.push(Mat4::from_scale_rotation_translation(s, r, tr));
        }
        let mut world = vec![Mat4::IDENTITY; nodes.len()];
        fn visit(i: usize, parent: Mat4, nodes: &[Value], local: &[Mat4], world: &mut [Mat4]) {
            world[i] = parent * local[i];
            if let Some(c) = nodes[i].get("children") {
                for c in c.as_array().unwrap() {
                    visit(c.as_u64().unwrap() as usize, world[i], nodes, local, world);
                }
            }
        }
        for root in self.json["scenes"][0]["nodes"].as_array().unwrap() {
            visit(
                root.as_u64().unwrap() as usize,
                Mat4::IDENTITY,
                nodes,
                &local,
                &mut world,
            );
        }
        world
    }

    /// Skinned positions of all vertices of the mesh at time t.
    fn skinned(&self, t: f32) -> Vec<Vec3> {
        let prim = &self.json["meshes"][0]["primitives"][0];
        let pos = self.accessor(prim["attributes"]["POSITION"].as_u64().unwrap() as usize);
        let joints = self.accessor(prim["attributes"]["JOINTS_0"].as_u64().unwrap() as usize);
        let weights = self.accessor(prim["attributes"]["WEIGHTS_0"].as_u64().unwrap() as usize);
        let skin = &self.json["skins"][0];
        let ibm = self.accessor(skin["inverseBindMatrices"].as_u64().unwrap() as usize);
        let joint_nodes: Vec<usize> = skin["joints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        let world = self.world(t);
        let jm: Vec<glam::DMat4> = joint_nodes
            .iter()
            .enumerate()
            .map(|(j, &n)| world[n].as_dmat4() * glam::DMat4::from_cols_slice(&ibm[j]))
            .collect();
        pos.iter()
            .enumerate()
            .map(|(v, p)| {
                let p = glam::DVec3::new(p[0], p[1], p[2]);
                let wsum: f64 = weights[v].iter().sum();
                let mut acc = glam::DVec3::ZERO;
                for k in 0..4 {
                    acc += jm[joints[v][k] as usize].transform_point3(p) * (weights[v][k] / wsum);
                }
                acc.as_vec3()
            })
            .collect()
    }
}

const TIMES: [f32; 6] = [0.0, 0.3, 0.625, 0.9, 1.25, 2.0];

#[test]
fn skinned_positions_match_an_independent_reference() {
    let reference = Reference::load();
    let rig = GltfRig::open(Path::new(FILE)).unwrap();
    let node = rig.doc.find_node("Proxy").unwrap();
    let mesh = read_mesh_node(&rig.doc, &node, None).unwrap();
    assert_eq!(mesh.source.positions.len(), 370);
    assert_eq!(mesh.source.triangles.len(), 256);
    let inf = mesh.influences.as_ref().unwrap();
    let skin = &rig.skins[mesh.skin.unwrap()];
    let (mut world, mut joints) = (Vec::new(), Vec::new());
    let mut max_motion = 0.0f32;
    let rest = reference.skinned(0.0);
    for t in TIMES {
        let want = reference.skinned(t);
        rig.world_matrices(t, &mut world);
        skin.joint_matrices(&world, &mut joints);
        for (v, w) in want.iter().enumerate() {
            let got = inf.skin_point(v, mesh.source.positions[v], &joints);
            assert!(got.distance(*w) < 2e-5, "t = {t}, vertex {v}: {got} vs {w}");
            max_motion = max_motion.max(w.distance(rest[v]));
        }
    }
    // The animation really moves the vertices (so the comparison is not trivially at rest).
    assert!(max_motion > 0.1, "max motion {max_motion}");
}

#[test]
fn pins_following_the_skin_match_the_reference() {
    let reference = Reference::load();
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<String> = (0..370).map(|i| i.to_string()).collect();
    let scene = dir.path().join("s.toml");
    std::fs::write(
        &scene,
        format!(
            "[scene]\nframe_start = 0\n[[garment]]\nname = \"fig\"\nmesh = \"{FILE}\"\nnode = \"Proxy\"\n\
             [garment.pin]\nvertices = [{}]\nfollow = \"skin\"\n",
            all.join(", ")
        ),
    )
    .unwrap();
    let s = load_scene(&scene, &["cotton"]).unwrap();
    // Default range: to the end of the animation (1.25 s) at 24 fps.
    assert_eq!((s.frame_start, s.frame_end), (0, 30));
    let g = &s.garments[0];
    assert_eq!(g.num_source_vertices(), 370);
    assert_eq!(g.pins.vertices.len(), g.positions.len());
    // Rest positions are the skinned positions at frame_start.
    let rest = reference.skinned(0.0);
    for (k, p) in g.positions.iter().enumerate() {
        assert!(p.distance(rest[g.welded.sim_to_source[k] as usize]) < 2e-5);
    }
    let mut targets = Vec::new();
    for frame in [0.0f32, 7.0, 15.0, 22.5, 30.0] {
        let want = reference.skinned(frame / 24.0);
        g.pin_targets(frame, &mut targets);
        for (k, &v) in g.pins.vertices.iter().enumerate() {
            let w = want[g.welded.sim_to_source[v as usize] as usize];
            assert!(
                targets[k].distance(w) < 2e-5,
                "frame {frame}: {} vs {w}",
                targets[k]
            );
        }
    }
}
