//! The energies table's `dissipated` column is the work done against damping:
//! with implicit midpoint on a linear problem (no numerical dissipation) the
//! energy lost equals it to round-off; backward Euler loses more (its own damping).

mod common;

use common::{bar, clamp_left_end, parameters, uniform_model};
use hooke::fem::MassKind;
use hooke::integrate::{Integrator, IntegratorConfig};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::{Damping, DampingStiffness, Motion};

fn balance(name: &str) -> (f64, f64) {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::Linear,
        parameters(1e5, 0.3),
        MassKind::Consistent,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    model
        .set_damping(Some(Damping {
            mass_coefficient: 0.5,
            stiffness_coefficient: 1e-3,
            stiffness: DampingStiffness::Rest,
            viscoelastic_coefficient: 0.0,
        }))
        .unwrap();
    let mut start = model.initial_state();
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        start.velocities[3 * v + 2] = 2.0 * p.x;
    }
    let solver = hooke::solve::SolverSettings {
        tolerance: 1e-13,
        ..Default::default()
    };
    let mut integrator: Box<dyn Integrator> = IntegratorConfig::from_name(name).unwrap().build(&solver).unwrap();
    let outcome = common::run_quietly(&model, integrator.as_mut(), start, 0.2, 0.005, name);
    let first = &outcome.records[0];
    let last = outcome.records.last().unwrap();
    (first.total - last.total, last.dissipated)
}

#[test]
fn dissipated_energy_accounts_for_the_loss_under_implicit_midpoint() {
    let (lost, dissipated) = balance("implicit_midpoint");
    assert!(
        dissipated > 0.1 * lost && lost > 0.0,
        "lost {lost}, dissipated {dissipated}"
    );
    assert!(
        (lost - dissipated).abs() < 1e-9 * lost,
        "lost {lost} but dissipated {dissipated}"
    );
}

#[test]
fn backward_euler_loses_more_than_its_physical_damping() {
    let (lost, dissipated) = balance("backward_euler");
    assert!(lost > 1.05 * dissipated, "lost {lost}, dissipated {dissipated}");
}
