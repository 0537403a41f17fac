//! Time integration: one Newton step of backward Euler per substep (Baraff & Witkin §3, eqs. 15–18),
//! or of BDF2 written as backward Euler from an extrapolated state ([`method`]), assembled
//! deterministically in parallel into a block sparse matrix built once per topology.

pub mod assembly;
pub mod method;

pub use assembly::{Assembly, StepInputs};
pub use method::{Integrator, StepBase};
