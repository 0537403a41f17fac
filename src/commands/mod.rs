//! One module per subcommand.

pub mod bake;
pub mod batch;
pub mod check;
pub mod inspect;
pub mod sample;
