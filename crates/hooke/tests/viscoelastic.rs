//! The viscoelastic damping of the Kharevych 2010 thesis, §2.3: the energy it removes does not depend
//! on the time step, and it exerts no net force or torque.

mod common;

use common::{bar, parameters, uniform_model};
use hooke::integrate::{BackwardEuler, Integrator, SymplecticEuler, VariationalMidpoint};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::{Damping, DampingStiffness, Model, State};
use hooke::solve::SolverSettings;
use nalgebra::Vector3;

/// The free Neo-Hookean rod of the Kharevych 2010 thesis (160 tets, Figs. 3.3–3.5), set spinning and vibrating.
fn rod(damping: Damping) -> (Model, State) {
    let mut model = uniform_model(
        bar([0.4, 0.05, 0.05], [8, 2, 2], TetsPerHex::Five),
        MaterialModel::NeoHookean,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    model.set_damping(Some(damping)).unwrap();
    let mut state = model.initial_state();
    let center = Vector3::new(0.2, 0.025, 0.025);
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        let r = p - center;
        // Mostly bending vibration (which damping removes), plus a spin (which it must keep).
        let velocity = Vector3::new(0.0, 0.2, 0.5).cross(&r) + Vector3::new(0.0, 5.0 * r.x.abs(), 20.0 * r.x * r.x);
        state.velocities[3 * v..3 * v + 3].copy_from_slice(velocity.as_slice());
    }
    (model, state)
}

fn viscoelastic(coefficient: f64) -> Damping {
    Damping {
        mass_coefficient: 0.0,
        stiffness_coefficient: 0.0,
        stiffness: DampingStiffness::Rest,
        viscoelastic_coefficient: coefficient,
        ether_drag: 0.0,
    }
}

fn energy_at(model: &Model, start: &State, integrator: &mut dyn Integrator, h: f64, end: f64) -> f64 {
    let mut state = start.clone();
    let steps = (end / h).round() as usize;
    for _ in 0..steps {
        integrator.step(model, &mut state, h).unwrap();
    }
    model.kinetic_energy(&state.velocities) + model.elastic_energy(&state.positions)
}

#[test]
fn dissipation_does_not_depend_on_the_time_step() {
    let end = 0.4;
    let newton = SolverSettings {
        tolerance: 1e-10,
        ..SolverSettings::default()
    };
    let (model, start) = rod(viscoelastic(5e-3));
    let initial = model.kinetic_energy(&start.velocities);
    let damped: Vec<f64> = [0.004, 0.002]
        .iter()
        .map(|&h| {
            energy_at(
                &model,
                &start,
                &mut VariationalMidpoint::new(newton.clone(), true).unwrap(),
                h,
                end,
            )
        })
        .collect();
    let viscoelastic_difference = (damped[0] - damped[1]).abs() / damped[1];
    assert!(
        damped[1] < 0.95 * initial,
        "the damping must remove energy: {initial} → {}",
        damped[1]
    );
    assert!(
        viscoelastic_difference < 0.02,
        "viscoelastic: {damped:?} differ by {viscoelastic_difference:.4}"
    );

    // Rayleigh-damped backward Euler, tuned to remove a similar amount at h = 0.002, depends on h far more.
    let (model, start) = rod(Damping {
        mass_coefficient: 0.0,
        stiffness_coefficient: 2e-3,
        stiffness: DampingStiffness::Rest,
        viscoelastic_coefficient: 0.0,
        ether_drag: 0.0,
    });
    let rayleigh: Vec<f64> = [0.004, 0.002]
        .iter()
        .map(|&h| energy_at(&model, &start, &mut BackwardEuler::new(newton.clone()).unwrap(), h, end))
        .collect();
    let rayleigh_difference = (rayleigh[0] - rayleigh[1]).abs() / rayleigh[1];
    eprintln!("viscoelastic + variational midpoint: {damped:?} ({viscoelastic_difference:.4}); Rayleigh + backward Euler: {rayleigh:?} ({rayleigh_difference:.4})");
    assert!(
        rayleigh_difference > 5.0 * viscoelastic_difference,
        "backward Euler should depend on h far more"
    );
}

#[test]
fn explicit_impulse_conserves_both_momenta_exactly() {
    // Explicit damping is stable for k_D h ω_max² < 2: here about 0.1.
    let (model, mut state) = rod(viscoelastic(1e-3));
    let (linear0, angular0) = model.momentum(&state.positions, &state.velocities);
    let energy0 = model.kinetic_energy(&state.velocities);
    let mut integrator = SymplecticEuler::default();
    for _ in 0..4000 {
        integrator.step(&model, &mut state, 1e-4).unwrap();
    }
    let (linear, angular) = model.momentum(&state.positions, &state.velocities);
    assert!(
        (linear - linear0).norm() < 1e-12 * (1.0 + linear0.norm()),
        "{linear} vs {linear0}"
    );
    assert!(
        (angular - angular0).norm() < 1e-11 * angular0.norm(),
        "{angular} vs {angular0}"
    );
    let energy = model.kinetic_energy(&state.velocities) + model.elastic_energy(&state.positions);
    assert!(energy < 0.99 * energy0, "damping must dissipate: {energy0} → {energy}");
}

#[test]
fn backward_euler_with_viscoelastic_damping_keeps_linear_momentum() {
    let (model, mut state) = rod(viscoelastic(5e-3));
    let (linear0, _) = model.momentum(&state.positions, &state.velocities);
    let mut integrator = BackwardEuler::new(SolverSettings::default()).unwrap();
    for _ in 0..50 {
        integrator.step(&model, &mut state, 0.004).unwrap();
    }
    let (linear, _) = model.momentum(&state.positions, &state.velocities);
    assert!((linear - linear0).norm() < 1e-10 * (1.0 + linear0.norm()));
}

/// Through the run loop (which rounds times to step × h) the explicit impulse is
/// applied at every step: the result equals stepping by hand.
#[test]
fn run_loop_applies_the_explicit_impulse_every_step() {
    let (model, start) = rod(viscoelastic(1e-3));
    let h = 1e-3 / 3.0; // a step whose multiples round differently from running sums
    let steps = 300;
    let mut by_hand = start.clone();
    let mut integrator = SymplecticEuler::default();
    for _ in 0..steps {
        integrator.step(&model, &mut by_hand, h).unwrap();
    }
    let outcome = common::run_quietly(
        &model,
        &mut SymplecticEuler::default(),
        start,
        steps as f64 * h,
        h,
        "viscoelastic",
    );
    let difference = outcome
        .state
        .positions
        .iter()
        .zip(&by_hand.positions)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        difference < 1e-12,
        "run loop and hand stepping differ by {difference:e}"
    );
}

#[test]
fn viscoelastic_damping_is_refused_for_linear_elasticity() {
    let mut model = uniform_model(
        bar([0.4, 0.05, 0.05], [4, 1, 1], TetsPerHex::Six),
        MaterialModel::Linear,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let error = model.set_damping(Some(viscoelastic(1e-3))).unwrap_err();
    assert!(error.to_string().contains("rotation"), "{error}");
}
