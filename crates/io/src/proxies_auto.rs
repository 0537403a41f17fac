//! `proxies = "auto"`: one tapered capsule per bone of a skinned body mesh.
//!
//! For each joint of the mesh's skin, the vertices whose normalised weight to that joint exceeds
//! [`AUTO_WEIGHT_THRESHOLD`] are taken in the joint's bind frame (q = IBM · p). The bone axis points
//! from the joint to the mean bind position of its child joints, along the joint's +Y (the bone
//! direction of Blender armatures), or along the vertices' principal axis: a tapered capsule is
//! fitted along each candidate ([`fit_capsule_along`], mean end radii, ends at the extreme
//! projections) and the one whose surface lies closest to the vertices on average relative to its
//! radius ([`mean_surface_gap`] / mean radius, which keeps thin capsules through flat vertex rings
//! out) is kept (first candidate on ties). It is carried rigidly by the joint's animated
//! world matrix, so at time t its points are W_joint(t) · q. Joints with fewer than
//! [`AUTO_MIN_VERTICES`] such vertices get no capsule.

use glam::{Vec3, Vec4Swizzles};

use crate::error::Result;
use crate::gltf_mesh::read_mesh_node;
use crate::gltf_rig::GltfRig;
use crate::proxy::{Carrier, LocalShape, Proxy};
use crate::proxy_fit::{fit_capsule_along, mean_surface_gap, principal_axis, RadiusStat};

/// A vertex belongs to a bone when its weight to it is above this.
pub const AUTO_WEIGHT_THRESHOLD: f32 = 0.5;
/// Bones with fewer vertices above the threshold get no capsule.
pub const AUTO_MIN_VERTICES: usize = 4;

/// One capsule per bone of the skinned mesh node named `mesh` (node or mesh name; default the
/// first node with a mesh and a skin). `field` names the scene key for errors about `mesh`.
pub fn auto_proxies(rig: &GltfRig, mesh: Option<&str>, inflate: f32) -> Result<Vec<Proxy>> {
    let node = match mesh {
        Some(name) => rig.doc.find_node(name).ok_or_else(|| {
            rig.doc
                .err("nodes", format!("no node or mesh named \"{name}\""))
        })?,
        None => rig
            .doc
            .document
            .nodes()
            .find(|n| n.mesh().is_some() && n.skin().is_some())
            .ok_or_else(|| {
                rig.doc.err(
                    "nodes",
                    "no skinned mesh node (proxies = \"auto\" needs one)",
                )
            })?,
    };
    let field = format!("nodes[{}]", node.index());
    let body = read_mesh_node(&rig.doc, &node, None)?;
    let (Some(skin_index), Some(inf)) = (body.skin, &body.influences) else {
        return Err(rig.doc.err(
            field,
            "has no skin (proxies = \"auto\" needs a skinned mesh)",
        ));
    };
    let skin = &rig.skins[skin_index];
    let mut out = Vec::new();
    for (j, &joint_node) in skin.joints.iter().enumerate() {
        let ibm = skin.inverse_bind[j];
        let pts: Vec<Vec3> = (0..body.source.positions.len())
            .filter(|&v| {
                inf.of(v)
                    .any(|(jj, w)| jj as usize == j && w > AUTO_WEIGHT_THRESHOLD)
            })
            .map(|v| ibm.transform_point3(body.source.positions[v]))
            .collect();
        if pts.len() < AUTO_MIN_VERTICES {
            continue;
        }
        let children: Vec<Vec3> = skin
            .joints
            .iter()
            .enumerate()
            .filter(|&(_, &n)| rig.graph.parent(n) == Some(joint_node))
            .map(|(c, _)| (ibm * skin.inverse_bind[c].inverse()).w_axis.xyz())
            .collect();
        let mean = children.iter().copied().sum::<Vec3>() / children.len().max(1) as f32;
        let (centroid, principal) = principal_axis(&pts);
        let candidates = [
            (Vec3::ZERO, mean.try_normalize()),
            (Vec3::ZERO, Some(Vec3::Y)),
            (centroid, Some(principal)),
        ];
        let mut best: Option<((Vec3, Vec3, f32, f32), f32)> = None;
        for (origin, axis) in candidates {
            let Some(axis) = axis else { continue };
            let (fit, _) = fit_capsule_along(&pts, origin, axis, RadiusStat::Mean, false);
            let gap = mean_surface_gap(&pts, fit.0, fit.1, fit.2, fit.3) / (0.5 * (fit.2 + fit.3));
            if fit.2 > 0.0 && fit.3 > 0.0 && best.is_none_or(|(_, g)| gap < g) {
                best = Some((fit, gap));
            }
        }
        let Some(((a, b, ra, rb), _)) = best else {
            continue;
        };
        let name = rig
            .doc
            .document
            .nodes()
            .nth(joint_node)
            .and_then(|n| n.name().map(str::to_string))
            .unwrap_or_else(|| format!("nodes[{joint_node}]"));
        out.push(Proxy {
            name,
            shape: LocalShape::Capsule {
                a,
                b,
                radius_a: ra,
                radius_b: rb,
            },
            carrier_a: Carrier::Node(joint_node),
            carrier_b: Carrier::Node(joint_node),
            inflate,
        });
    }
    if out.is_empty() {
        return Err(rig.doc.err(
            field,
            "no bone has enough vertices weighted to it for a capsule",
        ));
    }
    Ok(out)
}
