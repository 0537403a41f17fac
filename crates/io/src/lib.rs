//! clothbake-io: file formats only (glTF/OBJ import, animation, skinning, scene TOML, caches).
//!
//! Entry point: [`load_scene`] gives a [`LoadedScene`] (settings, garments in world coordinates
//! with their source-order maps and pins, colliders as functions of time). Caches are written
//! with [`GarmentCacheWriter`] (or the per-format writers) and read back with [`read_pc2`] and
//! [`read_mdd`].

mod atomic_file;

pub mod animation;
pub mod axes;
pub mod cache_mdd;
pub mod cache_obj_seq;
pub mod cache_pc2;
mod cache_size;
pub mod cache_stream;
pub mod cache_usd;
pub mod cache_usdc;
pub mod cache_writer;
pub mod checkpoint_file;
pub mod clock;
pub mod colliders;
pub mod driver;
pub mod error;
pub mod garment;
mod garment_motion;
pub mod gltf_accessor;
pub mod gltf_document;
pub mod gltf_mesh;
pub mod gltf_rig;
pub mod loaded_scene;
pub mod node_graph;
pub mod obj_mesh;
pub mod pins;
pub mod preroll;
pub mod proxies_auto;
pub mod proxies_marked;
pub mod proxy;
pub mod proxy_fit;
pub mod scene;
pub mod shape_keys;
pub mod skinning;
pub mod source_mesh;
pub mod stale_temp;
pub mod transform_keys;
pub mod usdc_crate;
pub mod usdc_layer;
pub mod weld;

pub use cache_mdd::{read_mdd, MddCache, MddWriter};
pub use cache_obj_seq::ObjSeqWriter;
pub use cache_pc2::{read_pc2, Pc2Cache, Pc2Writer};
pub use cache_stream::{CacheKind, CacheStream};
pub use cache_usd::{UsdLayerInfo, UsdWriter};
pub use cache_writer::{CacheProgress, CacheTarget, CacheTiming, GarmentCacheWriter};
pub use checkpoint_file::{read_checkpoint, write_checkpoint};
pub use clock::Clock;
pub use colliders::Colliders;
pub use driver::{Driver, DriverSource};
pub use error::{ErrorKind, IoError, Result};
pub use garment::Garment;
pub use loaded_scene::{load_scene, LoadedScene};
pub use pins::Pins;
pub use preroll::Preroll;
pub use scene::{
    AnimationRef, ColliderSpec, DriverSpace, Follow, Format, GarmentSpec, IntegratorName,
    ModelName, OutputSpec, PinSpec, PreconditionerName, PrerollFrom, ProxyMode, RestShape,
    SceneFile, Settings, Shape, Space, TransformKey, Up, WindSpec, DEFAULT_AIR_DAMPING,
};
pub use stale_temp::remove_stale_temp_files;
pub use transform_keys::KeyedTransform;
