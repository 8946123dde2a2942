//! `hooke mesh`: a tetrahedral mesh from a closed surface file or a shape
//! recipe, with element labels by region shape, written as MEDIT or VTK with
//! a quality report.

use crate::error::{HookeError, Result};
use crate::mesh::{mesh_quality, stuff_shape, QualityReport, Shape, StuffingReport, TetMesh};
use nalgebra::Vector3;
use std::path::Path;

/// A mesh recipe (TOML): the solid, the lattice spacing and labelled regions.
///
/// ```toml
/// edge_length = 0.01
/// shape = { ball = { center = [0, 0, 0], radius = 0.1 } }
/// [[regions]]            # later regions win
/// label = 1
/// shape = { difference = { base = { ball = { center = [0, 0, 0], radius = 0.1 } },
///                          subtract = [{ ball = { center = [0, 0, 0], radius = 0.08 } }] } }
/// ```
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MeshRecipe {
    /// The solid to mesh.
    pub shape: Shape,
    /// The lattice spacing of the stuffing mesher, about the elements' edge length, m.
    pub edge_length: f64,
    /// Regions whose elements get their own label, later ones winning (default: none).
    #[serde(default)]
    pub regions: Vec<LabelledRegion>,
}

/// Elements whose centroid lies in `shape` get `label`.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledRegion {
    /// The label the region's elements get.
    pub label: i32,
    /// The region's solid, which an element's centroid must lie in.
    pub shape: Shape,
}

/// The mesh and what the mesher and the quality check found.
pub struct MeshedSolid {
    /// The tetrahedral mesh, labelled by the recipe's regions (0 outside them).
    pub mesh: TetMesh,
    /// What the isosurface stuffing mesher did.
    pub stuffing: StuffingReport,
    /// Element counts, dihedral angles, aspect ratios and volumes of the mesh.
    pub quality: QualityReport,
}

/// Reads a recipe (.toml) or a surface (.obj, .stl, .ply; `edge_length`
/// defaults to 1/30 of its bounding box diagonal) and meshes it.
pub fn mesh_input(path: &Path, edge_length: Option<f64>) -> Result<MeshedSolid> {
    let base = path.parent().unwrap_or(Path::new("."));
    let is_recipe = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let mut recipe = if is_recipe {
        let text = std::fs::read_to_string(path).map_err(|e| HookeError::io(path, e))?;
        toml::from_str::<MeshRecipe>(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            HookeError::parse(path, line, e.message().to_string())
        })?
    } else {
        MeshRecipe {
            shape: Shape::Surface {
                file: path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                loaded: None,
            },
            edge_length: 0.0,
            regions: Vec::new(),
        }
    };
    recipe.shape.prepare(base, "shape", &crate::io::read_surface)?;
    let (lo, hi) = recipe.shape.bounds();
    recipe.edge_length = edge_length.unwrap_or(if is_recipe {
        recipe.edge_length
    } else {
        (hi - lo).norm() / 30.0
    });
    mesh_recipe(recipe, base, &path.display().to_string())
}

/// Meshes a recipe whose surface files are relative to `base`; `origin` names it in errors.
pub fn mesh_recipe(mut recipe: MeshRecipe, base: &Path, origin: &str) -> Result<MeshedSolid> {
    recipe.shape.prepare(base, "shape", &crate::io::read_surface)?;
    for (r, region) in recipe.regions.iter_mut().enumerate() {
        region
            .shape
            .prepare(base, &format!("regions[{r}].shape"), &crate::io::read_surface)?;
    }
    let edge_length = recipe.edge_length;
    if !(edge_length.is_finite() && edge_length > 0.0) {
        return Err(HookeError::scene(
            "edge_length",
            format!("must be a length > 0, got {edge_length}"),
        ));
    }
    let (mut mesh, stuffing) = stuff_shape(&recipe.shape, edge_length)?;
    if mesh.tet_count() == 0 {
        return Err(HookeError::Mesh {
            reason: format!(
                "{origin}: no tetrahedron fits inside the shape at edge length {edge_length}; use a smaller one"
            ),
        });
    }
    for region in &recipe.regions {
        for e in 0..mesh.tet_count() {
            if region.shape.contains(&mesh.centroid(e)) {
                mesh.labels[e] = region.label;
            }
        }
    }
    let quality = mesh_quality(&mesh);
    Ok(MeshedSolid {
        mesh,
        stuffing,
        quality,
    })
}

/// Writes a mesh by extension: `.mesh` (MEDIT), `.node` (TetGen, with its
/// `.ele`), `.msh` (Gmsh 4.1 ASCII) or `.vtu` (VTK XML).
pub fn write_mesh(path: &Path, mesh: &TetMesh) -> Result<()> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("mesh") => crate::io::medit::write_medit(path, mesh),
        Some("vtu") => {
            let zeros = vec![Vector3::zeros(); mesh.vertex_count()];
            crate::output::write_vtu(
                path,
                &crate::output::Frame {
                    time: 0.0,
                    mesh: &crate::mesh::Mesh::Tetrahedra(mesh.clone()),
                    positions: &mesh.vertices,
                    velocities: &zeros,
                    strain_energy_density: &vec![0.0; mesh.tet_count()],
                    edges: &[],
                    materials: &[],
                    continuous_displacement: &[],
                    contact_force: &[],
                },
            )
        }
        Some("node") | Some("ele") => crate::io::tetgen::write_tetgen(path, mesh),
        Some("msh") => crate::io::gmsh::write_gmsh(path, &crate::mesh::Mesh::Tetrahedra(mesh.clone())),
        _ => Err(HookeError::io(
            path,
            std::io::Error::other("unknown mesh format: use .mesh (MEDIT), .node (TetGen), .msh (Gmsh) or .vtu (VTK)"),
        )),
    }
}
