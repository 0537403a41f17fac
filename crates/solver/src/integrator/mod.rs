//! Time integration: one Newton step of backward Euler per substep (Baraff & Witkin §3, eqs. 15–18),
//! assembled deterministically in parallel into a block sparse matrix built once per topology.

pub mod assembly;

pub use assembly::{Assembly, StepInputs};
