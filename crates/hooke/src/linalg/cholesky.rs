//! Sparse Cholesky (LLᵀ) on faer, keeping the symbolic factorisation (ordering
//! and elimination tree) across refactorisations of the same pattern. Large
//! matrices are ordered by nested dissection ([`super::ordering`]).

use super::ordering::{nested_dissection, Permutation};
use super::supernodal_solve::{self, Layout, SupernodalSolve};
use super::LowerPattern;
use crate::error::{HookeError, Result};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::perm::PermRef;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, IntranodeLbltRef, LltRef, SymbolicCholesky,
    SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Side};

/// Whether a factorisation succeeded as it was, or needed a diagonal shift.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FactorizationOutcome {
    /// The matrix was positive definite and factorised as it is.
    PositiveDefinite,
    /// The matrix was not positive definite; `shift` times its mean diagonal was added.
    Shifted {
        /// The multiple of the mean absolute diagonal added (1e-8, growing tenfold per attempt).
        shift: f64,
        /// Shifted factorisations tried, the successful one included.
        attempts: usize,
    },
    /// The matrix was not positive definite and was factorised as it is, by
    /// LBLᵀ with Bunch–Kaufman pivoting inside each supernode.
    Indefinite,
}

/// The numeric factor held: none, LLᵀ, or LBLᵀ (B block diagonal with 1×1 and
/// 2×2 blocks, stored as L's diagonal and `subdiagonal`, with the pivoting permutation).
enum Factor {
    None,
    Cholesky,
    BunchKaufman {
        subdiagonal: Vec<f64>,
        forward: Vec<usize>,
        inverse: Vec<usize>,
    },
}

/// Factors with fewer entries than this are computed on one thread.
const SEQUENTIAL_FACTOR_ENTRIES: usize = 1_000_000;

/// A reusable LLᵀ factorisation of a fixed lower-triangle pattern.
pub struct SparseCholesky {
    pattern: LowerPattern,
    symbolic: SymbolicCholesky<usize>,
    /// Hooke's own triangular solves, for a supernodal factor.
    supernodal: Option<SupernodalSolve>,
    /// The reciprocals of the LLᵀ factor's diagonal, for those solves.
    reciprocal_diagonal: Vec<f64>,
    /// The factor rounded to single precision, when solves are to use it
    /// ([`SparseCholesky::keep_in_single_precision`]).
    single: Option<Vec<f32>>,
    /// The factor's values, valid unless `kind` is `Factor::None`.
    factor: Vec<f64>,
    kind: Factor,
}

impl SparseCholesky {
    /// Analyses the pattern (fill-reducing ordering, symbolic factor) once.
    pub fn analyse(pattern: &LowerPattern) -> Result<Self> {
        let dissection: Option<Permutation> = nested_dissection(pattern);
        let ordering = match &dissection {
            Some(p) => SymmetricOrdering::Custom(PermRef::new_checked(&p.forward, &p.inverse, pattern.size)),
            None => SymmetricOrdering::Amd,
        };
        let symbolic = factorize_symbolic_cholesky(
            symbolic_view(pattern),
            Side::Lower,
            ordering,
            CholeskySymbolicParams::default(),
        )
        .map_err(|e| HookeError::LinearSolver {
            reason: format!("symbolic factorisation failed: {e:?}"),
        })?;
        let supernodal = match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(structure) => SupernodalSolve::new(structure),
            SymbolicCholeskyRaw::Simplicial(_) => None,
        };
        Ok(SparseCholesky {
            pattern: pattern.clone(),
            factor: Vec::new(),
            supernodal,
            reciprocal_diagonal: Vec::new(),
            single: None,
            symbolic,
            kind: Factor::None,
        })
    }

    /// A small factor is faster on one thread: its supernodes are too small
    /// to repay the hand-offs (measured: 1,836 unknowns with 170k factor
    /// entries, 2.8 → 1.5 ms; 4,410 unknowns with 859k entries, the same
    /// either way; 38k unknowns, two threads 1.4× faster).
    fn factorisation_parallelism(&self) -> faer::Par {
        match self.symbolic.len_val() < SEQUENTIAL_FACTOR_ENTRIES {
            true => faer::Par::Seq,
            false => faer::get_global_parallelism(),
        }
    }

    /// The lower-triangle pattern it factorises.
    pub fn pattern(&self) -> &LowerPattern {
        &self.pattern
    }

    /// Entries of the Cholesky factor (its fill), as the ordering left it.
    pub fn factor_entries(&self) -> usize {
        self.symbolic.len_val()
    }

    /// Factorises the matrix with these values; fails if it is not positive definite.
    pub fn factorize(&mut self, values: &[f64]) -> Result<()> {
        let parallelism = self.factorisation_parallelism();
        self.kind = Factor::None;
        self.single = None;
        self.factor.resize(self.symbolic.len_val(), 0.0);
        let mut buffer = workspace(
            self.symbolic
                .factorize_numeric_llt_scratch::<f64>(parallelism, Default::default()),
        )?;
        let matrix = SparseColMatRef::new(symbolic_view(&self.pattern), values);
        let outcome = self.symbolic.factorize_numeric_llt(
            &mut self.factor,
            matrix,
            Side::Lower,
            Default::default(),
            parallelism,
            MemStack::new(&mut buffer),
            Default::default(),
        );
        match outcome {
            Ok(_) => {
                self.kind = Factor::Cholesky;
                if let Some(supernodal) = &self.supernodal {
                    self.reciprocal_diagonal = supernodal.reciprocal_diagonal(&self.factor);
                }
                Ok(())
            }
            Err(e) => Err(HookeError::LinearSolver {
                reason: format!("matrix is not positive definite ({e:?})"),
            }),
        }
    }

    /// Factorises, and where the matrix is indefinite adds a growing multiple of
    /// its mean diagonal (a Levenberg-style shift) until it factorises. The shift
    /// keeps Newton directions descending; the outcome tells the caller so it can report it.
    pub fn factorize_or_shift(&mut self, values: &[f64]) -> Result<FactorizationOutcome> {
        if self.factorize(values).is_ok() {
            return Ok(FactorizationOutcome::PositiveDefinite);
        }
        let diagonal = self.pattern.diagonal_positions();
        let mean_diagonal = diagonal.iter().map(|&k| values[k].abs()).sum::<f64>() / diagonal.len().max(1) as f64;
        let mut shifted = values.to_vec();
        let mut shift = 1e-8;
        for attempt in 1..=30 {
            for &k in &diagonal {
                shifted[k] = values[k] + shift * mean_diagonal;
            }
            if self.factorize(&shifted).is_ok() {
                return Ok(FactorizationOutcome::Shifted {
                    shift,
                    attempts: attempt,
                });
            }
            shift *= 10.0;
        }
        Err(HookeError::LinearSolver {
            reason: "matrix stays indefinite even after a diagonal shift of 1e22 × its mean diagonal".to_string(),
        })
    }

    /// Factorises as LLᵀ, or where the matrix is indefinite factorises it as it
    /// is (LBLᵀ): for solves that must be exact on an indefinite matrix, where a
    /// shift would change the answer.
    pub fn factorize_or_indefinite(&mut self, values: &[f64]) -> Result<FactorizationOutcome> {
        if self.factorize(values).is_ok() {
            return Ok(FactorizationOutcome::PositiveDefinite);
        }
        let n = self.pattern.size;
        let parallelism = self.factorisation_parallelism();
        self.factor.resize(self.symbolic.len_val(), 0.0);
        let (mut subdiagonal, mut forward, mut inverse) = (vec![0.0; n], vec![0usize; n], vec![0usize; n]);
        let mut buffer = workspace(
            self.symbolic
                .factorize_numeric_intranode_lblt_scratch::<f64>(parallelism, Default::default()),
        )?;
        self.symbolic.factorize_numeric_intranode_lblt(
            &mut self.factor,
            &mut subdiagonal,
            &mut forward,
            &mut inverse,
            SparseColMatRef::new(symbolic_view(&self.pattern), values),
            Side::Lower,
            parallelism,
            MemStack::new(&mut buffer),
            Default::default(),
        );
        if !self.factor.iter().chain(&subdiagonal).all(|v| v.is_finite()) {
            return Err(HookeError::LinearSolver {
                reason: "the indefinite matrix is singular (LBLᵀ produced non-finite values)".to_string(),
            });
        }
        self.kind = Factor::BunchKaufman {
            subdiagonal,
            forward,
            inverse,
        };
        Ok(FactorizationOutcome::Indefinite)
    }

    /// Solves A x = b in place with the last successful factorisation.
    pub fn solve_in_place(&self, rhs: &mut [f64]) -> Result<()> {
        self.solve_columns_in_place(rhs, 1)
    }

    /// Solves A X = B in place for `columns` right-hand sides stored one after
    /// the other (column-major). One pass over the factor serves them all, so
    /// a block of k costs far less than k single solves.
    pub fn solve_columns_in_place(&self, rhs: &mut [f64], columns: usize) -> Result<()> {
        self.solve_laid_out(rhs, columns, Layout::Columns)
    }

    /// The same for right-hand sides stored row by row (entry (i, c) at
    /// i·columns + c), as a vertex's coordinates are.
    pub fn solve_rows_in_place(&self, rhs: &mut [f64], columns: usize) -> Result<()> {
        self.solve_laid_out(rhs, columns, Layout::Rows)
    }

    fn solve_laid_out(&self, rhs: &mut [f64], columns: usize, layout: Layout) -> Result<()> {
        let n = self.pattern.size;
        if matches!(self.kind, Factor::None) {
            return Err(HookeError::LinearSolver {
                reason: "solve requested before a successful factorisation".to_string(),
            });
        }
        if rhs.len() != n * columns {
            return Err(HookeError::LinearSolver {
                reason: format!("{} right-hand-side values for {columns} columns of size {n}", rhs.len()),
            });
        }
        if columns == 0 {
            return Ok(());
        }
        if let (Factor::Cholesky, Some(supernodal)) = (&self.kind, &self.supernodal) {
            self.solve_supernodal(supernodal, rhs, columns, layout);
            return Ok(());
        }
        if layout == Layout::Rows {
            return super::solve_rows_as_columns(rhs, columns, |by_columns| {
                self.solve_laid_out(by_columns, columns, Layout::Columns)
            });
        }
        // faer's triangular solves are sequential: split across threads, the small
        // dense blocks of each supernode cost more in scheduling than they
        // gain (measured: 16.5 ms against 1.15 ms for a 3,960-unknown factor
        // with 3 right-hand sides, on 2 cores).
        let parallelism = faer::Par::Seq;
        let mut buffer = workspace(self.symbolic.solve_in_place_scratch::<f64>(columns, parallelism))?;
        let block = MatMut::from_column_major_slice_mut(rhs, n, columns);
        let stack = MemStack::new(&mut buffer);
        match &self.kind {
            Factor::None => unreachable!("checked above"),
            Factor::Cholesky => {
                LltRef::new(&self.symbolic, &self.factor).solve_in_place_with_conj(Conj::No, block, parallelism, stack)
            }
            Factor::BunchKaufman {
                subdiagonal,
                forward,
                inverse,
            } => IntranodeLbltRef::new(
                &self.symbolic,
                &self.factor,
                subdiagonal,
                PermRef::new_checked(forward, inverse, n),
            )
            .solve_in_place_with_conj(Conj::No, block, parallelism, stack),
        }
        Ok(())
    }
}

/// An LLᵀ factorisation taken out of one [`SparseCholesky`] with the matrix
/// values it factorised, for another analysis of the same pattern to solve
/// with instead of factorising those values again
/// ([`SparseCholesky::take_factor`], [`SparseCholesky::adopt`]).
pub struct FactorOf(Box<Taken>);

struct Taken {
    /// The lower-triangle values factorised.
    values: Vec<f64>,
    pattern: LowerPattern,
    /// The fill-reducing ordering it was computed under (forward).
    ordering: Option<Vec<usize>>,
    factor: Vec<f64>,
    reciprocal_diagonal: Vec<f64>,
}

impl SparseCholesky {
    fn ordering(&self) -> Option<Vec<usize>> {
        self.symbolic.perm().map(|p| p.arrays().0.to_vec())
    }

    /// Moves the last LLᵀ factorisation out (leaving none here), labelled
    /// with `values`, the matrix it factorised; None when there is no LLᵀ
    /// factor or the values do not fit the pattern.
    pub fn take_factor(&mut self, values: Vec<f64>) -> Option<FactorOf> {
        if !matches!(self.kind, Factor::Cholesky) || values.len() != self.pattern.nonzeros() {
            return None;
        }
        self.kind = Factor::None;
        self.single = None;
        Some(FactorOf(Box::new(Taken {
            values,
            pattern: self.pattern.clone(),
            ordering: self.ordering(),
            factor: std::mem::take(&mut self.factor),
            reciprocal_diagonal: std::mem::take(&mut self.reciprocal_diagonal),
        })))
    }

    /// Takes `taken` as the factorisation of `values` when it is one: the
    /// same pattern and ordering, and values equal to the bit. Otherwise
    /// changes nothing and gives it back.
    pub fn adopt(&mut self, taken: FactorOf, values: &[f64]) -> std::result::Result<(), FactorOf> {
        let FactorOf(inner) = &taken;
        let same = inner.pattern == self.pattern
            && inner.factor.len() == self.symbolic.len_val()
            && inner.values.len() == values.len()
            && inner.values.iter().zip(values).all(|(a, b)| a.to_bits() == b.to_bits())
            && inner.ordering == self.ordering();
        if !same {
            return Err(taken);
        }
        let Taken {
            factor,
            reciprocal_diagonal,
            ..
        } = *taken.0;
        self.factor = factor;
        self.reciprocal_diagonal = reciprocal_diagonal;
        self.single = None;
        self.kind = Factor::Cholesky;
        Ok(())
    }
}

impl SparseCholesky {
    /// Solves with the last LLᵀ factor rounded to single precision from now
    /// on (until the next factorisation), for matrices that precondition or
    /// start an iteration, or drive one that checks its own progress
    /// (local/global checks that Φ falls): a solve reads half the memory, and what it
    /// applies is exactly (L̃L̃ᵀ)⁻¹, the inverse of an SPD matrix within about
    /// 1e-7 of A, in double-precision arithmetic. Only Hooke's supernodal
    /// solves take it; other factors stay as they are. True when it applies.
    pub fn keep_in_single_precision(&mut self) -> bool {
        if !matches!(self.kind, Factor::Cholesky) || self.supernodal.is_none() {
            return false;
        }
        self.single = Some(self.factor.iter().map(|&v| v as f32).collect());
        true
    }

    /// Solves read the factor as computed again (after
    /// [`Self::keep_in_single_precision`], which keeps it as well).
    pub fn use_double_precision(&mut self) {
        self.single = None;
    }

    /// Whether solves go through Hooke's own supernodal solve.
    #[cfg(test)]
    pub(super) fn has_own_solve(&self) -> bool {
        self.supernodal.is_some()
    }

    #[cfg(test)]
    pub(super) fn own_solve(&self) -> Option<&SupernodalSolve> {
        self.supernodal.as_ref()
    }

    /// B ← (L Lᵀ)⁻¹ B through the fill-reducing permutation, by Hooke's own
    /// supernodal solves.
    fn solve_supernodal(&self, supernodal: &SupernodalSolve, rhs: &mut [f64], columns: usize, layout: Layout) {
        let permutation = self.symbolic.perm().map(|p| p.arrays());
        let values = match &self.single {
            Some(single) => supernodal_solve::Values::Single(single),
            None => supernodal_solve::Values::Double(&self.factor),
        };
        let factor = supernodal_solve::Factor {
            values,
            reciprocals: &self.reciprocal_diagonal,
        };
        supernodal.solve(factor, rhs, columns, layout, permutation);
    }
}

/// Scratch memory for a factorisation or solve.
fn workspace(requirement: faer::dyn_stack::StackReq) -> Result<MemBuffer> {
    MemBuffer::try_new(requirement).map_err(|_| HookeError::LinearSolver {
        reason: "out of memory for the sparse factorisation's workspace".to_string(),
    })
}

fn symbolic_view(pattern: &LowerPattern) -> SymbolicSparseColMatRef<'_, usize> {
    SymbolicSparseColMatRef::new_checked(
        pattern.size,
        pattern.size,
        &pattern.column_starts,
        None,
        &pattern.row_indices,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1D Laplacian-like tridiagonal matrix (lower triangle) with a diagonal shift.
    fn tridiagonal(n: usize, diagonal: f64) -> (LowerPattern, Vec<f64>) {
        let columns = (0..n)
            .map(|j| if j + 1 < n { vec![j, j + 1] } else { vec![j] })
            .collect();
        let pattern = LowerPattern::from_columns(columns);
        let values = (0..n)
            .flat_map(|j| {
                if j + 1 < n {
                    vec![diagonal, -1.0]
                } else {
                    vec![diagonal]
                }
            })
            .collect();
        (pattern, values)
    }

    fn residual(pattern: &LowerPattern, values: &[f64], x: &[f64], b: &[f64]) -> f64 {
        let mut ax = vec![0.0; x.len()];
        pattern.symmetric_multiply(values, x, &mut ax);
        ax.iter().zip(b).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
    }

    #[test]
    fn solves_a_positive_definite_system_and_reuses_the_analysis() {
        let (pattern, values) = tridiagonal(50, 2.5);
        let mut cholesky = SparseCholesky::analyse(&pattern).unwrap();
        let b: Vec<f64> = (0..50).map(|i| (i as f64).sin()).collect();
        for scale in [1.0, 3.0] {
            let scaled: Vec<f64> = values.iter().map(|v| v * scale).collect();
            assert_eq!(
                cholesky.factorize_or_shift(&scaled).unwrap(),
                FactorizationOutcome::PositiveDefinite
            );
            let mut x = b.clone();
            cholesky.solve_in_place(&mut x).unwrap();
            assert!(residual(&pattern, &scaled, &x, &b) < 1e-12);
        }
    }

    #[test]
    fn an_indefinite_matrix_is_refused_then_shifted_and_reported() {
        let (pattern, values) = tridiagonal(20, 1.0); // eigenvalues 1 − 2cos(kπ/21): some negative
        let mut cholesky = SparseCholesky::analyse(&pattern).unwrap();
        assert!(cholesky.factorize(&values).is_err());
        assert!(
            cholesky.solve_in_place(&mut [0.0; 20]).is_err(),
            "no solve without a factorisation"
        );
        match cholesky.factorize_or_shift(&values).unwrap() {
            FactorizationOutcome::Shifted { shift, attempts } => assert!(shift > 0.9 && attempts > 1),
            other => panic!("expected a shift, got {other:?}"),
        }
        let mut x = vec![1.0; 20];
        cholesky.solve_in_place(&mut x).unwrap();
        assert!(x.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn solves_several_right_hand_sides_at_once_under_nested_dissection() {
        let n = 4000; // above the nested-dissection threshold
        let (pattern, values) = tridiagonal(n, 2.5);
        let mut cholesky = SparseCholesky::analyse(&pattern).unwrap();
        cholesky.factorize(&values).unwrap();
        let columns = 3;
        let b: Vec<f64> = (0..n * columns).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
        let mut x = b.clone();
        cholesky.solve_columns_in_place(&mut x, columns).unwrap();
        for c in 0..columns {
            let range = c * n..(c + 1) * n;
            assert!(residual(&pattern, &values, &x[range.clone()], &b[range]) < 1e-12);
        }
        assert!(cholesky.solve_columns_in_place(&mut x[..n + 1], 1).is_err());
        // Row by row: the same solution (through faer's solve for this
        // simplicial factor, by way of columns).
        let mut rows: Vec<f64> = (0..n * columns).map(|k| b[(k % columns) * n + k / columns]).collect();
        cholesky.solve_rows_in_place(&mut rows, columns).unwrap();
        let mut by_columns = b.clone();
        cholesky.solve_columns_in_place(&mut by_columns, columns).unwrap();
        assert!((0..n * columns).all(|k| rows[k] == by_columns[(k % columns) * n + k / columns]));
    }

    #[test]
    fn a_taken_factor_is_adopted_for_its_own_values_only() {
        for n in [50, 4000] {
            let (pattern, values) = tridiagonal(n, 2.5);
            let b: Vec<f64> = (0..n).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
            let solved = |cholesky: &SparseCholesky| {
                let mut x = b.clone();
                cholesky.solve_in_place(&mut x).unwrap();
                x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            };
            let mut made = SparseCholesky::analyse(&pattern).unwrap();
            made.factorize(&values).unwrap();
            let expected = solved(&made);
            let taken = made.take_factor(values.clone()).expect("an LLᵀ factor");
            assert!(made.solve_in_place(&mut b.clone()).is_err(), "nothing is left behind");
            assert!(made.take_factor(values.clone()).is_none());
            let mut other = SparseCholesky::analyse(&pattern).unwrap();
            // One bit off in one value: refused, and handed back whole.
            let mut nearly = values.clone();
            nearly[n / 2] = f64::from_bits(nearly[n / 2].to_bits() + 1);
            let taken = other.adopt(taken, &nearly).expect_err("other values");
            assert!(other.solve_in_place(&mut b.clone()).is_err());
            // An analysis of another pattern: refused.
            let (shorter, _) = tridiagonal(n - 1, 2.5);
            let mut elsewhere = SparseCholesky::analyse(&shorter).unwrap();
            let taken = elsewhere.adopt(taken, &values).expect_err("another pattern");
            other.adopt(taken, &values).ok().expect("its own values");
            assert_eq!(solved(&other), expected, "n = {n}");
        }
    }

    #[test]
    fn an_indefinite_matrix_is_solved_exactly_by_lblt() {
        for n in [20, 4000] {
            // Eigenvalues 1 − 2cos(kπ/(n+1)): about a third of them negative.
            let (pattern, values) = tridiagonal(n, 1.0);
            let mut cholesky = SparseCholesky::analyse(&pattern).unwrap();
            assert_eq!(
                cholesky.factorize_or_indefinite(&values).unwrap(),
                FactorizationOutcome::Indefinite
            );
            let b: Vec<f64> = (0..2 * n).map(|i| ((i * 5) % 7) as f64 - 3.0).collect();
            let mut x = b.clone();
            cholesky.solve_columns_in_place(&mut x, 2).unwrap();
            for c in 0..2 {
                let range = c * n..(c + 1) * n;
                let scale = x[range.clone()].iter().fold(1.0f64, |m, v| m.max(v.abs()));
                assert!(
                    residual(&pattern, &values, &x[range.clone()], &b[range]) < 1e-10 * scale,
                    "n = {n}"
                );
            }
            // A positive definite matrix still goes to LLᵀ.
            let (_, definite) = tridiagonal(n, 2.5);
            assert_eq!(
                cholesky.factorize_or_indefinite(&definite).unwrap(),
                FactorizationOutcome::PositiveDefinite
            );
        }
    }
}
