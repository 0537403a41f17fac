//! `clothbake inspect` (wiring to clothbake-io / clothbake-solver in progress).

use crate::error::{CliError, Result};

pub fn run(_args: &crate::cli::InspectArgs) -> Result<()> {
    Err(CliError::Simulation(
        "`inspect` is not wired to the solver and io crates yet".into(),
    ))
}
