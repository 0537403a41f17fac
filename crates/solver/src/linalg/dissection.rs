//! One-level nested-dissection ordering of a block sparse pattern, for the parallel IC(0) factor
//! ([`super::IncompleteCholesky`]): the rows are renumbered as [A, B, S] where no coupling joins a
//! row of A to a row of B, so A and B factor and sweep independently (on two cores) and only the
//! separator S, ordered last, sees both (Saad, "Iterative Methods for Sparse Linear Systems",
//! 2nd ed., §3.3.3 on nested dissection and §12.4 on domain-decomposition (multi-domain)
//! orderings for parallel ILU). Every coupling stays in the factor; none is dropped to gain
//! parallelism.
//!
//! The bisection tries two separators and keeps the better one:
//! - the index cut: rows below the one that halves the sweeps' work (pinned rows, fixed in every
//!   solve, count for little: the dress sample's 2,220 pinned rows are all in its first half)
//!   against the rest, S = the rows of the smaller side that have a
//!   neighbour on the other. On the exported garments the vertex order is spatially coherent
//!   enough that this S is small (cape 32 of 1,891 rows, skirt 128 of 3,584, dress 149 of
//!   10,212, 64×64 sheet 64), and A and B keep the mesh's own order, which suits IC(0) best:
//!   measured on the same systems (a bake solving each also in other orders, before IC(0) took
//!   in the bending couplings), the CG needed +4 % iterations (cape, sheet), −1 % (skirt) and
//!   +1 % (dress) against the whole mesh in its own order, one part on one thread (with the
//!   bending couplings the cape's split cost +20 %, until B ran backwards: below);
//! - a level-structure separator (George & Liu, "Computer Solution of Large Sparse Positive
//!   Definite Systems", 1981, §4.3.3 pseudo-peripheral nodes, §8.2 level structures), for orders
//!   that are not coherent: breadth-first levels from a pseudo-peripheral row, the level at the
//!   median of the work split off, and of that level only the rows with a neighbour in the next
//!   one kept as S. Its separators are about as small but cost IC(0) +16 % iterations on the
//!   cape and the sheet (the cut runs across the mesh order), so it is taken only when the index
//!   cut's S is more than [`INDEX_CUT_SLACK`] times larger.
//!
//! Rows keep their original relative order inside each part (breadth-first order inside the parts,
//! tried too, nearly doubled the iterations on the sheet), but B runs backwards: an index cut's B
//! from its last original row down to the cut, a level structure's A by ascending and B by
//! descending level. Both parts then end at the separator, and S, last, comes right after the rows
//! it couples to on either side, as in a twisted ("burn at both ends") factorization, which
//! parallelizes a factorization at the convergence of the one-thread order (H. A. van der Vorst,
//! "Large tridiagonal and block tridiagonal linear systems on vector and parallel computers",
//! Parallel Computing 5, 1987). With B ascending, B's rows next to S were eliminated first, before
//! anything they couple to: on the hanging membrane (`twisted_order_converges_like_the_unsplit_one`
//! in [`super::incomplete_cholesky`]) 56 / 74 / 65 IC-CG iterations instead of 50 / 66 / 60 in the
//! grid's own order on one thread, which the twisted order matches exactly.
//!
//! Measured on the same systems (every 2nd to 12th solve of a main-order bake solved again in each
//! order, 24–86 solves per scene; the error against a 1e-7 solve): the twisted order takes −14.5 %
//! IC-CG iterations on the cape-run export, −5.6 % on the bpy skirt, −5.1 % on the dress-walk,
//! −12.9 % on the 32×32 `twist`, −27 % and −9 % on the 64² and 128² sheet-on-sphere, and stops no
//! less accurately: the velocity error (rms and in the A-norm) within ±5 % of B ascending's, the
//! unpreconditioned residual lower (cape −36 %, twist −20 %, sheets −4 to −7 %), and the error no
//! longer largest on S (64² sheet: S's rms error 1.9e-4 m/s → 7.8e-5, the parts' 1.0–1.2e-4).
//! Reversing A as well (A then starts at S) costs +1 to +25 % iterations against this order, and
//! with B ascending (both start at S) +6 to +49 %; S descending, or S taken from the other side of
//! the cut, is within 0.5 % of it. Substep counts, though, are chaotic in the order (any change of
//! the solve's bits moves them): the 32×32 `twist` bake takes 387–843 tries with damping over six
//! CG tolerances in main's order; over those six and the 36–48 resolutions (14 bakes) the twisted
//! order took 8,318 instead of 9,299 tries (with damping) and 1,348 instead of 1,567 cloth–cloth
//! rejections, the sheets over twelve tolerances 1,290 instead of 1,292 substeps (64²) and 1,741
//! instead of 1,827 (128²).
//!
//! Everything depends on the pattern only, never on values or the thread count.

use super::block_sparse::BlockPattern;
use std::ops::Range;

/// The permutation and part sizes of a dissection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dissection {
    /// `perm[new row] = original row`.
    pub perm: Vec<u32>,
    /// `pos[original row] = new row` (the inverse of `perm`).
    pub pos: Vec<u32>,
    /// New rows `0..a` are part A, `a..b` part B, `b..n` the separator S.
    a: usize,
    b: usize,
    /// For an index cut (and the identity): every row of A (and of S, if it came from that
    /// side) is an original row below `cut`, every row of B (and of S otherwise) one from it.
    cut: Option<usize>,
}

/// Most breadth-first searches per component in the pseudo-peripheral row search.
const PERIPHERAL_TRIES: usize = 8;

const UNSEEN: u32 = u32::MAX;

/// The index cut is kept unless its separator has more than this many times the rows of the
/// level-structure separator's.
pub const INDEX_CUT_SLACK: usize = 3;

impl Dissection {
    /// The identity order as a single part A (B and S empty).
    pub fn identity(n: usize) -> Self {
        let perm: Vec<u32> = (0..n as u32).collect();
        Dissection {
            pos: perm.clone(),
            perm,
            a: n,
            b: n,
            cut: Some(n),
        }
    }

    /// Bisects the graph of `p`'s couplings that `keep(slot)` accepts (both directions).
    pub fn bisect(p: &BlockPattern, keep: impl Fn(usize) -> bool) -> Self {
        let n = p.rows();
        let (adj_ptr, adj) = adjacency(p, keep);
        let neighbours = |v: usize| &adj[adj_ptr[v] as usize..adj_ptr[v + 1] as usize];
        // Work of a row in the sweeps: one block product per coupling (either triangle) and the
        // pivot's; a pinned row only the pivot's.
        let weight = |v: usize| {
            if p.pinned.get(v).copied().unwrap_or(false) {
                1
            } else {
                1 + neighbours(v).len()
            }
        };
        let total: usize = (0..n).map(weight).sum();
        // Global levels: each component's breadth-first levels, from its pseudo-peripheral row,
        // offset past the previous component's with one empty level between (a split there needs
        // no separator).
        let mut level = vec![UNSEEN; n];
        let mut depth = vec![UNSEEN; n];
        let mut queue = Vec::with_capacity(n);
        let mut offset = 0u32;
        for start in 0..n {
            if level[start] != UNSEEN {
                continue;
            }
            let mut root = start;
            let mut ecc = bfs(&neighbours, root, &mut depth, &mut queue);
            for _ in 0..PERIPHERAL_TRIES {
                // Of the last level, the row of least degree (then least index).
                let cand = queue
                    .iter()
                    .map(|&v| v as usize)
                    .filter(|&v| depth[v] == ecc)
                    .min_by_key(|&v| (neighbours(v).len(), v))
                    .unwrap_or(root);
                clear(&mut depth, &queue);
                let e = bfs(&neighbours, cand, &mut depth, &mut queue);
                if e > ecc {
                    (root, ecc) = (cand, e);
                } else {
                    clear(&mut depth, &queue);
                    bfs(&neighbours, root, &mut depth, &mut queue);
                    break;
                }
            }
            for &v in &queue {
                level[v as usize] = offset + depth[v as usize];
            }
            clear(&mut depth, &queue);
            offset += ecc + 2;
        }
        // Split level: the one balancing the work before and after it best, plus its own (an
        // upper bound on the separator's; an empty level between components splits without
        // one); ties to the first.
        let mut count = vec![0usize; offset as usize + 1];
        for (v, &l) in level.iter().enumerate() {
            count[l as usize] += weight(v);
        }
        let mut before = 0usize;
        let mut best = (usize::MAX, 0u32);
        for (l, &c) in count.iter().enumerate() {
            let cost = before.abs_diff(total - before - c) + c;
            if cost < best.0 {
                best = (cost, l as u32);
            }
            before += c;
        }
        let split = best.1;
        // Neighbours' levels differ by at most one, so only rows of the split level with a
        // neighbour in the next one can couple A to B.
        let level_cut: Vec<u8> = (0..n)
            .map(|v| {
                let l = level[v];
                if l < split {
                    0
                } else if l > split {
                    1
                } else if neighbours(v)
                    .iter()
                    .any(|&w| level[w as usize] == split + 1)
                {
                    2
                } else {
                    0
                }
            })
            .collect();
        // Index cut at half the work: S is the side (below or from m) with fewer rows next to
        // the other.
        let mut m = 0;
        let mut below = 0;
        while m < n && 2 * (below + weight(m)) <= total {
            below += weight(m);
            m += 1;
        }
        let next_to_other = |v: usize| neighbours(v).iter().any(|&w| ((w as usize) < m) != (v < m));
        let border = |low: bool| {
            (0..n)
                .filter(|&v| (v < m) == low && next_to_other(v))
                .count()
        };
        let low_side = border(true) <= border(false);
        let index_cut: Vec<u8> = (0..n)
            .map(|v| {
                if (v < m) == low_side && next_to_other(v) {
                    2
                } else if v < m {
                    0
                } else {
                    1
                }
            })
            .collect();
        let separator = |part: &[u8]| part.iter().filter(|&&k| k == 2).count();
        let (part, cut) = if separator(&index_cut) <= INDEX_CUT_SLACK * separator(&level_cut) {
            (index_cut, Some(m))
        } else {
            (level_cut, None)
        };
        // A ascending, B descending (an index cut's B: its rows next to the cut come last, as
        // A's do; see the module doc), then S.
        let mut perm = Vec::with_capacity(n);
        if cut.is_some() {
            perm.extend((0..n as u32).filter(|&v| part[v as usize] == 0));
            perm.extend((0..n as u32).rev().filter(|&v| part[v as usize] == 1));
        } else {
            // Level-structure parts: A by ascending level, B by descending level (each ends at
            // the split level), original order within a level.
            let mut a: Vec<u32> = (0..n as u32).filter(|&v| part[v as usize] == 0).collect();
            a.sort_by_key(|&v| (level[v as usize], v));
            let mut b: Vec<u32> = (0..n as u32).filter(|&v| part[v as usize] == 1).collect();
            b.sort_by_key(|&v| (std::cmp::Reverse(level[v as usize]), v));
            perm.extend(a);
            perm.extend(b);
        }
        perm.extend((0..n as u32).filter(|&v| part[v as usize] == 2));
        let mut pos = vec![0u32; n];
        for (new, &old) in perm.iter().enumerate() {
            pos[old as usize] = new as u32;
        }
        let a = part.iter().filter(|&&k| k == 0).count();
        let b = a + part.iter().filter(|&&k| k == 1).count();
        Dissection {
            perm,
            pos,
            a,
            b,
            cut,
        }
    }

    /// The same parts with part `k`'s rows in the opposite order (for tests comparing orders).
    #[cfg(test)]
    pub(crate) fn with_part_reversed(&self, k: usize) -> Self {
        let mut d = self.clone();
        d.perm[self.part(k)].reverse();
        for (new, &old) in d.perm.iter().enumerate() {
            d.pos[old as usize] = new as u32;
        }
        d.cut = None;
        d
    }

    /// Number of rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.perm.len()
    }

    /// New rows of part k: 0 = A, 1 = B, 2 = S.
    #[inline]
    pub fn part(&self, k: usize) -> Range<usize> {
        match k {
            0 => 0..self.a,
            1 => self.a..self.b,
            _ => self.b..self.perm.len(),
        }
    }

    /// The original row m such that A's rows are all below m and B's all from m (S's rows on
    /// either side), if there is one (index cuts and the identity); then the caller's vectors in
    /// the original order split at m into A's and B's (A's rows ascend, B's descend).
    #[inline]
    pub fn cut(&self) -> Option<usize> {
        self.cut
    }

    /// Whether A and B are both non-empty (so they run on two threads).
    #[inline]
    pub fn split(&self) -> bool {
        self.a > 0 && self.b > self.a
    }
}

/// Both-direction adjacency (CSR) of the kept couplings.
fn adjacency(p: &BlockPattern, keep: impl Fn(usize) -> bool) -> (Vec<u32>, Vec<u32>) {
    let n = p.rows();
    let mut ptr = vec![0u32; n + 1];
    for i in 0..n {
        let upper = (p.row_ptr[i]..p.row_ptr[i + 1]).filter(|&s| keep(s as usize));
        let lower = (p.lower_ptr[i]..p.lower_ptr[i + 1])
            .filter(|&k| keep(p.lower_slot[k as usize] as usize));
        ptr[i + 1] = ptr[i] + (upper.count() + lower.count()) as u32;
    }
    let mut adj = Vec::with_capacity(ptr[n] as usize);
    for i in 0..n {
        for k in p.lower_ptr[i] as usize..p.lower_ptr[i + 1] as usize {
            if keep(p.lower_slot[k] as usize) {
                adj.push(p.lower_col[k]);
            }
        }
        for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
            if keep(s) {
                adj.push(p.col[s]);
            }
        }
    }
    (ptr, adj)
}

/// Breadth-first search from `root` over unseen rows: `depth` set for the rows reached, which
/// `queue` lists in visiting order. Returns the largest depth (the root's eccentricity).
fn bfs<'a>(
    neighbours: &impl Fn(usize) -> &'a [u32],
    root: usize,
    depth: &mut [u32],
    queue: &mut Vec<u32>,
) -> u32 {
    queue.clear();
    queue.push(root as u32);
    depth[root] = 0;
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head] as usize;
        head += 1;
        for &w in neighbours(v) {
            if depth[w as usize] == UNSEEN {
                depth[w as usize] = depth[v] + 1;
                queue.push(w);
            }
        }
    }
    depth[*queue.last().unwrap_or(&(root as u32)) as usize]
}

fn clear(depth: &mut [u32], queue: &[u32]) {
    for &v in queue {
        depth[v as usize] = UNSEEN;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An nx×ny grid's edges and one diagonal per cell, vertices numbered in scattered order
    /// (as an exporter may), plus `extra` isolated vertices.
    fn grid(nx: u32, ny: u32, extra: u32, scattered: bool) -> BlockPattern {
        let n = nx * ny;
        let id = |x: u32, y: u32| {
            if scattered {
                (x + nx * y) * 7919 % n
            } else {
                x + nx * y
            }
        };
        let mut pairs = Vec::new();
        for y in 0..ny {
            for x in 0..nx {
                if x + 1 < nx {
                    pairs.push([id(x, y), id(x + 1, y)]);
                }
                if y + 1 < ny {
                    pairs.push([id(x, y), id(x, y + 1)]);
                }
                if x + 1 < nx && y + 1 < ny {
                    pairs.push([id(x, y), id(x + 1, y + 1)]);
                }
            }
        }
        // Weak couplings (ignored by the bisection) across the whole sheet.
        let weak: Vec<[u32; 2]> = (0..n).map(|i| [i, (i * 31 + 5) % n]).collect();
        BlockPattern::with_weak_pairs((n + extra) as usize, &pairs, &weak)
    }

    /// The order is a bijection, no strong coupling joins A to B, the parts are balanced and the
    /// separator is one grid line (about nx rows, not a cut through many couplings), whether the
    /// vertices are numbered along the grid (the index cut: one grid row) or scattered (the
    /// level structure).
    #[test]
    fn separates_a_grid() {
        for (nx, ny, extra, scattered) in [
            (64, 64, 0, true),
            (40, 90, 0, true),
            (30, 30, 17, true),
            (64, 64, 0, false),
            (40, 90, 0, false),
        ] {
            let p = grid(nx, ny, extra, scattered);
            let n = p.rows();
            let d = Dissection::bisect(&p, |s| !p.weak[s]);
            let mut seen = vec![false; n];
            for (new, &old) in d.perm.iter().enumerate() {
                assert!(!seen[old as usize]);
                seen[old as usize] = true;
                assert_eq!(d.pos[old as usize] as usize, new);
            }
            let part = |v: u32| (0..3).find(|&k| d.part(k).contains(&(d.pos[v as usize] as usize)));
            let mut cut = 0;
            for i in 0..n {
                for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                    let (pi, pj) = (part(i as u32), part(p.col[s]));
                    if !p.weak[s] {
                        assert!(
                            !matches!((pi, pj), (Some(0), Some(1)) | (Some(1), Some(0))),
                            "{nx}x{ny}: strong coupling {i}-{} joins A and B",
                            p.col[s]
                        );
                    } else if pi != pj {
                        cut += 1;
                    }
                }
            }
            assert!(cut > 0, "the weak couplings are not what separates");
            let (a, b, s) = (d.part(0).len(), d.part(1).len(), d.part(2).len());
            assert!(d.split());
            assert!(a.abs_diff(b) <= s + nx.max(ny) as usize, "{a} {b} {s}");
            assert!(s <= 2 * nx.max(ny) as usize, "{nx}x{ny}: separator {s}");
            assert!(s >= nx.min(ny) as usize / 2, "{nx}x{ny}: separator {s}");
            if let Some(m) = d.cut() {
                assert!(d.perm[d.part(0)].iter().all(|&v| (v as usize) < m));
                assert!(d.perm[d.part(1)].iter().all(|&v| (v as usize) >= m));
            }
            assert_eq!(d.cut().is_some(), !scattered);
            if !scattered {
                // One grid row; A and B in the grid's own order.
                assert_eq!(s, nx as usize, "{nx}x{ny}");
                assert!(d.perm[d.part(0)].windows(2).all(|w| w[0] < w[1]));
                assert!(d.perm[d.part(1)].windows(2).all(|w| w[0] > w[1]));
            }
        }
    }

    /// Pinned rows count for little work: a chain whose first 800 of 2,000 rows are pinned (work
    /// 1 each against 3 for a free row: its pivot and two couplings) is cut where the work halves,
    /// at row 1,266, not at 1,000.
    #[test]
    fn pinned_rows_move_the_cut() {
        let pairs: Vec<[u32; 2]> = (0..1999u32).map(|i| [i, i + 1]).collect();
        let mut p = BlockPattern::from_pairs(2000, &pairs);
        let even = Dissection::bisect(&p, |_| true);
        assert_eq!(even.cut(), Some(1000));
        p.pinned = (0..2000).map(|i| i < 800).collect();
        let d = Dissection::bisect(&p, |_| true);
        let m = d.cut().expect("index cut");
        assert_eq!(m, 1266);
        assert_eq!(d.part(2).len(), 1);
    }

    /// Disconnected pieces split between components without a separator; the order depends on the
    /// pattern only.
    #[test]
    fn splits_components_without_a_separator() {
        let mut pairs = Vec::new();
        for c in 0..4u32 {
            for i in 0..99u32 {
                pairs.push([c * 100 + i, c * 100 + i + 1]);
            }
        }
        let p = BlockPattern::from_pairs(400, &pairs);
        let d = Dissection::bisect(&p, |_| true);
        assert_eq!(
            (d.part(0).len(), d.part(1).len(), d.part(2).len()),
            (200, 200, 0)
        );
        assert_eq!(d, Dissection::bisect(&p, |_| true));
        let id = Dissection::identity(5);
        assert_eq!(id.perm, vec![0, 1, 2, 3, 4]);
        assert!(!id.split());
    }
}
