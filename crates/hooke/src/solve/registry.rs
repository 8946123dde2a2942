//! The minimisers a `[solver]` table can name, each registered once: its name
//! and aliases, a one-line summary, its own keys, what it needs, and how to
//! build it. Scenes, `hooke compare --solvers`, `hooke solvers` and the Python
//! package read this list, and a test checks that docs/scene-format.md covers
//! every entry and key.

pub use super::entry::{MinimizerCapabilities, MinimizerEntry, SettingKey};
use super::SolverSettings;
use crate::error::{HookeError, Result};

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
