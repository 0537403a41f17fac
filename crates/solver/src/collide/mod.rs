//! Cloth vs body-proxy contact: proxy shapes (plane, sphere, tapered capsule), exact signed
//! distances, linear interpolation over a substep, continuous detection (conservative
//! advancement) and the parallel, deterministic [`ContactDetector`].
//!
//! Everything is pure geometry on flat arrays (glam f32, metres, seconds); the response (BW §5
//! constraints, friction, Kang's velocity correction) belongs to the core integrator.

mod aabb;
pub mod ccd;
mod contact;
pub mod contact_plane;
pub mod contact_sphere;
pub mod contact_tapered_capsule;
mod detector;
mod error;
mod min_distance;
mod moving;
mod projection;
mod shape;

pub use aabb::Aabb;
pub use ccd::{earliest_contact, vertex_contact, CcdHit, SAME_SIDE_COSINE};
pub use contact::VertexContact;
pub use contact_tapered_capsule::{tapered_capsule_closest, CapsuleClosest};
pub use detector::{ContactDetector, CHUNK_VERTICES};
pub use error::{CollideError, ShapeError};
pub use min_distance::{min_distance, min_distance_serial};
pub use moving::MovingCollider;
pub use projection::DistanceReport;
pub use shape::ColliderShape;
