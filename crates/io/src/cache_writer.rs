//! All the caches of one garment at once: `<dir>/<name>.pc2`, `.mdd`, `.usda`, `.usdc` and
//! `.<frame:04>.obj`, streamed frame by frame (memory ∝ vertex count). A resumable bake stages them
//! in a folder that outlives the process (`<stage>/<name>.pc2.partial`, `<name>.mdd.partial`,
//! `<name>.usda.partial` with `<name>.usda.extent.partial`, `<name>.usdc.partial`, complete OBJ
//! frames), records their [`CacheProgress`] in its checkpoints and continues them from it.

use std::path::{Path, PathBuf};

use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::cache_mdd::MddWriter;
use crate::cache_obj_seq::ObjSeqWriter;
use crate::cache_pc2::Pc2Writer;
use crate::cache_usd::{usd_file_name, UsdLayerInfo, UsdWriter};
use crate::cache_usdc::{usdc_file_name, UsdcWriter};
use crate::error::{IoError, Result};
use crate::scene::{Format, Up};

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

/// How far a staged garment's caches are: what a checkpoint records and a resume continues from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheProgress {
    /// Frames written.
    pub frames: u32,
    /// Bytes of the staged PC2 and MDD files, if written.
    pub pc2_bytes: Option<u64>,
    pub mdd_bytes: Option<u64>,
    /// Bytes of the staged USD layer and of its staged extents, if written.
    #[serde(default)]
    pub usd_bytes: Option<(u64, u64)>,
    /// Bytes of the staged `.usdc` (absent in checkpoints of earlier versions).
    #[serde(default)]
    pub usdc_bytes: Option<u64>,
}

/// The writers of one garment.
pub struct GarmentCacheWriter {
    pc2: Option<Pc2Writer>,
    mdd: Option<MddWriter>,
    obj: Option<ObjSeqWriter>,
    usd: Option<UsdWriter>,
    usdc: Option<UsdcWriter>,
    next_frame: i32,
    frame_start: i32,
}

/// Where a garment's caches go: the output folder, and the staging folder of a resumable bake.
#[derive(Debug, Clone, Copy)]
pub struct CacheTarget<'a> {
    pub dir: &'a Path,
    pub stage: Option<&'a Path>,
    pub name: &'a str,
    pub formats: &'a [Format],
    pub num_points: usize,
    /// Source-order polygons, for the OBJ sequence and the USD layer.
    pub faces: &'a [Vec<u32>],
    pub timing: CacheTiming,
    /// Axis convention of the positions (the USD layer's `upAxis`).
    pub up: Up,
}

impl GarmentCacheWriter {
    /// Starts (`progress` None) or continues the caches of `t`; staged when `t.stage` is given.
    pub fn open(t: CacheTarget, progress: Option<&CacheProgress>) -> Result<Self> {
        std::fs::create_dir_all(t.dir).map_err(|e| IoError::io(t.dir, e))?;
        if let Some(stage) = t.stage {
            std::fs::create_dir_all(stage).map_err(|e| IoError::io(stage, e))?;
        }
        let frames = progress.map_or(0, |p| p.frames);
        let mut w = Self {
            pc2: None,
            mdd: None,
            obj: None,
            usd: None,
            usdc: None,
            next_frame: t.timing.frame_start + frames as i32,
            frame_start: t.timing.frame_start,
        };
        let name = t.name;
        let info = UsdLayerInfo {
            frame_start: t.timing.frame_start,
            num_frames: t.timing.num_frames,
            fps: t.timing.fps,
            up: t.up,
        };
        let staged = |ext: &str| t.stage.map(|s| s.join(format!("{name}.{ext}.partial")));
        let bytes = |b: Option<u64>, ext: &str| {
            b.ok_or_else(|| {
                IoError::invalid(
                    t.dir.join(format!("{name}.{ext}")),
                    "",
                    "the checkpoint has no record of this cache (another set of formats?)",
                )
            })
        };
        for f in t.formats {
            match f {
                Format::Pc2 if w.pc2.is_none() => {
                    let path = t.dir.join(format!("{name}.pc2"));
                    let start = t.timing.frame_start as f32;
                    w.pc2 = Some(match (staged("pc2"), progress) {
                        (None, _) => Pc2Writer::create(&path, t.num_points, start, 1.0)?,
                        (Some(temp), None) => {
                            Pc2Writer::create_staged(&path, &temp, t.num_points, start, 1.0)?
                        }
                        (Some(temp), Some(p)) => Pc2Writer::resume_staged(
                            &path,
                            &temp,
                            t.num_points,
                            bytes(p.pc2_bytes, "pc2")?,
                        )?,
                    });
                }
                Format::Mdd if w.mdd.is_none() => {
                    let path = t.dir.join(format!("{name}.mdd"));
                    let times = MddWriter::scene_times(
                        t.timing.frame_start,
                        t.timing.num_frames,
                        t.timing.fps,
                    );
                    w.mdd = Some(match (staged("mdd"), progress) {
                        (None, _) => MddWriter::create(&path, t.num_points, &times)?,
                        (Some(temp), None) => {
                            MddWriter::create_staged(&path, &temp, t.num_points, &times)?
                        }
                        (Some(temp), Some(p)) => MddWriter::resume_staged(
                            &path,
                            &temp,
                            t.num_points,
                            t.timing.num_frames,
                            bytes(p.mdd_bytes, "mdd")?,
                        )?,
                    });
                }
                Format::Obj if w.obj.is_none() => {
                    w.obj = Some(match t.stage {
                        None => ObjSeqWriter::new(t.dir, name, t.num_points, t.faces),
                        Some(stage) => ObjSeqWriter::resume_staged(
                            t.dir,
                            stage,
                            name,
                            t.num_points,
                            t.faces,
                            t.timing.frame_start..w.next_frame,
                        )?,
                    })
                }
                Format::Usd if w.usd.is_none() => {
                    let path = t.dir.join(usd_file_name(name));
                    let (n, faces) = (t.num_points, t.faces);
                    w.usd = Some(match (staged("usda"), staged("usda.extent"), progress) {
                        (Some(temp), Some(ext), None) => {
                            UsdWriter::create_staged(&path, &temp, &ext, name, n, faces, info)?
                        }
                        (Some(temp), Some(ext), Some(p)) => {
                            let (len, ext_len) = p.usd_bytes.ok_or_else(|| {
                                IoError::invalid(
                                    &path,
                                    "",
                                    "the checkpoint has no record of this cache (another set of formats?)",
                                )
                            })?;
                            UsdWriter::resume_staged(
                                &path,
                                &temp,
                                &ext,
                                n,
                                info,
                                frames as usize,
                                len,
                                ext_len,
                            )?
                        }
                        _ => UsdWriter::create(&path, name, n, faces, info)?,
                    });
                }
                Format::Usdc if w.usdc.is_none() => {
                    let path = t.dir.join(usdc_file_name(name));
                    let (n, faces) = (t.num_points, t.faces);
                    w.usdc = Some(match (staged("usdc"), progress) {
                        (None, _) => UsdcWriter::create(&path, name, n, faces, info)?,
                        (Some(temp), None) => {
                            UsdcWriter::create_staged(&path, &temp, name, n, faces, info)?
                        }
                        (Some(temp), Some(p)) => UsdcWriter::resume_staged(
                            &path,
                            &temp,
                            name,
                            n,
                            faces,
                            info,
                            frames as usize,
                            bytes(p.usdc_bytes, "usdc")?,
                        )?,
                    });
                }
                _ => {}
            }
        }
        Ok(w)
    }

    /// Makes every frame written so far durable and returns how far the caches are.
    pub fn sync(&mut self) -> Result<CacheProgress> {
        Ok(CacheProgress {
            frames: (self.next_frame - self.frame_start) as u32,
            pc2_bytes: self.pc2.as_mut().map(Pc2Writer::sync).transpose()?,
            mdd_bytes: self.mdd.as_mut().map(MddWriter::sync).transpose()?,
            usd_bytes: self.usd.as_mut().map(UsdWriter::sync).transpose()?,
            usdc_bytes: self.usdc.as_mut().map(UsdcWriter::sync).transpose()?,
        })
    }

    /// Creates `dir` if needed and starts one writer per format. `faces` (source-order vertex
    /// indices) are used by the OBJ sequence and the USD layer, `up` is the USD layer's `upAxis`.
    pub fn create(
        dir: &Path,
        name: &str,
        formats: &[Format],
        num_points: usize,
        faces: &[Vec<u32>],
        timing: CacheTiming,
        up: Up,
    ) -> Result<Self> {
        Self::open(
            CacheTarget {
                dir,
                stage: None,
                name,
                formats,
                num_points,
                faces,
                timing,
                up,
            },
            None,
        )
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
        if let Some(w) = &mut self.usd {
            w.write_frame(positions)?;
        }
        if let Some(w) = &mut self.usdc {
            w.write_frame(positions)?;
        }
        self.next_frame += 1;
        Ok(())
    }

    /// Finishes all files and returns their final paths (PC2, MDD, USD text, USD binary, then the OBJ frames).
    pub fn finish(self) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        if let Some(w) = self.pc2 {
            out.push(w.finish()?);
        }
        if let Some(w) = self.mdd {
            out.push(w.finish()?);
        }
        if let Some(w) = self.usd {
            out.push(w.finish()?);
        }
        if let Some(w) = self.usdc {
            out.push(w.finish()?);
        }
        if let Some(w) = self.obj {
            out.extend(w.finish()?);
        }
        Ok(out)
    }
}
