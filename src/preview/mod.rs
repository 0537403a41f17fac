//! `bake --preview FILE.png`: a contact sheet of a few evenly spaced output frames, rendered in
//! software so that a bake can be reviewed without a DCC. Each tile shows the cloth as flat-shaded
//! triangles (Lambert, z-buffered; front faces in the garment's colour, back faces darker) and the
//! body proxies as outlines (spheres and tapered capsules as their silhouettes, planes as a grid;
//! dimmed where the cloth hides them), seen by one fixed orthographic camera fitted to the bounds
//! of all shown frames from the direction that sees the most cloth (see [`camera`]), with the
//! frame number in the top-left corner.
//!
//! Layout: [`MAX_FRAMES`] frames (fewer when fewer are written), [`COLUMNS`] per row, each tile
//! [`TILE`]×[`TILE`] pixels: a bake of 6 or more frames gives a 960×640 RGB PNG.
//!
//! While the bake streams, only the chosen frames' simulated positions (world, m) and collider
//! shapes are kept.

mod camera;
mod font;
mod outline;
mod raster;

use std::path::{Path, PathBuf};

use clothbake_io::Shape;
use clothbake_solver::Model;
use glam::Vec3;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};

use crate::error::{CliError, Result};
use crate::fs_util::write_atomic;
use camera::Camera;
use raster::{mix, Tile};

/// Frames shown at most.
pub const MAX_FRAMES: usize = 6;
/// Tiles per row.
pub const COLUMNS: usize = 3;
/// Tile width and height (pixels).
pub const TILE: u32 = 320;
/// Height of the label strip at the top of a tile (pixels), kept clear of the fitted view.
const LABEL_STRIP: f32 = 26.0;

/// Front-face colours per garment (cycled).
const GARMENT_COLORS: [[u8; 3]; 5] = [
    [235, 142, 62],
    [84, 168, 232],
    [118, 200, 104],
    [222, 92, 146],
    [232, 212, 88],
];
pub(crate) const PROXY_COLOR: [u8; 3] = [150, 226, 255];
pub(crate) const PLANE_COLOR: [u8; 3] = [120, 124, 136];
const TEXT_COLOR: [u8; 3] = [250, 250, 250];
const BACKGROUND: ([u8; 3], [u8; 3]) = ([58, 62, 70], [30, 32, 36]);

/// One kept frame.
struct Captured {
    frame: i32,
    positions: Vec<Vec3>,
    shapes: Vec<Shape>,
}

/// Collects the chosen frames during a bake and renders the sheet at its end.
pub struct Preview {
    path: PathBuf,
    chosen: Vec<i32>,
    triangles: Vec<[u32; 3]>,
    /// Garment index per triangle.
    triangle_garment: Vec<u32>,
    captured: Vec<Captured>,
}

/// Up to [`MAX_FRAMES`] frames of `first..=last`, evenly spaced, first and last included.
pub fn choose_frames(first: i32, last: i32) -> Vec<i32> {
    if last < first {
        return Vec::new();
    }
    let count = (last - first) as i64 + 1;
    let n = (MAX_FRAMES as i64).min(count);
    if n == 1 {
        return vec![first];
    }
    (0..n)
        .map(|i| first + ((i * (count - 1) + (n - 1) / 2) / (n - 1)) as i32)
        .collect()
}

impl Preview {
    /// A preview of output frames `first..=last` (those this bake writes) of `model` into `path`.
    pub fn new(path: &Path, first: i32, last: i32, model: &Model) -> Self {
        let mut triangle_garment = vec![0; model.triangles.len()];
        for (g, r) in model.garments.iter().enumerate() {
            for t in r.triangles.clone() {
                if let Some(x) = triangle_garment.get_mut(t) {
                    *x = g as u32;
                }
            }
        }
        Self {
            path: path.to_path_buf(),
            chosen: choose_frames(first, last),
            triangles: model.triangles.clone(),
            triangle_garment,
            captured: Vec::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Keeps `frame` if it is one of the chosen ones: the simulated positions of all garments
    /// (world, m) and the collider shapes at the end of the frame.
    pub fn capture(&mut self, frame: i32, positions: &[Vec3], shapes: &[Shape]) {
        if self.chosen.contains(&frame) && !self.captured.iter().any(|c| c.frame == frame) {
            self.captured.push(Captured {
                frame,
                positions: positions.to_vec(),
                shapes: shapes.to_vec(),
            });
        }
    }

    /// Renders the sheet and writes it as PNG (temporary file, then rename); returns the seconds
    /// spent rendering and encoding.
    pub fn write(&self) -> Result<f64> {
        let started = std::time::Instant::now();
        let image = self.render();
        let mut bytes = Vec::new();
        let encoder =
            PngEncoder::new_with_quality(&mut bytes, CompressionType::Fast, FilterType::Sub);
        image.write_with_encoder(encoder).map_err(|e| {
            CliError::Output(format!("{}: cannot encode PNG: {e}", self.path.display()))
        })?;
        let seconds = started.elapsed().as_secs_f64();
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::fs_util::create_dir(parent)?;
        }
        write_atomic(&self.path, &bytes)?;
        Ok(seconds)
    }

    /// The contact sheet (see the module docs for the layout).
    pub fn render(&self) -> image::RgbImage {
        let n = self.captured.len().max(1);
        let cols = n.min(COLUMNS);
        let rows = n.div_ceil(COLUMNS);
        let mut sheet = image::RgbImage::new(TILE * cols as u32, TILE * rows as u32);
        let camera = self.fit_camera();
        for (k, c) in self.captured.iter().enumerate() {
            let tile = self.render_tile(c, &camera);
            let (x0, y0) = ((k % COLUMNS) as u32 * TILE, (k / COLUMNS) as u32 * TILE);
            for y in 0..TILE {
                for x in 0..TILE {
                    let px = tile.rgb[(y * TILE + x) as usize];
                    sheet.put_pixel(x0 + x, y0 + y, image::Rgb(px));
                }
            }
        }
        sheet
    }

    /// Cloth bounds over all kept frames, and the points the camera is fitted to: every cloth
    /// vertex plus the spheres and capsule ends near the cloth (within its bounds' diagonal, so a
    /// huge or distant collider does not shrink the cloth to a dot).
    fn fit_camera(&self) -> Camera {
        let mut pts: Vec<(Vec3, f32)> = Vec::new();
        let (lo, hi) = self.cloth_bounds();
        let diag = (hi - lo).length().max(1e-3);
        for c in &self.captured {
            pts.extend(c.positions.iter().map(|&p| (p, 0.0)));
        }
        let near = |p: Vec3, r: f32| {
            r < diag && (p.clamp(lo, hi) - p).length() - r < diag && p.is_finite()
        };
        for c in &self.captured {
            for s in &c.shapes {
                match *s {
                    Shape::Sphere { center, radius } if near(center, radius) => {
                        pts.push((center, radius))
                    }
                    Shape::Capsule {
                        a,
                        b,
                        radius_a,
                        radius_b,
                    } if near(a, radius_a) && near(b, radius_b) => {
                        pts.push((a, radius_a));
                        pts.push((b, radius_b));
                    }
                    _ => {}
                }
            }
        }
        pts.retain(|(p, r)| p.is_finite() && r.is_finite());
        let area_vectors = self.captured.iter().flat_map(|c| {
            self.triangles.iter().filter_map(|t| {
                let p = |i: u32| c.positions.get(i as usize).copied();
                Some((p(t[1])? - p(t[0])?).cross(p(t[2])? - p(t[0])?))
            })
        });
        Camera::fit(
            camera::choose_view(area_vectors),
            &pts,
            TILE as f32,
            TILE as f32 - LABEL_STRIP,
            LABEL_STRIP,
            14.0,
        )
    }

    fn cloth_bounds(&self) -> (Vec3, Vec3) {
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for p in self.captured.iter().flat_map(|c| &c.positions) {
            if p.is_finite() {
                lo = lo.min(*p);
                hi = hi.max(*p);
            }
        }
        if lo.x > hi.x {
            return (Vec3::ZERO, Vec3::ZERO);
        }
        (lo, hi)
    }

    fn render_tile(&self, c: &Captured, cam: &Camera) -> Tile {
        let mut tile = Tile::new(TILE, TILE, BACKGROUND.0, BACKGROUND.1);
        let view = cam.toward_viewer();
        let (right, up) = cam.axes();
        let light = (view + up * 0.7 - right * 0.45).normalize();
        for (t, tri) in self.triangles.iter().enumerate() {
            let pos = |i: u32| c.positions.get(i as usize).copied();
            let (Some(a), Some(b), Some(d)) = (pos(tri[0]), pos(tri[1]), pos(tri[2])) else {
                continue;
            };
            let n = (b - a).cross(d - a).normalize_or_zero();
            let base = GARMENT_COLORS[self.triangle_garment[t] as usize % GARMENT_COLORS.len()];
            let (color, facing) = if n.dot(view) >= 0.0 {
                (base, n)
            } else {
                (mix(mix(base, [128, 128, 128], 0.4), [0, 0, 0], 0.2), -n)
            };
            let shade = 0.25 + 0.75 * facing.dot(light).max(0.0);
            let color = color.map(|k| (k as f32 * shade).round().min(255.0) as u8);
            tile.fill_triangle(cam.project(a), cam.project(b), cam.project(d), color);
        }
        let (lo, hi) = self.cloth_bounds();
        let slack = 0.01;
        for s in &c.shapes {
            match *s {
                Shape::Sphere { center, radius } => {
                    outline::sphere(&mut tile, cam, center, radius, slack)
                }
                Shape::Capsule {
                    a,
                    b,
                    radius_a,
                    radius_b,
                } => outline::capsule(&mut tile, cam, a, b, radius_a, radius_b, slack),
                Shape::Plane { point, normal } => {
                    outline::plane(&mut tile, cam, point, normal, lo, hi)
                }
            }
        }
        tile.label(&format!("FRAME {}", c.frame), 10, 8, 2, TEXT_COLOR);
        // A one-pixel frame around the tile separates the tiles of the sheet.
        for i in 0..TILE {
            for (x, y) in [(i, 0), (i, TILE - 1), (0, i), (TILE - 1, i)] {
                tile.rgb[(y * TILE + x) as usize] = [16, 17, 20];
            }
        }
        tile
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chosen_frames_are_evenly_spaced_with_both_ends() {
        assert_eq!(choose_frames(1, 24), vec![1, 6, 10, 15, 19, 24]);
        assert_eq!(choose_frames(1, 6), vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(choose_frames(5, 7), vec![5, 6, 7]);
        assert_eq!(choose_frames(3, 3), vec![3]);
        assert_eq!(choose_frames(0, 100), vec![0, 20, 40, 60, 80, 100]);
        assert!(choose_frames(4, 3).is_empty());
    }
}
