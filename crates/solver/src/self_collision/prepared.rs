//! Proximity contacts computed ahead of the implicit solve. They depend only on the positions at
//! the start of the substep, so [`SelfCollision::prepare`](super::SelfCollision::prepare) can find
//! them (broad phase over unswept boxes at x0, then the proximity tests of BFA02 §6.1) on another
//! thread while the linear solve runs. [`SelfCollision::resolve`](super::SelfCollision::resolve)
//! then only needs the broad phase of continuous collision detection, over swept boxes inflated by
//! a fraction of what proximity needs. The contacts are the same pairs in the same canonical order
//! as when both come from one broad phase, so the result is the same to the bit.

use super::contact::Contact;
use glam::Vec3;

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

/// Lower bounds of the distance at x0 (m) for `pairs` (sorted lexicographically) from the prepared
/// candidates `listed` (sorted the same way) and their bounds `sep`: a listed pair keeps its bound;
/// a pair the prepared broad phase did not list was farther apart than its thickness at x0, so it
/// gets `unlisted(pair)`. Linear merge of the two sorted lists.
pub(super) fn transfer_bounds(
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
