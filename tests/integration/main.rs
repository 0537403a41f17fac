//! End-to-end tests of the `clothbake` binary (ripgrep style: one test binary, a small harness that
//! runs the built executable in a temporary folder).

mod harness;

mod animations;
mod bake;
mod batch;
mod broken_files;
mod convert;
mod determinism;
mod drivers;
mod errors;
mod far_origin;
mod frame_records;
mod inspect;
mod interrupt;
mod json;
mod preview;
mod report_tries;
mod resume;
mod samples;
mod self_collision;
mod sim_failure;
mod stages;
mod usd;
