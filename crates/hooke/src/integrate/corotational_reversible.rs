//! The time-reversible co-rotational integrator of seed 001 §3.4.2 (eq. 3.33):
//! implicit midpoint for linear elasticity with per-element rotations, taken from
//! the known configuration for the velocity solve and from the new one for the
//! momentum update:
//!
//!   v_{k+1} = [M + (h²/4) Σₑ Rₖ Kₑ Rₖᵀ]⁻¹ (p_k − (h/2)(Σₑ Rₖ Kₑ Rₖᵀ q_k − Σₑ Rₖ Kₑ q₀))
//!   q_{k+1} = q_k + h v_{k+1};  R_{k+1} from q_{k+1}
//!   p_{k+1} = M v_{k+1} − (h/2)[Σₑ R_{k+1} Kₑ R_{k+1}ᵀ (q_k + ½h v_{k+1}) − Σₑ R_{k+1} Kₑ q₀]
//!
//! (the thesis prints the last term outside the bracket; the bracket is the
//! consistent form). One linear solve per step, time-reversible in (q, R); energy
//! and angular momentum are not exactly conserved but stay bounded. Kₑ is the
//! element's linear-elastic stiffness at rest; Rₑ is the rotation of the polar
//! decomposition of Fₑ (the scheme works with any rotation rule; barycentre terms
//! vanish because Kₑ annihilates translations). Every element must be
//! `corotational`, whose energy is exactly ½ ûᵀKₑû of the rotated-back
//! displacement, so the energies table stays consistent.

use super::acceleration::solve_mass;
use super::{commit_step, same_time, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::fem::PACKED_HESSIAN_LEN;
use crate::linalg::signed_svd3;
use crate::material::derivative_matrix;
use crate::model::{Model, State};
use crate::solve::FreeSystem;
use nalgebra::{Matrix3, SMatrix, SVector, Vector3};
use rayon::prelude::*;

type Matrix12 = SMatrix<f64, 12, 12>;
type Vector12 = SVector<f64, 12>;

#[derive(Default)]
pub struct CorotationalReversible {
    /// Kₑ at rest, per element.
    stiffness: Vec<Matrix12>,
    system: Option<FreeSystem>,
    mass_system: Option<FreeSystem>,
    momentum: Option<(f64, Vec<f64>)>,
}

fn unpack(packed: &[f64; PACKED_HESSIAN_LEN]) -> Matrix12 {
    Matrix12::from_fn(|p, q| {
        let (r, c) = if p >= q { (p, q) } else { (q, p) };
        packed[r * (r + 1) / 2 + c]
    })
}

fn pack(m: &Matrix12) -> [f64; PACKED_HESSIAN_LEN] {
    let mut packed = [0.0; PACKED_HESSIAN_LEN];
    for p in 0..12 {
        for q in 0..=p {
            packed[p * (p + 1) / 2 + q] = m[(p, q)];
        }
    }
    packed
}

/// blockdiag(R, R, R, R).
fn block_rotation(r: &Matrix3<f64>) -> Matrix12 {
    let mut big = Matrix12::zeros();
    for n in 0..4 {
        big.fixed_view_mut::<3, 3>(3 * n, 3 * n).copy_from(r);
    }
    big
}

impl CorotationalReversible {
    fn prepare(&mut self, model: &Model) -> Result<()> {
        if !self.stiffness.is_empty() {
            return Ok(());
        }
        if let Some(e) = model
            .materials()
            .iter()
            .position(|m| !m.capabilities().corotated_quadratic)
        {
            return Err(HookeError::Scene {
                key: "bodies.material.model".to_string(),
                reason: format!(
                    "corotational_reversible needs a co-rotated quadratic material everywhere (corotational, or anisotropic_linear with corotated = true); element {e} is {}",
                    model.materials()[e].name()
                ),
            });
        }
        let assembler = model.assembler();
        self.stiffness = assembler
            .geometry()
            .iter()
            .zip(model.materials())
            .map(|(geometry, material)| {
                // The material's linearisation at rest.
                let c = derivative_matrix(material.as_ref(), &Matrix3::identity(), false);
                unpack(&geometry.hessian(&c))
            })
            .collect();
        Ok(())
    }

    /// Per-element rotations of the polar decomposition of F at positions x.
    fn rotations(model: &Model, x: &[f64]) -> Vec<Matrix3<f64>> {
        let assembler = model.assembler();
        assembler
            .tets()
            .par_iter()
            .zip(assembler.geometry())
            .map(|(tet, geometry)| {
                let corners = tet.map(|v| Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]));
                let (u, _, v) = signed_svd3(&geometry.deformation_gradient(&corners));
                u * v.transpose()
            })
            .collect()
    }

    /// Σₑ Rₑ Kₑ Rₑᵀ y − Σₑ Rₑ Kₑ q₀ (the co-rotated elastic force at y, negated).
    fn corotated_force(&self, model: &Model, rotations: &[Matrix3<f64>], y: &[f64], rest: &[f64]) -> Vec<f64> {
        let assembler = model.assembler();
        let per_element: Vec<[f64; 12]> = assembler
            .tets()
            .par_iter()
            .zip(rotations)
            .zip(&self.stiffness)
            .map(|((tet, r), k)| {
                let gather = |x: &[f64]| Vector12::from_fn(|i, _| x[3 * tet[i / 3] + i % 3]);
                let big = block_rotation(r);
                let force = big * (k * (big.transpose() * gather(y) - gather(rest)));
                let mut out = [0.0; 12];
                out.copy_from_slice(force.as_slice());
                out
            })
            .collect();
        let mut total = vec![0.0; y.len()];
        assembler.gather_element_vectors(&per_element, &mut total);
        total
    }
}

impl Integrator for CorotationalReversible {
    fn name(&self) -> &'static str {
        "corotational_reversible"
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        self.prepare(model)?;
        if model.damping().is_some() || !model.obstacles().is_empty() {
            return Err(HookeError::Scene {
                key: "integrator".to_string(),
                reason: "corotational_reversible takes no damping or obstacles (they would break time symmetry)"
                    .to_string(),
            });
        }
        let p = match self.momentum.as_ref().filter(|(time, _)| same_time(*time, state.time)) {
            Some((_, p)) => p.clone(),
            None => {
                let mut p = vec![0.0; state.positions.len()];
                model.mass_multiply(&state.velocities, &mut p);
                p
            }
        };
        let rest = model.rest_positions();
        let mut accepted = None;
        let mut linear_system = self.system.take();
        let mut mass_cache = self.mass_system.take();
        let this = &*self;
        let report = commit_step(model, state, dt, |s| {
            let started = std::time::Instant::now();
            let end = s.time + dt;
            let q = &s.positions;
            let dofs = model.dof_map(end);
            let rotations = Self::rotations(model, q);
            // A = M + (h²/4) Σ Rₖ Kₑ Rₖᵀ on the pattern.
            let rotated: Vec<[f64; PACKED_HESSIAN_LEN]> = rotations
                .par_iter()
                .zip(&this.stiffness)
                .map(|(r, k)| {
                    let big = block_rotation(r);
                    pack(&(big * k * big.transpose()))
                })
                .collect();
            let mut stiffness = vec![0.0; model.pattern().nonzeros()];
            model.assembler().gather_element_matrices(&rotated, &mut stiffness);
            let quarter = 0.25 * dt * dt;
            let values: Vec<f64> = stiffness
                .iter()
                .zip(model.mass_values())
                .map(|(k, m)| m + quarter * k)
                .collect();
            // Right-hand side p − (h/2) f(q_k), with pinned velocities moved over.
            let force = this.corotated_force(model, &rotations, q, &rest);
            let mut rhs: Vec<f64> = p.iter().zip(&force).map(|(pi, fi)| pi - 0.5 * dt * fi).collect();
            let mut pinned_velocity = vec![0.0; q.len()];
            model.apply_prescribed_velocities(end, &mut pinned_velocity);
            let mut coupling = vec![0.0; q.len()];
            model
                .pattern()
                .symmetric_multiply(&values, &pinned_velocity, &mut coupling);
            rhs.iter_mut().zip(&coupling).for_each(|(r, c)| *r -= c);
            let system = FreeSystem::for_dofs(&mut linear_system, model.pattern(), &dofs)?;
            system.load(&[(1.0, &values)]);
            system.factorize()?;
            let mut free = dofs.gather(&rhs);
            system.solve_in_place(&mut free)?;
            let mut velocity = pinned_velocity.clone();
            dofs.scatter(&free, &mut velocity);
            let positions: Vec<f64> = q.iter().zip(&velocity).map(|(x, v)| x + dt * v).collect();
            // Momentum with the rotations of the new configuration.
            let new_rotations = Self::rotations(model, &positions);
            let midpoint: Vec<f64> = q.iter().zip(&velocity).map(|(x, v)| x + 0.5 * dt * v).collect();
            let new_force = this.corotated_force(model, &new_rotations, &midpoint, &rest);
            let mut mv = vec![0.0; q.len()];
            model.mass_multiply(&velocity, &mut mv);
            let mut momentum: Vec<f64> = mv.iter().zip(&new_force).map(|(m, f)| m - 0.5 * dt * f).collect();
            for (i, value) in momentum.iter_mut().enumerate() {
                if dofs.free_index[i].is_none() {
                    *value = mv[i];
                }
            }
            // Reported velocity M⁻¹p: M_ff v_f = p_f − M_fp v_p.
            let mut pinned_momentum = vec![0.0; q.len()];
            model.mass_multiply(&pinned_velocity, &mut pinned_momentum);
            let free_momentum: Vec<f64> = momentum.iter().zip(&pinned_momentum).map(|(a, b)| a - b).collect();
            let mut velocities = solve_mass(model, &dofs, &free_momentum, &mut mass_cache)?;
            model.apply_prescribed_velocities(end, &mut velocities);
            accepted = Some((end, momentum));
            Ok((
                State {
                    time: end,
                    positions,
                    velocities,
                },
                StepReport {
                    iterations: 1,
                    solve_seconds: started.elapsed().as_secs_f64(),
                    ..StepReport::default()
                },
            ))
        });
        self.system = linear_system;
        self.mass_system = mass_cache;
        if let (Ok(_), Some(momentum)) = (&report, accepted) {
            self.momentum = Some(momentum);
        }
        report
    }
}
