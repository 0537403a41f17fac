//! A minimal glTF 2.0 binary (.glb) writer for the generated sample characters: meshes, nodes with
//! TRS, skins, linear animations and node extras. Deterministic output (serde_json sorts keys).

use serde_json::{json, Value};

/// Collects glTF objects and one binary buffer, then serialises them as a .glb.
#[derive(Default)]
pub struct GltfBuilder {
    nodes: Vec<Value>,
    meshes: Vec<Value>,
    accessors: Vec<Value>,
    views: Vec<Value>,
    skins: Vec<Value>,
    channels: Vec<Value>,
    samplers: Vec<Value>,
    roots: Vec<usize>,
    bin: Vec<u8>,
}

/// Column-major 4x4 matrix.
pub type Mat4 = [f32; 16];

/// Per-vertex skin influences: JOINTS_0 and WEIGHTS_0.
pub type SkinWeights<'a> = (&'a [[u8; 4]], &'a [[f32; 4]]);

impl GltfBuilder {
    fn view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while self.bin.len() % 4 != 0 {
            self.bin.push(0);
        }
        let mut v = json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(v);
        self.views.len() - 1
    }

    /// A float accessor of `count` elements of `ty` ("SCALAR", "VEC3", "VEC4", "MAT4"); with min/max.
    pub fn floats(&mut self, data: &[f32], ty: &str, vertex_attribute: bool) -> usize {
        let comps = match ty {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            _ => 16,
        };
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.view(&bytes, vertex_attribute.then_some(34962));
        let count = data.len() / comps;
        let mut min = vec![f32::INFINITY; comps];
        let mut max = vec![f32::NEG_INFINITY; comps];
        for e in data.chunks(comps) {
            for c in 0..comps {
                min[c] = min[c].min(e[c]);
                max[c] = max[c].max(e[c]);
            }
        }
        let mut a = json!({"bufferView": view, "componentType": 5126, "count": count, "type": ty});
        if ty != "MAT4" {
            a["min"] = json!(min);
            a["max"] = json!(max);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    /// Triangle indices (u32).
    pub fn indices(&mut self, tris: &[[u32; 3]]) -> usize {
        let bytes: Vec<u8> = tris
            .iter()
            .flatten()
            .flat_map(|i| i.to_le_bytes())
            .collect();
        let view = self.view(&bytes, Some(34963));
        self.accessors
            .push(json!({"bufferView": view, "componentType": 5125,
            "count": tris.len() * 3, "type": "SCALAR"}));
        self.accessors.len() - 1
    }

    /// JOINTS_0 (u8 x 4).
    pub fn joints(&mut self, joints: &[[u8; 4]]) -> usize {
        let bytes: Vec<u8> = joints.iter().flatten().copied().collect();
        let view = self.view(&bytes, Some(34962));
        self.accessors
            .push(json!({"bufferView": view, "componentType": 5121,
            "count": joints.len(), "type": "VEC4"}));
        self.accessors.len() - 1
    }

    /// A triangle mesh; `skin` adds JOINTS_0/WEIGHTS_0. Returns the mesh index.
    pub fn mesh(
        &mut self,
        name: &str,
        positions: &[[f32; 3]],
        triangles: &[[u32; 3]],
        skin: Option<SkinWeights>,
    ) -> usize {
        let pos = self.floats(&positions.concat(), "VEC3", true);
        let idx = self.indices(triangles);
        let mut attributes = json!({"POSITION": pos});
        if let Some((j, w)) = skin {
            attributes["JOINTS_0"] = json!(self.joints(j));
            attributes["WEIGHTS_0"] = json!(self.floats(&w.concat(), "VEC4", true));
        }
        self.meshes.push(json!({"name": name,
            "primitives": [{"attributes": attributes, "indices": idx, "mode": 4}]}));
        self.meshes.len() - 1
    }

    /// Adds a node (`parent` None: a scene root). `node` holds name/translation/rotation/mesh/extras.
    pub fn node(&mut self, parent: Option<usize>, node: Value) -> usize {
        let i = self.nodes.len();
        self.nodes.push(node);
        match parent {
            Some(p) => {
                let children = self.nodes[p]
                    .as_object_mut()
                    .map(|o| o.entry("children").or_insert_with(|| json!([])));
                if let Some(Value::Array(c)) = children {
                    c.push(json!(i));
                }
            }
            None => self.roots.push(i),
        }
        i
    }

    /// Sets a node's skin.
    pub fn set_skin(&mut self, node: usize, skin: usize) {
        self.nodes[node]["skin"] = json!(skin);
    }

    /// A skin over `joints` with their inverse bind matrices.
    pub fn skin(&mut self, joints: &[usize], inverse_bind: &[Mat4]) -> usize {
        let ibm = self.floats(&inverse_bind.concat(), "MAT4", false);
        self.skins
            .push(json!({"joints": joints, "inverseBindMatrices": ibm, "skeleton": joints[0]}));
        self.skins.len() - 1
    }

    /// A LINEAR animation channel: `path` "translation" (VEC3) or "rotation" (VEC4 quaternion).
    pub fn channel(&mut self, node: usize, path: &str, times: &[f32], values: &[f32]) {
        let input = self.floats(times, "SCALAR", false);
        let ty = if path == "rotation" { "VEC4" } else { "VEC3" };
        let output = self.floats(values, ty, false);
        self.samplers
            .push(json!({"input": input, "output": output, "interpolation": "LINEAR"}));
        self.channels.push(
            json!({"sampler": self.samplers.len() - 1, "target": {"node": node, "path": path}}),
        );
    }

    /// The .glb bytes: 12-byte header, JSON chunk (space padded), BIN chunk (zero padded).
    pub fn to_glb(&self, generator: &str, animation_name: &str) -> Vec<u8> {
        let mut root = json!({
            "asset": {"version": "2.0", "generator": generator},
            "scene": 0,
            "scenes": [{"nodes": self.roots}],
            "nodes": self.nodes,
            "meshes": self.meshes,
            "accessors": self.accessors,
            "bufferViews": self.views,
            "buffers": [{"byteLength": self.bin.len()}],
        });
        if !self.skins.is_empty() {
            root["skins"] = json!(self.skins);
        }
        if !self.channels.is_empty() {
            root["animations"] = json!([{"name": animation_name,
                "channels": self.channels, "samplers": self.samplers}]);
        }
        let mut json_bytes = serde_json::to_vec(&root).unwrap_or_default();
        while json_bytes.len() % 4 != 0 {
            json_bytes.push(b' ');
        }
        let mut bin = self.bin.clone();
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
        let total = 12 + 8 + json_bytes.len() + 8 + bin.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json_bytes);
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
        out
    }
}

/// Quaternion [x, y, z, w] for a rotation of `angle` radians about the unit `axis`.
pub fn quat(axis: [f32; 3], angle: f32) -> [f32; 4] {
    let (s, c) = (0.5 * angle).sin_cos();
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}

/// Column-major translation matrix.
pub fn translation(t: [f32; 3]) -> Mat4 {
    [
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, t[0], t[1], t[2], 1.0,
    ]
}
