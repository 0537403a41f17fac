//! Reading glTF accessors with full bounds checks (count, offsets, strides, sparse indices), so a
//! malformed file gives an error naming the accessor instead of a panic or silent garbage.

use byteorder::{ByteOrder, LittleEndian};
use gltf::accessor::{DataType, Dimensions};

use crate::error::Result;
use crate::gltf_document::GltfDocument;

/// Number of components of an accessor type.
pub(crate) fn components(d: Dimensions) -> usize {
    match d {
        Dimensions::Scalar => 1,
        Dimensions::Vec2 => 2,
        Dimensions::Vec3 => 3,
        Dimensions::Vec4 => 4,
        Dimensions::Mat2 => 4,
        Dimensions::Mat3 => 9,
        Dimensions::Mat4 => 16,
    }
}

fn component_size(t: DataType) -> usize {
    match t {
        DataType::I8 | DataType::U8 => 1,
        DataType::I16 | DataType::U16 => 2,
        DataType::U32 | DataType::F32 => 4,
    }
}

fn read_component(t: DataType, b: &[u8]) -> f64 {
    match t {
        DataType::I8 => b[0] as i8 as f64,
        DataType::U8 => b[0] as f64,
        DataType::I16 => LittleEndian::read_i16(b) as f64,
        DataType::U16 => LittleEndian::read_u16(b) as f64,
        DataType::U32 => LittleEndian::read_u32(b) as f64,
        DataType::F32 => LittleEndian::read_f32(b) as f64,
    }
}

/// glTF normalisation of integer components (spec 3.11): `c / max`, signed clamped at −1.
fn normalize(t: DataType, c: f64) -> f64 {
    match t {
        DataType::I8 => (c / 127.0).max(-1.0),
        DataType::U8 => c / 255.0,
        DataType::I16 => (c / 32767.0).max(-1.0),
        DataType::U16 => c / 65535.0,
        DataType::U32 => c / 4294967295.0,
        DataType::F32 => c,
    }
}

impl GltfDocument {
    /// Bytes `[start, start + len)` of buffer view `view`, checked.
    fn view_bytes(&self, view: &gltf::buffer::View<'_>, field: &str) -> Result<&[u8]> {
        let buf = &self.buffers[view.buffer().index()];
        let (start, len) = (view.offset(), view.length());
        buf.get(start..start.saturating_add(len)).ok_or_else(|| {
            self.err(
                field,
                format!(
                    "bufferViews[{}] spans bytes {start}..{} of buffers[{}], which has {}",
                    view.index(),
                    start.saturating_add(len),
                    view.buffer().index(),
                    buf.len()
                ),
            )
        })
    }

    /// `count` elements of `n` components of type `t` from `view` at `offset` (stride from the view
    /// or tight), pushed to `out` as f64.
    #[allow(clippy::too_many_arguments)]
    fn read_elements(
        &self,
        view: &gltf::buffer::View<'_>,
        offset: usize,
        count: usize,
        t: DataType,
        n: usize,
        field: &str,
        out: &mut Vec<f64>,
    ) -> Result<()> {
        let bytes = self.view_bytes(view, field)?;
        let cs = component_size(t);
        let elem = cs * n;
        let stride = view.stride().unwrap_or(elem);
        if stride < elem {
            return Err(self.err(
                field,
                format!("byteStride {stride} is smaller than an element ({elem} bytes)"),
            ));
        }
        if count == 0 {
            return Ok(());
        }
        let end = stride
            .checked_mul(count - 1)
            .and_then(|x| x.checked_add(elem))
            .and_then(|x| x.checked_add(offset))
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| {
                self.err(
                    field,
                    format!(
                        "{count} elements from byte {offset} (stride {stride}) overrun bufferViews[{}] ({} bytes)",
                        view.index(),
                        bytes.len()
                    ),
                )
            })?;
        let data = &bytes[offset..end];
        out.reserve(count * n);
        for i in 0..count {
            let e = &data[i * stride..i * stride + elem];
            for k in 0..n {
                out.push(read_component(t, &e[k * cs..]));
            }
        }
        Ok(())
    }

    /// All components of accessor `acc` (count × components, row by row) as f64, raw (no
    /// normalisation), with sparse substitution. `field` describes where the accessor is used.
    fn read_raw(&self, acc: &gltf::Accessor<'_>, field: &str) -> Result<Vec<f64>> {
        let field = format!("{field} (accessors[{}])", acc.index());
        let n = components(acc.dimensions());
        let count = acc.count();
        if count == 0 {
            return Err(self.err(&field, "count is 0"));
        }
        if matches!(acc.dimensions(), Dimensions::Mat2 | Dimensions::Mat3)
            && component_size(acc.data_type()) < 4
        {
            return Err(self.err(&field, "padded 1- or 2-byte matrices are not supported"));
        }
        let mut out = Vec::new();
        match acc.view() {
            Some(view) => self.read_elements(
                &view,
                acc.offset(),
                count,
                acc.data_type(),
                n,
                &field,
                &mut out,
            )?,
            None => out.resize(count * n, 0.0),
        }
        if let Some(sparse) = acc.sparse() {
            let sc = sparse.count();
            let idx = sparse.indices();
            let it = match idx.index_type() {
                gltf::accessor::sparse::IndexType::U8 => DataType::U8,
                gltf::accessor::sparse::IndexType::U16 => DataType::U16,
                gltf::accessor::sparse::IndexType::U32 => DataType::U32,
            };
            let mut indices = Vec::new();
            let sfield = format!("{field}.sparse.indices");
            self.read_elements(&idx.view(), idx.offset(), sc, it, 1, &sfield, &mut indices)?;
            let vals = sparse.values();
            let mut values = Vec::new();
            let vfield = format!("{field}.sparse.values");
            self.read_elements(
                &vals.view(),
                vals.offset(),
                sc,
                acc.data_type(),
                n,
                &vfield,
                &mut values,
            )?;
            for (j, &i) in indices.iter().enumerate() {
                let i = i as usize;
                if i >= count {
                    return Err(self.err(
                        &sfield,
                        format!("index {i} at [{j}] is not below count {count}"),
                    ));
                }
                out[i * n..(i + 1) * n].copy_from_slice(&values[j * n..(j + 1) * n]);
            }
        }
        Ok(out)
    }

    /// A float accessor (`normalized` integers are mapped to [0, 1] / [−1, 1]), checked to have
    /// `dims` components per element and only finite values. Returns the flat component list.
    pub fn read_floats(
        &self,
        acc: &gltf::Accessor<'_>,
        dims: &[usize],
        field: &str,
    ) -> Result<Vec<f32>> {
        let n = components(acc.dimensions());
        if !dims.contains(&n) {
            return Err(self.err(
                format!("{field} (accessors[{}])", acc.index()),
                format!("has {n} components per element, expected {dims:?}"),
            ));
        }
        let t = acc.data_type();
        if t != DataType::F32 && !acc.normalized() {
            return Err(self.err(
                format!("{field} (accessors[{}])", acc.index()),
                format!("component type {t:?} must be FLOAT or normalized"),
            ));
        }
        let raw = self.read_raw(acc, field)?;
        let out: Vec<f32> = raw.iter().map(|&c| normalize(t, c) as f32).collect();
        if let Some(k) = out.iter().position(|c| !c.is_finite()) {
            return Err(self.err(
                format!("{field} (accessors[{}])", acc.index()),
                format!("element {} is not finite ({})", k / n, out[k]),
            ));
        }
        Ok(out)
    }

    /// An unsigned-integer accessor (indices, joints) as u32 components.
    pub fn read_uints(&self, acc: &gltf::Accessor<'_>, field: &str) -> Result<Vec<u32>> {
        match acc.data_type() {
            DataType::U8 | DataType::U16 | DataType::U32 => {}
            t => {
                return Err(self.err(
                    format!("{field} (accessors[{}])", acc.index()),
                    format!("component type {t:?} must be an unsigned integer"),
                ))
            }
        }
        Ok(self
            .read_raw(acc, field)?
            .into_iter()
            .map(|c| c as u32)
            .collect())
    }
}
