//! The 10 smallest generalized eigenpairs of (K, M) for a clamped bar of about
//! 50k unknowns (shift-invert Lanczos). Recorded in BENCHMARKS.md beside scipy's
//! eigsh on the same matrices (benches/peer/scipy_eigsh.py, reading the files
//! that `HOOKE_EXPORT=dir cargo bench --bench eigen` writes).

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use hooke::linalg::{smallest_eigenpairs, EigenSettings};
use nalgebra::Vector3;

fn eigen(c: &mut Criterion) {
    let model = common::clamped_bar(Vector3::new(1.6, 0.28, 0.28), [80, 14, 14]);
    let state = model.initial_state();
    let dofs = model.dof_map(0.0);
    let mut stiffness = vec![0.0; model.pattern().nonzeros()];
    model
        .elastic_hessian(&state.positions, false, None, &mut stiffness)
        .expect("defined");
    let (pattern, source) = model.pattern().restrict(&dofs.free_index);
    let k: Vec<f64> = source.iter().map(|&s| stiffness[s]).collect();
    let m: Vec<f64> = source.iter().map(|&s| model.mass_values()[s]).collect();
    if let Ok(directory) = std::env::var("HOOKE_EXPORT") {
        hooke::modal::export_matrices(&model, &state, std::path::Path::new(&directory)).expect("export");
    }
    let mut group = c.benchmark_group("smallest_generalized_eigenpairs");
    group.sample_size(10);
    group.bench_function(format!("10 of {} unknowns", pattern.size), |b| {
        b.iter(|| smallest_eigenpairs(&pattern, &k, &m, 10, &EigenSettings::default()).expect("converged"))
    });
    group.finish();
    let pairs = smallest_eigenpairs(&pattern, &k, &m, 10, &EigenSettings::default()).expect("converged");
    eprintln!("eigenvalues: {:?}; {} solves", pairs.values, pairs.solves);
}

criterion_group!(benches, eigen);
criterion_main!(benches);
