//! A fine sheet stresses the incomplete Cholesky preconditioner: at rest, an 80×80-vertex 1 m cotton
//! sheet's in-plane stiffness term h²k/m is about 1500× its out-of-plane mass term, IC(0) breaks
//! down in hundreds of pivots, and without the diagonal shift (linalg::incomplete_cholesky) the
//! first substep's solve was non-finite (rᵀM⁻¹r ≈ 1e36).

use clothbake_solver::fixtures::{sheet, sheet_vertex};
use clothbake_solver::*;

#[test]
fn fine_sheet_hanging_from_two_corners_solves_every_substep() {
    let n = 80;
    let mut g = sheet("sheet", n, 1.0, 0.0);
    g.pins = vec![
        Pin {
            vertex: sheet_vertex(n, 0, 0),
            weight: 1.0,
        },
        Pin {
            vertex: sheet_vertex(n, n - 1, 0),
            weight: 1.0,
        },
    ];
    let settings = SimSettings {
        substeps: 1,
        adaptive: false,
        ..Default::default()
    };
    let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
    for step in 0..3 {
        let r = sim
            .step_frame(1.0 / 120.0, &[], &[None])
            .unwrap_or_else(|e| panic!("substep {step}: {e:?}"));
        assert_eq!(r.cg_failures, 0, "substep {step}: {r:?}");
        assert!(
            r.cg_max_residual <= DEFAULT_CG_TOLERANCE,
            "substep {step}: {r:?}"
        );
    }
    // The sheet falls under gravity between its pins: the middle of the free edge moved down.
    let mid = sim.garment_positions(0)[sheet_vertex(n, n / 2, n - 1) as usize];
    assert!(mid.y < -1e-3 && mid.is_finite(), "{mid}");
}
