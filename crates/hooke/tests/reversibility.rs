//! Time-reversible schemes retrace their steps: N steps forward, velocities
//! negated, N steps more, and the body is back where it started. Includes the
//! adaptive variational integrator of the Kharevych 2010 thesis, §3.4, whose step sizes vary.

mod common;

use common::{bar, parameters, tumbling_rod, uniform_model};
use hooke::integrate::{Integrator, IntegratorConfig, StepSizeRule, TimeReversibleAdaptive};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::{Model, State};
use hooke::solve::SolverSettings;

fn tight() -> SolverSettings {
    SolverSettings {
        tolerance: 1e-14,
        ..SolverSettings::default()
    }
}

/// Runs `steps` forward, negates the velocities, runs `steps` back with a fresh
/// integrator; returns the largest position error and the step sizes taken forward.
fn there_and_back(
    model: &Model,
    start: &State,
    make: &dyn Fn() -> Box<dyn Integrator>,
    steps: usize,
    h: f64,
) -> (f64, Vec<f64>) {
    let mut state = start.clone();
    let mut forward = make();
    let mut sizes = Vec::new();
    for _ in 0..steps {
        let before = state.time;
        forward.step(model, &mut state, h).unwrap();
        sizes.push(state.time - before);
    }
    state.velocities.iter_mut().for_each(|v| *v = -*v);
    let mut backward = make();
    for _ in 0..steps {
        backward.step(model, &mut state, h).unwrap();
    }
    let error = state
        .positions
        .iter()
        .zip(&start.positions)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    (error, sizes)
}

#[test]
fn symmetric_fixed_step_methods_retrace_their_steps() {
    let (model, start) = tumbling_rod();
    for name in ["implicit_midpoint", "velocity_verlet", "variational_midpoint"] {
        let make = || -> Box<dyn Integrator> { IntegratorConfig::from_name(name).unwrap().build(&tight()).unwrap() };
        let h = if name == "velocity_verlet" { 2e-4 } else { 4e-3 };
        let (error, _) = there_and_back(&model, &start, &make, 50, h);
        assert!(error < 1e-9, "{name}: back within {error:e}");
    }
    // Backward Euler is not time-reversible: the same test fails clearly.
    let make = || -> Box<dyn Integrator> { IntegratorConfig::from_name("be").unwrap().build(&tight()).unwrap() };
    let (error, _) = there_and_back(&model, &start, &make, 50, 4e-3);
    assert!(error > 1e-4, "backward Euler came back within {error:e}");
}

#[test]
fn adaptive_variational_integrator_is_reversible_with_varying_steps() {
    let (model, start) = tumbling_rod();
    let rule = StepSizeRule::ElasticEnergy { scale: 0.002 };
    let make = || -> Box<dyn Integrator> { Box::new(TimeReversibleAdaptive::new(rule, tight()).unwrap()) };
    let (error, sizes) = there_and_back(&model, &start, &make, 60, 4e-3);
    let (smallest, largest) = sizes
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), s| (lo.min(*s), hi.max(*s)));
    assert!(
        largest / smallest > 1.2,
        "the steps must vary: {smallest:e} .. {largest:e}"
    );
    assert!(error < 1e-8, "back within {error:e}");
}

#[test]
fn adaptive_variational_integrator_keeps_energy_bounded() {
    let (model, mut state) = tumbling_rod();
    let energy = |s: &State| model.kinetic_energy(&s.velocities) + model.elastic_energy(&s.positions);
    let initial = energy(&state);
    let mut integrator = TimeReversibleAdaptive::new(StepSizeRule::ElasticEnergy { scale: 0.002 }, tight()).unwrap();
    let mut worst = 0.0f64;
    for _ in 0..1000 {
        integrator.step(&model, &mut state, 4e-3).unwrap();
        worst = worst.max((energy(&state) - initial).abs() / initial);
    }
    assert!(worst < 0.02, "energy strayed by {:.3}%", 100.0 * worst);
}

fn corotational_rod() -> (Model, State) {
    let model = uniform_model(
        bar([0.4, 0.05, 0.05], [8, 2, 2], TetsPerHex::Five),
        MaterialModel::Corotational,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let (_, mut state) = tumbling_rod();
    state.time = 0.0;
    (model, state)
}

/// The co-rotational scheme of the Kharevych 2010 thesis (eq. 3.33) retraces its steps and keeps the
/// energy of a tumbling, vibrating rod bounded.
#[test]
fn corotational_scheme_is_reversible_and_bounded() {
    let (model, start) = corotational_rod();
    let make = || -> Box<dyn Integrator> {
        IntegratorConfig::from_name("corotational_reversible")
            .unwrap()
            .build(&tight())
            .unwrap()
    };
    let (error, _) = there_and_back(&model, &start, &make, 100, 4e-3);
    assert!(error < 1e-9, "back within {error:e}");

    let energy = |s: &State| model.kinetic_energy(&s.velocities) + model.elastic_energy(&s.positions);
    let mut state = start.clone();
    let initial = energy(&state);
    let mut integrator = make();
    let mut worst = 0.0f64;
    for _ in 0..2000 {
        integrator.step(&model, &mut state, 4e-3).unwrap();
        worst = worst.max((energy(&state) - initial).abs() / initial);
    }
    eprintln!(
        "corotational: reversal error {error:e}, worst energy deviation {:.4}%",
        100.0 * worst
    );
    assert!(worst < 0.05, "energy strayed by {:.3}%", 100.0 * worst);
    assert!(model.elastic_energy(&state.positions) > 1e-6, "the rod must deform");
}
