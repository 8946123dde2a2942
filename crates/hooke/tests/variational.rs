//! The variational midpoint integrator (Kharevych 2010 thesis, §3.2): exact energy for quadratic
//! potentials, momentum conservation of a free body, bounded energy without drift.

mod common;

use common::{bar, parameters, uniform_model};
use hooke::integrate::{Integrator, VariationalMidpoint};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::{Model, State};
use hooke::solve::SolverSettings;
use nalgebra::Vector3;

/// A thin 0.4 m rod of 48 tets with a lumped mass.
fn rod(material: MaterialModel) -> Model {
    uniform_model(
        bar([0.4, 0.05, 0.05], [8, 1, 1], TetsPerHex::Six),
        material,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    )
}

fn spinning(model: &Model) -> State {
    let mut state = model.initial_state();
    let center = Vector3::new(0.2, 0.025, 0.025);
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        let r = p - center;
        let velocity = Vector3::new(0.0, 0.0, 2.0).cross(&r) + Vector3::new(0.3 * r.x, 0.0, 0.0);
        state.velocities[3 * v..3 * v + 3].copy_from_slice(velocity.as_slice());
    }
    state
}

fn settings(tolerance: f64) -> SolverSettings {
    SolverSettings {
        tolerance,
        ..SolverSettings::default()
    }
}

/// ½ pᵀM⁻¹p + W(q) with a lumped mass.
fn modified_energy(model: &Model, state: &State, momentum: &[f64]) -> f64 {
    let kinetic: f64 = momentum
        .iter()
        .enumerate()
        .map(|(i, p)| 0.5 * p * p / model.mass().lumped()[i / 3])
        .sum();
    kinetic + model.elastic_energy(&state.positions)
}

#[test]
fn linear_elasticity_energy_is_conserved_to_solver_tolerance() {
    let model = rod(MaterialModel::Linear);
    let mut state = spinning(&model);
    let mut integrator = VariationalMidpoint::new(settings(1e-12), true).unwrap();
    integrator.step(&model, &mut state, 0.004).unwrap();
    let initial = modified_energy(&model, &state, integrator.momentum().unwrap());
    for _ in 0..500 {
        integrator.step(&model, &mut state, 0.004).unwrap();
    }
    let last = modified_energy(&model, &state, integrator.momentum().unwrap());
    assert!((last - initial).abs() < 1e-9 * initial, "energy {initial} → {last}");
}

#[test]
fn free_body_momenta_are_conserved_and_energy_stays_bounded() {
    let model = rod(MaterialModel::NeoHookean);
    let mut state = spinning(&model);
    let (linear0, angular0) = model.momentum(&state.positions, &state.velocities);
    let mut integrator = VariationalMidpoint::new(settings(1e-13), true).unwrap();
    let h = 0.004;
    let mut energies = Vec::new();
    for _ in 0..2000 {
        integrator.step(&model, &mut state, h).unwrap();
        energies.push(model.kinetic_energy(&state.velocities) + model.elastic_energy(&state.positions));
    }
    let (linear, angular) = model.momentum(&state.positions, &state.velocities);
    assert!(
        (linear - linear0).norm() < 1e-11 * (1.0 + linear0.norm()),
        "{linear} vs {linear0}"
    );
    assert!(
        (angular - angular0).norm() < 1e-9 * angular0.norm(),
        "{angular} vs {angular0}"
    );
    // Bounded, no drift: the last quarter's mean energy matches the second quarter's.
    let quarter = energies.len() / 4;
    let mean = |range: &[f64]| range.iter().sum::<f64>() / range.len() as f64;
    let early = mean(&energies[quarter..2 * quarter]);
    let late = mean(&energies[3 * quarter..]);
    assert!((late - early).abs() < 0.01 * early, "energy drifts: {early} → {late}");
}

/// With residual reinjection, linear momentum is exact even when Newton stops early.
#[test]
fn reinjection_keeps_linear_momentum_exact_at_loose_tolerance() {
    let model = rod(MaterialModel::NeoHookean);
    let mut state = spinning(&model);
    let (linear0, _) = model.momentum(&state.positions, &state.velocities);
    let mut integrator = VariationalMidpoint::new(settings(1e-4), true).unwrap();
    for _ in 0..500 {
        integrator.step(&model, &mut state, 0.004).unwrap();
    }
    let (linear, _) = model.momentum(&state.positions, &state.velocities);
    assert!(
        (linear - linear0).norm() < 1e-11 * (1.0 + linear0.norm()),
        "{linear} vs {linear0}"
    );
}

/// Releasing a pin does not kick the freed vertices: their momentum was kept at
/// that of the prescribed motion while pinned (compare implicit midpoint).
#[test]
fn pin_release_gives_no_kick() {
    use hooke::integrate::ImplicitMidpoint;
    use hooke::model::{Motion, Pin, Selection};
    let mut model = rod(MaterialModel::NeoHookean);
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    let pinned = Selection::Plane {
        point: [0.0; 3],
        normal: [-1.0, 0.0, 0.0],
        tolerance: None,
    }
    .vertices(model.mesh(), "clamp")
    .unwrap();
    model.add_pin(Pin::new(pinned.clone(), Motion::Fixed {}, Some(0.2)));
    let run = |integrator: &mut dyn Integrator| {
        let mut state = model.initial_state();
        for _ in 0..41 {
            integrator.step(&model, &mut state, 0.005).unwrap();
        }
        pinned
            .iter()
            .map(|&v| {
                Vector3::new(
                    state.velocities[3 * v],
                    state.velocities[3 * v + 1],
                    state.velocities[3 * v + 2],
                )
                .norm()
            })
            .fold(0.0, f64::max)
    };
    let variational = run(&mut VariationalMidpoint::new(settings(1e-10), true).unwrap());
    let midpoint = run(&mut ImplicitMidpoint::new(settings(1e-10)).unwrap());
    assert!(
        variational < 2.0 * midpoint + 0.05,
        "released vertices move at {variational} (implicit midpoint: {midpoint})"
    );
}

/// The variational midpoint halves a step that Newton cannot take.
#[test]
fn variational_midpoint_halves_failing_steps() {
    let model = uniform_model(
        bar([0.4, 0.05, 0.05], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.45),
        MassKind::Lumped,
    );
    let mut state = spinning(&model);
    state.velocities.iter_mut().for_each(|v| *v *= 40.0);
    let strict = SolverSettings {
        max_iterations: Some(4),
        ..settings(1e-8)
    };
    let mut without = state.clone();
    let no_halving = SolverSettings {
        max_step_halvings: 0,
        ..strict.clone()
    };
    assert!(
        VariationalMidpoint::new(no_halving.clone(), true)
            .unwrap()
            .step(&model, &mut without, 0.02)
            .is_err(),
        "the test needs a failing step"
    );
    let report = VariationalMidpoint::new(strict.clone(), true)
        .unwrap()
        .step(&model, &mut state, 0.02)
        .unwrap();
    assert!(report.halvings > 0);
    assert!((state.time - 0.02).abs() < 1e-15);
}

/// Holonomic surface constraints (Kharevych 2010 thesis, §3.2.7): the rod's end face slides
/// on a plane, or on a sphere, while the rod spins and bends. The constraint
/// holds to the solver tolerance every step, it does no work (energy bounded,
/// no drift), and on the plane x = 0 the momentum along y and z, which its
/// impulses never touch, is conserved exactly.
#[test]
fn surface_constraints_hold_without_work_and_keep_tangential_momentum() {
    use hooke::model::{ObstacleShape, SurfaceConstraint};
    let surfaces = [
        ObstacleShape::Plane {
            point: [0.0; 3],
            normal: [1.0, 0.0, 0.0],
        },
        ObstacleShape::Sphere {
            center: [1.0, 0.025, 0.025],
            radius: (1.0f64 + 2.0 * 0.025 * 0.025).sqrt(),
        },
    ];
    for surface in surfaces {
        let mut model = rod(MaterialModel::StableNeoHookean);
        let end: Vec<usize> = (0..model.mesh().vertex_count())
            .filter(|&v| model.mesh().vertices()[v].x.abs() < 1e-12)
            .collect();
        assert_eq!(end.len(), 4);
        model
            .add_constraint(SurfaceConstraint {
                vertices: end.clone(),
                shape: surface.clone(),
            })
            .unwrap();
        let mut state = model.initial_state();
        for (v, p) in model.mesh().vertices().iter().enumerate() {
            let r = p - Vector3::new(0.0, 0.025, 0.025);
            // Spin about the x axis, drift along y and z, and bend: tangential at x = 0.
            let velocity = Vector3::new(3.0, 0.0, 0.0).cross(&r) + Vector3::new(0.0, 0.2, 0.1 + 2.0 * p.x * p.x);
            state.velocities[3 * v..3 * v + 3].copy_from_slice(velocity.as_slice());
        }
        let energy = |s: &State| model.kinetic_energy(&s.velocities) + model.elastic_energy(&s.positions);
        let initial = energy(&state);
        let (p0, _) = model.momentum(&state.positions, &state.velocities);
        let mut integrator = VariationalMidpoint::new(settings(1e-12), true).unwrap();
        let (mut worst_energy, mut worst_g) = (0.0f64, 0.0f64);
        let mut errors = Vec::new();
        for _ in 0..600 {
            integrator.step(&model, &mut state, 4e-3).unwrap();
            for &v in &end {
                let x = Vector3::new(
                    state.positions[3 * v],
                    state.positions[3 * v + 1],
                    state.positions[3 * v + 2],
                );
                worst_g = worst_g.max(surface.proximity(&x).distance.abs());
            }
            let error = (energy(&state) - initial).abs() / initial;
            worst_energy = worst_energy.max(error);
            errors.push(error);
        }
        assert!(worst_g < 1e-10, "{surface:?}: constraint violated by {worst_g:e}");
        // The spinning rod's energy oscillates by a few per cent at this step (bounded, below).
        assert!(
            worst_energy < 0.05,
            "{surface:?}: energy strayed by {:.3}%",
            100.0 * worst_energy
        );
        let third = errors.len() / 3;
        let early = errors[..third].iter().fold(0.0f64, |a, &b| a.max(b));
        let late = errors[2 * third..].iter().fold(0.0f64, |a, &b| a.max(b));
        assert!(
            late < 1.5 * early + 1e-6,
            "{surface:?}: drift, early {early:e}, late {late:e}"
        );
        if let ObstacleShape::Plane { .. } = surface {
            let (p1, _) = model.momentum(&state.positions, &state.velocities);
            assert!(
                (p1.y - p0.y).abs() < 1e-12 && (p1.z - p0.z).abs() < 1e-12,
                "{p0} → {p1}"
            );
        }
    }
}

/// Integrators that cannot enforce surface constraints refuse a constrained model.
#[test]
fn constraints_are_refused_by_other_integrators() {
    let text = r#"
[simulation]
duration = 0.02
time_step = 0.01
[[bodies]]
mesh = { box = { size = [0.2, 0.05, 0.05], cells = [4, 1, 1] } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000 }
[[constraints]]
select = { plane = { point = [0, 0, 0], normal = [-1, 0, 0] } }
surface = { plane = { point = [0, 0, 0], normal = [1, 0, 0] } }
[integrator]
kind = "backward_euler"
"#;
    let scene = hooke::scene::Scene::from_text(text, "inline", ".".into()).unwrap();
    let error = scene.build().err().expect("refused").to_string();
    assert!(
        error.contains("constraints[0]") && error.contains("variational_midpoint"),
        "{error}"
    );
    let accepted = text.replace("kind = \"backward_euler\"", "kind = \"variational_midpoint\"");
    let scene = hooke::scene::Scene::from_text(&accepted, "inline", ".".into()).unwrap();
    let built = scene.build().unwrap();
    assert_eq!(built.model.constraints()[0].vertices.len(), 4);
}
