//! The symplectic time-adaptive variational integrator of the Kharevych 2010 thesis, §3.3:
//! bounded energy error of order h² with varying steps, exact linear momentum,
//! and the plain variational midpoint when σ = 1.

mod common;

use common::tumbling_rod;
use hooke::integrate::{Integrator, StepSizeRule, SymplecticAdaptive, VariationalMidpoint};
use hooke::model::{Model, State};
use hooke::solve::SolverSettings;

fn tight() -> SolverSettings {
    SolverSettings {
        tolerance: 1e-13,
        ..SolverSettings::default()
    }
}

fn energy(model: &Model, s: &State) -> f64 {
    model.kinetic_energy(&s.velocities) + model.elastic_energy(&s.positions)
}

/// Largest relative energy error over `steps` fictitious steps of `h`, the
/// range of real steps taken, and the final state.
fn run(h: f64, steps: usize) -> (f64, f64, f64, Vec<f64>, State) {
    let (model, mut state) = tumbling_rod();
    let initial = energy(&model, &state);
    let mut integrator = SymplecticAdaptive::new(StepSizeRule::ElasticEnergy { scale: 0.002 }, tight()).unwrap();
    let (mut worst, mut smallest, mut largest) = (0.0f64, f64::INFINITY, 0.0f64);
    let mut errors = Vec::with_capacity(steps);
    for _ in 0..steps {
        let before = state.time;
        integrator.step(&model, &mut state, h).unwrap();
        let real = state.time - before;
        smallest = smallest.min(real);
        largest = largest.max(real);
        let error = (energy(&model, &state) - initial).abs() / initial;
        worst = worst.max(error);
        errors.push(error);
        // λ = E_{k+1} − E₀ stays small (O(h²)), as the analysis says.
        assert!(integrator.multiplier().unwrap().abs() < 0.05 * initial);
    }
    (worst, smallest, largest, errors, state)
}

#[test]
fn energy_error_is_bounded_second_order_and_does_not_drift() {
    let (worst, smallest, largest, errors, _) = run(4e-3, 750);
    assert!(
        largest > 1.2 * smallest,
        "the steps must vary: {smallest:e}..{largest:e}"
    );
    assert!(worst < 0.03, "energy strayed by {:.3}%", 100.0 * worst);
    // No drift: the last third's worst error is no larger than the first third's (with slack).
    let third = errors.len() / 3;
    let early = errors[..third].iter().fold(0.0f64, |a, &b| a.max(b));
    let late = errors[2 * third..].iter().fold(0.0f64, |a, &b| a.max(b));
    assert!(late < 1.5 * early + 1e-6, "drift: early {early:e}, late {late:e}");
    // Second order: halving the fictitious step divides the error by about four.
    let (half, _, _, _, _) = run(2e-3, 1500);
    let ratio = worst / half;
    assert!(ratio > 2.5, "error ratio {ratio:.2} for h → h/2 ({worst:e}, {half:e})");
}

#[test]
fn linear_momentum_is_exact_and_angular_momentum_to_solver_tolerance() {
    let (model, start) = tumbling_rod();
    let (p0, l0) = model.momentum(&start.positions, &start.velocities);
    let (_, _, _, _, end) = run(4e-3, 300);
    let (p1, l1) = model.momentum(&end.positions, &end.velocities);
    assert!((p1 - p0).norm() < 1e-12 * (1.0 + p0.norm()), "{p0} → {p1}");
    assert!((l1 - l0).norm() < 1e-7 * l0.norm(), "{l0} → {l1}");
}

#[test]
fn constant_step_size_is_the_variational_midpoint() {
    let (model, start) = tumbling_rod();
    let mut adaptive = SymplecticAdaptive::new(StepSizeRule::Constant, tight()).unwrap();
    let mut midpoint = VariationalMidpoint::new(tight(), true).unwrap();
    let (mut a, mut b) = (start.clone(), start);
    for _ in 0..50 {
        adaptive.step(&model, &mut a, 4e-3).unwrap();
        midpoint.step(&model, &mut b, 4e-3).unwrap();
    }
    let difference = a
        .positions
        .iter()
        .zip(&b.positions)
        .chain(a.velocities.iter().zip(&b.velocities))
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(difference < 1e-10, "differs by {difference:e}");
    assert!((a.time - b.time).abs() < 1e-12);
}
