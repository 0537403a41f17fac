//! Animation samplers against hand-computed values (glTF 2.0 spec, Appendix C).

use clothbake_io::animation::{slerp_shortest, Interpolation, Sampler};
use glam::{Quat, Vec3, Vec4};

fn v(x: f32, y: f32, z: f32) -> Vec4 {
    Vec4::new(x, y, z, 0.0)
}

fn close(a: Vec3, b: Vec3) {
    assert!(a.distance(b) < 1e-6, "{a} vs {b}");
}

#[test]
fn linear_interpolates_and_clamps() {
    let s = Sampler {
        times: vec![0.0, 1.0, 3.0],
        values: vec![v(0.0, 0.0, 0.0), v(2.0, 4.0, 6.0), v(4.0, 4.0, 4.0)],
        interpolation: Interpolation::Linear,
    };
    close(s.sample_vec3(0.5), Vec3::new(1.0, 2.0, 3.0));
    close(s.sample_vec3(2.0), Vec3::new(3.0, 4.0, 5.0));
    close(s.sample_vec3(1.0), Vec3::new(2.0, 4.0, 6.0));
    close(s.sample_vec3(-1.0), Vec3::ZERO);
    close(s.sample_vec3(5.0), Vec3::new(4.0, 4.0, 4.0));
}

#[test]
fn step_holds_the_previous_key() {
    let s = Sampler {
        times: vec![0.0, 1.0, 3.0],
        values: vec![v(0.0, 0.0, 0.0), v(2.0, 4.0, 6.0), v(4.0, 4.0, 4.0)],
        interpolation: Interpolation::Step,
    };
    close(s.sample_vec3(0.999), Vec3::ZERO);
    close(s.sample_vec3(1.0), Vec3::new(2.0, 4.0, 6.0));
    close(s.sample_vec3(2.5), Vec3::new(2.0, 4.0, 6.0));
    close(s.sample_vec3(3.0), Vec3::new(4.0, 4.0, 4.0));
}

#[test]
fn cubic_spline_uses_tangents_scaled_by_the_interval() {
    // Keys at t = 1 and t = 3 (interval 2): (in, value, out) per key.
    let s = Sampler {
        times: vec![1.0, 3.0],
        values: vec![
            v(9.0, 9.0, 9.0), // in-tangent of key 0: unused
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0), // out-tangent b0
            v(0.0, 2.0, 0.0), // in-tangent a1
            v(4.0, 0.0, 0.0),
            v(7.0, 7.0, 7.0), // out-tangent of the last key: unused
        ],
        interpolation: Interpolation::CubicSpline,
    };
    // s = 0.5: h00 = 0.5, h10 = 0.125, h01 = 0.5, h11 = -0.125;
    // p = 0.5·v0 + 0.125·2·b0 + 0.5·v1 − 0.125·2·a1 = (2.25, −0.5, 0).
    close(s.sample_vec3(2.0), Vec3::new(2.25, -0.5, 0.0));
    // s = 0.25: h10 = 0.140625, h01 = 0.15625, h11 = −0.046875 → (0.90625, −0.1875, 0).
    close(s.sample_vec3(1.5), Vec3::new(0.90625, -0.1875, 0.0));
    close(s.sample_vec3(0.0), Vec3::ZERO);
    close(s.sample_vec3(1.0), Vec3::ZERO);
    close(s.sample_vec3(3.0), Vec3::new(4.0, 0.0, 0.0));
    close(s.sample_vec3(10.0), Vec3::new(4.0, 0.0, 0.0));
}

#[test]
fn slerp_takes_the_shortest_arc() {
    let half = std::f32::consts::FRAC_PI_4; // half of 90°
    let q0 = Quat::IDENTITY;
    let q1 = Quat::from_xyzw(0.0, 0.0, half.sin(), half.cos()); // 90° about Z
    let mid = slerp_shortest(q0, q1, 0.5);
    let want = Quat::from_xyzw(0.0, 0.0, (half / 2.0).sin(), (half / 2.0).cos()); // 45° about Z
    assert!(mid.dot(want).abs() > 1.0 - 1e-6, "{mid} vs {want}");
    // The same end rotation written with the opposite sign must give the same path.
    let mid_neg = slerp_shortest(q0, -q1, 0.5);
    let x = mid_neg * Vec3::X;
    close(x, Vec3::new(half.cos(), half.sin(), 0.0));
    // A quarter of the way: 22.5°.
    let x = slerp_shortest(q0, -q1, 0.25) * Vec3::X;
    let a = std::f32::consts::PI / 8.0;
    close(x, Vec3::new(a.cos(), a.sin(), 0.0));

    // Through a rotation sampler (LINEAR = slerp), between keys at 0 s and 2 s.
    let s = Sampler {
        times: vec![0.0, 2.0],
        values: vec![Vec4::from(q0), Vec4::from(-q1)],
        interpolation: Interpolation::Linear,
    };
    close(
        s.sample_rotation(1.0) * Vec3::X,
        Vec3::new(half.cos(), half.sin(), 0.0),
    );
    close(s.sample_rotation(3.0) * Vec3::X, Vec3::Y);
    // STEP rotations hold the key.
    let st = Sampler {
        interpolation: Interpolation::Step,
        ..s.clone()
    };
    close(st.sample_rotation(1.9) * Vec3::X, Vec3::X);
}
