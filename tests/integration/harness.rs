//! Runs the built `clothbake` binary in a temporary folder and captures what it did.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary working folder (removed when dropped).
pub struct Dir {
    tmp: tempfile::TempDir,
}

/// Exit code and captured output of one run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Dir {
    pub fn new() -> Dir {
        Dir {
            tmp: tempfile::tempdir().expect("temporary folder"),
        }
    }

    pub fn root(&self) -> &Path {
        self.tmp.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// Writes `bytes` to `rel` (parents created).
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create folder");
        }
        std::fs::write(&p, bytes).expect("write file");
        p
    }

    /// Runs `clothbake ARGS` with this folder as the working directory.
    pub fn run(&self, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_clothbake"))
            .args(args)
            .current_dir(self.tmp.path())
            .output()
            .expect("run clothbake");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs and asserts exit code 0.
    pub fn ok(&self, args: &[&str]) -> Run {
        let r = self.run(args);
        assert_eq!(
            r.code, 0,
            "clothbake {args:?} failed:\n{}\n{}",
            r.stdout, r.stderr
        );
        r
    }

    /// Writes sample `name` into `<name>/` and returns the scene path (relative).
    pub fn sample(&self, name: &str) -> String {
        self.ok(&["sample", name, "-o", name]);
        format!("{name}/scene.toml")
    }

    /// All files below `rel` (relative paths, sorted); empty if it does not exist.
    pub fn files_under(&self, rel: &str) -> Vec<String> {
        let mut out = Vec::new();
        let base = self.path(rel);
        let mut stack = vec![base.clone()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if let Ok(r) = p.strip_prefix(&base) {
                    out.push(r.display().to_string());
                }
            }
        }
        out.sort();
        out
    }
}

/// The repository's samples/ folder.
pub fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}
