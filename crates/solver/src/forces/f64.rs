//! The same element code in double precision (glam `DVec3`/`DMat3`): a reference for the
//! gradient tests. Names and signatures mirror the f32 API in the parent module.

// Intentional: the element files are compiled a second time here with f64 scalars.
#![allow(clippy::duplicate_mod)]

pub use super::Jacobian;

mod scalar {
    pub type Real = f64;
    pub use core::f64::consts::PI;
    pub use glam::{DMat3 as M3, DMat3 as M3A, DVec2 as V2, DVec3 as V3, DVec3 as V3A};
    /// Converts a material/wind parameter (f32) to the working precision.
    #[inline(always)]
    pub fn r(x: f32) -> Real {
        x as Real
    }
    /// API vector → working vector (the same type in f64).
    #[inline(always)]
    pub fn wide(v: V3) -> V3A {
        v
    }
    /// Working vector → API vector (the same type in f64).
    #[inline(always)]
    pub fn narrow(v: V3A) -> V3 {
        v
    }
    /// Working matrix → API matrix (the same type in f64).
    #[inline(always)]
    pub fn narrow_m(m: M3A) -> M3 {
        m
    }
}

#[path = "aero.rs"]
mod aero;
#[path = "bend.rs"]
mod bend;
#[path = "element.rs"]
mod element;
#[path = "springs.rs"]
mod springs;
#[path = "stretch_shear.rs"]
mod stretch_shear;
#[path = "triangle_rest.rs"]
mod triangle_rest;

pub use aero::{aero, Wind};
pub use bend::{bend, bend_gradient, bend_gradient_wide, HingeGradient, HingeRest};
pub use element::ElementForce;
pub use springs::{spring, spring_system, SpringLaw, SpringRest, SpringSystem, BUCKLE_STRAIN};
pub use stretch_shear::{
    strain, strain_and_stretch, strain_and_stretch_wide, stretch, stretch_shear,
    stretch_shear_system, stretch_shear_system_wide, stretch_wide, TriangleSystem,
};
pub use triangle_rest::TriangleRest;
