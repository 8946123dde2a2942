//! Long validations, run on demand (minutes each):
//! `cargo test --release -p hooke --test long_runs -- --ignored`.

use hooke::scene::Scene;
use hooke::simulation::Simulation;
use std::path::Path;

fn norm(v: [f64; 3]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    norm([a[0] - b[0], a[1] - b[1], a[2] - b[2]])
}

/// The whole `scenes/free_rod.toml` (10⁵ steps of the variational midpoint on
/// a free, spinning Neo-Hookean rod): linear and angular momentum kept to
/// round-off, the energy within 0.1% of the start, and no drift: the mean
/// energy over each tenth of the run agrees to 1e-6 of the start.
#[test]
#[ignore = "runs 10^5 steps (about 4 minutes); run with --ignored"]
fn the_free_rod_scene_keeps_momenta_and_a_bounded_energy_for_its_whole_run() {
    let scene_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/free_rod.toml");
    let scene = Scene::from_file(&scene_path).unwrap();
    let output = std::env::temp_dir().join(format!("hooke-long-free-rod-{}", std::process::id()));
    let settings = scene.run_settings(Some(&output));
    let mut built = scene.build().unwrap();
    let outcome = Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap()
        .into_result()
        .unwrap();
    let records = &outcome.records;
    assert_eq!(records.len(), 100_001);
    let first = &records[0];
    let linear = records
        .iter()
        .map(|r| distance(r.linear_momentum, first.linear_momentum))
        .fold(0.0, f64::max)
        / norm(first.linear_momentum);
    let angular = records
        .iter()
        .map(|r| distance(r.angular_momentum, first.angular_momentum))
        .fold(0.0, f64::max)
        / norm(first.angular_momentum);
    let energy = records
        .iter()
        .map(|r| (r.total - first.total).abs())
        .fold(0.0, f64::max)
        / first.total;
    let tenth = records.len() / 10;
    let means: Vec<f64> = records
        .chunks(tenth)
        .take(10)
        .map(|chunk| chunk.iter().map(|r| r.total).sum::<f64>() / chunk.len() as f64)
        .collect();
    let spread = means.iter().cloned().fold(f64::MIN, f64::max) - means.iter().cloned().fold(f64::MAX, f64::min);
    println!(
        "linear {linear:e}, angular {angular:e}, energy {energy:e}, tenth means {:e}",
        spread / first.total
    );
    assert!(linear < 1e-13, "linear momentum drifted by {linear:e}");
    assert!(angular < 1e-11, "angular momentum drifted by {angular:e}");
    assert!(energy < 1e-3, "energy strayed by {energy:e}");
    assert!(
        spread < 1e-6 * first.total,
        "mean energy drifted by {:e}",
        spread / first.total
    );
    std::fs::remove_dir_all(&output).ok();
}

/// The whole `scenes/contact_twisted_rod.toml`: a rod turned 4 times at one
/// end while that end moves in coils onto itself. At every one of its 200
/// steps no surface edge crosses a surface triangle (an independent test,
/// not the barrier's distances) and the closest pair is apart; the loop
/// touches itself before the end and is still pressed together at the end;
/// the turned end is where its screw motion puts it.
#[test]
#[ignore = "runs a contact scene of 200 steps (about 35 s); run with --ignored"]
fn the_twisted_rod_scene_coils_onto_itself_without_ever_crossing() {
    use hooke::contact::intersection;
    let scene_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/contact_twisted_rod.toml");
    let scene = Scene::from_file(&scene_path).unwrap();
    let dt = scene.file.simulation.time_step;
    let mut built = scene.build().unwrap();
    let surface = built.model.barrier_contact().expect("contact").surface().clone();
    let mut state = built.initial_state.clone();
    let mut first_touch = None;
    let mut closest = f64::INFINITY;
    let mut last_pairs = 0;
    for step in 1..=200 {
        built.integrator.step(&built.model, &mut state, dt).expect("a step");
        let x = &state.positions;
        if let Some(crossing) = intersection::first_crossing(&surface, x) {
            panic!("step {step}: {crossing:?}");
        }
        let report = built.model.barrier_contact().unwrap().report(x);
        assert!(report.smallest_distance > 0.0, "step {step}: {report:?}");
        closest = closest.min(report.smallest_distance);
        if report.active_pairs > 0 && first_touch.is_none() {
            first_touch = Some(step);
        }
        last_pairs = report.active_pairs;
    }
    let first_touch = first_touch.expect("the rod never touched itself");
    assert!((100..190).contains(&first_touch), "first touch at step {first_touch}");
    assert!(last_pairs > 20, "{last_pairs} pairs at the end");
    assert!(closest > 1e-7, "closest approach {closest}");
    // The turned end: its centre moved from x = 0.5 to 0.25 m, on the axis.
    let rest = built.model.mesh().vertices();
    let end: Vec<usize> = (0..rest.len()).filter(|&v| (rest[v][0] - 0.5).abs() < 1e-9).collect();
    let mut centre = [0.0; 3];
    for &v in &end {
        for a in 0..3 {
            centre[a] += state.positions[3 * v + a] / end.len() as f64;
        }
    }
    assert!(distance(centre, [0.25, 0.0, 0.0]) < 1e-9, "{centre:?}");
}
