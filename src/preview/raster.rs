//! Software rasterisation of one contact-sheet tile: filled triangles with a z-buffer, depth-tested
//! lines (drawn dimmer where the cloth hides them), text.

use glam::Vec2;

/// A projected point: pixel position and depth (larger = farther).
pub type Projected = (Vec2, f32);

/// An RGB tile with a depth buffer.
pub struct Tile {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<[u8; 3]>,
    depth: Vec<f32>,
}

impl Tile {
    /// A tile filled with a vertical gradient from `top` to `bottom`.
    pub fn new(width: u32, height: u32, top: [u8; 3], bottom: [u8; 3]) -> Self {
        let mut rgb = Vec::with_capacity((width * height) as usize);
        for y in 0..height {
            let t = y as f32 / height.max(1) as f32;
            let c = mix(top, bottom, t);
            rgb.extend(std::iter::repeat(c).take(width as usize));
        }
        Self {
            width,
            height,
            rgb,
            depth: vec![f32::INFINITY; (width * height) as usize],
        }
    }

    fn index(&self, x: i32, y: i32) -> Option<usize> {
        (x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height)
            .then(|| (y as u32 * self.width + x as u32) as usize)
    }

    /// Fills a triangle with one colour, keeping the nearest surface per pixel (pixel centres
    /// inside the triangle, depth interpolated linearly in screen space: exact for orthographic
    /// views).
    pub fn fill_triangle(&mut self, a: Projected, b: Projected, c: Projected, color: [u8; 3]) {
        let (pa, pb, pc) = (a.0, b.0, c.0);
        let area = (pb - pa).perp_dot(pc - pa);
        if area.abs() < 1e-12 || !area.is_finite() {
            return;
        }
        let lo = pa.min(pb).min(pc).floor().max(Vec2::ZERO);
        let hi = pa
            .max(pb)
            .max(pc)
            .ceil()
            .min(Vec2::new(self.width as f32 - 1.0, self.height as f32 - 1.0));
        if lo.x > hi.x || lo.y > hi.y {
            return;
        }
        let inv = 1.0 / area;
        for y in lo.y as i32..=hi.y as i32 {
            for x in lo.x as i32..=hi.x as i32 {
                let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                let w0 = (pc - pb).perp_dot(p - pb) * inv;
                let w1 = (pa - pc).perp_dot(p - pc) * inv;
                let w2 = 1.0 - w0 - w1;
                if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                    continue;
                }
                let z = w0 * a.1 + w1 * b.1 + w2 * c.1;
                if let Some(i) = self.index(x, y) {
                    if z < self.depth[i] {
                        self.depth[i] = z;
                        self.rgb[i] = color;
                    }
                }
            }
        }
    }

    /// Draws a one-pixel line: `color` where it is in front of the surfaces drawn so far (within
    /// `slack` m), a blend of `color` into the surface (`hidden` weight) where they hide it. Lines do
    /// not write depth.
    pub fn line(&mut self, a: Projected, b: Projected, color: [u8; 3], hidden: f32, slack: f32) {
        let d = b.0 - a.0;
        let steps = d.abs().max_element().ceil().clamp(1.0, 8192.0) as i32;
        for s in 0..=steps {
            let t = s as f32 / steps as f32;
            let p = a.0 + d * t;
            let z = a.1 + (b.1 - a.1) * t;
            if let Some(i) = self.index(p.x.floor() as i32, p.y.floor() as i32) {
                self.rgb[i] = if z <= self.depth[i] + slack {
                    color
                } else {
                    mix(self.rgb[i], color, hidden)
                };
            }
        }
    }

    /// A circle outline of `radius` pixels at depth `z` (see [`Tile::line`]).
    pub fn circle(&mut self, c: Projected, radius: f32, color: [u8; 3], hidden: f32, slack: f32) {
        let n = ((radius * 0.8) as usize).clamp(12, 96);
        let at = |k: usize| {
            let a = k as f32 / n as f32 * std::f32::consts::TAU;
            (c.0 + Vec2::new(a.cos(), a.sin()) * radius, c.1)
        };
        for k in 0..n {
            self.line(at(k), at(k + 1), color, hidden, slack);
        }
    }

    /// Text in the built-in font with its top-left corner at (x, y), over a darkened box.
    pub fn label(&mut self, text: &str, x: i32, y: i32, scale: u32, color: [u8; 3]) {
        let (w, h) = (
            super::font::text_width(text, scale) as i32,
            7 * scale as i32,
        );
        let pad = scale as i32 * 2;
        for yy in y - pad..y + h + pad {
            for xx in x - pad..x + w + pad - scale as i32 {
                if let Some(i) = self.index(xx, yy) {
                    self.rgb[i] = mix(self.rgb[i], [0, 0, 0], 0.55);
                }
            }
        }
        super::font::draw_text(text, x, y, scale, |px, py| {
            if let Some(i) = self.index(px, py) {
                self.rgb[i] = color;
            }
        });
    }
}

/// Linear blend `a·(1 − t) + b·t` per channel.
pub fn mix(a: [u8; 3], b: [u8; 3], t: f32) -> [u8; 3] {
    let t = t.clamp(0.0, 1.0);
    [0, 1, 2].map(|k| (a[k] as f32 * (1.0 - t) + b[k] as f32 * t).round() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearer_triangle_wins_and_lines_dim_behind_it() {
        let mut t = Tile::new(20, 20, [0; 3], [0; 3]);
        let far = 5.0;
        let near = 1.0;
        let sq = |z: f32| {
            [
                (Vec2::new(0.0, 0.0), z),
                (Vec2::new(20.0, 0.0), z),
                (Vec2::new(0.0, 20.0), z),
            ]
        };
        let [a, b, c] = sq(near);
        t.fill_triangle(a, b, c, [200, 0, 0]);
        let [a, b, c] = sq(far);
        t.fill_triangle(a, b, c, [0, 200, 0]);
        assert_eq!(t.rgb[(2 * 20 + 2) as usize], [200, 0, 0]);
        // Outside the triangle (lower right corner) nothing was drawn.
        assert_eq!(t.rgb[(19 * 20 + 19) as usize], [0, 0, 0]);
        // A line behind the triangle is blended at 50 %, in front of it drawn as is.
        t.line(
            (Vec2::new(0.5, 2.5), 3.0),
            (Vec2::new(4.5, 2.5), 3.0),
            [0, 0, 100],
            0.5,
            0.0,
        );
        assert_eq!(t.rgb[(2 * 20 + 2) as usize], [100, 0, 50]);
        t.line(
            (Vec2::new(0.5, 4.5), 0.5),
            (Vec2::new(4.5, 4.5), 0.5),
            [0, 0, 100],
            0.5,
            0.0,
        );
        assert_eq!(t.rgb[(4 * 20 + 2) as usize], [0, 0, 100]);
    }
}
