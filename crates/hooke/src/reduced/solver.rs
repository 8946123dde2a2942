//! One iteration of the two reduced solvers on the backward-Euler potential
//! of a step, Φ(u) = ½ uᵀ H_u u − bᵀ u + Σ_c w_c ψ(F_c(u)), with
//! H_u = M_u/h² + Q constant and b = M_u ũ/h² + f (ũ = uₙ + h u̇ₙ):
//!
//! - **subspace FEM**: Newton with the PSD-projected Hessian H_u + K,
//!   K = Σ w_c A_cᵀ (∂P/∂F)_c A_c, and a backtracking line search on Φ;
//! - **subspace mixed FEM** (Trusty et al. 2023, §4, Eqs. 5–8 and Algorithm 1): the stretch z_c is an
//!   unknown of its own at each cubature point, tied to u by w_c μ_cᵀ D (z̄_c(u) − z_c).
//!   The KKT system condenses to (H_u + K) du = rhs with
//!   K = Σ w_c J_cᵀ H_c J_c (J_c = ∂z̄/∂u, H_c = ψ''(z_c) projected to PSD)
//!   and rhs = −(H_u u − b) − Σ w_c J_cᵀ [ψ'(z_c) + H_c (z̄_c(u) − z_c)];
//!   then dz_c = z̄_c(u) − z_c + J_c du and μ_c = D⁻¹[ψ'(z_c) + H_c dz_c]
//!   (the per-point form of Eqs. 6–8, with K = G_uᵀ G_z⁻¹ H_z G_z⁻¹ G_u: the
//!   paper prints G_u G_z⁻¹ H_z G_z⁻¹ G_uᵀ, transposed for its G_u of 6|𝒞| rows),
//!   and a backtracking line search on the
//!   Lagrangian ℒ(u, z; μ) = Φ_u(u) + Σ w_c [ψ(z_c) + μ_cᵀ D (z̄_c(u) − z_c)],
//!   along which the direction descends: its slope is −duᵀH_u du − Σ w dzᵀH dz.
//!
//! Both build K = Σ_c A_cᵀ H_c A_c from the 9 × 9 point Hessians in F,
//! H_c = tᵀt with t = √w_c Lᵀ J (L Lᵀ the PSD point Hessian, J the identity
//! or ∂z̄/∂F), by the blocks of u's coordinates: A_c puts gₑ on block c of u
//! for F's entry (c, e), so block (c, d) of K is G S^{cd} Gᵀ with
//! G = [g₀ g₁ g₂ of every point] (q × 3|𝒞|) and S^{cd} the points' 3 × 3
//! blocks of H. The three diagonal blocks are symmetric and only their lower
//! triangles are formed, so the six lower blocks cost 13.5 q²|𝒞|
//! multiply-adds, against 27 q²|𝒞| (mixed) and 40.5 q²|𝒞| (FEM) for
//! K = P Pᵀ with P's columns t A_c: the dominant cost, O(m²|𝒞|), whatever the
//! mesh size.

use super::problem::{ReducedLoads, ReducedModel};
use super::stretch::{
    evaluate_stretch, local_update, project_to_psd6, stretch_energy, LocalUpdate, Stretch, OFF_DIAGONAL_WEIGHT,
};
use crate::error::{HookeError, Result};
use crate::linalg::{combine3, dot};
use crate::material::{StressDerivative, Want};
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use nalgebra::{DMatrix, SMatrix, Vector6};
use rayon::prelude::*;

/// Which reduced solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReducedMethod {
    /// Subspace FEM: Newton in u.
    Newton,
    /// Subspace mixed FEM: SQP in (u, z, μ).
    MixedSqp,
}

/// The constant and per-step parts of Φ.
#[derive(Clone, Debug)]
pub struct StepPotential {
    /// H_u = M_u/h² + Q.
    pub inertia: DMatrix<f64>,
    /// b = M_u ũ/h² + f(t + h).
    pub rhs: Vec<f64>,
}

impl StepPotential {
    /// Φ_u(u) = ½ uᵀ H_u u − bᵀu and its gradient H_u u − b.
    fn quadratic(&self, u: &[f64]) -> (f64, Vec<f64>) {
        let hu = &self.inertia * nalgebra::DVector::from_column_slice(u);
        let value = 0.5 * dot(u, hu.as_slice()) - dot(&self.rhs, u);
        (value, hu.iter().zip(&self.rhs).map(|(a, b)| a - b).collect())
    }
}

/// What one iteration did.
#[derive(Clone, Copy, Debug, Default)]
pub struct IterationReport {
    /// The Newton decrement λ² = duᵀ (H_u + K) du of the full step.
    pub decrement: f64,
    /// The accepted step length α.
    pub step_length: f64,
    /// The RMS displacement of the accepted increment, √(α² duᵀM_u du / mass).
    pub increment: f64,
    /// Φ (FEM) or ℒ (mixed) after the step.
    pub merit: f64,
}

/// Armijo's sufficient-decrease constant and the step shrink factor.
const ARMIJO: f64 = 1e-4;
const SHRINK: f64 = 0.5;
const MAX_HALVINGS: usize = 40;

/// L with L Lᵀ = A for a symmetric PSD A; a pivot at rounding level makes
/// its column zero (the matrix is singular there).
fn semidefinite_factor<const N: usize>(a: &SMatrix<f64, N, N>) -> SMatrix<f64, N, N> {
    let mut l = SMatrix::<f64, N, N>::zeros();
    let tiny = 1e-13 * (0..N).map(|i| a[(i, i)].abs()).fold(0.0, f64::max);
    for j in 0..N {
        let pivot = a[(j, j)] - (0..j).map(|k| l[(j, k)] * l[(j, k)]).sum::<f64>();
        if pivot <= tiny {
            continue;
        }
        let s = pivot.sqrt();
        l[(j, j)] = s;
        for i in j + 1..N {
            l[(i, j)] = (a[(i, j)] - (0..j).map(|k| l[(i, k)] * l[(j, k)]).sum::<f64>()) / s;
        }
    }
    l
}

/// H₊, the PSD part of a symmetric 6×6 H as [`project_to_psd6`] gives it, and
/// L with L Lᵀ = H₊: one Cholesky factorisation serves both where H is
/// positive definite (the common case).
fn projected_with_factor(h: &SMatrix<f64, 6, 6>) -> (SMatrix<f64, 6, 6>, SMatrix<f64, 6, 6>) {
    match nalgebra::Cholesky::new(*h) {
        Some(cholesky) => (*h, cholesky.unpack()),
        None => {
            let projected = project_to_psd6(h);
            let factor = semidefinite_factor(&projected);
            (projected, factor)
        }
    }
}

impl ReducedModel {
    /// The step's potential from uₙ, u̇ₙ, the step h and the reduced loads at t + h.
    pub fn step_potential(&self, u: &[f64], velocity: &[f64], h: f64, loads: &ReducedLoads) -> StepPotential {
        let force = &loads.force;
        let inertia = &self.mass / (h * h) + &loads.stiffness;
        let predicted: Vec<f64> = u.iter().zip(velocity).map(|(a, v)| a + h * v).collect();
        let mu = &self.mass * nalgebra::DVector::from_vec(predicted);
        let rhs = mu.iter().zip(force).map(|(m, f)| m / (h * h) + f).collect();
        StepPotential { inertia, rhs }
    }

    /// Σ_c w_c ψ(F_c(u)); +∞ where an element is undefined.
    pub fn elastic_energy(&self, u: &[f64]) -> f64 {
        (0..self.points.len())
            .into_par_iter()
            .map(|c| {
                let f = self.deformation_gradient(c, u);
                self.points[c].weight * self.points[c].material.evaluate(&f, Want::Energy).energy_density
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum()
    }

    /// Φ(u) of subspace FEM.
    pub fn potential(&self, step: &StepPotential, u: &[f64]) -> f64 {
        step.quadratic(u).0 + self.elastic_energy(u)
    }

    /// H_u + K with K = Σ_c A_cᵀ t_cᵀ t_c A_c (`factors`: each point's t, R × 9),
    /// lower triangle only (see the module's notes for the blocks), and with
    /// `forces` their gather Σ_c A_cᵀ v_c (in the same pass over the points'
    /// gradients). Two threads share the lower blocks by rows of u's
    /// coordinates, (0, 0), (1, 0), (1, 1) and the gather against (2, 0),
    /// (2, 1), (2, 2), about equal work that writes disjoint parts of the
    /// matrix: no sum of partial matrices afterwards, and every entry is summed
    /// over the points in one fixed order, whatever the number of threads.
    fn condensed_system<const R: usize>(
        &self,
        inertia: &DMatrix<f64>,
        factors: &[SMatrix<f64, R, 9>],
        forces: Option<&[[f64; 9]]>,
    ) -> (DMatrix<f64>, Vec<f64>) {
        let q = self.basis.block();
        debug_assert_eq!(inertia.nrows(), 3 * q);
        let mut system = inertia.clone();
        let mut gathered = vec![0.0; 3 * q];
        let matrix = MatMut::from_column_major_slice_mut(system.as_mut_slice(), 3 * q, 3 * q);
        let (top, bottom) = matrix.split_at_row_mut(2 * q);
        rayon::join(
            || {
                self.condensed_blocks(
                    &[(0, 0), (1, 0), (1, 1)],
                    0,
                    top,
                    factors,
                    forces.map(|f| (f, &mut gathered[..])),
                )
            },
            || self.condensed_blocks(&[(2, 0), (2, 1), (2, 2)], 2, bottom, factors, None),
        );
        (system, gathered)
    }

    /// Adds blocks (c, d) of Σ A_cᵀ tᵀt A_c to `target`, the rows of the
    /// matrix from block row `first_row` on, a chunk of points at a time so
    /// that the scaled gradients stay in cache. For a chunk with gradients G
    /// (q × 3k), block (c, d) is G S^{cd} Gᵀ, S^{cd} the points' 3 × 3 blocks
    /// of tᵀt; a diagonal block (S^{cc} symmetric) gets its lower triangle
    /// only. With `gather`, also adds Σ A_cᵀ v_c to its vector.
    fn condensed_blocks<const R: usize>(
        &self,
        blocks: &[(usize, usize)],
        first_row: usize,
        mut target: MatMut<'_, f64>,
        factors: &[SMatrix<f64, R, 9>],
        mut gather: Option<(&[[f64; 9]], &mut [f64])>,
    ) {
        const CHUNK: usize = 64;
        let q = self.basis.block();
        // Per chunk and block b: the columns of G S^{cd}, a q × 3k matrix.
        let mut scaled = self.scratch.take(blocks.len() * q * 3 * CHUNK);
        let mut weights = vec![0.0; 9 * CHUNK];
        for (chunk_index, chunk) in factors.chunks(CHUNK).enumerate() {
            let start = chunk_index * CHUNK;
            let k = chunk.len();
            for (p, t) in chunk.iter().enumerate() {
                let gp = self.point_gradients(start + p);
                // S^{cd}[e, f] = (tᵀt)[c + 3e, d + 3f].
                let h = t.transpose() * t;
                for (b, &(c, d)) in blocks.iter().enumerate() {
                    for f in 0..3 {
                        let w = [h[(c, d + 3 * f)], h[(c + 3, d + 3 * f)], h[(c + 6, d + 3 * f)]];
                        let column = b * 3 * k + 3 * p + f;
                        combine(&mut scaled[column * q..(column + 1) * q], gp, q, w);
                    }
                }
            }
            let gradients =
                MatRef::from_column_major_slice(&self.gradients[3 * q * start..3 * q * (start + k)], q, 3 * k);
            if let Some((forces, gathered)) = gather.as_mut() {
                // Column-major 3k × 3: entry (3p + e, c) is v_p[c + 3e].
                for (p, v) in forces[start..start + k].iter().enumerate() {
                    for e in 0..3 {
                        for c in 0..3 {
                            weights[c * 3 * k + 3 * p + e] = v[c + 3 * e];
                        }
                    }
                }
                matmul(
                    MatMut::from_column_major_slice_mut(gathered, q, 3),
                    Accum::Add,
                    gradients,
                    MatRef::from_column_major_slice(&weights[..9 * k], 3 * k, 3),
                    1.0,
                    Par::Seq,
                );
            }
            for (b, &(c, d)) in blocks.iter().enumerate() {
                let left = MatRef::from_column_major_slice(&scaled[b * 3 * k * q..(b + 1) * 3 * k * q], q, 3 * k);
                let block = target.rb_mut().submatrix_mut((c - first_row) * q, d * q, q, q);
                match c == d {
                    true => triangular::matmul(
                        block,
                        BlockStructure::TriangularLower,
                        Accum::Add,
                        left,
                        BlockStructure::Rectangular,
                        gradients.transpose(),
                        BlockStructure::Rectangular,
                        1.0,
                        Par::Seq,
                    ),
                    false => matmul(block, Accum::Add, left, gradients.transpose(), 1.0, Par::Seq),
                }
            }
        }
        self.scratch.put(scaled);
    }

    /// Solves (H_u + K) du = rhs for the lower triangle `system` of H_u + K
    /// (factorised in place, on this thread: at r ≤ a few hundred a parallel
    /// factorisation costs more in hand-offs than it saves); returns du and
    /// the decrement duᵀ(H_u + K)du.
    fn condensed_solve(&self, mut system: DMatrix<f64>, rhs: &[f64]) -> Result<(Vec<f64>, f64)> {
        use faer::dyn_stack::{MemBuffer, MemStack};
        use faer::linalg::cholesky::llt;
        let r = self.rank();
        let mut factor = MatMut::from_column_major_slice_mut(system.as_mut_slice(), r, r);
        let mut memory = MemBuffer::new(llt::factor::cholesky_in_place_scratch::<f64>(
            r,
            Par::Seq,
            Default::default(),
        ));
        let stack = MemStack::new(&mut memory);
        llt::factor::cholesky_in_place(factor.rb_mut(), Default::default(), Par::Seq, stack, Default::default()).map_err(|_| {
            HookeError::LinearSolver {
                reason: "the reduced system H_u + K is not positive definite (too few cubature points for the modes leave it singular; Trusty et al. 2023 keep |𝒞| ≈ 20 m)".to_string(),
            }
        })?;
        let mut solution = rhs.to_vec();
        let rhs_view = MatMut::from_column_major_slice_mut(&mut solution, r, 1);
        llt::solve::solve_in_place(factor.rb(), rhs_view, Par::Seq, MemStack::new(&mut []));
        // duᵀ A du = duᵀ rhs.
        let decrement = dot(&solution, rhs);
        Ok((solution, decrement))
    }

    /// √(duᵀ M_u du / mass): the RMS displacement of an increment.
    pub fn rms_increment(&self, du: &[f64]) -> f64 {
        let md = &self.mass * nalgebra::DVector::from_column_slice(du);
        (dot(du, md.as_slice()).max(0.0) / self.total_mass).sqrt()
    }

    /// The elastic part of subspace FEM at u: Σ w ψ(F_c), the per-point
    /// forces w vec(P_c) (for Σ A_cᵀ), and each point's t = √w Lᵀ with
    /// L Lᵀ = ∂P/∂F (PSD-projected), so that K = Σ A_cᵀ tᵀt A_c.
    #[allow(clippy::type_complexity)]
    fn fem_linearisation(&self, u: &[f64]) -> Result<(f64, Vec<[f64; 9]>, Vec<SMatrix<f64, 9, 9>>)> {
        let evaluations: Vec<Result<(f64, [f64; 9], SMatrix<f64, 9, 9>)>> = (0..self.points.len())
            .into_par_iter()
            .map(|c| {
                let point = &self.points[c];
                let f = self.deformation_gradient(c, u);
                let evaluation = point.material.evaluate(&f, Want::Derivative { project: true });
                if evaluation.is_undefined() {
                    return Err(HookeError::Solver {
                        reason: format!(
                            "cubature element {} is outside its material's domain (inverted)",
                            point.element
                        ),
                    });
                }
                let derivative = match evaluation.first_piola_derivative {
                    Some(StressDerivative::Matrix(m)) => m,
                    Some(StressDerivative::Eigensystem(system)) => system.to_matrix(),
                    None => crate::material::Matrix9::zeros(),
                };
                let t = semidefinite_factor(&derivative).transpose() * point.weight.sqrt();
                let mut stress = [0.0; 9];
                for (s, p) in stress.iter_mut().zip(evaluation.first_piola.iter()) {
                    *s = point.weight * p;
                }
                Ok((point.weight * evaluation.energy_density, stress, t))
            })
            .collect();
        let mut energy = 0.0;
        let mut stresses = Vec::with_capacity(evaluations.len());
        let mut factors = Vec::with_capacity(evaluations.len());
        for evaluation in evaluations {
            let (e, s, t) = evaluation?;
            energy += e;
            stresses.push(s);
            factors.push(t);
        }
        Ok((energy, stresses, factors))
    }

    /// K = Σ w_c A_cᵀ (∂P/∂F)_c A_c at u (PSD-projected), dense: for checks of the cubature's null space.
    pub fn elastic_hessian(&self, u: &[f64]) -> Result<DMatrix<f64>> {
        let (_, _, factors) = self.fem_linearisation(u)?;
        let r = self.rank();
        let (lower, _) = self.condensed_system(&DMatrix::zeros(r, r), &factors, None);
        Ok(DMatrix::from_fn(r, r, |i, j| lower[(i.max(j), i.min(j))]))
    }

    /// One Newton iteration of subspace FEM from u (updated in place).
    pub fn newton_iteration(&self, step: &StepPotential, u: &mut [f64]) -> Result<IterationReport> {
        self.newton_iteration_within(step, u, None)
    }

    /// [`ReducedModel::newton_iteration`] whose line search starts from a
    /// feasible step bound: `bound(u, du)` is the largest α ≤ 1 that keeps
    /// u + α du admissible (the model's [`feasible_step`](crate::model::Model::feasible_step)
    /// in subspace coordinates).
    pub fn newton_iteration_within(
        &self,
        step: &StepPotential,
        u: &mut [f64],
        bound: Option<&StepBound<'_>>,
    ) -> Result<IterationReport> {
        let (energy, stresses, factors) = self.fem_linearisation(u)?;
        let (quadratic, mut gradient) = step.quadratic(u);
        let (system, elastic) = self.condensed_system(&step.inertia, &factors, Some(&stresses));
        for (g, e) in gradient.iter_mut().zip(elastic) {
            *g += e;
        }
        let rhs: Vec<f64> = gradient.iter().map(|g| -g).collect();
        let (du, decrement) = self.condensed_solve(system, &rhs)?;
        let start = quadratic + energy;
        let slope = -decrement;
        let trial = |alpha: f64| -> (Vec<f64>, f64) {
            let next: Vec<f64> = u.iter().zip(&du).map(|(a, d)| a + alpha * d).collect();
            let value = self.potential(step, &next);
            (next, value)
        };
        let first = first_step(bound, u, &du)?;
        let (alpha, next, merit) = backtrack(start, slope, first, trial);
        if alpha > 0.0 {
            u.copy_from_slice(&next);
        }
        Ok(IterationReport {
            decrement,
            step_length: alpha,
            increment: alpha * self.rms_increment(&du),
            merit: if alpha > 0.0 { merit } else { start },
        })
    }

    /// z̄_c(u) for every point: the stretch of F_c.
    pub fn stretches(&self, u: &[f64]) -> Vec<Vector6<f64>> {
        (0..self.points.len())
            .into_par_iter()
            .map(|c| Stretch::of(&self.deformation_gradient(c, u)).vector())
            .collect()
    }

    /// ℒ(u, z; μ) = Φ_u(u) + Σ w_c [ψ(z_c) + μ_cᵀ D (z̄_c(u) − z_c)].
    pub fn lagrangian(&self, step: &StepPotential, u: &[f64], z: &[Vector6<f64>], multipliers: &[Vector6<f64>]) -> f64 {
        let terms: Vec<f64> = (0..self.points.len())
            .into_par_iter()
            .map(|c| self.lagrangian_term(c, u, &z[c], &multipliers[c]))
            .collect();
        step.quadratic(u).0 + terms.iter().sum::<f64>()
    }

    /// Point c's term of ℒ: w_c [ψ(z_c) + μ_cᵀ D (z̄_c(u) − z_c)].
    fn lagrangian_term(&self, c: usize, u: &[f64], z: &Vector6<f64>, multiplier: &Vector6<f64>) -> f64 {
        let d = Vector6::from_column_slice(&OFF_DIAGONAL_WEIGHT);
        let point = &self.points[c];
        let target = Stretch::of(&self.deformation_gradient(c, u)).vector();
        let gap = (target - z).component_mul(&d);
        point.weight * (stretch_energy(&*point.material, z) + multiplier.dot(&gap))
    }

    /// One SQP iteration of subspace mixed FEM from (u, z), updated in place;
    /// the multipliers μ of the step are written to `multipliers`.
    pub fn mixed_iteration(
        &self,
        step: &StepPotential,
        u: &mut [f64],
        z: &mut [Vector6<f64>],
        multipliers: &mut Vec<Vector6<f64>>,
    ) -> Result<IterationReport> {
        self.mixed_iteration_within(step, u, z, multipliers, None)
    }

    /// [`ReducedModel::mixed_iteration`] whose line search starts from a
    /// feasible step bound on u (see [`ReducedModel::newton_iteration_within`]).
    ///
    /// One function of about 125 lines: one SQP iteration of subspace mixed FEM (Trusty et al.
    /// 2023, §5) over the cubature points' states, the condensed system, its solve and the line
    /// search, which share the per-point data.
    pub fn mixed_iteration_within(
        &self,
        step: &StepPotential,
        u: &mut [f64],
        z: &mut [Vector6<f64>],
        multipliers: &mut Vec<Vector6<f64>>,
        bound: Option<&StepBound<'_>>,
    ) -> Result<IterationReport> {
        let count = self.points.len();
        struct PointState {
            target: Vector6<f64>,
            energy: f64,
            jacobian: SMatrix<f64, 6, 9>,
            gradient: Vector6<f64>,
            hessian: SMatrix<f64, 6, 6>,
        }
        // Each point's factor t (for the condensed matrix) and force are
        // written in place, the rest kept per point.
        let mut factors = vec![SMatrix::<f64, 6, 9>::zeros(); count];
        let mut forces = vec![[0.0; 9]; count];
        let mut states: Vec<Result<PointState>> = factors
            .par_iter_mut()
            .zip(forces.par_iter_mut())
            .enumerate()
            .map(|(c, (factor, force))| {
                let point = &self.points[c];
                let stretch = Stretch::of(&self.deformation_gradient(c, u));
                let jacobian = stretch.jacobian();
                let target = stretch.vector();
                let evaluation =
                    evaluate_stretch(&*point.material, &z[c], false).ok_or_else(|| HookeError::Solver {
                        reason: format!(
                            "the stretch of cubature element {} is outside its material's domain",
                            point.element
                        ),
                    })?;
                let (hessian, lower) = projected_with_factor(&evaluation.hessian);
                *factor = lower.transpose() * jacobian * point.weight.sqrt();
                let linearised = evaluation.gradient + hessian * (target - z[c]);
                let force_vector = jacobian.transpose() * linearised * point.weight;
                force.copy_from_slice(force_vector.as_slice());
                Ok(PointState {
                    target,
                    energy: evaluation.energy,
                    jacobian,
                    gradient: evaluation.gradient,
                    hessian,
                })
            })
            .collect();
        first_error(&mut states)?;
        let states: Vec<&PointState> = states.iter().flatten().collect();
        let (quadratic, quadratic_gradient) = step.quadratic(u);
        let (system, elastic) = self.condensed_system(&step.inertia, &factors, Some(&forces));
        let rhs: Vec<f64> = quadratic_gradient.iter().zip(&elastic).map(|(g, e)| -g - e).collect();
        let (du, decrement) = self.condensed_solve(system, &rhs)?;
        // The local updates (dz_c and the multipliers μ_c) per point in
        // parallel, and in the same pass each point's term of ℒ at the full
        // step, the line search's first trial (its value is bit for bit what
        // `lagrangian` gives there).
        let full_u: Vec<f64> = u.iter().zip(&du).map(|(a, b)| a + b).collect();
        let updates: Vec<(LocalUpdate<9>, f64, f64)> = states
            .par_iter()
            .enumerate()
            .map(|(c, state)| {
                let a_du = SMatrix::<f64, 9, 1>::from_column_slice(self.map_product(c, &du).as_slice());
                let w = self.points[c].weight;
                // ∇_u ℒ gets Σ w A_cᵀ J_Sᵀ D μ_c; its part of the slope is
                // that force against A_c du; ∇_z ℒ_c = w (ψ'(z_c) − D μ_c).
                let update = local_update(
                    &state.target,
                    &z[c],
                    &state.jacobian,
                    &state.gradient,
                    &state.hessian,
                    &a_du,
                    w,
                    |pulled| std::array::from_fn(|k| pulled[k] * w),
                );
                let pull = update.force.iter().zip(a_du.iter()).map(|(f, d)| f * d).sum::<f64>();
                let full_term = self.lagrangian_term(c, &full_u, &(z[c] + update.change), &update.multiplier);
                (update, pull, full_term)
            })
            .collect();
        let mut slope = dot(&quadratic_gradient, &du);
        let mut dz = Vec::with_capacity(count);
        multipliers.clear();
        let mut full_terms = Vec::with_capacity(count);
        for (update, pull, full_term) in updates {
            slope += update.slope + pull;
            dz.push(update.change);
            multipliers.push(update.multiplier);
            full_terms.push(full_term);
        }
        let d = Vector6::from_column_slice(&OFF_DIAGONAL_WEIGHT);
        let start = quadratic
            + (0..count)
                .map(|c| {
                    let w = self.points[c].weight;
                    w * (states[c].energy + multipliers[c].dot(&(states[c].target - z[c]).component_mul(&d)))
                })
                .sum::<f64>();
        let full_value = step.quadratic(&full_u).0 + full_terms.iter().sum::<f64>();
        let trial = |alpha: f64| -> ((Vec<f64>, Vec<Vector6<f64>>), f64) {
            let next_u: Vec<f64> = u.iter().zip(&du).map(|(a, b)| a + alpha * b).collect();
            let next_z: Vec<Vector6<f64>> = z.iter().zip(&dz).map(|(a, b)| a + alpha * b).collect();
            let value = match alpha == 1.0 {
                true => full_value,
                false => self.lagrangian(step, &next_u, &next_z, multipliers),
            };
            ((next_u, next_z), value)
        };
        let first = first_step(bound, u, &du)?;
        let (alpha, (next_u, next_z), merit) = backtrack(start, slope, first, trial);
        if alpha > 0.0 {
            u.copy_from_slice(&next_u);
            z.copy_from_slice(&next_z);
        }
        Ok(IterationReport {
            decrement,
            step_length: alpha,
            increment: alpha * self.rms_increment(&du),
            merit: if alpha > 0.0 { merit } else { start },
        })
    }
}

/// The first failure among per-point results, in point order (so that the
/// message does not depend on how the points were shared among threads).
fn first_error<T>(results: &mut Vec<Result<T>>) -> Result<()> {
    match results.iter().position(Result::is_err) {
        Some(point) => results.swap_remove(point).map(|_| ()),
        None => Ok(()),
    }
}

/// out = w₀ g₀ + w₁ g₁ + w₂ g₂ for a point's gradients gp = [g₀ g₁ g₂].
#[inline]
fn combine(out: &mut [f64], gp: &[f64], q: usize, w: [f64; 3]) {
    combine3(out, &gp[..q], &gp[q..2 * q], &gp[2 * q..3 * q], w);
}

/// The largest α ≤ 1 that keeps u + α du admissible, given u and du.
pub type StepBound<'a> = dyn Fn(&[f64], &[f64]) -> Result<f64> + Sync + 'a;

/// Where a line search starts: the feasible step bound, or 1 without one.
fn first_step(bound: Option<&StepBound<'_>>, u: &[f64], du: &[f64]) -> Result<f64> {
    let Some(bound) = bound else {
        return Ok(1.0);
    };
    let first = bound(u, du)?;
    if !(first > 0.0 && first <= 1.0) {
        return Err(HookeError::Solver {
            reason: format!("the feasible step bound admits no step along the subspace direction (bound {first})"),
        });
    }
    Ok(first)
}

/// Backtracking from α = `first` (1, or the feasible step bound) until
/// f(α) ≤ f(0) + c α slope (Armijo). When the slope is not negative (at
/// rounding level near a minimum) or no α passes, returns α = 0: no step.
fn backtrack<T: Default>(start: f64, slope: f64, first: f64, trial: impl Fn(f64) -> (T, f64)) -> (f64, T, f64) {
    if slope.is_nan() || slope >= 0.0 {
        return (0.0, T::default(), start);
    }
    let mut alpha = first;
    for _ in 0..MAX_HALVINGS {
        let (point, value) = trial(alpha);
        if value.is_finite() && value <= start + ARMIJO * alpha * slope {
            return (alpha, point, value);
        }
        alpha *= SHRINK;
    }
    (0.0, T::default(), start)
}
