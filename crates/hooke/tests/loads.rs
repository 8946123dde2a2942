//! Loads that grow over a time (`gravity_ramp_time`, `[[forces]] ramp_time`):
//! the dynamic answer to a load switched on at once is to overshoot its
//! equilibrium twice over; a load ramped over several periods of the body's
//! lowest mode settles near it.

use hooke::scene::Scene;

/// A cantilever (lowest period about 0.25 s) under gravity, by the implicit
/// midpoint rule, which adds no numerical damping.
fn cantilever(kind: &str, duration: f64, time_step: f64, extra: &str) -> String {
    format!(
        r#"name = "ramped_cantilever"
gravity = [0.0, 0.0, -9.81]
{extra}
[simulation]
duration = {duration}
time_step = {time_step}
mass = "lumped"
[[bodies]]
mesh = {{ box = {{ size = [0.4, 0.04, 0.04], cells = [10, 1, 1] }} }}
material = {{ model = "stable_neo_hookean", youngs_modulus = 1e7, poisson_ratio = 0.3, density = 1000.0 }}
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}
[integrator]
kind = "{kind}"
"#
    )
}

/// The tip's downward deflection at every step (the first: at rest).
fn tip_deflections(text: &str) -> Vec<f64> {
    let scene = Scene::from_text(text, "ramp.toml", std::env::temp_dir()).unwrap();
    let steps = scene.run_settings(None).step_count();
    let time_step = scene.file.simulation.time_step;
    let mut built = scene.build().unwrap();
    let tip: Vec<usize> = (0..built.model.mesh().vertex_count())
        .filter(|&v| (built.model.mesh().vertices()[v].x - 0.4).abs() < 1e-9)
        .collect();
    let deflection = |positions: &[f64]| tip.iter().map(|&v| -positions[3 * v + 2]).sum::<f64>() / tip.len() as f64;
    let mut state = built.initial_state.clone();
    let rest = deflection(&state.positions);
    let mut deflections = vec![0.0];
    for _ in 0..steps {
        built.integrator.step(&built.model, &mut state, time_step).unwrap();
        deflections.push(deflection(&state.positions) - rest);
    }
    deflections
}

#[test]
fn a_ramped_load_settles_where_a_sudden_one_overshoots() {
    let equilibrium = *tip_deflections(&cantilever("static", 1.0, 1.0, "")).last().unwrap();
    assert!(equilibrium > 0.002, "static tip deflection {equilibrium}");

    let sudden = tip_deflections(&cantilever("implicit_midpoint", 0.3, 0.0025, ""));
    let sudden_peak = sudden.iter().cloned().fold(0.0, f64::max);
    assert!(
        (1.7..2.2).contains(&(sudden_peak / equilibrium)),
        "a sudden load overshoots to about twice the equilibrium: {sudden_peak} vs {equilibrium}"
    );

    // Ramped over five periods, then held.
    let ramped = tip_deflections(&cantilever(
        "implicit_midpoint",
        1.5,
        0.0025,
        "gravity_ramp_time = 1.25",
    ));
    let ramped_peak = ramped.iter().cloned().fold(0.0, f64::max);
    assert!(
        ramped_peak < 1.15 * equilibrium,
        "ramped: {ramped_peak} vs {equilibrium}"
    );
    // Halfway up the ramp the load is half: so, near enough, is the deflection.
    let halfway = ramped[(0.625 / 0.0025) as usize];
    assert!(
        (halfway / equilibrium - 0.5).abs() < 0.1,
        "halfway: {halfway} vs {equilibrium}"
    );
    let end = ramped.last().unwrap();
    assert!(
        (end / equilibrium - 1.0).abs() < 0.15,
        "after the ramp: {end} vs {equilibrium}"
    );
}

/// A force ramped over 1 s is half its total at 0.5 s and whole from 1 s on.
#[test]
fn a_ramped_force_grows_linearly_then_holds() {
    let text = cantilever(
        "backward_euler",
        0.01,
        0.01,
        "gravity_ramp_time = 2.0\n[[forces]]\nselect = { plane = { point = [0.4, 0.0, 0.0], normal = [1.0, 0.0, 0.0] } }\ntotal = [0.0, 0.0, -4.0]\nramp_time = 1.0",
    );
    let built = Scene::from_text(&text, "ramp.toml", std::env::temp_dir())
        .unwrap()
        .build()
        .unwrap();
    let mut force = vec![0.0; built.model.dof_count()];
    let total_z = |time: f64, force: &mut Vec<f64>| {
        built.model.external_force(time, force);
        force.iter().skip(2).step_by(3).sum::<f64>()
    };
    let weight = -9.81 * built.model.mass().lumped().iter().sum::<f64>();
    for (time, expected) in [
        (0.0, 0.0),
        (0.5, -2.0 + 0.25 * weight),
        (1.0, -4.0 + 0.5 * weight),
        (3.0, -4.0 + weight),
    ] {
        let found = total_z(time, &mut force);
        assert!(
            (found - expected).abs() < 1e-9 * weight.abs(),
            "t = {time}: {found} vs {expected}"
        );
    }
    // A negative ramp time is a scene error naming the key.
    let error = Scene::from_text(
        &text.replace("ramp_time = 1.0", "ramp_time = -1.0"),
        "ramp.toml",
        ".".into(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("forces[0].ramp_time"), "{error}");
}
