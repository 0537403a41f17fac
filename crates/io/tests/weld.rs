//! Welding: coincident and nearly coincident vertices merge (also across grid-cell boundaries),
//! distinct ones do not; maps are consistent and deterministic.

use clothbake_io::source_mesh::SourceMesh;
use clothbake_io::weld::{weld, NO_VERTEX};
use glam::Vec3;

#[test]
fn near_vertices_merge_across_cell_boundaries() {
    let eps = 1e-4;
    // Pairs straddling multiples of eps (the grid's cell size), 2e-5 apart; one pair 3e-4 apart.
    let positions = vec![
        Vec3::new(eps - 1e-5, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(eps + 1e-5, 0.0, 0.0),               // = vertex 0
        Vec3::new(1.0, 3.0 * eps, 0.0),                // distinct from vertex 1
        Vec3::new(1e-5, 1.0 - 1e-5, 2.0 * eps + 1e-6), // 2e-4 from vertex 2: distinct
        Vec3::new(5.0, 5.0, 5.0),                      // unused
    ];
    let mesh = SourceMesh {
        positions,
        faces: vec![vec![0, 1, 2], vec![3, 4, 5]],
        triangles: vec![[0, 1, 2], [3, 4, 5]],
        tri_uvs: None,
    };
    let w = weld(&mesh, Some(eps));
    assert_eq!(w.source_to_sim, vec![0, 1, 2, 0, 3, 4, NO_VERTEX]);
    assert_eq!(w.sim_to_source, vec![0, 1, 2, 4, 5]);
    assert_eq!(w.triangles, vec![[0, 1, 2], [0, 3, 4]]);
    // Without welding only the unused vertex goes.
    let w = weld(&mesh, None);
    assert_eq!(w.source_to_sim, vec![0, 1, 2, 3, 4, 5, NO_VERTEX]);
    // A triangle that collapses under welding is dropped.
    let mut m2 = mesh.clone();
    m2.triangles.push([0, 3, 1]);
    assert_eq!(weld(&m2, Some(eps)).triangles.len(), 2);
}
