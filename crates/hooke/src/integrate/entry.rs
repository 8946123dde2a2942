//! What an integrator gives the registry: its entry (name, aliases, keys and
//! constructor) and the reader of its `[integrator]` keys. Integrators import
//! this module, and the registry lists their entries, so neither imports the other.

use super::Integrator;
use crate::error::{HookeError, Result};
use crate::solve::SolverSettings;

/// One integrator a scene can name.
pub struct IntegratorEntry {
    /// The `kind` of the `[integrator]` table.
    pub name: &'static str,
    /// Short names accepted wherever the name is.
    pub aliases: &'static [&'static str],
    /// One line on the method, which `hooke integrators` prints.
    pub summary: &'static str,
    /// Its own `[integrator]` keys besides `kind`.
    pub keys: &'static [&'static str],
    /// Whether it minimises an objective with the `[solver]` table's minimiser.
    pub uses_solver: bool,
    /// Builds it from its `[integrator]` keys (without `kind`) and the `[solver]` settings.
    pub build: fn(&toml::Table, &SolverSettings) -> Result<Box<dyn Integrator>>,
}

impl IntegratorEntry {
    /// The integrator with its default settings (an error for those with
    /// required settings, such as the adaptive integrators' step-size rule).
    pub fn with_defaults(&self) -> Result<Box<dyn Integrator>> {
        (self.build)(&toml::Table::new(), &SolverSettings::default())
    }
}

/// Deserialises an integrator's settings from its keys; errors name `integrator.<key>`.
pub fn settings_from<T: serde::de::DeserializeOwned>(table: &toml::Table) -> Result<T> {
    toml::Value::Table(table.clone())
        .try_into()
        .map_err(|e: toml::de::Error| HookeError::scene("integrator", e.message().to_string()))
}
