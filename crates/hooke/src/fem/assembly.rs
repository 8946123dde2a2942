//! Global energy, gradient and Hessian of the elastic potential.
//!
//! Elements are evaluated in parallel, each into its own slot; the global
//! vectors are then *gathered* (each global entry sums its element contributions
//! in a fixed order). No floating-point sum depends on how work was split among
//! threads, so results are bit-for-bit identical for any thread count.

use super::element::{packed_index, ElementGeometry, PACKED_HESSIAN_LEN};
use super::mass::consistent_entry;
use super::spring::Spring;
use crate::error::{HookeError, Result};
use crate::linalg::LowerPattern;
use crate::material::{MaterialRef, Want};
use crate::mesh::TetMesh;
use nalgebra::Vector3;
use rayon::prelude::*;
use std::sync::Mutex;

/// Per-element results, kept between calls to avoid reallocating.
#[derive(Default)]
struct Workspace {
    energies: Vec<f64>,
    gradients: Vec<[f64; 12]>,
    hessians: Vec<[f64; PACKED_HESSIAN_LEN]>,
}

/// Elements run in parallel in blocks of at least this many, to amortise scheduling.
const PARALLEL_MIN_ELEMENTS: usize = 256;

/// Assembles the elastic potential of a tetrahedral mesh over all 3n DOFs.
pub struct Assembler {
    springs: Vec<Spring>,
    spring_blocks: Vec<SpringBlocks>,
    tets: Vec<[usize; 4]>,
    geometry: Vec<ElementGeometry>,
    materials: Vec<MaterialRef>,
    pattern: LowerPattern,
    /// For Hessian entry k: sources[source_starts[k]..source_starts[k+1]] are
    /// indices e·78 + packed local index into the element Hessians.
    hessian_source_starts: Vec<usize>,
    hessian_sources: Vec<usize>,
    /// For vertex v: the (element · 4 + local vertex) slots that touch it.
    vertex_source_starts: Vec<usize>,
    vertex_sources: Vec<usize>,
    workspace: Mutex<Workspace>,
}

impl Assembler {
    /// Precomputes geometry and the sparsity pattern. The mesh must be oriented.
    pub fn new(mesh: &TetMesh, materials: Vec<MaterialRef>, springs: Vec<Spring>) -> Result<Self> {
        if materials.len() != mesh.tet_count() {
            return Err(HookeError::Mesh {
                reason: format!("{} materials for {} elements", materials.len(), mesh.tet_count()),
            });
        }
        let geometry = ElementGeometry::for_mesh(mesh)?;
        let vertex_count = mesh.vertex_count();

        // Vertex adjacency: for each vertex j, itself and its neighbours i > j.
        let mut neighbours: Vec<Vec<usize>> = (0..vertex_count).map(|v| vec![v]).collect();
        for tet in &mesh.tets {
            for &a in tet {
                for &b in tet {
                    if a > b {
                        neighbours[b].push(a);
                    }
                }
            }
        }
        for (s, spring) in springs.iter().enumerate() {
            let [a, b] = spring.vertices;
            if a == b || a.max(b) >= vertex_count {
                return Err(HookeError::Mesh {
                    reason: format!("spring {s} joins vertices {a} and {b}: they must differ and exist"),
                });
            }
            neighbours[a.min(b)].push(a.max(b));
        }
        for list in &mut neighbours {
            list.sort_unstable();
            list.dedup();
        }
        let mut columns = Vec::with_capacity(3 * vertex_count);
        for (j, list) in neighbours.iter().enumerate() {
            for c in 0..3 {
                let mut rows = Vec::with_capacity(3 * list.len());
                for &i in list {
                    for a in 0..3 {
                        if i > j || a >= c {
                            rows.push(3 * i + a);
                        }
                    }
                }
                columns.push(rows);
            }
        }
        let pattern = LowerPattern::from_columns(columns);

        // Which element entries feed each pattern entry.
        let mut contributions: Vec<(usize, usize)> = Vec::with_capacity(mesh.tet_count() * PACKED_HESSIAN_LEN);
        for (e, tet) in mesh.tets.iter().enumerate() {
            for p in 0..12 {
                for q in 0..=p {
                    let r = 3 * tet[p / 3] + p % 3;
                    let s = 3 * tet[q / 3] + q % 3;
                    let (row, column) = if r >= s { (r, s) } else { (s, r) };
                    let position = pattern
                        .position(row, column)
                        .expect("every element entry is in the pattern built from the same elements");
                    contributions.push((position, e * PACKED_HESSIAN_LEN + packed_index(p, q)));
                }
            }
        }
        // Stable sort by position keeps element order within each entry: a fixed summation order.
        contributions.sort_by_key(|&(position, _)| position);
        let (hessian_source_starts, hessian_sources) = group_by_key(pattern.nonzeros(), contributions);

        let mut vertex_slots = Vec::with_capacity(4 * mesh.tet_count());
        for (e, tet) in mesh.tets.iter().enumerate() {
            for (local, &v) in tet.iter().enumerate() {
                vertex_slots.push((v, 4 * e + local));
            }
        }
        vertex_slots.sort_by_key(|&(v, _)| v);
        let (vertex_source_starts, vertex_sources) = group_by_key(vertex_count, vertex_slots);

        let spring_blocks = springs
            .iter()
            .map(|s| SpringBlocks::locate(&pattern, s.vertices))
            .collect();
        Ok(Assembler {
            springs,
            spring_blocks,
            tets: mesh.tets.clone(),
            geometry,
            materials,
            pattern,
            hessian_source_starts,
            hessian_sources,
            vertex_source_starts,
            vertex_sources,
            workspace: Mutex::new(Workspace::default()),
        })
    }

    /// Pattern of the lower triangle of the 3n×3n Hessian.
    pub fn pattern(&self) -> &LowerPattern {
        &self.pattern
    }

    /// Sums per-element packed 12×12 matrices into values on [`Self::pattern`]
    /// (the fixed-order gather of the Hessian). Springs contribute nothing.
    pub fn gather_element_matrices(&self, elements: &[[f64; PACKED_HESSIAN_LEN]], values: &mut [f64]) {
        let flat: &[f64] = elements.as_flattened();
        values
            .par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .for_each(|(k, value)| {
                *value = self.hessian_sources[self.hessian_source_starts[k]..self.hessian_source_starts[k + 1]]
                    .iter()
                    .map(|&source| flat[source])
                    .sum();
            });
    }

    /// Sums per-element 12-vectors (ordered vertex, axis) into a full vector, in a fixed order.
    pub fn gather_element_vectors(&self, elements: &[[f64; 12]], out: &mut [f64]) {
        out.par_chunks_mut(3).enumerate().for_each(|(v, slot)| {
            let mut sum = [0.0; 3];
            for &source in &self.vertex_sources[self.vertex_source_starts[v]..self.vertex_source_starts[v + 1]] {
                let (e, local) = (source / 4, source % 4);
                for a in 0..3 {
                    sum[a] += elements[e][3 * local + a];
                }
            }
            slot.copy_from_slice(&sum);
        });
    }

    pub fn tets(&self) -> &[[usize; 4]] {
        &self.tets
    }

    pub fn geometry(&self) -> &[ElementGeometry] {
        &self.geometry
    }

    pub fn springs(&self) -> &[Spring] {
        &self.springs
    }

    pub fn materials(&self) -> &[MaterialRef] {
        &self.materials
    }

    /// Element masses ρV.
    pub fn element_masses(&self) -> Vec<f64> {
        self.geometry
            .iter()
            .zip(&self.materials)
            .map(|(g, m)| g.rest_volume * m.density())
            .collect()
    }

    fn corners(&self, e: usize, x: &[f64]) -> [Vector3<f64>; 4] {
        self.tets[e].map(|v| Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]))
    }

    /// Strain energy density ψ of every element at positions `x` (+∞ where undefined).
    pub fn energy_densities(&self, x: &[f64]) -> Vec<f64> {
        (0..self.tets.len())
            .into_par_iter()
            .with_min_len(PARALLEL_MIN_ELEMENTS)
            .map(|e| {
                let f = self.geometry[e].deformation_gradient(&self.corners(e, x));
                self.materials[e].evaluate(&f, Want::Energy).energy_density
            })
            .collect()
    }

    /// Total elastic energy Σ Vₑψₑ; +∞ when any element is outside its model's domain.
    pub fn energy(&self, x: &[f64]) -> f64 {
        let densities = self.energy_densities(x);
        let tets: f64 = densities
            .iter()
            .zip(&self.geometry)
            .map(|(psi, g)| psi * g.rest_volume)
            .sum();
        tets + self.spring_energy(x)
    }

    fn point(x: &[f64], v: usize) -> Vector3<f64> {
        Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2])
    }

    fn spring_energy(&self, x: &[f64]) -> f64 {
        self.springs
            .iter()
            .map(|s| s.energy(&Self::point(x, s.vertices[0]), &Self::point(x, s.vertices[1])))
            .sum()
    }

    /// Adds the springs' gradient and (optionally) Hessian, in spring order.
    fn add_springs(&self, x: &[f64], project: bool, gradient: Option<&mut [f64]>, hessian: Option<&mut [f64]>) {
        if let Some(gradient) = gradient {
            for s in &self.springs {
                let [a, b] = s.vertices;
                let g = s.gradient(&Self::point(x, a), &Self::point(x, b));
                for k in 0..3 {
                    gradient[3 * a + k] += g[k];
                    gradient[3 * b + k] -= g[k];
                }
            }
        }
        if let Some(values) = hessian {
            for (s, blocks) in self.springs.iter().zip(&self.spring_blocks) {
                let [a, b] = s.vertices;
                let h = s.hessian_block(&Self::point(x, a), &Self::point(x, b), project);
                blocks.add(values, &h);
            }
        }
    }

    /// Adds the springs' material stiffness k ŝŝᵀ (no geometric term) to `values`.
    pub fn add_spring_material_stiffness(&self, x: &[f64], values: &mut [f64]) {
        for (s, blocks) in self.springs.iter().zip(&self.spring_blocks) {
            let [a, b] = s.vertices;
            blocks.add(values, &s.material_block(&Self::point(x, a), &Self::point(x, b)));
        }
    }

    /// Energy and gradient (∂E/∂x, all 3n DOFs, into `gradient`).
    pub fn energy_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> Result<f64> {
        self.evaluate(true, &self.geometry, x, Want::Stress, Some(gradient), None)
    }

    /// Energy, gradient and Hessian values on [`Self::pattern`]; `project` clamps
    /// each element's ∂P/∂F to positive semi-definite.
    pub fn energy_gradient_hessian(
        &self,
        x: &[f64],
        project: bool,
        gradient: Option<&mut [f64]>,
        hessian_values: &mut [f64],
    ) -> Result<f64> {
        self.evaluate(
            true,
            &self.geometry,
            x,
            Want::Stiffness { project },
            gradient,
            Some(hessian_values),
        )
    }

    /// The elements' (and with `include_springs`, the springs') energy and derivatives.
    fn evaluate(
        &self,
        include_springs: bool,
        geometry_of: &[ElementGeometry],
        x: &[f64],
        want: Want,
        gradient: Option<&mut [f64]>,
        hessian_values: Option<&mut [f64]>,
    ) -> Result<f64> {
        let element_count = self.tets.len();
        let mut guard = self.workspace.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let workspace = &mut *guard;
        workspace.energies.resize(element_count, 0.0);
        workspace.gradients.resize(element_count, [0.0; 12]);
        let want_hessian = want.derivative().is_some();
        if want_hessian {
            workspace.hessians.resize(element_count, [0.0; PACKED_HESSIAN_LEN]);
        }
        let hessians: &mut [[f64; PACKED_HESSIAN_LEN]] = if want_hessian { &mut workspace.hessians } else { &mut [] };

        let compute = |e: usize, energy: &mut f64, element_gradient: &mut [f64; 12]| {
            let geometry = &geometry_of[e];
            let f = geometry.deformation_gradient(&self.corners(e, x));
            let evaluation = self.materials[e].evaluate(&f, want);
            *energy = evaluation.energy_density * geometry.rest_volume;
            if !evaluation.is_undefined() {
                *element_gradient = geometry.gradient(&evaluation.first_piola);
            }
            evaluation
        };
        if want_hessian {
            workspace
                .energies
                .par_iter_mut()
                .zip(workspace.gradients.par_iter_mut())
                .zip(hessians.par_iter_mut())
                .enumerate()
                .with_min_len(PARALLEL_MIN_ELEMENTS)
                .for_each(|(e, ((energy, element_gradient), element_hessian))| {
                    let evaluation = compute(e, energy, element_gradient);
                    if let Some(derivative) = &evaluation.first_piola_derivative {
                        *element_hessian = geometry_of[e].stiffness(derivative);
                    }
                });
        } else {
            workspace
                .energies
                .par_iter_mut()
                .zip(workspace.gradients.par_iter_mut())
                .enumerate()
                .with_min_len(PARALLEL_MIN_ELEMENTS)
                .for_each(|(e, (energy, element_gradient))| {
                    compute(e, energy, element_gradient);
                });
        }

        if let Some(e) = workspace.energies.iter().position(|v| !v.is_finite()) {
            let f = geometry_of[e].deformation_gradient(&self.corners(e, x));
            return Err(HookeError::InvalidDeformation {
                element: e,
                reason: format!(
                    "{} energy is not finite at this deformation (det F = {:.3e}): {}",
                    self.materials[e].name(),
                    f.determinant(),
                    if f.determinant() <= 0.0 && f.determinant() > -1e100 {
                        "the element is inverted and this model is undefined there"
                    } else {
                        "the state has diverged (the time step is likely too large for this method)"
                    }
                ),
            });
        }
        let springs = if include_springs { self.spring_energy(x) } else { 0.0 };
        let energy: f64 = workspace.energies.iter().sum::<f64>() + springs;

        let mut gradient = gradient;
        let mut hessian_values = hessian_values;
        if let Some(gradient) = gradient.as_deref_mut() {
            self.gather_element_vectors(&workspace.gradients, gradient);
        }
        if let Some(values) = hessian_values.as_deref_mut() {
            self.gather_element_matrices(&workspace.hessians, values);
        }
        if include_springs {
            self.add_springs(x, want.derivative().unwrap_or(false), gradient, hessian_values);
        }
        Ok(energy)
    }

    /// Element geometry with `reference` (full positions) as the rest shape, for
    /// the viscoelastic damping of seed 001 §2.6. Elements flat or inverted in the
    /// reference contribute nothing (zero volume).
    pub fn reference_geometry(&self, reference: &[f64]) -> Vec<ElementGeometry> {
        (0..self.tets.len())
            .into_par_iter()
            .with_min_len(PARALLEL_MIN_ELEMENTS)
            .map(|e| ElementGeometry::from_corners(&self.corners(e, reference)).unwrap_or(ElementGeometry::EMPTY))
            .collect()
    }

    /// Energy with `geometry` as the rest shape; +∞ where a material is undefined.
    pub fn energy_with(&self, geometry: &[ElementGeometry], x: &[f64]) -> f64 {
        (0..self.tets.len())
            .into_par_iter()
            .with_min_len(PARALLEL_MIN_ELEMENTS)
            .map(|e| {
                let f = geometry[e].deformation_gradient(&self.corners(e, x));
                self.materials[e].evaluate(&f, Want::Energy).energy_density * geometry[e].rest_volume
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum()
    }

    /// Energy, gradient and (optionally) Hessian values with `geometry` as the rest shape.
    pub fn evaluate_with(
        &self,
        geometry: &[ElementGeometry],
        x: &[f64],
        project: bool,
        gradient: &mut [f64],
        hessian_values: Option<&mut [f64]>,
    ) -> Result<f64> {
        let want = if hessian_values.is_some() {
            Want::Stiffness { project }
        } else {
            Want::Stress
        };
        self.evaluate(false, geometry, x, want, Some(gradient), hessian_values)
    }

    /// Consistent mass matrix values on [`Self::pattern`].
    pub fn consistent_mass_values(&self) -> Vec<f64> {
        let element_masses = self.element_masses();
        let mut values = vec![0.0; self.pattern.nonzeros()];
        for (e, tet) in self.tets.iter().enumerate() {
            for i in 0..4 {
                for j in 0..4 {
                    for a in 0..3 {
                        let (r, s) = (3 * tet[i] + a, 3 * tet[j] + a);
                        if r >= s {
                            if let Some(k) = self.pattern.position(r, s) {
                                values[k] += consistent_entry(element_masses[e], i, j);
                            }
                        }
                    }
                }
            }
        }
        values
    }
}

/// Where a spring's 3×3 blocks live in the lower-triangle pattern: the two
/// diagonal blocks (lower triangles) and the off-diagonal block (row: the larger vertex).
struct SpringBlocks {
    diagonal: [[Option<usize>; 6]; 2],
    off_diagonal: [usize; 9],
}

impl SpringBlocks {
    fn locate(pattern: &LowerPattern, [a, b]: [usize; 2]) -> SpringBlocks {
        let lower = |v: usize| {
            let mut slots = [None; 6];
            let mut n = 0;
            for r in 0..3 {
                for c in 0..=r {
                    slots[n] = pattern.position(3 * v + r, 3 * v + c);
                    n += 1;
                }
            }
            slots
        };
        let (high, low) = (a.max(b), a.min(b));
        let off_diagonal = std::array::from_fn(|k| {
            pattern
                .position(3 * high + k / 3, 3 * low + k % 3)
                .expect("spring edges are in the pattern")
        });
        SpringBlocks {
            diagonal: [lower(a), lower(b)],
            off_diagonal,
        }
    }

    /// Adds [[H, −H], [−H, H]] (H symmetric).
    fn add(&self, values: &mut [f64], h: &nalgebra::Matrix3<f64>) {
        for slots in &self.diagonal {
            let mut n = 0;
            for r in 0..3 {
                for c in 0..=r {
                    if let Some(k) = slots[n] {
                        values[k] += h[(r, c)];
                    }
                    n += 1;
                }
            }
        }
        for (k, &position) in self.off_diagonal.iter().enumerate() {
            values[position] -= h[(k / 3, k % 3)];
        }
    }
}

/// Groups (key, value) pairs sorted by key into CSR-style (starts, values) over `key_count` keys.
fn group_by_key(key_count: usize, pairs: Vec<(usize, usize)>) -> (Vec<usize>, Vec<usize>) {
    let mut starts = vec![0; key_count + 1];
    for &(key, _) in &pairs {
        starts[key + 1] += 1;
    }
    for k in 0..key_count {
        starts[k + 1] += starts[k];
    }
    (starts, pairs.into_iter().map(|(_, value)| value).collect())
}
