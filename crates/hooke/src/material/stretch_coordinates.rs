//! The six coordinates z = [S₁₁, S₂₂, S₃₃, S₁₂, S₁₃, S₂₃] of a symmetric
//! stretch S, which the mixed formulation carries at each quadrature point
//! (Trusty et al. 2023, §3–4, which leaves the order of the six open): the
//! conversions, the invariants ‖S‖² and det S with their z-derivatives, and
//! what a material gives there.

use super::Matrix6;
use nalgebra::{Matrix3, Vector6};

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
/// models written in them ([`super::isotropic::StretchEnergy::at_stretch`]). With
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
    /// ψ, J/m³ (Pa).
    pub energy: f64,
    /// ∂ψ/∂z, in the order of z.
    pub gradient: Vector6<f64>,
    /// ∂²ψ/∂z², projected to positive semi-definite where the evaluation asked for it.
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn invariants(z: &Vector6<f64>) -> Option<StretchInvariants> {
        StretchInvariants::of(&to_matrix(z))
    }

    /// A symmetric positive-definite S near the identity, as z.
    fn stretch() -> impl Strategy<Value = Vector6<f64>> {
        proptest::array::uniform6(-0.3..0.3f64)
            .prop_map(|d| Vector6::new(1.0 + d[0], 1.0 + d[1], 1.0 + d[2], 0.4 * d[3], 0.4 * d[4], 0.4 * d[5]))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// det S, ‖S‖² and their derivatives in z against nalgebra's
        /// determinant and central differences.
        #[test]
        fn the_invariants_and_their_derivatives_match_finite_differences(z in stretch()) {
            let at = invariants(&z).expect("positive definite");
            let s = to_matrix(&z);
            prop_assert!((at.determinant - s.determinant()).abs() < 1e-14);
            prop_assert!((at.norm_squared() - s.norm_squared()).abs() < 1e-13);
            prop_assert!((at.distance_to_identity_squared() - (s - Matrix3::identity()).norm_squared()).abs() < 1e-14);
            let step = 1e-6;
            let (gradient, hessian) = (at.determinant_gradient(), at.determinant_hessian());
            for k in 0..6 {
                let mut e = Vector6::zeros();
                e[k] = step;
                let (plus, minus) = (invariants(&(z + e)).unwrap(), invariants(&(z - e)).unwrap());
                let slope = (plus.determinant - minus.determinant) / (2.0 * step);
                prop_assert!((slope - gradient[k]).abs() < 1e-8, "∂J/∂z{k}: {slope} against {}", gradient[k]);
                let curvature = (plus.determinant_gradient() - minus.determinant_gradient()) / (2.0 * step);
                prop_assert!((curvature - hessian.column(k)).amax() < 1e-8, "∂²J/∂z∂z{k}");
                let norm_slope = (plus.norm_squared() - minus.norm_squared()) / (2.0 * step);
                prop_assert!((norm_slope - 2.0 * at.weighted()[k]).abs() < 1e-7);
                let distance_slope =
                    (plus.distance_to_identity_squared() - minus.distance_to_identity_squared()) / (2.0 * step);
                prop_assert!((distance_slope - 2.0 * at.weighted_from_identity()[k]).abs() < 1e-7);
            }
        }
    }

    #[test]
    fn only_a_positive_definite_stretch_has_invariants() {
        let of = |d: [f64; 3]| StretchInvariants::of(&Matrix3::from_diagonal(&nalgebra::Vector3::from(d)));
        assert!(of([1.0, 2.0, 0.5]).is_some());
        assert!(of([1.0, 2.0, -0.5]).is_none());
        assert!(of([-1.0, -2.0, 0.5]).is_none(), "det > 0 but indefinite");
        assert!(of([1.0, 0.0, 1.0]).is_none());
        // Indefinite through an off-diagonal entry: [[1, 2], [2, 1]] has eigenvalue −1.
        let mut s = Matrix3::identity();
        s[(0, 1)] = 2.0;
        s[(1, 0)] = 2.0;
        assert!(StretchInvariants::of(&s).is_none());
    }
}
