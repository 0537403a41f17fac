//! `IoError`: every error names the file and the field or element it is about.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong, without the location (see [`IoError`]).
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    /// The file does not exist.
    #[error("file not found")]
    NotFound,
    /// Reading or writing the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file is not valid for its format (TOML syntax, glTF JSON/GLB structure, OBJ syntax).
    #[error("{0}")]
    Parse(String),
    /// The file parsed but a value is not acceptable.
    #[error("{0}")]
    Invalid(String),
}

/// An error in a clothbake input or output file.
///
/// Displays as `file: field: message` (or `file: message` when no field applies), e.g.
/// `scene.toml: garment[1].material: unknown preset "velvet"`.
#[derive(Debug)]
pub struct IoError {
    /// The file the error is about.
    pub file: PathBuf,
    /// Field path or element inside the file (`garment[1].pin.vertices[3]`, `accessor 4`), may be empty.
    pub field: String,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl IoError {
    /// An error with a field path and a kind.
    pub fn new(file: impl AsRef<Path>, field: impl Into<String>, kind: ErrorKind) -> Self {
        Self {
            file: file.as_ref().to_path_buf(),
            field: field.into(),
            kind,
        }
    }

    /// A bad value: `file: field: message`.
    pub fn invalid(
        file: impl AsRef<Path>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(file, field, ErrorKind::Invalid(message.into()))
    }

    /// A file that does not follow its format.
    pub fn parse(
        file: impl AsRef<Path>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(file, field, ErrorKind::Parse(message.into()))
    }

    /// An operating-system error on `file`; a missing file becomes [`ErrorKind::NotFound`].
    pub fn io(file: impl AsRef<Path>, err: std::io::Error) -> Self {
        let kind = if err.kind() == std::io::ErrorKind::NotFound {
            ErrorKind::NotFound
        } else {
            ErrorKind::Io(err)
        };
        Self::new(file, "", kind)
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.kind)
        } else {
            write!(f, "{}: {}: {}", self.file.display(), self.field, self.kind)
        }
    }
}

impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Result with [`IoError`].
pub type Result<T> = std::result::Result<T, IoError>;
