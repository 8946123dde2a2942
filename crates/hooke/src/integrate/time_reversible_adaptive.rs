//! The time-reversible adaptive variational integrator of the Kharevych 2010 thesis, §3.4
//! (eqs. 3.30–3.32): the midpoint discrete Lagrangian with the real step
//! ĥ_{k+1} = h σ((q_k + q_{k+1})/2), a user-chosen step-size function σ of the
//! state evaluated symmetrically at the step's midpoint.
//!
//! With a fixed ĥ the discrete Euler–Lagrange equation is exactly the variational
//! midpoint step, so each step is a variational-midpoint step whose size is found
//! by fixed-point iteration: ĥ ← h σ(midpoint(ĥ)) until it settles. Because both
//! the Lagrangian and σ are symmetric, running the steps backwards (momenta
//! negated) retraces them: the scheme is time-reversible, and its energy error
//! stays bounded even though the step size varies.
//!
//! `time_step` is the fictitious step h; the real time advances by ĥ per step,
//! and a run's `duration` counts fictitious time (steps = duration / h).
//! Conservative forces only: external forces, damping and moving pins would
//! break the symmetry and are refused. It takes no step halving (halving one
//! step of a symmetric pair breaks the symmetry): a failed step ends the run.

use super::entry::{settings_from, IntegratorEntry};
use super::variational_midpoint::VariationalMidpoint;
use super::{commit_step, history_from_json, history_to_json, Capabilities, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::solve::SolverSettings;

/// The step-size function σ(q) > 0 of the state (Kharevych 2010 thesis, §3.3, "σ-rules").
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum StepSizeRule {
    /// σ = 1: fixed steps (the plain variational midpoint).
    Constant,
    /// σ = 1 / (W(q)/scale + 1): smaller steps while the body is strongly deformed
    /// (Kharevych 2010 thesis, Figs. 3.9–3.10, use scale = 10 J). Bounded by 1 from above.
    ElasticEnergy {
        /// The energy at which σ = ½, J.
        scale: f64,
    },
}

impl StepSizeRule {
    /// σ at `positions` (all DOFs, m), from the model's elastic energy there.
    pub fn sigma(&self, model: &Model, positions: &[f64]) -> f64 {
        self.of_energy(model.elastic_energy(positions)).0
    }

    /// σ and dσ/dW as functions of the elastic energy W.
    pub fn of_energy(&self, energy: f64) -> (f64, f64) {
        match self {
            StepSizeRule::Constant => (1.0, 0.0),
            StepSizeRule::ElasticEnergy { scale } => {
                let denominator = energy / scale + 1.0;
                (1.0 / denominator, -1.0 / (scale * denominator * denominator))
            }
        }
    }

    /// Checks the rule's parameters (a positive, finite `scale`); errors name `key`.
    pub fn validate(&self, key: &str) -> Result<()> {
        match self {
            StepSizeRule::ElasticEnergy { scale } if !(scale.is_finite() && *scale > 0.0) => Err(HookeError::scene(
                format!("{key}.elastic_energy.scale"),
                format!("must be a positive energy in joules, got {scale}"),
            )),
            _ => Ok(()),
        }
    }
}

/// What the adaptive variational integrators handle: conservative elastic
/// motion only (no gravity, forces, damping, obstacles, moving or released
/// pins), which their time symmetry and energy behaviour need.
pub(crate) const CONSERVATIVE: Capabilities = Capabilities {
    viscoelastic_damping: false,
    rayleigh_damping: false,
    obstacles: false,
    surface_constraints: false,
    loads: false,
    moving_pins: false,
    element_terms: true,
    two_dimensional: true,
    reduced_coordinates: false,
    low_rank_terms: true,
    gradient_only: false,
    barrier_contact: false,
};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AdaptiveSettings {
    /// σ = 1 (fixed steps) when absent.
    #[serde(default = "constant_rule")]
    pub step_size: StepSizeRule,
}

fn constant_rule() -> StepSizeRule {
    StepSizeRule::Constant
}

/// The step-size rule of an adaptive integrator's `[integrator]` keys.
pub(crate) fn step_size_rule(table: &toml::Table) -> Result<StepSizeRule> {
    let settings: AdaptiveSettings = settings_from(table)?;
    settings.step_size.validate("integrator.step_size")?;
    Ok(settings.step_size)
}

fn build(table: &toml::Table, solver: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(TimeReversibleAdaptive::new(
        step_size_rule(table)?,
        solver.clone(),
    )?))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "time_reversible_adaptive",
    aliases: &[],
    summary:
        "time-reversible adaptive variational integrator (Kharevych 2010 thesis, §3.4.1): real steps h σ(midpoint); conservative motion only",
    keys: &["step_size"],
    uses_solver: true,
    build,
};

/// The fixed point ĥ = h σ(midpoint) is accepted when σ changes by less than this
/// many Newton tolerances (relatively): σ cannot settle more finely than the
/// positions it is computed from.
pub(crate) const STEP_SIZE_TOLERANCE_FACTOR: f64 = 100.0;
pub(crate) const MAX_STEP_SIZE_ITERATIONS: usize = 50;

/// The time-reversible adaptive variational integrator of the Kharevych 2010 thesis (§3.4):
/// variational midpoint steps of real size h σ(midpoint), found by fixed-point iteration;
/// time-reversible, with a bounded energy error. Conservative motion only.
pub struct TimeReversibleAdaptive {
    rule: StepSizeRule,
    step_size_tolerance: f64,
    inner: VariationalMidpoint,
    /// σ of the last step, the first guess for the next.
    last_sigma: Option<f64>,
}

impl TimeReversibleAdaptive {
    /// With the step-size function `rule` (σ) and the minimiser `settings` name for the
    /// midpoint steps. Fails if they name no registered minimiser or hold invalid keys for it;
    /// `rule` is not checked here ([`StepSizeRule::validate`]).
    pub fn new(rule: StepSizeRule, settings: SolverSettings) -> Result<Self> {
        // Reinjection takes the momentum from the δq equation; reversibility
        // needs the symmetric δv form, so it is off here.
        Ok(TimeReversibleAdaptive {
            rule,
            step_size_tolerance: (STEP_SIZE_TOLERANCE_FACTOR * settings.tolerance).max(1e-13),
            inner: VariationalMidpoint::new(settings, false)?,
            last_sigma: None,
        })
    }
}

impl Integrator for TimeReversibleAdaptive {
    fn name(&self) -> &'static str {
        "time_reversible_adaptive"
    }

    fn iterations_are(&self) -> &'static str {
        self.inner.iterations_are()
    }

    fn capabilities(&self) -> Capabilities {
        CONSERVATIVE
    }

    fn history(&self) -> Result<serde_json::Value> {
        history_to_json(&(self.inner.history()?, self.last_sigma))
    }

    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        let (inner, last_sigma): (serde_json::Value, Option<f64>) = history_from_json(self.name(), history)?;
        self.inner.restore_history(&inner)?;
        self.last_sigma = last_sigma;
        Ok(())
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let p = self.inner.momentum_of(model, state);
        let (rule, tolerance, inner) = (self.rule, self.step_size_tolerance, &mut self.inner);
        let mut sigma = self.last_sigma.unwrap_or_else(|| rule.sigma(model, &state.positions));
        let mut accepted = None;
        let report = commit_step(model, state, dt, |s| {
            let mut total = StepReport::default();
            for _ in 0..MAX_STEP_SIZE_ITERATIONS {
                let (next, momentum, report) = inner.trial(model, s, &p, dt * sigma)?;
                total.absorb(&report);
                let midpoint: Vec<f64> = s
                    .positions
                    .iter()
                    .zip(&next.positions)
                    .map(|(a, b)| 0.5 * (a + b))
                    .collect();
                let settled = rule.sigma(model, &midpoint);
                if (settled - sigma).abs() <= tolerance * sigma {
                    accepted = Some((next.time, momentum, sigma));
                    return Ok((next, total));
                }
                sigma = settled;
            }
            Err(HookeError::Solver {
                reason: format!("the step size did not settle in {MAX_STEP_SIZE_ITERATIONS} iterations (σ = {sigma:.6}); reduce time_step"),
            })
        });
        if let (Ok(_), Some((time, momentum, sigma))) = (&report, accepted) {
            self.inner.remember(time, momentum);
            self.last_sigma = Some(sigma);
        }
        report
    }
}
