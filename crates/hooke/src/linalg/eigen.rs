//! The smallest eigenpairs of the generalized problem K u = λ M u (K, M sparse
//! symmetric, M positive definite), by shift-invert Lanczos.
//!
//! With K − σM = LLᵀ for a shift σ below the wanted eigenvalues, the operator
//! T = (K − σM)⁻¹M is self-adjoint in the M-inner product with eigenvalues
//! θ = 1/(λ − σ): the smallest λ become the largest, best separated θ, which
//! Lanczos finds first. Lanczos runs in the M-inner product with full
//! reorthogonalisation and thick restarts: when the space is full, the best
//! Ritz vectors are kept (with their images under T, so no solve is repeated)
//! and the Krylov sequence continues from them. Converged pairs are locked and
//! the space is kept M-orthogonal to them, so repeated eigenvalues (the six
//! zero modes of a free body, symmetric shapes) are found with their
//! multiplicity, which a single Krylov sequence cannot do; a final fresh random
//! space checks that none was missed. Eigenvectors come out M-orthonormal;
//! convergence is judged by the true residual ‖Ku − λMu‖ / ‖Ku‖.

use super::{LowerPattern, SparseCholesky};
use crate::error::{HookeError, Result};
use nalgebra::{DMatrix, SymmetricEigen};

/// Settings of the eigensolver.
#[derive(Clone, Debug)]
pub struct EigenSettings {
    /// Shift σ; it must lie below the wanted eigenvalues (so that K − σM is
    /// positive definite). None: automatic, −10⁻⁶ × (mean diag K / mean diag M)
    /// (that ratio is near the top of the spectrum, so this lies just below
    /// zero on the scale of the lowest modes, which keeps them well separated),
    /// stepped down (−10⁻⁵, −10⁻⁴, −3·10⁻⁴, ... × the ratio) while K − σM is
    /// indefinite, so that it stays close below the most negative eigenvalue.
    pub shift: Option<f64>,
    /// Relative residual at which a pair is accepted.
    pub tolerance: f64,
    /// Lanczos steps per restart.
    pub krylov_dimension: usize,
    /// Restarts at the most.
    pub max_restarts: usize,
    /// Start vectors (for example the previous step's eigenvectors): their sum
    /// starts Lanczos, so the first Krylov space already holds all of them.
    pub warm_start: Vec<Vec<f64>>,
    /// Once `count` pairs have converged, run one more Lanczos sequence to make
    /// sure no smaller eigenvalue was missed (a second copy of a repeated one).
    /// A caller that only needs eigenpairs near the bottom, not provably the
    /// lowest (SIERE's per-step split), can skip it and halve the cost.
    pub verify_complete: bool,
}

impl Default for EigenSettings {
    fn default() -> Self {
        EigenSettings {
            shift: None,
            tolerance: 1e-9,
            krylov_dimension: 30,
            max_restarts: 50,
            warm_start: Vec::new(),
            verify_complete: true,
        }
    }
}

/// Eigenpairs in increasing order of eigenvalue.
#[derive(Clone, Debug)]
pub struct EigenPairs {
    pub values: Vec<f64>,
    /// M-orthonormal eigenvectors.
    pub vectors: Vec<Vec<f64>>,
    /// ‖Ku − λMu‖ / ‖Ku‖ of each pair (against 1e-6 × a typical eigenvalue × ‖Mu‖ for zero modes).
    /// A pair is accepted below the tolerance, or when its residual is at rounding level
    /// (100 ε (‖K‖∞ + |λ|‖M‖∞)‖u‖), which stiff heterogeneous bodies reach first.
    pub residuals: Vec<f64>,
    /// The shift used.
    pub shift: f64,
    /// Applications of (K − σM)⁻¹M (one sparse solve each).
    pub solves: usize,
}

struct Problem<'a> {
    pattern: &'a LowerPattern,
    stiffness: &'a [f64],
    mass: &'a [f64],
    factor: &'a SparseCholesky,
}

impl Problem<'_> {
    fn mass_times(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; x.len()];
        self.pattern.symmetric_multiply(self.mass, x, &mut y);
        y
    }

    fn stiffness_times(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; x.len()];
        self.pattern.symmetric_multiply(self.stiffness, x, &mut y);
        y
    }

    /// T x = (K − σM)⁻¹ M x.
    fn operator(&self, x: &[f64]) -> Result<Vec<f64>> {
        let mut y = self.mass_times(x);
        self.factor.solve_in_place(&mut y)?;
        Ok(y)
    }
}

/// An M-orthonormal search space Q with M Q, T Q and H = Qᵀ M T Q.
#[derive(Default)]
struct SearchSpace {
    vectors: Vec<Vec<f64>>,
    mass_vectors: Vec<Vec<f64>>,
    images: Vec<Vec<f64>>,
    projected: DMatrix<f64>,
}

impl SearchSpace {
    fn len(&self) -> usize {
        self.vectors.len()
    }

    /// H, symmetrised.
    fn projected(&self) -> DMatrix<f64> {
        (&self.projected + self.projected.transpose()) * 0.5
    }

    /// Adds `v` made M-orthogonal to `locked` and the space and M-normalised,
    /// with its image T v (one solve) and H's new row and column. False when `v`
    /// lies (numerically) in the span already.
    fn add(&mut self, problem: &Problem, mut v: Vec<f64>, locked: &[Vec<f64>], solves: &mut usize) -> Result<bool> {
        let before = dot(&v, &problem.mass_times(&v)).sqrt();
        orthogonalise(problem, &mut v, locked);
        orthogonalise(problem, &mut v, &self.vectors);
        let mass_v = problem.mass_times(&v);
        let length = dot(&v, &mass_v).sqrt();
        if length.is_nan() || length <= 1e-10 * before || !length.is_finite() {
            return Ok(false);
        }
        v.iter_mut().for_each(|x| *x /= length);
        let mass_v: Vec<f64> = mass_v.iter().map(|x| x / length).collect();
        // The deflated operator: T v without its components along the locked
        // eigenvectors, which T would amplify (a zero mode by 1/|σ|) into H.
        let mut image = problem.operator(&v)?;
        orthogonalise(problem, &mut image, locked);
        *solves += 1;
        let m = self.len();
        let mut projected = DMatrix::zeros(m + 1, m + 1);
        projected.view_mut((0, 0), (m, m)).copy_from(&self.projected);
        for (i, mass_q) in self.mass_vectors.iter().enumerate() {
            let value = dot(mass_q, &image);
            projected[(i, m)] = value;
            projected[(m, i)] = value;
        }
        projected[(m, m)] = dot(&mass_v, &image);
        self.projected = projected;
        self.vectors.push(v);
        self.mass_vectors.push(mass_v);
        self.images.push(image);
        Ok(true)
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn axpy_in_place(y: &mut [f64], a: f64, x: &[f64]) {
    y.iter_mut().zip(x).for_each(|(yi, xi)| *yi += a * xi);
}

/// Makes `w` M-orthogonal to every vector of `basis` (M-normalised), twice for stability.
fn orthogonalise(problem: &Problem, w: &mut [f64], basis: &[Vec<f64>]) {
    for _ in 0..2 {
        let mw = problem.mass_times(w);
        for q in basis {
            let c = dot(q, &mw);
            axpy_in_place(w, -c, q);
        }
    }
}

/// The `count` smallest eigenpairs of K u = λ M u, both given as lower-triangle
/// values on `pattern`.
pub fn smallest_eigenpairs(
    pattern: &LowerPattern,
    stiffness: &[f64],
    mass: &[f64],
    count: usize,
    settings: &EigenSettings,
) -> Result<EigenPairs> {
    smallest_eigenpairs_reusing(&mut None, pattern, stiffness, mass, count, settings)
}

/// As [`smallest_eigenpairs`], keeping the symbolic factorisation of K − σM in
/// `factor` for the next call on the same pattern (an integrator that needs
/// modes at every step pays for the ordering once).
pub fn smallest_eigenpairs_reusing(
    factor: &mut Option<SparseCholesky>,
    pattern: &LowerPattern,
    stiffness: &[f64],
    mass: &[f64],
    count: usize,
    settings: &EigenSettings,
) -> Result<EigenPairs> {
    let n = pattern.size;
    if count == 0 || count > n {
        return Err(HookeError::LinearSolver {
            reason: format!("asked for {count} eigenpairs of a problem of size {n}"),
        });
    }
    let diagonal = pattern.diagonal_positions();
    let mean = |values: &[f64]| diagonal.iter().map(|&k| values[k].abs()).sum::<f64>() / n as f64;
    let scale = mean(stiffness) / mean(mass).max(f64::MIN_POSITIVE);
    if factor.as_ref().is_none_or(|f| f.pattern() != pattern) {
        *factor = Some(SparseCholesky::analyse(pattern)?);
    }
    let cholesky = factor.as_mut().expect("filled just above");
    // A given shift must work. The automatic one starts just below zero and, where
    // K is indefinite (a compressed or twisted body), steps down until K − σM is
    // positive definite: the first such σ keeps the wanted θ = 1/(λ − σ) well separated.
    let candidates: Vec<f64> = match settings.shift {
        Some(shift) => vec![shift],
        None => [1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0]
            .iter()
            .map(|f| -f * scale)
            .collect(),
    };
    let mut shift = None;
    for &candidate in &candidates {
        let shifted: Vec<f64> = stiffness.iter().zip(mass).map(|(k, m)| k - candidate * m).collect();
        if cholesky.factorize(&shifted).is_ok() {
            shift = Some(candidate);
            break;
        }
    }
    let Some(shift) = shift else {
        return Err(HookeError::LinearSolver {
            reason: format!(
                "K − σM is not positive definite for σ = {:e}: choose a shift below the smallest eigenvalue",
                candidates.last().copied().unwrap_or(0.0)
            ),
        });
    };
    // ∞-norms (max absolute row sums) of K and M, for the rounding-level residual.
    let row_sums = |values: &[f64]| {
        let mut sums = vec![0.0; n];
        for column in 0..n {
            for k in pattern.column_starts[column]..pattern.column_starts[column + 1] {
                let row = pattern.row_indices[k];
                sums[row] += values[k].abs();
                if row != column {
                    sums[column] += values[k].abs();
                }
            }
        }
        sums.into_iter().fold(0.0, f64::max)
    };
    let (norm_k, norm_m) = (row_sums(stiffness), row_sums(mass));
    let problem = Problem {
        pattern,
        stiffness,
        mass,
        factor: cholesky,
    };

    let mut locked: Vec<(f64, Vec<f64>, f64)> = Vec::new();
    let mut starts = settings
        .warm_start
        .iter()
        .filter(|s| s.len() == n)
        .cloned()
        .collect::<Vec<_>>();
    if starts.len() > 1 {
        let sum = (0..n).map(|i| starts.iter().map(|s| s[i]).sum()).collect();
        starts.insert(0, sum);
    }
    let mut starts = starts.into_iter();
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut next_random = move || -> Vec<f64> {
        (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
            })
            .collect()
    };
    let dimension = settings.krylov_dimension.max(2 * count + 10).min(n);
    let mut best_residuals = Vec::new();
    // The search space: M-orthonormal Q (orthogonal to the locked vectors), with
    // M Q, T Q and H = Qᵀ M T Q kept up to date, so that a restart keeps the best
    // Ritz vectors without any new solve (a thick restart).
    let mut basis = SearchSpace::default();
    let mut solves = 0;
    let mut verified = false;
    // Once `count` pairs are locked, one fresh random space checks that nothing
    // smaller was missed (a second copy of a repeated eigenvalue that the
    // first Krylov space could not contain).
    let mut verifying = false;
    for _cycle in 0..settings.max_restarts {
        if locked.len() >= count && (verified || !settings.verify_complete) {
            break;
        }
        let locked_vectors: Vec<Vec<f64>> = locked.iter().map(|(_, v, _)| v.clone()).collect();
        // A verification space needs fewer vectors: any eigenvalue below the
        // threshold stands out after a few shift-invert steps.
        let wanted_dimension = if verifying {
            (count + 10).min(dimension)
        } else {
            dimension
        };
        let limit = wanted_dimension.min(n - locked.len());
        // Expand to `limit` vectors as a block Krylov space of block size 2: each
        // new vector is T applied to the one added two steps before, the first two
        // being a warm start or random. Two interleaved sequences resolve pairs of
        // equal eigenvalues (symmetric shapes), which one sequence cannot; after a
        // thick restart, the continuation T(kept) of both is one direction, so the
        // second falls back to a fresh random vector, which also helps there.
        const BLOCK: usize = 2;
        while basis.len() < limit {
            let candidate = if basis.len() < BLOCK {
                starts.next().unwrap_or_else(&mut next_random)
            } else {
                basis.images[basis.len() - BLOCK].clone()
            };
            let added = basis.add(&problem, candidate, &locked_vectors, &mut solves)?
                || basis.add(&problem, next_random(), &locked_vectors, &mut solves)?;
            if !added {
                break;
            }
        }
        let m = basis.len();
        if m == 0 {
            break;
        }
        let eigen = SymmetricEigen::new(basis.projected());
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
        let ritz = |i: usize, columns: &[Vec<f64>]| -> Vec<f64> {
            let mut v = vec![0.0; n];
            for (k, column) in columns.iter().enumerate() {
                axpy_in_place(&mut v, eigen.eigenvectors[(k, i)], column);
            }
            v
        };
        // The count-th smallest eigenvalue locked so far (∞ while fewer are locked).
        let mut sorted: Vec<f64> = locked.iter().map(|(l, _, _)| *l).collect();
        sorted.sort_by(f64::total_cmp);
        let threshold = if sorted.len() >= count {
            sorted[count - 1]
        } else {
            f64::INFINITY
        };
        best_residuals.clear();
        let mut newly_locked = Vec::new();
        for &i in order.iter().take(count) {
            let theta = eigen.eigenvalues[i];
            if theta <= 0.0 {
                break;
            }
            let lambda = shift + 1.0 / theta;
            if lambda >= threshold - 1e-9 * threshold.abs().max(scale * 1e-12) {
                break;
            }
            let u = ritz(i, &basis.vectors);
            let ku = problem.stiffness_times(&u);
            let mu = ritz(i, &basis.mass_vectors);
            let residual_norm = ku
                .iter()
                .zip(&mu)
                .map(|(a, b)| (a - lambda * b).powi(2))
                .sum::<f64>()
                .sqrt();
            // ‖Ku‖ for real modes; rigid (zero) modes have ‖Ku‖ ≈ 0, so the floor
            // measures them against a typical eigenvalue (mean diag K / mean diag M).
            let reference = dot(&ku, &ku).sqrt().max(1e-6 * scale * dot(&mu, &mu).sqrt());
            let relative = residual_norm / reference;
            best_residuals.push(relative);
            // Also accept a pair whose residual is down at rounding level, 100 ε (‖K‖ + |λ|‖M‖)‖u‖:
            // with a strongly heterogeneous K (a stiff shell on a soft core) the
            // relative residual of a low mode cannot drop below about ε λ_max / λ.
            let attainable = 100.0 * f64::EPSILON * (norm_k + lambda.abs() * norm_m) * dot(&u, &u).sqrt();
            if relative <= settings.tolerance || residual_norm <= attainable {
                let mut vector = u;
                orthogonalise(&problem, &mut vector, &locked_vectors);
                let length = dot(&vector, &problem.mass_times(&vector)).sqrt();
                vector.iter_mut().for_each(|x| *x /= length);
                locked.push((lambda, vector, relative));
                newly_locked.push(i);
            } else {
                // Pairs are taken in order; a later one cannot be trusted before this one converges.
                break;
            }
        }
        if verifying && newly_locked.is_empty() {
            verified = true;
        }
        if locked.len() >= count && settings.verify_complete && !verified {
            // Start the check from a fresh random space.
            verifying = true;
            basis = SearchSpace::default();
            continue;
        }
        // Thick restart: keep the best unconverged Ritz vectors (no new solves).
        let keep = (count.saturating_sub(locked.len()) + 5).min(m / 2).max(1);
        let kept: Vec<usize> = order
            .iter()
            .copied()
            .filter(|i| !newly_locked.contains(i))
            .take(keep)
            .collect();
        let kept_values: Vec<f64> = kept.iter().map(|&i| eigen.eigenvalues[i]).collect();
        basis = SearchSpace {
            vectors: kept.iter().map(|&i| ritz(i, &basis.vectors)).collect(),
            mass_vectors: kept.iter().map(|&i| ritz(i, &basis.mass_vectors)).collect(),
            images: kept.iter().map(|&i| ritz(i, &basis.images)).collect(),
            projected: DMatrix::from_diagonal(&nalgebra::DVector::from_vec(kept_values)),
        };
    }
    if locked.len() < count {
        return Err(HookeError::LinearSolver {
            reason: format!(
                "found {} of {count} eigenpairs; residuals of the rest reached {:?} (tolerance {:e})",
                locked.len(),
                best_residuals,
                settings.tolerance
            ),
        });
    }
    locked.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
    locked.truncate(count);
    Ok(EigenPairs {
        values: locked.iter().map(|(l, _, _)| *l).collect(),
        residuals: locked.iter().map(|(_, _, r)| *r).collect(),
        vectors: locked.into_iter().map(|(_, v, _)| v).collect(),
        shift,
        solves,
    })
}
