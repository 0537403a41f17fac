//! Same input, byte-identical caches at any thread count.

use crate::harness::Dir;

fn bake_bytes(
    d: &Dir,
    scene: &str,
    threads: &str,
    out: &str,
    frames: &str,
) -> Vec<(String, Vec<u8>)> {
    d.ok(&[
        "bake",
        scene,
        "-o",
        out,
        "--threads",
        threads,
        "--frames",
        frames,
        "--format",
        "pc2,mdd,obj",
    ]);
    d.files_under(out)
        .into_iter()
        .filter(|f| !f.ends_with(".json"))
        .map(|f| {
            let bytes = std::fs::read(d.path(&format!("{out}/{f}"))).expect("read cache");
            (f, bytes)
        })
        .collect()
}

fn assert_deterministic(sample: &str, frames: &str) {
    assert_deterministic_with(sample, frames, None);
}

/// Like [`assert_deterministic`] with `[scene] preconditioner = NAME` added.
fn assert_deterministic_with(sample: &str, frames: &str, preconditioner: Option<&str>) {
    let d = Dir::new();
    let mut scene = d.sample(sample);
    if let Some(name) = preconditioner {
        let text = std::fs::read_to_string(d.path(&scene)).expect("read scene");
        let edited = text.replacen(
            "[scene]\n",
            &format!("[scene]\npreconditioner = \"{name}\"\n"),
            1,
        );
        assert_ne!(text, edited, "no [scene] table in {scene}");
        scene = format!("{sample}/scene-{name}.toml");
        d.write(&scene, edited);
    }
    let one = bake_bytes(&d, &scene, "1", "t1", frames);
    let two = bake_bytes(&d, &scene, "2", "t2", frames);
    assert!(!one.is_empty());
    assert_eq!(one.len(), two.len());
    for ((fa, a), (fb, b)) in one.iter().zip(&two) {
        assert_eq!(fa, fb);
        assert!(
            a == b,
            "{sample}: {fa} differs between --threads 1 and --threads 2"
        );
    }
}

#[test]
fn sheet_on_sphere_is_identical_at_1_and_2_threads() {
    assert_deterministic("sheet-on-sphere", "1..10");
}

/// The AMG preconditioner too (its hierarchy's products and reductions run in fixed row ranges).
#[test]
fn sheet_on_sphere_with_amg_is_identical_at_1_and_2_threads() {
    assert_deterministic_with("sheet-on-sphere", "1..10", Some("amg"));
}

#[test]
fn self_fold_is_identical_at_1_and_2_threads() {
    assert_deterministic("self-fold", "1..14"); // through the first self-contacts
}

#[test]
fn skirt_walk_is_identical_at_1_and_2_threads() {
    assert_deterministic("skirt-walk", "1..6");
}
