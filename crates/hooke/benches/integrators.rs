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
    integrator: Box<dyn Integrator>,
    model: &Model,
    state: &State,
) {
    let label = integrator.name();
    bench_labelled_step(group, label, integrator, model, state);
}

/// As [`bench_step`], under `label`.
fn bench_labelled_step(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    label: &str,
    mut integrator: Box<dyn Integrator>,
    model: &Model,
    state: &State,
) {
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
    let model = Model::new(mesh, vec![material; count], hooke::model::MassKind::Lumped).expect("model");
    let rule = StepSizeRule::ElasticEnergy { scale: 1.0 };
    let newton = SolverSettings::default();
    let mut group = c.benchmark_group(format!("free_step_{count}_tets"));
    group.sample_size(10);
    let integrators: [Box<dyn Integrator>; 3] = [
        Box::new(VariationalMidpoint::new(newton.clone(), true).unwrap()),
        Box::new(TimeReversibleAdaptive::new(rule, newton.clone()).unwrap()),
        Box::new(SymplecticAdaptive::new(rule, newton).unwrap()),
    ];
    for integrator in integrators {
        bench_step(&mut group, integrator, &model, &state);
    }
    group.finish();
}

/// Chen 2019 thesis, ch. 5: a DGSI step (element blocks solved in parallel, interfaces
/// explicit) against a semi-implicit Euler step on the same discontinuous
/// model (one sparse solve of the full DG Hessian), a backward Euler step on it
/// (Newton to convergence) and a semi-implicit step on the continuous model
/// of the same mesh: a 2D Neo-Hookean strip of 120 × 40 cells (9,600
/// triangles), BZ interfaces at η_f = 1e2 Pa/m, clamped at one end, under
/// gravity, from a sagging, moving state (h = 1 ms).
fn discontinuous_steps(c: &mut Criterion) {
    use hooke::fem::Formulation;
    use hooke::material::{IsotropicMaterial, MaterialModel, MaterialParameters};
    use hooke::model::MassKind;
    use hooke::model::{Motion, Pin, Selection};
    let mesh = hooke::mesh::rectangle_mesh([0.0, 0.0], [1.2, 0.4], [120, 40]).expect("rectangle");
    let parameters = MaterialParameters {
        youngs_modulus: 1e5,
        poisson_ratio: 0.45,
        density: 1000.0,
    };
    let material = IsotropicMaterial::shared(MaterialModel::NeoHookean, &parameters);
    let materials = vec![material; mesh.triangle_count()];
    let prepare = |mut model: Model| -> (Model, State) {
        model.set_gravity(Vector3::new(0.0, -9.81, 0.0));
        let clamp = Selection::Plane {
            point: [0.0, 0.0, 0.0],
            normal: [-1.0, 0.0, 0.0],
            tolerance: None,
        }
        .vertices(model.mesh(), "clamp")
        .expect("vertices at x = 0");
        model.add_pin(Pin::new(clamp, Motion::Fixed {}, None));
        let mut state = model.initial_state();
        let mut integrator = IntegratorConfig::from_name("si")
            .unwrap()
            .build(&Default::default())
            .unwrap();
        for _ in 0..5 {
            integrator.step(&model, &mut state, 1e-3).expect("warm-up step");
        }
        (model, state)
    };
    let (dg, dg_state) = prepare(
        Model::discontinuous_planar(&mesh, materials.clone(), MassKind::Lumped, Formulation::Bz, Some(1e2))
            .expect("DG model")
            .0,
    );
    let (cg, cg_state) = prepare(Model::planar(mesh.clone(), materials, MassKind::Lumped).expect("CG model"));
    let mut group = c.benchmark_group(format!("dg_step_{}_triangles", mesh.triangle_count()));
    group.sample_size(10);
    let build = |name: &str| {
        IntegratorConfig::from_name(name)
            .unwrap()
            .build(&Default::default())
            .unwrap()
    };
    bench_labelled_step(&mut group, "dgsi", build("dgsi"), &dg, &dg_state);
    bench_labelled_step(&mut group, "si_discontinuous", build("si"), &dg, &dg_state);
    bench_labelled_step(&mut group, "be_discontinuous", build("be"), &dg, &dg_state);
    bench_labelled_step(&mut group, "si_continuous", build("si"), &cg, &cg_state);
    group.finish();
}

criterion_group!(benches, integrators, adaptive_integrators, discontinuous_steps);
criterion_main!(benches);
