//! Time integration: one Newton step of backward Euler per substep (Baraff & Witkin §3, eqs. 15–18),
//! or of BDF2 written as backward Euler from an extrapolated state ([`method`]), assembled
//! deterministically in parallel into a block sparse matrix built once per topology; AIMEX
//! ([`aimex`], Boxerman 2003 §4.4) drops the Jacobians of the elements it handles explicitly.

pub mod aimex;
pub mod assembly;
pub mod kang;
pub mod method;
pub mod projected_damping;
pub mod verlet;

pub use aimex::{Aimex, SplitCounts};
pub use assembly::{Assembly, StepInputs};
pub use kang::KangSolve;
pub use method::{Integrator, StepBase};
pub use projected_damping::ProjectedDamping;
pub use verlet::VerletScratch;
