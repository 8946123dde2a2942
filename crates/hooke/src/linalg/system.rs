//! The matrix an implicit step solves, and its factorised solve.
//!
//! A [`SystemMatrix`] is either sparse symmetric (its lower triangle on a fixed
//! pattern) plus an optional symmetric low-rank part U S Uᵀ, or a small dense
//! matrix (the r×r system of reduced coordinates). A [`SystemSolver`] factorises
//! either kind behind one interface. The sparse part goes to the sparse
//! Cholesky (its symbolic analysis kept while the pattern stays the same); the
//! low-rank part is applied by the Sherman–Morrison–Woodbury identity in the
//! form that never inverts S (which may be singular or indefinite):
//!
//!   (A + U S Uᵀ)⁻¹ = A⁻¹ − A⁻¹U (I + S UᵀA⁻¹U)⁻¹ S UᵀA⁻¹,
//!
//! with the r×r capacitance matrix C = I + S UᵀA⁻¹U factorised by LU with
//! partial pivoting. (Iterative refinement against the summed matrix was tried
//! and dropped: in working precision it raised the residual of ill-conditioned
//! cases instead of lowering it.)

use super::{FactorOf, FactorizationOutcome, LowerPattern, SparseCholesky};
use crate::error::{HookeError, Result};
use nalgebra::{DMatrix, DVector};
use std::sync::Arc;

/// What to do when the matrix turns out indefinite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IndefiniteSystem {
    /// Add a growing diagonal shift until LLᵀ succeeds (robust, but the solve
    /// is then of another matrix).
    #[default]
    Shift,
    /// Solve the matrix as it is, by LBLᵀ (sparse) or LU (dense): exact, as an
    /// indefinite solve is.
    Exact,
}

/// A symmetric low-rank matrix U S Uᵀ: U is n×r, S is r×r and symmetric.
#[derive(Clone, Debug, PartialEq)]
pub struct LowRank {
    /// U, n×r.
    pub vectors: DMatrix<f64>,
    /// S, r×r and symmetric.
    pub core: DMatrix<f64>,
}

impl LowRank {
    /// Checks the shapes and the symmetry of S.
    pub fn new(vectors: DMatrix<f64>, core: DMatrix<f64>) -> Result<LowRank> {
        let rank = vectors.ncols();
        if core.nrows() != rank || core.ncols() != rank {
            return Err(HookeError::LinearSolver {
                reason: format!(
                    "a low-rank term with {rank} vectors needs a {rank}×{rank} core, got {}×{}",
                    core.nrows(),
                    core.ncols()
                ),
            });
        }
        let scale = core.amax().max(f64::MIN_POSITIVE);
        if (&core - core.transpose()).amax() > 1e-12 * scale {
            return Err(HookeError::LinearSolver {
                reason: "the core S of a low-rank term U S Uᵀ must be symmetric".to_string(),
            });
        }
        Ok(LowRank { vectors, core })
    }

    /// r, the number of columns of U.
    pub fn rank(&self) -> usize {
        self.vectors.ncols()
    }

    /// n, the size of the matrix U S Uᵀ.
    pub fn size(&self) -> usize {
        self.vectors.nrows()
    }

    /// y += w U S Uᵀ x.
    pub fn multiply_add(&self, weight: f64, x: &[f64], y: &mut [f64]) {
        let projected = self.vectors.tr_mul(&DVector::from_column_slice(x));
        let image = &self.vectors * (&self.core * projected);
        y.iter_mut().zip(image.iter()).for_each(|(y, v)| *y += weight * v);
    }

    /// The rows `rows` of U (the term on a subset of the unknowns).
    pub fn restricted(&self, rows: &[usize]) -> LowRank {
        LowRank {
            vectors: DMatrix::from_fn(rows.len(), self.rank(), |i, j| self.vectors[(rows[i], j)]),
            core: self.core.clone(),
        }
    }

    /// The sum of two low-rank terms on the same unknowns: [U₁ U₂] blockdiag(w₁S₁, w₂S₂) [U₁ U₂]ᵀ.
    pub fn combined(parts: &[(f64, &LowRank)]) -> Option<LowRank> {
        let size = parts.first()?.1.size();
        let rank: usize = parts.iter().map(|(_, p)| p.rank()).sum();
        let mut vectors = DMatrix::zeros(size, rank);
        let mut core = DMatrix::zeros(rank, rank);
        let mut offset = 0;
        for (weight, part) in parts {
            let r = part.rank();
            vectors.columns_mut(offset, r).copy_from(&part.vectors);
            core.view_mut((offset, offset), (r, r))
                .copy_from(&(&part.core * *weight));
            offset += r;
        }
        Some(LowRank { vectors, core })
    }
}

/// The matrix of one linear system.
#[derive(Clone, Debug)]
pub enum SystemMatrix {
    /// A sparse symmetric matrix (its lower triangle on `pattern`) plus an
    /// optional low-rank part.
    Sparse {
        /// The lower-triangle pattern, shared by the systems built on it.
        pattern: Arc<LowerPattern>,
        /// The values of the pattern's entries, in its order.
        values: Vec<f64>,
        /// A low-rank part U S Uᵀ added to the sparse one; None: the sparse matrix alone.
        low_rank: Option<LowRank>,
    },
    /// A small dense symmetric matrix (reduced coordinates).
    Dense(DMatrix<f64>),
}

impl SystemMatrix {
    /// A zero sparse matrix on `pattern`.
    pub fn zeros_on(pattern: Arc<LowerPattern>) -> SystemMatrix {
        SystemMatrix::Sparse {
            values: vec![0.0; pattern.nonzeros()],
            pattern,
            low_rank: None,
        }
    }

    /// The number of unknowns (rows).
    pub fn size(&self) -> usize {
        match self {
            SystemMatrix::Sparse { pattern, .. } => pattern.size,
            SystemMatrix::Dense(a) => a.nrows(),
        }
    }

    /// y = A x.
    pub fn multiply(&self, x: &[f64], y: &mut [f64]) {
        match self {
            SystemMatrix::Sparse {
                pattern,
                values,
                low_rank,
            } => {
                pattern.symmetric_multiply(values, x, y);
                if let Some(low_rank) = low_rank {
                    low_rank.multiply_add(1.0, x, y);
                }
            }
            SystemMatrix::Dense(a) => {
                let product = a * DVector::from_column_slice(x);
                y.copy_from_slice(product.as_slice());
            }
        }
    }

    /// The diagonal, low-rank part included.
    pub fn diagonal(&self) -> Vec<f64> {
        match self {
            SystemMatrix::Dense(a) => a.diagonal().iter().copied().collect(),
            SystemMatrix::Sparse {
                pattern,
                values,
                low_rank,
            } => {
                let mut diagonal: Vec<f64> = pattern.diagonal_positions().iter().map(|&k| values[k]).collect();
                if let Some(l) = low_rank {
                    let weighted = &l.vectors * &l.core;
                    for (i, d) in diagonal.iter_mut().enumerate() {
                        *d += weighted.row(i).dot(&l.vectors.row(i));
                    }
                }
                diagonal
            }
        }
    }

    /// The matrix as a dense one (for tests and small problems).
    pub fn to_dense(&self) -> DMatrix<f64> {
        match self {
            SystemMatrix::Dense(a) => a.clone(),
            SystemMatrix::Sparse {
                pattern,
                values,
                low_rank,
            } => {
                let n = pattern.size;
                let mut a = DMatrix::zeros(n, n);
                for column in 0..n {
                    for k in pattern.column_starts[column]..pattern.column_starts[column + 1] {
                        let row = pattern.row_indices[k];
                        a[(row, column)] = values[k];
                        a[(column, row)] = values[k];
                    }
                }
                if let Some(l) = low_rank {
                    a += &l.vectors * &l.core * l.vectors.transpose();
                }
                a
            }
        }
    }
}

/// A factorised dense matrix.
enum DenseFactor {
    Cholesky(nalgebra::Cholesky<f64, nalgebra::Dyn>),
    Lu(nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>),
}

/// What the Woodbury identity needs besides A's factor.
pub(crate) struct Woodbury {
    /// A⁻¹U.
    solved_vectors: DMatrix<f64>,
    low_rank: LowRank,
    /// LU of C = I + S UᵀA⁻¹U.
    capacitance: nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>,
}

/// Factorises [`SystemMatrix`]es and solves with the last one.
#[derive(Default)]
pub struct SystemSolver {
    /// The sparse factorisation and the pattern it was analysed for.
    sparse: Option<(Arc<LowerPattern>, SparseCholesky)>,
    dense: Option<DenseFactor>,
    woodbury: Option<Woodbury>,
    /// Whether the last sparse factorisation was one offered, not computed.
    adopted: bool,
    /// Size of the factorised matrix (None before the first factorisation).
    size: Option<usize>,
}

/// Pivots below this fraction of the size of the matrix's entries mark it singular.
const SINGULAR_PIVOT_RATIO: f64 = 1e-12;

impl SystemSolver {
    /// A solver that has factorised nothing yet.
    pub fn new() -> SystemSolver {
        SystemSolver::default()
    }

    /// The sparse Cholesky for `pattern`, analysed once and reused while the pattern stays the same.
    fn sparse_for(&mut self, pattern: &Arc<LowerPattern>) -> Result<&mut SparseCholesky> {
        let reusable = self
            .sparse
            .as_ref()
            .is_some_and(|(known, _)| Arc::ptr_eq(known, pattern) || **known == **pattern);
        if !reusable {
            self.sparse = Some((pattern.clone(), SparseCholesky::analyse(pattern)?));
        }
        Ok(&mut self.sparse.as_mut().expect("set just above").1)
    }

    /// Factorises `matrix`, treating an indefinite one as `policy` says. With a
    /// low-rank part, the outcome describes the sparse part.
    pub fn factorize(&mut self, matrix: &SystemMatrix, policy: IndefiniteSystem) -> Result<FactorizationOutcome> {
        self.factorize_adopting(matrix, policy, None)
    }

    /// [`Self::factorize`], taking `offered` as the sparse part's factorisation
    /// instead when it factorised exactly these values (to the bit) on the
    /// same pattern and ordering ([`SparseCholesky::adopt`]).
    pub fn factorize_adopting(
        &mut self,
        matrix: &SystemMatrix,
        policy: IndefiniteSystem,
        offered: Option<FactorOf>,
    ) -> Result<FactorizationOutcome> {
        self.size = None;
        self.woodbury = None;
        self.dense = None;
        self.adopted = false;
        let outcome = match matrix {
            SystemMatrix::Sparse {
                pattern,
                values,
                low_rank,
            } => {
                let cholesky = self.sparse_for(pattern)?;
                let adopted = offered.is_some_and(|factor| cholesky.adopt(factor, values).is_ok());
                let outcome = match (adopted, policy) {
                    // A matrix with an LLᵀ factor is positive definite.
                    (true, _) => FactorizationOutcome::PositiveDefinite,
                    (false, IndefiniteSystem::Shift) => cholesky.factorize_or_shift(values)?,
                    (false, IndefiniteSystem::Exact) => cholesky.factorize_or_indefinite(values)?,
                };
                if let Some(low_rank) = low_rank.as_ref().filter(|l| l.rank() > 0) {
                    self.woodbury = Some(woodbury(cholesky, pattern.size, low_rank)?);
                }
                self.adopted = adopted;
                outcome
            }
            SystemMatrix::Dense(a) => {
                let (factor, outcome) = dense_factor(a, policy)?;
                self.dense = Some(factor);
                outcome
            }
        };
        self.size = Some(matrix.size());
        Ok(outcome)
    }

    /// Whether the last factorisation took an offered factor instead of
    /// computing one ([`Self::factorize_adopting`]).
    pub fn adopted(&self) -> bool {
        self.adopted
    }

    /// Solves with the last sparse factor rounded to single precision until
    /// the next factorisation ([`SparseCholesky::keep_in_single_precision`]):
    /// for a matrix that starts an iteration, such as a quasi-Newton A₀, or
    /// drives one that checks its progress (local/global). The exact factor
    /// stays available ([`Self::use_factor_in_double_precision`]).
    /// True when it applies (a supernodal LLᵀ factor without a low-rank part).
    pub fn keep_factor_in_single_precision(&mut self) -> bool {
        match (&mut self.sparse, &self.woodbury, &self.dense) {
            (Some((_, cholesky)), None, None) => cholesky.keep_in_single_precision(),
            _ => false,
        }
    }

    /// Solves read the last factorisation as computed again, if it was kept
    /// rounded ([`Self::keep_factor_in_single_precision`]).
    pub fn use_factor_in_double_precision(&mut self) {
        if let Some((_, cholesky)) = &mut self.sparse {
            cholesky.use_double_precision();
        }
    }

    /// Solves with the last factorisation, in place.
    pub fn solve_in_place(&self, rhs: &mut [f64]) -> Result<()> {
        self.solve_columns_in_place(rhs, 1)
    }

    /// Solves for `columns` right-hand sides stored row by row (entry (i, c)
    /// at i·columns + c, as a vertex's coordinates are). A sparse factor
    /// solves them in that layout; otherwise they are solved as columns.
    pub fn solve_rows_in_place(&self, rhs: &mut [f64], columns: usize) -> Result<()> {
        if let (Some((_, cholesky)), None, None) = (&self.sparse, &self.woodbury, &self.dense) {
            return cholesky.solve_rows_in_place(rhs, columns);
        }
        super::solve_rows_as_columns(rhs, columns, |by_columns| {
            self.solve_columns_in_place(by_columns, columns)
        })
    }

    /// Solves for `columns` right-hand sides stored one after the other.
    pub fn solve_columns_in_place(&self, rhs: &mut [f64], columns: usize) -> Result<()> {
        let Some(n) = self.size else {
            return Err(HookeError::LinearSolver {
                reason: "solve requested before a successful factorisation".to_string(),
            });
        };
        if rhs.len() != n * columns {
            return Err(HookeError::LinearSolver {
                reason: format!("{} right-hand-side values for {columns} columns of size {n}", rhs.len()),
            });
        }
        if let Some(factor) = &self.dense {
            let mut b = DMatrix::from_column_slice(n, columns, rhs);
            let solved = match factor {
                DenseFactor::Cholesky(c) => {
                    c.solve_mut(&mut b);
                    true
                }
                DenseFactor::Lu(lu) => lu.solve_mut(&mut b),
            };
            if !solved {
                return Err(HookeError::LinearSolver {
                    reason: "the dense system is singular".to_string(),
                });
            }
            rhs.copy_from_slice(b.as_slice());
            return Ok(());
        }
        let (_, cholesky) = self.sparse.as_ref().expect("a sparse factorisation when not dense");
        match &self.woodbury {
            None => cholesky.solve_columns_in_place(rhs, columns),
            Some(w) => w.solve(cholesky, rhs, columns),
        }
    }
}

impl Woodbury {
    /// x = y − A⁻¹U C⁻¹ S Uᵀ y with y = A⁻¹ b, for each column.
    pub(crate) fn solve(&self, cholesky: &SparseCholesky, rhs: &mut [f64], columns: usize) -> Result<()> {
        cholesky.solve_columns_in_place(rhs, columns)?;
        let n = self.solved_vectors.nrows();
        for y in rhs.chunks_mut(n).take(columns) {
            let projected = self.low_rank.vectors.tr_mul(&DVector::from_column_slice(y));
            let mut z = &self.low_rank.core * projected;
            if !self.capacitance.solve_mut(&mut z) {
                return Err(singular_capacitance());
            }
            let correction = &self.solved_vectors * z;
            y.iter_mut().zip(correction.iter()).for_each(|(y, c)| *y -= c);
        }
        Ok(())
    }
}

fn singular_capacitance() -> HookeError {
    HookeError::LinearSolver {
        reason: "the low-rank part makes the system singular: its capacitance matrix I + S UᵀA⁻¹U is singular to working precision".to_string(),
    }
}

/// Prepares the Woodbury solve for A (factorised in `cholesky`) plus `low_rank`.
pub(crate) fn woodbury(cholesky: &SparseCholesky, n: usize, low_rank: &LowRank) -> Result<Woodbury> {
    if low_rank.size() != n {
        return Err(HookeError::LinearSolver {
            reason: format!("a low-rank part of size {} on a {n}×{n} system", low_rank.size()),
        });
    }
    let rank = low_rank.rank();
    let mut solved = low_rank.vectors.clone();
    cholesky.solve_columns_in_place(solved.as_mut_slice(), rank)?;
    let coupling = &low_rank.core * low_rank.vectors.tr_mul(&solved);
    // Pivots are measured against the size of the terms that were summed.
    let scale = 1.0 + coupling.amax();
    let lu = (DMatrix::identity(rank, rank) + coupling).lu();
    let pivots = lu.u().diagonal().map(f64::abs);
    if pivots.min() <= SINGULAR_PIVOT_RATIO * scale || !pivots.iter().all(|p| p.is_finite()) {
        return Err(singular_capacitance());
    }
    Ok(Woodbury {
        solved_vectors: solved,
        low_rank: low_rank.clone(),
        capacitance: lu,
    })
}

/// Cholesky of a dense symmetric matrix; an indefinite one is shifted or LU-factorised per `policy`.
fn dense_factor(a: &DMatrix<f64>, policy: IndefiniteSystem) -> Result<(DenseFactor, FactorizationOutcome)> {
    if !a.iter().all(|v| v.is_finite()) {
        return Err(HookeError::LinearSolver {
            reason: "the dense system has non-finite entries".to_string(),
        });
    }
    if let Some(c) = a.clone().cholesky() {
        return Ok((DenseFactor::Cholesky(c), FactorizationOutcome::PositiveDefinite));
    }
    match policy {
        IndefiniteSystem::Exact => {
            let lu = a.clone().lu();
            let pivots = lu.u().diagonal().map(f64::abs);
            if pivots.min() <= SINGULAR_PIVOT_RATIO * a.amax() {
                return Err(HookeError::LinearSolver {
                    reason: "the dense system is singular to working precision".to_string(),
                });
            }
            Ok((DenseFactor::Lu(lu), FactorizationOutcome::Indefinite))
        }
        IndefiniteSystem::Shift => {
            let n = a.nrows();
            let mean = a.diagonal().iter().map(|d| d.abs()).sum::<f64>() / n.max(1) as f64;
            let mut shift = 1e-8;
            for attempt in 1..=30 {
                let shifted = a + DMatrix::identity(n, n) * (shift * mean);
                if let Some(c) = shifted.cholesky() {
                    return Ok((
                        DenseFactor::Cholesky(c),
                        FactorizationOutcome::Shifted {
                            shift,
                            attempts: attempt,
                        },
                    ));
                }
                shift *= 10.0;
            }
            Err(HookeError::LinearSolver {
                reason: "dense matrix stays indefinite even after a diagonal shift of 1e22 × its mean diagonal"
                    .to_string(),
            })
        }
    }
}
