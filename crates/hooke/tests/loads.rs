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

/// A bar along x with a surface load; `cells` sets the mesh resolution.
fn loaded_bar(cells: &str, load: &str, kind: &str) -> String {
    format!(
        r#"name = "loaded_bar"
[simulation]
duration = 1.0
time_step = 1.0
[[bodies]]
mesh = {{ box = {{ size = [0.4, 0.1, 0.1], cells = {cells} }} }}
material = {{ model = "linear", youngs_modulus = 1e6, poisson_ratio = 0.0, density = 1000.0 }}
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}
[[tractions]]
{load}
[integrator]
kind = "{kind}"
"#
    )
}

const END_FACE: &str = "select = { plane = { point = [0.4, 0.0, 0.0], normal = [1.0, 0.0, 0.0] } }";

/// A pressure and a traction give the same total force at every resolution,
/// spread by face area (a corner of the loaded face gets a quarter of what
/// an inner vertex gets on a regular grid), not by vertex mass.
#[test]
fn surface_loads_integrate_over_the_faces() {
    for cells in ["[4, 1, 1]", "[8, 2, 2]", "[16, 4, 4]"] {
        let text = loaded_bar(cells, &format!("{END_FACE}\npressure = -1000.0"), "static");
        let built = Scene::from_text(&text, "bar.toml", ".".into())
            .unwrap()
            .build()
            .unwrap();
        let mut force = vec![0.0; built.model.dof_count()];
        built.model.external_force(0.0, &mut force);
        // A negative pressure pulls outward: 1000 Pa × 0.01 m² along +x.
        let total: Vec<f64> = (0..3).map(|a| force.iter().skip(a).step_by(3).sum()).collect();
        assert!(
            (total[0] - 10.0).abs() < 1e-9 && total[1].abs() < 1e-9 && total[2].abs() < 1e-9,
            "{cells}: {total:?}"
        );
        if cells == "[8, 2, 2]" {
            let at = |y: f64, z: f64| {
                let v = (0..built.model.mesh().vertex_count())
                    .find(|&v| {
                        let p = built.model.mesh().vertices()[v];
                        (p.x - 0.4).abs() < 1e-12 && (p.y - y).abs() < 1e-12 && (p.z - z).abs() < 1e-12
                    })
                    .unwrap();
                force[3 * v]
            };
            let (corner, middle) = (at(0.0, 0.0), at(0.05, 0.05));
            assert!(
                corner > 0.0 && middle > 3.0 * corner,
                "corner {corner}, middle {middle}"
            );
        }
    }
    let top =
        "select = { plane = { point = [0.0, 0.0, 0.1], normal = [0.0, 0.0, 1.0] } }\ntraction = [0.0, 0.0, -500.0]";
    let built = Scene::from_text(&loaded_bar("[8, 2, 2]", top, "static"), "bar.toml", ".".into())
        .unwrap()
        .build()
        .unwrap();
    let mut force = vec![0.0; built.model.dof_count()];
    built.model.external_force(0.0, &mut force);
    let total_z: f64 = force.iter().skip(2).step_by(3).sum();
    assert!((total_z + 20.0).abs() < 1e-9, "500 Pa down on 0.04 m²: {total_z}");
}

/// Pulled at its end by a uniform traction, a linear bar with ν = 0 stretches
/// by σ L / E, which linear tetrahedra represent exactly.
#[test]
fn a_bar_pulled_by_a_traction_stretches_as_in_the_textbook() {
    let text = loaded_bar(
        "[8, 2, 2]",
        &format!("{END_FACE}\ntraction = [1000.0, 0.0, 0.0]"),
        "static",
    );
    let scene = Scene::from_text(&text, "bar.toml", ".".into()).unwrap();
    let mut built = scene.build().unwrap();
    let mut state = built.initial_state.clone();
    built.integrator.step(&built.model, &mut state, 1.0).unwrap();
    let expected = 1000.0 * 0.4 / 1e6;
    for v in 0..built.model.mesh().vertex_count() {
        let rest = built.model.mesh().vertices()[v];
        if (rest.x - 0.4).abs() < 1e-12 {
            let stretch = state.positions[3 * v] - rest.x;
            assert!(
                (stretch / expected - 1.0).abs() < 1e-6,
                "end stretch {stretch} vs {expected}"
            );
        }
    }
    // Errors name the key.
    let nothing = loaded_bar(
        "[8, 2, 2]",
        "select = { plane = { point = [9.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] } }\npressure = 1.0",
        "static",
    );
    let error = Scene::from_text(&nothing, "bar.toml", ".".into())
        .and_then(|s| s.build())
        .err()
        .unwrap();
    assert!(error.to_string().contains("tractions[0].select"), "{error}");
    let zero = loaded_bar("[8, 2, 2]", END_FACE, "static");
    let error = Scene::from_text(&zero, "bar.toml", ".".into()).err().unwrap();
    assert!(error.to_string().contains("tractions[0]"), "{error}");
}

/// A body at rest with no gravity, loaded only by a pressure, is not taken
/// for a diverging run: the divergence watch counts the loads' work.
#[test]
fn a_pressure_alone_is_no_divergence() {
    let text = loaded_bar(
        "[8, 2, 2]",
        &format!("{END_FACE}\npressure = 2e4\nramp_time = 0.05"),
        "backward_euler",
    )
    .replace("duration = 1.0", "duration = 0.1")
    .replace("time_step = 1.0", "time_step = 0.01");
    let scene = Scene::from_text(&text, "bar.toml", ".".into()).unwrap();
    let output = std::env::temp_dir().join(format!("hooke-pressure-run-{}", std::process::id()));
    let settings = scene.run_settings(Some(&output));
    let mut built = scene.build().unwrap();
    let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap();
    std::fs::remove_dir_all(&output).ok();
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
}

/// Gravitational energy is measured from where the run starts: 0 at the first
/// record wherever the body sits (raised by its box origin or by an initial
/// displacement), then −m g Δz as it falls freely.
#[test]
fn gravitational_energy_starts_at_zero_and_counts_the_drop() {
    let directory = std::env::temp_dir().join(format!("hooke-gravity-datum-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    // 2 × 2 × 2 cells: 27 vertices, each lifted a further 0.5 m by the table.
    let table: String = (0..27).map(|_| "0.0,0.0,0.5\n").collect();
    std::fs::write(directory.join("lift.csv"), table).unwrap();
    for initial in ["", "[initial]\ndisplacement = \"lift.csv\"\n"] {
        let text = format!(
            r#"name = "free_fall"
gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 0.2
time_step = 0.01
[[bodies]]
mesh = {{ box = {{ size = [0.1, 0.1, 0.1], cells = [2, 2, 2], origin = [0.0, 0.0, 7.0] }} }}
material = {{ model = "stable_neo_hookean", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000.0 }}
{initial}[integrator]
kind = "symplectic_euler"
"#
        );
        let scene = Scene::from_text(&text, "fall.toml", directory.clone()).unwrap();
        let built = scene.build().unwrap();
        let start = hooke::simulation::energy_record(&built.model, &built.initial_state);
        assert_eq!(start.gravitational, 0.0, "{initial}");
        // Free fall for 0.2 s: every vertex drops the same distance.
        let mut state = built.initial_state.clone();
        let mut integrator = built.integrator;
        for _ in 0..20 {
            integrator.step(&built.model, &mut state, 0.01).unwrap();
        }
        let drop = built.initial_state.positions[2] - state.positions[2];
        let mass = 1000.0 * 0.1f64.powi(3);
        let end = hooke::simulation::energy_record(&built.model, &state);
        assert!(drop > 0.15, "{drop}");
        assert!(
            (end.gravitational + mass * 9.81 * drop).abs() < 1e-9 * mass * 9.81 * drop,
            "{initial}: {} vs {}",
            end.gravitational,
            -mass * 9.81 * drop
        );
    }
}
