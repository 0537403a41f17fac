//! clothbake-io: file formats only (glTF/OBJ import, animation, skinning, scene TOML, caches).
