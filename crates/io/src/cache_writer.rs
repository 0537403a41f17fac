//! All the caches of one garment at once: `<dir>/<name>.pc2`, `.mdd` and `.<frame:04>.obj`,
//! streamed frame by frame (memory ∝ vertex count).

use std::path::{Path, PathBuf};

use glam::Vec3;

use crate::cache_mdd::MddWriter;
use crate::cache_obj_seq::ObjSeqWriter;
use crate::cache_pc2::Pc2Writer;
use crate::error::{IoError, Result};
use crate::scene::Format;

/// Frame range and rate of a bake, for cache headers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheTiming {
    /// Scene frame of sample 0.
    pub frame_start: i32,
    /// Number of samples.
    pub num_frames: usize,
    /// Frames per second.
    pub fps: f32,
}

/// The writers of one garment.
pub struct GarmentCacheWriter {
    pc2: Option<Pc2Writer>,
    mdd: Option<MddWriter>,
    obj: Option<ObjSeqWriter>,
    next_frame: i32,
}

impl GarmentCacheWriter {
    /// Creates `dir` if needed and starts one writer per format. `faces` (source-order vertex
    /// indices) are used by the OBJ sequence.
    pub fn create(
        dir: &Path,
        name: &str,
        formats: &[Format],
        num_points: usize,
        faces: &[Vec<u32>],
        timing: CacheTiming,
    ) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| IoError::io(dir, e))?;
        let mut w = Self {
            pc2: None,
            mdd: None,
            obj: None,
            next_frame: timing.frame_start,
        };
        for f in formats {
            match f {
                Format::Pc2 if w.pc2.is_none() => {
                    w.pc2 = Some(Pc2Writer::create(
                        &dir.join(format!("{name}.pc2")),
                        num_points,
                        timing.frame_start as f32,
                        1.0,
                    )?)
                }
                Format::Mdd if w.mdd.is_none() => {
                    let times =
                        MddWriter::scene_times(timing.frame_start, timing.num_frames, timing.fps);
                    w.mdd = Some(MddWriter::create(
                        &dir.join(format!("{name}.mdd")),
                        num_points,
                        &times,
                    )?)
                }
                Format::Obj if w.obj.is_none() => {
                    w.obj = Some(ObjSeqWriter::new(dir, name, num_points, faces))
                }
                _ => {}
            }
        }
        Ok(w)
    }

    /// Appends the next frame (source vertex order, output coordinates) to every format.
    pub fn write_frame(&mut self, positions: &[Vec3]) -> Result<()> {
        if let Some(w) = &mut self.pc2 {
            w.write_frame(positions)?;
        }
        if let Some(w) = &mut self.mdd {
            w.write_frame(positions)?;
        }
        if let Some(w) = &mut self.obj {
            w.write_frame(self.next_frame, positions)?;
        }
        self.next_frame += 1;
        Ok(())
    }

    /// Finishes all files and returns their final paths (PC2, MDD, then the OBJ frames).
    pub fn finish(self) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        if let Some(w) = self.pc2 {
            out.push(w.finish()?);
        }
        if let Some(w) = self.mdd {
            out.push(w.finish()?);
        }
        if let Some(w) = self.obj {
            out.extend(w.finish()?);
        }
        Ok(out)
    }
}
