//! What a material model gives the registry: its entry (names, keys and
//! parser), the context a material table is read in, and what the table
//! makes. Models import this module, and the registry lists their entries,
//! so neither imports the other.

use super::MaterialRef;
use crate::error::{HookeError, Result};
use std::path::{Path, PathBuf};

/// Where a material table sits and what it may assume.
pub struct MaterialContext<'a> {
    /// The table's scene key, for errors (e.g. `bodies[0].regions[1].material`).
    pub key: &'a str,
    /// 2 or 3.
    pub dimension: usize,
    /// Files the table names are relative to this folder.
    pub base_directory: &'a Path,
}

/// The material(s) a table describes.
#[derive(Clone, Debug)]
pub enum MaterialSource {
    /// One material for every element it applies to.
    Uniform(MaterialRef),
    /// One material per element of the body, by its index in the body (read from `path`).
    PerElement {
        /// The file the materials were read from, for errors.
        path: PathBuf,
        /// Each element's material, by index; None where the file gives none.
        materials: Vec<Option<MaterialRef>>,
    },
}

impl MaterialSource {
    /// The material of element `element` (numbered within its body).
    pub fn for_element(&self, element: usize) -> Result<MaterialRef> {
        match self {
            MaterialSource::Uniform(material) => Ok(material.clone()),
            MaterialSource::PerElement { path, materials } => {
                materials.get(element).and_then(Option::clone).ok_or_else(|| {
                    HookeError::parse(
                        path,
                        None,
                        format!(
                            "no tensor for element {element} (the file covers {} elements)",
                            materials.len()
                        ),
                    )
                })
            }
        }
    }

    pub(crate) fn map(self, f: impl Fn(MaterialRef) -> MaterialRef) -> MaterialSource {
        match self {
            MaterialSource::Uniform(m) => MaterialSource::Uniform(f(m)),
            MaterialSource::PerElement { path, materials } => MaterialSource::PerElement {
                path,
                materials: materials.into_iter().map(|m| m.map(&f)).collect(),
            },
        }
    }
}

/// One model (or family of models) a scene can name.
pub struct MaterialEntry {
    /// The `model` names it answers to.
    pub names: &'static [&'static str],
    /// Its keys besides `model` and `fibre`.
    pub keys: &'static [&'static str],
    /// One line for the documentation.
    pub summary: &'static str,
    /// Checks the table (without `model` and `fibre`) and makes the material(s).
    pub parse: fn(name: &str, table: &toml::Table, context: &MaterialContext) -> Result<MaterialSource>,
}

/// Deserialises a model's settings from its table; `key` names it in errors,
/// followed by the setting at fault (`bodies[0].material.youngs_modulus`),
/// and the reason is in the user's words, not Rust's.
pub fn settings_from<T: serde::de::DeserializeOwned>(table: &toml::Table, key: &str) -> Result<T> {
    serde_path_to_error::deserialize(toml::Value::Table(table.clone())).map_err(
        |e: serde_path_to_error::Error<toml::de::Error>| {
            let path = e.path().to_string();
            let key = if path.is_empty() || path == "." {
                key.to_string()
            } else {
                format!("{key}.{path}")
            };
            HookeError::scene(key, crate::error::in_plain_words(e.inner().message()))
        },
    )
}
