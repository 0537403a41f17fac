//! Cloth-vertex vs body-proxy contact detection over one substep: broad culling by swept boxes
//! per fixed chunk of vertices, continuous narrow phase per vertex, parallel over chunks.

use glam::Vec3;
use rayon::prelude::*;

use super::aabb::Aabb;
use super::ccd::vertex_contact;
use super::contact::VertexContact;
use super::error::CollideError;
use super::moving::MovingCollider;

/// Vertices per chunk: the unit of parallel work and of broad-phase culling. Fixed, so the work
/// split (and hence the output) does not depend on the thread count.
pub const CHUNK_VERTICES: usize = 256;

/// Per-chunk scratch, kept between calls.
#[derive(Debug, Default)]
pub(super) struct ChunkScratch {
    /// Colliders whose swept box meets this chunk's swept box.
    pub(super) candidates: Vec<u32>,
    /// [`ContactDetector::project_out`]: the candidates left for one block of the chunk.
    pub(super) block: Vec<u32>,
    /// Contacts of this chunk, in vertex then collider order.
    contacts: Vec<VertexContact>,
    /// Smallest distance left by [`ContactDetector::project_out`] in this chunk (m).
    pub(super) min_distance: f32,
    /// Per vertex of this chunk: moved by the last [`ContactDetector::project_out`].
    pub(super) moved: Vec<bool>,
    /// Per vertex of this chunk: the part of its projection the bodies' own motion made (m,
    /// along the normals; zero if not moved), [`ContactDetector::body_pushes`].
    pub(super) push: Vec<Vec3>,
}

/// Reusable workspace for [`ContactDetector::detect`]: swept collider boxes and per-chunk buffers.
/// After the first call with a given mesh and collider count it allocates only if the number of
/// contacts grows beyond what earlier calls needed.
#[derive(Debug, Default)]
pub struct ContactDetector {
    pub(super) boxes: Vec<Aabb>,
    /// [`MovingCollider::motion_bound`] per collider, for [`ContactDetector::project_out`].
    pub(super) motion: Vec<f32>,
    pub(super) chunks: Vec<ChunkScratch>,
}

impl ContactDetector {
    pub fn new() -> Self {
        Self::default()
    }

    /// Continuous detection over one substep of length `h` (s): vertex i moves `x0[i]` → `x1[i]`
    /// (predicted), collider k moves `colliders[k].start` → `.end`. Fills `out` (cleared first)
    /// with one contact per (vertex, collider) pair that comes within `thickness[i]` (m) at any
    /// time of the substep, sorted by vertex then collider; identical at any thread count.
    /// Runs in the current rayon pool.
    pub fn detect(
        &mut self,
        colliders: &[MovingCollider],
        h: f32,
        x0: &[Vec3],
        x1: &[Vec3],
        thickness: &[f32],
        out: &mut Vec<VertexContact>,
    ) -> Result<(), CollideError> {
        out.clear();
        let n = x0.len();
        if x1.len() != n || thickness.len() != n {
            return Err(CollideError::LengthMismatch {
                x0: n,
                x1: x1.len(),
                thickness: thickness.len(),
            });
        }
        for (k, c) in colliders.iter().enumerate() {
            c.validate(k)?;
        }
        self.boxes.clear();
        self.boxes
            .extend(colliders.iter().map(MovingCollider::swept_aabb));
        let chunk_count = n.div_ceil(CHUNK_VERTICES);
        if self.chunks.len() < chunk_count {
            self.chunks.resize_with(chunk_count, ChunkScratch::default);
        }
        let boxes = &self.boxes;
        self.chunks[..chunk_count]
            .par_iter_mut()
            .enumerate()
            .for_each(|(ci, scratch)| {
                let range = ci * CHUNK_VERTICES..n.min((ci + 1) * CHUNK_VERTICES);
                detect_chunk(
                    colliders,
                    boxes,
                    h,
                    &x0[range.clone()],
                    &x1[range.clone()],
                    &thickness[range.clone()],
                    range.start,
                    scratch,
                );
            });
        for scratch in &self.chunks[..chunk_count] {
            out.extend_from_slice(&scratch.contacts);
        }
        Ok(())
    }
}

/// Swept box of one vertex grown by its thickness (m, clamped at 0).
#[inline]
fn vertex_box(x0: Vec3, x1: Vec3, thickness: f32) -> Aabb {
    Aabb {
        min: x0.min(x1),
        max: x0.max(x1),
    }
    .inflate(thickness.max(0.0))
}

/// Narrow phase for the vertices `first..first + x0.len()`, colliders pre-culled by chunk box.
#[allow(clippy::too_many_arguments)]
fn detect_chunk(
    colliders: &[MovingCollider],
    boxes: &[Aabb],
    h: f32,
    x0: &[Vec3],
    x1: &[Vec3],
    thickness: &[f32],
    first: usize,
    scratch: &mut ChunkScratch,
) {
    scratch.contacts.clear();
    scratch.candidates.clear();
    let chunk_box = x0
        .iter()
        .zip(x1)
        .zip(thickness)
        .fold(Aabb::EMPTY, |b, ((&a, &e), &th)| {
            b.union(vertex_box(a, e, th))
        });
    scratch
        .candidates
        .extend((0..boxes.len() as u32).filter(|&k| boxes[k as usize].overlaps(&chunk_box)));
    if scratch.candidates.is_empty() {
        return;
    }
    for (i, ((&a, &e), &th)) in x0.iter().zip(x1).zip(thickness).enumerate() {
        let vb = vertex_box(a, e, th);
        for &k in &scratch.candidates {
            if boxes[k as usize].overlaps(&vb) {
                let vertex = (first + i) as u32;
                if let Some(c) = vertex_contact(&colliders[k as usize], k, vertex, h, a, e, th) {
                    scratch.contacts.push(c);
                }
            }
        }
    }
}
