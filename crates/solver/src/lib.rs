//! clothbake-solver: the physics of clothbake, free of file formats.
//!
//! Baraff & Witkin, "Large Steps in Cloth Simulation" (SIGGRAPH 1998) with Boxerman's corrected
//! modified preconditioned CG (MSc thesis, UBC 2003), body-proxy contact and self-collision.
//!
//! Entry point: [`Simulation::new`] with one [`GarmentDesc`] per garment, then
//! [`Simulation::step_frame`] per frame.

pub mod collide;
pub mod constraints;
pub mod error;
pub mod fixtures;
pub mod forces;
pub mod integrator;
pub mod linalg;
pub mod material;
pub mod mesh;
pub mod model;
pub mod pins;
pub mod report;
pub mod self_collision;
pub mod self_contact;
pub mod sim;
pub(crate) mod spinning_partner;
pub mod spring_network;
pub mod state;
pub(crate) mod step;
mod stopwatch;
pub mod workspace;

pub use collide::{ColliderShape, MovingCollider};
pub use error::{ModelError, SimError};
pub use forces::Wind;
pub use integrator::Integrator;
pub use linalg::Preconditioner;
pub use material::Material;
pub use model::{ForceModel, Friction, GarmentDesc, Model, Pin, RestShape};
pub use report::{FrameReport, Rejection, RejectionCause, Rejections, StageTimes, SubstepReport};
pub use self_collision::SelfCollisionParams;
pub use sim::{
    RestoreError, SimSettings, Simulation, DEFAULT_AIR_DAMPING, DEFAULT_CG_TOLERANCE,
    DEFAULT_SELF_CONTACT_DAMPING, DEFAULT_STRAIN_JUMP, DEFAULT_STRAIN_LIMIT, REST_VELOCITY_FLOOR,
};
pub use state::{Clock, State, StepController, STATE_VERSION};
pub use workspace::Workspace;
