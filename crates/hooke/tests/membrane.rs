//! Membrane triangles (cloth as strain-limited triangles, Liu 2018 thesis, Fig. 6.1):
//! derivatives, PSD projection, local/global and the strain limit's effect.

mod common;

use common::Lcg;
use hooke::integrate::{BackwardEuler, Integrator};
use hooke::scene::Scene;
use hooke::solve::SolverSettings;

/// A 4×3-cell cloth of membranes (no springs), held along its top edge.
fn cloth(min: f64, max: f64, solver: &str) -> hooke::scene::BuiltScene {
    let text = format!(
        r#"gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 0.1
time_step = 0.0333333333333
[[networks]]
shape = {{ cloth = {{ origin = [0.0, 0.0, 0.0], size = [1.0, 0.75], cells = [4, 3] }} }}
stiffness = 0.0
density = 0.2
membrane = {{ youngs_modulus = 1e4, poisson_ratio = 0.3, thickness = 0.001, min = {min}, max = {max} }}
[[pins]]
select = {{ plane = {{ point = [0.0, 0.75, 0.0], normal = [0.0, 1.0, 0.0] }} }}
[integrator]
kind = "backward_euler"
[solver]
{solver}
"#
    );
    Scene::from_text(&text, "membrane.toml", ".".into())
        .unwrap()
        .build()
        .unwrap()
}

/// Gradient and Hessian against central differences, with the cloth
/// stretched, sheared and folded out of its plane (min = max = 1: the ARAP
/// membrane, smooth everywhere), and with strain limits on a state whose
/// stretches all lie beyond them.
#[test]
fn membrane_derivatives_match_finite_differences() {
    for (min, max, stretch) in [(1.0, 1.0, 1.1), (0.9, 1.1, 1.35)] {
        let built = cloth(min, max, "kind = \"newton\"");
        let mut rng = Lcg::new(4);
        let x: Vec<f64> = built
            .model
            .rest_positions()
            .chunks(3)
            .flat_map(|p| {
                [
                    stretch * p[0] + 0.2 * p[1] + 0.01 * rng.next(),
                    stretch * p[1] + 0.01 * rng.next(),
                    0.1 * (3.0 * p[0]).sin() + 0.02 * rng.next(),
                ]
            })
            .collect();
        common::assert_potential_derivatives(&built.model, &x, 1e-6, 1e-5, &format!("membrane [{min}, {max}]"));
    }
}

/// With projection the element Hessians are positive semi-definite, however
/// the cloth is crumpled.
#[test]
fn projected_membrane_hessian_is_positive_semidefinite() {
    let built = cloth(0.9, 1.1, "kind = \"newton\"");
    let model = &built.model;
    let mut rng = Lcg::new(8);
    for _ in 0..5 {
        let x: Vec<f64> = model.rest_positions().iter().map(|p| p + 0.3 * rng.next()).collect();
        let mut gradient = vec![0.0; x.len()];
        let mut values = vec![0.0; model.pattern().nonzeros()];
        model
            .hessian(&x, 0.0, true, &mut gradient, &mut values, &mut Vec::new())
            .unwrap();
        let k = common::dense(model.pattern(), &values);
        let smallest = k.symmetric_eigenvalues().min();
        assert!(smallest > -1e-9 * k.amax(), "smallest eigenvalue {smallest}");
    }
}

/// Local/global on membrane cloth lowers Φ at every iteration without a line
/// search and reaches Newton's step; a tighter strain limit sags less.
#[test]
fn local_global_on_membranes_descends_and_limits_the_sag() {
    let built = cloth(0.9, 1.1, "kind = \"newton\"\ntolerance = 1e-10");
    let (model, start) = (&built.model, &built.initial_state);
    let h = 1.0 / 30.0;
    let step = |settings: SolverSettings| {
        let mut state = start.clone();
        BackwardEuler::new(settings.clone())
            .unwrap()
            .step(model, &mut state, h)
            .unwrap();
        state
    };
    let potential = |x: &[f64]| common::backward_euler_potential(model, start, h, x);
    let local_global = |iterations| SolverSettings {
        kind: "local_global".into(),
        iterations,
        tolerance: 1e-10,
        max_iterations: Some(100_000),
        max_step_halvings: 0,
        ..SolverSettings::default()
    };
    let mut previous = potential(&start.positions);
    for k in 1..=10 {
        let value = potential(&step(local_global(Some(k))).positions);
        assert!(value <= previous, "Φ rose at iteration {k}");
        previous = value;
    }
    let newton = step(SolverSettings {
        tolerance: 1e-10,
        ..SolverSettings::default()
    });
    let converged = step(local_global(None));
    let largest = converged
        .positions
        .iter()
        .zip(&newton.positions)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(largest < 1e-6, "local/global and Newton differ by {largest}");

    // Hanging for 1 s: the lowest point with limits ±10 % against ±30 %.
    let lowest = |min: f64, max: f64| {
        let built = cloth(min, max, "kind = \"local_global\"\niterations = 30");
        let mut state = built.initial_state.clone();
        let mut integrator = built.integrator;
        for _ in 0..30 {
            integrator.step(&built.model, &mut state, h).unwrap();
        }
        state.positions.chunks(3).map(|p| p[2]).fold(f64::INFINITY, f64::min)
    };
    let (tight, loose) = (lowest(0.9, 1.1), lowest(0.7, 1.3));
    assert!(tight > loose + 0.05, "±10 %: {tight} m, ±30 %: {loose} m");
}
