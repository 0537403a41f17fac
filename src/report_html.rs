//! The bake report as one self-contained HTML page (`bake --report-html FILE.html`): a summary
//! (scene, frames, garments, time per stage) and per-frame plots drawn as inline SVG generated
//! here — substeps, CG iterations, max strain, body contacts, cloth–cloth contacts, the smallest
//! cloth-to-collider distance and the wall time per stage (stacked). No script, no stylesheet or
//! font from the network: the page opens offline in any browser.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::Result;
use crate::fs_util::write_atomic;
use crate::report::{BakeReport, FrameRecord};

/// Plot size (CSS pixels) and margins around the plotting area.
const W: f64 = 760.0;
const H: f64 = 190.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 30.0;

/// Series colours (stages use them in order).
const COLORS: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f",
];

/// One plotted series.
struct Series<'a> {
    name: &'a str,
    color: &'a str,
    values: Vec<f64>,
}

/// Writes the page for `report` to `path` (temporary file, then rename).
pub fn write(report: &BakeReport, path: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::fs_util::create_dir(parent)?;
    }
    write_atomic(path, render(report).as_bytes())
}

/// The page's HTML.
pub fn render(r: &BakeReport) -> String {
    let frames: Vec<i32> = r.frames.iter().map(|f| f.frame).collect();
    let col = |f: fn(&FrameRecord) -> f64| r.frames.iter().map(f).collect::<Vec<f64>>();
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>clothbake bake report</h1>\n<table class=\"kv\">\
         <tr><th>scene</th><td>{}</td></tr>\
         <tr><th>frames</th><td>{}..{} at {} fps ({} pre-roll)</td></tr>\
         <tr><th>threads</th><td>{}</td></tr>\
         <tr><th>total</th><td>{:.2} s ({:.2} s simulating frames)</td></tr>\
         <tr><th>clothbake</th><td>{}</td></tr></table>\n",
        esc(&r.scene),
        r.frame_start,
        r.frame_end,
        r.fps,
        r.preroll_frames,
        r.threads,
        r.total_seconds,
        r.frame_loop_seconds,
        esc(r.clothbake_version),
    );
    body.push_str(
        "<h2>Garments</h2>\n<table><tr><th>name</th><th>vertices</th><th>simulated</th>\
         <th>triangles</th><th>pinned</th></tr>",
    );
    for g in &r.garments {
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&g.name),
            g.vertices,
            g.simulated_vertices,
            g.triangles,
            g.pinned
        );
    }
    body.push_str("</table>\n");
    let warn: Vec<String> = r
        .frames
        .iter()
        .filter(|f| f.cg_failures > 0 || f.unresolved > 0)
        .map(|f| {
            format!(
                "frame {}: {} CG failure(s), {} unresolved cloth–cloth collision(s)",
                f.frame, f.cg_failures, f.unresolved
            )
        })
        .collect();
    if !warn.is_empty() {
        let _ = write!(
            body,
            "<h2>Warnings</h2>\n<ul class=\"warn\">{}</ul>\n",
            warn.iter()
                .map(|w| format!("<li>{}</li>", esc(w)))
                .collect::<String>()
        );
    }
    body.push_str("<h2>Per frame</h2>\n");
    let plots: [(&str, &str, Vec<Series>); 6] = [
        (
            "Substeps",
            "count",
            vec![
                series("substeps", 0, col(|f| f.substeps as f64)),
                series("rejected", 2, col(|f| f.rejected_substeps as f64)),
                series(
                    "rejected: colliders",
                    5,
                    col(|f| f.rejections.strain_jump_colliders as f64),
                ),
                series(
                    "rejected: cloth–cloth",
                    6,
                    col(|f| f.rejections.strain_jump_self_collision as f64),
                ),
                series(
                    "rejected: CG failed",
                    7,
                    col(|f| f.rejections.cg_not_converged as f64),
                ),
                series(
                    "rejected: cloth–cloth work",
                    3,
                    col(|f| f.rejections.collision_work as f64),
                ),
            ],
        ),
        (
            "CG iterations",
            "count",
            vec![
                series("iterations", 0, col(|f| f.cg_iterations as f64)),
                series("failures", 2, col(|f| f.cg_failures as f64)),
            ],
        ),
        (
            "Max strain",
            "stretch strain",
            vec![series("max strain", 1, col(|f| f.max_strain as f64))],
        ),
        (
            "Body contacts",
            "count",
            vec![series("contacts", 3, col(|f| f.contacts as f64))],
        ),
        (
            "Self-contacts",
            "count",
            vec![
                series("self-contacts", 6, col(|f| f.self_contacts as f64)),
                series("unresolved", 2, col(|f| f.unresolved as f64)),
                series(
                    "intersecting pairs",
                    7,
                    col(|f| f.self_intersections.map_or(f64::NAN, |n| n as f64)),
                ),
            ],
        ),
        (
            "Smallest distance to a collider",
            "m",
            vec![series(
                "min distance",
                4,
                col(|f| f.min_distance.map_or(f64::NAN, |d| d as f64)),
            )],
        ),
    ];
    for (i, (title, unit, s)) in plots.iter().enumerate() {
        let _ = writeln!(
            body,
            "<figure id=\"plot{i}\">{}</figure>",
            line_plot(title, unit, &frames, s)
        );
    }
    let stages: Vec<Series> = r
        .stage_totals
        .entries()
        .iter()
        .enumerate()
        .map(|(k, (name, _))| Series {
            name,
            color: COLORS[k % COLORS.len()],
            values: r.frames.iter().map(|f| f.stages.entries()[k].1).collect(),
        })
        .collect();
    let _ = writeln!(
        body,
        "<figure id=\"stages\">{}</figure>",
        stacked_plot("Time per stage", "s", &frames, &stages)
    );
    body.push_str(
        "<h2>Time per stage (whole bake)</h2>\n<table><tr><th>stage</th><th>seconds</th>\
         <th>%</th></tr>",
    );
    let total = r.stage_totals.total();
    for (name, s) in r.stage_totals.entries() {
        let pct = if total > 0.0 { 100.0 * s / total } else { 0.0 };
        let _ = write!(
            body,
            "<tr><td>{name}</td><td>{s:.3}</td><td>{pct:.1}</td></tr>"
        );
    }
    body.push_str("</table>\n");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>clothbake report: {}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}\
         </body>\n</html>\n",
        esc(&r.scene)
    )
}

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;background:#fafafa}
table{border-collapse:collapse;margin:8px 0 16px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#eee}
table.kv th,table.kv td{text-align:left}
figure{margin:8px 0;background:#fff;border:1px solid #ddd;display:inline-block}
.warn{color:#a40000}
svg text{font-size:11px;fill:#333}
svg .title{font-size:13px;font-weight:bold}
svg .grid{stroke:#e4e4e4}
svg .axis{stroke:#888}
";

fn series<'a>(name: &'a str, color: usize, values: Vec<f64>) -> Series<'a> {
    Series {
        name,
        color: COLORS[color % COLORS.len()],
        values,
    }
}

/// The smallest of 1, 2, 5 × 10^k at least `x` (x > 0).
fn nice_ceil(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|v| *v >= x * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

/// Maps frames and values to the plot area.
struct Axes {
    f0: f64,
    f1: f64,
    y0: f64,
    y1: f64,
    /// Distance between value ticks (1, 2 or 5 × 10^k).
    step: f64,
}

impl Axes {
    /// Frames on x; values from min(lo, 0) to hi on y, widened to whole ticks (about 4 of them).
    fn new(frames: &[i32], lo: f64, hi: f64) -> Self {
        let f0 = frames.first().copied().unwrap_or(0) as f64;
        let f1 = frames.last().copied().unwrap_or(0) as f64;
        let (lo, hi) = (lo.min(0.0), hi.max(0.0));
        let step = nice_ceil((hi - lo) / 4.0);
        let y0 = (lo / step).floor() * step;
        let y1 = ((hi / step).ceil() * step).max(y0 + step);
        Self {
            f0,
            f1,
            y0,
            y1,
            step,
        }
    }

    fn x(&self, f: f64) -> f64 {
        let w = W - LEFT - RIGHT;
        if self.f1 > self.f0 {
            LEFT + (f - self.f0) / (self.f1 - self.f0) * w
        } else {
            LEFT + w * 0.5
        }
    }

    fn y(&self, v: f64) -> f64 {
        let h = H - TOP - BOTTOM;
        TOP + h - (v - self.y0) / (self.y1 - self.y0) * h
    }

    /// Frame of the plot: title, grid, tick labels.
    fn frame(&self, title: &str, unit: &str, out: &mut String) {
        let _ = write!(
            out,
            "<text class=\"title\" x=\"{LEFT}\" y=\"18\">{} <tspan font-weight=\"normal\">({})</tspan></text>",
            esc(title),
            esc(unit)
        );
        let ticks = ((self.y1 - self.y0) / self.step).round() as usize;
        for k in 0..=ticks {
            let v = self.y0 + self.step * k as f64;
            let y = self.y(v);
            let _ = write!(
                out,
                "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                W - RIGHT,
                LEFT - 6.0,
                y + 4.0,
                fmt_num(v)
            );
        }
        let span = (self.f1 - self.f0).max(0.0);
        let step = nice_ceil((span / 8.0).max(1.0));
        let mut f = (self.f0 / step).ceil() * step;
        while f <= self.f1 + 1e-9 {
            let x = self.x(f);
            let _ = write!(
                out,
                "<line class=\"axis\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{f}</text>",
                H - BOTTOM,
                H - BOTTOM + 4.0,
                H - BOTTOM + 16.0
            );
            f += step;
        }
        let _ = write!(
            out,
            "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">frame</text>",
            W - RIGHT,
            H - BOTTOM,
            H - BOTTOM,
            W - RIGHT,
            H - 2.0
        );
    }
}

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{}", (v * 100.0).round() / 100.0)
    } else {
        format!("{v:.3}").trim_end_matches('0').to_string()
    }
}

fn legend(series: &[Series], out: &mut String) {
    for (k, s) in series.iter().enumerate() {
        let y = TOP + 6.0 + 16.0 * k as f64;
        let x = W - RIGHT + 12.0;
        let _ = write!(
            out,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            y - 9.0,
            s.color,
            x + 16.0,
            y,
            esc(s.name)
        );
    }
}

fn svg_open(title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
         viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\">",
        esc(title)
    )
}

/// Lines per series; non-finite values (not measured) break the line.
fn line_plot(title: &str, unit: &str, frames: &[i32], series: &[Series]) -> String {
    let finite = series
        .iter()
        .flat_map(|s| &s.values)
        .filter(|v| v.is_finite());
    let lo = finite.clone().fold(0.0f64, |a, &b| a.min(b));
    let hi = finite.fold(0.0f64, |a, &b| a.max(b));
    let ax = Axes::new(frames, lo, hi);
    let mut out = svg_open(title);
    ax.frame(title, unit, &mut out);
    for s in series {
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (f, v) in frames.iter().zip(&s.values) {
            if v.is_finite() {
                if let Some(run) = runs.last_mut() {
                    run.push((ax.x(*f as f64), ax.y(*v)));
                }
            } else if runs.last().is_some_and(|r| !r.is_empty()) {
                runs.push(Vec::new());
            }
        }
        for run in runs.iter().filter(|r| !r.is_empty()) {
            let pts: Vec<String> = run.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = write!(
                out,
                "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" points=\"{}\"/>",
                s.color,
                pts.join(" ")
            );
            if run.len() == 1 {
                let _ = write!(
                    out,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{}\"/>",
                    run[0].0, run[0].1, s.color
                );
            }
        }
    }
    legend(series, &mut out);
    out.push_str("</svg>");
    out
}

/// Series stacked on each other as filled bands (per-frame totals on top).
fn stacked_plot(title: &str, unit: &str, frames: &[i32], series: &[Series]) -> String {
    let n = frames.len();
    let mut below = vec![0.0f64; n];
    let totals: Vec<f64> = (0..n)
        .map(|i| {
            series
                .iter()
                .map(|s| {
                    s.values
                        .get(i)
                        .copied()
                        .filter(|v| v.is_finite())
                        .unwrap_or(0.0)
                })
                .sum()
        })
        .collect();
    let hi = totals.iter().fold(0.0f64, |a, &b| a.max(b));
    let ax = Axes::new(frames, 0.0, hi);
    let mut out = svg_open(title);
    ax.frame(title, unit, &mut out);
    for s in series {
        let above: Vec<f64> = (0..n)
            .map(|i| {
                below[i]
                    + s.values
                        .get(i)
                        .copied()
                        .filter(|v| v.is_finite())
                        .unwrap_or(0.0)
            })
            .collect();
        let mut pts: Vec<String> = (0..n)
            .map(|i| format!("{:.1},{:.1}", ax.x(frames[i] as f64), ax.y(above[i])))
            .collect();
        pts.extend(
            (0..n)
                .rev()
                .map(|i| format!("{:.1},{:.1}", ax.x(frames[i] as f64), ax.y(below[i]))),
        );
        if n > 0 {
            let _ = write!(
                out,
                "<polygon fill=\"{}\" stroke=\"{}\" stroke-width=\"0.5\" points=\"{}\"/>",
                s.color,
                s.color,
                pts.join(" ")
            );
        }
        below = above;
    }
    legend(series, &mut out);
    out.push_str("</svg>");
    out
}

/// Escapes text for HTML content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ceilings_and_axes() {
        assert_eq!(nice_ceil(0.0), 1.0);
        assert_eq!(nice_ceil(3.0), 5.0);
        assert_eq!(nice_ceil(5.0), 5.0);
        assert_eq!(nice_ceil(51.0), 100.0);
        assert!((nice_ceil(0.012) - 0.02).abs() < 1e-12);
        let ax = Axes::new(&[1, 11], 0.0, 7.0);
        assert_eq!((ax.y0, ax.y1, ax.step), (0.0, 8.0, 2.0));
        assert_eq!(ax.x(1.0), LEFT);
        assert_eq!(ax.x(11.0), W - RIGHT);
        assert_eq!(ax.y(0.0), H - BOTTOM);
        assert_eq!(ax.y(8.0), TOP);
        let ax = Axes::new(&[1, 48], 0.0, 2100.0);
        assert_eq!((ax.y0, ax.y1, ax.step), (0.0, 3000.0, 1000.0));
        // A negative distance (penetration) gets a negative part of the axis.
        let ax = Axes::new(&[1, 2], -0.003, 0.02);
        assert!(
            (ax.y0 + 0.01).abs() < 1e-12 && (ax.y1 - 0.02).abs() < 1e-12,
            "{} {}",
            ax.y0,
            ax.y1
        );
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }

    #[test]
    fn gaps_split_lines() {
        let s = [series("x", 0, vec![1.0, f64::NAN, 2.0, 3.0])];
        let svg = line_plot("t", "u", &[1, 2, 3, 4], &s);
        assert_eq!(svg.matches("<polyline").count(), 2);
        // The lone point before the gap is drawn as a dot.
        assert_eq!(svg.matches("<circle").count(), 1);
    }
}
