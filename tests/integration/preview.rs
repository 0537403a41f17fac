//! Review without a DCC: `bake --preview FILE.png` (a contact sheet read back with the `image`
//! crate), `bake --report-html FILE.html` (loaded in a real headless Chromium: no console errors, a
//! screenshot that shows the plots) and `batch --preview` (both per shot).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use image::RgbImage;

use crate::harness::Dir;

const TILE: u32 = 320;
const PROXY: [u8; 3] = [150, 226, 255];
const TEXT: [u8; 3] = [250, 250, 250];

fn read_png(path: &Path) -> RgbImage {
    image::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgb8()
}

/// Cloth is drawn in warm garment colours (red above blue); background, grid and proxy outlines
/// are grey or blue (blue at least red).
fn is_cloth(p: [u8; 3]) -> bool {
    p[0] as i32 > p[2] as i32 + 12 && p[0] >= p[1]
}

/// What one tile of the sheet shows: cloth pixels, proxy-outline pixels, label pixel positions.
type TileCounts = (usize, usize, Vec<(u32, u32)>);

fn tiles(img: &RgbImage) -> Vec<TileCounts> {
    let mut out = Vec::new();
    for ty in 0..img.height() / TILE {
        for tx in 0..img.width() / TILE {
            let (mut cloth, mut proxy, mut label) = (0, 0, Vec::new());
            for y in 0..TILE {
                for x in 0..TILE {
                    let p = img.get_pixel(tx * TILE + x, ty * TILE + y).0;
                    cloth += is_cloth(p) as usize;
                    proxy += (p == PROXY) as usize;
                    if y < 26 && p == TEXT {
                        label.push((x, y));
                    }
                }
            }
            out.push((cloth, proxy, label));
        }
    }
    out
}

#[test]
fn contact_sheet_of_a_character_bake_shows_cloth_proxies_and_frame_numbers() {
    let d = Dir::new();
    let scene = d.sample("skirt-walk");
    let r = d.ok(&["bake", &scene, "-o", "out", "--preview", "review/sheet.png"]);
    assert!(
        r.stdout.contains("preview: review/sheet.png (rendered in "),
        "{}",
        r.stdout
    );
    let img = read_png(&d.path("review/sheet.png"));
    // 48 frames: 6 tiles of 320×320, 3 per row.
    assert_eq!(img.dimensions(), (960, 640));
    let colours: HashSet<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    assert!(colours.len() > 200, "{} distinct colours", colours.len());
    let t = tiles(&img);
    assert_eq!(t.len(), 6);
    for (k, (cloth, proxy, label)) in t.iter().enumerate() {
        // The skirt covers a good part of every tile; the figure's capsules are outlined.
        assert!(*cloth > 8000, "tile {k}: {cloth} cloth pixels");
        assert!(*proxy > 300, "tile {k}: {proxy} proxy-outline pixels");
        assert!(label.len() > 150, "tile {k}: {} label pixels", label.len());
    }
    // Frames 1, 10, 20, 29, 39, 48: every label differs from the others.
    for i in 0..6 {
        for j in i + 1..6 {
            assert_ne!(t[i].2, t[j].2, "tiles {i} and {j} have the same label");
        }
    }
    // The cloth moves: the first (rest) and last tiles differ in where the cloth is.
    let at = |k: u32, x: u32, y: u32| is_cloth(img.get_pixel(k % 3 * TILE + x, k / 3 * TILE + y).0);
    let moved = (0..TILE * TILE)
        .filter(|i| at(0, i % TILE, i / TILE) != at(5, i % TILE, i / TILE))
        .count();
    assert!(
        moved > 2000,
        "{moved} pixels changed between frames 1 and 48"
    );
    // Nothing half-written is left, and the caches equal those of a bake without the preview.
    assert_eq!(d.files_under("review"), vec!["sheet.png".to_string()]);
    d.ok(&["bake", &scene, "-o", "plain"]);
    assert!(
        std::fs::read(d.path("out/skirt.pc2")).unwrap()
            == std::fs::read(d.path("plain/skirt.pc2")).unwrap()
    );
}

#[test]
fn a_short_bake_gets_one_tile_per_frame() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    d.ok(&[
        "bake",
        &scene,
        "-o",
        "out",
        "--frames",
        "1..2",
        "--preview",
        "p.png",
    ]);
    let img = read_png(&d.path("p.png"));
    assert_eq!(img.dimensions(), (640, 320));
    for (k, (cloth, proxy, label)) in tiles(&img).iter().enumerate() {
        assert!(*cloth > 5000, "tile {k}: {cloth} cloth pixels");
        // The sphere's silhouette circle.
        assert!(*proxy > 120, "tile {k}: {proxy} proxy pixels");
        assert!(label.len() > 150, "tile {k}");
    }
}

#[test]
fn an_unwritable_preview_fails_the_bake_with_the_path_named() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    d.write("blocker", "a file where a folder should be");
    let r = d.run(&[
        "bake",
        &scene,
        "-o",
        "out",
        "--frames",
        "1..2",
        "--preview",
        "blocker/p.png",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("blocker"), "{}", r.stderr);
    // The preview is written before the caches take their final names: none did.
    assert!(
        d.files_under("out").is_empty(),
        "{:?}",
        d.files_under("out")
    );
}

#[test]
fn batch_preview_writes_review_files_per_shot_and_reruns_shots_missing_them() {
    let d = Dir::new();
    d.ok(&["sample", "flag-wind", "-o", "shots/flag"]);
    d.ok(&["sample", "sheet-on-sphere", "-o", "shots/sheet"]);
    let outcomes = |extra: &[&str]| {
        let mut args = vec!["batch", "shots", "-o", "out", "--json"];
        args.extend(extra);
        let r = d.ok(&args);
        let mut v: Vec<(String, String)> = r
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["event"] == "shot")
            .map(|e| {
                (
                    e["shot"].as_str().unwrap_or("").to_string(),
                    e["outcome"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let pair = |a: &str, b: &str| {
        vec![
            ("flag".to_string(), a.to_string()),
            ("sheet".to_string(), b.to_string()),
        ]
    };
    assert_eq!(outcomes(&["--preview"]), pair("baked", "baked"));
    for shot in ["flag", "sheet"] {
        let img = read_png(&d.path(&format!("out/{shot}/preview.png")));
        assert_eq!(img.dimensions(), (960, 640), "{shot}");
        assert!(tiles(&img).iter().all(|t| t.0 > 1000), "{shot}");
        let html = std::fs::read_to_string(d.path(&format!("out/{shot}/report.html"))).unwrap();
        assert_eq!(html.matches("<svg").count(), 7, "{shot}");
    }
    assert_eq!(outcomes(&["--preview"]), pair("skipped", "skipped"));
    // A shot whose review files are missing is baked again when they are asked for.
    std::fs::remove_file(d.path("out/sheet/preview.png")).unwrap();
    assert_eq!(outcomes(&[]), pair("skipped", "skipped"));
    assert_eq!(outcomes(&["--preview"]), pair("skipped", "baked"));
    assert!(d.path("out/sheet/preview.png").is_file());
}

#[test]
fn report_page_is_self_contained_and_plots_every_series() {
    let d = Dir::new();
    let scene = d.sample("self-fold");
    d.ok(&[
        "bake",
        &scene,
        "-o",
        "out",
        "--report-html",
        "out/report.html",
    ]);
    let html = std::fs::read_to_string(d.path("out/report.html")).unwrap();
    // Six line plots and the stacked stage times, all inline SVG; nothing fetched.
    assert_eq!(html.matches("<svg").count(), 7);
    for needle in ["<script", "src=", "href=", "url(", "@import"] {
        assert!(!html.contains(needle), "the page contains {needle}");
    }
    for title in [
        "Substeps",
        "CG iterations",
        "Max strain",
        "Body contacts",
        "Self-contacts",
        "Time per stage",
        "linear_solve",
        "self_collision",
    ] {
        assert!(html.contains(title), "no {title}");
    }
    // One line per finite series (substeps, rejected, iterations, failures, strain, contacts,
    // self-contacts, unresolved, intersecting pairs, distance) and a band per stage (8).
    assert!(html.matches("<polyline").count() >= 10);
    assert_eq!(html.matches("<polygon").count(), 8);
}

/// Debian's `chromium` (CLOTHBAKE_CHROMIUM overrides). None = skip, unless
/// CLOTHBAKE_REQUIRE_BROWSER is set (./scripts/test sets it after installing Chromium).
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CLOTHBAKE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .flat_map(|dir| ["chromium", "chromium-browser"].map(|n| dir.join(n)))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CLOTHBAKE_REQUIRE_BROWSER").is_none(),
            "CLOTHBAKE_REQUIRE_BROWSER is set but no chromium is on PATH"
        );
        eprintln!(
            "SKIPPED: no chromium on PATH (apt-get install chromium); the report page was not \
             checked in a browser"
        );
    }
    found
}

/// Runs headless Chromium on `page` with `mode` (`--dump-dom` or `--screenshot=FILE`) and returns
/// (stdout, the console messages it logged).
fn headless(browser: &Path, d: &Dir, page: &Path, mode: &str) -> (String, Vec<String>) {
    let profile = d.path(&format!("chromium-profile-{}", mode.len()));
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=820,2400",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(mode)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {stderr}");
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

#[test]
fn report_page_loads_in_headless_chromium_without_console_errors_and_shows_plots() {
    let Some(browser) = chromium() else { return };
    let d = Dir::new();
    // The check itself catches console errors: a page that logs one and throws is reported.
    let bad = d.write(
        "bad.html",
        "<!DOCTYPE html><html><body><script>console.error('probe-error'); \
         throw new Error('probe-thrown');</script></body></html>",
    );
    let (_, console) = headless(&browser, &d, &bad, "--dump-dom");
    assert!(
        console.iter().any(|l| l.contains("probe-error"))
            && console.iter().any(|l| l.contains("probe-thrown")),
        "{console:?}"
    );

    let scene = d.sample("skirt-walk");
    d.ok(&[
        "bake",
        &scene,
        "-o",
        "out",
        "--report-html",
        "out/report.html",
    ]);
    let page = d.path("out/report.html");
    let (dom, console) = headless(&browser, &d, &page, "--dump-dom");
    assert!(console.is_empty(), "console messages: {console:?}");
    // The browser parsed the inline SVG into the document: 7 plots, their lines and bands.
    assert_eq!(dom.matches("<svg").count(), 7, "{dom}");
    assert!(dom.matches("<polyline").count() >= 10);
    assert_eq!(dom.matches("<polygon").count(), 8);

    let shot = d.path("shot.png");
    let (_, console) = headless(
        &browser,
        &d,
        &page,
        &format!("--screenshot={}", shot.display()),
    );
    assert!(console.is_empty(), "console messages: {console:?}");
    let img = read_png(&shot);
    assert_eq!(img.dimensions(), (820, 2400));
    let colours: HashSet<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    assert!(colours.len() > 50, "{} distinct colours", colours.len());
    // The series colours are painted: substeps/iterations/animation (#4e79a7), max strain and
    // forces (#f28e2b), contacts and body_collisions (#76b7b2), beyond their legend swatches
    // (12×10 pixels each).
    for (rgb, legends) in [
        ([0x4e, 0x79, 0xa7], 3),
        ([0xf2, 0x8e, 0x2b], 2),
        ([0x76, 0xb7, 0xb2], 2),
    ] {
        let n = img.pixels().filter(|p| p.0 == rgb).count();
        assert!(n > legends * 120 + 100, "{rgb:?}: {n} pixels");
    }
}
