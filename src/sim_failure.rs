//! When a bake counts as failed (exit code 1) and how the failure is described: the frame, and the
//! garment by name.
//!
//! Two kinds of trouble end a bake: the solver's own error (e.g. a vertex became non-finite, named by
//! garment index and simulated-vertex index), and a frame that the solver accepted although one of
//! its linear solves produced non-finite values after every allowed substep halving (the solver then
//! keeps the velocities of the start of the substep, so the cache would silently freeze or hold
//! garbage). A linear solve that merely stopped short of its tolerance is only a warning.

use clothbake_solver::{SimError, SubstepReport};

use crate::error::CliError;

/// The solver's error at `frame`, with the garment named (`names` in model order).
pub fn step_error(err: &SimError, frame: i32, names: &[String]) -> CliError {
    let message = match err {
        SimError::NonFinite {
            garment,
            vertex,
            time,
        } => format!(
            "frame {frame}: garment {}: simulated vertex {vertex} became non-finite at t = {time:.4} s",
            garment_label(*garment, names)
        ),
        other => format!("frame {frame}: {other}"),
    };
    CliError::Simulation(message)
}

/// Fails the frame if an accepted substep's linear solve was non-finite (its result unusable).
/// `substeps` are every substep attempted in the frame (rejected ones have `rejected` set).
pub fn check_frame(
    frame: i32,
    substeps: &[SubstepReport],
    names: &[String],
) -> Result<(), CliError> {
    let attempts = substeps.iter().filter(|s| s.cg.non_finite).count();
    let accepted = substeps
        .iter()
        .filter(|s| s.rejected.is_none() && s.cg.non_finite)
        .count();
    if accepted == 0 {
        return Ok(());
    }
    let smallest_h = substeps
        .iter()
        .filter(|s| s.cg.non_finite)
        .map(|s| s.h)
        .fold(f32::INFINITY, f32::min);
    let who = match names {
        [one] => format!("garment '{one}'"),
        many => format!(
            "garments {} (solved together)",
            many.iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Err(CliError::Simulation(format!(
        "frame {frame}: {who}: the linear solve produced non-finite values in {attempts} substep(s), \
         down to h = {smallest_h:.3e} s; the state cannot be advanced (extreme gravity, wind or \
         material values?)"
    )))
}

fn garment_label(index: usize, names: &[String]) -> String {
    match names.get(index) {
        Some(name) => format!("'{name}'"),
        None => format!("#{index}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["skirt".into(), "cape".into()]
    }

    #[test]
    fn non_finite_vertex_names_the_garment() {
        let e = SimError::NonFinite {
            garment: 1,
            vertex: 7,
            time: 0.5,
        };
        let text = step_error(&e, 13, &names()).to_string();
        assert_eq!(
            text,
            "simulation failed: frame 13: garment 'cape': simulated vertex 7 became non-finite at t = 0.5000 s"
        );
        assert_eq!(step_error(&e, 13, &names()).exit_code(), 1);
    }

    #[test]
    fn accepted_non_finite_solve_fails_the_frame() {
        let mut bad = SubstepReport {
            h: 0.001,
            ..Default::default()
        };
        bad.cg.non_finite = true;
        let mut rejected = bad;
        rejected.rejected = Some("non-finite solve");
        // Rejected then retried successfully: fine.
        let good = SubstepReport::default();
        assert!(check_frame(3, &[rejected, good], &names()).is_ok());
        let e = check_frame(3, &[rejected, bad], &names()).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        let text = e.to_string();
        assert!(
            text.starts_with("simulation failed: frame 3: garments 'skirt', 'cape'"),
            "{text}"
        );
        assert!(text.contains("non-finite values in 2 substep(s)"), "{text}");
    }
}
