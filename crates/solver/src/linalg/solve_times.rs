//! Wall-clock seconds per phase of an MPCG solve ([`super::Mpcg::solve`]): what a solve costs
//! before its first iteration against what its iterations cost, the split that says whether a
//! faster preconditioner set-up or a cheaper iteration would pay (BENCHMARKS.md, "Where a
//! solve's time goes").

/// Seconds (wall) per phase of one solve, or summed over several.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SolveTimes {
    /// The preconditioner's values for this matrix: the IC(0) factorization (shifted retries
    /// included), the AMG hierarchy's refill, or the block-Jacobi inverses.
    pub preconditioner: f64,
    /// The deflation's coarse system ZᵀÃZ and its factor ([`super::deflation::Deflation`]);
    /// 0 when the solve does not deflate.
    pub coarse: f64,
    /// Everything before the first iteration: the warm start, b̂ and the reference impulse in
    /// the preconditioner's norm, the starting residual (and its coarse correction).
    pub start: f64,
    /// The CG iterations (each: the preconditioner's sweeps or V-cycle, one product with A, the
    /// vector updates and, deflated, the coarse solve) and the final update of x.
    pub iterations: f64,
}

impl SolveTimes {
    pub fn add(&mut self, o: &SolveTimes) {
        self.preconditioner += o.preconditioner;
        self.coarse += o.coarse;
        self.start += o.start;
        self.iterations += o.iterations;
    }

    pub fn total(&self) -> f64 {
        self.preconditioner + self.coarse + self.start + self.iterations
    }

    /// Phase names (as in the report) and values in order.
    pub fn entries(&self) -> [(&'static str, f64); 4] {
        [
            ("preconditioner", self.preconditioner),
            ("coarse", self.coarse),
            ("start", self.start),
            ("iterations", self.iterations),
        ]
    }
}
