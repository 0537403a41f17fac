//! `clothbake sample --list` and `clothbake sample NAME -o DIR [--resolution N]`.

use std::path::Path;

use clothbake_solver::Material;

use crate::cli::SampleArgs;
use crate::error::{CliError, Result};
use crate::fs_util::{create_dir, write_atomic};
use crate::samples::{self, SAMPLES};

pub fn run(args: &SampleArgs) -> Result<()> {
    if args.list {
        print_list();
        return Ok(());
    }
    let (Some(name), Some(dir)) = (&args.name, &args.output) else {
        return Err(CliError::Input(
            "sample: give a sample NAME and -o DIR, or --list".into(),
        ));
    };
    let written = write_sample(name, dir, args.resolution)?;
    outln!("wrote sample `{name}` to {}:", dir.display());
    for f in written {
        outln!("  {f}");
    }
    outln!(
        "bake it with: clothbake bake {}",
        dir.join("scene.toml").display()
    );
    Ok(())
}

/// Writes sample `name` (scene.toml and assets) into `dir`; returns the file names written.
pub fn write_sample(name: &str, dir: &Path, resolution: Option<u32>) -> Result<Vec<String>> {
    let sample = samples::find(name).ok_or_else(|| {
        let names: Vec<&str> = SAMPLES.iter().map(|s| s.name).collect();
        CliError::Input(format!(
            "sample: unknown sample {name:?} (one of: {})",
            names.join(", ")
        ))
    })?;
    if resolution.is_some() && sample.default_resolution.is_none() {
        return Err(CliError::Input(format!(
            "sample: {name} has no adjustable resolution"
        )));
    }
    create_dir(dir)?;
    let files = sample.files(resolution);
    let mut names = Vec::with_capacity(files.len());
    for f in files {
        write_atomic(&dir.join(&f.path), &f.bytes)?;
        names.push(f.path);
    }
    Ok(names)
}

fn print_list() {
    outln!("samples (clothbake sample NAME -o DIR [--resolution N]):");
    for s in SAMPLES {
        let res = s
            .default_resolution
            .map(|r| format!(" [resolution {r}]"))
            .unwrap_or_default();
        outln!("  {:<16} {}{res}", s.name, s.description);
    }
    outln!();
    outln!("material presets (garment `material`; any field can be overridden in the scene):");
    outln!(
        "  {:<10} {:>8} {:>15} {:>8} {:>9} {:>8} {:>8}",
        "name",
        "density",
        "stretch",
        "shear",
        "bend",
        "damp_s",
        "damp_b"
    );
    outln!(
        "  {:<10} {:>8} {:>15} {:>8} {:>9} {:>8} {:>8}",
        "",
        "kg/m2",
        "N/m (warp,weft)",
        "N/m",
        "N*m",
        "s",
        "s"
    );
    for (name, m) in Material::presets() {
        outln!(
            "  {:<10} {:>8} {:>15} {:>8} {:>9.1e} {:>8} {:>8}",
            name,
            m.density,
            format!("{},{}", m.stretch[0], m.stretch[1]),
            m.shear,
            m.bend,
            m.stretch_damping,
            m.bend_damping
        );
    }
}
