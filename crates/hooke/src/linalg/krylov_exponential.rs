//! The action of the matrix exponential on a vector, exp(tA)v, for large sparse A
//! given only as a product x ↦ Ax: Arnoldi projection onto a Krylov space of
//! dimension m, the small exponential by [`expm`], and the error estimate and
//! step control of expokit's `expv` (Sidje, ACM TOMS 24, 1998), which splits t
//! into substeps until each meets the tolerance. t φ₁(tA)v comes from the same
//! routine on the augmented operator [[A, v], [0, 0]] applied to (0, 1).

use super::exponential::expm;
use crate::error::{HookeError, Result};
use nalgebra::{DMatrix, DVector};

/// What a Krylov evaluation did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KrylovReport {
    /// Substeps t was split into.
    pub substeps: usize,
    /// Substeps redone with a smaller step after an error estimate failed.
    pub rejections: usize,
    /// Sum of the local error estimates.
    pub error_estimate: f64,
}

/// Settings of the Krylov exponential.
#[derive(Clone, Copy, Debug)]
pub struct KrylovSettings {
    /// Krylov dimension m (expokit's default is 30).
    pub dimension: usize,
    /// Local error tolerance per unit time, relative to ‖v‖.
    pub tolerance: f64,
}

impl Default for KrylovSettings {
    fn default() -> Self {
        KrylovSettings {
            dimension: 30,
            tolerance: 1e-10,
        }
    }
}

/// Safety factors and limits of expokit's step control.
const SAFETY: f64 = 0.9;
const ACCEPT_FACTOR: f64 = 1.2;
const MAX_REJECTIONS: usize = 10;
const MAX_SUBSTEPS: usize = 100_000;
const MAX_GROWTH: f64 = 5.0;

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Rounds a step to two significant digits, upwards (expokit does this to avoid noise).
fn round_step(step: f64) -> f64 {
    let s = 10f64.powf(step.log10().floor() - 1.0);
    (step / s).ceil() * s
}

/// A rough ‖A‖₂ from a few power iterations (for the first step size only).
fn estimate_norm(apply: &dyn Fn(&[f64], &mut [f64]), n: usize) -> f64 {
    let mut x: Vec<f64> = (0..n).map(|i| 1.0 + ((i * 7919) % 13) as f64 / 13.0).collect();
    let mut y = vec![0.0; n];
    let mut estimate: f64 = 0.0;
    for _ in 0..8 {
        let length = norm(&x);
        if length == 0.0 {
            break;
        }
        x.iter_mut().for_each(|v| *v /= length);
        apply(&x, &mut y);
        estimate = estimate.max(norm(&y));
        std::mem::swap(&mut x, &mut y);
    }
    estimate.max(f64::MIN_POSITIVE)
}

/// exp(tA)v, where `apply(x, y)` sets y = Ax.
///
/// One function of about 130 lines: the time-stepping Krylov method with its error estimate and
/// step-size control, as Sidje's Expokit writes it, in one loop.
pub fn expv(
    t: f64,
    apply: &dyn Fn(&[f64], &mut [f64]),
    v: &[f64],
    settings: &KrylovSettings,
) -> Result<(Vec<f64>, KrylovReport)> {
    let n = v.len();
    let mut report = KrylovReport::default();
    let mut beta = norm(v);
    if beta == 0.0 || t == 0.0 {
        return Ok((v.to_vec(), report));
    }
    if !(t.is_finite() && beta.is_finite()) {
        return Err(HookeError::LinearSolver {
            reason: "exp(tA)v of a non-finite t or v".to_string(),
        });
    }
    let m = settings.dimension.min(n).max(1);
    let tolerance = settings.tolerance;
    let a_norm = estimate_norm(apply, n);
    // Errors are measured against the size of the input.
    let scale = beta;
    let direction = t.signum();
    let t_out = t.abs();
    let mut t_now = 0.0;
    let mut w = v.to_vec();
    // expokit's first step from the a-priori bound of the Krylov error.
    let fact = ((m as f64 + 1.0) / std::f64::consts::E).powf(m as f64 + 1.0)
        * (2.0 * std::f64::consts::PI * (m as f64 + 1.0)).sqrt();
    let mut t_new = round_step((1.0 / a_norm) * ((fact * tolerance) / (4.0 * beta * a_norm)).powf(1.0 / m as f64));
    let mut basis = vec![vec![0.0; n]; m + 1];
    let mut p = vec![0.0; n];
    while t_now < t_out {
        report.substeps += 1;
        if report.substeps > MAX_SUBSTEPS {
            return Err(HookeError::LinearSolver {
                reason: format!("exp(tA)v needed more than {MAX_SUBSTEPS} substeps"),
            });
        }
        let mut t_step = (t_out - t_now).min(t_new);
        // Arnoldi with modified Gram–Schmidt.
        let mut h = DMatrix::<f64>::zeros(m + 2, m + 2);
        basis[0].iter_mut().zip(&w).for_each(|(b, x)| *b = x / beta);
        let mut size = m;
        let mut happy = false;
        for j in 0..m {
            apply(&basis[j], &mut p);
            for i in 0..=j {
                let coefficient: f64 = basis[i].iter().zip(&p).map(|(a, b)| a * b).sum();
                h[(i, j)] = coefficient;
                p.iter_mut().zip(&basis[i]).for_each(|(x, b)| *x -= coefficient * b);
            }
            let s = norm(&p);
            if s <= 1e-12 * a_norm {
                // The Krylov space is invariant: the projection is exact.
                happy = true;
                size = j + 1;
                t_step = t_out - t_now;
                break;
            }
            h[(j + 1, j)] = s;
            basis[j + 1].iter_mut().zip(&p).for_each(|(b, x)| *b = x / s);
        }
        let mut av_norm = 0.0;
        if !happy {
            h[(m + 1, m)] = 1.0;
            apply(&basis[m], &mut p);
            av_norm = norm(&p);
        }
        let extra = if happy { 0 } else { 2 };
        let (exponential, local_error, exponent) = loop {
            let dim = size + extra;
            let scaled = h.view((0, 0), (dim, dim)).clone_owned() * (direction * t_step);
            // exp(tH) overflows when t‖H‖ is far too large for the step: a rejection.
            let exponential = expm(&scaled).ok().filter(|e| e.iter().all(|x| x.is_finite()));
            let (error, exponent) = match &exponential {
                Some(_) if happy => (0.0, 1.0 / m as f64),
                Some(e) => {
                    let phi1 = (beta * e[(m, 0)]).abs();
                    let phi2 = (beta * e[(m + 1, 0)] * av_norm).abs();
                    if phi1 > 10.0 * phi2 {
                        (phi2, 1.0 / m as f64)
                    } else if phi1 > phi2 {
                        ((phi1 * phi2) / (phi1 - phi2), 1.0 / m as f64)
                    } else {
                        (phi1, 1.0 / (m as f64 - 1.0).max(1.0))
                    }
                }
                None => (f64::INFINITY, 1.0),
            };
            if let Some(e) = exponential.filter(|_| error <= ACCEPT_FACTOR * t_step * tolerance * scale) {
                break (e, error, exponent);
            }
            report.rejections += 1;
            if report.rejections > MAX_REJECTIONS * report.substeps {
                return Err(HookeError::LinearSolver {
                    reason: format!(
                        "exp(tA)v: the error estimate {error:e} stays above the tolerance; raise the Krylov dimension"
                    ),
                });
            }
            // The controller's shrink, or a tenfold one when the estimate is useless.
            let shrink = (SAFETY * (t_step * tolerance * scale / error).powf(exponent)).min(0.5);
            t_step = round_step(t_step * if shrink > 0.0 { shrink } else { 0.1 });
        };
        // w ← β V exp(t H) e₁.
        let used = if happy { size } else { m + 1 };
        let mut next = vec![0.0; n];
        for (k, vector) in basis.iter().enumerate().take(used) {
            let coefficient = beta * exponential[(k, 0)];
            next.iter_mut().zip(vector).for_each(|(x, b)| *x += coefficient * b);
        }
        w = next;
        beta = norm(&w);
        t_now += t_step;
        report.error_estimate += local_error;
        if local_error > 0.0 {
            // At most a fivefold growth: a tiny error estimate from a short step
            // says little about a step thousands of times longer.
            let growth = (SAFETY * (t_step * tolerance * scale / local_error).powf(exponent)).min(MAX_GROWTH);
            t_new = round_step(t_step * growth);
        } else if !happy {
            t_new = round_step(MAX_GROWTH * t_step);
        } else {
            t_new = t_out - t_now;
        }
        if beta == 0.0 {
            break;
        }
    }
    Ok((w, report))
}

/// t φ₁(tA)v, by exp(tÃ)(0, 1) with Ã = [[A, v], [0, 0]].
pub fn phi1v(
    t: f64,
    apply: &dyn Fn(&[f64], &mut [f64]),
    v: &[f64],
    settings: &KrylovSettings,
) -> Result<(Vec<f64>, KrylovReport)> {
    let n = v.len();
    let augmented = |x: &[f64], y: &mut [f64]| {
        apply(&x[..n], &mut y[..n]);
        let s = x[n];
        y[..n].iter_mut().zip(v).for_each(|(yi, vi)| *yi += s * vi);
        y[n] = 0.0;
    };
    let mut start = vec![0.0; n + 1];
    start[n] = 1.0;
    let (mut result, report) = expv(t, &augmented, &start, settings)?;
    result.truncate(n);
    Ok((result, report))
}

/// Convenience for tests and small problems: the operator of a dense matrix.
pub fn dense_operator(a: &DMatrix<f64>) -> impl Fn(&[f64], &mut [f64]) + '_ {
    move |x: &[f64], y: &mut [f64]| {
        let product = a * DVector::from_column_slice(x);
        y.copy_from_slice(product.as_slice());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{expm, phi1_times};

    /// A stiff 1D Laplacian (Dirichlet ends), eigenvalues down to about −4/dx².
    fn laplacian(n: usize) -> DMatrix<f64> {
        let dx = 1.0 / (n + 1) as f64;
        DMatrix::from_fn(n, n, |i, j| {
            if i == j {
                -2.0 / (dx * dx)
            } else if i.abs_diff(j) == 1 {
                1.0 / (dx * dx)
            } else {
                0.0
            }
        })
    }

    fn relative_error(a: &[f64], b: &DVector<f64>) -> f64 {
        a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / b.amax().max(1e-300)
    }

    #[test]
    fn matches_the_dense_exponential_with_substeps() {
        let a = laplacian(120);
        let v: Vec<f64> = (0..120).map(|i| ((i as f64) * 0.3).sin() + 0.5).collect();
        for dimension in [30, 10] {
            let settings = KrylovSettings {
                dimension,
                ..KrylovSettings::default()
            };
            for t in [1e-5, 1e-3, 2e-2] {
                let (w, report) = expv(t, &dense_operator(&a), &v, &settings).unwrap();
                let reference = expm(&(&a * t)).unwrap() * DVector::from_column_slice(&v);
                let error = relative_error(&w, &reference);
                assert!(error < 1e-8, "m = {dimension}, t = {t}: error {error:e} ({report:?})");
                if t >= 1e-3 {
                    assert!(report.substeps > 1, "a stiff t = {t} must take substeps: {report:?}");
                }
            }
        }
        let settings = KrylovSettings::default();
        // Negative t and a non-symmetric operator.
        let mut b = laplacian(40) * 1e-3;
        b[(0, 5)] = 3.0;
        b[(7, 2)] = -1.0;
        let v: Vec<f64> = (0..40).map(|i| (i as f64).cos()).collect();
        let (w, _) = expv(-0.7, &dense_operator(&b), &v, &settings).unwrap();
        let reference = expm(&(&b * -0.7)).unwrap() * DVector::from_column_slice(&v);
        assert!(relative_error(&w, &reference) < 1e-8);
    }

    #[test]
    fn phi1_matches_the_dense_augmented_form() {
        let a = laplacian(60);
        let v: Vec<f64> = (0..60).map(|i| 1.0 + (i as f64 * 0.1).sin()).collect();
        let t = 3e-3;
        let (w, _) = phi1v(t, &dense_operator(&a), &v, &KrylovSettings::default()).unwrap();
        let reference = phi1_times(&(&a * t), &DVector::from_column_slice(&v)).unwrap() * t;
        let error = relative_error(&w, &reference);
        assert!(error < 1e-8, "error {error:e}");
    }

    #[test]
    fn small_invariant_spaces_are_exact() {
        // A 5×5 problem with m = 30: the Krylov space is the whole space after 5 steps.
        let a = DMatrix::from_fn(5, 5, |i, j| if i == j { -(i as f64) } else { 0.1 * (i + j) as f64 });
        let v = vec![1.0, 0.0, -1.0, 2.0, 0.5];
        let (w, report) = expv(2.0, &dense_operator(&a), &v, &KrylovSettings::default()).unwrap();
        let reference = expm(&(&a * 2.0)).unwrap() * DVector::from_column_slice(&v);
        assert!(relative_error(&w, &reference) < 1e-12, "{report:?}");
    }
}
