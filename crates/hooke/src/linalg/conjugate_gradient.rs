//! Inexact solves of symmetric positive-definite systems: a fixed number of
//! preconditioned conjugate-gradient iterations, with a Jacobi or an
//! incomplete-Cholesky preconditioner (Liu 2018 thesis, Figs. 7.7–7.8, compares such
//! solves inside Newton and L-BFGS with a direct factorisation).

use super::LowerPattern;
use crate::error::{HookeError, Result};

/// Stop early once the residual is this small against the right-hand side:
/// further iterations only stir rounding.
const SETTLED: f64 = 1e-14;

/// What a run of [`conjugate_gradient`] reached.
pub struct CgSolution {
    /// The approximate solution x of A x = b.
    pub x: Vec<f64>,
    /// ‖b − A x‖ / ‖b‖ where it stopped (1 when it stopped at a direction of
    /// curvature that is not positive before its first step): how far the
    /// solve is from exact, which a truncated solve's callers must not take
    /// for an exact one.
    pub relative_residual: f64,
}

/// z = M⁻¹ r for a preconditioner M.
pub trait Preconditioner {
    /// Writes M⁻¹ r into `z` (both of the system's size).
    fn apply(&self, r: &[f64], z: &mut [f64]);
}

/// M = diag(A) (entries that are not positive count as 1).
pub struct Jacobi {
    inverse_diagonal: Vec<f64>,
}

impl Jacobi {
    /// From A's diagonal.
    pub fn new(diagonal: &[f64]) -> Jacobi {
        Jacobi {
            inverse_diagonal: diagonal.iter().map(|&d| if d > 0.0 { 1.0 / d } else { 1.0 }).collect(),
        }
    }
}

impl Preconditioner for Jacobi {
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        z.iter_mut()
            .zip(r.iter().zip(&self.inverse_diagonal))
            .for_each(|(z, (r, d))| *z = r * d);
    }
}

/// IC(0): M = L̃L̃ᵀ with L̃ on A's own lower pattern (no fill), the entries
/// of the Cholesky factor's update kept only where A has entries. Where a
/// pivot is not positive (A is not an M-matrix, as elasticity's stiffness is
/// not), A + α diag(A) is factorised instead, α = 1e-3, doubled until every
/// pivot is (Manteuffel's shift).
pub struct IncompleteCholesky {
    pattern: LowerPattern,
    factor: Vec<f64>,
    /// The α the factorisation needed (0: none).
    pub shift: f64,
}

impl IncompleteCholesky {
    /// From the lower triangle `values` of A on `pattern` (the diagonal first
    /// in each column, rows increasing).
    pub fn new(pattern: &LowerPattern, values: &[f64]) -> Result<IncompleteCholesky> {
        let diagonal: Vec<f64> = pattern.diagonal_positions().iter().map(|&k| values[k]).collect();
        if let Some(j) = diagonal.iter().position(|&d| !(d > 0.0 && d.is_finite())) {
            return Err(HookeError::LinearSolver {
                reason: format!(
                    "incomplete Cholesky needs a positive, finite diagonal; entry {j} is {}",
                    diagonal[j]
                ),
            });
        }
        let mut shift = 0.0;
        loop {
            let mut factor = values.to_vec();
            if shift > 0.0 {
                for (j, k) in pattern.diagonal_positions().into_iter().enumerate() {
                    factor[k] += shift * diagonal[j];
                }
            }
            if factorize_in_place(pattern, &mut factor) {
                return Ok(IncompleteCholesky {
                    pattern: pattern.clone(),
                    factor,
                    shift,
                });
            }
            shift = if shift == 0.0 { 1e-3 } else { 2.0 * shift };
            if shift > 1e3 {
                return Err(HookeError::LinearSolver {
                    reason: "incomplete Cholesky broke down even with a diagonal shift of 1e3".to_string(),
                });
            }
        }
    }
}

/// Right-looking IC(0) on the pattern; false at a pivot that is not positive.
fn factorize_in_place(pattern: &LowerPattern, l: &mut [f64]) -> bool {
    let starts = &pattern.column_starts;
    let rows = &pattern.row_indices;
    for k in 0..pattern.size {
        let pivot = l[starts[k]];
        if !(pivot > 0.0 && pivot.is_finite()) {
            return false;
        }
        let root = pivot.sqrt();
        l[starts[k]] = root;
        for p in starts[k] + 1..starts[k + 1] {
            l[p] /= root;
        }
        // Column j > k loses L[i,k] L[j,k] at each of its rows i the pattern keeps.
        for p in starts[k] + 1..starts[k + 1] {
            let j = rows[p];
            let l_jk = l[p];
            let mut q = starts[j];
            for r in p..starts[k + 1] {
                let i = rows[r];
                while q < starts[j + 1] && rows[q] < i {
                    q += 1;
                }
                if q == starts[j + 1] {
                    break;
                }
                if rows[q] == i {
                    l[q] -= l[r] * l_jk;
                }
            }
        }
    }
    true
}

impl Preconditioner for IncompleteCholesky {
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        let starts = &self.pattern.column_starts;
        let rows = &self.pattern.row_indices;
        let l = &self.factor;
        z.copy_from_slice(r);
        // L̃ y = r, column by column.
        for k in 0..self.pattern.size {
            z[k] /= l[starts[k]];
            let value = z[k];
            for p in starts[k] + 1..starts[k + 1] {
                z[rows[p]] -= l[p] * value;
            }
        }
        // L̃ᵀ z = y, from the last column back.
        for k in (0..self.pattern.size).rev() {
            let mut value = z[k];
            for p in starts[k] + 1..starts[k + 1] {
                value -= l[p] * z[rows[p]];
            }
            z[k] = value / l[starts[k]];
        }
    }
}

/// x ≈ A⁻¹ b by at most `iterations` preconditioned conjugate-gradient
/// iterations from x = 0, A given by its product. Should A show a direction
/// of curvature that is not positive, the iterate reached so far is returned
/// (at the first iteration, M⁻¹b: a descent direction for an SPD M).
pub fn conjugate_gradient(
    multiply: &dyn Fn(&[f64], &mut [f64]),
    preconditioner: &dyn Preconditioner,
    b: &[f64],
    iterations: usize,
) -> CgSolution {
    let n = b.len();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| a * b).sum::<f64>();
    let mut x = vec![0.0; n];
    let mut r = b.to_vec();
    let mut z = vec![0.0; n];
    preconditioner.apply(&r, &mut z);
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    let mut product = vec![0.0; n];
    let size = dot(b, b).sqrt();
    if size == 0.0 {
        return CgSolution {
            x,
            relative_residual: 0.0,
        };
    }
    for iteration in 0..iterations {
        multiply(&p, &mut product);
        let curvature = dot(&p, &product);
        if !(curvature > 0.0 && curvature.is_finite()) {
            if iteration == 0 {
                return CgSolution {
                    x: z,
                    relative_residual: 1.0,
                };
            }
            break;
        }
        let alpha = rz / curvature;
        x.iter_mut().zip(&p).for_each(|(x, p)| *x += alpha * p);
        r.iter_mut().zip(&product).for_each(|(r, a)| *r -= alpha * a);
        if dot(&r, &r).sqrt() <= SETTLED * size {
            break;
        }
        preconditioner.apply(&r, &mut z);
        let next = dot(&r, &z);
        let beta = next / rz;
        rz = next;
        p.iter_mut().zip(&z).for_each(|(p, z)| *p = z + beta * *p);
    }
    let relative_residual = dot(&r, &r).sqrt() / size;
    CgSolution { x, relative_residual }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    /// A 2D grid Laplacian plus a diagonal (an M-matrix) and the same with
    /// positive off-diagonal couplings (not one), lower triangle on its pattern.
    fn grid(side: usize, sign: f64) -> (LowerPattern, Vec<f64>, DMatrix<f64>) {
        let n = side * side;
        let mut dense = DMatrix::zeros(n, n);
        for i in 0..side {
            for j in 0..side {
                let v = i * side + j;
                dense[(v, v)] = 4.8;
                for (di, dj) in [(1, 0), (0, 1), (1, 1)] {
                    let (a, b) = (i + di, j + dj);
                    if a < side && b < side {
                        let w = a * side + b;
                        let value = if (di, dj) == (1, 1) { 0.3 * sign } else { -1.0 };
                        dense[(v, w)] = value;
                        dense[(w, v)] = value;
                    }
                }
            }
        }
        let columns: Vec<Vec<usize>> = (0..n)
            .map(|c| (c..n).filter(|&r| dense[(r, c)] != 0.0).collect())
            .collect();
        let pattern = LowerPattern::from_columns(columns);
        let mut values = vec![0.0; pattern.nonzeros()];
        for c in 0..n {
            for k in pattern.column_starts[c]..pattern.column_starts[c + 1] {
                values[k] = dense[(pattern.row_indices[k], c)];
            }
        }
        (pattern, values, dense)
    }

    /// On a tridiagonal matrix IC(0) has no fill to drop: it is the exact
    /// Cholesky factor, and one preconditioned iteration solves the system.
    #[test]
    fn incomplete_cholesky_of_a_tridiagonal_matrix_is_exact() {
        let n = 12;
        let columns: Vec<Vec<usize>> = (0..n)
            .map(|c| if c + 1 < n { vec![c, c + 1] } else { vec![c] })
            .collect();
        let pattern = LowerPattern::from_columns(columns);
        let values: Vec<f64> = (0..pattern.nonzeros())
            .map(|k| {
                if pattern.diagonal_positions().contains(&k) {
                    3.0
                } else {
                    -1.2
                }
            })
            .collect();
        let ic = IncompleteCholesky::new(&pattern, &values).unwrap();
        assert_eq!(ic.shift, 0.0);
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin() + 0.5).collect();
        let multiply = |x: &[f64], y: &mut [f64]| pattern.symmetric_multiply(&values, x, y);
        let solution = conjugate_gradient(&multiply, &ic, &b, 1);
        assert!(solution.relative_residual < 1e-13);
        let x = solution.x;
        let mut check = vec![0.0; n];
        multiply(&x, &mut check);
        let error = check.iter().zip(&b).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(error < 1e-13, "residual {error}");
    }

    /// PCG reaches the solution of an SPD system with either preconditioner,
    /// its A-norm error never rising, and IC(0) needs fewer iterations than
    /// Jacobi; on a matrix that is no M-matrix IC(0) still works (shifted if
    /// it must).
    #[test]
    fn preconditioned_cg_converges_and_incomplete_cholesky_helps() {
        for sign in [1.0, -1.0] {
            let (pattern, values, dense) = grid(12, sign);
            let n = dense.nrows();
            let b: Vec<f64> = (0..n).map(|i| ((3 * i) as f64).cos()).collect();
            let exact = dense.clone().cholesky().unwrap().solve(&DVector::from_column_slice(&b));
            let multiply = |x: &[f64], y: &mut [f64]| pattern.symmetric_multiply(&values, x, y);
            let energy_error = |x: &[f64]| {
                let e = DVector::from_column_slice(x) - &exact;
                (e.transpose() * &dense * &e)[0].sqrt()
            };
            let jacobi = Jacobi::new(
                &pattern
                    .diagonal_positions()
                    .iter()
                    .map(|&k| values[k])
                    .collect::<Vec<_>>(),
            );
            let ic = IncompleteCholesky::new(&pattern, &values).unwrap();
            let preconditioners: [(&str, &dyn Preconditioner); 2] = [("jacobi", &jacobi), ("ic", &ic)];
            let mut needed = Vec::new();
            for (name, preconditioner) in preconditioners {
                let mut previous = f64::INFINITY;
                let mut reached = None;
                for k in 1..=60 {
                    let error = energy_error(&conjugate_gradient(&multiply, preconditioner, &b, k).x);
                    assert!(
                        error <= previous * (1.0 + 1e-9),
                        "{name}, sign {sign}: error rose at {k}"
                    );
                    previous = error;
                    if reached.is_none() && error < 1e-8 * energy_error(&vec![0.0; n]) {
                        reached = Some(k);
                    }
                }
                needed.push(reached.unwrap_or_else(|| panic!("{name}, sign {sign}: not converged in 60")));
            }
            assert!(
                needed[1] < needed[0],
                "IC(0) {} iterations against Jacobi {}",
                needed[1],
                needed[0]
            );
        }
    }

    /// A system that is not positive definite stops the iteration at the
    /// first direction of negative curvature, returning M⁻¹b at the start.
    #[test]
    fn negative_curvature_returns_the_preconditioned_gradient() {
        let multiply = |x: &[f64], y: &mut [f64]| {
            y[0] = -x[0];
            y[1] = 2.0 * x[1];
        };
        let jacobi = Jacobi::new(&[-1.0, 2.0]);
        let solution = conjugate_gradient(&multiply, &jacobi, &[1.0, 0.0], 5);
        assert_eq!(solution.x, vec![1.0, 0.0]);
        assert_eq!(solution.relative_residual, 1.0);
    }

    /// A diagonal that is not positive is refused with its index.
    #[test]
    fn a_diagonal_that_is_not_positive_is_refused() {
        let pattern = LowerPattern::from_columns(vec![vec![0, 1], vec![1]]);
        let error = IncompleteCholesky::new(&pattern, &[1.0, 0.5, -2.0])
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("entry 1"), "{error}");
    }
}
