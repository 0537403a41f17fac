//! Sample scenes: each writes a scene file and the assets it needs, generated here from code.
//! The copies under `samples/<name>/` are this output at the default resolution (a test keeps them equal).

mod body;
mod cape_run;
mod dress_walk;
mod figure;
mod flag_wind;
pub mod glb;
pub mod mesh;
mod rigged_figure;
mod scene_template;
mod self_fold;
mod sheet_on_sphere;
mod skirt_walk;
mod twist;

/// One file of a sample: a path relative to the sample folder and its bytes.
pub struct SampleFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

impl SampleFile {
    pub fn text(path: &str, text: String) -> Self {
        SampleFile {
            path: path.to_string(),
            bytes: text.into_bytes(),
        }
    }
}

/// A sample scene and its generator.
pub struct Sample {
    pub name: &'static str,
    pub description: &'static str,
    /// Default garment resolution (quads along the longer side); None: not adjustable.
    pub default_resolution: Option<u32>,
    generate: fn(u32) -> Vec<SampleFile>,
}

impl Sample {
    /// The files of this sample (scene.toml first) at `resolution` (default when None).
    pub fn files(&self, resolution: Option<u32>) -> Vec<SampleFile> {
        (self.generate)(resolution.or(self.default_resolution).unwrap_or(0))
    }
}

/// All samples, in the order `sample --list` prints them.
pub const SAMPLES: &[Sample] = &[
    Sample {
        name: "dress-walk",
        description: dress_walk::DESCRIPTION,
        default_resolution: Some(148),
        generate: dress_walk::files,
    },
    Sample {
        name: "sheet-on-sphere",
        description: "a square cotton sheet falls onto a sphere on the ground",
        default_resolution: Some(20),
        generate: sheet_on_sphere::files,
    },
    Sample {
        name: "flag-wind",
        description: "a silk flag pinned to a pole flutters in a steady wind (drag and lift)",
        default_resolution: Some(24),
        generate: flag_wind::files,
    },
    Sample {
        name: "skirt-walk",
        description: "a long, wide skirt on a walking figure (capsule proxies); its folds press on each other",
        default_resolution: Some(24),
        generate: skirt_walk::files,
    },
    Sample {
        name: "cape-run",
        description: "a cape pinned at the shoulders of a figure running forward",
        default_resolution: Some(16),
        generate: cape_run::files,
    },
    Sample {
        name: "self-fold",
        description:
            "a sheet drops onto its lower edge and piles up in folds on itself (self-collision)",
        default_resolution: Some(20),
        generate: self_fold::files,
    },
    Sample {
        name: "twist",
        description: "a cloth tube wrung by turning one end ring while the other is held",
        default_resolution: Some(16),
        generate: twist::files,
    },
    Sample {
        name: "rigged-figure",
        description:
            "a skirt draped on the third-party RiggedFigure (CC BY 4.0) with `auto` proxies",
        default_resolution: Some(24),
        generate: rigged_figure::files,
    },
];

/// Looks a sample up by name.
pub fn find(name: &str) -> Option<&'static Sample> {
    SAMPLES.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every generated .glb passes the gltf crate's validation, and every sample's scene parses as TOML.
    #[test]
    fn generated_files_are_valid() {
        for s in SAMPLES {
            for res in [None, Some(8)] {
                let files = s.files(res);
                assert_eq!(files[0].path, "scene.toml");
                let text = std::str::from_utf8(&files[0].bytes).expect("utf-8 scene");
                let _: toml::Value =
                    toml::from_str(text).unwrap_or_else(|e| panic!("{}: scene.toml: {e}", s.name));
                for f in &files {
                    if f.path.ends_with(".glb") || f.path.ends_with(".gltf") {
                        let g = gltf::Gltf::from_slice(&f.bytes)
                            .unwrap_or_else(|e| panic!("{}: {}: {e}", s.name, f.path));
                        assert!(g.meshes().count() >= 1, "{}: {}", s.name, f.path);
                        assert_eq!(g.animations().count(), 1, "{}: {}", s.name, f.path);
                    }
                }
            }
        }
    }

    /// The copies under samples/ are exactly what the generator writes at the default resolution.
    #[test]
    fn checked_in_samples_match_the_generator() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        for s in SAMPLES {
            for f in s.files(None) {
                let path = root.join(s.name).join(&f.path);
                let on_disk = std::fs::read(&path).unwrap_or_else(|e| {
                    panic!(
                        "{}: {e} (run `clothbake sample {} -o samples/{}`)",
                        path.display(),
                        s.name,
                        s.name
                    )
                });
                assert!(
                    on_disk == f.bytes,
                    "{} differs from the generator's output; regenerate it",
                    path.display()
                );
            }
        }
    }
}
