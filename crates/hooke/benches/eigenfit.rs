//! EigenFit's cost (Chen et al. 2019 (EigenFit), Table 2): one implicit-midpoint step of the
//! twisted linear bar of scenes/twisted_bar_eigenfit.toml on the coarse mesh,
//! plain and with the 10-mode EigenFit correction (its refit: an eigen solve of
//! the coarse stiffness, mode matching, and the rank-10 Sherman–Morrison–
//! Woodbury solve), and the same step on the fine mesh. Then the nonlinear
//! case, whose modes move every step: ten consecutive semi-implicit steps of
//! the shaken ARAP figure of scenes/shaken_figure_eigenfit.toml, coarse,
//! EigenFit and fine. Recorded in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hooke::scene::Scene;

fn scene_variant(name: &str) -> Scene {
    variant_of("twisted_bar_eigenfit.toml", name)
}

fn variant_of(file: &str, name: &str) -> Scene {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenes")
        .join(file);
    let scene = Scene::from_file(&path).expect("the scene reads");
    match name {
        "eigenfit" => scene,
        "coarse" => hooke::studies::resolution::coarse_scene(&scene).expect("coarse"),
        _ => scene.eigenfit_reference().expect("the fine reference"),
    }
}

fn step(c: &mut Criterion) {
    let mut group = c.benchmark_group("twisted_bar_step");
    group.sample_size(10);
    for name in ["coarse", "eigenfit", "fine"] {
        // Built inside, so that a filtered-out variant costs nothing.
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            let scene = scene_variant(name);
            let mut built = scene.build().expect("builds");
            let h = scene.file.simulation.time_step;
            // A few steps in, so that the bar is moving and EigenFit warm-starts.
            let mut state = built.initial_state.clone();
            for _ in 0..3 {
                built.integrator.step(&built.model, &mut state, h).expect("step");
            }
            b.iter(|| {
                let mut next = state.clone();
                built.integrator.step(&built.model, &mut next, h).expect("step");
                next
            })
        });
    }
    group.finish();
}

/// Ten steps of the shaken figure from the same state, 0.5 s in (swinging
/// freely), with EigenFit's carried modes restored before each sample, so
/// that every sample follows the modes as a run does.
fn nonlinear_steps(c: &mut Criterion) {
    let mut group = c.benchmark_group("shaken_figure_ten_steps");
    group.sample_size(10);
    for name in ["coarse", "eigenfit", "fine"] {
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            let scene = variant_of("shaken_figure_eigenfit.toml", name);
            let mut built = scene.build().expect("builds");
            let h = scene.file.simulation.time_step;
            let mut state = built.initial_state.clone();
            for _ in 0..50 {
                built.integrator.step(&built.model, &mut state, h).expect("step");
            }
            let histories = built.model.term_histories();
            b.iter(|| {
                built.model.restore_term_histories(&histories).expect("restores");
                let mut next = state.clone();
                for _ in 0..10 {
                    built.integrator.step(&built.model, &mut next, h).expect("step");
                }
                next
            })
        });
    }
    group.finish();
}

criterion_group!(benches, step, nonlinear_steps);
criterion_main!(benches);
