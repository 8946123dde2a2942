//! The minimisers a `[solver]` table can name, each registered once: its name
//! and aliases, a one-line summary, its own keys, what it needs, and how to
//! build it. Scenes, `hooke compare --solvers`, `hooke solvers` and the Python
//! package read this list, and a test checks that docs/scene-format.md covers
//! every entry and key.

pub use super::entry::{MinimizerCapabilities, MinimizerEntry, SettingKey};
use super::SolverSettings;
use crate::error::{HookeError, Result};
use std::collections::BTreeMap;

/// Every minimiser of the incremental potential, in the order the
/// documentation lists them.
pub const MINIMIZERS: &[MinimizerEntry] = &[super::newton::ENTRY, super::lbfgs::ENTRY, super::local_global::ENTRY];

/// The entry for a name or alias.
pub fn entry(name: &str) -> Option<&'static MinimizerEntry> {
    MINIMIZERS.iter().find(|e| e.name == name || e.aliases.contains(&name))
}

/// "name (alias, …)" for every entry, for messages and help.
pub fn names() -> String {
    MINIMIZERS
        .iter()
        .map(|e| match e.aliases.is_empty() {
            true => e.name.to_string(),
            false => format!("{} ({})", e.name, e.aliases.join(", ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The error for a name no minimiser has; `key` names where it was written.
pub fn unknown(name: &str, key: &str) -> HookeError {
    HookeError::scene(key, format!("unknown minimiser {name:?} (known: {})", names()))
}

/// Whether `key` belongs in a `[solver]` table (shared by the minimisers or
/// one's own), for messages about keys written in the wrong table.
pub fn is_solver_key(key: &str) -> bool {
    (key != "kind" && super::SHARED_SOLVER_KEYS.contains(&key))
        || MINIMIZERS.iter().any(|e| e.keys.iter().any(|k| k.name == key))
}

impl MinimizerEntry {
    /// Checks a table's own keys against this minimiser: each one it takes,
    /// with a value of the right type and range. `key` names the table.
    pub fn check_keys(&self, settings: &SolverSettings, key: &str) -> Result<()> {
        if let Some(unknown) = settings
            .own
            .keys()
            .find(|k| !self.keys.iter().any(|s| s.name == k.as_str()))
        {
            return Err(HookeError::scene(
                format!("{key}.{unknown}"),
                self.unknown_key_reason(unknown),
            ));
        }
        (self.build)(settings).map(|_| ())
    }

    /// Why `unknown` is not one of this minimiser's keys, naming those it
    /// takes and the minimisers that take it.
    pub fn unknown_key_reason(&self, unknown: &str) -> String {
        let takers: Vec<&str> = MINIMIZERS
            .iter()
            .filter(|e| e.keys.iter().any(|k| k.name == unknown))
            .map(|e| e.name)
            .collect();
        let mut reason = format!("{} takes no `{unknown}`", self.name);
        if !takers.is_empty() {
            reason += &format!(" (a key of {})", takers.join(" and "));
        }
        let own: Vec<String> = self.keys.iter().map(|k| format!("`{}`", k.name)).collect();
        reason += &match own.is_empty() {
            true => "; it has no keys besides the shared ones".to_string(),
            false => format!("; its own keys are {}", own.join(", ")),
        };
        reason
    }
}

/// The `[solver]` settings as they name a registered minimiser.
impl SolverSettings {
    /// The registered minimiser `name` (or alias) with its default settings;
    /// an error lists the registered names.
    pub fn named(name: &str) -> Result<SolverSettings> {
        let entry = entry(name).ok_or_else(|| unknown(name, "solver.kind"))?;
        Ok(SolverSettings {
            kind: entry.name.to_string(),
            ..SolverSettings::default()
        })
    }
    /// Sets one key, shared or the minimiser's own, from its TOML value, and
    /// checks the result as a scene's `[solver]` table is checked (the key
    /// must be one the minimiser takes, and the value of its type and range).
    pub fn set(&mut self, key: &str, value: toml::Value) -> Result<()> {
        let mut table: toml::Table = self.clone().into();
        if key == "trace" {
            return Err(HookeError::scene("solver.trace", "is not a [solver] key"));
        }
        table.insert(key.to_string(), value);
        let trace = self.trace;
        let mut next = SolverSettings::try_from(table.into_iter().collect::<BTreeMap<_, _>>())
            .map_err(|reason| HookeError::scene(format!("solver.{key}"), reason))?;
        next.trace = trace;
        next.validate("solver")?;
        *self = next;
        Ok(())
    }
    /// Checks the shared keys' ranges and, for a registered minimiser, its own
    /// keys; `key` names the table in errors. A kind that is no minimiser is
    /// left to the caller, which knows the other solvers (a scene's
    /// `mixed_sqp`).
    pub fn validate(&self, key: &str) -> Result<()> {
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return Err(HookeError::scene(
                format!("{key}.tolerance"),
                format!("must lie in (0, 1), got {}", self.tolerance),
            ));
        }
        if self.max_step_halvings > 20 {
            return Err(HookeError::scene(
                format!("{key}.max_step_halvings"),
                format!("at most 20 (a million sub-steps), got {}", self.max_step_halvings),
            ));
        }
        if self.max_iterations == Some(0) {
            return Err(HookeError::scene(format!("{key}.max_iterations"), "must be at least 1"));
        }
        if self.iterations == Some(0) {
            return Err(HookeError::scene(format!("{key}.iterations"), "must be at least 1"));
        }
        if let Some([low, high]) = self.laplacian_stretches {
            if !(low > 0.0 && low < 1.0 && high > 1.0 && high.is_finite()) {
                return Err(HookeError::scene(
                    format!("{key}.laplacian_stretches"),
                    format!("needs 0 < low < 1 < high, got [{low}, {high}]"),
                ));
            }
        }
        match entry(&self.kind) {
            Some(entry) => entry.check_keys(self, key),
            None => Ok(()),
        }
    }
    /// The iterations a step may take: the fixed budget, else
    /// `max_iterations`, else the minimiser's default (50 where the kind is
    /// no registered minimiser).
    pub fn iteration_limit(&self) -> usize {
        self.iterations
            .or(self.max_iterations)
            .unwrap_or_else(|| entry(&self.kind).map_or(50, |e| e.default_iteration_limit))
    }
    /// Whether these settings can minimise `model`'s steps (a local/global
    /// solver needs every energy projective and damping that is a multiple of
    /// the mass). `key` names the table in errors.
    pub fn check_model(&self, model: &crate::model::Model, key: &str) -> Result<()> {
        let entry = entry(&self.kind).ok_or_else(|| unknown(&self.kind, key))?;
        entry.check_model(model, key)
    }
    /// The minimiser these settings describe, built by its registry entry.
    pub fn minimizer(&self) -> Result<Box<dyn super::Minimizer>> {
        let entry = entry(&self.kind).ok_or_else(|| unknown(&self.kind, "solver.kind"))?;
        (entry.build)(self)
    }
}
