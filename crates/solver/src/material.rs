//! Cloth material parameters in SI units, with named presets.
//!
//! The force model is Baraff & Witkin 1998 (BW) §4: stretch and shear per triangle in the rest-state
//! (u, v) plane (§4.2), bend per interior edge (§4.3), condition damping `d = -k_d ∂C/∂x Ċ` with
//! `k_d = damping · k` (§4.5). Stiffnesses are per unit rest area (see [`crate::forces`]), so a
//! material behaves the same at any mesh resolution.
//!
//! Preset provenance (honest): the **area densities** are typical measured fabric weights
//! (grams per square metre as sold: poplin/broadcloth 110–150 g/m², habotai/crepe-de-chine silk
//! 35–80 g/m², 12–14 oz/yd² denim ≈ 400–475 g/m², single jersey 140–180 g/m², suiting wool
//! 230–280 g/m², polyester lining 60–90 g/m², 0.6–0.8 mm garment lambskin ≈ 0.5–0.8 kg/m²).
//! The **bend** values are of the order of KES-FB2 bending rigidities reported for such fabrics
//! (≈ 1e-6 N·m for silk to ≈ 1e-4 N·m for denim). The **stretch/shear stiffnesses and damping
//! are tuned, not measured**: real woven fabrics are ≈ 1e4 N/m or stiffer in tension, which an
//! implicit solver handles but at a higher CG cost, so warp/weft are chosen inside the
//! 10–3000 N/m range Boxerman (2003) sweeps, high enough that cloth hanging under its own weight
//! strains well below 5 % (weight of 1 m of hanging cotton per metre of width:
//! 0.15 kg/m² · 9.81 m/s² · 1 m ≈ 1.5 N/m, i.e. 0.07 % strain at 2000 N/m; near a corner pin the
//! load concentrates, still ≈ 1 % at 5 cm mesh spacing). Shear is one to two orders of magnitude
//! softer than stretch, as BW §2 and Boxerman recommend for woven cloth.
//!
//! The same material drives the mass-spring model ([`crate::model::ForceModel::Springs`]): spring
//! constants come from `stretch`, `shear` and `bend` via the rest lengths and areas, so that a
//! uniform stretch or shear of a regular grid stores the membrane's energy — on a square grid a
//! grid-line spring has `k = stretch − shear` (N/m), each of a cell's two diagonals `k = shear`,
//! a flexion spring the flexural rigidity `bend·A/(l cos⁴θ)` (N·m²) of Choi & Ko's buckling law;
//! `stretch_damping`/`bend_damping` are the springs' damping times. Full mapping and its limits:
//! [`crate::spring_network`].

use thiserror::Error;

/// Physical parameters of one cloth material. All fields in SI units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Area density, kg/m². Lumped vertex mass = density · (rest area of incident triangles) / 3.
    pub density: f32,
    /// Stretch stiffness along warp (u) and weft (v), N/m. Energy per triangle
    /// `E = ½ k a (|w_u| − b_u)²` (BW §4.2 with `C = a(|w_u| − b_u)`, `k_BW = k / a`).
    pub stretch: [f32; 2],
    /// In-plane shear stiffness, N/m. `E = ½ k a (w_u · w_v)²` (BW §4.2).
    pub shear: f32,
    /// Bending rigidity, N·m (energy per unit curvature² per unit area). Per hinge
    /// `E = ½ bend · |e|²/(A₁+A₂) · (θ − θ_rest)²` (BW §4.3 condition, Discrete-Shells weight).
    pub bend: f32,
    /// Stretch/shear damping time, s: `k_d = stretch_damping · k` (BW §4.5).
    pub stretch_damping: f32,
    /// Bend damping time, s: `k_d = bend_damping · k` (BW §4.5).
    pub bend_damping: f32,
    /// Rest-length scale factors `b_u`, `b_v` (dimensionless, 1 = rest size; BW §4.2 "shrink/stretch").
    pub rest_scale: [f32; 2],
}

/// An invalid material parameter, naming the field.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum MaterialError {
    /// A field is NaN, infinite, or out of its valid range.
    #[error("material field `{field}` = {value} is invalid: {reason}")]
    Invalid {
        /// Field name as in [`Material`] (`stretch[0]` etc. for array entries).
        field: &'static str,
        /// The offending value.
        value: f32,
        /// What the valid range is.
        reason: &'static str,
    },
}

/// Cotton shirting (poplin / broadcloth, ≈150 g/m²). The default.
const COTTON: Material = Material {
    density: 0.15,
    stretch: [2000.0, 1600.0],
    shear: 80.0,
    bend: 1.5e-5,
    stretch_damping: 1.0e-3,
    bend_damping: 2.0e-3,
    rest_scale: [1.0, 1.0],
};

/// Silk (charmeuse / crepe de chine, ≈70 g/m²): light, limp, fluid drape.
const SILK: Material = Material {
    density: 0.07,
    stretch: [1200.0, 1000.0],
    shear: 30.0,
    bend: 2.0e-6,
    stretch_damping: 1.0e-3,
    bend_damping: 2.0e-3,
    rest_scale: [1.0, 1.0],
};

/// Denim (12 oz/yd² ≈ 0.41 kg/m²): heavy and stiff.
const DENIM: Material = Material {
    density: 0.41,
    stretch: [3000.0, 2500.0],
    shear: 300.0,
    bend: 1.5e-4,
    stretch_damping: 1.0e-3,
    bend_damping: 2.0e-3,
    rest_scale: [1.0, 1.0],
};

/// Garment leather (lambskin 0.6–0.8 mm, ≈0.7 kg/m²): heavy, stiff in bending and shear.
const LEATHER: Material = Material {
    density: 0.7,
    stretch: [3000.0, 3000.0],
    shear: 600.0,
    bend: 1.0e-3,
    stretch_damping: 1.0e-3,
    bend_damping: 3.0e-3,
    rest_scale: [1.0, 1.0],
};

/// Single jersey knit (T-shirt, ≈160 g/m²): stretchy, weft (course) softer than warp (wale).
const JERSEY: Material = Material {
    density: 0.16,
    stretch: [400.0, 200.0],
    shear: 20.0,
    bend: 5.0e-6,
    stretch_damping: 1.0e-3,
    bend_damping: 2.0e-3,
    rest_scale: [1.0, 1.0],
};

/// Suiting wool (≈250 g/m²).
const WOOL: Material = Material {
    density: 0.25,
    stretch: [2500.0, 2000.0],
    shear: 120.0,
    bend: 4.0e-5,
    stretch_damping: 1.0e-3,
    bend_damping: 2.0e-3,
    rest_scale: [1.0, 1.0],
};

/// Polyester lining / taffeta (≈80 g/m²).
const POLYESTER: Material = Material {
    density: 0.08,
    stretch: [2500.0, 2500.0],
    shear: 100.0,
    bend: 5.0e-6,
    stretch_damping: 1.0e-3,
    bend_damping: 2.0e-3,
    rest_scale: [1.0, 1.0],
};

static PRESETS: [(&str, Material); 7] = [
    ("cotton", COTTON),
    ("silk", SILK),
    ("denim", DENIM),
    ("leather", LEATHER),
    ("jersey", JERSEY),
    ("wool", WOOL),
    ("polyester", POLYESTER),
];

/// Alternative preset names: (alias, canonical name).
static ALIASES: [(&str, &str); 1] = [("knit", "jersey")];

impl Material {
    /// The preset called `name` (case-insensitive; `"knit"` is an alias of `"jersey"`).
    pub fn preset(name: &str) -> Option<Material> {
        let canonical = ALIASES
            .iter()
            .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
            .map_or(name, |(_, c)| c);
        PRESETS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(canonical))
            .map(|(_, m)| *m)
    }

    /// All presets, (name, material), in a fixed order. Aliases are not listed.
    pub fn presets() -> &'static [(&'static str, Material)] {
        &PRESETS
    }

    /// Checks every field: finite; density, stretch and rest scales > 0; shear, bend and damping ≥ 0.
    pub fn validate(&self) -> Result<(), MaterialError> {
        let positive = [
            ("density", self.density),
            ("stretch[0]", self.stretch[0]),
            ("stretch[1]", self.stretch[1]),
            ("rest_scale[0]", self.rest_scale[0]),
            ("rest_scale[1]", self.rest_scale[1]),
        ];
        let non_negative = [
            ("shear", self.shear),
            ("bend", self.bend),
            ("stretch_damping", self.stretch_damping),
            ("bend_damping", self.bend_damping),
        ];
        for (field, value) in positive {
            if !value.is_finite() || value <= 0.0 {
                return Err(MaterialError::Invalid {
                    field,
                    value,
                    reason: "must be finite and > 0",
                });
            }
        }
        for (field, value) in non_negative {
            if !value.is_finite() || value < 0.0 {
                return Err(MaterialError::Invalid {
                    field,
                    value,
                    reason: "must be finite and >= 0",
                });
            }
        }
        Ok(())
    }
}

impl Default for Material {
    /// Cotton shirting.
    fn default() -> Self {
        COTTON
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_named() {
        for (name, m) in Material::presets() {
            assert_eq!(m.validate(), Ok(()), "{name}");
            assert_eq!(Material::preset(name), Some(*m));
        }
        assert_eq!(Material::preset("KNIT"), Material::preset("jersey"));
        assert_eq!(Material::preset("Cotton"), Some(Material::default()));
        assert_eq!(Material::preset("chainmail"), None);
    }

    #[test]
    fn validate_names_the_field() {
        let mut m = Material::default();
        m.stretch[1] = -1.0;
        match m.validate() {
            Err(MaterialError::Invalid { field, .. }) => assert_eq!(field, "stretch[1]"),
            other => panic!("unexpected {other:?}"),
        }
        let m = Material {
            bend_damping: f32::NAN,
            ..Default::default()
        };
        let err = m.validate().unwrap_err();
        assert!(err.to_string().contains("bend_damping"), "{err}");
        let m = Material {
            density: 0.0,
            ..Default::default()
        };
        assert!(m.validate().is_err());
        let m = Material {
            shear: 0.0,
            ..Default::default()
        };
        assert_eq!(m.validate(), Ok(()));
    }
}
