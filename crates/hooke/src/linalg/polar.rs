//! The rotation R of the polar decomposition F = R S of 3×3 matrices, one at
//! a time or [`LANES`] at once.
//!
//! Higham's scaled Newton iteration R ← ½(ζR + ζ⁻¹R⁻ᵀ) needs only cofactor
//! matrices, several times cheaper than an SVD, but each step waits on
//! divisions and square roots (two of each while scaled, one division
//! after). Many matrices side by side, one in each
//! lane of the vector registers, keep the divider busy instead: the gradient
//! passes of ARAP and the corotational models (projective dynamics, L-BFGS,
//! explicit steps) decompose [`LANES`] elements at once, about four times
//! faster than one at a time.
//!
//! Both entry points run the same code, `polar_lanes`, with one lane or
//! [`LANES`]. A lane whose iteration has settled is frozen while the others
//! go on, so every lane's result is bit for bit what the one-lane call gives
//! for that matrix, whichever matrices share its call.

use super::kernels::dispatch;
use nalgebra::Matrix3;

/// Matrices decomposed together by [`polar_rotations`]: two vector
/// registers of AVX-512 a matrix entry, so that one's divisions and roots
/// wait while the other's go through.
pub const LANES: usize = 16;

/// Newton steps before giving up (far more than any F with det F > 0 needs).
const MAX_ITERATIONS: usize = 30;
/// Frobenius scaling ζ = (‖R⁻ᵀ‖/‖R‖)^½ speeds the first steps, at most
/// this many; near convergence ζ → 1, and leaving it out saves two roots
/// and a division.
const SCALED_ITERATIONS: usize = 6;
/// A lane stops scaling once a step changed R by less than this (squared):
/// from there the plain iteration squares the error at every step.
const UNSCALED_CHANGE_SQUARED: f64 = 1e-4;
/// The iteration converges quadratically: a step that changed R by δ leaves
/// an error near δ²/2, and the last half step one near δ⁴/8. At δ = 1e-5
/// (squared 1e-10) that is 1e-21, below rounding.
const SETTLED_CHANGE_SQUARED: f64 = 1e-10;
/// Below det F = this × ‖F‖³ a matrix counts as inverted or singular.
const SMALLEST_RELATIVE_DETERMINANT: f64 = 1e-9;

/// The rotation of F = R S, or None when F is inverted, nearly singular or
/// not finite, or the iteration does not settle; callers then take the
/// signed SVD.
pub fn polar_rotation(f: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    let mut rotation = [Matrix3::zeros()];
    let [found] = polar_lanes(&[*f], &mut rotation);
    found.then_some(rotation[0])
}

dispatch! {
    /// The rotations of [`LANES`] matrices into `rotations`, each bit for
    /// bit what [`polar_rotation`] gives for it; false where that is None
    /// (the rotation left as it was).
    pub polar_rotations(f: &[Matrix3<f64>; LANES], rotations: &mut [Matrix3<f64>; LANES]) -> [bool; LANES] {
        polar_lanes(f, rotations)
    }
}

/// Nine entries (column-major) of L matrices, lane by lane.
type Lanes<const L: usize> = [[f64; L]; 9];

#[derive(Clone, Copy, PartialEq)]
enum Progress {
    Iterating,
    Settled,
    Failed,
}

#[inline(always)]
fn polar_lanes<const L: usize>(f: &[Matrix3<f64>; L], rotations: &mut [Matrix3<f64>; L]) -> [bool; L] {
    let mut r: Lanes<L> = [[0.0; L]; 9];
    for (l, matrix) in f.iter().enumerate() {
        for k in 0..9 {
            r[k][l] = matrix[k];
        }
    }
    // The rotation of cF is that of F for c > 0. Each lane starts from F
    // times the power of two that brings ‖F‖ near 1: exact, and every
    // quantity of the iteration then scales by powers of two, so the steps
    // are bit for bit those from F itself, while ‖C‖² and det² (of order
    // ‖F‖⁴ and ‖F‖⁶) stay in range for any F of finite norm.
    let mut size_squared = norm_squared(&r);
    let mut scale = [0.0; L];
    for l in 0..L {
        let exponent = ((size_squared[l].to_bits() >> 52) & 0x7ff) as i64 - 1023;
        scale[l] = f64::from_bits(((1023 - (exponent >> 1)) as u64) << 52);
        size_squared[l] *= scale[l] * scale[l];
    }
    for entry in r.iter_mut() {
        for l in 0..L {
            entry[l] *= scale[l];
        }
    }
    // R⁻ᵀ = C / det R with C the cofactor matrix: each step divides once
    // (twice while scaled) instead of forming R⁻ᵀ, and the cofactors of the
    // R a step ends at serve the next step and the last half step.
    let (mut cofactor, mut determinant) = cofactor_and_determinant(&r);
    let mut progress = [Progress::Failed; L];
    for l in 0..L {
        let size = size_squared[l].sqrt();
        let usable = size.is_finite() & (determinant[l] > SMALLEST_RELATIVE_DETERMINANT * size * size * size);
        progress[l] = if usable { Progress::Iterating } else { Progress::Failed };
    }
    let mut scaled = [true; L];
    for iteration in 0..MAX_ITERATIONS {
        if !progress.contains(&Progress::Iterating) {
            break;
        }
        // ζ = (‖R⁻ᵀ‖/‖R‖)^½ = (‖C‖² / (det² ‖R‖²))^¼, and ζ⁻¹R⁻ᵀ = C / (ζ det).
        let mut zeta = [1.0; L];
        if iteration < SCALED_ITERATIONS && scaled.contains(&true) {
            let (a, b) = (norm_squared(&cofactor), norm_squared(&r));
            // Every lane computes ζ (branch-free, so the lanes run as vectors).
            for l in 0..L {
                let z = (a[l] / (determinant[l] * determinant[l] * b[l])).sqrt().sqrt();
                zeta[l] = if scaled[l] { z } else { 1.0 };
            }
        }
        let mut weight = [0.0; L];
        for l in 0..L {
            weight[l] = 1.0 / (zeta[l] * determinant[l]);
        }
        let mut next: Lanes<L> = [[0.0; L]; 9];
        let mut change = [0.0; L];
        for k in 0..9 {
            for l in 0..L {
                next[k][l] = (r[k][l] * zeta[l] + cofactor[k][l] * weight[l]) * 0.5;
                let d = next[k][l] - r[k][l];
                change[l] += d * d;
            }
        }
        // Lanes still iterating take the step (branch-free, so the lanes
        // run as vectors); the others keep what they had.
        let mut step = [false; L];
        for l in 0..L {
            if progress[l] == Progress::Iterating {
                match invertible(determinant[l]) {
                    false => progress[l] = Progress::Failed,
                    true => {
                        step[l] = true;
                        scaled[l] &= change[l] > UNSCALED_CHANGE_SQUARED;
                        if change[l] <= SETTLED_CHANGE_SQUARED {
                            progress[l] = Progress::Settled;
                        }
                    }
                }
            }
        }
        for k in 0..9 {
            for l in 0..L {
                r[k][l] = if step[l] { next[k][l] } else { r[k][l] };
            }
        }
        (cofactor, determinant) = cofactor_and_determinant(&r);
    }
    // The last half step, for every lane at the R it settled on.
    let found: [bool; L] = std::array::from_fn(|l| progress[l] == Progress::Settled && invertible(determinant[l]));
    let mut reciprocal = [0.0; L];
    for l in 0..L {
        reciprocal[l] = 1.0 / determinant[l];
    }
    for (l, rotation) in rotations.iter_mut().enumerate() {
        if found[l] {
            for k in 0..9 {
                rotation[k] = (r[k][l] + cofactor[k][l] * reciprocal[l]) * 0.5;
            }
        }
    }
    found
}

#[inline(always)]
fn invertible(determinant: f64) -> bool {
    determinant != 0.0 && determinant.is_finite()
}

/// ‖M‖² lane by lane, summed in column-major order.
#[inline(always)]
fn norm_squared<const L: usize>(m: &Lanes<L>) -> [f64; L] {
    let mut sum = [0.0; L];
    for entry in m {
        for l in 0..L {
            sum[l] += entry[l] * entry[l];
        }
    }
    sum
}

/// The cofactor matrix C of each lane (R⁻ᵀ = C / det R) and its determinant.
#[inline(always)]
fn cofactor_and_determinant<const L: usize>(m: &Lanes<L>) -> (Lanes<L>, [f64; L]) {
    let at = |i: usize, j: usize| i + 3 * j;
    let mut cofactor: Lanes<L> = [[0.0; L]; 9];
    for i in 0..3 {
        for j in 0..3 {
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            for l in 0..L {
                cofactor[at(i, j)][l] = m[at(i1, j1)][l] * m[at(i2, j2)][l] - m[at(i1, j2)][l] * m[at(i2, j1)][l];
            }
        }
    }
    let mut determinant = [0.0; L];
    for l in 0..L {
        determinant[l] = m[at(0, 0)][l] * cofactor[at(0, 0)][l]
            + m[at(0, 1)][l] * cofactor[at(0, 1)][l]
            + m[at(0, 2)][l] * cofactor[at(0, 2)][l];
    }
    (cofactor, determinant)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The polar rotation is a rotation, and Rᵀ F the symmetric positive
    /// definite stretch; inverted and singular F are left to the SVD.
    #[test]
    fn polar_rotation_gives_the_rotation_of_f() {
        let mut seed = 17u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for _ in 0..200 {
            let f = Matrix3::identity() + Matrix3::from_fn(|_, _| 1.2 * next());
            let r = polar_rotation(&f);
            if f.determinant() <= 1e-3 {
                if f.determinant() <= 0.0 {
                    assert!(r.is_none(), "an inverted F has no rotation here: {f}");
                }
                continue;
            }
            let r = r.expect("a rotation");
            assert!((r.transpose() * r - Matrix3::identity()).amax() < 1e-13);
            assert!((r.determinant() - 1.0).abs() < 1e-13);
            let stretch = r.transpose() * f;
            assert!((stretch - stretch.transpose()).amax() < 1e-12 * f.norm());
            assert!(stretch.symmetric_eigen().eigenvalues.min() > 0.0);
        }
        assert!(polar_rotation(&Matrix3::zeros()).is_none());
    }

    fn matrix() -> impl Strategy<Value = Matrix3<f64>> {
        // Mostly near rotations of moderate stretch, some far from them,
        // some inverted or degenerate.
        (prop::array::uniform9(-1.5f64..1.5), 0usize..4).prop_map(|(entries, kind)| match kind {
            0 => Matrix3::zeros(),
            1 => Matrix3::from_column_slice(&entries) * 20.0,
            _ => Matrix3::identity() + Matrix3::from_column_slice(&entries) * 0.4,
        })
    }

    proptest! {
        /// Many matrices at once give each one's rotation bit for bit as one
        /// at a time (the lanes that settle first are frozen), including
        /// the lanes that fail, whatever their neighbours are.
        #[test]
        fn many_at_once_equal_one_at_a_time_bit_for_bit(matrices in prop::array::uniform16(matrix())) {
            let mut rotations = [Matrix3::zeros(); LANES];
            let found = polar_rotations(&matrices, &mut rotations);
            for ((f, r), found) in matrices.iter().zip(rotations).zip(found) {
                let alone = polar_rotation(f);
                prop_assert_eq!(found, alone.is_some());
                if let (true, Some(alone)) = (found, alone) {
                    for k in 0..9 {
                        prop_assert_eq!(r[k].to_bits(), alone[k].to_bits());
                    }
                }
            }
        }
    }

    /// The rotation does not depend on F's scale, down to the smallest and
    /// up to the largest F whose norm is finite (the cofactors and the
    /// determinant of F itself would overflow or underflow at either end).
    #[test]
    fn tiny_and_huge_matrices_give_the_same_rotation() {
        let rotation = nalgebra::Rotation3::from_euler_angles(0.3, -1.1, 2.0).into_inner();
        let f = rotation * Matrix3::new(1.3, 0.1, 0.0, 0.1, 0.8, -0.2, 0.0, -0.2, 1.1);
        let reference = polar_rotation(&f).expect("a rotation");
        assert!((reference - rotation).amax() < 1e-14);
        for scale in [1e-150, 1e-80, 1e80, 1e150] {
            let r = polar_rotation(&(f * scale)).unwrap_or_else(|| panic!("a rotation at scale {scale:e}"));
            assert!((r - reference).amax() < 1e-14, "scale {scale:e}");
        }
        assert!(
            polar_rotation(&(f * 1e200)).is_none(),
            "‖F‖ overflows: no rotation claimed"
        );
    }

    /// A rotation times a known stretch gives that rotation back, whatever
    /// lane it is in and however far its neighbours are from convergence.
    #[test]
    fn a_known_rotation_is_recovered_in_every_lane() {
        let rotation = nalgebra::Rotation3::from_euler_angles(0.3, -1.1, 2.0).into_inner();
        let stretch = Matrix3::new(1.3, 0.1, 0.0, 0.1, 0.8, -0.2, 0.0, -0.2, 1.1);
        for lane in 0..LANES {
            let mut matrices = [Matrix3::identity() * 40.0; LANES];
            matrices[lane] = rotation * stretch;
            let mut rotations = [Matrix3::zeros(); LANES];
            assert!(polar_rotations(&matrices, &mut rotations)[lane], "a rotation");
            let r = rotations[lane];
            assert!((r - rotation).amax() < 1e-14, "lane {lane}");
        }
    }
}
