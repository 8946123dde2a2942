//! 3×3 decompositions for per-element work: a symmetric eigensolver and the
//! signed SVD built on it. nalgebra's general algorithms (Householder
//! tridiagonalisation and implicit QR) are robust but several times slower at
//! this size, and these run once or twice per element per assembly.

use nalgebra::{Matrix3, Vector3};

/// Cyclic Jacobi sweeps stop when the off-diagonal mass is this small relative to the matrix.
const JACOBI_TOLERANCE: f64 = 1e-30;
/// Each sweep squares the off-diagonal error; 12 sweeps reach any precision.
const JACOBI_MAX_SWEEPS: usize = 12;

/// Eigenvalues and orthonormal eigenvectors (columns, a proper rotation) of a symmetric 3×3 matrix,
/// by cyclic Jacobi rotations.
pub fn symmetric_eigen3(s: &Matrix3<f64>) -> (Vector3<f64>, Matrix3<f64>) {
    jacobi::<true>(s)
}

/// The eigenvalues alone of a symmetric 3×3 matrix: bit for bit those of
/// [`symmetric_eigen3`], without the cost of accumulating the vectors.
pub fn symmetric_eigenvalues3(s: &Matrix3<f64>) -> Vector3<f64> {
    jacobi::<false>(s).0
}

fn jacobi<const VECTORS: bool>(s: &Matrix3<f64>) -> (Vector3<f64>, Matrix3<f64>) {
    let mut a = *s;
    let mut v = Matrix3::identity();
    let scale = a.norm_squared();
    if scale == 0.0 {
        return (Vector3::zeros(), v);
    }
    for _ in 0..JACOBI_MAX_SWEEPS {
        let off = a[(0, 1)].powi(2) + a[(0, 2)].powi(2) + a[(1, 2)].powi(2);
        if off <= JACOBI_TOLERANCE * scale {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            let apq = a[(p, q)];
            if apq == 0.0 {
                continue;
            }
            // The rotation angle that zeroes a[p][q] (Golub & Van Loan, algorithm 8.4.1).
            let tau = (a[(q, q)] - a[(p, p)]) / (2.0 * apq);
            let t = tau.signum() / (tau.abs() + (1.0 + tau * tau).sqrt());
            let c = 1.0 / (1.0 + t * t).sqrt();
            let s = t * c;
            for k in 0..3 {
                let (akp, akq) = (a[(k, p)], a[(k, q)]);
                a[(k, p)] = c * akp - s * akq;
                a[(k, q)] = s * akp + c * akq;
            }
            for k in 0..3 {
                let (apk, aqk) = (a[(p, k)], a[(q, k)]);
                a[(p, k)] = c * apk - s * aqk;
                a[(q, k)] = s * apk + c * aqk;
            }
            if VECTORS {
                for k in 0..3 {
                    let (vkp, vkq) = (v[(k, p)], v[(k, q)]);
                    v[(k, p)] = c * vkp - s * vkq;
                    v[(k, q)] = s * vkp + c * vkq;
                }
            }
        }
    }
    (Vector3::new(a[(0, 0)], a[(1, 1)], a[(2, 2)]), v)
}

/// Any unit vector orthogonal to `u` (a unit vector).
pub fn orthogonal_unit(u: &Vector3<f64>) -> Vector3<f64> {
    let axis = if u.x.abs() < 0.6 {
        Vector3::x()
    } else if u.y.abs() < 0.6 {
        Vector3::y()
    } else {
        Vector3::z()
    };
    (axis - u * u.dot(&axis)).normalize()
}

/// F = U diag(σ) Vᵀ with U and V proper rotations, σ₀ ≥ σ₁ ≥ |σ₂|, and σ₂ < 0
/// exactly when det F < 0 (an inverted element).
pub fn signed_svd3(f: &Matrix3<f64>) -> (Matrix3<f64>, Vector3<f64>, Matrix3<f64>) {
    let (_, mut v) = symmetric_eigen3(&f.tr_mul(f));
    let mut b = f * v;
    // Order columns by decreasing norm; swapping two columns and negating one keeps det V = +1.
    let mut norms = Vector3::new(
        b.column(0).norm_squared(),
        b.column(1).norm_squared(),
        b.column(2).norm_squared(),
    );
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        if norms[i] < norms[j] {
            b.swap_columns(i, j);
            v.swap_columns(i, j);
            b.column_mut(j).neg_mut();
            v.column_mut(j).neg_mut();
            norms.swap_rows(i, j);
        }
    }
    // Gram–Schmidt on the (already nearly orthogonal) columns of F V; the third
    // direction is the cross product, so U is a rotation and the sign of det F
    // lands on σ₂.
    let sigma0 = norms[0].sqrt();
    let u0 = if sigma0 > 0.0 {
        b.column(0) / sigma0
    } else {
        Vector3::x()
    };
    let b1 = b.column(1) - u0 * u0.dot(&b.column(1));
    let sigma1 = b1.norm();
    let u1 = if sigma1 > 1e-300 && sigma1 > 1e-15 * sigma0 {
        b1 / sigma1
    } else {
        orthogonal_unit(&u0)
    };
    let u2 = u0.cross(&u1);
    let sigma2 = u2.dot(&b.column(2));
    (
        Matrix3::from_columns(&[u0, u1, u2]),
        Vector3::new(sigma0, sigma1, sigma2),
        v,
    )
}

#[cfg(test)]
mod tests {

    use super::*;

    fn pseudo_random_matrices() -> Vec<Matrix3<f64>> {
        let mut state = 12345u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut list: Vec<Matrix3<f64>> = (0..200).map(|_| Matrix3::from_fn(|_, _| next())).collect();
        list.push(Matrix3::identity());
        list.push(Matrix3::from_diagonal(&Vector3::new(2.0, 2.0, -1.0)));
        list.push(Matrix3::from_diagonal(&Vector3::new(1.0, 0.0, 0.0))); // rank one
        list.push(Matrix3::zeros());
        list.push(Matrix3::new(1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1e-9)); // nearly rank two
        list
    }

    #[test]
    fn eigen_decomposition_reconstructs_the_matrix() {
        for m in pseudo_random_matrices() {
            let s = m + m.transpose();
            let (values, vectors) = symmetric_eigen3(&s);
            let rebuilt = vectors * Matrix3::from_diagonal(&values) * vectors.transpose();
            assert!((rebuilt - s).norm() <= 1e-13 * s.norm().max(1e-300), "{s}");
            assert!((vectors.transpose() * vectors - Matrix3::identity()).norm() < 1e-13);
            assert!((vectors.determinant() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn eigenvalues_alone_are_those_of_the_full_decomposition_bit_for_bit() {
        for m in pseudo_random_matrices() {
            let s = m + m.transpose();
            assert_eq!(symmetric_eigenvalues3(&s), symmetric_eigen3(&s).0);
        }
        let nearly_round = Matrix3::new(1.0, 1e-9, 0.0, 1e-9, 1.0 + 1e-12, 2e-10, 0.0, 2e-10, 1.0);
        assert_eq!(symmetric_eigenvalues3(&nearly_round), symmetric_eigen3(&nearly_round).0);
    }

    #[test]
    fn signed_svd_reconstructs_with_rotations_and_ordered_values() {
        for f in pseudo_random_matrices() {
            let (u, sigma, v) = signed_svd3(&f);
            let rebuilt = u * Matrix3::from_diagonal(&sigma) * v.transpose();
            assert!(
                (rebuilt - f).norm() <= 1e-12 * f.norm().max(1e-300),
                "F = {f}, rebuilt {rebuilt}"
            );
            for r in [u, v] {
                assert!((r.transpose() * r - Matrix3::identity()).norm() < 1e-12);
                assert!((r.determinant() - 1.0).abs() < 1e-12);
            }
            assert!(
                sigma[0] >= sigma[1] && sigma[1] >= sigma[2].abs() - 1e-12 * sigma[0],
                "{sigma}"
            );
            assert_eq!(
                sigma[2] < 0.0,
                f.determinant() < 0.0,
                "sign of σ₂ for det {}",
                f.determinant()
            );
            // Same singular values as nalgebra's general SVD.
            let reference = f.svd(false, false).singular_values;
            let mut ours = sigma.map(f64::abs);
            ours.as_mut_slice().sort_by(|a, b| b.partial_cmp(a).unwrap());
            assert!((ours - reference).norm() <= 1e-12 * reference[0].max(1e-300));
        }
    }
}
