//! Friction on barrier contact as one term of the model's potential: the
//! lagged, smoothed Coulomb dissipation D of Li et al. 2020, §5 (the
//! formulas are in contact/friction.rs).
//!
//! **The lag.** At each step's start the term takes the frictional contacts
//! of the start positions xⁿ from the model's barrier contact (its pairs
//! within d̂, their closest points, tangent planes and normal forces λ at
//! the κ of that step), and holds them while the step is solved; the slip of
//! a pair is measured from xⁿ. By default that is the only lag of the step,
//! the setting of most of the paper's examples: the normal forces trail the
//! solution by one step, within the step's own first-order error for
//! backward Euler, but a pair that closes during the step feels no friction
//! until the next. With `updates` = k > 1 (`[contact] friction_updates`), the
//! step is solved up to k times, the contacts taken again each time where
//! the last solve ended (the paper's fixed-point iteration on λ and the
//! tangent planes, §5, stopped after k solves); the slip is still measured
//! from xⁿ. Nothing is carried between steps: a resumed run rebuilds the lag
//! from its state.
//!
//! **Energy.** D is a dissipation potential, not stored energy: it is part
//! of the step's objective but not of the reported total
//! ([`TermKind::Friction`]).
//!
//! This term must come after the barrier contact term in the model, so that
//! the barrier's κ of the step is set when the lag is taken.

use super::term::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use super::{Model, State};
use crate::contact::friction::{contact_block, dissipation, FrictionContact};
use crate::error::{HookeError, Result};
use crate::linalg::VertexBlocks;
use std::sync::Mutex;

/// The smoothing speed ε_v taken when none is given, m/s (the paper's
/// examples use 10⁻³ of the scene's length per second; 1 mm/s is that for
/// metre-sized scenes).
pub const DEFAULT_SLIP_VELOCITY: f64 = 1e-3;

/// What the step's start fixed.
#[derive(Default)]
struct Lag {
    /// xⁿ, d per model vertex.
    start: Vec<f64>,
    /// The model's coordinates per vertex, d (friction works in 3D, a 2D
    /// model's positions lifted to z = 0).
    dimension: usize,
    /// The step's length h, s.
    step: f64,
    contacts: Vec<FrictionContact>,
    /// The obstacles at the step's start: the fixed surfaces' vertices, then
    /// the planes' points (BarrierContact::obstacle_positions).
    fixed_start: Vec<f64>,
    /// How far they have moved since, 3 per vertex.
    fixed_moved: Vec<f64>,
}

/// Coulomb friction with coefficient μ on the model's barrier contact.
pub struct Friction {
    coefficient: f64,
    slip_velocity: f64,
    model_vertices: usize,
    /// How many times a step takes the lag (1: at its start only).
    updates: usize,
    lag: Mutex<Lag>,
}

impl Friction {
    /// Friction of coefficient `coefficient` (μ ≥ 0) with slip below
    /// `slip_velocity` (ε_v > 0, m/s) smoothed, on a model of
    /// `model_vertices` vertices.
    pub fn new(coefficient: f64, slip_velocity: f64, model_vertices: usize) -> Result<Friction> {
        if !(coefficient.is_finite() && coefficient >= 0.0) {
            return Err(HookeError::scene(
                "contact.friction",
                format!("μ must be a finite number ≥ 0, got {coefficient}"),
            ));
        }
        if !(slip_velocity.is_finite() && slip_velocity > 0.0) {
            return Err(HookeError::scene(
                "contact.friction_velocity",
                format!("ε_v must be a positive speed in m/s, got {slip_velocity}"),
            ));
        }
        Ok(Friction {
            coefficient,
            slip_velocity,
            model_vertices,
            updates: 1,
            lag: Mutex::new(Lag::default()),
        })
    }

    /// Takes the lag `updates` times a step (≥ 1): at its start, then where
    /// each solve but the last ended, each time solving the step again.
    pub fn with_updates(mut self, updates: usize) -> Result<Friction> {
        if updates == 0 {
            return Err(HookeError::scene(
                "contact.friction_updates",
                "friction takes its normal forces and tangent planes at least once a step (at its start): give 1 or more",
            ));
        }
        self.updates = updates;
        Ok(self)
    }

    /// μ.
    pub fn coefficient(&self) -> f64 {
        self.coefficient
    }

    /// The contacts lagged at this step's start.
    pub fn lagged_contacts(&self) -> Vec<FrictionContact> {
        self.lag.lock().expect("not poisoned").contacts.clone()
    }

    /// The displacement from the lag (3 per model vertex, z = 0 for a 2D model, then the fixed
    /// surfaces' vertices', which move with their obstacles) and the
    /// smoothing length ε_v h.
    fn displacement(&self, lag: &Lag, x: &[f64]) -> (Vec<f64>, f64) {
        let needed = lag
            .contacts
            .iter()
            .flat_map(|c| c.vertices[..c.count].iter().copied())
            .max()
            .map_or(0, |v| 3 * (v + 1));
        let model = 3 * self.model_vertices;
        let mut displacement = vec![0.0; needed.max(model + lag.fixed_moved.len())];
        let d = lag.dimension;
        for (v, (a, b)) in x.chunks(d).zip(lag.start.chunks(d)).enumerate() {
            for k in 0..d {
                displacement[3 * v + k] = a[k] - b[k];
            }
        }
        displacement[model..model + lag.fixed_moved.len()].copy_from_slice(&lag.fixed_moved);
        (displacement, self.slip_velocity * lag.step)
    }

    /// The friction force on each model vertex, −∂D/∂x (3 per vertex), N.
    pub fn forces(&self, x: &[f64]) -> Vec<f64> {
        let mut gradient = vec![0.0; x.len()];
        let _ = self.gradient(x, 0.0, &mut gradient, true);
        gradient.iter().map(|g| -g).collect()
    }
}

impl EnergyTerm for Friction {
    fn name(&self) -> String {
        format!(
            "friction μ = {} (ε_v = {} m/s) on barrier contact",
            self.coefficient, self.slip_velocity
        )
    }

    fn kind(&self) -> TermKind {
        TermKind::Friction
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            planar: true,
            ..TermCapabilities::SMOOTH
        }
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        let lag = self.lag.lock().expect("not poisoned");
        if lag.contacts.is_empty() || self.coefficient == 0.0 {
            return 0.0;
        }
        let (displacement, epsilon) = self.displacement(&lag, x);
        let mut unused = vec![0.0; displacement.len()];
        dissipation(
            &lag.contacts,
            &displacement,
            self.coefficient,
            epsilon,
            self.model_vertices,
            &mut unused,
        )
    }

    fn gradient(&self, x: &[f64], _time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        let lag = self.lag.lock().expect("not poisoned");
        if lag.contacts.is_empty() || self.coefficient == 0.0 {
            return Ok(0.0);
        }
        let (displacement, epsilon) = self.displacement(&lag, x);
        let mut own = vec![0.0; displacement.len()];
        let energy = dissipation(
            &lag.contacts,
            &displacement,
            self.coefficient,
            epsilon,
            self.model_vertices,
            &mut own,
        );
        let d = lag.dimension;
        for v in 0..self.model_vertices {
            for k in 0..d {
                gradient[d * v + k] += own[3 * v + k];
            }
        }
        Ok(energy)
    }

    fn hessian(
        &self,
        x: &[f64],
        time: f64,
        _project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> Result<f64> {
        // Every coupling is a contact's: see add_changing_blocks.
        if overwrite {
            hessian.values.fill(0.0);
        }
        self.gradient(x, time, gradient, overwrite)
    }

    fn changes_couplings(&self) -> bool {
        true
    }

    fn add_changing_blocks(&self, x: &[f64], _time: f64, _project: bool, blocks: &mut VertexBlocks) -> Result<()> {
        let lag = self.lag.lock().expect("not poisoned");
        if lag.contacts.is_empty() || self.coefficient == 0.0 {
            return Ok(());
        }
        let (displacement, epsilon) = self.displacement(&lag, x);
        // Convex with the lag fixed: no projection needed. Entries of fixed
        // vertices lie past the unknowns, where the system drops them.
        for contact in &lag.contacts {
            let block = contact_block(contact, &displacement, self.coefficient, epsilon);
            blocks.push_from_3d(&contact.vertices[..contact.count], 1.0, &block);
        }
        Ok(())
    }

    fn begin_step(&self, model: &Model, state: &State, time: f64) -> Result<()> {
        let contact = model.barrier_contact().ok_or_else(|| HookeError::Solver {
            reason: "friction needs barrier contact in the model ([contact])".to_string(),
        })?;
        let contacts = contact.friction_contacts(&state.positions);
        let fixed_start = contact.obstacle_positions();
        *self.lag.lock().expect("not poisoned") = Lag {
            start: state.positions.clone(),
            dimension: model.dimension(),
            step: (time - state.time).max(f64::MIN_POSITIVE),
            contacts,
            fixed_moved: vec![0.0; fixed_start.len()],
            fixed_start,
        };
        Ok(())
    }

    fn update_lag(&self, model: &Model, x: &[f64], round: usize) -> Result<bool> {
        if round >= self.updates {
            return Ok(false);
        }
        let Some(contact) = model.barrier_contact() else {
            return Ok(false);
        };
        let contacts = contact.friction_contacts(x);
        let mut lag = self.lag.lock().expect("not poisoned");
        if contacts.is_empty() && lag.contacts.is_empty() {
            // Nothing touched at either end: another solve would repeat this one.
            return Ok(false);
        }
        lag.contacts = contacts;
        Ok(true)
    }

    fn advance_motion(&self, model: &Model, _x: &[f64]) -> Result<bool> {
        // A moving obstacle drags what it touches: its vertices' displacement
        // since the step's start is part of each pair's slip.
        if let Some(contact) = model.barrier_contact().filter(|c| c.has_moving_obstacles()) {
            let mut lag = self.lag.lock().expect("not poisoned");
            let now = contact.obstacle_positions();
            if now.len() == lag.fixed_start.len() {
                lag.fixed_moved = now.iter().zip(&lag.fixed_start).map(|(a, b)| a - b).collect();
            }
        }
        Ok(true)
    }
}
