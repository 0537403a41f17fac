//! Temporary cache files (`.<name>.part-<pid>`, see `atomic_file`) left behind by a bake that was
//! killed (SIGKILL, or a second Ctrl+C) before it could remove them: recognised by name and removed
//! once the process that wrote them is gone.

use std::path::{Path, PathBuf};

use crate::error::{IoError, Result};

/// The writing process of a temporary file name `.<name>.part-<pid>`, if it is one.
fn temp_file_pid(file_name: &str) -> Option<u32> {
    if !file_name.starts_with('.') {
        return None;
    }
    let (_, pid) = file_name.rsplit_once(".part-")?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` may still be running. Only Linux's /proc can tell that it is not; elsewhere
/// every process counts as running (nothing is removed).
fn may_be_running(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// Removes the temporary files in `dir` whose writing process has exited (never this process's
/// own) and returns them. A missing `dir` has none.
pub fn remove_stale_temp_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(IoError::io(dir, e)),
    };
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| IoError::io(dir, e))?;
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temp_file_pid) else {
            continue;
        };
        if pid == std::process::id() || may_be_running(pid) {
            continue;
        }
        let path = entry.path();
        if path.is_file() {
            std::fs::remove_file(&path).map_err(|e| IoError::io(&path, e))?;
            removed.push(path);
        }
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised() {
        assert_eq!(temp_file_pid(".skirt.pc2.part-1234"), Some(1234));
        assert_eq!(temp_file_pid(".skirt.0001.obj.part-7"), Some(7));
        assert_eq!(temp_file_pid("skirt.pc2.part-1234"), None);
        assert_eq!(temp_file_pid(".skirt.pc2.part-"), None);
        assert_eq!(temp_file_pid(".skirt.pc2.part-12a"), None);
        assert_eq!(temp_file_pid(".hidden"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn only_files_of_exited_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let exited = {
            let mut c = std::process::Command::new("true").spawn().unwrap();
            let pid = c.id();
            c.wait().unwrap();
            pid
        };
        let own = std::process::id();
        for name in [
            format!(".g.pc2.part-{exited}"),
            format!(".g.0001.obj.part-{exited}"),
            format!(".g.mdd.part-{own}"),
            ".g.pc2.part-1".to_string(), // init: running
            ".notes".to_string(),
            "g.pc2".to_string(),
        ] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let removed = remove_stale_temp_files(dir.path()).unwrap();
        let names: Vec<String> = removed
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            vec![
                format!(".g.0001.obj.part-{exited}"),
                format!(".g.pc2.part-{exited}")
            ]
        );
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            vec![
                format!(".g.mdd.part-{own}"),
                ".g.pc2.part-1".to_string(),
                ".notes".to_string(),
                "g.pc2".to_string()
            ]
        );
        assert!(remove_stale_temp_files(&dir.path().join("missing"))
            .unwrap()
            .is_empty());
    }
}
