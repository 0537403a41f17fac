//! Kang 2003 §6 accuracy (eqs. 6.1–6.3) of the `kang` and `verlet` integrators, on the set-up of
//! examples/accuracy.rs (1 m × 1 m cotton sheet of 0.05 kg, 21 × 21, two adjacent corners pinned,
//! falling from rest, air damping off; 18 check points every 1/30 s), against two references:
//! backward Euler at 1/15000 s (the physical solution the implicit methods converge to) and the
//! same integrator at 1/15000 s (its own time-discretisation error). Prints a Markdown table.
//!
//! Run: `cargo run --release -p clothbake-solver --example accuracy_integrators`; with
//! `-- --cost NAME SUBSTEPS` it runs one bake only (for `perf stat -e instructions`).

use std::time::Instant;

use clothbake_solver::fixtures::{hard_pins, sheet, sheet_vertex};
use clothbake_solver::{Integrator, Material, SimSettings, Simulation};
use glam::Vec3;

const N: usize = 21;
const FPS: f32 = 30.0;
const CHECKS: usize = 18;
const REF_SUBSTEPS: u32 = 500;

struct Bake {
    frames: Vec<Vec<Vec3>>,
    ms_per_frame: f64,
    substeps: u32,
    rejected: u32,
}

fn bake(integrator: Integrator, substeps: u32, kang_iterations: u32) -> Result<Bake, String> {
    let mut g = sheet("kang", N, 1.0, 1.0);
    let mut m = Material::preset("cotton").expect("cotton preset");
    m.density = 0.05;
    g.material = m;
    g.pins = hard_pins(&[sheet_vertex(N, 0, 0), sheet_vertex(N, N - 1, 0)]);
    let settings = SimSettings {
        substeps,
        air_damping: 0.0,
        integrator,
        kang_iterations,
        ..SimSettings::default()
    };
    let mut sim = Simulation::new(vec![g], settings).map_err(|e| e.to_string())?;
    let mut frames = vec![sim.garment_positions(0).to_vec()];
    let (mut rejected, mut subs) = (0, 0);
    let clock = Instant::now();
    for _ in 0..CHECKS {
        let r = sim
            .step_frame(1.0 / FPS, &[], &[])
            .map_err(|e| e.to_string())?;
        rejected += r.rejected_substeps;
        subs += r.substeps;
        frames.push(sim.garment_positions(0).to_vec());
    }
    Ok(Bake {
        frames,
        ms_per_frame: clock.elapsed().as_secs_f64() * 1e3 / CHECKS as f64,
        substeps: subs,
        rejected,
    })
}

/// (mean E, mean S, first E) of `exp` against `reference` (Kang eqs. 6.1–6.3, free vertices).
fn errors(reference: &Bake, exp: &Bake) -> (f64, f64, f64) {
    let per: Vec<(f64, f64)> = (1..=CHECKS)
        .map(|k| {
            let (mut e, mut s, mut n) = (0.0f64, 0.0f64, 0usize);
            for i in 0..N * N {
                let dr = (reference.frames[k][i] - reference.frames[k - 1][i]).as_dvec3();
                let dx = (exp.frames[k][i] - exp.frames[k - 1][i]).as_dvec3();
                if dr.length_squared() == 0.0 {
                    continue;
                }
                e += (dr - dx).length_squared() / dr.length_squared();
                let c = dr.normalize_or_zero().dot(dx.normalize_or_zero());
                s += c * c;
                n += 1;
            }
            (e / n as f64, s / n as f64)
        })
        .collect();
    let m = CHECKS as f64;
    (
        per.iter().map(|p| p.0).sum::<f64>() / m,
        per.iter().map(|p| p.1).sum::<f64>() / m,
        per[0].0,
    )
}

fn main() {
    // `--cost NAME SUBSTEPS`: one bake only (for `perf stat`: instruction counts do not depend on
    // the machine's load).
    let args: Vec<String> = std::env::args().collect();
    if let Some(k) = args.iter().position(|a| a == "--cost") {
        let integrator = args
            .get(k + 1)
            .and_then(|n| Integrator::from_name(n))
            .expect("--cost bw|bdf2|kang|verlet SUBSTEPS");
        let substeps = args.get(k + 2).and_then(|s| s.parse().ok()).unwrap_or(20);
        let b = bake(integrator, substeps, 1).expect("bake");
        println!("{} substeps, {} rejected", b.substeps, b.rejected);
        return;
    }
    let bw_ref = bake(Integrator::BackwardEuler, REF_SUBSTEPS, 1).expect("bw reference");
    eprintln!("bw reference done");
    println!(
        "| integrator | step | mean E vs bw ref | mean S vs bw ref | first E vs bw ref | mean E vs own ref | mean S vs own ref | ms/frame | substeps | rejected |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (label, integrator, k) in [
        ("bw", Integrator::BackwardEuler, 1),
        ("kang k=1", Integrator::Kang, 1),
        ("kang k=3", Integrator::Kang, 3),
        ("verlet", Integrator::Verlet, 1),
    ] {
        let own = if integrator == Integrator::BackwardEuler {
            None
        } else {
            match bake(integrator, REF_SUBSTEPS, k) {
                Ok(b) => Some(b),
                Err(e) => {
                    println!("| {label} | reference 1/15000 s failed: {e} |");
                    continue;
                }
            }
        };
        let own = own.as_ref().unwrap_or(&bw_ref);
        for substeps in [20, 5, 1] {
            match bake(integrator, substeps, k) {
                Ok(b) => {
                    let (e, s, fe) = errors(&bw_ref, &b);
                    let (eo, so, _) = errors(own, &b);
                    println!(
                        "| {label} | 1/{} s | {e:.4} | {s:.4} | {fe:.4} | {eo:.4} | {so:.4} | {:.2} | {} | {} |",
                        30 * substeps,
                        b.ms_per_frame,
                        b.substeps,
                        b.rejected
                    );
                }
                Err(e) => println!("| {label} | 1/{} s | failed: {e} |", 30 * substeps),
            }
        }
        eprintln!("done: {label}");
    }
    // Cost at 1/600 s, alternating the integrators, best of 7 (the machine is shared).
    let methods = [
        ("bw", Integrator::BackwardEuler),
        ("kang k=1", Integrator::Kang),
        ("verlet", Integrator::Verlet),
    ];
    let mut best = [f64::INFINITY; 3];
    for _ in 0..7 {
        for (k, (_, i)) in methods.iter().enumerate() {
            if let Ok(b) = bake(*i, 20, 1) {
                best[k] = best[k].min(b.ms_per_frame);
            }
        }
    }
    println!("\n| integrator (1/600 s) | best ms/frame of 7, alternating |\n|---|---:|");
    for ((label, _), ms) in methods.iter().zip(best) {
        println!("| {label} | {ms:.2} |");
    }
}
