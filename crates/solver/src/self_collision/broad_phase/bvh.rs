//! Bounding-volume hierarchy over the triangle clusters, built once from the topology and refit
//! every build (the classic structure for deforming cloth: Bridson, Fedkiw & Anderson 2002 §6;
//! van den Bergen 1997 for refitting instead of rebuilding).
//!
//! The tree is made at the first build by median splits of the cluster centres along the longest
//! axis of their spread, one cluster per leaf, nodes in preorder (a parent before its children).
//! Every build refits it bottom-up — a leaf's 18-DOP is its cluster's (the union of its
//! triangles'), a node's the union of its children's — in one reverse pass, and finds the
//! overlapping cluster pairs by a self-traversal (node with itself: its children with themselves
//! and with each other; node pair: the children pairs whose DOPs overlap). Subtrees made only of
//! immovable clusters ([`super::Fixed`]) are not descended against each other. The traversal is
//! split into a fixed list of jobs (the self-pairs of the subtrees at depth [`JOB_DEPTH`] and the
//! sibling pairs above them), independent of the thread count.
//!
//! A non-finite cluster DOP would make the unions of its ancestors NaN (overlapping nothing) and
//! hide its neighbours in the tree, so such a leaf gets the whole space instead: the pairs of its
//! triangles are then decided by their own 18-DOPs, as in the expansion.

use crate::self_collision::dop18::Dop18;
use glam::Vec3;

/// Most clusters in a leaf: fewer nodes to descend against a few more cluster tests.
const LEAF_SIZE: usize = 4;
/// Parent of the root.
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

/// One node: its children (none for a leaf) and its clusters, `order[first..end]`.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    children: Option<[u32; 2]>,
    first: u32,
    end: u32,
}

/// The hierarchy: topology fixed at [`Bvh::new`], bounds refit by [`Bvh::refit`].
#[derive(Debug, Default)]
pub struct Bvh {
    node: Vec<Node>,
    /// Per node: its parent ([`NONE`] for the root).
    parent: Vec<u32>,
    /// Per node: the union of its clusters' 18-DOPs (refit).
    dop: Vec<Dop18>,
    /// Per node: are all its clusters immovable (refit)?
    fixed: Vec<bool>,
    /// Clusters in leaf order (every node's clusters are a range of it), with their 18-DOPs and
    /// immovable flags (refit), and the position of each cluster in it.
    order: Vec<u32>,
    cdop: Vec<Dop18>,
    cfixed: Vec<bool>,
    corners: Vec<[u32; 4]>,
    slot: Vec<u32>,
    /// Leaf node of each position in `order`.
    leaf: Vec<u32>,
    /// The parallel jobs of the self-traversal (fixed with the topology).
    jobs: Vec<Job>,
}

impl Bvh {
    /// The hierarchy over clusters with these centres (m) and corners (vertices).
    pub fn new(centres: &[Vec3], corners: &[[u32; 4]]) -> Self {
        let n = centres.len();
        let mut t = Bvh {
            order: (0..n as u32).collect(),
            leaf: vec![0; n],
            ..Self::default()
        };
        if n > 0 {
            let mut items = std::mem::take(&mut t.order);
            t.split(&mut items, 0, centres, NONE);
            t.order = items;
        }
        t.corners = t.order.iter().map(|&c| corners[c as usize]).collect();
        t.slot = vec![0; n];
        for (i, &c) in t.order.iter().enumerate() {
            t.slot[c as usize] = i as u32;
        }
        let nodes = t.node.len();
        t.dop = vec![Dop18::EMPTY; nodes];
        t.fixed = vec![false; nodes];
        t.cdop = vec![Dop18::EMPTY; n];
        t.cfixed = vec![false; n];
        if n > 0 {
            t.make_jobs(0, 0);
        }
        t
    }

    /// Appends the subtree over `items` (= `order[first..]`, preorder) under `parent`; returns
    /// its node.
    fn split(&mut self, items: &mut [u32], first: usize, centres: &[Vec3], parent: u32) -> u32 {
        let id = self.node.len() as u32;
        let end = first + items.len();
        self.node.push(Node {
            children: None,
            first: first as u32,
            end: end as u32,
        });
        self.parent.push(parent);
        if items.len() <= LEAF_SIZE {
            self.leaf[first..end].fill(id);
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
        self.node[id as usize].children = Some([l, r]);
        id
    }

    /// The jobs for the self-traversal of `node` at `depth`.
    fn make_jobs(&mut self, node: u32, depth: u32) {
        match self.node[node as usize].children {
            Some([l, r]) if depth < JOB_DEPTH => {
                self.make_jobs(l, depth + 1);
                self.make_jobs(r, depth + 1);
                self.jobs.push(Job::Across(l, r));
            }
            _ => self.jobs.push(Job::Within(node)),
        }
    }

    /// The parallel jobs of [`Self::run`], in their fixed order.
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// The leaf bounds for cluster DOP `d`: the whole space if it has a NaN bound.
    #[inline]
    fn leaf_dop(d: &Dop18) -> Dop18 {
        if d.has_nan() {
            Dop18::EVERYTHING
        } else {
            *d
        }
    }

    /// The bounds of node `n` from its children or clusters.
    #[inline]
    fn refit_node(&mut self, n: usize) {
        let nd = self.node[n];
        (self.dop[n], self.fixed[n]) = match nd.children {
            Some([l, r]) => {
                let (l, r) = (l as usize, r as usize);
                (
                    self.dop[l].union(&self.dop[r]),
                    self.fixed[l] && self.fixed[r],
                )
            }
            None => {
                let range = nd.first as usize..nd.end as usize;
                let d = self.cdop[range.clone()]
                    .iter()
                    .fold(Dop18::EMPTY, |d, c| d.union(c));
                (d, self.cfixed[range].iter().all(|&f| f))
            }
        };
    }

    /// New bounds: `cdop[c]` (cluster DOPs) and `cfixed[c]` (immovable clusters) at the leaves,
    /// and the unions above them.
    pub fn refit(&mut self, cdop: &[Dop18], cfixed: &[bool]) {
        for (i, &c) in self.order.iter().enumerate() {
            self.cdop[i] = Self::leaf_dop(&cdop[c as usize]);
            self.cfixed[i] = cfixed[c as usize];
        }
        for n in (0..self.node.len()).rev() {
            self.refit_node(n);
        }
    }

    /// New bounds of the clusters `changed` only (`cdop`, `cfixed` as in [`Self::refit`]), and of
    /// their ancestors.
    pub fn refit_some(&mut self, changed: &[u32], cdop: &[Dop18], cfixed: &[bool]) {
        for &c in changed {
            let i = self.slot[c as usize] as usize;
            self.cdop[i] = Self::leaf_dop(&cdop[c as usize]);
            self.cfixed[i] = cfixed[c as usize];
            let mut n = self.leaf[i];
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
            Job::Across(a, b) => self.across(a, b, f),
        }
    }

    fn within(&self, n: u32, f: &mut impl FnMut(u32, u32)) {
        if self.fixed[n as usize] {
            return;
        }
        let nd = self.node[n as usize];
        match nd.children {
            Some([l, r]) => {
                self.within(l, f);
                self.within(r, f);
                self.across(l, r, f);
            }
            None => {
                for i in nd.first as usize..nd.end as usize {
                    for j in i + 1..nd.end as usize {
                        self.leaf_pair(i, j, f);
                    }
                }
            }
        }
    }

    /// The clusters at positions `i` and `j` of `order`, if they share no vertex, their DOPs
    /// overlap and not both are immovable.
    #[inline]
    fn leaf_pair(&self, i: usize, j: usize, f: &mut impl FnMut(u32, u32)) {
        let (ci, cj) = (self.corners[i], self.corners[j]);
        let mut shared = false;
        for u in ci {
            for v in cj {
                shared |= u == v;
            }
        }
        if !shared && !(self.cfixed[i] && self.cfixed[j]) && self.cdop[i].overlaps(&self.cdop[j]) {
            f(self.order[i], self.order[j]);
        }
    }

    fn across(&self, a: u32, b: u32, f: &mut impl FnMut(u32, u32)) {
        let (ua, ub) = (a as usize, b as usize);
        if (self.fixed[ua] && self.fixed[ub]) || !self.dop[ua].overlaps(&self.dop[ub]) {
            return;
        }
        let (na, nb) = (self.node[ua], self.node[ub]);
        match (na.children, nb.children) {
            (None, None) => {
                for i in na.first as usize..na.end as usize {
                    if !self.cdop[i].overlaps(&self.dop[ub]) {
                        continue;
                    }
                    for j in nb.first as usize..nb.end as usize {
                        self.leaf_pair(i, j, f);
                    }
                }
            }
            (None, Some([bl, br])) => {
                self.across(a, bl, f);
                self.across(a, br, f);
            }
            (Some([al, ar]), None) => {
                self.across(al, b, f);
                self.across(ar, b, f);
            }
            (Some([al, ar]), Some([bl, br])) => {
                self.across(al, bl, f);
                self.across(al, br, f);
                self.across(ar, bl, f);
                self.across(ar, br, f);
            }
        }
    }

    /// Calls `f(b)` for every cluster b ≠ `c` whose 18-DOP overlaps cluster `c`'s (current
    /// bounds) and that is not immovable together with it. `stack` is reusable scratch.
    pub fn query(&self, c: u32, stack: &mut Vec<u32>, mut f: impl FnMut(u32)) {
        let me = self.slot[c as usize] as usize;
        let (q, qfixed) = (self.cdop[me], self.cfixed[me]);
        stack.clear();
        if !self.node.is_empty() {
            stack.push(0);
        }
        while let Some(n) = stack.pop() {
            let u = n as usize;
            if (qfixed && self.fixed[u]) || !self.dop[u].overlaps(&q) {
                continue;
            }
            let nd = self.node[u];
            match nd.children {
                Some([l, r]) => stack.extend([r, l]),
                None => {
                    for j in nd.first as usize..nd.end as usize {
                        if j != me && !(qfixed && self.cfixed[j]) && self.cdop[j].overlaps(&q) {
                            f(self.order[j]);
                        }
                    }
                }
            }
        }
    }
}
