//! Broad phase of the cloth–cloth stage: candidate vertex–triangle and edge–edge pairs whose swept,
//! inflated boxes overlap, rebuilt in O(n) from one [`SpatialHash`] over the triangle boxes only
//! (Kang 2003 §5.3; cell size = 1.5 × median edge box). Every vertex and edge is assigned to one of
//! its triangles ("representative triangles", Curtis, Tamstorf & Manocha 2008, [`Features`]), and
//! each pair of triangles whose boxes overlap is expanded into the vertex–triangle and edge–edge
//! pairs of the features they own: a third of the primitives in the hash, a sixth of the box tests
//! per bucket. Same-level triangle pairs come from a join of every hash bucket; pairs across levels
//! (fast or huge triangles) from box queries of the finer triangle into the coarser levels. Both run
//! in parallel over fixed-size chunks, and the result is put in canonical order — vertex–triangle
//! by (vertex, triangle), edge–edge by (edge, edge) — by a counting sort, so it depends neither on
//! the thread count nor on the hash layout. A pair whose boxes overlap is kept only if its
//! [`Slabs`] (the diagonal axes of an 18-DOP) overlap too: on a sheet lying in a coordinate plane
//! that removes many neighbours whose boxes merely touch.

use super::diagonal_slabs::Slabs;
use super::dop18::Dop18;
use super::spatial_hash::{Aabb, JoinScratch, SpatialHash, LEVELS};
use glam::Vec3;
use rayon::prelude::*;

/// Hash buckets per parallel join task (fixed, so the output order is thread-independent).
const BUCKET_CHUNK: usize = 2048;
/// Finest cell size as a multiple of the median edge box extent: fewer cells per box (and so fewer
/// repeated box tests) against more triangles per cell. On the 64² fold of the benchmark, 1.5 was
/// the fastest of 1, 1.5, 2 and 3 (measured with all primitives hashed; with triangles only 1, 1.5
/// and 2 were within the noise).
const CELL_FACTOR: f32 = 1.5;
/// Triangles per parallel cross-level query task.
const PRIM_CHUNK: usize = 1024;

/// Reusable buffers of one parallel task: the pairs it found and its join scratch.
#[derive(Debug, Default)]
struct Task {
    vf: Vec<[u32; 2]>,
    ee: Vec<[u32; 2]>,
    scratch: JoinScratch,
}

impl Task {
    fn clear(&mut self) {
        self.vf.clear();
        self.ee.clear();
    }
}

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
    #[inline]
    fn allowed(&self, a: u32, b: u32) -> bool {
        let (la, lb) = (self.layer[a as usize], self.layer[b as usize]);
        la != lb || self.layer_self_collide[la as usize]
    }

    /// Vertex `p` against triangle `t`: not one of its corners, layers allowed. (Pairs of
    /// immovable vertices are kept: if their prescribed motions cross, only the impact-zone
    /// fail-safe can resolve them.)
    #[inline]
    fn vertex_triangle_ok(&self, p: u32, t: u32) -> bool {
        let tri = self.triangles[t as usize];
        !tri.contains(&p) && self.allowed(p, tri[0])
    }

    /// Edges `e` and `f`: no shared vertex, layers allowed.
    #[inline]
    fn edge_edge_ok(&self, e: u32, f: u32) -> bool {
        let (a, b) = (self.edges[e as usize], self.edges[f as usize]);
        !(b.contains(&a[0]) || b.contains(&a[1])) && self.allowed(a[0], b[0])
    }
}

/// Vertices and edges assigned to their first triangle ("representative triangles", Curtis,
/// Tamstorf & Manocha 2008): every mesh vertex and edge belongs to exactly one triangle, whose box
/// and slabs contain its own. Features of triangle t are `verts[vstart[t]..vstart[t + 1]]` and
/// `edges[estart[t]..estart[t + 1]]` (edge indices).
#[derive(Debug, Default)]
struct Features {
    vstart: Vec<u32>,
    verts: Vec<u32>,
    estart: Vec<u32>,
    edges: Vec<u32>,
}

impl Features {
    /// # Panics
    /// If an edge is not an edge of any triangle (the caller derives edges from the triangles).
    fn new(n: usize, triangles: &[[u32; 3]], edges: &[[u32; 2]]) -> Self {
        let nt = triangles.len();
        let none = u32::MAX;
        let mut vowner = vec![none; n];
        for (t, tri) in triangles.iter().enumerate() {
            for &v in tri {
                if vowner[v as usize] == none {
                    vowner[v as usize] = t as u32;
                }
            }
        }
        // Triangles around each vertex (CSR), to find the first triangle of each edge.
        let mut start = vec![0u32; n + 1];
        for &v in triangles.iter().flatten() {
            start[v as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut around = vec![0u32; 3 * nt];
        for (t, tri) in triangles.iter().enumerate() {
            for &v in tri {
                around[fill[v as usize] as usize] = t as u32;
                fill[v as usize] += 1;
            }
        }
        let eowner: Vec<u32> = edges
            .iter()
            .map(|&[a, b]| {
                around[start[a as usize] as usize..start[a as usize + 1] as usize]
                    .iter()
                    .copied()
                    .find(|&t| triangles[t as usize].contains(&b))
                    .expect("every edge is an edge of a triangle")
            })
            .collect();
        let csr = |owner: &[u32]| {
            let mut start = vec![0u32; nt + 1];
            for &t in owner.iter().filter(|&&t| t != none) {
                start[t as usize + 1] += 1;
            }
            for t in 0..nt {
                start[t + 1] += start[t];
            }
            let mut fill = start.clone();
            let mut items = vec![0u32; start[nt] as usize];
            for (i, &t) in owner.iter().enumerate().filter(|(_, &t)| t != none) {
                items[fill[t as usize] as usize] = i as u32;
                fill[t as usize] += 1;
            }
            (start, items)
        };
        let (vstart, verts) = csr(&vowner);
        let (estart, edges) = csr(&eowner);
        Self {
            vstart,
            verts,
            estart,
            edges,
        }
    }

    /// Range of the vertices of `t` in `self.verts` (and in the per-build vertex bound array).
    fn vert_range(&self, t: u32) -> std::ops::Range<usize> {
        self.vstart[t as usize] as usize..self.vstart[t as usize + 1] as usize
    }

    /// Range of the edges of `t` in `self.edges` (and in the per-build edge bound arrays).
    fn edge_range(&self, t: u32) -> std::ops::Range<usize> {
        self.estart[t as usize] as usize..self.estart[t as usize + 1] as usize
    }
}

/// Reusable broad-phase state: bounds, hash, candidate lists.
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
    features: Features,
    /// Triangle boxes (m), hashed.
    tbox: Vec<Aabb>,
    /// Edge boxes (m), for the cell size.
    ebox: Vec<Aabb>,
    /// 18-DOPs of the triangles, and of the vertices and edges in the order of `features`.
    tdop: Vec<Dop18>,
    vdop: Vec<Dop18>,
    edop: Vec<Dop18>,
    hash: SpatialHash,
    extents: Vec<f32>,
    bufs: Vec<Task>,
    raw_vf: Vec<[u32; 2]>,
    raw_ee: Vec<[u32; 2]>,
    counts: Vec<u32>,
}

/// Read-only inputs of the per-pair expansion.
struct Expand<'a> {
    mesh: &'a Mesh<'a>,
    features: &'a Features,
    /// 18-DOPs of the triangles, and of the vertices and edges in the order of `features`.
    tdop: &'a [Dop18],
    vdop: &'a [Dop18],
    edop: &'a [Dop18],
}

impl Expand<'_> {
    /// Candidates from triangles `a` ≠ `b` whose boxes overlap: the vertices of each against the
    /// other triangle, and the edges of one against those of the other. Every vertex–triangle
    /// (edge–edge) pair whose boxes overlap comes from exactly one such triangle pair: that of the
    /// vertex's triangle and the triangle (of the two edges' triangles), since a feature's box lies
    /// in its triangle's box. (A triangle with itself would give only pairs sharing a vertex.)
    #[inline]
    fn pair(&self, a: u32, b: u32, buf: &mut Task) {
        let (da, db) = (&self.tdop[a as usize], &self.tdop[b as usize]);
        if !da.overlaps(db) {
            return;
        }
        let f = self.features;
        for (p, t, dt) in [(a, b, db), (b, a, da)] {
            for k in f.vert_range(p) {
                if self.vdop[k].overlaps(dt) {
                    let v = f.verts[k];
                    if self.mesh.vertex_triangle_ok(v, t) {
                        buf.vf.push([v, t]);
                    }
                }
            }
        }
        let (ra, rb) = (f.edge_range(a), f.edge_range(b));
        for i in ra {
            let di = &self.edop[i];
            for j in rb.clone() {
                if di.overlaps(&self.edop[j]) {
                    let (e, g) = (f.edges[i], f.edges[j]);
                    if self.mesh.edge_edge_ok(e, g) {
                        buf.ee.push([e.min(g), e.max(g)]);
                    }
                }
            }
        }
    }
}

impl BroadPhase {
    /// Broad phase for `n` vertices, these triangles and their edges.
    ///
    /// # Panics
    /// If an edge is not an edge of any triangle.
    pub fn new(n: usize, triangles: &[[u32; 3]], edges: &[[u32; 2]]) -> Self {
        let features = Features::new(n, triangles, edges);
        Self {
            vbox: vec![Aabb::EMPTY; n],
            vslab: vec![Slabs::EMPTY; n],
            tbox: vec![Aabb::EMPTY; triangles.len()],
            ebox: vec![Aabb::EMPTY; edges.len()],
            tdop: vec![Dop18::EMPTY; triangles.len()],
            vdop: vec![Dop18::EMPTY; features.verts.len()],
            edop: vec![Dop18::EMPTY; edges.len()],
            features,
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
        let ne = mesh.edges.len();
        self.vbox
            .par_iter_mut()
            .zip(self.vslab.par_iter_mut())
            .enumerate()
            .for_each(|(i, (b, s))| {
                *b = Aabb::swept(x0[i], x1[i], inflate[i]);
                *s = Slabs::swept(x0[i], x1[i], inflate[i]);
            });
        let (vbox, vslab) = (&self.vbox, &self.vslab);
        self.tbox
            .par_iter_mut()
            .zip(self.tdop.par_iter_mut())
            .zip(mesh.triangles.par_iter())
            .for_each(|((b, d), t)| {
                let [i, j, k] = t.map(|v| v as usize);
                *b = vbox[i].union(vbox[j]).union(vbox[k]);
                *d = Dop18::new(b, &vslab[i].union(vslab[j]).union(vslab[k]));
            });
        let f = &self.features;
        self.vdop
            .par_iter_mut()
            .zip(f.verts.par_iter())
            .for_each(|(d, &v)| *d = Dop18::new(&vbox[v as usize], &vslab[v as usize]));
        self.ebox
            .par_iter_mut()
            .zip(self.edop.par_iter_mut())
            .zip(f.edges.par_iter())
            .for_each(|((b, d), &e)| {
                let [i, j] = mesh.edges[e as usize].map(|v| v as usize);
                *b = vbox[i].union(vbox[j]);
                *d = Dop18::new(b, &vslab[i].union(vslab[j]));
            });
        let cell = CELL_FACTOR * SpatialHash::cell_size_for(&self.ebox, &mut self.extents);
        self.hash.build(&self.tbox, cell);

        let hash = &self.hash;
        let ex = Expand {
            mesh,
            features: &self.features,
            tdop: &self.tdop,
            vdop: &self.vdop,
            edop: &self.edop,
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
                .for_each(|(c, task)| {
                    task.clear();
                    let mut scratch = std::mem::take(&mut task.scratch);
                    for b in c * BUCKET_CHUNK..nb.min((c + 1) * BUCKET_CHUNK) {
                        hash.join_bucket(level, b, &mut scratch, |a, b| ex.pair(a, b, task));
                    }
                    task.scratch = scratch;
                });
            for t in &self.bufs[..chunks] {
                self.raw_vf.extend_from_slice(&t.vf);
                self.raw_ee.extend_from_slice(&t.ee);
            }
        }
        if hash.has_coarse() {
            // Across levels: the finer triangle queries the coarser levels and the oversize list.
            let total = self.tbox.len();
            let chunks = total.div_ceil(PRIM_CHUNK);
            if self.bufs.len() < chunks {
                self.bufs.resize_with(chunks, Default::default);
            }
            self.bufs[..chunks]
                .par_iter_mut()
                .enumerate()
                .for_each(|(c, task)| {
                    task.clear();
                    for a in c * PRIM_CHUNK..total.min((c + 1) * PRIM_CHUNK) {
                        let level = hash.level(a);
                        let a = a as u32;
                        if level < LEVELS {
                            hash.query(hash.bounds(a), level + 1, 0, |b| ex.pair(a, b, task));
                        }
                    }
                });
            for t in &self.bufs[..chunks] {
                self.raw_vf.extend_from_slice(&t.vf);
                self.raw_ee.extend_from_slice(&t.ee);
            }
            // Oversize against oversize, box against box.
            let big = hash.oversize();
            let task = &mut self.bufs[0];
            task.clear();
            for (i, &a) in big.iter().enumerate() {
                for &b in &big[i + 1..] {
                    if hash.bounds(a).overlaps(hash.bounds(b)) {
                        ex.pair(a, b, task);
                    }
                }
            }
            self.raw_vf.extend_from_slice(&task.vf);
            self.raw_ee.extend_from_slice(&task.ee);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_vertex_and_edge_belongs_to_one_of_its_triangles() {
        // Two triangles sharing edge 1–2, vertex 4 in no triangle.
        let tris = [[0, 1, 2], [2, 1, 3]];
        let edges = [[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]];
        let f = Features::new(5, &tris, &edges);
        let verts_of = |t| f.verts[f.vert_range(t)].to_vec();
        assert_eq!(verts_of(0), vec![0, 1, 2]);
        assert_eq!(verts_of(1), vec![3]);
        let edges_of = |t| f.edges[f.edge_range(t)].to_vec();
        assert_eq!(edges_of(0), vec![0, 1, 2]);
        assert_eq!(edges_of(1), vec![3, 4]);
    }

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
                    && mesh.vertex_triangle_ok(p, t)
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
