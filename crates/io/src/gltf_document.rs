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
        let gltf =
            gltf::Gltf::from_slice(&bytes).map_err(|e| IoError::parse(path, "", describe(&e)))?;
        let gltf::Gltf { document, blob } = gltf;
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
