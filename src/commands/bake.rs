//! `clothbake bake [SCENE]`: load the scene, step the solver frame by frame, stream each garment's
//! frames to its caches, and write the bake report.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clothbake_io::{
    remove_stale_temp_files, CacheTarget, CacheTiming, Format, GarmentCacheWriter, LoadedScene,
    Shape,
};
use clothbake_solver::{MovingCollider, SimError, Simulation};
use glam::Vec3;

use crate::bake_origin::BakeOrigin;
use crate::bake_setup::PreparedBake;
use crate::checkpoint::{self, Checkpoint, UnfinishedFrame};
use crate::cli::{BakeArgs, FormatArg};
use crate::commands::sample::write_sample;
use crate::error::{CliError, Result};
use crate::frame_records::{FrameRecords, Written};
use crate::interrupt::Interrupt;
use crate::preview::Preview;
use crate::progress::Reporter;
use crate::report::{BakeReport, FrameRecord, GarmentRecord, OriginMove, SubstepTotals, TryRecord};
use crate::scene_to_solver::{collider_shape, shape_record, PinTargetBuffers};
use crate::sim_failure;
use crate::stage_times::{BakeStages, Lap};

/// The sample baked when no SCENE is given, and where its outputs go by default.
const DEFAULT_SAMPLE: &str = "dress-walk";
const DEFAULT_OUTPUT: &str = "clothbake-out";

/// Bakes; stops before the next substep (removing every temporary file) once `interrupt` is
/// requested.
pub fn run(args: &BakeArgs, interrupt: &Interrupt) -> Result<()> {
    let mut reporter = Reporter::new(args.json);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .map_err(|e| CliError::Input(format!("--threads {}: {e}", args.threads)))?;
    let threads = pool.current_num_threads();
    pool.install(|| bake(args, &mut reporter, threads, interrupt))
}

/// Where the outputs of one bake go.
struct Plan {
    out_dir: PathBuf,
    formats: Vec<Format>,
    report: Option<PathBuf>,
    first: i32,
    last: i32,
}

fn bake(
    args: &BakeArgs,
    reporter: &mut Reporter,
    threads: usize,
    interrupt: &Interrupt,
) -> Result<()> {
    let started = Instant::now();
    // With no SCENE, the default sample is written to a temporary folder (removed on drop).
    let (_temp, scene_path) = match &args.scene {
        Some(p) => (None, p.clone()),
        None => {
            let dir = tempfile::tempdir().map_err(|source| CliError::Write {
                path: std::env::temp_dir(),
                source,
            })?;
            write_sample(DEFAULT_SAMPLE, dir.path(), None)?;
            let path = dir.path().join("scene.toml");
            (Some(dir), path)
        }
    };
    let PreparedBake {
        mut scene,
        mut sim,
        mut origin,
    } = PreparedBake::load(&scene_path)?;
    let plan = plan(args, &scene, &scene_path)?;
    sim.set_stop_flag(interrupt.flag());

    // A resumable bake stages its caches and checkpoints in OUTPUT/.clothbake-resume/.
    let stage = (args.checkpoint_every.is_some() || args.resume)
        .then(|| checkpoint::stage_dir(&plan.out_dir));
    let fingerprint = match &stage {
        Some(_) => checkpoint::fingerprint(
            &checkpoint::input_files(&scene.file),
            &format!(
                "frames {}..{} formats {:?}",
                plan.first, plan.last, plan.formats
            ),
        )?,
        None => String::new(),
    };
    let resumed = match (&stage, args.resume) {
        (Some(dir), true) => checkpoint::load(dir, &fingerprint)?,
        _ => None,
    };
    let mut resume_warning = resumed.as_ref().and_then(|(_, w)| w.clone());
    let resumed = resumed.map(|(ck, _)| ck);
    // Wall time the first frame took before the stop a checkpoint inside it was written at.
    let mut unfinished_seconds = 0.0;
    // The tries of a frame a checkpoint split, made before the stop (the report's `tries`).
    let mut unfinished_tries: Vec<TryRecord> = Vec::new();
    match (&stage, &resumed) {
        (Some(dir), None) => {
            if args.resume {
                resume_warning = Some(format!(
                    "--resume: no checkpoint in {}, baking from the first frame",
                    dir.display()
                ));
            }
            checkpoint::remove_stage(dir)?;
        }
        (Some(dir), Some(ck)) => {
            // Checkpoint writes a kill interrupted.
            remove_stale_temp_files(dir).map_err(|e| CliError::Output(e.to_string()))?;
            // The frame and cache progress must fit this bake (a checksum does not vouch for a
            // payload edited by hand).
            let written = (ck.frame - plan.first + 1).max(0) as u32;
            if ck.frame < scene.first_simulated_frame() - 1
                || ck.frame > plan.last
                || ck.caches.iter().any(|c| c.frames != written)
            {
                return Err(CliError::Input(format!(
                    "{}: checkpoint at frame {} with {:?} cache frames does not fit frames {}..{} of this bake",
                    dir.display(),
                    ck.frame,
                    ck.caches.iter().map(|c| c.frames).collect::<Vec<_>>(),
                    scene.first_simulated_frame(),
                    plan.last
                )));
            }
            if ck.caches.len() != scene.garments.len() {
                return Err(CliError::Input(format!(
                    "{}: checkpoint has {} garments, the scene {}",
                    dir.display(),
                    ck.caches.len(),
                    scene.garments.len()
                )));
            }
            sim.restore_state(ck.state.clone(), ck.state_version)
                .map_err(|e| CliError::Input(format!("{}: checkpoint: {e}", dir.display())))?;
            // The frame the checkpoint's state is in (earlier builds: the scene's first one).
            if let Some(o) = ck.simulation_origin {
                if !o.iter().all(|c| c.is_finite()) {
                    return Err(CliError::Input(format!(
                        "{}: checkpoint: simulation_origin {o:?} is not finite",
                        dir.display()
                    )));
                }
                origin = BakeOrigin(Vec3::from_array(o));
            }
            if let Some(u) = &ck.unfinished_frame {
                sim.restore_unfinished_frame(u.report);
                unfinished_seconds = u.seconds;
                unfinished_tries.clone_from(&u.tries);
            }
        }
        (None, _) => {}
    }

    let names: Vec<String> = scene.garments.iter().map(|g| g.spec.name.clone()).collect();
    let total = (plan.last - plan.first + 1) as usize;
    let timing = CacheTiming {
        frame_start: plan.first,
        num_frames: total,
        fps: scene.clock.fps,
    };
    // Temporary files of an earlier bake into this folder that was killed before it could clean up.
    let stale =
        remove_stale_temp_files(&plan.out_dir).map_err(|e| CliError::Output(e.to_string()))?;
    let mut writers = Vec::with_capacity(scene.garments.len());
    for (i, g) in scene.garments.iter().enumerate() {
        let target = CacheTarget {
            dir: &plan.out_dir,
            stage: stage.as_deref(),
            name: &g.spec.name,
            formats: &plan.formats,
            num_points: g.num_source_vertices(),
            faces: &g.source_faces,
            timing,
            up: scene.file.output.up,
        };
        let progress = resumed.as_ref().map(|ck| &ck.caches[i]);
        let w = GarmentCacheWriter::open(target, progress).map_err(|e| match progress {
            Some(_) => CliError::Input(format!("--resume: {e}")),
            None => CliError::Output(e.to_string()),
        })?;
        writers.push(w);
    }

    let mut report = BakeReport {
        clothbake_version: env!("CARGO_PKG_VERSION"),
        scene: match &args.scene {
            Some(p) => p.display().to_string(),
            None => format!("{DEFAULT_SAMPLE} (built-in sample)"),
        },
        fps: scene.clock.fps,
        frame_start: plan.first,
        frame_end: plan.last,
        preroll_frames: (plan.first - scene.first_simulated_frame()) as u32,
        threads,
        preconditioner: sim.settings().preconditioner.name().to_string(),
        simulation_origin: origin.0.to_array(),
        simulation_origin_moves: Vec::new(),
        garments: scene
            .garments
            .iter()
            .zip(&sim.model().garments)
            .map(|(g, r)| GarmentRecord {
                name: g.spec.name.clone(),
                vertices: g.num_source_vertices(),
                simulated_vertices: r.vertices.len(),
                triangles: r.triangles.len(),
                pinned: g.pins.vertices.len(),
            })
            .collect(),
        colliders: scene.colliders.names().to_vec(),
        frames: resumed
            .as_ref()
            .map_or_else(|| Vec::with_capacity(total), |ck| ck.report_frames.clone()),
        total_seconds: 0.0,
        frame_loop_seconds: 0.0,
        stage_totals: BakeStages::default(),
        substep_totals: SubstepTotals::default(),
    };
    let report_colliders = scene.file.output.report_colliders;
    let report_substeps = args.report_substeps || scene.file.output.report_substeps;
    let space = scene.file.output.space;
    let up = scene.file.output.up;

    reporter.start(
        &report.scene,
        plan.first,
        plan.last,
        report.preroll_frames,
        &names,
        threads,
    );
    if let Some(w) = &resume_warning {
        reporter.warning(w, None);
    }
    if !stale.is_empty() {
        let list: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
        reporter.warning(
            &format!(
                "removed {} temporary file(s) left by a bake that was killed: {}",
                stale.len(),
                list.join(", ")
            ),
            None,
        );
    }
    let dt = 1.0 / scene.clock.fps;
    let mut pins = PinTargetBuffers::new(&scene, origin);
    // Collider shapes in the simulation frame of `o` (the scene's are in the world).
    let sim_shape = |o: BakeOrigin, s: &Shape| collider_shape(&o.shape_to_sim(s));
    let mut shapes_start: Vec<Shape> = Vec::new();
    let mut shapes_end: Vec<Shape> = Vec::new();
    let mut moving: Vec<MovingCollider> = Vec::new();
    let mut cache_frame: Vec<Vec3> = Vec::new();
    // The simulated positions in the world, for the preview.
    let mut world_x: Vec<Vec3> = Vec::new();
    // The simulation starts at the first simulated frame (frame_start − preroll), or after the
    // last frame a checkpoint holds.
    let first_simulated = scene.first_simulated_frame();
    let resume_frame = resumed.as_ref().map(|ck| ck.frame);
    let first_step = resume_frame.map_or(first_simulated, |f| f + 1);
    // The contact sheet keeps a few of the frames this run writes (a resumed bake: those after
    // its checkpoint).
    let mut preview = (args.preview.as_deref())
        .map(|p| Preview::new(p, plan.first.max(first_step), plan.last, sim.model()));
    drop(resumed);
    scene.colliders.shapes_at(
        (first_step.max(first_simulated + 1) - 1) as f32,
        &mut shapes_start,
    );
    // Each frame is measured beside the next frame's step only when that step leaves the second
    // core mostly idle: below reduce::PARALLEL_FROM vertices its passes run on one thread (the
    // 10k-vertex dress-walk, whose passes use both cores, baked slower with it beside them in 3
    // of 3 alternating pairs, BENCHMARKS.md); otherwise at the end of its own frame, on the pool.
    let beside =
        threads > 1 && !clothbake_solver::linalg::reduce::parallel(sim.model().vertex_count());
    let mut records = FrameRecords::new(
        &sim.model().triangles,
        resume_frame.map_or(0, |f| (f - plan.first + 1).max(0) as usize),
        total,
        plan.last,
    );
    let save = |frame: i32,
                sim: &Simulation,
                origin: BakeOrigin,
                writers: &mut [GarmentCacheWriter],
                frames: &[FrameRecord],
                unfinished: Option<(f64, Vec<TryRecord>)>| {
        stage.as_deref().map_or(Ok(()), |dir| {
            save_checkpoint(
                dir,
                &fingerprint,
                frame,
                sim,
                origin,
                writers,
                frames,
                unfinished,
            )
        })
    };
    let loop_started = Instant::now();
    for frame in first_step..=plan.last {
        if interrupt.requested() {
            // The last written frame gets its record and event before the bake stops.
            records.complete(false, reporter, &mut report);
            if let Some(dir) = &stage {
                save(frame - 1, &sim, origin, &mut writers, &report.frames, None)?;
                return Err(CliError::Checkpointed {
                    frame: frame - 1,
                    dir: dir.clone(),
                });
            }
            // Dropping the unfinished writers removes their temporary files.
            return Err(CliError::Interrupted {
                last_frame: (frame > first_simulated).then_some(frame - 1),
            });
        }
        let frame_started = Instant::now();
        let mut lap = Lap::start();
        let mut stages = BakeStages::default();
        let stats = if frame > first_simulated {
            // Between frames, the simulation frame follows cloth that travelled far from its
            // origin (src/bake_origin.rs).
            let between = sim.state().clock.substep_pos == 0;
            if let Some(moved) = origin.follow(&sim.state().x).filter(|_| between) {
                sim.translate(origin.0 - moved.0)
                    .map_err(|e| CliError::Simulation(e.to_string()))?;
                origin = moved;
                pins.set_origin(origin);
                report.simulation_origin_moves.push(OriginMove {
                    frame,
                    origin: origin.0.to_array(),
                });
            }
            scene.colliders.shapes_at(frame as f32, &mut shapes_end);
            moving.clear();
            moving.extend(
                shapes_start
                    .iter()
                    .zip(&shapes_end)
                    .map(|(a, b)| MovingCollider {
                        start: sim_shape(origin, a),
                        end: sim_shape(origin, b),
                    }),
            );
            let targets = pins.at(&scene, frame as f32);
            stages.animation = lap.lap();
            // The previous frame is measured and completed beside this step (the step first: on
            // the calling thread it starts at once, and the other worker steals the measurement).
            let r = if beside {
                let step = || sim.step_frame(dt, &moving, &targets);
                rayon::join(step, || records.complete(true, reporter, &mut report)).0
            } else {
                sim.step_frame(dt, &moving, &targets)
            };
            let r = match r {
                Ok(r) => r,
                // Stopped between substeps: the state (inside this frame) goes into a checkpoint.
                Err(SimError::Stopped { .. }) if stage.is_some() => {
                    drop(targets);
                    let seconds = unfinished_seconds + frame_started.elapsed().as_secs_f64();
                    // The frame's tries so far: those before an earlier stop, then this run's.
                    let tries: Vec<TryRecord> = (unfinished_tries.iter().cloned())
                        .chain(sim.substep_reports().iter().map(TryRecord::of))
                        .collect();
                    save(
                        frame - 1,
                        &sim,
                        origin,
                        &mut writers,
                        &report.frames,
                        Some((seconds, tries)),
                    )?;
                    return Err(CliError::Checkpointed {
                        frame: frame - 1,
                        dir: stage.clone().unwrap_or_default(),
                    });
                }
                // Dropping the unfinished writers removes their temporary files.
                Err(SimError::Stopped { .. }) => {
                    return Err(CliError::Interrupted {
                        last_frame: Some(frame - 1),
                    })
                }
                Err(e) => return Err(sim_failure::step_error(&e, frame, &names)),
            };
            stages.add_solver(&r.times);
            lap.lap();
            std::mem::swap(&mut shapes_start, &mut shapes_end);
            Some(r)
        } else {
            None
        };
        // The tries a checkpoint's stop left of this frame (now stepped whole).
        let before = std::mem::take(&mut unfinished_tries);
        let checkpoint_due = args.checkpoint_every.is_some_and(|n| {
            frame > first_simulated
                && (frame - first_simulated) % n as i32 == 0
                && frame < plan.last
        });
        if frame < plan.first {
            // Pre-roll (scene.preroll, or --frames starting later): simulated, not written.
            if checkpoint_due {
                save(frame, &sim, origin, &mut writers, &report.frames, None)?;
            }
            continue;
        }
        for (g, (garment, writer)) in scene.garments.iter().zip(writers.iter_mut()).enumerate() {
            let x = sim.garment_positions(g);
            garment.output_frame(x, origin.0, frame, space, up, &mut cache_frame);
            writer
                .write_frame(&cache_frame)
                .map_err(|e| CliError::Output(e.to_string()))?;
        }
        if let Some(p) = &mut preview {
            // In the world: the frames of one contact sheet may be simulated in different frames.
            world_x.clear();
            world_x.extend(sim.state().x.iter().map(|&p| p + origin.0));
            p.capture(frame, &world_x, &shapes_start);
        }
        stages.cache_writing = lap.lap();
        // Measured on copies of the simulated positions and the end-of-frame collider shapes:
        // beside the next frame's step, or now (before a checkpoint, or not `beside`), or after
        // the last frame.
        records.copy_inputs(
            &sim.state().x,
            shapes_start.iter().map(|s| sim_shape(origin, s)),
        );
        stages.measurements = lap.lap();
        records.hold(Written {
            frame,
            stats,
            stages,
            seconds: std::mem::take(&mut unfinished_seconds)
                + frame_started.elapsed().as_secs_f64(),
            colliders: report_colliders.then(|| shapes_start.iter().map(shape_record).collect()),
            // The solver keeps the tries of its last `step_frame`: this frame's, after those
            // made before a checkpoint split it (none for the rest frame, which steps nothing).
            tries: report_substeps.then(|| match stats {
                Some(_) => (before.into_iter())
                    .chain(sim.substep_reports().iter().map(TryRecord::of))
                    .collect(),
                None => Vec::new(),
            }),
        });
        if checkpoint_due || !beside {
            records.complete(false, reporter, &mut report);
        }
        if checkpoint_due {
            save(frame, &sim, origin, &mut writers, &report.frames, None)?;
        }
    }
    records.complete(false, reporter, &mut report);
    report.frame_loop_seconds = loop_started.elapsed().as_secs_f64();

    if interrupt.requested() {
        // Raised during the last frame's substeps (the frame itself finished): with checkpoints,
        // a checkpoint at the last frame, so that the run continuing it only writes the caches
        // (a farm's time slice ends with 85 like every other one).
        if let Some(dir) = &stage {
            save(plan.last, &sim, origin, &mut writers, &report.frames, None)?;
            return Err(CliError::Checkpointed {
                frame: plan.last,
                dir: dir.clone(),
            });
        }
        return Err(CliError::Interrupted {
            last_frame: Some(plan.last),
        });
    }
    // The contact sheet first: if it cannot be written, no cache takes its final name either.
    let preview_seconds = match &preview {
        Some(p) => p.write()?,
        None => 0.0,
    };
    // A resumable bake forgets its checkpoints before its caches take their final names: killed
    // in between, a rerun with --resume finds none and bakes again rather than resuming caches
    // that were moved away.
    if let Some(dir) = &stage {
        checkpoint::discard(dir)?;
    }
    let mut outputs = Vec::new();
    for w in writers {
        let paths = w.finish().map_err(|e| CliError::Output(e.to_string()))?;
        outputs.extend(paths.iter().map(|p| p.display().to_string()));
    }
    if let Some(dir) = &stage {
        checkpoint::remove_stage(dir)?;
    }
    report.total_seconds = started.elapsed().as_secs_f64();
    if let Some(frames) = sim.state().controller.auto_preconditioner.amg_from {
        // The switch happened while simulating frame number `frames + 1` since the start.
        let frame = scene.first_simulated_frame() + frames as i32 + 1;
        report.preconditioner = format!("ic, amg from frame {frame}");
    }
    for f in &report.frames {
        report.substep_totals.add(f);
    }
    let report_path = match &plan.report {
        Some(path) => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                crate::fs_util::create_dir(parent)?;
            }
            report.write(path)?;
            Some(path.display().to_string())
        }
        None => None,
    };
    if let Some(path) = &args.report_html {
        crate::report_html::write(&report, path)?;
    }
    reporter.done(
        &outputs,
        report_path.as_deref(),
        report.total_seconds,
        total,
        &report.stage_totals,
        &report.substep_totals,
    );
    if !args.json {
        if let Some(p) = &preview {
            outln!(
                "preview: {} (rendered in {preview_seconds:.3} s)",
                p.path().display()
            );
        }
        if let Some(path) = &args.report_html {
            outln!("report page: {}", path.display());
        }
    }
    Ok(())
}

/// Syncs every cache and writes a checkpoint after `frame` (see [`crate::checkpoint`]); `unfinished`:
/// the wall time (s) and the tries so far of a frame stopped between its substeps.
#[allow(clippy::too_many_arguments)]
fn save_checkpoint(
    dir: &Path,
    fingerprint: &str,
    frame: i32,
    sim: &Simulation,
    origin: BakeOrigin,
    writers: &mut [GarmentCacheWriter],
    frames: &[FrameRecord],
    unfinished: Option<(f64, Vec<TryRecord>)>,
) -> Result<()> {
    let caches = writers
        .iter_mut()
        .map(GarmentCacheWriter::sync)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| CliError::Output(e.to_string()))?;
    checkpoint::save(
        dir,
        &Checkpoint {
            clothbake_version: env!("CARGO_PKG_VERSION").to_string(),
            fingerprint: fingerprint.to_string(),
            state_version: clothbake_solver::STATE_VERSION,
            frame,
            caches,
            report_frames: frames.to_vec(),
            state: sim.state().clone(),
            simulation_origin: Some(origin.0.to_array()),
            unfinished_frame: sim.unfinished_frame().zip(unfinished).map(
                |(r, (seconds, tries))| UnfinishedFrame {
                    report: *r,
                    seconds,
                    tries,
                },
            ),
        },
    )
}

/// Output folder, formats, report path and frame range from the scene and the command line.
fn plan(args: &BakeArgs, scene: &LoadedScene, scene_path: &Path) -> Result<Plan> {
    let default_bake = args.scene.is_none();
    let out_dir = match (&args.output, default_bake) {
        (Some(dir), _) => dir.clone(),
        (None, true) => PathBuf::from(DEFAULT_OUTPUT),
        (None, false) => scene.file.output.dir.clone(),
    };
    let formats = match &args.format {
        Some(list) => {
            let mut f: Vec<Format> = Vec::new();
            for a in list {
                let x = match a {
                    FormatArg::Pc2 => Format::Pc2,
                    FormatArg::Mdd => Format::Mdd,
                    FormatArg::Obj => Format::Obj,
                    FormatArg::Usd => Format::Usd,
                    FormatArg::Usdc => Format::Usdc,
                };
                if !f.contains(&x) {
                    f.push(x);
                }
            }
            f
        }
        None => scene.file.output.formats.clone(),
    };
    // --report wins; with -o (or the default bake) the scene's report moves into the output folder.
    let report = match (&args.report, &scene.file.output.report) {
        (Some(r), _) => Some(r.clone()),
        (None, Some(r)) if args.output.is_some() || default_bake => Some(
            out_dir.join(
                r.file_name()
                    .unwrap_or(Path::new("report.json").as_os_str()),
            ),
        ),
        (None, r) => r.clone(),
    };
    let (first, last) = match args.frames {
        Some(r) => (r.start, r.end),
        None => (scene.frame_start, scene.frame_end),
    };
    if last > scene.frame_end {
        scene.check_drivers(last)?;
    }
    if first < scene.frame_start {
        return Err(CliError::Input(format!(
            "--frames {first}..{last}: starts before the scene's frame_start {} (the rest state) in {}",
            scene.frame_start,
            scene_path.display()
        )));
    }
    Ok(Plan {
        out_dir,
        formats,
        report,
        first,
        last,
    })
}
