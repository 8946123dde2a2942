//! Full-space mixed FEM (Trusty et al. 2022), the baseline Trusty et al. 2023 reduce:
//! the same formulation as [`super::solver`]'s subspace mixed FEM, with every
//! element's stretch z_e an unknown and the positions free. Each SQP iteration
//! condenses to one sparse solve,
//! (M/h² + H_other + Σₑ Vₑ Dₑᵀ J_Sᵀ Hₑ J_S Dₑ) dx = −∇Φ_x − Σₑ Vₑ Dₑᵀ J_Sᵀ [ψ'(zₑ) + Hₑ (z̄ₑ(x) − zₑ)],
//! with Dₑ = ∂vec(F)/∂x of the element, followed by the local updates
//! dzₑ = z̄ₑ − zₑ + J_S Dₑ dx and μₑ = D⁻¹[ψ'(zₑ) + Hₑ dzₑ] and a backtracking
//! line search on the Lagrangian. Element matrices go through the
//! deterministic gather; gravity, loads and soft pins enter Φ_x as terms of
//! the model. Its cost grows with the mesh (a sparse factorisation a step):
//! it is here to measure what the subspace saves, and for small problems.

use super::solver::IterationReport;
use super::stretch::{
    constraint_gap, evaluate_stretch, local_update, relative_gap, stretch_energy, LocalUpdate, Stretch,
    OFF_DIAGONAL_WEIGHT,
};
use crate::error::{HookeError, Result};
use crate::fem::{ElementGather, ElementKind, LinearTetrahedron, TetrahedronGeometry, PACKED_HESSIAN_LEN};
use crate::integrate::{
    commit_step, optional_history_from_json, optional_history_to_json, same_time, Capabilities, Integrator, StepReport,
};
use crate::linalg::dot;
use crate::linalg::{LowRank, SparseCholesky};
use crate::material::{MaterialRef, StressDerivative};
use crate::mesh::Mesh;
use crate::model::{HessianTarget, Model, State};
use crate::solve::SolverSettings;
use nalgebra::{Matrix3, SMatrix, Vector6};
use rayon::prelude::*;

/// What carries into the next step: the stretches.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct MixedHistory {
    time: f64,
    stretches: Vec<[f64; 6]>,
}

/// The per-element quantities of one iteration.
struct ElementState {
    target: Vector6<f64>,
    jacobian: SMatrix<f64, 6, 9>,
    gradient: Vector6<f64>,
    hessian: SMatrix<f64, 6, 6>,
    energy: f64,
}

/// An element's local update: dz, μ, the constraint force Dₑᵀ J_Sᵀ D μ
/// (per vertex) and its share of the line search's slope.
/// Backward Euler by full-space mixed FEM.
pub struct FullMixedBackwardEuler {
    tets: Vec<[usize; 4]>,
    geometries: Vec<TetrahedronGeometry>,
    materials: Vec<MaterialRef>,
    gather: ElementGather,
    settings: SolverSettings,
    length_scale: f64,
    factor: Option<SparseCholesky>,
    history: Option<MixedHistory>,
    last_iterations: Vec<IterationReport>,
}

/// Gravity, loads, pins and soft pins, moving or released.
const FULL_MIXED: Capabilities = Capabilities {
    viscoelastic_damping: false,
    rayleigh_damping: false,
    obstacles: false,
    surface_constraints: false,
    loads: true,
    moving_pins: true,
    element_terms: true,
    two_dimensional: false,
    reduced_coordinates: false,
    low_rank_terms: false,
    gradient_only: false,
    barrier_contact: false,
};

const ARMIJO: f64 = 1e-4;

impl FullMixedBackwardEuler {
    /// For a 3D model of tetrahedra whose only elastic term is its elements.
    pub fn new(model: &Model, settings: SolverSettings) -> Result<FullMixedBackwardEuler> {
        let Mesh::Tetrahedra(mesh) = model.mesh() else {
            return Err(HookeError::scene(
                "solver.kind",
                "mixed_sqp needs a 3D model of tetrahedra",
            ));
        };
        let materials = model.materials();
        if materials.len() != mesh.tets.len() {
            return Err(HookeError::scene(
                "solver.kind",
                "mixed_sqp needs every element to have a material and no other elastic elements (springs, membranes)",
            ));
        }
        let geometries = mesh
            .tets
            .iter()
            .enumerate()
            .map(|(e, tet)| {
                let corners: Vec<_> = tet.iter().map(|&v| mesh.vertices[v]).collect();
                LinearTetrahedron::geometry(&corners)
                    .ok_or_else(|| HookeError::scene("mesh", format!("element {e} is flat at rest")))
            })
            .collect::<Result<Vec<_>>>()?;
        let connectivity: Vec<usize> = mesh.tets.iter().flatten().copied().collect();
        Ok(FullMixedBackwardEuler {
            gather: ElementGather::new(&connectivity, 4, 3, model.pattern()),
            tets: mesh.tets.clone(),
            geometries,
            materials,
            settings,
            length_scale: model.length_scale(),
            factor: None,
            history: None,
            last_iterations: Vec::new(),
        })
    }

    /// The iterations of the last step.
    pub fn last_iterations(&self) -> &[IterationReport] {
        &self.last_iterations
    }

    fn local(&self, e: usize, x: &[f64]) -> [f64; 12] {
        let mut local = [0.0; 12];
        for (a, &v) in self.tets[e].iter().enumerate() {
            local[3 * a..3 * a + 3].copy_from_slice(&x[3 * v..3 * v + 3]);
        }
        local
    }

    fn stretch(&self, e: usize, x: &[f64]) -> Stretch {
        Stretch::of(&LinearTetrahedron::deformation_gradient(
            &self.geometries[e],
            &self.local(e, x),
        ))
    }

    /// Φ_x(x) = ½ (x − x̃)ᵀ M (x − x̃)/h² + the other terms, and its gradient.
    fn outer(&self, model: &Model, x: &[f64], predicted: &[f64], h: f64, time: f64) -> Result<(f64, Vec<f64>)> {
        let offset: Vec<f64> = x.iter().zip(predicted).map(|(a, b)| a - b).collect();
        let mut inertia = vec![0.0; x.len()];
        model.mass_multiply(&offset, &mut inertia);
        let mut value = 0.5 * dot(&offset, &inertia) / (h * h);
        let mut gradient: Vec<f64> = inertia.iter().map(|m| m / (h * h)).collect();
        for term in model.terms().iter().filter(|t| t.as_elasticity().is_none()) {
            value += term.gradient(x, time, &mut gradient, false)?;
        }
        Ok((value, gradient))
    }

    /// The stretch unknowns at `state`: the last step's, or, with no step
    /// to it (the start, a state set from outside), the stretches of its positions.
    fn stretch_unknowns(&self, state: &State) -> Vec<Vector6<f64>> {
        match self.history.as_ref().filter(|h| same_time(h.time, state.time)) {
            Some(history) => history
                .stretches
                .iter()
                .map(|s| Vector6::from_column_slice(s))
                .collect(),
            None => (0..self.tets.len())
                .map(|e| self.stretch(e, &state.positions).vector())
                .collect(),
        }
    }

    /// ℒ(x, z; μ).
    #[allow(clippy::too_many_arguments)]
    fn lagrangian(
        &self,
        model: &Model,
        x: &[f64],
        z: &[Vector6<f64>],
        multipliers: &[Vector6<f64>],
        predicted: &[f64],
        h: f64,
        time: f64,
    ) -> Result<f64> {
        let d = Vector6::from_column_slice(&OFF_DIAGONAL_WEIGHT);
        let elements: f64 = (0..self.tets.len())
            .into_par_iter()
            .map(|e| {
                let w = self.geometries[e].rest_volume;
                let gap = (self.stretch(e, x).vector() - z[e]).component_mul(&d);
                w * (stretch_energy(&*self.materials[e], &z[e]) + multipliers[e].dot(&gap))
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum();
        Ok(self.outer(model, x, predicted, h, time)?.0 + elements)
    }

    /// One SQP iteration from (x, z), updated in place.
    #[allow(clippy::too_many_arguments)]
    ///
    /// One function of about 170 lines: one SQP iteration of mixed FEM (Trusty et al. 2023, §4–5)
    /// computes each element's state, condenses the system, solves it, recovers the stretches'
    /// changes and multipliers and line-searches the merit function over the same per-element data.
    fn iteration(
        &mut self,
        model: &Model,
        x: &mut [f64],
        z: &mut [Vector6<f64>],
        predicted: &[f64],
        h: f64,
        time: f64,
    ) -> Result<IterationReport> {
        let count = self.tets.len();
        let mut matrices = vec![0.0; count * PACKED_HESSIAN_LEN];
        let mut forces = vec![0.0; count * 12];
        let states: Vec<Result<ElementState>> = matrices
            .par_chunks_mut(PACKED_HESSIAN_LEN)
            .zip(forces.par_chunks_mut(12))
            .enumerate()
            .map(|(e, (matrix, force))| {
                let stretch = self.stretch(e, x);
                let jacobian = stretch.jacobian();
                let target = stretch.vector();
                let evaluation =
                    evaluate_stretch(&*self.materials[e], &z[e], true).ok_or_else(|| HookeError::Solver {
                        reason: format!("the stretch of element {e} is outside its material's domain"),
                    })?;
                // As an element of ordinary FEM with ∂P/∂F = J_Sᵀ H J_S and
                // P = J_Sᵀ [ψ' + H (z̄ − z)]: the chain rule through Dₑ and the
                // volume are the element kind's.
                let derivative = jacobian.transpose() * evaluation.hessian * jacobian;
                LinearTetrahedron::stiffness(&self.geometries[e], &StressDerivative::Matrix(derivative), matrix);
                let stress = jacobian.transpose() * (evaluation.gradient + evaluation.hessian * (target - z[e]));
                LinearTetrahedron::gradient(
                    &self.geometries[e],
                    &Matrix3::from_column_slice(stress.as_slice()),
                    force,
                );
                Ok(ElementState {
                    target,
                    jacobian,
                    gradient: evaluation.gradient,
                    hessian: evaluation.hessian,
                    energy: evaluation.energy,
                })
            })
            .collect();
        let states: Vec<ElementState> = states.into_iter().collect::<Result<_>>()?;
        let pattern = model.pattern();
        let mut values = vec![0.0; pattern.nonzeros()];
        self.gather.matrices(&matrices, &mut values, true);
        let mut elastic = vec![0.0; x.len()];
        self.gather.vectors(&forces, &mut elastic, true);
        // The other terms' Hessians (soft pins), the inertia, and Φ_x's gradient.
        let mut other_gradient = vec![0.0; x.len()];
        let mut low_rank: Vec<LowRank> = Vec::new();
        for term in model.terms().iter().filter(|t| t.as_elasticity().is_none()) {
            let mut target = HessianTarget {
                values: &mut values,
                low_rank: &mut low_rank,
            };
            term.hessian(x, time, true, &mut other_gradient, &mut target, false)?;
        }
        for (value, mass) in values.iter_mut().zip(model.mass().values()) {
            *value += mass / (h * h);
        }
        let (outer, outer_gradient) = self.outer(model, x, predicted, h, time)?;
        let dofs = model.dof_map(time);
        let (free_pattern, source) = pattern.restrict(&dofs.free_index);
        let free_values: Vec<f64> = source.iter().map(|&s| values[s]).collect();
        if self.factor.as_ref().is_none_or(|f| f.pattern() != &free_pattern) {
            self.factor = Some(SparseCholesky::analyse(&free_pattern)?);
        }
        let factor = self.factor.as_mut().expect("analysed above");
        factor.factorize(&free_values)?;
        let mut rhs: Vec<f64> = dofs
            .free_dofs
            .iter()
            .map(|&i| -(outer_gradient[i] + elastic[i]))
            .collect();
        factor.solve_in_place(&mut rhs)?;
        let mut dx = vec![0.0; x.len()];
        for (&i, value) in dofs.free_dofs.iter().zip(&rhs) {
            dx[i] = *value;
        }
        // The local updates, and the slope of ℒ along (dx, dz) with μ fixed.
        let d = Vector6::from_column_slice(&OFF_DIAGONAL_WEIGHT);
        let updates: Vec<LocalUpdate<12>> = states
            .par_iter()
            .enumerate()
            .map(|(e, state)| {
                let geometry = &self.geometries[e];
                let df = LinearTetrahedron::deformation_gradient(geometry, &self.local(e, &dx));
                local_update(
                    &state.target,
                    &z[e],
                    &state.jacobian,
                    &state.gradient,
                    &state.hessian,
                    &SMatrix::<f64, 9, 1>::from_column_slice(df.as_slice()),
                    geometry.rest_volume,
                    |pulled| {
                        // The nodal forces of the stress Jᵀ D μ (the tet's gradient applies its volume).
                        let mut force = [0.0; 12];
                        LinearTetrahedron::gradient(
                            geometry,
                            &Matrix3::from_column_slice(pulled.as_slice()),
                            &mut force,
                        );
                        force
                    },
                )
            })
            .collect();
        let constraint_forces: Vec<f64> = updates.iter().flat_map(|u| u.force).collect();
        let mut constraint = vec![0.0; x.len()];
        self.gather.vectors(&constraint_forces, &mut constraint, true);
        let slope = dot(&outer_gradient, &dx) + dot(&constraint, &dx) + updates.iter().map(|u| u.slope).sum::<f64>();
        let multipliers: Vec<Vector6<f64>> = updates.iter().map(|u| u.multiplier).collect();
        let dz: Vec<Vector6<f64>> = updates.iter().map(|u| u.change).collect();
        let start = outer
            + states
                .iter()
                .enumerate()
                .map(|(e, s)| {
                    self.geometries[e].rest_volume
                        * (s.energy + multipliers[e].dot(&(s.target - z[e]).component_mul(&d)))
                })
                .sum::<f64>();
        let decrement = -dot(
            &rhs,
            &dofs
                .free_dofs
                .iter()
                .map(|&i| outer_gradient[i] + elastic[i])
                .collect::<Vec<_>>(),
        );
        // The line search starts from the feasible step bound of the model's terms.
        let mut alpha = match model.bounds_steps() {
            true => model.feasible_step(x, &dx)?,
            false => 1.0,
        };
        let mut accepted = None;
        if slope < 0.0 && alpha > 0.0 {
            for _ in 0..40 {
                let trial_x: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a + alpha * b).collect();
                let trial_z: Vec<Vector6<f64>> = z.iter().zip(&dz).map(|(a, b)| a + alpha * b).collect();
                let value = self.lagrangian(model, &trial_x, &trial_z, &multipliers, predicted, h, time)?;
                if value.is_finite() && value <= start + ARMIJO * alpha * slope {
                    accepted = Some((trial_x, trial_z, value));
                    break;
                }
                alpha *= 0.5;
            }
        }
        let (step_length, merit) = match accepted {
            Some((trial_x, trial_z, value)) => {
                x.copy_from_slice(&trial_x);
                z.copy_from_slice(&trial_z);
                (alpha, value)
            }
            None => (0.0, start),
        };
        let increment = step_length * dx.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        Ok(IterationReport {
            decrement,
            step_length,
            increment,
            merit,
        })
    }
}

impl Integrator for FullMixedBackwardEuler {
    fn name(&self) -> &'static str {
        "backward_euler"
    }

    fn iterations_are(&self) -> &'static str {
        "SQP iterations"
    }

    fn capabilities(&self) -> Capabilities {
        FULL_MIXED
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let mut z = self.stretch_unknowns(state);
        let settings = self.settings.clone();
        let limit = settings.iterations.unwrap_or(settings.max_iterations.unwrap_or(50));
        let threshold = settings.tolerance * self.length_scale;
        let mut iterations = Vec::new();
        let this = &mut *self;
        let report = commit_step(model, state, dt, |state| {
            let time = state.time + dt;
            let predicted: Vec<f64> = state
                .positions
                .iter()
                .zip(&state.velocities)
                .map(|(x, v)| x + dt * v)
                .collect();
            // Pinned DOFs start, and stay, where their pins put them at t + h.
            let mut x = state.positions.clone();
            model.apply_prescribed_positions(time, &mut x);
            let started = web_time::Instant::now();
            let mut converged = false;
            for _ in 0..limit {
                let report = this.iteration(model, &mut x, &mut z, &predicted, dt, time)?;
                iterations.push(report);
                if report.increment <= threshold || report.step_length == 0.0 {
                    converged = true;
                    break;
                }
            }
            if !converged && settings.iterations.is_none() {
                return Err(HookeError::Solver {
                    reason: format!("mixed FEM did not converge in {limit} iterations"),
                });
            }
            let velocities = x.iter().zip(&state.positions).map(|(a, b)| (a - b) / dt).collect();
            let report = StepReport {
                iterations: iterations.len(),
                factorizations: iterations.len(),
                solve_seconds: started.elapsed().as_secs_f64(),
                relative_increment: iterations.last().map_or(0.0, |r| r.increment / this.length_scale),
                short_of_tolerance: !converged && settings.iterations.is_none(),
                ..StepReport::default()
            };
            Ok((
                State {
                    positions: x,
                    velocities,
                    time,
                },
                report,
            ))
        })?;
        self.history = Some(MixedHistory {
            time: state.time,
            stretches: z.iter().map(|s| (*s).into()).collect(),
        });
        self.last_iterations = iterations;
        Ok(report)
    }

    /// The model's record, with the elements' elastic energy taken at their
    /// stretch unknowns, Σ Vₑ ψ(zₑ) (the energy the solver minimises), and
    /// the constraint gap between zₑ and the stretch of the positions.
    fn energy_record(&self, model: &Model, state: &State) -> Result<crate::output::EnergyRecord> {
        let mut record = crate::energy_record::energy_record(model, state);
        let z = self.stretch_unknowns(state);
        let per_element: Vec<(f64, (f64, f64))> = (0..self.tets.len())
            .into_par_iter()
            .map(|e| {
                let volume = self.geometries[e].rest_volume;
                let f = LinearTetrahedron::deformation_gradient(&self.geometries[e], &self.local(e, &state.positions));
                let target = Stretch::of(&f).vector();
                // As the model's element term evaluates it, so that the difference is exact.
                let at_positions = self.materials[e]
                    .evaluate(&f, crate::material::Want::Energy)
                    .energy_density;
                let at_unknowns = stretch_energy(&*self.materials[e], &z[e]);
                (
                    volume * (at_unknowns - at_positions),
                    (volume, relative_gap(&target, &z[e])),
                )
            })
            .collect();
        let change: f64 = per_element.iter().map(|p| p.0).sum();
        let gaps: Vec<(f64, f64)> = per_element.iter().map(|p| p.1).collect();
        record.elastic += change;
        record.total += change;
        record.constraint_gap = Some(constraint_gap(&gaps));
        Ok(record)
    }

    fn history(&self) -> Result<serde_json::Value> {
        optional_history_to_json(&self.history)
    }

    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        self.history = optional_history_from_json("mixed FEM", history)?;
        Ok(())
    }
}
