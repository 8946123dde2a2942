//! The cost questions of the Chen 2019 thesis, in criterion:
//! - a SIERE step against a semi-implicit step on the same scene (the hanging
//!   heterogeneous ball, scenes/hanging_ball.toml, 3,480 tets): issue target ≤ 1.5×;
//! - exponential Rosenbrock–Euler's Krylov substeps and time against the
//!   stiffness-to-density ratio E/ρ (the trend of the thesis' Table 4.1).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hooke::integrate::{Integrator, ModeRefresh, SemiImplicitBackwardEuler, Siere};
use hooke::scene::Scene;
use std::path::Path;

const STEPS: usize = 50;

/// Builds a fresh integrator (each measured run starts without cached modes).
type MakeIntegrator = Box<dyn Fn() -> Box<dyn Integrator>>;

fn siere_against_semi_implicit(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/hanging_ball.toml");
    let built = Scene::from_file(&path).expect("scene").build().expect("built");
    let (model, start) = (&built.model, &built.initial_state);
    let h = 0.005;
    let mut group = c.benchmark_group(format!(
        "fifty_steps_hanging_ball_{}_tets",
        model.mesh().element_count()
    ));
    group.sample_size(10);
    let cases: Vec<(&str, MakeIntegrator)> = vec![
        (
            "semi_implicit",
            Box::new(|| Box::new(SemiImplicitBackwardEuler::new(false))),
        ),
        (
            "siere_5_modes_every_step",
            Box::new(|| Box::new(Siere::new(5, ModeRefresh::EveryStep, 1e-6, false))),
        ),
        (
            "siere_5_modes_refresh_1e-2",
            Box::new(|| Box::new(Siere::new(5, ModeRefresh::RitzResidual(1e-2), 1e-6, false))),
        ),
    ];
    for (label, make) in cases {
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| {
                let mut integrator = make();
                let mut state = start.clone();
                for _ in 0..STEPS {
                    integrator.step(model, &mut state, h).expect("step");
                }
                state
            })
        });
    }
    group.finish();
}

/// A Neo-Hookean bar (8 × 2 × 2 cells) clamped at one end and stretched by 2%,
/// one ERE step of h = 1/30 s, as E/ρ grows.
fn ere_substeps_against_stiffness(c: &mut Criterion) {
    let mut group = c.benchmark_group("ere_step_bar_stretched_2pct");
    group.sample_size(10);
    for ratio in [1e3, 1e4, 1e5, 1e6] {
        let text = format!(
            r#"
[simulation]
duration = 0.1
time_step = 0.03333333333333333
[[bodies]]
mesh = {{ box = {{ size = [0.4, 0.1, 0.1], cells = [8, 2, 2] }} }}
material = {{ model = "neo_hookean", youngs_modulus = {youngs}, poisson_ratio = 0.48, density = 1000.0 }}
[[pins]]
select = {{ plane = {{ point = [0, 0, 0], normal = [-1, 0, 0] }} }}
[damping]
mass_coefficient = 0.01
stiffness_coefficient = 0.01
[integrator]
kind = "exponential_rosenbrock_euler"
"#,
            youngs = ratio * 1000.0
        );
        let scene = Scene::from_text(&text, "bench", ".".into()).expect("scene");
        let mut built = scene.build().expect("built");
        let mut start = built.initial_state.clone();
        start.positions.chunks_mut(3).for_each(|p| p[0] *= 1.02);
        let mut probe = start.clone();
        let report = built
            .integrator
            .step(&built.model, &mut probe, 1.0 / 30.0)
            .expect("step");
        eprintln!("E/rho = {ratio:e} (m/s)^2: {} Krylov substeps", report.iterations);
        group.bench_function(BenchmarkId::from_parameter(format!("E_over_rho_{ratio:e}")), |b| {
            b.iter(|| {
                let mut state = start.clone();
                built
                    .integrator
                    .step(&built.model, &mut state, 1.0 / 30.0)
                    .expect("step");
                state
            })
        });
    }
    group.finish();
}

criterion_group!(benches, siere_against_semi_implicit, ere_substeps_against_stiffness);
criterion_main!(benches);
