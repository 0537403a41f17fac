//! The pieces of USD's binary "crate" file format (`.usdc`, Pixar's `pxr/usd/sdf/crateFile.cpp`)
//! that a point-cache layer needs: value representations, the structural sections and their
//! compression, the table of contents and the bootstrap header. Version 0.8.0, the version pxr
//! itself writes for such a layer (USD 20.x and later read it).
//!
//! A crate file is a bootstrap header (88 bytes: `PXR-USDC`, the version, the offset of the table
//! of contents), then values (written anywhere, referenced by absolute offset), then six sections
//! — `TOKENS` (every name and token, LZ4-compressed), `STRINGS` (string → token index), `FIELDS`
//! (token index and value of every field), `FIELDSETS` (each spec's field list), `PATHS` (the
//! path tree) and `SPECS` (path, field set and kind of every spec) — and the table of contents.
//! Integer tables are delta-coded (`integerCoding.cpp`) and LZ4-compressed as one chunk
//! (`TfFastCompression`).

use std::collections::HashMap;

/// Bytes of the bootstrap header.
pub const BOOTSTRAP_LEN: u64 = 88;

/// The crate version written: 0.8.0.
const VERSION: [u8; 3] = [0, 8, 0];

/// Value types (`crateDataTypes.h`) a point-cache layer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum CrateType {
    Bool = 1,
    Int = 3,
    Double = 9,
    String = 10,
    Token = 11,
    Vec3f = 24,
    TokenVector = 41,
    Specifier = 42,
    Variability = 44,
    TimeSamples = 46,
    DoubleVector = 48,
}

/// A field's value as the file stores it (`ValueRep`): the type in bits 48–55, an array bit (63),
/// an inlined bit (62) and 48 bits of payload — the value itself when inlined, else the absolute
/// offset of the value in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ValueRep(pub u64);

const ARRAY_BIT: u64 = 1 << 63;
const INLINED_BIT: u64 = 1 << 62;
const COMPRESSED_BIT: u64 = 1 << 61;
const PAYLOAD: u64 = (1 << 48) - 1;

impl ValueRep {
    /// A value held in the payload (bools, enums, token and string indices, floats' bits).
    pub fn inlined(ty: CrateType, payload: u64) -> Self {
        ValueRep(((ty as u64) << 48) | INLINED_BIT | (payload & PAYLOAD))
    }

    /// A value written at `offset`; `array` for `VtArray` values (count, then the elements).
    pub fn at(ty: CrateType, offset: u64, array: bool) -> Self {
        let array = if array { ARRAY_BIT } else { 0 };
        ValueRep(((ty as u64) << 48) | array | (offset & PAYLOAD))
    }

    /// An int array at `offset`, integer-coded and compressed (count, then the compressed
    /// codes: [`encode_ints`], [`put_compressed`]).
    pub fn compressed_array(ty: CrateType, offset: u64) -> Self {
        ValueRep(Self::at(ty, offset, true).0 | COMPRESSED_BIT)
    }

    /// A double: inlined as its f32 bits when the f32 holds it exactly (as pxr writes them),
    /// else None (write the 8 bytes and use [`Self::at`]).
    pub fn inlined_double(x: f64) -> Option<Self> {
        let f = x as f32;
        (f as f64 == x || x.is_nan()).then(|| Self::inlined(CrateType::Double, f.to_bits() as u64))
    }
}

/// A spec's kind (`SdfSpecType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum SpecType {
    Attribute = 1,
    Prim = 6,
    PseudoRoot = 7,
}

/// One spec: its path (index into the path table), its fields (indices into the field table).
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub path: u32,
    pub kind: SpecType,
    pub fields: Vec<u32>,
}

/// One entry of the path tree in depth-first order: the path's index, its last element's token
/// (a property when `property`), and whether it has children and a next sibling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathNode {
    pub path: u32,
    pub token: u32,
    pub property: bool,
    pub has_child: bool,
    /// Entries from this one to its next sibling (None: no sibling).
    pub sibling: Option<u32>,
}

/// The tables a layer's sections are made of, interned as the values are written.
#[derive(Debug, Default)]
pub struct Tables {
    tokens: Vec<String>,
    token_index: HashMap<String, u32>,
    /// Per string: its token.
    strings: Vec<u32>,
    /// Per field: (name token, value).
    fields: Vec<(u32, ValueRep)>,
    pub specs: Vec<Spec>,
    pub paths: Vec<PathNode>,
}

impl Tables {
    /// The index of `token`, added if new.
    pub fn token(&mut self, token: &str) -> u32 {
        if let Some(&i) = self.token_index.get(token) {
            return i;
        }
        let i = self.tokens.len() as u32;
        self.tokens.push(token.to_owned());
        self.token_index.insert(token.to_owned(), i);
        i
    }

    /// The index of string `s` (strings are stored as tokens plus an index of their own).
    pub fn string(&mut self, s: &str) -> u32 {
        let t = self.token(s);
        self.strings.push(t);
        self.strings.len() as u32 - 1
    }

    /// A field `name` = `value`; returns its index.
    pub fn field(&mut self, name: &str, value: ValueRep) -> u32 {
        let t = self.token(name);
        self.fields.push((t, value));
        self.fields.len() as u32 - 1
    }

    /// The six sections and the table of contents, to be written at `start` (the end of the
    /// values); returns their bytes and the offset of the table of contents.
    pub fn sections(&self, start: u64) -> (Vec<u8>, u64) {
        let mut out = Vec::new();
        let mut toc: Vec<(&str, u64, u64)> = Vec::new();
        let mut section = |name: &'static str, body: Vec<u8>, out: &mut Vec<u8>| {
            toc.push((name, start + out.len() as u64, body.len() as u64));
            out.extend_from_slice(&body);
        };
        // TOKENS: count, the NUL-terminated tokens' length, then the tokens compressed.
        let mut text = Vec::new();
        for t in &self.tokens {
            text.extend_from_slice(t.as_bytes());
            text.push(0);
        }
        let mut body = Vec::new();
        put_u64(&mut body, self.tokens.len() as u64);
        put_u64(&mut body, text.len() as u64);
        put_compressed(&mut body, &text);
        section("TOKENS", body, &mut out);
        // STRINGS: count, then each string's token index (uncompressed).
        let mut body = Vec::new();
        put_u64(&mut body, self.strings.len() as u64);
        for s in &self.strings {
            body.extend_from_slice(&s.to_le_bytes());
        }
        section("STRINGS", body, &mut out);
        // FIELDS: count, the name tokens coded, the values compressed.
        let mut body = Vec::new();
        put_u64(&mut body, self.fields.len() as u64);
        let names: Vec<u32> = self.fields.iter().map(|f| f.0).collect();
        put_compressed(&mut body, &encode_ints(&names));
        let reps: Vec<u8> = self
            .fields
            .iter()
            .flat_map(|f| f.1 .0.to_le_bytes())
            .collect();
        put_compressed(&mut body, &reps);
        section("FIELDS", body, &mut out);
        // FIELDSETS: every spec's field indices, each list ended by !0, coded.
        let sets: Vec<u32> = self
            .specs
            .iter()
            .flat_map(|s| s.fields.iter().copied().chain([u32::MAX]))
            .collect();
        let mut body = Vec::new();
        put_u64(&mut body, sets.len() as u64);
        put_compressed(&mut body, &encode_ints(&sets));
        section("FIELDSETS", body, &mut out);
        // PATHS: path count, entry count, then path indices, element tokens (negative for
        // properties) and jumps (−1: child only, −2: neither, 0: sibling only (next entry), > 0:
        // both, the sibling that many entries on), each coded.
        let mut body = Vec::new();
        put_u64(&mut body, self.paths.len() as u64);
        put_u64(&mut body, self.paths.len() as u64);
        let index: Vec<u32> = self.paths.iter().map(|p| p.path).collect();
        let tokens: Vec<u32> = self
            .paths
            .iter()
            .map(|p| {
                if p.property {
                    (p.token as i32).wrapping_neg() as u32
                } else {
                    p.token
                }
            })
            .collect();
        let jumps: Vec<u32> = self
            .paths
            .iter()
            .map(|p| match (p.has_child, p.sibling) {
                (true, Some(d)) => d as i32,
                (true, None) => -1,
                (false, Some(_)) => 0,
                (false, None) => -2,
            } as u32)
            .collect();
        for table in [&index, &tokens, &jumps] {
            put_compressed(&mut body, &encode_ints(table));
        }
        section("PATHS", body, &mut out);
        // SPECS: count, then path indices, field-set starts and kinds, each coded.
        let mut body = Vec::new();
        put_u64(&mut body, self.specs.len() as u64);
        let mut set_start = 0u32;
        let mut starts = Vec::with_capacity(self.specs.len());
        for s in &self.specs {
            starts.push(set_start);
            set_start += s.fields.len() as u32 + 1;
        }
        let paths: Vec<u32> = self.specs.iter().map(|s| s.path).collect();
        let kinds: Vec<u32> = self.specs.iter().map(|s| s.kind as u32).collect();
        for table in [&paths, &starts, &kinds] {
            put_compressed(&mut body, &encode_ints(table));
        }
        section("SPECS", body, &mut out);
        // The table of contents: count, then 16-byte NUL-padded name, start and size.
        let toc_offset = start + out.len() as u64;
        put_u64(&mut out, toc.len() as u64);
        for (name, at, size) in toc {
            let mut field = [0u8; 16];
            field[..name.len()].copy_from_slice(name.as_bytes());
            out.extend_from_slice(&field);
            put_u64(&mut out, at);
            put_u64(&mut out, size);
        }
        (out, toc_offset)
    }
}

/// The bootstrap header pointing at the table of contents at `toc_offset`.
pub fn bootstrap(toc_offset: u64) -> [u8; BOOTSTRAP_LEN as usize] {
    let mut b = [0u8; BOOTSTRAP_LEN as usize];
    b[..8].copy_from_slice(b"PXR-USDC");
    b[8..11].copy_from_slice(&VERSION);
    b[16..24].copy_from_slice(&toc_offset.to_le_bytes());
    b
}

pub fn put_u64(out: &mut Vec<u8>, x: u64) {
    out.extend_from_slice(&x.to_le_bytes());
}

/// `bytes` as one LZ4 chunk (`TfFastCompression`: a chunk count of 0, then an LZ4 block),
/// preceded by its compressed size.
pub fn put_compressed(out: &mut Vec<u8>, bytes: &[u8]) {
    let block = lz4_flex::block::compress(bytes);
    put_u64(out, block.len() as u64 + 1);
    out.push(0);
    out.extend_from_slice(&block);
}

/// 32-bit integers in the crate's integer coding (`Usd_IntegerCompression`): the most common
/// delta between consecutive values (from 0), then 2 bits per value (0: that common delta, 1, 2,
/// 3: a delta of 1, 2 or 4 bytes follows), then the deltas, little-endian; arithmetic wraps at
/// 32 bits as the decoder's does.
pub fn encode_ints(values: &[u32]) -> Vec<u8> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut prev = 0i32;
    let deltas: Vec<i32> = values
        .iter()
        .map(|&v| {
            let d = (v as i32).wrapping_sub(prev);
            prev = v as i32;
            d
        })
        .collect();
    // The most common delta, the smallest of equally common ones (deterministic).
    let mut sorted = deltas.clone();
    sorted.sort_unstable();
    let (mut common, mut best, mut run) = (sorted[0], 0usize, 0usize);
    for (k, &d) in sorted.iter().enumerate() {
        run = if k > 0 && sorted[k - 1] == d {
            run + 1
        } else {
            1
        };
        if run > best {
            (common, best) = (d, run);
        }
    }
    let mut out = common.to_le_bytes().to_vec();
    let codes_at = out.len();
    out.resize(codes_at + (values.len() * 2).div_ceil(8), 0);
    for (k, &d) in deltas.iter().enumerate() {
        let code: u8 = if d == common {
            0
        } else if i8::try_from(d).is_ok() {
            out.push(d as i8 as u8);
            1
        } else if let Ok(d16) = i16::try_from(d) {
            out.extend_from_slice(&d16.to_le_bytes());
            2
        } else {
            out.extend_from_slice(&d.to_le_bytes());
            3
        };
        out[codes_at + k / 4] |= code << (2 * (k % 4));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder of `integerCoding.cpp`, for the tests.
    fn decode_ints(data: &[u8], count: usize) -> Vec<u32> {
        let common = i32::from_le_bytes(data[..4].try_into().unwrap());
        let codes = &data[4..4 + (count * 2).div_ceil(8)];
        let mut at = 4 + codes.len();
        let (mut prev, mut out) = (0i32, Vec::new());
        for k in 0..count {
            let d = match (codes[k / 4] >> (2 * (k % 4))) & 3 {
                0 => common,
                1 => {
                    at += 1;
                    data[at - 1] as i8 as i32
                }
                2 => {
                    at += 2;
                    i16::from_le_bytes(data[at - 2..at].try_into().unwrap()) as i32
                }
                _ => {
                    at += 4;
                    i32::from_le_bytes(data[at - 4..at].try_into().unwrap())
                }
            };
            prev = prev.wrapping_add(d);
            out.push(prev as u32);
        }
        assert_eq!(at, data.len(), "every delta read");
        out
    }

    #[test]
    fn integer_coding_round_trips_with_every_delta_size() {
        let values = [
            0,
            1,
            2,
            3,
            4,
            5,
            200,
            40_000,
            7,
            u32::MAX,
            0,
            9,
            10,
            11,
            5_000_000,
        ];
        let coded = encode_ints(&values);
        assert_eq!(decode_ints(&coded, values.len()), values);
        // The common delta (+1) costs no bytes: 4 + 4 code bytes + 10 explicit deltas' bytes.
        assert_eq!(&coded[..4], &1i32.to_le_bytes());
        assert!(coded.len() < 4 + 4 + 4 * values.len());
        assert!(encode_ints(&[]).is_empty());
    }

    #[test]
    fn value_reps_carry_type_flags_and_payload() {
        let r = ValueRep::inlined(CrateType::Token, 7);
        assert_eq!(r.0, (11 << 48) | (1 << 62) | 7);
        let a = ValueRep::at(CrateType::Vec3f, 1234, true);
        assert_eq!(a.0, (24 << 48) | (1 << 63) | 1234);
        assert_eq!(
            ValueRep::inlined_double(24.0),
            Some(ValueRep::inlined(CrateType::Double, 24f32.to_bits() as u64))
        );
        assert_eq!(ValueRep::inlined_double(0.1), None);
    }

    #[test]
    fn sections_are_listed_in_the_table_of_contents() {
        let mut t = Tables::default();
        let f = t.field("upAxis", ValueRep::inlined(CrateType::Token, 0));
        t.specs.push(Spec {
            path: 0,
            kind: SpecType::PseudoRoot,
            fields: vec![f],
        });
        t.paths.push(PathNode {
            path: 0,
            token: 0,
            property: false,
            has_child: false,
            sibling: None,
        });
        let start = 1000;
        let (bytes, toc) = t.sections(start);
        let at = (toc - start) as usize;
        let n = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        assert_eq!(n, 6);
        let names: Vec<String> = (0..6)
            .map(|k| {
                let e = at + 8 + 32 * k;
                String::from_utf8(
                    bytes[e..e + 16]
                        .iter()
                        .take_while(|&&c| c != 0)
                        .copied()
                        .collect(),
                )
                .unwrap()
            })
            .collect();
        assert_eq!(
            names,
            ["TOKENS", "STRINGS", "FIELDS", "FIELDSETS", "PATHS", "SPECS"]
        );
        // Sections tile the bytes before the table of contents.
        let mut next = start;
        for k in 0..6 {
            let e = at + 8 + 32 * k + 16;
            let s = u64::from_le_bytes(bytes[e..e + 8].try_into().unwrap());
            let size = u64::from_le_bytes(bytes[e + 8..e + 16].try_into().unwrap());
            assert_eq!(s, next);
            next = s + size;
        }
        assert_eq!(next, toc);
        assert_eq!(&bootstrap(toc)[..11], b"PXR-USDC\0\x08\0");
    }
}
