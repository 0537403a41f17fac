//! Self-collision benchmark (table-printing, `harness = false`):
//! `cargo bench -p clothbake-solver --bench self_collision`.
//!
//! Part 1 (full simulation): a 64×64 sheet (0.5 m, cotton) lying on the ground is folded in half
//! onto itself by its pinned far edge (as in tests/self_collision_sim.rs); prints the share of the
//! substep time spent in self-collision (`StageTimes::self_collide` / total) over the frames with
//! cloth–cloth contact, and over the whole run, with the proximity contacts found on another thread
//! during the serial solve (the default) and without; and the share the self-collision work would
//! have if it all ran in series (`self_ahead` added to both).
//!
//! Part 2 (stage alone): a sheet folded in half — the lower half lies still, the upper half
//! falls onto it under gravity with small random lateral motion — resolved every substep; prints
//! ns per vertex of `SelfCollision::resolve` at 64², 128², 256² vertices, in two variants:
//! - "same garment": the sheet is 1 m at every resolution with a fixed 2 mm thickness, so the
//!   grid spacing shrinks and the contacts per vertex grow with the vertex count;
//! - "bigger garment": the grid spacing (15.9 mm, that of the 64² sheet) and thickness stay fixed
//!   and the sheet side grows with the vertex count, so the local workload per vertex is constant:
//!   this is what "cost per vertex flat" measures for an O(n) stage.

use clothbake_solver::fixtures::{ground, regular_grid, sheet, EdgeFold};
use clothbake_solver::self_collision::{
    count_intersections, SelfCollision, SelfCollisionParams, SelfCollisionTopology,
};
use clothbake_solver::{SimSettings, Simulation, StageTimes};
use glam::Vec3;
use std::time::Instant;

/// Folded sheet of side `size` (m): vertices with x > size/2 are mirrored over the lower half,
/// `lift` (m) above it near the fold, rising by 2 cm towards the free edge.
fn folded(n: usize, size: f32, lift: f32) -> (Vec<Vec3>, Vec<Vec3>, Vec<[u32; 3]>, Vec<f32>) {
    let (rest, tris) = regular_grid(n, size / (n - 1) as f32);
    let half = 0.5 * size;
    let x: Vec<Vec3> = rest
        .iter()
        .map(|p| {
            if p.x > half {
                Vec3::new(size - p.x, lift + 0.02 * (p.x / size - 0.5), p.z)
            } else {
                *p
            }
        })
        .collect();
    let inv_mass = rest
        .iter()
        .map(|p| if p.x <= half { 0.0 } else { 1.0 })
        .collect();
    (rest, x, tris, inv_mass)
}

/// CPU time (s) used so far by all threads of this process (Linux schedstat; 0 elsewhere). Under
/// a loaded machine it tracks the work done better than the wall clock.
fn process_cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let mut ns = 0u64;
    for t in tasks.flatten() {
        if let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) {
            ns += s
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    ns as f64 * 1e-9
}

/// What one stage-alone run measured.
struct StageRun {
    secs_per_substep: f64,
    cpu_secs_per_substep: f64,
    max_contacts: u32,
    max_candidates: u32,
    worst_intersections: usize,
    /// CCD passes, rebuilds, impact-zone iterations summed over the substeps.
    work: [u32; 3],
}

fn stage_alone(n: usize, size: f32, substeps: usize) -> StageRun {
    let (rest, mut x, tris, inv_mass) = folded(n, size, 0.004);
    let mut topo = SelfCollisionTopology::single(x.len(), tris.clone());
    topo.rest_positions = Some(rest);
    let mut sc = SelfCollision::new(&topo).expect("valid grid");
    let params = [SelfCollisionParams {
        thickness: 0.002,
        friction: 0.3,
    }];
    let mut v = vec![Vec3::ZERO; x.len()];
    let h = 1.0 / 240.0;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let (mut total, mut cpu) = (0.0, 0.0);
    let (mut contacts, mut candidates) = (0, 0);
    let mut worst = 0;
    let mut work = [0u32; 3];
    for _ in 0..substeps {
        for (i, vi) in v.iter_mut().enumerate() {
            if inv_mass[i] > 0.0 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let r = (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                *vi += Vec3::new(0.2 * r, -9.81 * h, -0.1 * r);
            }
        }
        let x0 = x.clone();
        let (t, c) = (Instant::now(), process_cpu_seconds());
        let r = sc.resolve(&x0, &mut v, h, &inv_mass, &params);
        total += t.elapsed().as_secs_f64();
        cpu += process_cpu_seconds() - c;
        contacts = contacts.max(r.contacts);
        candidates = candidates.max(r.candidates);
        work[0] += r.ccd_iterations;
        work[1] += r.rebuilds;
        work[2] += r.zone_iterations;
        for i in 0..x.len() {
            x[i] = x0[i] + v[i] * h;
        }
        worst = worst.max(count_intersections(&x, &tris));
    }
    StageRun {
        secs_per_substep: total / substeps as f64,
        cpu_secs_per_substep: cpu / substeps as f64,
        max_contacts: contacts,
        max_candidates: candidates,
        worst_intersections: worst,
        work,
    }
}

/// Folds an n×n sheet in half with its pinned edge; returns (stage times summed over frames with
/// cloth–cloth contact, summed over all frames, substeps, max intersections).
fn fold_in_sim(n: usize, proximity_ahead: bool) -> (StageTimes, StageTimes, u32, usize) {
    let (size, y0) = (0.5, 0.006);
    let mut g = sheet("sheet", n, size, y0);
    g.self_collision = Some(SelfCollisionParams {
        thickness: 0.003,
        friction: 0.3,
    });
    let mut fold = EdgeFold::pin(&mut g, n, y0);
    let settings = SimSettings {
        substeps: 5,
        proximity_ahead,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
    let (swing_frames, frames) = (24, 36);
    let (mut contact, mut all) = (StageTimes::default(), StageTimes::default());
    let mut substeps = 0;
    let mut worst = 0;
    for f in 1..=frames {
        let targets = fold.targets(f as f32 / swing_frames as f32);
        let r = sim
            .step_frame(1.0 / 24.0, &[ground()], &[Some(targets)])
            .expect("frame");
        all.add(&r.times);
        substeps += r.substeps;
        if r.self_contacts > 0 {
            contact.add(&r.times);
        }
        worst = worst.max(count_intersections(&sim.state().x, &sim.model().triangles));
    }
    (contact, all, substeps, worst)
}

fn main() {
    println!("threads: {}", rayon::current_num_threads());
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average: {}", load.trim());
    }
    if std::env::var("SC_BENCH_STAGE_ONLY").is_err() {
        full_simulation();
    }
    stage_table();
}

fn full_simulation() {
    println!("\nfull simulation: 64x64 sheet folded onto itself (36 frames at 24 fps, 5 substeps)");
    for ahead in [true, false] {
        let (contact, all, substeps, worst) = fold_in_sim(64, ahead);
        println!(
            "\nproximity found ahead of the solve (on another thread): {}",
            if ahead { "yes (default)" } else { "no" }
        );
        println!(
            "{:>22} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
            "frames", "assemble", "solve", "collide", "self", "other", "ahead", "self %", "work %"
        );
        for (name, t) in [("with cloth contact", contact), ("all", all)] {
            println!(
                "{:>22} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>7.1}% {:>7.1}%",
                name,
                t.assemble,
                t.solve,
                t.collide,
                t.self_collide,
                t.other,
                t.self_ahead,
                100.0 * t.self_collide / t.total(),
                100.0 * (t.self_collide + t.self_ahead) / (t.total() + t.self_ahead)
            );
        }
        println!(
            "{:>22} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "self-collision parts", "broad", "proximity", "ccd", "zones", "other"
        );
        for (name, t) in [("with cloth contact", contact), ("all", all)] {
            let p = t.self_parts;
            println!(
                "{:>22} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
                name, p.broad_phase, p.proximity, p.ccd, p.impact_zones, p.other
            );
        }
        println!("(seconds summed over frames; {substeps} substeps; max intersections {worst})");
    }
    println!(
        "(self: cloth–cloth time on the substep's critical path; ahead: its proximity work done on \
         another thread during the serial solve; work %: the share if that work ran in series)"
    );
}

fn stage_table() {
    println!("\nself-collision stage alone (folded sheet, upper half falling onto lower half, 30 substeps, thickness 2 mm)");
    println!(
        "{:>15} {:>9} {:>7} {:>11} {:>11} {:>10} {:>11} {:>13} {:>7} {:>15}",
        "variant",
        "vertices",
        "side m",
        "ms/substep",
        "cpu ms/sub",
        "ns/vertex",
        "contacts/v",
        "candidates/v",
        "inters",
        "ccd/rebuild/zone"
    );
    let sizes: Vec<usize> = std::env::var("SC_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|k| k.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![64, 128, 256]);
    // Grid spacing of the 64² one-metre sheet, kept by the "bigger garment" variant.
    let spacing = 1.0 / 63.0;
    let variants: [(&str, &dyn Fn(usize) -> f32); 2] = [
        ("same garment", &|_| 1.0),
        ("bigger garment", &|n| spacing * (n - 1) as f32),
    ];
    for (name, side) in variants {
        let mut per_vertex = Vec::new();
        for &n in &sizes {
            let size = side(n);
            let r = stage_alone(n, size, 30);
            let nv = (n * n) as f64;
            let nsv = r.secs_per_substep * 1e9 / nv;
            per_vertex.push(nsv);
            println!(
                "{:>15} {:>9} {:>7.2} {:>11.3} {:>11.3} {:>10.1} {:>11.2} {:>13.2} {:>7} {:>15}",
                name,
                n * n,
                size,
                r.secs_per_substep * 1e3,
                r.cpu_secs_per_substep * 1e3,
                nsv,
                r.max_contacts as f64 / nv,
                r.max_candidates as f64 / nv,
                r.worst_intersections,
                format!("{}/{}/{}", r.work[0], r.work[1], r.work[2])
            );
        }
        let mean = per_vertex.iter().sum::<f64>() / per_vertex.len() as f64;
        let spread = per_vertex
            .iter()
            .map(|v| (v / mean - 1.0).abs())
            .fold(0.0, f64::max);
        println!(
            "{:>15} ns/vertex spread around the mean: ±{:.0}% (target ±25%)",
            name,
            spread * 100.0
        );
    }
}
