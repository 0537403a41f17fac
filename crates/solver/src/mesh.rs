//! Triangle-mesh validation and topology (edges, bending hinges) of one garment.
//!
//! Any welded triangle mesh is accepted: open boundaries, several pieces, irregular triangulations.
//! Rejected with a [`ModelError`] naming the garment and element: indices out of range, a vertex used
//! twice by one triangle, non-finite positions, duplicate (coincident) vertices, unreferenced
//! vertices, zero-area triangles, edges shared by more than two triangles and duplicated triangles.

use crate::error::ModelError;
use glam::Vec3;

/// Relative area threshold: a triangle is degenerate when |e1 × e2| <= AREA_EPS · (longest edge)².
const AREA_EPS: f32 = 1e-6;

/// Edges and interior-edge hinges of one garment (local vertex indices).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Topology {
    /// Unique edges, `[a, b]` with `a < b`, sorted.
    pub edges: Vec<[u32; 2]>,
    /// One per interior (two-triangle) edge: `[e0, e1, o0, o1]`, the shared edge oriented as in the
    /// winding of triangle `o0`'s face, then the vertices opposite the edge in both faces.
    pub hinges: Vec<[u32; 4]>,
    /// For each hinge, the triangle it takes its material from (the first of the two faces).
    pub hinge_triangle: Vec<u32>,
}

/// Validates a garment and builds its topology. `garment` names it in errors.
pub fn build_topology(
    garment: &str,
    positions: &[Vec3],
    triangles: &[[u32; 3]],
) -> Result<Topology, ModelError> {
    let name = || garment.to_string();
    if triangles.is_empty() {
        return Err(ModelError::NoTriangles { garment: name() });
    }
    for (i, p) in positions.iter().enumerate() {
        if !p.is_finite() {
            return Err(ModelError::NonFinitePosition {
                garment: name(),
                vertex: i as u32,
                position: p.to_array(),
            });
        }
    }
    let n = positions.len();
    let mut used = vec![false; n];
    for (t, tri) in triangles.iter().enumerate() {
        for (k, &v) in tri.iter().enumerate() {
            if v as usize >= n {
                return Err(ModelError::IndexOutOfRange {
                    garment: name(),
                    triangle: t,
                    vertex: v,
                    count: n,
                });
            }
            if tri[(k + 1) % 3] == v {
                return Err(ModelError::RepeatedIndex {
                    garment: name(),
                    triangle: t,
                    vertex: v,
                });
            }
            used[v as usize] = true;
        }
    }
    if let Some(v) = used.iter().position(|u| !u) {
        return Err(ModelError::UnreferencedVertex {
            garment: name(),
            vertex: v as u32,
        });
    }
    check_duplicates(garment, positions)?;
    for (t, tri) in triangles.iter().enumerate() {
        let [a, b, c] = tri.map(|i| positions[i as usize]);
        let cross = (b - a).cross(c - a).length();
        let longest = (b - a)
            .length_squared()
            .max((c - b).length_squared())
            .max((a - c).length_squared());
        if cross <= AREA_EPS * longest || cross == 0.0 {
            return Err(ModelError::ZeroAreaTriangle {
                garment: name(),
                triangle: t,
                vertices: *tri,
            });
        }
    }
    edges_and_hinges(garment, triangles)
}

/// Exact coincidence of two vertex positions, found by sorting (O(n log n), deterministic).
fn check_duplicates(garment: &str, positions: &[Vec3]) -> Result<(), ModelError> {
    let mut order: Vec<u32> = (0..positions.len() as u32).collect();
    let key = |i: u32| positions[i as usize].to_array();
    order.sort_by(|&a, &b| {
        let (ka, kb) = (key(a), key(b));
        ka.partial_cmp(&kb)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    for w in order.windows(2) {
        if key(w[0]) == key(w[1]) {
            return Err(ModelError::DuplicateVertex {
                garment: garment.to_string(),
                vertex: w[1],
                duplicate_of: w[0],
                position: key(w[0]),
            });
        }
    }
    Ok(())
}

fn edges_and_hinges(garment: &str, triangles: &[[u32; 3]]) -> Result<Topology, ModelError> {
    // (min, max, triangle, local corner of the edge's first vertex in winding order)
    let mut half: Vec<(u32, u32, u32, u8)> = Vec::with_capacity(triangles.len() * 3);
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            half.push((a.min(b), a.max(b), t as u32, k as u8));
        }
    }
    half.sort_unstable();
    let mut topo = Topology::default();
    let mut i = 0;
    while i < half.len() {
        let mut j = i + 1;
        while j < half.len() && half[j].0 == half[i].0 && half[j].1 == half[i].1 {
            j += 1;
        }
        let edge = [half[i].0, half[i].1];
        topo.edges.push(edge);
        match j - i {
            1 => {}
            2 => {
                let (t0, k0) = (half[i].2 as usize, half[i].3 as usize);
                let t1 = half[i + 1].2 as usize;
                let tri0 = triangles[t0];
                let (e0, e1) = (tri0[k0], tri0[(k0 + 1) % 3]);
                let o0 = tri0[(k0 + 2) % 3];
                let o1 = triangles[t1]
                    .iter()
                    .copied()
                    .find(|&v| v != edge[0] && v != edge[1])
                    .unwrap_or(o0);
                if o0 == o1 {
                    return Err(ModelError::DuplicateTriangle {
                        garment: garment.to_string(),
                        triangle: t0,
                        other: t1,
                    });
                }
                topo.hinges.push([e0, e1, o0, o1]);
                topo.hinge_triangle.push(t0 as u32);
            }
            count => {
                return Err(ModelError::NonManifoldEdge {
                    garment: garment.to_string(),
                    edge,
                    triangles: count,
                    triangle: half[i].2 as usize,
                });
            }
        }
        i = j;
    }
    Ok(topo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quad() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let p = vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y];
        (p, vec![[0, 1, 2], [0, 2, 3]])
    }

    #[test]
    fn quad_has_five_edges_one_hinge() {
        let (p, t) = quad();
        let topo = build_topology("q", &p, &t).unwrap();
        assert_eq!(topo.edges, vec![[0, 1], [0, 2], [0, 3], [1, 2], [2, 3]]);
        assert_eq!(topo.hinges, vec![[2, 0, 1, 3]]);
    }

    #[test]
    fn errors_name_the_element() {
        let (mut p, mut t) = quad();
        t.push([0, 1, 7]);
        assert_eq!(
            build_topology("q", &p, &t),
            Err(ModelError::IndexOutOfRange {
                garment: "q".into(),
                triangle: 2,
                vertex: 7,
                count: 4
            })
        );
        t.pop();
        p[2].x = f32::NAN;
        assert!(matches!(
            build_topology("q", &p, &t),
            Err(ModelError::NonFinitePosition { vertex: 2, .. })
        ));
        p[2] = p[0];
        assert!(matches!(
            build_topology("q", &p, &t),
            Err(ModelError::DuplicateVertex {
                vertex: 2,
                duplicate_of: 0,
                ..
            })
        ));
        p[2] = Vec3::new(2.0, 0.0, 0.0);
        assert!(matches!(
            build_topology("q", &p, &t),
            Err(ModelError::ZeroAreaTriangle { triangle: 0, .. })
        ));
        let (mut p, mut t) = quad();
        p.push(Vec3::new(0.5, 0.5, 1.0));
        t.push([0, 2, 4]);
        assert!(matches!(
            build_topology("q", &p, &t),
            Err(ModelError::NonManifoldEdge {
                edge: [0, 2],
                triangles: 3,
                ..
            })
        ));
    }
}
