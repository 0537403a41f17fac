//! `--report-substeps` / `[output] report_substeps`: every attempted substep of each frame in the
//! bake report (`tries`), checked against the frame's own counts: the accepted tries are its
//! substeps and fill its 1/fps seconds, the rejected ones are its rejections by cause, and their
//! CG iterations are its accepted and rejected iterations. Without the option there is no
//! `tries` key.

use serde_json::Value;

use crate::harness::Dir;

fn report(d: &Dir, args: &[&str]) -> Value {
    d.ok(args);
    serde_json::from_str(&std::fs::read_to_string(d.path("out/report.json")).unwrap())
        .expect("report JSON")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn tries_add_up_to_each_frames_counts() {
    let d = Dir::new();
    // The self-fold sample rejects substeps (strain jumps of the solve and of cloth–cloth
    // collision) around its fold.
    let scene = d.sample("self-fold");
    let r = report(&d, &["bake", &scene, "-o", "out", "--report-substeps"]);
    let fps = r["fps"].as_f64().unwrap();
    let frames = r["frames"].as_array().expect("frames");
    let (mut accepted, mut rejected) = (0, 0);
    for f in frames {
        let tries = f["tries"]
            .as_array()
            .unwrap_or_else(|| panic!("no tries: {f}"));
        let ok: Vec<&Value> = tries.iter().filter(|t| t["rejected"].is_null()).collect();
        let bad: Vec<&Value> = tries.iter().filter(|t| !t["rejected"].is_null()).collect();
        assert_eq!(ok.len() as u64, u(&f["substeps"]), "{f}");
        assert_eq!(bad.len() as u64, u(&f["rejected_substeps"]), "{f}");
        let its = |ts: &[&Value]| ts.iter().map(|t| u(&t["cg_iterations"])).sum::<u64>();
        assert_eq!(its(&ok), u(&f["cg_iterations"]), "{f}");
        assert_eq!(its(&bad), u(&f["rejected_cg_iterations"]), "{f}");
        for (cause, count) in f["rejections"].as_object().unwrap() {
            let listed = bad.iter().filter(|t| t["rejected"] == *cause).count() as u64;
            assert_eq!(listed, u(count), "{cause} in {f}");
        }
        if !ok.is_empty() {
            // The accepted substeps tile the frame.
            let span: f64 = ok.iter().map(|t| t["h"].as_f64().unwrap()).sum();
            assert!((span * fps - 1.0).abs() < 1e-5, "{span} s in {f}");
        }
        for t in tries {
            let h = t["h"].as_f64().unwrap();
            assert!(h > 0.0 && h * fps <= 1.0 + 1e-6, "{t}");
            assert!(t["seconds"].as_f64().unwrap() >= 0.0, "{t}");
            assert!(t["max_stretch"].as_f64().unwrap() >= 0.0, "{t}");
        }
        accepted += ok.len();
        rejected += bad.len();
    }
    assert!(
        accepted > 100 && rejected > 0,
        "{accepted} accepted, {rejected} rejected"
    );
    // The rest frame steps nothing.
    assert_eq!(frames[0]["tries"].as_array().map(Vec::len), Some(0));
}

#[test]
fn tries_only_when_asked_for() {
    let d = Dir::new();
    let scene = d.sample("cape-run");
    let r = report(&d, &["bake", &scene, "-o", "out", "--frames", "1..3"]);
    for f in r["frames"].as_array().unwrap() {
        assert!(f.get("tries").is_none(), "{f}");
    }
    // The scene key asks for them as the flag does.
    let text = std::fs::read_to_string(d.path(&scene)).unwrap();
    let text = text.replacen("[output]\n", "[output]\nreport_substeps = true\n", 1);
    assert!(text.contains("report_substeps"));
    d.write("cape-run/keyed.toml", text);
    let r = report(
        &d,
        &[
            "bake",
            "cape-run/keyed.toml",
            "-o",
            "out",
            "--frames",
            "1..3",
        ],
    );
    let frames = r["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3);
    for f in &frames[1..] {
        let tries = f["tries"]
            .as_array()
            .unwrap_or_else(|| panic!("no tries: {f}"));
        assert_eq!(
            tries.len() as u64,
            u(&f["substeps"]) + u(&f["rejected_substeps"])
        );
    }
}

/// A 64×64 sheet draped on the sphere with the AMG preconditioner: every solve converges. Its
/// V-cycle once went indefinite where the cloth lay on the sphere (an aggregate's translation
/// along the contact normal filtered out but for rounding): eight of these tries then ended with
/// rᵀM⁻¹r < 0, which MPCG took for convergence (`cg_residual` 0 after a few iterations), and now
/// reports as not converged.
#[test]
fn amg_converges_on_cloth_lying_on_a_sphere() {
    let d = Dir::new();
    d.ok(&[
        "sample",
        "sheet-on-sphere",
        "-o",
        "sos",
        "--resolution",
        "64",
    ]);
    let text = std::fs::read_to_string(d.path("sos/scene.toml")).unwrap();
    let text = text.replacen("[scene]\n", "[scene]\npreconditioner = \"amg\"\n", 1);
    assert!(text.contains("preconditioner = \"amg\""));
    d.write("sos/amg.toml", text);
    let r = report(
        &d,
        &[
            "bake",
            "sos/amg.toml",
            "-o",
            "out",
            "--frames",
            "1..24",
            "--report-substeps",
        ],
    );
    assert_eq!(r["preconditioner"], "amg");
    let mut in_contact = 0;
    for f in r["frames"].as_array().unwrap() {
        assert_eq!(u(&f["cg_failures"]), 0, "{f}");
        assert_eq!(u(&f["rejections"]["cg_not_converged"]), 0, "{f}");
        for t in f["tries"].as_array().unwrap() {
            let residual = t["cg_residual"].as_f64().unwrap_or(f64::NAN);
            // Converged to the default tolerance (1e-2), and not to an impossible zero.
            assert!(
                u(&t["cg_iterations"]) == 0 || (residual > 0.0 && residual <= 1e-2),
                "{t}"
            );
            in_contact += (u(&t["contacts"]) > 500) as usize;
        }
    }
    assert!(
        in_contact > 20,
        "{in_contact} tries with the sheet on the sphere"
    );
}
