//! The variational (Hamilton–Pontryagin) midpoint integrator of the Kharevych 2010 thesis, §3.2,
//! written as the minimisation of one scalar function (the "Lilyan", §3.2.8):
//!
//!   v_{k+1} = argmin ½vᵀMv + W(q_k + ½hv) − p_k·v − (h/2) f·v,
//!   q_{k+1} = q_k + h v_{k+1},
//!   p_{k+1} = M v_{k+1} − (h/2)∇W(u) + (h/2) f,  u = q_k + ½h v_{k+1}.
//!
//! With u as the unknown this is Φ(u) = (2/h²)‖u − q_k‖²_M + W(u) − ((2/h)p_k + f)ᵀu,
//! an incremental potential like backward Euler's. External forces enter as the
//! discrete Lagrange–d'Alembert impulses F^{d±} = (h/2) f(t_{k+½}) (§3.2.9);
//! pins are holonomic constraints removed from the unknowns, and vertices kept
//! on a plane or sphere are holonomic constraints with multipliers (§3.2.7).
//!
//! Residual reinjection (§3.2.11): feeding the solver's residual r into the next
//! step, p_{k+1} = M v − (h/2)∇W + (h/2)f − r, is the same as taking the momentum
//! from the δq equation p_{k+1} = p_k + h(f − ∇W(u)). That conserves linear
//! momentum exactly however loosely the minimisation converged, and stops the
//! energy drift a loose tolerance would cause; angular momentum changes by
//! −h Σ v × r, so it is conserved to the solver tolerance. It is on by default.
//!
//! Symplectic and momentum-conserving; for quadratic W it conserves
//! ½pᵀM⁻¹p + W(q) exactly (it is then Simo–Tarnow's energy–momentum scheme).
//! The reported velocity is M⁻¹p_{k+1}.

use super::acceleration::solve_mass;
use super::entry::{settings_from, IntegratorEntry};
use super::implicit::{
    solve_implicit_step, with_step_halving, ImplicitStep, StepDamping, StepSolver, ViscoelasticForm,
};
use super::{axpy, commit_step, history_from_json, history_to_json, Capabilities, Integrator, StepReport, Timed};
use crate::error::Result;
use crate::model::{Model, RebasedElasticity, State};
use crate::solve::{FreeSystem, Inertia, SolverSettings};

/// Multiplier iterations per step for surface constraints.
const MAX_CONSTRAINT_ITERATIONS: usize = 50;

/// The variational (Hamilton–Pontryagin) midpoint integrator of the Kharevych 2010 thesis
/// (§3.2), each step a minimisation: second order, symplectic and momentum-conserving; it
/// also keeps vertices on planes and spheres.
pub struct VariationalMidpoint {
    solver: StepSolver,
    residual_reinjection: bool,
    mass_system: Option<FreeSystem>,
    /// p of the current state.
    momentum: Option<Timed<Vec<f64>>>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Feed the solver's residual into the next step (Kharevych 2010 thesis, §3.2.11).
    #[serde(default = "default_true")]
    residual_reinjection: bool,
}

fn default_true() -> bool {
    true
}

fn build(table: &toml::Table, solver: &SolverSettings) -> Result<Box<dyn Integrator>> {
    let settings: Settings = settings_from(table)?;
    Ok(Box::new(VariationalMidpoint::new(
        solver.clone(),
        settings.residual_reinjection,
    )?))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "variational_midpoint",
    aliases: &["vm"],
    summary: "variational midpoint (Kharevych 2010 thesis, §3.2; minimisation of the Lilyan): order 2, symplectic, momentum-conserving; surface constraints",
    keys: &["residual_reinjection"],
    uses_solver: true,
    build,
};

impl VariationalMidpoint {
    /// With the minimiser `settings` name; `residual_reinjection` feeds each step's solver
    /// residual into the next momentum (§3.2.11; a scene's default), which conserves linear
    /// momentum exactly however loose the tolerance. Fails if `settings` name no registered
    /// minimiser or hold invalid keys for it.
    pub fn new(settings: SolverSettings, residual_reinjection: bool) -> Result<Self> {
        Ok(VariationalMidpoint {
            solver: StepSolver::new(settings)?,
            residual_reinjection,
            mass_system: None,
            momentum: None,
        })
    }

    /// The discrete momentum p of the last committed state, if any.
    pub fn momentum(&self) -> Option<&[f64]> {
        self.momentum.as_ref().map(|p| p.value.as_slice())
    }
    /// The momentum belonging to `s`: the one this integrator stored for it, else M v.
    pub(crate) fn momentum_of(&self, model: &Model, s: &State) -> Vec<f64> {
        match self.momentum.as_ref().and_then(|p| p.at(s.time)) {
            Some(p) => p.clone(),
            None => {
                let mut p = vec![0.0; s.positions.len()];
                model.mass_multiply(&s.velocities, &mut p);
                p
            }
        }
    }

    /// One step of `dt` from `s` with momentum `p`, not committed: the new state,
    /// its momentum and the report.
    pub(crate) fn trial(
        &mut self,
        model: &Model,
        s: &State,
        p: &[f64],
        dt: f64,
    ) -> Result<(State, Vec<f64>, StepReport)> {
        let q = &s.positions;
        let end = s.time + dt;
        let middle = s.time + 0.5 * dt;
        // Pinned DOFs of u sit halfway between their prescribed positions.
        let mut prescribed_end = q.clone();
        model.apply_prescribed_positions(end, &mut prescribed_end);
        let dofs = model.dof_map(end);
        let guess = axpy(q, 0.5 * dt, &s.velocities);
        let base: Vec<f64> = (0..q.len())
            .map(|i| match dofs.free_index[i] {
                Some(_) => guess[i],
                None => 0.5 * (q[i] + prescribed_end[i]),
            })
            .collect();
        let step = ImplicitStep {
            contact_at_end: None,
            step_length: Some(0.5 * dt),
            dof_time: end,
            base,
            inertia: Some(Inertia {
                weight: 4.0 / (dt * dt),
                predicted: q.clone(),
            }),
            damping: Some(StepDamping {
                weight: 2.0 / dt,
                center: q.clone(),
            }),
            force_time: middle,
            extra_force: Some(p.iter().map(|pi| 2.0 / dt * pi).collect()),
            // The Lilyan's (k_D/h) W_ref(q_k + h v) with q_k + h v = 2u − q_k.
            viscoelastic: Some(ViscoelasticForm {
                weight: 1.0 / dt,
                scale: 2.0,
                offset: q.iter().map(|x| -x).collect(),
            }),
        };
        let (u, report) = solve_implicit_step(model, s, step, &mut self.solver)?;

        // ∇E(u, t_{k+½}) includes the loads: −∇E = f − ∇W.
        let mut gradient = vec![0.0; q.len()];
        model.gradient(&u, middle, &mut gradient)?;
        let velocity: Vec<f64> = u.iter().zip(q).map(|(ui, qi)| 2.0 * (ui - qi) / dt).collect();
        let mut damping_impulse = vec![0.0; q.len()];
        if let Some(d) = model.damping_values(q)? {
            model.pattern().symmetric_multiply(&d, &velocity, &mut damping_impulse);
        }
        let positions: Vec<f64> = u.iter().zip(q).map(|(ui, qi)| 2.0 * ui - qi).collect();
        let coefficient = model.viscoelastic_coefficient();
        let mut viscoelastic_impulse = vec![0.0; q.len()];
        if self.residual_reinjection && coefficient > 0.0 {
            // −k_D ∇W(F(q_k, q_{k+1})), the impulse the minimisation included.
            RebasedElasticity::new(model, q)?.gradient(&positions, &mut viscoelastic_impulse)?;
            viscoelastic_impulse.iter_mut().for_each(|g| *g *= coefficient);
        }
        let momentum: Vec<f64> = if self.residual_reinjection {
            (0..q.len())
                .map(|i| p[i] + dt * (-gradient[i] - damping_impulse[i]) - viscoelastic_impulse[i])
                .collect()
        } else {
            let mut mv = vec![0.0; q.len()];
            model.mass_multiply(&velocity, &mut mv);
            (0..q.len())
                .map(|i| mv[i] + 0.5 * dt * (-gradient[i] - damping_impulse[i]))
                .collect()
        };
        // Velocities: M_ff v_f = p_f − M_fp v_p, with the pins' prescribed velocities v_p.
        let mut pinned_velocities = vec![0.0; q.len()];
        model.apply_prescribed_velocities(end, &mut pinned_velocities);
        let mut coupling = vec![0.0; q.len()];
        model.mass_multiply(&pinned_velocities, &mut coupling);
        let free_momentum: Vec<f64> = momentum.iter().zip(&coupling).map(|(p, c)| p - c).collect();
        let mut velocities = solve_mass(model, &dofs, &free_momentum, &mut self.mass_system)?;
        model.apply_prescribed_velocities(end, &mut velocities);
        // Pinned DOFs carry the momentum of their prescribed motion: the update above
        // lacks the pin's reaction, and what it accumulated would kick a released vertex.
        let mut momentum = momentum;
        let mut moving = vec![0.0; q.len()];
        model.mass_multiply(&velocities, &mut moving);
        for (i, p) in momentum.iter_mut().enumerate() {
            if dofs.free_index[i].is_none() {
                *p = moving[i];
            }
        }
        Ok((
            State {
                time: end,
                positions,
                velocities,
            },
            momentum,
            StepReport::from(&report),
        ))
    }

    /// [`Self::trial`] with the model's surface constraints g(q) = 0 (Kharevych
    /// 2010 thesis, §3.2.7, eq. 3.14): the constraint impulse h Σ λ ∇g(q_k) joins p_k, and the
    /// multipliers λ are found so that q_{k+1} lies on the surfaces (SHAKE-like:
    /// directions known at q_k, magnitudes implicit). Each λ iteration is a full
    /// trial; the update is a per-constraint secant, started from h²|∇g|²/m.
    pub(crate) fn constrained_trial(
        &mut self,
        model: &Model,
        s: &State,
        p: &[f64],
        dt: f64,
    ) -> Result<(State, Vec<f64>, StepReport)> {
        if model.constraints().is_empty() {
            return self.trial(model, s, p, dt);
        }
        let dofs = model.dof_map(s.time + dt);
        let d = model.dimension();
        let point = |x: &[f64], v: usize| crate::model::vertex_point(x, v, d);
        // (vertex, constraint, ∇g at q_k) for every constrained vertex whose components are all free.
        let entries: Vec<(usize, &crate::model::SurfaceConstraint, nalgebra::Vector3<f64>)> = model
            .constraints()
            .iter()
            .flat_map(|c| c.vertices.iter().map(move |&v| (v, c)))
            .filter(|(v, _)| (0..d).all(|a| dofs.free_index[d * v + a].is_some()))
            .map(|(v, c)| (v, c, c.value_and_gradient(&point(&s.positions, v)).1))
            .collect();
        let masses = model.mass().lumped();
        let mut slopes: Vec<f64> = entries.iter().map(|(v, _, _)| dt * dt / masses[*v]).collect();
        let mut lambda = vec![0.0; entries.len()];
        let mut previous: Option<(Vec<f64>, Vec<f64>)> = None;
        let tolerance = self.solver.settings.tolerance * model.length_scale();
        let mut total = StepReport::default();
        let mut worst = f64::INFINITY;
        for _ in 0..MAX_CONSTRAINT_ITERATIONS {
            let mut pushed = p.to_vec();
            for ((v, _, gradient), l) in entries.iter().zip(&lambda) {
                for a in 0..d {
                    pushed[d * v + a] += dt * l * gradient[a];
                }
            }
            let (next, momentum, report) = self.trial(model, s, &pushed, dt)?;
            total.absorb(&report);
            let residuals: Vec<f64> = entries
                .iter()
                .map(|(v, c, _)| c.value_and_gradient(&point(&next.positions, *v)).0)
                .collect();
            worst = residuals.iter().fold(0.0f64, |a, r| a.max(r.abs()));
            if worst <= tolerance {
                return Ok((next, momentum, total));
            }
            // Per-constraint secant slopes dg/dλ once two iterates exist.
            if let Some((old_lambda, old_residuals)) = &previous {
                for e in 0..entries.len() {
                    let change = lambda[e] - old_lambda[e];
                    let slope = (residuals[e] - old_residuals[e]) / change;
                    if change != 0.0 && slope.is_finite() && slope.abs() > 1e-3 * slopes[e].abs() {
                        slopes[e] = slope;
                    }
                }
            }
            previous = Some((lambda.clone(), residuals.clone()));
            for e in 0..entries.len() {
                lambda[e] -= residuals[e] / slopes[e];
            }
        }
        Err(crate::error::HookeError::Solver {
            reason: format!(
                "the surface constraints were not met after {MAX_CONSTRAINT_ITERATIONS} multiplier iterations (largest |g| = {worst:e}); reduce time_step"
            ),
        })
    }

    /// Makes `momentum` the stored momentum of the state at `time`.
    pub(crate) fn remember(&mut self, time: f64, momentum: Vec<f64>) {
        self.momentum = Some(Timed::new(time, momentum));
    }
}

impl Integrator for VariationalMidpoint {
    fn name(&self) -> &'static str {
        "variational_midpoint"
    }

    fn iterations_are(&self) -> &'static str {
        self.solver.minimizer.iterations_are()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            viscoelastic_damping: true,
            surface_constraints: true,
            ..Capabilities::COMMON
        }
    }

    fn history(&self) -> Result<serde_json::Value> {
        history_to_json(&self.momentum)
    }

    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        self.momentum = history_from_json(self.name(), history)?;
        Ok(())
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let settings = self.solver.settings.clone();
        // Momenta of the states reached, so that half steps (continuation) start from the right one.
        let mut momenta = vec![Timed::new(state.time, self.momentum_of(model, state))];
        let report = commit_step(model, state, dt, |s| {
            with_step_halving(model, s, dt, &settings, &mut |sub, h| {
                let p = momenta
                    .iter()
                    .rev()
                    .find_map(|p| p.at(sub.time).cloned())
                    .unwrap_or_else(|| self.momentum_of(model, sub));
                let (next, momentum, report) = self.constrained_trial(model, sub, &p, h)?;
                momenta.push(Timed::new(next.time, momentum));
                Ok((next, report))
            })
        });
        if report.is_ok() {
            if let Some(last) = momenta.pop() {
                self.remember(last.time, last.value);
            }
        }
        report
    }
}
