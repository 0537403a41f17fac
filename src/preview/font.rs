//! A tiny built-in 5×7 bitmap font (digits, a few capitals and punctuation) for the contact
//! sheet's labels: no font file to ship or load.

/// Glyph rows, top to bottom; bit 4 is the leftmost of the 5 columns.
fn glyph(c: char) -> Option<[u8; 7]> {
    Some(match c {
        '0' => [0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e],
        '1' => [0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e],
        '2' => [0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f],
        '3' => [0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e],
        '4' => [0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02],
        '5' => [0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e],
        '6' => [0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e],
        '7' => [0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e],
        '9' => [0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c],
        'A' => [0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11],
        'E' => [0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f],
        'F' => [0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10],
        'M' => [0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11],
        'R' => [0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11],
        '-' => [0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c],
        ' ' => [0; 7],
        _ => return None,
    })
}

/// Width of `text` in pixels at `scale` (6 columns per character, one of them spacing).
pub fn text_width(text: &str, scale: u32) -> u32 {
    text.chars().count() as u32 * 6 * scale
}

/// Calls `plot(x, y)` for every lit pixel of `text` with its top-left corner at (x, y), each font
/// pixel a `scale`×`scale` block. Characters without a glyph are drawn as a filled box.
pub fn draw_text(text: &str, x: i32, y: i32, scale: u32, mut plot: impl FnMut(i32, i32)) {
    let s = scale as i32;
    for (i, c) in text.chars().enumerate() {
        let rows = glyph(c).unwrap_or([0x1f; 7]);
        let x0 = x + i as i32 * 6 * s;
        for (r, bits) in rows.iter().enumerate() {
            for col in 0..5 {
                if bits & (0x10 >> col) != 0 {
                    for dy in 0..s {
                        for dx in 0..s {
                            plot(x0 + col * s + dx, y + r as i32 * s + dy);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_distinct_and_scaled() {
        let mut seen = Vec::new();
        for c in "0123456789".chars() {
            let g = glyph(c).expect("digit glyph");
            assert!(!seen.contains(&g), "{c} duplicates another digit");
            seen.push(g);
        }
        let mut n = 0;
        draw_text("1", 0, 0, 2, |x, y| {
            assert!((0..10).contains(&x) && (0..14).contains(&y));
            n += 1;
        });
        // '1' has 1+2+1+1+1+1+3 = 10 lit font pixels, 4 device pixels each at scale 2.
        assert_eq!(n, 40);
        assert_eq!(text_width("FRAME 12", 2), 96);
    }
}
