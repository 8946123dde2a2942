//! An isotropic material evaluated at a symmetric F = S, in the six
//! coordinates z = [S₁₁, S₂₂, S₃₃, S₁₂, S₁₃, S₂₃] that the mixed
//! formulation carries at each quadrature point (seed 002 §2.3–2.4).
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
use super::{Lame, Matrix6, Want};
use crate::linalg::{symmetric_eigen3, symmetric_eigenvalues3};
use nalgebra::{Matrix3, Vector3, Vector6};

/// The entries (row, column) of S that z lists, in order.
pub const ENTRIES: [(usize, usize); 6] = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)];

/// D = diag(1, 1, 1, 2, 2, 2): zᵀ D y = S : Y, the Frobenius product of the matrices.
pub const OFF_DIAGONAL_WEIGHT: [f64; 6] = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0];

/// z of a symmetric matrix (its upper triangle is read).
pub fn to_vector(s: &Matrix3<f64>) -> Vector6<f64> {
    Vector6::from_fn(|k, _| s[ENTRIES[k]])
}

/// The symmetric matrix of z.
pub fn to_matrix(z: &Vector6<f64>) -> Matrix3<f64> {
    let mut s = Matrix3::zeros();
    for (k, &(i, j)) in ENTRIES.iter().enumerate() {
        s[(i, j)] = z[k];
        s[(j, i)] = z[k];
    }
    s
}

/// S(z) with the invariants ‖S‖² and det S, and their z-derivatives, for
/// models written in them ([`StretchEnergy::at_stretch`]). With
/// z = [a, b, c, d, e, f] = [S₁₁, S₂₂, S₃₃, S₁₂, S₁₃, S₂₃]:
/// ‖S‖² = zᵀ D z (D = diag(1, 1, 1, 2, 2, 2)) and
/// det S = abc + 2def − af² − be² − cd², a cubic whose Hessian is linear in z.
#[derive(Clone, Copy, Debug)]
pub struct StretchInvariants {
    pub z: Vector6<f64>,
    /// det S.
    pub determinant: f64,
}

impl StretchInvariants {
    /// None unless S is positive definite (its leading minors positive), the
    /// domain of the stretch form: an indefinite S is left to the general path.
    pub fn of(s: &Matrix3<f64>) -> Option<StretchInvariants> {
        let z = to_vector(s);
        let [a, b, c, d, e, f] = [z[0], z[1], z[2], z[3], z[4], z[5]];
        let determinant = a * b * c + 2.0 * d * e * f - a * f * f - b * e * e - c * d * d;
        (a > 0.0 && a * b - d * d > 0.0 && determinant > 0.0).then_some(StretchInvariants { z, determinant })
    }

    /// D z = ½ ∂‖S‖²/∂z.
    pub fn weighted(&self) -> Vector6<f64> {
        self.z.component_mul(&Vector6::from_column_slice(&OFF_DIAGONAL_WEIGHT))
    }

    /// ‖S‖².
    pub fn norm_squared(&self) -> f64 {
        self.z.dot(&self.weighted())
    }

    /// ‖S − I‖², without the cancellation of ‖S‖² − 2 tr S + 3 near S = I.
    pub fn distance_to_identity_squared(&self) -> f64 {
        let z = &self.z;
        (z[0] - 1.0).powi(2)
            + (z[1] - 1.0).powi(2)
            + (z[2] - 1.0).powi(2)
            + 2.0 * (z[3] * z[3] + z[4] * z[4] + z[5] * z[5])
    }

    /// D (z − z(I)) = ½ ∂‖S − I‖²/∂z.
    pub fn weighted_from_identity(&self) -> Vector6<f64> {
        let z = &self.z;
        Vector6::new(z[0] - 1.0, z[1] - 1.0, z[2] - 1.0, 2.0 * z[3], 2.0 * z[4], 2.0 * z[5])
    }

    /// ∂ det S/∂z.
    pub fn determinant_gradient(&self) -> Vector6<f64> {
        let [a, b, c, d, e, f] = [self.z[0], self.z[1], self.z[2], self.z[3], self.z[4], self.z[5]];
        Vector6::new(
            b * c - f * f,
            a * c - e * e,
            a * b - d * d,
            2.0 * (e * f - c * d),
            2.0 * (d * f - b * e),
            2.0 * (d * e - a * f),
        )
    }

    /// ∂² det S/∂z².
    pub fn determinant_hessian(&self) -> Matrix6 {
        let [a, b, c, d, e, f] = [self.z[0], self.z[1], self.z[2], self.z[3], self.z[4], self.z[5]];
        #[rustfmt::skip]
        let h = Matrix6::new(
            0.0,        c,          b,          0.0,        0.0,        -2.0 * f,
            c,          0.0,        a,          0.0,        -2.0 * e,   0.0,
            b,          a,          0.0,        -2.0 * d,   0.0,        0.0,
            0.0,        0.0,        -2.0 * d,   -2.0 * c,   2.0 * f,    2.0 * e,
            0.0,        -2.0 * e,   0.0,        2.0 * f,    -2.0 * b,   2.0 * d,
            -2.0 * f,   0.0,        0.0,        2.0 * e,    2.0 * d,    -2.0 * a,
        );
        h
    }
}

/// ψ, ∂ψ/∂z and ∂²ψ/∂z² at a stretch z (gradient and Hessian zero when only
/// the energy was asked for).
#[derive(Clone, Copy, Debug)]
pub struct SymmetricEvaluation {
    pub energy: f64,
    pub gradient: Vector6<f64>,
    pub hessian: Matrix6,
}

impl SymmetricEvaluation {
    /// ψ alone (what `Want::Energy` asks for).
    pub fn energy_only(energy: f64) -> SymmetricEvaluation {
        SymmetricEvaluation {
            energy,
            gradient: Vector6::zeros(),
            hessian: Matrix6::zeros(),
        }
    }
}

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
        return energy.is_finite().then(|| SymmetricEvaluation {
            energy,
            gradient: Vector6::zeros(),
            hessian: Matrix6::zeros(),
        });
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
