//! One module per subcommand.

pub mod bake;
pub mod check;
pub mod inspect;
pub mod sample;
