//! Penalty contact with analytic obstacles: derivatives, energy through bounces,
//! and closest-point projection for explicit methods.

mod common;

use common::{bar, parameters, uniform_model, Lcg};
use hooke::fem::MassKind;
use hooke::integrate::{ImplicitMidpoint, Integrator, SymplecticEuler};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::{Model, Obstacle, ObstacleShape};
use hooke::simulation::energy_record;
use hooke::solve::NewtonSettings;
use nalgebra::Vector3;

fn block(offset: Vector3<f64>) -> Model {
    let mut mesh = bar([0.1, 0.1, 0.1], [2, 2, 2], TetsPerHex::Six);
    mesh.vertices.iter_mut().for_each(|p| *p += offset);
    uniform_model(
        mesh,
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    )
}

/// A ball of radius 5 cm meshed by the stuffing mesher, its centre at `centre`.
fn ball(centre: Vector3<f64>) -> Model {
    let shape = hooke::mesh::Shape::Ball {
        center: centre.into(),
        radius: 0.05,
    };
    let (mesh, _) = hooke::mesh::stuff_shape(&shape, 0.025).unwrap();
    uniform_model(
        mesh,
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    )
}

fn obstacle(shape: ObstacleShape, project: bool) -> Obstacle {
    Obstacle {
        shape,
        stiffness: 1e5,
        project,
    }
}

#[test]
fn penalty_derivatives_match_finite_differences() {
    let shapes = [
        ObstacleShape::Plane {
            point: [0.0, 0.0, 0.03],
            normal: [0.2, 0.1, 1.0],
        },
        ObstacleShape::Sphere {
            center: [0.05, 0.05, -0.1],
            radius: 0.14,
        },
        ObstacleShape::Box {
            min: [-1.0, -1.0, -1.0],
            max: [0.07, 1.0, 0.04],
        },
    ];
    for shape in shapes {
        let mut model = block(Vector3::zeros());
        model.add_obstacle(obstacle(shape.clone(), false));
        let mut rng = Lcg::new(3);
        let x: Vec<f64> = model.rest_positions().iter().map(|p| p + 1e-3 * rng.next()).collect();
        assert!(model.penalty_energy(&x) > 0.0, "{shape:?}: the test needs penetration");
        common::assert_potential_derivatives(&model, &x, 1e-7, 1e-5, &format!("{shape:?}"));
    }
}

/// An undamped elastic block, and a ball, dropped on a penalty floor keep their
/// total energy, penalty included, within 1% over five bounces under implicit midpoint.
#[test]
fn bouncing_block_and_ball_keep_their_energy_under_implicit_midpoint() {
    for (what, mut model) in [
        ("block", block(Vector3::new(0.0, 0.0, 0.1))),
        ("ball", ball(Vector3::new(0.0, 0.0, 0.15))),
    ] {
        assert!(
            model.mesh().tet_count() > 40,
            "{what}: {} tets",
            model.mesh().tet_count()
        );
        model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
        model.add_obstacle(obstacle(
            ObstacleShape::Plane {
                point: [0.0; 3],
                normal: [0.0, 0.0, 1.0],
            },
            false,
        ));
        let mut state = model.initial_state();
        let initial = energy_record(&model, &state).total;
        let mut integrator = ImplicitMidpoint::new(NewtonSettings {
            tolerance: 1e-11,
            ..NewtonSettings::default()
        });
        let (mut bounces, mut in_contact, mut worst) = (0, false, 0.0f64);
        let mut deepest = 0.0f64;
        while bounces < 5 && state.time < 3.0 {
            integrator.step(&model, &mut state, 5e-4).unwrap();
            let record = energy_record(&model, &state);
            worst = worst.max((record.total - initial).abs() / initial.abs());
            deepest = deepest.max(record.max_penetration);
            let touching = record.penalty > 0.0;
            if in_contact && !touching {
                bounces += 1;
            }
            in_contact = touching;
        }
        assert_eq!(bounces, 5, "{what}: five bounces by t = {}", state.time);
        // Landing on an edge (or the ball's pole) puts the impact on few vertices: centimetres deep at this stiffness.
        assert!(
            deepest > 0.0 && deepest < 0.05,
            "{what}: penetration reported: {deepest}"
        );
        assert!(worst < 0.01, "{what}: total energy drifted by {:.3}%", 100.0 * worst);
    }
}

/// With projection, an explicit method never leaves vertices inside the obstacle.
#[test]
fn explicit_projection_keeps_vertices_out() {
    let mut model = block(Vector3::new(0.0, 0.0, 0.02));
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    model.add_obstacle(obstacle(
        ObstacleShape::Sphere {
            center: [0.05, 0.05, -0.3],
            radius: 0.3,
        },
        true,
    ));
    let mut state = model.initial_state();
    let mut integrator = SymplecticEuler::default();
    for _ in 0..1000 {
        integrator.step(&model, &mut state, 1e-4).unwrap();
        assert!(model.max_penetration(&state.positions) < 1e-12);
    }
    assert!(model.kinetic_energy(&state.velocities).is_finite());
}
