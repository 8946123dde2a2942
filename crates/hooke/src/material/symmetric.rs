//! An isotropic material evaluated at a symmetric F = S, in the six
//! coordinates z = [S₁₁, S₂₂, S₃₃, S₁₂, S₁₃, S₂₃] that the mixed
//! formulation carries at each quadrature point (Trusty et al. 2023, §3–4).
//!
//! For S symmetric positive definite, S = V diag(λ) Vᵀ is already F's
//! singular value decomposition (U = V), so ψ(S) = ψ(λ) and, with
//! dŜ = Vᵀ dS V (Lewis' formula for spectral functions),
//!
//!   dψ = Σₐ pₐ dŜₐₐ,   d²ψ = Σₐᵦ ∂²ψ/∂λₐ∂λᵦ dŜₐₐ dŜᵦᵦ + Σₐ<ᵦ 2 fₐᵦ dŜₐᵦ²,
//!
//! with p = ∂ψ/∂λ and fₐᵦ = (pₐ − pᵦ)/(λₐ − λᵦ), the "flip" eigenvalues of
//! ∂P/∂F (the "twist" ones act on skew perturbations, which z never makes).
//! This costs one symmetric 3×3 eigen-decomposition, against a singular value
//! decomposition and the 9×9 ∂P/∂F carried to z through ∂S/∂z. The
//! projection to positive semi-definite clamps the eigenvalues of the 6×6
//! matrix in z, as the general path does, so both give the same steps.
//! An indefinite S (an inverted stretch, whose singular vectors are not S's
//! eigenvectors) is left to the general path.
//!
//! Models written in the invariants ‖S‖² and det S (ARAP, fixed corotational,
//! Stable Neo-Hookean) skip even the eigen-decomposition
//! ([`StretchEnergy::at_stretch`]): both invariants are polynomials in z, so
//! their derivatives are closed forms ([`StretchInvariants`]). Positive
//! definiteness is then read off the leading minors of S.

use super::isotropic::{flip_value, StretchEnergy, PAIRS};
pub use super::stretch_coordinates::{
    to_matrix, to_vector, StretchInvariants, SymmetricEvaluation, ENTRIES, OFF_DIAGONAL_WEIGHT,
};
use super::{Lame, Matrix6, Want};
use crate::linalg::{symmetric_eigen3, symmetric_eigenvalues3};
use nalgebra::{Matrix3, Vector3};

/// `model` at F = S; None where S is not positive definite (or not finite).
/// `want`: Energy, or a derivative (Stress is treated as Derivative
/// unprojected, Stiffness as Derivative).
pub fn evaluate<M: StretchEnergy>(model: &M, s: &Matrix3<f64>, lame: &Lame, want: Want) -> Option<SymmetricEvaluation> {
    if !s.iter().all(|x| x.is_finite()) {
        return None;
    }
    if let Some(invariants) = StretchInvariants::of(s) {
        if let Some(mut evaluation) = model.at_stretch(&invariants, lame, want != Want::Energy) {
            if !evaluation.energy.is_finite() {
                return None;
            }
            if want.derivative().unwrap_or(false) {
                evaluation.hessian = project_to_psd6(&evaluation.hessian);
            }
            return Some(evaluation);
        }
    }
    if want == Want::Energy {
        // The same eigenvalues as below, bit for bit: a line search compares
        // this energy with the one a derivative evaluation gave.
        let lambda = symmetric_eigenvalues3(s);
        if lambda.iter().any(|&l| l <= 0.0) {
            return None;
        }
        let energy = model.energy(&lambda, lame);
        return energy.is_finite().then(|| SymmetricEvaluation::energy_only(energy));
    }
    let (lambda, v) = symmetric_eigen3(s);
    if lambda.iter().any(|&l| l <= 0.0) {
        return None;
    }
    let energy = model.energy(&lambda, lame);
    if !energy.is_finite() {
        return None;
    }
    let project = want.derivative().unwrap_or(false);
    let p = model.gradient(&lambda, lame);
    let scaling = model.hessian(&lambda, lame);
    let flips = Vector3::from_fn(|n, _| {
        let (i, j) = PAIRS[n];
        flip_value(&lambda, &p, &scaling, i, j)
    });
    // Column k of `frame`: dŜ for a unit change of z_k, as [dŜ₁₁, dŜ₂₂,
    // dŜ₃₃, dŜ₁₂, dŜ₁₃, dŜ₂₃]. Vᵀ eᵢ is row i of V.
    let rows: [Vector3<f64>; 3] = std::array::from_fn(|i| v.row(i).transpose());
    let mut frame = Matrix6::zeros();
    for (k, &(i, j)) in ENTRIES.iter().enumerate() {
        let (a, b) = (rows[i], rows[j]);
        // dS = eᵢeⱼᵀ (+ eⱼeᵢᵀ off the diagonal): dŜ = a bᵀ (+ b aᵀ).
        let entry = |x: usize, y: usize| match i == j {
            true => a[x] * b[y],
            false => a[x] * b[y] + b[x] * a[y],
        };
        frame[(0, k)] = entry(0, 0);
        frame[(1, k)] = entry(1, 1);
        frame[(2, k)] = entry(2, 2);
        for (n, &(x, y)) in PAIRS.iter().enumerate() {
            frame[(3 + n, k)] = entry(x, y);
        }
    }
    let mut weights = Matrix6::zeros();
    weights.fixed_view_mut::<3, 3>(0, 0).copy_from(&scaling);
    for n in 0..3 {
        weights[(3 + n, 3 + n)] = 2.0 * flips[n];
    }
    let gradient = frame.fixed_rows::<3>(0).transpose() * p;
    let hessian = frame.transpose() * weights * frame;
    let mut hessian = 0.5 * (hessian + hessian.transpose());
    if project {
        hessian = project_to_psd6(&hessian);
    }
    Some(SymmetricEvaluation {
        energy,
        gradient,
        hessian,
    })
}

/// The PSD part of a symmetric 6×6 matrix (its eigenvalues clamped at zero).
pub fn project_to_psd6(h: &Matrix6) -> Matrix6 {
    // Positive definite (the common case): a Cholesky factorisation says so
    // at a fraction of an eigen-decomposition's cost.
    if nalgebra::Cholesky::new(*h).is_some() {
        return *h;
    }
    let eigen = nalgebra::SymmetricEigen::new(*h);
    if eigen.eigenvalues.iter().all(|l| *l >= 0.0) {
        return *h;
    }
    let clamped = eigen.eigenvalues.map(|l| l.max(0.0));
    eigen.eigenvectors * Matrix6::from_diagonal(&clamped) * eigen.eigenvectors.transpose()
}
