//! `clothbake batch SCENES_OR_DIRS... -o OUT`: bakes many shots, each in a child `clothbake bake`
//! process (so a failing or crashing shot cannot take the others down), `--jobs` at a time, into
//! `OUT/<shot>/`. A shot whose inputs, settings and clothbake version are unchanged since its
//! finished caches were written (recorded in `OUT/<shot>/.clothbake-done.json`) is skipped unless
//! `--force`. Ends with a summary table (or, with `--json`, JSON lines: `shot` per finished shot and
//! one `batch` summary). Exit codes: 0 every shot baked or was up to date, 1 a shot failed, 2 bad
//! usage (no scene found, two shots with one name), 130 interrupted (85 when every interrupted
//! shot wrote a checkpoint: rerun the same command to resume them).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clothbake_io::SceneFile;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::checkpoint::{self, EXIT_CHECKPOINTED};
use crate::cli::{BatchArgs, FormatArg};
use crate::error::{CliError, Result};
use crate::fs_util::{create_dir, write_atomic};
use crate::interrupt::{Interrupt, EXIT_INTERRUPTED};
use crate::scene_to_solver::material_presets;

/// Name of the record of a shot's finished bake, in its output folder.
pub const DONE_FILE: &str = ".clothbake-done.json";
/// With `--preview`: each shot's contact sheet and report page, in its output folder.
pub const PREVIEW_FILE: &str = "preview.png";
pub const REPORT_HTML_FILE: &str = "report.html";

/// One scene to bake.
#[derive(Debug, Clone)]
struct Shot {
    /// The scene file's stem, or its folder's name for `<folder>/scene.toml`.
    name: String,
    scene: PathBuf,
    out: PathBuf,
}

/// What happened to a shot.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "lowercase")]
enum Outcome {
    Baked,
    /// Up to date: its record matches the inputs and its caches are there.
    Skipped,
    Failed,
    Interrupted,
}

/// A shot's line in the summary.
#[derive(Debug, Clone, Serialize)]
struct ShotResult {
    shot: String,
    scene: String,
    output: String,
    outcome: Outcome,
    /// Exit code of its `clothbake bake` (None when it did not run).
    code: Option<i32>,
    /// Cache samples written.
    frames: Option<u64>,
    seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// `OUT/<shot>/.clothbake-done.json`.
#[derive(Debug, Serialize, Deserialize)]
struct DoneRecord {
    clothbake_version: String,
    fingerprint: String,
    /// Cache file names in the output folder.
    outputs: Vec<String>,
    frames: u64,
}

pub fn run(args: &BatchArgs, interrupt: &Interrupt) -> Result<()> {
    let shots = collect_shots(&args.scenes, &args.output)?;
    create_dir(&args.output)?;
    let jobs = (args.jobs as usize).clamp(1, shots.len());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match args.threads {
        0 => (cores / jobs).max(1),
        t => t,
    };
    let exe = std::env::current_exe().map_err(|e| {
        CliError::Output(format!("cannot find the clothbake executable to run: {e}"))
    })?;
    let next = AtomicUsize::new(0);
    let running: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    let results: Mutex<Vec<(usize, ShotResult)>> = Mutex::new(Vec::new());
    let started = Instant::now();
    let bar = progress_bar(args.json, shots.len());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                if interrupt.requested() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(shot) = shots.get(i) else { break };
                if let Some(b) = &bar {
                    b.set_message(format!("baking {}", shot.name));
                }
                let r = bake_shot(shot, args, threads, &exe, &running);
                if args.json {
                    let mut ev = serde_json::to_value(&r).unwrap_or(Value::Null);
                    ev["event"] = Value::from("shot");
                    outln!("{ev}");
                } else if let Some(b) = &bar {
                    b.inc(1);
                    b.println(summary_line(&r));
                }
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, r));
            });
        }
        // Forward a stop request to the running bakes: they stop before their next substep (and
        // write a checkpoint with --checkpoint-every).
        let mut forwarded = false;
        while results.lock().map_or(0, |r| r.len()) < shots.len() {
            if interrupt.requested() && !forwarded {
                for &pid in running.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                    terminate(pid);
                }
                forwarded = true;
            }
            if forwarded && running.lock().map_or(true, |r| r.is_empty()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    let results: Vec<ShotResult> = results.into_iter().map(|(_, r)| r).collect();
    let count = |o: fn(&Outcome) -> bool| results.iter().filter(|r| o(&r.outcome)).count();
    let baked = count(|o| matches!(o, Outcome::Baked));
    let skipped = count(|o| matches!(o, Outcome::Skipped));
    let failed = count(|o| matches!(o, Outcome::Failed));
    let interrupted = count(|o| matches!(o, Outcome::Interrupted));
    let not_started = shots.len() - results.len();
    if args.json {
        let ev = serde_json::json!({"event": "batch", "shots": results, "baked": baked,
            "skipped": skipped, "failed": failed, "interrupted": interrupted,
            "not_started": not_started, "seconds": started.elapsed().as_secs_f64()});
        outln!("{ev}");
    } else {
        print_table(&results);
        outln!(
            "{} shot(s): {baked} baked, {skipped} up to date, {failed} failed, {interrupted} interrupted, {not_started} not started ({:.1} s)",
            shots.len(),
            started.elapsed().as_secs_f64()
        );
    }
    if interrupt.requested() || interrupted > 0 {
        let all_checkpointed = results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Interrupted))
            .all(|r| r.code == Some(i32::from(EXIT_CHECKPOINTED)));
        return Err(CliError::BatchInterrupted {
            code: if all_checkpointed && interrupted > 0 {
                EXIT_CHECKPOINTED
            } else {
                EXIT_INTERRUPTED
            },
        });
    }
    if failed > 0 {
        return Err(CliError::BatchFailed { failed });
    }
    Ok(())
}

/// The shots named by `paths`: scene files, and in each folder its `*.toml` files and its
/// subfolders' `scene.toml` (name order).
fn collect_shots(paths: &[PathBuf], out: &Path) -> Result<Vec<Shot>> {
    let mut scenes = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| CliError::input(p, e))?
                .flatten()
                .map(|e| e.path())
                .collect();
            entries.sort();
            let before = scenes.len();
            for e in entries {
                if e.is_dir() && e.join("scene.toml").is_file() {
                    scenes.push(e.join("scene.toml"));
                } else if e.is_file() && e.extension().is_some_and(|x| x == "toml") {
                    scenes.push(e);
                }
            }
            if scenes.len() == before {
                return Err(CliError::input(
                    p,
                    "no scene files (*.toml, or <folder>/scene.toml) in this folder",
                ));
            }
        } else if p.is_file() {
            scenes.push(p.clone());
        } else {
            return Err(CliError::input(
                p,
                "not found (expected a scene file or a folder)",
            ));
        }
    }
    let mut shots: Vec<Shot> = Vec::with_capacity(scenes.len());
    for scene in scenes {
        let stem = scene
            .file_stem()
            .map_or(String::new(), |s| s.to_string_lossy().into_owned());
        let name = match (stem.as_str(), scene.parent().and_then(|d| d.file_name())) {
            ("scene", Some(dir)) => dir.to_string_lossy().into_owned(),
            _ => stem,
        };
        if let Some(other) = shots.iter().find(|s| s.name == name) {
            return Err(CliError::Input(format!(
                "{} and {} would both bake into {}: rename one",
                other.scene.display(),
                scene.display(),
                out.join(&name).display()
            )));
        }
        shots.push(Shot {
            out: out.join(&name),
            name,
            scene,
        });
    }
    Ok(shots)
}

/// The fingerprint of a shot's inputs and the settings that change its caches.
fn shot_fingerprint(shot: &Shot, args: &BatchArgs) -> std::result::Result<String, String> {
    let presets = material_presets();
    let file = SceneFile::read(&shot.scene, &presets).map_err(|e| e.to_string())?;
    let files = checkpoint::input_files(&file);
    checkpoint::fingerprint(&files, &format!("batch formats {:?}", args.format))
        .map_err(|e| e.to_string())
}

/// Whether `out` holds a finished bake of exactly these inputs.
fn up_to_date(out: &Path, fingerprint: &str) -> bool {
    let Ok(text) = std::fs::read(out.join(DONE_FILE)) else {
        return false;
    };
    let Ok(done) = serde_json::from_slice::<DoneRecord>(&text) else {
        return false;
    };
    done.fingerprint == fingerprint
        && done.clothbake_version == env!("CARGO_PKG_VERSION")
        && !done.outputs.is_empty()
        && done.outputs.iter().all(|f| out.join(f).is_file())
}

fn bake_shot(
    shot: &Shot,
    args: &BatchArgs,
    threads: usize,
    exe: &Path,
    running: &Mutex<Vec<u32>>,
) -> ShotResult {
    let started = Instant::now();
    let mut r = ShotResult {
        shot: shot.name.clone(),
        scene: shot.scene.display().to_string(),
        output: shot.out.display().to_string(),
        outcome: Outcome::Failed,
        code: None,
        frames: None,
        seconds: 0.0,
        error: None,
    };
    let fingerprint = match shot_fingerprint(shot, args) {
        Ok(f) => f,
        Err(e) => {
            r.code = Some(2);
            r.error = Some(e);
            r.seconds = started.elapsed().as_secs_f64();
            return r;
        }
    };
    let review = [PREVIEW_FILE, REPORT_HTML_FILE];
    let reviewed = !args.preview || review.iter().all(|f| shot.out.join(f).is_file());
    if !args.force && reviewed && up_to_date(&shot.out, &fingerprint) {
        r.outcome = Outcome::Skipped;
        r.error = Some("up to date".into());
        return r;
    }
    // A shot being rebaked is not up to date until it finishes.
    let _ = std::fs::remove_file(shot.out.join(DONE_FILE));
    let mut cmd = Command::new(exe);
    cmd.arg("bake")
        .arg(&shot.scene)
        .arg("-o")
        .arg(&shot.out)
        .args(["--json", "--threads", &threads.to_string()]);
    if let Some(f) = &args.format {
        let list: Vec<&str> = f.iter().map(|f| f.name()).collect();
        cmd.args(["--format", &list.join(",")]);
    }
    if let Some(n) = args.checkpoint_every {
        cmd.args(["--checkpoint-every", &n.to_string(), "--resume"]);
    }
    if args.preview {
        cmd.arg("--preview")
            .arg(shot.out.join(PREVIEW_FILE))
            .arg("--report-html")
            .arg(shot.out.join(REPORT_HTML_FILE));
    }
    // Its own process group: a Ctrl+C at the terminal reaches the batch alone, which forwards one
    // SIGTERM (a second signal would make the bake stop at once, without its checkpoint).
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) => {
            r.error = Some(format!("cannot run {}: {e}", exe.display()));
            return r;
        }
    };
    running
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(child.id());
    let mut stderr = child.stderr.take();
    let stderr_text = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_string(&mut text);
        }
        text
    });
    let (mut outputs, mut error) = (Vec::new(), None);
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            let Ok(ev) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            match ev["event"].as_str() {
                Some("done") => {
                    r.frames = ev["frames"].as_u64();
                    outputs = ev["outputs"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default();
                }
                Some("error") => error = ev["message"].as_str().map(String::from),
                _ => {}
            }
        }
    }
    let status = child.wait();
    running
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&p| p != child.id());
    let stderr_text = stderr_text.join().unwrap_or_default();
    r.seconds = started.elapsed().as_secs_f64();
    let code = status.ok().and_then(|s| s.code());
    r.code = code;
    match code {
        Some(0) => {
            let names: Vec<String> = outputs
                .iter()
                .filter_map(|p| {
                    Path::new(p)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                })
                .collect();
            let record = DoneRecord {
                clothbake_version: env!("CARGO_PKG_VERSION").to_string(),
                fingerprint,
                outputs: names,
                frames: r.frames.unwrap_or(0),
            };
            let text = serde_json::to_vec_pretty(&record).unwrap_or_default();
            match write_atomic(&shot.out.join(DONE_FILE), &text) {
                Ok(()) => r.outcome = Outcome::Baked,
                Err(e) => r.error = Some(e.to_string()),
            }
        }
        Some(c) if c == i32::from(EXIT_CHECKPOINTED) || c == i32::from(EXIT_INTERRUPTED) => {
            r.outcome = Outcome::Interrupted;
            r.error = error;
        }
        _ => {
            r.error = Some(error.unwrap_or_else(|| {
                let last = stderr_text.lines().last().unwrap_or("").trim().to_string();
                match code {
                    Some(c) => format!("clothbake bake exited with {c}: {last}"),
                    None => format!("clothbake bake was killed by a signal: {last}"),
                }
            }));
        }
    }
    r
}

/// Asks a running bake to stop before its next substep (SIGTERM; elsewhere nothing).
fn terminate(pid: u32) {
    #[cfg(unix)]
    {
        // Sending a signal to a child we started; failure (it just exited) is harmless.
        let _ = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status();
    }
    #[cfg(not(unix))]
    let _ = pid;
}

fn progress_bar(json: bool, shots: usize) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if json || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(shots as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} shots {elapsed} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}

fn summary_line(r: &ShotResult) -> String {
    format!(
        "{}: {}{}",
        r.shot,
        outcome_name(&r.outcome),
        r.error
            .as_deref()
            .map_or(String::new(), |e| format!(" ({e})"))
    )
}

fn outcome_name(o: &Outcome) -> &'static str {
    match o {
        Outcome::Baked => "baked",
        Outcome::Skipped => "up to date",
        Outcome::Failed => "FAILED",
        Outcome::Interrupted => "interrupted",
    }
}

fn print_table(results: &[ShotResult]) {
    let w = results
        .iter()
        .map(|r| r.shot.len())
        .max()
        .unwrap_or(4)
        .max(4);
    outln!(
        "{:<w$}  {:<11}  {:>6}  {:>8}  error",
        "shot",
        "outcome",
        "frames",
        "seconds"
    );
    for r in results {
        outln!(
            "{:<w$}  {:<11}  {:>6}  {:>8.2}  {}",
            r.shot,
            outcome_name(&r.outcome),
            r.frames.map_or("-".to_string(), |f| f.to_string()),
            r.seconds,
            match (&r.outcome, &r.error) {
                (Outcome::Skipped, _) => "",
                (_, Some(e)) => e.as_str(),
                _ => "",
            }
        );
    }
}

impl FormatArg {
    /// The `--format` spelling.
    pub fn name(&self) -> &'static str {
        match self {
            FormatArg::Pc2 => "pc2",
            FormatArg::Mdd => "mdd",
            FormatArg::Obj => "obj",
            FormatArg::Usd => "usd",
            FormatArg::Usdc => "usdc",
        }
    }
}
