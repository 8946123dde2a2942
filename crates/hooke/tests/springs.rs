//! Mass-spring networks: derivatives against finite differences, the PSD
//! projection, and a hanging rope against its exact static stretch.

mod common;

use common::{dense, Lcg};
use hooke::fem::spring_networks::{chain, cloth, straight_rope, ClothStiffness};
use hooke::fem::SpringNetwork;
use hooke::integrate::{Integrator, StaticEquilibrium};
use hooke::mesh::TetMesh;
use hooke::model::MassKind;
use hooke::model::{Model, Motion, Pin};
use hooke::solve::SolverSettings;
use nalgebra::{SymmetricEigen, Vector3};

fn network_model(vertices: Vec<Vector3<f64>>, network: SpringNetwork) -> Model {
    let mesh = TetMesh::new(vertices, Vec::new(), Vec::new()).unwrap();
    Model::with_springs(mesh, Vec::new(), network, MassKind::Lumped).unwrap()
}

fn small_cloth() -> Model {
    let part = cloth(
        Vector3::zeros(),
        [0.3, 0.2],
        [3, 2],
        ClothStiffness {
            stretch: 200.0,
            shear: 20.0,
            bend: 5.0,
        },
        0.1,
    )
    .unwrap();
    network_model(
        part.vertices,
        SpringNetwork {
            springs: part.springs,
            vertex_masses: part.masses,
        },
    )
}

#[test]
fn spring_forces_and_hessians_match_finite_differences() {
    let model = small_cloth();
    // Perturbed so that some springs are stretched and some compressed.
    let mut rng = Lcg::new(5);
    let x: Vec<f64> = model.rest_positions().iter().map(|p| p + 0.02 * rng.next()).collect();
    common::assert_potential_derivatives(&model, &x, 1e-7, 1e-6, "cloth");
    let values = model.stiffness(&x, 0.0, false).unwrap();
    let k = dense(model.pattern(), &values);
    // Compressed springs make the exact Hessian indefinite; the projected one is PSD.
    let indefinite = SymmetricEigen::new(k).eigenvalues.min();
    let values = model.stiffness(&x, 0.0, true).unwrap();
    let projected = SymmetricEigen::new(dense(model.pattern(), &values)).eigenvalues.min();
    assert!(indefinite < -1e-6, "the test needs a compressed spring ({indefinite})");
    assert!(projected > -1e-9, "projected Hessian has eigenvalue {projected}");
}

/// A rope hanging from its top end stretches by Σᵢ (weight below segment i) / kᵢ,
/// which tends to ρ g L² / (2 EA) as the segments shrink.
#[test]
fn hanging_rope_stretch_is_exact() {
    let (length, axial, density, gravity) = (2.0, 50.0, 0.1, 9.81);
    for segments in [10, 40] {
        let part = chain(
            straight_rope(Vector3::zeros(), Vector3::new(0.0, 0.0, -length), segments).unwrap(),
            axial,
            density,
        )
        .unwrap();
        let masses = part.masses.clone();
        let mut model = network_model(
            part.vertices,
            SpringNetwork {
                springs: part.springs,
                vertex_masses: part.masses,
            },
        );
        model.set_gravity(Vector3::new(0.0, 0.0, -gravity));
        model.add_pin(Pin::new(vec![0], Motion::Fixed {}, None));
        let mut state = model.initial_state();
        let settings = SolverSettings {
            tolerance: 1e-13,
            ..SolverSettings::default()
        };
        StaticEquilibrium::new(settings.clone())
            .unwrap()
            .step(&model, &mut state, 1.0)
            .unwrap();
        let stretch = -state.positions[3 * segments + 2] - length;
        let k = axial / (length / segments as f64);
        let exact: f64 = (0..segments)
            .map(|i| gravity * masses[i + 1..].iter().sum::<f64>() / k)
            .sum();
        assert!(
            (stretch - exact).abs() < 1e-10 * exact,
            "{segments} segments: {stretch} vs {exact}"
        );
        let continuum = density * gravity * length * length / (2.0 * axial);
        assert!(
            (stretch - continuum).abs() < 1.0 / segments as f64 * continuum,
            "{stretch} vs {continuum}"
        );
    }
}
