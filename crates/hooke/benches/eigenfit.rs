//! EigenFit's cost (seed 003 Table 2): one implicit-midpoint step of the
//! twisted linear bar of scenes/twisted_bar_eigenfit.toml on the coarse mesh,
//! plain and with the 10-mode EigenFit correction (its refit: an eigen solve of
//! the coarse stiffness, mode matching, and the rank-10 Sherman–Morrison–
//! Woodbury solve), and the same step on the fine mesh. Recorded in
//! BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hooke::scene::Scene;

fn scene_variant(name: &str) -> Scene {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/twisted_bar_eigenfit.toml");
    let scene = Scene::from_file(&path).expect("the scene reads");
    match name {
        "eigenfit" => scene,
        "coarse" => hooke::resolution_comparison::coarse_scene(&scene).expect("coarse"),
        _ => scene.eigenfit_reference().expect("the fine reference"),
    }
}

fn step(c: &mut Criterion) {
    let mut group = c.benchmark_group("twisted_bar_step");
    group.sample_size(10);
    for name in ["coarse", "eigenfit", "fine"] {
        let scene = scene_variant(name);
        let mut built = scene.build().expect("builds");
        let h = scene.file.simulation.time_step;
        // A few steps in, so that the bar is moving and EigenFit warm-starts.
        let mut state = built.initial_state.clone();
        for _ in 0..3 {
            built.integrator.step(&built.model, &mut state, h).expect("step");
        }
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                let mut next = state.clone();
                built.integrator.step(&built.model, &mut next, h).expect("step");
                next
            })
        });
    }
    group.finish();
}

criterion_group!(benches, step);
criterion_main!(benches);
