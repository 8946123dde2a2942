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
    let (values, vectors) = jacobi_lanes::<VECTORS, 1>(&[*s]);
    (values[0], vectors[0])
}

/// Matrices whose signed SVDs are found together, in vector lanes.
pub const SVD_LANES: usize = 16;

/// [`jacobi`] of L matrices lane by lane: every lane performs the same
/// operations as alone (a lane whose sweeps have converged is frozen, and a
/// rotation a lane would skip leaves its entries as they are), so each
/// result is bit for bit the one-at-a-time result, while the lanes run as
/// vectors. Entries are column-major, k = row + 3 column.
#[inline(always)]
fn jacobi_lanes<const VECTORS: bool, const L: usize>(s: &[Matrix3<f64>; L]) -> ([Vector3<f64>; L], [Matrix3<f64>; L]) {
    let at = |row: usize, column: usize| row + 3 * column;
    let mut a = [[0.0; L]; 9];
    let mut v = [[0.0; L]; 9];
    let mut scale = [0.0; L];
    for (l, matrix) in s.iter().enumerate() {
        for k in 0..9 {
            a[k][l] = matrix[k];
            scale[l] += matrix[k] * matrix[k];
        }
        for i in 0..3 {
            v[at(i, i)][l] = 1.0;
        }
    }
    // A zero matrix has converged before the first sweep (its off-diagonal
    // mass 0 is not above the tolerance times 0).
    let mut active = [true; L];
    for _ in 0..JACOBI_MAX_SWEEPS {
        for l in 0..L {
            let off = a[at(0, 1)][l].powi(2) + a[at(0, 2)][l].powi(2) + a[at(1, 2)][l].powi(2);
            // Still sweeping unless converged; a NaN keeps sweeping, as it did alone.
            let converged = off <= JACOBI_TOLERANCE * scale[l];
            active[l] &= !converged;
        }
        if !active.contains(&true) {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            let mut rotate = [false; L];
            let (mut c, mut s) = ([1.0; L], [0.0; L]);
            for l in 0..L {
                let apq = a[at(p, q)][l];
                rotate[l] = active[l] & (apq != 0.0);
                // The rotation angle that zeroes a[p][q] (Golub & Van Loan, algorithm 8.4.1).
                let tau = (a[at(q, q)][l] - a[at(p, p)][l]) / (2.0 * apq);
                let t = tau.signum() / (tau.abs() + (1.0 + tau * tau).sqrt());
                c[l] = 1.0 / (1.0 + t * t).sqrt();
                s[l] = t * c[l];
            }
            for k in 0..3 {
                for l in 0..L {
                    let (akp, akq) = (a[at(k, p)][l], a[at(k, q)][l]);
                    if rotate[l] {
                        a[at(k, p)][l] = c[l] * akp - s[l] * akq;
                        a[at(k, q)][l] = s[l] * akp + c[l] * akq;
                    }
                }
            }
            for k in 0..3 {
                for l in 0..L {
                    let (apk, aqk) = (a[at(p, k)][l], a[at(q, k)][l]);
                    if rotate[l] {
                        a[at(p, k)][l] = c[l] * apk - s[l] * aqk;
                        a[at(q, k)][l] = s[l] * apk + c[l] * aqk;
                    }
                }
            }
            if VECTORS {
                for k in 0..3 {
                    for l in 0..L {
                        let (vkp, vkq) = (v[at(k, p)][l], v[at(k, q)][l]);
                        if rotate[l] {
                            v[at(k, p)][l] = c[l] * vkp - s[l] * vkq;
                            v[at(k, q)][l] = s[l] * vkp + c[l] * vkq;
                        }
                    }
                }
            }
        }
    }
    let values = std::array::from_fn(|l| Vector3::new(a[at(0, 0)][l], a[at(1, 1)][l], a[at(2, 2)][l]));
    let vectors = std::array::from_fn(|l| Matrix3::from_fn(|i, j| v[at(i, j)][l]));
    (values, vectors)
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
    let (_, v) = symmetric_eigen3(&f.tr_mul(f));
    svd_from_eigenvectors(f, v)
}

/// A signed SVD as `(U, σ, V)`.
pub type SignedSvd = (Matrix3<f64>, Vector3<f64>, Matrix3<f64>);

super::kernels::dispatch! {
    /// [`signed_svd3`] of [`SVD_LANES`] matrices, the eigen-decompositions of
    /// their FᵀF in vector lanes; each bit for bit as alone.
    pub signed_svd3_lanes(f: &[Matrix3<f64>; SVD_LANES], out: &mut [SignedSvd; SVD_LANES]) -> () {
        let gram: [Matrix3<f64>; SVD_LANES] = std::array::from_fn(|l| f[l].tr_mul(&f[l]));
        let (_, vectors) = jacobi_lanes::<true, SVD_LANES>(&gram);
        for l in 0..SVD_LANES {
            out[l] = svd_from_eigenvectors(&f[l], vectors[l]);
        }
    }
}

/// The rest of [`signed_svd3`] once V (the eigenvectors of FᵀF) is known.
#[inline(always)]
fn svd_from_eigenvectors(f: &Matrix3<f64>, mut v: Matrix3<f64>) -> SignedSvd {
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
    use proptest::prelude::*;

    /// A 3×3 F: random entries, or a rotation times a diagonal (repeated,
    /// zero or negative stretches), scaled by 2^k.
    fn matrix() -> impl Strategy<Value = Matrix3<f64>> {
        (prop::array::uniform9(-2.0..2.0f64), 0..4u8, -30i32..30).prop_map(|(entries, shape, k)| {
            let m = Matrix3::from_column_slice(&entries);
            let rotation =
                nalgebra::Rotation3::from_scaled_axis(nalgebra::Vector3::new(entries[0], entries[1], entries[2]))
                    .into_inner();
            let f = match shape {
                0 => rotation * Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, entries[3])),
                1 => rotation * Matrix3::from_diagonal(&Vector3::new(entries[4], 0.0, 0.0)),
                2 => Matrix3::zeros(),
                _ => m,
            };
            f * 2f64.powi(k)
        })
    }

    proptest! {
        /// Sixteen signed SVDs at once are each, bit for bit, the one found
        /// alone, whatever the other lanes hold (lanes converge at different
        /// sweeps and are frozen there).
        #[test]
        fn signed_svds_in_lanes_equal_one_at_a_time(f in prop::array::uniform16(matrix())) {
            let mut lanes = [(Matrix3::zeros(), Vector3::zeros(), Matrix3::zeros()); SVD_LANES];
            signed_svd3_lanes(&f, &mut lanes);
            for (f, (u, sigma, v)) in f.iter().zip(&lanes) {
                let (u1, sigma1, v1) = signed_svd3(f);
                for k in 0..9 {
                    prop_assert_eq!(u[k].to_bits(), u1[k].to_bits());
                    prop_assert_eq!(v[k].to_bits(), v1[k].to_bits());
                }
                for k in 0..3 {
                    prop_assert_eq!(sigma[k].to_bits(), sigma1[k].to_bits());
                }
            }
        }
    }

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
