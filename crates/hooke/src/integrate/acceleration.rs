//! a = M⁻¹ (f_ext(t) − ∇W(x) − D v) on the free DOFs, for the explicit methods
//! and Newmark's start. Pinned DOFs get zero (callers overwrite them with the
//! prescribed motion); with a consistent mass the pinned rows' coupling M_fp a_p
//! is neglected, which is exact for pins at rest or moving uniformly.

use crate::error::Result;
use crate::model::MassKind;
use crate::model::{DofMap, Model};
use crate::solve::FreeSystem;

pub(crate) struct Acceleration<'a> {
    pub model: &'a Model,
    pub dofs: &'a DofMap,
    /// D for this step (None without damping).
    pub damping: Option<&'a [f64]>,
}

impl Acceleration<'_> {
    /// The acceleration at (x, v, t); `mass_system` caches the factorised M_ff for a consistent mass.
    pub fn at(&self, x: &[f64], v: &[f64], time: f64, mass_system: &mut Option<FreeSystem>) -> Result<Vec<f64>> {
        let model = self.model;
        let n = model.dof_count();
        // The gradient of E(x, t) includes the loads: −∇E = f_ext − ∇W.
        let mut gradient = vec![0.0; n];
        model.gradient(x, time, &mut gradient)?;
        let mut damping_force = vec![0.0; n];
        if let Some(d) = self.damping {
            model.pattern().symmetric_multiply(d, v, &mut damping_force);
        }
        let residual: Vec<f64> = (0..n).map(|i| -gradient[i] - damping_force[i]).collect();
        solve_mass(model, self.dofs, &residual, mass_system)
    }
}

/// M⁻¹ r on the free DOFs (zero on pinned ones); `mass_system` caches the factorised M_ff.
pub(crate) fn solve_mass(
    model: &Model,
    dofs: &DofMap,
    rhs: &[f64],
    mass_system: &mut Option<FreeSystem>,
) -> Result<Vec<f64>> {
    let mut solution = vec![0.0; rhs.len()];
    match model.mass().kind() {
        MassKind::Lumped => {
            for &i in &dofs.free_dofs {
                solution[i] = rhs[i] / model.mass().of_dof(i);
            }
        }
        MassKind::Consistent => {
            let system = FreeSystem::for_dofs(mass_system, model, dofs)?;
            system.load(&[(1.0, model.mass().values())]);
            system.factorize()?;
            let mut free = dofs.gather(rhs);
            system.solve_in_place(&mut free)?;
            dofs.scatter(&free, &mut solution);
        }
    }
    Ok(solution)
}
