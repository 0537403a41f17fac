//! A glTF file ready to be posed: its node graph, one of its animations (the first unless another
//! is selected) and its skins.

use std::path::Path;

use glam::{Mat4, Quat, Vec3, Vec4};

use crate::animation::{Animation, Channel, Interpolation, Property, Sampler};
use crate::error::Result;
use crate::gltf_document::GltfDocument;
use crate::node_graph::{GraphError, LocalTransform, NodeGraph};
use crate::scene::AnimationRef;
use crate::skinning::Skin;

/// A loaded glTF file with everything needed to evaluate it at any time.
pub struct GltfRig {
    /// The document and buffers.
    pub doc: GltfDocument,
    /// Node hierarchy.
    pub graph: NodeGraph,
    /// The animation that drives the whole file (`None` if it has none): the first unless
    /// [`GltfRig::set_animation`] chose another.
    pub animation: Option<Animation>,
    /// Index of `animation` in the file's `animations`.
    pub animation_index: Option<usize>,
    /// Skins in file order.
    pub skins: Vec<Skin>,
}

impl GltfRig {
    /// Opens and checks `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let doc = GltfDocument::open(path)?;
        let nodes: Vec<gltf::Node<'_>> = doc.document.nodes().collect();
        let children: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| n.children().map(|c| c.index()).collect())
            .collect();
        let mut locals = Vec::with_capacity(nodes.len());
        for n in &nodes {
            let l = match n.transform() {
                gltf::scene::Transform::Matrix { matrix } => {
                    LocalTransform::Matrix(Mat4::from_cols_array_2d(&matrix))
                }
                gltf::scene::Transform::Decomposed {
                    translation,
                    rotation,
                    scale,
                } => LocalTransform::Trs {
                    t: Vec3::from(translation),
                    r: Quat::from_array(rotation),
                    s: Vec3::from(scale),
                },
            };
            let finite = match l {
                LocalTransform::Matrix(m) => m.is_finite(),
                LocalTransform::Trs { t, r, s } => t.is_finite() && r.is_finite() && s.is_finite(),
            };
            if !finite {
                return Err(doc.err(format!("nodes[{}]", n.index()), "non-finite transform"));
            }
            locals.push(l);
        }
        let graph = NodeGraph::new(&children, locals).map_err(|e| match e {
            GraphError::TwoParents { child } => {
                doc.err(format!("nodes[{child}]"), "is the child of two nodes")
            }
            GraphError::Cycle { node } => {
                doc.err(format!("nodes[{node}]"), "is its own ancestor (cycle)")
            }
        })?;
        let (animation, animation_index) = match doc.document.animations().next() {
            Some(a) => (Some(read_animation(&doc, &a)?), Some(0)),
            None => (None, None),
        };
        let mut skins = Vec::new();
        for s in doc.document.skins() {
            let joints: Vec<usize> = s.joints().map(|j| j.index()).collect();
            let field = format!("skins[{}].inverseBindMatrices", s.index());
            let inverse_bind = match s.inverse_bind_matrices() {
                Some(acc) => {
                    if acc.count() != joints.len() {
                        return Err(doc.err(
                            field,
                            format!("has {} matrices for {} joints", acc.count(), joints.len()),
                        ));
                    }
                    let m = doc.read_floats(&acc, &[16], &field)?;
                    m.chunks_exact(16).map(Mat4::from_cols_slice).collect()
                }
                None => vec![Mat4::IDENTITY; joints.len()],
            };
            skins.push(Skin {
                joints,
                inverse_bind,
            });
        }
        Ok(Self {
            doc,
            graph,
            animation,
            animation_index,
            skins,
        })
    }

    /// Names of the file's animations in file order (`None`: unnamed).
    pub fn animation_names(&self) -> Vec<Option<String>> {
        self.doc
            .document
            .animations()
            .map(|a| a.name().map(str::to_string))
            .collect()
    }

    /// Index of the animation `which` names, or a message naming the file and listing its
    /// animations (`Walk`, `Run`, `#2` for an unnamed one).
    pub fn find_animation(&self, which: &AnimationRef) -> std::result::Result<usize, String> {
        let names = self.animation_names();
        let found = match which {
            AnimationRef::Index(i) => (*i < names.len()).then_some(*i),
            AnimationRef::Name(n) => names.iter().position(|x| x.as_deref() == Some(n.as_str())),
        };
        found.ok_or_else(|| {
            let file = self.doc.path.display();
            if names.is_empty() {
                return format!("no animation {which} in {file}: it has no animations");
            }
            let list: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| match n {
                    Some(n) => format!("{i}: \"{n}\""),
                    None => format!("{i}: (unnamed)"),
                })
                .collect();
            format!(
                "no animation {which} in {file}; it has {}: {}",
                names.len(),
                list.join(", ")
            )
        })
    }

    /// Reads and checks `animations[index]` (without selecting it).
    pub fn read_animation(&self, index: usize) -> Result<Animation> {
        let anim = self.doc.document.animations().nth(index).ok_or_else(|| {
            self.doc
                .err(format!("animations[{index}]"), "no such animation")
        })?;
        read_animation(&self.doc, &anim)
    }

    /// Drives the file with `animations[index]` instead (read and checked now).
    pub fn set_animation(&mut self, index: usize) -> Result<()> {
        self.animation = Some(self.read_animation(index)?);
        self.animation_index = Some(index);
        Ok(())
    }

    /// World matrices of all nodes at time `t` (s).
    pub fn world_matrices(&self, t: f32, out: &mut Vec<Mat4>) {
        self.graph.world_matrices(self.animation.as_ref(), t, out);
    }

    /// Key time range of the animation (s).
    pub fn time_range(&self) -> Option<(f32, f32)> {
        self.animation.as_ref().and_then(|a| a.time_range())
    }
}

fn read_animation(doc: &GltfDocument, anim: &gltf::Animation<'_>) -> Result<Animation> {
    let mut channels = Vec::new();
    for ch in anim.channels() {
        let field = format!("animations[{}].channels[{}]", anim.index(), ch.index());
        let property = match ch.target().property() {
            gltf::animation::Property::Translation => Property::Translation,
            gltf::animation::Property::Rotation => Property::Rotation,
            gltf::animation::Property::Scale => Property::Scale,
            gltf::animation::Property::MorphTargetWeights => continue,
        };
        let s = ch.sampler();
        let interpolation = match s.interpolation() {
            gltf::animation::Interpolation::Step => Interpolation::Step,
            gltf::animation::Interpolation::Linear => Interpolation::Linear,
            gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let times = doc.read_floats(&s.input(), &[1], &format!("{field}.sampler.input"))?;
        for (k, w) in times.windows(2).enumerate() {
            if w[1].is_nan() || w[1] <= w[0] {
                return Err(doc.err(
                    format!("{field}.sampler.input"),
                    format!("key times must increase: [{}] = {} then {}", k, w[0], w[1]),
                ));
            }
        }
        let ofield = format!("{field}.sampler.output");
        let dims: &[usize] = if property == Property::Rotation {
            &[4]
        } else {
            &[3]
        };
        let flat = doc.read_floats(&s.output(), dims, &ofield)?;
        let values: Vec<Vec4> = match dims[0] {
            4 => flat.chunks_exact(4).map(Vec4::from_slice).collect(),
            _ => flat
                .chunks_exact(3)
                .map(|c| Vec3::from_slice(c).extend(0.0))
                .collect(),
        };
        let per_key = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        if values.len() != times.len() * per_key {
            return Err(doc.err(
                ofield,
                format!(
                    "has {} values for {} keys ({per_key} per key expected)",
                    values.len(),
                    times.len()
                ),
            ));
        }
        channels.push(Channel {
            node: ch.target().node().index(),
            property,
            sampler: Sampler {
                times,
                values,
                interpolation,
            },
        });
    }
    Ok(Animation { channels })
}
