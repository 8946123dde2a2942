//! The live scene the page drives: built from text, stepped, grabbed, reset.

use hooke_web::LiveScene;
use nalgebra::Vector3;

const CANTILEVER: &str = r#"
gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 1.0
time_step = 0.0166666666666667
[[bodies]]
mesh = { box = { size = [1.0, 0.2, 0.2], cells = [10, 2, 2], origin = [0.0, -0.1, -0.1] } }
material = { model = "neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[attachments]]
select = { box = { min = [-1.0, -1.0, -1.0], max = [0.01, 1.0, 1.0] } }
stiffness = 1e7
[integrator]
kind = "backward_euler"
[subspace]
modes = 8
[solver]
kind = "mixed_sqp"
iterations = 1
"#;

fn vertex(live: &LiveScene, v: usize) -> Vector3<f64> {
    Vector3::from_column_slice(&live.positions()[3 * v..3 * v + 3])
}

/// The vertex at the free end's top edge, middle of its width.
fn tip(live: &LiveScene) -> usize {
    let n = live.positions().len() / 3;
    (0..n)
        .max_by(|&a, &b| {
            let (pa, pb) = (vertex(live, a), vertex(live, b));
            (pa.x + pa.z - pa.y.abs()).total_cmp(&(pb.x + pb.z - pb.y.abs()))
        })
        .unwrap()
}

#[test]
fn a_cantilever_sags_under_gravity_and_its_energy_is_finite() {
    let mut live = LiveScene::new(CANTILEVER, "cantilever.toml", None).unwrap();
    let tip = tip(&live);
    let start = vertex(&live, tip);
    for _ in 0..30 {
        live.step().unwrap();
    }
    assert_eq!(live.steps(), 30);
    assert!((live.time() - 0.5).abs() < 1e-9);
    let sag = start.z - vertex(&live, tip).z;
    assert!(sag > 1e-3, "the tip fell {sag} m");
    assert!(live.energy().unwrap().is_finite());
    assert!(live.positions().iter().all(|x| x.is_finite()));
}

#[test]
fn a_grabbed_vertex_follows_the_pointer_and_lets_go() {
    let mut free = LiveScene::new(CANTILEVER, "cantilever.toml", None).unwrap();
    let mut held = LiveScene::new(CANTILEVER, "cantilever.toml", None).unwrap();
    let tip = tip(&held);
    let target = vertex(&held, tip) + Vector3::new(0.0, 0.0, 0.3);
    held.grab(tip, target).unwrap();
    assert_eq!(held.held(), Some((tip, target)));
    for _ in 0..60 {
        free.step().unwrap();
        held.step().unwrap();
    }
    let gap_held = (vertex(&held, tip) - target).norm();
    let gap_free = (vertex(&free, tip) - target).norm();
    assert!(
        gap_held < 0.5 * gap_free,
        "held {gap_held} m from the pointer, free {gap_free} m"
    );
    assert!(vertex(&held, tip).z > vertex(&free, tip).z + 0.1);

    // Dragging moves the target; letting go leaves the spring out of the steps.
    let lower = target - Vector3::new(0.0, 0.0, 0.2);
    held.drag_to(lower).unwrap();
    assert_eq!(held.held(), Some((tip, lower)));
    held.release().unwrap();
    assert_eq!(held.held(), None);
    held.drag_to(target).unwrap();
    assert_eq!(held.held(), None, "a drag with nothing held holds nothing");
    let before = vertex(&held, tip).z;
    for _ in 0..20 {
        held.step().unwrap();
    }
    assert!(vertex(&held, tip).z < before, "released, the tip falls back");
}

#[test]
fn a_click_picks_the_surface_vertex_under_it_and_nothing_elsewhere() {
    let live = LiveScene::new(CANTILEVER, "cantilever.toml", None).unwrap();
    let tip = tip(&live);
    let p = vertex(&live, tip);
    let eye = p + Vector3::new(0.0, 0.0, 2.0);
    assert_eq!(live.pick(eye, p - eye, 0.01), Some(tip));
    assert_eq!(live.pick(eye, eye - p, 0.01), None, "behind the eye");
    assert_eq!(live.pick(eye + Vector3::new(5.0, 0.0, 0.0), p - eye, 0.01), None);
    assert_eq!(live.pick(eye, Vector3::zeros(), 0.01), None);
}

#[test]
fn reset_returns_to_the_start_and_steps_again_alike() {
    let mut live = LiveScene::new(CANTILEVER, "cantilever.toml", None).unwrap();
    let start = live.positions().to_vec();
    assert!(live.iteration_ms().is_nan(), "no iteration timed before the first step");
    for _ in 0..10 {
        live.step().unwrap();
    }
    let after_ten = live.positions().to_vec();
    let iteration = live.iteration_ms();
    assert!(
        iteration.is_finite() && iteration > 0.0,
        "an iteration took {iteration} ms"
    );
    live.grab(tip(&live), Vector3::new(0.5, 0.5, 0.5)).unwrap();
    live.step().unwrap();
    live.reset().unwrap();
    assert_eq!(live.positions(), &start[..]);
    assert_eq!((live.steps(), live.time(), live.held()), (0, 0.0, None));
    assert!(live.iteration_ms().is_nan(), "the timing starts again");
    for _ in 0..10 {
        live.step().unwrap();
    }
    assert_eq!(live.positions(), &after_ten[..], "the same bits as the first time");
}

#[test]
fn bad_input_is_refused_with_the_reason() {
    let error = LiveScene::new(&CANTILEVER.replace("youngs_modulus", "youngs_modulos"), "c.toml", None)
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("youngs_modulos"), "{error}");
    let mut live = LiveScene::new(CANTILEVER, "cantilever.toml", None).unwrap();
    let n = live.positions().len() / 3;
    let error = live.grab(n, Vector3::zeros()).unwrap_err().to_string();
    assert!(error.contains(&format!("vertex {n}")), "{error}");
    let error = live.grab(0, Vector3::new(f64::NAN, 0.0, 0.0)).unwrap_err().to_string();
    assert!(error.contains("finite"), "{error}");
    assert_eq!(live.held(), None, "a refused grab holds nothing");
}

#[test]
fn a_precomputed_subspace_gives_the_computed_run_and_another_meshs_is_refused() {
    let bytes = LiveScene::precompute(CANTILEVER, "cantilever.toml").unwrap();
    let mut computed = LiveScene::new(CANTILEVER, "cantilever.toml", None).unwrap();
    let mut given = LiveScene::new(CANTILEVER, "cantilever.toml", Some(&bytes)).unwrap();
    for _ in 0..20 {
        computed.step().unwrap();
        given.step().unwrap();
    }
    assert_eq!(computed.positions(), given.positions());

    let finer = CANTILEVER.replace("cells = [10, 2, 2]", "cells = [12, 2, 2]");
    let error = LiveScene::new(&finer, "finer.toml", Some(&bytes))
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("another mesh"), "{error}");
    let error = LiveScene::new(CANTILEVER, "c.toml", Some(b"{not json"))
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("could not be read"), "{error}");
    let no_subspace = CANTILEVER
        .replace("[subspace]\nmodes = 8\n", "")
        .replace("kind = \"mixed_sqp\"\niterations = 1\n", "");
    let error = LiveScene::precompute(&no_subspace, "full.toml")
        .unwrap_err()
        .to_string();
    assert!(error.contains("no [subspace]"), "{error}");
}
