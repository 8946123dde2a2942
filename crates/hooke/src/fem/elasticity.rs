//! The elastic energy of a set of elements of one kind, each with its
//! material: W = Σₑ measureₑ ψₑ(Fₑ), with its gradient and Hessian, assembled
//! in parallel and gathered in a fixed order ([`super::ElementGather`]).

use super::gather::ElementGather;
use super::kind::ElementKind;
use crate::error::{HookeError, Result};
use crate::linalg::LowerPattern;
use crate::material::laplacian_weight::StretchSamples;
use crate::material::{MaterialRef, Want};
use crate::model::tearing::{Tearable, Torn, TornMask};
use crate::model::{vertex_point, ElasticityTerm, EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// Elements run in parallel in blocks of at least this many, to amortise scheduling.
const PARALLEL_MIN_ELEMENTS: usize = 256;
/// Elements whose energies and stresses are asked of their material in one
/// call (the polar-rotation models decompose sixteen at a time).
const BATCH: usize = 32;

/// Per-element results, kept between calls to avoid reallocating.
#[derive(Default)]
struct Workspace {
    energies: Vec<f64>,
    gradients: Vec<f64>,
    hessians: Vec<f64>,
    /// What the per-element results above were computed for, when they hold
    /// a Hessian: a second Hessian at the same point only gathers them again.
    /// EigenFit's refit and a semi-implicit step both linearise at xₙ.
    hessian_at: Option<HessianKey>,
}

/// A Hessian evaluation: the positions, the projection, and how many
/// elements were torn (tearing only adds, so the count names the mask).
#[derive(PartialEq)]
struct HessianKey {
    x: Vec<f64>,
    project: bool,
    torn: usize,
}

/// Elasticity of elements of kind E.
pub struct Elasticity<E: ElementKind> {
    /// Vertices of each element, flat (E::NODES per element).
    connectivity: Arc<Vec<usize>>,
    geometry: Arc<Vec<E::Geometry>>,
    materials: Vec<MaterialRef>,
    /// Whether every material is defined under inversion (asked once per step).
    defined_under_inversion: bool,
    gather: Option<Arc<ElementGather>>,
    /// For each run of [`BATCH`] elements: whether they share one material
    /// and all have measure, so that one call to it serves them all.
    uniform_batches: Vec<bool>,
    /// Elements torn away (shared with the terms built from this one).
    torn: Arc<TornMask>,
    workspace: Mutex<Workspace>,
    kind: PhantomData<E>,
}

impl<E: ElementKind> Elasticity<E> {
    /// Elements given by their vertices, at rest at `rest` (all DOFs, E::DIMENSION
    /// per vertex). Every element must have positive measure there.
    pub fn new(elements: &[&[usize]], materials: Vec<MaterialRef>, rest: &[f64]) -> Result<Self> {
        if materials.len() != elements.len() {
            return Err(HookeError::Mesh {
                reason: format!("{} materials for {} elements", materials.len(), elements.len()),
            });
        }
        let connectivity: Vec<usize> = elements.iter().flat_map(|e| e.iter().copied()).collect();
        let geometry = connectivity
            .chunks(E::NODES)
            .enumerate()
            .map(|(e, vertices)| {
                E::geometry(&corners::<E>(vertices, rest)).ok_or_else(|| HookeError::Mesh {
                    reason: format!("element {e} ({}) is flat or inverted at rest", E::name()),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Elasticity {
            torn: Arc::new(TornMask::new(geometry.len())),
            uniform_batches: uniform_batches::<E>(&materials, &geometry),
            connectivity: Arc::new(connectivity),
            geometry: Arc::new(geometry),
            defined_under_inversion: defined_under_inversion(&materials),
            materials,
            gather: None,
            workspace: Mutex::new(Workspace::default()),
            kind: PhantomData,
        })
    }

    fn count(&self) -> usize {
        self.geometry.len()
    }

    fn deformation_gradient(&self, e: usize, x: &[f64]) -> Matrix3<f64> {
        E::deformation_gradient_at(
            &self.geometry[e],
            &self.connectivity[e * E::NODES..(e + 1) * E::NODES],
            x,
        )
    }

    fn gather(&self) -> &ElementGather {
        self.gather
            .as_deref()
            .expect("a model binds its terms to its pattern before evaluating them")
    }

    fn sibling(&self, geometry: Arc<Vec<E::Geometry>>, materials: Vec<MaterialRef>) -> Elasticity<E> {
        Elasticity {
            connectivity: self.connectivity.clone(),
            uniform_batches: uniform_batches::<E>(&materials, &geometry),
            geometry,
            defined_under_inversion: defined_under_inversion(&materials),
            materials,
            gather: self.gather.clone(),
            torn: self.torn.clone(),
            workspace: Mutex::new(Workspace::default()),
            kind: PhantomData,
        }
    }

    /// The energy, and the gradient and Hessian when asked for.
    fn evaluate(
        &self,
        x: &[f64],
        want: Want,
        gradient: Option<(&mut [f64], bool)>,
        hessian: Option<(&mut [f64], bool)>,
    ) -> Result<f64> {
        let count = self.count();
        let local = E::NODES * E::DIMENSION;
        let mut guard = self.workspace.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let workspace = &mut *guard;
        workspace.energies.resize(count, 0.0);
        workspace.gradients.resize(count * local, 0.0);
        let want_hessian = want.derivative().is_some();
        if want_hessian {
            workspace.hessians.resize(count * E::PACKED, 0.0);
        }
        let key = want.derivative().map(|project| HessianKey {
            x: x.to_vec(),
            project,
            torn: self.torn.count(),
        });
        let repeated = key.is_some() && workspace.hessian_at == key;
        // Elements of zero measure (flat in a rebased rest shape) and torn
        // elements contribute nothing.
        let compute = |e: usize, energy: &mut f64, element_gradient: &mut [f64]| {
            let geometry = &self.geometry[e];
            if self.torn.is_torn(e) {
                *energy = 0.0;
                element_gradient.fill(0.0);
                return None;
            }
            let f = self.deformation_gradient(e, x);
            let measure = E::measure(geometry);
            let evaluation = self.materials[e].evaluate(&f, if measure > 0.0 { want } else { Want::Energy });
            if measure == 0.0 {
                *energy = 0.0;
                element_gradient.fill(0.0);
                return None;
            }
            *energy = evaluation.energy_density * measure;
            if !evaluation.is_undefined() {
                E::gradient(geometry, &evaluation.first_piola, element_gradient);
            }
            Some(evaluation)
        };
        if repeated {
            // The per-element energies, gradients and Hessians are those of this call.
        } else if want_hessian {
            workspace
                .energies
                .par_iter_mut()
                .zip(workspace.gradients.par_chunks_mut(local))
                .zip(workspace.hessians.par_chunks_mut(E::PACKED))
                .enumerate()
                .with_min_len(PARALLEL_MIN_ELEMENTS)
                .for_each(|(e, ((energy, element_gradient), element_hessian))| {
                    match compute(e, energy, element_gradient) {
                        Some(evaluation) => {
                            if let Some(derivative) = &evaluation.first_piola_derivative {
                                E::stiffness(&self.geometry[e], derivative, element_hessian);
                            }
                        }
                        None => element_hessian.fill(0.0),
                    }
                });
        } else {
            // Runs of elements of one material go to it together.
            workspace
                .energies
                .par_chunks_mut(BATCH)
                .zip(workspace.gradients.par_chunks_mut(BATCH * local))
                .enumerate()
                .with_min_len(PARALLEL_MIN_ELEMENTS / BATCH)
                .for_each(|(batch, (energies, gradients))| {
                    let first = batch * BATCH;
                    let mut stresses = [Matrix3::zeros(); BATCH];
                    if self.evaluate_batch(first, x, want, energies, &mut stresses) {
                        for (i, (energy, stress)) in energies.iter_mut().zip(&stresses).enumerate() {
                            let geometry = &self.geometry[first + i];
                            *energy *= E::measure(geometry);
                            if energy.is_finite() {
                                E::gradient(geometry, stress, &mut gradients[i * local..(i + 1) * local]);
                            }
                        }
                    } else {
                        for (i, energy) in energies.iter_mut().enumerate() {
                            compute(first + i, energy, &mut gradients[i * local..(i + 1) * local]);
                        }
                    }
                });
        }
        workspace.hessian_at = None;
        if let Some(e) = workspace.energies.iter().position(|v| !v.is_finite()) {
            return Err(self.undefined_error(e, x));
        }
        workspace.hessian_at = key;
        let energy: f64 = workspace.energies.iter().sum();
        if let Some((gradient, overwrite)) = gradient {
            self.gather().vectors(&workspace.gradients, gradient, overwrite);
        }
        if let Some((values, overwrite)) = hessian {
            self.gather().matrices(&workspace.hessians, values, overwrite);
        }
        Ok(energy)
    }

    /// ψ and P (as `want`, energy or stress) of the elements from `first` on,
    /// as many as `densities` holds, by one call to their material when they
    /// all share it, none is torn and all have measure; false, computing
    /// nothing, otherwise.
    fn evaluate_batch(
        &self,
        first: usize,
        x: &[f64],
        want: Want,
        densities: &mut [f64],
        stresses: &mut [Matrix3<f64>; BATCH],
    ) -> bool {
        let count = densities.len();
        let whole = self.torn.count() == 0 || (first..first + count).all(|e| !self.torn.is_torn(e));
        if !(self.uniform_batches[first / BATCH] && whole) {
            return false;
        }
        let f: [Matrix3<f64>; BATCH] = std::array::from_fn(|i| match i < count {
            true => self.deformation_gradient(first + i, x),
            false => Matrix3::identity(),
        });
        self.materials[first].evaluate_stresses(&f[..count], want, densities, &mut stresses[..count]);
        true
    }

    fn undefined_error(&self, e: usize, x: &[f64]) -> HookeError {
        let determinant = self.deformation_gradient(e, x).determinant();
        HookeError::InvalidDeformation {
            element: e,
            reason: format!(
                "{} energy is not finite at this deformation (det F = {determinant:.3e}): {}",
                self.materials[e].name(),
                if determinant <= 0.0 && determinant > -1e100 {
                    "the element is inverted and this model is undefined there"
                } else {
                    "the state has diverged (the time step is likely too large for this method)"
                }
            ),
        }
    }
}

/// Per run of [`BATCH`] elements: one material (the same shared value) and
/// positive measure throughout.
fn uniform_batches<E: ElementKind>(materials: &[MaterialRef], geometry: &[E::Geometry]) -> Vec<bool> {
    materials
        .chunks(BATCH)
        .zip(geometry.chunks(BATCH))
        .map(|(materials, geometry)| {
            materials.iter().all(|m| Arc::ptr_eq(m, &materials[0])) && geometry.iter().all(|g| E::measure(g) > 0.0)
        })
        .collect()
}

fn defined_under_inversion(materials: &[MaterialRef]) -> bool {
    materials.iter().all(|m| m.capabilities().defined_under_inversion)
}

/// The rest corners of an element (z = 0 in 2D).
fn corners<E: ElementKind>(vertices: &[usize], x: &[f64]) -> Vec<Vector3<f64>> {
    vertices.iter().map(|&v| vertex_point(x, v, E::DIMENSION)).collect()
}

impl<E: ElementKind> EnergyTerm for Elasticity<E> {
    fn name(&self) -> String {
        format!("elasticity of {} {}", self.count(), E::name())
    }

    fn kind(&self) -> TermKind {
        TermKind::Elastic
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            defined_under_inversion: self.defined_under_inversion,
            ..TermCapabilities::SMOOTH
        }
    }

    fn couplings(&self, coupled: &mut dyn FnMut(&[usize])) {
        self.connectivity.chunks(E::NODES).for_each(coupled);
    }

    fn bind(&mut self, pattern: &LowerPattern, dimension: usize) {
        debug_assert_eq!(dimension, E::DIMENSION);
        self.gather = Some(Arc::new(ElementGather::new(
            &self.connectivity,
            E::NODES,
            E::DIMENSION,
            pattern,
        )));
    }

    fn overwrites(&self) -> bool {
        true
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        self.energy_densities(x)
            .iter()
            .zip(self.geometry.iter())
            .map(|(psi, g)| if E::measure(g) > 0.0 { psi * E::measure(g) } else { 0.0 })
            .sum()
    }

    fn gradient(&self, x: &[f64], _time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        self.evaluate(x, Want::Stress, Some((gradient, overwrite)), None)
    }

    fn hessian(
        &self,
        x: &[f64],
        _time: f64,
        project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> Result<f64> {
        self.evaluate(
            x,
            Want::Stiffness { project },
            Some((gradient, overwrite)),
            Some((hessian.values, overwrite)),
        )
    }

    fn projective(&self) -> bool {
        self.materials.iter().all(|m| m.capabilities().projective)
    }

    fn add_laplacian(&self, _time: f64, stretches: &StretchSamples, values: &mut [f64]) {
        // Each element adds k V Σ (∇Nₐ·∇N_b) on the diagonal of its vertex
        // pairs' blocks, k from its material's uniaxial stiffness.
        let weights = laplacian_weights(&self.materials, stretches);
        let d = E::DIMENSION;
        let mut packed = vec![0.0; self.count() * E::PACKED];
        packed
            .par_chunks_mut(E::PACKED)
            .with_min_len(PARALLEL_MIN_ELEMENTS)
            .enumerate()
            .for_each(|(e, out)| {
                let geometry = &self.geometry[e];
                let measure = E::measure(geometry);
                if measure <= 0.0 {
                    return;
                }
                // With P = I the element force is V ∇Nₐ for each vertex a.
                let mut scaled_gradients = [0.0; 12];
                E::gradient(geometry, &Matrix3::identity(), &mut scaled_gradients[..E::NODES * d]);
                let weight = weights[e] / measure;
                for a in 0..E::NODES {
                    for b in 0..=a {
                        let ga = &scaled_gradients[a * d..a * d + d];
                        let gb = &scaled_gradients[b * d..b * d + d];
                        let entry = weight * ga.iter().zip(gb).map(|(p, q)| p * q).sum::<f64>();
                        for i in 0..d {
                            out[crate::fem::kind::packed_index(a * d + i, b * d + i)] = entry;
                        }
                    }
                }
            });
        self.gather().matrices(&packed, values, false);
    }

    fn as_tearable(&self) -> Option<&dyn Tearable> {
        Some(self)
    }

    fn as_elasticity(&self) -> Option<&dyn ElasticityTerm> {
        Some(self)
    }
}

/// Each element's Laplacian stiffness k, computed once per distinct material.
fn laplacian_weights(materials: &[MaterialRef], stretches: &StretchSamples) -> Vec<f64> {
    let mut known: Vec<(&MaterialRef, f64)> = Vec::new();
    materials
        .iter()
        .map(|m| match known.iter().find(|(seen, _)| Arc::ptr_eq(seen, m)) {
            Some(&(_, k)) => k,
            None => {
                let k = crate::material::laplacian_weight::material_weight(m.as_ref(), stretches);
                known.push((m, k));
                k
            }
        })
        .collect()
}

impl<E: ElementKind> ElasticityTerm for Elasticity<E> {
    fn element_count(&self) -> usize {
        self.count()
    }

    fn element_vertices(&self, e: usize) -> &[usize] {
        &self.connectivity[e * E::NODES..(e + 1) * E::NODES]
    }

    fn materials(&self) -> &[MaterialRef] {
        &self.materials
    }

    fn deformation_gradients(&self, x: &[f64]) -> Vec<Matrix3<f64>> {
        (0..self.count())
            .into_par_iter()
            .with_min_len(PARALLEL_MIN_ELEMENTS)
            .map(|e| self.deformation_gradient(e, x))
            .collect()
    }

    fn energy_densities(&self, x: &[f64]) -> Vec<f64> {
        let mut densities = vec![0.0; self.count()];
        densities
            .par_chunks_mut(BATCH)
            .enumerate()
            .with_min_len(PARALLEL_MIN_ELEMENTS / BATCH)
            .for_each(|(batch, densities)| {
                let first = batch * BATCH;
                if !self.evaluate_batch(first, x, Want::Energy, densities, &mut [Matrix3::zeros(); BATCH]) {
                    for (i, density) in densities.iter_mut().enumerate() {
                        let e = first + i;
                        *density = match self.torn.is_torn(e) {
                            true => 0.0,
                            false => {
                                self.materials[e]
                                    .evaluate(&self.deformation_gradient(e, x), Want::Energy)
                                    .energy_density
                            }
                        };
                    }
                }
            });
        densities
    }

    fn with_materials(&self, materials: Vec<MaterialRef>) -> Box<dyn EnergyTerm> {
        Box::new(self.sibling(self.geometry.clone(), materials))
    }

    fn rebased(&self, reference: &[f64]) -> Box<dyn EnergyTerm> {
        let geometry = (0..self.count())
            .into_par_iter()
            .with_min_len(PARALLEL_MIN_ELEMENTS)
            .map(|e| E::geometry(&corners::<E>(self.element_vertices(e), reference)).unwrap_or_else(E::empty))
            .collect();
        Box::new(self.sibling(Arc::new(geometry), self.materials.clone()))
    }

    fn add_masses(&self, lumped: &mut [f64], consistent: Option<(&LowerPattern, &mut [f64])>) {
        let share = 1.0 / E::NODES as f64;
        let masses: Vec<f64> = self
            .geometry
            .iter()
            .zip(&self.materials)
            .map(|(g, m)| E::measure(g) * m.density())
            .collect();
        for (vertices, m) in self.connectivity.chunks(E::NODES).zip(&masses) {
            for &v in vertices {
                lumped[v] += share * m;
            }
        }
        let Some((pattern, values)) = consistent else { return };
        let d = E::DIMENSION;
        for (vertices, &m) in self.connectivity.chunks(E::NODES).zip(&masses) {
            for (i, &vi) in vertices.iter().enumerate() {
                for (j, &vj) in vertices.iter().enumerate() {
                    for a in 0..d {
                        let (r, s) = (d * vi + a, d * vj + a);
                        if r >= s {
                            if let Some(k) = pattern.position(r, s) {
                                values[k] += E::consistent_mass(m, i, j);
                            }
                        }
                    }
                }
            }
        }
    }
}

impl<E: ElementKind> Tearable for Elasticity<E> {
    fn tear_overstretched(&self, x: &[f64], limit: f64) -> Torn {
        let overstretched: Vec<(usize, f64)> = (0..self.count())
            .into_par_iter()
            .with_min_len(PARALLEL_MIN_ELEMENTS)
            .filter(|&e| !self.torn.is_torn(e))
            .filter_map(|e| {
                let f = self.deformation_gradient(e, x);
                let largest = f.tr_mul(&f).symmetric_eigenvalues().max().max(0.0).sqrt();
                (largest > limit).then(|| {
                    let measure = E::measure(&self.geometry[e]);
                    (e, self.materials[e].evaluate(&f, Want::Energy).energy_density * measure)
                })
            })
            .collect();
        let mut torn = Torn::default();
        for (e, energy) in overstretched {
            if self.torn.tear(e) {
                torn += Torn {
                    elements: 1,
                    energy: if energy.is_finite() { energy } else { 0.0 },
                };
            }
        }
        torn
    }

    fn torn_mask(&self) -> &TornMask {
        &self.torn
    }
}
