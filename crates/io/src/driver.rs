//! A garment's driver (`garment.driver`): a PC2 or MDD point cache of its animated (not simulated)
//! positions, one sample per scene frame, sampled by LINEAR interpolation between frames (as
//! Blender's Mesh Cache modifier at sub-frames, and as the solver interpolates pin targets over a
//! frame).

use std::path::{Path, PathBuf};

use glam::{Mat4, Vec3};

use crate::axes::to_y_up;
use crate::cache_mdd::read_mdd_values;
use crate::cache_pc2::read_pc2_values;
use crate::error::{IoError, Result};
use crate::scene::{extension, DriverSpace, Up};

/// A loaded driver cache: every source vertex in Y-up, per sample.
pub struct Driver {
    /// The cache file (resolved).
    pub path: PathBuf,
    /// Scene frame of sample 0.
    pub frame_start: i32,
    /// World positions, or Y-up mesh-local positions carried by the garment's local frame.
    pub space: DriverSpace,
    /// `samples × source vertices` positions, Y-up.
    samples: Vec<Vec<Vec3>>,
}

/// A driver file's points per sample and its samples as stored (file convention, not checked).
pub(crate) type DriverValues = (usize, Vec<Vec<Vec3>>);

/// Reads and decodes the driver file `path` (PC2, or MDD by extension), unchecked: the first
/// half of [`Driver::load`], which can run on its own thread.
pub(crate) fn read_values(path: &Path) -> Result<DriverValues> {
    Ok(match extension(path).as_str() {
        "mdd" => {
            let c = read_mdd_values(path, false)?;
            (c.num_points, c.frames)
        }
        _ => {
            let c = read_pc2_values(path, false)?;
            (c.num_points, c.frames)
        }
    })
}

/// A garment's driver file and how to read it.
#[derive(Debug, Clone, Copy)]
pub struct DriverSource<'a> {
    /// The scene file errors name.
    pub scene: &'a Path,
    /// The field errors name (`garment[i].driver`).
    pub field: &'a str,
    /// The cache file (PC2, or MDD by extension).
    pub path: &'a Path,
    /// Source vertices of the garment's mesh: the points every sample must hold.
    pub num_points: usize,
    /// The file's axis convention.
    pub up: Up,
    /// Scene frame of sample 0.
    pub frame_start: i32,
    /// World positions, or mesh-local ones carried by the garment's local frame.
    pub space: DriverSpace,
}

impl Driver {
    /// Reads the driver `src` describes. Errors name its scene and field, with the sample and
    /// point of a bad value.
    pub fn load(src: &DriverSource) -> Result<Self> {
        Self::load_read(src, None)
    }

    /// [`Self::load`] with the file's [`read_values`] already made (on another thread while the
    /// mesh loaded), if `read` is given: the same driver or the same error.
    pub(crate) fn load_read(
        src: &DriverSource,
        read: Option<Result<DriverValues>>,
    ) -> Result<Self> {
        let &DriverSource {
            scene,
            field,
            path,
            num_points,
            up,
            frame_start,
            space,
        } = src;
        if !path.is_file() {
            return Err(IoError::invalid(
                scene,
                field,
                format!("file not found: {}", path.display()),
            ));
        }
        let wrap = |e: IoError| IoError::invalid(scene, field, e.to_string());
        let (points, frames) = read.unwrap_or_else(|| read_values(path)).map_err(wrap)?;
        if points != num_points {
            return Err(IoError::invalid(
                scene,
                field,
                format!(
                    "{} has {points} points per sample, the garment's mesh has {num_points} vertices \
                     (the driver must hold every source vertex in mesh-file order)",
                    path.display()
                ),
            ));
        }
        if frames.is_empty() {
            return Err(IoError::invalid(
                scene,
                field,
                format!("{} has no samples", path.display()),
            ));
        }
        for (s, frame) in frames.iter().enumerate() {
            if let Some(p) = frame.iter().position(|x| !x.is_finite()) {
                return Err(IoError::invalid(
                    scene,
                    field,
                    format!(
                        "{}: sample {s} (frame {}), point {p} is not finite: {}",
                        path.display(),
                        frame_start as i64 + s as i64,
                        frame[p]
                    ),
                ));
            }
        }
        let c = to_y_up(up);
        let samples = if up == Up::Y {
            frames
        } else {
            frames
                .into_iter()
                .map(|f| f.into_iter().map(|p| c.transform_point3(p)).collect())
                .collect()
        };
        Ok(Self {
            path: path.to_path_buf(),
            frame_start,
            space,
            samples,
        })
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether there are no samples (never true for a loaded driver).
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Scene frame of the last sample.
    pub fn frame_end(&self) -> i32 {
        self.frame_start + self.samples.len() as i32 - 1
    }

    /// Checks that scene frames `first..=last` are covered; the error names `scene`, `field`, the
    /// sample range and the frames needed.
    pub fn check_covers(&self, scene: &Path, field: &str, first: i32, last: i32) -> Result<()> {
        if first >= self.frame_start && last <= self.frame_end() {
            return Ok(());
        }
        Err(IoError::invalid(
            scene,
            field,
            format!(
                "{} has samples 0..{} = frames {}..{} (driver_frame_start = {}), but the bake \
                 evaluates frames {first}..{last}: {} sample(s) needed",
                self.path.display(),
                self.samples.len() - 1,
                self.frame_start,
                self.frame_end(),
                self.frame_start,
                last - first + 1
            ),
        ))
    }

    /// Positions of source vertices `sources` at (fractional) scene frame `frame`, linear between
    /// samples and held outside them; `local_to_world` (the garment's local frame at `frame`) is
    /// applied in `DriverSpace::Local`.
    pub fn positions_at(
        &self,
        frame: f32,
        local_to_world: Mat4,
        sources: impl Iterator<Item = u32>,
        out: &mut Vec<Vec3>,
    ) {
        out.clear();
        let n = self.samples.len();
        let s = (frame - self.frame_start as f32).clamp(0.0, (n - 1) as f32);
        let i0 = (s.floor() as usize).min(n - 1);
        let i1 = (i0 + 1).min(n - 1);
        let w = s - i0 as f32;
        let (a, b) = (&self.samples[i0], &self.samples[i1]);
        let m = match self.space {
            DriverSpace::World => None,
            DriverSpace::Local => Some(local_to_world),
        };
        out.extend(sources.map(|v| {
            let v = v as usize;
            let p = if w == 0.0 { a[v] } else { a[v].lerp(b[v], w) };
            m.map_or(p, |m| m.transform_point3(p))
        }));
    }
}
