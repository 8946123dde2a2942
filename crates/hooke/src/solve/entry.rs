//! What a minimiser gives the registry: its entry (name, summary, own keys,
//! capabilities, constructor). Minimisers import this module and the registry
//! lists their entries, so neither imports the other.

use super::{Minimizer, SolverSettings};
use crate::error::{HookeError, Result};

/// One key of a minimiser's own `[solver]` keys, for `hooke solvers`, the
/// docs and error messages.
#[derive(Clone, Copy, Debug)]
pub struct SettingKey {
    /// The key as a scene writes it.
    pub name: &'static str,
    /// Its default, as TOML text ("" when unset by default).
    pub default: &'static str,
    /// What it does, in one line.
    pub meaning: &'static str,
}

/// What a minimiser asks of the objective and of the model, checked when a
/// scene is built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinimizerCapabilities {
    /// Uses the objective's Hessian (assembled and solved every iteration).
    pub hessian: bool,
    /// Uses the objective's constant approximation of its Hessian
    /// (`Objective::quasi_newton_matrix`), factorised once while it stays the same.
    pub constant_matrix: bool,
    /// Takes full steps whose decrease holds only for projective energies
    /// (springs, ARAP-like materials, soft pins, gravity and loads) and
    /// mass-proportional damping; a model with other terms is refused.
    pub projective_energies_only: bool,
}

impl MinimizerCapabilities {
    /// The capabilities as words, for `hooke solvers`.
    pub fn describe(&self) -> Vec<&'static str> {
        let mut words = Vec::new();
        if self.hessian {
            words.push("the Hessian every iteration");
        }
        if self.constant_matrix {
            words.push("a constant matrix factorised once (inertia plus weighted Laplacian)");
        }
        if self.projective_energies_only {
            words.push("projective energies and mass-proportional damping only");
        }
        words
    }
}

/// One minimiser a `[solver]` table can name.
pub struct MinimizerEntry {
    /// The `kind` of the `[solver]` table.
    pub name: &'static str,
    /// Short names accepted wherever the name is.
    pub aliases: &'static [&'static str],
    /// One line: the method, and its source.
    pub summary: &'static str,
    /// Its own keys, besides the shared ones.
    pub keys: &'static [SettingKey],
    /// What it needs of the objective and the model.
    pub capabilities: MinimizerCapabilities,
    /// Iterations a step may take when `[solver]` sets no limit.
    pub default_iteration_limit: usize,
    /// Builds it from the `[solver]` table (reading its own keys through its
    /// settings type, which checks their types and ranges).
    pub build: fn(&SolverSettings) -> Result<Box<dyn Minimizer>>,
}

impl MinimizerEntry {
    /// Whether this minimiser can minimise `model`'s steps; `key` names the table.
    pub fn check_model(&self, model: &crate::model::Model, key: &str) -> Result<()> {
        if !self.capabilities.projective_energies_only {
            return Ok(());
        }
        let refused = model.non_projective_terms();
        if !refused.is_empty() {
            return Err(HookeError::scene(
                format!("{key}.kind"),
                format!(
                    "{} minimises only projective energies (springs, the arap, strain_limit and volume materials, soft pins, gravity and loads); {} {} not: use \"lbfgs\" or \"newton\"",
                    self.name,
                    refused.join(", "),
                    if refused.len() == 1 { "is" } else { "are" }
                ),
            ));
        }
        if model
            .damping()
            .is_some_and(|d| d.stiffness_coefficient != 0.0 || d.viscoelastic_coefficient != 0.0)
        {
            return Err(HookeError::scene(
                format!("{key}.kind"),
                format!("{} takes mass-proportional damping only (damping.stiffness_coefficient and viscoelastic_coefficient must be 0): use \"lbfgs\" or \"newton\"", self.name),
            ));
        }
        Ok(())
    }
}
