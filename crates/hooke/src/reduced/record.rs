//! The energies and momenta of a subspace state, x = X̄ + B u and v = B u̇,
//! computed in the subspace: a run records them at every step but expands
//! the state over all vertices only for frames (Trusty et al. 2023, §6).
//!
//! Kinetic energy, momenta, gravity and soft pins are exact for the subspace
//! state; the elastic energy is the cubature rule's, the energy the solvers
//! minimise: Σ w_c ψ(F_c(u)) for subspace FEM, and Σ w_c ψ(z_c) at the stretch
//! unknowns for subspace mixed FEM, which reports beside it how far z is from
//! the stretches of u (the constraint gap). Between them the two energies
//! differ by the gap's worth of stiffness: a step cut to one iteration leaves
//! a gap of a few percent in a stiff region, which ψ(F(u)) counts at the
//! stiff material's modulus while the solver has not yet been asked to close
//! it. The cost is O(r² + |𝒞|), whatever the mesh size.

use super::problem::{ReducedLoads, ReducedModel};
use super::stretch::{constraint_gap, relative_gap, stretch_energy, Stretch};
use crate::linalg::dot;
use crate::model::TermKind;
use crate::output::{ConstraintGap, EnergyRecord};
use nalgebra::{DMatrix, DVector, Vector6};
use rayon::prelude::*;

impl ReducedModel {
    /// The record of the state (u, u̇) at `time`, with `loads` reduced at that
    /// time. Loads (forces) have no energy in a record, as in full space.
    /// With `stretches` (the unknowns z of subspace mixed FEM, one per
    /// cubature point) the elastic energy is Σ w_c ψ(z_c) and the record
    /// carries the constraint gap; without, it is Σ w_c ψ(F_c(u)).
    pub fn energy_record(
        &self,
        u: &[f64],
        velocity: &[f64],
        stretches: Option<&[Vector6<f64>]>,
        loads: &ReducedLoads,
        time: f64,
    ) -> EnergyRecord {
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
        let (mut elastic, constraint_gap) = match stretches {
            Some(z) => {
                let (energy, gap) = self.mixed_elastic_energy(u, z);
                (energy, Some(gap))
            }
            None => (self.elastic_energy(u), None),
        };
        let mut gravitational = 0.0;
        for part in &loads.parts {
            match part.kind {
                TermKind::Elastic => elastic += part.energy(u),
                TermKind::Gravity => gravitational += part.energy(u),
                // A subspace refuses contact; loads are not in a record.
                TermKind::Contact | TermKind::Load | TermKind::Friction => {}
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
            constraint_gap,
            contact: None,
        }
    }

    /// Σ w_c ψ(z_c) and the constraint gap between z and the stretches of u.
    pub fn mixed_elastic_energy(&self, u: &[f64], z: &[Vector6<f64>]) -> (f64, ConstraintGap) {
        let per_point: Vec<(f64, (f64, f64))> = (0..self.points.len())
            .into_par_iter()
            .map(|c| {
                let point = &self.points[c];
                let target = Stretch::of(&self.deformation_gradient(c, u)).vector();
                let energy = point.weight * stretch_energy(&*point.material, &z[c]);
                (energy, (point.weight, relative_gap(&target, &z[c])))
            })
            .collect();
        let gaps: Vec<(f64, f64)> = per_point.iter().map(|p| p.1).collect();
        (per_point.iter().map(|p| p.0).sum(), constraint_gap(&gaps))
    }
}
