//! A glTF mesh node as a [`SourceMesh`] in the mesh's own (bind-pose) coordinates, with its skin
//! influences and optional per-vertex pin weights.
//!
//! Source vertex order (the order the caches keep) is the order Blender's glTF importer creates
//! with its default settings ("Merge Vertices" off; checked against io_scene_gltf2 4.5,
//! blender/imp/mesh.py): primitive by primitive, the vertices that the primitive's indices use,
//! in increasing index order. For an exporter's output, where every vertex is used, this is
//! simply the glTF vertex order of the primitives one after the other. Point and line primitives
//! contribute vertices (kept at rest) but no triangles.

use glam::{Vec2, Vec3};
use gltf::mesh::Mode;
use gltf::Semantic;

use crate::error::Result;
use crate::gltf_document::GltfDocument;
use crate::skinning::Influences;
use crate::source_mesh::SourceMesh;

/// A mesh node read from glTF.
pub struct GltfMesh {
    /// Node index.
    pub node: usize,
    /// Positions, triangles and UVs in mesh-local coordinates, source order.
    pub source: SourceMesh,
    /// The node's skin index, if it has one.
    pub skin: Option<usize>,
    /// Skin influences per source vertex (when the node has a skin).
    pub influences: Option<Influences>,
    /// Weights from the requested pin attribute (first component), per source vertex.
    pub pin_weights: Option<Vec<f32>>,
}

/// Reads node `node` (which must have a mesh). `pin_attribute` names a vertex attribute
/// (`_PIN`, `COLOR_0`, ...) whose first component becomes a pin weight.
pub fn read_mesh_node(
    doc: &GltfDocument,
    node: &gltf::Node<'_>,
    pin_attribute: Option<&str>,
) -> Result<GltfMesh> {
    let mesh = node
        .mesh()
        .ok_or_else(|| doc.err(format!("nodes[{}]", node.index()), "has no mesh"))?;
    let skin = node.skin().map(|s| s.index());
    let skin_joints = node.skin().map(|s| s.joints().count());
    let mut source = SourceMesh::default();
    let mut tri_uvs: Option<Vec<[Vec2; 3]>> = Some(Vec::new());
    let mut weight_lists: Option<Vec<Vec<(u16, f32)>>> = skin.map(|_| Vec::new());
    let mut pins: Option<Vec<f32>> = pin_attribute.map(|_| Vec::new());
    for prim in mesh.primitives() {
        let pf = format!("meshes[{}].primitives[{}]", mesh.index(), prim.index());
        let pos_acc = prim
            .get(&Semantic::Positions)
            .ok_or_else(|| doc.err(format!("{pf}.attributes"), "has no POSITION"))?;
        let count = pos_acc.count();
        let pos = doc.read_floats(&pos_acc, &[3], &format!("{pf}.attributes.POSITION"))?;
        let check_count = |acc: &gltf::Accessor<'_>, name: &str| -> Result<()> {
            if acc.count() != count {
                return Err(doc.err(
                    format!("{pf}.attributes.{name} (accessors[{}])", acc.index()),
                    format!("has {} elements, POSITION has {count}", acc.count()),
                ));
            }
            Ok(())
        };
        let indices: Vec<u32> = match prim.indices() {
            Some(acc) => {
                let idx = doc.read_uints(&acc, &format!("{pf}.indices"))?;
                if let Some((k, &i)) = idx.iter().enumerate().find(|(_, &i)| i as usize >= count) {
                    return Err(doc.err(
                        format!("{pf}.indices (accessors[{}])", acc.index()),
                        format!("index {i} at [{k}] is not below the vertex count {count}"),
                    ));
                }
                idx
            }
            None => (0..count as u32).collect(),
        };
        let tris =
            triangles_of(prim.mode(), &indices).map_err(|m| doc.err(format!("{pf}.indices"), m))?;
        // Vertices in Blender's order: the used indices, increasing.
        let mut used: Vec<u32> = indices.clone();
        used.sort_unstable();
        used.dedup();
        let base = source.positions.len() as u32;
        let mut local_to_source = vec![u32::MAX; count];
        for (r, &i) in used.iter().enumerate() {
            local_to_source[i as usize] = base + r as u32;
            source
                .positions
                .push(Vec3::from_slice(&pos[3 * i as usize..]));
        }
        let uv = match prim.get(&Semantic::TexCoords(0)) {
            Some(acc) => {
                check_count(&acc, "TEXCOORD_0")?;
                Some(doc.read_floats(&acc, &[2], &format!("{pf}.attributes.TEXCOORD_0"))?)
            }
            None => None,
        };
        for t in &tris {
            if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                continue;
            }
            source
                .triangles
                .push(t.map(|i| local_to_source[i as usize]));
            source
                .faces
                .push(t.iter().map(|&i| local_to_source[i as usize]).collect());
            match (&mut tri_uvs, &uv) {
                (Some(out), Some(uv)) => {
                    out.push(t.map(|i| Vec2::from_slice(&uv[2 * i as usize..])))
                }
                _ => tri_uvs = None,
            }
        }
        if let Some(lists) = &mut weight_lists {
            let mut sets = Vec::new();
            for set in 0.. {
                let (Some(j), Some(w)) = (
                    prim.get(&Semantic::Joints(set)),
                    prim.get(&Semantic::Weights(set)),
                ) else {
                    break;
                };
                check_count(&j, &format!("JOINTS_{set}"))?;
                check_count(&w, &format!("WEIGHTS_{set}"))?;
                let jf = format!("{pf}.attributes.JOINTS_{set}");
                let jv = doc.read_uints(&j, &jf)?;
                if j.dimensions() != gltf::accessor::Dimensions::Vec4 {
                    return Err(doc.err(jf, "must be VEC4"));
                }
                let wv = doc.read_floats(&w, &[4], &format!("{pf}.attributes.WEIGHTS_{set}"))?;
                let n = skin_joints.unwrap_or(0);
                if let Some((k, &bad)) = jv.iter().enumerate().find(|(_, &x)| x as usize >= n) {
                    return Err(doc.err(
                        format!("{pf}.attributes.JOINTS_{set} (accessors[{}])", j.index()),
                        format!(
                            "joint {bad} of vertex {} is not below the skin's {n} joints",
                            k / 4
                        ),
                    ));
                }
                sets.push((jv, wv));
            }
            if sets.is_empty() {
                return Err(doc.err(
                    format!("{pf}.attributes"),
                    "the node has a skin but the primitive has no JOINTS_0/WEIGHTS_0",
                ));
            }
            for &i in &used {
                let i = i as usize;
                let mut list = Vec::new();
                for (jv, wv) in &sets {
                    for k in 0..4 {
                        if wv[4 * i + k] > 0.0 {
                            list.push((jv[4 * i + k] as u16, wv[4 * i + k]));
                        }
                    }
                }
                lists.push(list);
            }
        }
        if let (Some(out), Some(name)) = (&mut pins, pin_attribute) {
            let acc = prim
                .attributes()
                .find(|(s, _)| s.to_string() == name)
                .map(|(_, a)| a)
                .ok_or_else(|| {
                    doc.err(
                        format!("{pf}.attributes"),
                        format!("has no attribute \"{name}\" (needed by pin.attribute)"),
                    )
                })?;
            check_count(&acc, name)?;
            let n = crate::gltf_accessor::components(acc.dimensions());
            let v = doc.read_floats(&acc, &[1, 2, 3, 4], &format!("{pf}.attributes.{name}"))?;
            out.extend(used.iter().map(|&i| v[n * i as usize]));
        }
    }
    if source.triangles.is_empty() {
        return Err(doc.err(format!("meshes[{}]", mesh.index()), "has no triangles"));
    }
    source.tri_uvs = tri_uvs;
    let influences = match weight_lists {
        Some(lists) => Some(Influences::from_lists(&lists).map_err(|v| {
            doc.err(
                format!("meshes[{}]", mesh.index()),
                format!("vertex {v} has no positive skin weight"),
            )
        })?),
        None => None,
    };
    Ok(GltfMesh {
        node: node.index(),
        source,
        skin,
        influences,
        pin_weights: pins,
    })
}

/// Triangles (primitive-local indices) of a primitive; point and line modes give none.
fn triangles_of(mode: Mode, idx: &[u32]) -> std::result::Result<Vec<[u32; 3]>, String> {
    Ok(match mode {
        Mode::Triangles => {
            if !idx.len().is_multiple_of(3) {
                return Err(format!(
                    "{} indices is not a multiple of 3 for TRIANGLES",
                    idx.len()
                ));
            }
            idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
        }
        Mode::TriangleStrip => (0..idx.len().saturating_sub(2))
            .map(|i| {
                if i % 2 == 0 {
                    [idx[i], idx[i + 1], idx[i + 2]]
                } else {
                    [idx[i + 1], idx[i], idx[i + 2]]
                }
            })
            .collect(),
        Mode::TriangleFan => (1..idx.len().saturating_sub(1))
            .map(|i| [idx[0], idx[i], idx[i + 1]])
            .collect(),
        Mode::Points | Mode::Lines | Mode::LineLoop | Mode::LineStrip => Vec::new(),
    })
}
