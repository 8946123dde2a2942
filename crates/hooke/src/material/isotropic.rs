//! Isotropic models written in the signed singular values σ of F.
//!
//! With F = U diag(σ) Vᵀ (U, V rotations, so σ₃ < 0 marks an inverted element),
//! P = U diag(∂ψ/∂σ) Vᵀ and ∂P/∂F has a closed eigen-system: a 3×3 "scaling"
//! block (∂²ψ/∂σ²) and, for each pair (i, j), a "flip" and a "twist" mode with
//! eigenvalues (pᵢ − pⱼ)/(σᵢ − σⱼ) and (pᵢ + pⱼ)/(σᵢ + σⱼ). Clamping those nine
//! eigenvalues at zero is the exact projection of ∂P/∂F to positive
//! semi-definite, which is far cheaper than an eigen-decomposition of the 12×12
//! element Hessian and gives the same guarantee (Bᵀ C B is PSD when C is).

use super::{Evaluation, Lame, Matrix9, Want};
use nalgebra::{Matrix3, SVector, SymmetricEigen, Vector3};

/// An isotropic energy density expressed in the signed singular values of F.
pub trait StretchEnergy {
    /// ψ(σ); +∞ where the model is undefined.
    fn energy(&self, sigma: &Vector3<f64>, lame: &Lame) -> f64;
    /// ∂ψ/∂σ.
    fn gradient(&self, sigma: &Vector3<f64>, lame: &Lame) -> Vector3<f64>;
    /// ∂²ψ/∂σ².
    fn hessian(&self, sigma: &Vector3<f64>, lame: &Lame) -> Matrix3<f64>;
}

/// Below this relative gap two singular values count as equal, and the flip
/// eigenvalue (pᵢ − pⱼ)/(σᵢ − σⱼ) is replaced by its limit ∂²ψ/∂σᵢ² − ∂²ψ/∂σᵢ∂σⱼ.
/// √ε balances the cancellation error of the quotient against the O(gap) error of the limit.
const EQUAL_STRETCH_GAP: f64 = 1e-8;

/// Singular value decomposition with U and V proper rotations: a reflection is
/// moved into the sign of the smallest singular value.
pub fn signed_svd(f: &Matrix3<f64>) -> (Matrix3<f64>, Vector3<f64>, Matrix3<f64>) {
    let svd = f.svd(true, true);
    let mut sigma = svd.singular_values;
    // Both factors were requested, so both are present.
    let mut u = svd.u.unwrap_or_else(Matrix3::identity);
    let mut v = svd.v_t.map(|vt| vt.transpose()).unwrap_or_else(Matrix3::identity);
    if u.determinant() < 0.0 {
        u.column_mut(2).neg_mut();
        sigma[2] = -sigma[2];
    }
    if v.determinant() < 0.0 {
        v.column_mut(2).neg_mut();
        sigma[2] = -sigma[2];
    }
    (u, sigma, v)
}

fn undefined() -> Evaluation {
    Evaluation {
        energy_density: f64::INFINITY,
        first_piola: Matrix3::zeros(),
        first_piola_derivative: None,
    }
}

/// Evaluates a stretch-based model at F.
pub fn evaluate<M: StretchEnergy>(model: &M, f: &Matrix3<f64>, lame: &Lame, want: Want) -> Evaluation {
    if !f.iter().all(|x| x.is_finite()) {
        return undefined();
    }
    let (u, sigma, v) = signed_svd(f);
    let energy_density = model.energy(&sigma, lame);
    if !energy_density.is_finite() {
        return undefined();
    }
    if want == Want::Energy {
        return Evaluation {
            energy_density,
            first_piola: Matrix3::zeros(),
            first_piola_derivative: None,
        };
    }
    let p = model.gradient(&sigma, lame);
    let first_piola = u * Matrix3::from_diagonal(&p) * v.transpose();
    let first_piola_derivative = match want {
        Want::Derivative { project } => {
            let a = model.hessian(&sigma, lame);
            Some(derivative_from_eigensystem(&u, &v, &sigma, &p, &a, project))
        }
        _ => None,
    };
    Evaluation {
        energy_density,
        first_piola,
        first_piola_derivative,
    }
}

fn vec9(m: &Matrix3<f64>) -> SVector<f64, 9> {
    SVector::<f64, 9>::from_column_slice(m.as_slice())
}

fn add_rank_one(target: &mut Matrix9, weight: f64, a: &SVector<f64, 9>, b: &SVector<f64, 9>) {
    if weight != 0.0 {
        target.ger(weight, a, b, 1.0);
    }
}

fn derivative_from_eigensystem(
    u: &Matrix3<f64>,
    v: &Matrix3<f64>,
    sigma: &Vector3<f64>,
    p: &Vector3<f64>,
    a: &Matrix3<f64>,
    project: bool,
) -> Matrix9 {
    let mut c = Matrix9::zeros();
    // Scaling block: dF = Σ dσᵢ uᵢvᵢᵀ.
    let scaling: [SVector<f64, 9>; 3] = std::array::from_fn(|i| vec9(&(u.column(i) * v.column(i).transpose())));
    let a = if project {
        let eigen = SymmetricEigen::new(*a);
        let clamped = eigen.eigenvalues.map(|x| x.max(0.0));
        eigen.eigenvectors * Matrix3::from_diagonal(&clamped) * eigen.eigenvectors.transpose()
    } else {
        *a
    };
    for i in 0..3 {
        for j in 0..3 {
            add_rank_one(&mut c, a[(i, j)], &scaling[i], &scaling[j]);
        }
    }
    // Flip and twist modes of each pair.
    let inv_sqrt2 = std::f64::consts::FRAC_1_SQRT_2;
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        let scale = sigma[i].abs().max(sigma[j].abs()).max(1.0);
        let difference = sigma[i] - sigma[j];
        let mut flip = if difference.abs() > EQUAL_STRETCH_GAP * scale {
            (p[i] - p[j]) / difference
        } else {
            a[(i, i)] - a[(i, j)]
        };
        // σᵢ + σⱼ = 0 only for an element flattened through inversion: the
        // twist stiffness is genuinely unbounded there, so bound the denominator.
        let sum = sigma[i] + sigma[j];
        let bounded_sum = if sum.abs() > EQUAL_STRETCH_GAP * scale {
            sum
        } else {
            EQUAL_STRETCH_GAP * scale * sum.signum()
        };
        let mut twist = (p[i] + p[j]) / bounded_sum;
        if project {
            flip = flip.max(0.0);
            twist = twist.max(0.0);
        }
        let ui_vj = u.column(i) * v.column(j).transpose();
        let uj_vi = u.column(j) * v.column(i).transpose();
        let flip_mode = vec9(&((ui_vj + uj_vi) * inv_sqrt2));
        let twist_mode = vec9(&((ui_vj - uj_vi) * inv_sqrt2));
        add_rank_one(&mut c, flip, &flip_mode, &flip_mode);
        add_rank_one(&mut c, twist, &twist_mode, &twist_mode);
    }
    c
}

/// ∂J/∂σᵢ: the product of the other two singular values.
#[inline]
pub(super) fn volume_gradient(sigma: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(sigma[1] * sigma[2], sigma[0] * sigma[2], sigma[0] * sigma[1])
}

/// ∂²J/∂σᵢ∂σⱼ: σₖ for i ≠ j (k the third index), 0 on the diagonal.
#[inline]
pub(super) fn volume_hessian(sigma: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(
        0.0, sigma[2], sigma[1], sigma[2], 0.0, sigma[0], sigma[1], sigma[0], 0.0,
    )
}
