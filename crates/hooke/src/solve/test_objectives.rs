//! Small objectives with known minima for the minimisers' unit tests.

use super::{Objective, QuasiNewtonMatrix};
use crate::error::Result;
use crate::linalg::SystemMatrix;
use nalgebra::DMatrix;

/// A point on a line pulled into a wall at 0 by a spring toward
/// `target` < 0, held off it by IPC's barrier κ b(u), b(d) = −(d − d̂)² ln(d/d̂)
/// for d < d̂: the one-dimensional picture of an object pressed onto an
/// obstacle. Its feasible step bound stops a step at 90% of the gap, as
/// additive CCD does, and it reports the gap u as its contact gap.
pub(crate) struct PressedOnWall {
    pub target: f64,
    pub dhat: f64,
    pub kappa: f64,
}

impl PressedOnWall {
    /// Pulled toward 1 m inside the wall, with d̂ = 1 mm and stiffness κ.
    pub fn with_stiffness(kappa: f64) -> PressedOnWall {
        PressedOnWall {
            target: -1.0,
            dhat: 1e-3,
            kappa,
        }
    }

    /// b(u) and its first two derivatives.
    fn barrier(&self, u: f64) -> (f64, f64, f64) {
        if u >= self.dhat {
            return (0.0, 0.0, 0.0);
        }
        let (s, l) = (u - self.dhat, (u / self.dhat).ln());
        (
            -s * s * l,
            -2.0 * s * l - s * s / u,
            -2.0 * l - 4.0 * s / u + s * s / (u * u),
        )
    }

    fn derivative(&self, u: f64) -> f64 {
        u - self.target + self.kappa * self.barrier(u).1
    }

    /// The minimiser, by bisection on Φ′ over (0, d̂).
    pub fn minimum(&self) -> f64 {
        let (mut low, mut high) = (1e-300, self.dhat);
        for _ in 0..200 {
            let middle = 0.5 * (low + high);
            if self.derivative(middle) < 0.0 {
                low = middle;
            } else {
                high = middle;
            }
        }
        0.5 * (low + high)
    }
}

impl Objective for PressedOnWall {
    fn size(&self) -> usize {
        1
    }
    fn value(&self, u: &[f64]) -> f64 {
        if u[0] <= 0.0 {
            return f64::INFINITY;
        }
        0.5 * (u[0] - self.target).powi(2) + self.kappa * self.barrier(u[0]).0
    }
    fn gradient(&self, u: &[f64], gradient: &mut [f64]) -> Result<f64> {
        gradient[0] = self.derivative(u[0]);
        Ok(self.value(u))
    }
    fn hessian(&self, u: &[f64], gradient: &mut [f64], hessian: &mut SystemMatrix) -> Result<f64> {
        *hessian = SystemMatrix::Dense(DMatrix::from_element(1, 1, 1.0 + self.kappa * self.barrier(u[0]).2));
        self.gradient(u, gradient)
    }
    fn hessian_matrix(&self) -> SystemMatrix {
        SystemMatrix::Dense(DMatrix::zeros(1, 1))
    }
    /// The spring alone: L-BFGS's constant A₀.
    fn quasi_newton_key(&self) -> Option<u64> {
        Some(1)
    }
    fn quasi_newton_matrix(&self) -> Result<QuasiNewtonMatrix> {
        Ok(QuasiNewtonMatrix {
            matrix: SystemMatrix::Dense(DMatrix::from_element(1, 1, 1.0)),
            coordinates: 1,
        })
    }
    fn feasible_step(&self, u: &[f64], direction: &[f64]) -> Result<f64> {
        Ok(if direction[0] < 0.0 {
            (0.9 * u[0] / -direction[0]).min(1.0)
        } else {
            1.0
        })
    }
    fn contact_gap(&self, u: &[f64]) -> Option<f64> {
        (u[0] < self.dhat).then_some(u[0])
    }
    fn length_scale(&self) -> f64 {
        1.0
    }
}
