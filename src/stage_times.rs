//! Wall time per bake stage: the solver's own stages (its `StageTimes`) plus what the CLI does around
//! them (sampling the scene's animation, the report's measurements, writing caches). Per frame in
//! the bake report, summed over the bake in the report, the `done` event and the human summary.

use std::time::Instant;

use clothbake_solver::linalg::SolveTimes;
use clothbake_solver::self_collision::SelfCollisionTimes;
use clothbake_solver::StageTimes;
use serde::{Deserialize, Serialize};

/// Seconds spent per stage. Solver stages include rejected (retried) substeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BakeStages {
    /// Collider shapes and pin targets sampled from the scene's animation (glTF skinning, keys).
    pub animation: f64,
    /// Solver: force and Jacobian evaluation and matrix assembly.
    pub forces: f64,
    /// Solver: the MPCG linear solve.
    pub linear_solve: f64,
    /// Where the linear solve's time went: the preconditioner's set-up, the deflation's coarse
    /// system, the start (norms, first residual) and the CG iterations (0 under Kang's
    /// integrator). Laps inside `linear_solve`.
    #[serde(default)]
    pub linear_solve_parts: SolveTimes,
    /// Solver: body (collider) contact detection, constraints and projection.
    pub body_collisions: f64,
    /// Solver: cloth–cloth collision (on the step's critical path).
    pub self_collision: f64,
    /// Cloth–cloth work done on another thread while the linear solve ran (its proximity
    /// contacts); not a lap of the frame, so not in the total.
    pub self_collision_ahead: f64,
    /// Where the cloth–cloth work went, `self_collision_ahead` included.
    pub self_collision_parts: SelfCollisionParts,
    /// Solver: everything else (state copies, strain checks, pins).
    pub solver_other: f64,
    /// The report's per-frame measurements (collider distance, self-intersection count) and
    /// copying their inputs; below 8192 simulated vertices (with 2+ threads) they run beside the
    /// next frame's step, their time then work time rather than a lap of the frame.
    pub measurements: f64,
    /// Converting frames to output coordinates and writing them to the caches.
    pub cache_writing: f64,
}

/// Seconds of cloth–cloth work per part (the rest of it is per-vertex bookkeeping).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfCollisionParts {
    /// Bounds, spatial hash and candidate pairs, rebuilds included.
    pub broad_phase: f64,
    /// Proximity tests and repulsion impulses.
    pub proximity: f64,
    /// Continuous collision detection and its impulses.
    pub ccd: f64,
    /// Rigid impact zones.
    pub impact_zones: f64,
}

impl SelfCollisionParts {
    fn add(&mut self, t: &SelfCollisionTimes) {
        self.broad_phase += t.broad_phase;
        self.proximity += t.proximity;
        self.ccd += t.ccd;
        self.impact_zones += t.impact_zones;
    }

    fn add_parts(&mut self, o: &SelfCollisionParts) {
        self.broad_phase += o.broad_phase;
        self.proximity += o.proximity;
        self.ccd += o.ccd;
        self.impact_zones += o.impact_zones;
    }

    /// Part names and values in display order.
    pub fn entries(&self) -> [(&'static str, f64); 4] {
        [
            ("broad_phase", self.broad_phase),
            ("proximity", self.proximity),
            ("ccd", self.ccd),
            ("impact_zones", self.impact_zones),
        ]
    }
}

impl BakeStages {
    /// Stage names and values in display order.
    pub fn entries(&self) -> [(&'static str, f64); 8] {
        [
            ("animation", self.animation),
            ("forces", self.forces),
            ("linear_solve", self.linear_solve),
            ("body_collisions", self.body_collisions),
            ("self_collision", self.self_collision),
            ("solver_other", self.solver_other),
            ("measurements", self.measurements),
            ("cache_writing", self.cache_writing),
        ]
    }

    /// Adds the solver's stage times of one frame.
    pub fn add_solver(&mut self, t: &StageTimes) {
        self.forces += t.assemble;
        self.linear_solve += t.solve;
        self.linear_solve_parts.add(&t.solve_parts);
        self.body_collisions += t.collide;
        self.self_collision += t.self_collide;
        self.self_collision_ahead += t.self_ahead;
        self.self_collision_parts.add(&t.self_parts);
        self.solver_other += t.other;
    }

    pub fn add(&mut self, o: &BakeStages) {
        self.animation += o.animation;
        self.forces += o.forces;
        self.linear_solve += o.linear_solve;
        self.linear_solve_parts.add(&o.linear_solve_parts);
        self.body_collisions += o.body_collisions;
        self.self_collision += o.self_collision;
        self.self_collision_ahead += o.self_collision_ahead;
        self.self_collision_parts.add_parts(&o.self_collision_parts);
        self.solver_other += o.solver_other;
        self.measurements += o.measurements;
        self.cache_writing += o.cache_writing;
    }

    pub fn total(&self) -> f64 {
        self.entries().iter().map(|(_, s)| s).sum()
    }

    /// The human summary: one line per stage with seconds and percent of the staged total, the
    /// parts of the linear solve and of self-collision indented under them when they ran.
    pub fn summary(&self) -> String {
        let total = self.total();
        let pct = |s: f64| if total > 0.0 { 100.0 * s / total } else { 0.0 };
        let mut out = format!("time per stage ({total:.2} s in stages):\n");
        for (name, s) in self.entries() {
            out.push_str(&format!("  {name:<16}{s:>9.3} s {:>5.1} %\n", pct(s)));
            let lsp = &self.linear_solve_parts;
            if name == "linear_solve" && lsp.total() > 0.0 {
                for (part, p) in lsp.entries() {
                    out.push_str(&format!("    {part:<14}{p:>9.3} s {:>5.1} %\n", pct(p)));
                }
            }
            if name == "self_collision" && s > 0.0 {
                for (part, p) in self.self_collision_parts.entries() {
                    out.push_str(&format!("    {part:<14}{p:>9.3} s {:>5.1} %\n", pct(p)));
                }
                if self.self_collision_ahead > 0.0 {
                    out.push_str(&format!(
                        "    (of which {:.3} s ran alongside linear_solve)\n",
                        self.self_collision_ahead
                    ));
                }
            }
        }
        out
    }
}

/// Measures consecutive laps: each `lap` returns the seconds since the previous one.
pub struct Lap(Instant);

impl Lap {
    pub fn start() -> Self {
        Lap(Instant::now())
    }

    pub fn lap(&mut self) -> f64 {
        let now = Instant::now();
        let s = (now - self.0).as_secs_f64();
        self.0 = now;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solver_times_map_to_stages_and_sum() {
        let mut b = BakeStages {
            animation: 1.0,
            cache_writing: 2.0,
            ..Default::default()
        };
        b.add_solver(&StageTimes {
            assemble: 3.0,
            solve: 4.0,
            solve_parts: SolveTimes {
                preconditioner: 0.5,
                coarse: 0.25,
                start: 0.75,
                iterations: 2.0,
            },
            collide: 5.0,
            self_collide: 6.0,
            other: 7.0,
            self_parts: SelfCollisionTimes {
                broad_phase: 2.0,
                proximity: 1.5,
                ccd: 1.0,
                impact_zones: 0.5,
                other: 0.25,
            },
            self_ahead: 1.25,
        });
        assert_eq!(b.forces, 3.0);
        assert_eq!(b.linear_solve, 4.0);
        assert_eq!(b.body_collisions, 5.0);
        assert_eq!(b.self_collision, 6.0);
        assert_eq!(b.solver_other, 7.0);
        assert_eq!(b.total(), 28.0);
        let mut sum = BakeStages::default();
        sum.add(&b);
        sum.add(&b);
        assert_eq!(sum.total(), 56.0);
        assert_eq!(sum.linear_solve, 8.0);
        assert_eq!(sum.linear_solve_parts.iterations, 4.0);
        assert_eq!(sum.linear_solve_parts.total(), 7.0);
        assert_eq!(sum.self_collision_parts.broad_phase, 4.0);
        assert_eq!(sum.self_collision_parts.impact_zones, 1.0);
        assert_eq!(sum.self_collision_ahead, 2.5);
        let text = sum.summary();
        assert!(
            text.starts_with("time per stage (56.00 s in stages):\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  linear_solve        8.000 s  14.3 %\n    preconditioner    1.000 s   1.8 %\n    \
                 coarse            0.500 s   0.9 %\n    start             1.500 s   2.7 %\n    \
                 iterations        4.000 s   7.1 %\n  body_collisions"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  self_collision     12.000 s  21.4 %\n    broad_phase       4.000 s   7.1 %\n"
            ),
            "{text}"
        );
    }
}
