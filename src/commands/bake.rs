//! `clothbake bake` (wiring to clothbake-io / clothbake-solver in progress).

use crate::error::{CliError, Result};

pub fn run(_args: &crate::cli::BakeArgs) -> Result<()> {
    Err(CliError::Simulation(
        "`bake` is not wired to the solver and io crates yet".into(),
    ))
}
