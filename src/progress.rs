//! Progress and diagnostics: an indicatif bar on a terminal, JSON lines with `--json`, quiet otherwise.
//!
//! With `--json` nothing but JSON objects (one per line) goes to stdout; without it, warnings and
//! errors go to stderr as text. The event shapes are the contract in docs/scene-format.md.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::report::SubstepTotals;
use crate::stage_times::BakeStages;

/// One line of `--json` output.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Event<'a> {
    Start {
        scene: &'a str,
        frames: usize,
        frame_start: i32,
        frame_end: i32,
        /// Frames simulated before the first written frame (scene pre-roll, or `--frames` starting
        /// after the scene's `frame_start`); the simulation starts at `frame_start - preroll`.
        preroll: u32,
        garments: &'a [String],
        threads: usize,
    },
    Frame(&'a FrameEvent),
    Warning {
        message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        frame: Option<i32>,
    },
    Error {
        message: &'a str,
        code: u8,
    },
    Done {
        outputs: &'a [String],
        #[serde(skip_serializing_if = "Option::is_none")]
        report: Option<&'a str>,
        seconds: f64,
        frames: usize,
        /// Seconds per stage, summed over the bake.
        stages: &'a BakeStages,
        /// Accepted and rejected substeps (by cause) and CG iterations, summed over the bake.
        substeps: &'a SubstepTotals,
    },
}

/// Progress of one baked frame (also the payload of the `frame` event).
#[derive(Debug, Clone, Serialize)]
pub struct FrameEvent {
    pub frame: i32,
    /// Cache samples finished so far in this bake (the rest frame counts as one).
    pub done: usize,
    /// Cache samples in this bake (`frame_end - frame_start + 1`).
    pub total: usize,
    pub substeps: u32,
    pub cg_iterations: u32,
    pub max_strain: f32,
    pub contacts: u32,
    /// Smallest signed distance (m) from a cloth vertex to a collider surface; null without colliders.
    pub min_distance: Option<f32>,
    /// Cloth triangle pairs that intersect at the end of the frame; null when not counted.
    pub self_intersections: Option<usize>,
    /// Cloth–cloth collisions left unresolved in this frame (see the report's `unresolved`).
    pub unresolved: u32,
    /// Wall time of this frame (s).
    pub seconds: f64,
    /// Estimated wall time left (s).
    pub eta_seconds: f64,
}

enum Mode {
    Bar(ProgressBar),
    Json,
    Quiet,
}

/// Where progress, warnings and errors go for one command.
pub struct Reporter {
    mode: Mode,
}

impl Reporter {
    /// JSON lines when `json`; a progress bar when stderr is a terminal; otherwise quiet.
    pub fn new(json: bool) -> Self {
        let mode = if json {
            Mode::Json
        } else if std::io::stderr().is_terminal() {
            Mode::Bar(ProgressBar::hidden())
        } else {
            Mode::Quiet
        };
        Reporter { mode }
    }

    fn emit(&self, event: &Event) {
        // One object per line, flushed at once so readers (the Blender add-on) see it immediately.
        if let Ok(line) = serde_json::to_string(event) {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }

    /// The bake begins: one cache sample per frame of `frame_start..=frame_end` (the first is the rest state).
    pub fn start(
        &mut self,
        scene: &str,
        frame_start: i32,
        frame_end: i32,
        preroll: u32,
        garments: &[String],
        threads: usize,
    ) {
        let frames = (frame_end - frame_start + 1).max(0) as usize;
        match &mut self.mode {
            Mode::Json => self.emit(&Event::Start {
                scene,
                frames,
                frame_start,
                frame_end,
                preroll,
                garments,
                threads,
            }),
            Mode::Bar(bar) => {
                let style = ProgressStyle::with_template(
                    "{prefix} [{bar:30}] frame {msg} ({per_sec}, ETA {eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
                let new_bar = ProgressBar::with_draw_target(
                    Some(frames as u64),
                    ProgressDrawTarget::stderr(),
                )
                .with_style(style)
                .with_prefix("baking")
                .with_message(format!("{frame_start}/{frame_end}"));
                new_bar.enable_steady_tick(Duration::from_millis(200));
                *bar = new_bar;
            }
            Mode::Quiet => {}
        }
    }

    /// One frame finished.
    pub fn frame(&self, ev: &FrameEvent, frame_end: i32) {
        match &self.mode {
            Mode::Json => self.emit(&Event::Frame(ev)),
            Mode::Bar(bar) => {
                bar.set_message(format!("{}/{}", ev.frame, frame_end));
                bar.set_position(ev.done as u64);
            }
            Mode::Quiet => {}
        }
    }

    pub fn warning(&self, message: &str, frame: Option<i32>) {
        match &self.mode {
            Mode::Json => self.emit(&Event::Warning { message, frame }),
            Mode::Bar(bar) => bar.suspend(|| eprintln!("{}", warning_text(message, frame))),
            Mode::Quiet => eprintln!("{}", warning_text(message, frame)),
        }
    }

    pub fn error(&self, message: &str, code: u8) {
        match &self.mode {
            Mode::Json => self.emit(&Event::Error { message, code }),
            Mode::Bar(bar) => {
                bar.abandon();
                eprintln!("error: {message}");
            }
            Mode::Quiet => eprintln!("error: {message}"),
        }
    }

    /// The bake finished; `outputs` are the files written.
    pub fn done(
        &self,
        outputs: &[String],
        report: Option<&str>,
        seconds: f64,
        frames: usize,
        stages: &BakeStages,
        substeps: &SubstepTotals,
    ) {
        match &self.mode {
            Mode::Json => self.emit(&Event::Done {
                outputs,
                report,
                seconds,
                frames,
                stages,
                substeps,
            }),
            Mode::Bar(bar) => {
                bar.finish_and_clear();
                print_summary(outputs, report, seconds, frames, stages, substeps);
            }
            Mode::Quiet => print_summary(outputs, report, seconds, frames, stages, substeps),
        }
    }
}

fn warning_text(message: &str, frame: Option<i32>) -> String {
    match frame {
        Some(f) => format!("warning: frame {f}: {message}"),
        None => format!("warning: {message}"),
    }
}

fn print_summary(
    outputs: &[String],
    report: Option<&str>,
    seconds: f64,
    frames: usize,
    stages: &BakeStages,
    substeps: &SubstepTotals,
) {
    let fps = if seconds > 0.0 {
        frames as f64 / seconds
    } else {
        0.0
    };
    outln!("baked {frames} frames in {seconds:.2} s ({fps:.1} frames/s)");
    for o in outputs {
        outln!("  {o}");
    }
    if let Some(r) = report {
        outln!("  report: {r}");
    }
    outln!("{}", substeps.summary());
    outln!("{}", stages.summary().trim_end());
}
