//! What [`Preconditioner::Auto`] stands for: chosen once per simulation from the rest mesh, so a
//! bake (and a checkpoint resume) always uses the same one.
//!
//! Block IC(0) needs few, cheap iterations on well-shaped garments; the SA-AMG V-cycle
//! ([`super::Amg`]) costs several times more per iteration (setup included), but its iteration
//! count hardly depends on the triangles' shape or the vertex count. On thin triangles IC(0)
//! stops converging within the iteration cap (the thin-skirt-walk bench: 137 iterations per
//! substep and a quarter of the substeps rejected, against 14 for AMG and none rejected; the bake
//! is several times faster with AMG), so `Auto` takes AMG where the typical triangle is thin, and
//! IC(0) otherwise. IC(0)'s iterations grow with the vertex count and AMG's do not: from
//! [`AMG_FROM`] vertices on `Auto` takes AMG whatever the shape (the 65k sheet-on-sphere bench:
//! 1.25× faster than IC(0) with its 64-vertex-aggregate deflation, 8.5 CG iterations per
//! substep against 16.1; BENCHMARKS.md, "An indefinite V-cycle on cloth in contact"). From
//! 2026-11-26 to 2026-11-28 it kept IC(0) there: AMG then took more substeps on that sheet,
//! because its V-cycle went indefinite where the cloth lay on the sphere.

use super::mpcg::Preconditioner;
use glam::Vec3;
use serde::{Deserialize, Serialize};

/// `preconditioner = "auto"` on a mesh [`resolve`] gave IC(0) watches its solves: one that stops
/// short of its tolerance within `cg_max_iterations` moves the rest of the simulation to AMG,
/// which converges in 14–21 iterations where IC(0) does not (thin triangles, long free-hanging
/// skirts). A high but converging iteration count is not a signal: IC(0)'s count varies 2–3× over
/// one bake (dress-walk: 90–124 per substep in its first frames, 44 over the bake; a rule on
/// 16-substep windows above 90 moved it to AMG at frame 5 and made the bake 1.6× slower). Part of
/// the state (`StepController`), so a resumed bake makes the same choice at the same substep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AutoWatch {
    /// Frames completed (since the simulation's start) when the solve moved to AMG; None while
    /// IC(0) is used.
    pub amg_from: Option<u32>,
}

impl AutoWatch {
    /// The preconditioner a solve uses: AMG once moved, else `resolved` (the settings' choice).
    pub fn active(&self, resolved: Preconditioner) -> Preconditioner {
        if self.amg_from.is_some() {
            Preconditioner::Amg
        } else {
            resolved
        }
    }

    /// Notes a solve that did (`converged`) or did not reach its tolerance while `frames` frames
    /// are complete.
    pub fn count(&mut self, converged: bool, frames: u32) {
        if !converged && self.amg_from.is_none() {
            self.amg_from = Some(frames);
        }
    }
}

/// Triangle shape ([`aspect`]) from which a triangle counts as thin: between the well-shaped
/// skirt (≈ 2) and the thin skirt (18–28) of the character bench, above the 5:1 grid on which
/// IC(0) still needs only 1.1× its iterations on square cells.
pub const THIN_ASPECT: f32 = 8.0;

/// Vertex count from which `Auto` takes AMG on any mesh: 32k and 65k sheets on a sphere 1.14–1.45×
/// and 1.22–1.25× faster with AMG, a 16k sheet 1.2× slower, the 10k dress 1.6× slower
/// (BENCHMARKS.md, "An indefinite V-cycle on cloth in contact").
pub const AMG_FROM: usize = 32_768;

/// Longest edge over the altitude onto it, |e|² / (2·area): 2/√3 for an equilateral triangle,
/// 2 for half a square, ≈ k for a right triangle with legs 1 and k ≫ 1; infinite if degenerate.
pub fn aspect(a: Vec3, b: Vec3, c: Vec3) -> f32 {
    let longest = (b - a)
        .length_squared()
        .max((c - b).length_squared())
        .max((a - c).length_squared());
    let twice_area = (b - a).cross(c - a).length();
    if twice_area > 0.0 {
        longest / twice_area
    } else {
        f32::INFINITY
    }
}

/// Median [`aspect`] of the triangles over the positions `x` (m); None without triangles.
pub fn median_aspect(x: &[Vec3], triangles: &[[u32; 3]]) -> Option<f32> {
    let mut shapes: Vec<f32> = triangles
        .iter()
        .map(|t| aspect(x[t[0] as usize], x[t[1] as usize], x[t[2] as usize]))
        .collect();
    if shapes.is_empty() {
        return None;
    }
    let mid = shapes.len() / 2;
    let (_, m, _) = shapes.select_nth_unstable_by(mid, f32::total_cmp);
    Some(*m)
}

/// The preconditioner [`Preconditioner::Auto`] resolves to for a mesh with rest positions `rest`
/// (m): [`Preconditioner::Amg`] if it has [`AMG_FROM`] vertices or more, or if its median
/// triangle is thin ([`THIN_ASPECT`]), else [`Preconditioner::IncompleteCholesky`]. Any other
/// `requested` value is returned unchanged.
pub fn resolve(requested: Preconditioner, rest: &[Vec3], triangles: &[[u32; 3]]) -> Preconditioner {
    if requested != Preconditioner::Auto {
        return requested;
    }
    if rest.len() >= AMG_FROM && !triangles.is_empty() {
        return Preconditioner::Amg;
    }
    match median_aspect(rest, triangles) {
        Some(m) if m >= THIN_ASPECT => Preconditioner::Amg,
        _ => Preconditioner::IncompleteCholesky,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An nx × ny grid of cells dx × dy, two triangles per cell.
    fn grid(nx: usize, ny: usize, dx: f32, dy: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let x = (0..ny)
            .flat_map(|j| (0..nx).map(move |i| Vec3::new(i as f32 * dx, j as f32 * dy, 0.0)))
            .collect();
        let id = |i: usize, j: usize| (j * nx + i) as u32;
        let t = (0..ny - 1)
            .flat_map(|j| {
                (0..nx - 1).flat_map(move |i| {
                    [
                        [id(i, j), id(i + 1, j), id(i + 1, j + 1)],
                        [id(i, j), id(i + 1, j + 1), id(i, j + 1)],
                    ]
                })
            })
            .collect();
        (x, t)
    }

    #[test]
    fn aspect_of_known_triangles() {
        let (o, ex, ey) = (Vec3::ZERO, Vec3::X, Vec3::Y);
        assert!((aspect(o, ex, ey) - 2.0).abs() < 1e-6);
        let eq = aspect(o, ex, Vec3::new(0.5, 3f32.sqrt() / 2.0, 0.0));
        assert!((eq - 2.0 / 3f32.sqrt()).abs() < 1e-5, "{eq}");
        let thin = aspect(o, ex * 20.0, ey);
        assert!((thin - 20.05).abs() < 0.01, "{thin}");
        assert_eq!(aspect(o, ex, ex * 2.0), f32::INFINITY);
    }

    /// Square cells keep IC(0), 20:1 cells (the thin skirt's shape) and 10:1 take AMG, 5:1 keeps
    /// IC(0); explicit choices pass through; no triangles: IC(0).
    #[test]
    fn auto_takes_amg_on_thin_triangles_only() {
        let pick = |dx: f32, dy: f32| {
            let (x, t) = grid(12, 30, dx, dy);
            resolve(Preconditioner::Auto, &x, &t)
        };
        assert_eq!(pick(0.01, 0.01), Preconditioner::IncompleteCholesky);
        assert_eq!(pick(0.01, 0.002), Preconditioner::IncompleteCholesky);
        assert_eq!(pick(0.01, 0.001), Preconditioner::Amg);
        assert_eq!(pick(0.0005, 0.01), Preconditioner::Amg);
        let (x, t) = grid(12, 30, 0.01, 0.0005);
        for p in [
            Preconditioner::BlockJacobi,
            Preconditioner::IncompleteCholesky,
            Preconditioner::Amg,
        ] {
            assert_eq!(resolve(p, &x, &t), p);
        }
        assert_eq!(
            resolve(Preconditioner::Auto, &x, &[]),
            Preconditioner::IncompleteCholesky
        );
    }

    /// The watch moves to AMG after the first solve that did not converge, and stays there.
    #[test]
    fn the_watch_moves_to_amg_when_ic_fails() {
        let mut w = AutoWatch::default();
        w.count(true, 3);
        let ic = Preconditioner::IncompleteCholesky;
        assert_eq!(w.active(ic), ic);
        w.count(false, 4);
        assert_eq!(w.amg_from, Some(4));
        assert_eq!(w.active(ic), Preconditioner::Amg);
        w.count(false, 9);
        w.count(true, 10);
        assert_eq!(w.amg_from, Some(4));
    }

    /// Meshes of [`AMG_FROM`] vertices or more take AMG whatever their shape; a well-shaped 181²
    /// grid just below keeps IC(0).
    #[test]
    fn auto_takes_amg_on_large_meshes() {
        let (x, t) = grid(256, 128, 0.01, 0.01);
        assert_eq!(x.len(), AMG_FROM);
        assert_eq!(resolve(Preconditioner::Auto, &x, &t), Preconditioner::Amg);
        let (x, t) = grid(256, 128, 0.01, 0.0005);
        assert_eq!(resolve(Preconditioner::Auto, &x, &t), Preconditioner::Amg);
        let (x, t) = grid(181, 181, 0.01, 0.01);
        assert!(x.len() < AMG_FROM);
        assert_eq!(
            resolve(Preconditioner::Auto, &x, &t),
            Preconditioner::IncompleteCholesky
        );
    }
}
