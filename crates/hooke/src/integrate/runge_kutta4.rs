//! Classical fourth-order Runge–Kutta on (x, v)' = (v, a(x, v, t)). Four force
//! evaluations per step; the accurate explicit reference (the Chen 2019 thesis uses
//! it with small steps as ground truth).

use super::entry::IntegratorEntry;
use super::explicit::{explicit_step, ExplicitMethod};
use super::{Capabilities, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{FreeSystem, SolverSettings};

fn build(_: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(RungeKutta4::default()))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "runge_kutta4",
    aliases: &["rk4"],
    summary: "classical Runge–Kutta: order 4, explicit, four force evaluations",
    keys: &[],
    uses_solver: false,
    build,
};

/// The classical fourth-order Runge–Kutta method: explicit, four force evaluations per step;
/// the accurate explicit reference (with small steps, the Chen 2019 thesis' ground truth).
#[derive(Default)]
pub struct RungeKutta4 {
    mass_system: Option<FreeSystem>,
}

impl Integrator for RungeKutta4 {
    fn name(&self) -> &'static str {
        "runge_kutta4"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            gradient_only: true,
            ..Capabilities::COMMON
        }
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        explicit_step(
            model,
            state,
            dt,
            ExplicitMethod::RungeKutta4,
            &mut self.mass_system,
            None,
        )
    }
}
