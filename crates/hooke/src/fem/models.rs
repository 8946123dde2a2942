//! The models made of finite elements: tetrahedra (with springs), plane-strain
//! triangles and discontinuous Galerkin triangles. The constructors live here,
//! beside the elements they build, so that the model knows its terms only
//! through [`EnergyTerm`] and never imports an element kind.

use super::{Elasticity, Formulation, Interfaces, LinearTetrahedron, LinearTriangle, SpringNetwork, Springs};
use crate::error::{HookeError, Result};
use crate::material::MaterialRef;
use crate::mesh::{DiscontinuousMesh, Mesh, TetMesh, TriangleMesh};
use crate::model::{flatten, EnergyTerm, MassKind, Model};

impl Model {
    /// Tetrahedra with one material each, and no pins, forces, gravity or
    /// damping. The mesh must be oriented.
    pub fn new(mesh: TetMesh, materials: Vec<MaterialRef>, mass_kind: MassKind) -> Result<Model> {
        Model::with_springs(mesh, materials, SpringNetwork::default(), mass_kind)
    }

    /// Tetrahedra and springs over the mesh's vertices (a vertex may belong to
    /// springs only). Every vertex must carry mass.
    pub fn with_springs(
        mesh: TetMesh,
        materials: Vec<MaterialRef>,
        network: SpringNetwork,
        mass_kind: MassKind,
    ) -> Result<Model> {
        let rest = flatten(&mesh.vertices, 3);
        let mut terms: Vec<Box<dyn EnergyTerm>> = Vec::new();
        if mesh.tet_count() > 0 || network.springs.is_empty() {
            let elements: Vec<&[usize]> = mesh.tets.iter().map(|t| t.as_slice()).collect();
            terms.push(Box::new(Elasticity::<LinearTetrahedron>::new(
                &elements, materials, &rest,
            )?));
        } else if !materials.is_empty() {
            return Err(HookeError::Mesh {
                reason: format!("{} materials for 0 elements", materials.len()),
            });
        }
        if !network.springs.is_empty() {
            terms.push(Box::new(Springs::new(network.springs, mesh.vertex_count())?));
        }
        Model::from_terms(Mesh::Tetrahedra(mesh), terms, network.vertex_masses, mass_kind)
    }

    /// A 2D (plane-strain) model of triangles with one material each. The
    /// mesh must be oriented counter-clockwise.
    pub fn planar(mesh: TriangleMesh, materials: Vec<MaterialRef>, mass_kind: MassKind) -> Result<Model> {
        let rest = flatten(&mesh.vertices, 2);
        let elements: Vec<&[usize]> = mesh.triangles.iter().map(|t| t.as_slice()).collect();
        let elasticity = Elasticity::<LinearTriangle>::new(&elements, materials, &rest)?;
        Model::from_terms(Mesh::Triangles(mesh), vec![Box::new(elasticity)], Vec::new(), mass_kind)
    }

    /// A 2D discontinuous Galerkin model (Chen 2019 thesis, §5.2): `continuous` split
    /// into independent triangles (one material each) joined by the
    /// `formulation`'s interface terms with penalty η_f (None: the default of
    /// [`super::interface::default_penalty`]). Returns the model and the
    /// split mesh (its interfaces and the map back to `continuous`).
    pub fn discontinuous_planar(
        continuous: &TriangleMesh,
        materials: Vec<MaterialRef>,
        mass_kind: MassKind,
        formulation: Formulation,
        penalty: Option<f64>,
    ) -> Result<(Model, DiscontinuousMesh)> {
        let split = DiscontinuousMesh::new(continuous)?;
        let mut model = Model::planar(split.mesh.clone(), materials.clone(), mass_kind)?;
        let interfaces = Interfaces::new(
            &split.interfaces,
            &split.mesh.triangles,
            &materials,
            &model.rest_positions(),
            formulation,
            penalty,
        )?;
        model.add_term(Box::new(interfaces))?;
        model.set_vertex_groups(split.continuous_vertex.clone())?;
        Ok((model, split))
    }
}
