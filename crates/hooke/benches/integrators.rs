//! Cost of one time step of each integrator on a ~20k-tet Stable Neo-Hookean bar,
//! clamped at one end, under gravity, starting from a sagging, moving state
//! (h = 1 ms). Recorded in BENCHMARKS.md.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hooke::integrate::{Integrator, IntegratorConfig, SymplecticAdaptive, TimeReversibleAdaptive, VariationalMidpoint};
use hooke::model::{Model, State};
use nalgebra::Vector3;

fn bar() -> (Model, State) {
    let model = common::clamped_bar(Vector3::new(0.8, 0.16, 0.2), [40, 8, 10]);
    let state = common::sagging(&model);
    (model, state)
}

/// Measures one step of h = 1 ms of `config` from `state`. A first step builds
/// the cached analysis; each measured step restarts from the same state.
fn bench_step(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    mut integrator: Box<dyn Integrator>,
    model: &Model,
    state: &State,
) {
    let label = integrator.name();
    let mut warm = state.clone();
    integrator.step(model, &mut warm, 1e-3).expect("step");
    group.bench_function(BenchmarkId::from_parameter(label), |b| {
        b.iter(|| {
            let mut next = state.clone();
            integrator.step(model, &mut next, 1e-3).expect("step");
            next
        })
    });
}

fn integrators(c: &mut Criterion) {
    let (model, state) = bar();
    let tets = model.mesh().element_count();
    let mut group = c.benchmark_group(format!("step_{tets}_tets"));
    group.sample_size(10);
    for name in ["se", "fe", "vv", "rk4", "si", "be", "im", "bdf2", "nm", "vm", "siere"] {
        let config = IntegratorConfig::from_name(name).expect("known integrator");
        let integrator = config.build(&Default::default()).expect("default settings");
        bench_step(&mut group, integrator, &model, &state);
    }
    group.finish();
}

/// The adaptive variational integrators take conservative motion only: the same
/// bar, unclamped and without gravity, sagging and moving as above.
fn adaptive_integrators(c: &mut Criterion) {
    use hooke::integrate::StepSizeRule;
    use hooke::solve::SolverSettings;
    let (clamped, state) = bar();
    let material = clamped.materials()[0].clone();
    let mesh = clamped.mesh().tetrahedra().expect("a 3D bar").clone();
    let count = mesh.tet_count();
    let model = Model::new(mesh, vec![material; count], hooke::fem::MassKind::Lumped).expect("model");
    let rule = StepSizeRule::ElasticEnergy { scale: 1.0 };
    let newton = SolverSettings::default();
    let mut group = c.benchmark_group(format!("free_step_{count}_tets"));
    group.sample_size(10);
    let integrators: [Box<dyn Integrator>; 3] = [
        Box::new(VariationalMidpoint::new(newton, true)),
        Box::new(TimeReversibleAdaptive::new(rule, newton)),
        Box::new(SymplecticAdaptive::new(rule, newton)),
    ];
    for integrator in integrators {
        bench_step(&mut group, integrator, &model, &state);
    }
    group.finish();
}

criterion_group!(benches, integrators, adaptive_integrators);
criterion_main!(benches);
