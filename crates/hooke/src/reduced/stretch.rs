//! The stretch of an element: F = R S with R a rotation and S symmetric, S as
//! a 6-vector z = [S₁₁, S₂₂, S₃₃, S₁₂, S₁₃, S₂₃], its derivative ∂z/∂F, and an
//! isotropic material's energy written in z (Trusty et al. 2023, §3–4).
//!
//! The mixed formulation carries z as its own unknown at each cubature point;
//! these are the pieces it is built from.

use crate::linalg::{polar_rotation, signed_svd3, symmetric_eigen3};
use crate::material::{Material, Matrix6, Matrix9, StressDerivative, Want};
use nalgebra::{Matrix3, SMatrix, Vector3, Vector6};

/// ∂z/∂vec(F), vec column-major (F₁₁, F₂₁, F₃₁, F₁₂, …).
pub type StretchJacobian = SMatrix<f64, 6, 9>;

use crate::material::symmetric::ENTRIES;
pub use crate::material::symmetric::{project_to_psd6, to_matrix, to_vector, OFF_DIAGONAL_WEIGHT};

/// vec(∂S/∂zₖ) as the columns of a 9×6 matrix: a diagonal entry moves one
/// entry of S, an off-diagonal one moves two.
fn symmetric_embedding() -> SMatrix<f64, 9, 6> {
    let mut e = SMatrix::<f64, 9, 6>::zeros();
    for (k, &(i, j)) in ENTRIES.iter().enumerate() {
        e[(i + 3 * j, k)] = 1.0;
        e[(j + 3 * i, k)] = 1.0;
    }
    e
}

/// The polar decomposition of one F.
#[derive(Clone, Copy, Debug)]
pub struct Stretch {
    /// R, a proper rotation.
    pub rotation: Matrix3<f64>,
    /// S = Rᵀ F, symmetric; indefinite when F is inverted.
    pub stretch: Matrix3<f64>,
}

impl Stretch {
    /// R and S = RᵀF: by the polar iteration where det F > 0 (several times
    /// cheaper), else from the signed SVD F = U Σ Vᵀ as R = U Vᵀ, S = V Σ Vᵀ,
    /// so an inverted F keeps a proper rotation and puts the sign on S's
    /// smallest singular value, as the reference implementation does.
    pub fn of(f: &Matrix3<f64>) -> Stretch {
        if let Some(rotation) = polar_rotation(f) {
            let s = rotation.transpose() * f;
            return Stretch {
                rotation,
                stretch: 0.5 * (s + s.transpose()),
            };
        }
        let (u, sigma, v) = signed_svd3(f);
        Stretch {
            rotation: u * v.transpose(),
            stretch: v * Matrix3::from_diagonal(&sigma) * v.transpose(),
        }
    }

    /// z of S.
    pub fn vector(&self) -> Vector6<f64> {
        to_vector(&self.stretch)
    }

    /// ∂z/∂vec(F). From F = RS: Rᵀ dF = \[ω\]ₓ S + dS, and the skew part gives
    /// (tr S I − S) ω = axial(G − Gᵀ) with G = Rᵀ dF. That matrix has the
    /// eigenvalues σⱼ + σₖ; where two singular values nearly cancel (a
    /// degenerate inverted element) the rotation is undetermined, and in S's
    /// eigenbasis each such denominator is held at a small value of its sign,
    /// which keeps dS finite.
    pub fn jacobian(&self) -> StretchJacobian {
        let s = self.stretch;
        let spin = Matrix3::identity() * s.trace() - s;
        let scale = s.norm().max(f64::MIN_POSITIVE);
        let inverse = match spin.determinant().abs() > 1e-9 * scale * scale * scale {
            true => spin.try_inverse(),
            false => None,
        };
        let inverse = inverse.unwrap_or_else(|| {
            let (sigma, v) = symmetric_eigen3(&s);
            let floor = 1e-12 * scale;
            let guarded = |d: f64| match d.abs() < floor {
                true => 1.0 / floor.copysign(d),
                false => 1.0 / d,
            };
            let diagonal = Vector3::new(
                guarded(sigma[1] + sigma[2]),
                guarded(sigma[0] + sigma[2]),
                guarded(sigma[0] + sigma[1]),
            );
            v * Matrix3::from_diagonal(&diagonal) * v.transpose()
        });
        let mut jacobian = StretchJacobian::zeros();
        for column in 0..3 {
            for row in 0..3 {
                // dF = e_row e_columnᵀ, so G = Rᵀ dF has row `row` of R in column `column`.
                let mut g = Matrix3::zeros();
                g.set_column(column, &self.rotation.row(row).transpose());
                let skew = g - g.transpose();
                // [a]ₓ = [[0, −a₃, a₂], [a₃, 0, −a₁], [−a₂, a₁, 0]].
                let axial = Vector3::new(skew[(2, 1)], skew[(0, 2)], skew[(1, 0)]);
                let omega = inverse * axial;
                let d_stretch = g - omega.cross_matrix() * s;
                let d_z = to_vector(&(0.5 * (d_stretch + d_stretch.transpose())));
                jacobian.set_column(row + 3 * column, &d_z);
            }
        }
        jacobian
    }
}

/// ψ(S), ∂ψ/∂z and ∂²ψ/∂z² of a rotation-invariant material at the stretch
/// z. Where the material has a direct form at a positive-definite S
/// ([`Material::evaluate_symmetric`]) that is used; otherwise the material is
/// evaluated at F = S (ψ(RS) = ψ(S)) and its P and ∂P/∂F are carried to z
/// through ∂S/∂z. `project` makes the 6×6 Hessian positive semi-definite (the
/// condensed solve needs it) by clamping the 6×6 matrix's eigenvalues.
pub use crate::material::symmetric::SymmetricEvaluation as StretchEvaluation;

/// The relative gap ‖S̄ − S‖ / ‖S̄‖ (Frobenius norms of the symmetric
/// matrices) between the stretch `target` of a deformation and a stretch
/// unknown `z` of mixed FEM.
pub fn relative_gap(target: &Vector6<f64>, z: &Vector6<f64>) -> f64 {
    let target = to_matrix(target);
    (target - to_matrix(z)).norm() / target.norm().max(f64::MIN_POSITIVE)
}

/// The largest and the volume-weighted mean of per-point (weight, gap) pairs.
pub fn constraint_gap(points: &[(f64, f64)]) -> crate::output::ConstraintGap {
    let volume: f64 = points.iter().map(|p| p.0).sum();
    crate::output::ConstraintGap {
        largest: points.iter().map(|p| p.1).fold(0.0, f64::max),
        mean: points.iter().map(|(w, gap)| w * gap).sum::<f64>() / volume.max(f64::MIN_POSITIVE),
    }
}

/// The energy density alone at z (+∞ where the material is undefined).
pub fn stretch_energy(material: &dyn Material, z: &Vector6<f64>) -> f64 {
    let s = to_matrix(z);
    match material.evaluate_symmetric(&s, Want::Energy) {
        Some(evaluation) => evaluation.energy,
        None => material.evaluate(&s, Want::Energy).energy_density,
    }
}

/// ψ, ∂ψ/∂z and ∂²ψ/∂z² at z (see [`StretchEvaluation`]); None where the
/// material is undefined.
pub fn evaluate_stretch(material: &dyn Material, z: &Vector6<f64>, project: bool) -> Option<StretchEvaluation> {
    let s = to_matrix(z);
    if let Some(evaluation) = material.evaluate_symmetric(&s, Want::Derivative { project }) {
        return Some(evaluation);
    }
    general_stretch_evaluation(material, &s, project)
}

/// The general path of [`evaluate_stretch`]: ∂P/∂F at F = S carried to z.
pub fn general_stretch_evaluation(
    material: &dyn Material,
    s: &Matrix3<f64>,
    project: bool,
) -> Option<StretchEvaluation> {
    let evaluation = material.evaluate(s, Want::Derivative { project: false });
    if !evaluation.energy_density.is_finite() {
        return None;
    }
    let derivative = match evaluation.first_piola_derivative {
        Some(StressDerivative::Matrix(m)) => m,
        Some(StressDerivative::Eigensystem(system)) => system.to_matrix(),
        None => Matrix9::zeros(),
    };
    let e = symmetric_embedding();
    let p = evaluation.first_piola;
    let p_vector = SMatrix::<f64, 9, 1>::from_column_slice(p.as_slice());
    let gradient = e.transpose() * p_vector;
    let mut hessian = e.transpose() * derivative * e;
    hessian = 0.5 * (hessian + hessian.transpose());
    if project {
        hessian = project_to_psd6(&hessian);
    }
    Some(StretchEvaluation {
        energy: evaluation.energy_density,
        gradient,
        hessian,
    })
}

/// One point's local update in the mixed formulation (Trusty et al. 2023, Eqs. 6–8),
/// with `N` the length of its force in the caller's layout.
#[derive(Clone, Copy, Debug)]
pub struct LocalUpdate<const N: usize> {
    /// dz = z̄ − z + J dF.
    pub change: Vector6<f64>,
    /// μ = D⁻¹(ψ' + H dz).
    pub multiplier: Vector6<f64>,
    /// The constraint's pull Jᵀ D μ on F, carried to the caller's unknowns.
    pub force: [f64; N],
    /// Its term of the Lagrangian's slope, w (ψ' − D μ)·dz.
    pub slope: f64,
}

/// The local update of a point whose stretch is linearised at z (`target`
/// z̄ = z(F), `jacobian` ∂z̄/∂F, `gradient` ψ'(z), `hessian` H) along a step
/// that changes F by `df`, with weight `w`: ∇_u ℒ gets w Jᵀ D μ through F;
/// `carry` takes Jᵀ D μ to the caller's unknowns (and applies w).
#[allow(clippy::too_many_arguments)]
pub fn local_update<const N: usize>(
    target: &Vector6<f64>,
    z: &Vector6<f64>,
    jacobian: &StretchJacobian,
    gradient: &Vector6<f64>,
    hessian: &Matrix6,
    df: &SMatrix<f64, 9, 1>,
    w: f64,
    carry: impl Fn(&SMatrix<f64, 9, 1>) -> [f64; N],
) -> LocalUpdate<N> {
    let d = Vector6::from_column_slice(&OFF_DIAGONAL_WEIGHT);
    let change = target - z + jacobian * df;
    let multiplier = (gradient + hessian * change).component_div(&d);
    let pulled = jacobian.transpose() * multiplier.component_mul(&d);
    LocalUpdate {
        change,
        multiplier,
        force: carry(&pulled),
        slope: w * (gradient - multiplier.component_mul(&d)).dot(&change),
    }
}
