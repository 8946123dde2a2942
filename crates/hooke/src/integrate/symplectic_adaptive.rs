//! The symplectic time-adaptive variational integrator of the Kharevych 2010 thesis, §3.3
//! (eqs. 3.24–3.27): the midpoint discrete Lagrangian
//!   L(q_k, q_{k+1}, Δt) = Δt [½ |q_{k+1} − q_k|²_M / Δt² − W((q_k + q_{k+1})/2)]
//! with the real step Δt_{k+1} = h σ(midpoint) imposed by a Lagrange multiplier
//! λ_k. The three variations give
//!   δq (3.25): p_k − M Δq/Δt − (Δt/2) ∇W(u) − (hλ_k/2) ∇σ(u) = 0,   u = midpoint,
//!   δt (3.26): λ_k = λ_{k−1} + E_{k+1} − E_k,  E_{k+1} = ½|Δq|²_M/Δt² + W(u),
//!   δλ (3.27): Δt = h σ(u),
//! where p_k = M Δq_prev/Δt_prev − (Δt_prev/2) ∇W(u_prev) − (hλ_{k−1}/2) ∇σ(u_prev)
//! is carried from the last step (the h on the λ terms follows eq. 3.25; the
//! thesis' worked examples in §3.3.6 drop it).
//!
//! The step is a fixed-step integrator of a modified system with energy
//! (E − E₀)σ, so |E_k − E₀| stays O(h²/σ_min) over long times instead of
//! drifting as naive step-size control does. λ_k = E_{k+1} − E₀ is reported by
//! [`SymplecticAdaptive::multiplier`] and should stay near zero.
//!
//! Solution. For a fixed (Δt, λ) and the step-size rules of [`StepSizeRule`]
//! (σ a function of the elastic energy), the δq equation is the variational
//! midpoint step for the potential W scaled by γ = 1 + (hλ/Δt) σ'(W(u)),
//! which a variational-midpoint trial with step Δt√γ and momentum p/√γ solves
//! exactly. An outer fixed point updates (Δt, λ, γ) from the trial until they
//! settle; the Newton Hessian drops the rank-one term of ∇²σ, as the thesis
//! does. E₀ is the continuous energy ½vᵀMv + W of the start. The momentum
//! is updated in the δq form p_{k+1} = p_k − Δt γ ∇W(u), which conserves linear
//! momentum exactly. Conservative motion only, like the time-reversible
//! adaptive integrator; `time_step` is the fictitious step h and the real time
//! advances by Δt per step.

use super::acceleration::solve_mass;
use super::entry::IntegratorEntry;
use super::time_reversible_adaptive::{
    step_size_rule, StepSizeRule, CONSERVATIVE, MAX_STEP_SIZE_ITERATIONS, STEP_SIZE_TOLERANCE_FACTOR,
};
use super::variational_midpoint::VariationalMidpoint;
use super::{commit_step, history_from_json, history_to_json, same_time, Capabilities, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::solve::{FreeSystem, SolverSettings};

/// What the integrator carries from one step to the next, for the state at `time`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Carried {
    time: f64,
    momentum: Vec<f64>,
    /// λ of the last step.
    multiplier: f64,
    /// E of the last interval.
    energy: f64,
    /// σ of the last step (the next step's first guess).
    sigma: f64,
}

/// The symplectic time-adaptive variational integrator of the Kharevych 2010 thesis (§3.3):
/// real steps h σ(midpoint) imposed by a Lagrange multiplier, so the energy error stays
/// bounded over long runs. Conservative motion only.
pub struct SymplecticAdaptive {
    rule: StepSizeRule,
    tolerance: f64,
    inner: VariationalMidpoint,
    mass_system: Option<FreeSystem>,
    carried: Option<Carried>,
}

impl SymplecticAdaptive {
    /// With the step-size function `rule` (σ) and the minimiser `settings` name for the
    /// midpoint steps. Fails if they name no registered minimiser or hold invalid keys for it;
    /// `rule` is not checked here ([`StepSizeRule::validate`]).
    pub fn new(rule: StepSizeRule, settings: SolverSettings) -> Result<Self> {
        Ok(SymplecticAdaptive {
            rule,
            tolerance: (STEP_SIZE_TOLERANCE_FACTOR * settings.tolerance).max(1e-13),
            inner: VariationalMidpoint::new(settings, false)?,
            mass_system: None,
            carried: None,
        })
    }

    /// λ of the last step (≈ E_{k+1} − E₀, O(h²)).
    pub fn multiplier(&self) -> Option<f64> {
        self.carried.as_ref().map(|c| c.multiplier)
    }
}

fn build(table: &toml::Table, solver: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(SymplecticAdaptive::new(
        step_size_rule(table)?,
        solver.clone(),
    )?))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "symplectic_adaptive",
    aliases: &[],
    summary: "symplectic time-adaptive variational integrator (Kharevych 2010 thesis, §3.3): steps h σ(midpoint) imposed by a Lagrange multiplier; conservative motion only",
    keys: &["step_size"],
    uses_solver: true,
    build,
};

fn m_norm_squared(model: &Model, x: &[f64]) -> f64 {
    let mut mx = vec![0.0; x.len()];
    model.mass_multiply(x, &mut mx);
    mx.iter().zip(x).map(|(a, b)| a * b).sum()
}

impl Integrator for SymplecticAdaptive {
    fn name(&self) -> &'static str {
        "symplectic_adaptive"
    }

    fn iterations_are(&self) -> &'static str {
        self.inner.iterations_are()
    }

    fn capabilities(&self) -> Capabilities {
        CONSERVATIVE
    }

    fn history(&self) -> Result<serde_json::Value> {
        history_to_json(&(self.inner.history()?, &self.carried))
    }

    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        let (inner, carried): (serde_json::Value, Option<Carried>) = history_from_json(self.name(), history)?;
        self.inner.restore_history(&inner)?;
        self.carried = carried;
        Ok(())
    }

    fn step(&mut self, model: &Model, state: &mut State, h: f64) -> Result<StepReport> {
        let n = model.dof_count();
        let start = match self.carried.as_ref().filter(|c| same_time(c.time, state.time)) {
            Some(c) => c.clone(),
            None => {
                // The first step: p = Mv, E₀ the continuous energy, λ₋₁ = 0.
                let mut momentum = vec![0.0; n];
                model.mass_multiply(&state.velocities, &mut momentum);
                let energy = 0.5 * m_norm_squared(model, &state.velocities) + model.elastic_energy(&state.positions);
                Carried {
                    time: state.time,
                    momentum,
                    multiplier: 0.0,
                    energy,
                    sigma: self.rule.sigma(model, &state.positions),
                }
            }
        };
        let (rule, tolerance) = (self.rule, self.tolerance);
        let (inner, mass_system) = (&mut self.inner, &mut self.mass_system);
        let mut accepted: Option<Carried> = None;
        let report = commit_step(model, state, h, |s| {
            let q = &s.positions;
            let (mut sigma, mut multiplier, mut gamma) = (start.sigma, start.multiplier, 1.0f64);
            let mut total = StepReport::default();
            for _ in 0..MAX_STEP_SIZE_ITERATIONS {
                let dt = h * sigma;
                let root = gamma.sqrt();
                let scaled: Vec<f64> = start.momentum.iter().map(|p| p / root).collect();
                let (trial, _, report) = inner.trial(model, s, &scaled, dt * root)?;
                total.absorb(&report);
                let next_positions = trial.positions;
                let midpoint: Vec<f64> = q.iter().zip(&next_positions).map(|(a, b)| 0.5 * (a + b)).collect();
                let increment: Vec<f64> = next_positions.iter().zip(q).map(|(a, b)| a - b).collect();
                // Conservative motion only: the potential is the elastic energy alone.
                let mut gradient = vec![0.0; n];
                let elastic = model.gradient(&midpoint, s.time, &mut gradient)?;
                let energy = 0.5 * m_norm_squared(model, &increment) / (dt * dt) + elastic;
                let new_multiplier = start.multiplier + energy - start.energy;
                let (new_sigma, slope) = rule.of_energy(elastic);
                let new_gamma = 1.0 + h * new_multiplier / dt * slope;
                let settled = (new_sigma - sigma).abs() <= tolerance * sigma
                    && (new_multiplier - multiplier).abs()
                        <= tolerance * energy.abs().max(start.energy.abs()).max(1e-300)
                    && (new_gamma - gamma).abs() <= tolerance;
                if settled {
                    // p_{k+1} = p_k − Δt γ ∇W(u) (the δq equation), v = M⁻¹p on the free DOFs.
                    let momentum: Vec<f64> = (0..n).map(|i| start.momentum[i] - dt * gamma * gradient[i]).collect();
                    let dofs = model.dof_map(s.time + dt);
                    let velocities = solve_mass(model, &dofs, &momentum, mass_system)?;
                    accepted = Some(Carried {
                        time: s.time + dt,
                        momentum,
                        multiplier: new_multiplier,
                        energy,
                        sigma,
                    });
                    return Ok((
                        State {
                            time: s.time + dt,
                            positions: next_positions,
                            velocities,
                        },
                        total,
                    ));
                }
                (sigma, multiplier, gamma) = (new_sigma, new_multiplier, new_gamma);
            }
            Err(HookeError::Solver {
                reason: format!(
                    "the step size and multiplier did not settle in {MAX_STEP_SIZE_ITERATIONS} iterations (σ = {sigma:.6}, λ = {multiplier:e}); reduce time_step"
                ),
            })
        });
        if report.is_ok() {
            self.carried = accepted;
        }
        report
    }
}
