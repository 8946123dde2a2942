//! Time integrators, all behind [`Integrator`]: a scene switches between them by
//! changing one line.

mod acceleration;
mod backward_euler;
mod bdf2;
mod corotational_reversible;
mod explicit;
mod exponential_rosenbrock_euler;
mod forward_euler;
mod implicit;
mod implicit_midpoint;
mod mass_spring_semi_implicit;
mod newmark;
mod runge_kutta4;
mod semi_implicit_euler;
mod siere;
mod static_equilibrium;
mod symplectic_adaptive;
mod symplectic_euler;
mod time_reversible_adaptive;
mod variational_midpoint;
mod velocity_verlet;

pub use backward_euler::BackwardEuler;
pub use bdf2::Bdf2;
pub use corotational_reversible::CorotationalReversible;
pub use exponential_rosenbrock_euler::ExponentialRosenbrockEuler;
pub use forward_euler::ForwardEuler;
pub use implicit_midpoint::ImplicitMidpoint;
pub use mass_spring_semi_implicit::MassSpringSemiImplicit;
pub use newmark::Newmark;
pub use runge_kutta4::RungeKutta4;
pub use semi_implicit_euler::SemiImplicitBackwardEuler;
pub use siere::{undamped_modal_phi1, ModeRefresh, Siere};
pub use static_equilibrium::StaticEquilibrium;
pub use symplectic_adaptive::SymplecticAdaptive;
pub use symplectic_euler::SymplecticEuler;
pub use time_reversible_adaptive::{StepSizeRule, TimeReversibleAdaptive};
pub use variational_midpoint::VariationalMidpoint;
pub use velocity_verlet::VelocityVerlet;

use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::solve::{IndefiniteSystem, NewtonReport, NewtonSettings};

/// What one step did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StepReport {
    /// Newton iterations (1 for linearised and explicit steps).
    pub iterations: usize,
    /// Nonlinear residual ‖∇Φ‖∞ where the last Newton iteration started (0 where there is none).
    pub residual: f64,
    pub line_search_reductions: usize,
    /// Factorisations of an indefinite matrix that needed a diagonal shift.
    pub shifted_factorizations: usize,
    pub assembly_seconds: f64,
    pub solve_seconds: f64,
    pub total_seconds: f64,
    /// Times the step was split in two because Newton failed (continuation).
    pub halvings: usize,
}

impl StepReport {
    /// Adds the work of a sub-step to this report.
    pub fn absorb(&mut self, other: &StepReport) {
        self.iterations += other.iterations;
        self.residual = self.residual.max(other.residual);
        self.line_search_reductions += other.line_search_reductions;
        self.shifted_factorizations += other.shifted_factorizations;
        self.assembly_seconds += other.assembly_seconds;
        self.solve_seconds += other.solve_seconds;
        self.halvings += other.halvings;
    }
}

impl From<&NewtonReport> for StepReport {
    fn from(newton: &NewtonReport) -> Self {
        StepReport {
            iterations: newton.iterations,
            residual: newton.residual,
            line_search_reductions: newton.line_search_reductions,
            shifted_factorizations: newton.shifted_factorizations,
            assembly_seconds: newton.assembly_seconds,
            solve_seconds: newton.solve_seconds,
            total_seconds: 0.0,
            halvings: 0,
        }
    }
}

/// Advances a state by one time step.
pub trait Integrator {
    /// The scene-file name of the method.
    fn name(&self) -> &'static str;

    /// Advances `state` by `dt`. On failure the state is left as it was.
    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport>;

    /// Whether the integrator enforces the model's surface constraints
    /// (`Model::constraints`); the run refuses a constrained model otherwise.
    fn supports_constraints(&self) -> bool {
        false
    }
}

/// The integrators a scene can ask for, with their settings. Variants without
/// settings are empty structs so that serde still rejects unknown keys in them.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum IntegratorConfig {
    /// Explicit Euler: order 1, gains energy on undamped oscillation (a reference only).
    ForwardEuler {},
    /// Symplectic Euler: order 1, explicit, momentum-conserving, energy bounded.
    SymplecticEuler {},
    /// Velocity Verlet: order 2, explicit, symplectic.
    VelocityVerlet {},
    /// Classical Runge–Kutta: order 4, explicit, four force evaluations.
    RungeKutta4 {},
    /// Backward Euler by Newton on the incremental potential: order 1,
    /// unconditionally stable, dissipates energy (more at larger steps).
    BackwardEuler {
        #[serde(flatten)]
        newton: NewtonSettings,
    },
    /// One linearised backward Euler step (Baraff–Witkin): order 1, one
    /// factorisation per step, stable for moderate stiffness.
    SemiImplicitBackwardEuler {
        #[serde(default = "default_true")]
        project_hessian: bool,
        /// An indefinite A (possible only with the exact Hessian): `shift` it
        /// (default) or solve it `exact`ly, as seed 000's semi-implicit Euler does.
        #[serde(default)]
        indefinite: IndefiniteSystem,
    },
    /// Implicit midpoint by Newton: order 2, symplectic, no artificial damping.
    ImplicitMidpoint {
        #[serde(flatten)]
        newton: NewtonSettings,
    },
    /// BDF2 by Newton: order 2, L-stable, mildly dissipative.
    Bdf2 {
        #[serde(flatten)]
        newton: NewtonSettings,
    },
    /// Newmark (β, γ) by Newton; (¼, ½) is the energy-conserving trapezoidal rule.
    Newmark {
        #[serde(default = "default_newmark_beta")]
        beta: f64,
        #[serde(default = "default_newmark_gamma")]
        gamma: f64,
        #[serde(flatten)]
        newton: NewtonSettings,
    },
    /// The variational midpoint of seed 001 (minimisation of the Lilyan): order 2,
    /// symplectic, conserves momentum; energy of linear problems exactly.
    VariationalMidpoint {
        /// Feed the solver's residual into the next step (seed 001 §3.2.11).
        #[serde(default = "default_true")]
        residual_reinjection: bool,
        #[serde(flatten)]
        newton: NewtonSettings,
    },
    /// Seed 001's time-reversible adaptive variational integrator: real steps
    /// h σ(midpoint) with a state-dependent σ; conservative motion only.
    TimeReversibleAdaptive {
        step_size: StepSizeRule,
        #[serde(flatten)]
        newton: NewtonSettings,
    },
    /// Seed 001's symplectic time-adaptive variational integrator (§3.3): real
    /// steps h σ(midpoint) imposed by a Lagrange multiplier, so the energy error
    /// stays bounded with varying steps; conservative motion only.
    SymplecticAdaptive {
        step_size: StepSizeRule,
        #[serde(flatten)]
        newton: NewtonSettings,
    },
    /// Seed 001's time-reversible co-rotational scheme (eq. 3.33): one linear solve
    /// per step; needs the corotational material.
    CorotationalReversible {},
    /// Exponential Rosenbrock–Euler (seed 000 ch. 4) with the Krylov φ₁: exact for
    /// linear systems, second order; lumped mass.
    ExponentialRosenbrockEuler {
        #[serde(default = "default_krylov_tolerance")]
        krylov_tolerance: f64,
        #[serde(default = "default_krylov_dimension")]
        krylov_dimension: usize,
    },
    /// SIERE (seed 000 ch. 6): the `modes` lowest modes of (K, M) at each step's
    /// start advanced by their exact exponential, the rest by semi-implicit
    /// Euler; stable and lively with stiff, heterogeneous or inverted-stiffness
    /// bodies. modes = 0 is semi-implicit Euler.
    Siere {
        #[serde(default = "default_siere_modes")]
        modes: usize,
        /// Reuse the last modes while their step-scaled Ritz residual
        /// h²‖(M + hD + h²K)⁻¹(Ku − λMu)‖_M on the new K stays below this (1e-3 to
        /// 1e-2 is sensible); absent: recompute every step.
        #[serde(default)]
        mode_refresh_tolerance: Option<f64>,
        /// Relative residual ‖Ku − λMu‖/‖Ku‖ of the computed modes.
        #[serde(default = "default_eigen_tolerance")]
        eigen_tolerance: f64,
        #[serde(default)]
        project_hessian: bool,
    },
    /// MSSI (seed 000 ch. 5): semi-implicit Euler with only the springs' material
    /// stiffness implicit; mass-spring networks only.
    MassSpringSemiImplicit {},
    /// Static equilibrium at each step's end time (velocities zero): quasi-static loading.
    Static {
        #[serde(flatten)]
        newton: NewtonSettings,
    },
}

fn default_true() -> bool {
    true
}

fn default_krylov_tolerance() -> f64 {
    1e-8
}

fn default_krylov_dimension() -> usize {
    30
}

fn default_siere_modes() -> usize {
    5
}

fn default_eigen_tolerance() -> f64 {
    1e-6
}

fn default_newmark_beta() -> f64 {
    0.25
}

fn default_newmark_gamma() -> f64 {
    0.5
}

impl IntegratorConfig {
    /// The configuration for an integrator name (scene `kind`) or its short alias
    /// (fe, se, vv, rk4, be, si, si_exact, im, bdf2, nm, vm, cr, ere, siere, mssi, static), with default settings.
    pub fn from_name(name: &str) -> Option<IntegratorConfig> {
        let newton = NewtonSettings::default();
        Some(match name {
            "forward_euler" | "fe" => IntegratorConfig::ForwardEuler {},
            "symplectic_euler" | "se" => IntegratorConfig::SymplecticEuler {},
            "velocity_verlet" | "vv" => IntegratorConfig::VelocityVerlet {},
            "runge_kutta4" | "rk4" => IntegratorConfig::RungeKutta4 {},
            "backward_euler" | "be" => IntegratorConfig::BackwardEuler { newton },
            "semi_implicit_backward_euler" | "si" => IntegratorConfig::SemiImplicitBackwardEuler {
                project_hessian: true,
                indefinite: IndefiniteSystem::Shift,
            },
            // Seed 000's plain semi-implicit Euler: the exact Hessian, and an
            // indefinite A solved as it is.
            "semi_implicit_exact" | "si_exact" => IntegratorConfig::SemiImplicitBackwardEuler {
                project_hessian: false,
                indefinite: IndefiniteSystem::Exact,
            },
            "implicit_midpoint" | "im" => IntegratorConfig::ImplicitMidpoint { newton },
            "bdf2" => IntegratorConfig::Bdf2 { newton },
            "newmark" | "nm" => IntegratorConfig::Newmark {
                beta: default_newmark_beta(),
                gamma: default_newmark_gamma(),
                newton,
            },
            "variational_midpoint" | "vm" => IntegratorConfig::VariationalMidpoint {
                residual_reinjection: true,
                newton,
            },
            "corotational_reversible" | "cr" => IntegratorConfig::CorotationalReversible {},
            "exponential_rosenbrock_euler" | "ere" => IntegratorConfig::ExponentialRosenbrockEuler {
                krylov_tolerance: default_krylov_tolerance(),
                krylov_dimension: default_krylov_dimension(),
            },
            "siere" => IntegratorConfig::Siere {
                modes: default_siere_modes(),
                mode_refresh_tolerance: None,
                eigen_tolerance: default_eigen_tolerance(),
                project_hessian: false,
            },
            "mass_spring_semi_implicit" | "mssi" => IntegratorConfig::MassSpringSemiImplicit {},
            "static" => IntegratorConfig::Static { newton },
            _ => return None,
        })
    }

    /// The Newton settings of a Newton-based integrator.
    pub fn newton_settings(&self) -> Option<&NewtonSettings> {
        match self {
            IntegratorConfig::BackwardEuler { newton }
            | IntegratorConfig::ImplicitMidpoint { newton }
            | IntegratorConfig::Bdf2 { newton }
            | IntegratorConfig::Newmark { newton, .. }
            | IntegratorConfig::VariationalMidpoint { newton, .. }
            | IntegratorConfig::TimeReversibleAdaptive { newton, .. }
            | IntegratorConfig::SymplecticAdaptive { newton, .. }
            | IntegratorConfig::Static { newton } => Some(newton),
            _ => None,
        }
    }

    pub fn validate(&self) -> Result<()> {
        if let IntegratorConfig::Newmark { beta, gamma, .. } = self {
            if !(*beta > 0.0 && *beta <= 0.5) {
                return Err(HookeError::scene(
                    "integrator.beta",
                    format!("must lie in (0, 0.5], got {beta}"),
                ));
            }
            if !(*gamma >= 0.5 && *gamma <= 1.0) {
                return Err(HookeError::scene(
                    "integrator.gamma",
                    format!("must lie in [0.5, 1], got {gamma}"),
                ));
            }
        }
        if let IntegratorConfig::ExponentialRosenbrockEuler {
            krylov_tolerance,
            krylov_dimension,
        } = self
        {
            if !(*krylov_tolerance > 0.0 && *krylov_tolerance < 1.0) || *krylov_dimension < 2 {
                return Err(HookeError::scene(
                    "integrator",
                    "krylov_tolerance must lie in (0, 1) and krylov_dimension be at least 2",
                ));
            }
        }
        if let IntegratorConfig::Siere {
            mode_refresh_tolerance,
            eigen_tolerance,
            ..
        } = self
        {
            if !(*eigen_tolerance > 0.0 && *eigen_tolerance < 1.0) {
                return Err(HookeError::scene(
                    "integrator.eigen_tolerance",
                    format!("must lie in (0, 1), got {eigen_tolerance}"),
                ));
            }
            if let Some(t) = mode_refresh_tolerance {
                if !(*t > 0.0 && t.is_finite()) {
                    return Err(HookeError::scene(
                        "integrator.mode_refresh_tolerance",
                        format!("must be positive, got {t}"),
                    ));
                }
            }
        }
        if let IntegratorConfig::TimeReversibleAdaptive { step_size, .. }
        | IntegratorConfig::SymplecticAdaptive { step_size, .. } = self
        {
            step_size.validate("integrator.step_size")?;
        }
        match self.newton_settings() {
            Some(newton) => newton.validate("integrator"),
            None => Ok(()),
        }
    }

    /// Builds the integrator.
    pub fn build(&self) -> Box<dyn Integrator> {
        match self {
            IntegratorConfig::ForwardEuler {} => Box::new(ForwardEuler::default()),
            IntegratorConfig::SymplecticEuler {} => Box::new(SymplecticEuler::default()),
            IntegratorConfig::VelocityVerlet {} => Box::new(VelocityVerlet::default()),
            IntegratorConfig::RungeKutta4 {} => Box::new(RungeKutta4::default()),
            IntegratorConfig::BackwardEuler { newton } => Box::new(BackwardEuler::new(*newton)),
            IntegratorConfig::SemiImplicitBackwardEuler {
                project_hessian,
                indefinite,
            } => Box::new(SemiImplicitBackwardEuler::with_indefinite(
                *project_hessian,
                *indefinite,
            )),
            IntegratorConfig::ImplicitMidpoint { newton } => Box::new(ImplicitMidpoint::new(*newton)),
            IntegratorConfig::Bdf2 { newton } => Box::new(Bdf2::new(*newton)),
            IntegratorConfig::Newmark { beta, gamma, newton } => Box::new(Newmark::new(*beta, *gamma, *newton)),
            IntegratorConfig::VariationalMidpoint {
                residual_reinjection,
                newton,
            } => Box::new(VariationalMidpoint::new(*newton, *residual_reinjection)),
            IntegratorConfig::TimeReversibleAdaptive { step_size, newton } => {
                Box::new(TimeReversibleAdaptive::new(*step_size, *newton))
            }
            IntegratorConfig::SymplecticAdaptive { step_size, newton } => {
                Box::new(SymplecticAdaptive::new(*step_size, *newton))
            }
            IntegratorConfig::CorotationalReversible {} => Box::new(CorotationalReversible::default()),
            IntegratorConfig::ExponentialRosenbrockEuler {
                krylov_tolerance,
                krylov_dimension,
            } => Box::new(ExponentialRosenbrockEuler::new(*krylov_tolerance, *krylov_dimension)),
            IntegratorConfig::Siere {
                modes,
                mode_refresh_tolerance,
                eigen_tolerance,
                project_hessian,
            } => Box::new(Siere::new(
                *modes,
                mode_refresh_tolerance.map_or(ModeRefresh::EveryStep, ModeRefresh::RitzResidual),
                *eigen_tolerance,
                *project_hessian,
            )),
            IntegratorConfig::MassSpringSemiImplicit {} => Box::new(MassSpringSemiImplicit::default()),
            IntegratorConfig::Static { newton } => Box::new(StaticEquilibrium::new(*newton)),
        }
    }
}

/// Whether two times are the same instant. Integrators key their history (previous
/// positions, momentum, acceleration) by the time of the state it belongs to; the
/// run loop may round that time (to step × h), so equality is up to rounding.
pub(crate) fn same_time(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// x + h y, elementwise: the predictor of every step.
pub(crate) fn axpy(x: &[f64], h: f64, y: &[f64]) -> Vec<f64> {
    x.iter().zip(y).map(|(a, b)| a + h * b).collect()
}

/// The error of an integrator asked to apply viscoelastic damping it does not support.
pub(crate) fn viscoelastic_unsupported(model: &Model, integrator: &str) -> Result<()> {
    if model.viscoelastic_coefficient() > 0.0 {
        return Err(HookeError::Scene {
            key: "damping.viscoelastic_coefficient".to_string(),
            reason: format!(
                "{integrator} does not apply viscoelastic damping; use backward_euler, implicit_midpoint, variational_midpoint or symplectic_euler"
            ),
        });
    }
    Ok(())
}

/// Runs one step attempt and commits it: on success the state is replaced and
/// the step's wall time recorded; on failure (an error, or non-finite values)
/// the state is left as it was and the error says at which step and time.
pub(crate) fn commit_step(
    model: &Model,
    state: &mut State,
    dt: f64,
    attempt: impl FnOnce(&State) -> Result<(State, StepReport)>,
) -> Result<StepReport> {
    let started = std::time::Instant::now();
    let outcome = attempt(state).and_then(|(next, report)| {
        if !next.is_finite() {
            return Err(HookeError::Solver {
                reason: "the step produced non-finite positions or velocities (the time step is likely too large for this method)".to_string(),
            });
        }
        // Explicit and linearised steps can land where a material is undefined
        // (an inverted Neo-Hookean element); such a state is not a result.
        if model.may_be_undefined() {
            let mut gradient = vec![0.0; next.positions.len()];
            model.gradient(&next.positions, next.time, &mut gradient)?;
        }
        Ok((next, report))
    });
    match outcome {
        Ok((next, mut report)) => {
            *state = next;
            report.total_seconds = started.elapsed().as_secs_f64();
            Ok(report)
        }
        Err(error @ HookeError::StepFailed { .. }) => Err(error),
        Err(other) => Err(HookeError::StepFailed {
            step: (state.time / dt).round() as usize + 1,
            time: state.time + dt,
            reason: other.to_string(),
        }),
    }
}
