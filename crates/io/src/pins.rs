//! Pinned garment vertices: which simulation vertices, how strongly, and where they go over time.

use crate::scene::Follow;

/// Pins of one garment in simulation indices (sorted, unique).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pins {
    /// Simulation vertex indices, increasing.
    pub vertices: Vec<u32>,
    /// Parallel to `vertices`: 1 = hard pin, (0, 1) = goal spring of `stiffness × weight`.
    pub weights: Vec<f32>,
    /// N/m per unit weight for partial pins.
    pub stiffness: f32,
    /// What the targets follow.
    pub follow: Follow,
}

impl Pins {
    /// Builds pins from `(source vertex, weight)` pairs through `source_to_sim`; a simulation
    /// vertex reached several times (welded copies, or listed and masked) keeps the largest weight.
    /// Pairs with weight ≤ 0 and source vertices without a simulation vertex are skipped.
    pub fn from_source(
        pairs: impl IntoIterator<Item = (u32, f32)>,
        source_to_sim: &[u32],
        stiffness: f32,
        follow: Follow,
    ) -> Self {
        let mut v: Vec<(u32, f32)> = pairs
            .into_iter()
            .filter(|&(_, w)| w > 0.0)
            .filter_map(|(s, w)| {
                let sim = *source_to_sim.get(s as usize)?;
                (sim != crate::weld::NO_VERTEX).then_some((sim, w.min(1.0)))
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        v.dedup_by_key(|p| p.0);
        Self {
            vertices: v.iter().map(|p| p.0).collect(),
            weights: v.iter().map(|p| p.1).collect(),
            stiffness,
            follow,
        }
    }

    /// Whether nothing is pinned.
    pub fn is_empty(&self) -> bool {
        self.vertices.is_empty()
    }
}
