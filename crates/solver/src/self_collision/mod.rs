//! Cloth–cloth collision: self-collision of every garment and collision between garments.
//!
//! After the implicit solve each substep, [`SelfCollision::resolve`] corrects the velocities so
//! that the linear motion x0 → x0 + h·v crosses no cloth and keeps the thickness, following Bridson,
//! Fedkiw & Anderson 2002, "Robust treatment of collisions, contact and friction for cloth
//! animation" (BFA02):
//! 1. broad phase: a bounding-volume hierarchy of swept 18-DOPs over triangle pairs, built once
//!    from the topology and refit every call (BFA02 §6), neighbouring triangles from static
//!    lists, candidates in canonical order (broad_phase.rs); the sweeps are bounded in a frame
//!    moving with the garment's median displacement, so that a garment carried by a walking body
//!    sweeps only its relative motion (a sixth of the candidates on the dress-walk sample); when a few vertices leave their boxes, only their boxes grow and their
//!    new pairs are added (broad_phase/grow.rs); pairs of hard-pinned vertices only are skipped
//!    ([`SelfCollision::set_immovable`]);
//! 2. proximity repulsion with Coulomb friction for vertex–triangle and edge–edge pairs closer than
//!    the thickness at the start of the substep (BFA02 §6.1, §7.2), except pairs already that
//!    close at rest, listed once (rest_close.rs);
//! 3. iterated continuous collision detection (coplanarity cubic + distance at the root) with
//!    inelastic impulses (BFA02 §6.2, §7.3), behind a filter that skips pairs whose distance
//!    exceeds their displacements relative to the garment's median motion (narrow.rs);
//! 4. rigid impact zones as the fail-safe (BFA02 §7.4, Provot 1997).
//!
//! Pinned vertices have infinite mass throughout, and vertices resting on a body cannot be pushed
//! into it (see [`Mobility`]).
//!
//! Pairs sharing a vertex are never tested. (Skipping whole 1-rings was tried: the twisted sheet
//! then intersects, so only direct neighbours are skipped.) [`count_intersections`] is an independent
//! triangle–triangle intersection counter for tests and bake reports.

mod adjacent_pairs;
mod broad_phase;
pub mod ccd;
mod contact;
mod dop18;
mod impact_zones;
mod impulses;
mod intersections;
mod narrow;
mod parallel;
mod prepared;
pub mod proximity;
mod rest_close;
mod topology;

pub use contact::{Contact, Mobility, NormalFrom, MAX_AMPLIFICATION};
pub use impulses::{CCD_GAP_FRACTION, REPULSION_RATE};
pub use intersections::{count_intersections, count_intersections_serial, triangles_intersect};
pub use narrow::CCD_TOLERANCE_FRACTION;
pub use topology::{SelfCollisionError, SelfCollisionParams, SelfCollisionTopology};

use crate::stopwatch::Lap;
use broad_phase::{BroadPhase, Mesh};
use glam::Vec3;
use impact_zones::ImpactZones;
use narrow::Narrow;
use parallel::{par_gather, par_gather_with};
use prepared::Prepared;
use rayon::prelude::*;
use rest_close::RestClose;

/// Continuous-collision impulse iterations before falling back to impact zones (BFA02 §7.3).
pub const MAX_CCD_ITERATIONS: u32 = 10;
/// Impact-zone iterations before giving up (reported as `unresolved`).
pub const MAX_ZONE_ITERATIONS: u32 = 200;
/// Work bound of one call: continuous-collision events (summed over the impulse passes and the
/// impact-zone passes) per vertex, at least [`MIN_COLLISION_BUDGET`] in all, before the stage
/// stops and reports [`SelfCollisionReport::over_budget`]. Production scenes stay far below it:
/// per substep at most 0.002 per vertex on the dress-walk export, 0.15 on the skirt-walk sample,
/// 0.49 on the wrung tube (`twist`) and 0.75 on the `self-fold` pile; a sheet falling at 10⁶ m/s²
/// had 45–230 per vertex in each try, 12–58 s per try on the 64² sheet (BENCHMARKS.md, "A work
/// bound for cloth–cloth collision").
pub const MAX_COLLISIONS_PER_VERTEX: u32 = 8;
/// The work bound's floor (collisions per call): a small mesh keeps the impulse passes' and
/// impact zones' full work (a plate driven through a stack of twelve 117-vertex plates in one
/// substep takes 2,219 collisions, `self_collision_zones.rs`).
pub const MIN_COLLISION_BUDGET: u32 = 16_384;
/// Broad-phase boxes are inflated by this fraction of the vertex thickness when one broad phase
/// serves proximity and continuous collision: ½ for the proximity radius plus slack so that small
/// velocity corrections do not force a rebuild. 0.75 → 0.6 gave 30 % fewer candidates on the 64²
/// fold with the same contacts and collisions (a vertex leaving its box still forces an update),
/// but doubled the rebuilds on the 256² stage bench, so 0.7 (BENCHMARKS.md, round 3).
const BOX_INFLATION: f32 = 0.7;
/// Inflation (fraction of the thickness) of the unswept boxes of [`SelfCollision::prepare`]: ½,
/// so that every pair closer than its thickness is listed, plus a relative 1e-4 for round-off.
const PROXIMITY_INFLATION: f32 = 0.5 * (1.0 + 1e-4);
/// Inflation (fraction of the thickness) of the swept boxes when the proximity contacts were
/// prepared: continuous collision needs only its tolerance; the rest is slack for the velocity
/// corrections of the impulses before a rebuild is forced.
const CCD_INFLATION: f32 = 0.25;

/// What one [`SelfCollision::resolve`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SelfCollisionReport {
    /// Broad-phase candidate pairs (vertex–triangle + edge–edge) of the first broad phase.
    pub candidates: u32,
    /// Proximity contacts (closer than the thickness at the start of the substep).
    pub contacts: u32,
    /// Proximity contacts that received a repulsion impulse.
    pub repulsions: u32,
    /// Continuous-collision passes run (1 when nothing collided).
    pub ccd_iterations: u32,
    /// Continuous-collision events resolved by impulses, summed over the passes.
    pub collisions: u32,
    /// Broad-phase updates (grown boxes or a rebuild) after velocities left the candidate boxes.
    pub rebuilds: u32,
    /// Impact-zone iterations run (0 when the impulses sufficed).
    pub zone_iterations: u32,
    /// Rigid impact zones at the end.
    pub impact_zones: u32,
    /// Collisions still present when the zone iterations gave up or the work bound stopped the
    /// stage (0 = guaranteed crossing-free).
    pub unresolved: u32,
    /// The stage stopped at its work bound ([`MAX_COLLISIONS_PER_VERTEX`]): the motion is too
    /// violent for this step (the step's controller rejects it and halves the step).
    pub over_budget: bool,
    /// Wall-clock time per part.
    pub times: SelfCollisionTimes,
}

/// Wall-clock seconds spent in the parts of the cloth–cloth stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SelfCollisionTimes {
    /// Broad phase: bounds, hierarchy refit and traversal, candidate pairs (every build, rebuilds
    /// included).
    pub broad_phase: f64,
    /// Proximity tests at the start of the substep and their repulsion impulses (BFA02 §7.2).
    pub proximity: f64,
    /// Continuous collision detection passes and their impulses (BFA02 §7.3).
    pub ccd: f64,
    /// Rigid impact zones (BFA02 §7.4).
    pub impact_zones: f64,
    /// Per-vertex set-up (thickness, end positions).
    pub other: f64,
}

impl SelfCollisionTimes {
    pub fn add(&mut self, o: &SelfCollisionTimes) {
        self.broad_phase += o.broad_phase;
        self.proximity += o.proximity;
        self.ccd += o.ccd;
        self.impact_zones += o.impact_zones;
        self.other += o.other;
    }

    pub fn total(&self) -> f64 {
        self.broad_phase + self.proximity + self.ccd + self.impact_zones + self.other
    }
}

/// Self- and inter-garment collision stage with all its reusable buffers.
#[derive(Debug)]
pub struct SelfCollision {
    triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    layer: Vec<u32>,
    layer_self_collide: Vec<bool>,
    /// Rest positions (m), if given: pairs closer than the thickness there get no repulsion.
    rest: Option<Vec<Vec3>>,
    /// Those pairs, listed at the first call and again whenever the thicknesses change, with
    /// bounds of their distances.
    rest_close: RestClose,
    /// Thickness (m) and friction of each vertex's garment.
    thick: Vec<f32>,
    friction: Vec<f32>,
    /// Positions at the end of the substep, x0 + h·v (m), and |x1 − x0 − u| in f64 (m), u the
    /// resolve's `frame`.
    x1: Vec<Vec3>,
    disp: Vec<f64>,
    /// One displacement u (m) for every vertex of a resolve, the median of the steps h·v
    /// ([`broad_phase::frame_shift_of`]): the CCD's no-contact filter bounds a pair's relative
    /// displacement by |d_i − u| + |d_j − u|, small when the cloth moves as a whole.
    frame: Vec3,
    /// Scratch of [`broad_phase::frame_shift_of`].
    frame_scratch: Vec<Vec3>,
    /// Broad-phase box inflation per vertex (m).
    inflate: Vec<f32>,
    /// Vertices whose x1 left their broad-phase box (scratch of a rebuild).
    escaped: Vec<u32>,
    broad: BroadPhase,
    /// Lower bounds of the distance at x0 (m) of each vertex–triangle / edge–edge candidate,
    /// from the proximity pass (0 = unknown); they let the CCD skip pairs that cannot touch.
    vf_sep: Vec<f64>,
    ee_sep: Vec<f64>,
    /// Per candidate of the proximity pass: its rest-close slot (scratch;
    /// [`RestClose::vertex_triangle_slots`]).
    vf_slot: Vec<u32>,
    ee_slot: Vec<u32>,
    contacts: Vec<Contact>,
    ee_contacts: Vec<Contact>,
    contact_bufs: Vec<Vec<Contact>>,
    mark: Vec<u32>,
    generation: u32,
    zones: ImpactZones,
    /// Proximity contacts found ahead of the solve ([`Self::prepare`]).
    prepared: Prepared,
    /// Vertices declared immovable ([`Self::set_immovable`]).
    immovable: Vec<u32>,
}

impl SelfCollision {
    /// Validates the topology and precomputes the unique edges.
    pub fn new(topology: &SelfCollisionTopology) -> Result<Self, SelfCollisionError> {
        topology.validate()?;
        let edges = topology::unique_edges(&topology.triangles);
        let n = topology.vertex_count();
        let broad = BroadPhase::new(n, &topology.triangles, &edges);
        Ok(Self {
            triangles: topology.triangles.clone(),
            edges,
            layer: topology.vertex_layer.clone(),
            layer_self_collide: topology.layer_self_collide.clone(),
            rest: topology.rest_positions.clone(),
            rest_close: RestClose::default(),
            thick: vec![0.0; n],
            friction: vec![0.0; n],
            x1: vec![Vec3::ZERO; n],
            disp: vec![0.0; n],
            frame: Vec3::ZERO,
            frame_scratch: Vec::new(),
            inflate: vec![0.0; n],
            escaped: Vec::new(),
            broad,
            vf_sep: Vec::new(),
            ee_sep: Vec::new(),
            vf_slot: Vec::new(),
            ee_slot: Vec::new(),
            contacts: Vec::new(),
            ee_contacts: Vec::new(),
            contact_bufs: Vec::new(),
            mark: vec![0; n],
            generation: 0,
            zones: ImpactZones::default(),
            prepared: Prepared::default(),
            immovable: Vec::new(),
        })
    }

    /// Declares the vertices this stage never moves: `immovable[i]` for a vertex whose inverse
    /// mass is 0 in every resolve (a hard pin; checked there). Pairs made only of such vertices
    /// are then skipped by the broad phase: no impulse or impact zone changes their velocities
    /// (BFA02 §7: infinite mass), so their contacts are wasted work — and if their prescribed
    /// motions cross, a crossing nothing here can resolve. The contacts prepared before are
    /// dropped.
    ///
    /// # Panics
    /// If `immovable` does not have one entry per vertex.
    pub fn set_immovable(&mut self, immovable: &[bool]) {
        assert_eq!(
            immovable.len(),
            self.layer.len(),
            "self-collision: immovable length"
        );
        self.immovable.clear();
        self.immovable
            .extend((0..immovable.len() as u32).filter(|&i| immovable[i as usize]));
        self.broad
            .set_fixed(immovable, &self.triangles, &self.edges);
        self.prepared.valid = false;
        // Listed by the broad phase, which skips pairs of immovable vertices: list them again.
        self.rest_close = RestClose::default();
    }

    /// Vertex count this stage was built for.
    pub fn vertex_count(&self) -> usize {
        self.layer.len()
    }

    /// Number of layers (garments).
    pub fn layer_count(&self) -> usize {
        self.layer_self_collide.len()
    }

    /// Corrects `v` (m/s) so that x0 + h·v (computed in f32 exactly like that) has no cloth–cloth
    /// crossing during the substep and keeps the thickness where possible. `x0`: positions at the
    /// start of the substep (m), `h`: substep (s), `inv_mass`: 1/kg per vertex (0 = pinned: its
    /// velocity is never changed), `params[layer]`: thickness and friction of each garment
    /// (validated by the caller with [`SelfCollisionParams::validate`]). No vertex rests on a body;
    /// see [`Self::resolve_with_bodies`].
    ///
    /// # Panics
    /// If slice lengths disagree with the topology (a programming error, not user data).
    pub fn resolve(
        &mut self,
        x0: &[Vec3],
        v: &mut [Vec3],
        h: f32,
        inv_mass: &[f32],
        params: &[SelfCollisionParams],
    ) -> SelfCollisionReport {
        self.resolve_with_bodies(x0, v, h, inv_mass, &[], params)
    }

    /// [`Self::resolve`] for cloth that also rests on bodies: `body_normal[i]` is the outward unit
    /// normal of the body vertex `i` is in contact with this substep (zero if none; an empty slice
    /// means none at all). Impulses and impact zones never move such a vertex further into its
    /// body than `v` already does (its velocity along the normal can only grow), so cloth squeezed
    /// between a body and other cloth is pushed away from the body, not into it.
    ///
    /// # Panics
    /// If slice lengths disagree with the topology (a programming error, not user data).
    pub fn resolve_with_bodies(
        &mut self,
        x0: &[Vec3],
        v: &mut [Vec3],
        h: f32,
        inv_mass: &[f32],
        body_normal: &[Vec3],
        params: &[SelfCollisionParams],
    ) -> SelfCollisionReport {
        let n = self.layer.len();
        assert_eq!(x0.len(), n, "self-collision: x0 length");
        assert_eq!(v.len(), n, "self-collision: v length");
        assert_eq!(inv_mass.len(), n, "self-collision: inv_mass length");
        assert!(
            body_normal.is_empty() || body_normal.len() == n,
            "self-collision: body_normal length"
        );
        assert!(
            params.len() >= self.layer_self_collide.len(),
            "self-collision: one params entry per layer"
        );
        assert!(
            self.immovable.iter().all(|&i| inv_mass[i as usize] == 0.0),
            "self-collision: a vertex declared immovable has a nonzero inverse mass"
        );
        let mob = Mobility {
            inv_mass,
            body_normal,
        };
        let mut report = SelfCollisionReport::default();
        if self.triangles.is_empty() || h <= 0.0 {
            return report;
        }
        let mut lap = Lap::start();
        let budget = (n as u64 * MAX_COLLISIONS_PER_VERTEX as u64)
            .clamp(MIN_COLLISION_BUDGET as u64, u32::MAX as u64) as u32;
        // Contacts prepared ahead of the solve at these very positions, if any.
        let prepared = std::mem::take(&mut self.prepared.valid) && self.prepared.x0 == x0;
        self.set_params(params);
        // The median of the velocities' steps: any one displacement serves the filter.
        self.frame = broad_phase::frame_shift_of(n, |i| v[i] * h, &mut self.frame_scratch);
        let frame = self.frame;
        self.x1
            .par_iter_mut()
            .zip(self.disp.par_iter_mut())
            .zip(x0.par_iter().zip(v.par_iter()))
            .for_each(|((x1, d), (p, u))| {
                *x1 = *p + *u * h;
                *d = displacement(*p, *x1, frame);
            });
        lap.lap(&mut report.times.other);
        if prepared && self.prepared_cover_the_sweep() {
            // The prepared candidates (unswept boxes at x0, half a thickness wide) hold every
            // sweep with its tolerance: they serve continuous collision too, no second build.
            self.broad.vf.clone_from(&self.prepared.vf);
            self.broad.ee.clone_from(&self.prepared.ee);
            self.vf_sep.clone_from(&self.prepared.vf_sep);
            self.ee_sep.clone_from(&self.prepared.ee_sep);
        } else if prepared {
            // Some vertices left the prepared boxes: those candidates with the escaped vertices'
            // boxes grown, if they are few ([`BroadPhase::grow`]), else a rebuild.
            self.broad.vf.clone_from(&self.prepared.vf);
            self.broad.ee.clone_from(&self.prepared.ee);
            self.rebuild_candidates(x0, true);
        } else {
            self.build_candidates(x0, BOX_INFLATION);
        }
        lap.lap(&mut report.times.broad_phase);

        // 1. Proximity repulsion with friction (BFA02 §7.2), Gauss–Seidel in candidate order.
        if prepared {
            self.take_prepared_contacts(x0);
            report.candidates = (self.prepared.vf.len() + self.prepared.ee.len()) as u32;
        } else {
            self.narrow_proximity(x0);
            report.candidates = (self.broad.vf.len() + self.broad.ee.len()) as u32;
        }
        report.contacts = self.contacts.len() as u32;
        let mut rebuild = false;
        for k in 0..self.contacts.len() {
            let c = self.contacts[k];
            if impulses::repel(&c, v, &mob, h) {
                report.repulsions += 1;
                rebuild |= self.moved(&c.idx, x0, v, h);
            }
        }

        lap.lap(&mut report.times.proximity);

        // 2. Iterated continuous collision detection with inelastic impulses (BFA02 §7.3).
        self.next_generation();
        let mut all = true;
        loop {
            if rebuild {
                lap.lap(&mut report.times.ccd);
                self.rebuild_candidates(x0, prepared);
                lap.lap(&mut report.times.broad_phase);
                report.rebuilds += 1;
                rebuild = false;
            }
            self.narrow_ccd(x0, all);
            all = false;
            report.ccd_iterations += 1;
            if self.contacts.is_empty() {
                lap.lap(&mut report.times.ccd);
                return report;
            }
            if report.ccd_iterations > MAX_CCD_ITERATIONS {
                break;
            }
            report.collisions += self.contacts.len() as u32;
            if report.collisions > budget {
                report.over_budget = true;
                report.unresolved = self.contacts.len() as u32;
                lap.lap(&mut report.times.ccd);
                return report;
            }
            self.next_generation();
            for k in 0..self.contacts.len() {
                let c = self.contacts[k];
                // A contact the impulse cannot resolve is found again and goes to the zones.
                if impulses::stop(&c, v, &mob, h) {
                    rebuild |= self.moved(&c.idx, x0, v, h);
                }
            }
        }

        // 3. Fail-safe: rigid impact zones (BFA02 §7.4). Collisions inside a zone that cannot move
        //    rigidly (conflicting pins or body contacts) stay, and end the loop once no merge is
        //    left to try.
        lap.lap(&mut report.times.ccd);
        self.zones.reset(n);
        // The work bound counts the impulse passes' collisions and every zone pass's.
        let mut work = report.collisions;
        loop {
            let zones = &mut self.zones;
            self.contacts.retain(|c| !zones.resolved(c));
            if self.contacts.is_empty() {
                break;
            }
            let mut merged = false;
            for c in &self.contacts {
                merged |= self.zones.merge(c);
            }
            if !merged || report.zone_iterations >= MAX_ZONE_ITERATIONS {
                report.unresolved = self.contacts.len() as u32;
                break;
            }
            work = work.saturating_add(self.contacts.len() as u32);
            if work > budget {
                report.over_budget = true;
                report.unresolved = self.contacts.len() as u32;
                break;
            }
            report.impact_zones = self.zones.rigidify(x0, v, h, &mob, &self.thick);
            self.next_generation();
            for k in 0..self.zones.members().len() {
                let i = self.zones.members()[k];
                rebuild |= self.moved(&[i], x0, v, h);
            }
            if rebuild {
                lap.lap(&mut report.times.impact_zones);
                self.rebuild_candidates(x0, prepared);
                lap.lap(&mut report.times.broad_phase);
                report.rebuilds += 1;
                rebuild = false;
            }
            self.narrow_ccd(x0, false);
            report.zone_iterations += 1;
        }
        lap.lap(&mut report.times.impact_zones);
        report
    }

    /// Starts a new "changed in this pass" generation for the dirty marks.
    fn next_generation(&mut self) {
        if self.generation == u32::MAX {
            self.mark.fill(0);
            self.generation = 0;
        }
        self.generation += 1;
    }

    /// Updates x1 of the given vertices after a velocity change, marks them dirty, and returns
    /// true if one left its broad-phase box (then the candidates must be rebuilt).
    fn moved(&mut self, idx: &[u32], x0: &[Vec3], v: &[Vec3], h: f32) -> bool {
        let mut out = false;
        for &i in idx {
            let i = i as usize;
            self.x1[i] = x0[i] + v[i] * h;
            self.disp[i] = displacement(x0[i], self.x1[i], self.frame);
            self.mark[i] = self.generation;
            let margin = narrow::CCD_TOLERANCE_FRACTION * self.thick[i] + 1e-7;
            out |= !self.broad.contains_with_margin(i, self.x1[i], margin);
        }
        out
    }

    /// Candidates for x0 → x1 after some vertices left the boxes of the current ones: for
    /// continuous collision alone (inflation [`CCD_INFLATION`], the distance bounds carried over)
    /// when the proximity contacts were prepared, else for both ([`BOX_INFLATION`]). The current
    /// candidates with the escaped vertices' boxes grown when they are few
    /// ([`BroadPhase::grow`]), else a new build.
    fn rebuild_candidates(&mut self, x0: &[Vec3], prepared: bool) {
        let inflation = if prepared {
            CCD_INFLATION
        } else {
            BOX_INFLATION
        };
        if self.grow_candidates(x0, inflation) {
            // Distance bounds are unknown until the next proximity pass.
            self.vf_sep.clear();
            self.vf_sep.resize(self.broad.vf.len(), 0.0);
            self.ee_sep.clear();
            self.ee_sep.resize(self.broad.ee.len(), 0.0);
        } else {
            self.build_candidates(x0, inflation);
        }
        if prepared {
            self.transfer_prepared_bounds();
        }
    }

    /// [`BroadPhase::grow`] for the vertices whose x1 left their box (by the margin of
    /// [`Self::moved`]), their sweeps inflated by `inflation`·thickness plus eight f32 ulps of the
    /// coordinates as in [`Self::build_candidates`]. False if a full build is needed instead.
    fn grow_candidates(&mut self, x0: &[Vec3], inflation: f32) -> bool {
        let (broad, thick, x1) = (&self.broad, &self.thick, &self.x1);
        self.escaped.clear();
        self.escaped.extend((0..x1.len() as u32).filter(|&i| {
            let i = i as usize;
            let margin = narrow::CCD_TOLERANCE_FRACTION * thick[i] + 1e-7;
            !broad.contains_with_margin(i, x1[i], margin)
        }));
        for &i in &self.escaped {
            let i = i as usize;
            let size = x0[i].abs().max(x1[i].abs()).max_element();
            self.inflate[i] = inflation * thick[i] + 8.0 * f32::EPSILON * size;
        }
        let mesh = Mesh {
            triangles: &self.triangles,
            edges: &self.edges,
            layer: &self.layer,
            layer_self_collide: &self.layer_self_collide,
        };
        self.broad
            .grow(&mesh, x0, &self.x1, &self.inflate, &self.escaped)
    }

    /// Thickness and friction of every vertex from its garment's parameters, and the pairs
    /// closer than the thickness at rest for those thicknesses.
    fn set_params(&mut self, params: &[SelfCollisionParams]) {
        for ((th, mu), &l) in self
            .thick
            .iter_mut()
            .zip(&mut self.friction)
            .zip(&self.layer)
        {
            let p = params[l as usize];
            (*th, *mu) = (p.thickness, p.friction);
        }
        if let Some(rest) = &self.rest {
            if !self.rest_close.holds_for(&self.thick) {
                let mesh = Mesh {
                    triangles: &self.triangles,
                    edges: &self.edges,
                    layer: &self.layer,
                    layer_self_collide: &self.layer_self_collide,
                };
                self.rest_close
                    .build(&mut self.broad, &mesh, rest, &self.thick);
            }
        }
    }

    /// Broad phase: candidates for boxes of x0 → x1 inflated by `inflation`·thickness, plus eight
    /// f32 ulps of the coordinates so that round-off in the bounds never drops a pair.
    fn build_candidates(&mut self, x0: &[Vec3], inflation: f32) {
        let (thick, x1) = (&self.thick, &self.x1);
        self.inflate.par_iter_mut().enumerate().for_each(|(i, r)| {
            let size = x0[i].abs().max(x1[i].abs()).max_element();
            *r = inflation * thick[i] + 8.0 * f32::EPSILON * size;
        });
        let mesh = Mesh {
            triangles: &self.triangles,
            edges: &self.edges,
            layer: &self.layer,
            layer_self_collide: &self.layer_self_collide,
        };
        self.broad.build(&mesh, x0, &self.x1, &self.inflate);
        // Distance bounds are unknown until the next proximity pass.
        self.vf_sep.clear();
        self.vf_sep.resize(self.broad.vf.len(), 0.0);
        self.ee_sep.clear();
        self.ee_sep.resize(self.broad.ee.len(), 0.0);
    }

    fn narrow<'a>(&'a self, x0: &'a [Vec3]) -> Narrow<'a> {
        Narrow {
            x0,
            x1: &self.x1,
            triangles: &self.triangles,
            edges: &self.edges,
            thick: &self.thick,
            friction: &self.friction,
            disp: &self.disp,
            rest_close: self.rest.is_some().then_some(&self.rest_close),
        }
    }

    /// Proximity contacts of all candidates at x0 into `self.contacts` (vertex–triangle first).
    fn narrow_proximity(&mut self, x0: &[Vec3]) {
        if self.rest.is_some() {
            self.rest_close.advance(x0);
        }
        let mut contacts = std::mem::take(&mut self.contacts);
        let mut ee_contacts = std::mem::take(&mut self.ee_contacts);
        let mut bufs = std::mem::take(&mut self.contact_bufs);
        let mut vf_sep = std::mem::take(&mut self.vf_sep);
        let mut ee_sep = std::mem::take(&mut self.ee_sep);
        let (vf, ee) = (&self.broad.vf, &self.broad.ee);
        // Each candidate's rest-close slot (none without rest positions), in one walk beside the
        // sorted lists.
        self.rest_close.vertex_triangle_slots(vf, &mut self.vf_slot);
        self.rest_close.edge_edge_slots(ee, &mut self.ee_slot);
        {
            let nar = self.narrow(x0);
            let (vf_slot, ee_slot) = (&self.vf_slot, &self.ee_slot);
            par_gather_with(vf.len(), &mut bufs, &mut contacts, &mut vf_sep, |k, buf| {
                let mut sep = 0.0;
                let [p, t] = vf[k];
                if let Some(c) = nar.vertex_triangle_proximity(p, t, vf_slot[k], &mut sep) {
                    buf.push(c);
                }
                sep
            });
            par_gather_with(
                ee.len(),
                &mut bufs,
                &mut ee_contacts,
                &mut ee_sep,
                |k, buf| {
                    let mut sep = 0.0;
                    let [e, f] = ee[k];
                    if let Some(c) = nar.edge_edge_proximity(e, f, ee_slot[k], &mut sep) {
                        buf.push(c);
                    }
                    sep
                },
            );
        }
        contacts.extend_from_slice(&ee_contacts);
        self.contacts = contacts;
        self.ee_contacts = ee_contacts;
        self.contact_bufs = bufs;
        self.vf_sep = vf_sep;
        self.ee_sep = ee_sep;
    }

    /// Continuous-collision events along x0 → x1 into `self.contacts`: all candidates when `all`,
    /// otherwise only pairs with a vertex whose velocity changed in the last pass.
    fn narrow_ccd(&mut self, x0: &[Vec3], all: bool) {
        let mut contacts = std::mem::take(&mut self.contacts);
        let mut ee_contacts = std::mem::take(&mut self.ee_contacts);
        let mut bufs = std::mem::take(&mut self.contact_bufs);
        {
            let nar = self.narrow(x0);
            let (vf, ee, tris, edges) =
                (&self.broad.vf, &self.broad.ee, &self.triangles, &self.edges);
            let (mark, gen) = (&self.mark, self.generation);
            let (vf_sep, ee_sep) = (&self.vf_sep, &self.ee_sep);
            let dirty = |i: u32| all || mark[i as usize] == gen;
            par_gather(vf.len(), &mut bufs, &mut contacts, |k, buf| {
                let [p, t] = vf[k];
                if !(dirty(p) || tris[t as usize].iter().any(|&i| dirty(i))) {
                    return;
                }
                if let Some(c) = nar.vertex_triangle_ccd(p, t, vf_sep[k]) {
                    buf.push(c);
                }
            });
            par_gather(ee.len(), &mut bufs, &mut ee_contacts, |k, buf| {
                let [e, f] = ee[k];
                let (a, b) = (edges[e as usize], edges[f as usize]);
                if !(a.iter().chain(b.iter()).any(|&i| dirty(i))) {
                    return;
                }
                if let Some(c) = nar.edge_edge_ccd(e, f, ee_sep[k]) {
                    buf.push(c);
                }
            });
        }
        contacts.extend_from_slice(&ee_contacts);
        self.contacts = contacts;
        self.ee_contacts = ee_contacts;
        self.contact_bufs = bufs;
    }
}

/// |x1 − x0 − frame| (m) in f64, as the CCD's no-contact filter computes it.
#[inline]
fn displacement(x0: Vec3, x1: Vec3, frame: Vec3) -> f64 {
    (x1.as_dvec3() - x0.as_dvec3() - frame.as_dvec3()).length()
}
