//! Classical fourth-order Runge–Kutta on (x, v)' = (v, a(x, v, t)). Four force
//! evaluations per step; the accurate explicit reference (seed 000 uses it with
//! small steps as ground truth).

use super::explicit::{explicit_step, ExplicitMethod};
use super::{Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::FreeSystem;

#[derive(Default)]
pub struct RungeKutta4 {
    mass_system: Option<FreeSystem>,
}

impl Integrator for RungeKutta4 {
    fn name(&self) -> &'static str {
        "runge_kutta4"
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
