//! The energies and momenta of a subspace state, x = X̄ + B u and v = B u̇,
//! computed in the subspace: a run records them at every step but expands
//! the state over all vertices only for frames (Trusty et al. 2023, §6).
//!
//! Kinetic energy, momenta, gravity and soft pins are exact for the subspace
//! state; the elastic energy is the cubature rule's, the energy the solvers
//! minimise. The cost is O(r² + |𝒞|), whatever the mesh size.

use super::problem::{ReducedLoads, ReducedModel};
use crate::linalg::dot;
use crate::model::TermKind;
use crate::output::EnergyRecord;
use nalgebra::{DMatrix, DVector};

impl ReducedModel {
    /// The record of the state (u, u̇) at `time`, with `loads` reduced at that
    /// time. Loads (forces) have no energy in a record, as in full space.
    pub fn energy_record(&self, u: &[f64], velocity: &[f64], loads: &ReducedLoads, time: f64) -> EnergyRecord {
        let q = self.basis.block();
        let block = |v: &'_ [f64], c: usize| -> DVector<f64> { DVector::from_column_slice(&v[c * q..(c + 1) * q]) };
        let moved = self.mass.clone() * DVector::from_column_slice(velocity);
        let kinetic = 0.5 * dot(velocity, moved.as_slice());
        // BᵀMB is three copies of M̂ = YᵀMY, so Σᵢ xᵢₐ (Mv)ᵢ_b = (YᵀMX̄ₐ)·u̇_b + u_aᵀ M̂ u̇_b.
        let mass_block: DMatrix<f64> = self.mass.view((0, 0), (q, q)).into_owned();
        let moment = |a: usize, b: usize| {
            let v = block(velocity, b);
            dot(&self.moments[a], v.as_slice()) + block(u, a).dot(&(&mass_block * &v))
        };
        let linear = std::array::from_fn(|b| dot(&self.moments[3], block(velocity, b).as_slice()));
        let angular = [
            moment(1, 2) - moment(2, 1),
            moment(2, 0) - moment(0, 2),
            moment(0, 1) - moment(1, 0),
        ];
        let mut elastic = self.elastic_energy(u);
        let mut gravitational = 0.0;
        for part in &loads.parts {
            match part.kind {
                TermKind::Elastic => elastic += part.energy(u),
                TermKind::Gravity => gravitational += part.energy(u),
                // A subspace refuses contact; loads are not in a record.
                TermKind::Contact | TermKind::Load => {}
            }
        }
        EnergyRecord {
            time,
            kinetic,
            elastic,
            gravitational,
            penalty: 0.0,
            total: kinetic + elastic + gravitational,
            dissipated: 0.0,
            linear_momentum: linear,
            angular_momentum: angular,
            max_penetration: 0.0,
        }
    }
}
