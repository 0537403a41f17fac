//! Builds small glTF files for tests (JSON with an embedded base64 buffer, or GLB).

#![allow(dead_code)]

use std::path::Path;

use serde_json::{json, Value};

pub fn base64_encode(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A glTF document under construction: `json` without buffers, plus the binary buffer.
pub struct GltfBuilder {
    pub json: Value,
    pub bin: Vec<u8>,
}

impl GltfBuilder {
    pub fn new() -> Self {
        Self {
            json: json!({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": []}], "nodes": [],
                "meshes": [], "accessors": [], "bufferViews": []}),
            bin: Vec::new(),
        }
    }

    fn push(&mut self, key: &str, v: Value) -> usize {
        let a = self.json[key].as_array_mut().unwrap();
        a.push(v);
        a.len() - 1
    }

    fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let off = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.push(
            "bufferViews",
            json!({"buffer": 0, "byteOffset": off, "byteLength": bytes.len()}),
        )
    }

    /// A FLOAT accessor of `ty` ("SCALAR", "VEC2", "VEC3", "VEC4", "MAT4").
    pub fn floats(&mut self, data: &[f32], ty: &str) -> usize {
        let n = match ty {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            _ => panic!(),
        };
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let v = self.view(&bytes);
        let mut acc =
            json!({"bufferView": v, "componentType": 5126, "count": data.len() / n, "type": ty});
        if ty != "MAT4" && data.len() >= n {
            // Component-wise bounds (required for POSITION and animation inputs); NaN is skipped.
            let lo: Vec<f32> = (0..n)
                .map(|k| {
                    data.iter()
                        .skip(k)
                        .step_by(n)
                        .cloned()
                        .fold(f32::MAX, f32::min)
                })
                .collect();
            let hi: Vec<f32> = (0..n)
                .map(|k| {
                    data.iter()
                        .skip(k)
                        .step_by(n)
                        .cloned()
                        .fold(f32::MIN, f32::max)
                })
                .collect();
            acc["min"] = json!(lo);
            acc["max"] = json!(hi);
        }
        self.push("accessors", acc)
    }

    /// An UNSIGNED_SHORT accessor.
    pub fn u16s(&mut self, data: &[u16], ty: &str) -> usize {
        let n = if ty == "VEC4" { 4 } else { 1 };
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let v = self.view(&bytes);
        self.push(
            "accessors",
            json!({"bufferView": v, "componentType": 5123, "count": data.len() / n, "type": ty}),
        )
    }

    pub fn mesh(&mut self, name: &str, attributes: Value, indices: Option<usize>) -> usize {
        let mut prim = json!({"attributes": attributes});
        if let Some(i) = indices {
            prim["indices"] = json!(i);
        }
        self.push("meshes", json!({"name": name, "primitives": [prim]}))
    }

    /// Adds a node; root nodes are listed in the scene.
    pub fn node(&mut self, node: Value, root: bool) -> usize {
        let i = self.push("nodes", node);
        if root {
            self.json["scenes"][0]["nodes"]
                .as_array_mut()
                .unwrap()
                .push(json!(i));
        }
        i
    }

    fn with_buffer(&self, uri: Option<String>) -> Value {
        let mut j = self.json.clone();
        let mut b = json!({"byteLength": self.bin.len()});
        if let Some(u) = uri {
            b["uri"] = json!(u);
        }
        j["buffers"] = json!([b]);
        j
    }

    pub fn write_gltf(&self, path: &Path) {
        let uri = format!(
            "data:application/octet-stream;base64,{}",
            base64_encode(&self.bin)
        );
        std::fs::write(
            path,
            serde_json::to_string_pretty(&self.with_buffer(Some(uri))).unwrap(),
        )
        .unwrap();
    }

    /// Writes `.gltf` with an external buffer file `bin_name` (not written when `write_bin` is false).
    pub fn write_gltf_external(&self, path: &Path, bin_name: &str, write_bin: bool) {
        std::fs::write(
            path,
            serde_json::to_string_pretty(&self.with_buffer(Some(bin_name.into()))).unwrap(),
        )
        .unwrap();
        if write_bin {
            std::fs::write(path.with_file_name(bin_name), &self.bin).unwrap();
        }
    }

    pub fn glb_bytes(&self) -> Vec<u8> {
        let mut js = serde_json::to_vec(&self.with_buffer(None)).unwrap();
        while !js.len().is_multiple_of(4) {
            js.push(b' ');
        }
        let mut bin = self.bin.clone();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let total = 12 + 8 + js.len() + 8 + bin.len();
        let mut out = Vec::new();
        out.extend(b"glTF");
        out.extend(2u32.to_le_bytes());
        out.extend((total as u32).to_le_bytes());
        out.extend((js.len() as u32).to_le_bytes());
        out.extend(b"JSON");
        out.extend(js);
        out.extend((bin.len() as u32).to_le_bytes());
        out.extend(b"BIN\0");
        out.extend(bin);
        out
    }
}
