//! Barrier contact (Li et al. 2020, "Incremental Potential Contact") in
//! whole runs: bodies on a plane and on each other, a projectile that must
//! not tunnel, the derivatives the Newton steps use, and the scenes refused.

use hooke::contact::{intersection, ContactSurface};
use hooke::model::{BarrierContact, BarrierStiffness, EnergyTerm, State, TermGroup, TermKind};
use hooke::scene::Scene;
use hooke::solve::{ContactAtEnd, Coordinates, IncrementalPotential, Inertia, Objective};
use std::path::PathBuf;

fn scene(text: &str) -> Scene {
    Scene::from_text(text, "<test>", PathBuf::from(".")).expect("a valid scene")
}

fn refusal(text: &str) -> String {
    match Scene::from_text(text, "<test>", PathBuf::from(".")).and_then(|s| s.build()) {
        Ok(_) => panic!("the scene was accepted"),
        Err(error) => error.to_string(),
    }
}

/// A soft cube (2000 kg/m³ × 8 dm³) whose bottom is `lift` above the floor z = 0.
fn cube(origin: [f64; 3], youngs_modulus: f64) -> String {
    format!(
        r#"
[[bodies]]
mesh = {{ box = {{ size = [0.2, 0.2, 0.2], cells = [3, 3, 3], origin = [{}, {}, {}] }} }}
material = {{ model = "stable_neo_hookean", youngs_modulus = {youngs_modulus:e}, poisson_ratio = 0.4, density = 1000.0 }}
"#,
        origin[0], origin[1], origin[2]
    )
}

const FLOOR: &str = r#"
[[obstacles]]
shape = { plane = { point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] } }
"#;

fn header(duration: f64, time_step: f64) -> String {
    format!("gravity = [0.0, 0.0, -9.81]\n[simulation]\nduration = {duration}\ntime_step = {time_step}\n")
}

fn lowest(x: &[f64], vertices: std::ops::Range<usize>) -> f64 {
    vertices.map(|v| x[3 * v + 2]).fold(f64::INFINITY, f64::min)
}

fn highest(x: &[f64], vertices: std::ops::Range<usize>) -> f64 {
    vertices.map(|v| x[3 * v + 2]).fold(f64::NEG_INFINITY, f64::max)
}

/// Steps a built scene `steps` times, checking after each that no surface
/// edge crosses a triangle (an independent test, not the barrier's own
/// distances), that no vertex is below the floor, and that the closest pair
/// is apart; returns the states.
fn run_checked(text: &str, steps: usize) -> (hooke::scene::BuiltScene, Vec<hooke::model::State>) {
    let mut built = scene(text).build().expect("builds");
    // Every primitive in contact: the bodies' boundaries (checked to be
    // there) and the networks' triangles and segments.
    let surface = built.model.barrier_contact().expect("contact").surface().clone();
    let boundary = ContactSurface::of_tetrahedra(built.model.mesh().tetrahedra().expect("3D"));
    assert!(boundary.faces.iter().all(|f| surface.faces.binary_search(f).is_ok()));
    let dt = scene(text).file.simulation.time_step;
    let mut state = built.initial_state.clone();
    let mut states = Vec::new();
    for step in 1..=steps {
        built.integrator.step(&built.model, &mut state, dt).expect("a step");
        let x = &state.positions;
        if let Some(crossing) = intersection::first_crossing(&surface, x) {
            panic!("step {step}: {crossing:?}");
        }
        assert!(lowest(x, 0..x.len() / 3) > 0.0, "step {step}: below the floor");
        let report = built.model.barrier_contact().expect("contact").report(x);
        assert!(report.smallest_distance > 0.0, "step {step}: {report:?}");
        states.push(state.clone());
    }
    (built, states)
}

/// Kinetic + elastic + gravitational + contact energy of a state: what a
/// bounce on a barrier of fixed κ should keep.
fn total_energy(model: &hooke::model::Model, s: &hooke::model::State) -> f64 {
    let parts = model.energies(&s.positions, s.time);
    model.kinetic_energy(&s.velocities) + parts.elastic + parts.gravitational + parts.contact
}

/// The floor's push on the bodies at x: friction's along x (the friction
/// term's force with the last step's lag) and the barrier's along z.
fn floor_push(model: &hooke::model::Model, x: &[f64]) -> [f64; 2] {
    let friction: f64 = model
        .terms()
        .iter()
        .filter(|t| t.kind() == TermKind::Friction)
        .map(|t| {
            let mut gradient = vec![0.0; x.len()];
            t.gradient(x, 0.0, &mut gradient, true).expect("a gradient");
            -gradient.chunks(3).map(|g| g[0]).sum::<f64>()
        })
        .sum();
    let normal: f64 = model.barrier_contact().unwrap().forces(x).chunks(3).map(|f| f[2]).sum();
    [friction, normal]
}

#[test]
fn a_cube_on_the_floor_comes_to_rest_with_the_barrier_carrying_its_weight() {
    let text = format!("{}{}{FLOOR}[contact]\n", header(1.0, 0.01), cube([0.0, 0.0, 0.01], 1e5));
    let (built, states) = run_checked(&text, 100);
    let last = states.last().unwrap();
    let contact = built.model.barrier_contact().unwrap();
    let force = contact.forces(&last.positions);
    let lifted: f64 = force.chunks(3).map(|f| f[2]).sum();
    let weight = 8.0 * 9.81;
    // Backward Euler damps the landing out; at rest the floor holds the weight.
    assert!((lifted - weight).abs() < 0.01 * weight, "{lifted} N against {weight} N");
    let speed = last.velocities.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(speed < 1e-2, "still moving at {speed} m/s");
    let report = contact.report(&last.positions);
    let dhat = contact.activation_distance();
    assert!(
        report.smallest_distance < dhat && report.active_pairs >= 16,
        "{report:?}"
    );
}

#[test]
fn a_cube_dropped_on_another_rests_on_it_and_the_surfaces_never_cross() {
    // Same stiffness, stacked with a 9 cm fall: the upper one lands on the
    // lower one, which rests on the floor.
    let text = format!(
        "{}{}{}{FLOOR}[contact]\n",
        header(0.6, 0.01),
        cube([0.0, 0.0, 0.001], 1e6),
        cube([0.0, 0.0, 0.3], 1e6)
    );
    let (built, states) = run_checked(&text, 60);
    let x = &states.last().unwrap().positions;
    let (lower, upper) = (0..64, 64..128);
    let gap = lowest(x, upper.clone()) - highest(x, lower);
    let dhat = built.model.barrier_contact().unwrap().activation_distance();
    assert!(
        gap > 0.0 && gap < dhat,
        "the upper cube rests {gap} m above the lower one (d̂ = {dhat})"
    );
    let speed = states
        .last()
        .unwrap()
        .velocities
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(speed < 0.05, "{speed}");
    assert!(highest(x, upper) < 0.41, "it landed");
}

#[test]
fn a_fast_projectile_stops_at_a_thin_wall_in_one_step_instead_of_tunnelling() {
    // A 2 cm cube at 60 m/s toward a 1 cm wall 10 cm away: one step of
    // 10 ms would carry it 60 cm, through the wall. CCD bounds every
    // Newton step, so it stops in front.
    let text = format!(
        r#"{}
[[bodies]]
mesh = {{ box = {{ size = [0.02, 0.02, 0.02], cells = [1, 1, 1], origin = [0.0, 0.09, 0.09] }} }}
material = {{ model = "stable_neo_hookean", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000.0 }}
velocity = [60.0, 0.0, 0.0]
[[bodies]]
mesh = {{ box = {{ size = [0.01, 0.2, 0.2], cells = [1, 4, 4], origin = [0.12, 0.0, 0.0] }} }}
material = {{ model = "stable_neo_hookean", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000.0 }}
[[pins]]
select = {{ box = {{ min = [0.1, -1.0, -1.0], max = [1.0, 1.0, 1.0] }} }}
[contact]
distance = 1e-3
"#,
        "[simulation]\nduration = 0.01\ntime_step = 0.01\n"
    );
    let mut built = scene(&text).build().expect("builds");
    let mut state = built.initial_state.clone();
    built.integrator.step(&built.model, &mut state, 0.01).expect("a step");
    let x = &state.positions;
    let front = (0..8).map(|v| x[3 * v]).fold(f64::NEG_INFINITY, f64::max);
    assert!(
        front < 0.12,
        "the projectile's front is at x = {front}, past the wall's face at 0.12"
    );
    let surface = ContactSurface::of_tetrahedra(built.model.mesh().tetrahedra().unwrap());
    assert!(intersection::first_crossing(&surface, x).is_none());
}

/// Two cubes 0.4 d̂ apart, one turned, so that point–triangle and
/// edge–edge pairs are active.
fn close_cubes(dhat: f64) -> (BarrierContact, Vec<f64>) {
    let built = scene(&format!(
        "{}{}{}",
        header(0.01, 0.01),
        cube([0.0, 0.0, 0.0], 1e5),
        cube([0.05, 0.03, 0.3], 1e5)
    ))
    .build()
    .unwrap();
    let mut x = built.initial_state.positions.clone();
    // Turn the upper cube about z by 0.3 rad and lower it to 0.4 d̂ above the lower one.
    let (c, s) = (0.3f64.cos(), 0.3f64.sin());
    for v in 64..128 {
        let (px, py) = (x[3 * v] - 0.15, x[3 * v + 1] - 0.13);
        x[3 * v] = 0.15 + c * px - s * py;
        x[3 * v + 1] = 0.13 + s * px + c * py;
        x[3 * v + 2] -= 0.3 - 0.2 - 0.4 * dhat;
    }
    let surface = ContactSurface::of_tetrahedra(built.model.mesh().tetrahedra().unwrap());
    let contact = BarrierContact::new(
        surface,
        built.model.rest_positions(),
        Vec::new(),
        dhat,
        BarrierStiffness::Fixed(1e4),
    )
    .unwrap();
    (contact, x)
}

#[test]
fn the_energy_gradient_and_pair_blocks_match_central_differences() {
    let dhat = 0.01;
    let (contact, x) = close_cubes(dhat);
    let report = contact.report(&x);
    assert!(report.active_pairs > 10, "{report:?}");
    let n = x.len();
    let mut gradient = vec![0.0; n];
    let energy = contact.gradient(&x, 0.0, &mut gradient, true).unwrap();
    assert!(energy > 0.0 && (energy - contact.energy(&x, 0.0)).abs() < 1e-12 * energy);
    let mut blocks = hooke::linalg::VertexBlocks::new(3);
    contact.add_changing_blocks(&x, 0.0, false, &mut blocks).unwrap();
    // The dense Hessian of the blocks.
    let mut hessian = nalgebra::DMatrix::<f64>::zeros(n, n);
    let mut offset = 0;
    for b in 0..blocks.len() {
        let vertices = &blocks.vertices[blocks.starts[b]..blocks.starts[b + 1]];
        let k = 3 * vertices.len();
        for column in 0..k {
            for row in 0..k {
                let (i, j) = (3 * vertices[row / 3] + row % 3, 3 * vertices[column / 3] + column % 3);
                hessian[(i, j)] += blocks.values[offset + column * k + row];
            }
        }
        offset += k * k;
    }
    let h = 1e-7 * dhat;
    // The coordinates of the lower cube's top and the upper cube's bottom that move most.
    let moved: Vec<usize> = (0..n)
        .filter(|&i| gradient[i].abs() > 1e-3 * gradient.iter().fold(0.0f64, |m, g| m.max(g.abs())))
        .collect();
    assert!(moved.len() > 20);
    for &i in moved.iter().step_by(7) {
        let shifted = |by: f64| {
            let mut y = x.clone();
            y[i] += by;
            y
        };
        let difference = (contact.energy(&shifted(h), 0.0) - contact.energy(&shifted(-h), 0.0)) / (2.0 * h);
        assert!(
            (gradient[i] - difference).abs() < 1e-5 * gradient[i].abs(),
            "∂E/∂x[{i}]: {} against {difference}",
            gradient[i]
        );
        let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
        contact.gradient(&shifted(h), 0.0, &mut plus, true).unwrap();
        contact.gradient(&shifted(-h), 0.0, &mut minus, true).unwrap();
        let scale = hessian.column(i).amax();
        for j in 0..n {
            let difference = (plus[j] - minus[j]) / (2.0 * h);
            assert!(
                (hessian[(j, i)] - difference).abs() < 1e-4 * scale,
                "H[{j}, {i}]: {} against {difference}",
                hessian[(j, i)]
            );
        }
    }
    // Projected blocks are positive semi-definite.
    let mut projected = hooke::linalg::VertexBlocks::new(3);
    contact.add_changing_blocks(&x, 0.0, true, &mut projected).unwrap();
    let mut offset = 0;
    for b in 0..projected.len() {
        let k = 3 * (projected.starts[b + 1] - projected.starts[b]);
        let block = nalgebra::DMatrix::from_column_slice(k, k, &projected.values[offset..offset + k * k]);
        let smallest = block.symmetric_eigenvalues().min();
        assert!(smallest > -1e-9 * block.amax(), "block {b}: {smallest}");
        offset += k * k;
    }
}

#[test]
fn the_adaptive_stiffness_is_kept_by_the_history_and_taken_back() {
    let text = format!(
        "{}{}{FLOOR}[contact]\n",
        header(0.05, 0.01),
        cube([0.0, 0.0, 0.0004], 1e5)
    );
    let built = scene(&text).build().unwrap();
    let contact = built.model.barrier_contact().unwrap();
    assert_eq!(contact.stiffness(), None, "set at the first step");
    contact.begin_step(&built.model, &built.initial_state, 0.01).unwrap();
    let kappa = contact.stiffness().expect("set");
    assert!(kappa.is_finite() && kappa > 0.0);
    let history = contact.history();
    let fresh = scene(&text).build().unwrap();
    fresh
        .model
        .barrier_contact()
        .unwrap()
        .restore_history(&history)
        .unwrap();
    assert_eq!(fresh.model.barrier_contact().unwrap().stiffness(), Some(kappa));
    // JSON has no infinity: a history written before any pair is near reads back too.
    let text = serde_json::to_string(&history).unwrap();
    let read: serde_json::Value = serde_json::from_str(&text).unwrap();
    fresh.model.barrier_contact().unwrap().restore_history(&read).unwrap();
}

#[test]
fn scenes_barrier_contact_cannot_run_are_refused_naming_the_key() {
    let base = |extra: &str, tail: &str| {
        format!(
            "{}{}{extra}[contact]\n{tail}",
            header(0.1, 0.01),
            cube([0.0, 0.0, 0.01], 1e5)
        )
    };
    let cases = [
        // Two bodies overlapping at the start.
        (
            format!("{}{}{}[contact]\n", header(0.1, 0.01), cube([0.0, 0.0, 0.0], 1e5), cube([0.1, 0.1, 0.1], 1e5)),
            "intersect at the start",
        ),
        // Apart, but closer than d̂.
        (
            format!(
                "{}{}{}[contact]\ndistance = 0.01\n",
                header(0.1, 0.01),
                cube([0.0, 0.0, 0.0], 1e5),
                cube([0.0, 0.0, 0.205], 1e5)
            ),
            "closer than d̂",
        ),
        (base(FLOOR, "distance = 0.05\n"), "obstacles[0]"),
        (base("[integrator]\nkind = \"symplectic_euler\"\n", ""), "contact"),
        (base("", "friction = -0.5\n"), "contact.friction"),
        (base("", "friction = 0.5\nfriction_velocity = 0.0\n"), "contact.friction_velocity"),
        (base("", "friction = 0.5\nfriction_updates = 0\n"), "contact.friction_updates"),
        (
            base(
                "[[obstacles]]\nshape = { plane = { point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] } }\nstiffness = 1e5\n",
                "",
            ),
            "obstacles[0].stiffness",
        ),
        (
            base("[[obstacles]]\nshape = { sphere = { center = [0.0, 0.0, -1.0], radius = 0.5 } }\n", ""),
            "obstacles[0].shape",
        ),
        (base("", "stiffness = \"soft\"\n"), "adaptive"),
        (
            base(
                "[[obstacles]]\nshape = { plane = { point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] } }\nmotion = { angular_velocity = [0.0, 0.0, 1.0] }\n",
                "",
            ),
            "obstacles[0].motion",
        ),
        (
            base(
                "[[obstacles]]\nshape = { plane = { point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] } }\nmotion = { keyframes = [{ time = 1.0 }, { time = 0.5 }] }\n",
                "",
            ),
            "obstacles[0].motion.keyframes[1].time",
        ),
        (base("", "stiffness = -1.0\n"), "contact.stiffness"),
    ];
    for (text, expected) in cases {
        let message = refusal(&text);
        assert!(message.contains(expected), "{message}\nshould name {expected}");
    }
    // Without [contact], an obstacle cannot move.
    let text = format!(
        "{}{}[[obstacles]]\nshape = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }} }}\nstiffness = 1e5\nmotion = {{ velocity = [0.0, 0.0, 0.1] }}\n",
        header(0.1, 0.01),
        cube([0.0, 0.0, 0.01], 1e5)
    );
    assert!(refusal(&text).contains("obstacles[0].motion"));
    // Without [contact], an obstacle needs its penalty stiffness.
    let text = format!("{}{}{FLOOR}", header(0.1, 0.01), cube([0.0, 0.0, 0.01], 1e5));
    assert!(refusal(&text).contains("obstacles[0].stiffness"));
}

#[test]
fn without_self_contact_pairs_within_one_body_do_not_count() {
    let dhat = 0.01;
    let (contact, x) = close_cubes(dhat);
    let pairs = contact.report(&x).active_pairs;
    assert!(pairs > 10);
    // Counted as two bodies, every pair is between them; counted as one, none counts.
    for (bodies, expected) in [
        (
            (0..x.len() / 3).map(|v| usize::from(v >= 64)).collect::<Vec<_>>(),
            pairs,
        ),
        (vec![0; x.len() / 3], 0),
    ] {
        let (term, _) = close_cubes(dhat);
        let term = term.without_self_contact(bodies);
        assert_eq!(term.report(&x).active_pairs, expected);
        let mut gradient = vec![0.0; x.len()];
        let energy = term.gradient(&x, 0.0, &mut gradient, true).unwrap();
        assert_eq!(energy > 0.0, expected > 0);
    }
}

#[test]
fn every_integrator_that_takes_contact_lands_a_cube_without_crossing() {
    for (integrator, solver) in [
        ("bdf2", "newton"),
        ("newmark", "newton"),
        ("implicit_midpoint", "newton"),
        ("implicit_midpoint", "lbfgs"),
        ("backward_euler", "lbfgs"),
    ] {
        let text = format!(
            "{}{}{FLOOR}[contact]\n[integrator]\nkind = \"{integrator}\"\n[solver]\nkind = \"{solver}\"\n",
            header(0.2, 0.01),
            cube([0.0, 0.0, 0.02], 1e5)
        );
        let (built, states) = run_checked(&text, 20);
        // It fell 2 cm and landed: the floor stopped it within d̂ (Newmark's
        // trapezoidal rule keeps the energy, so it bounces back up after).
        let closest = states
            .iter()
            .map(|s| lowest(&s.positions, 0..64))
            .fold(f64::INFINITY, f64::min);
        let dhat = built.model.barrier_contact().unwrap().activation_distance();
        assert!(
            closest > 0.0 && closest < dhat,
            "{integrator} with {solver}: the lowest vertex came to {closest} m (d̂ = {dhat})"
        );
    }
}

#[test]
fn a_cube_lands_on_a_mesh_obstacle_read_from_a_file_without_crossing_it() {
    // An open surface: a 1 m square of two triangles at z = 0, as an OBJ file.
    let folder = std::env::temp_dir().join(format!("hooke-mesh-obstacle-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("floor.obj"),
        "v -0.5 -0.5 0\nv 0.7 -0.5 0\nv 0.7 0.7 0\nv -0.5 0.7 0\nf 1 2 3\nf 1 3 4\n",
    )
    .unwrap();
    let text = format!(
        "{}{}[[obstacles]]\nshape = {{ mesh = {{ file = \"floor.obj\" }} }}\n[contact]\ndistance = 1e-3\n",
        header(0.3, 0.01),
        cube([0.0, 0.0, 0.02], 1e5)
    );
    let mut built = Scene::from_text(&text, "<test>", folder.clone())
        .unwrap()
        .build()
        .unwrap();
    let contact = built.model.barrier_contact().unwrap();
    let surface = contact.surface().clone();
    let mut state = built.initial_state.clone();
    for step in 1..=30 {
        built.integrator.step(&built.model, &mut state, 0.01).expect("a step");
        let x = built
            .model
            .barrier_contact()
            .unwrap()
            .with_fixed_positions(&state.positions);
        assert!(intersection::first_crossing(&surface, &x).is_none(), "step {step}");
    }
    // It fell 2 cm onto the square and rests on it within d̂ (the square has no inside:
    // only the barrier holds it).
    let low = lowest(&state.positions, 0..64);
    assert!(low > 0.0 && low < 1e-3, "{low}");
    let lifted: f64 = built
        .model
        .barrier_contact()
        .unwrap()
        .forces(&state.positions)
        .chunks(3)
        .map(|f| f[2])
        .sum();
    assert!(lifted > 0.5 * 8.0 * 9.81, "{lifted} N");
    // Without [contact] a mesh obstacle is refused; a missing file is named.
    let no_contact = format!(
        "{}{}[[obstacles]]\nshape = {{ mesh = {{ file = \"floor.obj\" }} }}\n",
        header(0.3, 0.01),
        cube([0.0, 0.0, 0.02], 1e5)
    );
    let error = Scene::from_text(&no_contact, "<test>", folder.clone())
        .and_then(|s| s.build())
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("obstacles[0].shape") && error.contains("[contact]"),
        "{error}"
    );
    let missing = text.replace("floor.obj", "nowhere.obj");
    let error = Scene::from_text(&missing, "<test>", folder.clone())
        .and_then(|s| s.build())
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("obstacles[0].shape.mesh.file") && error.contains("nowhere.obj"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn the_contact_scenes_build_and_take_their_first_steps_without_crossing() {
    let scenes = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes");
    for name in [
        "contact_stacked_cubes.toml",
        "contact_bowl_pile.toml",
        "contact_ramp_friction.toml",
        "contact_cloth_drape.toml",
        "contact_rope_coil.toml",
        "contact_twisted_rod.toml",
    ] {
        let scene = Scene::from_file(&scenes.join(name)).expect("parses");
        let dt = scene.file.simulation.time_step;
        let mut built = scene.build().unwrap_or_else(|e| panic!("{name}: {e}"));
        let contact = built.model.barrier_contact().expect("contact");
        let surface = contact.surface().clone();
        let mut state = built.initial_state.clone();
        for step in 1..=3 {
            built.integrator.step(&built.model, &mut state, dt).expect("a step");
            let x = built
                .model
                .barrier_contact()
                .unwrap()
                .with_fixed_positions(&state.positions);
            assert!(
                intersection::first_crossing(&surface, &x).is_none(),
                "{name}, step {step}"
            );
        }
    }
}

#[test]
fn a_bounce_on_the_barrier_keeps_the_energy_under_newmark_and_loses_it_under_backward_euler() {
    // A fixed κ makes the barrier a potential: Newmark's trapezoidal rule
    // (β = 1/4, γ = 1/2) keeps kinetic + elastic + gravitational + contact
    // energy through the bounce, backward Euler dissipates it. Measured at
    // h = 0.5 ms, which resolves the stiff contact: Newmark 0.3% of the
    // fall's energy, backward Euler −30% (at h = 2 ms Newmark's error on the
    // barrier is 3.9%).
    let energy_drift = |integrator: &str| {
        let text = format!(
            "{}{}{FLOOR}[contact]\ndistance = 2e-3\nstiffness = 1e9\n[integrator]\nkind = \"{integrator}\"\n[solver]\ntolerance = 1e-10\n",
            header(0.1, 0.0005),
            cube([0.0, 0.0, 0.01], 1e5)
        );
        let (built, states) = run_checked(&text, 200);
        let total = |s: &hooke::model::State| total_energy(&built.model, s);
        let start = total(&built.initial_state);
        // It has landed and come back up: the contact acted.
        let touched = states
            .iter()
            .any(|s| built.model.barrier_contact().unwrap().report(&s.positions).active_pairs > 0);
        assert!(touched, "{integrator}: no contact");
        let fall = 8.0 * 9.81 * 0.01;
        states
            .iter()
            .map(|s| (total(s) - start) / fall)
            .fold(0.0f64, |m, d| if d.abs() > m.abs() { d } else { m })
    };
    let newmark = energy_drift("newmark");
    let midpoint = energy_drift("implicit_midpoint");
    let backward = energy_drift("backward_euler");
    eprintln!("largest change of the total over the fall energy: Newmark {newmark:.2e}, implicit midpoint {midpoint:.2e}, backward Euler {backward:.2e}");
    assert!(
        midpoint.abs() < 0.01,
        "implicit midpoint: the total moved by {midpoint} of the fall's energy"
    );
    assert!(
        newmark.abs() < 0.01,
        "Newmark: the total moved by {newmark} of the fall's energy"
    );
    assert!(backward < -0.05, "backward Euler: {backward}");
}

#[test]
fn a_ball_dropped_on_the_floor_keeps_its_energy_under_implicit_midpoint_and_its_momentum_along_the_floor() {
    // Li et al. 2020's barrier with a fixed κ is a potential, and implicit
    // midpoint feels it at the step's end with the trapezoidal impulse
    // (integrate/implicit_midpoint.rs): kinetic + elastic + gravitational +
    // contact energy stays within 1% of the fall's energy through the bounce,
    // while backward Euler loses it. With no friction, the floor pushes only
    // along z: the momentum along the floor stays what it was.
    let run = |integrator: &str| {
        let text = format!(
            r#"{}
[[bodies]]
mesh = {{ solid = {{ shape = {{ ball = {{ center = [0.0, 0.0, 0.06], radius = 0.05 }} }}, edge_length = 0.02 }} }}
material = {{ model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.4, density = 1000.0 }}
velocity = [0.3, 0.1, 0.0]
{FLOOR}[contact]
distance = 2e-3
stiffness = 1e9
[integrator]
kind = "{integrator}"
[solver]
tolerance = 1e-10
"#,
            header(0.1, 0.0005)
        );
        let (built, states) = run_checked(&text, 200);
        let model = &built.model;
        let total = |s: &hooke::model::State| total_energy(model, s);
        let start = &built.initial_state;
        let mass: f64 = model.mass().lumped().iter().sum::<f64>();
        let (momentum, _) = model.momentum(&start.positions, &start.velocities);
        let contact = model.barrier_contact().unwrap();
        let touched = states.iter().any(|s| contact.report(&s.positions).active_pairs > 0);
        assert!(touched, "{integrator}: the ball never reached the floor");
        let last = states.last().unwrap();
        let (rising, _) = model.momentum(&last.positions, &last.velocities);
        assert!(
            rising.z > 0.0,
            "{integrator}: not bouncing back up at the end ({rising:?})"
        );
        for s in &states {
            let (now, _) = model.momentum(&s.positions, &s.velocities);
            let along = (now.xy() - momentum.xy()).norm();
            assert!(
                along < 1e-8 * mass,
                "{integrator}, t = {}: the momentum along the floor moved by {along} kg m/s",
                s.time
            );
        }
        let fall = mass * 9.81 * 0.01 + 0.5 * mass * 0.1;
        let initial = total(start);
        states
            .iter()
            .map(|s| (total(s) - initial) / fall)
            .fold(0.0f64, |m, d| if d.abs() > m.abs() { d } else { m })
    };
    let midpoint = run("implicit_midpoint");
    let backward = run("backward_euler");
    eprintln!("largest change of the total over the energy at impact: implicit midpoint {midpoint:.2e}, backward Euler {backward:.2e}");
    assert!(
        midpoint.abs() < 0.01,
        "implicit midpoint: the total moved by {midpoint} of the energy at impact"
    );
    assert!(backward < -0.05, "backward Euler: {backward}");
}

/// The cube's mean velocity along x (momentum over mass) after each step, on
/// the floor z = 0 under gravity tilted by `angle` toward +x: the same as a
/// block on an incline of that angle, with the plane's normal along z.
/// Implicit midpoint's objective in u with barrier and friction felt at the
/// step's end y = 2u − q (weights ¼ and ½): its gradient and Hessian (with
/// the pairs' blocks) against central differences, sliding and in friction's
/// smoothed static range, and its step bound and gap taken along y.
#[test]
fn contact_felt_at_the_steps_end_has_consistent_derivatives_and_bounds_the_end() {
    // Two cubes 3 cm apart, 3 cm over the floor; both moved 2 cm down, and
    // the upper one 2 cm more and 5 cm along x: every surface within d̂ = 2 cm
    // of another is 1 cm away.
    let text = format!(
        "{}{}{}{FLOOR}[contact]\ndistance = 0.02\nstiffness = 1e3\nfriction = 0.5\n",
        header(0.01, 0.01),
        cube([0.0, 0.0, 0.03], 1e5),
        cube([0.0, 0.0, 0.26], 1e5)
    );
    let built = scene(&text).build().expect("builds");
    let model = &built.model;
    let mut q = model.rest_positions();
    for (v, p) in q.chunks_mut(3).enumerate() {
        p[2] -= 0.02;
        if v >= 64 {
            p[0] += 0.05;
            p[2] -= 0.02;
        }
    }
    let h = 0.01;
    let state = State {
        time: 0.0,
        positions: q.clone(),
        velocities: vec![0.0; q.len()],
    };
    model.begin_step(&state, h).expect("the lag");
    let dofs = model.dof_map(h);
    let objective = IncrementalPotential {
        model,
        coordinates: Coordinates::Free {
            dofs: &dofs,
            restriction: model.restriction(&dofs),
        },
        base: q.clone(),
        inertia: Some(Inertia {
            weight: 4.0 / (h * h),
            predicted: q.iter().enumerate().map(|(i, x)| x + 1e-4 * (i % 3) as f64).collect(),
        }),
        damping: None,
        time: 0.5 * h,
        extra_force: None,
        viscoelastic: None,
        contact_at_end: Some(ContactAtEnd {
            scale: 2.0,
            offset: q.iter().map(|x| -x).collect(),
            barrier_weight: 0.25,
            friction_weight: 0.5,
        }),
        project_hessian: false,
        step_length: Some(0.5 * h),
    };
    let contact = model.barrier_contact().unwrap();
    // Slips of 2 mm (sliding) and 4 µm (below ε_v h = 10 µm: static).
    for (size, step) in [(1e-3, 1e-7), (2e-6, 1e-10)] {
        let u: Vec<f64> = q
            .iter()
            .enumerate()
            .map(|(i, x)| x + size * ((1.3 * i as f64).sin() + if i % 3 == 2 { 0.0 } else { 0.5 }))
            .collect();
        let y = objective.contact_positions(&u);
        assert!(y
            .iter()
            .zip(&u)
            .zip(&q)
            .all(|((y, u), q)| (y - (2.0 * u - q)).abs() < 1e-15));
        let report = contact.report(&y);
        assert!(report.active_pairs > 40, "{report:?}");
        assert!(model.energy_of(TermGroup::Friction, &y, 0.0) > 0.0, "friction acts");
        assert_eq!(objective.contact_gap(&u), Some(0.5 * report.smallest_distance));
        let n = objective.size();
        let mut gradient = vec![0.0; n];
        let mut hessian = objective.hessian_matrix();
        objective.hessian(&u, &mut gradient, &mut hessian).unwrap();
        let dense = hessian.to_dense();
        let g_scale = gradient.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        for k in 0..3 {
            let d: Vec<f64> = (0..n).map(|i| ((i * (k + 2)) as f64 * 0.37).cos()).collect();
            let shifted = |by: f64| -> Vec<f64> { u.iter().zip(&d).map(|(a, b)| a + by * b).collect() };
            let (plus, minus) = (shifted(step), shifted(-step));
            if size > 1e-4 {
                let slope: f64 = gradient.iter().zip(&d).map(|(g, d)| g * d).sum();
                let numeric = (objective.value(&plus) - objective.value(&minus)) / (2.0 * step);
                assert!(
                    (numeric - slope).abs() < 1e-5 * g_scale * n as f64,
                    "slip {size}: slope {slope} against {numeric}"
                );
            }
            let (mut g_plus, mut g_minus) = (vec![0.0; n], vec![0.0; n]);
            objective.gradient(&plus, &mut g_plus).unwrap();
            objective.gradient(&minus, &mut g_minus).unwrap();
            let numeric: Vec<f64> = g_plus
                .iter()
                .zip(&g_minus)
                .map(|(a, b)| (a - b) / (2.0 * step))
                .collect();
            let exact = &dense * nalgebra::DVector::from_column_slice(&d);
            let error = numeric
                .iter()
                .zip(exact.iter())
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(
                error < 1e-5 * exact.amax(),
                "slip {size}, direction {k}: H d off by {error} of {}",
                exact.amax()
            );
        }
        // Pushing the upper cube down: the end moves twice as far as u, so the bound is the end's.
        let mut down = vec![0.0; q.len()];
        for v in 64..128 {
            down[3 * v + 2] = -0.02;
        }
        let direction = dofs.gather(&down);
        let twice: Vec<f64> = down.iter().map(|d| 2.0 * d).collect();
        let bound = objective.feasible_step(&u, &direction).unwrap();
        assert_eq!(bound, model.feasible_step(&y, &twice).unwrap());
        assert!(bound < 1.0 && bound < model.feasible_step(&u, &down).unwrap());
    }
}

/// `tail` is more of the scene (an integrator, damping).
fn slide(angle_degrees: f64, mu: f64, steps: usize, dt: f64, tail: &str) -> (Vec<f64>, f64, [f64; 2]) {
    let angle = angle_degrees.to_radians();
    let g = 9.81;
    let text = format!(
        "gravity = [{}, 0.0, {}]\n[simulation]\nduration = {}\ntime_step = {dt}\n{}{FLOOR}[contact]\nfriction = {mu}\n{tail}",
        g * angle.sin(),
        -g * angle.cos(),
        steps as f64 * dt,
        cube([0.0, 0.0, 0.002], 1e6)
    );
    let (built, states) = run_checked(&text, steps);
    let mass: f64 = built.model.mass().lumped().iter().sum();
    let speeds = states
        .iter()
        .map(|s| built.model.momentum(&s.positions, &s.velocities).0.x / mass)
        .collect();
    // The floor's push on the block at the end.
    let x = &states.last().unwrap().positions;
    (speeds, g, floor_push(&built.model, x))
}

#[test]
fn a_block_on_an_incline_slides_with_the_coulomb_acceleration_when_tan_theta_exceeds_mu() {
    let (angle, mu, dt) = (30.0f64, 0.3, 0.005);
    let (speeds, g, [friction, normal]) = slide(angle, mu, 60, dt, "");
    // After landing (about 20 ms), the velocity grows at a constant rate:
    // measured over 0.1–0.3 s.
    let measured = (speeds[59] - speeds[19]) / (40.0 * dt);
    let theta = angle.to_radians();
    let expected = g * (theta.sin() - mu * theta.cos());
    assert!(
        (measured - expected).abs() < 0.02 * expected,
        "a = {measured} m/s² against g (sin θ − μ cos θ) = {expected} m/s²"
    );
    // Sliding: friction is μ times the normal force, against the motion.
    let weight = 8.0 * g;
    assert!(
        (normal - weight * theta.cos()).abs() < 0.01 * weight,
        "normal {normal} N"
    );
    assert!(
        (friction + mu * normal).abs() < 0.01 * mu * normal,
        "friction {friction} N"
    );
}

#[test]
fn a_block_on_an_incline_sticks_when_tan_theta_is_below_mu() {
    let (angle, mu, dt) = (20.0f64, 0.5, 0.005);
    let (speeds, g, [friction, normal]) = slide(angle, mu, 60, dt, "");
    // Static friction up to the smoothing: once the landing's rocking has
    // died out the block creeps at a constant speed below ε_v (1 mm/s by
    // default), where f₁(v/ε_v) = tan θ / μ, that is v = ε_v (1 − √(1 − tan θ/μ));
    // without friction it would slide at 3.4 m/s² and reach 1 m/s.
    let ratio = angle.to_radians().tan() / mu;
    let creep = 1e-3 * (1.0 - (1.0 - ratio).sqrt());
    assert!(speeds.iter().skip(19).all(|v| v.abs() < 1e-3), "{speeds:?}");
    let settled = speeds[50..].iter().sum::<f64>() / 10.0;
    assert!(
        (settled - creep).abs() < 0.05 * creep,
        "the block creeps at {settled} m/s over 0.25–0.3 s, against {creep} m/s"
    );
    // Held: friction balances the weight's pull along the slope, below μ N.
    let (theta, weight) = (angle.to_radians(), 8.0 * g);
    assert!(
        (normal - weight * theta.cos()).abs() < 0.01 * weight,
        "normal {normal} N"
    );
    assert!(
        (friction + weight * theta.sin()).abs() < 0.01 * weight * theta.sin(),
        "friction {friction} N against the pull {} N",
        weight * theta.sin()
    );
}

#[test]
fn friction_under_implicit_midpoint_slides_with_the_coulomb_acceleration_and_holds_below_it() {
    // Implicit midpoint keeps the landing's rocking (it has no numerical
    // damping), and a lagged friction whose pairs come and go with it grips
    // less; light stiffness damping (β = 2 ms) lets the block settle onto the
    // incline as backward Euler's own damping does.
    let tail = "[integrator]\nkind = \"implicit_midpoint\"\n[damping]\nstiffness_coefficient = 0.002\n";
    let (weight, dt) = (8.0 * 9.81, 0.005);
    // Sliding at 30° with μ = 0.3: a = g (sin θ − μ cos θ) within 2%, friction μ N.
    let (speeds, g, [friction, normal]) = slide(30.0, 0.3, 60, dt, tail);
    let theta = 30.0f64.to_radians();
    let measured = (speeds[59] - speeds[19]) / (40.0 * dt);
    let expected = g * (theta.sin() - 0.3 * theta.cos());
    assert!(
        (measured - expected).abs() < 0.02 * expected,
        "a = {measured} m/s² against g (sin θ − μ cos θ) = {expected} m/s²"
    );
    assert!(
        (normal - weight * theta.cos()).abs() < 0.01 * weight,
        "normal {normal} N"
    );
    assert!(
        (friction + 0.3 * normal).abs() < 0.02 * 0.3 * normal,
        "friction {friction} N"
    );
    // Held at 20° with μ = 0.5: it rocks in place at a few mm/s and does not
    // slide (without friction it would reach 1 m/s); friction carries the pull.
    let (speeds, _, [friction, normal]) = slide(20.0, 0.5, 60, dt, tail);
    let theta = 20.0f64.to_radians();
    assert!(speeds.iter().skip(25).all(|v| v.abs() < 1e-2), "{speeds:?}");
    let drift = speeds[25..].iter().sum::<f64>() * dt;
    assert!(drift.abs() < 1e-4, "it slid {drift} m over 0.125–0.3 s");
    assert!(
        (normal - weight * theta.cos()).abs() < 0.01 * weight,
        "normal {normal} N"
    );
    assert!(
        (friction + weight * theta.sin()).abs() < 0.05 * weight * theta.sin(),
        "friction {friction} N against the pull {} N",
        weight * theta.sin()
    );
}

#[test]
fn friction_updates_give_friction_to_a_pair_that_closes_during_the_step() {
    // A cube 2 mm over the floor (d̂ = 0.35 mm) moving at 1 m/s along x and
    // 0.5 m/s down lands within the first 10 ms step. Friction lagged at the
    // step's start has no pair to act on; taken again where the solve ended,
    // it slows the cube by μ times the floor's push (measured: 1 → 0.82 m/s,
    // friction within 0.4% of μ N after 2 updates and 0.1% after 4).
    let first_step = |updates: usize| {
        let text = format!(
            "{}[[bodies]]\nmesh = {{ box = {{ size = [0.2, 0.2, 0.2], cells = [3, 3, 3], origin = [0.0, 0.0, 0.002] }} }}\nmaterial = {{ model = \"stable_neo_hookean\", youngs_modulus = 1e6, poisson_ratio = 0.4, density = 1000.0 }}\nvelocity = [1.0, 0.0, -0.5]\n{FLOOR}[contact]\nfriction = 0.5\nfriction_updates = {updates}\n",
            header(0.01, 0.01)
        );
        let (built, states) = run_checked(&text, 1);
        let model = &built.model;
        let end = &states[0];
        let mass: f64 = model.mass().lumped().iter().sum::<f64>();
        let speed = model.momentum(&end.positions, &end.velocities).0.x / mass;
        let x = &end.positions;
        let [friction, normal] = floor_push(model, x);
        (speed, friction, normal)
    };
    let (once, friction, normal) = first_step(1);
    assert!(normal > 10.0, "the cube landed: the floor pushes with {normal} N");
    assert!(
        (once - 1.0).abs() < 1e-12 && friction == 0.0,
        "lagged at the start, no friction acts: {once} m/s, {friction} N"
    );
    let mut previous = f64::INFINITY;
    for updates in [2, 4] {
        let (speed, friction, normal) = first_step(updates);
        eprintln!("{updates} updates: speed {speed} m/s, friction {friction} N, normal {normal} N");
        assert!(speed < 0.99 && speed < previous, "{updates} updates: {speed} m/s");
        previous = speed;
        // Sliding: friction is μ times the normal force at the lag, which
        // the last update took near where the step ended.
        assert!(
            (friction + 0.5 * normal).abs() < 0.02 * 0.5 * normal,
            "{updates} updates: friction {friction} N, normal {normal} N"
        );
    }
}

#[test]
fn a_bodys_rotate_turns_it_about_its_centroid_before_translate() {
    // A 0.4 × 0.2 × 0.2 box turned a quarter turn about z, then moved.
    let text = format!(
        "{}[[bodies]]\nmesh = {{ box = {{ size = [0.4, 0.2, 0.2], cells = [2, 1, 1] }} }}\nrotate = [0.0, 0.0, {}]\ntranslate = [1.0, 2.0, 3.0]\nmaterial = {{ model = \"neo_hookean\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }}\n",
        header(0.01, 0.01),
        std::f64::consts::FRAC_PI_2
    );
    let built = scene(&text).build().expect("builds");
    let x = built.model.rest_positions();
    let along = |k: usize| {
        let values: Vec<f64> = x.chunks(3).map(|p| p[k]).collect();
        let (lo, hi) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
        (hi - lo, (hi + lo) / 2.0)
    };
    let (extent_x, centre_x) = along(0);
    let (extent_y, centre_y) = along(1);
    assert!(
        (extent_x - 0.2).abs() < 1e-12 && (extent_y - 0.4).abs() < 1e-12,
        "{extent_x} × {extent_y}"
    );
    // The box's centroid (0.2, 0.1, 0.1) stays put under the turn, then moves by translate.
    assert!(
        (centre_x - 1.2).abs() < 1e-12 && (centre_y - 2.1).abs() < 1e-12,
        "({centre_x}, {centre_y})"
    );
}

/// An OBJ box from `lo` to `hi` (8 vertices, 12 outward triangles).
fn box_obj(lo: [f64; 3], hi: [f64; 3]) -> String {
    let mut text = String::new();
    for k in 0..8 {
        let corner = [0, 1, 2].map(|a| if k >> a & 1 == 1 { hi[a] } else { lo[a] });
        text += &format!("v {} {} {}\n", corner[0], corner[1], corner[2]);
    }
    for face in [
        [1, 3, 4, 2],
        [5, 6, 8, 7],
        [1, 2, 6, 5],
        [3, 7, 8, 4],
        [1, 5, 7, 3],
        [2, 4, 8, 6],
    ] {
        text += &format!(
            "f {} {} {}\nf {} {} {}\n",
            face[0], face[1], face[2], face[0], face[2], face[3]
        );
    }
    text
}

/// Two fingers (mesh boxes beside the cube's ±x faces, 3 mm away) close
/// 9 mm each over 0.3 s, hold, and rise 10 cm from 0.4 to 0.8 s.
fn gripper(mu: f64) -> String {
    let key = |side: f64| {
        format!(
            "motion = {{ keyframes = [{{ time = 0.0 }}, {{ time = 0.3, translation = [{c}, 0.0, 0.0] }}, {{ time = 0.4, translation = [{c}, 0.0, 0.0] }}, {{ time = 0.8, translation = [{c}, 0.0, 0.1] }}] }}\n",
            c = side * 0.009
        )
    };
    format!(
        "{}{}{FLOOR}[[obstacles]]\nshape = {{ mesh = {{ file = \"left.obj\" }} }}\n{}[[obstacles]]\nshape = {{ mesh = {{ file = \"right.obj\" }} }}\n{}[contact]\ndistance = 1e-3\nfriction = {mu}\n",
        header(1.0, 0.01),
        cube([0.0, 0.0, 0.002], 2e5),
        key(1.0),
        key(-1.0),
    )
}

fn gripper_folder() -> PathBuf {
    let folder = std::env::temp_dir().join(format!("hooke-gripper-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("left.obj"),
        box_obj([-0.05, -0.05, 0.03], [-0.003, 0.25, 0.17]),
    )
    .unwrap();
    std::fs::write(
        folder.join("right.obj"),
        box_obj([0.203, -0.05, 0.03], [0.25, 0.25, 0.17]),
    )
    .unwrap();
    folder
}

/// Runs the gripper for `steps` steps, checking each for crossings; the
/// cube's lowest height at the end.
fn run_gripper(mu: f64, steps: usize) -> f64 {
    let folder = gripper_folder();
    let mut built = Scene::from_text(&gripper(mu), "<test>", folder)
        .unwrap()
        .build()
        .unwrap();
    let surface = built.model.barrier_contact().unwrap().surface().clone();
    let mut state = built.initial_state.clone();
    for step in 1..=steps {
        built.integrator.step(&built.model, &mut state, 0.01).expect("a step");
        let contact = built.model.barrier_contact().unwrap();
        let x = contact.with_fixed_positions(&state.positions);
        assert!(intersection::first_crossing(&surface, &x).is_none(), "step {step}");
        // The fingers are where their keyframes have them at the step's end.
        let left_x = contact.fixed_positions()[0];
        let expected = -0.05 + 0.009 * (state.time / 0.3).min(1.0);
        assert!(
            (left_x - expected).abs() < 1e-9,
            "step {step}: finger at {left_x}, not {expected}"
        );
    }
    lowest(&state.positions, 0..64)
}

#[test]
fn a_two_finger_gripper_squeezes_and_lifts_a_soft_cube_by_friction() {
    // With μ = 0.5 the squeeze (6 mm into a 20 cm cube of 200 kPa) holds the
    // 78 N weight: the cube rises with the fingers (10 cm by 0.8 s).
    let lifted = run_gripper(0.5, 100);
    assert!(lifted > 0.08, "the cube's bottom is {lifted} m above the floor");
}

/// At a loose tolerance Newton used to accept steps that closed most of the
/// fingers' gap to the cube; in the gripper scene the gaps shrank fivefold a
/// stage while the fingers closed, reached zero, and step 13 failed with no
/// admissible step. A converged step must now be small against the closest
/// gap (GAP_FRACTION), and the squeeze goes through.
#[test]
fn at_a_loose_tolerance_the_gripper_scene_closes_without_exhausting_the_gap() {
    let scenes = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenes");
    let text = std::fs::read_to_string(scenes.join("contact_gripper.toml")).unwrap() + "\n[solver]\ntolerance = 1e-4\n";
    let mut built = Scene::from_text(&text, "contact_gripper.toml", scenes)
        .unwrap()
        .build()
        .unwrap();
    let surface = built.model.barrier_contact().unwrap().surface().clone();
    let mut state = built.initial_state.clone();
    for step in 1..=20 {
        built
            .integrator
            .step(&built.model, &mut state, 0.01)
            .unwrap_or_else(|e| panic!("step {step}: {e}"));
        let contact = built.model.barrier_contact().unwrap();
        let x = contact.with_fixed_positions(&state.positions);
        assert!(intersection::first_crossing(&surface, &x).is_none(), "step {step}");
        let closest = contact.report(&state.positions).smallest_distance;
        assert!(closest > 1e-6, "step {step}: the closest pair is {closest} m apart");
    }
}

#[test]
fn without_friction_the_gripper_squeezes_but_the_cube_stays_on_the_floor() {
    let lifted = run_gripper(0.0, 80);
    assert!(lifted < 2e-3, "the cube's bottom is {lifted} m above the floor");
}

#[test]
fn a_descending_plate_presses_a_cube_into_the_floor_without_crossing_and_keeps_its_schedule() {
    // A plate 5 mm above the cube comes down at 5 cm/s for 0.3 s: it ends
    // 10 mm into where the cube's top was, so the cube is squeezed by 5%.
    // Implicit midpoint moves the plate against the step's end, where it feels contact.
    for integrator in ["backward_euler", "implicit_midpoint"] {
        let text = format!(
            "{}{}{FLOOR}[[obstacles]]\nshape = {{ plane = {{ point = [0.0, 0.0, 0.206], normal = [0.0, 0.0, -1.0] }} }}\nmotion = {{ velocity = [0.0, 0.0, -0.05] }}\n[contact]\ndistance = 5e-4\n[integrator]\nkind = \"{integrator}\"\n",
            header(0.3, 0.01),
            cube([0.0, 0.0, 0.001], 1e5)
        );
        let (built, states) = run_checked(&text, 30);
        let contact = built.model.barrier_contact().unwrap();
        let plate = contact.planes()[1];
        assert!(
            (plate.point.z - (0.206 - 0.05 * 0.3)).abs() < 1e-12,
            "{integrator}: {}",
            plate.point.z
        );
        let x = &states.last().unwrap().positions;
        let (top, bottom) = (highest(x, 0..64), lowest(x, 0..64));
        assert!(
            top < plate.point.z && bottom > 0.0,
            "{integrator}: {bottom}..{top} under {}",
            plate.point.z
        );
        assert!(top - bottom < 0.195, "{integrator}: squeezed to {}", top - bottom);
    }
}

#[test]
fn a_runs_summary_keeps_its_closest_approach_and_its_most_pairs() {
    let text = format!("{}{}{FLOOR}[contact]\n", header(0.2, 0.01), cube([0.0, 0.0, 0.01], 1e5));
    let scene = scene(&text);
    let mut built = scene.build().unwrap();
    let output = std::env::temp_dir().join(format!("hooke-contact-summary-{}", std::process::id()));
    let settings = scene.run_settings(Some(&output));
    let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap()
        .into_result()
        .unwrap();
    let statistics = &outcome.summary.statistics;
    // The rows of energies.csv hold the same figures step by step.
    let rows = std::fs::read_to_string(output.join("energies.csv")).unwrap();
    let (mut closest, mut most) = (f64::INFINITY, 0usize);
    for row in rows.lines().skip(2) {
        let fields: Vec<&str> = row.split(',').collect();
        closest = closest.min(fields[fields.len() - 2].parse().unwrap());
        most = most.max(fields[fields.len() - 1].parse::<f64>().unwrap() as usize);
    }
    assert_eq!(statistics.contact_closest_approach, Some(closest));
    assert_eq!(statistics.contact_most_pairs, most);
    assert!(closest > 0.0 && closest < 1e-3 && most >= 16, "{closest} {most}");
    std::fs::remove_dir_all(&output).ok();
}

#[test]
fn a_floor_sliding_sideways_carries_a_cube_along_by_friction() {
    // A conveyor: the floor plane moves along itself at 0.2 m/s. Friction
    // (μ = 0.5) accelerates the resting cube at up to μ g = 4.9 m/s², so it
    // moves with the floor after about 0.04 s.
    let text = format!(
        "{}{}[[obstacles]]\nshape = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }} }}\nmotion = {{ velocity = [0.2, 0.0, 0.0] }}\n[contact]\nfriction = 0.5\n",
        header(0.3, 0.01),
        cube([0.0, 0.0, 0.002], 1e6)
    );
    let (built, states) = run_checked(&text, 30);
    let mass: f64 = built.model.mass().lumped().iter().sum();
    let last = states.last().unwrap();
    let speed = built.model.momentum(&last.positions, &last.velocities).0.x / mass;
    assert!(
        (speed - 0.2).abs() < 2e-3,
        "the cube moves at {speed} m/s with a floor at 0.2 m/s"
    );
    // Without friction the floor slides under it and it stays put.
    let frictionless = text.replace("friction = 0.5", "friction = 0.0");
    let (built, states) = run_checked(&frictionless, 30);
    let last = states.last().unwrap();
    let speed = built.model.momentum(&last.positions, &last.velocities).0.x / mass;
    assert!(speed.abs() < 1e-6, "{speed}");
}

/// The distance between segments pq and rs by the clamped closed form of
/// Ericson's "Real-Time Collision Detection" (§5.1.9): an independent check
/// of the barrier's own edge–edge distances.
fn segment_distance(p: [f64; 3], q: [f64; 3], r: [f64; 3], s: [f64; 3]) -> f64 {
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (d1, d2, w) = (sub(q, p), sub(s, r), sub(p, r));
    let (a, e, f) = (dot(d1, d1), dot(d2, d2), dot(d2, w));
    let (c, b) = (dot(d1, w), dot(d1, d2));
    let denominator = a * e - b * b;
    let mut u = if denominator > 1e-300 {
        ((b * f - c * e) / denominator).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * u + f) / e;
    if t < 0.0 {
        t = 0.0;
        u = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        u = ((b - c) / a).clamp(0.0, 1.0);
    }
    let gap = [0, 1, 2].map(|i| p[i] + d1[i] * u - r[i] - d2[i] * t);
    dot(gap, gap).sqrt()
}

fn point(x: &[f64], v: usize) -> [f64; 3] {
    [x[3 * v], x[3 * v + 1], x[3 * v + 2]]
}

/// A cloth of `cells` × `cells` squares, 0.36 m wide, 3 cm above a cube.
fn cloth_over_cube(cells: usize) -> String {
    format!(
        r#"{}{}
[[networks]]
shape = {{ cloth = {{ origin = [-0.08, -0.08, 0.23], size = [0.36, 0.36], cells = [{cells}, {cells}] }} }}
stiffness = 1000.0
shear_stiffness = 100.0
bend_stiffness = 1.0
density = 0.2
{FLOOR}
[contact]
distance = 0.002
"#,
        header(0.3, 0.01),
        cube([0.0, 0.0, 0.005], 1e6)
    )
}

#[test]
fn a_cloth_drapes_over_a_cube_without_crossing_it_or_itself() {
    let cells = 12;
    let text = cloth_over_cube(cells);
    let (built, states) = run_checked(&text, 30);
    let contact = built.model.barrier_contact().unwrap();
    // The cloth's triangles, edges and vertices are on the contact surface
    // beside the cube's boundary (3 × 3 × 3 cells: 108 triangles, 56 of its
    // 64 vertices).
    let surface = contact.surface();
    assert_eq!(surface.faces.len(), 108 + 2 * cells * cells);
    assert_eq!(surface.vertices.len(), 56 + (cells + 1) * (cells + 1));
    // run_checked found no edge through a triangle at any step, cloth or cube.
    let mut failures = Vec::new();
    let x = &states.last().unwrap().positions;
    let top = highest(x, 0..64);
    let dhat = contact.activation_distance();
    // The cloth's middle lies on the cube's top, within d̂ and above it.
    let middle = 64 + (cells / 2) * (cells + 1) + cells / 2;
    let gap = x[3 * middle + 2] - top;
    if !(gap > 0.0 && gap < 2.0 * dhat) {
        failures.push(format!(
            "the cloth's middle is {gap} m above the cube's top (d̂ = {dhat})"
        ));
    }
    // Its corners hang over the sides, below the top.
    let corner = 64;
    if x[3 * corner + 2] > top - 0.02 {
        failures.push(format!("the corner is at {} m, the top at {top} m", x[3 * corner + 2]));
    }
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn a_coiled_rope_falls_in_a_pile_on_the_floor_and_never_passes_through_itself() {
    let text = format!(
        r#"{}
[[networks]]
shape = {{ helix = {{ center = [0.0, 0.0, 0.03], radius = 0.05, pitch = 0.012, turns = 3.0, segments = 90 }} }}
stiffness = 500.0
density = 0.05
{FLOOR}
[contact]
distance = 0.002
"#,
        header(0.25, 0.01)
    );
    let (built, states) = run_checked(&text, 25);
    let contact = built.model.barrier_contact().unwrap();
    assert_eq!(contact.surface().edges.len(), 90);
    assert!(contact.surface().faces.is_empty());
    // The coil came down onto the floor and its turns onto each other: at
    // every step, every two segments that share no vertex are apart (an
    // independent distance), and at the end the rope touches the floor.
    let mut closest = f64::INFINITY;
    for state in &states {
        let x = &state.positions;
        for i in 0..90 {
            for j in i + 2..90 {
                let d = segment_distance(point(x, i), point(x, i + 1), point(x, j), point(x, j + 1));
                closest = closest.min(d);
            }
        }
    }
    assert!(closest > 0.0, "two segments met: {closest}");
    let x = &states.last().unwrap().positions;
    let dhat = contact.activation_distance();
    assert!(
        lowest(x, 0..91) < dhat,
        "the rope did not reach the floor: {}",
        lowest(x, 0..91)
    );
    let report = contact.report(x);
    assert!(report.active_pairs > 20, "{report:?}");
}

#[test]
fn a_cloth_through_a_body_at_the_start_is_refused_naming_both() {
    let text = cloth_over_cube(6).replace("0.23]", "0.1]");
    let message = refusal(&text);
    assert!(
        message.contains("networks[0]") && message.contains("bodies[0]") && message.contains("intersect"),
        "{message}"
    );
}

#[test]
fn a_run_writes_its_obstacles_where_they_are_at_each_frame() {
    // The descending plate's scene: the floor stays, the plate comes down at 5 cm/s.
    let text = format!(
        "{}{}{FLOOR}[[obstacles]]\nshape = {{ plane = {{ point = [0.0, 0.0, 0.206], normal = [0.0, 0.0, -1.0] }} }}\nmotion = {{ velocity = [0.0, 0.0, -0.05] }}\n[contact]\ndistance = 5e-4\n",
        header(0.3, 0.01),
        cube([0.0, 0.0, 0.001], 1e5)
    );
    let built = Scene::from_text(&text, "<test>", std::env::temp_dir())
        .unwrap()
        .build()
        .unwrap();
    let folder = std::env::temp_dir().join(format!("hooke-obstacle-frames-{}", std::process::id()));
    let mut series = hooke::output::VtkSeriesWriter::create(&folder, "obstacle").unwrap();
    let mut state = built.initial_state.clone();
    for time in [0.0, 0.2] {
        state.time = time;
        let path = hooke::simulation::write_obstacles(&mut series, &built.model, &state).unwrap();
        let frame = hooke::output::read_frame(&path).unwrap();
        // Two squares of two triangles; corners welded: four points each.
        assert_eq!(
            (frame.mesh.element_count(), frame.positions.len()),
            (4, 8),
            "t = {time}"
        );
        let heights: Vec<f64> = frame.positions.iter().map(|p| p.z).collect();
        let plate = 0.206 - 0.05 * time;
        assert!(
            heights.iter().all(|&z| z.abs() < 1e-12 || (z - plate).abs() < 1e-12),
            "t = {time}: {heights:?}"
        );
        assert_eq!(
            heights.iter().filter(|&&z| (z - plate).abs() < 1e-12).count(),
            4,
            "t = {time}"
        );
        // Four body sizes wide around the body (the cube is 0.2 m: 0.35 m of diagonal).
        let width = frame.positions.iter().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max)
            - frame.positions.iter().map(|p| p.x).fold(f64::INFINITY, f64::min);
        assert!(width > 1.0, "{width}");
    }
    let collection = std::fs::read_to_string(series.finish().unwrap()).unwrap();
    assert!(
        collection.contains("timestep=\"0.2\"") && collection.contains("obstacle_0001.vtu"),
        "{collection}"
    );
    let _ = std::fs::remove_dir_all(&folder);
}
