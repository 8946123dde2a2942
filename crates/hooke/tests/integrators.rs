//! The foundation's time steppers: exact momentum balance, pinned motion,
//! release, static equilibrium, dissipation, and clean failure.

mod common;

use common::{bar, clamp_left_end, compressed_clamped_bar, dense, parameters, uniform_model};
use hooke::integrate::{BackwardEuler, Integrator, SemiImplicitBackwardEuler, StaticEquilibrium, SymplecticEuler};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::{Model, Motion};
use hooke::solve::SolverSettings;
use hooke::HookeError;
use nalgebra::Vector3;

fn soft_bar(mass: MassKind) -> Model {
    uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(2e4, 0.4),
        mass,
    )
}

fn integrators() -> Vec<Box<dyn Integrator>> {
    vec![
        Box::new(BackwardEuler::new(SolverSettings::default()).unwrap()),
        Box::new(SemiImplicitBackwardEuler::new(true)),
        Box::new(SymplecticEuler::default()),
    ]
}

/// A free body's linear momentum changes only by gravity: P(t) = m g t, exactly.
#[test]
fn free_body_momentum_follows_gravity() {
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        for mut integrator in integrators() {
            if mass == MassKind::Consistent && integrator.name() == "symplectic_euler" {
                continue;
            }
            let mut model = soft_bar(mass);
            let gravity = Vector3::new(0.0, -3.0, -9.81);
            model.set_gravity(gravity);
            let total_mass: f64 = model.mass().lumped().iter().sum();
            let mut state = model.initial_state();
            // A spin so that elastic forces are not zero.
            for (v, p) in model.mesh().vertices().iter().enumerate() {
                let spin = Vector3::new(2.0, 0.0, 1.0).cross(&(p - Vector3::new(0.2, 0.05, 0.05)));
                state.velocities[3 * v..3 * v + 3].copy_from_slice(spin.as_slice());
            }
            let (initial, _) = model.momentum(&state.positions, &state.velocities);
            let dt = 1e-3;
            for _ in 0..20 {
                integrator.step(&model, &mut state, dt).unwrap();
            }
            let (momentum, _) = model.momentum(&state.positions, &state.velocities);
            let expected = initial + gravity * total_mass * state.time;
            assert!(
                (momentum - expected).norm() < 1e-10 * expected.norm(),
                "{} ({mass:?}): momentum {momentum} vs {expected}",
                integrator.name()
            );
        }
    }
}

/// Symplectic Euler conserves the angular momentum of a free, spinning elastic body exactly.
#[test]
fn symplectic_euler_conserves_angular_momentum() {
    let model = soft_bar(MassKind::Lumped);
    let mut state = model.initial_state();
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        let spin = Vector3::new(0.0, 3.0, 1.0).cross(p) + Vector3::new(0.1, 0.0, 0.0) * p.x;
        state.velocities[3 * v..3 * v + 3].copy_from_slice(spin.as_slice());
    }
    let (_, initial) = model.momentum(&state.positions, &state.velocities);
    let mut integrator = SymplecticEuler::default();
    for _ in 0..500 {
        integrator.step(&model, &mut state, 2e-4).unwrap();
    }
    let (_, angular) = model.momentum(&state.positions, &state.velocities);
    assert!(
        (angular - initial).norm() < 1e-12 * initial.norm(),
        "{angular} vs {initial}"
    );
    assert!(
        model.elastic_energy(&state.positions) > 1e-8,
        "the body must actually deform"
    );
}

/// Pinned vertices moving rigidly drag a body already moving with them along
/// exactly: pinned–free couplings through M, D and K are handled.
#[test]
fn pins_translating_with_the_body_keep_it_rigid() {
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        for mut integrator in integrators() {
            if mass == MassKind::Consistent && integrator.name() == "symplectic_euler" {
                continue;
            }
            let mut model = soft_bar(mass);
            let velocity = [0.3, -0.2, 0.1];
            clamp_left_end(&mut model, Motion::Translation { velocity }, None);
            let mut state = model.initial_state();
            state.velocities = (0..model.dof_count()).map(|i| velocity[i % 3]).collect();
            // 2 ms keeps the explicit method below its stability limit (about 6 ms here).
            for _ in 0..50 {
                integrator.step(&model, &mut state, 0.002).unwrap();
            }
            for (v, p) in model.mesh().vertices().iter().enumerate() {
                for a in 0..3 {
                    let expected = p[a] + velocity[a] * state.time;
                    assert!(
                        (state.positions[3 * v + a] - expected).abs() < 1e-9,
                        "{} ({mass:?}): vertex {v} drifted: {} vs {expected}",
                        integrator.name(),
                        state.positions[3 * v + a]
                    );
                }
            }
        }
    }
}

#[test]
fn prescribed_rotation_is_followed_and_release_frees_the_pins() {
    let mut model = soft_bar(MassKind::Lumped);
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    let motion = Motion::Rotation {
        axis: [1.0, 0.0, 0.0],
        center: [0.0, 0.05, 0.05],
        angular_velocity: 2.0,
        velocity: [0.0; 3],
    };
    let pinned = clamp_left_end(&mut model, motion.clone(), Some(0.1));
    let mut state = model.initial_state();
    let mut integrator = BackwardEuler::new(SolverSettings::default()).unwrap();
    let dt = 0.01;
    for step in 1..=20 {
        integrator.step(&model, &mut state, dt).unwrap();
        let time = step as f64 * dt;
        for &v in &pinned {
            let expected = motion.position(&model.mesh().vertices()[v], time);
            let actual = Vector3::new(
                state.positions[3 * v],
                state.positions[3 * v + 1],
                state.positions[3 * v + 2],
            );
            if time < 0.1 - 1e-9 {
                assert!(
                    (actual - expected).norm() < 1e-12,
                    "pinned vertex {v} off its path at t = {time}"
                );
            } else if time > 0.15 {
                assert!(
                    (actual - expected).norm() > 1e-4,
                    "released vertex {v} still follows its path at t = {time}"
                );
            }
        }
    }
}

/// The static solve reaches ∇W = f on the free DOFs.
#[test]
fn static_equilibrium_balances_the_load() {
    let mut model = soft_bar(MassKind::Lumped);
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let mut state = model.initial_state();
    let report = StaticEquilibrium::new(SolverSettings::default())
        .unwrap()
        .step(&model, &mut state, 1.0)
        .unwrap();
    assert!(
        report.iterations > 1,
        "a nonlinear problem needs several Newton iterations"
    );
    let mut gradient = vec![0.0; model.dof_count()];
    gradient.copy_from_slice(&common::internal_gradient(&model, &state.positions, 0.0).unwrap());
    let mut force = vec![0.0; model.dof_count()];
    model.external_force(state.time, &mut force);
    let dofs = model.dof_map(state.time);
    let weight = force.iter().map(|f| f.abs()).fold(0.0, f64::max);
    for &d in &dofs.free_dofs {
        assert!((gradient[d] - force[d]).abs() < 1e-6 * weight, "dof {d} out of balance");
    }
    // Without pins there is no equilibrium: a clear error, not a singular solve.
    let free = soft_bar(MassKind::Lumped);
    let mut state = free.initial_state();
    let error = StaticEquilibrium::new(SolverSettings::default())
        .unwrap()
        .step(&free, &mut state, 1.0)
        .unwrap_err();
    assert!(error.to_string().contains("pinned"), "{error}");
}

/// Backward Euler is dissipative: the energy of an undamped linear-elastic
/// vibration never grows, and projection on or off gives the same answer.
#[test]
fn backward_euler_dissipates_and_projection_does_not_change_the_solution() {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::Linear,
        parameters(1e5, 0.3),
        MassKind::Consistent,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let mut start = model.initial_state();
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        start.velocities[3 * v + 2] = 0.5 * p.x;
    }
    let energy = |s: &hooke::model::State| model.kinetic_energy(&s.velocities) + model.elastic_energy(&s.positions);
    let mut results = Vec::new();
    for project in [true, false] {
        let settings = SolverSettings {
            project_hessian: project,
            ..SolverSettings::default()
        };
        let mut integrator = BackwardEuler::new(settings.clone()).unwrap();
        let mut state = start.clone();
        let mut previous = energy(&state);
        for _ in 0..40 {
            integrator.step(&model, &mut state, 0.005).unwrap();
            let current = energy(&state);
            assert!(
                current <= previous * (1.0 + 1e-12),
                "energy grew from {previous} to {current}"
            );
            previous = current;
        }
        assert!(previous < 0.9 * energy(&start), "backward Euler must visibly damp");
        results.push(state.positions);
    }
    let difference = results[0]
        .iter()
        .zip(&results[1])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        difference < 1e-9,
        "projection changed a linear problem's answer by {difference}"
    );
}

/// A diverging explicit step is reported with where it happened and leaves the state as it was.
#[test]
fn failed_step_is_reported_and_state_is_untouched() {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::NeoHookean,
        parameters(1e9, 0.3),
        MassKind::Lumped,
    );
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let mut state = model.initial_state();
    let mut integrator = SymplecticEuler::default();
    let mut failure = None;
    for _ in 0..100 {
        let before = state.clone();
        match integrator.step(&model, &mut state, 0.01) {
            Ok(_) => {}
            Err(error) => {
                assert_eq!(state, before, "a failed step must not change the state");
                failure = Some(error);
                break;
            }
        }
    }
    match failure {
        Some(HookeError::StepFailed { step, time, .. }) => {
            assert!(step >= 1 && time > 0.0);
        }
        other => panic!("expected a step failure, got {other:?}"),
    }
}

/// Inward velocities that invert elements of the predictor xₙ + h vₙ.
fn crushing_velocities(model: &Model, speed: f64) -> Vec<f64> {
    let center = Vector3::new(0.2, 0.05, 0.05);
    model
        .mesh()
        .vertices()
        .iter()
        .flat_map(|p| ((center - p) * speed).as_slice().to_vec())
        .collect()
}

/// A step the line search has to shorten must still end in equilibrium: Newton
/// is converged only by a small full increment, never by a small damped step.
#[test]
fn line_searched_static_solve_ends_in_equilibrium() {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::NeoHookean,
        parameters(1e5, 0.45),
        MassKind::Lumped,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    model.add_pin(hooke::model::Pin {
        vertices: hooke::model::Selection::Plane {
            point: [0.4, 0.0, 0.0],
            normal: [1.0, 0.0, 0.0],
            tolerance: None,
        }
        .vertices(model.mesh(), "end")
        .unwrap(),
        motion: Motion::Translation {
            velocity: [0.3, 0.0, 0.1],
        },
        release_time: None,
        components: hooke::model::ALL_COMPONENTS,
        key: None,
    });
    // One large step: the end is pulled 30 cm along the bar and 10 cm sideways at once.
    let mut state = model.initial_state();
    let report = StaticEquilibrium::new(SolverSettings::default())
        .unwrap()
        .step(&model, &mut state, 1.0)
        .unwrap();
    assert!(
        report.line_search_reductions > 0,
        "the test must exercise the line search"
    );
    let mut gradient = vec![0.0; model.dof_count()];
    gradient.copy_from_slice(&common::internal_gradient(&model, &state.positions, 0.0).unwrap());
    let dofs = model.dof_map(state.time);
    let scale = gradient.iter().map(|g| g.abs()).fold(0.0, f64::max);
    for &d in &dofs.free_dofs {
        assert!(
            gradient[d].abs() < 1e-6 * scale,
            "dof {d} out of balance: {}",
            gradient[d]
        );
    }
}

/// When the predictor inverts a Neo-Hookean element, backward Euler starts from xₙ instead of failing.
#[test]
fn backward_euler_recovers_from_an_infeasible_predictor() {
    let model = uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::NeoHookean,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let mut state = model.initial_state();
    state.velocities = crushing_velocities(&model, 150.0);
    let dt = 0.01;
    let predicted: Vec<f64> = state
        .positions
        .iter()
        .zip(&state.velocities)
        .map(|(x, v)| x + dt * v)
        .collect();
    assert!(
        model.elastic_energy(&predicted).is_infinite(),
        "the predictor must be infeasible for this test"
    );
    let mut integrator = BackwardEuler::new(SolverSettings::default()).unwrap();
    integrator.step(&model, &mut state, dt).unwrap();
    assert!(model.elastic_energy(&state.positions).is_finite());
}

/// An explicit step that inverts a Neo-Hookean element is a failure, not a committed state.
#[test]
fn explicit_step_into_an_undefined_state_fails_and_names_the_element() {
    let model = uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::NeoHookean,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let mut state = model.initial_state();
    state.velocities = crushing_velocities(&model, 150.0);
    let before = state.clone();
    let error = SymplecticEuler::default().step(&model, &mut state, 0.01).unwrap_err();
    assert_eq!(state, before);
    let message = error.to_string();
    assert!(matches!(error, HookeError::StepFailed { step: 1, .. }), "{message}");
    assert!(message.contains("element") && message.contains("inverted"), "{message}");
}

/// A whole simulation, sparse factorisations included, gives the same bits on 1, 2 and 3 threads.
#[test]
fn simulation_is_bit_for_bit_identical_for_any_thread_count() {
    let mut model = uniform_model(
        bar([0.6, 0.1, 0.1], [24, 4, 4], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.45),
        MassKind::Consistent,
    );
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut state = model.initial_state();
            let mut backward = BackwardEuler::new(SolverSettings::default()).unwrap();
            let mut semi_implicit = SemiImplicitBackwardEuler::new(true);
            for _ in 0..3 {
                backward.step(&model, &mut state, 0.01).unwrap();
                semi_implicit.step(&model, &mut state, 0.01).unwrap();
            }
            common::state_bits(&state)
        })
    };
    let reference = run(1);
    for threads in [2, 3] {
        assert!(run(threads) == reference, "{threads} threads differ from 1 thread");
    }
}

/// When Newton fails, the step is split in halves (Chen 2019 thesis, §4.2.3) and still lands at t + h.
#[test]
fn newton_failure_triggers_step_halving() {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.45),
        MassKind::Lumped,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let start = {
        let mut state = model.initial_state();
        state.velocities = crushing_velocities(&model, 40.0);
        state
    };
    let strict = SolverSettings {
        max_iterations: Some(5),
        ..SolverSettings::default()
    };
    let without = SolverSettings {
        max_step_halvings: 0,
        ..strict.clone()
    };
    let mut state = start.clone();
    assert!(
        BackwardEuler::new(without.clone())
            .unwrap()
            .step(&model, &mut state, 0.02)
            .is_err(),
        "the test needs a step Newton fails"
    );
    let mut state = start.clone();
    let report = BackwardEuler::new(strict.clone())
        .unwrap()
        .step(&model, &mut state, 0.02)
        .unwrap();
    assert!(report.halvings > 0, "{report:?}");
    assert!((state.time - 0.02).abs() < 1e-15);
    assert!(model.elastic_energy(&state.positions).is_finite());
}

/// On a strongly compressed bar with a step so long that A = M + h²K is
/// indefinite, `indefinite = exact` solves A Δv = h f as it is (LBLᵀ), as
/// the semi-implicit Euler of Chen's thesis does, while the default shifts A and solves
/// another system.
#[test]
fn semi_implicit_euler_solves_an_indefinite_system_exactly_on_request() {
    use hooke::solve::IndefiniteSystem;
    let (model, compressed) = compressed_clamped_bar();
    let mut start = model.initial_state();
    start.positions = compressed;
    // Dense K and M on the free DOFs; the step makes 1 + h²λ_min negative.
    let dofs = model.dof_map(0.0);
    let mut stiffness = vec![0.0; model.pattern().nonzeros()];
    let mut gradient = vec![0.0; model.dof_count()];
    model
        .hessian(
            &start.positions,
            0.0,
            false,
            &mut gradient,
            &mut stiffness,
            &mut Vec::new(),
        )
        .unwrap();
    common::add_external_force(&model, &mut gradient);
    let (pattern, source) = model.pattern().restrict(&dofs.free_index);
    let k = dense(&pattern, &source.iter().map(|&i| stiffness[i]).collect::<Vec<_>>());
    let m = dense(
        &pattern,
        &source.iter().map(|&i| model.mass().values()[i]).collect::<Vec<_>>(),
    );
    // The lumped M is diagonal: the eigenvalues of M⁻¹K are those of M^-½ K M^-½.
    let scaling = nalgebra::DMatrix::from_diagonal(&m.diagonal().map(|v| 1.0 / v.sqrt()));
    let lowest = (&scaling * &k * &scaling).symmetric_eigenvalues().min();
    assert!(lowest < 0.0, "the test needs an indefinite K ({lowest})");
    let h = 2.0 / (-lowest).sqrt();
    let a = &m + &k * (h * h);
    let mut external = vec![0.0; model.dof_count()];
    model.external_force(h, &mut external);
    let rhs = nalgebra::DVector::from_iterator(
        dofs.free_count(),
        dofs.free_dofs.iter().map(|&d| h * (external[d] - gradient[d])),
    );
    let residual = |integrator: &mut SemiImplicitBackwardEuler| {
        let mut state = start.clone();
        integrator.step(&model, &mut state, h).unwrap();
        let change = nalgebra::DVector::from_iterator(
            dofs.free_count(),
            dofs.free_dofs
                .iter()
                .map(|&d| state.velocities[d] - start.velocities[d]),
        );
        (&a * change - &rhs).norm() / rhs.norm()
    };
    let exact = residual(&mut SemiImplicitBackwardEuler::with_indefinite(
        false,
        IndefiniteSystem::Exact,
    ));
    let shifted = residual(&mut SemiImplicitBackwardEuler::new(false));
    assert!(exact < 1e-8, "exact solve residual {exact}");
    assert!(
        shifted > 1e-3,
        "the shifted solve should answer another system ({shifted})"
    );
}

/// A pin released at t_r holds up to and including t_r and frees its vertices
/// from the step that starts at t_r: for every stepper, the released vertices are
/// exactly at rest at t_r, start moving in the next step, and that first free step
/// is the step a fresh integrator takes from the same state (no history from
/// before the release is carried over: BDF2 restarts with backward Euler, Newmark
/// recomputes aₙ with the new free DOFs, SIERE rebuilds its basis).
/// Returns the names of the steppers that accept the model.
fn assert_release_is_exact(model: &Model, released: &[usize], start: &hooke::model::State) -> Vec<&'static str> {
    let dt = 2e-4;
    let release = model.pins().iter().find_map(|p| p.release_time).unwrap();
    assert!((release - 3.0 * dt).abs() < 1e-18);
    let rest = model.initial_state().positions;
    let d = model.dimension();
    let released_dofs: Vec<usize> = released.iter().flat_map(|&v| d * v..d * v + d).collect();
    let largest = |values: &[f64], reference: &[f64]| {
        released_dofs
            .iter()
            .map(|&d| (values[d] - reference[d]).abs())
            .fold(0.0, f64::max)
    };
    let mut tested = Vec::new();
    for entry in hooke::integrate::INTEGRATORS.iter().filter(|e| e.name != "static") {
        let mut integrator = entry.with_defaults().unwrap();
        if integrator.check(model).is_err() {
            continue;
        }
        tested.push(entry.name);
        let name = entry.name;
        let mut state = start.clone();
        for _ in 0..3 {
            integrator.step(model, &mut state, dt).unwrap();
            assert_eq!(
                largest(&state.positions, &rest),
                0.0,
                "{name}: held vertices moved before t_r"
            );
        }
        assert!((state.time - release).abs() < 1e-15, "{name}: t = {}", state.time);
        let at_release = state.clone();
        integrator.step(model, &mut state, dt).unwrap();
        // (Forward Euler's first free step changes only their velocities.)
        let speed = largest(&state.velocities, &vec![0.0; rest.len()]);
        assert!(
            speed > 1e-4,
            "{name}: released vertices did not start moving in the first step after t_r: speed {speed:e}"
        );
        let mut fresh = at_release;
        entry.with_defaults().unwrap().step(model, &mut fresh, dt).unwrap();
        let scale = state
            .positions
            .iter()
            .zip(&rest)
            .map(|(x, r)| (x - r).abs())
            .fold(0.0, f64::max);
        let difference = state
            .positions
            .iter()
            .zip(&fresh.positions)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            difference <= 1e-9 * scale,
            "{name}: the first step after release carried history: {difference:e} from a fresh start (scale {scale:e})"
        );
    }
    tested
}

#[test]
fn every_stepper_releases_a_pin_at_exactly_its_release_time() {
    // A co-rotated bar held at both ends and bent: once the right end is released
    // the bend pulls it (no gravity, so the conservative-only steppers take part).
    let mut bar = uniform_model(
        bar([0.4, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::Corotational,
        parameters(2e4, 0.4),
        MassKind::Lumped,
    );
    clamp_left_end(&mut bar, Motion::Fixed {}, None);
    let right_end = hooke::model::Selection::Plane {
        point: [0.4, 0.0, 0.0],
        normal: [1.0, 0.0, 0.0],
        tolerance: None,
    }
    .vertices(bar.mesh(), "right end")
    .unwrap();
    bar.add_pin(hooke::model::Pin::new(right_end.clone(), Motion::Fixed {}, Some(6e-4)));
    let mut bent = bar.initial_state();
    for (v, p) in bar.mesh().vertices().iter().enumerate() {
        if !right_end.contains(&v) {
            bent.positions[3 * v + 2] += 0.02 * (std::f64::consts::PI * p.x / 0.4).sin();
        }
    }
    let mut tested = assert_release_is_exact(&bar, &right_end, &bent);

    // A rope of springs under gravity, held at both ends, for the spring-only stepper.
    let points = hooke::fem::spring_networks::straight_rope(Vector3::zeros(), Vector3::new(1.0, 0.0, 0.0), 8).unwrap();
    let part = hooke::fem::spring_networks::chain(points.clone(), 100.0, 0.1).unwrap();
    let mesh = hooke::mesh::TetMesh::new(points, Vec::new(), Vec::new()).unwrap();
    let network = hooke::fem::SpringNetwork {
        springs: part.springs,
        vertex_masses: part.masses,
    };
    let mut rope = Model::with_springs(mesh, Vec::new(), network, MassKind::Lumped).unwrap();
    rope.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    rope.add_pin(hooke::model::Pin::new(vec![0], Motion::Fixed {}, None));
    rope.add_pin(hooke::model::Pin::new(vec![8], Motion::Fixed {}, Some(6e-4)));
    let hanging = rope.initial_state();
    tested.extend(assert_release_is_exact(&rope, &[8], &hanging));

    // A 2D plate of discontinuous Galerkin triangles, for the stepper that needs them.
    let mesh = hooke::mesh::rectangle_mesh([0.0, 0.0], [0.4, 0.1], [4, 1]).unwrap();
    let material = hooke::material::IsotropicMaterial::shared(MaterialModel::Corotational, &parameters(2e4, 0.4));
    let (mut plate, _) = Model::discontinuous_planar(
        &mesh,
        vec![material; mesh.triangle_count()],
        MassKind::Lumped,
        hooke::fem::Formulation::Bz,
        Some(1e3),
    )
    .unwrap();
    let select = |x: f64, n: f64| {
        hooke::model::Selection::Plane {
            point: [x, 0.0, 0.0],
            normal: [n, 0.0, 0.0],
            tolerance: None,
        }
        .vertices(plate.mesh(), "end")
        .unwrap()
    };
    let (left, right) = (select(0.0, -1.0), select(0.4, 1.0));
    plate.add_pin(hooke::model::Pin::new(left, Motion::Fixed {}, None));
    plate.add_pin(hooke::model::Pin::new(right.clone(), Motion::Fixed {}, Some(6e-4)));
    let mut bent = plate.initial_state();
    for (v, p) in plate.mesh().vertices().iter().enumerate() {
        if !right.contains(&v) {
            bent.positions[2 * v + 1] += 0.02 * (std::f64::consts::PI * p.x / 0.4).sin();
        }
    }
    tested.extend(assert_release_is_exact(&plate, &right, &bent));

    tested.sort();
    tested.dedup();
    // The two adaptive variational steppers refuse released pins (their time
    // symmetry and energy behaviour need fixed ones).
    let all: Vec<&str> = hooke::integrate::INTEGRATORS
        .iter()
        .map(|e| e.name)
        .filter(|n| !["static", "time_reversible_adaptive", "symplectic_adaptive"].contains(n))
        .collect();
    for name in all {
        assert!(tested.contains(&name), "{name} was not tested: it refused both models");
    }
}

/// A corotational bar clamped at one end and twisted at the other (the case
/// where per-element projection slows Newton to a linear rate).
fn twisted_bar_scene(solver: &str) -> String {
    format!(
        r#"name = "twisted_bar"
[simulation]
duration = 0.2
time_step = 0.0333333333333333333
[[bodies]]
mesh = {{ box = {{ size = [0.8, 0.1, 0.1], cells = [10, 2, 2], origin = [0.0, -0.05, -0.05] }} }}
material = {{ model = "corotational", youngs_modulus = 1e6, poisson_ratio = 0.4, density = 1000.0 }}
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}
[[pins]]
select = {{ plane = {{ point = [0.8, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }} }}
motion = {{ kind = "rotation", axis = [1.0, 0.0, 0.0], center = [0.8, 0.0, 0.0], angular_velocity = 6.28 }}
[integrator]
kind = "backward_euler"
[solver]
{solver}
"#
    )
}

fn run_scene(text: &str) -> hooke::simulation::RunOutcome {
    let scene = hooke::scene::Scene::from_text(text, "test.toml", std::env::temp_dir()).unwrap();
    let mut settings = scene.run_settings(None);
    settings.output_directory = std::env::temp_dir().join(format!("hooke-twisted-{}", std::process::id()));
    settings.vtk_every = 0;
    settings.plot = false;
    let mut built = scene.build().unwrap();
    let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap();
    let _ = std::fs::remove_dir_all(&settings.output_directory);
    outcome
}

/// A step the solver could not converge at full size and split is not silent:
/// the summary counts it and its notes say when and what it means; with
/// splitting off the run fails instead. A tolerance below rounding stops short
/// and says so.
#[test]
fn steps_that_were_split_or_stopped_short_are_reported() {
    let split = run_scene(&twisted_bar_scene("tolerance = 1e-10\nmax_iterations = 8"));
    assert!(split.failure.is_none(), "{:?}", split.failure);
    let statistics = &split.summary.statistics;
    assert!(
        statistics.split_steps > 0 && statistics.first_split_at.is_some(),
        "{statistics:?}"
    );
    assert!(statistics.max_relative_increment <= 1e-10, "{statistics:?}");
    assert!(
        split
            .summary
            .notes
            .iter()
            .any(|n| n.contains("were split into sub-steps")),
        "{:?}",
        split.summary.notes
    );

    let strict = run_scene(&twisted_bar_scene(
        "tolerance = 1e-10\nmax_iterations = 8\nmax_step_halvings = 0",
    ));
    let failure = strict.failure.expect("the unsplit run fails");
    assert!(failure.to_string().contains("did not converge"), "{failure}");

    let text = twisted_bar_scene("tolerance = 1e-17\nproject_hessian = false");
    let notes = hooke::scene::Scene::from_text(&text, "test.toml", std::env::temp_dir())
        .unwrap()
        .build()
        .unwrap()
        .notes;
    assert!(
        notes.iter().any(|n| n.contains("below what double precision resolves")),
        "{notes:?}"
    );
    let below = run_scene(&text);
    assert!(below.failure.is_none(), "{:?}", below.failure);
    let statistics = &below.summary.statistics;
    assert!(statistics.steps_short_of_tolerance > 0, "{statistics:?}");
    assert!(
        below
            .summary
            .notes
            .iter()
            .any(|n| n.contains("stopped short of [solver] tolerance")),
        "{:?}",
        below.summary.notes
    );
    let refused = run_scene(&twisted_bar_scene(
        "tolerance = 1e-17\nproject_hessian = false\nstagnation = \"fail\"\nmax_step_halvings = 0",
    ));
    assert!(refused.failure.expect("fails").to_string().contains("stalled"));
}

/// An explicit method past its stability limit on a material defined for every
/// deformation (so nothing else stops it) is stopped as soon as its energy
/// clearly grows with no work done on the body: long before it overflows, with
/// the state before the diverged one kept as the last frame.
#[test]
fn a_diverging_run_is_stopped_early_and_keeps_its_last_good_frame() {
    let text = r#"name = "diverging"
gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 1.0
time_step = 0.004
[[bodies]]
mesh = { box = { size = [0.4, 0.1, 0.1], cells = [8, 2, 2] } }
material = { model = "linear", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000.0 }
[[pins]]
select = { plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }
[integrator]
kind = "symplectic_euler"
[output]
vtk_every = 50
"#;
    let scene = hooke::scene::Scene::from_text(text, "diverging.toml", std::env::temp_dir()).unwrap();
    let mut settings = scene.run_settings(None);
    settings.output_directory = std::env::temp_dir().join(format!("hooke-diverging-{}", std::process::id()));
    settings.plot = false;
    let mut built = scene.build().unwrap();
    let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap();
    let failure = outcome.failure.as_ref().expect("the run diverges").to_string();
    assert!(
        failure.contains("diverged") && failure.contains("no work done"),
        "{failure}"
    );
    let last = outcome.records.last().unwrap();
    assert!(
        last.total.is_finite() && last.total.abs() < 1e3,
        "stopped late: {last:?}"
    );
    assert!(outcome.records.len() < 250, "ran {} steps", outcome.records.len());
    assert_eq!(outcome.state.time, last.time, "the state returned is the last good one");
    // The last good state closes the frame series.
    let series = std::fs::read_to_string(settings.output_directory.join("frame.pvd")).unwrap();
    let last_time = series
        .lines()
        .filter_map(|l| l.split("timestep=\"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .next_back()
        .unwrap()
        .parse::<f64>()
        .unwrap();
    assert!(
        (last_time - last.time).abs() < 1e-12,
        "last frame at {last_time}, last state at {}",
        last.time
    );
    assert!(
        outcome.summary.notes.iter().any(|n| n.contains("last good state")),
        "{:?}",
        outcome.summary.notes
    );
    let _ = std::fs::remove_dir_all(&settings.output_directory);
}

/// Newmark with 2β < γ is only conditionally stable: the scene build says so
/// with the step it needs, estimated from above (Gershgorin) so that a step
/// just under the estimate runs, while a step twice the true limit diverges.
#[test]
fn conditionally_stable_newmark_is_noted_with_its_step_limit() {
    let scene = |time_step: f64, beta: f64| {
        format!(
            r#"name = "newmark_limit"
gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 0.2
time_step = {time_step}
mass = "lumped"
[[bodies]]
mesh = {{ box = {{ size = [0.8, 0.1, 0.1], cells = [16, 2, 2] }} }}
material = {{ model = "neo_hookean", youngs_modulus = 5e4, poisson_ratio = 0.4, density = 1000.0 }}
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}
[integrator]
kind = "newmark"
beta = {beta}
gamma = 0.5
[output]
vtk_every = 0
plot = false
energies = false
"#
        )
    };
    let build = |text: &str| {
        hooke::scene::Scene::from_text(text, "newmark.toml", std::env::temp_dir())
            .unwrap()
            .build()
            .unwrap()
    };
    let stable = build(&scene(0.01, 0.25));
    assert!(
        !stable.notes.iter().any(|n| n.contains("conditionally")),
        "{:?}",
        stable.notes
    );
    let built = build(&scene(0.01, 1e-4));
    let note = built
        .notes
        .iter()
        .find(|n| n.contains("conditionally stable"))
        .expect("a note");
    assert!(note.contains("likely diverge"), "{note}");
    let limit: f64 = note
        .split("so h ≤ ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let run = |time_step: f64| {
        let text = scene(time_step, 1e-4);
        let scene = hooke::scene::Scene::from_text(&text, "newmark.toml", std::env::temp_dir()).unwrap();
        let output = std::env::temp_dir().join(format!("hooke-newmark-limit-{}-{time_step}", std::process::id()));
        let settings = scene.run_settings(Some(&output));
        let mut built = scene.build().unwrap();
        let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
            .run(built.initial_state.clone())
            .unwrap();
        std::fs::remove_dir_all(&output).ok();
        outcome.failure
    };
    let below = build(&scene(0.95 * limit, 1e-4));
    assert!(
        below.notes.iter().any(|n| n.contains("is below it")),
        "{:?}",
        below.notes
    );
    assert!(run(0.95 * limit).is_none(), "a step under the estimated limit must run");
    assert!(run(4.0 * limit).is_some(), "a step far above the limit must diverge");
}
