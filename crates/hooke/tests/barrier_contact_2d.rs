//! 2D barrier contact (Li et al. 2020, "Incremental Potential Contact", by
//! point–edge pairs): the derivatives the Newton steps use on a plane-strain
//! model, the ring squashed between plates with an independent
//! segment-crossing check of every step, a block on an incline with
//! Coulomb friction, and the 2D scenes refused.

use hooke::contact::{intersection, ContactSurface};
use hooke::model::{BarrierContact, BarrierStiffness, EnergyTerm, TermKind};
use hooke::scene::Scene;
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

/// A plane-strain rectangle body.
fn rectangle(origin: [f64; 2], size: [f64; 2], cells: [usize; 2], youngs_modulus: f64) -> String {
    format!(
        r#"
[[bodies]]
mesh = {{ rectangle = {{ size = [{}, {}], cells = [{}, {}], origin = [{}, {}] }} }}
material = {{ model = "stable_neo_hookean", youngs_modulus = {youngs_modulus:e}, poisson_ratio = 0.4, density = 1000.0 }}
"#,
        size[0], size[1], cells[0], cells[1], origin[0], origin[1]
    )
}

fn header(duration: f64, time_step: f64, gravity: [f64; 2]) -> String {
    format!(
        "dimension = 2\ngravity = [{}, {}]\n[simulation]\nduration = {duration}\ntime_step = {time_step}\n",
        gravity[0], gravity[1]
    )
}

const FLOOR: &str = r#"
[[obstacles]]
shape = { plane = { point = [0.0, 0.0], normal = [0.0, 1.0] } }
"#;

/// The dense matrix of blocks of `dimension` coordinates per vertex.
fn dense(blocks: &hooke::linalg::VertexBlocks, n: usize) -> nalgebra::DMatrix<f64> {
    let d = blocks.dimension;
    let mut matrix = nalgebra::DMatrix::<f64>::zeros(n, n);
    let mut offset = 0;
    for b in 0..blocks.len() {
        let vertices = &blocks.vertices[blocks.starts[b]..blocks.starts[b + 1]];
        let k = d * vertices.len();
        for column in 0..k {
            for row in 0..k {
                let (i, j) = (d * vertices[row / d] + row % d, d * vertices[column / d] + column % d);
                matrix[(i, j)] += blocks.values[offset + column * k + row];
            }
        }
        offset += k * k;
    }
    matrix
}

#[test]
fn the_2d_energy_gradient_and_pair_blocks_match_central_differences_in_two_coordinates() {
    let dhat = 0.01;
    let built = scene(&format!(
        "{}{}{}",
        header(0.01, 0.01, [0.0, 0.0]),
        rectangle([0.0, 0.0], [0.2, 0.1], [4, 2], 1e5),
        rectangle([0.03, 0.3], [0.2, 0.1], [4, 2], 1e5)
    ))
    .build()
    .unwrap();
    assert_eq!(built.model.dimension(), 2);
    let mut x = built.initial_state.positions.clone();
    let n = x.len();
    // Turn the upper rectangle by 0.2 rad and lower its corner to 0.4 d̂
    // above the lower one's top: point–edge pairs, both ways.
    let upper = n / 4..n / 2;
    let (c, s) = (0.2f64.cos(), 0.2f64.sin());
    for v in upper.clone() {
        let (px, py) = (x[2 * v] - 0.03, x[2 * v + 1] - 0.3);
        x[2 * v] = 0.13 + c * px - s * py;
        x[2 * v + 1] = 0.1 + 0.4 * dhat + s * px + c * py;
    }
    let low = upper.clone().map(|v| x[2 * v + 1]).fold(f64::INFINITY, f64::min);
    for v in upper {
        x[2 * v + 1] += 0.1 + 0.4 * dhat - low;
    }
    let mesh = built.model.mesh().triangles().unwrap();
    let contact = BarrierContact::new(
        ContactSurface::of_plane_triangles(mesh),
        built.model.rest_positions(),
        Vec::new(),
        dhat,
        BarrierStiffness::Fixed(1e4),
    )
    .unwrap();
    assert!(contact.capabilities().planar);
    let report = contact.report(&x);
    assert!(report.active_pairs >= 2, "{report:?}");
    let mut gradient = vec![0.0; n];
    let energy = contact.gradient(&x, 0.0, &mut gradient, true).unwrap();
    assert!(energy > 0.0 && (energy - contact.energy(&x, 0.0)).abs() < 1e-12 * energy);
    let mut blocks = hooke::linalg::VertexBlocks::new(2);
    contact.add_changing_blocks(&x, 0.0, false, &mut blocks).unwrap();
    let hessian = dense(&blocks, n);
    let h = 1e-7 * dhat;
    let largest = gradient.iter().fold(0.0f64, |m, g| m.max(g.abs()));
    let moved: Vec<usize> = (0..n).filter(|&i| gradient[i].abs() > 1e-3 * largest).collect();
    assert!(moved.len() >= 4, "{moved:?}");
    for &i in &moved {
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
    // The step bound: moving the upper body down by twice the gap stops it short.
    let down: Vec<f64> = (0..n)
        .map(|i| if i >= n / 2 && i % 2 == 1 { -0.8 * dhat } else { 0.0 })
        .collect();
    let bound = contact.feasible_step(&x, &down).unwrap();
    assert!(bound > 0.0 && bound < 0.5, "{bound}");
    // Projected blocks are positive semi-definite.
    let mut projected = hooke::linalg::VertexBlocks::new(2);
    contact.add_changing_blocks(&x, 0.0, true, &mut projected).unwrap();
    let eigenvalues = dense(&projected, n).symmetric_eigenvalues();
    assert!(eigenvalues.min() > -1e-9 * eigenvalues.amax(), "{}", eigenvalues.min());
}

/// The shipped ring scene, every step checked: no boundary edge crosses
/// another (an independent test, not the barrier's distances), the closest
/// pair is apart and no vertex is below the floor.
#[test]
fn the_ring_squashed_between_plates_never_crosses_and_ends_squashed_by_the_plate() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/contact_ring_squash_2d.toml");
    let scene = Scene::from_file(&path).expect("parses");
    let dt = scene.file.simulation.time_step;
    let steps = (scene.file.simulation.duration / dt).round() as usize;
    let mut built = scene.build().expect("builds");
    let contact = built.model.barrier_contact().expect("contact");
    let surface = contact.surface().clone();
    assert!(surface.planar);
    let ring = 0..320;
    let top = |x: &[f64]| ring.clone().map(|v| x[2 * v + 1]).fold(f64::NEG_INFINITY, f64::max);
    let bottom = |x: &[f64]| ring.clone().map(|v| x[2 * v + 1]).fold(f64::INFINITY, f64::min);
    let mut state = built.initial_state.clone();
    let mut most_pairs = 0;
    for step in 1..=steps {
        built.integrator.step(&built.model, &mut state, dt).expect("a step");
        let contact = built.model.barrier_contact().unwrap();
        let lifted = contact.with_fixed_positions(&state.positions);
        if let Some(crossing) = intersection::first_crossing(&surface, &lifted) {
            panic!("step {step}: {crossing:?}");
        }
        let report = contact.report(&state.positions);
        assert!(report.smallest_distance > 0.0, "step {step}: {report:?}");
        assert!(bottom(&state.positions) > 0.0, "step {step}: below the floor");
        most_pairs = most_pairs.max(report.active_pairs);
    }
    // The plate's pinned top has come down 8 cm; the ring (20 cm tall) is
    // between the floor and the plate's underside, 2 cm below its top.
    let x = &state.positions;
    let plate_underside = (320..x.len() / 2).map(|v| x[2 * v + 1]).fold(f64::INFINITY, f64::min);
    assert!(top(x) < plate_underside, "{} above {plate_underside}", top(x));
    let height = top(x) - bottom(x);
    assert!((height - 0.12).abs() < 0.005, "the ring is {height} m tall");
    assert!(most_pairs > 10, "{most_pairs}");
}

/// The mean velocity along the slope after each step of a block on the
/// floor under gravity tilted by `angle` toward +x (a block on an incline).
fn slide(angle_degrees: f64, mu: f64, steps: usize, dt: f64) -> (Vec<f64>, f64, [f64; 2]) {
    let angle = angle_degrees.to_radians();
    let g = 9.81;
    let text = format!(
        "{}{}{FLOOR}[contact]\nfriction = {mu}\n",
        header(steps as f64 * dt, dt, [g * angle.sin(), -g * angle.cos()]),
        rectangle([0.0, 0.002], [0.2, 0.1], [8, 4], 1e6)
    );
    let built = scene(&text).build().unwrap();
    let mut built = built;
    let mut state = built.initial_state.clone();
    let mass: f64 = built.model.mass().lumped().iter().sum();
    let mut speeds = Vec::new();
    for _ in 0..steps {
        built.integrator.step(&built.model, &mut state, dt).expect("a step");
        speeds.push(built.model.momentum(&state.positions, &state.velocities).0.x / mass);
    }
    let x = &state.positions;
    let friction: f64 = built
        .model
        .terms()
        .iter()
        .filter(|t| t.kind() == TermKind::Friction)
        .map(|t| {
            let mut gradient = vec![0.0; x.len()];
            t.gradient(x, 0.0, &mut gradient, true).expect("a gradient");
            -gradient.chunks(2).map(|g| g[0]).sum::<f64>()
        })
        .sum();
    let normal: f64 = built
        .model
        .barrier_contact()
        .unwrap()
        .forces(x)
        .chunks(2)
        .map(|f| f[1])
        .sum();
    (speeds, g, [friction, normal])
}

#[test]
fn a_2d_block_on_an_incline_slides_with_the_coulomb_acceleration_and_sticks_below_tan_theta() {
    let (mu, dt) = (0.3, 0.005);
    let (speeds, g, [friction, normal]) = slide(30.0, mu, 60, dt);
    let measured = (speeds[59] - speeds[19]) / (40.0 * dt);
    let theta = 30f64.to_radians();
    let expected = g * (theta.sin() - mu * theta.cos());
    assert!(
        (measured - expected).abs() < 0.02 * expected,
        "a = {measured} m/s² against g (sin θ − μ cos θ) = {expected} m/s²"
    );
    // 0.2 m × 0.1 m × 1000 kg/m³ per metre of thickness.
    let weight = 20.0 * g;
    assert!(
        (normal - weight * theta.cos()).abs() < 0.01 * weight,
        "normal {normal} N"
    );
    assert!(
        (friction + mu * normal).abs() < 0.01 * mu * normal,
        "friction {friction} N"
    );
    // Below tan θ = μ it stays (creeping below ε_v).
    let (speeds, _, _) = slide(20.0, 0.5, 60, dt);
    assert!(speeds.iter().skip(19).all(|v| v.abs() < 1e-3), "{speeds:?}");
}

#[test]
fn two_d_scenes_contact_cannot_take_are_refused_naming_the_key() {
    let base = rectangle([0.0, 0.01], [0.2, 0.1], [4, 2], 1e5);
    let head = header(0.1, 0.01, [0.0, -9.81]);
    let message = refusal(&format!(
        "{head}{}\ndiscretization = {{ discontinuous = {{ penalty = 10.0 }} }}\n{FLOOR}[contact]\n",
        base.trim_end()
    ));
    assert!(
        message.contains("bodies[0].discretization") && message.contains("continuous"),
        "{message}"
    );
    let message = refusal(&format!(
        "{head}{base}[[obstacles]]\nshape = {{ mesh = {{ file = \"bowl.obj\" }} }}\n[contact]\n"
    ));
    assert!(
        message.contains("obstacles[0].shape") && message.contains("2D"),
        "{message}"
    );
    let message = refusal(&format!(
        "{head}{base}{FLOOR}motion = {{ angular_velocity = 1.0 }}\n[contact]\n"
    ));
    assert!(message.contains("obstacles[0].motion.angular_velocity"), "{message}");
    let message = refusal(&format!(
        "{head}{base}{FLOOR}motion = {{ velocity = [0.0, 1.0, 0.5] }}\n[contact]\n"
    ));
    assert!(
        message.contains("obstacles[0].motion.velocity") && message.contains("2 components"),
        "{message}"
    );
    // Two bodies overlapping at the start, and one closer to the floor than d̂.
    let message = refusal(&format!(
        "{head}{base}{}{FLOOR}[contact]\ndistance = 1e-3\n",
        rectangle([0.1, 0.05], [0.2, 0.1], [4, 2], 1e5)
    ));
    assert!(
        message.contains("bodies[0] and bodies[1]") && message.contains("intersect"),
        "{message}"
    );
    let message = refusal(&format!(
        "{head}{}{FLOOR}[contact]\ndistance = 1e-3\n",
        rectangle([0.0, 0.0005], [0.2, 0.1], [4, 2], 1e5)
    ));
    assert!(
        message.contains("obstacles[0]") && message.contains("closer than d̂"),
        "{message}"
    );
}

/// The ring scene's first `steps` steps with `solver` as its `[solver]`
/// table and time step `h`: the final positions and the Newton iterations.
fn ring_with_solver(solver: &str, h: f64, steps: usize) -> (Vec<f64>, usize) {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes");
    let text = std::fs::read_to_string(folder.join("contact_ring_squash_2d.toml"))
        .unwrap()
        .replace("time_step = 0.01", &format!("time_step = {h}"));
    let text = format!("{text}\n[solver]\n{solver}\n");
    let mut built = Scene::from_text(&text, "<ring>", folder)
        .expect("a scene")
        .build()
        .expect("builds");
    let mut state = built.initial_state.clone();
    let mut iterations = 0;
    for _ in 0..steps {
        iterations += built
            .integrator
            .step(&built.model, &mut state, h)
            .expect("a step")
            .iterations;
    }
    (state.positions, iterations)
}

#[test]
fn the_papers_velocity_tolerance_is_the_increment_test_scaled_by_the_step() {
    // ε_d = 1e-2 of the size per second: 1e-4 of it at h = 0.01 s, 5e-5 at h = 0.005 s.
    for (h, equivalent) in [(0.01, "tolerance = 1e-4"), (0.005, "tolerance = 5e-5")] {
        let (by_velocity, iterations) = ring_with_solver("velocity_tolerance = 1e-2", h, 20);
        let (by_increment, same) = ring_with_solver(equivalent, h, 20);
        assert_eq!(by_velocity, by_increment, "h = {h}");
        assert_eq!(iterations, same);
        let (_, strict) = ring_with_solver("", h, 20);
        assert!(
            iterations < strict,
            "h = {h}: {iterations} against {strict} at the default"
        );
    }
    let message = refusal(&format!(
        "{}{}{FLOOR}[contact]\n[solver]\nvelocity_tolerance = -1.0\n",
        header(0.1, 0.01, [0.0, -9.81]),
        rectangle([0.0, 0.01], [0.2, 0.1], [4, 2], 1e5)
    ));
    assert!(message.contains("solver.velocity_tolerance"), "{message}");
}

#[test]
fn a_2d_block_bounces_on_the_floor_under_implicit_midpoint_as_under_newmark() {
    // The plane's barrier felt at the step's end with its impulse on the
    // trapezoidal rule, as Newmark's: the largest change of kinetic +
    // elastic + gravitational + contact energy over the fall's energy is
    // Newmark's, and shrinks with the step (measured: 2.08% for both at
    // 0.5 ms, 1.38% at 0.1 ms, 0.59% at 0.05 ms: the flat landing of a whole
    // edge on a stiff barrier needs short steps). Never below the floor.
    let newmark = energy_drift("newmark", 0.0005, 200);
    let midpoint = energy_drift("implicit_midpoint", 0.0005, 200);
    assert!(
        (midpoint - newmark).abs() < 0.05 * newmark,
        "implicit midpoint {midpoint}, Newmark {newmark}"
    );
    let finer = energy_drift("implicit_midpoint", 0.00005, 2000);
    assert!(finer < 0.01 && finer < 0.5 * midpoint, "at 0.05 ms: {finer}");
}

/// The largest change of the total energy over the fall's of a block
/// dropped 1 cm onto the floor, `steps` steps of `h` under `kind`.
fn energy_drift(kind: &str, h: f64, steps: usize) -> f64 {
    let text = format!(
        "{}{}{FLOOR}[contact]\ndistance = 2e-3\nstiffness = 1e9\n[integrator]\nkind = \"{kind}\"\n[solver]\ntolerance = 1e-10\n",
        header(0.1, h, [0.0, -9.81]),
        rectangle([0.0, 0.01], [0.2, 0.1], [4, 2], 1e5)
    );
    let scene = scene(&text);
    let dt = scene.file.simulation.time_step;
    let mut built = scene.build().expect("builds");
    let model = &built.model;
    let total = |s: &hooke::model::State| {
        let parts = model.energies(&s.positions, s.time);
        model.kinetic_energy(&s.velocities) + parts.elastic + parts.gravitational + parts.contact
    };
    let mut state = built.initial_state.clone();
    let initial = total(&state);
    let mass: f64 = model.mass().lumped().iter().sum();
    let fall = mass * 9.81 * 0.01;
    let (mut worst, mut touched) = (0.0f64, false);
    for step in 1..=steps {
        built.integrator.step(model, &mut state, dt).expect("a step");
        let lowest = state.positions.chunks(2).map(|p| p[1]).fold(f64::INFINITY, f64::min);
        assert!(lowest > 0.0, "step {step}: below the floor ({lowest})");
        touched |= model.barrier_contact().unwrap().report(&state.positions).active_pairs > 0;
        worst = worst.max((total(&state) - initial).abs() / fall);
    }
    assert!(touched, "it never reached the floor");
    worst
}
