//! The one error type of the CLI and its exit codes.

use std::path::PathBuf;

/// Everything that can stop a command. `exit_code` maps it to the documented exit codes.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input: a scene, mesh or cache that cannot be used. The message names file and field.
    #[error("{0}")]
    Input(String),
    /// Bad input found while reading a file (keeps clothbake-io's file, field or element, kind).
    #[error(transparent)]
    File(#[from] clothbake_io::IoError),
    /// The scene's garments do not make a valid solver model (garment and element named).
    #[error("{}: {source}", scene.display())]
    Model {
        scene: PathBuf,
        source: clothbake_solver::ModelError,
    },
    /// An output file or folder cannot be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Writing a cache or report failed (message names the file).
    #[error("{0}")]
    Output(String),
    /// The simulation itself failed (diverged, non-finite state, invalid model).
    #[error("simulation failed: {0}")]
    Simulation(String),
    /// SIGINT/SIGTERM/SIGHUP stopped the bake (before a substep or between frames); its temporary
    /// files were removed.
    #[error("interrupted{}: the bake stopped; no cache or report was written (temporary files removed)",
        match .last_frame { Some(f) => format!(" after frame {f}"), None => String::new() })]
    Interrupted {
        /// The last frame simulated completely, if any.
        last_frame: Option<i32>,
    },
    /// `batch`: some shots failed (each is named in the summary).
    #[error("{failed} shot(s) failed")]
    BatchFailed { failed: usize },
    /// `batch`: interrupted; `code` is 85 when every interrupted shot wrote a checkpoint.
    #[error("interrupted: the running shot(s) stopped{}", if *code == crate::checkpoint::EXIT_CHECKPOINTED { " after writing checkpoints; rerun the same command to resume them" } else { "" })]
    BatchInterrupted { code: u8 },
    /// A signal stopped a resumable bake, which wrote a checkpoint first.
    #[error("interrupted after frame {frame}: checkpoint written in {}; run the same command with --resume to continue", dir.display())]
    Checkpointed { frame: i32, dir: PathBuf },
}

impl CliError {
    /// 2 for bad usage or input, 1 when the simulation (or writing its results) failed, 130 when
    /// interrupted, 85 when interrupted after writing a checkpoint.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) | CliError::File(_) | CliError::Model { .. } => 2,
            CliError::Interrupted { .. } => crate::interrupt::EXIT_INTERRUPTED,
            CliError::Checkpointed { .. } => crate::checkpoint::EXIT_CHECKPOINTED,
            CliError::BatchFailed { .. } => 1,
            CliError::BatchInterrupted { code } => *code,
            CliError::Write { .. } | CliError::Output(_) | CliError::Simulation(_) => 1,
        }
    }

    /// Shorthand for an input error naming a file.
    pub fn input(path: &std::path::Path, message: impl std::fmt::Display) -> Self {
        CliError::Input(format!("{}: {message}", path.display()))
    }
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;
