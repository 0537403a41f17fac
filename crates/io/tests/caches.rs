//! PC2 / MDD / OBJ-sequence writers: exact bytes against the layouts in DESIGN.md, readers,
//! streaming and temp-file behaviour.

use std::path::Path;

use clothbake_io::{
    read_mdd, read_pc2, CacheStream, CacheTiming, Format, GarmentCacheWriter, MddWriter,
    ObjSeqWriter, Pc2Writer, Up,
};
use glam::Vec3;

fn frames() -> Vec<Vec<Vec3>> {
    vec![
        vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(-0.5, 0.25, 4.0)],
        vec![Vec3::new(1.5, 2.5, 3.5), Vec3::new(-1.0, 0.0, 1e-3)],
    ]
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn pc2_bytes_match_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cloth.pc2");
    let mut w = Pc2Writer::create(&path, 2, 1.0, 1.0).unwrap();
    for f in frames() {
        w.write_frame(&f).unwrap();
    }
    // Not visible under its final name before finish().
    assert!(!path.exists());
    w.finish().unwrap();
    let mut want: Vec<u8> = b"POINTCACHE2\0".to_vec();
    want.extend(1i32.to_le_bytes());
    want.extend(2i32.to_le_bytes());
    want.extend(1.0f32.to_le_bytes());
    want.extend(1.0f32.to_le_bytes());
    want.extend(2i32.to_le_bytes());
    for f in frames() {
        for p in f {
            for c in [p.x, p.y, p.z] {
                want.extend(c.to_le_bytes());
            }
        }
    }
    let got = std::fs::read(&path).unwrap();
    assert_eq!(got, want);
    assert_eq!(got.len(), 32 + 2 * 2 * 12);
    // A literal check of the first header bytes, independent of to_le_bytes.
    assert_eq!(&got[12..20], &[1, 0, 0, 0, 2, 0, 0, 0]);
    assert_eq!(&got[20..24], &[0x00, 0x00, 0x80, 0x3f]);
    assert_eq!(files_in(dir.path()), vec!["cloth.pc2"]);

    let back = read_pc2(&path).unwrap();
    assert_eq!(back.start_frame, 1.0);
    assert_eq!(back.sample_rate, 1.0);
    assert_eq!(back.num_points, 2);
    assert_eq!(back.frames, frames());
}

#[test]
fn mdd_bytes_match_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cloth.mdd");
    let times = MddWriter::scene_times(1, 2, 24.0);
    assert_eq!(times, vec![1.0 / 24.0, 2.0 / 24.0]);
    let mut w = MddWriter::create(&path, 2, &times).unwrap();
    for f in frames() {
        w.write_frame(&f).unwrap();
    }
    assert!(!path.exists());
    w.finish().unwrap();
    let mut want: Vec<u8> = Vec::new();
    want.extend(2i32.to_be_bytes());
    want.extend(2i32.to_be_bytes());
    want.extend((1.0f32 / 24.0).to_be_bytes());
    want.extend((2.0f32 / 24.0).to_be_bytes());
    for f in frames() {
        for p in f {
            for c in [p.x, p.y, p.z] {
                want.extend(c.to_be_bytes());
            }
        }
    }
    let got = std::fs::read(&path).unwrap();
    assert_eq!(got, want);
    assert_eq!(&got[0..8], &[0, 0, 0, 2, 0, 0, 0, 2]);
    // 1.0 big-endian is 3f 80 00 00: the first coordinate of frame 0.
    assert_eq!(&got[16..20], &[0x3f, 0x80, 0x00, 0x00]);
    let back = read_mdd(&path).unwrap();
    assert_eq!(back.times, times);
    assert_eq!(back.frames, frames());
}

#[test]
fn mdd_refuses_to_finish_short() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.mdd");
    let mut w = MddWriter::create(&path, 2, &[0.0, 1.0]).unwrap();
    w.write_frame(&frames()[0]).unwrap();
    let e = w.finish().unwrap_err().to_string();
    assert!(
        e.contains("short.mdd: numFrames: 1 frames written, 2 announced"),
        "{e}"
    );
    assert!(
        files_in(dir.path()).is_empty(),
        "{:?}",
        files_in(dir.path())
    );
}

#[test]
fn dropped_writer_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut w = Pc2Writer::create(&dir.path().join("x.pc2"), 2, 1.0, 1.0).unwrap();
        w.write_frame(&frames()[0]).unwrap();
        assert_eq!(files_in(dir.path()).len(), 1); // the temp file
    }
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn aborted_garment_writer_leaves_no_file_and_keeps_an_older_bake() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // A complete frame 1 of an earlier bake must survive an aborted new one.
    std::fs::write(out.join("g.0001.obj"), "old").unwrap();
    {
        let _w = all_formats_writer(&out, 1);
        // Two OBJ frames done, all still temporary (hidden `.g.*.part-<pid>` names).
        let names = files_in(&out);
        assert_eq!(names.len(), 5, "{names:?}");
        assert_eq!(names.iter().filter(|n| n.starts_with(".g.")).count(), 4);
    } // dropped without finish: the bake was aborted
    assert_eq!(files_in(&out), vec!["g.0001.obj"]);
    assert_eq!(
        std::fs::read_to_string(out.join("g.0001.obj")).unwrap(),
        "old"
    );
}

#[test]
fn wrong_point_count_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = Pc2Writer::create(&dir.path().join("x.pc2"), 3, 1.0, 1.0).unwrap();
    let e = w.write_frame(&frames()[0]).unwrap_err().to_string();
    assert!(
        e.contains("x.pc2: sample 0: 2 points given, the cache has 3"),
        "{e}"
    );
}

#[test]
fn readers_reject_truncated_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pc2");
    let mut w = Pc2Writer::create(&path, 2, 1.0, 1.0).unwrap();
    w.write_frame(&frames()[0]).unwrap();
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
    let e = read_pc2(&path).unwrap_err().to_string();
    assert!(
        e.contains("t.pc2: data: 52 bytes, but 1 samples of 2 points need 56"),
        "{e}"
    );
    std::fs::write(&path, b"POINTCACHE").unwrap();
    assert!(read_pc2(&path)
        .unwrap_err()
        .to_string()
        .contains("truncated"));
    let m = dir.path().join("t.mdd");
    std::fs::write(&m, [0u8, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0]).unwrap();
    assert!(read_mdd(&m)
        .unwrap_err()
        .to_string()
        .contains("t.mdd: data: 12 bytes, but 1 frames of 1 points need 24"));
}

/// Headers claiming 2³¹ − 1 samples of 2³¹ − 1 points: their size overflows u64, which the
/// readers (whole file and streaming) report instead of wrapping (or panicking in a debug build).
#[test]
fn readers_reject_counts_whose_size_overflows() {
    let dir = tempfile::tempdir().unwrap();
    let max = i32::MAX.to_le_bytes();
    let mut pc2 = b"POINTCACHE2\0".to_vec();
    pc2.extend_from_slice(&1i32.to_le_bytes());
    pc2.extend_from_slice(&max);
    pc2.extend_from_slice(&[0u8; 8]);
    pc2.extend_from_slice(&max);
    pc2.extend_from_slice(&[0u8; 12]);
    let mut mdd = i32::MAX.to_be_bytes().to_vec();
    mdd.extend_from_slice(&i32::MAX.to_be_bytes());
    mdd.extend_from_slice(&[0u8; 16]);
    for (name, bytes, what) in [
        ("big.pc2", pc2, "2147483647 samples of 2147483647 points"),
        ("big.mdd", mdd, "2147483647 frames of 2147483647 points"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let want = format!(
            "{name}: data: {} bytes, but {what} need more than 2^64",
            bytes.len()
        );
        let whole = if name.ends_with("pc2") {
            read_pc2(&path).map(|_| ())
        } else {
            read_mdd(&path).map(|_| ())
        };
        let e = whole.unwrap_err().to_string();
        assert!(e.contains(&want), "{e}");
        let e = CacheStream::open(&path)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&want), "{e}");
    }
}

#[test]
fn obj_sequence_keeps_vertex_order_and_faces() {
    let dir = tempfile::tempdir().unwrap();
    let faces = vec![vec![0, 1, 2, 3]];
    let mut w = ObjSeqWriter::new(dir.path(), "flag", 4, &faces);
    let p = vec![
        Vec3::new(0.1, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(1.0, 1.0, 0.0),
        Vec3::new(0.0, 1.0, 0.3),
    ];
    w.write_frame(7, &p).unwrap();
    let files = w.finish().unwrap();
    assert_eq!(files, vec![dir.path().join("flag.0007.obj")]);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let v: Vec<&str> = text.lines().filter(|l| l.starts_with("v ")).collect();
    assert_eq!(v, vec!["v 0.1 0 0", "v 1 0 0", "v 1 1 0", "v 0 1 0.3"]);
    assert!(text.lines().any(|l| l == "f 1 2 3 4"));
}

/// Garment "g" (2 points) in PC2, MDD and OBJ from `frame_start` at 25 fps, with both of
/// `frames()` written.
fn all_formats_writer(out: &Path, frame_start: i32) -> GarmentCacheWriter {
    let timing = CacheTiming {
        frame_start,
        num_frames: 2,
        fps: 25.0,
    };
    let formats = [Format::Pc2, Format::Mdd, Format::Obj];
    let mut w =
        GarmentCacheWriter::create(out, "g", &formats, 2, &[vec![0, 1, 0]], timing, Up::Y).unwrap();
    for f in frames() {
        w.write_frame(&f).unwrap();
    }
    w
}

#[test]
fn garment_writer_streams_all_formats() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let paths = all_formats_writer(&out, 3).finish().unwrap();
    assert_eq!(
        paths,
        vec![
            out.join("g.pc2"),
            out.join("g.mdd"),
            out.join("g.0003.obj"),
            out.join("g.0004.obj")
        ]
    );
    assert_eq!(read_pc2(&out.join("g.pc2")).unwrap().start_frame, 3.0);
    assert_eq!(
        read_mdd(&out.join("g.mdd")).unwrap().times,
        vec![3.0 / 25.0, 4.0 / 25.0]
    );
    assert_eq!(
        files_in(&out),
        vec!["g.0003.obj", "g.0004.obj", "g.mdd", "g.pc2"]
    );
}
