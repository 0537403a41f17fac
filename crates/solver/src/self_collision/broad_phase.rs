//! Broad phase of the cloth–cloth stage: candidate vertex–triangle and edge–edge pairs whose swept,
//! inflated boxes overlap, rebuilt in O(n) from one [`SpatialHash`] over vertex, triangle and edge
//! boxes (Kang 2003 §5.3; cell size = 1.5 × median edge box). Same-level pairs come from a
//! front-to-back join of every hash bucket; pairs across levels (fast or huge primitives) from box queries of the
//! finer primitive into the coarser levels. Both run in parallel over fixed-size chunks, and the
//! result is put in canonical order — vertex–triangle by (vertex, triangle), edge–edge by (edge,
//! edge) — by a counting sort, so it depends neither on the thread count nor on the hash layout.
//! A pair whose boxes overlap is kept only if its [`Slabs`] (the diagonal axes of an 18-DOP)
//! overlap too: on a sheet lying in a coordinate plane that removes most neighbours whose boxes
//! merely touch.

use super::diagonal_slabs::Slabs;
use super::spatial_hash::{Aabb, SpatialHash, LEVELS};
use glam::Vec3;
use rayon::prelude::*;

/// Hash buckets per parallel join task (fixed, so the output order is thread-independent).
const BUCKET_CHUNK: usize = 2048;
/// Finest cell size as a multiple of the median edge box extent: fewer cells per box (and so fewer
/// repeated box tests) against more primitives per cell. On the 64² fold of the benchmark, 1.5 was
/// the fastest of 1, 1.5, 2 and 3.
const CELL_FACTOR: f32 = 1.5;
/// Primitives per parallel cross-level query task.
const PRIM_CHUNK: usize = 1024;

/// Per-task pair buffers: (vertex–triangle, edge–edge).
type PairBuffers = (Vec<[u32; 2]>, Vec<[u32; 2]>);

/// Read-only mesh data the broad phase filters with.
pub struct Mesh<'a> {
    pub triangles: &'a [[u32; 3]],
    pub edges: &'a [[u32; 2]],
    /// Garment of each vertex.
    pub layer: &'a [u32],
    /// Per garment: does it collide with itself?
    pub layer_self_collide: &'a [bool],
}

impl Mesh<'_> {
    /// Within a garment only if its self-collision is on; between garments always.
    fn allowed(&self, a: u32, b: u32) -> bool {
        let (la, lb) = (self.layer[a as usize], self.layer[b as usize]);
        la != lb || self.layer_self_collide[la as usize]
    }

    /// Vertex `p` against triangle `t`: not one of its corners, layers allowed. (Pairs of
    /// immovable vertices are kept: if their prescribed motions cross, only the impact-zone
    /// fail-safe can resolve them.)
    fn vertex_triangle_ok(&self, in_mesh: &[bool], p: u32, t: u32) -> bool {
        let tri = self.triangles[t as usize];
        in_mesh[p as usize] && !tri.contains(&p) && self.allowed(p, tri[0])
    }

    /// Edges `e` and `f`: no shared vertex, layers allowed.
    fn edge_edge_ok(&self, e: u32, f: u32) -> bool {
        let (a, b) = (self.edges[e as usize], self.edges[f as usize]);
        !(b.contains(&a[0]) || b.contains(&a[1])) && self.allowed(a[0], b[0])
    }
}

/// Reusable broad-phase state: boxes, hash, candidate lists.
#[derive(Debug, Default)]
pub struct BroadPhase {
    /// Swept vertex boxes of the last build (m).
    vbox: Vec<Aabb>,
    /// Swept vertex slabs of the last build.
    vslab: Vec<Slabs>,
    /// Vertex–triangle candidates `[vertex, triangle]`, sorted.
    pub vf: Vec<[u32; 2]>,
    /// Edge–edge candidates `[e, f]` with e < f, sorted.
    pub ee: Vec<[u32; 2]>,
    /// Is the vertex part of a triangle (only those collide)?
    in_mesh: Vec<bool>,
    /// Vertex, then triangle, then edge boxes.
    boxes: Vec<Aabb>,
    /// Slabs of the same primitives.
    slabs: Vec<Slabs>,
    /// Mesh vertices of each of those primitives (`u32::MAX` = none).
    verts: Vec<[u32; 3]>,
    hash: SpatialHash,
    extents: Vec<f32>,
    bufs: Vec<PairBuffers>,
    raw_vf: Vec<[u32; 2]>,
    raw_ee: Vec<[u32; 2]>,
    counts: Vec<u32>,
}

impl BroadPhase {
    /// Broad phase for `n` vertices and these triangles.
    pub fn new(n: usize, triangles: &[[u32; 3]], edges: &[[u32; 2]]) -> Self {
        let mut in_mesh = vec![false; n];
        for &i in triangles.iter().flatten() {
            in_mesh[i as usize] = true;
        }
        let none = u32::MAX;
        let verts = (0..n as u32)
            .map(|i| [i, none, none])
            .chain(triangles.iter().copied())
            .chain(edges.iter().map(|e| [e[0], e[1], none]))
            .collect();
        Self {
            vbox: vec![Aabb::EMPTY; n],
            vslab: vec![Slabs::EMPTY; n],
            in_mesh,
            verts,
            ..Self::default()
        }
    }

    /// Does a ball of radius `margin` (m) around `p` lie inside the swept box and slabs of vertex
    /// `i` of the last build (then the candidates of the last build still cover its motion)?
    pub fn contains_with_margin(&self, i: usize, p: Vec3, margin: f32) -> bool {
        self.vbox[i].contains_with_margin(p, margin)
            && self.vslab[i].contains_with_margin(p, margin)
    }

    /// Rebuilds the candidates for the motion x0 → x1 with boxes inflated by `inflate[i]` (m) per
    /// vertex.
    pub fn build(&mut self, mesh: &Mesh, x0: &[Vec3], x1: &[Vec3], inflate: &[f32]) {
        let n = x0.len();
        let (nt, ne) = (mesh.triangles.len(), mesh.edges.len());
        self.vbox
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = Aabb::swept(x0[i], x1[i], inflate[i]));
        self.vslab
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, s)| *s = Slabs::swept(x0[i], x1[i], inflate[i]));
        primitive_bounds(
            &self.vslab,
            mesh,
            Slabs::EMPTY,
            Slabs::union,
            &mut self.slabs,
        );
        primitive_bounds(&self.vbox, mesh, Aabb::EMPTY, Aabb::union, &mut self.boxes);
        let be = &self.boxes[n + nt..];
        let cell = CELL_FACTOR * SpatialHash::cell_size_for(be, &mut self.extents);
        self.hash.build(&self.boxes, &self.verts, cell);

        let kinds = [n as u32, (n + nt) as u32];
        let (hash, in_mesh, slabs) = (&self.hash, &self.in_mesh[..], &self.slabs[..]);
        let slabs_overlap = |a: u32, b: u32| slabs[a as usize].overlaps(&slabs[b as usize]);
        // Pair of hash primitives → candidate, if of matching kinds and allowed.
        let emit = |a: u32, b: u32, buf: &mut PairBuffers| {
            let (a, b) = (a.min(b), a.max(b));
            if b < kinds[0] || (a >= kinds[0] && b < kinds[1]) || !slabs_overlap(a, b) {
                return; // vertex–vertex or triangle–triangle, or apart along a diagonal
            }
            if a < kinds[0] {
                if b < kinds[1] && mesh.vertex_triangle_ok(in_mesh, a, b - kinds[0]) {
                    buf.0.push([a, b - kinds[0]]);
                }
            } else if a >= kinds[1] {
                let (e, f) = (a - kinds[1], b - kinds[1]);
                if mesh.edge_edge_ok(e, f) {
                    buf.1.push([e, f]);
                }
            }
        };
        self.raw_vf.clear();
        self.raw_ee.clear();
        for level in 0..LEVELS {
            let nb = hash.bucket_count(level);
            if nb == 0 {
                continue;
            }
            let chunks = nb.div_ceil(BUCKET_CHUNK);
            if self.bufs.len() < chunks {
                self.bufs.resize_with(chunks, Default::default);
            }
            self.bufs[..chunks]
                .par_iter_mut()
                .enumerate()
                .for_each(|(c, buf)| {
                    buf.0.clear();
                    buf.1.clear();
                    for b in c * BUCKET_CHUNK..nb.min((c + 1) * BUCKET_CHUNK) {
                        hash.join_bucket(
                            level,
                            b,
                            kinds,
                            |v, t| {
                                if slabs_overlap(v, t)
                                    && mesh.vertex_triangle_ok(in_mesh, v, t - kinds[0])
                                {
                                    buf.0.push([v, t - kinds[0]]);
                                }
                            },
                            |e, f| {
                                if slabs_overlap(e, f)
                                    && mesh.edge_edge_ok(e - kinds[1], f - kinds[1])
                                {
                                    buf.1.push([e - kinds[1], f - kinds[1]]);
                                }
                            },
                        );
                    }
                });
            for (v, e) in &self.bufs[..chunks] {
                self.raw_vf.extend_from_slice(v);
                self.raw_ee.extend_from_slice(e);
            }
        }
        if hash.has_coarse() {
            // Across levels: the finer primitive queries the coarser levels and the oversize list.
            let total = self.boxes.len();
            let chunks = total.div_ceil(PRIM_CHUNK);
            if self.bufs.len() < chunks {
                self.bufs.resize_with(chunks, Default::default);
            }
            self.bufs[..chunks]
                .par_iter_mut()
                .enumerate()
                .for_each(|(c, buf)| {
                    buf.0.clear();
                    buf.1.clear();
                    for a in c * PRIM_CHUNK..total.min((c + 1) * PRIM_CHUNK) {
                        let level = hash.level(a);
                        let a = a as u32;
                        if level < LEVELS {
                            hash.query(hash.bounds(a), level + 1, 0, |b| emit(a, b, buf));
                        }
                    }
                });
            for (v, e) in &self.bufs[..chunks] {
                self.raw_vf.extend_from_slice(v);
                self.raw_ee.extend_from_slice(e);
            }
            // Oversize against oversize, box against box.
            let big = hash.oversize();
            let mut buf = std::mem::take(&mut self.bufs[0]);
            buf.0.clear();
            buf.1.clear();
            for (i, &a) in big.iter().enumerate() {
                for &b in &big[i + 1..] {
                    if hash.bounds(a).overlaps(hash.bounds(b)) {
                        emit(a, b, &mut buf);
                    }
                }
            }
            self.raw_vf.extend_from_slice(&buf.0);
            self.raw_ee.extend_from_slice(&buf.1);
            self.bufs[0] = buf;
        }
        sort_pairs(&self.raw_vf, n, &mut self.counts, &mut self.vf);
        sort_pairs(&self.raw_ee, ne, &mut self.counts, &mut self.ee);
    }
}

/// Lexicographic sort of pairs with first element < `keys`: counting sort on the first element
/// (O(pairs + keys)), then each (short) run sorted on the second.
fn sort_pairs(raw: &[[u32; 2]], keys: usize, counts: &mut Vec<u32>, out: &mut Vec<[u32; 2]>) {
    counts.clear();
    counts.resize(keys + 1, 0);
    for p in raw {
        counts[p[0] as usize + 1] += 1;
    }
    for k in 0..keys {
        counts[k + 1] += counts[k];
    }
    out.clear();
    out.resize(raw.len(), [0; 2]);
    for p in raw {
        let slot = &mut counts[p[0] as usize];
        out[*slot as usize] = *p;
        *slot += 1;
    }
    // counts[k] is now the end of run k.
    let mut start = 0;
    for &end in &counts[..keys] {
        let run = &mut out[start..end as usize];
        if run.len() > 1 {
            run.sort_unstable_by_key(|p| p[1]);
        }
        start = end as usize;
    }
}

/// Bounds of every hash primitive, in hash order (vertices, then triangles, then edges): a
/// triangle's or edge's bound is the `union` of its vertices' `per_vertex` bounds.
fn primitive_bounds<T: Copy + Send + Sync>(
    per_vertex: &[T],
    mesh: &Mesh,
    empty: T,
    union: impl Fn(T, T) -> T + Sync,
    out: &mut Vec<T>,
) {
    let (n, nt, ne) = (per_vertex.len(), mesh.triangles.len(), mesh.edges.len());
    out.resize(n + nt + ne, empty);
    let (ov, rest) = out.split_at_mut(n);
    let (ot, oe) = rest.split_at_mut(nt);
    ov.copy_from_slice(per_vertex);
    ot.par_iter_mut()
        .zip(mesh.triangles.par_iter())
        .for_each(|(b, t)| {
            *b = union(
                union(per_vertex[t[0] as usize], per_vertex[t[1] as usize]),
                per_vertex[t[2] as usize],
            )
        });
    oe.par_iter_mut()
        .zip(mesh.edges.par_iter())
        .for_each(|(b, e)| *b = union(per_vertex[e[0] as usize], per_vertex[e[1] as usize]));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// x0, x1, triangles, edges.
    type Soup = (Vec<Vec3>, Vec<Vec3>, Vec<[u32; 3]>, Vec<[u32; 2]>);

    /// Random triangles of very different sizes, one of them moving absurdly far.
    fn soup() -> Soup {
        let mut s = 0x0dd_ba11_cafe_f00du64;
        let mut r = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        };
        let (mut x0, mut x1, mut tris) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..400u32 {
            let c = Vec3::new(r(), r() * 0.1, r());
            let size = if k % 40 == 0 { 0.3 } else { 0.03 };
            for _ in 0..3 {
                let p = c + size * Vec3::new(r(), r(), r());
                x0.push(p);
                let jump = if k == 7 { 1.0e6 } else { 0.02 };
                x1.push(p + jump * Vec3::new(r() - 0.5, r() - 0.5, r() - 0.5));
            }
            tris.push([3 * k, 3 * k + 1, 3 * k + 2]);
        }
        let edges = tris
            .iter()
            .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[0], t[2]]])
            .collect();
        (x0, x1, tris, edges)
    }

    #[test]
    fn candidates_equal_brute_force_in_canonical_order() {
        let (x0, x1, tris, edges) = soup();
        let n = x0.len();
        let layer = vec![0; n];
        let mesh = Mesh {
            triangles: &tris,
            edges: &edges,
            layer: &layer,
            layer_self_collide: &[true],
        };
        let inflate = vec![0.002; n];
        let mut bp = BroadPhase::new(n, &tris, &edges);
        bp.build(&mesh, &x0, &x1, &inflate);
        let vb: Vec<Aabb> = (0..n)
            .map(|i| Aabb::swept(x0[i], x1[i], inflate[i]))
            .collect();
        let vs: Vec<Slabs> = (0..n)
            .map(|i| Slabs::swept(x0[i], x1[i], inflate[i]))
            .collect();
        let ts: Vec<Slabs> = tris
            .iter()
            .map(|t| {
                vs[t[0] as usize]
                    .union(vs[t[1] as usize])
                    .union(vs[t[2] as usize])
            })
            .collect();
        let es: Vec<Slabs> = edges
            .iter()
            .map(|e| vs[e[0] as usize].union(vs[e[1] as usize]))
            .collect();
        let tb: Vec<Aabb> = tris
            .iter()
            .map(|t| {
                vb[t[0] as usize]
                    .union(vb[t[1] as usize])
                    .union(vb[t[2] as usize])
            })
            .collect();
        let eb: Vec<Aabb> = edges
            .iter()
            .map(|e| vb[e[0] as usize].union(vb[e[1] as usize]))
            .collect();
        let mut vf = Vec::new();
        for p in 0..n as u32 {
            for t in 0..tris.len() as u32 {
                if vb[p as usize].overlaps(&tb[t as usize])
                    && vs[p as usize].overlaps(&ts[t as usize])
                    && mesh.vertex_triangle_ok(&bp.in_mesh, p, t)
                {
                    vf.push([p, t]);
                }
            }
        }
        let mut ee = Vec::new();
        for e in 0..edges.len() as u32 {
            for f in e + 1..edges.len() as u32 {
                if eb[e as usize].overlaps(&eb[f as usize])
                    && es[e as usize].overlaps(&es[f as usize])
                    && mesh.edge_edge_ok(e, f)
                {
                    ee.push([e, f]);
                }
            }
        }
        assert!(
            bp.hash.has_coarse(),
            "the soup must exercise coarser levels"
        );
        assert!(vf.len() > 100 && ee.len() > 100);
        assert_eq!(bp.vf, vf);
        assert_eq!(bp.ee, ee);
    }
}
