//! Time integration: one Newton step of backward Euler per substep (Baraff & Witkin §3, eqs. 15–18),
//! or of BDF2 written as backward Euler from an extrapolated state ([`method`]), assembled
//! deterministically in parallel into a block sparse matrix built once per topology.

pub mod assembly;
pub mod kang;
pub mod method;
pub mod verlet;

pub use assembly::{Assembly, StepInputs};
pub use kang::KangSolve;
pub use method::{Integrator, StepBase};
pub use verlet::VerletScratch;
