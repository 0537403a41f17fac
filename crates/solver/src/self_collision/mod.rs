//! Cloth–cloth collision: self-collision of every garment and collision between garments.
//!
//! After the implicit solve each substep, [`SelfCollision::resolve`] corrects the velocities so
//! that the linear motion x0 → x0 + h·v crosses no cloth and keeps the thickness, following Bridson,
//! Fedkiw & Anderson 2002, "Robust treatment of collisions, contact and friction for cloth
//! animation" (BFA02):
//! 1. broad phase: spatial hash of swept triangle and edge boxes, rebuilt in O(n) (Kang 2003 §5.3);
//! 2. proximity repulsion with Coulomb friction for vertex–triangle and edge–edge pairs closer than
//!    the thickness at the start of the substep (BFA02 §6.1, §7.2);
//! 3. iterated continuous collision detection (coplanarity cubic + distance at the root) with
//!    inelastic impulses (BFA02 §6.2, §7.3);
//! 4. rigid impact zones as the fail-safe (BFA02 §7.4, Provot 1997).
//!
//! Pinned vertices have infinite mass throughout, and vertices resting on a body cannot be pushed
//! into it (see [`Mobility`]).
//!
//! Pairs sharing a vertex are never tested. (Skipping whole 1-rings was tried: the twisted sheet
//! then intersects, so only direct neighbours are skipped.) [`count_intersections`] is an independent
//! triangle–triangle intersection counter for tests and bake reports.

pub mod ccd;
mod contact;
mod impact_zones;
mod impulses;
mod intersections;
mod narrow;
mod parallel;
pub mod proximity;
mod spatial_hash;
mod topology;

pub use contact::{Contact, Mobility, MAX_AMPLIFICATION};
pub use impulses::{CCD_GAP_FRACTION, REPULSION_RATE};
pub use intersections::{count_intersections, triangles_intersect};
pub use narrow::CCD_TOLERANCE_FRACTION;
pub use topology::{SelfCollisionError, SelfCollisionParams, SelfCollisionTopology};

use glam::Vec3;
use impact_zones::ImpactZones;
use narrow::Narrow;
use parallel::par_gather;
use rayon::prelude::*;
use spatial_hash::{Aabb, SpatialHash};

/// Continuous-collision impulse iterations before falling back to impact zones (BFA02 §7.3).
pub const MAX_CCD_ITERATIONS: u32 = 10;
/// Impact-zone iterations before giving up (reported as `unresolved`).
pub const MAX_ZONE_ITERATIONS: u32 = 200;
/// Broad-phase boxes are inflated by this fraction of the vertex thickness: ½ for the proximity
/// radius plus slack so that small velocity corrections do not force a rebuild.
const BOX_INFLATION: f32 = 0.75;
/// Hash buckets per parallel broad-phase task (fixed, so the output order is thread-independent).
const BUCKET_CHUNK: usize = 1024;

/// Per-task candidate buffers: (vertex–triangle, edge–edge).
type PairBuffers = (Vec<[u32; 2]>, Vec<[u32; 2]>);

/// What one [`SelfCollision::resolve`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    /// Broad-phase rebuilds after velocities left the candidate boxes.
    pub rebuilds: u32,
    /// Impact-zone iterations run (0 when the impulses sufficed).
    pub zone_iterations: u32,
    /// Rigid impact zones at the end.
    pub impact_zones: u32,
    /// Collisions still present when the zone iterations gave up (0 = guaranteed crossing-free).
    pub unresolved: u32,
}

/// Self- and inter-garment collision stage with all its reusable buffers.
#[derive(Debug)]
pub struct SelfCollision {
    triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    layer: Vec<u32>,
    layer_self_collide: Vec<bool>,
    rest: Option<Vec<Vec3>>,
    thick: Vec<f32>,
    x1: Vec<Vec3>,
    vbox: Vec<Aabb>,
    tbox: Vec<Aabb>,
    ebox: Vec<Aabb>,
    /// First triangle containing each vertex (u32::MAX: none).
    vertex_owner: Vec<u32>,
    /// First triangle containing each edge.
    edge_owner: Vec<u32>,
    /// Edge indices of each triangle.
    triangle_edges: Vec<[u32; 3]>,
    tri_hash: SpatialHash,
    vf: Vec<[u32; 2]>,
    ee: Vec<[u32; 2]>,
    pair_bufs: Vec<PairBuffers>,
    contacts: Vec<Contact>,
    ee_contacts: Vec<Contact>,
    contact_bufs: Vec<Vec<Contact>>,
    mark: Vec<u32>,
    generation: u32,
    zones: ImpactZones,
}

impl SelfCollision {
    /// Validates the topology and precomputes the unique edges.
    pub fn new(topology: &SelfCollisionTopology) -> Result<Self, SelfCollisionError> {
        topology.validate()?;
        let mut edges: Vec<[u32; 2]> = topology
            .triangles
            .iter()
            .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
            .map(|[a, b]| if a < b { [a, b] } else { [b, a] })
            .collect();
        edges.sort_unstable();
        edges.dedup();
        let n = topology.vertex_count();
        let mut vertex_owner = vec![u32::MAX; n];
        let mut edge_owner = vec![u32::MAX; edges.len()];
        let mut triangle_edges = Vec::with_capacity(topology.triangles.len());
        for (t, tri) in topology.triangles.iter().enumerate() {
            let mut te = [0u32; 3];
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let key = if a < b { [a, b] } else { [b, a] };
                // The edge list was built from these very triangles, so the search succeeds.
                let e = edges.binary_search(&key).unwrap_or(0);
                te[k] = e as u32;
                edge_owner[e] = edge_owner[e].min(t as u32);
                vertex_owner[tri[k] as usize] = vertex_owner[tri[k] as usize].min(t as u32);
            }
            triangle_edges.push(te);
        }
        Ok(Self {
            triangles: topology.triangles.clone(),
            edges,
            layer: topology.vertex_layer.clone(),
            layer_self_collide: topology.layer_self_collide.clone(),
            rest: topology.rest_positions.clone(),
            thick: vec![0.0; n],
            x1: vec![Vec3::ZERO; n],
            vbox: vec![Aabb::EMPTY; n],
            tbox: Vec::new(),
            ebox: Vec::new(),
            vertex_owner,
            edge_owner,
            triangle_edges,
            tri_hash: SpatialHash::default(),
            vf: Vec::new(),
            ee: Vec::new(),
            pair_bufs: Vec::new(),
            contacts: Vec::new(),
            ee_contacts: Vec::new(),
            contact_bufs: Vec::new(),
            mark: vec![0; n],
            generation: 0,
            zones: ImpactZones::default(),
        })
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
        let mob = Mobility {
            inv_mass,
            body_normal,
        };
        let mut report = SelfCollisionReport::default();
        if self.triangles.is_empty() || h <= 0.0 {
            return report;
        }
        for i in 0..n {
            self.thick[i] = params[self.layer[i] as usize].thickness;
        }
        self.x1
            .par_iter_mut()
            .zip(x0.par_iter().zip(v.par_iter()))
            .for_each(|(x1, (p, u))| *x1 = *p + *u * h);
        self.build_candidates(x0);
        report.candidates = (self.vf.len() + self.ee.len()) as u32;

        // 1. Proximity repulsion with friction (BFA02 §7.2), Gauss–Seidel in candidate order.
        self.narrow_proximity(x0, params);
        report.contacts = self.contacts.len() as u32;
        let mut rebuild = false;
        for k in 0..self.contacts.len() {
            let c = self.contacts[k];
            if impulses::repel(&c, v, &mob, h) {
                report.repulsions += 1;
                rebuild |= self.moved(&c.idx, x0, v, h);
            }
        }

        // 2. Iterated continuous collision detection with inelastic impulses (BFA02 §7.3).
        self.next_generation();
        let mut all = true;
        loop {
            if rebuild {
                self.build_candidates(x0);
                report.rebuilds += 1;
                rebuild = false;
            }
            self.narrow_ccd(x0, params, all);
            all = false;
            report.ccd_iterations += 1;
            if self.contacts.is_empty() {
                return report;
            }
            if report.ccd_iterations > MAX_CCD_ITERATIONS {
                break;
            }
            report.collisions += self.contacts.len() as u32;
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
        self.zones.reset(n);
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
            report.impact_zones = self.zones.rigidify(x0, v, h, &mob, &self.thick);
            self.next_generation();
            for k in 0..self.zones.members().len() {
                let i = self.zones.members()[k];
                rebuild |= self.moved(&[i], x0, v, h);
            }
            if rebuild {
                self.build_candidates(x0);
                report.rebuilds += 1;
                rebuild = false;
            }
            self.narrow_ccd(x0, params, false);
            report.zone_iterations += 1;
        }
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
            self.mark[i] = self.generation;
            let margin = narrow::CCD_TOLERANCE_FRACTION * self.thick[i] + 1e-7;
            out |= !self.vbox[i].contains_with_margin(self.x1[i], margin);
        }
        out
    }

    /// Broad phase: boxes of x0 → x1 inflated by `BOX_INFLATION`·thickness, spatial hashes of
    /// triangles and edges, vertex–triangle and edge–edge candidates in a fixed order.
    fn build_candidates(&mut self, x0: &[Vec3]) {
        let Self {
            triangles,
            edges,
            layer,
            layer_self_collide,
            thick,
            x1,
            vbox,
            tbox,
            ebox,
            tri_hash,
            vf,
            ee,
            pair_bufs,
            vertex_owner,
            edge_owner,
            triangle_edges,
            ..
        } = self;
        vbox.par_iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = Aabb::swept(x0[i], x1[i], BOX_INFLATION * thick[i]));
        let vb: &[Aabb] = vbox;
        tbox.resize(triangles.len(), Aabb::EMPTY);
        tbox.par_iter_mut()
            .zip(triangles.par_iter())
            .for_each(|(b, t)| {
                *b = vb[t[0] as usize]
                    .union(vb[t[1] as usize])
                    .union(vb[t[2] as usize]);
            });
        ebox.resize(edges.len(), Aabb::EMPTY);
        ebox.par_iter_mut()
            .zip(edges.par_iter())
            .for_each(|(b, e)| *b = vb[e[0] as usize].union(vb[e[1] as usize]));
        tri_hash.build(tbox, SpatialHash::cell_size_for(tbox));
        // Within a garment only if its self-collision is on; between garments always.
        let allowed = |a: u32, b: u32| {
            let (la, lb) = (layer[a as usize], layer[b as usize]);
            la != lb || layer_self_collide[la as usize]
        };
        // Pairs of immovable vertices are kept: if their prescribed motions cross, only the
        // impact-zone fail-safe can (and does) resolve them.
        let (tris, eds, eb, tb) = (&*triangles, &*edges, &*ebox, &*tbox);
        let (vown, eown, tedges) = (&*vertex_owner, &*edge_owner, &*triangle_edges);
        // Candidates from overlapping triangle pairs (t, u): a vertex is tested against u only from
        // the first triangle containing it ("owner"), an edge pair only from its owners' pair, so
        // every vertex–triangle and edge–edge candidate appears exactly once.
        let vf_of = |p: u32, u: u32, t_of_p: u32, buf: &mut Vec<[u32; 2]>| {
            if vown[p as usize] != t_of_p {
                return;
            }
            let tri = tris[u as usize];
            if tri.contains(&p) || !vb[p as usize].overlaps(&tb[u as usize]) || !allowed(p, tri[0])
            {
                return;
            }
            buf.push([p, u]);
        };
        let ee_of = |t: u32, u: u32, buf: &mut Vec<[u32; 2]>| {
            for &f in &tedges[t as usize] {
                if eown[f as usize] != t {
                    continue;
                }
                let ea = eds[f as usize];
                for &g in &tedges[u as usize] {
                    if eown[g as usize] != u {
                        continue;
                    }
                    let fb = eds[g as usize];
                    if fb.contains(&ea[0])
                        || fb.contains(&ea[1])
                        || !eb[f as usize].overlaps(&eb[g as usize])
                        || !allowed(ea[0], fb[0])
                    {
                        continue;
                    }
                    buf.push([f.min(g), f.max(g)]);
                }
            }
        };
        let nb = tri_hash.bucket_count();
        let chunks = nb.div_ceil(BUCKET_CHUNK);
        if pair_bufs.len() < chunks {
            pair_bufs.resize_with(chunks, Default::default);
        }
        let hash = &*tri_hash;
        pair_bufs[..chunks]
            .par_iter_mut()
            .enumerate()
            .for_each(|(c, (vbuf, ebuf))| {
                vbuf.clear();
                ebuf.clear();
                hash.for_each_pair(c * BUCKET_CHUNK..nb.min((c + 1) * BUCKET_CHUNK), |t, u| {
                    for p in tris[t as usize] {
                        vf_of(p, u, t, vbuf);
                    }
                    for p in tris[u as usize] {
                        vf_of(p, t, u, vbuf);
                    }
                    ee_of(t, u, ebuf);
                });
            });
        vf.clear();
        ee.clear();
        for (vbuf, ebuf) in &pair_bufs[..chunks] {
            vf.extend_from_slice(vbuf);
            ee.extend_from_slice(ebuf);
        }
    }

    fn narrow<'a>(&'a self, x0: &'a [Vec3], params: &'a [SelfCollisionParams]) -> Narrow<'a> {
        Narrow {
            x0,
            x1: &self.x1,
            triangles: &self.triangles,
            edges: &self.edges,
            layer: &self.layer,
            params,
            rest: self.rest.as_deref(),
        }
    }

    /// Proximity contacts of all candidates at x0 into `self.contacts` (vertex–triangle first).
    fn narrow_proximity(&mut self, x0: &[Vec3], params: &[SelfCollisionParams]) {
        let mut contacts = std::mem::take(&mut self.contacts);
        let mut ee_contacts = std::mem::take(&mut self.ee_contacts);
        let mut bufs = std::mem::take(&mut self.contact_bufs);
        {
            let nar = self.narrow(x0, params);
            let (vf, ee) = (&self.vf, &self.ee);
            par_gather(vf.len(), &mut bufs, &mut contacts, |k, buf| {
                if let Some(c) = nar.vertex_triangle_proximity(vf[k][0], vf[k][1]) {
                    buf.push(c);
                }
            });
            par_gather(ee.len(), &mut bufs, &mut ee_contacts, |k, buf| {
                if let Some(c) = nar.edge_edge_proximity(ee[k][0], ee[k][1]) {
                    buf.push(c);
                }
            });
        }
        contacts.extend_from_slice(&ee_contacts);
        self.contacts = contacts;
        self.ee_contacts = ee_contacts;
        self.contact_bufs = bufs;
    }

    /// Continuous-collision events along x0 → x1 into `self.contacts`: all candidates when `all`,
    /// otherwise only pairs with a vertex whose velocity changed in the last pass.
    fn narrow_ccd(&mut self, x0: &[Vec3], params: &[SelfCollisionParams], all: bool) {
        let mut contacts = std::mem::take(&mut self.contacts);
        let mut ee_contacts = std::mem::take(&mut self.ee_contacts);
        let mut bufs = std::mem::take(&mut self.contact_bufs);
        {
            let nar = self.narrow(x0, params);
            let (vf, ee, tris, edges) = (&self.vf, &self.ee, &self.triangles, &self.edges);
            let (mark, gen) = (&self.mark, self.generation);
            let dirty = |i: u32| all || mark[i as usize] == gen;
            par_gather(vf.len(), &mut bufs, &mut contacts, |k, buf| {
                let [p, t] = vf[k];
                if !(dirty(p) || tris[t as usize].iter().any(|&i| dirty(i))) {
                    return;
                }
                if let Some(c) = nar.vertex_triangle_ccd(p, t) {
                    buf.push(c);
                }
            });
            par_gather(ee.len(), &mut bufs, &mut ee_contacts, |k, buf| {
                let [e, f] = ee[k];
                let (a, b) = (edges[e as usize], edges[f as usize]);
                if !(a.iter().chain(b.iter()).any(|&i| dirty(i))) {
                    return;
                }
                if let Some(c) = nar.edge_edge_ccd(e, f) {
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
