//! OBJ garments (obj-rs raw parser): vertices keep the order of the `v` lines, so the cache
//! matches Blender's mesh (its OBJ exporter keeps the mesh's vertex order).

use std::io::BufReader;
use std::path::Path;

use glam::{Vec2, Vec3};
use obj::raw::object::Polygon;

use crate::error::{IoError, Result};
use crate::source_mesh::{triangulate, SourceMesh};

/// Reads an OBJ file: all `v` lines in order, all `f` polygons (of every object/group).
/// Errors name the file and the element (`v[12]`, `f[3]`).
pub fn read_obj(path: &Path) -> Result<SourceMesh> {
    let bytes = std::fs::read(path).map_err(|e| IoError::io(path, e))?;
    let raw = obj::raw::parse_obj(BufReader::new(&bytes[..])).map_err(|e| {
        let (field, what) = match first_bad_line(&bytes) {
            Some((n, line)) => (format!("line {n}"), format!("\"{line}\": ")),
            None => (String::new(), String::new()),
        };
        IoError::parse(path, field, format!("{what}{e}"))
    })?;
    let positions: Vec<Vec3> = raw
        .positions
        .iter()
        .map(|p| Vec3::new(p.0, p.1, p.2))
        .collect();
    for (i, p) in positions.iter().enumerate() {
        if !p.is_finite() {
            return Err(IoError::invalid(
                path,
                format!("v[{i}]"),
                format!("non-finite coordinate {p}"),
            ));
        }
    }
    let tex: Vec<Vec2> = raw.tex_coords.iter().map(|t| Vec2::new(t.0, t.1)).collect();
    let mut faces = Vec::with_capacity(raw.polygons.len());
    let mut triangles = Vec::new();
    let mut tri_uvs = Some(Vec::new());
    for (fi, poly) in raw.polygons.iter().enumerate() {
        let (idx, uv): (Vec<usize>, Option<Vec<usize>>) = match poly {
            Polygon::P(v) => (v.clone(), None),
            Polygon::PT(v) => (
                v.iter().map(|x| x.0).collect(),
                Some(v.iter().map(|x| x.1).collect()),
            ),
            Polygon::PN(v) => (v.iter().map(|x| x.0).collect(), None),
            Polygon::PTN(v) => (
                v.iter().map(|x| x.0).collect(),
                Some(v.iter().map(|x| x.1).collect()),
            ),
        };
        if idx.len() < 3 {
            return Err(IoError::invalid(
                path,
                format!("f[{fi}]"),
                format!("has {} vertices, needs 3 or more", idx.len()),
            ));
        }
        for (k, &a) in idx.iter().enumerate() {
            if idx[..k].contains(&a) {
                return Err(IoError::invalid(
                    path,
                    format!("f[{fi}]"),
                    format!("uses vertex {} twice", a + 1),
                ));
            }
        }
        let face: Vec<u32> = idx.iter().map(|&i| i as u32).collect();
        let corners: Vec<Vec3> = face.iter().map(|&i| positions[i as usize]).collect();
        for t in triangulate(&corners) {
            triangles.push([face[t[0]], face[t[1]], face[t[2]]]);
            match (&mut tri_uvs, &uv) {
                (Some(out), Some(uv)) => out.push([tex[uv[t[0]]], tex[uv[t[1]]], tex[uv[t[2]]]]),
                _ => tri_uvs = None,
            }
        }
        faces.push(face);
    }
    if triangles.is_empty() {
        return Err(IoError::invalid(path, "f", "the mesh has no faces"));
    }
    if tri_uvs
        .as_ref()
        .is_some_and(|u| u.iter().flatten().any(|t| !t.is_finite()))
    {
        return Err(IoError::invalid(
            path,
            "vt",
            "non-finite texture coordinate",
        ));
    }
    Ok(SourceMesh {
        positions,
        faces,
        triangles,
        tri_uvs,
    })
}

/// The first line (1-based) and its text at which obj-rs fails: its errors do not say where, and
/// each statement is checked against the lines before it only (indices refer backwards), so the
/// shortest failing prefix ends at the culprit. Bisection: about log2(lines) parses, on the
/// error path only.
fn first_bad_line(bytes: &[u8]) -> Option<(usize, String)> {
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let ends: Vec<usize> = lines
        .iter()
        .scan(0, |at, l| {
            *at += l.len();
            Some(*at)
        })
        .collect();
    let fails = |k: usize| {
        let end = if k == 0 { 0 } else { ends[k - 1] };
        obj::raw::parse_obj(BufReader::new(&bytes[..end])).is_err()
    };
    if lines.is_empty() || !fails(lines.len()) || fails(0) {
        return None;
    }
    // fails(lo) is false, fails(hi) is true.
    let (mut lo, mut hi) = (0, lines.len());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fails(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let text = String::from_utf8_lossy(lines[hi - 1]);
    let text = text.trim_end();
    let short: String = text.chars().take(60).collect();
    let short = if short.len() < text.len() {
        format!("{short}...")
    } else {
        short
    };
    Some((hi, short))
}
