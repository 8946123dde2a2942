//! Observed orders of accuracy on a smooth nonlinear problem, and the exact
//! amplitude factors of backward Euler and implicit midpoint on one vibration mode.

mod common;

use common::{bar, clamp_left_end, parameters, uniform_model};
use hooke::integrate::{Integrator, IntegratorConfig};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::{Model, Motion, State};
use hooke::solve::SolverSettings;
use nalgebra::{DMatrix, DVector, SymmetricEigen};

const END_TIME: f64 = 0.2;

/// A free Stable Neo-Hookean block, started stretched, sheared and spinning: about 20% strain, smooth.
fn nonlinear_problem() -> (Model, State) {
    let model = uniform_model(
        bar([0.1, 0.08, 0.06], [1, 1, 1], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e3, 0.3),
        MassKind::Lumped,
    );
    let mut state = model.initial_state();
    // Start deformed (stretched and sheared), so that the initial acceleration is not zero:
    // from rest shape symplectic Euler's positions coincide with leapfrog's and look second order.
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        state.positions[3 * v] += 0.1 * p.x + 0.05 * p.z;
        state.positions[3 * v + 2] -= 0.05 * p.y;
    }
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        state.velocities[3 * v] = 0.1 * (p.x - 0.05) * 10.0 + 0.05 * p.y;
        state.velocities[3 * v + 1] = -0.08 * p.z * 10.0;
        state.velocities[3 * v + 2] = 0.06 * (p.x * p.y) * 100.0;
    }
    (model, state)
}

fn tight(config: IntegratorConfig) -> Box<dyn Integrator> {
    let solver = SolverSettings {
        tolerance: 1e-13,
        ..SolverSettings::default()
    };
    let mut config = config;
    if config.name().unwrap() == "exponential_rosenbrock_euler" {
        config
            .settings
            .insert("krylov_tolerance".into(), toml::Value::Float(1e-12));
    }
    config.build(&solver).unwrap()
}

fn solve(model: &Model, start: &State, config: &IntegratorConfig, steps: usize) -> State {
    let mut integrator = tight(config.clone());
    let mut state = start.clone();
    let h = END_TIME / steps as f64;
    for _ in 0..steps {
        integrator.step(model, &mut state, h).unwrap();
    }
    state
}

fn error(a: &State, b: &State) -> f64 {
    a.positions
        .iter()
        .zip(&b.positions)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn observed_orders_match_theory() {
    let (model, start) = nonlinear_problem();
    let reference = solve(&model, &start, &IntegratorConfig::from_name("rk4").unwrap(), 4000);
    let cases: [(&str, f64, &[usize]); 11] = [
        ("forward_euler", 1.0, &[160, 320, 640]),
        ("symplectic_euler", 1.0, &[40, 80, 160]),
        ("semi_implicit_backward_euler", 1.0, &[160, 320, 640]),
        ("backward_euler", 1.0, &[160, 320, 640]),
        ("implicit_midpoint", 2.0, &[20, 40, 80]),
        ("velocity_verlet", 2.0, &[20, 40, 80]),
        ("bdf2", 2.0, &[20, 40, 80]),
        ("newmark", 2.0, &[20, 40, 80]),
        ("variational_midpoint", 2.0, &[20, 40, 80]),
        ("exponential_rosenbrock_euler", 2.0, &[20, 40, 80]),
        ("runge_kutta4", 4.0, &[10, 20, 40]),
    ];
    for (name, expected, steps) in cases {
        let config = IntegratorConfig::from_name(name).unwrap();
        let errors: Vec<f64> = steps
            .iter()
            .map(|&n| error(&solve(&model, &start, &config, n), &reference))
            .collect();
        let order = (errors[1] / errors[2]).log2();
        eprintln!("{name}: errors {errors:?}, observed order {order:.3}");
        assert!(
            (order - expected).abs() < 0.2,
            "{name}: observed order {order:.3}, expected {expected} ({errors:?})"
        );
    }
}

/// A clamped linear-elastic bar started in its lowest mode, and that mode's ω.
fn single_mode() -> (Model, State, DVector<f64>, f64) {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], [4, 1, 1], TetsPerHex::Six),
        MaterialModel::Linear,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let dofs = model.dof_map(0.0);
    let values = model.stiffness(&model.rest_positions(), 0.0, false).unwrap();
    let k = common::dense(model.pattern(), &values);
    let n = dofs.free_count();
    let inverse_sqrt_mass: Vec<f64> = dofs
        .free_dofs
        .iter()
        .map(|&d| 1.0 / model.mass().lumped()[d / 3].sqrt())
        .collect();
    let reduced = DMatrix::from_fn(n, n, |i, j| {
        k[(dofs.free_dofs[i], dofs.free_dofs[j])] * inverse_sqrt_mass[i] * inverse_sqrt_mass[j]
    });
    let eigen = SymmetricEigen::new(reduced);
    let lowest = eigen.eigenvalues.imin();
    let omega = eigen.eigenvalues[lowest].sqrt();
    // M-orthonormal mode over all DOFs (zero on the pins).
    let mut mode = DVector::zeros(model.dof_count());
    for (i, &d) in dofs.free_dofs.iter().enumerate() {
        mode[d] = eigen.eigenvectors[(i, lowest)] * inverse_sqrt_mass[i];
    }
    let mut state = model.initial_state();
    for d in 0..model.dof_count() {
        state.positions[d] += 1e-3 * mode[d];
    }
    (model, state, mode, omega)
}

/// Modal amplitude √(a² + (b/ω)²) with a, b the mode's displacement and velocity coordinates.
fn amplitude(model: &Model, state: &State, mode: &DVector<f64>, omega: f64) -> f64 {
    let rest = model.rest_positions();
    let masses = model.mass().lumped();
    let (mut a, mut b) = (0.0, 0.0);
    for d in 0..model.dof_count() {
        a += mode[d] * masses[d / 3] * (state.positions[d] - rest[d]);
        b += mode[d] * masses[d / 3] * state.velocities[d];
    }
    (a * a + (b / omega).powi(2)).sqrt()
}

#[test]
fn backward_euler_and_implicit_midpoint_amplitude_factors() {
    let (model, start, mode, omega) = single_mode();
    let h = 1.0 / omega; // hω = 1, as in the Chen 2019 thesis, Fig. 6.2
    for (name, factor) in [
        ("backward_euler", (1.0f64 + 1.0).powf(-0.5)),
        ("implicit_midpoint", 1.0),
    ] {
        let mut integrator = tight(IntegratorConfig::from_name(name).unwrap());
        let mut state = start.clone();
        let mut previous = amplitude(&model, &state, &mode, omega);
        for _ in 0..5 {
            integrator.step(&model, &mut state, h).unwrap();
            let current = amplitude(&model, &state, &mode, omega);
            assert!(
                (current / previous - factor).abs() < 1e-8,
                "{name}: factor {} vs {factor}",
                current / previous
            );
            previous = current;
        }
    }
}

/// Exponential Rosenbrock–Euler integrates a linear system with constant damping
/// and forces exactly: a few large steps match a fine RK4 reference, with a
/// lumped and with a consistent mass.
#[test]
fn exponential_rosenbrock_euler_is_exact_for_linear_systems() {
    use hooke::model::{Damping, DampingStiffness};
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        let mut model = uniform_model(
            bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
            MaterialModel::Linear,
            parameters(1e5, 0.3),
            mass,
        );
        clamp_left_end(&mut model, Motion::Fixed {}, None);
        model.set_gravity(nalgebra::Vector3::new(0.0, 0.0, -9.81));
        model
            .set_damping(Some(Damping {
                mass_coefficient: 2.0,
                stiffness_coefficient: 1e-4,
                stiffness: DampingStiffness::Rest,
                viscoelastic_coefficient: 0.0,
                ether_drag: 0.0,
            }))
            .unwrap();
        let mut start = model.initial_state();
        for (v, p) in model.mesh().vertices().iter().enumerate() {
            start.velocities[3 * v + 1] = 0.3 * p.x;
        }
        let end = 0.2;
        let run = |config: IntegratorConfig, steps: usize| {
            let mut integrator = config.build(&Default::default()).unwrap();
            let mut state = start.clone();
            for _ in 0..steps {
                integrator.step(&model, &mut state, end / steps as f64).unwrap();
            }
            state
        };
        let reference = run(IntegratorConfig::from_name("rk4").unwrap(), 4000);
        let mut exponential = IntegratorConfig::from_name("ere").unwrap();
        exponential
            .settings
            .insert("krylov_tolerance".into(), toml::Value::Float(1e-12));
        let exponential = run(exponential, 4);
        let displacement = reference
            .positions
            .iter()
            .zip(model.rest_positions())
            .map(|(x, r)| (x - r).abs())
            .fold(0.0, f64::max);
        let difference = error(&exponential, &reference);
        assert!(
            difference < 1e-7 * displacement,
            "{mass:?}: ERE off by {difference:e} (displacement {displacement:e})"
        );
        // Backward Euler with the same four steps is far off: the test has teeth.
        let backward = run(IntegratorConfig::from_name("be").unwrap(), 4);
        assert!(error(&backward, &reference) > 1e-2 * displacement);
    }
}

/// A clamped bar moving up and spinning about its axis, lumped or consistent.
fn spinning_clamped_bar(material: MaterialModel, mass: MassKind) -> (Model, State) {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        material,
        parameters(1e5, 0.3),
        mass,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let mut start = model.initial_state();
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        let spin = nalgebra::Vector3::new(3.0, 0.0, 0.0).cross(&(p - nalgebra::Vector3::new(0.0, 0.05, 0.05)));
        let velocity = spin + nalgebra::Vector3::new(0.0, 0.5, 1.0) * p.x;
        start.velocities[3 * v..3 * v + 3].copy_from_slice(velocity.as_slice());
    }
    (model, start)
}

/// ERE with its default Krylov settings and a consistent mass, at steps where
/// h‖J‖ is in the thousands: the Krylov step control must shrink its sub-steps
/// (an overflowing exp(tH) is a rejection) rather than fail.
#[test]
fn exponential_rosenbrock_euler_takes_large_steps_with_a_consistent_mass() {
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        let (model, start) = spinning_clamped_bar(MaterialModel::Linear, mass);
        let run = |name: &str, steps: usize| {
            let mut integrator = IntegratorConfig::from_name(name)
                .unwrap()
                .build(&Default::default())
                .unwrap();
            let mut state = start.clone();
            for _ in 0..steps {
                integrator.step(&model, &mut state, 0.1 / steps as f64).unwrap();
            }
            state
        };
        let reference = run("rk4", 4000);
        let exponential = run("ere", 10);
        let displacement = reference
            .positions
            .iter()
            .zip(model.rest_positions())
            .map(|(x, r)| (x - r).abs())
            .fold(0.0, f64::max);
        let difference = error(&exponential, &reference);
        assert!(
            difference < 1e-5 * displacement,
            "{mass:?}: ERE off by {difference:e} (displacement {displacement:e})"
        );
    }
}

/// Every stepper for solids runs with a lumped and with a consistent mass, and
/// none of them blows up (mass_spring_semi_implicit, for spring networks only,
/// and dgsi, for discontinuous Galerkin bodies only, are not run on this
/// continuous bar; tests/discontinuous.rs runs dgsi with both masses).
#[test]
fn every_stepper_runs_with_both_masses() {
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        // Co-rotated, so that corotational_reversible takes part too.
        let (model, start) = spinning_clamped_bar(MaterialModel::Corotational, mass);
        let energy = |s: &State| model.kinetic_energy(&s.velocities) + model.energies(&s.positions, s.time).elastic;
        let initial = energy(&start);
        let mut ran = 0;
        for entry in hooke::integrate::INTEGRATORS.iter().filter(|e| e.name != "static") {
            let mut integrator = entry.with_defaults().unwrap();
            if integrator.check(&model).is_err() {
                continue;
            }
            let mut state = start.clone();
            // Within the explicit methods' stability limit for both masses.
            for step in 0..10 {
                if let Err(e) = integrator.step(&model, &mut state, 5e-4) {
                    panic!("{} with {mass:?} mass failed at step {step}: {e}", entry.name);
                }
            }
            let now = energy(&state);
            assert!(
                now.is_finite() && now < 1.5 * initial,
                "{} with {mass:?} mass: energy {initial} → {now}",
                entry.name
            );
            ran += 1;
        }
        assert_eq!(
            ran,
            hooke::integrate::INTEGRATORS.len() - 3,
            "{mass:?}: a stepper refused the bar"
        );
    }
}
