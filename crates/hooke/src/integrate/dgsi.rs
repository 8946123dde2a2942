//! DGSI, the discontinuous Galerkin semi-implicit splitting of the Chen 2019 thesis,
//! ch. 5 (Eq. 5.11, with its sign corrected: +h²K_e, as the thesis' K = −∂f/∂x requires):
//! only the elements' own (elastic) stiffness K_e is implicit; the interface
//! terms, gravity, loads, soft pins, contact and damping act explicitly:
//!
//!   (M + h² K_e) Δv = h (f(xₙ) − h K_e vₙ),  v_{n+1} = vₙ + Δv,  x_{n+1} = xₙ + h v_{n+1},
//!
//! with f every force at the step's start (external ones at t_{n+1}, damping
//! −D vₙ). In a discontinuous body every vertex belongs to one triangle, so
//! M (lumped or consistent) and K_e are block diagonal and the system splits
//! into one small dense solve per element, done in parallel; each vertex's Δv
//! comes from its own element, so the result does not depend on the thread
//! count. K_e is projected to PSD per element by default (`project_hessian`),
//! which makes every block positive definite. Explicit interface forces bound
//! the stable step by the interface stiffness (η_f): the scheme is stable
//! where the penalty is soft next to the elements, as Chen's thesis notes (§5.2).

use super::entry::{settings_from, IntegratorEntry};
use super::semi_implicit_euler::Linearisation;
use super::{axpy, commit_step, Capabilities, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::solve::SolverSettings;
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use web_time::Instant;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    #[serde(default = "default_true")]
    project_hessian: bool,
}

fn default_true() -> bool {
    true
}

fn build(table: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    let settings: Settings = settings_from(table)?;
    Ok(Box::new(Dgsi::new(settings.project_hessian)))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "dgsi",
    aliases: &["dg_semi_implicit"],
    summary: "DGSI (Chen 2019 thesis, ch. 5): semi-implicit Euler with only the element stiffness implicit, solved element by element; discontinuous Galerkin bodies only",
    keys: &["project_hessian"],
    uses_solver: false,
    build,
};

/// DGSI, the discontinuous Galerkin semi-implicit splitting of the Chen 2019 thesis (ch. 5):
/// semi-implicit Euler with only the elements' own stiffness implicit, solved element by
/// element; interface forces are explicit. Discontinuous Galerkin bodies only.
pub struct Dgsi {
    project_hessian: bool,
}

impl Dgsi {
    /// With `project_hessian`, each element's stiffness is projected to positive
    /// semi-definite (a scene's default), which makes every element's system positive definite.
    pub fn new(project_hessian: bool) -> Dgsi {
        Dgsi { project_hessian }
    }
}

/// The vertices of every element of the model's element terms.
fn element_blocks(model: &Model) -> Vec<Vec<usize>> {
    model
        .terms()
        .iter()
        .filter_map(|t| t.as_elasticity())
        .flat_map(|e| (0..e.element_count()).map(move |i| e.element_vertices(i).to_vec()))
        .collect()
}

impl Integrator for Dgsi {
    fn name(&self) -> &'static str {
        "dgsi"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            low_rank_terms: false,
            ..Capabilities::COMMON
        }
    }

    fn requirements(&self, model: &Model) -> Result<()> {
        let mut owner = vec![None; model.mesh().vertex_count()];
        for (e, vertices) in element_blocks(model).iter().enumerate() {
            for &v in vertices {
                if let Some(first) = owner[v].replace(e) {
                    return Err(HookeError::scene(
                        "integrator.kind",
                        format!(
                            "dgsi splits discontinuous Galerkin bodies, whose elements share no vertex; vertex {v} belongs to elements {first} and {e} (give the body discretization = {{ discontinuous = {{ … }} }}, or use semi_implicit_backward_euler)"
                        ),
                    ));
                }
            }
        }
        if let Some(v) = owner.iter().position(Option::is_none) {
            return Err(HookeError::scene(
                "integrator.kind",
                format!("dgsi needs every vertex in an element; vertex {v} is in none"),
            ));
        }
        Ok(())
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        commit_step(model, state, dt, |state| {
            let started = Instant::now();
            let n = model.dof_count();
            let next_time = state.time + dt;
            // Every force (through the linearisation's f), and K_e from the element terms alone.
            let mut gradient = vec![0.0; n];
            model.gradient(&state.positions, next_time, &mut gradient)?;
            let (stiffness, _) = model.element_hessian(&state.positions, next_time, self.project_hessian)?;
            let linearisation = Linearisation::from_parts(model, state, dt, gradient, stiffness, started)?;
            let assembled = started.elapsed().as_secs_f64();
            let mut prescribed = state.positions.clone();
            model.apply_prescribed_positions(next_time, &mut prescribed);
            let d = model.dimension();
            let pattern = model.pattern();
            let mass = model.mass().values();
            let entry =
                |values: &[f64], p: usize, q: usize| pattern.position(p.max(q), p.min(q)).map_or(0.0, |k| values[k]);
            let blocks = element_blocks(model);
            let changes: Vec<Result<Vec<(usize, f64)>>> = blocks
                .par_iter()
                .enumerate()
                .map(|(e, vertices)| {
                    let dofs: Vec<usize> = vertices.iter().flat_map(|&v| (0..d).map(move |a| d * v + a)).collect();
                    let local = dofs.len();
                    let k = DMatrix::from_fn(local, local, |r, c| entry(&linearisation.stiffness, dofs[r], dofs[c]));
                    let a = DMatrix::from_fn(local, local, |r, c| entry(mass, dofs[r], dofs[c])) + &k * (dt * dt);
                    let velocity = DVector::from_fn(local, |r, _| state.velocities[dofs[r]]);
                    let force = DVector::from_fn(local, |r, _| linearisation.force[dofs[r]]);
                    let mut rhs = (force - &k * velocity * dt) * dt;
                    // Pinned DOFs take the Δv that brings them to their prescribed positions.
                    let mut change = DVector::zeros(local);
                    let free: Vec<usize> = (0..local)
                        .filter(|&r| linearisation.dofs.free_index[dofs[r]].is_some())
                        .collect();
                    for r in (0..local).filter(|r| !free.contains(r)) {
                        let i = dofs[r];
                        change[r] = (prescribed[i] - state.positions[i]) / dt - state.velocities[i];
                    }
                    rhs -= &a * &change;
                    if !free.is_empty() {
                        let a_free = a.select_rows(&free).select_columns(&free);
                        let rhs_free = DVector::from_iterator(free.len(), free.iter().map(|&r| rhs[r]));
                        let solved = match a_free.clone().cholesky() {
                            Some(cholesky) => cholesky.solve(&rhs_free),
                            None => a_free.lu().solve(&rhs_free).ok_or_else(|| HookeError::LinearSolver {
                                reason: format!("dgsi: the system of element {e} is singular (M + h²K_e)"),
                            })?,
                        };
                        for (slot, &r) in free.iter().enumerate() {
                            change[r] = solved[slot];
                        }
                    }
                    Ok(dofs.into_iter().zip(change.iter().copied()).collect())
                })
                .collect();
            let mut velocities = state.velocities.clone();
            for block in changes {
                for (dof, dv) in block? {
                    velocities[dof] += dv;
                }
            }
            let mut positions = axpy(&state.positions, dt, &velocities);
            model.apply_prescribed_positions(next_time, &mut positions);
            let report = StepReport {
                iterations: 1,
                factorizations: 0,
                assembly_seconds: assembled,
                solve_seconds: started.elapsed().as_secs_f64() - assembled,
                ..StepReport::default()
            };
            Ok((
                State {
                    time: next_time,
                    positions,
                    velocities,
                },
                report,
            ))
        })
    }
}
