//! Command-line arguments (clap derive). Doc comments here are the `--help` text: written for the
//! terminal (`OUTPUT/<shot>/`, `[output]`), not as rustdoc markdown, hence the allows below.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Bake cloth on animated characters into point caches (PC2, MDD, OBJ sequences, USD).
///
/// Exit codes: 0 success, 2 bad usage or bad input (the message names the file and the field),
/// 1 the simulation failed, 130 interrupted (Ctrl+C, SIGTERM or SIGHUP: the bake stops before its
/// next substep and removes its temporary files; no cache is written), 85 interrupted after writing
/// a checkpoint (`bake --checkpoint-every`; run the same command with --resume to continue).
#[derive(Debug, Parser)]
#[command(name = "clothbake", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate a scene and write one point cache per garment.
    ///
    /// With no SCENE, bakes the built-in `dress-walk` sample (a 10k-vertex dress on a walking
    /// character) into ./clothbake-out. Ends with the time spent per stage. Exit codes: 0 done, 1 the simulation failed (frame and garment named),
    /// 2 bad usage or input, 130 interrupted (Ctrl+C/SIGTERM/SIGHUP: stops before the next substep,
    /// writes no cache and removes its temporary files), 85 interrupted with --checkpoint-every
    /// (a checkpoint was written first: rerun with --resume).
    Bake(BakeArgs),
    /// Bake many shots (scene files, or folders of them) into OUTPUT/<shot>/, each in its own
    /// process, JOBS at a time.
    ///
    /// A failed shot does not stop the others; a shot whose inputs, settings and clothbake version
    /// are unchanged since its caches were finished is skipped (unless --force). Ends with a
    /// summary table (--json: one `shot` event per shot and a `batch` summary). Exit codes: 0 every
    /// shot baked or up to date, 1 a shot failed, 2 bad usage, 130 interrupted (85 when every
    /// interrupted shot wrote a checkpoint: rerun to resume).
    Batch(BatchArgs),
    /// Describe a mesh, character or cache file (.glb, .gltf, .obj, .pc2, .mdd, .usda, OBJ
    /// sequence) or a scene (.toml).
    Inspect(InspectArgs),
    /// Validate a scene file and everything it references, without baking.
    Check(CheckArgs),
    /// Convert a point cache between PC2, MDD, OBJ sequences and USD, frame by frame.
    ///
    /// OBJ and USD outputs need a topology: the input's own (OBJ sequence, USD), --mesh or
    /// --scene with --garment. Exit codes: 0 done, 2 bad usage or input (file and element named;
    /// nothing is written), 1 the output could not be written.
    Convert(ConvertArgs),
    /// List the sample scenes, or write one (scene file and its assets) to a folder.
    Sample(SampleArgs),
}

#[derive(Debug, Args)]
pub struct BakeArgs {
    /// Scene file (TOML). Default: the built-in `dress-walk` sample.
    pub scene: Option<PathBuf>,
    /// Output folder (overrides the scene's [output] dir).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Frame range to write, inclusive, e.g. `1..24`. The simulation always starts from the
    /// scene's frame_start − preroll; frames before A are simulated but not written.
    #[arg(long, value_name = "A..B", value_parser = parse_frame_range)]
    pub frames: Option<FrameRange>,
    /// Worker threads; 0 = all cores. Caches are byte-identical at any thread count.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Cache formats, comma separated: pc2, mdd, obj, usd, usdc (overrides the scene's [output] formats).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub format: Option<Vec<FormatArg>>,
    /// Write the bake report (JSON) to FILE (overrides the scene's [output] report). Without it,
    /// the scene's report goes next to the caches when -o is given.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// List every attempted substep of each frame in the bake report (`tries`: length, rejection
    /// cause, CG iterations, stretch, contacts, seconds), as the scene's [output]
    /// report_substeps = true does: where a slow frame's time went.
    #[arg(long)]
    pub report_substeps: bool,
    /// Write the bake report as a self-contained HTML page with per-frame plots (substeps, CG
    /// iterations, max strain, contacts, self-contacts, time per stage) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report_html: Option<PathBuf>,
    /// Write a contact sheet (PNG) of up to 6 evenly spaced output frames to FILE: shaded cloth,
    /// body proxies as outlines, frame numbers; 320×320 pixels per frame, 3 per row.
    #[arg(long, value_name = "FILE")]
    pub preview: Option<PathBuf>,
    /// Print progress, warnings and errors as one JSON object per line on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write a checkpoint every N simulated frames (in OUTPUT/.clothbake-resume/, beside the
    /// staged caches), so that a killed bake can continue with --resume. SIGTERM/SIGINT/SIGHUP
    /// then also write one at the next substep boundary and exit with code 85.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub checkpoint_every: Option<u32>,
    /// Continue from the newest valid checkpoint in the output folder (start from the first
    /// frame if there is none); the caches are byte-identical to an uninterrupted bake. A
    /// checkpoint of other inputs or settings is an error.
    #[arg(long)]
    pub resume: bool,
}

#[derive(Debug, Args)]
pub struct BatchArgs {
    /// Scene files, or folders holding scene files (*.toml) or shot folders (<shot>/scene.toml).
    #[arg(required = true, value_name = "SCENES_OR_DIRS")]
    pub scenes: Vec<PathBuf>,
    /// Output folder: each shot's caches and report go to OUTPUT/<shot>/ (the scene file's name,
    /// or its folder's for <shot>/scene.toml).
    #[arg(short = 'o', long = "output", value_name = "OUTPUT")]
    pub output: PathBuf,
    /// Shots baked at the same time.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub jobs: u64,
    /// Solver threads per shot; 0 = the cores divided among the jobs.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Bake every shot, also those whose caches are up to date.
    #[arg(long)]
    pub force: bool,
    /// Cache formats for every shot (overrides the scenes' [output] formats).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub format: Option<Vec<FormatArg>>,
    /// Checkpoint every shot every N frames and resume shots that were interrupted (see `bake
    /// --checkpoint-every` and `--resume`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub checkpoint_every: Option<u32>,
    /// Also write each shot's review files: OUTPUT/<shot>/preview.png (see `bake --preview`) and
    /// OUTPUT/<shot>/report.html (see `bake --report-html`).
    #[arg(long)]
    pub preview: bool,
    /// Print one JSON object per line on stdout: `shot` per finished shot, then `batch`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// File to describe: .glb, .gltf, .obj, .pc2, .mdd, .usda, an OBJ sequence (folder or
    /// NAME.####.obj) or a .toml scene. Caches list each frame's bounds and non-finite values.
    pub file: PathBuf,
    /// Print the description as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Input cache: .pc2, .mdd, .usda (the layout clothbake writes), a folder of OBJ frames or
    /// NAME.####.obj.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// Output: .pc2, .mdd, .usda (.usd is written as text too), NAME.####.obj or a folder/ (OBJ
    /// frames named after --garment or the input).
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
    /// Topology for OBJ/USD output: an .obj, or a .glb/.gltf with one mesh node, with the cache's
    /// vertex count and order.
    #[arg(long, value_name = "MESH", conflicts_with = "scene")]
    pub mesh: Option<PathBuf>,
    /// Scene whose garment --garment gives the topology, fps and up.
    #[arg(long, value_name = "SCENE", requires = "garment")]
    pub scene: Option<PathBuf>,
    /// Garment of --scene (and the USD prim / OBJ name).
    #[arg(long, value_name = "NAME")]
    pub garment: Option<String>,
    /// Frames per second where the input does not say (PC2, OBJ; default: the scene's, the
    /// input's, else 24).
    #[arg(long, value_name = "FPS", value_parser = parse_fps)]
    pub fps: Option<f32>,
    /// USD upAxis of the output (positions are not converted): y or z (default: the scene's
    /// output.up, the input's, else y).
    #[arg(long, value_name = "AXIS", value_parser = ["y", "z"])]
    pub up: Option<String>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn parse_fps(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!(
            "expected a positive number of frames per second, got {s:?}"
        )),
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scene file (TOML) to validate.
    pub scene: PathBuf,
    /// Print the result as JSON events (like `bake --json`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SampleArgs {
    /// Sample to write (see --list).
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// List the samples and the material presets.
    #[arg(long, conflicts_with = "name")]
    pub list: bool,
    /// Folder to write the scene and its assets into (created if missing).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        required_unless_present = "list"
    )]
    pub output: Option<PathBuf>,
    /// Garment mesh resolution (quads along the longer side) for samples that generate meshes.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=512))]
    pub resolution: Option<u32>,
}

/// Cache formats the bake can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Point Cache 2 (little-endian; Blender, 3ds Max, Houdini, Maya via plug-ins).
    Pc2,
    /// LightWave MDD (big-endian; Blender, Cinema 4D, Houdini, LightWave).
    Mdd,
    /// One Wavefront OBJ per frame: <garment>.<frame:04>.obj.
    Obj,
    /// USD layer <garment>.usda: a UsdGeomMesh with time-sampled points (pxr, Blender, Houdini,
    /// Maya, Omniverse).
    Usd,
    /// The same USD layer in the binary crate format, <garment>.usdc: a third of the size, opened
    /// without parsing text.
    Usdc,
}

/// An inclusive frame range `A..B` (also accepts `A..=B` and `A-B`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRange {
    pub start: i32,
    pub end: i32,
}

/// Parses `A..B`, `A..=B` or `A-B` (non-negative A) with A <= B.
pub fn parse_frame_range(s: &str) -> Result<FrameRange, String> {
    let (a, b) = if let Some((a, b)) = s.split_once("..=") {
        (a, b)
    } else if let Some((a, b)) = s.split_once("..") {
        (a, b)
    } else if let Some((a, b)) = s.split_once('-').filter(|(a, _)| !a.is_empty()) {
        (a, b)
    } else {
        return Err(format!("expected A..B (e.g. 1..48), got {s:?}"));
    };
    let parse = |t: &str| {
        t.trim()
            .parse::<i32>()
            .map_err(|_| format!("expected A..B with integer frames, got {s:?}"))
    };
    let (start, end) = (parse(a)?, parse(b)?);
    if end < start {
        return Err(format!("the range {s:?} ends before it starts"));
    }
    Ok(FrameRange { start, end })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn frame_ranges_parse() {
        assert_eq!(
            parse_frame_range("1..48"),
            Ok(FrameRange { start: 1, end: 48 })
        );
        assert_eq!(
            parse_frame_range("3..=5"),
            Ok(FrameRange { start: 3, end: 5 })
        );
        assert_eq!(
            parse_frame_range("-2..4"),
            Ok(FrameRange { start: -2, end: 4 })
        );
        assert_eq!(
            parse_frame_range("10-12"),
            Ok(FrameRange { start: 10, end: 12 })
        );
        assert!(parse_frame_range("5..2").is_err());
        assert!(parse_frame_range("a..b").is_err());
        assert!(parse_frame_range("7").is_err());
    }
}
