//! `clothbake check` (wiring to clothbake-io / clothbake-solver in progress).

use crate::error::{CliError, Result};

pub fn run(_args: &crate::cli::CheckArgs) -> Result<()> {
    Err(CliError::Simulation(
        "`check` is not wired to the solver and io crates yet".into(),
    ))
}
