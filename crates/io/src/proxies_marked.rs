//! Body proxies marked in a glTF file.
//!
//! A node is a proxy when its `extras` (or its mesh's `extras`) hold
//! `{"clothbake": {"collider": "sphere" | "capsule", "radius": r, "radius_a": ra, "radius_b": rb,
//! "length": l}}` or the flat form `{"clothbake_collider": "capsule", "clothbake_radius": r, ...}`
//! (Blender's glTF exporter writes an object's custom properties into its node's `extras` when
//! "Include > Custom Properties" is on), or when the node or its mesh is named `CB_SPHERE*` /
//! `CB_CAPSULE*` (any case). Numbers are optional overrides in the node's units.
//!
//! With a mesh, the shape is fitted to its bind-pose vertices ([`crate::proxy_fit`]): spheres
//! around the bounding box centre, capsules along the principal axis. A skinned proxy mesh is
//! carried by its skin: each end point blends the weights of the vertices of its end region (a
//! sphere: of all vertices). An unskinned one is carried by its node's animated world matrix
//! (so proxies parented to bones follow them). Without a mesh: a sphere of `radius` at the node's
//! origin, or a capsule from the origin along the node's +Y by `length`.

use serde_json::Value;

use crate::error::Result;
use crate::gltf_mesh::read_mesh_node;
use crate::gltf_rig::GltfRig;
use crate::proxy::{Carrier, LocalShape, Proxy};
use crate::proxy_fit::{fit_capsule_along, fit_sphere, principal_axis, RadiusStat};
use crate::skinning::Influences;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Sphere,
    Capsule,
}

/// Marking of one node.
#[derive(Debug, Default)]
struct Marking {
    kind: Option<Kind>,
    radius: Option<f32>,
    radius_a: Option<f32>,
    radius_b: Option<f32>,
    length: Option<f32>,
}

fn parse_extras(
    raw: Option<&serde_json::value::RawValue>,
    field: &str,
    rig: &GltfRig,
) -> Result<Marking> {
    let mut m = Marking::default();
    let Some(raw) = raw else { return Ok(m) };
    let v: Value =
        serde_json::from_str(raw.get()).map_err(|e| rig.doc.err(field, e.to_string()))?;
    let (obj, prefix) = match v.get("clothbake") {
        Some(Value::Object(o)) => (o.clone(), ""),
        _ => match v {
            Value::Object(o) => (o, "clothbake_"),
            _ => return Ok(m),
        },
    };
    let get = |k: &str| obj.get(&format!("{prefix}{k}"));
    let num = |k: &str| -> Result<Option<f32>> {
        match get(k) {
            None => Ok(None),
            Some(x) => match x.as_f64() {
                Some(f) if f.is_finite() && f > 0.0 => Ok(Some(f as f32)),
                _ => Err(rig.doc.err(
                    format!("{field}.{prefix}{k}"),
                    format!("must be a number > 0, got {x}"),
                )),
            },
        }
    };
    m.kind = match get("collider") {
        None => None,
        Some(Value::String(s)) if s.eq_ignore_ascii_case("sphere") => Some(Kind::Sphere),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("capsule") => Some(Kind::Capsule),
        Some(x) => {
            return Err(rig.doc.err(
                format!("{field}.{prefix}collider"),
                format!("must be \"sphere\" or \"capsule\", got {x}"),
            ))
        }
    };
    m.radius = num("radius")?;
    m.radius_a = num("radius_a")?;
    m.radius_b = num("radius_b")?;
    m.length = num("length")?;
    Ok(m)
}

fn kind_from_name(name: Option<&str>) -> Option<Kind> {
    let n = name?.to_ascii_uppercase();
    if n.starts_with("CB_SPHERE") {
        Some(Kind::Sphere)
    } else if n.starts_with("CB_CAPSULE") {
        Some(Kind::Capsule)
    } else {
        None
    }
}

/// Averaged, normalised skin weights of the vertices `which`.
fn blend(inf: &Influences, which: impl Iterator<Item = usize>) -> Vec<(u16, f32)> {
    let mut acc: Vec<(u16, f32)> = Vec::new();
    for v in which {
        for (j, w) in inf.of(v) {
            match acc.iter_mut().find(|p| p.0 == j) {
                Some(p) => p.1 += w,
                None => acc.push((j, w)),
            }
        }
    }
    acc.sort_by_key(|p| p.0);
    let sum: f32 = acc.iter().map(|p| p.1).sum();
    for p in &mut acc {
        p.1 /= sum;
    }
    acc
}

/// All marked proxies of `rig`, in node order; radii grow by `inflate` (m).
pub fn marked_proxies(rig: &GltfRig, inflate: f32) -> Result<Vec<Proxy>> {
    let mut out = Vec::new();
    for node in rig.doc.document.nodes() {
        let field = format!("nodes[{}]", node.index());
        let mut m = parse_extras(node.extras().as_deref(), &format!("{field}.extras"), rig)?;
        if m.kind.is_none() {
            if let Some(mesh) = node.mesh() {
                let mm = parse_extras(
                    mesh.extras().as_deref(),
                    &format!("meshes[{}].extras", mesh.index()),
                    rig,
                )?;
                if mm.kind.is_some() {
                    m = mm;
                }
            }
        }
        let kind = m
            .kind
            .or_else(|| kind_from_name(node.name()))
            .or_else(|| kind_from_name(node.mesh().and_then(|me| me.name())));
        let Some(kind) = kind else { continue };
        let name = node
            .name()
            .map(str::to_string)
            .unwrap_or_else(|| field.clone());
        let node_carrier = Carrier::Node(node.index());
        let (shape, ca, cb) = if node.mesh().is_some() {
            let mesh = read_mesh_node(&rig.doc, &node, None)?;
            let pts = &mesh.source.positions;
            let carrier_for =
                |which: &mut dyn Iterator<Item = usize>| match (&mesh.skin, &mesh.influences) {
                    (Some(s), Some(inf)) => Carrier::Skin {
                        skin: *s,
                        weights: blend(inf, which),
                    },
                    _ => node_carrier.clone(),
                };
            match kind {
                Kind::Sphere => {
                    let (c, r) = fit_sphere(pts);
                    let shape = LocalShape::Sphere {
                        center: c,
                        radius: m.radius.unwrap_or(r),
                    };
                    let c = carrier_for(&mut (0..pts.len()));
                    (shape, c.clone(), c)
                }
                Kind::Capsule => {
                    let (origin, axis) = principal_axis(pts);
                    let ((a, b, ra, rb), region) =
                        fit_capsule_along(pts, origin, axis, RadiusStat::Max, true);
                    let shape = LocalShape::Capsule {
                        a,
                        b,
                        radius_a: m.radius_a.or(m.radius).unwrap_or(ra),
                        radius_b: m.radius_b.or(m.radius).unwrap_or(rb),
                    };
                    let ca = carrier_for(
                        &mut region.iter().enumerate().filter(|p| *p.1 < 0).map(|p| p.0),
                    );
                    let cb = carrier_for(
                        &mut region.iter().enumerate().filter(|p| *p.1 > 0).map(|p| p.0),
                    );
                    (shape, ca, cb)
                }
            }
        } else {
            let need = |x: Option<f32>, k: &str| {
                x.ok_or_else(|| {
                    rig.doc.err(
                        format!("{field}.extras"),
                        format!("a proxy without a mesh needs \"{k}\""),
                    )
                })
            };
            let shape = match kind {
                Kind::Sphere => LocalShape::Sphere {
                    center: glam::Vec3::ZERO,
                    radius: need(m.radius, "radius")?,
                },
                Kind::Capsule => LocalShape::Capsule {
                    a: glam::Vec3::ZERO,
                    b: glam::Vec3::Y * need(m.length, "length")?,
                    radius_a: need(m.radius_a.or(m.radius), "radius")?,
                    radius_b: need(m.radius_b.or(m.radius), "radius")?,
                },
            };
            (shape, node_carrier.clone(), node_carrier)
        };
        let radii_ok = match shape {
            LocalShape::Sphere { radius, .. } => radius > 0.0,
            LocalShape::Capsule {
                radius_a, radius_b, ..
            } => radius_a > 0.0 && radius_b > 0.0,
        };
        if !radii_ok {
            return Err(rig.doc.err(
                field,
                format!("proxy \"{name}\": its vertices give a zero radius"),
            ));
        }
        out.push(Proxy {
            name,
            shape,
            carrier_a: ca,
            carrier_b: cb,
            inflate,
        });
    }
    Ok(out)
}
