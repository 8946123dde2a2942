//! Local/global iterations, the solver of fast mass-springs and projective
//! dynamics (Liu, Bargteil, O'Brien and Kavan 2013; Bouaziz, Martin, Liu,
//! Kavan and Pauly 2014; Liu 2018 thesis, §2.8–2.9): the constant matrix of
//! L-BFGS with no history and full steps x ← x − A₀⁻¹∇Φ. For projective
//! energies this is exactly the global solve after the local projections, and
//! Φ decreases at every iteration without a line search; other energies are
//! refused when the scene is built.

use super::entry::{MinimizerCapabilities, MinimizerEntry};
use super::settings::MinimizerSettings;
use super::{Lbfgs, Minimizer, SolverSettings};
use crate::error::Result;

/// Local/global's own `[solver]` keys: none besides the shared ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LocalGlobalSettings {}

impl MinimizerSettings for LocalGlobalSettings {
    const NAME: &'static str = "local_global";
}

fn build(settings: &SolverSettings) -> Result<Box<dyn Minimizer>> {
    let LocalGlobalSettings {} = settings.own_settings("solver")?;
    Ok(Box::new(Lbfgs::local_global(settings.clone())))
}

pub(crate) const ENTRY: MinimizerEntry = MinimizerEntry {
    name: "local_global",
    aliases: &["projective_dynamics"],
    summary: "local/global iterations of fast mass-springs and projective dynamics: the constant matrix factorised once, full steps that decrease Φ for projective energies",
    keys: &[],
    capabilities: MinimizerCapabilities {
        hessian: false,
        constant_matrix: true,
        projective_energies_only: true,
    },
    default_iteration_limit: 1000,
    build,
};
