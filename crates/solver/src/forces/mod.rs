//! Internal cloth forces of Baraff & Witkin 1998 (BW) §4, the mass-spring alternative
//! ([`spring`]: Provot / Choi & Ko / Kang) and air forces, per element, with Jacobian blocks for the
//! implicit step (BW §5).
//!
//! Every force returns an [`ElementForce`]: the forces on the element's vertices and the 3×3 blocks
//! `dfdx[i][j] = ∂f_i/∂x_j`, `dfdv[i][j] = ∂f_i/∂v_j`, ready to be scattered into the global
//! block-sparse matrix. [`Jacobian::Stabilized`] gives blocks that are negative semi-definite per
//! element (what the CG needs); [`Jacobian::Exact`] the true derivatives (tests, Newton checks).
//!
//! The element code is written once against the scalar aliases of a `scalar` module and compiled
//! twice: in `f32` (this module, used by the solver) and in `f64` ([`f64`](mod@self::f64), same code and names,
//! used as a double-precision reference by the gradient tests).

mod jacobian;
pub use jacobian::Jacobian;

/// f32 instantiation of the element code.
mod scalar {
    pub type Real = f32;
    pub use core::f32::consts::PI;
    pub use glam::{Mat3 as M3, Mat3A as M3A, Vec2 as V2, Vec3 as V3, Vec3A as V3A};
    /// Converts a material/wind parameter (f32) to the working precision.
    #[inline(always)]
    pub fn r(x: f32) -> Real {
        x
    }
    /// API vector → SIMD working vector.
    #[inline(always)]
    pub fn wide(v: V3) -> V3A {
        V3A::from(v)
    }
    /// SIMD working vector → API vector.
    #[inline(always)]
    pub fn narrow(v: V3A) -> V3 {
        V3::from(v)
    }
    /// SIMD working matrix → API matrix.
    #[inline(always)]
    pub fn narrow_m(m: M3A) -> M3 {
        M3::from(m)
    }
}

mod aero;
mod bend;
mod element;
mod springs;
mod stretch_shear;
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

/// The same element code in double precision (glam `DVec3`/`DMat3`): reference for tests.
pub mod f64;
