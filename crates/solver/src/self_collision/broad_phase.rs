//! Broad phase of the cloth–cloth stage: candidate vertex–triangle and edge–edge pairs whose swept,
//! inflated 18-DOPs overlap — swept in a frame that moves with the garment ([`frame_shift`], see
//! "The moving frame" below) — found every call with a bounding-volume hierarchy ([`bvh`]) over
//! triangle clusters: the two halves of each quad (pairs of triangles sharing their longest edge,
//! [`pair_triangles`]), so the tree holds half as many entries as triangles. The mesh does not
//! change, so the tree is built once (median splits of the cluster centres at the first build) and
//! every build only refits its 18-DOPs bottom-up in O(n) and traverses it against itself — the
//! classic scheme for deforming cloth (Bridson, Fedkiw & Anderson 2002 §6; van den Bergen 1997).
//! Every vertex and edge is assigned to one of its triangles ("representative triangles", Curtis,
//! Tamstorf & Manocha 2008, [`Features`]), and each pair of triangles sharing no vertex whose DOPs
//! overlap is expanded into the vertex–triangle and edge–edge pairs of the features they own.
//!
//! The topology splits the triangle pairs into three disjoint kinds, each tested once:
//! * triangles sharing a vertex: on smooth cloth most overlapping pairs, with few candidates;
//!   their feature pairs are a flat list made once ([`AdjacentPairs`]);
//! * triangles sharing no vertex in clusters that share one: touching clusters always overlap, and
//!   they are nearly all overlapping cluster pairs, so their triangle pairs are a flat list too,
//!   made at the first build ([`neighbour_clusters`]);
//! * clusters sharing no vertex: the pairs the self-traversal finds (it skips touching clusters).
//!
//! The two lists are tested in fixed chunks while one thread refits the tree and then traverses
//! it as a fixed list of jobs (subtrees and sibling pairs), all in one parallel region, each
//! chunk and job filling its own buffer. A pair is kept only if its [`Dop18`]s (the box plus the
//! diagonal axes x±y, y±z, z±x) overlap: on a sheet lying in a coordinate plane that removes many
//! neighbours whose boxes merely touch; edges keep only their boxes ([`DopBox`]) and get their
//! diagonal ranges from their vertices when the boxes overlap (see round 8 below). The
//! result is put in canonical order — vertex–triangle by (vertex, triangle), edge–edge by (edge,
//! edge) — by a counting sort (a comparison sort when the pairs are few for the keys), so it
//! depends neither on the thread count nor on the tree: it is exactly the brute-force list (the
//! tests compare the two). The neighbour lists test the box axes first: almost all of their pairs
//! are apart, 81 % of them along x, y or z.
//!
//! Pairs made only of vertices the stage never moves (hard pins, [`BroadPhase::set_fixed`]) are no
//! candidates: immovable subtrees, clusters and triangles are not expanded against each other,
//! and the neighbour list drops them once. When a few vertices leave their boxes,
//! [`BroadPhase::grow`] (grow.rs) adds their new pairs instead of a new build.
//!
//! Measured against the spatial hash this replaced (Kang 2003 §5.3: a hierarchical hash rebuilt
//! every call over the cluster boxes, bucket joins, the same neighbour list; 42 M instructions per
//! build on the dress, of which bucket joins 22 %, cluster pairs 16 %, neighbour list 15 %, hash
//! build 10 %, triangle-pair expansion 9 %, bounds 14 %, sort 3 %), with identical candidates and
//! caches (cmp on dress-walk and skirt-walk, at 1 and 2 threads). Instructions of the 46 builds of
//! the first 12 frames of the dress-walk sample (`RAYON_NUM_THREADS=1 valgrind --tool=callgrind`, a
//! temporary hook running every build twice, minus the normal bake): 1.858 G with the hash (40 M
//! per build), 0.979 G now (21 M per build); the whole bake 37.33 → 36.48 G. Of the 21 M: neighbour
//! feature list 6.6 M, traversal 5.1 M, bounds about 4.1 M (closures), sort 1.3 M, expansions 2.3
//! M, refit 1.0 M (the hash's 40 M: bucket joins 9.5 M, neighbour list 7.0 M, cluster pairs 6.7 M,
//! hash build 4.8 M, expansion 2.4 M, sort 1.3 M). One build of the dress-walk sample replayed 200
//! times (one thread, a temporary `BENCH` hook in `build`, not kept): 2.3 ms with the hash, 1.15 ms
//! now (builds 15 and 30 of the first 12 frames; build 45: 2.95 → 1.77 ms). Per build of the whole
//! dress bake (one thread, the solve evicting the bounds from the caches between builds): bounds
//! 0.50 ms, refit with the two lists 0.92 ms (191,862 neighbour feature pairs, 29,748
//! neighbour-cluster triangle pairs), traversal and expansion 0.95 ms (2,458 cluster pairs sharing
//! no vertex), sort 0.13 ms, for 16,599 raw candidates. Whole bakes, three alternating pairs of the
//! two binaries each (`/tmp/s18/exp.py BIN SCENE`, 2 cores shared with other jobs, load average
//! 4–7, so the stage's wall seconds are noisy; CPU s steadier):
//!
//! | scene, threads | `broad_phase` s, hash → hierarchy     | CPU s, hash → hierarchy         |
//! |----------------|---------------------------------------|---------------------------------|
//! | dress, 1       | 1.48 3.75 1.90 → 1.38 1.38 0.92       | 8.53 8.70 8.66 → 8.28 8.42 8.07 |
//! | dress, 2       | 1.45 2.13 2.41 → 1.47 1.42 1.73       | 9.08 9.13 9.16 → 8.95 8.49 8.74 |
//! | skirt, 1       | 0.469 0.421 0.448 → 0.302 0.306 0.297 | 3.75 3.57 3.63 → 3.57 3.56 3.55 |
//! | skirt, 2       | 0.62 0.60 0.69 → 0.45 0.42 0.34       | 3.95 3.80 3.74 → 3.85 3.67 3.65 |
//!
//! Two more pairs at 2 threads when the load had dropped (load average 2–3; wall ≈ CPU, so the
//! bake still had about one core): dress `broad_phase` 1.35 1.35 → 0.905 0.895 s, CPU 8.61 8.62 →
//! 8.28 8.22 s; skirt 0.441 0.430 → 0.308 0.322 s, CPU 3.68 3.65 → 3.59 3.73 s.
//!
//! ## The moving frame (round 6)
//!
//! What the broad phase costs per substep try on the dress-walk sample (d63aa67, 278 tries = 253
//! accepted + 25 rejected, 10,212 vertices, 20,128 triangles): one full build in `prepare` ahead
//! of the solve (not beside it: the IC(0) solve takes both cores); after the solve, the prepared
//! boxes held the actual sweep in 84 tries, [`BroadPhase::grow`] widened them in 194, and 84 more
//! grows followed impulses of the continuous-collision passes; 35 of the 278 grows fell back to a
//! full build, so 313 builds in all. A build (the bounds, the tree refit beside the two neighbour
//! lists, the traversal in its parallel jobs, the sort) found 22,200 candidates (6,360
//! vertex–triangle, 15,850 edge–edge), yet only 1,803 of those were pairs whose unswept boxes
//! overlap: the dress travels about 10 mm per substep with the walking body (median displacement;
//! edges are 17 mm, the inflation 1–2.5 mm), and boxes swept along that common motion overlap
//! their neighbours ahead and behind.
//!
//! Collisions depend only on the relative positions of the primitives at equal times. In a frame
//! moving at a constant velocity every linear motion x0 → x1 stays linear, x0 → x1 − shift, and
//! the relative positions at every time are the same; so 18-DOPs of those sweeps, with the same
//! inflation, hold every pair that comes within the inflation during the substep, exactly as the
//! world-frame sweeps did (a test checks every pair closer than twice the inflation at 41 times
//! of a carried, crumpled motion). [`frame_shift`] takes the per-axis median displacement, and
//! [`BroadPhase::contains_with_margin`] and [`BroadPhase::grow`] use the frame of the last build.
//! The candidates are then another superset of the pairs that can touch: the narrow phase finds
//! the same contacts in the same canonical order, and the caches of the dress-walk, skirt-walk,
//! thin-skirt-walk and cape-run samples stay byte-identical to d63aa67 (`cmp`, at 1 and 2
//! threads for the dress and the skirt). On the dress 3,700 candidates per build instead of
//! 22,200 (855 vertex–triangle, 2,842 edge–edge), so the proximity and continuous-collision
//! passes test a sixth of the pairs; the builds: 321 instead of 313 (43 grows fell back).
//!
//! Instructions per build (`RAYON_NUM_THREADS=1 valgrind --tool=callgrind`, every 8th build of
//! the dress bake dumped and replayed by a temporary hook, not kept, one run minus a run with each build
//! done once more): 26.2 M at d63aa67 — neighbour feature list 6.8 M, bounds 4.1 M, traversal
//! 5.7 M, expansions 4.4 M, sort 1.9 M, neighbour-cluster triangles 1.1 M, refit 1.0 M — and
//! 17.1 M now: the moving frame 21.4 M (with the median of all 10,212 vertices: 1.0 M; of 1,024
//! of them now), box-first neighbour tests and the small-list sort 18.0 M, the leaves' static
//! touch masks ([`bvh`]) 17.1 M (neighbour feature list 4.7 M, bounds 3.9 M, traversal 4.5 M, expansions 1.1 M).
//! The 41 replayed builds equal brute force over the moving-frame 18-DOPs. Tried and not kept:
//! leaves of 4 clusters (18.8 M), testing each leaf's clusters against the other leaf's bounds
//! before the pairs (no change).
//!
//! Reuse across builds was measured and does not pay on the character scenes. The candidates are
//! a monotone function of the vertex 18-DOPs, so those of widened DOPs, filtered, would give the
//! same list while every vertex stays inside its widened DOP ("Verlet lists" with a skin). On
//! the dress-walk sample the garment moves about a cluster's size per substep: of 297 builds at a
//! new start state at least 10,210 of the 10,212 vertices had left the previous boxes, and even
//! the 60 builds at the same start (retries after a rejection with h/2, continuous-collision
//! builds) had 644 to all 10,212 (median 3,522) outside. A skin of one more substep of motion
//! and twice the inflation, grown like [`BroadPhase::grow`] for the escaped vertices, still had
//! to be rebuilt in 132 of 357 builds, its lists were 9× the candidates, and the broad phase
//! took more instructions (0.94 → 1.06 G on the first 7 frames, with the spatial hash). In the
//! moving frame the relative motion is smaller but still too large for a skin: after the median
//! displacement is taken out, the vertices move 1–2 mm (median) and up to 10–19 mm per substep.
//!
//! ## Where a build goes at one and two threads (round 7)
//!
//! The dress-walk bake at fd418a0 (temporary timers, not kept; load average 4–5 on the 2 cores, so
//! "two threads" had about one core and its seconds are those of one): 304 builds — one per try in
//! `prepare` (275) and 29 after [`BroadPhase::grow`] declined — and 239 grows. Seconds over the
//! bake at one thread: bounds 0.13–0.17 (vertices 0.03, triangles 0.03–0.05, edges 0.06–0.07),
//! the tree refit 0.05–0.10 beside the neighbour lists 0.19–0.23 (71,928 vertex–triangle and
//! 119,934 edge–edge feature pairs, 29,748 triangle pairs), the traversal with its expansions
//! 0.24–0.30 (127 jobs, the largest 7 % of their sum), the sort 0.02–0.04; outside the builds the
//! grows 0.06–0.09 (serial: tree queries 0.023, neighbour pairs 0.012, merges 0.009), the escape
//! scan 0.010–0.018, the sweep check 0.014–0.03. Every 8th build replayed from a dump (38 builds, a
//! temporary hook and test, not kept; the minimum of 30 runs of each): 1.32–1.44 ms per build at
//! one thread and 0.67–0.75 ms at two when the machine let it, so a build itself scales about 2×
//! while its caches are warm. In the bake a build takes about 2 ms at one thread, probably because
//! the solve evicts its 5.8 MB of bounds and its lists between builds (not measured further), and
//! then two threads share that memory traffic.
//!
//! Kept, each checked by the replay (alternating pairs, same candidates): the triangle and edge
//! bounds in one parallel region of 1,024-item tasks (one barrier less; the vertex pass had 5
//! tasks for 2 threads), the leaf pairs of the traversal testing the box first and skipping the
//! touching pairs by their mask bits ([`bvh`]), and the comparison sort by one 64-bit key
//! ([`sort_pairs`]). All four, 5 alternating pairs: 1.349 → 1.269 ms per build at one thread
//! (medians, −6 %, 5 of 5 pairs), 1.282 → 1.204 ms with two threads on the loaded machine (−6 %,
//! 5 of 5). Whole dress bakes at two threads, 6 alternating pairs (load average 2.4–4): the
//! `broad_phase` share of the wall time 12.0 11.9 11.9 11.2 11.3 11.4 → 11.7 11.2 11.4 10.7 10.8
//! 11.0 % (6 of 6 lower; the machine gave the bake about one core, so the seconds themselves are
//! noise: 0.402 → 0.380 s in the least loaded pair); caches byte-identical to fd418a0 (dress and
//! skirt, one and two threads). Tried and not kept: the grows' tree queries and neighbour pairs in
//! parallel chunks with the escape scan parallel too (the grows' seconds 0.049–0.055 → 0.047–0.106
//! with two threads on the loaded machine: no gain to be seen); the 18-DOP's bounds interleaved
//! (lo, hi per axis group, so the box is 32 contiguous bytes: 1.29–1.44 → 1.37–1.49 ms);
//! neighbour-list tasks of 4,096 pairs instead of 16,384 (no change); the box first in
//! [`Expand::expand`]'s feature tests (1.33 → 1.35 ms).
//!
//! ## Smaller bounds, fewer parallel regions (round 8)
//!
//! The 30,340 edges of the dress-walk sample keep only their boxes ([`DopBox`], 32 bytes instead
//! of 96: 1.0 MB written per build instead of 2.9); the diagonal ranges of two edges are
//! recomputed from their vertices' 18-DOPs (the same unions in the same order, so the same bits)
//! for the pairs whose boxes overlap, about a fifth of the 119,934 neighbour edge pairs. The
//! leaves of a traversal test the boxes of one cluster against all of another leaf's as a
//! branch-free mask, and the frame's samples are read in one pass. The tree's refit and
//! traversal run in one parallel region beside the neighbour lists (one barrier less; the leaves
//! are refit in chunks). Instructions of the 46 builds of the first 12 frames
//! (`RAYON_NUM_THREADS=1 valgrind --tool=callgrind --branch-sim=yes`, [`BroadPhase::build`]
//! inclusive, first build's set-up included): 772.8 → 843.1 M, mispredicted branches 5.54 →
//! 4.94 M. CPU time in [`BroadPhase::build`] over the whole bake at one thread (`perf record -e
//! cpu-clock -F 2000 --call-graph=dwarf`, alternating runs, load average 3–5): 579–598 ms (5
//! runs) → 537–570 ms (4 runs). Caches byte-identical to 3add282 (dress-walk and skirt-walk, one
//! and two threads). Tried and not kept: triangles as boxes too, with their diagonal ranges and
//! the cluster refit from the vertices (587–602 ms: the neighbour-cluster triangles 37–52 → 67–75
//! ms); the neighbour lists' box tests branch-free in blocks of 64 (mispredictions there 1.78 →
//! 0.28 M, but 90 M instructions more; `Expand::adjacent` 121–122 → 130–140 ms); no test of each
//! cluster against the other leaf's node before the mask (36 M instructions more, 0.45 M
//! mispredictions fewer, no difference seen).

use super::adjacent_pairs::AdjacentPairs;
use super::dop18::{Dop18, DopBox};
use super::parallel::par_chunks;
use super::topology::VertexTriangles;
use bvh::Bvh;
use glam::Vec3;
use rayon::prelude::*;

mod bvh;
mod grow;
mod neighbour_clusters;

/// Vertices, triangles or edges per parallel task of the bounds.
const BOUNDS_CHUNK: usize = 1024;
/// Neighbour feature pairs per parallel task.
const ADJACENT_CHUNK: usize = 16384;

/// Reusable buffers of one parallel task: the pairs it found.
#[derive(Debug, Default)]
struct Task {
    vf: Vec<[u32; 2]>,
    ee: Vec<[u32; 2]>,
}

impl Task {
    fn clear(&mut self) {
        self.vf.clear();
        self.ee.clear();
    }

    /// Appends the pairs of `tasks`, in order, to `vf` and `ee`.
    fn append_all(tasks: &[Task], vf: &mut Vec<[u32; 2]>, ee: &mut Vec<[u32; 2]>) {
        for t in tasks {
            vf.extend_from_slice(&t.vf);
            ee.extend_from_slice(&t.ee);
        }
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

    /// Does vertex `v`'s garment collide with itself?
    #[inline]
    fn self_collides(&self, v: u32) -> bool {
        self.layer_self_collide[self.layer[v as usize] as usize]
    }

    /// Vertex `p` against triangle `t`: not one of its corners, layers allowed. (Pairs made only
    /// of vertices declared immovable are left out separately, see [`Fixed`].) The reference for
    /// the tests; [`Expand`] knows it by construction.
    #[cfg(test)]
    #[inline]
    fn vertex_triangle_ok(&self, p: u32, t: u32) -> bool {
        let tri = self.triangles[t as usize];
        !tri.contains(&p) && self.allowed(p, tri[0])
    }

    /// Edges `e` and `f`: no shared vertex, layers allowed.
    #[cfg(test)]
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
pub(super) struct Features {
    vstart: Vec<u32>,
    pub verts: Vec<u32>,
    estart: Vec<u32>,
    pub edges: Vec<u32>,
    /// The vertices of `edges[i]`, as in the mesh's edge list.
    pub ends: Vec<[u32; 2]>,
}

impl Features {
    /// # Panics
    /// If an edge is not an edge of any triangle (the caller derives edges from the triangles).
    pub fn new(n: usize, triangles: &[[u32; 3]], edges: &[[u32; 2]]) -> Self {
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
        // The first triangle of each edge, found among the triangles around one of its ends.
        let around = VertexTriangles::new(n, triangles);
        let eowner: Vec<u32> = edges
            .iter()
            .map(|&[a, b]| {
                around
                    .of(a)
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
        let (estart, owned) = csr(&eowner);
        Self {
            vstart,
            verts,
            estart,
            ends: owned.iter().map(|&e| edges[e as usize]).collect(),
            edges: owned,
        }
    }

    /// Range of the vertices of `t` in `self.verts` (and in the per-build vertex bound array).
    pub fn vert_range(&self, t: u32) -> std::ops::Range<usize> {
        self.vstart[t as usize] as usize..self.vstart[t as usize + 1] as usize
    }

    /// Range of the edges of `t` in `self.edges` (and in the per-build edge bound arrays).
    pub fn edge_range(&self, t: u32) -> std::ops::Range<usize> {
        self.estart[t as usize] as usize..self.estart[t as usize + 1] as usize
    }
}

/// Vertices the cloth–cloth stage never moves (inverse mass 0: hard pins, which follow their
/// prescribed motion) and the triangles, edges and clusters all of whose vertices are such. A
/// vertex–triangle or edge–edge pair made only of them is skipped: no impulse or impact zone can
/// change its motion (BFA02 §7: their mass is infinite), so its proximity and collision tests are
/// wasted work — on the dress sample 2,220 of 10,212 vertices are pinned to the body.
#[derive(Debug, Default)]
struct Fixed {
    vert: Vec<bool>,
    tri: Vec<bool>,
    edge: Vec<bool>,
    /// Per cluster (made at the first build).
    cluster: Vec<bool>,
}

impl Fixed {
    /// Is the pair of vertex `v` and triangle `t` immovable?
    #[inline]
    fn vertex_triangle(&self, v: u32, t: u32) -> bool {
        self.vert[v as usize] && self.tri[t as usize]
    }

    /// Is the pair of edges `e`, `g` immovable?
    #[inline]
    fn edge_edge(&self, e: u32, g: u32) -> bool {
        self.edge[e as usize] && self.edge[g as usize]
    }

    /// The cluster flags for `clusters` (triangle flags set).
    fn set_clusters(&mut self, clusters: &[Cluster]) {
        self.cluster.clear();
        self.cluster.extend(
            clusters
                .iter()
                .map(|c| c.triangles().all(|t| self.tri[t as usize])),
        );
    }
}

/// Reusable broad-phase state: bounds, hierarchy, candidate lists.
#[derive(Debug, Default)]
pub struct BroadPhase {
    /// Swept, inflated 18-DOP of each vertex in the last build.
    vdop: Vec<Dop18>,
    /// Vertex–triangle candidates `[vertex, triangle]`, sorted.
    pub vf: Vec<[u32; 2]>,
    /// Edge–edge candidates `[e, f]` with e < f, sorted.
    pub ee: Vec<[u32; 2]>,
    features: Features,
    /// Feature pairs of triangles sharing a vertex (tested directly, not through the hierarchy).
    adjacent: AdjacentPairs,
    /// Pairs of triangles sharing an edge (or single triangles), made at the first build, and
    /// the hierarchy over them.
    clusters: Vec<Cluster>,
    bvh: Bvh,
    /// Triangle pairs of clusters sharing a vertex, the triangles sharing none (tested directly,
    /// not through the hierarchy; made at the first build).
    neighbour_tris: Vec<[u32; 2]>,
    /// 18-DOPs of the triangles, and the boxes of the edges in the order of `features` (their
    /// diagonal ranges are recomputed from the vertices for the pairs whose boxes overlap).
    tdop: Vec<Dop18>,
    ebox: Vec<DopBox>,
    bufs: Vec<Task>,
    /// Candidates of the neighbour-pair list of the last build, per chunk.
    near: Vec<Task>,
    raw_vf: Vec<[u32; 2]>,
    raw_ee: Vec<[u32; 2]>,
    counts_vf: Vec<u32>,
    counts_ee: Vec<u32>,
    /// Has a build run (the bounds, hierarchy and candidates belong together)?
    built: bool,
    /// Triangles around each vertex, and the cluster of each triangle (for [`Self::grow`]).
    around: VertexTriangles,
    tri_cluster: Vec<u32>,
    /// Clusters whose bounds grew since the last build (for [`Self::grow`]'s choice of a full
    /// build): flag per cluster and list.
    stale: Vec<bool>,
    stale_list: Vec<u32>,
    /// Scratch of [`Self::grow`]: triangles and clusters around the escaped vertices, the pairs
    /// found, the merged lists, the tree-query stack.
    grown_tris: Vec<u32>,
    stack: Vec<u32>,
    grown_clusters: Vec<u32>,
    grown_pairs: Task,
    merged: Vec<[u32; 2]>,
    /// Immovable vertices and what is made of them ([`Self::set_fixed`]).
    fixed: Fixed,
    /// The frame of the last build ([`frame_shift`]): every sweep ends at x1 − `shift` (m), and
    /// every bound is inflated by `pad` (m) more for the round-off of that subtraction.
    shift: Vec3,
    pad: f32,
    /// Scratch of [`frame_shift`].
    disp: Vec<Vec3>,
}

/// Read-only inputs of the per-pair expansion.
struct Expand<'a> {
    mesh: &'a Mesh<'a>,
    features: &'a Features,
    clusters: &'a [Cluster],
    fixed: &'a Fixed,
    /// 18-DOPs of the triangles and vertices, boxes of the edges in the order of `features`.
    tdop: &'a [Dop18],
    vdop: &'a [Dop18],
    ebox: &'a [DopBox],
}

impl Expand<'_> {
    /// The 18-DOP of edge slot `i` (in the order of `features`), from its vertices' as the
    /// bounds would hold it.
    #[inline]
    fn edge_dop(&self, i: usize) -> Dop18 {
        let [a, b] = self.features.ends[i];
        self.vdop[a as usize].union(&self.vdop[b as usize])
    }

    /// Do the 18-DOPs of edge slots `i` and `j` overlap? The box first.
    #[inline]
    fn edges_overlap(&self, i: usize, j: usize) -> bool {
        self.ebox[i].overlaps(&self.ebox[j])
            && self.edge_dop(i).overlaps_diagonals(&self.edge_dop(j))
    }

    /// Candidates from clusters `a` ≠ `b` whose boxes overlap: [`Self::expand`] for every pair of
    /// their triangles that share no vertex and may collide (different garments, or one garment
    /// with self-collision on). Triangles sharing a vertex give nothing here: their pairs are in
    /// [`AdjacentPairs`].
    /// Pairs of immovable clusters give nothing.
    #[inline]
    fn clusters(&self, a: u32, b: u32, buf: &mut Task) {
        let (fa, fb) = (
            self.fixed.cluster[a as usize],
            self.fixed.cluster[b as usize],
        );
        if fa && fb {
            return;
        }
        let (a, b) = (&self.clusters[a as usize], &self.clusters[b as usize]);
        let same = a.shared_corners(b);
        if same == [0; 4] {
            // No triangle of one shares a vertex with one of the other.
            if self.mesh.allowed(a.verts[0], b.verts[0]) {
                for s in a.triangles() {
                    for t in b.triangles() {
                        self.expand(s, t, buf);
                    }
                }
            }
            return;
        }
        // Neighbours (one garment): skip the triangle pairs that share a corner.
        if !self.mesh.self_collides(a.verts[0]) {
            return;
        }
        a.disjoint_pairs(b, same, |s, t| self.expand(s, t, buf));
    }

    /// Candidates among the triangle pairs `pairs` of neighbouring clusters (see
    /// [`neighbour_clusters`]): [`Self::expand`] for those that may collide.
    fn neighbour_triangles(&self, pairs: &[[u32; 2]], buf: &mut Task) {
        for &[s, t] in pairs {
            // Most are apart: test before the call.
            if self.tdop[s as usize].overlaps_box_first(&self.tdop[t as usize])
                && self.mesh.self_collides(self.mesh.triangles[s as usize][0])
            {
                self.expand(s, t, buf);
            }
        }
    }

    /// Candidates from triangles `a` ≠ `b` that share no vertex, if their 18-DOPs overlap: the
    /// vertices of each against the other triangle, and the edges of one against those of the
    /// other. Every vertex–triangle (edge–edge) pair whose DOPs overlap comes from exactly one such
    /// triangle pair: that of the vertex's triangle and the triangle (of the two edges' triangles),
    /// since a feature's DOP lies in its triangle's. No feature pair made here shares a vertex.
    #[inline(never)]
    fn expand(&self, a: u32, b: u32, buf: &mut Task) {
        let (da, db) = (&self.tdop[a as usize], &self.tdop[b as usize]);
        let fixed = self.fixed;
        if !da.overlaps(db) || fixed.tri[a as usize] && fixed.tri[b as usize] {
            return;
        }
        let f = self.features;
        for (p, t, dt) in [(a, b, db), (b, a, da)] {
            for k in f.vert_range(p) {
                let v = f.verts[k];
                if self.vdop[v as usize].overlaps(dt) && !fixed.vertex_triangle(v, t) {
                    buf.vf.push([v, t]);
                }
            }
        }
        let (ra, rb) = (f.edge_range(a), f.edge_range(b));
        for i in ra {
            for j in rb.clone() {
                if self.edges_overlap(i, j) {
                    let (e, g) = (f.edges[i], f.edges[j]);
                    if !fixed.edge_edge(e, g) {
                        buf.ee.push([e.min(g), e.max(g)]);
                    }
                }
            }
        }
    }

    /// Candidates among the feature pairs `adj.vf[range]` and `adj.ee[range]` of neighbouring
    /// triangles whose 18-DOPs overlap.
    fn adjacent(
        &self,
        adj: &AdjacentPairs,
        vf: std::ops::Range<usize>,
        ee: std::ops::Range<usize>,
        buf: &mut Task,
    ) {
        let f = self.features;
        for &[v, t] in &adj.vf[vf] {
            if self.vdop[v as usize].overlaps_box_first(&self.tdop[t as usize])
                && self.mesh.self_collides(v)
            {
                buf.vf.push([v, t]);
            }
        }
        for &[i, j] in &adj.ee[ee] {
            if self.edges_overlap(i as usize, j as usize) {
                let (e, g) = (f.edges[i as usize], f.edges[j as usize]);
                let v = self.mesh.edges[e as usize][0];
                if self.mesh.self_collides(v) {
                    buf.ee.push([e.min(g), e.max(g)]);
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
        let adjacent = AdjacentPairs::new(n, triangles, edges, &features);
        Self {
            adjacent,
            around: VertexTriangles::new(n, triangles),
            fixed: Fixed {
                vert: vec![false; n],
                tri: vec![false; triangles.len()],
                edge: vec![false; edges.len()],
                cluster: Vec::new(),
            },
            vdop: vec![Dop18::EMPTY; n],
            tdop: vec![Dop18::EMPTY; triangles.len()],
            ebox: vec![DopBox::EMPTY; edges.len()],
            features,
            ..Self::default()
        }
    }

    /// Marks the vertices the cloth–cloth stage never moves (`fixed[i]`; the caller guarantees
    /// their inverse mass is 0): from the next build on, pairs made only of them are no longer
    /// candidates (see [`Fixed`]).
    ///
    /// # Panics
    /// If `fixed` or the mesh do not match the sizes given to [`Self::new`].
    pub fn set_fixed(&mut self, fixed: &[bool], triangles: &[[u32; 3]], edges: &[[u32; 2]]) {
        let fx = &mut self.fixed;
        fx.vert.copy_from_slice(fixed);
        for (f, t) in fx.tri.iter_mut().zip(triangles) {
            *f = t.iter().all(|&v| fixed[v as usize]);
        }
        for (f, e) in fx.edge.iter_mut().zip(edges) {
            *f = e.iter().all(|&v| fixed[v as usize]);
        }
        if !self.clusters.is_empty() {
            fx.set_clusters(&self.clusters);
        }
        // The neighbour pairs of the new rule, once.
        let n = fixed.len();
        let feat = &self.features;
        self.adjacent = AdjacentPairs::new(n, triangles, edges, feat);
        self.adjacent.vf.retain(|&[v, t]| !fx.vertex_triangle(v, t));
        self.adjacent
            .ee
            .retain(|&[i, j]| !fx.edge_edge(feat.edges[i as usize], feat.edges[j as usize]));
        self.built = false;
    }

    /// Does a ball of radius `margin` (m) around `p` lie inside the swept 18-DOP of vertex `i` of
    /// the last build (then the candidates of the last build still cover its motion)?
    pub fn contains_with_margin(&self, i: usize, p: Vec3, margin: f32) -> bool {
        self.vdop[i].contains_with_margin(p - self.shift, margin)
    }

    /// Rebuilds the candidates for the motion x0 → x1 with boxes inflated by `inflate[i]` (m) per
    /// vertex.
    pub fn build(&mut self, mesh: &Mesh, x0: &[Vec3], x1: &[Vec3], inflate: &[f32]) {
        self.bounds(mesh, x0, x1, inflate);
        let ex = Expand {
            mesh,
            features: &self.features,
            clusters: &self.clusters,
            fixed: &self.fixed,
            tdop: &self.tdop,
            vdop: &self.vdop,
            ebox: &self.ebox,
        };
        // The tree is refit and then traversed in its fixed jobs while the neighbour pairs are
        // tested in fixed chunks: one parallel region, whose threads take the tasks of both
        // (their order does not depend on the thread count).
        let (bvh, adjacent, near) = (&mut self.bvh, &self.adjacent, &mut self.near);
        let (neighbour_tris, bufs) = (&self.neighbour_tris, &mut self.bufs);
        let (tdop, fixed) = (&self.tdop, &self.fixed.cluster);
        let near_chunks = adjacent
            .vf
            .len()
            .max(adjacent.ee.len())
            .max(neighbour_tris.len())
            .div_ceil(ADJACENT_CHUNK);
        let jobs = bvh.jobs().len();
        rayon::join(
            || {
                bvh.refit_leaves(|t| tdop[t as usize], fixed);
                bvh.refit_nodes();
                let bvh = &*bvh;
                let jobs = bvh.jobs();
                par_chunks(bufs, jobs.len(), |c, task| {
                    task.clear();
                    bvh.run(jobs[c], &mut |a, b| ex.clusters(a, b, task));
                });
            },
            || {
                par_chunks(near, near_chunks, |c, task| {
                    task.clear();
                    let range = |len: usize| {
                        (c * ADJACENT_CHUNK).min(len)..((c + 1) * ADJACENT_CHUNK).min(len)
                    };
                    let (vf, ee) = (range(adjacent.vf.len()), range(adjacent.ee.len()));
                    ex.adjacent(adjacent, vf, ee, task);
                    ex.neighbour_triangles(&neighbour_tris[range(neighbour_tris.len())], task);
                })
            },
        );
        self.raw_vf.clear();
        self.raw_ee.clear();
        let (raw_vf, raw_ee) = (&mut self.raw_vf, &mut self.raw_ee);
        Task::append_all(&self.near[..near_chunks], raw_vf, raw_ee);
        Task::append_all(&self.bufs[..jobs], raw_vf, raw_ee);
        let (n, ne) = (x0.len(), mesh.edges.len());
        let (raw_vf, counts_vf, vf) = (&self.raw_vf, &mut self.counts_vf, &mut self.vf);
        let (raw_ee, counts_ee, ee) = (&self.raw_ee, &mut self.counts_ee, &mut self.ee);
        rayon::join(
            || sort_pairs(raw_vf, n, counts_vf, vf),
            || sort_pairs(raw_ee, ne, counts_ee, ee),
        );
    }

    /// Swept, inflated 18-DOPs of the vertices, triangles and edges for x0 → x1, and the boxes of
    /// the clusters.
    fn bounds(&mut self, mesh: &Mesh, x0: &[Vec3], x1: &[Vec3], inflate: &[f32]) {
        self.shift = frame_shift(x0, x1, &mut self.disp);
        self.pad = shift_pad(self.shift);
        let (shift, pad) = (self.shift, self.pad);
        // In fixed chunks, each a plain loop (rayon's per-item calls cost more than a bound).
        self.vdop
            .par_chunks_mut(BOUNDS_CHUNK)
            .enumerate()
            .for_each(|(c, ds)| {
                let first = c * BOUNDS_CHUNK;
                let (x0, x1, r) = (&x0[first..], &x1[first..], &inflate[first..]);
                for (k, d) in ds.iter_mut().enumerate() {
                    *d = Dop18::swept(x0[k], x1[k] - shift, r[k] + pad);
                }
            });
        if self.clusters.is_empty() && !mesh.triangles.is_empty() {
            self.clusters = pair_triangles(mesh.triangles, x0);
            self.tri_cluster = vec![0; mesh.triangles.len()];
            for (c, cl) in self.clusters.iter().enumerate() {
                for t in cl.triangles() {
                    self.tri_cluster[t as usize] = c as u32;
                }
            }
            self.stale = vec![false; self.clusters.len()];
            self.fixed.set_clusters(&self.clusters);
            let centres: Vec<Vec3> = self
                .clusters
                .iter()
                .map(|c| c.verts.iter().map(|&v| x0[v as usize]).sum::<Vec3>() * 0.25)
                .collect();
            self.bvh = Bvh::new(&self.clusters, &centres);
            self.neighbour_tris = neighbour_clusters::neighbour_cluster_triangles(
                &self.clusters,
                &self.tri_cluster,
                &self.around,
            );
        }
        // Every box is current again.
        for &c in &self.stale_list {
            self.stale[c as usize] = false;
        }
        self.stale_list.clear();
        self.built = true;
        // Triangles and edges in one parallel region (both need only the vertex bounds).
        let vdop = &self.vdop;
        let (tdop, ebox, ends) = (&mut self.tdop, &mut self.ebox, &self.features.ends);
        rayon::join(
            || {
                tdop.par_chunks_mut(BOUNDS_CHUNK)
                    .zip(mesh.triangles.par_chunks(BOUNDS_CHUNK))
                    .for_each(|(ds, ts)| {
                        for (d, t) in ds.iter_mut().zip(ts) {
                            let [i, j, k] = t.map(|v| v as usize);
                            *d = vdop[i].union(&vdop[j]).union(&vdop[k]);
                        }
                    })
            },
            || {
                ebox.par_chunks_mut(BOUNDS_CHUNK)
                    .zip(ends.par_chunks(BOUNDS_CHUNK))
                    .for_each(|(ds, es)| {
                        for (d, e) in ds.iter_mut().zip(es) {
                            let [i, j] = e.map(|v| v as usize);
                            *d = vdop[i].box_union(&vdop[j]);
                        }
                    })
            },
        );
    }
}

/// Most vertices [`frame_shift`] takes the median of (every k-th).
const SHIFT_SAMPLES: usize = 1024;

/// The displacement (m) of the frame the sweeps are bounded in: per axis the median of the
/// vertices' displacements x1 − x0 (zero if that is not finite), so that a garment moving as a
/// whole — a walking character's dress travels about half an edge per substep — sweeps only its
/// motion relative to the others. Collisions depend only on relative positions at equal times,
/// and in a frame moving at a constant velocity every linear motion x0 → x1 stays linear, x0 →
/// x1 − shift; so bounds of those sweeps hold every pair that comes within their inflation during
/// the substep, like the world-frame sweeps did, with about a sixth of the candidates on the
/// dress-walk sample. The median, not the mean, so that one exploding vertex cannot stretch every
/// other vertex's sweep; of at most [`SHIFT_SAMPLES`] vertices, evenly spaced in index order (the
/// frame only needs to be near the typical motion), read in one pass. `scratch` is reusable.
pub(super) fn frame_shift(x0: &[Vec3], x1: &[Vec3], scratch: &mut Vec<Vec3>) -> Vec3 {
    frame_shift_of(x0.len(), |i| x1[i] - x0[i], scratch)
}

/// [`frame_shift`] of the displacements `disp(i)`, i < `n`.
pub(super) fn frame_shift_of(
    n: usize,
    disp: impl Fn(usize) -> Vec3,
    scratch: &mut Vec<Vec3>,
) -> Vec3 {
    if n == 0 {
        return Vec3::ZERO;
    }
    let stride = n.div_ceil(SHIFT_SAMPLES);
    scratch.clear();
    scratch.extend((0..n).step_by(stride).map(disp));
    let mid = scratch.len() / 2;
    let mut shift = [0.0f32; 3];
    for (axis, s) in shift.iter_mut().enumerate() {
        // The k-th smallest in the total order does not depend on the permutation left by the
        // selection along the previous axis.
        let (_, m, _) = scratch.select_nth_unstable_by(mid, |a, b| a[axis].total_cmp(&b[axis]));
        *s = m[axis];
    }
    let shift = Vec3::from(shift);
    if shift.is_finite() {
        shift
    } else {
        Vec3::ZERO
    }
}

/// Extra inflation (m) of every bound for the round-off of x1 − `shift` in f32: two ulps of the
/// shift (the caller's inflation already covers eight of the coordinates).
fn shift_pad(shift: Vec3) -> f32 {
    2.0 * f32::EPSILON * shift.abs().max_element()
}

/// One or two triangles sharing an edge, one entry of the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cluster {
    /// Its triangles (the second `u32::MAX` for a single triangle).
    tris: [u32; 2],
    /// Its corners (a triangle's first corner repeated for a single triangle).
    verts: [u32; 4],
    /// Per triangle, which of `verts` are its corners (bit i for `verts[i]`).
    masks: [u8; 2],
}

impl Cluster {
    /// Its one or two triangles.
    fn triangles(&self) -> impl Iterator<Item = u32> {
        self.tris.into_iter().filter(|&t| t != u32::MAX)
    }

    /// Per corner i of `self`: which corners of `other` equal it (bit j for `other.verts[j]`).
    fn shared_corners(&self, other: &Cluster) -> [u8; 4] {
        let mut same = [0u8; 4];
        for (i, u) in self.verts.iter().enumerate() {
            for (j, v) in other.verts.iter().enumerate() {
                same[i] |= ((u == v) as u8) << j;
            }
        }
        same
    }

    /// `f(s, t)` for each triangle s of `self` and t of `other` that share no vertex, given
    /// their [`Self::shared_corners`] `same`.
    fn disjoint_pairs(&self, other: &Cluster, same: [u8; 4], mut f: impl FnMut(u32, u32)) {
        for (s, ms) in self.triangles().zip(self.masks) {
            let mut touched = 0u8;
            for (i, &row) in same.iter().enumerate() {
                if ms >> i & 1 == 1 {
                    touched |= row;
                }
            }
            for (t, mt) in other.triangles().zip(other.masks) {
                if touched & mt == 0 {
                    f(s, t);
                }
            }
        }
    }
}

/// Pairs each triangle with the neighbour across its longest edge at `x` when that edge is the
/// neighbour's longest too (the two halves of a quad), in triangle order; the rest stay single.
/// Two triangles of one cluster share an edge.
fn pair_triangles(triangles: &[[u32; 3]], x: &[Vec3]) -> Vec<Cluster> {
    let longest = |t: &[u32; 3]| -> [u32; 2] {
        let len = |a: u32, b: u32| (x[a as usize] - x[b as usize]).length_squared();
        let e = [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]];
        let k = (0..3)
            .max_by(|&i, &j| len(e[i][0], e[i][1]).total_cmp(&len(e[j][0], e[j][1])))
            .unwrap_or(0);
        [e[k][0].min(e[k][1]), e[k][0].max(e[k][1])]
    };
    // Triangles by their longest edge: a quad's two halves share it.
    let mut by_edge: Vec<([u32; 2], u32)> = triangles
        .iter()
        .enumerate()
        .map(|(t, tri)| (longest(tri), t as u32))
        .collect();
    by_edge.sort_unstable();
    let mut partner = vec![u32::MAX; triangles.len()];
    for w in by_edge.windows(2) {
        let ((e, s), (f, t)) = (w[0], w[1]);
        if e == f && partner[s as usize] == u32::MAX && partner[t as usize] == u32::MAX {
            partner[s as usize] = t;
            partner[t as usize] = s;
        }
    }
    let mut out = Vec::with_capacity(triangles.len().div_ceil(2) + 1);
    for (t, &p) in partner.iter().enumerate() {
        let tri = triangles[t];
        let t = t as u32;
        if p == u32::MAX {
            out.push(Cluster {
                tris: [t, u32::MAX],
                verts: [tri[0], tri[1], tri[2], tri[0]],
                masks: [0b0111, 0],
            });
        } else if t < p {
            let other = triangles[p as usize];
            let fourth = other
                .into_iter()
                .find(|v| !tri.contains(v))
                .unwrap_or(tri[0]);
            let verts = [tri[0], tri[1], tri[2], fourth];
            let mask =
                |c: [u32; 3]| (0..4).fold(0u8, |m, i| m | (c.contains(&verts[i]) as u8) << i);
            out.push(Cluster {
                tris: [t, p],
                verts,
                masks: [mask(tri), mask(other)],
            });
        }
    }
    out
}

/// Below this many keys per pair, [`sort_pairs`] sorts by comparison.
const COUNTING_SORT_FROM: usize = 4;

/// Lexicographic sort of pairs with first element < `keys`: counting sort on the first element
/// (O(pairs + keys)), then each (short) run sorted on the second; a comparison sort when there
/// are few pairs for the keys (as one 64-bit key each: on the dress-walk sample, whose lists of
/// about 1,000 vertex–triangle and 3,300 edge–edge pairs all take this branch, a build 1.309 →
/// 1.265 ms in the replay of round 7 against comparing the two halves in turn).
fn sort_pairs(raw: &[[u32; 2]], keys: usize, counts: &mut Vec<u32>, out: &mut Vec<[u32; 2]>) {
    if raw.len() * COUNTING_SORT_FROM < keys {
        // Few pairs: the key counts would cost more than a comparison sort.
        out.clear();
        out.extend_from_slice(raw);
        out.sort_unstable_by_key(|p| (p[0] as u64) << 32 | p[1] as u64);
        return;
    }
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

/// Test mesh: an n×n-vertex unit grid in the x–z plane, its quads split along alternating
/// diagonals.
#[cfg(test)]
pub(super) fn alternating_grid(n: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let x: Vec<Vec3> = (0..n * n)
        .map(|k| Vec3::new((k % n) as f32, 0.0, (k / n) as f32))
        .collect();
    let mut tris = Vec::new();
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let v = j * n + i;
            if (i + j) % 2 == 0 {
                tris.extend([[v, v + n + 1, v + 1], [v, v + n, v + n + 1]]);
            } else {
                tris.extend([[v, v + n, v + 1], [v + 1, v + n, v + n + 1]]);
            }
        }
    }
    (x, tris)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::self_collision::topology::unique_edges;

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

    #[test]
    fn quads_are_paired_across_their_diagonal() {
        // A 4×4-vertex grid, quads split along alternating diagonals, plus one lone triangle.
        let (mut x, mut tris) = alternating_grid(4);
        x.extend([
            Vec3::splat(10.0),
            Vec3::new(11.0, 10.0, 10.0),
            Vec3::new(10.0, 11.0, 10.0),
        ]);
        tris.push([16, 17, 18]);
        let c = pair_triangles(&tris, &x);
        assert_eq!(c.len(), 10);
        let mut seen = vec![0; tris.len()];
        for cl in &c {
            let [s, t] = cl.tris;
            let mut corners: Vec<u32> = cl.verts.to_vec();
            corners.sort_unstable();
            corners.dedup();
            seen[s as usize] += 1;
            if t == u32::MAX {
                assert_eq!(s, 18, "only the lone triangle stays single");
                assert_eq!(corners, [16, 17, 18]);
                continue;
            }
            seen[t as usize] += 1;
            let mut want: Vec<u32> = tris[s as usize]
                .into_iter()
                .chain(tris[t as usize])
                .collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(corners, want, "the corners of both triangles");
            let shared = tris[s as usize]
                .iter()
                .filter(|v| tris[t as usize].contains(v));
            let [a, b]: [u32; 2] = shared.copied().collect::<Vec<_>>().try_into().unwrap();
            let diagonal = (x[a as usize] - x[b as usize]).length();
            assert!((diagonal - 2f32.sqrt()).abs() < 1e-6, "{s} {t}");
        }
        assert!(
            seen.iter().all(|&k| k == 1),
            "every triangle in one cluster"
        );
    }

    /// x0, x1, triangles, edges.
    type Soup = (Vec<Vec3>, Vec<Vec3>, Vec<[u32; 3]>, Vec<[u32; 2]>);

    /// Random triangles of very different sizes, one of them moving absurdly far.
    fn soup() -> Soup {
        let mut r = crate::fixtures::unit_random(0x0dd_ba11_cafe_f00du64);
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

    /// Candidates by testing every vertex–triangle and edge–edge pair: `(vf, ee)`, sorted.
    fn brute_force(
        mesh: &Mesh,
        x0: &[Vec3],
        x1: &[Vec3],
        inflate: &[f32],
    ) -> (Vec<[u32; 2]>, Vec<[u32; 2]>) {
        brute_force_dops(mesh, &frame_dops(x0, x1, inflate), &[])
    }

    /// Reference bounds: box and diagonal ranges of the swept, inflated vertices in the frame of
    /// [`frame_shift`].
    fn frame_dops(x0: &[Vec3], x1: &[Vec3], inflate: &[f32]) -> Vec<Dop18> {
        let shift = frame_shift(x0, x1, &mut Vec::new());
        let pad = shift_pad(shift);
        (0..x0.len())
            .map(|i| Dop18::swept(x0[i], x1[i] - shift, inflate[i] + pad))
            .collect()
    }

    /// [`brute_force`] for given vertex 18-DOPs `vd`, without the pairs made only of `fixed`
    /// vertices (empty: none fixed).
    pub(super) fn brute_force_dops(
        mesh: &Mesh,
        vd: &[Dop18],
        fixed: &[bool],
    ) -> (Vec<[u32; 2]>, Vec<[u32; 2]>) {
        let n = vd.len();
        let all_fixed = |vs: &[u32]| !fixed.is_empty() && vs.iter().all(|&v| fixed[v as usize]);
        let (tris, edges) = (mesh.triangles, mesh.edges);
        let td: Vec<Dop18> = tris
            .iter()
            .map(|t| {
                t.iter()
                    .fold(Dop18::EMPTY, |d, &v| d.union(&vd[v as usize]))
            })
            .collect();
        let ed: Vec<Dop18> = edges
            .iter()
            .map(|e| vd[e[0] as usize].union(&vd[e[1] as usize]))
            .collect();
        let mut vf = Vec::new();
        for p in 0..n as u32 {
            for t in 0..tris.len() as u32 {
                if vd[p as usize].overlaps(&td[t as usize])
                    && mesh.vertex_triangle_ok(p, t)
                    && !all_fixed(&[
                        p,
                        tris[t as usize][0],
                        tris[t as usize][1],
                        tris[t as usize][2],
                    ])
                {
                    vf.push([p, t]);
                }
            }
        }
        let mut ee = Vec::new();
        for e in 0..edges.len() as u32 {
            for f in e + 1..edges.len() as u32 {
                if ed[e as usize].overlaps(&ed[f as usize])
                    && mesh.edge_edge_ok(e, f)
                    && !all_fixed(&[edges[e as usize], edges[f as usize]].concat())
                {
                    ee.push([e, f]);
                }
            }
        }
        (vf, ee)
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
        let (vf, ee) = brute_force(&mesh, &x0, &x1, &inflate);
        assert!(vf.len() > 100 && ee.len() > 100);
        assert_eq!(bp.vf, vf);
        assert_eq!(bp.ee, ee);
    }

    /// Two connected, crumpled 16×16 grids (vertices moved by up to 0.75 edge length per axis):
    /// neighbouring triangles (sharing a vertex) give candidates too, which the soup of separate
    /// triangles above never has. With self-collision off, only pairs across the grids remain.
    #[test]
    fn crumpled_grid_candidates_equal_brute_force() {
        let (x0, x1, tris, edges, layer) = crumpled_grids();
        let n = x0.len();
        let inflate = vec![0.002; n];
        let mut bp = BroadPhase::new(n, &tris, &edges);
        for self_collide in [true, false] {
            let mesh = Mesh {
                triangles: &tris,
                edges: &edges,
                layer: &layer,
                layer_self_collide: &[self_collide, self_collide],
            };
            bp.build(&mesh, &x0, &x1, &inflate);
            let (vf, ee) = brute_force(&mesh, &x0, &x1, &inflate);
            // Vertex–triangle pairs of neighbouring triangles.
            let share_vertex = |a: &[u32; 3], b: &[u32; 3]| a.iter().any(|v| b.contains(v));
            let from_near = vf
                .iter()
                .filter(|&&[p, t]| {
                    tris.iter()
                        .any(|a| a.contains(&p) && share_vertex(a, &tris[t as usize]))
                })
                .count();
            assert_eq!(
                from_near > 50,
                self_collide,
                "{from_near} neighbour pairs of {}",
                vf.len()
            );
            assert!(
                vf.len() > 200 && ee.len() > 200,
                "{} {}",
                vf.len(),
                ee.len()
            );
            assert_eq!(bp.vf, vf, "self-collision {self_collide}");
            assert_eq!(bp.ee, ee, "self-collision {self_collide}");
        }
    }

    /// The crumpled grids with immovable vertices (the first 7 columns of each grid and 5 in 8 of
    /// the rest): the candidates are brute force's without the pairs made only of them, which are
    /// many, while pairs with one movable vertex stay. Then the band is released again.
    #[test]
    fn pairs_of_immovable_vertices_only_are_skipped() {
        let (x0, x1, tris, edges, layer) = crumpled_grids();
        let n = x0.len();
        // A band and a scatter (5 in 8 outside the band): partly immovable triangles then
        // overlap wholly immovable ones that are not their neighbours.
        let scatter = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61 < 5;
        let fixed: Vec<bool> = (0..n).map(|i| i % 16 < 7 || scatter(i)).collect();
        let inflate = vec![0.002; n];
        let mesh = grids_mesh(&tris, &edges, &layer);
        let vd = frame_dops(&x0, &x1, &inflate);
        let mut bp = BroadPhase::new(n, &tris, &edges);
        bp.set_fixed(&fixed, &tris, &edges);
        bp.build(&mesh, &x0, &x1, &inflate);
        let (vf, ee) = brute_force_dops(&mesh, &vd, &fixed);
        let (all_vf, all_ee) = brute_force_dops(&mesh, &vd, &[]);
        assert!(
            vf.len() + 300 < all_vf.len() && ee.len() + 1000 < all_ee.len(),
            "{} of {} vf, {} of {} ee",
            vf.len(),
            all_vf.len(),
            ee.len(),
            all_ee.len()
        );
        let touching = vf.iter().filter(|&&[v, _]| fixed[v as usize]).count();
        assert!(touching > 100, "{touching} kept pairs with a fixed vertex");
        assert_eq!(bp.vf, vf);
        assert_eq!(bp.ee, ee);
        bp.set_fixed(&vec![false; n], &tris, &edges);
        bp.build(&mesh, &x0, &x1, &inflate);
        assert_eq!(bp.vf, all_vf);
        assert_eq!(bp.ee, all_ee);
    }

    /// The crumpled grids carried 5 cm (five edge lengths) sideways during the motion, on top of
    /// their own: the candidates are those of the motion without the carry (the frame moves with
    /// the grids), far fewer than world-frame sweeps would give, and the frame is that carry.
    #[test]
    fn a_garment_moving_as_a_whole_sweeps_only_its_own_motion() {
        let (x0, x1, tris, edges, layer) = crumpled_grids();
        let n = x0.len();
        let carry = Vec3::new(0.05, -0.03, 0.02);
        let carried: Vec<Vec3> = x1.iter().map(|&p| p + carry).collect();
        let inflate = vec![0.002; n];
        let mesh = grids_mesh(&tris, &edges, &layer);
        let mut bp = BroadPhase::new(n, &tris, &edges);
        bp.build(&mesh, &x0, &x1, &inflate);
        let (vf, ee) = (bp.vf.clone(), bp.ee.clone());
        bp.build(&mesh, &x0, &carried, &inflate);
        assert!((bp.shift - carry).length() < 0.005, "{}", bp.shift);
        assert_eq!(bp.vf, vf);
        assert_eq!(bp.ee, ee);
        let world: Vec<Dop18> = (0..n)
            .map(|i| Dop18::swept(x0[i], carried[i], inflate[i]))
            .collect();
        let (world_vf, world_ee) = brute_force_dops(&mesh, &world, &[]);
        assert!(
            world_vf.len() > 3 * vf.len() && world_ee.len() > 3 * ee.len(),
            "world frame {} {}, moving frame {} {}",
            world_vf.len(),
            world_ee.len(),
            vf.len(),
            ee.len()
        );
    }

    /// The crumpled grids carried sideways while their own motion is scaled up: every
    /// vertex–triangle and edge–edge pair (sharing no vertex) that comes within twice the
    /// inflation at one of 41 times of the linear motion x0 → x1 is a candidate, although the
    /// bounds are swept in the moving frame — and some do come that close.
    #[test]
    fn candidates_hold_every_pair_that_comes_close_during_the_motion() {
        let (x0, x1, tris, edges, layer) = crumpled_grids();
        let n = x0.len();
        let carry = Vec3::new(-0.04, 0.01, 0.06);
        let x1: Vec<Vec3> = (0..n)
            .map(|i| x0[i] + 3.0 * (x1[i] - x0[i]) + carry)
            .collect();
        let r = 0.002f32;
        let inflate = vec![r; n];
        let mesh = grids_mesh(&tris, &edges, &layer);
        let mut bp = BroadPhase::new(n, &tris, &edges);
        bp.build(&mesh, &x0, &x1, &inflate);
        use crate::self_collision::proximity::{point_triangle_distance, segment_segment_distance};
        let at = |i: u32, t: f64| {
            let (a, b) = (x0[i as usize].as_dvec3(), x1[i as usize].as_dvec3());
            a + t * (b - a)
        };
        let (mut close_vf, mut close_ee) = (0, 0);
        for step in 0..=40 {
            let t = step as f64 / 40.0;
            for p in 0..n as u32 {
                for (k, tri) in tris.iter().enumerate() {
                    if tri.contains(&p) {
                        continue;
                    }
                    let d = point_triangle_distance(
                        at(p, t),
                        at(tri[0], t),
                        at(tri[1], t),
                        at(tri[2], t),
                    );
                    if d < 2.0 * r as f64 {
                        close_vf += 1;
                        assert!(
                            bp.vf.binary_search(&[p, k as u32]).is_ok(),
                            "{p} {k} at {t}"
                        );
                    }
                }
            }
            for (e, a) in edges.iter().enumerate() {
                for (g, b) in edges.iter().enumerate().skip(e + 1) {
                    if b.contains(&a[0]) || b.contains(&a[1]) {
                        continue;
                    }
                    let d = segment_segment_distance(
                        at(a[0], t),
                        at(a[1], t),
                        at(b[0], t),
                        at(b[1], t),
                    );
                    if d < 2.0 * r as f64 {
                        close_ee += 1;
                        assert!(
                            bp.ee.binary_search(&[e as u32, g as u32]).is_ok(),
                            "{e} {g} at {t}"
                        );
                    }
                }
            }
        }
        assert!(close_vf > 100 && close_ee > 100, "{close_vf} {close_ee}");
    }

    /// The crumpled grids' mesh, both garments colliding with themselves.
    fn grids_mesh<'a>(tris: &'a [[u32; 3]], edges: &'a [[u32; 2]], layer: &'a [u32]) -> Mesh<'a> {
        Mesh {
            triangles: tris,
            edges,
            layer,
            layer_self_collide: &[true, true],
        }
    }

    /// x0, x1, triangles, edges, layer of each vertex.
    pub(super) type Grids = (Vec<Vec3>, Vec<Vec3>, Vec<[u32; 3]>, Vec<[u32; 2]>, Vec<u32>);

    /// x0, x1, triangles, edges, layers: two connected, crumpled 16×16 grids 4 mm apart (spacing
    /// 1 cm, vertices moved by up to 0.75 edge length per axis, x1 by up to 0.15 more), one garment
    /// each.
    pub(super) fn crumpled_grids() -> Grids {
        let mut unit = crate::fixtures::unit_random(0x5eed_1234_abcd_0001u64);
        let mut r = || unit() - 0.5;
        let (side, h) = (16u32, 0.01);
        let mut x0 = Vec::new();
        let mut tris = Vec::new();
        for sheet in 0..2u32 {
            let base = sheet * side * side;
            for j in 0..side {
                for i in 0..side {
                    let p = Vec3::new(i as f32 * h, 0.004 * sheet as f32, j as f32 * h);
                    x0.push(p + 1.5 * h * Vec3::new(r(), r(), r()));
                }
            }
            for j in 0..side - 1 {
                for i in 0..side - 1 {
                    let v = base + j * side + i;
                    tris.push([v, v + 1, v + side]);
                    tris.push([v + 1, v + side + 1, v + side]);
                }
            }
        }
        let x1: Vec<Vec3> = x0
            .iter()
            .map(|p| *p + 0.3 * h * Vec3::new(r(), r(), r()))
            .collect();
        let edges = unique_edges(&tris);
        let n = x0.len() as u32;
        let layer: Vec<u32> = (0..n).map(|i| i / (side * side)).collect();
        (x0, x1, tris, edges, layer)
    }
}
