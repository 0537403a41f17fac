//! Scene frames ↔ animation time.

/// Maps (fractional) scene frames to animation time: `t = frame / fps + time_offset` seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    /// Frames per second.
    pub fps: f32,
    /// Seconds added to `frame / fps`.
    pub time_offset: f32,
}

impl Clock {
    /// Animation time (s) of a scene frame (fractions allowed, e.g. substeps).
    pub fn time(&self, frame: f32) -> f32 {
        (frame as f64 / self.fps as f64 + self.time_offset as f64) as f32
    }

    /// The first frame whose time is at or after `time` (rounded to the nearest frame within 1e-3).
    pub fn frame_at_or_after(&self, time: f32) -> i32 {
        let f = (time as f64 - self.time_offset as f64) * self.fps as f64;
        let r = f.round();
        if (f - r).abs() < 1e-3 {
            r as i32
        } else {
            f.ceil() as i32
        }
    }
}
