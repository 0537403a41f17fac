//! Resumable bakes (`--checkpoint-every`, `--resume`): killed with SIGKILL at random points and
//! resumed until done, a bake's caches are byte-identical to an uninterrupted one (its report has
//! the same frames and measurements); SIGTERM inside
//! a long frame writes a checkpoint inside the frame and exits 85; damaged, foreign and stale
//! checkpoints are refused with a named error (or, for a damaged newest one, the one before it is
//! used, with a warning), never a silent restart or a wrong cache.

#![cfg(unix)]

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::Dir;

const FORMATS: &str = "pc2,mdd,obj,usd,usdc";

/// xorshift64* for the kill delays (deterministic per seed).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Final-named caches (not staged) below `rel`, sorted.
fn caches(d: &Dir, rel: &str) -> Vec<String> {
    d.files_under(rel)
        .into_iter()
        .filter(|n| !n.starts_with(".clothbake-resume") && !n.ends_with(".json"))
        .collect()
}

fn read(d: &Dir, rel: &str) -> Vec<u8> {
    std::fs::read(d.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Asserts that every cache in `out` equals the reference in `reference`, byte for byte.
pub(crate) fn assert_same_caches(d: &Dir, reference: &str, out: &str) {
    let want = caches(d, reference);
    assert!(!want.is_empty());
    assert_eq!(caches(d, out), want, "cache files");
    for f in &want {
        assert!(
            read(d, &format!("{reference}/{f}")) == read(d, &format!("{out}/{f}")),
            "{out}/{f} differs from the uninterrupted bake"
        );
    }
    assert!(!d.path(out).join(".clothbake-resume").exists());
    // The report's frames (from the checkpoints' records and the last run's): every field but
    // the wall times, so the measurements and, for a frame resumed from a checkpoint inside it,
    // the substeps, rejections and CG iterations of the whole frame.
    let frames = |dir: &str| -> Vec<serde_json::Value> {
        let text = String::from_utf8(read(d, &format!("{dir}/report.json"))).expect("UTF-8");
        let report: serde_json::Value = serde_json::from_str(&text).expect("report JSON");
        let frames = report["frames"].as_array().expect("frames");
        frames
            .iter()
            .map(|f| {
                let mut f = f.as_object().expect("frame record").clone();
                f.remove("seconds");
                f.remove("stages");
                // With --report-substeps: every try but its wall time.
                if let Some(serde_json::Value::Array(tries)) = f.get_mut("tries") {
                    for t in tries {
                        t.as_object_mut().expect("try").remove("seconds");
                    }
                }
                serde_json::Value::Object(f)
            })
            .collect()
    };
    let want = frames(reference);
    assert!(!want.is_empty());
    let got = frames(out);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(
            g, w,
            "{out}/report.json: a frame differs from the uninterrupted bake's"
        );
    }
    assert_eq!(got.len(), want.len(), "{out}/report.json: frame count");
}

/// Bakes `scene` into `out`, killing the bake with SIGKILL after a random delay up to `kills`
/// times and resuming it each time, then lets it finish. Returns (kills, kills that hit a
/// checkpoint write).
fn bake_with_kills(
    d: &Dir,
    scene: &str,
    reference: &str,
    out: &str,
    kills: usize,
    rng: &mut Rng,
) -> (usize, usize) {
    let args = [
        "bake",
        scene,
        "-o",
        out,
        "--format",
        FORMATS,
        "--checkpoint-every",
        "1",
        "--resume",
    ];
    let (mut during_write, mut kills_done) = (0, 0);
    for k in 0..kills {
        let mut child = Command::new(env!("CARGO_BIN_EXE_clothbake"))
            .args(args)
            .current_dir(d.root())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start clothbake");
        let delay = 40 + rng.next() % 160;
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill(); // SIGKILL
        let status = child.wait().expect("wait");
        let stage = d.path(out).join(".clothbake-resume");
        let staged: Vec<String> = std::fs::read_dir(&stage)
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let torn = staged.iter().any(|n| n.starts_with(".checkpoint.part-"))
            || (staged.iter().any(|n| n == "checkpoint.prev")
                && !staged.iter().any(|n| n == "checkpoint"));
        during_write += usize::from(torn && status.code().is_none());
        eprintln!("{scene}: kill {k} after {delay} ms: {status}, torn checkpoint write: {torn}");
        if status.success() {
            return (kills_done, during_write); // finished before the kill
        }
        // Killed while its caches took their final names, some may have: each one complete.
        for f in caches(d, out) {
            let want = std::fs::read(d.path(reference).join(&f)).expect("reference cache");
            assert!(
                read(d, &format!("{out}/{f}")) == want,
                "a killed bake left {out}/{f} incomplete or wrong"
            );
        }
        kills_done += 1;
    }
    d.ok(&args);
    (kills_done, during_write)
}

#[test]
fn bakes_killed_at_random_points_resume_to_identical_caches() {
    let d = Dir::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut kills, mut during_write) = (0, 0);
    // Finer meshes than the samples' defaults, so that a bake lasts a few seconds.
    for (name, resolution) in [("self-fold", "56"), ("skirt-walk", "64"), ("twist", "32")] {
        d.ok(&["sample", name, "-o", name, "--resolution", resolution]);
        let scene = format!("{name}/scene.toml");
        let reference = format!("ref-{name}");
        d.ok(&["bake", &scene, "-o", &reference, "--format", FORMATS]);
        let out = format!("out-{name}");
        let (k, w) = bake_with_kills(&d, &scene, &reference, &out, 9, &mut rng);
        kills += k;
        during_write += w;
        assert_same_caches(&d, &reference, &out);
    }
    eprintln!("{kills} kills, {during_write} of them inside a checkpoint write");
    assert!(
        kills >= 20,
        "only {kills} kills landed before the bakes finished"
    );
}

/// What a SIGKILL between the two steps of a checkpoint rotation leaves (the newest renamed to
/// `.prev`, the new one only a temporary file), resumed to identical caches.
#[test]
fn a_kill_inside_a_checkpoint_write_resumes_from_the_one_before() {
    let d = Dir::new();
    let scene = d.sample("self-fold");
    d.ok(&["bake", &scene, "-o", "ref", "--format", FORMATS]);
    let args = [
        "bake", &scene, "-o", "out", "--format", FORMATS, "--frames", "1..20",
    ];
    // A bake stopped after frame 20 with checkpoints every 4 frames: .prev at 12, newest at 16.
    let mut stopped: Vec<&str> = args.to_vec();
    stopped.extend(["--checkpoint-every", "4"]);
    d.ok(&stopped);
    let stage = d.path("out/.clothbake-resume");
    assert!(
        !stage.exists(),
        "a finished bake removes its staging folder"
    );

    // Stop a full bake with SIGTERM after a few frames, then tear its newest checkpoint.
    let full = [
        "bake",
        &scene,
        "-o",
        "out2",
        "--format",
        FORMATS,
        "--checkpoint-every",
        "4",
    ];
    let r = run_until_signal(&d, &full, 10);
    assert_eq!(r, Some(85), "SIGTERM with checkpoints exits 85");
    let stage = d.path("out2/.clothbake-resume");
    std::fs::rename(stage.join("checkpoint"), stage.join("checkpoint.prev")).unwrap();
    std::fs::write(
        stage.join(".checkpoint.part-999999"),
        b"CLOTHBAKE-CKPT\n\0\x01",
    )
    .unwrap();
    let mut resume = full.to_vec();
    resume.push("--resume");
    d.ok(&resume);
    assert_same_caches(&d, "ref", "out2");
}

/// Runs `args --json`, sends SIGTERM once `frames` frame events arrived; returns the exit code.
pub(crate) fn run_until_signal(d: &Dir, args: &[&str], frames: usize) -> Option<i32> {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_clothbake"))
        .args(args)
        .arg("--json")
        .current_dir(d.root())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start clothbake");
    let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut seen = 0;
    for line in lines {
        let line = line.expect("stdout");
        if line.contains("\"event\":\"frame\"") {
            seen += 1;
            if seen == frames {
                Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .status()
                    .expect("kill");
            }
        }
    }
    child.wait().expect("wait").code()
}

/// SIGTERM inside a frame of many substeps: the checkpoint holds a state inside that frame, and
/// the resumed bake finishes it with the same caches as an uninterrupted bake, and the same
/// report: the frame's substep log (`--report-substeps`) lists the tries from before the stop.
#[test]
fn sigterm_inside_a_long_frame_checkpoints_inside_it() {
    let d = Dir::new();
    let scene = d.sample("self-fold");
    let text = std::fs::read_to_string(d.path(&scene)).unwrap();
    assert!(text.contains("substeps = "), "{text}");
    let slow = with_substeps(&text, 2000);
    d.write("slow/scene.toml", slow);
    for f in std::fs::read_dir(d.path("self-fold")).unwrap().flatten() {
        if f.file_name() != "scene.toml" {
            std::fs::copy(f.path(), d.path("slow").join(f.file_name())).unwrap();
        }
    }
    let args = [
        "bake",
        "slow/scene.toml",
        "--format",
        "pc2",
        "--frames",
        "1..3",
        "--checkpoint-every",
        "100",
        "--report-substeps",
    ];
    let mut reference = args.to_vec();
    reference.extend(["-o", "ref"]);
    d.ok(&reference);
    let mut out = args.to_vec();
    out.extend(["-o", "out"]);
    // Signalled as frame 1's progress event arrives, so inside frame 2 (2000 substeps, about
    // 0.3 s; a fixed 900 ms sleep came after the whole bake once the substeps got cheaper).
    assert_eq!(run_until_signal(&d, &out, 1), Some(85));
    let ck = read(&d, "out/.clothbake-resume/checkpoint");
    let payload: serde_json::Value = serde_json::from_slice(&ck[32..]).expect("JSON payload");
    let pos = payload["state"]["clock"]["substep_pos"].as_u64().unwrap();
    assert!(
        pos > 0,
        "the checkpoint is inside a frame: {}",
        payload["state"]["clock"]
    );
    let before = payload["unfinished_frame"]["tries"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(before > 0, "the checkpoint keeps the frame's tries so far");
    out.push("--resume");
    d.ok(&out);
    assert_same_caches(&d, "ref", "out");
}

/// Two SIGTERMs back to back (a scheduler signalling a process group and a wrapper passing it on)
/// are one request: the bake still writes its checkpoint and exits 85 (before the grace a second
/// signal stopped it at once with 130 and no checkpoint).
#[test]
fn a_repeated_signal_is_one_request() {
    let d = Dir::new();
    let scene = d.sample("self-fold");
    let text = std::fs::read_to_string(d.path(&scene)).unwrap();
    d.write(&scene, with_substeps(&text, 2000));
    let args = [
        "bake",
        &scene,
        "-o",
        "out",
        "--format",
        "pc2",
        "--checkpoint-every",
        "100",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_clothbake"))
        .args(args)
        .current_dir(d.root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start");
    std::thread::sleep(Duration::from_millis(700));
    let pid = child.id().to_string();
    Command::new("kill")
        .args(["-TERM", &pid, &pid])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(85));
    assert!(d.path("out/.clothbake-resume/checkpoint").is_file());
}

/// `text` (a scene file) with `substeps = n`.
fn with_substeps(text: &str, n: u32) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with("substeps = ") {
                format!("substeps = {n}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Damaged, foreign and stale checkpoints.
#[test]
fn bad_checkpoints_are_refused_by_name() {
    let d = Dir::new();
    let scene = d.sample("self-fold");
    d.ok(&["bake", &scene, "-o", "ref", "--format", "pc2"]);
    let args = [
        "bake",
        &scene,
        "-o",
        "out",
        "--format",
        "pc2",
        "--checkpoint-every",
        "3",
    ];
    assert_eq!(run_until_signal(&d, &args, 12), Some(85));
    let stage = d.path("out/.clothbake-resume");
    let newest = stage.join("checkpoint");
    let good = std::fs::read(&newest).unwrap();
    let prev = std::fs::read(stage.join("checkpoint.prev")).unwrap();
    let mut resume = args.to_vec();
    resume.push("--resume");

    // Damaged newest: the one before is used, with a warning naming the damage.
    let mut flipped = good.clone();
    let k = flipped.len() / 2;
    flipped[k] ^= 0x40;
    std::fs::write(&newest, &flipped).unwrap();
    let r = d.ok(&resume);
    assert!(r.stderr.contains("checksum"), "{}", r.stderr);
    assert_same_caches(&d, "ref", "out");

    // Both damaged: exit 2 naming the file and the damage; nothing written.
    assert_eq!(run_until_signal(&d, &args, 12), Some(85));
    let mut bad_prev = prev.clone();
    bad_prev.truncate(prev.len() - 10);
    std::fs::write(stage.join("checkpoint.prev"), &bad_prev).unwrap();
    std::fs::write(&newest, &flipped).unwrap();
    let r = d.run(&resume);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("checkpoint") && r.stderr.contains("checksum"),
        "{}",
        r.stderr
    );
    assert!(caches(&d, "out").is_empty() || caches(&d, "out") == caches(&d, "ref"));

    // Not a checkpoint at all.
    std::fs::write(&newest, b"hello").unwrap();
    std::fs::remove_file(stage.join("checkpoint.prev")).unwrap();
    let r = d.run(&resume);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("not a clothbake checkpoint"),
        "{}",
        r.stderr
    );

    // Foreign: a checkpoint of another bake (other frame range) is refused, not restarted.
    std::fs::write(&newest, &good).unwrap();
    let mut other = resume.clone();
    other.extend(["--frames", "1..30"]);
    let r = d.run(&other);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("other inputs or settings"),
        "{}",
        r.stderr
    );

    // Stale: the scene changed since the checkpoint.
    let text = std::fs::read_to_string(d.path(&scene)).unwrap();
    d.write(&scene, text.replace("fps = 24.0", "fps = 25.0"));
    let r = d.run(&resume);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("other inputs or settings"),
        "{}",
        r.stderr
    );
    assert!(
        newest.is_file(),
        "a refused checkpoint is left for the user"
    );
}
