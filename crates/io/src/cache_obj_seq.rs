//! OBJ sequence: one `<name>.<frame:04>.obj` per frame, vertices in source order (`v` lines with
//! the shortest decimal that reads back to the same f32), faces as in the source mesh (1-based).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glam::Vec3;

use crate::atomic_file::{AtomicFile, PendingFile};
use crate::error::{IoError, Result};

/// Writes each frame as its own OBJ file. The frames stay temporary files until [`Self::finish`]
/// renames them all, so an aborted bake leaves no partial sequence under the final names (and an
/// older complete sequence with the same names stays intact until then).
pub struct ObjSeqWriter {
    dir: PathBuf,
    name: String,
    num_points: usize,
    faces_text: String,
    pending: Vec<PendingFile>,
    /// Staged (resumable bake): complete frames wait in this folder under their final names.
    stage: Option<PathBuf>,
    /// Staged frames written so far (in this run or before a resume).
    staged: Vec<i32>,
    buf: String,
}

impl ObjSeqWriter {
    /// Prepares a sequence in `dir` for garment `name`; `faces` index source vertices (0-based).
    pub fn new(dir: &Path, name: &str, num_points: usize, faces: &[Vec<u32>]) -> Self {
        let mut faces_text = String::new();
        for f in faces {
            faces_text.push('f');
            for &i in f {
                // Writing to a String cannot fail.
                let _ = write!(faces_text, " {}", i + 1);
            }
            faces_text.push('\n');
        }
        Self {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            num_points,
            faces_text,
            pending: Vec::new(),
            stage: None,
            staged: Vec::new(),
            buf: String::new(),
        }
    }

    /// As [`Self::new`], but each complete frame waits in `stage` (a resumable bake's staging
    /// folder, which outlives the process) until [`Self::finish`] moves them all into `dir`.
    pub fn staged(
        dir: &Path,
        stage: &Path,
        name: &str,
        num_points: usize,
        faces: &[Vec<u32>],
    ) -> Self {
        let mut w = Self::new(dir, name, num_points, faces);
        w.stage = Some(stage.to_path_buf());
        w
    }

    /// Continues a staged sequence whose frames `done` are already in `stage` (each must be).
    pub fn resume_staged(
        dir: &Path,
        stage: &Path,
        name: &str,
        num_points: usize,
        faces: &[Vec<u32>],
        done: std::ops::Range<i32>,
    ) -> Result<Self> {
        let mut w = Self::staged(dir, stage, name, num_points, faces);
        for frame in done {
            let path = stage.join(Self::file_name(name, frame));
            if !path.is_file() {
                return Err(IoError::invalid(
                    &path,
                    "",
                    "missing: the checkpoint says this frame was written",
                ));
            }
            w.staged.push(frame);
        }
        Ok(w)
    }
    /// The file name of `frame`: `<name>.<frame:04>.obj`.
    pub fn file_name(name: &str, frame: i32) -> String {
        format!("{name}.{frame:04}.obj")
    }

    /// Writes frame `frame` to its own file.
    pub fn write_frame(&mut self, frame: i32, positions: &[Vec3]) -> Result<()> {
        let path = self.dir.join(Self::file_name(&self.name, frame));
        if positions.len() != self.num_points {
            return Err(IoError::invalid(
                &path,
                "v",
                format!(
                    "{} points given, the mesh has {}",
                    positions.len(),
                    self.num_points
                ),
            ));
        }
        self.buf.clear();
        let _ = writeln!(self.buf, "# clothbake {} frame {frame}", self.name);
        let _ = writeln!(self.buf, "o {}", self.name);
        for p in positions {
            let _ = writeln!(self.buf, "v {} {} {}", p.x, p.y, p.z);
        }
        self.buf.push_str(&self.faces_text);
        match &self.stage {
            Some(stage) => {
                let mut file = AtomicFile::create(&stage.join(Self::file_name(&self.name, frame)))?;
                file.write_all(self.buf.as_bytes())?;
                file.commit()?;
                self.staged.push(frame);
            }
            None => {
                let mut file = AtomicFile::create(&path)?;
                file.write_all(self.buf.as_bytes())?;
                self.pending.push(file.close()?);
            }
        }
        Ok(())
    }

    /// Renames every frame written to its final name and returns the final paths. Dropping the
    /// writer without `finish` removes the temporary files.
    pub fn finish(self) -> Result<Vec<PathBuf>> {
        let mut out: Vec<PathBuf> = self
            .pending
            .into_iter()
            .map(PendingFile::commit)
            .collect::<Result<_>>()?;
        if let Some(stage) = &self.stage {
            for &frame in &self.staged {
                let file = Self::file_name(&self.name, frame);
                let (from, to) = (stage.join(&file), self.dir.join(&file));
                std::fs::rename(&from, &to).map_err(|e| IoError::io(&to, e))?;
                out.push(to);
            }
        }
        Ok(out)
    }
}
