//! The materials a scene can name, and how a scene's material table becomes
//! materials for elements.
//!
//! A material table has `model = "<name>"`, an optional `fibre = { direction,
//! stiffness }` (the fibre term of [`super::WithFibre`], for any model), and the
//! model's own keys, which its [`MaterialEntry`] lists and parses. Adding a
//! material means writing its file (the [`super::Material`] and an `ENTRY`) and
//! adding that entry to [`MATERIALS`].

pub use super::entry::{settings_from, MaterialContext, MaterialEntry, MaterialSource};
use super::{MaterialRef, WithFibre};
use crate::error::{HookeError, Result};
use nalgebra::Vector3;
use std::sync::Arc;

/// Every material scenes can name.
pub const MATERIALS: &[MaterialEntry] = &[
    super::isotropic_material::ENTRY,
    super::anisotropic_linear::ENTRY,
    super::valanis_landel::ENTRY,
    super::projective::ENTRY,
];

/// The entry for a model name.
pub fn entry(name: &str) -> Option<&'static MaterialEntry> {
    MATERIALS.iter().find(|e| e.names.contains(&name))
}

/// Every model name, for messages.
pub fn names() -> Vec<&'static str> {
    MATERIALS.iter().flat_map(|e| e.names.iter().copied()).collect()
}

/// The keys a material table may hold for its model (None for an unknown model).
pub fn accepted_keys(model: &str) -> Option<Vec<&'static str>> {
    entry(model).map(|e| {
        let mut keys = vec!["model", "fibre"];
        keys.extend_from_slice(e.keys);
        keys
    })
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FibreSettings {
    direction: Vec<f64>,
    stiffness: f64,
}

/// Reads a whole material table: model, fibre and the model's keys.
pub fn parse(table: &toml::Table, context: &MaterialContext) -> Result<MaterialSource> {
    let key = context.key;
    let name = match table.get("model") {
        Some(toml::Value::String(name)) => name.as_str(),
        Some(other) => {
            return Err(HookeError::scene(
                format!("{key}.model"),
                format!("must be a model name, got {other}"),
            ))
        }
        None => return Err(HookeError::scene(format!("{key}.model"), "is missing")),
    };
    let entry = entry(name).ok_or_else(|| {
        HookeError::scene(
            format!("{key}.model"),
            format!("unknown model {name:?} (known: {})", names().join(", ")),
        )
    })?;
    let mut rest = table.clone();
    rest.remove("model");
    let fibre = rest.remove("fibre");
    let source = (entry.parse)(name, &rest, context)?;
    let Some(fibre) = fibre else { return Ok(source) };
    let fibre_key = format!("{key}.fibre");
    let settings: FibreSettings = match fibre {
        toml::Value::Table(t) => settings_from(&t, &fibre_key)?,
        other => {
            return Err(HookeError::scene(
                fibre_key,
                format!("must be a table {{ direction, stiffness }}, got {other}"),
            ))
        }
    };
    if settings.direction.len() != context.dimension {
        return Err(HookeError::scene(
            format!("{fibre_key}.direction"),
            format!(
                "needs {} components in a {}D scene, got {}",
                context.dimension,
                context.dimension,
                settings.direction.len()
            ),
        ));
    }
    let mut direction = Vector3::zeros();
    direction.as_mut_slice()[..context.dimension].copy_from_slice(&settings.direction);
    let length = direction.norm();
    if !(length.is_finite() && length > 0.0) {
        return Err(HookeError::scene(
            format!("{fibre_key}.direction"),
            "must be a finite, non-zero vector",
        ));
    }
    if !(settings.stiffness.is_finite() && settings.stiffness >= 0.0) {
        return Err(HookeError::scene(
            format!("{fibre_key}.stiffness"),
            format!("must be a finite number of pascals ≥ 0, got {}", settings.stiffness),
        ));
    }
    Ok(source.map(|base| -> MaterialRef {
        Arc::new(WithFibre {
            base,
            direction: direction / length,
            stiffness: settings.stiffness,
        })
    }))
}
