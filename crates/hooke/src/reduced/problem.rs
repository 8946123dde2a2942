//! A model reduced to a skinning subspace with cubature (Trusty et al. 2023,
//! §4, Eqs. 2–4, and Algorithm 1): everything an iteration needs, precomputed so that no iteration
//! touches a full-space quantity.
//!
//! Positions are x = X̄ + B u. The potential splits into
//! - the quadratic part Ψ_u(u) = ½ uᵀ Q u − f(t)ᵀ u: soft pins (their
//!   stiffness BᵀK B and pull), gravity and loads (Bᵀ f), reduced once —
//!   time-dependent loads are reduced again at each step, at O(|V|·12m);
//! - the elastic part Σ_c w_c ψ(F_c(u)) over the cubature elements, with
//!   F_c = I + A_c u and A_c = ∂vec(F)/∂u (9 × 12m) stored per point.
//!
//! The mass reduces exactly: M_u = BᵀMB.

use super::cubature::{default_point_count, spectral_cubature, Cubature};
use super::skinning::{rest_frame, skinning_eigenmodes, SkinningBasis, SkinningEigenmodes};
use crate::disk_cache;
use crate::error::{HookeError, Result};
use crate::linalg::LowRank;
use crate::material::MaterialRef;
use crate::mesh::Mesh;
use crate::model::{HessianTarget, Model, TermKind};
use nalgebra::{DMatrix, Matrix3};

/// The `[subspace]` settings: modes m and cubature points |𝒞|.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubspaceSettings {
    /// m, the number of skinning modes; the subspace has 12m coordinates.
    pub modes: usize,
    /// None: 20 m (Trusty et al. 2023, §7.5).
    pub cubature_points: Option<usize>,
    /// The k-means seed.
    pub seed: u64,
}

impl SubspaceSettings {
    /// `modes` modes, the default number of cubature points (20 m) and seed 0.
    pub fn new(modes: usize) -> SubspaceSettings {
        SubspaceSettings {
            modes,
            cubature_points: None,
            seed: 0,
        }
    }

    /// |𝒞|, at most the element count.
    pub fn point_count(&self, elements: usize) -> usize {
        self.cubature_points
            .unwrap_or_else(|| default_point_count(self.modes))
            .min(elements)
    }
}

/// The reduced quadratic part of the potential at some time: Q = BᵀKB of the
/// soft pins and f = −Bᵀ∇E(X̄) of soft pins, gravity and loads, so that
/// E(X̄ + Bu) = E(X̄) − fᵀu + ½ uᵀQu.
#[derive(Clone, Debug)]
pub struct ReducedLoads {
    /// Q = BᵀKB of the soft pins, 12m × 12m.
    pub stiffness: DMatrix<f64>,
    /// f = −Bᵀ∇E(X̄), one entry per subspace coordinate.
    pub force: Vec<f64>,
    /// The same by kind of term, with E(X̄), for the energies of a state.
    pub parts: Vec<ReducedPart>,
}

/// The terms of one kind (soft pins, gravity or loads) reduced at some time:
/// E(X̄ + Bu) = at_rest − forceᵀu + ½ uᵀ stiffness u, exactly (they are at
/// most quadratic).
#[derive(Clone, Debug)]
pub struct ReducedPart {
    /// Which kind of term: soft pins, gravity or loads.
    pub kind: TermKind,
    /// E(X̄), the terms' energy at rest (u = 0), J.
    pub at_rest: f64,
    /// −Bᵀ∇E(X̄), one entry per subspace coordinate.
    pub force: Vec<f64>,
    /// None for linear terms.
    pub stiffness: Option<DMatrix<f64>>,
}

impl ReducedPart {
    /// E(X̄ + Bu).
    pub fn energy(&self, u: &[f64]) -> f64 {
        let linear = self.at_rest - self.force.iter().zip(u).map(|(f, x)| f * x).sum::<f64>();
        match &self.stiffness {
            None => linear,
            Some(q) => {
                let u = nalgebra::DVector::from_column_slice(u);
                linear + 0.5 * u.dot(&(q * &u))
            }
        }
    }
}

/// One cubature point: an element standing for its cluster.
#[derive(Clone, Debug)]
pub struct CubaturePoint {
    /// The element's index in the model.
    pub element: usize,
    /// The cluster's volume.
    pub weight: f64,
    /// The element's material.
    pub material: MaterialRef,
}

/// The reduced model.
#[derive(Clone, Debug)]
pub struct ReducedModel {
    /// The skinning eigenmodes the subspace is built from.
    pub modes: SkinningEigenmodes,
    /// The subspace's basis B: x = X̄ + B u.
    pub basis: SkinningBasis,
    /// The cubature rule over the body's elements.
    pub cubature: Cubature,
    /// The cubature points with their materials, in the rule's order.
    pub points: Vec<CubaturePoint>,
    /// g₀, g₁, g₂ of each point (3q entries per point, q = 4m): A_c = ∂vec(F)/∂u
    /// has row c + 3e equal to gₑ on block c of u (see [`SkinningBasis::element_gradients`]),
    /// so a point stores 12m numbers instead of A_c's 108m.
    pub(super) gradients: Vec<f64>,
    /// M_u = BᵀMB.
    pub mass: DMatrix<f64>,
    /// YᵀMX̄ₓ, YᵀMX̄_y, YᵀMX̄_z and YᵀM1, for the momenta (see [`super::record`]).
    pub(super) moments: [Vec<f64>; 4],
    /// The soft pins, gravity and loads that do not change with time, reduced once.
    constant_loads: ReducedLoads,
    /// Whether some do change (a ramped or periodic load, a soft pin released
    /// or moving): those are reduced again at each step.
    has_varying_terms: bool,
    /// The names of the model's terms, sorted: the reduced model stands for
    /// these terms, found again by what they are, not by their place (a scene
    /// replaces its gravity term after building, which moves it to the end).
    signature: Vec<String>,
    /// The body's mass (for the RMS size of an increment).
    pub total_mass: f64,
    /// The buffer of the scaled gradients G S^{cd} (q × 3|𝒞|), kept between
    /// iterations rather than allocated and zeroed in each.
    pub(crate) scratch: Scratch,
    /// The Hessian buffer of the terms reduced again at each step.
    hessian_buffer: ZeroedBuffer,
    /// Their last reduced Hessians.
    reduced_terms: ReducedTerms,
    /// The eigenmodes and cubature were read from the disk cache.
    pub from_cache: bool,
}

/// A reusable buffer (a clone starts empty).
#[derive(Debug, Default)]
pub(crate) struct Scratch(std::sync::Mutex<Vec<Vec<f64>>>);

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Scratch::default()
    }
}

impl Scratch {
    /// A buffer at `length` (contents unspecified), to be given back with
    /// [`Scratch::put`]; concurrent takers get buffers of their own.
    pub(crate) fn take(&self, length: usize) -> Vec<f64> {
        let mut buffer = self.0.lock().ok().and_then(|mut pool| pool.pop()).unwrap_or_default();
        buffer.resize(length, 0.0);
        buffer
    }

    pub(crate) fn put(&self, buffer: Vec<f64>) {
        if let Ok(mut pool) = self.0.lock() {
            pool.push(buffer);
        }
    }
}

impl ReducedModel {
    /// Precomputes the reduced model of a 3D model of tetrahedra: skinning
    /// eigenmodes, cubature, maps, reduced mass and forces. Refuses models
    /// with terms it cannot reduce (springs, contact, moving or released
    /// pins), naming them.
    pub fn new(model: &Model, settings: &SubspaceSettings) -> Result<ReducedModel> {
        ReducedModel::with_cache(model, settings, None)
    }

    /// As [`ReducedModel::new`], reading the eigenmodes and cubature from
    /// `cache` (a folder) when it holds them for this mesh, these materials,
    /// pins and settings, and storing them there otherwise.
    ///
    /// One function of about 160 lines: building the reduced model reads or computes the skinning
    /// modes and the cubature (with the cache), then each point's shape-gradient data, the reduced
    /// mass and the exactly reduced terms, which all index the same basis.
    pub fn with_cache(
        model: &Model,
        settings: &SubspaceSettings,
        cache: Option<&std::path::Path>,
    ) -> Result<ReducedModel> {
        ReducedModel::from_source(model, settings, cache, None)
    }

    /// As [`ReducedModel::new`], with the eigenmodes and cubature `bytes` hold
    /// (what [`ReducedModel::precomputed`] wrote for this mesh and settings):
    /// the same subspace, bit for bit, on every machine, including a browser.
    pub fn with_precomputed(model: &Model, settings: &SubspaceSettings, bytes: &[u8]) -> Result<ReducedModel> {
        let given: Precomputed = serde_json::from_slice(bytes).map_err(|error| {
            HookeError::scene(
                "subspace",
                format!("the precomputed subspace could not be read: {error}"),
            )
        })?;
        ReducedModel::from_source(model, settings, None, Some(given))
    }

    /// The eigenmodes and cubature, for [`ReducedModel::with_precomputed`] (JSON).
    pub fn precomputed(&self) -> Vec<u8> {
        serde_json::to_vec(&Precomputed::of(&self.modes, &self.cubature)).expect("numbers serialise")
    }

    fn from_source(
        model: &Model,
        settings: &SubspaceSettings,
        cache: Option<&std::path::Path>,
        given: Option<Precomputed>,
    ) -> Result<ReducedModel> {
        let Mesh::Tetrahedra(mesh) = model.mesh() else {
            return Err(HookeError::scene(
                "subspace",
                "a subspace needs a 3D model of tetrahedra",
            ));
        };
        if let Some((p, pin)) = model
            .pins()
            .iter()
            .enumerate()
            .find(|(_, p)| crate::model::moves(&p.motion, p.release_time))
        {
            return Err(HookeError::scene(
                pin.name(p),
                "a subspace needs pins that hold still for ever (no motion, no release); soft pins ([[attachments]]) may be used instead",
            ));
        }
        if model.tearing_limit().is_some() {
            return Err(HookeError::scene(
                "tearing",
                "a subspace cannot tear elements (its cubature stands for whole clusters)",
            ));
        }
        if model.damping().is_some_and(|d| d.ether_drag != 0.0) {
            return Err(HookeError::scene(
                "damping.ether_drag",
                "a subspace does not apply ether drag; remove it or run in full space",
            ));
        }
        let materials = model.materials();
        if materials.len() != mesh.tets.len() {
            return Err(HookeError::scene(
                "subspace",
                "a subspace needs every element to have a material and no other elastic elements (springs, membranes)",
            ));
        }
        let rest = model.rest_positions();
        let mut elements = 0;
        let mut constant_terms = Vec::new();
        let mut varying_terms = Vec::new();
        for (index, term) in model.terms().iter().enumerate() {
            let capabilities = term.capabilities();
            if term.as_elasticity().is_some() {
                elements += 1;
            } else if capabilities.linear || (capabilities.hessian && is_quadratic(model, index, &rest)?) {
                match term.varies_in_time() {
                    true => varying_terms.push(index),
                    false => constant_terms.push(index),
                }
            } else {
                return Err(HookeError::scene(
                    "subspace",
                    format!(
                        "{} cannot be reduced to the subspace (only elements, soft pins, gravity and loads can)",
                        term.name()
                    ),
                ));
            }
        }
        if elements != 1 {
            return Err(HookeError::scene("subspace", "a subspace needs one body of tetrahedra"));
        }
        let frames: Vec<(Matrix3<f64>, f64)> = mesh
            .tets
            .iter()
            .enumerate()
            .map(|(e, tet)| {
                rest_frame(&mesh.vertices, tet)
                    .ok_or_else(|| HookeError::scene("mesh", format!("element {e} is flat at rest")))
            })
            .collect::<Result<_>>()?;
        let count = settings.point_count(mesh.tets.len());
        let path = cache.map(|directory| {
            let mut key = model.fingerprint(&model.dof_map(0.0));
            for number in [settings.modes, count, settings.seed as usize] {
                key.feed_number(number as u64);
            }
            key.path(directory, "subspace")
        });
        if let Some(given) = &given {
            if !given.fits(mesh.vertices.len(), mesh.tets.len(), settings.modes, count) {
                return Err(HookeError::scene(
                    "subspace",
                    format!(
                        "the precomputed subspace is of another mesh or settings: {} vertices and {} modes, where this scene has {} vertices, {} elements, {} modes and {count} cubature points",
                        given.vertices,
                        given.eigenvalues.len(),
                        mesh.vertices.len(),
                        mesh.tets.len(),
                        settings.modes
                    ),
                ));
            }
        }
        let stored = given.or_else(|| {
            path.as_deref()
                .and_then(disk_cache::load::<Precomputed>)
                .filter(|p| p.fits(mesh.vertices.len(), mesh.tets.len(), settings.modes, count))
        });
        let from_cache = stored.is_some();
        let (modes, cubature) = match stored {
            Some(stored) => stored.into_parts(),
            None => {
                let modes = skinning_eigenmodes(model, settings.modes)?;
                let cubature = material_cubature(mesh, &materials, &modes, &frames, count, settings.seed)?;
                if let Some(path) = &path {
                    disk_cache::store(path, &Precomputed::of(&modes, &cubature));
                }
                (modes, cubature)
            }
        };
        let basis = SkinningBasis::new(&modes, &mesh.vertices);
        let points: Vec<CubaturePoint> = cubature
            .elements
            .iter()
            .zip(&cubature.weights)
            .map(|(&element, &weight)| CubaturePoint {
                element,
                weight,
                material: materials[element].clone(),
            })
            .collect();
        let gradients: Vec<f64> = points
            .iter()
            .flat_map(|point| basis.element_gradients(&mesh.tets[point.element], &frames[point.element].0))
            .collect();
        let d = 3;
        let pattern = model.pattern();
        let mass_values = model.mass().values();
        let mass = basis.reduce_scalar_matrix(|visit| {
            for column in (0..pattern.size).step_by(d) {
                for k in pattern.column_starts[column]..pattern.column_starts[column + 1] {
                    let row = pattern.row_indices[k];
                    if row % d == 0 && mass_values[k] != 0.0 {
                        visit(row / d, column / d, mass_values[k]);
                    }
                }
            }
        });
        let hessian_buffer = ZeroedBuffer::default();
        let constant_loads = reduce_terms(
            model,
            &basis,
            &constant_terms,
            0.0,
            &hessian_buffer,
            &ReducedTerms::default(),
        )?;
        let has_varying_terms = !varying_terms.is_empty();
        let signature = term_signature(model);
        // Many weights on a thin body can make the skinning columns dependent:
        // a singular BᵀMB, which no step could solve with.
        if mass.clone().cholesky().is_none() {
            return Err(HookeError::scene(
                "subspace.modes",
                format!(
                    "the linear-blend skinning basis of {} modes is rank-deficient on this mesh (BᵀMB is singular): use fewer modes",
                    settings.modes
                ),
            ));
        }
        let total_mass = model.mass().lumped().iter().sum();
        let moments = super::skinning::mass_moments(model, &basis);
        Ok(ReducedModel {
            modes,
            basis,
            cubature,
            points,
            gradients,
            mass,
            moments,
            constant_loads,
            has_varying_terms,
            signature,
            total_mass,
            scratch: Scratch::default(),
            hessian_buffer,
            reduced_terms: ReducedTerms::default(),
            from_cache,
        })
    }

    /// r = 12 m.
    pub fn rank(&self) -> usize {
        self.basis.rank()
    }

    /// g₀, g₁, g₂ of point c, concatenated.
    pub fn point_gradients(&self, point: usize) -> &[f64] {
        let q = self.basis.block();
        &self.gradients[3 * q * point..3 * q * (point + 1)]
    }

    /// A_c v as a matrix: entry (c, e) is gₑ·v_c (F − I for v = u).
    pub fn map_product(&self, point: usize, v: &[f64]) -> Matrix3<f64> {
        let q = self.basis.block();
        let nine = crate::linalg::dot3x3(self.point_gradients(point), &v[..3 * q], q);
        Matrix3::from_fn(|c, e| nine[c + 3 * e])
    }

    /// F_c = I + A_c u.
    pub fn deformation_gradient(&self, point: usize, u: &[f64]) -> Matrix3<f64> {
        Matrix3::identity() + self.map_product(point, u)
    }

    /// A_c as a dense 9 × r matrix (checks on small problems).
    pub fn element_map(&self, point: usize) -> DMatrix<f64> {
        let q = self.basis.block();
        let g = self.point_gradients(point);
        let mut map = DMatrix::zeros(9, 3 * q);
        for c in 0..3 {
            for e in 0..3 {
                for jk in 0..q {
                    map[(c + 3 * e, c * q + jk)] = g[e * q + jk];
                }
            }
        }
        map
    }

    /// The reduced soft pins, gravity and loads at `time` (the varying ones
    /// cost O(|V|·12m) to reduce; the others were reduced once).
    pub fn loads(&self, model: &Model, time: f64) -> Result<ReducedLoads> {
        if term_signature(model) != self.signature {
            return Err(HookeError::Solver {
                reason: "the model's terms changed since its subspace was computed: compute the reduced model again"
                    .to_string(),
            });
        }
        if !self.has_varying_terms {
            return Ok(self.constant_loads.clone());
        }
        let varying_terms: Vec<usize> = model
            .terms()
            .iter()
            .enumerate()
            .filter(|(_, t)| t.as_elasticity().is_none() && t.varies_in_time())
            .map(|(index, _)| index)
            .collect();
        let varying = reduce_terms(
            model,
            &self.basis,
            &varying_terms,
            time,
            &self.hessian_buffer,
            &self.reduced_terms,
        )?;
        Ok(ReducedLoads {
            stiffness: &self.constant_loads.stiffness + varying.stiffness,
            force: self
                .constant_loads
                .force
                .iter()
                .zip(&varying.force)
                .map(|(a, b)| a + b)
                .collect(),
            parts: self
                .constant_loads
                .parts
                .iter()
                .chain(&varying.parts)
                .cloned()
                .collect(),
        })
    }

    /// x = X̄ + B u.
    pub fn positions(&self, u: &[f64]) -> Vec<f64> {
        let mut x = self.basis.displacement(u);
        for (chunk, rest) in x.chunks_mut(3).zip(&self.basis.rest) {
            chunk[0] += rest.x;
            chunk[1] += rest.y;
            chunk[2] += rest.z;
        }
        x
    }

    /// The full state x = X̄ + B u, v = B u̇ at `time`.
    pub fn full_state(&self, time: f64, u: &[f64], velocity: &[f64]) -> crate::model::State {
        crate::model::State {
            positions: self.positions(u),
            velocities: self.basis.displacement(velocity),
            time,
        }
    }

    /// The u whose displacement is closest to `displacement` in the mass
    /// norm: (BᵀMB) u = BᵀM d (lumped M).
    pub fn project(&self, model: &Model, displacement: &[f64]) -> Result<Vec<f64>> {
        let weighted: Vec<f64> = displacement
            .iter()
            .enumerate()
            .map(|(i, d)| d * model.mass().of_dof(i))
            .collect();
        let rhs = nalgebra::DVector::from_vec(self.basis.reduce(&weighted));
        let solved = self
            .mass
            .clone()
            .cholesky()
            .ok_or_else(|| HookeError::LinearSolver {
                reason: "the reduced mass BᵀMB is not positive definite".to_string(),
            })?
            .solve(&rhs);
        Ok(solved.as_slice().to_vec())
    }

    /// The subspace coordinates of a state's positions and velocities.
    pub fn project_state(&self, model: &Model, positions: &[f64], velocities: &[f64]) -> Result<(Vec<f64>, Vec<f64>)> {
        let rest = model.rest_positions();
        let displacement: Vec<f64> = positions.iter().zip(&rest).map(|(x, r)| x - r).collect();
        Ok((self.project(model, &displacement)?, self.project(model, velocities)?))
    }
}

/// The cubature of a mesh for its skinning eigenmodes, each material apart.
fn material_cubature(
    mesh: &crate::mesh::TetMesh,
    materials: &[MaterialRef],
    modes: &SkinningEigenmodes,
    frames: &[(Matrix3<f64>, f64)],
    count: usize,
    seed: u64,
) -> Result<Cubature> {
    let m = modes.weights.ncols();
    let features: Vec<Vec<f64>> = mesh
        .tets
        .iter()
        .map(|tet| {
            (0..m)
                .map(|j| tet.iter().map(|&v| modes.weights[(v, j)]).sum::<f64>() / 4.0)
                .collect()
        })
        .collect();
    let volumes: Vec<f64> = frames.iter().map(|f| f.1).collect();
    let centroids: Vec<[f64; 3]> = mesh
        .tets
        .iter()
        .map(|tet| {
            let c = tet.iter().map(|&v| mesh.vertices[v]).sum::<nalgebra::Vector3<f64>>() / 4.0;
            [c.x, c.y, c.z]
        })
        .collect();
    // Materials by value (model and parameters, as they print), however shared.
    let mut material_ids: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut printed: std::collections::HashMap<*const (), usize> = std::collections::HashMap::new();
    let groups: Vec<usize> = materials
        .iter()
        .map(|m| {
            *printed
                .entry(std::sync::Arc::as_ptr(m) as *const ())
                .or_insert_with(|| {
                    let next = material_ids.len();
                    *material_ids.entry(format!("{m:?}")).or_insert(next)
                })
        })
        .collect();
    spectral_cubature(
        &features,
        &modes.eigenvalues,
        &volumes,
        &centroids,
        &groups,
        count,
        seed,
    )
}

/// The eigenmodes and cubature as the disk cache keeps them.
#[derive(serde::Serialize, serde::Deserialize)]
struct Precomputed {
    eigenvalues: Vec<f64>,
    /// W column by column.
    weights: Vec<f64>,
    vertices: usize,
    elements: Vec<usize>,
    element_weights: Vec<f64>,
    clusters: Vec<usize>,
}

impl Precomputed {
    fn of(modes: &SkinningEigenmodes, cubature: &Cubature) -> Precomputed {
        Precomputed {
            eigenvalues: modes.eigenvalues.clone(),
            weights: modes.weights.as_slice().to_vec(),
            vertices: modes.weights.nrows(),
            elements: cubature.elements.clone(),
            element_weights: cubature.weights.clone(),
            clusters: cubature.clusters.clone(),
        }
    }

    /// Whether it is whole and of this mesh's sizes.
    fn fits(&self, vertices: usize, elements: usize, modes: usize, count: usize) -> bool {
        self.vertices == vertices
            && self.eigenvalues.len() == modes
            && self.weights.len() == vertices * modes
            && self.elements.len() == count
            && self.element_weights.len() == count
            && self.clusters.len() == elements
            && self.elements.iter().all(|&e| e < elements)
            && self.weights.iter().chain(&self.eigenvalues).all(|v| v.is_finite())
    }

    fn into_parts(self) -> (SkinningEigenmodes, Cubature) {
        let modes = SkinningEigenmodes {
            weights: DMatrix::from_vec(self.vertices, self.eigenvalues.len(), self.weights),
            eigenvalues: self.eigenvalues,
        };
        let cubature = Cubature {
            elements: self.elements,
            weights: self.element_weights,
            clusters: self.clusters,
        };
        (modes, cubature)
    }
}

/// The sorted names of a model's terms.
fn term_signature(model: &Model) -> Vec<String> {
    let mut names: Vec<String> = model.terms().iter().map(|t| t.name()).collect();
    names.sort();
    names
}

/// The reduced Hessian and force of some terms at `time`, from their
/// Hessian and gradient at rest (exact: they are quadratic or linear).
fn reduce_terms(
    model: &Model,
    basis: &SkinningBasis,
    terms: &[usize],
    time: f64,
    buffer: &ZeroedBuffer,
    reduced_terms: &ReducedTerms,
) -> Result<ReducedLoads> {
    let r = basis.rank();
    let rest = model.rest_positions();
    let pattern = model.pattern();
    let mut parts: Vec<ReducedPart> = Vec::new();
    for kind in [TermKind::Elastic, TermKind::Gravity, TermKind::Contact, TermKind::Load] {
        let of_kind: Vec<usize> = terms
            .iter()
            .copied()
            .filter(|&index| model.terms()[index].kind() == kind)
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        let mut stiffness: Option<DMatrix<f64>> = None;
        let mut gradient = vec![0.0; rest.len()];
        let mut at_rest = 0.0;
        for index in of_kind {
            let term = &model.terms()[index];
            at_rest += term.energy(&rest, time);
            if term.capabilities().linear {
                term.gradient(&rest, time, &mut gradient, false)?;
                continue;
            }
            let mut values = buffer.take(pattern.nonzeros());
            let mut low_rank: Vec<LowRank> = Vec::new();
            let mut target = HessianTarget {
                values: &mut values,
                low_rank: &mut low_rank,
            };
            term.hessian(&rest, time, false, &mut gradient, &mut target, false)?;
            // A term of a few vertices (the held point, soft pins) costs
            // those vertices' columns, not a pass over the whole pattern.
            let columns: Vec<usize> = match term.hessian_vertices(time) {
                Some(vertices) => vertices.iter().flat_map(|&v| 3 * v..3 * v + 3).collect(),
                None => (0..pattern.size).collect(),
            };
            let entries = take_entries(pattern, &mut values, &columns);
            buffer.put(values);
            let reduced = reduced_terms.reduced(index, entries, |entries| reduce_sparse(basis, entries));
            *stiffness.get_or_insert_with(|| DMatrix::zeros(r, r)) += &reduced;
        }
        parts.push(ReducedPart {
            kind,
            at_rest,
            force: basis.reduce(&gradient).iter().map(|g| -g).collect(),
            stiffness,
        });
    }
    let mut stiffness = DMatrix::zeros(r, r);
    let mut force = vec![0.0; r];
    for part in &parts {
        if let Some(q) = &part.stiffness {
            stiffness += q;
        }
        for (total, f) in force.iter_mut().zip(&part.force) {
            *total += f;
        }
    }
    Ok(ReducedLoads {
        stiffness,
        force,
        parts,
    })
}

/// A buffer over the Hessian's pattern that is all zeros between uses: a
/// term's Hessian is written into it and its entries cleared as they are
/// read, so a term of one vertex does not pay for clearing the whole pattern.
#[derive(Debug, Default)]
pub(crate) struct ZeroedBuffer(std::sync::Mutex<Vec<f64>>);

impl Clone for ZeroedBuffer {
    fn clone(&self) -> Self {
        ZeroedBuffer::default()
    }
}

impl ZeroedBuffer {
    /// Zeros at `length` (another taker at the same time gets new ones).
    fn take(&self, length: usize) -> Vec<f64> {
        let mut buffer = self
            .0
            .lock()
            .ok()
            .map(|mut kept| std::mem::take(&mut *kept))
            .unwrap_or_default();
        if buffer.len() != length {
            buffer = vec![0.0; length];
        }
        buffer
    }

    /// Gives back `buffer`, which must be all zeros again.
    fn put(&self, buffer: Vec<f64>) {
        debug_assert!(buffer.iter().all(|v| *v == 0.0));
        if let Ok(mut kept) = self.0.lock() {
            *kept = buffer;
        }
    }
}

/// Whether term `index`'s Hessian is the same at rest and at a displaced
/// point, so that its reduction is exact (soft pins are quadratic).
fn is_quadratic(model: &Model, index: usize, rest: &[f64]) -> Result<bool> {
    let term = &model.terms()[index];
    let hessian_at = |x: &[f64]| -> Result<Vec<f64>> {
        let mut values = vec![0.0; model.pattern().nonzeros()];
        let mut gradient = vec![0.0; x.len()];
        let mut low_rank = Vec::new();
        let mut target = HessianTarget {
            values: &mut values,
            low_rank: &mut low_rank,
        };
        term.hessian(x, 0.0, false, &mut gradient, &mut target, false)?;
        match low_rank.is_empty() {
            true => Ok(values),
            false => Ok(Vec::new()),
        }
    };
    let scale = 0.01 * model.length_scale();
    let displaced: Vec<f64> = rest
        .iter()
        .enumerate()
        .map(|(i, x)| x + scale * ((i as f64 * 0.618_034).fract() - 0.5))
        .collect();
    let (a, b) = (hessian_at(rest)?, hessian_at(&displaced)?);
    let size = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    Ok(!a.is_empty() && a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-10 * size))
}

/// A Hessian's nonzero entries in the given columns of `values` as (row,
/// column, value), cleared from `values` as they are read.
fn take_entries(
    pattern: &crate::linalg::LowerPattern,
    values: &mut [f64],
    columns: &[usize],
) -> Vec<(usize, usize, f64)> {
    let mut entries = Vec::new();
    for &column in columns {
        for k in pattern.column_starts[column]..pattern.column_starts[column + 1] {
            let value = std::mem::take(&mut values[k]);
            if value != 0.0 {
                entries.push((pattern.row_indices[k], column, value));
            }
        }
    }
    entries
}

/// BᵀHB for a sparse H given by its lower triangle's entries (row, column,
/// value) over the DOFs: H's entry between coordinate c of vertex a and
/// coordinate e of vertex b couples entry jk of block c and entry lp of block
/// e through yₐ and y_b.
fn reduce_sparse(basis: &SkinningBasis, entries: &[(usize, usize, f64)]) -> DMatrix<f64> {
    let q = basis.block();
    let mut out = DMatrix::zeros(basis.rank(), basis.rank());
    let mut rows: Option<(usize, Vec<f64>, usize, Vec<f64>)> = None;
    for &(row, column, value) in entries {
        let (a, c, b, e) = (row / 3, row % 3, column / 3, column % 3);
        if rows.as_ref().is_none_or(|(ra, _, rb, _)| (*ra, *rb) != (a, b)) {
            rows = Some((a, basis.vertex_row(a), b, basis.vertex_row(b)));
        }
        let (_, ya, _, yb) = rows.as_ref().expect("set above");
        for jk in 0..q {
            let left = value * ya[jk];
            for lp in 0..q {
                let (i1, i2) = (c * q + jk, e * q + lp);
                let v = left * yb[lp];
                out[(i1, i2)] += v;
                if row != column {
                    out[(i2, i1)] += v;
                }
            }
        }
    }
    out
}

/// The reduced Hessian of each term reduced again at each step, with the
/// entries it came from: a soft pin's or the held point's Hessian stays the
/// same over many steps while its force moves, and an exact match of the
/// entries gives back the same matrix without the O(entries · q²) product.
#[derive(Debug, Default)]
pub(crate) struct ReducedTerms(std::sync::Mutex<std::collections::HashMap<usize, ReducedTerm>>);

type ReducedTerm = (Vec<(usize, usize, f64)>, DMatrix<f64>);

impl Clone for ReducedTerms {
    fn clone(&self) -> Self {
        ReducedTerms::default()
    }
}

impl ReducedTerms {
    /// The reduction of term `index`'s Hessian `entries`: the kept one when
    /// the entries are those it came from, else `reduce(entries)`, kept.
    fn reduced(
        &self,
        index: usize,
        entries: Vec<(usize, usize, f64)>,
        reduce: impl FnOnce(&[(usize, usize, f64)]) -> DMatrix<f64>,
    ) -> DMatrix<f64> {
        let Ok(mut kept) = self.0.lock() else {
            return reduce(&entries);
        };
        match kept.get(&index) {
            Some((from, matrix)) if *from == entries => matrix.clone(),
            _ => {
                let matrix = reduce(&entries);
                kept.insert(index, (entries, matrix.clone()));
                matrix
            }
        }
    }
}
