//! Sums of one polynomial over the principal stretches, Σᵢ p(σᵢ) = tr p(U),
//! and their stress F U⁻¹ p′(U), with U = √(FᵀF) the stretch of F = R U:
//! powers of U in place of an eigen-decomposition, many elements at once
//! in vector lanes.
//!
//! U comes in closed form (Hoger & Carlson 1984). Its trace i₁ = Σσᵢ is
//! the largest root of (λ² − I₁)² − 8i₃λ − 4I₂ (I₁, I₂ the invariants of
//! C = FᵀF, i₃ = det F), found by Newton's method from √(3I₁) ≥ i₁, where
//! the quartic is convex and rising: the steps fall monotonically onto the
//! root, quadratically. With i₂ = (i₁² − I₁)/2, Cayley–Hamilton gives
//! U = (−C² + (i₁² − i₂) C + i₁i₃ I) / (i₁i₂ − i₃) and
//! U⁻¹ = (C − i₁U + i₂I) / i₃. U's denominator is (σ₁+σ₂)(σ₂+σ₃)(σ₃+σ₁),
//! small when two stretches are (a needle), and U⁻¹ divides by the volume:
//! nearly flat elements and needles lose digits and are left to the SVD
//! ([`SMALLEST_RELATIVE_VOLUME`], [`SMALLEST_PAIR_SUMS`]). No matrix
//! iteration (as the polar decomposition needs) and few divisions.
//!
//! A Valanis–Landel energy Σᵢ a(σᵢ) + c(J) whose a is one polynomial on all
//! three stretches (a polynomial profile, or a spline while the stretches
//! stay in one of its pieces) is then exact and costs a few 3×3 products,
//! where the stretch form needs F's SVD. For non-inverted F only.

use nalgebra::Matrix3;

/// Terms of the longest [`Piece`]: polynomials up to degree 4.
pub(super) const PIECE_TERMS: usize = 5;

/// One polynomial piece of a profile: p(x) = Σₖ qₖ (x − center)ᵏ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Piece {
    pub center: f64,
    pub coefficients: [f64; PIECE_TERMS],
}

impl Piece {
    pub const ZERO: Piece = Piece {
        center: 1.0,
        coefficients: [0.0; PIECE_TERMS],
    };

    pub fn line(center: f64, value: f64, slope: f64) -> Piece {
        Piece {
            center,
            coefficients: [value, slope, 0.0, 0.0, 0.0],
        }
    }

    /// Σₖ cₖ xᵏ re-expanded about x = 1 (repeated synthetic division by
    /// x − 1), so that near rest the powers of U − I are small and nothing
    /// cancels; None above degree 4.
    #[inline(always)]
    pub fn about_rest(c: &[f64]) -> Option<Piece> {
        if c.len() > PIECE_TERMS {
            return None;
        }
        let mut q = [0.0; PIECE_TERMS];
        q[..c.len()].copy_from_slice(c);
        for i in 0..PIECE_TERMS - 1 {
            for j in (i..PIECE_TERMS - 1).rev() {
                q[j] += q[j + 1];
            }
        }
        Some(Piece {
            center: 1.0,
            coefficients: q,
        })
    }

    /// (p, p′, p″) at x, by Horner's scheme in x − center.
    #[inline(always)]
    pub fn evaluate(&self, x: f64) -> [f64; 3] {
        horner(&self.coefficients, x - self.center)
    }
}

/// Σₖ cₖ tᵏ with its first two derivatives in t (Horner's scheme).
#[inline(always)]
pub(super) fn horner(c: &[f64], t: f64) -> [f64; 3] {
    let (mut value, mut first, mut second) = (0.0, 0.0, 0.0);
    for &ck in c.iter().rev() {
        second = second * t + first * 2.0;
        first = first * t + value;
        value = value * t + ck;
    }
    [value, first, second]
}

/// Entries of L 3×3 matrices lane by lane (`m[k][l]`: entry k, column-major,
/// of matrix l), as the loops below read them: each runs over the lanes
/// innermost, so that it compiles to vector instructions.
pub(super) type EntryLanes<const L: usize> = [[f64; L]; 9];

/// The entries of L matrices, lane by lane.
#[inline(always)]
pub(super) fn entries<const L: usize>(m: &[Matrix3<f64>; L]) -> EntryLanes<L> {
    let mut entries = [[0.0; L]; 9];
    for (l, matrix) in m.iter().enumerate() {
        for k in 0..9 {
            entries[k][l] = matrix[k];
        }
    }
    entries
}

/// A symmetric 3×3 matrix by its six entries 00, 11, 22, 01, 02, 12.
type Symmetric = [f64; 6];

/// One lane's matrix of `lanes`.
#[inline(always)]
fn lane<const N: usize, const L: usize>(lanes: &[[f64; L]; N], l: usize) -> [f64; N] {
    std::array::from_fn(|k| lanes[k][l])
}

#[inline(always)]
fn set_lane<const N: usize, const L: usize>(lanes: &mut [[f64; L]; N], l: usize, value: [f64; N]) {
    for (k, entry) in lanes.iter_mut().enumerate() {
        entry[l] = value[k];
    }
}

/// FᵀF of F given column-major.
#[inline(always)]
fn gram(f: &[f64; 9]) -> Symmetric {
    let column = |j: usize| [f[3 * j], f[3 * j + 1], f[3 * j + 2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (c0, c1, c2) = (column(0), column(1), column(2));
    [
        dot(c0, c0),
        dot(c1, c1),
        dot(c2, c2),
        dot(c0, c1),
        dot(c0, c2),
        dot(c1, c2),
    ]
}

/// A B for symmetric A and B that commute (so the product is symmetric).
#[inline(always)]
fn commuting_product(a: &Symmetric, b: &Symmetric) -> Symmetric {
    let [a00, a11, a22, a01, a02, a12] = *a;
    let [b00, b11, b22, b01, b02, b12] = *b;
    [
        a00 * b00 + a01 * b01 + a02 * b02,
        a01 * b01 + a11 * b11 + a12 * b12,
        a02 * b02 + a12 * b12 + a22 * b22,
        a00 * b01 + a01 * b11 + a02 * b12,
        a00 * b02 + a01 * b12 + a02 * b22,
        a01 * b02 + a11 * b12 + a12 * b22,
    ]
}

/// tr(A B) for symmetric A and B.
#[inline(always)]
fn trace_of_product(a: &Symmetric, b: &Symmetric) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + 2.0 * (a[3] * b[3] + a[4] * b[4] + a[5] * b[5])
}

/// det F and the cofactor matrix of F (column-major).
#[inline(always)]
fn determinant_and_cofactor(f: &[f64; 9]) -> (f64, [f64; 9]) {
    let m = |i: usize, j: usize| f[i + 3 * j];
    let mut cofactor = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            cofactor[i + 3 * j] = m(i1, j1) * m(i2, j2) - m(i1, j2) * m(i2, j1);
        }
    }
    let determinant = m(0, 0) * cofactor[0] + m(0, 1) * cofactor[3] + m(0, 2) * cofactor[6];
    (determinant, cofactor)
}

/// Entry (i, j) of a column-major 3×3 matrix.
#[inline(always)]
fn at(i: usize, j: usize) -> usize {
    i + 3 * j
}

/// The slot of entry (i, j) among a [`Symmetric`]'s six.
const SLOT: [[usize; 3]; 3] = [[0, 3, 4], [3, 1, 5], [4, 5, 2]];

/// Below det F = this × (I₁/3)^(3/2), the volume of an element whose
/// stretches all equal its root-mean-square one, the element counts as
/// nearly flat: U⁻¹ and i₁ lose digits there, and the SVD serves instead.
/// Just inside this limit and [`SMALLEST_PAIR_SUMS`], the stress agrees with
/// the SVD's to 1e-11 of its size (tested); further in, digits go fast.
const SMALLEST_RELATIVE_VOLUME: f64 = 1e-4;
/// Below (σ₁+σ₂)(σ₂+σ₃)(σ₃+σ₁) = i₁i₂ − i₃ = this × i₁³ an element counts
/// as a needle (two stretches small beside the third): U's denominator and
/// i₂ = (i₁² − I₁)/2 lose digits there, and the SVD serves instead.
const SMALLEST_PAIR_SUMS: f64 = 1e-2;

/// Newton steps on the quartic before giving up (near rest it takes three).
const MAX_NEWTON_STEPS: usize = 40;
/// A step below this fraction of i₁ leaves an error near its square: the
/// lane has settled after taking it.
const SETTLED_STEP: f64 = 1e-9;

/// The stretches of L matrices F, lane by lane.
pub(super) struct Stretches<const L: usize> {
    /// F finite, det F > 0, neither nearly flat nor a needle, and i₁ found:
    /// the rest holds only there.
    pub valid: [bool; L],
    /// An interval [lo, hi] holding the three stretches σᵢ: their mean
    /// i₁/3 ± √(2/3) ‖U − (i₁/3) I‖, with ‖U‖² = I₁ (three numbers summing
    /// to 0 with squares summing to r² are each at most √(2/3) r). It holds
    /// them up to rounding (I₁ − i₁²/3 cancels near rest), which is enough:
    /// neighbouring spline pieces agree to second order at their knot.
    pub lo: [f64; L],
    pub hi: [f64; L],
    /// det F.
    pub determinant: [f64; L],
    /// U and U⁻¹, six entries each ([`Symmetric`]).
    pub u: [[f64; L]; 6],
    pub u_inverse: [[f64; L]; 6],
}

/// [`Stretches`] of L matrices, each lane bit for bit as alone (a lane that
/// has settled is frozen while the others go on). Each loop over the lanes
/// is straight-line code per lane, so that it compiles to vector
/// instructions.
#[inline(always)]
pub(super) fn stretches<const L: usize>(f: &EntryLanes<L>) -> Stretches<L> {
    let (mut c, mut c2) = ([[0.0; L]; 6], [[0.0; L]; 6]);
    let (mut invariant1, mut invariant2, mut determinant) = ([0.0; L], [0.0; L], [0.0; L]);
    let mut usable = [false; L];
    let mut trace = [0.0; L];
    for l in 0..L {
        let fl = lane(f, l);
        let gram = gram(&fl);
        let square = commuting_product(&gram, &gram);
        let i1 = gram[0] + gram[1] + gram[2];
        let i2 = 0.5 * (i1 * i1 - (square[0] + square[1] + square[2]));
        let (j, _) = determinant_and_cofactor(&fl);
        let finite = square.iter().fold(true, |all, x| all & x.is_finite());
        let mean_square = i1 / 3.0;
        let thick = j > SMALLEST_RELATIVE_VOLUME * mean_square * mean_square.sqrt();
        usable[l] = (j > 0.0) & thick & j.is_finite() & finite & i2.is_finite();
        trace[l] = (3.0 * i1).sqrt();
        (invariant1[l], invariant2[l], determinant[l]) = (i1, i2, j);
        set_lane(&mut c, l, gram);
        set_lane(&mut c2, l, square);
    }
    // i₁ by Newton's method on the quartic, from above. Every lane computes
    // each step (branch-free, so the lanes run as vectors); lanes that have
    // settled keep their value.
    let mut iterating = usable;
    for _ in 0..MAX_NEWTON_STEPS {
        if !iterating.contains(&true) {
            break;
        }
        for l in 0..L {
            let lambda = trace[l];
            let shifted = lambda * lambda - invariant1[l];
            let value = shifted * shifted - 8.0 * determinant[l] * lambda - 4.0 * invariant2[l];
            let slope = 4.0 * lambda * shifted - 8.0 * determinant[l];
            let step = value / slope;
            trace[l] = if iterating[l] { lambda - step } else { lambda };
            // Settled after this step, or rounding has stopped the descent
            // (a step of zero or below; NaN fails the comparison too).
            iterating[l] &= step > SETTLED_STEP * lambda;
        }
    }
    let mut stretch = Stretches {
        valid: [false; L],
        lo: [0.0; L],
        hi: [0.0; L],
        determinant,
        u: [[0.0; L]; 6],
        u_inverse: [[0.0; L]; 6],
    };
    for l in 0..L {
        let i1 = trace[l];
        let pair_sums = i1 * (0.5 * (i1 * i1 - invariant1[l])) - determinant[l];
        let not_a_needle = pair_sums >= SMALLEST_PAIR_SUMS * i1 * i1 * i1;
        stretch.valid[l] = usable[l] & !iterating[l] & (i1 > 0.0) & i1.is_finite() & not_a_needle;
        let mean = i1 / 3.0;
        let radius = (2.0 / 3.0 * (invariant1[l] - i1 * mean).max(0.0)).sqrt();
        (stretch.lo[l], stretch.hi[l]) = (mean - radius, mean + radius);
        let (gram, square, j) = (lane(&c, l), lane(&c2, l), determinant[l]);
        let i2 = 0.5 * (i1 * i1 - invariant1[l]);
        let (weight, shift, scale) = (i1 * i1 - i2, i1 * j, 1.0 / (i1 * i2 - j));
        let u: Symmetric = std::array::from_fn(|n| {
            let identity = if n < 3 { shift } else { 0.0 };
            (weight * gram[n] - square[n] + identity) * scale
        });
        let reciprocal = 1.0 / j;
        let u_inverse: Symmetric = std::array::from_fn(|n| {
            let identity = if n < 3 { i2 } else { 0.0 };
            (gram[n] - i1 * u[n] + identity) * reciprocal
        });
        set_lane(&mut stretch.u, l, u);
        set_lane(&mut stretch.u_inverse, l, u_inverse);
    }
    stretch
}

/// The pieces of L elements, lane by lane.
#[derive(Clone, Copy)]
pub(super) struct PieceLanes<const L: usize> {
    pub center: [f64; L],
    pub coefficients: [[f64; L]; PIECE_TERMS],
}

impl<const L: usize> PieceLanes<L> {
    pub fn new() -> Self {
        PieceLanes {
            center: [1.0; L],
            coefficients: [[0.0; L]; PIECE_TERMS],
        }
    }

    #[inline(always)]
    pub fn set(&mut self, l: usize, piece: &Piece) {
        self.center[l] = piece.center;
        for (k, q) in self.coefficients.iter_mut().enumerate() {
            q[l] = piece.coefficients[k];
        }
    }
}

/// What each element adds beside its stretches' sum: the volume term's
/// value c(J) and slope c′(J), lane by lane (J = det F, ∂J/∂F = cof F).
pub(super) struct VolumeLanes<const L: usize> {
    pub value: [f64; L],
    pub slope: [f64; L],
}

/// For each lane: ψ = tr p(U) + c − `rest` into `energies` and, with
/// `stress`, P = F U⁻¹ p′(U) + c′ cof F into `stresses`, with p the lane's
/// piece and [c, c′] its volume term. Every lane does the same operations as
/// alone, so each result is bit for bit that of one lane.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn trace_form<const L: usize>(
    f: &EntryLanes<L>,
    stretch: &Stretches<L>,
    pieces: &PieceLanes<L>,
    volume: &VolumeLanes<L>,
    rest: f64,
    stress: bool,
    energies: &mut [f64; L],
    stresses: &mut EntryLanes<L>,
) {
    // With T = U − center·I: tr p(U) = 3q₀ + q₁ tr T + q₂ tr T² + q₃ tr T³
    // + q₄ tr T⁴ and p′(U) = q₁ I + 2q₂ T + 3q₃ T² + 4q₄ T³.
    let powers = |l: usize| {
        let mut t = lane(&stretch.u, l);
        for entry in t.iter_mut().take(3) {
            *entry -= pieces.center[l];
        }
        let t2 = commuting_product(&t, &t);
        (t, t2)
    };
    let q = |l: usize| lane(&pieces.coefficients, l);
    for l in 0..L {
        let ((t, t2), [q0, q1, q2, q3, q4]) = (powers(l), q(l));
        let sum = 3.0 * q0
            + q1 * (t[0] + t[1] + t[2])
            + q2 * (t2[0] + t2[1] + t2[2])
            + q3 * trace_of_product(&t2, &t)
            + q4 * trace_of_product(&t2, &t2);
        energies[l] = sum + volume.value[l] - rest;
    }
    if !stress {
        *stresses = [[0.0; L]; 9];
        return;
    }
    for l in 0..L {
        let ((t, t2), [_, q1, q2, q3, q4]) = (powers(l), q(l));
        let t3 = commuting_product(&t2, &t);
        let derivative: Symmetric = std::array::from_fn(|n| {
            let identity = if n < 3 { q1 } else { 0.0 };
            identity + 2.0 * q2 * t[n] + 3.0 * q3 * t2[n] + 4.0 * q4 * t3[n]
        });
        // P = F G + c′ cof F with G = U⁻¹ p′(U), symmetric as the two commute.
        let g = commuting_product(&lane(&stretch.u_inverse, l), &derivative);
        let fl = lane(f, l);
        let (_, cofactor) = determinant_and_cofactor(&fl);
        let g_at = |i: usize, j: usize| g[SLOT[i][j]];
        let mut p = [0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                let product = fl[at(i, 0)] * g_at(0, j) + fl[at(i, 1)] * g_at(1, j) + fl[at(i, 2)] * g_at(2, j);
                p[at(i, j)] = product + volume.slope[l] * cofactor[at(i, j)];
            }
        }
        set_lane(stresses, l, p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A rotation times a symmetric positive-definite stretch.
    fn deformation() -> impl Strategy<Value = (Matrix3<f64>, Matrix3<f64>)> {
        (prop::array::uniform3(-3.0..3.0f64), prop::array::uniform6(-0.3..0.3f64)).prop_map(|(axis, e)| {
            let r = nalgebra::Rotation3::from_scaled_axis(nalgebra::Vector3::from(axis)).into_inner();
            let s = Matrix3::new(1.0 + e[0], e[3], e[4], e[3], 1.0 + e[1], e[5], e[4], e[5], 1.0 + e[2]);
            (r * s, r)
        })
    }

    fn piece() -> impl Strategy<Value = Piece> {
        (0.5..1.5f64, prop::array::uniform5(-2.0..2.0f64))
            .prop_map(|(center, coefficients)| Piece { center, coefficients })
    }

    /// [`trace_form`] of L elements, as matrices.
    fn trace_form_of<const L: usize>(
        f: &[Matrix3<f64>; L],
        p: &[Piece; L],
        c: &[[f64; 2]; L],
        stress: bool,
    ) -> ([f64; L], [Matrix3<f64>; L]) {
        let mut pieces = PieceLanes::new();
        for (l, piece) in p.iter().enumerate() {
            pieces.set(l, piece);
        }
        let volume = VolumeLanes {
            value: c.map(|c| c[0]),
            slope: c.map(|c| c[1]),
        };
        let (mut energies, mut stresses) = ([0.0; L], [[0.0; L]; 9]);
        let f = entries(f);
        let stretch = stretches(&f);
        assert!(stretch.valid.iter().all(|&v| v));
        trace_form(
            &f,
            &stretch,
            &pieces,
            &volume,
            0.25,
            stress,
            &mut energies,
            &mut stresses,
        );
        (
            energies,
            std::array::from_fn(|l| Matrix3::from_fn(|i, j| stresses[at(i, j)][l])),
        )
    }

    proptest! {
        /// tr p(U) + c and F U⁻¹ p′(U) + c′ cof F are Σ p(σᵢ) + c and
        /// W diag(p′(σ)) Vᵀ + c′ cof F from an SVD F = W diag(σ) Vᵀ.
        #[test]
        fn trace_form_equals_the_stretch_form((f, _) in deformation(), p in piece(), c in prop::array::uniform2(-1.0..1.0f64)) {
            let ([energy], [stress]) = trace_form_of(&[f], &[p], &[c], true);
            let svd = f.svd(true, true);
            let (u, v_t) = (svd.u.unwrap(), svd.v_t.unwrap());
            let sum: f64 = svd.singular_values.iter().map(|&s| p.evaluate(s)[0]).sum();
            let slopes = svd.singular_values.map(|s| p.evaluate(s)[1]);
            let expected = u * Matrix3::from_diagonal(&slopes) * v_t + crate::material::isotropic::cofactor(&f) * c[1];
            prop_assert!((energy - (sum + c[0] - 0.25)).abs() < 1e-12 * (1.0 + sum.abs()));
            prop_assert!((stress - expected).amax() < 1e-12 * (1.0 + expected.amax()), "{} vs {}", stress, expected);
        }

        /// Sixteen elements at once are each bit for bit one alone.
        #[test]
        fn lanes_equal_one_at_a_time(elements in prop::array::uniform16((deformation(), piece())), stress in any::<bool>()) {
            let f = elements.map(|((f, _), _)| f);
            let pieces = elements.map(|(_, p)| p);
            let volume: [[f64; 2]; 16] = std::array::from_fn(|l| [0.1 * l as f64, -0.05 * l as f64]);
            let (energies, stresses) = trace_form_of(&f, &pieces, &volume, stress);
            for l in 0..16 {
                let ([energy], [alone]) = trace_form_of(&[f[l]], &[pieces[l]], &[volume[l]], stress);
                prop_assert_eq!(energies[l].to_bits(), energy.to_bits());
                for k in 0..9 {
                    prop_assert_eq!(stresses[l][k].to_bits(), alone[k].to_bits());
                }
            }
        }

        /// A polynomial re-expanded about 1 has the same values and slopes.
        #[test]
        fn polynomials_about_rest_are_the_same(c in prop::collection::vec(-3.0..3.0f64, 0..6), x in 0.2..2.0f64) {
            let piece = Piece::about_rest(&c).unwrap();
            let direct: f64 = c.iter().enumerate().map(|(k, ck)| ck * x.powi(k as i32)).sum();
            let slope: f64 = c.iter().enumerate().skip(1).map(|(k, ck)| k as f64 * ck * x.powi(k as i32 - 1)).sum();
            let [value, first, _] = piece.evaluate(x);
            prop_assert!((value - direct).abs() < 1e-12 * (1.0 + direct.abs()) * 20.0);
            prop_assert!((first - slope).abs() < 1e-12 * (1.0 + slope.abs()) * 40.0);
        }

        /// U and U⁻¹ are F's stretch and its inverse, the bounds hold every
        /// singular value, and the determinant is F's, from near rest to
        /// stretches 20 to 1 apart.
        #[test]
        fn stretches_are_those_of_f((f, _) in deformation(), diagonal in prop::array::uniform3(0.05..4.0f64), stretched in any::<bool>(), scale in 0.1..10.0f64) {
            let f = if stretched { f * Matrix3::from_diagonal(&nalgebra::Vector3::from(diagonal)) } else { f } * scale;
            let stretch = stretches(&entries(&[f]));
            prop_assert!(stretch.valid[0]);
            let symmetric = |m: &[[f64; 1]; 6]| Matrix3::from_fn(|i, j| m[SLOT[i][j]][0]);
            let (u, u_inverse) = (symmetric(&stretch.u), symmetric(&stretch.u_inverse));
            let svd = f.svd(false, true);
            let v_t = svd.v_t.unwrap();
            let expected = v_t.transpose() * Matrix3::from_diagonal(&svd.singular_values) * v_t;
            let size = svd.singular_values.max();
            prop_assert!((u - expected).amax() < 1e-12 * size * (size / svd.singular_values.min()), "{} vs {}", u, expected);
            prop_assert!((u * u_inverse - Matrix3::identity()).amax() < 1e-10 * size / svd.singular_values.min());
            prop_assert!((stretch.determinant[0] - f.determinant()).abs() <= 1e-12 * size.powi(3));
            for s in svd.singular_values.iter() {
                prop_assert!(stretch.lo[0] <= s * (1.0 + 1e-12) && *s <= stretch.hi[0] * (1.0 + 1e-12), "{} not in [{}, {}]", s, stretch.lo[0], stretch.hi[0]);
            }
        }
    }

    /// Just inside the limits (nearly flat, needle-like), the trace form's
    /// stress still agrees with the SVD's to 1e-11 of its size; just outside,
    /// the element is not served.
    #[test]
    fn trace_form_holds_its_accuracy_at_its_limits() {
        let polynomial = Piece::about_rest(&[1.0, -4.0, 6.0, -4.0, 1.0]).unwrap();
        let rotation = nalgebra::Rotation3::from_scaled_axis(nalgebra::Vector3::new(0.3, -1.1, 0.7)).into_inner();
        let flat = |t: f64| rotation * Matrix3::from_diagonal(&nalgebra::Vector3::new(1.3, 1.0, t));
        let needle = |t: f64| rotation * Matrix3::from_diagonal(&nalgebra::Vector3::new(1.2, t, 0.9 * t));
        for (shape, inside, outside) in [
            (&flat as &dyn Fn(f64) -> Matrix3<f64>, 8e-5, 5e-5),
            (&needle, 7e-3, 4e-3),
        ] {
            let f = shape(inside);
            let ([energy], [stress]) = trace_form_of(&[f], &[polynomial], &[[0.0, 0.0]], true);
            let svd = f.svd(true, true);
            let slopes = svd.singular_values.map(|s| polynomial.evaluate(s)[1]);
            let expected = svd.u.unwrap() * Matrix3::from_diagonal(&slopes) * svd.v_t.unwrap();
            let sum: f64 = svd.singular_values.iter().map(|&s| polynomial.evaluate(s)[0]).sum();
            assert!(
                (stress - expected).amax() < 1e-11 * expected.amax(),
                "{stress} vs {expected}"
            );
            assert!((energy + 0.25 - sum).abs() < 1e-12 * sum.abs().max(1.0));
            assert!(!stretches(&entries(&[shape(outside)])).valid[0]);
        }
    }

    /// Inverted, nearly flat and non-finite F have no stretch here.
    #[test]
    fn inverted_flat_and_non_finite_f_are_not_valid() {
        let inverted = Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 1.0, -0.5));
        let flat = Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 1.0, 1e-7));
        let mut nan = Matrix3::identity();
        nan[(0, 1)] = f64::NAN;
        let stretch = stretches(&entries(&[inverted, flat, nan, Matrix3::identity()]));
        assert_eq!(stretch.valid, [false, false, false, true]);
    }

    #[test]
    fn above_degree_four_a_polynomial_has_no_piece() {
        assert!(Piece::about_rest(&[1.0; 6]).is_none());
        assert_eq!(Piece::about_rest(&[]), Some(Piece::ZERO));
    }
}
