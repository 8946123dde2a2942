//! Isotropic models written in the signed singular values σ of F.
//!
//! With F = U diag(σ) Vᵀ (U, V rotations, so σ₃ < 0 marks an inverted element),
//! P = U diag(∂ψ/∂σ) Vᵀ and ∂P/∂F has a closed eigen-system: a 3×3 "scaling"
//! block (∂²ψ/∂σ²) and, for each pair (i, j), a "flip" and a "twist" mode with
//! eigenvalues (pᵢ − pⱼ)/(σᵢ − σⱼ) and (pᵢ + pⱼ)/(σᵢ + σⱼ). Clamping those nine
//! eigenvalues at zero is the exact projection of ∂P/∂F to positive
//! semi-definite, which is far cheaper than an eigen-decomposition of the 12×12
//! element Hessian and gives the same guarantee (Bᵀ C B is PSD when C is).

use super::stretch_coordinates::{StretchInvariants, SymmetricEvaluation};
use super::{Evaluation, Lame, Matrix9, StressDerivative, StretchEigensystem, Want};
use crate::linalg::{polar_rotation, polar_rotations, signed_svd3, symmetric_eigen3, POLAR_LANES};
use nalgebra::{Matrix3, SVector, Vector3};

/// An isotropic energy density expressed in the signed singular values of F.
pub trait StretchEnergy {
    /// ψ(σ); +∞ where the model is undefined.
    fn energy(&self, sigma: &Vector3<f64>, lame: &Lame) -> f64;
    /// ∂ψ/∂σ.
    fn gradient(&self, sigma: &Vector3<f64>, lame: &Lame) -> Vector3<f64>;
    /// ∂²ψ/∂σ².
    fn hessian(&self, sigma: &Vector3<f64>, lame: &Lame) -> Matrix3<f64>;
    /// ψ(σ) and ∂ψ/∂σ together, for models that share work between them.
    fn energy_and_gradient(&self, sigma: &Vector3<f64>, lame: &Lame) -> (f64, Vector3<f64>) {
        (self.energy(sigma, lame), self.gradient(sigma, lame))
    }
    /// ψ(F) and, with `stress`, P(F) from F directly (its invariants) where the
    /// model has such a form: energies and forces, the whole cost of explicit
    /// steps and quasi-Newton iterations, then skip the SVD (Hessians still use
    /// it). None: the stretch form only.
    fn direct(&self, _f: &Matrix3<f64>, _lame: &Lame, _stress: bool) -> Option<(f64, Matrix3<f64>)> {
        None
    }
    /// ψ and, with `derivatives`, ∂ψ/∂z and the unprojected ∂²ψ/∂z² at a
    /// symmetric positive-definite S = S(z) from its invariants
    /// (`StretchInvariants`), where the model has such a
    /// form: no eigen-decomposition, the whole per-point cost of a mixed
    /// iteration's material. None: the eigen form serves.
    fn at_stretch(&self, _z: &StretchInvariants, _lame: &Lame, _derivatives: bool) -> Option<SymmetricEvaluation> {
        None
    }
    /// ψ(F) and, with `stress`, P(F) from F and its polar rotation R, for
    /// models written in them (ARAP, the corotational ones): their `direct`
    /// form one element at a time (`direct_by_rotation`), and many at a
    /// time in `evaluate_stresses_by_rotation`. None: no such form.
    fn at_rotation(
        &self,
        _f: &Matrix3<f64>,
        _r: &Matrix3<f64>,
        _lame: &Lame,
        _stress: bool,
    ) -> Option<(f64, Matrix3<f64>)> {
        None
    }
}

/// The `direct` form of a model written in F and its polar rotation.
pub fn direct_by_rotation<M: StretchEnergy>(
    model: &M,
    f: &Matrix3<f64>,
    lame: &Lame,
    stress: bool,
) -> Option<(f64, Matrix3<f64>)> {
    model.at_rotation(f, &polar_rotation(f)?, lame, stress)
}

/// [`evaluate`] with `Want::Energy` or `Want::Stress` at each F of `f`, for a
/// model written in F and its polar rotation: the rotations come from one
/// vectorised decomposition per [`POLAR_LANES`] elements, bit for bit those of one at a time, so each
/// result is bit for bit that of [`evaluate`]. Where the rotation form does
/// not apply (inverted or degenerate F), the element takes [`evaluate`] itself.
pub fn evaluate_stresses_by_rotation<M: StretchEnergy>(
    model: &M,
    f: &[Matrix3<f64>],
    lame: &Lame,
    want: Want,
    energies: &mut [f64],
    stresses: &mut [Matrix3<f64>],
) {
    debug_assert!(matches!(want, Want::Energy | Want::Stress));
    let chunks = f
        .chunks(POLAR_LANES)
        .zip(energies.chunks_mut(POLAR_LANES))
        .zip(stresses.chunks_mut(POLAR_LANES));
    for ((f, energies), stresses) in chunks {
        // Only the last, partial group is copied, padded with identities.
        let padded: [Matrix3<f64>; POLAR_LANES];
        let f: &[Matrix3<f64>; POLAR_LANES] = match f.try_into() {
            Ok(full) => full,
            Err(_) => {
                padded = std::array::from_fn(|l| f.get(l).copied().unwrap_or_else(Matrix3::identity));
                &padded
            }
        };
        let mut rotations = [Matrix3::zeros(); POLAR_LANES];
        let found = polar_rotations(f, &mut rotations);
        for (i, (energy, stress)) in energies.iter_mut().zip(stresses.iter_mut()).enumerate() {
            let direct = found[i]
                .then(|| model.at_rotation(&f[i], &rotations[i], lame, want == Want::Stress))
                .flatten()
                .filter(|(energy, _)| energy.is_finite());
            (*energy, *stress) = direct.unwrap_or_else(|| {
                let evaluation = evaluate(model, &f[i], lame, want);
                (evaluation.energy_density, evaluation.first_piola)
            });
        }
    }
}

/// ∂ det F / ∂F, the cofactor matrix: its columns are cross products of F's.
pub fn cofactor(f: &Matrix3<f64>) -> Matrix3<f64> {
    let (a, b, c) = (f.column(0), f.column(1), f.column(2));
    Matrix3::from_columns(&[b.cross(&c), c.cross(&a), a.cross(&b)])
}

/// Below this relative gap two singular values count as equal, and the flip
/// eigenvalue (pᵢ − pⱼ)/(σᵢ − σⱼ) is replaced by its limit ∂²ψ/∂σᵢ² − ∂²ψ/∂σᵢ∂σⱼ.
/// √ε balances the cancellation error of the quotient against the O(gap) error of the limit.
const EQUAL_STRETCH_GAP: f64 = 1e-8;

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
    if matches!(want, Want::Energy | Want::Stress) {
        if let Some((energy_density, first_piola)) = model.direct(f, lame, want == Want::Stress) {
            if !energy_density.is_finite() {
                return undefined();
            }
            return Evaluation {
                energy_density,
                first_piola,
                first_piola_derivative: None,
            };
        }
    }
    let (u, sigma, v) = signed_svd3(f);
    evaluate_at_svd(model, &u, &sigma, &v, lame, want)
}

/// [`evaluate`] once F's signed SVD U diag(σ) Vᵀ is known (and F is finite,
/// and the model's `direct` form did not serve).
pub(crate) fn evaluate_at_svd<M: StretchEnergy>(
    model: &M,
    u: &Matrix3<f64>,
    sigma: &Vector3<f64>,
    v: &Matrix3<f64>,
    lame: &Lame,
    want: Want,
) -> Evaluation {
    let (u, sigma, v) = (*u, *sigma, *v);
    let (energy_density, p) = match want {
        Want::Energy => (model.energy(&sigma, lame), Vector3::zeros()),
        _ => model.energy_and_gradient(&sigma, lame),
    };
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
    let first_piola = u * Matrix3::from_diagonal(&p) * v.transpose();
    let first_piola_derivative = want.derivative().map(|project| {
        let system = eigensystem(u, v, &sigma, &p, &model.hessian(&sigma, lame), project);
        match want {
            Want::Stiffness { .. } => StressDerivative::Eigensystem(system),
            _ => StressDerivative::Matrix(system.to_matrix()),
        }
    });
    Evaluation {
        energy_density,
        first_piola,
        first_piola_derivative,
    }
}

fn vec9(m: &Matrix3<f64>) -> SVector<f64, 9> {
    SVector::<f64, 9>::from_column_slice(m.as_slice())
}

fn eigensystem(
    u: Matrix3<f64>,
    v: Matrix3<f64>,
    sigma: &Vector3<f64>,
    p: &Vector3<f64>,
    a: &Matrix3<f64>,
    project: bool,
) -> StretchEigensystem {
    let (mut scaling_values, scaling_vectors) = symmetric_eigen3(a);
    let mut pair_values = [(0.0, 0.0); 3];
    for (slot, (i, j)) in pair_values.iter_mut().zip(PAIRS) {
        let scale = sigma[i].abs().max(sigma[j].abs()).max(1.0);
        let flip = flip_value(sigma, p, a, i, j);
        // σᵢ + σⱼ = 0 only for an element flattened through inversion: the
        // twist stiffness is genuinely unbounded there, so bound the denominator.
        let sum = sigma[i] + sigma[j];
        let bounded_sum = if sum.abs() > EQUAL_STRETCH_GAP * scale {
            sum
        } else {
            EQUAL_STRETCH_GAP * scale * sum.signum()
        };
        *slot = (flip, (p[i] + p[j]) / bounded_sum);
    }
    if project {
        scaling_values = scaling_values.map(|x| x.max(0.0));
        for (flip, twist) in &mut pair_values {
            *flip = flip.max(0.0);
            *twist = twist.max(0.0);
        }
    }
    StretchEigensystem {
        u,
        v,
        scaling_values,
        scaling_vectors,
        pair_values,
    }
}

/// The flip eigenvalue (pᵢ − pⱼ)/(σᵢ − σⱼ) of pair (i, j), or its limit
/// ∂²ψ/∂σᵢ² − ∂²ψ/∂σᵢ∂σⱼ where the two stretches are (nearly) equal.
pub(super) fn flip_value(sigma: &Vector3<f64>, p: &Vector3<f64>, a: &Matrix3<f64>, i: usize, j: usize) -> f64 {
    let scale = sigma[i].abs().max(sigma[j].abs()).max(1.0);
    let difference = sigma[i] - sigma[j];
    if difference.abs() > EQUAL_STRETCH_GAP * scale {
        (p[i] - p[j]) / difference
    } else {
        a[(i, i)] - a[(i, j)]
    }
}

/// The index pairs of the flip and twist modes, in the order of `pair_values`.
pub const PAIRS: [(usize, usize); 3] = [(0, 1), (0, 2), (1, 2)];

impl StretchEigensystem {
    /// The nine (eigenvalue, Dₖ) pairs, Dₖ in the singular frame: Qₖ = U Dₖ Vᵀ.
    pub fn modes(&self) -> [(f64, Matrix3<f64>); 9] {
        let inv_sqrt2 = std::f64::consts::FRAC_1_SQRT_2;
        let mut modes = [(0.0, Matrix3::zeros()); 9];
        for k in 0..3 {
            modes[k] = (
                self.scaling_values[k],
                Matrix3::from_diagonal(&self.scaling_vectors.column(k).into_owned()),
            );
        }
        for (n, (i, j)) in PAIRS.into_iter().enumerate() {
            let mut flip = Matrix3::zeros();
            let mut twist = Matrix3::zeros();
            flip[(i, j)] = inv_sqrt2;
            flip[(j, i)] = inv_sqrt2;
            twist[(i, j)] = inv_sqrt2;
            twist[(j, i)] = -inv_sqrt2;
            modes[3 + 2 * n] = (self.pair_values[n].0, flip);
            modes[4 + 2 * n] = (self.pair_values[n].1, twist);
        }
        modes
    }

    /// The 9×9 matrix Σₖ λₖ vec(Qₖ) vec(Qₖ)ᵀ.
    pub fn to_matrix(&self) -> Matrix9 {
        let mut c = Matrix9::zeros();
        for (value, d) in self.modes() {
            let q = vec9(&(self.u * d * self.v.transpose()));
            c.ger(value, &q, &q, 1.0);
        }
        c
    }
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
