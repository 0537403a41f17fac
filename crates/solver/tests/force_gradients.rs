//! Force Jacobians against central finite differences, plus physical sanity properties of the
//! force elements (zero at rest, rigid-motion invariance, momentum conservation, and negative
//! semi-definite stabilised Jacobians).
//!
//! Finite differences are taken on the f64 instantiation of the element code
//! (`clothbake_solver::forces::f64`, the same source compiled with `DVec3`), so f32 round-off does
//! not limit the check; a separate test compares the f32 instantiation with the f64 one.

use clothbake_solver::forces::{self, f64 as fd, Jacobian};
use clothbake_solver::material::Material;
use glam::{DMat3, DQuat, DVec2, DVec3, Vec3};

/// Relative Frobenius error bound for ‖J − J_fd‖ / ‖J_fd‖.
const FD_TOL: f64 = 1e-3;

/// xorshift64* — deterministic, no dependencies.
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    fn vec3(&mut self, s: f64) -> DVec3 {
        DVec3::new(
            self.uniform(-s, s),
            self.uniform(-s, s),
            self.uniform(-s, s),
        )
    }
    fn rotation(&mut self) -> DQuat {
        loop {
            let q = glam::DVec4::new(
                self.uniform(-1.0, 1.0),
                self.uniform(-1.0, 1.0),
                self.uniform(-1.0, 1.0),
                self.uniform(-1.0, 1.0),
            );
            let l = q.length();
            if l > 0.1 && l <= 1.0 {
                return DQuat::from_vec4(q / l);
            }
        }
    }
}

fn random_material(rng: &mut Rng) -> Material {
    Material {
        density: rng.uniform(0.03, 1.0) as f32,
        stretch: [
            rng.uniform(10.0, 3000.0) as f32,
            rng.uniform(10.0, 3000.0) as f32,
        ],
        shear: rng.uniform(0.0, 300.0) as f32,
        bend: rng.uniform(1e-6, 1e-3) as f32,
        stretch_damping: rng.uniform(0.0, 0.01) as f32,
        bend_damping: rng.uniform(0.0, 0.01) as f32,
        rest_scale: [rng.uniform(0.8, 1.2) as f32, rng.uniform(0.8, 1.2) as f32],
    }
}

/// A random well-shaped rest triangle in the plane (m) and its rest data.
fn random_rest_triangle(rng: &mut Rng, scale: f64) -> ([DVec2; 3], fd::TriangleRest) {
    loop {
        let p =
            [0, 1, 2].map(|_| DVec2::new(rng.uniform(-scale, scale), rng.uniform(-scale, scale)));
        let area = 0.5 * (p[1] - p[0]).perp_dot(p[2] - p[0]).abs();
        let longest = [(p[1] - p[0]), (p[2] - p[1]), (p[0] - p[2])]
            .iter()
            .map(|e| e.length_squared())
            .fold(0.0, f64::max);
        if area > 0.1 * longest {
            if let Some(rest) = fd::TriangleRest::from_plane(p) {
                return (p, rest);
            }
        }
    }
}

/// Deformed placement of a rest triangle: anisotropic stretch/compression by factors in
/// `[lo, hi]`, in-plane shear, out-of-plane noise, random rotation and translation.
fn deform(rng: &mut Rng, p: &[DVec2; 3], scale: f64, lo: f64, hi: f64) -> [DVec3; 3] {
    let f = DMat3::from_cols(
        DVec3::new(rng.uniform(lo, hi), rng.uniform(-0.3, 0.3), 0.0),
        DVec3::new(rng.uniform(-0.3, 0.3), rng.uniform(lo, hi), 0.0),
        DVec3::Z,
    );
    let q = rng.rotation();
    let t = rng.vec3(2.0);
    p.map(|u| q * (f * DVec3::new(u.x, u.y, 0.0) + rng.vec3(0.05 * scale)) + t)
}

/// Row-major dense (3N)×(3N) matrix of 3×3 blocks.
fn dense<const N: usize>(blocks: &[[DMat3; N]; N]) -> Vec<f64> {
    let n = 3 * N;
    let mut m = vec![0.0; n * n];
    for i in 0..N {
        for j in 0..N {
            for a in 0..3 {
                for b in 0..3 {
                    m[(3 * i + a) * n + 3 * j + b] = blocks[i][j].col(b)[a];
                }
            }
        }
    }
    m
}

/// Central-difference Jacobian of `f` (forces on N vertices) with respect to the 3N inputs `y`.
fn fd_jacobian<const N: usize>(
    y: &[DVec3; N],
    h: f64,
    f: impl Fn(&[DVec3; N]) -> [DVec3; N],
) -> Vec<f64> {
    let n = 3 * N;
    let mut m = vec![0.0; n * n];
    for j in 0..N {
        for b in 0..3 {
            let mut yp = *y;
            let mut ym = *y;
            yp[j][b] += h;
            ym[j][b] -= h;
            let (fp, fm) = (f(&yp), f(&ym));
            for i in 0..N {
                for a in 0..3 {
                    m[(3 * i + a) * n + 3 * j + b] = (fp[i][a] - fm[i][a]) / (2.0 * h);
                }
            }
        }
    }
    m
}

fn rel_err(j: &[f64], j_fd: &[f64]) -> f64 {
    let diff: f64 = j.iter().zip(j_fd).map(|(a, b)| (a - b) * (a - b)).sum();
    let norm: f64 = j_fd.iter().map(|b| b * b).sum();
    (diff / norm.max(1e-300)).sqrt()
}

/// Eigenvalues of a symmetric n×n matrix (cyclic Jacobi rotations).
fn sym_eigenvalues(mut a: Vec<f64>, n: usize) -> Vec<f64> {
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum();
        let total: f64 = a.iter().map(|x| x * x).sum();
        if off <= 1e-30 * total {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
            }
        }
    }
    (0..n).map(|i| a[i * n + i]).collect()
}

/// Largest eigenvalue of the symmetric part of `m`, relative to ‖m‖_F, and the asymmetry.
fn max_eig_and_asym(m: &[f64], n: usize) -> (f64, f64) {
    let norm = m.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-300);
    let mut sym = vec![0.0; n * n];
    let mut asym = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            sym[i * n + j] = 0.5 * (m[i * n + j] + m[j * n + i]);
            asym = asym.max((m[i * n + j] - m[j * n + i]).abs());
        }
    }
    let max = sym_eigenvalues(sym, n).into_iter().fold(f64::MIN, f64::max);
    (max / norm, asym / norm)
}

fn to_f32<const N: usize>(x: &[DVec3; N]) -> [Vec3; N] {
    x.map(|p| p.as_vec3())
}

/// A random hinge: edge x0→x1, opposite vertices at dihedral `theta` (rad) around the edge.
fn random_hinge(rng: &mut Rng, scale: f64, theta: f64) -> [DVec3; 4] {
    let l = scale * rng.uniform(0.5, 1.5);
    let phi_a = rng.uniform(-std::f64::consts::PI, std::f64::consts::PI);
    // Flat and unfolded (θ = 0) when x3 is opposite x2 across the edge.
    let phi_b = phi_a + std::f64::consts::PI + theta;
    let opp = |rng: &mut Rng, phi: f64| {
        let h = l * rng.uniform(0.3, 1.2);
        DVec3::new(l * rng.uniform(-0.3, 1.3), h * phi.cos(), h * phi.sin())
    };
    let local = [
        DVec3::ZERO,
        DVec3::new(l, 0.0, 0.0),
        opp(rng, phi_a),
        opp(rng, phi_b),
    ];
    let q = rng.rotation();
    let t = rng.vec3(2.0);
    local.map(|p| q * p + t)
}

fn random_hinge_in(rng: &mut Rng, scale: f64, lo: f64, hi: f64) -> [DVec3; 4] {
    let theta = rng.uniform(lo, hi);
    random_hinge(rng, scale, theta)
}

fn wrap(d: f64) -> f64 {
    use std::f64::consts::PI;
    if d > PI {
        d - 2.0 * PI
    } else if d <= -PI {
        d + 2.0 * PI
    } else {
        d
    }
}

fn hinge_angle(x: &[DVec3; 4]) -> f64 {
    // Independent evaluation through unit normals and the edge direction.
    let e = (x[1] - x[0]).normalize();
    let na = (x[1] - x[0]).cross(x[2] - x[0]).normalize();
    let nb = (x[3] - x[0]).cross(x[1] - x[0]).normalize();
    na.cross(nb).dot(e).atan2(na.dot(nb))
}

#[test]
fn stretch_shear_jacobians_match_finite_differences() {
    let mut rng = Rng::new(1);
    let (mut worst_x, mut worst_v) = (0.0f64, 0.0f64);
    for case in 0..2000 {
        let scale = rng.uniform(0.01, 1.0);
        let (p, rest) = random_rest_triangle(&mut rng, scale);
        let mat = random_material(&mut rng);
        let x = deform(&mut rng, &p, scale, 0.4, 1.6);
        let v = [0, 1, 2].map(|_| rng.vec3(2.0));
        let ef = fd::stretch_shear(&x, &v, &rest, &mat, Jacobian::Exact);
        let h = 1e-6 * scale;
        let jx = fd_jacobian(&x, h, |y| {
            fd::stretch_shear(y, &v, &rest, &mat, Jacobian::Exact).f
        });
        let jv = fd_jacobian(&v, 1e-3, |w| {
            fd::stretch_shear(&x, w, &rest, &mat, Jacobian::Exact).f
        });
        let (ex, ev) = (
            rel_err(&dense(&ef.dfdx), &jx),
            rel_err(&dense(&ef.dfdv), &jv),
        );
        assert!(ex < FD_TOL, "case {case}: dfdx rel err {ex}");
        assert!(ev < FD_TOL, "case {case}: dfdv rel err {ev}");
        worst_x = worst_x.max(ex);
        worst_v = worst_v.max(ev);
    }
    println!(
        "stretch_shear: worst rel err dfdx {worst_x:.3e}, dfdv {worst_v:.3e} over 2000 triangles"
    );
}

#[test]
fn bend_jacobians_match_finite_differences() {
    let mut rng = Rng::new(2);
    let (mut worst_x, mut worst_v, mut tested, mut max_angle) = (0.0f64, 0.0f64, 0, 0.0f64);
    while tested < 2000 {
        let scale = rng.uniform(0.01, 1.0);
        let theta = rng.uniform(-170f64.to_radians(), 170f64.to_radians());
        let x = random_hinge(&mut rng, scale, theta);
        let theta0 = rng.uniform(-170f64.to_radians(), 170f64.to_radians());
        let Some(rest) = fd::HingeRest::from_positions(random_hinge(&mut rng, scale, theta0))
        else {
            continue;
        };
        // The wrapped condition is discontinuous at |θ − θ_rest| = π: stay away from it.
        if wrap(hinge_angle(&x) - rest.angle).abs() > 3.0 {
            continue;
        }
        let mat = random_material(&mut rng);
        let v = [0, 1, 2, 3].map(|_| rng.vec3(2.0));
        let ef = fd::bend(&x, &v, &rest, &mat, Jacobian::Exact);
        let jx = fd_jacobian(&x, 1e-6 * scale, |y| {
            fd::bend(y, &v, &rest, &mat, Jacobian::Exact).f
        });
        let jv = fd_jacobian(&v, 1e-3, |w| {
            fd::bend(&x, w, &rest, &mat, Jacobian::Exact).f
        });
        let (ex, ev) = (
            rel_err(&dense(&ef.dfdx), &jx),
            rel_err(&dense(&ef.dfdv), &jv),
        );
        assert!(ex < FD_TOL, "hinge {tested} (θ={theta}): dfdx rel err {ex}");
        assert!(ev < FD_TOL, "hinge {tested}: dfdv rel err {ev}");
        worst_x = worst_x.max(ex);
        worst_v = worst_v.max(ev);
        max_angle = max_angle.max(hinge_angle(&x).abs());
        tested += 1;
    }
    assert!(
        max_angle > 165f64.to_radians(),
        "angles up to {max_angle} rad only"
    );
    println!("bend: worst rel err dfdx {worst_x:.3e}, dfdv {worst_v:.3e} over 2000 hinges, |θ| up to {:.1}°", max_angle.to_degrees());
}

#[test]
fn bend_angle_matches_independent_evaluation() {
    let mut rng = Rng::new(3);
    for _ in 0..500 {
        let theta = rng.uniform(-179f64.to_radians(), 179f64.to_radians());
        let x = random_hinge(&mut rng, 1.0, theta);
        let rest = fd::HingeRest::from_positions(x).expect("well-shaped hinge");
        assert!(
            (rest.angle - theta).abs() < 1e-9,
            "{} vs {theta}",
            rest.angle
        );
        assert!((hinge_angle(&x) - theta).abs() < 1e-9);
        // Swapping the two opposite vertices and the edge direction describes the same hinge
        // with the triangles listed the other way round: same angle.
        let swapped = fd::HingeRest::from_positions([x[1], x[0], x[3], x[2]]).expect("hinge");
        assert!((swapped.angle - theta).abs() < 1e-9);
    }
}

#[test]
fn aero_jacobians_match_finite_differences() {
    let mut rng = Rng::new(4);
    let (mut worst_x, mut worst_v, mut tested) = (0.0f64, 0.0f64, 0);
    while tested < 2000 {
        let scale = rng.uniform(0.01, 1.0);
        let (p, _) = random_rest_triangle(&mut rng, scale);
        let x = deform(&mut rng, &p, scale, 0.5, 1.5);
        let v = [0, 1, 2].map(|_| rng.vec3(3.0));
        let wind = fd::Wind {
            velocity: rng.vec3(5.0),
            air_density: 1.2,
            drag: rng.uniform(0.5, 2.0),
            lift: rng.uniform(0.0, 1.0),
        };
        let n = (x[1] - x[0]).cross(x[2] - x[0]).normalize();
        let u = (v[0] + v[1] + v[2]) / 3.0 - wind.velocity;
        // |q| has a kink at edge-on flow: stay away from it.
        if n.dot(u).abs() < 0.05 * u.length() {
            continue;
        }
        let ef = fd::aero(&x, &v, &wind, Jacobian::Exact);
        let jx = fd_jacobian(&x, 1e-6 * scale, |y| {
            fd::aero(y, &v, &wind, Jacobian::Exact).f
        });
        let jv = fd_jacobian(&v, 1e-3, |w| fd::aero(&x, w, &wind, Jacobian::Exact).f);
        let (ex, ev) = (
            rel_err(&dense(&ef.dfdx), &jx),
            rel_err(&dense(&ef.dfdv), &jv),
        );
        assert!(ex < FD_TOL, "triangle {tested}: dfdx rel err {ex}");
        assert!(ev < FD_TOL, "triangle {tested}: dfdv rel err {ev}");
        worst_x = worst_x.max(ex);
        worst_v = worst_v.max(ev);
        tested += 1;
    }
    println!("aero: worst rel err dfdx {worst_x:.3e}, dfdv {worst_v:.3e} over 2000 triangles");
}

#[test]
fn f32_instantiation_agrees_with_f64() {
    let mut rng = Rng::new(5);
    let mut worst = 0.0f64;
    for _ in 0..500 {
        let (p, rest64) = random_rest_triangle(&mut rng, 1.0);
        let rest32 = forces::TriangleRest::from_plane(p.map(|q| q.as_vec2())).expect("rest");
        let mat = random_material(&mut rng);
        let x = deform(&mut rng, &p, 1.0, 0.5, 1.5);
        let v = [0, 1, 2].map(|_| rng.vec3(1.0));
        for jac in [Jacobian::Exact, Jacobian::Stabilized] {
            let a = fd::stretch_shear(&x, &v, &rest64, &mat, jac);
            let b = forces::stretch_shear(&to_f32(&x), &to_f32(&v), &rest32, &mat, jac);
            let db = b.dfdx.map(|r| r.map(|m| m.as_dmat3()));
            let e = rel_err(&dense(&db), &dense(&a.dfdx));
            let fa: f64 = a.f.iter().map(|f| f.length_squared()).sum::<f64>().sqrt();
            let ferr: f64 =
                a.f.iter()
                    .zip(&b.f)
                    .map(|(p, q)| (*p - q.as_dvec3()).length_squared())
                    .sum::<f64>()
                    .sqrt();
            worst = worst.max(e).max(ferr / fa.max(1e-12));
            assert!(
                e < 1e-4 && ferr <= 1e-4 * fa + 1e-9,
                "f32 vs f64: J {e}, f {ferr}/{fa}"
            );
        }
    }
    println!("f32 vs f64 stretch_shear: worst rel diff {worst:.3e}");
}

/// Relative difference of an f32 element (forces and both Jacobians) from its f64 twin.
fn rel_diff_f32<const N: usize>(a: &fd::ElementForce<N>, b: &forces::ElementForce<N>) -> f64 {
    let up = |m: &[[glam::Mat3; N]; N]| m.map(|r| r.map(|m| m.as_dmat3()));
    let fa: Vec<f64> = a.f.iter().flat_map(|f| f.to_array()).collect();
    let fb: Vec<f64> = b.f.iter().flat_map(|f| f.as_dvec3().to_array()).collect();
    rel_err(&fb, &fa)
        .max(rel_err(&dense(&up(&b.dfdx)), &dense(&a.dfdx)))
        .max(rel_err(&dense(&up(&b.dfdv)), &dense(&a.dfdv)))
}

#[test]
fn f32_bend_and_aero_agree_with_f64() {
    let mut rng = Rng::new(10);
    let (mut worst_bend, mut worst_aero) = (0.0f64, 0.0f64);
    for _ in 0..500 {
        let mat = random_material(&mut rng);
        let h = random_hinge_in(&mut rng, 1.0, -2.9, 2.9);
        let rest64 = fd::HingeRest::from_positions(random_hinge_in(&mut rng, 1.0, -1.0, 1.0))
            .expect("hinge");
        let rest32 = forces::HingeRest {
            angle: rest64.angle as f32,
            weight: rest64.weight as f32,
        };
        let rest64 = fd::HingeRest {
            angle: rest32.angle as f64,
            weight: rest32.weight as f64,
        };
        let v4 = [0, 1, 2, 3].map(|_| rng.vec3(1.0));
        let (p, _) = random_rest_triangle(&mut rng, 1.0);
        let x = deform(&mut rng, &p, 1.0, 0.5, 1.5);
        let v = [0, 1, 2].map(|_| rng.vec3(3.0));
        let w64 = fd::Wind {
            velocity: rng.vec3(5.0),
            air_density: 1.2,
            drag: 1.0,
            lift: 0.6,
        };
        let w32 = forces::Wind {
            velocity: w64.velocity.as_vec3(),
            air_density: 1.2,
            drag: 1.0,
            lift: 0.6,
        };
        for jac in [Jacobian::Exact, Jacobian::Stabilized] {
            let a = fd::bend(&h, &v4, &rest64, &mat, jac);
            let b = forces::bend(&to_f32(&h), &to_f32(&v4), &rest32, &mat, jac);
            worst_bend = worst_bend.max(rel_diff_f32(&a, &b));
            let a = fd::aero(&x, &v, &w64, jac);
            let b = forces::aero(&to_f32(&x), &to_f32(&v), &w32, jac);
            worst_aero = worst_aero.max(rel_diff_f32(&a, &b));
        }
    }
    assert!(
        worst_bend < 1e-3 && worst_aero < 1e-3,
        "bend {worst_bend}, aero {worst_aero}"
    );
    println!("f32 vs f64: bend worst rel diff {worst_bend:.3e}, aero {worst_aero:.3e}");
}

#[test]
fn stabilized_keeps_forces_and_is_negative_semidefinite() {
    let mut rng = Rng::new(6);
    let mut worst = f64::MIN;
    for case in 0..1000 {
        let (p, rest) = random_rest_triangle(&mut rng, 1.0);
        let mat = random_material(&mut rng);
        // Mostly compressed states (the indefinite case), some mixed.
        let hi = if case % 2 == 0 { 1.0 } else { 1.4 };
        let x = deform(&mut rng, &p, 1.0, 0.3, hi);
        let v = [0, 1, 2].map(|_| rng.vec3(2.0));
        let ex = fd::stretch_shear(&x, &v, &rest, &mat, Jacobian::Exact);
        let st = fd::stretch_shear(&x, &v, &rest, &mat, Jacobian::Stabilized);
        assert_eq!(ex.f, st.f);
        for m in [dense(&st.dfdx), dense(&st.dfdv)] {
            let (eig, asym) = max_eig_and_asym(&m, 9);
            assert!(
                eig <= 1e-12 && asym <= 1e-12,
                "stretch case {case}: max eig {eig}, asym {asym}"
            );
            worst = worst.max(eig);
        }
        // The f32 path too, with a tolerance for f32 round-off.
        let rest32 = forces::TriangleRest::from_plane(p.map(|q| q.as_vec2())).expect("rest");
        let st32 = forces::stretch_shear(
            &to_f32(&x),
            &to_f32(&v),
            &rest32,
            &mat,
            Jacobian::Stabilized,
        );
        let (eig, _) = max_eig_and_asym(&dense(&st32.dfdx.map(|r| r.map(|m| m.as_dmat3()))), 9);
        assert!(eig <= 1e-5, "f32 stretch case {case}: max eig {eig}");

        let x4 = random_hinge_in(&mut rng, 1.0, -3.0, 3.0);
        let rest4 = fd::HingeRest::from_positions(random_hinge_in(&mut rng, 1.0, -3.0, 3.0))
            .expect("hinge");
        let v4 = [0, 1, 2, 3].map(|_| rng.vec3(2.0));
        let ex = fd::bend(&x4, &v4, &rest4, &mat, Jacobian::Exact);
        let st = fd::bend(&x4, &v4, &rest4, &mat, Jacobian::Stabilized);
        assert_eq!(ex.f, st.f);
        for m in [dense(&st.dfdx), dense(&st.dfdv)] {
            let (eig, asym) = max_eig_and_asym(&m, 12);
            assert!(
                eig <= 1e-12 && asym <= 1e-12,
                "bend case {case}: max eig {eig}, asym {asym}"
            );
        }

        let wind = fd::Wind {
            velocity: rng.vec3(5.0),
            air_density: 1.2,
            drag: 1.0,
            lift: 0.5,
        };
        let ex = fd::aero(&x, &v, &wind, Jacobian::Exact);
        let st = fd::aero(&x, &v, &wind, Jacobian::Stabilized);
        assert_eq!(ex.f, st.f);
        for m in [dense(&st.dfdx), dense(&st.dfdv)] {
            let (eig, asym) = max_eig_and_asym(&m, 9);
            assert!(
                eig <= 1e-12 && asym <= 1e-12,
                "aero case {case}: max eig {eig}, asym {asym}"
            );
        }
    }
    println!("stabilised stretch/shear: largest eigenvalue / ‖J‖ = {worst:.3e}");
}

#[test]
fn exact_stretch_jacobian_is_indefinite_under_compression() {
    // Guards the meaning of the test above: the exact Jacobian really has positive eigenvalues
    // in compressed states, so Stabilized is doing something.
    let mut rng = Rng::new(7);
    let mut positive = 0;
    for _ in 0..200 {
        let (p, rest) = random_rest_triangle(&mut rng, 1.0);
        let mat = Material {
            stretch_damping: 0.0,
            ..random_material(&mut rng)
        };
        let x = deform(&mut rng, &p, 1.0, 0.3, 0.7);
        let ex = fd::stretch_shear(&x, &[DVec3::ZERO; 3], &rest, &mat, Jacobian::Exact);
        let (eig, _) = max_eig_and_asym(&dense(&ex.dfdx), 9);
        if eig > 1e-3 {
            positive += 1;
        }
    }
    assert!(
        positive > 100,
        "only {positive} of 200 compressed states indefinite"
    );
}

#[test]
fn forces_vanish_at_rest_including_precurved_hinges() {
    let mut rng = Rng::new(8);
    for _ in 0..500 {
        let mut mat = random_material(&mut rng);
        mat.rest_scale = [1.0, 1.0];
        let (p, _) = random_rest_triangle(&mut rng, 1.0);
        let q = rng.rotation();
        let t = rng.vec3(2.0);
        let x = p.map(|u| q * DVec3::new(u.x, u.y, 0.0) + t);
        // Rest from the placed positions (f32 API), evaluated at the same placement.
        let x32 = to_f32(&x);
        let rest = forces::TriangleRest::from_positions(x32).expect("rest");
        let ef = forces::stretch_shear(&x32, &[Vec3::ZERO; 3], &rest, &mat, Jacobian::Stabilized);
        let scale = mat.stretch[0].max(mat.stretch[1]).max(mat.shear)
            * rest.area
            * rest
                .du
                .iter()
                .chain(&rest.dv)
                .fold(0.0f32, |m, a| m.max(a.abs()));
        for f in ef.f {
            assert!(
                f.length() <= 1e-4 * scale,
                "stretch at rest: |f| = {} (scale {scale})",
                f.length()
            );
        }
        // Moved rigidly after computing the rest state: still (nearly) zero.
        let q2 = rng.rotation();
        let x2 = x.map(|p| (q2 * p + rng.vec3(0.0) + DVec3::splat(0.7)).as_vec3());
        let ef = forces::stretch_shear(&x2, &[Vec3::ZERO; 3], &rest, &mat, Jacobian::Stabilized);
        for f in ef.f {
            assert!(
                f.length() <= 1e-4 * scale,
                "stretch after rigid motion: |f| = {}",
                f.length()
            );
        }

        let h = random_hinge_in(&mut rng, 1.0, -3.0, 3.0);
        let h32 = to_f32(&h);
        let hr = forces::HingeRest::from_positions(h32).expect("hinge");
        let q3 = rng.rotation().as_quat();
        let moved = h32.map(|p| q3 * p + Vec3::new(0.3, -1.0, 2.0));
        let ef = forces::bend(&moved, &[Vec3::ZERO; 4], &hr, &mat, Jacobian::Stabilized);
        let fd64 = fd::bend(
            &h,
            &[DVec3::ZERO; 4],
            &fd::HingeRest {
                angle: hr.angle as f64 + 1e-3,
                weight: hr.weight as f64,
            },
            &mat,
            Jacobian::Stabilized,
        );
        // Reference magnitude: the force of a 1e-3 rad deviation.
        let reference = fd64.f.iter().map(|f| f.length()).fold(0.0, f64::max) as f32;
        for f in ef.f {
            assert!(
                f.length() <= 0.05 * reference,
                "bend at rest: |f| = {} vs 1 mrad force {reference}",
                f.length()
            );
        }
    }
}

#[test]
fn forces_are_rigid_motion_invariant_and_conserve_momentum() {
    let mut rng = Rng::new(9);
    for _ in 0..500 {
        let (p, rest) = random_rest_triangle(&mut rng, 1.0);
        let mat = random_material(&mut rng);
        let x = deform(&mut rng, &p, 1.0, 0.5, 1.5);
        let v = [0, 1, 2].map(|_| rng.vec3(2.0));
        let q = rng.rotation();
        let t = rng.vec3(3.0);
        let xr = x.map(|p| q * p + t);
        let vr = v.map(|w| q * w);
        let a = fd::stretch_shear(&x, &v, &rest, &mat, Jacobian::Exact);
        let b = fd::stretch_shear(&xr, &vr, &rest, &mat, Jacobian::Exact);
        let fmax = a.f.iter().map(|f| f.length()).fold(0.0, f64::max);
        for i in 0..3 {
            assert!((q * a.f[i] - b.f[i]).length() <= 1e-9 * fmax.max(1e-9));
        }
        let sum: DVec3 = a.f.iter().sum();
        assert!(
            sum.length() <= 1e-9 * fmax.max(1e-9),
            "stretch momentum {sum}"
        );
        let torque: DVec3 = x.iter().zip(&a.f).map(|(p, f)| p.cross(*f)).sum();
        // Damping forces along ∂C/∂x are torque-free too (C is rotation invariant).
        let arm = x.iter().map(|p| p.length()).fold(0.0, f64::max);
        assert!(
            torque.length() <= 1e-9 * fmax * arm,
            "stretch angular momentum {torque}"
        );

        let h = random_hinge_in(&mut rng, 1.0, -3.0, 3.0);
        let hr = fd::HingeRest::from_positions(random_hinge_in(&mut rng, 1.0, -2.0, 2.0))
            .expect("hinge");
        let v4 = [0, 1, 2, 3].map(|_| rng.vec3(2.0));
        let a = fd::bend(&h, &v4, &hr, &mat, Jacobian::Exact);
        let b = fd::bend(
            &h.map(|p| q * p + t),
            &v4.map(|w| q * w),
            &hr,
            &mat,
            Jacobian::Exact,
        );
        let fmax = a.f.iter().map(|f| f.length()).fold(0.0, f64::max);
        for i in 0..4 {
            assert!((q * a.f[i] - b.f[i]).length() <= 1e-9 * fmax.max(1e-9));
        }
        let sum: DVec3 = a.f.iter().sum();
        assert!(sum.length() <= 1e-9 * fmax.max(1e-9), "bend momentum {sum}");
        let torque: DVec3 = h.iter().zip(&a.f).map(|(p, f)| p.cross(*f)).sum();
        let arm = h.iter().map(|p| p.length()).fold(0.0, f64::max);
        assert!(
            torque.length() <= 1e-9 * fmax * arm,
            "bend angular momentum {torque}"
        );

        // Air forces: rotating cloth and wind together rotates the force.
        let wind = fd::Wind {
            velocity: rng.vec3(5.0),
            air_density: 1.2,
            drag: 1.0,
            lift: 0.7,
        };
        let wr = fd::Wind {
            velocity: q * wind.velocity,
            ..wind
        };
        let a = fd::aero(&x, &v, &wind, Jacobian::Exact);
        let b = fd::aero(&xr, &vr, &wr, Jacobian::Exact);
        let fmax = a.f.iter().map(|f| f.length()).fold(0.0, f64::max);
        for i in 0..3 {
            assert!((q * a.f[i] - b.f[i]).length() <= 1e-9 * fmax.max(1e-9));
        }
    }
}

#[test]
fn aero_matches_kang_drag_magnitude_and_lift_direction() {
    // Unit right triangle in the xy plane (S = 0.5 m²), air still, cloth moving.
    let x = [DVec3::ZERO, DVec3::X, DVec3::Y];
    let wind = fd::Wind {
        velocity: DVec3::ZERO,
        air_density: 1.2,
        drag: 1.5,
        lift: 0.8,
    };
    // Face-on at 2 m/s: drag = ½ρ C_D |u|² S = 0.5·1.2·1.5·4·0.5 = 1.8 N against the motion, no lift.
    let v = [DVec3::new(0.0, 0.0, 2.0); 3];
    let f: DVec3 = fd::aero(&x, &v, &wind, Jacobian::Exact).f.iter().sum();
    assert!((f - DVec3::new(0.0, 0.0, -1.8)).length() < 1e-12, "{f}");
    // At 30° to the surface: drag ½ρC_D|u|²S sin30° along −u, lift ½ρC_L|u|²S sin30°cos30° ⟂ u.
    let dir = DVec3::new(30f64.to_radians().cos(), 0.0, 30f64.to_radians().sin());
    let v = [dir * 2.0; 3];
    let f: DVec3 = fd::aero(&x, &v, &wind, Jacobian::Exact).f.iter().sum();
    let along = f.dot(dir);
    let perp = f - dir * along;
    assert!(
        (along + 0.5 * 1.2 * 1.5 * 4.0 * 0.5 * 0.5).abs() < 1e-12,
        "drag {along}"
    );
    let lift = 0.5 * 1.2 * 0.8 * 4.0 * 0.5 * 0.5 * 30f64.to_radians().cos();
    assert!(
        (perp.length() - lift).abs() < 1e-12,
        "lift {} vs {lift}",
        perp.length()
    );
    // Moving up-and-right through still air, a plate is pushed back and *up*: Kang's side.
    assert!(perp.z < 0.0 && perp.x > 0.0, "lift direction {perp}");
}

#[test]
fn strain_measures_warp_and_weft_stretch() {
    let rest = forces::TriangleRest::from_plane([glam::Vec2::ZERO, glam::Vec2::X, glam::Vec2::Y])
        .expect("rest");
    let mat = Material::default();
    let x = [
        Vec3::ZERO,
        Vec3::new(1.03, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 0.98),
    ];
    assert!((forces::strain(&x, &rest, &mat) - 0.03).abs() < 1e-6);
    let mat2 = Material {
        rest_scale: [1.03, 0.9],
        ..mat
    };
    assert!((forces::strain(&x, &rest, &mat2) - (0.98 / 0.9 - 1.0)).abs() < 1e-6);
}

#[test]
fn triangle_rest_constructors() {
    use glam::Vec2;
    // Right triangle with legs 2 (u) and 1 (v): w_u = Δx₁/2, w_v = Δx₂.
    let r =
        forces::TriangleRest::from_plane([Vec2::ZERO, Vec2::new(2.0, 0.0), Vec2::new(0.0, 1.0)])
            .expect("rest");
    assert_eq!(r.area, 1.0);
    assert_eq!(r.du, [-0.5, 0.5, 0.0]);
    assert_eq!(r.dv, [-1.0, 0.0, 1.0]);
    let u =
        forces::TriangleRest::from_uv([Vec2::ZERO, Vec2::new(4.0, 0.0), Vec2::new(0.0, 2.0)], 0.5)
            .expect("uv");
    assert_eq!(u, r);
    assert!(forces::TriangleRest::from_plane([Vec2::ZERO, Vec2::X, Vec2::new(2.0, 0.0)]).is_none());
    assert!(forces::TriangleRest::from_uv([Vec2::ZERO, Vec2::X, Vec2::Y], 0.0).is_none());
    assert!(forces::TriangleRest::from_uv([Vec2::ZERO, Vec2::X, Vec2::Y], f32::NAN).is_none());
    assert!(forces::TriangleRest::from_positions([Vec3::ZERO, Vec3::X, Vec3::X * 3.0]).is_none());
    // Isometric: a triangle in 3D and its flattened copy have the same rest data (warp along x).
    let p = [
        Vec3::ZERO,
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(0.0, 0.6, 0.8),
    ];
    let f = forces::TriangleRest::from_positions_oriented(p, Vec3::X).expect("rest");
    assert!((f.area - 1.0).abs() < 1e-6);
    for k in 0..3 {
        assert!((f.du[k] - r.du[k]).abs() < 1e-6 && (f.dv[k] - r.dv[k]).abs() < 1e-6);
    }
    // A degenerate hinge has no rest state.
    assert!(
        forces::HingeRest::from_positions([Vec3::ZERO, Vec3::X, Vec3::X * 2.0, Vec3::Y]).is_none()
    );
    let flat =
        forces::HingeRest::from_uv([Vec2::ZERO, Vec2::X, Vec2::Y, Vec2::new(1.0, -1.0)], 1.0)
            .expect("uv hinge");
    assert_eq!(flat.angle, 0.0);
    assert!((flat.weight - 1.0).abs() < 1e-6);
}

#[test]
fn warp_axis_is_consistent_across_triangles_even_when_normal_to_the_sheet() {
    let mut rng = Rng::new(11);
    // Sheets in the XY plane (warp X lies in it) and in the YZ plane (warp X is its normal).
    for (plane, warp) in [
        ([Vec3::X, Vec3::Y], Vec3::X),
        ([Vec3::Y, Vec3::Z], Vec3::X),
        ([Vec3::Z, Vec3::X], Vec3::new(0.0, 1.0, 0.05)),
    ] {
        // The material warp direction in that plane, measured on a reference triangle.
        let reference = [Vec3::ZERO, plane[0], plane[1]];
        let r0 = forces::TriangleRest::from_positions_oriented(reference, warp).expect("rest");
        let (wu_dir, _) = {
            // w_u of the identity placement is the unit warp direction in world space.
            let (a, b) = r0.w(&reference);
            (a.normalize(), b)
        };
        for _ in 0..50 {
            let pts = [0, 1, 2].map(|_| {
                let (a, b) = (rng.uniform(-1.0, 1.0) as f32, rng.uniform(-1.0, 1.0) as f32);
                plane[0] * a + plane[1] * b
            });
            let Some(rest) = forces::TriangleRest::from_positions_oriented(pts, warp) else {
                continue;
            };
            if rest.area < 0.05 {
                continue;
            }
            // Stretch the sheet by 10 % along the reference warp direction: every triangle sees
            // |w_u| = 1.1 and |w_v| = 1, whatever its shape or vertex order.
            let x = pts.map(|p| p + wu_dir * (0.1 * p.dot(wu_dir)));
            let (wu, wv) = rest.w(&x);
            assert!(
                (wu.length() - 1.1).abs() < 1e-4,
                "{plane:?}: |w_u| = {}",
                wu.length()
            );
            assert!(
                (wv.length() - 1.0).abs() < 1e-4,
                "{plane:?}: |w_v| = {}",
                wv.length()
            );
        }
    }
}

/// Bending energy of a right-triangle grid (spacing `h`, alternating diagonals) rolled onto a
/// cylinder of radius `radius` around the grid's y axis, per unit area of the interior columns.
fn rolled_grid_bend_energy_density(n: usize, radius: f64) -> f64 {
    let h = 1.0 / (n - 1) as f64;
    let id = |i: usize, j: usize| j * n + i;
    let flat: Vec<DVec3> = (0..n * n)
        .map(|k| DVec3::new((k % n) as f64 * h, (k / n) as f64 * h, 0.0))
        .collect();
    let rolled: Vec<DVec3> = flat
        .iter()
        .map(|p| {
            let phi = p.x / radius;
            DVec3::new(radius * phi.sin(), p.y, radius * (1.0 - phi.cos()))
        })
        .collect();
    let mut tris = Vec::new();
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if (i + j) % 2 == 0 {
                tris.extend([[a, b, c], [a, c, d]]);
            } else {
                tris.extend([[a, b, d], [b, c, d]]);
            }
        }
    }
    // Interior edges: pairs of triangles sharing an edge (quadratic search; small meshes).
    let bend = 1e-4;
    let mut energy = 0.0;
    for (ti, t) in tris.iter().enumerate() {
        for u in &tris[ti + 1..] {
            let shared: Vec<usize> = t.iter().copied().filter(|v| u.contains(v)).collect();
            if shared.len() != 2 {
                continue;
            }
            let opp = |tri: &[usize; 3]| *tri.iter().find(|v| !shared.contains(v)).unwrap();
            let hinge = [shared[0], shared[1], opp(t), opp(u)];
            let rest = fd::HingeRest::from_positions(hinge.map(|k| flat[k])).expect("flat hinge");
            let theta = hinge_angle(&hinge.map(|k| rolled[k]));
            energy += 0.5 * bend * rest.weight * wrap(theta - rest.angle).powi(2);
        }
    }
    energy / ((n - 2) as f64 * (n - 1) as f64 * h * h)
}

#[test]
fn bend_stiffness_is_a_resolution_independent_flexural_rigidity() {
    // Continuum: ½ B κ² per unit area with κ = 1/R.
    let (bend, radius) = (1e-4, 0.5);
    let continuum = 0.5 * bend / (radius * radius);
    for n in [8, 16, 32] {
        let e = rolled_grid_bend_energy_density(n, radius);
        assert!(
            (e / continuum - 1.0).abs() < 2e-3,
            "n = {n}: {e} vs {continuum}"
        );
    }
}
