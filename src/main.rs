//! The `clothbake` command-line program: parses arguments, runs one command, maps errors to exit
//! codes (0 success, 2 bad usage or input, 1 the simulation failed, 130 interrupted).

/// `println!` that ignores a closed stdout (`clothbake inspect x | head`): the command's work is done,
/// so a reader that went away must not turn it into a crash (Rust ignores SIGPIPE; `println!` would
/// panic on the EPIPE error).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

mod bake_origin;
mod bake_setup;
mod checkpoint;
#[cfg(test)]
mod checkpoint_fuzz;
mod cli;
mod commands;
mod error;
mod frame_records;
mod fs_util;
mod interrupt;
mod preview;
mod progress;
mod report;
mod report_html;
mod samples;
mod scene_to_solver;
mod sim_failure;
mod stage_times;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::error::CliError;
use crate::interrupt::Interrupt;
use crate::progress::Reporter;

fn main() -> ExitCode {
    // clap prints usage errors itself and exits with 2 (help and version with 0).
    let cli = Cli::parse();
    let json = match &cli.command {
        Command::Bake(a) => a.json,
        Command::Batch(a) => a.json,
        Command::Check(a) => a.json,
        Command::Convert(a) => a.json,
        Command::Inspect(a) => a.json,
        Command::Sample(_) => false,
    };
    let result = match &cli.command {
        Command::Bake(a) => match Interrupt::install() {
            Ok(interrupt) => commands::bake::run(a, &interrupt),
            Err(e) => Err(CliError::Output(format!(
                "cannot install the Ctrl+C/SIGTERM handler: {e}"
            ))),
        },
        Command::Batch(a) => match Interrupt::install() {
            Ok(interrupt) => commands::batch::run(a, &interrupt),
            Err(e) => Err(CliError::Output(format!(
                "cannot install the Ctrl+C/SIGTERM handler: {e}"
            ))),
        },
        Command::Inspect(a) => commands::inspect::run(a),
        Command::Check(a) => commands::check::run(a),
        Command::Convert(a) => commands::convert::run(a),
        Command::Sample(a) => commands::sample::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = e.exit_code();
            Reporter::new(json).error(&e.to_string(), code);
            ExitCode::from(code)
        }
    }
}
