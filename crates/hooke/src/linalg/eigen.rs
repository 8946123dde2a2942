//! The smallest eigenpairs of the generalized problem K u = λ M u (K, M sparse
//! symmetric, M positive definite), by shift-invert Lanczos.
//!
//! With K − σM = LLᵀ for a shift σ below the wanted eigenvalues, the operator
//! T = (K − σM)⁻¹M is self-adjoint in the M-inner product with eigenvalues
//! θ = 1/(λ − σ): the smallest λ become the largest, best separated θ, which
//! Lanczos finds first. Lanczos runs in the M-inner product with full
//! reorthogonalisation. Converged pairs are locked and each restart starts
//! M-orthogonal to them, so repeated eigenvalues (the six zero modes of a free
//! body, symmetric shapes) are found with their multiplicity, which a single
//! Krylov sequence cannot do. Eigenvectors come out M-orthonormal; convergence
//! is judged by the true residual ‖Ku − λMu‖ / ‖Ku‖.

use super::{LowerPattern, SparseCholesky};
use crate::error::{HookeError, Result};
use nalgebra::{DMatrix, SymmetricEigen};

/// Settings of the eigensolver.
#[derive(Clone, Debug)]
pub struct EigenSettings {
    /// Shift σ; it must lie below the wanted eigenvalues (so that K − σM is
    /// positive definite). None: automatic, −10⁻³ × (mean diag K / mean diag M),
    /// stepped down by factors of ten while K − σM is indefinite.
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
            krylov_dimension: 60,
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
        None => [1e-3, 1e-2, 1e-1, 1.0, 10.0].iter().map(|f| -f * scale).collect(),
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
    let problem = Problem {
        pattern,
        stiffness,
        mass,
        factor: cholesky,
    };

    let mut locked: Vec<(f64, Vec<f64>, f64)> = Vec::new();
    let mut starts = settings.warm_start.clone();
    if starts.len() > 1 && starts.iter().all(|s| s.len() == n) {
        let sum = (0..n).map(|i| starts.iter().map(|s| s[i]).sum()).collect();
        starts.insert(0, sum);
    }
    let mut starts = starts.into_iter();
    let mut solves = 0;
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut next_random = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let dimension = settings.krylov_dimension.max(2 * count + 10).min(n);
    let mut best_residuals = Vec::new();
    // Each restart runs Lanczos M-orthogonal to the locked pairs. Once `count`
    // pairs are locked, a restart still checks that nothing smaller is left (a
    // second copy of a repeated eigenvalue that the first sequence could not see).
    let mut verified = false;
    for _restart in 0..settings.max_restarts {
        if verified || (locked.len() >= count && !settings.verify_complete) {
            break;
        }
        let locked_vectors: Vec<Vec<f64>> = locked.iter().map(|(_, v, _)| v.clone()).collect();
        // Start vector: a warm start, else random; M-orthogonal to the locked pairs.
        let mut q: Vec<f64> = starts
            .next()
            .filter(|s| s.len() == n)
            .unwrap_or_else(|| (0..n).map(|_| next_random()).collect());
        orthogonalise(&problem, &mut q, &locked_vectors);
        let length = dot(&q, &problem.mass_times(&q)).sqrt();
        if length.is_nan() || length <= 0.0 {
            continue;
        }
        q.iter_mut().for_each(|x| *x /= length);

        // Lanczos in the M-inner product with full reorthogonalisation.
        let mut basis: Vec<Vec<f64>> = vec![q];
        let mut alphas = Vec::new();
        let mut betas: Vec<f64> = Vec::new();
        let limit = dimension.min(n - locked.len());
        while basis.len() <= limit {
            let j = basis.len() - 1;
            let mut w = problem.operator(&basis[j])?;
            solves += 1;
            let alpha = dot(&basis[j], &problem.mass_times(&w));
            alphas.push(alpha);
            let mut against = locked_vectors.clone();
            against.extend(basis.iter().cloned());
            orthogonalise(&problem, &mut w, &against);
            let beta = dot(&w, &problem.mass_times(&w)).max(0.0).sqrt();
            if basis.len() == limit || beta <= 1e-12 * alpha.abs().max(f64::MIN_POSITIVE) {
                break;
            }
            betas.push(beta);
            w.iter_mut().for_each(|x| *x /= beta);
            basis.push(w);
        }
        let m = alphas.len();
        let tridiagonal = DMatrix::from_fn(m, m, |i, j| {
            if i == j {
                alphas[i]
            } else if i.abs_diff(j) == 1 {
                betas[i.min(j)]
            } else {
                0.0
            }
        });
        let eigen = SymmetricEigen::new(tridiagonal);
        // Largest θ first (smallest λ).
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| {
            eigen.eigenvalues[b]
                .partial_cmp(&eigen.eigenvalues[a])
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        best_residuals.clear();
        // The count-th smallest eigenvalue locked so far (∞ while fewer are locked).
        let mut sorted: Vec<f64> = locked.iter().map(|(l, _, _)| *l).collect();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        let threshold = if sorted.len() >= count {
            sorted[count - 1]
        } else {
            f64::INFINITY
        };
        let top = order.first().map(|&i| eigen.eigenvalues[i]).unwrap_or(0.0);
        if threshold.is_finite()
            && (top <= 0.0 || shift + 1.0 / top >= threshold - 1e-9 * threshold.abs().max(scale * 1e-12))
        {
            verified = true;
            continue;
        }
        for &i in order.iter().take(count) {
            let theta = eigen.eigenvalues[i];
            if theta <= 0.0 {
                continue;
            }
            let lambda = shift + 1.0 / theta;
            if lambda >= threshold {
                break;
            }
            let mut u = vec![0.0; n];
            for (k, vector) in basis.iter().enumerate().take(m) {
                axpy_in_place(&mut u, eigen.eigenvectors[(k, i)], vector);
            }
            let ku = problem.stiffness_times(&u);
            let mu = problem.mass_times(&u);
            let residual: Vec<f64> = ku.iter().zip(&mu).map(|(a, b)| a - lambda * b).collect();
            // ‖Ku‖ for real modes; rigid (zero) modes have ‖Ku‖ ≈ 0, so the floor
            // measures them against a typical eigenvalue (mean diag K / mean diag M).
            let reference = dot(&ku, &ku).sqrt().max(1e-6 * scale * dot(&mu, &mu).sqrt());
            let relative = dot(&residual, &residual).sqrt() / reference;
            best_residuals.push(relative);
            if relative <= settings.tolerance {
                // Re-orthogonalise against the locked vectors and M-normalise before locking.
                let mut vector = u;
                orthogonalise(
                    &problem,
                    &mut vector,
                    &locked.iter().map(|(_, v, _)| v.clone()).collect::<Vec<_>>(),
                );
                let length = dot(&vector, &problem.mass_times(&vector)).sqrt();
                vector.iter_mut().for_each(|x| *x /= length);
                locked.push((lambda, vector, relative));
            } else {
                // Pairs are tried in order; a later one cannot be trusted before this one converges.
                break;
            }
        }
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
