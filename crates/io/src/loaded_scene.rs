//! `load_scene`: a scene file with every garment mesh and character loaded, checked and placed in
//! world coordinates, ready for the CLI to map onto the solver.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::Vec3;

use crate::axes::{obj_local_to_world, to_y_up};
use crate::cache_writer::CacheTiming;
use crate::clock::Clock;
use crate::colliders::{Colliders, Track};
use crate::driver::{read_values, Driver, DriverSource, DriverValues};
use crate::error::{IoError, Result};
use crate::garment::Garment;
use crate::garment_motion::{GarmentMotion, Placement, Pose};
use crate::gltf_mesh::read_mesh_node;
use crate::gltf_rig::GltfRig;
use crate::obj_mesh::read_obj;
use crate::pins::Pins;
use crate::preroll::Preroll;
use crate::proxies_auto::auto_proxies;
use crate::proxies_marked::marked_proxies;
use crate::scene::{
    AnimationRef, ColliderSpec, Follow, GarmentSpec, ProxyMode, RestShape, SceneFile, Up,
};
use crate::transform_keys::KeyedTransform;
use crate::weld::{default_epsilon, weld};

/// Frames of the default range when nothing in the scene is animated.
pub const DEFAULT_FRAMES_WITHOUT_ANIMATION: i32 = 48;

/// A scene ready to bake.
pub struct LoadedScene {
    /// The parsed scene file (settings, wind, output, garment and collider entries).
    pub file: SceneFile,
    /// First output frame (cache sample 0).
    pub frame_start: i32,
    /// Pre-roll before `frame_start` (the simulation starts at `preroll.first_simulated()`).
    pub preroll: Preroll,
    /// Last frame (inclusive): `scene.frame_end`, else the first frame at or after the end of the
    /// longest animation in use (each file's selected one), else `frame_start + 47`.
    pub frame_end: i32,
    /// Frame → animation time.
    pub clock: Clock,
    /// Garments in scene order.
    pub garments: Vec<Garment>,
    /// Colliders in scene order (a glTF collider expands to its proxies).
    pub colliders: Colliders,
}

impl LoadedScene {
    /// Number of cache samples, `frame_end − frame_start + 1`.
    pub fn num_frames(&self) -> usize {
        (self.frame_end - self.frame_start + 1) as usize
    }

    /// The first simulated frame (the initial state): `frame_start − preroll`.
    pub fn first_simulated_frame(&self) -> i32 {
        self.preroll.first_simulated()
    }

    /// Checks that every garment's driver covers the frames a bake ending at `last` evaluates
    /// (`load_scene` checks `frame_end`; a bake with a later end checks again).
    pub fn check_drivers(&self, last: i32) -> Result<()> {
        for (i, g) in self.garments.iter().enumerate() {
            if let Some(d) = &g.driver {
                d.check_covers(
                    &self.file.path,
                    &format!("garment[{i}].driver"),
                    self.preroll.first_evaluated(),
                    last,
                )?;
            }
        }
        Ok(())
    }

    /// Cache header timing.
    pub fn cache_timing(&self) -> CacheTiming {
        CacheTiming {
            frame_start: self.frame_start,
            num_frames: self.num_frames(),
            fps: self.clock.fps,
        }
    }
}

/// glTF files opened once per path and selected animation.
#[derive(Default)]
struct RigCache {
    rigs: Vec<(PathBuf, Option<AnimationRef>, Arc<GltfRig>)>,
}

impl RigCache {
    /// The rig of `path` driven by `animation` (default its first); a missing animation is an
    /// error at `scene`'s `field`, listing the file's animations.
    fn get(
        &mut self,
        path: &Path,
        animation: Option<&AnimationRef>,
        scene: &Path,
        field: String,
    ) -> Result<Arc<GltfRig>> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some((_, _, r)) = self
            .rigs
            .iter()
            .find(|(p, a, _)| *p == key && a.as_ref() == animation)
        {
            return Ok(r.clone());
        }
        let mut rig = GltfRig::open(path)?;
        if let Some(which) = animation {
            let index = rig
                .find_animation(which)
                .map_err(|message| IoError::invalid(scene, field, message))?;
            if rig.animation_index != Some(index) {
                rig.set_animation(index)?;
            }
        }
        let rig = Arc::new(rig);
        self.rigs.push((key, animation.cloned(), rig.clone()));
        Ok(rig)
    }
}

/// Reads `path`, validates it (`material_presets`: the solver's preset names) and loads every
/// mesh and character it references.
pub fn load_scene(path: &Path, material_presets: &[&str]) -> Result<LoadedScene> {
    let file = SceneFile::read(path, material_presets)?;
    let s = &file.settings;
    let clock = Clock {
        fps: s.fps,
        time_offset: s.time_offset,
    };
    let preroll = Preroll {
        frame_start: s.frame_start,
        frames: s.preroll,
        from: s.preroll_from,
    };
    let mut cache = RigCache::default();
    let mut time_end: Option<f32> = None;
    let note_rig = |rig: &GltfRig, time_end: &mut Option<f32>| {
        if let Some((_, e)) = rig.time_range() {
            *time_end = Some(time_end.map_or(e, |x: f32| x.max(e)));
        }
    };
    // Each garment's driver file is read and decoded on a thread of its own while the meshes load
    // (on the dress-walk sample its 5.9 MB took 11 ms, the OBJ 8 ms, perf); the driver is checked
    // where it always was, so the errors and their order are unchanged.
    let garments = std::thread::scope(|scope| -> Result<Vec<Garment>> {
        let mut reads: Vec<Option<DriverRead<'_>>> = file
            .garments
            .iter()
            .map(|g| {
                let path = g.driver.as_deref().filter(|p| p.is_file())?;
                Some(scope.spawn(move || read_values(path)))
            })
            .collect();
        let mut garments = Vec::with_capacity(file.garments.len());
        for (i, g) in file.garments.iter().enumerate() {
            check_exists(&file.path, &format!("garment[{i}].mesh"), &g.mesh)?;
            let read = reads[i].take();
            let garment = if g.is_gltf() {
                let rig = cache.get(
                    &g.mesh,
                    g.animation.as_ref(),
                    &file.path,
                    format!("garment[{i}].animation"),
                )?;
                note_rig(&rig, &mut time_end);
                load_gltf_garment(&file.path, i, g, rig, clock, preroll, read)?
            } else {
                load_obj_garment(&file.path, i, g, preroll, read)?
            };
            garments.push(garment);
        }
        Ok(garments)
    })?;
    let mut tracks = Vec::new();
    let mut names = Vec::new();
    let mut collider_rigs: Vec<Arc<GltfRig>> = Vec::new();
    for (i, c) in file.colliders.iter().enumerate() {
        match c {
            ColliderSpec::Analytic { shape, keys } => {
                tracks.push(Track::Analytic {
                    shape: *shape,
                    keys: keys.clone(),
                });
                names.push(format!("collider[{i}]"));
            }
            ColliderSpec::Gltf {
                file: gf,
                proxies,
                mesh,
                inflate,
                animation,
            } => {
                check_exists(&file.path, &format!("collider[{i}].file"), gf)?;
                let rig = cache.get(
                    gf,
                    animation.as_ref(),
                    &file.path,
                    format!("collider[{i}].animation"),
                )?;
                note_rig(&rig, &mut time_end);
                let list = match proxies {
                    ProxyMode::Marked => marked_proxies(&rig, *inflate)?,
                    ProxyMode::Auto => auto_proxies(&rig, mesh.as_deref(), *inflate)?,
                };
                if list.is_empty() {
                    return Err(IoError::invalid(
                        &file.path,
                        format!("collider[{i}].file"),
                        format!(
                            "{} has no marked proxies (extras {{\"clothbake\": {{\"collider\": ...}}}} or nodes named CB_SPHERE*/CB_CAPSULE*)",
                            gf.display()
                        ),
                    ));
                }
                let r = match collider_rigs.iter().position(|x| Arc::ptr_eq(x, &rig)) {
                    Some(r) => r,
                    None => {
                        collider_rigs.push(rig.clone());
                        collider_rigs.len() - 1
                    }
                };
                for p in list {
                    names.push(p.name.clone());
                    tracks.push(Track::Proxy { rig: r, proxy: p });
                }
            }
        }
    }
    let frame_start = s.frame_start;
    let frame_end = match (s.frame_end, time_end) {
        (Some(e), _) => e,
        (None, Some(t)) => clock.frame_at_or_after(t).max(frame_start),
        (None, None) => frame_start + DEFAULT_FRAMES_WITHOUT_ANIMATION - 1,
    };
    // `frame_start` and `preroll` are bounded by the scene's validation, so this does not wrap;
    // an animation ending at an absurd time would make a range no bake can run.
    let span = frame_end as i64 - preroll.first_simulated() as i64 + 1;
    if span > crate::scene::MAX_FRAMES {
        let why = match s.frame_end {
            Some(_) => String::new(),
            None => " (the end of the longest animation in use; set scene.frame_end)".into(),
        };
        return Err(IoError::invalid(
            &file.path,
            "scene.frame_end",
            format!(
                "frames {}..{frame_end}{why} are {span} frames, more than a bake may simulate ({})",
                preroll.first_simulated(),
                crate::scene::MAX_FRAMES
            ),
        ));
    }
    let colliders = Colliders::new(tracks, names, collider_rigs, clock, preroll);
    let scene = LoadedScene {
        file,
        frame_start,
        preroll,
        frame_end,
        clock,
        garments,
        colliders,
    };
    scene.check_drivers(frame_end)?;
    let mut scene = scene;
    if !preroll.from_rest() {
        for g in &mut scene.garments {
            g.start_from_driver();
        }
    }
    Ok(scene)
}

fn check_exists(scene: &Path, field: &str, file: &Path) -> Result<()> {
    if file.is_file() {
        Ok(())
    } else {
        Err(IoError::invalid(
            scene,
            field,
            format!("file not found: {}", file.display()),
        ))
    }
}

/// A driver file being read on its own thread ([`read_values`]).
type DriverRead<'s> = std::thread::ScopedJoinHandle<'s, Result<DriverValues>>;

fn load_obj_garment(
    scene: &Path,
    i: usize,
    g: &GarmentSpec,
    preroll: Preroll,
    driver_read: Option<DriverRead<'_>>,
) -> Result<Garment> {
    let src = read_obj(&g.mesh)?;
    let c = to_y_up(g.up);
    let local: Vec<Vec3> = src
        .positions
        .iter()
        .map(|p| c.transform_point3(*p))
        .collect();
    let placement = match g.transform_keys.as_deref() {
        Some(keys) => {
            let keyed = KeyedTransform::new(
                keys.iter()
                    .map(|k| (k.frame, obj_local_to_world(g.up, Some(k.matrix)))),
            )
            .ok_or_else(|| {
                IoError::invalid(scene, format!("garment[{i}].transform_keys"), "is empty")
            })?;
            Placement::Keyed(keyed)
        }
        None => Placement::Static(obj_local_to_world(g.up, g.transform)),
    };
    let motion = GarmentMotion::Obj {
        placement,
        local,
        rest_frame: preroll.frame_start as f32,
    };
    let welded = weld(&src, None);
    finish_garment(scene, i, g, src, welded, None, motion, preroll, driver_read)
}

fn load_gltf_garment(
    scene: &Path,
    i: usize,
    g: &GarmentSpec,
    rig: Arc<GltfRig>,
    clock: Clock,
    preroll: Preroll,
    driver_read: Option<DriverRead<'_>>,
) -> Result<Garment> {
    if g.up == Up::Z {
        return Err(IoError::invalid(
            scene,
            format!("garment[{i}].up"),
            "glTF files are Y-up by definition; remove `up`",
        ));
    }
    let node = match &g.node {
        Some(name) => rig.doc.find_node(name).ok_or_else(|| {
            IoError::invalid(
                scene,
                format!("garment[{i}].node"),
                format!("no node or mesh named \"{name}\" in {}", g.mesh.display()),
            )
        })?,
        None => {
            let meshes: Vec<gltf::Node<'_>> = rig
                .doc
                .document
                .nodes()
                .filter(|n| n.mesh().is_some())
                .collect();
            if meshes.len() != 1 {
                let list: Vec<String> = meshes
                    .iter()
                    .map(|n| n.name().unwrap_or("<unnamed>").to_string())
                    .collect();
                return Err(IoError::invalid(
                    scene,
                    format!("garment[{i}].node"),
                    format!(
                        "{} has {} mesh nodes ({}); name one with `node`",
                        g.mesh.display(),
                        meshes.len(),
                        list.join(", ")
                    ),
                ));
            }
            meshes[0].clone()
        }
    };
    let pin_attr = g.pin.as_ref().and_then(|p| p.attribute.as_deref());
    let gm = read_mesh_node(&rig.doc, &node, pin_attr)?;
    let skin = gm.skin.zip(gm.influences);
    if g.pin.as_ref().is_some_and(|p| p.follow == Follow::Skin) && skin.is_none() {
        return Err(IoError::invalid(
            scene,
            format!("garment[{i}].pin.follow"),
            format!(
                "\"skin\" but node \"{}\" has no skin",
                node.name().unwrap_or("")
            ),
        ));
    }
    let eps = default_epsilon(&gm.source.positions);
    let welded = weld(&gm.source, Some(eps));
    let motion = GarmentMotion::Gltf {
        rig: rig.clone(),
        node: node.index(),
        skin,
        local: gm.source.positions.clone(),
        clock,
    };
    finish_garment(
        scene,
        i,
        g,
        gm.source,
        welded,
        gm.pin_weights,
        motion,
        preroll,
        driver_read,
    )
}

#[allow(clippy::too_many_arguments)]
fn finish_garment(
    scene: &Path,
    i: usize,
    g: &GarmentSpec,
    src: crate::source_mesh::SourceMesh,
    welded: crate::weld::Welded,
    attr_weights: Option<Vec<f32>>,
    motion: GarmentMotion,
    preroll: Preroll,
    driver_read: Option<DriverRead<'_>>,
) -> Result<Garment> {
    if g.rest_shape == RestShape::Uv && welded.tri_uvs.is_none() {
        return Err(IoError::invalid(
            scene,
            format!("garment[{i}].rest_shape"),
            format!("\"uv\" but {} has no UVs on every face", g.mesh.display()),
        ));
    }
    let n = src.positions.len();
    let all: Vec<u32> = (0..n as u32).collect();
    let mut source_rest = Vec::with_capacity(n);
    // The shape the garment starts from without a driver (and its rest shape): posed at the first
    // simulated frame, or without animation when the pre-roll eases in from rest.
    let pose = if preroll.from_rest() {
        Pose::Rest
    } else {
        Pose::Frame(preroll.first_simulated() as f32)
    };
    motion.positions_at(motion.own_follow(), pose, &all, &mut source_rest);
    debug_assert_eq!(motion.len(), n);
    let positions: Vec<Vec3> = welded
        .sim_to_source
        .iter()
        .map(|&s| source_rest[s as usize])
        .collect();
    // A skinned garment's rest shape is its undeformed (bind-pose) mesh carried by its node on the
    // rig without animation, as Blender's cloth rests on the undeformed mesh; it starts skinned
    // (with a pre-roll from rest it starts from the rest shape, like every other garment).
    let mut positions = positions;
    let mut rest_positions = None;
    if motion.own_follow() == Follow::Skin {
        let mut bind = Vec::with_capacity(n);
        motion.positions_at(Follow::Node, Pose::Rest, &all, &mut bind);
        let rest: Vec<Vec3> = welded
            .sim_to_source
            .iter()
            .map(|&s| bind[s as usize])
            .collect();
        if preroll.from_rest() {
            positions = rest;
            source_rest = bind;
        } else if rest != positions {
            rest_positions = Some(rest);
        }
    }
    let mut pairs: Vec<(u32, f32)> = Vec::new();
    let (stiffness, follow) = match &g.pin {
        Some(p) => {
            for (k, &v) in p.vertices.iter().enumerate() {
                if v as usize >= n {
                    return Err(IoError::invalid(
                        scene,
                        format!("garment[{i}].pin.vertices[{k}]"),
                        format!(
                            "vertex {v} is out of range ({} has {n} vertices)",
                            g.mesh.display()
                        ),
                    ));
                }
                let w = p.weights.as_ref().map_or(1.0, |w| w[k]);
                pairs.push((v, w));
            }
            if let Some(w) = &attr_weights {
                pairs.extend(w.iter().enumerate().map(|(v, &w)| (v as u32, w)));
            }
            (p.stiffness, p.follow)
        }
        None => (0.0, Follow::Rest),
    };
    let pins = Pins::from_source(pairs, &welded.source_to_sim, stiffness, follow);
    let driver = match &g.driver {
        Some(path) => Some(Driver::load_read(
            &DriverSource {
                scene,
                field: &format!("garment[{i}].driver"),
                path,
                num_points: n,
                up: g.up,
                frame_start: g
                    .driver_frame_start
                    .unwrap_or_else(|| preroll.first_simulated()),
                space: g.driver_space,
            },
            driver_read.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
        )?),
        None => None,
    };
    let pin_sources = pins
        .vertices
        .iter()
        .map(|&v| welded.sim_to_source[v as usize])
        .collect();
    Ok(Garment {
        spec: g.clone(),
        positions,
        triangles: welded.triangles.clone(),
        tri_uvs: welded.tri_uvs.clone(),
        source_faces: src.faces,
        welded,
        pins,
        source_rest,
        pin_sources,
        motion,
        driver,
        preroll,
        rest_positions,
    })
}
