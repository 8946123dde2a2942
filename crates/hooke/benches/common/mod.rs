//! The benchmark body: a Stable Neo-Hookean bar (E = 1e6 Pa, ν = 0.45, lumped
//! mass) of hexahedral cells split into 6 tets, clamped at x = 0, under gravity.

// Each benchmark uses some of these.
#![allow(dead_code)]

use hooke::material::{IsotropicMaterial, MaterialModel, MaterialParameters};
use hooke::mesh::{box_mesh, BoxMeshOptions, TetsPerHex};
use hooke::model::MassKind;
use hooke::model::{Model, Motion, Pin, Selection};
use nalgebra::Vector3;

pub fn clamped_bar(size: Vector3<f64>, cells: [usize; 3]) -> Model {
    let parameters = MaterialParameters {
        youngs_modulus: 1e6,
        poisson_ratio: 0.45,
        density: 1000.0,
    };
    clamped_bar_of(
        size,
        cells,
        IsotropicMaterial::shared(MaterialModel::StableNeoHookean, &parameters),
    )
}

/// The same bar of another material.
pub fn clamped_bar_of(size: Vector3<f64>, cells: [usize; 3], material: hooke::material::MaterialRef) -> Model {
    let mesh = box_mesh(&BoxMeshOptions {
        origin: Vector3::zeros(),
        size,
        cells,
        tets_per_hex: TetsPerHex::Six,
    })
    .expect("valid box");
    let count = mesh.tet_count();
    let mut model = Model::new(mesh, vec![material; count], MassKind::Lumped).expect("valid model");
    clamp_at_origin(&mut model);
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    model
}

/// Pins the vertices on the plane x = 0.
pub fn clamp_at_origin(model: &mut Model) {
    let clamped = Selection::Plane {
        point: [0.0; 3],
        normal: [-1.0, 0.0, 0.0],
        tolerance: None,
    }
    .vertices(model.mesh(), "clamp")
    .expect("clamp");
    model.add_pin(Pin::new(clamped, Motion::Fixed {}, None));
}

/// The 0.8 m bar sagging and moving, so that every method has real work to do.
pub fn sagging(model: &Model) -> hooke::model::State {
    let mut state = model.initial_state();
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        let bend = (p.x / 0.8).powi(2);
        state.positions[3 * v + 2] -= 0.02 * bend;
        state.velocities[3 * v + 2] = -0.5 * bend;
    }
    state
}
