//! The simulated system: a mesh, the terms of its potential energy (elasticity,
//! springs, gravity, loads, contact, …), its mass, pins, damping, obstacles and
//! constraints. It knows nothing about integrators: they ask it for energies,
//! gradients and Hessians, and for the boundary conditions at a time.

mod attachment;
mod barrier_contact;
mod constraints;
mod contact;
mod damping;
mod dofs;
pub mod eigenfit;
mod forces;
mod friction;
mod kept_elastic;
mod mass;
mod obstacle_motion;
mod pins;
mod pointer_spring;
mod selection;
mod state;
mod step_matrix;
mod subspace;
pub mod tearing;
mod term;
mod term_history;
pub(crate) mod vectors;
mod viscoelastic;

pub use attachment::Attachment;
pub use barrier_contact::{BarrierContact, BarrierStiffness, ContactPlane, ContactReport};
pub use constraints::SurfaceConstraint;
pub use contact::{max_penetration, project_out_of_obstacles, vertex_point, ContactPenalty, Obstacle, ObstacleShape};
pub use damping::{Damping, DampingStiffness};
pub use dofs::{DofMap, Restriction};
pub use eigenfit::EigenFit;
pub use forces::{ramp, Gravity, RegionForce, SurfaceLoad};
pub use friction::{Friction, DEFAULT_SLIP_VELOCITY};
pub use mass::{MassKind, MassMatrix};
pub use obstacle_motion::{Keyframe, ObstacleMotion, Pose};
pub use pins::{moves, Motion, Pin, ALL_COMPONENTS};
pub use pointer_spring::PointerSpring;
pub use selection::Selection;
pub use state::State;
pub(crate) use step_matrix::StepMatrix;
pub use subspace::Subspace;
pub use term::{ElasticityTerm, EnergyTerm, HessianTarget, TermCapabilities, TermGroup, TermKind};
pub use term_history::TermHistory;
pub use viscoelastic::RebasedElasticity;

use crate::error::{HookeError, Result};
use crate::linalg::{LowRank, LowerPattern};
use crate::material::MaterialRef;
use crate::mesh::Mesh;
use nalgebra::Vector3;
use std::sync::{Arc, Mutex};

/// The energies of a state by kind (loads are not counted: see [`TermKind::Load`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EnergyParts {
    /// Energy stored by the elastic terms (elements, springs), J.
    pub elastic: f64,
    /// Gravitational potential energy, J (measured from the gravity term's datum).
    pub gravitational: f64,
    /// Contact penalty energy of the obstacles, J.
    pub contact: f64,
}

/// A deformable body (or several, merged into one mesh) with everything acting on it.
pub struct Model {
    mesh: Mesh,
    pattern: Arc<LowerPattern>,
    terms: Vec<Box<dyn EnergyTerm>>,
    mass: MassMatrix,
    /// Masses carried by vertices themselves (spring networks).
    vertex_masses: Vec<f64>,
    pins: Vec<Pin>,
    gravity: Vector3<f64>,
    /// Seconds over which gravity grows to full (0: at once).
    gravity_ramp_time: f64,
    /// Positions the gravitational energy is measured from (None: the rest positions).
    gravity_datum: Option<Vec<f64>>,
    /// Stretches over which the weighted Laplacian's stiffness is fitted.
    laplacian_stretches: crate::material::laplacian_weight::StretchSamples,
    /// Elements stretched beyond this tear after a step (None: nothing tears).
    tearing_limit: Option<f64>,
    obstacles: Vec<Obstacle>,
    constraints: Vec<SurfaceConstraint>,
    damping: Option<Damping>,
    /// β K(rest) + α M on the pattern, when damping uses the rest stiffness.
    rest_damping_values: Option<Vec<f64>>,
    /// Reduced coordinates x = x₀ + B u, when the model is simulated in a subspace.
    subspace: Option<Arc<Subspace>>,
    /// The last restriction of the pattern to free DOFs, keyed by the active pins.
    restriction: Mutex<Option<(Vec<bool>, Arc<Restriction>)>>,
    /// For discontinuous Galerkin bodies: each vertex's group, the copies of one
    /// vertex of the continuous mesh sharing a group (None: every vertex its own).
    vertex_groups: Option<Arc<Vec<usize>>>,
    /// The elastic Hessian a term computed at the step's start, for the step's own linearisation.
    kept_elastic: kept_elastic::KeptElastic,
    /// The matrix the step under way factorises, and a term's factor of it.
    step_factor: step_matrix::StepFactor,
}

impl Model {
    /// A model of the given mesh whose potential starts with `terms`.
    pub fn from_terms(
        mesh: Mesh,
        terms: Vec<Box<dyn EnergyTerm>>,
        vertex_masses: Vec<f64>,
        mass_kind: MassKind,
    ) -> Result<Model> {
        let dimension = mesh.dimension();
        let pattern = Arc::new(pattern_of(mesh.vertex_count(), dimension, &terms));
        let mut terms = terms;
        for term in &mut terms {
            term.bind(&pattern, dimension);
        }
        let mass = MassMatrix::assemble(mass_kind, dimension, &pattern, &terms, &vertex_masses)?;
        Ok(Model {
            mesh,
            pattern,
            terms,
            mass,
            vertex_masses,
            pins: Vec::new(),
            gravity: Vector3::zeros(),
            gravity_ramp_time: 0.0,
            gravity_datum: None,
            laplacian_stretches: crate::material::laplacian_weight::DEFAULT_STRETCHES,
            tearing_limit: None,
            obstacles: Vec::new(),
            constraints: Vec::new(),
            damping: None,
            rest_damping_values: None,
            subspace: None,
            restriction: Mutex::new(None),
            vertex_groups: None,
            kept_elastic: Default::default(),
            step_factor: Default::default(),
        })
    }

    /// Adds a term to the potential. If it couples vertices the pattern does
    /// not hold yet, the pattern is rebuilt and every term bound to it again.
    pub fn add_term(&mut self, mut term: Box<dyn EnergyTerm>) -> Result<()> {
        let d = self.dimension();
        if d == 2 && !term.capabilities().planar {
            return Err(HookeError::Mesh {
                reason: format!("{} works in 3D only; this model is 2D", term.name()),
            });
        }
        let mut fits = true;
        term.couplings(&mut |group| {
            for &a in group {
                for &b in group {
                    if a > b && self.pattern.position(d * a, d * b).is_none() {
                        fits = false;
                    }
                }
            }
        });
        if fits {
            term.bind(&self.pattern, d);
            self.terms.push(term);
            return Ok(());
        }
        self.terms.push(term);
        self.pattern = Arc::new(pattern_of(self.mesh.vertex_count(), d, &self.terms));
        *self.restriction.lock().unwrap_or_else(|p| p.into_inner()) = None;
        for term in &mut self.terms {
            term.bind(&self.pattern, d);
        }
        self.mass = MassMatrix::assemble(self.mass.kind(), d, &self.pattern, &self.terms, &self.vertex_masses)?;
        // Gravity and contact scale with the lumped masses, which new elements change.
        self.set_gravity(self.gravity);
        if let Some(obstacle) = self.obstacles.pop() {
            self.add_obstacle(obstacle);
        }
        self.set_damping(self.damping)
    }

    /// Replaces the terms that are `replaced` by `replacement` (gravity, the
    /// contact penalty).
    fn replace_terms(&mut self, replaced: impl Fn(&dyn EnergyTerm) -> bool, replacement: Option<Box<dyn EnergyTerm>>) {
        self.terms.retain(|t| !replaced(t.as_ref()));
        if let Some(mut term) = replacement {
            term.bind(&self.pattern, self.dimension());
            self.terms.push(term);
        }
    }

    /// The mesh at rest, every body merged into one.
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    /// Says which vertices are copies of one vertex of a continuous mesh
    /// (discontinuous Galerkin bodies): `groups[v]` for each vertex, dense from 0.
    pub fn set_vertex_groups(&mut self, groups: Vec<usize>) -> Result<()> {
        if groups.len() != self.mesh.vertex_count() {
            return Err(HookeError::Mesh {
                reason: format!(
                    "{} vertex groups for {} vertices",
                    groups.len(),
                    self.mesh.vertex_count()
                ),
            });
        }
        self.vertex_groups = Some(Arc::new(groups));
        Ok(())
    }

    /// The vertex groups of discontinuous bodies, if the model has any.
    pub fn vertex_groups(&self) -> Option<&[usize]> {
        self.vertex_groups.as_deref().map(Vec::as_slice)
    }

    /// The mean of each group's values (`dimension` per vertex), given back at
    /// every vertex of the group: the continuous field of a discontinuous one.
    /// None for a model without groups.
    pub fn group_means(&self, values: &[f64]) -> Option<Vec<f64>> {
        let groups = self.vertex_groups()?;
        let d = self.dimension();
        let count = groups.iter().map(|g| g + 1).max().unwrap_or(0);
        let mut sums = vec![0.0; count * d];
        let mut members = vec![0.0; count];
        for (v, &g) in groups.iter().enumerate() {
            members[g] += 1.0;
            for a in 0..d {
                sums[g * d + a] += values[v * d + a];
            }
        }
        Some(
            groups
                .iter()
                .flat_map(|&g| (0..d).map(move |a| (g, a)))
                .map(|(g, a)| sums[g * d + a] / members[g])
                .collect(),
        )
    }

    /// Coordinates per vertex: 3, or 2 for a plane-strain model.
    pub fn dimension(&self) -> usize {
        self.mesh.dimension()
    }

    /// The degrees of freedom: coordinates per vertex times vertices, pinned ones included.
    pub fn dof_count(&self) -> usize {
        self.dimension() * self.mesh.vertex_count()
    }

    /// The terms of the potential energy: elasticity, springs, gravity, loads, contact, ….
    pub fn terms(&self) -> &[Box<dyn EnergyTerm>] {
        &self.terms
    }

    /// Each element's material as a number: the distinct materials in order
    /// of first appearance (for colouring pictures by material).
    pub fn material_numbers(&self) -> Vec<i32> {
        let mut seen: Vec<MaterialRef> = Vec::new();
        self.materials()
            .into_iter()
            .map(|m| match seen.iter().position(|s| Arc::ptr_eq(s, &m)) {
                Some(i) => i as i32,
                None => {
                    seen.push(m);
                    (seen.len() - 1) as i32
                }
            })
            .collect()
    }

    /// The material of every element, term by term in element order.
    pub fn materials(&self) -> Vec<MaterialRef> {
        self.terms
            .iter()
            .filter_map(|t| t.as_elasticity())
            .flat_map(|e| e.materials().iter().cloned())
            .collect()
    }

    /// Length scale of the body (bounding-box diagonal), for relative tolerances.
    pub fn length_scale(&self) -> f64 {
        let (lo, hi) = self.mesh.bounding_box();
        (hi - lo).norm().max(f64::MIN_POSITIVE)
    }

    /// Pattern of the lower triangle of every full matrix (K, M, D).
    pub fn pattern(&self) -> &Arc<LowerPattern> {
        &self.pattern
    }

    /// The mass matrix M, lumped or consistent (the `MassKind` the model was made with).
    pub fn mass(&self) -> &MassMatrix {
        &self.mass
    }

    /// out = M v.
    pub fn mass_multiply(&self, v: &[f64], out: &mut [f64]) {
        self.mass.multiply(&self.pattern, v, out);
    }

    /// Rest positions, interleaved.
    pub fn rest_positions(&self) -> Vec<f64> {
        flatten(self.mesh.vertices(), self.dimension())
    }

    /// The state at t = 0: at rest, with pinned vertices where their motion puts them.
    pub fn initial_state(&self) -> State {
        let mut state = State {
            time: 0.0,
            positions: self.rest_positions(),
            velocities: vec![0.0; self.dof_count()],
        };
        self.apply_prescribed_positions(0.0, &mut state.positions);
        state
    }

    // ---- the potential ----------------------------------------------------------

    /// E(x, t): every term; +∞ where an element leaves its material's domain.
    pub fn energy(&self, x: &[f64], time: f64) -> f64 {
        self.energy_of(TermGroup::All, x, time)
    }

    /// The part of E(x, t) that the terms of `group` make.
    pub fn energy_of(&self, group: TermGroup, x: &[f64], time: f64) -> f64 {
        let mut total = 0.0;
        for term in self.group(group) {
            total += term.energy(x, time);
            if !total.is_finite() {
                return f64::INFINITY;
            }
        }
        total
    }

    /// Whether some term bounds the steps of a minimiser (its
    /// [`EnergyTerm::feasible_step`] can be below 1).
    pub fn bounds_steps(&self) -> bool {
        self.terms.iter().any(|t| t.bounds_steps())
    }

    /// The largest α ∈ [0, 1] such that every x + β dx, 0 ≤ β ≤ α, is
    /// admissible for every term (the smallest of their bounds).
    pub fn feasible_step(&self, x: &[f64], displacement: &[f64]) -> Result<f64> {
        let mut bound: f64 = 1.0;
        for term in self.terms.iter().filter(|t| t.bounds_steps()) {
            bound = bound.min(term.feasible_step(x, displacement)?);
        }
        Ok(bound)
    }

    /// E(x, t) and ∂E/∂x (written into `gradient`).
    pub fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64]) -> Result<f64> {
        self.gradient_of(TermGroup::All, x, time, gradient)
    }

    /// [`Self::gradient`] of the terms of `group` alone.
    pub fn gradient_of(&self, group: TermGroup, x: &[f64], time: f64, gradient: &mut [f64]) -> Result<f64> {
        let overwrite = self.group(group).next().is_some_and(|t| t.overwrites());
        if !overwrite {
            gradient.fill(0.0);
        }
        let mut energy = 0.0;
        for (i, term) in self.group(group).enumerate() {
            energy += term.gradient(x, time, gradient, overwrite && i == 0)?;
        }
        Ok(energy)
    }

    /// E(x, t), its gradient and its Hessian (written into `gradient` and
    /// `values`, on [`Self::pattern`]); low-rank parts of terms are pushed onto
    /// `low_rank`. `project` asks every term for a PSD Hessian. Couplings
    /// that change with x (contact pairs) are not on the pattern: they come
    /// from [`Self::changing_blocks`].
    ///
    /// The energy, gradient and Hessian of a bent bar, each checked against
    /// central differences of the one before:
    ///
    /// ```
    /// use hooke::prelude::*;
    /// use nalgebra::Vector3;
    ///
    /// # fn main() -> hooke::Result<()> {
    /// let mesh = box_mesh(&BoxMeshOptions {
    ///     origin: Vector3::zeros(),
    ///     size: Vector3::new(0.4, 0.1, 0.1),
    ///     cells: [4, 1, 1],
    ///     tets_per_hex: TetsPerHex::Six,
    /// })?;
    /// let material = IsotropicMaterial::shared(MaterialModel::StableNeoHookean, &MaterialParameters {
    ///     youngs_modulus: 1e5,
    ///     poisson_ratio: 0.3,
    ///     density: 1000.0,
    /// });
    /// let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
    /// model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    /// // A bent state: z += 0.2 x².
    /// let mut x = model.rest_positions();
    /// for v in 0..mesh.vertex_count() {
    ///     x[3 * v + 2] += 0.2 * x[3 * v].powi(2);
    /// }
    /// let n = model.dof_count();
    /// let mut gradient = vec![0.0; n];
    /// let mut values = vec![0.0; model.pattern().nonzeros()];
    /// let energy = model.hessian(&x, 0.0, false, &mut gradient, &mut values, &mut Vec::new())?;
    /// assert!((energy - model.energy(&x, 0.0)).abs() < 1e-12 * energy.abs());
    /// let h = 1e-6;
    /// let (i, j) = (3 * (mesh.vertex_count() - 1) + 2, 3 * (mesh.vertex_count() - 1));
    /// let shifted = |k: usize, by: f64| {
    ///     let mut y = x.clone();
    ///     y[k] += by;
    ///     y
    /// };
    /// // ∂E/∂x_i against (E(x + h e_i) − E(x − h e_i)) / 2h.
    /// let difference = (model.energy(&shifted(i, h), 0.0) - model.energy(&shifted(i, -h), 0.0)) / (2.0 * h);
    /// assert!((gradient[i] - difference).abs() < 1e-6 * gradient[i].abs().max(1.0));
    /// // ∂²E/∂x_i∂x_j against the change of ∂E/∂x_i along x_j.
    /// let mut plus = vec![0.0; n];
    /// let mut minus = vec![0.0; n];
    /// model.gradient(&shifted(j, h), 0.0, &mut plus)?;
    /// model.gradient(&shifted(j, -h), 0.0, &mut minus)?;
    /// let entry = values[model.pattern().position(i.max(j), i.min(j)).expect("coupled")];
    /// assert!((entry - (plus[i] - minus[i]) / (2.0 * h)).abs() < 1e-5 * entry.abs().max(1.0));
    /// # Ok(())
    /// # }
    /// ```
    pub fn hessian(
        &self,
        x: &[f64],
        time: f64,
        project: bool,
        gradient: &mut [f64],
        values: &mut [f64],
        low_rank: &mut Vec<LowRank>,
    ) -> Result<f64> {
        self.hessian_of(TermGroup::All, x, time, project, gradient, values, low_rank)
    }

    /// [`Self::hessian`] of the terms of `group` alone.
    #[allow(clippy::too_many_arguments)]
    pub fn hessian_of(
        &self,
        group: TermGroup,
        x: &[f64],
        time: f64,
        project: bool,
        gradient: &mut [f64],
        values: &mut [f64],
        low_rank: &mut Vec<LowRank>,
    ) -> Result<f64> {
        let kept = self.kept_elastic.take_if_at(x, time, project);
        let fits = |k: &kept_elastic::ElasticAt| k.values.len() == values.len() && k.gradient.len() == gradient.len();
        if let Some(kept) = kept.filter(|k| fits(k) && self.elastic_terms_lead(group)) {
            // The elastic terms, first in the group, as the loop below would sum them; then the rest.
            values.copy_from_slice(&kept.values);
            gradient.copy_from_slice(&kept.gradient);
            let mut energy = kept.energy;
            for term in self.group(group).filter(|t| t.as_elasticity().is_none()) {
                let mut target = HessianTarget {
                    values: &mut *values,
                    low_rank: &mut *low_rank,
                };
                energy += term.hessian(x, time, project, gradient, &mut target, false)?;
            }
            return Ok(energy);
        }
        let overwrite = self.group(group).next().is_some_and(|t| t.overwrites());
        if !overwrite {
            gradient.fill(0.0);
            values.fill(0.0);
        }
        let mut energy = 0.0;
        for (i, term) in self.group(group).enumerate() {
            let mut target = HessianTarget {
                values: &mut *values,
                low_rank: &mut *low_rank,
            };
            energy += term.hessian(x, time, project, gradient, &mut target, overwrite && i == 0)?;
        }
        Ok(energy)
    }

    /// Whether the model's elastic terms are all in `group` and come first there.
    fn elastic_terms_lead(&self, group: TermGroup) -> bool {
        let elastic = self.terms.iter().filter(|t| t.as_elasticity().is_some()).count();
        let in_group: Vec<bool> = self.group(group).map(|t| t.as_elasticity().is_some()).collect();
        elastic > 0
            && in_group.len() >= elastic
            && in_group[..elastic].iter().all(|e| *e)
            && in_group[elastic..].iter().all(|e| !e)
    }

    /// The terms of `group`, in the model's order.
    fn group(&self, group: TermGroup) -> impl Iterator<Item = &Box<dyn EnergyTerm>> {
        self.terms.iter().filter(move |t| group.holds(t.as_ref()))
    }

    /// The model's barrier contact, if it has one.
    pub fn barrier_contact(&self) -> Option<&BarrierContact> {
        self.terms.iter().find_map(|t| t.as_barrier_contact())
    }

    /// Moves the prescribed obstacles of the step under way as far toward
    /// their places at its end as positions x allow ([`EnergyTerm::advance_motion`]);
    /// true when all are there.
    pub fn advance_motion(&self, x: &[f64]) -> Result<bool> {
        let mut there = true;
        for term in &self.terms {
            there &= term.advance_motion(self, x)?;
        }
        Ok(there)
    }

    /// Lets each term take its lag again where the step's solve number
    /// `round` ended, at x ([`EnergyTerm::update_lag`]); true when one did
    /// and the step must be solved again.
    pub fn update_lags(&self, x: &[f64], round: usize) -> Result<bool> {
        let mut again = false;
        for term in &self.terms {
            again |= term.update_lag(self, x, round)?;
        }
        Ok(again)
    }

    /// Whether a term couples vertices that change with the positions
    /// (barrier contact): the Hessian is then [`Self::hessian`]'s plus
    /// [`Self::changing_blocks`].
    pub fn changes_couplings(&self) -> bool {
        self.terms.iter().any(|t| t.changes_couplings())
    }

    /// The Hessian blocks of the couplings present at x (contact pairs), which
    /// [`Self::hessian`] leaves out because the pattern has no room for them.
    pub fn changing_blocks(&self, x: &[f64], time: f64, project: bool) -> Result<crate::linalg::VertexBlocks> {
        self.changing_blocks_of(TermGroup::All, x, time, project)
    }

    /// [`Self::changing_blocks`] of the terms of `group` alone.
    pub fn changing_blocks_of(
        &self,
        group: TermGroup,
        x: &[f64],
        time: f64,
        project: bool,
    ) -> Result<crate::linalg::VertexBlocks> {
        let mut blocks = crate::linalg::VertexBlocks::new(self.dimension());
        for term in self.group(group).filter(|t| t.changes_couplings()) {
            term.add_changing_blocks(x, time, project, &mut blocks)?;
        }
        Ok(blocks)
    }

    /// The weighted Laplacian L of every term at `time`, on [`Self::pattern`]
    /// (Liu 2018 thesis, §8.1): constant in x, PSD, the same on every coordinate.
    pub fn laplacian(&self, time: f64) -> Vec<f64> {
        let mut values = vec![0.0; self.pattern.nonzeros()];
        for term in &self.terms {
            term.add_laplacian(time, &self.laplacian_stretches, &mut values);
        }
        values
    }

    /// The names of the terms that are not projective (a local/global solver
    /// cannot minimise them).
    pub fn non_projective_terms(&self) -> Vec<String> {
        self.terms
            .iter()
            .filter(|t| !t.projective())
            .map(|t| t.name())
            .collect()
    }

    /// The stretches over which elements fit their Laplacian stiffness
    /// (default [0.5, 1.5]; Liu 2018 thesis, Fig. 7.6, finds the choice matters little).
    pub fn set_laplacian_stretches(&mut self, stretches: crate::material::laplacian_weight::StretchSamples) {
        self.laplacian_stretches = stretches;
    }

    /// Which terms' Laplacians are on at `time`: L changes only when this does.
    pub fn laplacian_activity(&self, time: f64) -> Vec<bool> {
        self.terms.iter().map(|t| t.laplacian_active(time)).collect()
    }

    /// The Hessian alone, without low-rank parts (for tools that need K as a
    /// sparse matrix: modes, export, damping).
    pub fn stiffness(&self, x: &[f64], time: f64, project: bool) -> Result<Vec<f64>> {
        let mut gradient = vec![0.0; x.len()];
        let mut values = vec![0.0; self.pattern.nonzeros()];
        let mut low_rank = Vec::new();
        self.hessian(x, time, project, &mut gradient, &mut values, &mut low_rank)?;
        if !low_rank.is_empty() {
            return Err(HookeError::LinearSolver {
                reason: "this model's stiffness has a low-rank part, which a sparse matrix cannot hold".to_string(),
            });
        }
        Ok(values)
    }

    /// The Hessian of the element terms alone (elasticity, no gravity, loads,
    /// contact, soft pins or corrections) on the model's pattern, with their
    /// gradient: what splittings, elastic modes and material-aware bases use.
    ///
    /// Asked between [`Self::begin_step`] and the step's first Hessian (an
    /// EigenFit refit), the result is kept for that Hessian, which then does
    /// not assemble the elastic terms again when it is at the same point.
    pub fn element_hessian(&self, x: &[f64], time: f64, project: bool) -> Result<(Vec<f64>, Vec<f64>)> {
        let mut values = vec![0.0; self.pattern.nonzeros()];
        let mut gradient = vec![0.0; x.len()];
        let mut low_rank = Vec::new();
        let mut energy = 0.0;
        for term in self.terms.iter().filter(|t| t.as_elasticity().is_some()) {
            let mut target = HessianTarget {
                values: &mut values,
                low_rank: &mut low_rank,
            };
            energy += term.hessian(x, time, project, &mut gradient, &mut target, false)?;
        }
        if self.kept_elastic.is_open() {
            let at = kept_elastic::ElasticAt::new((x, time, project), values.clone(), gradient.clone(), energy);
            self.kept_elastic.keep(at);
        }
        Ok((values, gradient))
    }

    /// What the model's rest-state results depend on, for the disk cache:
    /// rest positions, elements, materials (their parameters as they print),
    /// mass and the free DOFs.
    pub fn fingerprint(&self, dofs: &DofMap) -> crate::disk_cache::Fingerprint {
        let mut hash = crate::disk_cache::Fingerprint::default();
        // Another version may compute the same quantities to other bits.
        hash.feed(concat!("hooke ", env!("CARGO_PKG_VERSION")).as_bytes());
        for value in self.rest_positions() {
            hash.feed_number(value.to_bits());
        }
        for e in 0..self.mesh().element_count() {
            for &v in self.mesh().element(e) {
                hash.feed_number(v as u64);
            }
        }
        for material in self.materials() {
            hash.feed(format!("{material:?}").as_bytes());
        }
        for value in self.mass().values() {
            hash.feed_number(value.to_bits());
        }
        for &dof in &dofs.free_dofs {
            hash.feed_number(dof as u64);
        }
        hash
    }

    /// The energies of the state by kind.
    pub fn energies(&self, x: &[f64], time: f64) -> EnergyParts {
        let mut parts = EnergyParts::default();
        for term in &self.terms {
            let value = term.energy(x, time);
            match term.kind() {
                TermKind::Elastic => parts.elastic += value,
                TermKind::Gravity => parts.gravitational += value,
                TermKind::Contact => parts.contact += value,
                TermKind::Load | TermKind::Friction => {}
            }
        }
        parts
    }

    /// The stored elastic energy (elements, springs).
    pub fn elastic_energy(&self, x: &[f64]) -> f64 {
        self.terms
            .iter()
            .filter(|t| t.kind() == TermKind::Elastic)
            .map(|t| t.energy(x, 0.0))
            .sum()
    }

    /// Strain energy density of each element (+∞ where undefined).
    pub fn energy_densities(&self, x: &[f64]) -> Vec<f64> {
        self.terms
            .iter()
            .filter_map(|t| t.as_elasticity())
            .flat_map(|e| e.energy_densities(x))
            .collect()
    }

    /// The external force f(t) of the linear terms (gravity and loads) over all DOFs.
    pub fn external_force(&self, time: f64, force: &mut [f64]) {
        force.fill(0.0);
        let zero = vec![0.0; force.len()];
        for term in self.terms.iter().filter(|t| t.capabilities().linear) {
            // A linear term's gradient is −f whatever x is.
            let _ = term.gradient(&zero, time, force, false);
        }
        force.iter_mut().for_each(|f| *f = -*f);
    }

    /// Whether pins that move, loads or terms that vary in time do work on the
    /// body (when none does, its total energy cannot grow).
    pub fn does_work_on_the_body(&self) -> bool {
        self.pins.iter().any(|p| p.motion != Motion::Fixed {})
            || self
                .terms
                .iter()
                .any(|t| t.kind() == TermKind::Load || t.varies_in_time())
    }

    /// Whether some term is undefined for some deformations (an inverted
    /// Neo-Hookean element), so that a state must be checked before it is kept.
    pub fn may_be_undefined(&self) -> bool {
        self.terms.iter().any(|t| !t.capabilities().defined_under_inversion)
    }

    // ---- boundary conditions and loads (pins: model/pins.rs) ------------------------

    /// Simulates the model in reduced coordinates x = x₀ + B u (None: all DOFs).
    /// Pinned components must have zero rows in B and their rest position in
    /// x₀, and pins must hold still for ever: a subspace cannot follow moving pins.
    pub fn set_subspace(&mut self, subspace: Option<Subspace>) -> Result<()> {
        if let Some(space) = &subspace {
            if space.origin.len() != self.dof_count() {
                return Err(HookeError::scene(
                    "coordinates",
                    format!(
                        "the subspace has {} DOFs, the model {}",
                        space.origin.len(),
                        self.dof_count()
                    ),
                ));
            }
            if let Some((p, pin)) = self
                .pins
                .iter()
                .enumerate()
                .find(|(_, p)| pins::moves(&p.motion, p.release_time))
            {
                return Err(HookeError::scene(
                    pin.name(p),
                    "reduced coordinates need pins that hold still for ever (no motion, no release)",
                ));
            }
            let rest = self.rest_positions();
            let dofs = self.dof_map(0.0);
            let pinned = dofs.free_index.iter().enumerate().filter(|(_, free)| free.is_none());
            for (dof, _) in pinned {
                let row_norm = space.basis.row(dof).amax();
                if row_norm != 0.0 || (space.origin[dof] - rest[dof]).abs() > 1e-12 * self.length_scale() {
                    return Err(HookeError::scene(
                        "coordinates",
                        format!(
                            "pinned DOF {dof} must have a zero row in the basis and its rest position in the origin"
                        ),
                    ));
                }
            }
        }
        self.subspace = subspace.map(Arc::new);
        Ok(())
    }

    /// The reduced coordinates x = x₀ + B u the model is simulated in (None: every free DOF).
    pub fn subspace(&self) -> Option<&Subspace> {
        self.subspace.as_deref()
    }

    /// Puts `spring` (the hand of an interactive session) in place of the
    /// model's pointer spring, or adds it. Add one, holding nothing, before
    /// anything is computed from the list of terms (a subspace's reduction),
    /// then replace it as the pointer grabs, moves and lets go; a held vertex
    /// must exist.
    ///
    /// ```
    /// use hooke::material::{IsotropicMaterial, MaterialModel, MaterialParameters};
    /// use hooke::mesh::{box_mesh, BoxMeshOptions, TetsPerHex};
    /// use hooke::model::{MassKind, Model, PointerSpring};
    /// use nalgebra::Vector3;
    ///
    /// let mesh = box_mesh(&BoxMeshOptions {
    ///     origin: Vector3::zeros(),
    ///     size: Vector3::new(0.4, 0.1, 0.1),
    ///     cells: [4, 1, 1],
    ///     tets_per_hex: TetsPerHex::Six,
    /// })?;
    /// let material = IsotropicMaterial::shared(MaterialModel::StableNeoHookean, &MaterialParameters {
    ///     youngs_modulus: 1e5,
    ///     poisson_ratio: 0.3,
    ///     density: 1000.0,
    /// });
    /// let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
    /// model.set_pointer_spring(PointerSpring::new(None, 0.0))?; // nothing held: no force
    /// let x = model.rest_positions();
    /// let mut gradient = vec![0.0; model.dof_count()];
    /// model.gradient(&x, 0.0, &mut gradient)?;
    /// assert!(gradient.iter().all(|g| g.abs() < 1e-9));
    ///
    /// // Vertex 3 held 1 cm above where it is by 500 N/m: a 5 N pull up on it alone.
    /// let target = Vector3::new(x[9], x[10], x[11] + 0.01);
    /// model.set_pointer_spring(PointerSpring::new(Some((3, target)), 500.0))?;
    /// model.gradient(&x, 0.0, &mut gradient)?;
    /// assert!((gradient[11] + 5.0).abs() < 1e-9);
    /// assert!(gradient.iter().enumerate().all(|(i, g)| i == 11 || g.abs() < 1e-9));
    /// assert!(model.set_pointer_spring(PointerSpring::new(Some((mesh.vertex_count(), target)), 500.0)).is_err());
    /// # Ok::<(), hooke::HookeError>(())
    /// ```
    pub fn set_pointer_spring(&mut self, spring: PointerSpring) -> Result<()> {
        if let Some((vertex, target)) = spring.held {
            if vertex >= self.mesh.vertex_count() {
                return Err(HookeError::Mesh {
                    reason: format!(
                        "the pointer holds vertex {vertex}, but the model has {} vertices",
                        self.mesh.vertex_count()
                    ),
                });
            }
            if !target.iter().all(|c| c.is_finite()) || !spring.stiffness.is_finite() || spring.stiffness < 0.0 {
                return Err(HookeError::Mesh {
                    reason: format!(
                        "the pointer's target {target:?} and stiffness {} must be finite (and the stiffness ≥ 0)",
                        spring.stiffness
                    ),
                });
            }
        }
        self.replace_terms(|t| t.name() == pointer_spring::NAME, Some(Box::new(spring)));
        Ok(())
    }

    /// Sets the gravitational acceleration (z ignored in 2D): a term
    /// −Σ mᵢ g·(xᵢ − x⁰ᵢ) about the datum x⁰ (the rest positions unless
    /// [`Model::set_gravity_datum`] says otherwise).
    pub fn set_gravity(&mut self, gravity: Vector3<f64>) {
        self.gravity = gravity;
        let datum = self.gravity_datum.clone().unwrap_or_else(|| self.rest_positions());
        let term = (gravity != Vector3::zeros()).then(|| -> Box<dyn EnergyTerm> {
            Box::new(Gravity {
                ramp_time: self.gravity_ramp_time,
                acceleration: gravity,
                masses: self.mass.lumped().to_vec(),
                dimension: self.dimension(),
                datum,
            })
        });
        self.replace_terms(|t| t.kind() == TermKind::Gravity, term);
    }

    /// Measures gravitational energy from `positions` (a run's initial state),
    /// so that it starts at 0; forces are unchanged.
    pub fn set_gravity_datum(&mut self, positions: &[f64]) {
        self.gravity_datum = Some(positions.to_vec());
        self.set_gravity(self.gravity);
    }

    /// Makes gravity grow linearly from 0 at t = 0 to full at `ramp_time`
    /// (0: full from the start).
    pub fn set_gravity_ramp_time(&mut self, ramp_time: f64) {
        self.gravity_ramp_time = ramp_time;
        self.set_gravity(self.gravity);
    }

    /// The gravitational acceleration at full strength, m/s².
    pub fn gravity(&self) -> Vector3<f64> {
        self.gravity
    }

    /// Adds a force on a region (a load term).
    pub fn add_force(&mut self, force: RegionForce) {
        let mut term = Box::new(force);
        term.bind(&self.pattern, self.dimension());
        self.terms.push(term);
    }

    /// Adds a pressure or traction on a surface.
    pub fn add_surface_load(&mut self, load: SurfaceLoad) {
        self.terms.push(Box::new(load));
    }

    /// Adds an obstacle; the penalty contact term then covers it when it
    /// has a penalty stiffness (without one it is barrier contact's, which
    /// holds it as its own, and is listed here for drawing). In 2D a box spans all z.
    pub fn add_obstacle(&mut self, mut obstacle: Obstacle) {
        if let (2, ObstacleShape::Box { min, max }) = (self.dimension(), &mut obstacle.shape) {
            min[2] = f64::NEG_INFINITY;
            max[2] = f64::INFINITY;
        }
        self.obstacles.push(obstacle);
        let penalised: Vec<Obstacle> = self
            .obstacles
            .iter()
            .filter(|o| o.stiffness.is_some())
            .cloned()
            .collect();
        let term = (!penalised.is_empty()).then(|| {
            Box::new(ContactPenalty::new(
                penalised,
                self.mass.lumped().to_vec(),
                self.dimension(),
            )) as Box<dyn EnergyTerm>
        });
        self.replace_terms(|t| t.kind() == TermKind::Contact && !t.bounds_steps(), term);
    }

    /// The rigid obstacles, in the order they were added.
    pub fn obstacles(&self) -> &[Obstacle] {
        &self.obstacles
    }

    /// Adds vertices that must stay on a surface (variational midpoint only).
    pub fn add_constraint(&mut self, constraint: SurfaceConstraint) -> Result<()> {
        constraint.validate(self.mesh.vertex_count(), "constraint")?;
        self.constraints.push(constraint);
        Ok(())
    }

    /// The surface constraints (kept by the variational midpoint integrator).
    pub fn constraints(&self) -> &[SurfaceConstraint] {
        &self.constraints
    }

    /// The springs' vertex pairs.
    pub fn spring_edges(&self) -> Vec<[usize; 2]> {
        self.terms.iter().flat_map(|t| t.drawn_edges()).collect()
    }

    // ---- quantities of a state ----------------------------------------------------------

    /// Kinetic energy ½ vᵀMv.
    pub fn kinetic_energy(&self, v: &[f64]) -> f64 {
        let mut mv = vec![0.0; v.len()];
        self.mass_multiply(v, &mut mv);
        0.5 * mv.iter().zip(v).map(|(a, b)| a * b).sum::<f64>()
    }

    /// Linear momentum Σ (Mv)ᵢ and angular momentum Σ xᵢ × (Mv)ᵢ about the
    /// origin (in 2D, in the plane: the angular momentum lies along z).
    pub fn momentum(&self, x: &[f64], v: &[f64]) -> (Vector3<f64>, Vector3<f64>) {
        let d = self.dimension();
        let mut mv = vec![0.0; v.len()];
        self.mass_multiply(v, &mut mv);
        let mut linear = Vector3::zeros();
        let mut angular = Vector3::zeros();
        for vertex in 0..x.len() / d {
            let p = vertex_point(x, vertex, d);
            let q = vertex_point(&mv, vertex, d);
            linear += q;
            angular += p.cross(&q);
        }
        (linear, angular)
    }
}

/// Positions as a flat vector with `dimension` coordinates per vertex.
pub fn flatten(points: &[Vector3<f64>], dimension: usize) -> Vec<f64> {
    points
        .iter()
        .flat_map(|p| p.iter().take(dimension).copied().collect::<Vec<_>>())
        .collect()
}

/// The lower-triangle pattern over `dimension` DOFs per vertex: every vertex's
/// own block and a full block for each pair of vertices some term couples.
fn pattern_of(vertex_count: usize, dimension: usize, terms: &[Box<dyn EnergyTerm>]) -> LowerPattern {
    let d = dimension;
    // For each vertex j: itself and its coupled neighbours i > j.
    let mut neighbours: Vec<Vec<usize>> = (0..vertex_count).map(|v| vec![v]).collect();
    for term in terms {
        term.couplings(&mut |group| {
            for &a in group {
                for &b in group {
                    if a > b {
                        neighbours[b].push(a);
                    }
                }
            }
        });
    }
    for list in &mut neighbours {
        list.sort_unstable();
        list.dedup();
    }
    let mut columns = Vec::with_capacity(d * vertex_count);
    for (j, list) in neighbours.iter().enumerate() {
        for c in 0..d {
            let mut rows = Vec::with_capacity(d * list.len());
            for &i in list {
                for a in 0..d {
                    if i > j || a >= c {
                        rows.push(d * i + a);
                    }
                }
            }
            columns.push(rows);
        }
    }
    LowerPattern::from_columns(columns)
}
