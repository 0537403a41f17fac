//! The USD writer on its own: staged, synced, dropped (a killed bake) and resumed at every frame, it
//! writes the same bytes as in one go; a writer dropped before finishing leaves nothing; the layer
//! read back by `CacheStream` gives the positions and topology written.

use clothbake_io::{CacheKind, CacheStream, Up, UsdLayerInfo, UsdWriter};
use glam::Vec3;

fn frames() -> Vec<Vec<Vec3>> {
    (0..4)
        .map(|k| {
            let t = k as f32;
            vec![
                Vec3::new(0.1 * t, 1.0 / 3.0, -0.0),
                Vec3::new(1.0, 2.5e-8 * t, f32::MAX),
                Vec3::new(-1.0, 0.2, 0.3 + t),
                Vec3::new(0.5, -0.25, 1e-30),
            ]
        })
        .collect()
}

const FACES: [[u32; 3]; 2] = [[0, 1, 2], [0, 2, 3]];

fn info() -> UsdLayerInfo {
    UsdLayerInfo {
        frame_start: 7,
        num_frames: 4,
        fps: 30.0,
        up: Up::Z,
    }
}

fn faces() -> Vec<Vec<u32>> {
    FACES.iter().map(|f| f.to_vec()).collect()
}

#[test]
fn staged_and_resumed_at_every_frame_writes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.usda");
    let mut w = UsdWriter::create(&whole, "g", 4, &faces(), info()).unwrap();
    for f in frames() {
        w.write_frame(&f).unwrap();
    }
    w.finish().unwrap();
    let want = std::fs::read(&whole).unwrap();

    for cut in 0..=4 {
        let out = dir.path().join(format!("cut{cut}"));
        std::fs::create_dir_all(&out).unwrap();
        let (path, temp, ext) = (
            out.join("g.usda"),
            out.join("g.usda.partial"),
            out.join("g.usda.extent.partial"),
        );
        let mut w = UsdWriter::create_staged(&path, &temp, &ext, "g", 4, &faces(), info()).unwrap();
        for f in &frames()[..cut] {
            w.write_frame(f).unwrap();
        }
        let (len, ext_len) = w.sync().unwrap();
        // Written after the sync and then lost with the process: cut back on resume.
        if cut < 4 {
            w.write_frame(&frames()[cut]).unwrap();
        }
        drop(w);
        assert!(!path.exists(), "nothing under the final name before finish");
        let mut w =
            UsdWriter::resume_staged(&path, &temp, &ext, 4, info(), cut, len, ext_len).unwrap();
        for f in &frames()[cut..] {
            w.write_frame(f).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            want,
            "resumed after {cut} frames"
        );
        assert!(!temp.exists() && !ext.exists(), "staged files removed");
    }
}

#[test]
fn a_damaged_staged_extent_file_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (path, temp, ext) = (
        dir.path().join("g.usda"),
        dir.path().join("g.usda.partial"),
        dir.path().join("g.usda.extent.partial"),
    );
    let mut w = UsdWriter::create_staged(&path, &temp, &ext, "g", 4, &faces(), info()).unwrap();
    w.write_frame(&frames()[0]).unwrap();
    w.write_frame(&frames()[1]).unwrap();
    let (len, ext_len) = w.sync().unwrap();
    drop(w);
    std::fs::write(&ext, b"short").unwrap();
    let e = UsdWriter::resume_staged(&path, &temp, &ext, 4, info(), 2, len, ext_len)
        .err()
        .expect("refused");
    let msg = e.to_string();
    assert!(
        msg.contains("g.usda.extent.partial") && msg.contains("damaged"),
        "{msg}"
    );
}

#[test]
fn unfinished_writer_leaves_nothing_and_the_layer_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.usda");
    let mut w = UsdWriter::create(&path, "g", 4, &faces(), info()).unwrap();
    w.write_frame(&frames()[0]).unwrap();
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    let mut w = UsdWriter::create(&path, "g", 4, &faces(), info()).unwrap();
    for f in frames() {
        w.write_frame(&f).unwrap();
    }
    assert!(
        w.write_frame(&frames()[0]).is_err(),
        "a fifth frame of four"
    );
    w.finish().unwrap();
    let mut r = CacheStream::open(&path).unwrap();
    assert_eq!(r.kind, CacheKind::Usd);
    assert_eq!((r.num_points, r.num_frames, r.frame_start), (4, 4, 7.0));
    assert_eq!((r.fps, r.up), (Some(30.0), Some(Up::Z)));
    assert_eq!(r.faces.clone().unwrap(), faces());
    let mut buf = Vec::new();
    for f in frames() {
        r.next_frame(&mut buf).unwrap();
        let bits = |v: &[Vec3]| -> Vec<u32> {
            v.iter()
                .flat_map(|p| p.to_array())
                .map(f32::to_bits)
                .collect()
        };
        assert_eq!(bits(&buf), bits(&f));
    }
    // Out-of-range face indices are refused before anything is written.
    let e = UsdWriter::create(&dir.path().join("h.usda"), "h", 3, &faces(), info())
        .err()
        .expect("refused");
    assert!(e.to_string().contains("faceVertexIndices"), "{e}");
    assert!(!dir.path().join("h.usda").exists());
}
