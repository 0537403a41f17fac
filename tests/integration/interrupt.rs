//! SIGINT / SIGTERM during a bake: exit code 130, a JSON error event, no temporary file left and no
//! partial cache under a final name; an earlier complete bake in the same folder stays intact.

#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::Dir;

/// Every file below `dir` with its bytes (sorted by name).
fn snapshot(d: &Dir, rel: &str) -> Vec<(String, Vec<u8>)> {
    d.files_under(rel)
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(d.path(rel).join(&name)).expect("read output");
            (name, bytes)
        })
        .collect()
}

type Lines = std::io::Lines<BufReader<std::process::ChildStdout>>;

/// Starts `clothbake bake SCENE -o out --json` with `args` in `d`, stdout and stderr piped.
fn spawn_bake(d: &Dir, scene: &str, args: &[&str]) -> (Child, Lines) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_clothbake"))
        .args(["bake", scene, "-o", "out", "--json"])
        .args(args)
        .current_dir(d.root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start clothbake");
    let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    (child, lines)
}

/// Starts a long bake (3000 frames, minutes) into `out/` and waits for its second frame, when it is
/// streaming into temporary files (checked).
fn start_long_bake(d: &Dir, scene: &str, formats: &str) -> (Child, Lines) {
    let (child, mut lines) = spawn_bake(d, scene, &["--frames", "1..3000", "--format", formats]);
    let mut events: Vec<Value> = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("read stdout");
        let ev: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        let second_frame = ev["event"] == "frame" && ev["done"] == 2;
        events.push(ev);
        if second_frame {
            break;
        }
    }
    assert_eq!(
        events.last().map(|e| e["done"].clone()),
        Some(Value::from(2))
    );
    // One temporary file per single-file format, plus two OBJ frames when OBJ is written.
    let want = formats.split(',').filter(|f| *f != "obj").count()
        + 2 * usize::from(formats.contains("obj"));
    // (the bake goes on meanwhile: at least these)
    assert!(temp_files(d).len() >= want, "{:?}", temp_files(d));
    (child, lines)
}

/// The temporary files below `out/`.
fn temp_files(d: &Dir) -> Vec<String> {
    d.files_under("out")
        .into_iter()
        .filter(|n| n.contains(".part-"))
        .collect()
}

/// `kill SIGNAL pid`.
fn send(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

fn interrupt_a_bake(signal: &str) {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    let formats = "pc2,mdd,obj";
    // A complete earlier bake into the same folder.
    d.ok(&[
        "bake", &scene, "-o", "out", "--frames", "1..2", "--format", formats,
    ]);
    let before = snapshot(&d, "out");
    assert_eq!(before.len(), 5, "{:?}", d.files_under("out")); // pc2, mdd, 2 obj, report

    // A long bake into the same folder, stopped after its second frame.
    let (mut child, lines) = start_long_bake(&d, &scene, formats);
    send(&child, signal);
    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s.code();
        }
        assert!(Instant::now() < deadline, "clothbake ignored {signal}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.expect("read stdout")).expect("JSON line"))
        .collect();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("read stderr");
    assert_eq!(code, Some(130), "{signal}: {rest:?}\n{stderr}");
    let last = rest.last().expect("an error event");
    assert_eq!(last["event"], "error", "{rest:?}");
    assert_eq!(last["code"], 130);
    let message = last["message"].as_str().unwrap_or("");
    assert!(message.starts_with("interrupted after frame "), "{message}");
    // Every frame up to the last one written got its event (the event of frame 2 ended
    // start_long_bake), in order, before the error.
    let last_written: i64 = message["interrupted after frame ".len()..]
        .split(':')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{message}"));
    let later: Vec<i64> = rest
        .iter()
        .filter(|e| e["event"] == "frame")
        .map(|e| e["frame"].as_i64().expect("frame"))
        .collect();
    assert_eq!(later, (3..=last_written).collect::<Vec<_>>(), "{message}");
    assert!(
        message.contains("no cache or report was written"),
        "{message}"
    );
    assert!(!rest.iter().any(|e| e["event"] == "done"), "{rest:?}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    // Exactly the earlier bake remains, byte for byte: no temporary file, no partial cache.
    assert_eq!(snapshot(&d, "out"), before, "{:?}", d.files_under("out"));
}

#[test]
fn sigint_stops_a_bake_and_removes_its_temporary_files() {
    interrupt_a_bake("-INT");
}

#[test]
fn sigterm_stops_a_bake_and_removes_its_temporary_files() {
    interrupt_a_bake("-TERM");
}

#[test]
fn the_next_bake_removes_what_a_killed_bake_left() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    let (mut child, _lines) = start_long_bake(&d, &scene, "pc2,obj");
    send(&child, "-KILL"); // cannot be handled: its temporary files stay
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), None, "killed by a signal");
    let left = temp_files(&d);
    assert!(left.len() >= 3, "{left:?}");

    let r = d.ok(&[
        "bake", &scene, "-o", "out", "--frames", "1..2", "--format", "pc2,obj",
    ]);
    let want = format!(
        "warning: removed {} temporary file(s) left by a bake that was killed",
        left.len()
    );
    assert!(r.stderr.contains(&want), "{}", r.stderr);
    assert_eq!(
        d.files_under("out"),
        vec![
            "report.json",
            "sheet.0001.obj",
            "sheet.0002.obj",
            "sheet.pc2"
        ]
    );
}

/// A frame of 200000 substeps (minutes) is stopped within a substep of the signal, not at its end:
/// the solver checks the flag before every substep.
#[test]
fn a_signal_stops_a_long_frame_before_its_next_substep() {
    let d = Dir::new();
    d.ok(&["sample", "sheet-on-sphere", "-o", "s", "--resolution", "32"]);
    let scene = std::fs::read_to_string(d.path("s/scene.toml")).expect("read scene");
    assert!(scene.contains("substeps = 4"), "{scene}");
    d.write(
        "s/scene.toml",
        scene.replace("substeps = 4", "substeps = 200000"),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_clothbake"))
        .args([
            "bake",
            "s/scene.toml",
            "-o",
            "out",
            "--frames",
            "1..3",
            "--json",
        ])
        .current_dir(d.root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start clothbake");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    // Frame 1 is the rest frame; frame 2 is being simulated once its event is out.
    for line in lines.by_ref() {
        let ev: Value = serde_json::from_str(&line.expect("read stdout")).expect("JSON line");
        if ev["event"] == "frame" && ev["frame"] == 1 {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    send(&child, "-TERM");
    let sent = Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s.code();
        }
        assert!(
            sent.elapsed() < Duration::from_secs(20),
            "the long frame was not stopped"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(code, Some(130));
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.expect("read stdout")).expect("JSON line"))
        .collect();
    let last = rest.last().expect("an error event");
    assert_eq!(last["code"], 130, "{rest:?}");
    assert!(
        last["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("interrupted after frame 1:"),
        "{rest:?}"
    );
    assert!(temp_files(&d).is_empty(), "{:?}", temp_files(&d));
    assert!(!d.path("out/sheet.pc2").exists());
}
