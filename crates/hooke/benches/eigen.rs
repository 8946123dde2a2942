//! The 10 smallest generalized eigenpairs of (K, M) for clamped bars of about
//! 50k unknowns (shift-invert block Lanczos): a stocky bar (aspect 5.7, 14×14
//! cells across) and a slender one (aspect 25, 8×8 cells across). The cost of a
//! direct method grows with the cross-section (the separators of the nested
//! dissection), not only with the unknowns. Recorded in BENCHMARKS.md beside
//! scipy's eigsh on the same matrices (benches/peer/scipy_eigsh.py and
//! pardiso_eigsh.py, reading the files that `HOOKE_EXPORT=dir cargo bench
//! --bench eigen` writes to dir/stocky and dir/slender).

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use hooke::linalg::{smallest_eigenpairs, EigenSettings};
use nalgebra::Vector3;

fn eigen(c: &mut Criterion) {
    let bars = [
        ("stocky", Vector3::new(1.6, 0.28, 0.28), [80, 14, 14]),
        ("slender", Vector3::new(2.0, 0.08, 0.08), [200, 8, 8]),
    ];
    let mut group = c.benchmark_group("smallest_generalized_eigenpairs");
    group.sample_size(10);
    for (name, size, cells) in bars {
        let model = common::clamped_bar(size, cells);
        let state = model.initial_state();
        let dofs = model.dof_map(0.0);
        let stiffness = model.stiffness(&state.positions, 0.0, false).expect("defined");
        let (pattern, source) = model.pattern().restrict(&dofs.free_index);
        let k: Vec<f64> = source.iter().map(|&s| stiffness[s]).collect();
        let m: Vec<f64> = source.iter().map(|&s| model.mass().values()[s]).collect();
        if let Ok(directory) = std::env::var("HOOKE_EXPORT") {
            let directory = std::path::Path::new(&directory).join(name);
            hooke::modal::export_matrices(&model, &state, &directory).expect("export");
        }
        group.bench_function(format!("10 of {} unknowns, {name} bar", pattern.size), |b| {
            b.iter(|| smallest_eigenpairs(&pattern, &k, &m, 10, &EigenSettings::default()).expect("converged"))
        });
        let pairs = smallest_eigenpairs(&pattern, &k, &m, 10, &EigenSettings::default()).expect("converged");
        eprintln!(
            "{name}: eigenvalues {:?}; {} vectors in {} block solves",
            pairs.values, pairs.solves, pairs.block_solves
        );
    }
    group.finish();
}

criterion_group!(benches, eigen);
criterion_main!(benches);
