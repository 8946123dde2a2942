//! The smallest eigenpairs of the generalized problem K u = λ M u (K, M sparse
//! symmetric, M positive definite), by shift-invert block Lanczos.
//!
//! With K − σM = LLᵀ for a shift σ below the wanted eigenvalues, the operator
//! T = (K − σM)⁻¹M is self-adjoint in the M-inner product with eigenvalues
//! θ = 1/(λ − σ): the smallest λ become the largest, best separated θ, which
//! Lanczos finds first. The Krylov space grows a block of vectors at a time,
//! so each pass over the Cholesky factor serves a whole block (one solve with
//! b right-hand sides costs little more than two single solves), and a block
//! of b random starts resolves eigenvalues of multiplicity up to b (the six
//! zero modes of a free body, the bending pairs of a symmetric beam), which a
//! single Krylov sequence cannot. Lanczos runs in the M-inner product with
//! full reorthogonalisation and thick restarts: when the space is full, the
//! best Ritz vectors are kept (with their images under T, so no solve is
//! repeated) and the next block is their residuals. Converged pairs are
//! locked and the space is kept M-orthogonal to them; a final fresh random
//! block checks that no eigenvalue was missed. Eigenvectors come out
//! M-orthonormal; convergence is judged by the true residual ‖Ku − λMu‖ / ‖Ku‖.
//!
//! K may have a low-rank part Y S Yᵀ besides its sparse one (EigenFit's
//! correction): the sparse part's factor then serves (K − σM)⁻¹ through the
//! Sherman–Morrison–Woodbury identity, and products with K add Y S Yᵀ x.

use super::kernels::dot;
use super::orthonormal::{axpy_in_place, MOrthonormal};
use super::system::{woodbury, Woodbury};
use super::{LowRank, LowerPattern, SparseCholesky};
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
    /// Vectors in the search space before a thick restart (at least the
    /// number of wanted pairs plus two blocks).
    pub krylov_dimension: usize,
    /// Vectors per block; 0 chooses 4, or the number of warm-start vectors if
    /// more. On a 54k-unknown bar a solve with 4 right-hand sides costs 2.2×
    /// one with a single one, and blocks of 3–6 converged in the fewest solve
    /// passes; eigenvalues of higher multiplicity (six zero modes) are still
    /// found, through locking and restarts.
    pub block_size: usize,
    /// Restarts at the most.
    pub max_restarts: usize,
    /// Start vectors (for example the previous step's eigenvectors): they form
    /// the first block (filled up with random vectors), so the first Krylov
    /// space already holds all of them.
    pub warm_start: Vec<Vec<f64>>,
    /// Once `count` pairs have converged, expand one more random block to make
    /// sure no smaller eigenvalue was missed (a further copy of a repeated one).
    /// A caller that only needs eigenpairs near the bottom, not provably the
    /// lowest (SIERE's per-step split), can skip it.
    pub verify_complete: bool,
}

impl Default for EigenSettings {
    fn default() -> Self {
        EigenSettings {
            shift: None,
            tolerance: 1e-9,
            krylov_dimension: 30,
            block_size: 0,
            max_restarts: 50,
            warm_start: Vec::new(),
            verify_complete: true,
        }
    }
}

/// Eigenpairs in increasing order of eigenvalue.
#[derive(Clone, Debug)]
pub struct EigenPairs {
    /// The eigenvalues λ of K u = λ M u, increasing (for a stiffness and a mass, ω² in (rad/s)²).
    pub values: Vec<f64>,
    /// M-orthonormal eigenvectors.
    pub vectors: Vec<Vec<f64>>,
    /// ‖Ku − λMu‖ / ‖Ku‖ of each pair (against 1e-6 × a typical eigenvalue × ‖Mu‖ for zero modes).
    /// A pair is accepted below the tolerance, or when its residual is at rounding level
    /// (100 ε (‖K‖∞ + |λ|‖M‖∞)‖u‖), which stiff heterogeneous bodies reach first.
    pub residuals: Vec<f64>,
    /// The shift used.
    pub shift: f64,
    /// Vectors to which (K − σM)⁻¹M was applied.
    pub solves: usize,
    /// Passes over the Cholesky factor (block solves, each serving up to a block of vectors).
    pub block_solves: usize,
}

struct Problem<'a> {
    pattern: &'a LowerPattern,
    stiffness: &'a [f64],
    /// K's low-rank part, if any, and what solving with it needs.
    low_rank: Option<(&'a LowRank, Woodbury)>,
    mass: &'a [f64],
    /// M's diagonal when M is diagonal (a lumped mass): then M x is a scaling.
    diagonal_mass: Option<Vec<f64>>,
    factor: &'a SparseCholesky,
}

impl Problem<'_> {
    fn mass_times(&self, x: &[f64]) -> Vec<f64> {
        match &self.diagonal_mass {
            Some(d) => x.iter().zip(d).map(|(x, d)| x * d).collect(),
            None => {
                let mut y = vec![0.0; x.len()];
                self.pattern.symmetric_multiply(self.mass, x, &mut y);
                y
            }
        }
    }

    fn stiffness_times(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; x.len()];
        self.pattern.symmetric_multiply(self.stiffness, x, &mut y);
        if let Some((low_rank, _)) = &self.low_rank {
            low_rank.multiply_add(1.0, x, &mut y);
        }
        y
    }

    /// T X = (K − σM)⁻¹ M X for a block, given M X: one pass over the factor.
    fn operator(&self, mass_block: &[Vec<f64>]) -> Result<Vec<Vec<f64>>> {
        let n = self.pattern.size;
        let mut stacked: Vec<f64> = mass_block.iter().flatten().copied().collect();
        match &self.low_rank {
            Some((_, woodbury)) => woodbury.solve(self.factor, &mut stacked, mass_block.len())?,
            None => self.factor.solve_columns_in_place(&mut stacked, mass_block.len())?,
        }
        Ok(stacked.chunks(n).map(<[f64]>::to_vec).collect())
    }
}

/// An M-orthonormal search space Q with M Q, T Q and H = Qᵀ M T Q.
#[derive(Default)]
struct SearchSpace {
    basis: MOrthonormal,
    images: Vec<Vec<f64>>,
    projected: DMatrix<f64>,
}

impl SearchSpace {
    fn len(&self) -> usize {
        self.basis.vectors.len()
    }

    /// H, symmetrised.
    fn projected(&self) -> DMatrix<f64> {
        (&self.projected + self.projected.transpose()) * 0.5
    }

    /// Adds the candidates made M-orthogonal to `locked`, the space and each
    /// other (classical Gram–Schmidt, twice) and M-normalised; a candidate that
    /// lies (numerically) in the span is replaced once by a random vector. The
    /// images T v of the block come from one block solve, and H gains the new
    /// rows and columns. Returns how many vectors were added.
    fn add_block(
        &mut self,
        problem: &Problem,
        candidates: Vec<Vec<f64>>,
        locked: &MOrthonormal,
        random: &mut dyn FnMut() -> Vec<f64>,
        counts: &mut (usize, usize),
    ) -> Result<usize> {
        let mut block = MOrthonormal::default();
        let mass_times = |x: &[f64]| problem.mass_times(x);
        for candidate in candidates {
            if !block.append(candidate, &[locked, &self.basis], mass_times) {
                block.append(random(), &[locked, &self.basis], mass_times);
            }
        }
        let added = block.vectors.len();
        if added == 0 {
            return Ok(0);
        }
        // The deflated operator: T v without its components along the locked
        // eigenvectors, which T would amplify (a zero mode by 1/|σ|) into H.
        let mut images = problem.operator(&block.mass_vectors)?;
        for image in &mut images {
            locked.project_out(image);
        }
        counts.0 += added;
        counts.1 += 1;
        let m = self.len();
        let mut projected = DMatrix::zeros(m + added, m + added);
        projected.view_mut((0, 0), (m, m)).copy_from(&self.projected);
        let all_mass: Vec<&Vec<f64>> = self.basis.mass_vectors.iter().chain(&block.mass_vectors).collect();
        for (j, image) in images.iter().enumerate() {
            for (i, mass_q) in all_mass.iter().enumerate() {
                let value = dot(mass_q, image);
                projected[(i, m + j)] = value;
                projected[(m + j, i)] = value;
            }
        }
        self.projected = projected;
        self.basis.vectors.extend(block.vectors);
        self.basis.mass_vectors.extend(block.mass_vectors);
        self.images.extend(images);
        Ok(added)
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
    smallest_eigenpairs_with_low_rank(factor, (pattern, stiffness, None), mass, count, settings)
}

/// Restarts that do not bring the relative residual 10% below its best so
/// far, after which a pair at a rounding-level backward error is taken as
/// converged.
const STALL_CYCLES: usize = 8;

/// How far above the tolerance a stalled pair may be and still count as
/// converged. Pairs are locked at the tolerance, and later pairs are kept
/// M-orthogonal to them: in a cluster of equal eigenvalues (a free body's six
/// rigid modes, of which SIERE may want five) a later member inherits the
/// locked members' error and stalls at a few times the tolerance, however
/// long it iterates. Measured: 1.7× on a falling bar, 72× after a pinned bar's
/// release, whose rotations are split from its translations by gravity's
/// geometric stiffness.
const STALL_TOLERANCE_FACTOR: f64 = 1e3;

/// The progress of the first pair not yet converged, over restarts.
#[derive(Default)]
struct Stall {
    best: Option<f64>,
    cycles: usize,
}

impl Stall {
    /// Records this restart's relative residual of the pair; whether it has
    /// stalled within [`STALL_TOLERANCE_FACTOR`] × `tolerance`.
    fn observe(&mut self, relative: f64, tolerance: f64) -> bool {
        match self.best {
            Some(best) if relative > 0.9 * best => self.cycles += 1,
            _ => {
                self.best = Some(relative);
                self.cycles = 0;
            }
        }
        self.cycles >= STALL_CYCLES && relative <= STALL_TOLERANCE_FACTOR * tolerance
    }
}

/// As [`smallest_eigenpairs_reusing`] for K = its sparse part (lower-triangle
/// values on the pattern) plus an optional low-rank part Y S Yᵀ on the same
/// unknowns. The shift must keep the whole of K − σM positive definite; it is
/// chosen for the sparse part, which the low-rank part of a stiffness
/// correction (EigenFit) keeps so as long as its eigenvalues stay positive.
///
/// One function of about 270 lines: the block shift-invert Lanczos iteration keeps its basis, its
/// Ritz pairs, the shift and the restart state together across thick restarts; split, each part
/// would take most of them as arguments.
pub fn smallest_eigenpairs_with_low_rank(
    factor: &mut Option<SparseCholesky>,
    (pattern, stiffness, low_rank): (&LowerPattern, &[f64], Option<&LowRank>),
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
    let low_rank = match low_rank.filter(|l| l.rank() > 0) {
        Some(l) => Some((l, woodbury(cholesky, n, l)?)),
        None => None,
    };
    let problem = Problem {
        pattern,
        stiffness,
        low_rank,
        mass,
        diagonal_mass: pattern.diagonal_if_diagonal(mass),
        factor: cholesky,
    };

    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut next_random = move || -> Vec<f64> {
        (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
            })
            .collect()
    };
    let mut next_block: Vec<Vec<f64>> = settings.warm_start.iter().filter(|s| s.len() == n).cloned().collect();
    // Every warm-start vector goes into the first block, and all blocks are alike.
    let block_size = match settings.block_size {
        0 => 4,
        b => b,
    }
    .max(next_block.len())
    .min(n);
    let dimension = settings.krylov_dimension.max(count + 2 * block_size).min(n);
    // Locked pairs: the M-orthonormal eigenvectors, with their eigenvalues and residuals.
    let mut locked = MOrthonormal::default();
    let mut locked_values: Vec<(f64, f64)> = Vec::new();
    let mut best_residuals = Vec::new();
    // The search space: M-orthonormal Q (orthogonal to the locked vectors), with
    // M Q, T Q and H = Qᵀ M T Q kept up to date, so that a restart keeps the best
    // Ritz vectors without any new solve (a thick restart).
    let mut space = SearchSpace::default();
    let mut counts = (0, 0); // (vectors solved, block solves)
    let mut verified = false;
    // Once `count` pairs are locked, one fresh random space checks that nothing
    // smaller was missed (a further copy of a repeated eigenvalue that the
    // first Krylov space could not contain).
    let mut verifying = false;
    let mut stall = Stall::default();
    for _cycle in 0..settings.max_restarts {
        if locked_values.len() >= count && (verified || !settings.verify_complete) {
            break;
        }
        // A verification space needs fewer vectors: any eigenvalue below the
        // threshold stands out after a few shift-invert steps.
        let wanted_dimension = if verifying {
            (3 * block_size).min(dimension)
        } else {
            dimension
        };
        let limit = wanted_dimension.min(n - locked_values.len());
        // Grow the block Krylov space: each block is T applied to the block
        // before (after a restart, the residuals of the kept Ritz vectors); the
        // first is the warm start filled up with random vectors.
        while space.len() < limit {
            // Whole blocks only (the space may pass `limit` by less than a block):
            // the next block must be T of everything whose image is not yet in
            // the space, or the Ritz residuals would leave its span.
            let room = block_size.min(n - locked_values.len() - space.len());
            let mut candidates: Vec<Vec<f64>> = std::mem::take(&mut next_block);
            candidates.truncate(room);
            while candidates.len() < room {
                candidates.push(next_random());
            }
            let before = space.len();
            let added = space.add_block(&problem, candidates, &locked, &mut next_random, &mut counts)?;
            if added == 0 {
                break;
            }
            next_block = space.images[before..].to_vec();
        }
        // The next Lanczos block: the last block's images made M-orthogonal to
        // the whole space. The residuals of all Ritz vectors lie in its span,
        // and computed this way (rather than as T y − θ y for a converging y,
        // which cancels to rounding noise) it keeps full precision.
        for image in &mut next_block {
            for _ in 0..2 {
                space.basis.project_out(image);
            }
        }
        let m = space.len();
        if m == 0 {
            break;
        }
        let eigen = SymmetricEigen::new(space.projected());
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
        let mut sorted: Vec<f64> = locked_values.iter().map(|(l, _)| *l).collect();
        sorted.sort_by(f64::total_cmp);
        let threshold = if sorted.len() >= count {
            sorted[count - 1]
        } else {
            f64::INFINITY
        };
        best_residuals.clear();
        let mut newly_locked = Vec::new();
        let mut newly = MOrthonormal::default();
        for &i in order.iter().take(count) {
            let theta = eigen.eigenvalues[i];
            if theta <= 0.0 {
                break;
            }
            let lambda = shift + 1.0 / theta;
            if lambda >= threshold - 1e-9 * threshold.abs().max(scale * 1e-12) {
                break;
            }
            let u = ritz(i, &space.basis.vectors);
            let ku = problem.stiffness_times(&u);
            let mu = ritz(i, &space.basis.mass_vectors);
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
            let converged = relative <= settings.tolerance || residual_norm <= attainable;
            // A pair that has stopped improving near the tolerance is as
            // converged as the pairs locked before it let it be (see
            // STALL_TOLERANCE_FACTOR); its residual is reported as it is.
            let stalled = !converged && stall.observe(relative, settings.tolerance);
            if converged || stalled {
                if stalled {
                    stall = Stall::default();
                }
                // Ritz vectors of one space are M-orthogonal already; once more
                // against the locked ones removes the drift of many restarts.
                let mut vector = u;
                locked.project_out(&mut vector);
                let mass_vector = problem.mass_times(&vector);
                let length = dot(&vector, &mass_vector).sqrt();
                newly.vectors.push(vector.iter().map(|x| x / length).collect());
                newly
                    .mass_vectors
                    .push(mass_vector.iter().map(|x| x / length).collect());
                locked_values.push((lambda, relative));
                newly_locked.push(i);
            } else {
                // Pairs are taken in order; a later one cannot be trusted before this one converges.
                break;
            }
        }
        locked.vectors.extend(newly.vectors);
        locked.mass_vectors.extend(newly.mass_vectors);
        if verifying && newly_locked.is_empty() {
            verified = true;
        }
        if locked_values.len() >= count && settings.verify_complete && !verified {
            // Start the check from a fresh random block.
            verifying = true;
            space = SearchSpace::default();
            next_block.clear();
            continue;
        }
        // Thick restart: keep the best unconverged Ritz vectors (no new solves);
        // the next block is their images, whose new directions are their residuals.
        let keep = (count.saturating_sub(locked_values.len()) + block_size)
            .min(m.saturating_sub(block_size).max(m / 2))
            .max(1);
        let kept: Vec<usize> = order
            .iter()
            .copied()
            .filter(|i| !newly_locked.contains(i))
            .take(keep)
            .collect();
        let kept_values: Vec<f64> = kept.iter().map(|&i| eigen.eigenvalues[i]).collect();
        space = SearchSpace {
            basis: MOrthonormal {
                vectors: kept.iter().map(|&i| ritz(i, &space.basis.vectors)).collect(),
                mass_vectors: kept.iter().map(|&i| ritz(i, &space.basis.mass_vectors)).collect(),
            },
            images: kept.iter().map(|&i| ritz(i, &space.images)).collect(),
            projected: DMatrix::from_diagonal(&nalgebra::DVector::from_vec(kept_values)),
        };
    }
    if locked_values.len() < count {
        return Err(HookeError::LinearSolver {
            reason: format!(
                "found {} of {count} eigenpairs; residuals of the rest reached {:?} (tolerance {:e})",
                locked_values.len(),
                best_residuals,
                settings.tolerance
            ),
        });
    }
    let mut order: Vec<usize> = (0..locked_values.len()).collect();
    order.sort_by(|&a, &b| locked_values[a].0.total_cmp(&locked_values[b].0));
    order.truncate(count);
    Ok(EigenPairs {
        values: order.iter().map(|&i| locked_values[i].0).collect(),
        residuals: order.iter().map(|&i| locked_values[i].1).collect(),
        vectors: order.iter().map(|&i| std::mem::take(&mut locked.vectors[i])).collect(),
        shift,
        solves: counts.0,
        block_solves: counts.1,
    })
}

/// Relative gap between eigenvalues below which [`near_equal_runs`] counts
/// them as one: 2% in λ, 1% in frequency. Within such a run the eigenvectors
/// are any basis of the subspace the run spans, as far as a method that
/// cannot tell the eigenvalues apart is concerned.
pub const NEAR_EQUAL_GAP: f64 = 0.02;

/// Runs of consecutive eigenvalues (given increasing) each within
/// [`NEAR_EQUAL_GAP`] of the run's first, every value of magnitude at most
/// `zero_below` counting as zero (a free body's rigid motions are one run).
///
/// ```
/// use hooke::linalg::near_equal_runs;
/// // Two rigid motions (zero to rounding), a pair 1.25 % apart, and one alone.
/// let runs = near_equal_runs(&[-3e-14, 1e-14, 4.0, 4.05, 9.0], 1e-9);
/// assert_eq!(runs, vec![vec![0, 1], vec![2, 3], vec![4]]);
/// ```
pub fn near_equal_runs(values: &[f64], zero_below: f64) -> Vec<Vec<usize>> {
    let mut runs: Vec<Vec<usize>> = Vec::new();
    let mut first = f64::NAN;
    for (j, &value) in values.iter().enumerate() {
        let value = if value.abs() <= zero_below { 0.0 } else { value };
        match runs.last_mut() {
            Some(run) if (value - first).abs() <= NEAR_EQUAL_GAP * first.abs().max(zero_below) => run.push(j),
            _ => {
                runs.push(vec![j]);
                first = value;
            }
        }
    }
    runs
}
