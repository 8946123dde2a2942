//! From a scene's material tables to the materials of its elements.

use super::SceneFile;
use crate::error::{HookeError, Result};
use crate::material::registry::{self, MaterialContext, MaterialSource};
use crate::material::MaterialRef;
use std::path::Path;

/// The materials of one body: its own table and its regions' (in order; later regions win).
#[derive(Clone, Debug)]
pub struct BodyMaterials {
    /// The body's own material (`bodies[i].material`), for elements no region selects.
    pub body: MaterialSource,
    /// The material of each of the body's regions (`bodies[i].regions[r].material`), in order.
    pub regions: Vec<MaterialSource>,
}

impl BodyMaterials {
    /// Per element of the body: the last region that selects it, else the body's material.
    /// `region_masks[r][e]` says whether region r selects element e.
    pub fn assign(&self, element_count: usize, region_masks: &[Vec<bool>]) -> Result<Vec<MaterialRef>> {
        (0..element_count)
            .map(|e| {
                match region_masks.iter().rposition(|mask| mask[e]) {
                    Some(r) => &self.regions[r],
                    None => &self.body,
                }
                .for_element(e)
            })
            .collect()
    }
}

/// Refuses a key that the table's model does not take, naming its line.
pub(super) fn check_material_keys(file: &SceneFile, text: &str, origin: &str) -> Result<()> {
    let sections = file
        .bodies
        .iter()
        .flat_map(|b| std::iter::once(&b.material).chain(b.regions.iter().map(|r| &r.material)));
    for section in sections {
        if let Some((key, span, accepted)) = section.unknown_key() {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            let expected: Vec<String> = accepted.iter().map(|k| format!("`{k}`")).collect();
            return Err(HookeError::parse(
                origin,
                Some(line),
                format!("unknown field `{key}`, expected one of {}", expected.join(", ")),
            ));
        }
    }
    Ok(())
}

/// Reads every material table (checking its parameters and loading the files it names).
pub(super) fn body_materials(file: &SceneFile, base: &Path) -> Result<Vec<BodyMaterials>> {
    let dimension = file.dimension;
    file.bodies
        .iter()
        .enumerate()
        .map(|(b, body)| {
            let parse = |key: String, section: &super::MaterialSection| {
                registry::parse(
                    &section.table(),
                    &MaterialContext {
                        key: &key,
                        dimension,
                        base_directory: base,
                    },
                )
            };
            Ok(BodyMaterials {
                body: parse(format!("bodies[{b}].material"), &body.material)?,
                regions: body
                    .regions
                    .iter()
                    .enumerate()
                    .map(|(r, region)| parse(format!("bodies[{b}].regions[{r}].material"), &region.material))
                    .collect::<Result<_>>()?,
            })
        })
        .collect()
}
