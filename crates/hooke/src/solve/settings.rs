//! The `[solver]` table: which minimiser an implicit step uses, the keys every
//! minimiser shares (tolerance, iteration limits, continuation, the objective's
//! Hessian and its constant approximation), and the chosen minimiser's own
//! keys, which its registry entry reads through its own settings type.

use crate::error::{HookeError, Result};
use std::collections::BTreeMap;

/// The `[solver]` table of a scene: the minimiser's registered name, the keys
/// every minimiser shares, and the minimiser's own keys.
///
/// Build one with [`SolverSettings::default`] (Newton), with a typed settings
/// value of a registered minimiser ([`SolverSettings::with_minimizer`]), or by
/// name ([`SolverSettings::named`]); the shared keys are public fields.
///
/// ```
/// use hooke::solve::{LbfgsSettings, SolverSettings};
///
/// // L-BFGS keeping ten pairs, at most 30 iterations a step, tolerance 1e-6.
/// let settings = SolverSettings {
///     tolerance: 1e-6,
///     iterations: Some(30),
///     ..SolverSettings::with_minimizer(LbfgsSettings { history: 10, ..LbfgsSettings::default() })
/// };
/// assert_eq!(settings.kind, "lbfgs");
/// assert!(settings.minimizer().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(try_from = "BTreeMap<String, toml::Value>", into = "toml::Table")]
pub struct SolverSettings {
    /// The minimiser's registered name (`hooke solvers` lists them): a
    /// minimiser of the incremental potential (`newton`, `lbfgs`,
    /// `local_global`), or in a scene the mixed formulation's solver
    /// `mixed_sqp`, which steps with its own integrator.
    pub kind: String,
    /// Converged when the increment ‖Δx‖∞ is below this fraction of the body's size.
    pub tolerance: f64,
    /// Converged when ‖Δx‖∞ / h is below this fraction of the body's size per
    /// second, in place of `tolerance` in a time step of length h (the Newton
    /// stopping test of Li et al. 2020, §4.3, where 10⁻² is the paper's
    /// setting); scales with h, split steps included. Static solves keep `tolerance`.
    pub velocity_tolerance: Option<f64>,
    /// The most iterations a step may take before it fails (default: the
    /// minimiser's own, 50 for Newton, 1000 for L-BFGS).
    pub max_iterations: Option<usize>,
    /// A fixed budget: exactly this many iterations per step unless the
    /// tolerance is met first; reaching it is not a failure (real-time use).
    pub iterations: Option<usize>,
    /// Project each element's Hessian to positive semi-definite, so that the
    /// objective's Hessian is SPD (for minimisers that use the Hessian).
    pub project_hessian: bool,
    /// [low, high]: the stretches over which each material's Laplacian
    /// stiffness is fitted, for the objective's constant approximation of its
    /// Hessian (L-BFGS, local/global); default [0.5, 1.5].
    pub laplacian_stretches: Option<[f64; 2]>,
    /// When the minimiser fails, split the step in two, recursively, at most this
    /// deep (2^depth sub-steps; Chen 2019 thesis, §2.4). 0 turns continuation off.
    pub max_step_halvings: usize,
    /// What a step whose iteration stalls at rounding level, above the
    /// tolerance, does: accept the result and report it, or fail.
    pub stagnation: Stagnation,
    /// Record Φ after every iteration in the report (solver comparisons; not a scene key).
    pub trace: bool,
    /// The chosen minimiser's own keys (its entry's `keys`), read by its
    /// settings type when the minimiser is built.
    pub own: toml::Table,
}

/// What to do when the minimiser stalls at rounding level above the tolerance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stagnation {
    /// Accept the step; the step report, the summary and the run's message say so.
    #[default]
    Report,
    /// Fail the step (which then splits, if `max_step_halvings` allows).
    Fail,
}

/// The typed settings of one registered minimiser: its own `[solver]` keys.
/// [`SolverSettings::with_minimizer`] stores them under the minimiser's name.
pub trait MinimizerSettings: serde::Serialize {
    /// The registered name of the minimiser these settings configure.
    const NAME: &'static str;
}

/// The keys every minimiser shares, as `[solver]` writes them.
pub const SHARED_SOLVER_KEYS: [&str; 9] = [
    "kind",
    "tolerance",
    "velocity_tolerance",
    "max_iterations",
    "iterations",
    "project_hessian",
    "laplacian_stretches",
    "max_step_halvings",
    "stagnation",
];

/// The shared keys as read from a table (`kind` and the minimiser's own keys
/// are taken out first).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Shared {
    #[serde(default = "default_tolerance")]
    tolerance: f64,
    #[serde(default)]
    velocity_tolerance: Option<f64>,
    #[serde(default)]
    max_iterations: Option<usize>,
    #[serde(default)]
    iterations: Option<usize>,
    #[serde(default = "default_true")]
    project_hessian: bool,
    #[serde(default)]
    laplacian_stretches: Option<[f64; 2]>,
    #[serde(default = "default_step_halvings")]
    max_step_halvings: usize,
    #[serde(default)]
    stagnation: Stagnation,
}

fn default_tolerance() -> f64 {
    1e-8
}

fn default_true() -> bool {
    true
}

fn default_step_halvings() -> usize {
    4
}

impl Default for SolverSettings {
    /// Newton with its defaults: tolerance 1e-8 of the body's size, at most
    /// 50 iterations, projected Hessians, up to 4 step halvings.
    fn default() -> Self {
        SolverSettings {
            kind: "newton".to_string(),
            tolerance: default_tolerance(),
            velocity_tolerance: None,
            max_iterations: None,
            iterations: None,
            project_hessian: true,
            laplacian_stretches: None,
            max_step_halvings: default_step_halvings(),
            stagnation: Stagnation::Report,
            trace: false,
            own: toml::Table::new(),
        }
    }
}

impl TryFrom<BTreeMap<String, toml::Value>> for SolverSettings {
    type Error = String;

    fn try_from(mut table: BTreeMap<String, toml::Value>) -> std::result::Result<Self, String> {
        let kind = match table.remove("kind") {
            None => "newton".to_string(),
            Some(toml::Value::String(kind)) => kind,
            Some(other) => {
                return Err(format!(
                    "solver.kind: expected a minimiser's name in quotes (such as \"lbfgs\"), got {other}"
                ))
            }
        };
        let mut shared = toml::Table::new();
        let mut own = toml::Table::new();
        for (key, value) in table {
            if SHARED_SOLVER_KEYS.contains(&key.as_str()) {
                shared.insert(key, value);
            } else {
                own.insert(key, value);
            }
        }
        let shared: Shared = toml::Value::Table(shared)
            .try_into()
            .map_err(|e: toml::de::Error| format!("solver: {}", crate::error::in_plain_words(e.message())))?;
        if let Some(v) = shared.velocity_tolerance.filter(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(format!(
                "solver.velocity_tolerance: must be a positive fraction of the body's size per second (the paper's 1e-2), got {v}"
            ));
        }
        Ok(SolverSettings {
            kind,
            tolerance: shared.tolerance,
            velocity_tolerance: shared.velocity_tolerance,
            max_iterations: shared.max_iterations,
            iterations: shared.iterations,
            project_hessian: shared.project_hessian,
            laplacian_stretches: shared.laplacian_stretches,
            max_step_halvings: shared.max_step_halvings,
            stagnation: shared.stagnation,
            trace: false,
            own,
        })
    }
}

impl From<SolverSettings> for toml::Table {
    fn from(settings: SolverSettings) -> toml::Table {
        let mut table = settings.own;
        table.insert("kind".into(), settings.kind.into());
        table.insert("tolerance".into(), settings.tolerance.into());
        if let Some(v) = settings.velocity_tolerance {
            table.insert("velocity_tolerance".into(), v.into());
        }
        if let Some(n) = settings.max_iterations {
            table.insert("max_iterations".into(), (n as i64).into());
        }
        if let Some(n) = settings.iterations {
            table.insert("iterations".into(), (n as i64).into());
        }
        table.insert("project_hessian".into(), settings.project_hessian.into());
        if let Some([low, high]) = settings.laplacian_stretches {
            table.insert("laplacian_stretches".into(), vec![low, high].into());
        }
        table.insert("max_step_halvings".into(), (settings.max_step_halvings as i64).into());
        let stagnation = match settings.stagnation {
            Stagnation::Report => "report",
            Stagnation::Fail => "fail",
        };
        table.insert("stagnation".into(), stagnation.into());
        table
    }
}

impl SolverSettings {
    /// The increment ‖Δx‖∞ below which a minimiser of `objective` has
    /// converged: `velocity_tolerance` × h × the body's size in a time step
    /// of length h, else `tolerance` × the body's size.
    pub fn increment_threshold(&self, objective: &dyn super::Objective) -> f64 {
        let fraction = match (self.velocity_tolerance, objective.step_length()) {
            (Some(velocity), Some(h)) => velocity * h,
            _ => self.tolerance,
        };
        fraction * objective.length_scale()
    }

    /// The minimiser of `settings`' type, with those settings, and the shared
    /// keys at their defaults.
    pub fn with_minimizer<S: MinimizerSettings>(settings: S) -> SolverSettings {
        SolverSettings {
            kind: S::NAME.to_string(),
            own: own_table(&settings),
            ..SolverSettings::default()
        }
    }

    /// The minimiser's own keys read as its settings type `S`; an error names
    /// the key (`key` is the table's name in messages).
    pub fn own_settings<S: serde::de::DeserializeOwned>(&self, key: &str) -> Result<S> {
        toml::Value::Table(self.own.clone())
            .try_into()
            .map_err(|e: toml::de::Error| HookeError::scene(key, crate::error::in_plain_words(e.message())))
    }
}

/// A settings value as the table of keys it stands for.
fn own_table<S: serde::Serialize>(settings: &S) -> toml::Table {
    toml::Table::try_from(settings).unwrap_or_default()
}
