//! The matrix a step will factorise, as its integrator declares it, and a
//! factorisation of that matrix a term made at the step's start.
//!
//! A semi-implicit step factorises A = M + h²K(xₙ) over the free DOFs. An
//! EigenFit refit at the same xₙ follows its modes with the preconditioner
//! (K − σM)⁻¹, and with σ = −1/h² that is h²A⁻¹: one factorisation can serve
//! both. The integrator declares the weights of A = a M + b K when the step
//! begins ([`super::Model::begin_step_with`]); a term that factorised exactly
//! a M + b K on the free DOFs offers its factor; the step's own factorisation
//! takes it only when the values it would factorise equal the offered ones to
//! the bit (`SparseCholesky::adopt`), so a factor of any other matrix (other
//! terms' Hessians, damping, another projection) is never used. What was
//! offered and not taken is dropped when the next step begins.

use crate::linalg::FactorOf;
use std::sync::Mutex;

/// A step's matrix A = `mass`·M + `stiffness`·K over the free DOFs, K the
/// Hessian of the whole potential at the step's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepMatrix {
    /// The weight a of the mass matrix.
    pub mass: f64,
    /// The weight b of the stiffness.
    pub stiffness: f64,
}

impl StepMatrix {
    /// The shift σ = −a/b for which A = b (K − σM).
    pub fn shift(&self) -> f64 {
        -self.mass / self.stiffness
    }
}

#[derive(Default)]
struct Step {
    matrix: Option<StepMatrix>,
    offered: Option<FactorOf>,
}

/// The one-step window of the declared matrix and an offered factor.
#[derive(Default)]
pub(crate) struct StepFactor(Mutex<Step>);

impl StepFactor {
    fn step(&self) -> std::sync::MutexGuard<'_, Step> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A step begins with this matrix (None: undeclared); nothing older is kept.
    pub fn open(&self, matrix: Option<StepMatrix>) {
        *self.step() = Step { matrix, offered: None };
    }

    /// The matrix the step under way declared.
    pub fn matrix(&self) -> Option<StepMatrix> {
        self.step().matrix
    }

    /// Offers a factorisation for the step's own (in place of any offered before).
    pub fn offer(&self, factor: FactorOf) {
        self.step().offered = Some(factor);
    }

    /// Takes what was offered, once.
    pub fn take(&self) -> Option<FactorOf> {
        self.step().offered.take()
    }
}

impl super::Model {
    /// The matrix the step under way declared it factorises.
    pub(crate) fn step_matrix(&self) -> Option<StepMatrix> {
        self.step_factor.matrix()
    }

    /// Offers the step under way a factorisation of its declared matrix
    /// over the free DOFs; the step uses it only if it is one of exactly the
    /// values it would factorise.
    pub(crate) fn offer_step_factor(&self, factor: FactorOf) {
        self.step_factor.offer(factor);
    }

    /// What a term offered the step under way, once.
    pub(crate) fn take_step_factor(&self) -> Option<FactorOf> {
        self.step_factor.take()
    }
}
