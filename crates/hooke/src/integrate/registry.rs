//! The integrators a scene can name, each registered once: its name and
//! aliases, a one-line summary, the `[integrator]` keys it takes, whether it
//! minimises with the `[solver]` table, and how to build it. `hooke compare`,
//! the CLI's help and `hooke integrators` read this list, and a test checks that
//! docs/scene-format.md covers every entry.

pub use super::entry::{settings_from, IntegratorEntry};
use super::Integrator;
use crate::error::{HookeError, Result};
use crate::solve::SolverSettings;
use std::collections::BTreeMap;
use std::ops::Range;

/// Every integrator, in the order the documentation lists them.
pub const INTEGRATORS: &[IntegratorEntry] = &[
    super::forward_euler::ENTRY,
    super::symplectic_euler::ENTRY,
    super::velocity_verlet::ENTRY,
    super::runge_kutta4::ENTRY,
    super::backward_euler::ENTRY,
    super::semi_implicit_euler::ENTRY,
    super::semi_implicit_euler::EXACT_ENTRY,
    super::implicit_midpoint::ENTRY,
    super::bdf2::ENTRY,
    super::newmark::ENTRY,
    super::variational_midpoint::ENTRY,
    super::time_reversible_adaptive::ENTRY,
    super::symplectic_adaptive::ENTRY,
    super::corotational_reversible::ENTRY,
    super::exponential_rosenbrock_euler::ENTRY,
    super::siere::ENTRY,
    super::mass_spring_semi_implicit::ENTRY,
    super::dgsi::ENTRY,
    super::static_equilibrium::ENTRY,
];

/// The entry for a name or alias.
pub fn entry(name: &str) -> Option<&'static IntegratorEntry> {
    INTEGRATORS.iter().find(|e| e.name == name || e.aliases.contains(&name))
}

/// "name (alias, …)" for every entry, for messages and help.
pub fn names() -> String {
    INTEGRATORS
        .iter()
        .map(|e| {
            if e.aliases.is_empty() {
                e.name.to_string()
            } else {
                format!("{} ({})", e.name, e.aliases.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// An `[integrator]` table: `kind` and that integrator's keys, with their
/// places in the scene text (so an unknown key is reported with its line).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(from = "BTreeMap<toml::Spanned<String>, toml::Value>", into = "toml::Table")]
pub struct IntegratorConfig {
    /// The name or alias (empty when the table has none).
    pub kind: String,
    /// The integrator's own keys.
    pub settings: toml::Table,
    spans: Vec<(String, Range<usize>)>,
}

impl From<BTreeMap<toml::Spanned<String>, toml::Value>> for IntegratorConfig {
    fn from(table: BTreeMap<toml::Spanned<String>, toml::Value>) -> Self {
        let mut config = IntegratorConfig {
            kind: String::new(),
            settings: toml::Table::new(),
            spans: Vec::new(),
        };
        for (key, value) in table {
            config.spans.push((key.get_ref().clone(), key.span()));
            match (key.get_ref().as_str(), value) {
                ("kind", toml::Value::String(kind)) => config.kind = kind,
                (name, value) => {
                    config.settings.insert(name.to_string(), value);
                }
            }
        }
        config
    }
}

impl From<IntegratorConfig> for toml::Table {
    fn from(config: IntegratorConfig) -> toml::Table {
        let mut table = config.settings;
        table.insert("kind".to_string(), toml::Value::String(config.kind));
        table
    }
}

impl Default for IntegratorConfig {
    fn default() -> Self {
        IntegratorConfig::from_name("backward_euler").expect("backward Euler is registered")
    }
}

impl IntegratorConfig {
    /// The integrator of a name or alias with its default settings.
    pub fn from_name(name: &str) -> Option<IntegratorConfig> {
        entry(name).map(|e| IntegratorConfig {
            kind: e.name.to_string(),
            settings: toml::Table::new(),
            spans: Vec::new(),
        })
    }

    /// Its registry entry, or an error naming `integrator.kind`.
    pub fn entry(&self) -> Result<&'static IntegratorEntry> {
        if self.kind.is_empty() {
            return Err(HookeError::scene(
                "integrator.kind",
                format!("is missing (a name: {})", names()),
            ));
        }
        entry(&self.kind).ok_or_else(|| {
            HookeError::scene(
                "integrator.kind",
                format!("unknown integrator {:?} (known: {})", self.kind, names()),
            )
        })
    }

    /// A key the integrator does not take, with its byte range and the reason
    /// (Newton settings, which moved to `[solver]`, get a message that says so).
    pub fn unknown_key(&self) -> Option<(String, Range<usize>, String)> {
        let entry = entry(&self.kind)?;
        let (key, span) = self
            .spans
            .iter()
            .find(|(k, _)| k != "kind" && !entry.keys.contains(&k.as_str()))?;
        let reason = if crate::solve::registry::is_solver_key(key) && entry.uses_solver {
            format!("`{key}` is a setting of the minimiser: it moved from [integrator] to the [solver] table (write `[solver]` and `{key} = …` there)")
        } else {
            let expected: Vec<String> = std::iter::once("kind")
                .chain(entry.keys.iter().copied())
                .map(|k| format!("`{k}`"))
                .collect();
            format!("unknown field `{key}`, expected one of {}", expected.join(", "))
        };
        Some((key.clone(), span.clone(), reason))
    }

    /// The integrator's scene name (its registered name, not an alias).
    pub fn name(&self) -> Result<&'static str> {
        self.entry().map(|e| e.name)
    }

    /// Builds the integrator; `solver` configures its minimiser when it has one.
    pub fn build(&self, solver: &SolverSettings) -> Result<Box<dyn Integrator>> {
        (self.entry()?.build)(&self.settings, solver)
    }
}
