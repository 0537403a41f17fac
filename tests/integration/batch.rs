//! `clothbake batch`: many shots, each baked as by `bake`; a failed shot does not stop the others;
//! unchanged shots are skipped (changed inputs and `--force` bake again); a summary table and JSON
//! events; exit codes 0 / 1 / 2 / 85.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::harness::Dir;

/// Two good shots in `shots/` (folders with a scene.toml) and, if `bad`, a scene with an unknown
/// material preset.
fn shots(d: &Dir, bad: bool) {
    d.ok(&["sample", "self-fold", "-o", "shots/fold"]);
    d.ok(&["sample", "flag-wind", "-o", "shots/flag"]);
    if bad {
        let text = std::fs::read_to_string(d.path("shots/flag/scene.toml")).unwrap();
        assert!(text.contains("material = \"silk\""), "{text}");
        d.write(
            "shots/flag/broken.toml",
            text.replace("material = \"silk\"", "material = \"velvet\""),
        );
    }
}

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

#[test]
fn a_failed_shot_does_not_stop_the_others_and_caches_equal_bake() {
    let d = Dir::new();
    shots(&d, true);
    let r = d.run(&[
        "batch",
        "shots",
        "shots/flag/broken.toml",
        "-o",
        "out",
        "--jobs",
        "2",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("broken"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("garment[0].material: unknown preset \"velvet\""),
        "the table names the failed shot's error: {}",
        r.stdout
    );
    assert!(
        r.stdout.contains("2 baked") && r.stdout.contains("1 failed"),
        "{}",
        r.stdout
    );
    for (shot, cache) in [("fold", "sheet.pc2"), ("flag", "flag.pc2")] {
        d.ok(&[
            "bake",
            &format!("shots/{shot}/scene.toml"),
            "-o",
            &format!("ref/{shot}"),
        ]);
        let a = std::fs::read(d.path(&format!("out/{shot}/{cache}"))).unwrap();
        let b = std::fs::read(d.path(&format!("ref/{shot}/{cache}"))).unwrap();
        assert!(a == b, "{shot}: batch cache differs from bake's");
    }
}

#[test]
fn unchanged_shots_are_skipped_changed_and_forced_ones_baked() {
    let d = Dir::new();
    shots(&d, false);
    let json = |extra: &[&str]| {
        let mut args = vec!["batch", "shots", "-o", "out", "--json"];
        args.extend(extra);
        let r = d.ok(&args);
        let ev = events(&r.stdout);
        let last = ev.last().expect("batch event").clone();
        assert_eq!(last["event"], "batch");
        let shots: Vec<Value> = ev
            .iter()
            .filter(|e| e["event"] == "shot")
            .cloned()
            .collect();
        assert_eq!(shots.len(), 2);
        let outcome = |name: &str| {
            shots
                .iter()
                .find(|s| s["shot"] == name)
                .map(|s| s["outcome"].as_str().unwrap_or("").to_string())
                .unwrap_or_default()
        };
        (outcome("fold"), outcome("flag"), last)
    };
    let (fold, flag, last) = json(&[]);
    assert_eq!((fold.as_str(), flag.as_str()), ("baked", "baked"));
    assert_eq!(last["baked"], 2);
    let cache = std::fs::read(d.path("out/fold/sheet.pc2")).unwrap();

    let (fold, flag, _) = json(&[]);
    assert_eq!((fold.as_str(), flag.as_str()), ("skipped", "skipped"));

    // A changed input (the flag's mesh) bakes that shot again, and only that one.
    let mesh = d.path("shots/flag/flag.obj");
    let mut text = std::fs::read_to_string(&mesh).unwrap();
    text.push_str("# touched\n");
    std::fs::write(&mesh, text).unwrap();
    let (fold, flag, _) = json(&[]);
    assert_eq!((fold.as_str(), flag.as_str()), ("skipped", "baked"));

    // A missing cache makes a shot stale too; --force bakes everything.
    std::fs::remove_file(d.path("out/fold/sheet.pc2")).unwrap();
    let (fold, flag, _) = json(&[]);
    assert_eq!((fold.as_str(), flag.as_str()), ("baked", "skipped"));
    assert!(std::fs::read(d.path("out/fold/sheet.pc2")).unwrap() == cache);
    let (fold, flag, _) = json(&["--force"]);
    assert_eq!((fold.as_str(), flag.as_str()), ("baked", "baked"));
}

#[test]
fn bad_usage_exits_2() {
    let d = Dir::new();
    let r = d.run(&["batch", "nowhere", "-o", "out"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("nowhere") && r.stderr.contains("not found"),
        "{}",
        r.stderr
    );
    std::fs::create_dir_all(d.path("empty")).unwrap();
    let r = d.run(&["batch", "empty", "-o", "out"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no scene files"), "{}", r.stderr);
    shots(&d, false);
    d.write(
        "more/fold.toml",
        std::fs::read(d.path("shots/fold/scene.toml")).unwrap(),
    );
    let r = d.run(&["batch", "shots", "more", "-o", "out"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("would both bake into"), "{}", r.stderr);
    assert!(!d.path("out/fold").exists(), "nothing baked on bad usage");
}

/// SIGTERM to the batch: the running shot checkpoints, the batch exits 85; the same command again
/// resumes it to the caches of an uninterrupted bake.
#[cfg(unix)]
#[test]
fn an_interrupted_batch_resumes_on_rerun() {
    let d = Dir::new();
    d.ok(&["sample", "twist", "-o", "shots/twist", "--resolution", "32"]);
    d.ok(&["bake", "shots/twist/scene.toml", "-o", "ref"]);
    let args = [
        "batch",
        "shots",
        "-o",
        "out",
        "--checkpoint-every",
        "4",
        "--json",
    ];
    let child = Command::new(env!("CARGO_BIN_EXE_clothbake"))
        .args(args)
        .current_dir(d.root())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the shot's first checkpoint, then stop the batch.
    let ck = d.path("out/twist/.clothbake-resume/checkpoint");
    for _ in 0..600 {
        if ck.is_file() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ck.is_file(), "no checkpoint appeared");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(85));
    let ev = events(&String::from_utf8_lossy(&out.stdout));
    let batch = ev
        .iter()
        .find(|e| e["event"] == "batch")
        .expect("batch event");
    assert_eq!(batch["interrupted"], 1, "{batch}");
    assert_eq!(ev.last().unwrap()["code"], 85);
    assert!(
        d.files_under("out/twist")
            .iter()
            .all(|f| !f.ends_with(".pc2") || f.starts_with(".clothbake-resume")),
        "no final cache of the interrupted shot: {:?}",
        d.files_under("out/twist")
    );
    let r = d.ok(&args);
    let ev = events(&r.stdout);
    assert_eq!(ev.last().unwrap()["baked"], 1);
    let cache = |p: &str| std::fs::read(d.path(p)).unwrap();
    let name = std::fs::read_dir(d.path("ref"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".pc2"))
        .unwrap();
    assert!(cache(&format!("ref/{name}")) == cache(&format!("out/twist/{name}")));
}
