//! Per-iteration kernels of the linear solve on a real n×n cotton-sheet system (wrinkled,
//! stretched 1 %, h = 1/120 s), timed in-process and alternately so a loaded machine affects all
//! variants alike: the product s = A·p as a per-row gather (every off-diagonal block read twice;
//! MPCG's parallel path before 4460414), as row ranges of the one-pass product
//! (`BlockMatrix::mul_rows`, MPCG's parallel path from 8192 vertices now) and as the serial
//! one-pass product (below 8192); the block IC(0) factorization and its two sweeps; whole MPCG
//! iterations (30 per solve unless given, the factorization included), plain and deflated. Each figure is the best single pass of
//! `rounds` (the least disturbed one on a shared machine). Runs on a pool thread, as a bake does.
//!
//! `cargo run --release -p clothbake-solver --example linalg_kernels -- 256 [rounds] [iterations]`

use clothbake_solver::fixtures::wrinkled_sheet_system;
use clothbake_solver::linalg::{
    CgSettings, Filter, IncompleteCholesky, Mpcg, Preconditioner, Problem,
};
use glam::{Vec3, Vec3A};
use rayon::prelude::*;
use std::time::Instant;

fn main() {
    // On a pool thread, as a bake runs (a parallel pass from outside the pool pays a hand-off).
    rayon::ThreadPoolBuilder::new()
        .build()
        .expect("thread pool")
        .install(run);
}

fn run() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(256);
    let rounds: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(200);
    let iterations: u32 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(30);
    // Wrinkled (bending and shear active), stretched 1 % (under tension), falling.
    let (model, a) = wrinkled_sheet_system(n);
    let (nv, a) = (model.vertex_count(), &a);
    let x0: Vec<Vec3> = model.initial_positions.iter().map(|&p| p * 1.01).collect();
    let p: Vec<Vec3A> = (0..nv)
        .map(|i| Vec3A::new((i as f32).sin(), (i as f32 * 0.3).cos(), 0.5))
        .collect();
    let mut s = vec![Vec3A::ZERO; nv];
    let rows = 2048;
    let mut gather = f64::MAX;
    let mut ranges = f64::MAX;
    let mut serial = f64::MAX;
    let mut cg_it = f64::MAX;
    let mut cg_defl = f64::MAX;
    let filter = vec![Filter::Free; nv];
    let z = vec![Vec3::ZERO; nv];
    // Gravity impulse m·g·h, as in free fall.
    let b: Vec<Vec3> = model
        .mass
        .iter()
        .map(|&m| Vec3::new(0.0, -9.81 * m / 120.0, 0.0))
        .collect();
    let mut mpcg = Mpcg::new();
    let mut ic = IncompleteCholesky::new();
    let (mut factor, mut fwd, mut bwd) = (f64::MAX, f64::MAX, f64::MAX);
    let mut u = vec![Vec3A::ZERO; nv];
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..1 {
            s.par_iter_mut()
                .enumerate()
                .for_each(|(i, s)| *s = a.row_mul_a(i, &p));
        }
        gather = gather.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for _ in 0..1 {
            s.par_chunks_mut(rows)
                .enumerate()
                .for_each(|(k, sk)| a.mul_rows(k * rows, &p, sk, |_, _| {}));
        }
        ranges = ranges.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for _ in 0..1 {
            a.mul_serial(&p, &mut s, |_, _| {});
        }
        serial = serial.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let broke = ic.factor(a, &filter, 1.0);
        if broke > 0 && factor == f64::MAX {
            println!("IC(0) breakdowns: {broke}");
        }
        factor = factor.min(t.elapsed().as_secs_f64());
        let mut dots = vec![0.0f64; ic.slots()];
        let mut r = p.clone();
        let t = Instant::now();
        ic.forward(&mut r, None, &mut u, &mut dots);
        fwd = fwd.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        ic.backward(&mut u);
        bwd = bwd.min(t.elapsed().as_secs_f64());
        for (deflation, best) in [(false, &mut cg_it), (true, &mut cg_defl)] {
            let mut x = vec![Vec3::ZERO; nv];
            let t = Instant::now();
            let res = mpcg.solve(
                &Problem {
                    a,
                    b: &b,
                    filter: &filter,
                    z: &z,
                    mass: &model.mass,
                    positions: &x0,
                    rest: &model.rest_positions,
                },
                &mut x,
                CgSettings {
                    tolerance: 1e-12,
                    max_iterations: iterations,
                    velocity_floor: 0.0,
                    preconditioner: Preconditioner::IncompleteCholesky,
                    first_shift: 0,
                    deflation,
                },
            );
            *best = best.min(t.elapsed().as_secs_f64() / res.iterations.max(1) as f64);
        }
    }
    let ns = |t: f64| t * 1e9 / nv as f64;
    println!(
        "{n}x{n} ({nv} vertices, {} upper blocks), {} threads, best of {rounds}: ns per vertex: \
         product gather {:.1}, row ranges {:.1}, serial {:.1}; MPCG iteration (incl. setup/{iterations}) {:.1}, deflated {:.1}; IC factor {:.1}, forward {:.1}, backward {:.1}",
        a.off.len(),
        rayon::current_num_threads(),
        ns(gather),
        ns(ranges),
        ns(serial),
        ns(cg_it),
        ns(cg_defl),
        ns(factor),
        ns(fwd),
        ns(bwd)
    );
}
