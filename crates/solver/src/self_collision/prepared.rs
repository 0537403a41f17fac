//! Proximity contacts computed ahead of the implicit solve. They depend only on the positions at
//! the start of the substep, so [`SelfCollision::prepare`](super::SelfCollision::prepare) can find
//! them (broad phase over unswept boxes at x0, then the proximity tests of BFA02 §6.1) on another
//! thread while the linear solve runs. [`SelfCollision::resolve`](super::SelfCollision::resolve)
//! then only needs the broad phase of continuous collision detection, over swept boxes inflated by
//! a fraction of what proximity needs. The contacts are the same pairs in the same canonical order
//! as when both come from one broad phase, so the result is the same to the bit.

use super::contact::{Contact, NormalFrom};
use super::{narrow, SelfCollision, SelfCollisionParams, SelfCollisionTimes, PROXIMITY_INFLATION};
use crate::stopwatch::Lap;
use glam::Vec3;
use rayon::prelude::*;

/// The contacts of one [`SelfCollision::prepare`](super::SelfCollision::prepare) call, kept for
/// the next resolve at the same positions.
#[derive(Debug, Default)]
pub(super) struct Prepared {
    /// Set by `prepare`, cleared when a resolve takes the contacts.
    pub valid: bool,
    /// Positions at the start of the substep (m) the contacts belong to.
    pub x0: Vec<Vec3>,
    /// Proximity contacts, vertex–triangle first, each kind in candidate order.
    pub contacts: Vec<Contact>,
    /// The candidates they were tested from (sorted as the broad phase sorts them) and a lower
    /// bound of each one's distance at x0 (m).
    pub vf: Vec<[u32; 2]>,
    pub ee: Vec<[u32; 2]>,
    pub vf_sep: Vec<f64>,
    pub ee_sep: Vec<f64>,
}

impl SelfCollision {
    /// Finds the proximity contacts at the start of a substep ahead of its solve: they depend only
    /// on `x0` (m) and `params`, so the simulation calls this on another thread while the linear
    /// solve runs. The broad phase sweeps each vertex from `x0` to a prediction `x_pred` of its
    /// end position (m), so that its candidates also serve the continuous collision of the next
    /// [`Self::resolve_with_bodies`] at the same `x0` when every vertex ends within half a
    /// thickness of its prediction; otherwise that resolve builds the continuous-collision
    /// candidates itself, over slimmer boxes. Either way the result is the same to the bit as
    /// without this call. Returns the time spent per part.
    ///
    /// # Panics
    /// If slice lengths disagree with the topology (a programming error, not user data).
    pub fn prepare(
        &mut self,
        x0: &[Vec3],
        x_pred: &[Vec3],
        params: &[SelfCollisionParams],
    ) -> SelfCollisionTimes {
        let n = self.layer.len();
        assert_eq!(x0.len(), n, "self-collision: x0 length");
        assert_eq!(x_pred.len(), n, "self-collision: x_pred length");
        let mut times = SelfCollisionTimes::default();
        self.prepared.valid = false;
        if self.triangles.is_empty() {
            return times;
        }
        let mut lap = Lap::start();
        self.set_params(params);
        self.x1.copy_from_slice(x_pred);
        lap.lap(&mut times.other);
        self.build_candidates(x0, PROXIMITY_INFLATION);
        lap.lap(&mut times.broad_phase);
        self.narrow_proximity(x0);
        let p = &mut self.prepared;
        std::mem::swap(&mut p.contacts, &mut self.contacts);
        std::mem::swap(&mut p.vf, &mut self.broad.vf);
        std::mem::swap(&mut p.ee, &mut self.broad.ee);
        std::mem::swap(&mut p.vf_sep, &mut self.vf_sep);
        std::mem::swap(&mut p.ee_sep, &mut self.ee_sep);
        p.x0.clear();
        p.x0.extend_from_slice(x0);
        p.valid = true;
        lap.lap(&mut times.proximity);
        times
    }

    /// The proximity contacts of the last [`Self::prepare`] not yet taken by a resolve (empty if
    /// none), vertex–triangle first, each kind in candidate order.
    pub fn prepared_contacts(&self) -> &[Contact] {
        if self.prepared.valid {
            &self.prepared.contacts
        } else {
            &[]
        }
    }

    /// Do the boxes of the last build — the prepared ones, x0 → x_pred — hold every vertex's x1
    /// with the continuous-collision margin of [`Self::moved`] (then they hold its whole sweep)?
    pub(super) fn prepared_cover_the_sweep(&self) -> bool {
        let (broad, thick) = (&self.broad, &self.thick);
        self.x1.par_iter().enumerate().all(|(i, &x)| {
            broad.contains_with_margin(i, x, narrow::CCD_TOLERANCE_FRACTION * thick[i] + 1e-7)
        })
    }

    /// Takes the prepared contacts for this resolve. A touching pair's normal is turned against
    /// the pair's motion (`NormalFrom::Motion*`): the prepass knew only the predicted motion, so
    /// those few normals are turned again with the actual x1, as a single pass would have.
    pub(super) fn take_prepared_contacts(&mut self, x0: &[Vec3]) {
        std::mem::swap(&mut self.contacts, &mut self.prepared.contacts);
        let mut contacts = std::mem::take(&mut self.contacts);
        {
            let nar = self.narrow(x0);
            for c in contacts
                .iter_mut()
                .filter(|c| c.normal_from != NormalFrom::Separation)
            {
                c.normal = nar.motion_normal(c.normal_from, c.idx, c.w);
            }
        }
        self.contacts = contacts;
    }

    /// The prepared candidates' distance bounds at x0 for the current candidates: a pair the
    /// prepared (unswept, thickness-wide) broad phase did not list is at least its thickness
    /// apart (the boxes had a relative 1e-4 and eight ulps to spare; a relative 1e-6 is kept).
    pub(super) fn transfer_prepared_bounds(&mut self) {
        let (p, thick) = (&self.prepared, &self.thick);
        let (tris, edges) = (&self.triangles, &self.edges);
        let pair_th = |a: u32, b: u32| 0.5 * (thick[a as usize] + thick[b as usize]) as f64;
        let shrink = 1.0 - 1e-6;
        transfer_bounds(
            &p.vf,
            &p.vf_sep,
            &self.broad.vf,
            &mut self.vf_sep,
            |[v, t]| shrink * pair_th(v, tris[t as usize][0]),
        );
        transfer_bounds(
            &p.ee,
            &p.ee_sep,
            &self.broad.ee,
            &mut self.ee_sep,
            |[e, f]| shrink * pair_th(edges[e as usize][0], edges[f as usize][0]),
        );
    }
}

/// Lower bounds of the distance at x0 (m) for `pairs` (sorted lexicographically) from the prepared
/// candidates `listed` (sorted the same way) and their bounds `sep`: a listed pair keeps its bound;
/// a pair the prepared broad phase did not list was farther apart than its thickness at x0, so it
/// gets `unlisted(pair)`. Linear merge of the two sorted lists.
fn transfer_bounds(
    listed: &[[u32; 2]],
    sep: &[f64],
    pairs: &[[u32; 2]],
    out: &mut [f64],
    unlisted: impl Fn([u32; 2]) -> f64,
) {
    let mut k = 0;
    for (pair, bound) in pairs.iter().zip(out.iter_mut()) {
        while k < listed.len() && listed[k] < *pair {
            k += 1;
        }
        *bound = if k < listed.len() && listed[k] == *pair {
            sep[k]
        } else {
            unlisted(*pair)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_pairs_keep_their_bound_and_the_others_get_the_fallback() {
        let listed = [[0, 3], [0, 5], [2, 1], [4, 4]];
        let sep = [0.1, 0.2, 0.3, 0.4];
        let pairs = [[0, 1], [0, 5], [2, 1], [3, 0], [4, 4], [9, 9]];
        let mut out = [0.0; 6];
        transfer_bounds(&listed, &sep, &pairs, &mut out, |p| -(p[0] as f64));
        assert_eq!(out, [-0.0, 0.2, 0.3, -3.0, 0.4, -9.0]);
    }
}
