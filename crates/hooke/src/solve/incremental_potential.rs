//! The incremental potential of an implicit step, minimised over the free DOFs:
//!
//! Φ(x) = w_M/2 ‖x − x̃‖²_M + w_D/2 ‖x − c‖²_D + E(x, t) − f_extraᵀx (+ viscoelastic term)
//!
//! with E the model's potential (elasticity, springs, contact, gravity and
//! loads at the step's force time t). Backward Euler uses w_M = 1/h², x̃ = xₙ + h vₙ,
//! w_D = 1/h (Rayleigh damping as a dissipation potential); a static solve uses
//! no inertia and no damping.
//!
//! Implicit midpoint's unknown is the step's midpoint u, but contact must
//! hold where the step ends, at y = 2u − qₙ: a [`ContactAtEnd`] takes barrier
//! contact and friction out of E(u) and adds them at y instead.
//!
//! The unknowns are the step's [`Coordinates`]: the free DOFs (pinned ones keep
//! their prescribed values inside `base`, so couplings through M, D and K are
//! exact), or reduced coordinates u with x = x₀ + B u, whose gradient is Bᵀ∇Φ
//! and Hessian the dense BᵀHB.

use super::{Objective, QuasiNewtonMatrix};
use crate::error::Result;
use crate::linalg::{LowRank, SystemMatrix};
use crate::model::{DofMap, Model, RebasedElasticity, Restriction, Subspace, TermGroup};
use nalgebra::DMatrix;
use std::borrow::Cow;
use std::sync::Arc;

/// What an implicit step solves for.
pub enum Coordinates<'a> {
    /// The free DOFs of a DOF map.
    Free {
        /// Which DOFs are free at the step's time (pins by component).
        dofs: &'a DofMap,
        /// The model's pattern restricted to those DOFs.
        restriction: Arc<Restriction>,
    },
    /// x = x₀ + B u.
    Reduced(&'a Subspace),
}

/// The inertia part w_M/2 ‖x − x̃‖²_M.
pub struct Inertia {
    /// w_M (1/h² for backward Euler).
    pub weight: f64,
    /// x̃, the full positions the inertia pulls toward (xₙ + h vₙ for backward Euler).
    pub predicted: Vec<f64>,
}

/// The Rayleigh dissipation part w_D/2 ‖x − c‖²_D.
pub struct DampingPart<'a> {
    /// w_D (1/h for backward Euler).
    pub weight: f64,
    /// D on the model's pattern.
    pub values: Cow<'a, [f64]>,
    /// c, the full positions the dissipation is measured from (the step's start).
    pub center: Vec<f64>,
}

/// The potential of the viscoelastic damping impulse, w · W_ref(s x + o): the
/// elastic energy of the configuration s x + o measured from the step's start
/// (`reference`) as the rest shape.
pub struct ViscoelasticTerm {
    /// w: the damping coefficient k_D over the step's weight of it.
    pub weight: f64,
    /// s, which maps the unknown positions to the configuration damped.
    pub scale: f64,
    /// o, the offset of that map (full positions).
    pub offset: Vec<f64>,
    /// The elastic energy with the step's start as the rest shape.
    pub reference: RebasedElasticity,
}

impl ViscoelasticTerm {
    fn configuration(&self, x: &[f64]) -> Vec<f64> {
        x.iter().zip(&self.offset).map(|(xi, o)| self.scale * xi + o).collect()
    }
}

/// Barrier contact and friction felt at y = s x + o rather than at the
/// unknowns' positions x: w_B · B(y) + w_F · D(y), taken out of the model's E(x).
///
/// Implicit midpoint (x = u, y = 2u − qₙ, s = 2) puts the barrier's impulse
/// on the trapezoidal rule, h (f_B(qₙ) + f_B(y))/2 (w_B = ¼, with f_B(qₙ)/2 as
/// a constant force), as Newmark does, and friction's on the step's end, h f_F(y)
/// (w_F = ½), as its lag (slip measured from qₙ over h) is built for. The
/// barrier keeps y intersection-free, and the step bound is CCD along y's path.
pub struct ContactAtEnd {
    /// s.
    pub scale: f64,
    /// o (full positions).
    pub offset: Vec<f64>,
    /// w_B, the weight of the barrier at y.
    pub barrier_weight: f64,
    /// w_F, the weight of friction at y.
    pub friction_weight: f64,
}

impl ContactAtEnd {
    fn configuration(&self, x: &[f64]) -> Vec<f64> {
        x.iter().zip(&self.offset).map(|(xi, o)| self.scale * xi + o).collect()
    }

    /// The groups felt at y, with their weights.
    fn groups(&self) -> [(TermGroup, f64); 2] {
        [
            (TermGroup::Barrier, self.barrier_weight),
            (TermGroup::Friction, self.friction_weight),
        ]
    }

    /// w_B B(y) + w_F D(y), with its gradient in x, w s ∇(y), added to `gradient` when given.
    fn add(&self, model: &Model, x: &[f64], time: f64, gradient: Option<&mut [f64]>) -> Result<f64> {
        let y = self.configuration(x);
        let mut value = 0.0;
        match gradient {
            None => {
                for (group, weight) in self.groups() {
                    value += weight * model.energy_of(group, &y, time);
                }
            }
            Some(total) => {
                let mut part = vec![0.0; y.len()];
                for (group, weight) in self.groups() {
                    value += weight * model.gradient_of(group, &y, time, &mut part)?;
                    let factor = weight * self.scale;
                    total.iter_mut().zip(&part).for_each(|(t, p)| *t += factor * p);
                }
            }
        }
        Ok(value)
    }
}

/// Φ of one implicit step over its coordinates: the [`Objective`] the
/// implicit integrators hand their minimiser.
pub struct IncrementalPotential<'a> {
    /// The model whose potential E(x, t) is the elastic and external part.
    pub model: &'a Model,
    /// The unknowns: the free DOFs, or a subspace's coordinates.
    pub coordinates: Coordinates<'a>,
    /// Full positions: pinned entries hold their prescribed values, free ones
    /// the first guess.
    pub base: Vec<f64>,
    /// The inertia part (None: a static solve).
    pub inertia: Option<Inertia>,
    /// The Rayleigh damping part (None: no stiffness or mass damping this step).
    pub damping: Option<DampingPart<'a>>,
    /// Time at which loads are evaluated.
    pub time: f64,
    /// A constant force besides the model's loads (Newmark's −D c, the
    /// variational midpoint's momentum term).
    pub extra_force: Option<Vec<f64>>,
    /// Viscoelastic damping (Kharevych 2010 thesis, §2.3) as w · W_ref(s x + o).
    pub viscoelastic: Option<ViscoelasticTerm>,
    /// Barrier contact and friction felt elsewhere than at the unknowns'
    /// positions (implicit midpoint's step end); None: within E(x).
    pub contact_at_end: Option<ContactAtEnd>,
    /// Project each element's Hessian to positive semi-definite (`[solver] project_hessian`).
    pub project_hessian: bool,
    /// The time over which the unknowns move (h, or h/2 for a midpoint
    /// unknown), s; None for a static solve. See [`Objective::step_length`].
    pub step_length: Option<f64>,
}

impl IncrementalPotential<'_> {
    /// Full positions for the given unknowns.
    pub fn full_positions(&self, unknowns: &[f64]) -> Vec<f64> {
        match &self.coordinates {
            Coordinates::Free { dofs, .. } => {
                let mut x = self.base.clone();
                dofs.scatter(unknowns, &mut x);
                x
            }
            Coordinates::Reduced(subspace) => subspace.positions(unknowns),
        }
    }

    /// The change of the full positions that a change of the unknowns makes
    /// (zero on pinned DOFs, or B d).
    pub fn full_displacement(&self, change: &[f64]) -> Vec<f64> {
        match &self.coordinates {
            Coordinates::Free { dofs, .. } => {
                let mut dx = vec![0.0; self.base.len()];
                dofs.scatter(change, &mut dx);
                dx
            }
            Coordinates::Reduced(subspace) => (&subspace.basis * nalgebra::DVector::from_column_slice(change))
                .as_slice()
                .to_vec(),
        }
    }

    /// The positions the contact terms see for the given unknowns: the full
    /// positions, or the step's end with [`ContactAtEnd`].
    pub fn contact_positions(&self, unknowns: &[f64]) -> Vec<f64> {
        let x = self.full_positions(unknowns);
        match &self.contact_at_end {
            Some(map) => map.configuration(&x),
            None => x,
        }
    }

    /// The terms E(x) holds: all, or all but the contact ones felt at the step's end.
    fn own_terms(&self) -> TermGroup {
        match self.contact_at_end {
            Some(_) => TermGroup::Rest,
            None => TermGroup::All,
        }
    }

    /// The unknowns of full positions x (for reduced coordinates, the closest
    /// subspace point in the mass norm).
    pub fn unknowns_of(&self, x: &[f64]) -> Result<Vec<f64>> {
        match &self.coordinates {
            Coordinates::Free { dofs, .. } => Ok(dofs.gather(x)),
            Coordinates::Reduced(subspace) => subspace.project(x, |a, b| self.model.mass_multiply(a, b)),
        }
    }

    /// A full gradient in the unknowns' terms (gathered, or Bᵀg).
    fn reduce(&self, full: &[f64]) -> Vec<f64> {
        match &self.coordinates {
            Coordinates::Free { dofs, .. } => dofs.gather(full),
            Coordinates::Reduced(subspace) => subspace.reduce(full),
        }
    }

    fn quadratic(
        &self,
        values_times: impl Fn(&[f64], &mut [f64]),
        x: &[f64],
        center: &[f64],
        weight: f64,
    ) -> (f64, Vec<f64>) {
        let difference: Vec<f64> = x.iter().zip(center).map(|(a, b)| a - b).collect();
        let mut product = vec![0.0; x.len()];
        values_times(&difference, &mut product);
        let value = 0.5 * weight * difference.iter().zip(&product).map(|(a, b)| a * b).sum::<f64>();
        product.iter_mut().for_each(|p| *p *= weight);
        (value, product)
    }

    /// The inertia, damping and extra-force parts of Φ at full positions x, and
    /// their gradient added to `gradient` when given.
    fn step_parts(&self, x: &[f64], mut gradient: Option<&mut [f64]>) -> f64 {
        let mut value = 0.0;
        if let Some(extra) = &self.extra_force {
            value -= extra.iter().zip(x).map(|(f, y)| f * y).sum::<f64>();
            if let Some(g) = gradient.as_deref_mut() {
                g.iter_mut().zip(extra).for_each(|(g, f)| *g -= f);
            }
        }
        if let (Some(inertia), Some(diagonal)) = (&self.inertia, self.model.mass().diagonal()) {
            // A diagonal M: one pass, each entry's operations and the sum's
            // order those of the general path below.
            let weight = inertia.weight;
            let mut sum = -0.0;
            let entries = x.iter().zip(&inertia.predicted).zip(diagonal);
            for (i, ((a, b), m)) in entries.enumerate() {
                let difference = a - b;
                let product = m * difference;
                sum += difference * product;
                if let Some(total) = gradient.as_deref_mut() {
                    total[i] += product * weight;
                }
            }
            value += 0.5 * weight * sum;
        } else if let Some(inertia) = &self.inertia {
            let (v, g) = self.quadratic(
                |a, b| self.model.mass_multiply(a, b),
                x,
                &inertia.predicted,
                inertia.weight,
            );
            value += v;
            if let Some(total) = gradient.as_deref_mut() {
                total.iter_mut().zip(&g).for_each(|(t, g)| *t += g);
            }
        }
        if let Some(damping) = &self.damping {
            let pattern = self.model.pattern();
            let (v, g) = self.quadratic(
                |a, b| pattern.symmetric_multiply(&damping.values, a, b),
                x,
                &damping.center,
                damping.weight,
            );
            value += v;
            if let Some(total) = gradient.as_mut() {
                total.iter_mut().zip(&g).for_each(|(t, g)| *t += g);
            }
        }
        value
    }

    /// Φ at full positions x, its full gradient, and with `hessian`, the full
    /// Hessian's parts: weighted sparse terms on the model's pattern and low-rank terms.
    #[allow(clippy::type_complexity)]
    fn full_derivatives(&self, x: &[f64], hessian: bool) -> Result<(f64, Vec<f64>, Option<HessianParts>)> {
        let nonzeros = self.model.pattern().nonzeros();
        let mut gradient = vec![0.0; x.len()];
        let mut stiffness = if hessian { vec![0.0; nonzeros] } else { Vec::new() };
        let mut low_rank = Vec::new();
        let potential = if hessian {
            self.model.hessian_of(
                self.own_terms(),
                x,
                self.time,
                self.project_hessian,
                &mut gradient,
                &mut stiffness,
                &mut low_rank,
            )?
        } else {
            self.model.gradient_of(self.own_terms(), x, self.time, &mut gradient)?
        };
        // Barrier contact and friction put all their couplings in changing
        // blocks (add_changing_blocks), so at the step's end only their gradient is due here.
        let contact = match &self.contact_at_end {
            Some(map) => map.add(self.model, x, self.time, Some(&mut gradient))?,
            None => 0.0,
        };
        // The viscoelastic term: value, gradient w s ∇W_ref and Hessian w s² K_ref.
        let mut damping_value = 0.0;
        let mut damping_stiffness = Vec::new();
        if let Some(term) = &self.viscoelastic {
            let y = term.configuration(x);
            let mut reference_gradient = vec![0.0; x.len()];
            let energy = if hessian {
                damping_stiffness = vec![0.0; nonzeros];
                term.reference.hessian(
                    &y,
                    self.project_hessian,
                    &mut reference_gradient,
                    &mut damping_stiffness,
                )?
            } else {
                term.reference.gradient(&y, &mut reference_gradient)?
            };
            damping_value = term.weight * energy;
            gradient
                .iter_mut()
                .zip(&reference_gradient)
                .for_each(|(e, g)| *e += term.weight * term.scale * g);
        }
        let value = potential + contact + self.step_parts(x, Some(&mut gradient)) + damping_value;
        let parts = hessian.then_some(HessianParts {
            stiffness,
            damping_stiffness,
            low_rank,
        });
        Ok((value, gradient, parts))
    }

    /// The weighted full-pattern matrices whose sum is the Hessian's sparse part.
    fn weighted<'b>(&'b self, parts: &'b HessianParts) -> Vec<(f64, &'b [f64])> {
        let mut terms: Vec<(f64, &[f64])> = vec![(1.0, &parts.stiffness)];
        if let Some(inertia) = &self.inertia {
            terms.push((inertia.weight, self.model.mass().values()));
        }
        if let Some(damping) = &self.damping {
            terms.push((damping.weight, &damping.values));
        }
        if let Some(term) = &self.viscoelastic {
            terms.push((term.weight * term.scale * term.scale, &parts.damping_stiffness));
        }
        terms
    }
}

impl IncrementalPotential<'_> {
    /// Writes Σ wᵢ Aᵢ (full-pattern matrices) plus the low-rank parts into
    /// `matrix`, restricted to the free DOFs or projected onto the subspace.
    fn load(&self, terms: &[(f64, &[f64])], low_rank: &[LowRank], matrix: &mut SystemMatrix) {
        match (&self.coordinates, matrix) {
            (
                Coordinates::Free { dofs, restriction },
                SystemMatrix::Sparse {
                    values, low_rank: part, ..
                },
            ) => {
                restriction.load(terms, values);
                *part = LowRank::combined(&low_rank.iter().map(|l| (1.0, l)).collect::<Vec<_>>())
                    .map(|l| l.restricted(&dofs.free_dofs));
            }
            (Coordinates::Reduced(subspace), SystemMatrix::Dense(reduced)) => {
                // BᵀAB: the summed sparse part times each basis column, plus the low-rank parts.
                let pattern = self.model.pattern();
                let mut summed = vec![0.0; pattern.nonzeros()];
                for (k, value) in summed.iter_mut().enumerate() {
                    *value = terms.iter().map(|(w, a)| w * a[k]).sum();
                }
                let basis = &subspace.basis;
                let mut image = DMatrix::zeros(basis.nrows(), basis.ncols());
                let mut column = vec![0.0; basis.nrows()];
                for j in 0..basis.ncols() {
                    pattern.symmetric_multiply(&summed, basis.column(j).as_slice(), &mut column);
                    for part in low_rank {
                        part.multiply_add(1.0, basis.column(j).as_slice(), &mut column);
                    }
                    image.column_mut(j).copy_from_slice(&column);
                }
                let product = basis.tr_mul(&image);
                *reduced = (&product + product.transpose()) * 0.5;
            }
            _ => unreachable!("the matrix comes from hessian_matrix()"),
        }
    }
}

impl IncrementalPotential<'_> {
    /// Adds the Hessian blocks of the couplings present at x (contact pairs)
    /// to the free system, whose pattern grows to hold them.
    fn add_changing_blocks(&self, x: &[f64], hessian: &mut SystemMatrix) -> Result<()> {
        let blocks = match &self.contact_at_end {
            None => self.model.changing_blocks(x, self.time, self.project_hessian)?,
            Some(map) => {
                // ∂²/∂x² of w C(s x + o) is w s² ∇²C(y).
                let y = map.configuration(x);
                let mut blocks = self
                    .model
                    .changing_blocks_of(TermGroup::Rest, x, self.time, self.project_hessian)?;
                for (group, weight) in map.groups() {
                    let at_end = self
                        .model
                        .changing_blocks_of(group, &y, self.time, self.project_hessian)?;
                    blocks.append(&at_end, weight * map.scale * map.scale);
                }
                blocks
            }
        };
        if blocks.is_empty() {
            return Ok(());
        }
        match (&self.coordinates, hessian) {
            (Coordinates::Free { dofs, .. }, SystemMatrix::Sparse { pattern, values, .. }) => {
                let (extended, summed) = blocks.add_to(pattern, values, &dofs.free_index);
                *pattern = extended;
                *values = summed;
                Ok(())
            }
            _ => Err(crate::error::HookeError::Solver {
                reason: "couplings that change with the positions (contact) need the free DOFs as unknowns, not reduced coordinates".into(),
            }),
        }
    }
}

/// The per-vertex matrix S whose I ⊗ S approximates Σ wᵢ Aᵢ on the free DOFs
/// (full-pattern matrices over `d` coordinates per vertex): Sᵢⱼ is the mean of
/// the diagonal of block (i, j), a partial trace, which keeps a PSD matrix
/// PSD and is exact for the mass and the Laplacians (already I ⊗ scalar).
/// None when some vertex has only part of its coordinates free.
fn per_coordinate(
    pattern: &crate::linalg::LowerPattern,
    d: usize,
    dofs: &DofMap,
    terms: &[(f64, &[f64])],
) -> Option<SystemMatrix> {
    let vertices = pattern.size / d;
    let mut vertex_index = vec![None; vertices];
    let mut free_vertices = 0;
    for (v, slot) in vertex_index.iter_mut().enumerate() {
        let free = (0..d).filter(|a| dofs.free_index[d * v + a].is_some()).count();
        match free {
            0 => {}
            f if f == d => {
                *slot = Some(free_vertices);
                free_vertices += 1;
            }
            _ => return None,
        }
    }
    let mut columns = Vec::with_capacity(free_vertices);
    let mut values = Vec::new();
    for j in 0..vertices {
        if vertex_index[j].is_none() {
            continue;
        }
        let mut rows = Vec::new();
        let column = d * j;
        for k in pattern.column_starts[column]..pattern.column_starts[column + 1] {
            let row = pattern.row_indices[k];
            let (i, a) = (row / d, row % d);
            let Some(new_i) = vertex_index[i].filter(|_| a == 0) else {
                continue;
            };
            let mut trace = 0.0;
            for b in 0..d {
                let position = pattern.position(d * i + b, d * j + b)?;
                trace += terms.iter().map(|(w, m)| w * m[position]).sum::<f64>();
            }
            rows.push(new_i);
            values.push(trace / d as f64);
        }
        columns.push(rows);
    }
    Some(SystemMatrix::Sparse {
        pattern: Arc::new(crate::linalg::LowerPattern::from_columns(columns)),
        values,
        low_rank: None,
    })
}

/// The pieces of the full Hessian before they are summed and restricted.
struct HessianParts {
    stiffness: Vec<f64>,
    damping_stiffness: Vec<f64>,
    low_rank: Vec<LowRank>,
}

impl Objective for IncrementalPotential<'_> {
    fn size(&self) -> usize {
        match &self.coordinates {
            Coordinates::Free { dofs, .. } => dofs.free_count(),
            Coordinates::Reduced(subspace) => subspace.rank(),
        }
    }

    fn value(&self, unknowns: &[f64]) -> f64 {
        let x = self.full_positions(unknowns);
        let mut potential = self.model.energy_of(self.own_terms(), &x, self.time);
        if let Some(map) = &self.contact_at_end {
            potential += map.add(self.model, &x, self.time, None).unwrap_or(f64::INFINITY);
        }
        if !potential.is_finite() {
            return f64::INFINITY;
        }
        let damping = match &self.viscoelastic {
            Some(term) => term.weight * term.reference.energy(&term.configuration(&x)),
            None => 0.0,
        };
        potential + self.step_parts(&x, None) + damping
    }

    fn gradient(&self, unknowns: &[f64], gradient: &mut [f64]) -> Result<f64> {
        let x = self.full_positions(unknowns);
        let (value, full, _) = self.full_derivatives(&x, false)?;
        match &self.coordinates {
            // Gathered straight into the output.
            Coordinates::Free { dofs, .. } => dofs.gather_into(&full, gradient),
            Coordinates::Reduced(_) => gradient.copy_from_slice(&self.reduce(&full)),
        }
        Ok(value)
    }

    fn hessian(&self, unknowns: &[f64], gradient: &mut [f64], hessian: &mut SystemMatrix) -> Result<f64> {
        let x = self.full_positions(unknowns);
        let (value, full, parts) = self.full_derivatives(&x, true)?;
        let parts = parts.expect("asked for the Hessian");
        gradient.copy_from_slice(&self.reduce(&full));
        let terms = self.weighted(&parts);
        if let (Coordinates::Free { restriction, .. }, SystemMatrix::Sparse { pattern, .. }) =
            (&self.coordinates, &*hessian)
        {
            // The last iteration's pattern held its contact pairs; start from the fixed one.
            if !Arc::ptr_eq(pattern, &restriction.pattern) {
                *hessian = self.hessian_matrix();
            }
        }
        self.load(&terms, &parts.low_rank, hessian);
        if self.model.changes_couplings() {
            self.add_changing_blocks(&x, hessian)?;
        }
        Ok(value)
    }

    fn hessian_matrix(&self) -> SystemMatrix {
        match &self.coordinates {
            Coordinates::Free { restriction, .. } => SystemMatrix::zeros_on(restriction.pattern.clone()),
            Coordinates::Reduced(subspace) => SystemMatrix::Dense(DMatrix::zeros(subspace.rank(), subspace.rank())),
        }
    }

    fn quasi_newton_key(&self) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        (self.model as *const Model as usize).hash(&mut hasher);
        let weights = [
            self.inertia.as_ref().map_or(0.0, |i| i.weight),
            self.damping.as_ref().map_or(0.0, |d| d.weight),
            self.viscoelastic.as_ref().map_or(0.0, |v| v.weight * v.scale * v.scale),
        ];
        weights.map(f64::to_bits).hash(&mut hasher);
        self.model.laplacian_activity(self.time).hash(&mut hasher);
        match &self.coordinates {
            Coordinates::Free { dofs, .. } => dofs.free_dofs.hash(&mut hasher),
            Coordinates::Reduced(subspace) => (*subspace as *const Subspace as usize).hash(&mut hasher),
        }
        Some(hasher.finish())
    }

    fn quasi_newton_matrix(&self) -> Result<QuasiNewtonMatrix> {
        // Damping enters with its values now; a Rayleigh matrix that follows
        // the current stiffness changes a little from step to step, which the
        // quasi-Newton updates absorb (the matrix is only their starting point).
        let laplacian = self.model.laplacian(self.time);
        let mut terms: Vec<(f64, &[f64])> = vec![(1.0, &laplacian)];
        if let Some(inertia) = &self.inertia {
            terms.push((inertia.weight, self.model.mass().values()));
        }
        if let Some(damping) = &self.damping {
            terms.push((damping.weight, &damping.values));
        }
        if let Some(term) = &self.viscoelastic {
            terms.push((term.weight * term.scale * term.scale, &laplacian));
        }
        if let Coordinates::Free { dofs, .. } = &self.coordinates {
            if let Some(matrix) = per_coordinate(self.model.pattern(), self.model.dimension(), dofs, &terms) {
                return Ok(QuasiNewtonMatrix {
                    matrix,
                    coordinates: self.model.dimension(),
                });
            }
        }
        let mut matrix = self.hessian_matrix();
        self.load(&terms, &[], &mut matrix);
        Ok(QuasiNewtonMatrix { matrix, coordinates: 1 })
    }

    fn rest_hessian(&self) -> Option<Result<SystemMatrix>> {
        if !matches!(self.coordinates, Coordinates::Free { .. }) {
            return None;
        }
        let at_rest = || {
            let (_, _, parts) = self.full_derivatives(&self.model.rest_positions(), true)?;
            let parts = parts.expect("asked for the Hessian");
            let mut hessian = self.hessian_matrix();
            self.load(&self.weighted(&parts), &parts.low_rank, &mut hessian);
            Ok(hessian)
        };
        Some(at_rest())
    }

    fn feasible_step(&self, unknowns: &[f64], direction: &[f64]) -> Result<f64> {
        if !self.model.bounds_steps() {
            return Ok(1.0);
        }
        let displacement = self.full_displacement(direction);
        match &self.contact_at_end {
            // Only barrier terms bound steps (TermGroup): CCD along y's path, s dx.
            Some(map) => {
                let path: Vec<f64> = displacement.iter().map(|d| map.scale * d).collect();
                self.model.feasible_step(&self.contact_positions(unknowns), &path)
            }
            None => self.model.feasible_step(&self.full_positions(unknowns), &displacement),
        }
    }

    /// The gap in the unknowns' own motion: where contact is felt at
    /// y = s x + o, the unknowns close a gap d by moving d / s.
    fn contact_gap(&self, unknowns: &[f64]) -> Option<f64> {
        let contact = self.model.barrier_contact()?;
        let gap = contact.report(&self.contact_positions(unknowns)).smallest_distance;
        let scale = self.contact_at_end.as_ref().map_or(1.0, |map| map.scale.abs());
        gap.is_finite().then_some(gap / scale)
    }

    fn increment_size(&self, change: &[f64]) -> f64 {
        match &self.coordinates {
            Coordinates::Free { .. } => change.iter().fold(0.0, |m: f64, d| m.max(d.abs())),
            Coordinates::Reduced(subspace) => (&subspace.basis * nalgebra::DVector::from_column_slice(change)).amax(),
        }
    }

    fn length_scale(&self) -> f64 {
        self.model.length_scale()
    }

    fn step_length(&self) -> Option<f64> {
        self.step_length
    }
}
