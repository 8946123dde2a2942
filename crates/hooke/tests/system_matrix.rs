//! The system matrix of implicit steps: sparse plus low-rank parts solved by
//! Sherman–Morrison–Woodbury, and dense reduced systems, against dense solves.

mod common;

use hooke::linalg::{FactorizationOutcome, IndefiniteSystem, LowRank, LowerPattern, SystemMatrix, SystemSolver};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;
use std::sync::Arc;

/// A banded symmetric matrix (bandwidth 2) with the given diagonal, as a pattern and values.
fn banded(n: usize, diagonal: &[f64], coupling: f64) -> (Arc<LowerPattern>, Vec<f64>) {
    let columns: Vec<Vec<usize>> = (0..n).map(|j| (j..(j + 3).min(n)).collect()).collect();
    let pattern = LowerPattern::from_columns(columns);
    let mut values = Vec::with_capacity(pattern.nonzeros());
    for j in 0..n {
        for i in j..(j + 3).min(n) {
            values.push(if i == j { diagonal[j] } else { coupling / (i - j) as f64 });
        }
    }
    (Arc::new(pattern), values)
}

fn low_rank(n: usize, rank: usize, rng: &mut common::Lcg, scale: f64) -> LowRank {
    let vectors = DMatrix::from_fn(n, rank, |_, _| rng.next());
    let half = DMatrix::from_fn(rank, rank, |_, _| scale * rng.next());
    LowRank::new(vectors, &half + half.transpose()).unwrap()
}

fn relative_error(solver: &SystemSolver, matrix: &SystemMatrix, b: &[f64]) -> f64 {
    let mut x = b.to_vec();
    solver.solve_in_place(&mut x).unwrap();
    let dense = matrix.to_dense();
    let exact = dense.clone().lu().solve(&DVector::from_column_slice(b)).unwrap();
    (DVector::from_column_slice(&x) - &exact).amax() / exact.amax()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Sparse SPD plus an indefinite low-rank part of rank up to 12: the
    /// Woodbury solve equals the dense solve of the sum, for one and for
    /// several right-hand sides.
    #[test]
    fn sparse_plus_low_rank_equals_the_dense_solve(seed in 0u64..1000, rank in 1usize..12, n in 20usize..60) {
        let mut rng = common::Lcg::new(seed);
        let diagonal: Vec<f64> = (0..n).map(|_| 4.0 + rng.next()).collect();
        let (pattern, values) = banded(n, &diagonal, -0.7);
        let matrix = SystemMatrix::Sparse { pattern, values, low_rank: Some(low_rank(n, rank, &mut rng, 0.3)) };
        let mut solver = SystemSolver::new();
        solver.factorize(&matrix, IndefiniteSystem::Exact).unwrap();
        let b: Vec<f64> = (0..n).map(|_| rng.next()).collect();
        prop_assert!(relative_error(&solver, &matrix, &b) < 1e-10);
        // Three columns at once agree with three single solves.
        let block: Vec<f64> = (0..3 * n).map(|_| rng.next()).collect();
        let mut together = block.clone();
        solver.solve_columns_in_place(&mut together, 3).unwrap();
        for c in 0..3 {
            let mut single = block[c * n..(c + 1) * n].to_vec();
            solver.solve_in_place(&mut single).unwrap();
            for (a, b) in single.iter().zip(&together[c * n..(c + 1) * n]) {
                prop_assert!((a - b).abs() < 1e-12 * (1.0 + a.abs()));
            }
        }
    }

    /// An indefinite sparse part (LBLᵀ) with a low-rank part still solves exactly.
    #[test]
    fn indefinite_sparse_part_with_low_rank(seed in 0u64..1000, rank in 1usize..6) {
        let n = 40;
        let mut rng = common::Lcg::new(seed);
        let diagonal: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { -3.0 } else { 5.0 } + 0.1 * rng.next()).collect();
        let (pattern, values) = banded(n, &diagonal, 0.5);
        let matrix = SystemMatrix::Sparse { pattern, values, low_rank: Some(low_rank(n, rank, &mut rng, 1.0)) };
        let mut solver = SystemSolver::new();
        let outcome = solver.factorize(&matrix, IndefiniteSystem::Exact).unwrap();
        prop_assert_eq!(outcome, FactorizationOutcome::Indefinite);
        let b: Vec<f64> = (0..n).map(|_| rng.next()).collect();
        prop_assert!(relative_error(&solver, &matrix, &b) < 1e-9);
    }

    /// Dense reduced systems go through the same interface: SPD by Cholesky,
    /// indefinite by LU (exact) or a reported shift.
    #[test]
    fn dense_systems_solve_like_the_sparse_ones(seed in 0u64..1000, n in 1usize..20) {
        let mut rng = common::Lcg::new(seed);
        let g = DMatrix::from_fn(n, n, |_, _| rng.next());
        let spd = &g * g.transpose() + DMatrix::identity(n, n);
        let matrix = SystemMatrix::Dense(spd);
        let mut solver = SystemSolver::new();
        prop_assert_eq!(solver.factorize(&matrix, IndefiniteSystem::Shift).unwrap(), FactorizationOutcome::PositiveDefinite);
        let b: Vec<f64> = (0..n).map(|_| rng.next()).collect();
        prop_assert!(relative_error(&solver, &matrix, &b) < 1e-9);
        // Q diag(±1…) Qᵀ with an orthonormal Q: eigenvalues of both signs (−1 first).
        let q = g.qr().q();
        let signs = DVector::from_fn(n, |i, _| if i % 2 == 0 { -1.0 - i as f64 } else { 2.0 + i as f64 });
        let indefinite = SystemMatrix::Dense(&q * DMatrix::from_diagonal(&signs) * q.transpose());
        prop_assert_eq!(solver.factorize(&indefinite, IndefiniteSystem::Exact).unwrap(), FactorizationOutcome::Indefinite);
        prop_assert!(relative_error(&solver, &indefinite, &b) < 1e-8);
    }
}

/// A low-rank part that cancels a direction of A makes the sum singular: the
/// capacitance matrix is singular and the error says so.
#[test]
fn a_singular_sum_is_reported_through_the_capacitance_matrix() {
    let n = 10;
    let (pattern, values) = banded(n, &[2.0; 10], 0.0);
    let mut e = DMatrix::zeros(n, 1);
    e[(4, 0)] = 1.0;
    let cancel = LowRank::new(e, DMatrix::from_element(1, 1, -2.0)).unwrap();
    let matrix = SystemMatrix::Sparse {
        pattern,
        values,
        low_rank: Some(cancel),
    };
    let error = SystemSolver::new()
        .factorize(&matrix, IndefiniteSystem::Exact)
        .unwrap_err();
    assert!(error.to_string().contains("capacitance"), "{error}");
}

/// An ill-conditioned sparse part (condition number 1e12) with a large
/// low-rank correction still solves to a rounding-level residual.
#[test]
fn ill_conditioned_sparse_part_stays_accurate() {
    let n = 50;
    let mut rng = common::Lcg::new(7);
    let diagonal: Vec<f64> = (0..n).map(|i| 10f64.powf(-12.0 * i as f64 / (n - 1) as f64)).collect();
    let (pattern, values) = banded(n, &diagonal, 0.0);
    let matrix = SystemMatrix::Sparse {
        pattern,
        values,
        low_rank: Some(low_rank(n, 4, &mut rng, 1e6)),
    };
    let mut solver = SystemSolver::new();
    solver.factorize(&matrix, IndefiniteSystem::Exact).unwrap();
    let b: Vec<f64> = (0..n).map(|_| rng.next()).collect();
    let mut x = b.clone();
    solver.solve_in_place(&mut x).unwrap();
    // The residual, relative to the matrix and solution sizes, is at rounding level.
    let mut ax = vec![0.0; n];
    matrix.multiply(&x, &mut ax);
    let residual = ax.iter().zip(&b).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let scale = matrix.to_dense().amax() * x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(residual < 1e-13 * scale, "relative residual {}", residual / scale);
}

/// The shapes of a low-rank term are checked, and a solve before a factorisation is refused.
#[test]
fn malformed_low_rank_terms_and_early_solves_are_refused() {
    assert!(LowRank::new(DMatrix::zeros(5, 2), DMatrix::zeros(3, 3)).is_err());
    let asymmetric = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 0.0, 1.0]);
    assert!(LowRank::new(DMatrix::zeros(5, 2), asymmetric).is_err());
    assert!(SystemSolver::new().solve_in_place(&mut [1.0]).is_err());
}
