//! Accuracy harness: Kang 2003 (PhD thesis, ch. 6, Tables 6.2–6.4) experiment for every cloth
//! model × integrator, plus Boxerman's check (2003, §4.4.3), written to ACCURACY.md.
//!
//! - [`setup`]: the experiment (1 m² sheet of 0.05 kg, 21 × 21, two corners pinned, falling from
//!   rest) and its two materials: Kang's own soft cloth (κ = 0.03/l⁰ per spring, as BW membrane
//!   stiffness) and the cotton preset at 0.05 kg/m²;
//! - [`measure`]: Kang's E and S (eqs. 6.1–6.3);
//! - [`configs`]: the table of named model × integrator configurations;
//! - [`boxerman`]: seeded random parameter sets and the ∞-norm difference of two configurations in
//!   mesh spacings.
//!
//! Run: `cargo run --release -p clothbake-solver --example accuracy` (writes ACCURACY.md at the
//! repository root; a few minutes). `-- --quick`: a 1/6000 s reference, no investigation section,
//! three Boxerman sets, printed only (≈ 1/4 of the time). `-- --print`: print instead of writing.

mod boxerman;
mod configs;
mod measure;
mod setup;

use std::fmt::Write as _;

use clothbake_solver::{Integrator, Material, SimSettings, DEFAULT_AIR_DAMPING};

use boxerman::{ParamSet, Rng};
use measure::{summarize, Summary};
use setup::{bake, kang_membrane, materials, Bake, Setup, KANG_KAPPA_L0, SPACING};

/// Check points per bake (Kang's Tables 6.2–6.3 have 18).
const CHECKS: usize = 18;
/// The experiment's steps: substeps per 1/30 s frame (Kang: 1/150 s and 1/30 s).
const STEPS: [u32; 2] = [5, 1];
/// The reference step, substeps per frame (Kang: 1/30000 s), and the quick run's.
const REF_SUBSTEPS: u32 = 1000;
const QUICK_REF_SUBSTEPS: u32 = 200;
/// Integrator of the reference bakes (second order: at 1/30000 s its own error is far below the
/// experiment's; the spread against backward Euler's reference is reported).
const REF_INTEGRATOR: Integrator = Integrator::Bdf2;

/// Integrators (scene-file names) the investigation section varies, when this build has them.
const INVESTIGATED: [&str; 3] = ["bw", "bdf2", "midpoint"];

/// Boxerman's check: pairs of integrators (scene-file names) compared when this build has both.
const BOXERMAN_PAIRS: [(&str, &str); 2] = [("aimex", "bw"), ("bdf2", "bw")];

/// Kang 2003, Tables 6.2–6.4: (E, S) per check point of his approximate implicit method on his
/// spring cloth against his 1/30000 s reference: 18 points at 1/150 s, 12 at 1/30 s.
const KANG_150_E: [f64; 18] = [
    0.039510, 0.003994, 0.001276, 0.001021, 0.001297, 0.002019, 0.004688, 0.001803, 0.002885,
    0.009175, 0.012875, 0.011074, 0.005238, 0.004325, 0.003962, 0.004577, 0.009778, 0.010590,
];
const KANG_150_S: [f64; 18] = [
    0.998158, 0.997947, 0.997957, 0.997775, 0.997444, 0.996644, 0.995828, 0.996858, 0.996032,
    0.993291, 0.991465, 0.995356, 0.995162, 0.995657, 0.995733, 0.995660, 0.992599, 0.992900,
];
const KANG_30_E: [f64; 12] = [
    1.032871, 0.093998, 0.023254, 0.032405, 0.024684, 0.021908, 0.013602, 0.0161, 0.024417,
    0.121476, 0.05943, 0.073172,
];
const KANG_30_S: [f64; 12] = [
    0.998134, 0.99776, 0.997748, 0.996827, 0.994657, 0.992595, 0.993204, 0.994244, 0.992554,
    0.984574, 0.980214, 0.983945,
];

fn avg(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// A results row.
struct Row {
    material: &'static str,
    label: String,
    substeps: u32,
    sum: Summary,
    ms: f64,
    accepted: f64,
    cg: f64,
    rejected: u32,
    /// E at every check point.
    per_point: Vec<f64>,
}

fn row_md(w: &mut String, r: &RowResult) {
    let r = match r {
        Ok(r) => r,
        Err((material, label, substeps, why)) => {
            writeln!(
                w,
                "| {material} | {label} | 1/{} s | {why} | | | | | | | | | |",
                30 * substeps
            )
            .unwrap();
            return;
        }
    };
    writeln!(
        w,
        "| {} | {} | 1/{} s | {:.4} | {:.4} | {:.4} / {:.4} | {:.4} | {:.4} | {:.4} | {:.2} | {:.1} | {:.0} | {} |",
        r.material,
        r.label,
        30 * r.substeps,
        r.sum.e,
        r.sum.s,
        r.sum.e12,
        r.sum.s12,
        r.sum.first_e,
        r.sum.first_s,
        r.sum.aggregate,
        r.ms,
        r.accepted,
        r.cg,
        r.rejected
    )
    .unwrap();
}

const ROW_HEAD: &str = "| material | configuration | step | mean E | mean S | mean E / S, first 12 | first E | first S | aggregate E | ms/frame | substeps/frame | CG it./frame | rejected |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

type RowResult = Result<Row, (&'static str, String, u32, String)>;

fn run(material: &'static str, label: String, reference: &Bake, s: &Setup) -> RowResult {
    let b = match setup::try_bake(s, CHECKS) {
        Ok(b) => b,
        Err(why) => return Err((material, label, s.substeps, why)),
    };
    Ok(Row {
        material,
        label,
        substeps: s.substeps,
        sum: summarize(reference, &b),
        per_point: measure::errors(reference, &b).iter().map(|p| p.0).collect(),
        ms: b.ms_per_frame,
        accepted: b.substeps_per_frame,
        cg: b.cg_per_frame,
        rejected: b.rejected,
    })
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let print = quick || std::env::args().any(|a| a == "--print");
    let ref_substeps = if quick {
        QUICK_REF_SUBSTEPS
    } else {
        REF_SUBSTEPS
    };
    let mut md = String::new();
    let w = &mut md;
    writeln!(w, "# Accuracy against Kang 2003 §6\n").unwrap();
    writeln!(
        w,
        "Generated by `cargo run --release -p clothbake-solver --example accuracy{}` \
         (crates/solver/examples/accuracy/; {} threads). Set-up (Kang 2003 thesis §6, the \
         paragraph before Table 6.3): 1 m × 1 m sheet of 0.05 kg, 21 × 21 vertices (5 cm spacing), \
         horizontal, two adjacent corners hard-pinned, falling from rest; air damping off unless \
         stated; default CG tolerance and step controller. Check points every 1/30 s ({CHECKS}). \
         E = mean over the 439 free vertices of |Δx_ref − Δx_exp|²/|Δx_ref|² (eqs. 6.1–6.2, Δx = \
         motion since the previous check point), S = mean of (Δx̂_ref·Δx̂_exp)² (eq. 6.3). \
         Reference: the same model and material with {} at 1/{} s.\n",
        if quick { " -- --quick" } else { "" },
        rayon::current_num_threads(),
        REF_INTEGRATOR.name(),
        30 * ref_substeps
    )
    .unwrap();

    // Kang's material.
    let (structural, with_diag, shear, with_bend) = kang_membrane(KANG_KAPPA_L0, SPACING);
    writeln!(
        w,
        "## Kang's cloth as membrane stiffness\n\n\
         Kang's springs follow Hooke's law f = κ_ij(|x_j − x_i| − l⁰_ij)·(x_j − x_i)/|x_j − x_i| \
         (eq. 3.1), and §6 sets κ_ij = 0.03/l⁰_ij (N/m), i.e. κ·l⁰ = 0.03 N for every spring. A \
         spring stores ½·κ·(l⁰ε)² = ½·0.03·l⁰·ε² at axial strain ε; summed per grid cell of the \
         {:.0} cm grid (area a²) this is a membrane of stretch stiffness 0.03/a = {structural:.3} \
         N/m from the structural springs, {with_diag:.3} N/m with both diagonals (each adds \
         0.03/(2√2·a) per cell at strain ε/2; they also give shear stiffness 0.03/(√2·a) = \
         {shear:.3} N/m), {with_bend:.3} N/m if skip-one bend springs get the same constant. \
         Cotton's is 2000/1600 N/m: Kang's cloth is ≈ 2000× softer (it stretches ≈ 50 % under its \
         own weight near the pins). Until the springs model lands, the harness bakes the BW model \
         with stretch {with_diag:.3} N/m, shear {shear:.3} N/m, no bending rigidity (a flat spring \
         grid has none to first order) and no damping (§6 names none): material `kang` below. \
         Material `cotton` is the cotton preset at 0.05 kg/m² (what the harness compared \
         before).\n",
        SPACING * 100.0
    )
    .unwrap();

    let mut rows: Vec<RowResult> = Vec::new();
    let mut refs = Vec::new();
    let mut ref_spread = Vec::new();
    let mut inv: Vec<RowResult> = Vec::new();
    writeln!(
        w,
        "## References\n\n| material | bake | mean E vs reference | mean S | ms/frame |\n|---|---|---:|---:|---:|"
    )
    .unwrap();
    for (mname, material, _) in materials() {
        let base = Setup::new(material, |_| {}, REF_INTEGRATOR, ref_substeps);
        let reference = bake(&base, CHECKS);
        let checks: Vec<(String, Setup)> = if quick {
            vec![]
        } else {
            vec![
                (
                    format!("bw at 1/{} s", 30 * ref_substeps),
                    Setup {
                        integrator: Integrator::BackwardEuler,
                        ..base
                    },
                ),
                (
                    format!("{} at 1/{} s", REF_INTEGRATOR.name(), 15 * ref_substeps),
                    base.with_substeps(ref_substeps / 2),
                ),
            ]
        };
        writeln!(
            w,
            "| {mname} | reference: {} at 1/{} s | – | – | {:.1} |",
            REF_INTEGRATOR.name(),
            30 * ref_substeps,
            reference.ms_per_frame
        )
        .unwrap();
        for (label, s) in checks {
            let b = bake(&s, CHECKS);
            let sum = summarize(&reference, &b);
            if s.integrator == Integrator::BackwardEuler {
                ref_spread.push((mname, sum.e));
            }
            writeln!(
                w,
                "| {mname} | {label} | {:.2e} | {:.6} | {:.1} |",
                sum.e, sum.s, b.ms_per_frame
            )
            .unwrap();
        }
        refs.push((mname, material, reference));
        eprintln!("reference: {mname}");
    }
    writeln!(w).unwrap();

    // Every model × integrator on both materials.
    let configs = configs::all();
    let mut missing = Vec::new();
    for (mname, material, reference) in &refs {
        for c in &configs {
            let Some((model, integrator)) = c.available else {
                if *mname == refs[0].0 {
                    missing.push(c.label());
                }
                continue;
            };
            let s = Setup::new(*material, model, integrator, 0);
            for substeps in STEPS {
                rows.push(run(mname, c.label(), reference, &s.with_substeps(substeps)));
            }
            eprintln!("done: {mname} {}", c.label());
        }
    }
    writeln!(w, "## Results: every model × integrator\n\n{ROW_HEAD}").unwrap();
    for r in &rows {
        row_md(w, r);
    }
    writeln!(
        w,
        "\nNot yet available in this build: {}.\n\n\
         mean E, first 12: Kang's Table 6.4 (1/30 s) has 12 check points. aggregate E = \
         Σ|Δx_ref − Δx_exp|²/Σ|Δx_ref|² over all vertices and check points (not Kang's measure: \
         vertices that barely move in the reference cannot dominate it). substeps/frame and CG \
         it./frame count accepted substeps; rejected = substeps redone at half the step over the \
         {CHECKS} frames.\n",
        if missing.is_empty() {
            "none".to_string()
        } else {
            missing.join(", ")
        }
    )
    .unwrap();
    writeln!(
        w,
        "Kang 2003, his approximate implicit method (one Jacobi-like iteration, eq. 4.9) on his \
         spring cloth, reference 1/30000 s: Tables 6.2–6.3, 1/150 s, 18 check points: mean E \
         {:.4}, mean S {:.4}, first E {:.4}, first S {:.4}. Table 6.4, 1/30 s, 12 check points: \
         mean E {:.3}, mean S {:.4}, first E {:.3}, first S {:.4} (without the first point: mean \
         E {:.4}).\n",
        avg(&KANG_150_E),
        avg(&KANG_150_S),
        KANG_150_E[0],
        KANG_150_S[0],
        avg(&KANG_30_E),
        avg(&KANG_30_S),
        KANG_30_E[0],
        KANG_30_S[0],
        avg(&KANG_30_E[1..])
    )
    .unwrap();

    // E per check point at 1/150 s, beside Kang's Table 6.2.
    let head: Vec<String> = (1..=CHECKS).map(|k| k.to_string()).collect();
    writeln!(
        w,
        "### E per check point at 1/150 s\n\n| material | configuration | {} |\n|---|---|{}",
        head.join(" | "),
        "---:|".repeat(CHECKS)
    )
    .unwrap();
    let series = |v: &[f64]| {
        v.iter()
            .map(|e| format!("{e:.4}"))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    writeln!(
        w,
        "| Kang's spring cloth | Kang's method (Table 6.2) | {} |",
        series(&KANG_150_E)
    )
    .unwrap();
    for r in rows.iter().flatten().filter(|r| r.substeps == 5) {
        writeln!(
            w,
            "| {} | {} | {} |",
            r.material,
            r.label,
            series(&r.per_point)
        )
        .unwrap();
    }
    writeln!(w).unwrap();

    // What closes the gap: solver settings and damping, per material, bw and bdf2.
    if !quick {
        writeln!(
            w,
            "## Investigation: the controller, the CG tolerance, damping, the step\n\n\
             Each variant against a reference of the same model, material and damping ({} at \
             1/{} s).\n\n{ROW_HEAD}",
            REF_INTEGRATOR.name(),
            30 * ref_substeps
        )
        .unwrap();
        let default_tol = SimSettings::default().cg_tolerance;
        for (mname, material, reference) in &refs {
            let damped = Material {
                stretch_damping: 1e-3,
                bend_damping: 2e-3,
                ..*material
            };
            let undamped = Material {
                stretch_damping: 0.0,
                bend_damping: 0.0,
                ..*material
            };
            let other_damping = if material.stretch_damping > 0.0 {
                ("condition damping off", undamped)
            } else {
                ("condition damping 1e-3 s (cotton's)", damped)
            };
            let air_ref = bake(
                &Setup {
                    air_damping: DEFAULT_AIR_DAMPING,
                    ..Setup::new(*material, |_| {}, REF_INTEGRATOR, ref_substeps)
                },
                CHECKS,
            );
            let damp_ref = bake(
                &Setup::new(other_damping.1, |_| {}, REF_INTEGRATOR, ref_substeps),
                CHECKS,
            );
            for integrator in INVESTIGATED.iter().filter_map(|n| configs::integrator(n)) {
                let base = Setup::new(*material, |_| {}, integrator, 5);
                let name = integrator.name();
                let variants: Vec<(String, Setup, &Bake)> = vec![
                    (
                        format!("{name}, CG tolerance 1e-7 (default {default_tol:.0e})"),
                        Setup {
                            cg_tolerance: 1e-7,
                            ..base
                        },
                        reference,
                    ),
                    (
                        format!("{name}, 2 Newton iterations"),
                        Setup {
                            newton_iterations: 2,
                            ..base
                        },
                        reference,
                    ),
                    (
                        format!("{name}, 3 Newton iterations"),
                        Setup {
                            newton_iterations: 3,
                            ..base
                        },
                        reference,
                    ),
                    (
                        format!("{name}, step controller off"),
                        Setup {
                            adaptive: false,
                            ..base
                        },
                        reference,
                    ),
                    (
                        format!("{name}, air damping {DEFAULT_AIR_DAMPING} (default)"),
                        Setup {
                            air_damping: DEFAULT_AIR_DAMPING,
                            ..base
                        },
                        &air_ref,
                    ),
                    (
                        format!("{name}, {}", other_damping.0),
                        Setup {
                            material: other_damping.1,
                            ..base
                        },
                        &damp_ref,
                    ),
                ];
                for (label, s, r) in variants {
                    for substeps in STEPS {
                        let r = run(mname, label.clone(), r, &s.with_substeps(substeps));
                        row_md(w, &r);
                        inv.push(r);
                    }
                }
                for substeps in [10, 20, 40] {
                    let r = run(
                        mname,
                        format!("{name}, smaller step"),
                        reference,
                        &base.with_substeps(substeps),
                    );
                    row_md(w, &r);
                    inv.push(r);
                }
                eprintln!("investigated: {mname} {name}");
            }
            let air = summarize(reference, &air_ref);
            let damp = summarize(reference, &damp_ref);
            writeln!(
                w,
                "| {mname} | reference with air damping {DEFAULT_AIR_DAMPING}, against the \
                 undamped one | 1/{} s | {:.4} | {:.4} | {:.4} / {:.4} | {:.4} | {:.4} | {:.4} | | | | |",
                30 * ref_substeps,
                air.e,
                air.s,
                air.e12,
                air.s12,
                air.first_e,
                air.first_s,
                air.aggregate
            )
            .unwrap();
            writeln!(
                w,
                "| {mname} | reference with {}, against the default one | 1/{} s | {:.4} | {:.4} | \
                 {:.4} / {:.4} | {:.4} | {:.4} | {:.4} | | | | |",
                other_damping.0,
                30 * ref_substeps,
                damp.e,
                damp.s,
                damp.e12,
                damp.s12,
                damp.first_e,
                damp.first_s,
                damp.aggregate
            )
            .unwrap();
        }
        writeln!(w).unwrap();
    }

    // Boxerman's check, generic in the two configurations: every available pair of
    // BOXERMAN_PAIRS, and a calibration pair that differs only in the CG tolerance.
    let sets = if quick { 3 } else { 12 };
    let mut rng = Rng::new(2003);
    let kang = refs[0].1;
    let mut pairs: Vec<(String, Setup, Setup)> = BOXERMAN_PAIRS
        .iter()
        .filter_map(|(a, b)| {
            let (ia, ib) = (configs::integrator(a)?, configs::integrator(b)?);
            Some((
                format!("{a} vs {b}"),
                Setup::new(kang, |_| {}, ia, 0),
                Setup::new(kang, |_| {}, ib, 0),
            ))
        })
        .collect();
    let missing_pairs: Vec<String> = BOXERMAN_PAIRS
        .iter()
        .filter(|(a, b)| configs::integrator(a).is_none() || configs::integrator(b).is_none())
        .map(|(a, b)| format!("{a} vs {b}"))
        .collect();
    let bw = Setup::new(kang, |_| {}, Integrator::BackwardEuler, 0);
    pairs.push((
        "bw (CG 1e-7) vs bw: calibration".into(),
        Setup {
            cg_tolerance: 1e-7,
            ..bw
        },
        bw,
    ));
    writeln!(
        w,
        "## Boxerman's check\n\n\
         Boxerman 2003 §4.4.3: over random parameter sets, the largest ∞-norm difference of the \
         position vectors over 1 s between his AIMEX and the implicit (backward Euler) result \
         stayed under 10 % of the mesh spacing for most sets. Same measure here over {sets} sets \
         drawn with a fixed seed from his lists (stretch and shear 10, 100, 1000, 3000 N/m, shear \
         ≤ stretch; density 0.03, 0.1, 0.3, 1 kg/m²; condition damping 0, 1e-3, 1e-2 s; 2, 3, 4 or \
         7 substeps per 1/30 s frame), on Kang's sheet, 30 frames, in mesh spacings. Pairs not yet \
         available: {}. The calibration pair differs only in the CG tolerance: what the measure \
         shows for two bakes of the same integrator.\n\n\
         | set | stretch N/m | shear N/m | density kg/m² | damping s | step | {} |\n\
         |---:|---:|---:|---:|---:|---|{}",
        if missing_pairs.is_empty() {
            "none".to_string()
        } else {
            missing_pairs.join(", ")
        },
        pairs
            .iter()
            .map(|p| p.0.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
        "---:|".repeat(pairs.len())
    )
    .unwrap();
    let mut within = vec![0; pairs.len()];
    let mut identical = vec![0; pairs.len()];
    for k in 0..sets {
        let set = ParamSet::draw(&mut rng);
        let mut cells = Vec::new();
        for (p, (_, a, b)) in pairs.iter().enumerate() {
            cells.push(match boxerman::difference(a, b, &set, 30) {
                Some(d) => {
                    if d <= 0.1 {
                        within[p] += 1;
                    }
                    if d == 0.0 {
                        identical[p] += 1;
                    }
                    format!("{d:.3}")
                }
                None => "failed".into(),
            });
        }
        writeln!(
            w,
            "| {} | {} | {} | {} | {} | 1/{} s | {} |",
            k + 1,
            set.stretch,
            set.shear.min(set.stretch),
            set.density,
            set.damping,
            30 * set.substeps,
            cells.join(" | ")
        )
        .unwrap();
    }
    let counts: Vec<String> = pairs
        .iter()
        .zip(&within)
        .map(|(p, n)| format!("{}: {n} of {sets}", p.0))
        .collect();
    writeln!(
        w,
        "\nWithin 10 % of the spacing: {}. bdf2 and bw are two integrators of the same model: \
         their difference is mostly bw's numerical damping, not a splitting error, so it is a \
         yardstick for the AIMEX check (AIMEX is backward Euler with part of the forces explicit, \
         Boxerman §4.4), not a pass/fail of either.\n",
        counts.join("; ")
    )
    .unwrap();
    for (p, &n) in pairs.iter().zip(&identical) {
        if n == sets {
            writeln!(
                w,
                "{}: identical to the bit in every set: on these parameter sets (membranes without \
                 bending stiffness) Boxerman's stability number (eq. 4.8) keeps every element \
                 implicit, so the check is vacuous here. The informative one is the solver's test \
                 `aimex_stays_within_a_tenth_of_the_spacing_of_backward_euler` \
                 (crates/solver/tests/aimex.rs: a hanging sheet, seeded sets from his ranges, only \
                 those with explicit elements counted).\n",
                p.0
            )
            .unwrap();
        }
    }
    eprintln!("boxerman done");

    // Cost on cotton: every investigated integrator with 1 and 2 Newton iterations at 1/150 s,
    // and bdf2 at 1/600 s, alternating (the machine is shared).
    let reps = if quick { 3 } else { 7 };
    let cotton = refs[1].1;
    let mut timed: Vec<(String, Setup)> = Vec::new();
    for newton in [1, 2] {
        for (name, i) in INVESTIGATED
            .iter()
            .filter_map(|&n| configs::integrator(n).map(|i| (n, i)))
        {
            timed.push((
                format!("{name}, {newton} Newton iteration(s), 1/150 s"),
                Setup {
                    newton_iterations: newton,
                    ..Setup::new(cotton, |_| {}, i, 5)
                },
            ));
        }
    }
    timed.push((
        "bdf2, 1 Newton iteration, 1/600 s".into(),
        Setup::new(cotton, |_| {}, Integrator::Bdf2, 20),
    ));
    let mut all = vec![Vec::new(); timed.len()];
    let mut counts = vec![(0.0, 0.0); timed.len()];
    for _ in 0..reps {
        for (k, (_, s)) in timed.iter().enumerate() {
            let b = bake(s, CHECKS);
            all[k].push(b.ms_per_frame);
            counts[k] = (b.substeps_per_frame, b.cg_per_frame);
        }
    }
    writeln!(
        w,
        "## Cost on cotton, alternating runs\n\n\
         | configuration | best ms/frame | median ms/frame | substeps/frame | CG it./frame |\n\
         |---|---:|---:|---:|---:|"
    )
    .unwrap();
    for (((name, _), a), (sub, cg)) in timed.iter().zip(&mut all).zip(&counts) {
        a.sort_by(f64::total_cmp);
        writeln!(
            w,
            "| {name} | {:.3} | {:.3} | {sub:.1} | {cg:.0} |",
            a[0],
            a[reps / 2]
        )
        .unwrap();
    }
    writeln!(
        w,
        "\nWall times on a shared machine are ratios only; the counts are deterministic. A \
         Newton iteration re-assembles and re-solves: its CG starts from zero.\n"
    )
    .unwrap();

    // Summary against the target of issue 15 (mean E ≤ 0.01, S ≥ 0.99 at 1/150 s; E below
    // Kang's at 1/30 s) for the default integrator and the others.
    if !quick {
        // Where cotton's E comes from: bw at 1/150 s, at its worst check point.
        let b = bake(
            &Setup::new(refs[1].1, |_| {}, Integrator::BackwardEuler, 5),
            CHECKS,
        );
        let es = measure::errors(&refs[1].2, &b);
        let worst = (0..es.len())
            .max_by(|&i, &j| es[i].0.total_cmp(&es[j].0))
            .unwrap_or(0)
            + 1;
        let c = measure::concentration(&refs[1].2, &b, worst);
        findings(w, &rows, &inv, &ref_spread, (worst, es[worst - 1].0, c));
    }
    writeln!(w, "## Summary (computed from the tables above)\n").unwrap();
    for (mname, ..) in &refs {
        for r in rows.iter().flatten().filter(|r| r.material == *mname) {
            let verdict = if r.substeps == 5 {
                if r.sum.e <= 0.01 && r.sum.s >= 0.99 {
                    "meets the 1/150 s target (E ≤ 0.01, S ≥ 0.99)".to_string()
                } else {
                    "does not meet the 1/150 s target".to_string()
                }
            } else if r.sum.e12 < avg(&KANG_30_E) {
                format!(
                    "mean E over 12 points {:.3} is below Kang's {:.3}",
                    r.sum.e12,
                    avg(&KANG_30_E)
                )
            } else {
                format!(
                    "mean E over 12 points {:.3} is not below Kang's {:.3}",
                    r.sum.e12,
                    avg(&KANG_30_E)
                )
            };
            writeln!(
                w,
                "- {mname}, {}, 1/{} s: mean E {:.4}, S {:.4}: {verdict}.",
                r.label,
                30 * r.substeps,
                r.sum.e,
                r.sum.s
            )
            .unwrap();
        }
    }
    for (material, label, substeps, why) in rows.iter().filter_map(|r| r.as_ref().err()) {
        writeln!(w, "- {material}, {label}, 1/{} s: {why}.", 30 * substeps).unwrap();
    }
    writeln!(w).unwrap();
    if print {
        print!("{md}");
    } else {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ACCURACY.md");
        std::fs::write(path, &md).expect("write ACCURACY.md");
        print!("{md}");
    }
}

/// The findings paragraph, its numbers looked up in the rows (full run only).
fn findings(
    w: &mut String,
    rows: &[RowResult],
    inv: &[RowResult],
    spread: &[(&str, f64)],
    (worst, worst_e, (share, median, worst_dr, mean_dr)): (usize, f64, (f64, f64, f64, f64)),
) {
    let get = |material: &str, label: &str, substeps: u32| -> Option<&Row> {
        rows.iter()
            .chain(inv)
            .flatten()
            .find(|r| r.material == material && r.label == label && r.substeps == substeps)
    };
    let e = |m: &str, l: &str, sub: u32| get(m, l, sub).map_or(f64::NAN, |r| r.sum.e);
    let e12 = |m: &str, l: &str, sub: u32| get(m, l, sub).map_or(f64::NAN, |r| r.sum.e12);
    let s = |m: &str, l: &str, sub: u32| get(m, l, sub).map_or(f64::NAN, |r| r.sum.s);
    let agg = |m: &str, l: &str, sub: u32| get(m, l, sub).map_or(f64::NAN, |r| r.sum.aggregate);
    let cg = |m: &str, l: &str, sub: u32| get(m, l, sub).map_or(f64::NAN, |r| r.cg);
    let (rej, subs) = get("kang", "bw + bw", 5).map_or((0, f64::NAN), |r| (r.rejected, r.accepted));
    let cotton_spread = spread
        .iter()
        .find(|p| p.0 == "cotton")
        .map_or(f64::NAN, |p| p.1);
    let failed_mid = inv.iter().any(|r| {
        matches!(r, Err((m, l, 1, _)) if *m == "cotton" && l == "midpoint, step controller off")
    });
    writeln!(
        w,
        "## Findings\n\n\
         - **Kang's own cloth** (soft): the default bw meets the target at 1/150 s (mean E {:.4}, \
         S {:.4}; Kang 0.0072, 0.9957) and beats Kang at 1/30 s (mean over his 12 points {:.3} \
         against 0.128). The step controller inflates this: on a cloth that strains ≈ 50 % it \
         rejects {rej} substeps over 18 frames (strain jump > 0.03), {subs:.1} accepted substeps \
         per frame instead of 5. With it off (exactly 5 substeps, the cost Kang pays): bw E {:.4}, \
         S {:.4}; bdf2 E {:.4}, S {:.4}; midpoint E {:.4}, S {:.4}. At 1/30 s with it \
         off, over 12 points: bw {:.3}, bdf2 {:.3}, midpoint {:.3} (Kang 0.128). The gap of the \
         earlier harness (0.336 against 0.0072) was the material, not the integrator.\n\
         - **First check point at 1/30 s** ≈ 1 for bw and bdf2 (and Kang's 1.033): one \
         backward-Euler step from rest moves g·h², twice the true ½·g·h², so E₁ = 1 whatever the \
         cloth; implicit midpoint moves ½·g·h² exactly (E₁ = 0).\n\
         - **Cotton** (≈ 2000× stiffer): no integrator meets the target at 1/150 s: bw {:.4}, bdf2 \
         {:.4}, midpoint {:.4}; not even at 1/1200 s (bw {:.4}, bdf2 {:.4}, midpoint {:.4}). \
         Kang's mean is dominated by a few check points and, in them, by a few vertices (E_i = \
         |error|²/|Δx_ref|² is unbounded where the reference barely moves): bw's worst check point \
         at 1/150 s is {worst} (E {worst_e:.3}); 5 % of the vertices carry {:.0} % of its E, the \
         median E_i is {median:.4}, and the worst vertex moves {:.2} mm in the reference \
         (mean {:.1} mm). The aggregate E at 1/150 s is bw {:.4}, bdf2 \
         {:.4}, midpoint {:.4}, and the bw and bdf2 references at 1/30000 s differ by E \
         {:.1e}. The CG tolerance (1e-7: bw {:.4}) and the controller (no rejection at 1/150 s) \
         change nothing; the default air damping gives bw E {:.4} against an air-damped reference. \
         What does matter is next.\n\
         - **Newton iterations**: on cotton most of the error at 1/150 s is the single Newton \
         step (BW linearise the stiff stretch forces once per substep), not the integrator's \
         order. A second iteration: bw E {:.4} (S {:.4}, aggregate {:.4}), bdf2 E {:.4} (S {:.4}, \
         aggregate {:.4}), midpoint E {:.4} (S {:.4}, first 12 points {:.4}, aggregate {:.4}), at \
         {:.0}/{:.0}/{:.0} CG iterations per frame instead of {:.0}/{:.0}/{:.0} (see the cost \
         table for wall time). A third adds little (bdf2 E {:.4}). On Kang's soft cloth the \
         second iteration changes nothing measurable at 1/150 s (bw {:.4}, bdf2 {:.4}).\n\
         - **Midpoint** (linearly implicit, one Newton step, experimental) has the lowest E on \
         both cloths at 1/150 s at the cost of bw, but on cotton at 1/30 s it needs the \
         controller ({} rejected substeps, {:.1} accepted per frame) and {}: not a safe default. \
         **bdf2** has {:.1}× (controller on) and {:.1}× (off) less E than bw at 1/150 s on Kang's \
         cloth at the same substeps, but more at 1/30 s on cotton (mean E {:.3} against bw's \
         {:.3}: it falls back to backward Euler after every change of the step).\n",
        e("kang", "bw + bw", 5),
        s("kang", "bw + bw", 5),
        e12("kang", "bw + bw", 1),
        e("kang", "bw, step controller off", 5),
        s("kang", "bw, step controller off", 5),
        e("kang", "bdf2, step controller off", 5),
        s("kang", "bdf2, step controller off", 5),
        e("kang", "midpoint, step controller off", 5),
        s("kang", "midpoint, step controller off", 5),
        e12("kang", "bw, step controller off", 1),
        e12("kang", "bdf2, step controller off", 1),
        e12("kang", "midpoint, step controller off", 1),
        e("cotton", "bw + bw", 5),
        e("cotton", "bw + bdf2", 5),
        e("cotton", "bw + midpoint", 5),
        e("cotton", "bw, smaller step", 40),
        e("cotton", "bdf2, smaller step", 40),
        e("cotton", "midpoint, smaller step", 40),
        share * 100.0,
        worst_dr * 1e3,
        mean_dr * 1e3,
        agg("cotton", "bw + bw", 5),
        agg("cotton", "bw + bdf2", 5),
        agg("cotton", "bw + midpoint", 5),
        cotton_spread,
        e(
            "cotton",
            &format!(
                "bw, CG tolerance 1e-7 (default {:.0e})",
                SimSettings::default().cg_tolerance
            ),
            5
        ),
        e(
            "cotton",
            &format!("bw, air damping {DEFAULT_AIR_DAMPING} (default)"),
            5
        ),
        e("cotton", "bw, 2 Newton iterations", 5),
        s("cotton", "bw, 2 Newton iterations", 5),
        agg("cotton", "bw, 2 Newton iterations", 5),
        e("cotton", "bdf2, 2 Newton iterations", 5),
        s("cotton", "bdf2, 2 Newton iterations", 5),
        agg("cotton", "bdf2, 2 Newton iterations", 5),
        e("cotton", "midpoint, 2 Newton iterations", 5),
        s("cotton", "midpoint, 2 Newton iterations", 5),
        e12("cotton", "midpoint, 2 Newton iterations", 5),
        agg("cotton", "midpoint, 2 Newton iterations", 5),
        cg("cotton", "bw, 2 Newton iterations", 5),
        cg("cotton", "bdf2, 2 Newton iterations", 5),
        cg("cotton", "midpoint, 2 Newton iterations", 5),
        cg("cotton", "bw + bw", 5),
        cg("cotton", "bw + bdf2", 5),
        cg("cotton", "bw + midpoint", 5),
        e("cotton", "bdf2, 3 Newton iterations", 5),
        e("kang", "bw, 2 Newton iterations", 5),
        e("kang", "bdf2, 2 Newton iterations", 5),
        get("cotton", "bw + midpoint", 1).map_or(0, |r| r.rejected),
        get("cotton", "bw + midpoint", 1).map_or(f64::NAN, |r| r.accepted),
        if failed_mid {
            "tears the cloth without it (strain > 10)"
        } else {
            "survives without it"
        },
        e("kang", "bw + bw", 5) / e("kang", "bw + bdf2", 5),
        e("kang", "bw, step controller off", 5) / e("kang", "bdf2, step controller off", 5),
        e("cotton", "bw + bdf2", 1),
        e("cotton", "bw + bw", 1),
    )
    .unwrap();
}
