//! Loading a glTF 2.0 file (`.gltf` with `data:` URIs or external `.bin`, or `.glb`) with the
//! gltf crate, with errors that name the file and the element.

use std::path::{Path, PathBuf};

use crate::error::{IoError, Result};

/// A parsed glTF document and its buffer bytes.
pub struct GltfDocument {
    /// The file (for error messages).
    pub path: PathBuf,
    /// The document (JSON validated by the gltf crate).
    pub document: gltf::Document,
    /// Bytes of each buffer, at least `buffer.byteLength` long.
    pub buffers: Vec<Vec<u8>>,
}

impl GltfDocument {
    /// Reads and validates `path`; every buffer is loaded and checked against its declared length.
    pub fn open(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| IoError::io(path, e))?;
        // The gltf crate takes anything without the GLB magic for JSON.
        if crate::scene::extension(path) == "glb" && !bytes.starts_with(b"glTF") {
            let magic = String::from_utf8_lossy(&bytes[..bytes.len().min(4)]).into_owned();
            return Err(IoError::parse(
                path,
                "header",
                format!("not a GLB file (magic {magic:?}, expected \"glTF\")"),
            ));
        }
        // The gltf crate (1.4) subtracts the 12-byte header from the header's length unchecked:
        // a panic in a debug build, a wrap to a huge length otherwise.
        if bytes.starts_with(b"glTF") && bytes.len() >= 12 {
            let length = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
            if length < 12 {
                return Err(IoError::parse(
                    path,
                    "header",
                    format!("GLB header gives a total length of {length} bytes, less than the header's 12"),
                ));
            }
        }
        let gltf = gltf::Gltf::from_slice_without_validation(&bytes)
            .map_err(|e| IoError::parse(path, "", describe(&e)))?;
        let gltf::Gltf { document, blob } = gltf;
        let root = document.into_json();
        check_before_validation(path, &root)?;
        let document =
            gltf::Document::from_json(root).map_err(|e| IoError::parse(path, "", describe(&e)))?;
        for ext in document.extensions_used() {
            if matches!(
                ext,
                "KHR_draco_mesh_compression" | "EXT_meshopt_compression"
            ) {
                return Err(IoError::invalid(
                    path,
                    "extensionsUsed",
                    format!("{ext}: compressed geometry is not supported; export without mesh compression"),
                ));
            }
        }
        let base = path.parent().unwrap_or(Path::new(""));
        let mut blob = blob;
        let mut buffers = Vec::new();
        for buffer in document.buffers() {
            let field = format!("buffers[{}]", buffer.index());
            let data =
                gltf::buffer::Data::from_source_and_blob(buffer.source(), Some(base), &mut blob)
                    .map_err(|e| {
                        let what = match buffer.source() {
                            gltf::buffer::Source::Uri(u) if !u.starts_with("data:") => {
                                format!("uri \"{u}\": ")
                            }
                            _ => String::new(),
                        };
                        IoError::parse(path, field.clone(), format!("{what}{}", describe(&e)))
                    })?;
            if data.len() < buffer.length() {
                return Err(IoError::parse(
                    path,
                    field,
                    format!(
                        "has {} bytes, byteLength says {}",
                        data.len(),
                        buffer.length()
                    ),
                ));
            }
            buffers.push(data.0);
        }
        Ok(Self {
            path: path.to_path_buf(),
            document,
            buffers,
        })
    }

    /// An error about element `field` of this file.
    pub fn err(&self, field: impl Into<String>, message: impl Into<String>) -> IoError {
        IoError::invalid(&self.path, field, message)
    }

    /// The node called `name`, or the node whose mesh is called `name`.
    pub fn find_node(&self, name: &str) -> Option<gltf::Node<'_>> {
        let nodes = || self.document.nodes();
        nodes()
            .find(|n| n.name() == Some(name))
            .or_else(|| nodes().find(|n| n.mesh().is_some_and(|m| m.name() == Some(name))))
    }
}

/// What gltf-json 1.4 gets wrong when validating: its POSITION hook indexes `accessors` before
/// the index is checked (a panic on an index out of range), and it does not validate animation
/// channel targets at all, whose node index and path the gltf crate then unwraps (a panic on
/// `"path": ""` or a node out of range). Both are checked here, naming the element, before the
/// crate's own validation runs.
fn check_before_validation(path: &Path, root: &gltf::json::Root) -> Result<()> {
    use gltf::json::validation::{Checked, Validate};
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for (semantic, index) in &prim.attributes {
                if index.value() >= root.accessors.len() {
                    let name = match semantic {
                        Checked::Valid(s) => s.to_string(),
                        Checked::Invalid => "?".to_string(),
                    };
                    return Err(IoError::parse(
                        path,
                        format!("meshes[{m}].primitives[{p}].attributes.{name}"),
                        format!(
                            "accessor {} does not exist ({} accessors)",
                            index.value(),
                            root.accessors.len()
                        ),
                    ));
                }
            }
        }
    }
    let mut problems = Vec::new();
    for (a, anim) in root.animations.iter().enumerate() {
        for (c, ch) in anim.channels.iter().enumerate() {
            let at = || {
                gltf::json::Path::new()
                    .field("animations")
                    .index(a)
                    .field("channels")
                    .index(c)
                    .field("target")
            };
            ch.target
                .validate(root, at, &mut |p, e| problems.push(format!("{}: {e}", p())));
        }
    }
    match problems.first() {
        None => Ok(()),
        Some(_) => Err(IoError::parse(path, "", problems.join("; "))),
    }
}

/// A one-line description of a gltf crate error.
fn describe(e: &gltf::Error) -> String {
    match e {
        gltf::Error::Io(io) if io.kind() == std::io::ErrorKind::NotFound => {
            "file not found".to_string()
        }
        gltf::Error::Binary(b) => describe_glb(b),
        gltf::Error::Validation(list) => list
            .iter()
            .map(|(path, err)| format!("{path}: {err}"))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

fn describe_glb(e: &gltf::binary::Error) -> String {
    use gltf::binary::Error as B;
    match e {
        B::Length {
            length,
            length_read,
        } => {
            format!("truncated GLB: the header says {length} bytes, the file has {length_read}")
        }
        B::ChunkLength {
            ty,
            length,
            length_read,
        } => {
            format!("truncated GLB: {ty:?} chunk says {length} bytes, {length_read} available")
        }
        B::Magic(m) => format!("not a GLB file (magic {m:?})"),
        B::Version(v) => format!("unsupported GLB version {v}"),
        B::Io(io) => format!("truncated GLB: {io}"),
        B::ChunkType(t) => format!("unexpected GLB chunk {t:?}"),
        B::UnknownChunkType(t) => format!("unknown GLB chunk type {t:?}"),
    }
}
