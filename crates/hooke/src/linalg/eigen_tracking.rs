//! The lowest eigenpairs of K u = λ M u followed from one step to the next:
//! when K has moved a little since the pairs were found, a few iterations of
//! block LOBPCG (Knyazev 2001) from the old eigenvectors recover the new ones
//! far more cheaply than a new Lanczos run.
//!
//! Each iteration is a Rayleigh–Ritz projection of K onto the M-orthonormal
//! span of the current vectors X, their preconditioned residuals
//! W = (K − σM)⁻¹ (K X − M X Λ) and the last update directions P. The first
//! projection uses X alone. K − σM is factorised numerically once per call
//! (the symbolic analysis is the caller's, kept between steps), on one thread
//! while the other computes the first projection; with this
//! exact shift-invert preconditioner the span of X and W is that of X and
//! (K − σM)⁻¹ M X, one block Lanczos step, and convergence takes one to three
//! iterations. The same solve measures convergence: w = (K − σM)⁻¹ r is
//! nearly the error of u, and ‖w‖²_A = wᵀr (A = K − σM) costs nothing more.
//! The plain residual ‖Ku − λMu‖/‖Ku‖ cannot serve: a mode carried one step
//! keeps a small high-frequency error that K amplifies by λ_max/λ, and reads
//! about 1 though its energy-norm error is 1e-2. The result depends only on
//! the start vectors and K, so a resumed run repeats it bit for bit.
//!
//! The caller passes a few more start vectors than it needs (guards): the
//! wanted pairs then converge at the rate set by the gap to the first
//! eigenvalue beyond the block, and a mode that sinks into the wanted range
//! from just above is caught. A block that does not converge within the
//! allowed iterations is reported, and the caller starts afresh.

use super::{LowerPattern, SparseCholesky};
use crate::error::Result;
use nalgebra::{DMatrix, SymmetricEigen};

/// How far to refine.
#[derive(Clone, Debug)]
pub struct TrackingSettings {
    /// Relative error in the energy norm, ‖e‖_A / ‖u‖_A with A = K − σM and
    /// e = A⁻¹(Ku − λMu), at which the wanted pairs are accepted.
    pub tolerance: f64,
    /// Rayleigh–Ritz steps with new directions, at most, after the first.
    pub max_iterations: usize,
}

impl Default for TrackingSettings {
    fn default() -> Self {
        TrackingSettings {
            tolerance: 1e-3,
            max_iterations: 4,
        }
    }
}

/// Refined pairs, in increasing order of eigenvalue: all of the block (the
/// wanted ones, then the guards).
#[derive(Clone, Debug)]
pub struct TrackedPairs {
    /// The eigenvalues λ of K u = λ M u, increasing.
    pub values: Vec<f64>,
    /// M-orthonormal eigenvectors.
    pub vectors: Vec<Vec<f64>>,
    /// Relative errors of the wanted eigenvectors in the energy norm
    /// (their eigenvalues are good to about the square).
    pub errors: Vec<f64>,
    /// How far each wanted start vector is from its new eigenvector: the
    /// sine of their angle in the M inner product, to first order, from the
    /// turn within the block (the first Rayleigh–Ritz step on X alone) and
    /// the error outside it ((K − σM)⁻¹ r, measured in the M norm, where
    /// high-frequency noise weighs little).
    pub start_errors: Vec<f64>,
    /// Rayleigh–Ritz steps beyond the first (0: the old vectors, projected
    /// on the new K, sufficed; each step costs one more block solve).
    pub iterations: usize,
}

/// A block of vectors with its images under M and K. Images are carried
/// through orthogonal combinations (which keep their accuracy) and computed
/// afresh for new directions (whose construction cancels most of a vector).
struct Block {
    vectors: DMatrix<f64>,
    mass: DMatrix<f64>,
    stiffness: DMatrix<f64>,
}

impl Block {
    fn combined(&self, coefficients: &DMatrix<f64>) -> Block {
        Block {
            vectors: &self.vectors * coefficients,
            mass: &self.mass * coefficients,
            stiffness: &self.stiffness * coefficients,
        }
    }

    fn columns(&self) -> usize {
        self.vectors.ncols()
    }

    /// The columns side by side.
    fn beside(&self, other: &Block) -> Block {
        Block {
            vectors: join(&self.vectors, &other.vectors),
            mass: join(&self.mass, &other.mass),
            stiffness: join(&self.stiffness, &other.stiffness),
        }
    }
}

fn join(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    let mut joined = DMatrix::zeros(a.nrows(), a.ncols() + b.ncols());
    joined.columns_mut(0, a.ncols()).copy_from(a);
    joined.columns_mut(a.ncols(), b.ncols()).copy_from(b);
    joined
}

/// T such that the columns of V T are M-orthonormal (SVQB: the
/// eigen-decomposition of the scaled Gram matrix), without the directions
/// that are numerically dependent. None when none is left.
fn orthonormalising(vectors: &DMatrix<f64>, mass_images: &DMatrix<f64>) -> Option<DMatrix<f64>> {
    let gram = symmetric(vectors.transpose() * mass_images);
    let scale: Vec<f64> = (0..gram.nrows())
        .map(|i| 1.0 / gram[(i, i)].max(f64::MIN_POSITIVE).sqrt())
        .collect();
    let scaled = DMatrix::from_fn(gram.nrows(), gram.ncols(), |i, j| gram[(i, j)] * scale[i] * scale[j]);
    let eigen = SymmetricEigen::new(scaled);
    let largest = eigen.eigenvalues.iter().fold(0.0f64, |m, v| m.max(*v));
    let kept: Vec<usize> = (0..eigen.eigenvalues.len())
        .filter(|&i| eigen.eigenvalues[i] > DEPENDENCE * largest)
        .collect();
    if kept.is_empty() || !largest.is_finite() {
        return None;
    }
    Some(DMatrix::from_fn(gram.nrows(), kept.len(), |i, k| {
        scale[i] * eigen.eigenvectors[(i, kept[k])] / eigen.eigenvalues[kept[k]].sqrt()
    }))
}

/// Gram eigenvalues below this fraction of the largest are dependent directions.
const DEPENDENCE: f64 = 1e-8;

fn symmetric(a: DMatrix<f64>) -> DMatrix<f64> {
    (&a + a.transpose()) * 0.5
}

/// The operators of one problem.
struct Problem<'a> {
    pattern: &'a LowerPattern,
    stiffness: &'a [f64],
    mass: &'a [f64],
    diagonal_mass: Option<Vec<f64>>,
}

impl Problem<'_> {
    fn mass_times(&self, vectors: &DMatrix<f64>) -> DMatrix<f64> {
        match &self.diagonal_mass {
            Some(d) => DMatrix::from_fn(vectors.nrows(), vectors.ncols(), |r, c| d[r] * vectors[(r, c)]),
            None => self.pattern.symmetric_multiply_block(self.mass, vectors),
        }
    }

    /// The block with its images under M and K.
    fn block(&self, vectors: DMatrix<f64>) -> Block {
        let mass = self.mass_times(&vectors);
        let stiffness = self.pattern.symmetric_multiply_block(self.stiffness, &vectors);
        Block {
            vectors,
            mass,
            stiffness,
        }
    }
}

/// The preconditioner (K − σM)⁻¹: a Cholesky factor holding the symbolic
/// analysis of the pattern, which [`track_eigenpairs`] factorises with
/// a M + b K = b (K − σM), σ = −a/b below the wanted eigenvalues. The
/// weights let the factorised matrix be, to the bit, one that a step
/// factorises too (model/step_matrix.rs).
pub struct ShiftInvert<'a> {
    /// A Cholesky analysis of the pattern.
    pub factor: &'a mut SparseCholesky,
    /// The weight a of M.
    pub mass: f64,
    /// The weight b > 0 of K.
    pub stiffness: f64,
}

impl<'a> ShiftInvert<'a> {
    /// K − σM, factorised as exactly that (a = −σ, b = 1).
    pub fn with_shift(factor: &'a mut SparseCholesky, shift: f64) -> ShiftInvert<'a> {
        ShiftInvert {
            factor,
            mass: -shift,
            stiffness: 1.0,
        }
    }

    /// σ = −a/b.
    pub fn shift(&self) -> f64 {
        -self.mass / self.stiffness
    }
}

/// Refines `start` (M-orthonormal approximations of the lowest eigenvectors,
/// the wanted ones first, then guards) to eigenvectors of (K, M), K and M
/// lower-triangle values on `pattern`. Returns None when the first `wanted`
/// pairs do not reach the tolerance within the iterations allowed, or K − σM
/// is not positive definite.
pub fn track_eigenpairs(
    pattern: &LowerPattern,
    stiffness: &[f64],
    mass: &[f64],
    start: &[Vec<f64>],
    wanted: usize,
    preconditioner: ShiftInvert,
    settings: &TrackingSettings,
) -> Result<Option<TrackedPairs>> {
    let shift = preconditioner.shift();
    let ShiftInvert {
        factor,
        mass: mass_weight,
        stiffness: stiffness_weight,
    } = preconditioner;
    let n = pattern.size;
    let size = start.len();
    if size == 0 || wanted > size || size > n || start.iter().any(|v| v.len() != n) {
        return Ok(None);
    }
    let problem = Problem {
        pattern,
        stiffness,
        mass,
        diagonal_mass: pattern.diagonal_if_diagonal(mass),
    };
    // The factorisation (one thread on small matrices) needs nothing of the
    // start, and the first projection needs nothing of the factor: side by side.
    let start = DMatrix::from_fn(n, size, |r, c| start[c][r]);
    let start_vectors = start.clone();
    let (first, factorised) = rayon::join(
        || {
            let start = problem.block(start);
            let transform = orthonormalising(&start.vectors, &start.mass).filter(|t| t.ncols() == size)?;
            // The start is M-orthonormal already up to rounding, so T is near
            // the identity and carrying the images through it loses nothing.
            Some(rayleigh_ritz(start.combined(&transform), size))
        },
        || {
            let shifted: Vec<f64> = stiffness
                .iter()
                .zip(mass)
                .map(|(k, m)| mass_weight * m + stiffness_weight * k)
                .collect();
            factor.factorize(&shifted).is_ok()
        },
    );
    let (Some(mut projection), true) = (first, factorised) else {
        return Ok(None);
    };
    let mut start_errors = Vec::new();
    for iteration in 0..=settings.max_iterations {
        let Projection {
            x,
            values,
            update,
            residual,
        } = projection;
        let mut corrections = residual.clone();
        factor.solve_columns_in_place(corrections.as_mut_slice(), size)?;
        // The factor is b (K − σM): corrections are (K − σM)⁻¹ r.
        if stiffness_weight != 1.0 {
            corrections *= stiffness_weight;
        }
        // The error of each pair in the energy norm of K − σM, relative to
        // the mode's own: e = (K − σM)⁻¹ r is (nearly) the error of u, and
        // ‖e‖² = rᵀ(K − σM)⁻¹ r needs no further product.
        let errors: Vec<f64> = (0..size)
            .map(|k| (corrections.column(k).dot(&residual.column(k)).max(0.0) / (values[k] - shift)).sqrt())
            .collect();
        if iteration == 0 {
            let outside = problem.mass_times(&corrections.columns(0, wanted).into_owned());
            start_errors = (0..wanted)
                .map(|k| {
                    let kept = start_vectors.column(k).dot(&x.mass.column(k)).abs().min(1.0);
                    let away = corrections.column(k).dot(&outside.column(k)).max(0.0);
                    (1.0 - kept * kept + away).min(1.0).sqrt()
                })
                .collect();
        }
        if errors[..wanted].iter().all(|e| *e <= settings.tolerance) {
            return Ok(Some(TrackedPairs {
                values,
                vectors: (0..size)
                    .map(|k| x.vectors.column(k).iter().copied().collect())
                    .collect(),
                errors: errors[..wanted].to_vec(),
                start_errors,
                iterations: iteration,
            }));
        }
        if iteration == settings.max_iterations {
            break;
        }
        // Only the pairs still short of the tolerance search further: the
        // correction of a converged one is rounding noise, and its direction
        // would pollute the others (soft locking).
        let active: Vec<usize> = (0..size).filter(|&k| errors[k] > settings.tolerance).collect();
        let mut candidates = corrections.select_columns(&active);
        if let Some(update) = update {
            candidates = join(&candidates, &update.select_columns(&active));
        }
        // M-orthogonal to X (twice: once is not enough in floating point),
        // then M-orthonormal, and only then multiplied by K and M.
        for _ in 0..2 {
            let overlap = x.mass.transpose() * &candidates;
            candidates -= &x.vectors * overlap;
        }
        let candidate_mass = problem.mass_times(&candidates);
        let Some(transform) = orthonormalising(&candidates, &candidate_mass) else {
            break;
        };
        let vectors = candidates * &transform;
        // Q: the new directions (preconditioned residuals and update
        // directions), M-orthonormal and M-orthogonal to X, with their images.
        let directions = Block {
            stiffness: pattern.symmetric_multiply_block(stiffness, &vectors),
            mass: candidate_mass * transform,
            vectors,
        };
        projection = rayleigh_ritz(x.beside(&directions), size);
    }
    Ok(None)
}

/// One Rayleigh–Ritz step: the `size` lowest Ritz pairs of K on an
/// M-orthonormal basis, with their residuals and the update direction.
struct Projection {
    x: Block,
    values: Vec<f64>,
    /// The part of the new X outside the old one (none on the first basis).
    update: Option<DMatrix<f64>>,
    /// K u − λ M u of each pair.
    residual: DMatrix<f64>,
}

/// Rayleigh–Ritz on `basis`, whose first `size` columns are the current X
/// and the rest new directions.
fn rayleigh_ritz(basis: Block, size: usize) -> Projection {
    let projected = symmetric(basis.vectors.transpose() * &basis.stiffness);
    let eigen = SymmetricEigen::new(projected);
    let mut order: Vec<usize> = (0..eigen.eigenvalues.len()).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[a].total_cmp(&eigen.eigenvalues[b]));
    let coefficients = DMatrix::from_fn(basis.columns(), size, |i, k| eigen.eigenvectors[(i, order[k])]);
    let values: Vec<f64> = order[..size].iter().map(|&i| eigen.eigenvalues[i]).collect();
    let update = (basis.columns() > size).then(|| {
        let q = basis.vectors.columns(size, basis.columns() - size);
        q * coefficients.rows(size, basis.columns() - size)
    });
    let x = basis.combined(&coefficients);
    let mut residual = x.stiffness.clone();
    for (k, &value) in values.iter().enumerate() {
        residual.column_mut(k).axpy(-value, &x.mass.column(k), 1.0);
    }
    Projection {
        x,
        values,
        update,
        residual,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{smallest_eigenpairs, EigenSettings};

    fn shift_invert(factor: &mut SparseCholesky) -> ShiftInvert<'_> {
        ShiftInvert::with_shift(factor, -1e-3)
    }

    /// A 1D chain of springs with a lumped or tridiagonal mass: K scaled by
    /// `stiffen` on its first half.
    fn chain(n: usize, stiffen: f64, lumped: bool) -> (LowerPattern, Vec<f64>, Vec<f64>) {
        let columns: Vec<Vec<usize>> = (0..n)
            .map(|j| if j + 1 < n { vec![j, j + 1] } else { vec![j] })
            .collect();
        let pattern = LowerPattern::from_columns(columns);
        let mut k = vec![0.0; pattern.nonzeros()];
        let mut m = vec![0.0; pattern.nonzeros()];
        // Spring j joins vertex j to vertex j − 1 (to the ground for j = 0).
        for j in 0..n {
            let weight = if j < n / 2 { stiffen } else { 1.0 } * (1.0 + 0.1 * (j % 3) as f64);
            k[pattern.position(j, j).unwrap()] += weight;
            m[pattern.position(j, j).unwrap()] += if lumped { 1.0 } else { 2.0 / 3.0 };
            if j > 0 {
                k[pattern.position(j - 1, j - 1).unwrap()] += weight;
                k[pattern.position(j, j - 1).unwrap()] -= weight;
                if !lumped {
                    m[pattern.position(j, j - 1).unwrap()] += 1.0 / 6.0;
                }
            }
        }
        (pattern, k, m)
    }

    #[test]
    fn tracking_a_moved_stiffness_finds_the_lanczos_pairs() {
        for lumped in [true, false] {
            let (pattern, k0, m) = chain(200, 1.0, lumped);
            let (_, k1, _) = chain(200, 1.15, lumped);
            let old = smallest_eigenpairs(&pattern, &k0, &m, 8, &EigenSettings::default()).unwrap();
            let reference = smallest_eigenpairs(&pattern, &k1, &m, 6, &EigenSettings::default()).unwrap();
            let mut factor = SparseCholesky::analyse(&pattern).unwrap();
            let settings = TrackingSettings {
                tolerance: 1e-9,
                max_iterations: 6,
            };
            let tracked = track_eigenpairs(&pattern, &k1, &m, &old.vectors, 6, shift_invert(&mut factor), &settings)
                .unwrap()
                .expect("converges");
            assert!(tracked.iterations >= 1, "K moved: a solve is needed");
            for i in 0..6 {
                let error = (tracked.values[i] - reference.values[i]).abs() / reference.values[i];
                assert!(error < 1e-10, "lumped {lumped}, pair {i}: {error:e}");
                assert!(tracked.errors[i] <= 1e-9);
            }
            // An unmoved K needs no solve, and an impossible budget reports failure.
            let still = track_eigenpairs(
                &pattern,
                &k1,
                &m,
                &tracked.vectors,
                6,
                shift_invert(&mut factor),
                &settings,
            )
            .unwrap()
            .expect("converged already");
            assert_eq!(still.iterations, 0);
            // It reports how far the start was from the new modes: nowhere,
            // and for the moved K more than the tolerance.
            assert!(still.start_errors.iter().all(|e| *e < 1e-6), "{:?}", still.start_errors);
            assert!(
                tracked.start_errors.iter().any(|e| *e > 1e-3),
                "{:?}",
                tracked.start_errors
            );
            let (_, far, _) = chain(200, 5.0, lumped);
            let none = TrackingSettings {
                tolerance: 1e-9,
                max_iterations: 0,
            };
            assert!(
                track_eigenpairs(&pattern, &far, &m, &old.vectors, 6, shift_invert(&mut factor), &none)
                    .unwrap()
                    .is_none()
            );
        }
    }

    /// A factor of a M + b K is b (K − σM) with σ = −a/b: the tracking scales
    /// its corrections back, so it finds the same pairs and measures the same
    /// errors as with K − σM itself (to rounding: the errors are small
    /// differences, good to about 1e-6).
    #[test]
    fn weighted_matrices_track_as_their_shift_does() {
        let (pattern, k0, m) = chain(200, 1.0, false);
        let (_, k1, _) = chain(200, 1.15, false);
        let old = smallest_eigenpairs(&pattern, &k0, &m, 8, &EigenSettings::default()).unwrap();
        let settings = TrackingSettings {
            tolerance: 1e-6,
            max_iterations: 6,
        };
        let mut factor = SparseCholesky::analyse(&pattern).unwrap();
        let track = |preconditioner| {
            track_eigenpairs(&pattern, &k1, &m, &old.vectors, 6, preconditioner, &settings)
                .unwrap()
                .expect("converges")
        };
        let shifted = track(ShiftInvert::with_shift(&mut factor, -0.02));
        let mut factor = SparseCholesky::analyse(&pattern).unwrap();
        let weighted = track(ShiftInvert {
            factor: &mut factor,
            mass: 1.0,
            stiffness: 50.0,
        });
        assert!(shifted.iterations >= 1);
        assert_eq!(weighted.iterations, shifted.iterations);
        let close = |a: &[f64], b: &[f64], tolerance: f64| {
            a.iter()
                .zip(b)
                .all(|(x, y)| (x - y).abs() <= tolerance * x.abs().max(y.abs()))
        };
        assert!(
            close(&weighted.errors, &shifted.errors, 1e-4),
            "{:?} {:?}",
            weighted.errors,
            shifted.errors
        );
        assert!(close(&weighted.start_errors, &shifted.start_errors, 1e-4));
        assert!(close(&weighted.values, &shifted.values, 1e-12));
    }

    /// The factorisation runs beside the first projection; the pairs do not
    /// depend on how many threads share the work, and a shift above the
    /// spectrum's bottom (K − σM indefinite) is reported, not used.
    #[test]
    fn one_thread_or_two_track_the_same_bits_and_a_bad_shift_is_refused() {
        let (pattern, k0, m) = chain(300, 1.0, false);
        let (_, k1, _) = chain(300, 1.2, false);
        let old = smallest_eigenpairs(&pattern, &k0, &m, 8, &EigenSettings::default()).unwrap();
        let settings = TrackingSettings::default();
        let tracked_on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut factor = SparseCholesky::analyse(&pattern).unwrap();
                track_eigenpairs(&pattern, &k1, &m, &old.vectors, 6, shift_invert(&mut factor), &settings)
                    .unwrap()
                    .expect("converges")
            })
        };
        let (one, two) = (tracked_on(1), tracked_on(2));
        let bits = |pairs: &TrackedPairs| -> Vec<u64> {
            let vectors = pairs.vectors.iter().flatten();
            pairs.values.iter().chain(vectors).map(|v| v.to_bits()).collect()
        };
        assert_eq!(bits(&one), bits(&two));
        let mut factor = SparseCholesky::analyse(&pattern).unwrap();
        let above = ShiftInvert::with_shift(&mut factor, 2.0 * old.values[0]);
        assert!(track_eigenpairs(&pattern, &k1, &m, &old.vectors, 6, above, &settings)
            .unwrap()
            .is_none());
    }
}
