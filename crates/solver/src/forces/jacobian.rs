//! Which force Jacobian an element returns.

/// Selects the force derivatives returned by the element functions. The forces themselves are
/// identical in both modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Jacobian {
    /// True derivatives `∂f/∂x`, `∂f/∂v`, including the `C ∂²C/∂x²` terms and the damping terms
    /// `Ċ ∂²C/∂x² + ∂C/∂x (∂Ċ/∂x)ᵀ` that BW §4.5 leave out. Indefinite in general.
    Exact,
    /// Per-element negative semi-definite approximation for the implicit solve: stretch keeps
    /// `C ∂²C/∂x²` only while stretched (`C > 0`; dropped under compression — BW §6 / Choi & Ko
    /// 2002 / Kang 2003 eq. 4.11), shear and bend keep only the Gauss–Newton part
    /// `−k ∂C/∂x ∂C/∂xᵀ`, damping keeps only `∂d/∂v = −k_d ∂C/∂x ∂C/∂xᵀ`, air forces keep only the
    /// isotropic part of the drag's `∂f/∂v`.
    #[default]
    Stabilized,
}
