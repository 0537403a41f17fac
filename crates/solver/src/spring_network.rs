//! The spring network of a mass-spring garment ([`crate::model::ForceModel::Springs`]): which
//! vertex pairs get a spring, and each spring's constants from the garment's [`Material`].
//!
//! **Topology** (Provot 1995; Boxerman 2003 §3.2, Fig. 3.4, for the grid), built on any manifold
//! triangle mesh from its edges and hinges (pairs of triangles sharing an edge):
//!
//! - every mesh edge is a **structural** spring, except a quad diagonal (below);
//! - for every hinge, a spring joins the two vertices opposite the shared edge. If the two
//!   triangles form a near-square quad whose diagonal is the shared edge — detected as: the
//!   opposite vertices are at most [`DIAGONAL_RATIO`] × the shared edge's length apart, as are
//!   the two diagonals of a quad of aspect ≤ ≈1.5 — the shared edge and the new spring are the
//!   quad's two **shear** springs. Otherwise the new spring is a **bend** (flexion) spring.
//!
//! On a regular grid of quads each split by one diagonal this gives Provot's structural springs
//! along the grid lines and both shear diagonals of every cell; the bend springs join vertices a
//! knight's move apart (across each grid-line edge) instead of Provot's two-apart pairs. On an
//! irregular mesh (e.g. equilateral triangles) every edge is structural and every hinge gives a
//! bend spring; no shear springs are made, the structural triangles resist shear.
//!
//! **Constants** (mapping from the material, so a uniformly stretched regular grid carries the
//! stress of the BW membrane): with `A_e` the summed rest area of the triangles next to the spring's
//! mesh edge / hinge, `l` its rest length and `φ` its rest angle to the warp (u) axis:
//!
//! - shear `k = 2 K_s A_e/l²` (`K_s` = `shear`): `K_s` for a square cell's diagonals (`A_e = s²`,
//!   `l² = 2s²`). A cell's two diagonals, with strains `(ε_uu + ε_vv)/2 ± ε_uv`, store
//!   `K_s s² [(ε_uu + ε_vv)²/2 + 2ε_uv²]`: under a shear `γ = 2ε_uv` (BW's `c_s`) the energy
//!   `½ K_s γ²` per area of the membrane, and under a stretch ε along u the energy `½ K_s ε²`.
//! - structural `k = (K(φ) − K_s q)·A_e/l²`, `K(φ) = K_u cos²φ + K_v sin²φ` (`K_u`, `K_v` =
//!   `stretch`, N/m), `q` the fraction of `A_e` in quads with shear springs (their diagonals
//!   already carry `K_s` of a stretch), at least [`MIN_STRUCTURAL`]·`K(φ)`. On a square grid of
//!   spacing `s` a grid-line spring has `A_e = s²`, `l = s`: `k = K_u − K_s`, and a strain ε along
//!   u (v held) gives the membrane's stress `K_u ε` (N/m) and energy `½ K_u ε²` per area; boundary
//!   springs (one triangle, `A_e = s²/2`) carry half, so a sheet's total tension is exact too.
//! - with `spring_stiffness` (`S`, N) given: every mesh edge's spring (structural or diagonal) has
//!   `k = S/l`, Kang 2003 §6's set-up (`S = 0.03` N on a 1 m sheet: his springs are the mesh edges,
//!   Table 6.1: edges = E of the triangle mesh); hinge shear springs still follow `shear` (set it
//!   to 0 for none). Measured with a throw-away driver on his set-up (21 × 21, 1 m², 0.05 kg, two
//!   corners pinned, `spring_stiffness` 0.03, `shear` = `bend` = 0, backward Euler, air damping
//!   off, strain_jump/strain_limit raised so no substep is rejected; 18 check points of 1/30 s
//!   against a 1/30000 s reference): mean E 0.0075, S 0.9963 at 1/150 s (Kang Tables 6.2–6.3:
//!   0.0072, 0.996; first point 0.0395 vs his 0.0395), 0.082 and 0.992 at 1/30 s (his 0.13,
//!   0.99). His constants stretch the cloth a lot (largest triangle strain 4.3 near the pins).
//! - bend: Choi & Ko buckling springs ([`crate::forces::spring`]) with flexural rigidity
//!   `k_b = B·A_e/(l·cos⁴θ)` (`B` = `bend`, N·m; θ the rest angle between the spring and the normal
//!   of the hinge's edge, `cos²θ = 1 − (d̂·ê)²`, at least 1/4). Calibration: a square grid rolled
//!   about a grid axis with curvature κ; a spring at angle φ to the roll direction bends with
//!   normal curvature κcos²φ and stores the buckled-arc energy `½ k_b l (κcos²φ)²`. With
//!   alternating diagonals (every flexion spring two apart, across and perpendicular to its edge,
//!   θ = 0) each cell holds one spring along and one across the roll: `½ B κ² s²` per cell, the
//!   BW energy. With all diagonals one way (knight-move springs, cos²θ = 4/5, cos²φ = 1/5, 4/5) the
//!   sum is 0.68/0.64: 6 % stiffer. `B = 0` makes no bend springs.
//! - rest scale `b_u`, `b_v` (`rest_scale`): a structural spring's rest length is
//!   `l·√((b_u cos φ)² + (b_v sin φ)²)`; shear and bend springs use `l·√(b_u b_v)`.
//! - damping: `k_d = stretch_damping·k` for structural and shear springs,
//!   `k_d = bend_damping·k_lin` for bend springs (`k_lin` their linear start, see
//!   [`crate::forces::BUCKLE_STRAIN`]).
//!
//! These constants are exact only for the regular right-triangle grid; on other meshes the network
//! approximates the membrane (e.g. an equilateral mesh is ≈12 % stiffer than `stretch` in uniaxial
//! tension, with Poisson coupling the BW model lacks).

use crate::forces::{SpringLaw, SpringRest, TriangleRest, BUCKLE_STRAIN};
use crate::material::Material;
use crate::mesh::Topology;
use glam::Vec3;

/// A hinge's opposite-vertex spring is a shear diagonal when its rest length is at most this
/// multiple of the shared edge's (1 for a square, √(1+a²)/… ≈ 1.2 at aspect 1.5, ≥ √3 for two
/// equilateral triangles, √5 across a grid line).
pub const DIAGONAL_RATIO: f32 = 1.2;

/// Lower bound of `cos²θ` in the bend mapping (a flexion spring nearly along its hinge's edge).
pub const MIN_BEND_COS2: f32 = 0.25;

/// Lower bound of a structural spring's stiffness after the shear compensation, as a fraction of
/// `K(φ)` (only reached when `shear` is close to or above `stretch`).
pub const MIN_STRUCTURAL: f32 = 0.1;

/// Which role a spring plays (for reports and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpringKind {
    Structural,
    Shear,
    Bend,
}

/// One spring of a garment, local vertex indices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringDesc {
    pub vertices: [u32; 2],
    pub kind: SpringKind,
    pub rest: SpringRest,
}

/// Builds the springs of one garment. `rest_point(i)`: vertex `i`'s rest position (m; for a UV
/// rest shape its scaled UV in the plane z = 0); `tri_rest`: per triangle its rest frame (for the
/// warp angle and the areas); `spring_stiffness`: Kang's explicit `k·l` (N) for the mesh-edge
/// springs. Springs of zero rest length are skipped.
pub fn build_springs(
    triangles: &[[u32; 3]],
    tri_rest: &[TriangleRest],
    topo: &Topology,
    rest_point: &dyn Fn(u32) -> Vec3,
    mat: &Material,
    spring_stiffness: Option<f32>,
) -> Vec<SpringDesc> {
    // Per mesh edge: adjacent rest area, area-weighted cos²φ, and whether it is a quad diagonal.
    let ne = topo.edges.len();
    let (mut area, mut cos2) = (vec![0.0f32; ne], vec![0.0f32; ne]);
    let edge_index = |a: u32, b: u32| topo.edges.binary_search(&[a.min(b), a.max(b)]).ok();
    let mut tri_edges = Vec::with_capacity(triangles.len());
    for (tri, rest) in triangles.iter().zip(tri_rest) {
        // Rest-frame edge vectors: columns of D = (D⁻¹)⁻¹, D⁻¹ = [du₁ dv₁; du₂ dv₂].
        let (a, b, c, d) = (rest.du[1], rest.dv[1], rest.du[2], rest.dv[2]);
        let det = a * d - b * c;
        let e01 = glam::Vec2::new(d, -c) / det;
        let e02 = glam::Vec2::new(-b, a) / det;
        let mut own = [None; 3];
        for (k, e) in [(0usize, e01), (1, e02 - e01), (2, e02)] {
            let (p, q) = match k {
                0 => (tri[0], tri[1]),
                1 => (tri[1], tri[2]),
                _ => (tri[0], tri[2]),
            };
            own[k] = edge_index(p, q);
            if let Some(i) = own[k] {
                let c2 = e.x * e.x / e.length_squared().max(f32::MIN_POSITIVE);
                area[i] += rest.area;
                cos2[i] += rest.area * c2;
            }
        }
        tri_edges.push(own);
    }
    for (c, a) in cos2.iter_mut().zip(&area) {
        *c = if *a > 0.0 { *c / a } else { 1.0 };
    }
    let dist = |p: u32, q: u32| (rest_point(p) - rest_point(q)).length();
    let mut diagonal = vec![false; ne];
    let mut hinge_springs = Vec::with_capacity(topo.hinges.len());
    for h in &topo.hinges {
        let (le, lo) = (dist(h[0], h[1]), dist(h[2], h[3]));
        let is_diag = lo <= DIAGONAL_RATIO * le;
        let e = edge_index(h[0], h[1]);
        if let (true, Some(i)) = (is_diag, e) {
            diagonal[i] = true;
        }
        let (d, ed) = (
            rest_point(h[3]) - rest_point(h[2]),
            rest_point(h[1]) - rest_point(h[0]),
        );
        let along = d.normalize_or_zero().dot(ed.normalize_or_zero());
        let cos2 = (1.0 - along * along).max(MIN_BEND_COS2);
        let a = e.map_or(0.0, |i| area[i]);
        hinge_springs.push(([h[2], h[3]], lo, a, is_diag, cos2));
    }
    // Per edge: the rest area of its triangles that belong to a quad with shear springs.
    let mut quad_area = vec![0.0f32; ne];
    for (own, rest) in tri_edges.iter().zip(tri_rest) {
        if own.iter().flatten().any(|&i| diagonal[i]) {
            for &i in own.iter().flatten() {
                quad_area[i] += rest.area;
            }
        }
    }
    let (bu, bv) = (mat.rest_scale[0], mat.rest_scale[1]);
    let iso_scale = (bu * bv).sqrt();
    let mut out = Vec::with_capacity(ne + hinge_springs.len());
    for (i, e) in topo.edges.iter().enumerate() {
        let l = dist(e[0], e[1]);
        if !(l.is_finite() && l > 0.0) {
            continue;
        }
        let (c2, s2) = (cos2[i], 1.0 - cos2[i]);
        let (kind, k, length) = if diagonal[i] {
            (
                SpringKind::Shear,
                2.0 * mat.shear * area[i] / (l * l),
                l * iso_scale,
            )
        } else {
            // The quad's shear diagonals carry K_s of a uniform stretch (module documentation).
            let ks = mat.stretch[0] * c2 + mat.stretch[1] * s2;
            let q = quad_area[i] / area[i].max(f32::MIN_POSITIVE);
            let k = (ks - mat.shear * q).max(MIN_STRUCTURAL * ks) * area[i] / (l * l);
            let scale = (bu * bu * c2 + bv * bv * s2).sqrt();
            (SpringKind::Structural, k, l * scale)
        };
        let k = spring_stiffness.map_or(k, |s| s / l);
        if k > 0.0 {
            out.push(SpringDesc {
                vertices: *e,
                kind,
                rest: SpringRest {
                    length,
                    stiffness: k,
                    damping: mat.stretch_damping * k,
                    law: SpringLaw::Linear,
                },
            });
        }
    }
    for (pair, l, a, is_diag, cos2) in hinge_springs {
        if !(l.is_finite() && l > 0.0) {
            continue;
        }
        let length = l * iso_scale;
        let desc = if is_diag {
            let k = 2.0 * mat.shear * a / (l * l);
            SpringDesc {
                vertices: pair,
                kind: SpringKind::Shear,
                rest: SpringRest {
                    length,
                    stiffness: k,
                    damping: mat.stretch_damping * k,
                    law: SpringLaw::Linear,
                },
            }
        } else {
            let kb = mat.bend * a / (cos2 * cos2 * l);
            let k_lin = bend_linear_stiffness(kb, length);
            SpringDesc {
                vertices: pair,
                kind: SpringKind::Bend,
                rest: SpringRest {
                    length,
                    stiffness: kb,
                    damping: mat.bend_damping * k_lin,
                    law: SpringLaw::Buckling,
                },
            }
        };
        if desc.rest.stiffness > 0.0 {
            out.push(desc);
        }
    }
    out
}

/// `k_lin` (N/m) of a buckling spring of rigidity `kb` (N·m²) and rest length `l` (m): the slope
/// reaching the critical load at [`BUCKLE_STRAIN`] compression ([`crate::forces::spring`]).
pub fn bend_linear_stiffness(kb: f32, l: f32) -> f32 {
    let p1 = 46.164 - 136.772 + 156.332 - 92.464 + 38.852;
    kb / (l * l) * p1 / (l * BUCKLE_STRAIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn grid_springs_follow_provot() {
        // 4×4 vertices, spacing 0.1 m (diagonals alternate): 24 grid-line edges, 9 diagonals.
        let g = fixtures::sheet("g", 4, 0.3, 0.0);
        let (pos, tris) = (g.positions, g.triangles);
        let topo = crate::mesh::build_topology("g", &pos, &tris).unwrap();
        let rest: Vec<_> = tris
            .iter()
            .map(|t| TriangleRest::from_positions_oriented(t.map(|i| pos[i as usize]), Vec3::X))
            .collect::<Option<_>>()
            .unwrap();
        let mat = Material::default();
        let springs = build_springs(&tris, &rest, &topo, &|i| pos[i as usize], &mat, None);
        let count = |k| springs.iter().filter(|s| s.kind == k).count();
        assert_eq!(count(SpringKind::Structural), 24);
        assert_eq!(count(SpringKind::Shear), 18);
        // Interior grid-line edges: 24 − 12 boundary = 12 hinges across grid lines.
        assert_eq!(count(SpringKind::Bend), 12);
        for s in &springs {
            let l = s.rest.length;
            match s.kind {
                SpringKind::Structural => {
                    let interior = s.rest.stiffness > 0.75 * mat.stretch[1];
                    let expect =
                        if (pos[s.vertices[0] as usize] - pos[s.vertices[1] as usize]).x != 0.0 {
                            mat.stretch[0] - mat.shear
                        } else {
                            mat.stretch[1] - mat.shear
                        };
                    let expect = if interior { expect } else { expect / 2.0 };
                    assert!((s.rest.stiffness - expect).abs() < 1e-3 * expect, "{s:?}");
                    assert!((l - 0.1).abs() < 1e-6);
                }
                SpringKind::Shear => {
                    assert!(
                        (s.rest.stiffness - mat.shear).abs() < 1e-3 * mat.shear,
                        "{s:?}"
                    );
                    assert!((l - 0.1 * 2f32.sqrt()).abs() < 1e-6);
                }
                // Across a grid line: two apart (Provot) or a knight's move, by the diagonals.
                SpringKind::Bend => assert!(
                    (l - 0.2).abs() < 1e-6 || (l - 0.1 * 5f32.sqrt()).abs() < 1e-6,
                    "{s:?}"
                ),
            }
        }
        // Kang's explicit constant: k = S/l on every mesh edge.
        let kang = build_springs(&tris, &rest, &topo, &|i| pos[i as usize], &mat, Some(0.03));
        for s in kang.iter().filter(|s| s.kind != SpringKind::Bend) {
            if topo.edges.contains(&s.vertices) {
                assert!(
                    (s.rest.stiffness * s.rest.length - 0.03).abs() < 1e-6,
                    "{s:?}"
                );
            }
        }
    }

    /// Energy of the linear springs of a 9 × 9 grid (alternating diagonals) under a uniform
    /// deformation `map` of the rest positions (J), in f64.
    fn grid_energy(mat: &Material, map: &dyn Fn(Vec3) -> glam::DVec3) -> f64 {
        let g = fixtures::sheet("g", 9, 0.8, 0.0);
        let (pos, tris) = (g.positions, g.triangles);
        let topo = crate::mesh::build_topology("g", &pos, &tris).unwrap();
        let rest: Vec<_> = tris
            .iter()
            .map(|t| TriangleRest::from_positions_oriented(t.map(|i| pos[i as usize]), Vec3::X))
            .collect::<Option<_>>()
            .unwrap();
        build_springs(&tris, &rest, &topo, &|i| pos[i as usize], mat, None)
            .iter()
            .filter(|s| s.kind != SpringKind::Bend)
            .map(|s| {
                let [a, b] = s.vertices.map(|i| map(pos[i as usize]));
                let dl = (a - b).length() - s.rest.length as f64;
                0.5 * s.rest.stiffness as f64 * dl * dl
            })
            .sum()
    }

    /// The mapping's promise: on the regular grid a uniform stretch along warp or weft (the other
    /// direction held) or a simple shear stores the BW membrane's energy `½ K ε²` per area.
    #[test]
    fn uniform_strain_of_a_grid_stores_the_membrane_energy() {
        let mat = Material::preset("denim").unwrap(); // shear/stretch 12 %: the compensation shows.
        let (area, e) = (0.64f64, 1e-3f64);
        let d = |p: Vec3| p.as_dvec3();
        let warp = grid_energy(&mat, &|p| d(p) * glam::DVec3::new(1.0 + e, 1.0, 1.0));
        let weft = grid_energy(&mat, &|p| d(p) * glam::DVec3::new(1.0, 1.0, 1.0 + e));
        let shear = grid_energy(&mat, &|p| d(p) + glam::DVec3::X * (e * p.z as f64));
        for (what, got, k) in [
            ("warp", warp, mat.stretch[0]),
            ("weft", weft, mat.stretch[1]),
            ("shear", shear, mat.shear),
        ] {
            let want = 0.5 * k as f64 * e * e * area;
            assert!(
                (got / want - 1.0).abs() < 5e-3,
                "{what}: springs {got:e} J vs membrane {want:e} J"
            );
        }
    }
}
