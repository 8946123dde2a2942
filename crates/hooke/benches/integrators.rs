//! Cost of one time step of each integrator on a ~20k-tet Stable Neo-Hookean bar,
//! clamped at one end, under gravity, starting from a sagging, moving state
//! (h = 1 ms). Recorded in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hooke::fem::{ElementMaterial, MassKind};
use hooke::integrate::IntegratorConfig;
use hooke::material::{MaterialModel, MaterialParameters};
use hooke::mesh::{box_mesh, BoxMeshOptions, TetsPerHex};
use hooke::model::{Model, Motion, Pin, Selection, State};
use nalgebra::Vector3;

fn bar() -> (Model, State) {
    let cells = [40, 8, 10];
    let mesh = box_mesh(&BoxMeshOptions {
        origin: Vector3::zeros(),
        size: Vector3::new(0.8, 0.16, 0.2),
        cells,
        tets_per_hex: TetsPerHex::Six,
    })
    .expect("valid box");
    let parameters = MaterialParameters {
        youngs_modulus: 1e6,
        poisson_ratio: 0.45,
        density: 1000.0,
    };
    let material = ElementMaterial {
        model: MaterialModel::StableNeoHookean,
        lame: parameters.lame(),
        density: parameters.density,
    };
    let count = mesh.tet_count();
    let mut model = Model::new(mesh, vec![material; count], MassKind::Lumped).expect("valid model");
    let clamped = Selection::Plane {
        point: [0.0; 3],
        normal: [-1.0, 0.0, 0.0],
        tolerance: None,
    }
    .vertices(model.mesh(), "clamp")
    .expect("clamp");
    model.add_pin(Pin {
        vertices: clamped,
        motion: Motion::Fixed {},
        release_time: None,
    });
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    let mut state = model.initial_state();
    // Sagging and moving, so that every method has real work to do.
    for (v, p) in model.mesh().vertices.iter().enumerate() {
        let bend = (p.x / 0.8).powi(2);
        state.positions[3 * v + 2] -= 0.02 * bend;
        state.velocities[3 * v + 2] = -0.5 * bend;
    }
    (model, state)
}

fn integrators(c: &mut Criterion) {
    let (model, state) = bar();
    let tets = model.mesh().tet_count();
    let mut group = c.benchmark_group(format!("step_{tets}_tets"));
    group.sample_size(10);
    for name in ["se", "fe", "vv", "rk4", "si", "be", "im", "bdf2", "nm", "vm"] {
        let config = IntegratorConfig::from_name(name).expect("known integrator");
        let mut integrator = config.build();
        let label = integrator.name();
        // A first step builds the cached analysis; each measured step restarts from the same state.
        let mut warm = state.clone();
        integrator.step(&model, &mut warm, 1e-3).expect("step");
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| {
                let mut next = state.clone();
                integrator.step(&model, &mut next, 1e-3).expect("step");
                next
            })
        });
    }
    group.finish();
}

criterion_group!(benches, integrators);
criterion_main!(benches);
