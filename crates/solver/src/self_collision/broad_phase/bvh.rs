//! Bounding-volume hierarchy over the triangle clusters, built once from the topology and refit
//! every build (the classic structure for deforming cloth: Bridson, Fedkiw & Anderson 2002 §6;
//! van den Bergen 1997 for refitting instead of rebuilding).
//!
//! The tree is made at the first build by median splits of the cluster centres along the longest
//! axis of their spread, up to [`LEAF_SIZE`] clusters per leaf, nodes in preorder (a parent before its children).
//! Every build refits it bottom-up — a cluster's 18-DOP is the union of its triangles' (in
//! parallel chunks), a node's the union of its clusters' or children's (in one reverse pass) —
//! and finds the overlapping cluster pairs by a self-traversal (node with itself: its children
//! with themselves and with each other; node pair: the children pairs whose DOPs overlap),
//! testing the clusters of two leaves pair by pair, their boxes as a branch-free mask first.
//! Pairs of clusters sharing a vertex are skipped there (they always overlap;
//! [`super::neighbour_clusters`] lists their triangle pairs), by masks of the touching
//! cluster pairs of every two leaves made with the tree ([`Touch`]). Subtrees made only of
//! immovable clusters ([`super::Fixed`]) are not descended against each other. The traversal is
//! split into a fixed list of jobs (the self-pairs of the subtrees at depth [`JOB_DEPTH`] and the
//! sibling pairs above them), independent of the thread count.
//!
//! A non-finite cluster DOP would make the unions of its ancestors NaN (overlapping nothing) and
//! hide its neighbours in the tree, so such a leaf gets the whole space instead: the pairs of its
//! triangles are then decided by their own 18-DOPs, as in the expansion.

use crate::self_collision::dop18::Dop18;
use glam::Vec3;
use rayon::prelude::*;

/// Most clusters in a leaf: fewer nodes to descend against more cluster tests. On the dress-walk
/// sample 8 took 1.19 ms per build against 1.29 for 4, 1.47 for 2 and 1.49 for 16 (one thread,
/// the whole broad phase).
const LEAF_SIZE: usize = 8;
/// Clusters per parallel task of [`Bvh::refit_leaves`].
const LEAF_CHUNK: usize = 1024;
/// Children entry of a leaf, and parent of the root.
const NONE: u32 = u32::MAX;
/// Depth down to which the self-traversal is split into parallel jobs (up to 2^depth subtree jobs
/// and as many sibling-pair jobs).
const JOB_DEPTH: u32 = 6;

/// One unit of the parallel self-traversal.
#[derive(Clone, Copy, Debug)]
pub enum Job {
    /// Every overlapping pair of clusters of one subtree.
    Within(u32),
    /// Every overlapping pair of a cluster of one subtree with a cluster of the other.
    Across(u32, u32),
}

/// One node (two cache lines): its bounds and children, or for a leaf its clusters
/// `leaf[first..end]`.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Node {
    /// Union of its clusters' 18-DOPs (refit).
    dop: Dop18,
    /// Its children ([`NONE`] for a leaf).
    children: [u32; 2],
    first: u32,
    end: u32,
    /// Are all its clusters immovable (refit)?
    fixed: bool,
}

impl Node {
    #[inline]
    fn is_leaf(&self) -> bool {
        self.children[0] == NONE
    }

    #[inline]
    fn range(&self) -> std::ops::Range<usize> {
        self.first as usize..self.end as usize
    }

    /// May a cluster of `self` and one of `o` be a pair: DOPs overlapping, not both immovable?
    #[inline]
    fn meets(&self, o: &Node) -> bool {
        !(self.fixed && o.fixed) && self.dop.overlaps(&o.dop)
    }
}

/// One cluster in leaf order (two cache lines).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Leaf {
    /// Union of its triangles' 18-DOPs (refit).
    dop: Dop18,
    /// Its corners (vertices), its triangles (the second [`NONE`] for one), its index.
    corners: [u32; 4],
    tris: [u32; 2],
    cluster: u32,
    /// Immovable (refit)?
    fixed: bool,
}

impl Leaf {
    /// The bounds from the triangle DOPs `tdop(t)`; the whole space if one is NaN (see the
    /// module doc).
    #[inline]
    fn refit(&mut self, tdop: &impl Fn(u32) -> Dop18, fixed: &[bool]) {
        let [s, t] = self.tris;
        let mut d = tdop(s);
        if t != NONE {
            d = d.union(&tdop(t));
        }
        self.dop = if d.has_nan() { Dop18::EVERYTHING } else { d };
        self.fixed = fixed[self.cluster as usize];
    }
}

/// The hierarchy: topology fixed at [`Bvh::new`], bounds refit by [`Bvh::refit_leaves`] and
/// [`Bvh::refit_nodes`].
#[derive(Debug, Default)]
pub struct Bvh {
    /// Nodes in preorder (the root first).
    node: Vec<Node>,
    /// Per node: its parent ([`NONE`] for the root).
    parent: Vec<u32>,
    /// Clusters in leaf order (every node's clusters are a range of it).
    leaf: Vec<Leaf>,
    /// Per cluster: its position in `leaf`, and the leaf node holding it.
    slot: Vec<u32>,
    leaf_node: Vec<u32>,
    /// The parallel jobs of the self-traversal (fixed with the topology).
    jobs: Vec<Job>,
    /// Per node, its entries `touch[touch_start[n]..touch_start[n + 1]]` (only leaves have
    /// some): the leaves, itself included, with a cluster sharing a vertex with one of its
    /// clusters, and which ([`Touch`]).
    touch_start: Vec<u32>,
    touch: Vec<Touch>,
}

/// Which clusters of two leaves share a vertex: bit `8·i + j` for the i-th cluster of one leaf
/// and the j-th of the other (leaf order). Fixed with the topology, so the self-traversal skips
/// those pairs (they always overlap; [`super::neighbour_clusters`] has their triangle pairs)
/// without comparing corners: on the dress-walk sample 32,055 of the 78,593 cluster pairs it meets
/// per build.
#[derive(Clone, Copy, Debug)]
struct Touch {
    node: u32,
    mask: u64,
}

/// Bits `0..len` set (`len` ≤ [`LEAF_SIZE`]).
#[inline]
fn all(len: usize) -> u64 {
    (1 << len) - 1
}

/// `f(j)` for every set bit j of `bits`, ascending: the clusters of a leaf not touching one of
/// another, without a branch per touching pair (the dress-walk replay of round 7: 1.254–1.337 →
/// 1.239–1.264 ms per build at one thread, 1.248–1.286 → 1.165–1.272 at two, loaded).
#[inline]
fn for_each_bit(mut bits: u64, mut f: impl FnMut(usize)) {
    while bits != 0 {
        f(bits.trailing_zeros() as usize);
        bits &= bits - 1;
    }
}

// One bit per pair of clusters of two leaves.
const _: () = assert!(LEAF_SIZE * LEAF_SIZE <= 64);

impl Bvh {
    /// The hierarchy over `clusters` with these centres (m).
    pub fn new(clusters: &[super::Cluster], centres: &[Vec3]) -> Self {
        let n = clusters.len();
        let mut t = Bvh {
            leaf_node: vec![0; n],
            ..Self::default()
        };
        let mut order: Vec<u32> = (0..n as u32).collect();
        if n > 0 {
            t.split(&mut order, 0, centres, NONE);
        }
        t.leaf = order
            .iter()
            .map(|&c| Leaf {
                dop: Dop18::EMPTY,
                corners: clusters[c as usize].verts,
                tris: clusters[c as usize].tris,
                cluster: c,
                fixed: false,
            })
            .collect();
        let mut leaf_node = vec![0; n];
        t.slot = vec![0; n];
        for (i, &c) in order.iter().enumerate() {
            t.slot[c as usize] = i as u32;
            leaf_node[c as usize] = t.leaf_node[i];
        }
        let node_of_slot = std::mem::replace(&mut t.leaf_node, leaf_node);
        t.touch_masks(&node_of_slot);
        if n > 0 {
            t.make_jobs(0, 0);
        }
        t
    }

    /// The [`Touch`] lists, given the leaf node of every slot of `self.leaf`.
    fn touch_masks(&mut self, node_of_slot: &[u32]) {
        // Slots by corner vertex.
        let mut by_vertex: Vec<(u32, u32)> = (0..self.leaf.len() as u32)
            .flat_map(|i| self.leaf[i as usize].corners.map(|v| (v, i)))
            .collect();
        by_vertex.sort_unstable();
        by_vertex.dedup();
        // (node, other node, bit) for every two slots sharing a vertex, both ways.
        let bit = |i: u32, j: u32| {
            let first = |k: u32| self.node[node_of_slot[k as usize] as usize].first;
            1u64 << (8 * (i - first(i)) + (j - first(j)))
        };
        let mut pairs: Vec<(u32, u32, u64)> = Vec::new();
        for group in by_vertex.chunk_by(|a, b| a.0 == b.0) {
            for &(_, i) in group {
                for &(_, j) in group {
                    if i != j {
                        let (a, b) = (node_of_slot[i as usize], node_of_slot[j as usize]);
                        pairs.push((a, b, bit(i, j)));
                    }
                }
            }
        }
        pairs.sort_unstable_by_key(|&(a, b, _)| (a, b));
        self.touch_start = vec![0; self.node.len() + 1];
        self.touch.clear();
        for run in pairs.chunk_by(|p, q| (p.0, p.1) == (q.0, q.1)) {
            let mask = run.iter().fold(0, |m, p| m | p.2);
            self.touch.push(Touch {
                node: run[0].1,
                mask,
            });
            self.touch_start[run[0].0 as usize + 1] += 1;
        }
        for k in 0..self.node.len() {
            self.touch_start[k + 1] += self.touch_start[k];
        }
    }

    /// The [`Touch`] mask of leaves `a` and `b` (0 if no cluster of one touches the other).
    #[inline]
    fn touching(&self, a: u32, b: u32) -> u64 {
        let (s, e) = (
            self.touch_start[a as usize],
            self.touch_start[a as usize + 1],
        );
        self.touch[s as usize..e as usize]
            .iter()
            .find(|t| t.node == b)
            .map_or(0, |t| t.mask)
    }

    /// Appends the subtree over `items` (= `order[first..]`, preorder) under `parent`; returns
    /// its node. Meanwhile `leaf_node` is by position.
    fn split(&mut self, items: &mut [u32], first: usize, centres: &[Vec3], parent: u32) -> u32 {
        let id = self.node.len() as u32;
        let end = first + items.len();
        self.node.push(Node {
            dop: Dop18::EMPTY,
            children: [NONE; 2],
            first: first as u32,
            end: end as u32,
            fixed: false,
        });
        self.parent.push(parent);
        if items.len() <= LEAF_SIZE {
            self.leaf_node[first..end].fill(id);
            return id;
        }
        let (lo, hi) = items.iter().fold(
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
            |(lo, hi), &c| (lo.min(centres[c as usize]), hi.max(centres[c as usize])),
        );
        let ext = hi - lo;
        let axis = if ext.x >= ext.y && ext.x >= ext.z {
            0
        } else if ext.y >= ext.z {
            1
        } else {
            2
        };
        let mid = items.len() / 2;
        items.select_nth_unstable_by(mid, |&a, &b| {
            centres[a as usize][axis]
                .total_cmp(&centres[b as usize][axis])
                .then(a.cmp(&b))
        });
        let (l, r) = items.split_at_mut(mid);
        let l = self.split(l, first, centres, id);
        let r = self.split(r, first + mid, centres, id);
        self.node[id as usize].children = [l, r];
        id
    }

    /// The jobs for the self-traversal of `node` at `depth`.
    fn make_jobs(&mut self, node: u32, depth: u32) {
        let nd = self.node[node as usize];
        if nd.is_leaf() || depth == JOB_DEPTH {
            self.jobs.push(Job::Within(node));
            return;
        }
        let [l, r] = nd.children;
        self.make_jobs(l, depth + 1);
        self.make_jobs(r, depth + 1);
        self.jobs.push(Job::Across(l, r));
    }

    /// The parallel jobs of [`Self::run`], in their fixed order.
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// The bounds of node `n` from its children or clusters.
    #[inline]
    fn refit_node(&mut self, n: usize) {
        let nd = self.node[n];
        let (dop, fixed) = if nd.is_leaf() {
            self.leaf[nd.range()]
                .iter()
                .fold((Dop18::EMPTY, true), |(d, f), c| {
                    (d.union(&c.dop), f && c.fixed)
                })
        } else {
            let [l, r] = nd.children.map(|c| &self.node[c as usize]);
            (l.dop.union(&r.dop), l.fixed && r.fixed)
        };
        (self.node[n].dop, self.node[n].fixed) = (dop, fixed);
    }

    /// New bounds from the triangle 18-DOPs `tdop(t)` and the immovable clusters `fixed[c]`:
    /// [`Self::refit_leaves`], then [`Self::refit_nodes`].
    #[cfg(test)]
    pub fn refit(&mut self, tdop: impl Fn(u32) -> Dop18 + Sync, fixed: &[bool]) {
        self.refit_leaves(tdop, fixed);
        self.refit_nodes();
    }

    /// New bounds of the clusters from the triangle 18-DOPs `tdop(t)` and the immovable clusters
    /// `fixed[c]`, in parallel chunks (the nodes are left to [`Self::refit_nodes`]).
    pub fn refit_leaves(&mut self, tdop: impl Fn(u32) -> Dop18 + Sync, fixed: &[bool]) {
        self.leaf.par_chunks_mut(LEAF_CHUNK).for_each(|leaves| {
            for c in leaves {
                c.refit(&tdop, fixed);
            }
        });
    }

    /// New bounds of the nodes from those of the clusters, bottom-up.
    pub fn refit_nodes(&mut self) {
        for n in (0..self.node.len()).rev() {
            self.refit_node(n);
        }
    }

    /// New bounds ([`Self::refit_leaves`]) of the clusters `changed` only, and of their ancestors.
    pub fn refit_some(&mut self, changed: &[u32], tdop: impl Fn(u32) -> Dop18, fixed: &[bool]) {
        for &c in changed {
            self.leaf[self.slot[c as usize] as usize].refit(&tdop, fixed);
            let mut n = self.leaf_node[c as usize];
            while n != NONE {
                self.refit_node(n as usize);
                n = self.parent[n as usize];
            }
        }
    }

    /// Calls `f(a, b)` for every pair of distinct clusters of `job` that share no vertex, whose
    /// 18-DOPs overlap and that are not both immovable (each unordered pair once).
    pub fn run(&self, job: Job, f: &mut impl FnMut(u32, u32)) {
        match job {
            Job::Within(n) => self.within(n, f),
            Job::Across(a, b) => {
                if self.node[a as usize].meets(&self.node[b as usize]) {
                    self.across(a, b, f);
                }
            }
        }
    }

    fn within(&self, n: u32, f: &mut impl FnMut(u32, u32)) {
        let nd = &self.node[n as usize];
        if nd.fixed {
            return;
        }
        if nd.is_leaf() {
            let leaf = &self.leaf[nd.range()];
            let touch = self.touching(n, n);
            for (i, a) in leaf.iter().enumerate() {
                // The clusters after `a` that do not touch it.
                let later = all(leaf.len()) & !((2 << i) - 1);
                let near = Self::box_hits(a, leaf);
                for_each_bit(near & !(touch >> (8 * i)) & later, |j| {
                    Self::leaf_pair(a, &leaf[j], f)
                });
            }
            return;
        }
        let [l, r] = nd.children;
        self.within(l, f);
        self.within(r, f);
        if self.node[l as usize].meets(&self.node[r as usize]) {
            self.across(l, r, f);
        }
    }

    /// Which clusters of `leaf` (bit j for `leaf[j]`) have a box overlapping `a`'s: the first
    /// filter of [`Self::leaf_pair`], branch-free (most of these pairs are neighbours'
    /// neighbours, apart, and a branch per pair was often mispredicted).
    #[inline]
    fn box_hits(a: &Leaf, leaf: &[Leaf]) -> u64 {
        leaf.iter()
            .enumerate()
            .fold(0, |m, (j, b)| m | (a.dop.overlaps_box(&b.dop) as u64) << j)
    }

    /// Clusters `a` and `b`, known to share no vertex and to have overlapping boxes
    /// ([`Self::box_hits`]), if their DOPs overlap and not both are immovable.
    #[inline]
    fn leaf_pair(a: &Leaf, b: &Leaf, f: &mut impl FnMut(u32, u32)) {
        if !(a.fixed && b.fixed) && a.dop.overlaps_diagonals(&b.dop) {
            f(a.cluster, b.cluster);
        }
    }

    /// Nodes `a` and `b`, known to [`Node::meets`].
    fn across(&self, a: u32, b: u32, f: &mut impl FnMut(u32, u32)) {
        let (na, nb) = (&self.node[a as usize], &self.node[b as usize]);
        match (na.is_leaf(), nb.is_leaf()) {
            (true, true) => {
                let lb = &self.leaf[nb.range()];
                let touch = self.touching(a, b);
                for (i, ca) in self.leaf[na.range()].iter().enumerate() {
                    if (ca.fixed && nb.fixed) || !ca.dop.overlaps(&nb.dop) {
                        continue;
                    }
                    let near = Self::box_hits(ca, lb);
                    for_each_bit(near & !(touch >> (8 * i)), |j| {
                        Self::leaf_pair(ca, &lb[j], f)
                    });
                }
            }
            (true, false) => {
                for c in nb.children {
                    if na.meets(&self.node[c as usize]) {
                        self.across(a, c, f);
                    }
                }
            }
            (false, true) => {
                for c in na.children {
                    if self.node[c as usize].meets(nb) {
                        self.across(c, b, f);
                    }
                }
            }
            (false, false) => {
                for ca in na.children {
                    let nca = &self.node[ca as usize];
                    for cb in nb.children {
                        if nca.meets(&self.node[cb as usize]) {
                            self.across(ca, cb, f);
                        }
                    }
                }
            }
        }
    }

    /// Calls `f(b)` for every cluster b ≠ `c` whose 18-DOP overlaps cluster `c`'s (current
    /// bounds) and that is not immovable together with it. `stack` is reusable scratch.
    pub fn query(&self, c: u32, stack: &mut Vec<u32>, mut f: impl FnMut(u32)) {
        let me = &self.leaf[self.slot[c as usize] as usize];
        stack.clear();
        if !self.node.is_empty() {
            stack.push(0);
        }
        while let Some(n) = stack.pop() {
            let nd = &self.node[n as usize];
            if (me.fixed && nd.fixed) || !nd.dop.overlaps(&me.dop) {
                continue;
            }
            if nd.is_leaf() {
                for o in &self.leaf[nd.range()] {
                    if o.cluster != c && !(me.fixed && o.fixed) && o.dop.overlaps(&me.dop) {
                        f(o.cluster);
                    }
                }
            } else {
                stack.extend([nd.children[1], nd.children[0]]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Cluster;
    use super::*;

    /// `n` clusters of two triangles (triangle 2c and 2c + 1; every seventh cluster a single
    /// triangle) on a jittered grid with random sizes and motions, corners shared with the next
    /// cluster in a row; their triangle DOPs, centres and immovable flags (one in three).
    fn scene(n: u32) -> (Vec<Cluster>, Vec<Dop18>, Vec<Vec3>, Vec<bool>) {
        let mut r = crate::fixtures::unit_random(0x0b5e_55ed_5eed_f00du64);
        let (mut clusters, mut tdop, mut centres, mut fixed) = (vec![], vec![], vec![], vec![]);
        for c in 0..n {
            let v = 2 * c;
            let single = c % 7 == 0;
            clusters.push(Cluster {
                tris: [2 * c, if single { u32::MAX } else { 2 * c + 1 }],
                verts: [v, v + 1, v + 2, v + 3],
                masks: [0b0111, if single { 0 } else { 0b1110 }],
            });
            let base = Vec3::new((c % 20) as f32, 0.3 * r(), (c / 20) as f32) * 0.1;
            centres.push(base);
            for _ in 0..2 {
                let mut d = Dop18::EMPTY;
                for _ in 0..3 {
                    let a = base + 0.12 * Vec3::new(r(), r(), r());
                    let b = a + 0.05 * Vec3::new(r() - 0.5, r() - 0.5, r() - 0.5);
                    d = d.union(&Dop18::swept(a, b, 0.01 * r()));
                }
                tdop.push(d);
            }
            fixed.push(r() < 0.33);
        }
        (clusters, tdop, centres, fixed)
    }

    fn touch(a: &Cluster, b: &Cluster) -> bool {
        a.verts.iter().any(|v| b.verts.contains(v))
    }

    fn cdop(c: &Cluster, tdop: &[Dop18]) -> Dop18 {
        c.triangles()
            .fold(Dop18::EMPTY, |d, t| d.union(&tdop[t as usize]))
    }

    /// Every pair from the jobs, sorted, each once.
    fn traverse(bvh: &Bvh) -> Vec<[u32; 2]> {
        let mut got = Vec::new();
        for &job in bvh.jobs() {
            bvh.run(job, &mut |a, b| got.push([a.min(b), a.max(b)]));
        }
        let len = got.len();
        got.sort_unstable();
        got.dedup();
        assert_eq!(got.len(), len, "a pair came out twice");
        got
    }

    fn brute(clusters: &[Cluster], tdop: &[Dop18], fixed: &[bool]) -> Vec<[u32; 2]> {
        let n = clusters.len() as u32;
        let mut want = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                let (ca, cb) = (&clusters[a as usize], &clusters[b as usize]);
                if !(touch(ca, cb) || fixed[a as usize] && fixed[b as usize])
                    && cdop(ca, tdop).overlaps(&cdop(cb, tdop))
                {
                    want.push([a, b]);
                }
            }
        }
        want
    }

    #[test]
    fn traversal_and_queries_equal_brute_force_after_refits() {
        let (clusters, mut tdop, centres, fixed) = scene(400);
        let mut bvh = Bvh::new(&clusters, &centres);
        assert!(bvh.jobs().len() > 100, "{} jobs", bvh.jobs().len());
        bvh.refit(|t| tdop[t as usize], &fixed);
        let want = brute(&clusters, &tdop, &fixed);
        assert!(want.len() > 200, "{} pairs", want.len());
        assert_eq!(traverse(&bvh), want);
        // Some clusters move (one far away, across everything): refitting only them and their
        // ancestors gives the same pairs as brute force over the new bounds.
        let moved = [3u32, 77, 78, 250];
        for &c in &moved {
            let t = clusters[c as usize].tris[0] as usize;
            let far = Vec3::splat(if c == 250 { 1.0e6 } else { 0.12 });
            tdop[t] = tdop[t].union(&Dop18::swept(centres[c as usize] + far, Vec3::ZERO, 0.01));
        }
        bvh.refit_some(&moved, |t| tdop[t as usize], &fixed);
        let want = brute(&clusters, &tdop, &fixed);
        assert_eq!(traverse(&bvh), want);
        let mut stack = Vec::new();
        for c in [0u32, 3, 120, 250, 399] {
            let mut got = Vec::new();
            bvh.query(c, &mut stack, |b| got.push(b));
            got.sort_unstable();
            let me = &clusters[c as usize];
            let want: Vec<u32> = (0..clusters.len() as u32)
                .filter(|&b| {
                    b != c
                        && !(fixed[b as usize] && fixed[c as usize])
                        && cdop(me, &tdop).overlaps(&cdop(&clusters[b as usize], &tdop))
                })
                .collect();
            assert_eq!(got, want, "query of cluster {c}");
        }
    }

    /// A NaN bound in one triangle hides no pair of the others: the cluster then meets everything
    /// in the hierarchy and its finite triangle still meets its neighbours.
    #[test]
    fn a_nan_bound_hides_no_pair() {
        let (clusters, mut tdop, centres, _) = scene(200);
        let fixed = vec![false; clusters.len()];
        let nan = Vec3::new(0.5, f32::NAN, 0.5);
        tdop[2 * 41 + 1] = Dop18::swept(nan, nan, 0.01);
        let mut bvh = Bvh::new(&clusters, &centres);
        bvh.refit(|t| tdop[t as usize], &fixed);
        let got = traverse(&bvh);
        let finite = |c: u32| {
            let cl = &clusters[c as usize];
            cl.triangles()
                .filter(|&t| !tdop[t as usize].has_nan())
                .fold(Dop18::EMPTY, |d, t| d.union(&tdop[t as usize]))
        };
        let n = clusters.len() as u32;
        let mut want = 0;
        for a in 0..n {
            for b in a + 1..n {
                if !touch(&clusters[a as usize], &clusters[b as usize])
                    && finite(a).overlaps(&finite(b))
                {
                    want += 1;
                    assert!(got.binary_search(&[a, b]).is_ok(), "{a} {b}");
                }
            }
        }
        assert!(want > 100, "{want}");
        let with_41 = got.iter().filter(|p| p.contains(&41)).count();
        assert_eq!(
            with_41 + 3,
            clusters.len(),
            "cluster 41 meets all but itself and its two touching"
        );
    }
}
