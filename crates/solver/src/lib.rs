//! clothbake-solver: the physics of clothbake, free of file formats.
//!
//! Baraff & Witkin, "Large Steps in Cloth Simulation" (SIGGRAPH 1998) with Boxerman's corrected
//! modified preconditioned CG (MSc thesis, UBC 2003), body-proxy contact and self-collision.

pub mod collide;
pub mod error;
pub mod forces;
pub mod integrator;
pub mod linalg;
pub mod material;
pub mod mesh;
pub mod self_collision;

pub use error::{ModelError, SimError};
