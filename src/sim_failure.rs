//! How a failed bake (exit code 1) is described: the frame, and the garment by name.
//!
//! The solver fails a frame when a vertex becomes non-finite (named by garment index and
//! simulated-vertex index) or when the linear solve stays non-finite down to the smallest substep
//! (all garments are solved together, so all are named). A linear solve that merely stopped short of
//! its tolerance is only a warning.

use clothbake_solver::SimError;

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
        SimError::SolveNonFinite { h, .. } => format!(
            "frame {frame}: {}: the linear solve produced non-finite values down to h = {h:.3e} s; \
             the state cannot be advanced (extreme gravity, wind or material values?)",
            all_garments(names)
        ),
        SimError::Torn {
            garment,
            triangle,
            strain,
            limit,
            ..
        } => format!(
            "frame {frame}: garment {}: triangle {triangle} stretched to {:.1}x its rest length \
             (strain {strain:.2}, scene.strain_limit {limit}): the cloth is being torn apart; check \
             that its pins follow the body (pin.follow) and that no collider passes through pinned \
             cloth",
            garment_label(*garment, names),
            strain + 1.0
        ),
        other => format!("frame {frame}: {other}"),
    };
    CliError::Simulation(message)
}

fn all_garments(names: &[String]) -> String {
    match names {
        [one] => format!("garment '{one}'"),
        many => format!(
            "garments {} (solved together)",
            many.iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
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
    fn non_finite_solve_names_every_garment() {
        let e = SimError::SolveNonFinite {
            time: 0.1,
            h: 0.001,
            halvings: 4,
        };
        let err = step_error(&e, 3, &names());
        assert_eq!(err.exit_code(), 1);
        let text = err.to_string();
        assert!(
            text.starts_with("simulation failed: frame 3: garments 'skirt', 'cape' (solved together): the linear solve produced non-finite values down to h = 1.000e-3 s"),
            "{text}"
        );
    }
}
