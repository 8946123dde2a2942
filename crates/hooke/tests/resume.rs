//! A run stopped midway and resumed from its checkpoint writes the same files,
//! byte for byte, as the run that was never stopped: under every integrator,
//! with the stop between frames and on one, and across a pin release.

use hooke::checkpoint::Checkpoint;
use hooke::scene::Scene;
use hooke::simulation::Simulation;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// 12 steps; frames every 3; the right end is held until t = 0.07.
fn bar_scene(kind: &str, material: &str, gravity: bool) -> String {
    format!(
        r#"name = "resumed_bar"
gravity = [0.0, 0.0, {g}]
[simulation]
duration = 0.12
time_step = 0.01
mass = "lumped"
[[bodies]]
mesh = {{ box = {{ size = [0.4, 0.1, 0.1], cells = [4, 1, 1] }} }}
material = {{ model = "{material}", youngs_modulus = 2e3, poisson_ratio = 0.4, density = 1000.0 }}
velocity = [0.0, 0.3, 0.2]
angular_velocity = [0.0, 0.0, 1.0]
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}
[[pins]]
select = {{ plane = {{ point = [0.4, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }} }}
release_time = 0.07
[integrator]
kind = "{kind}"
[output]
vtk_every = 3
plot = false
"#,
        g = if gravity { -9.81 } else { 0.0 }
    )
}

/// A 2D plate of discontinuous Galerkin triangles (soft BZ interfaces) for
/// the stepper that needs them (dgsi).
fn discontinuous_plate_scene(kind: &str) -> String {
    format!(
        r#"name = "resumed_plate"
dimension = 2
gravity = [0.0, -9.81]
[simulation]
duration = 0.12
time_step = 0.01
mass = "lumped"
[[bodies]]
mesh = {{ rectangle = {{ size = [0.4, 0.1], cells = [4, 1] }} }}
material = {{ model = "stable_neo_hookean", youngs_modulus = 2e3, poisson_ratio = 0.4, density = 1000.0 }}
discretization = {{ discontinuous = {{ formulation = "bz", penalty = 100.0 }} }}
velocity = [0.0, 0.3]
angular_velocity = 1.0
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0], normal = [-1.0, 0.0] }} }}
[[pins]]
select = {{ plane = {{ point = [0.4, 0.0], normal = [1.0, 0.0] }} }}
release_time = 0.07
[integrator]
kind = "{kind}"
[output]
vtk_every = 3
plot = false
"#
    )
}

/// A hanging rope of springs for the spring-only stepper.
fn rope_scene(kind: &str) -> String {
    format!(
        r#"name = "resumed_rope"
gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 0.12
time_step = 0.01
[[networks]]
shape = {{ rope = {{ start = [0.0, 0.0, 0.0], end = [1.0, 0.0, 0.0], segments = 8 }} }}
stiffness = 100.0
density = 0.1
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}
[[pins]]
select = {{ plane = {{ point = [1.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }} }}
release_time = 0.07
[integrator]
kind = "{kind}"
[output]
vtk_every = 3
plot = false
"#
    )
}

fn scratch(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!("hooke-resume-{tag}-{}-{nanos}", std::process::id()))
}

/// Runs `text` into `directory`, asking it to stop after step `stop_after` when given.
fn run(text: &str, directory: &Path, stop_after: Option<usize>) -> hooke::Result<hooke::simulation::RunOutcome> {
    let scene = Scene::from_text(text, "resume.toml", std::env::temp_dir())?;
    let settings = scene.run_settings(Some(directory));
    let mut built = scene.build()?;
    let stop = AtomicBool::new(false);
    let mut progress = |step: usize, _: usize| {
        if Some(step) == stop_after {
            stop.store(true, Ordering::SeqCst);
        }
    };
    // The scene's folder, as `hooke run` records it: a resumed run finds the
    // same cached precomputations (subspace, EigenFit) there.
    Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .notes(built.notes.clone())
        .scene_text(text.to_string())
        .scene_directory(std::env::temp_dir())
        .progress(&mut progress)
        .stop_when(&stop)
        .run(built.initial_state.clone())
}

/// Resumes the run in `directory` from its checkpoint, as `hooke run --resume` does.
fn resume(directory: &Path) -> hooke::simulation::RunOutcome {
    let checkpoint = Checkpoint::read(directory).unwrap();
    let scene = Scene::from_text(
        &checkpoint.scene_text,
        "resume.toml",
        checkpoint.scene_directory.clone(),
    )
    .unwrap();
    let settings = scene.run_settings(Some(directory));
    let mut built = scene.build().unwrap();
    Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .scene_text(checkpoint.scene_text.clone())
        .resume_from(checkpoint)
        .run(built.initial_state.clone())
        .unwrap()
}

/// The names and bytes of the series and the energies table.
fn run_files(directory: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(directory)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|name| name.starts_with("frame") || name.starts_with("obstacle") || name == "energies.csv")
        .map(|name| {
            let bytes = std::fs::read(directory.join(&name)).unwrap();
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Runs `text` whole, then stopped after `stop_after` and resumed; the files must agree.
fn assert_resume_is_exact(text: &str, kind: &str, stop_after: usize) {
    let whole = scratch(&format!("{kind}-whole"));
    let parts = scratch(&format!("{kind}-parts-{stop_after}"));
    let outcome = run(text, &whole, None).unwrap();
    assert!(outcome.failure.is_none(), "{kind}: {:?}", outcome.failure);
    assert!(
        !whole.join("checkpoint.json").exists(),
        "{kind}: a completed run keeps no checkpoint"
    );
    let stopped = run(text, &parts, Some(stop_after)).unwrap();
    assert!(
        matches!(stopped.failure, Some(hooke::HookeError::Interrupted { step, .. }) if step == stop_after),
        "{kind}: {:?}",
        stopped.failure
    );
    let resumed = resume(&parts);
    assert!(resumed.failure.is_none(), "{kind}: {:?}", resumed.failure);
    assert!(
        resumed
            .summary
            .notes
            .iter()
            .any(|n| n.starts_with("resumed after step")),
        "{kind}"
    );
    if resumed.state != outcome.state {
        let differences = resumed.state.positions.iter().zip(&outcome.state.positions);
        let largest = differences.map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        panic!("{kind}, stopped after step {stop_after}: final positions differ by up to {largest:e}");
    }
    let (expected, found) = (run_files(&whole), run_files(&parts));
    let names = |files: &[(String, Vec<u8>)]| files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&found), names(&expected), "{kind}");
    for ((name, a), (_, b)) in expected.iter().zip(&found) {
        assert!(a == b, "{kind}, stopped after step {stop_after}: {name} differs");
    }
    let _ = std::fs::remove_dir_all(&whole);
    let _ = std::fs::remove_dir_all(&parts);
}

#[test]
fn every_integrator_resumes_to_the_same_files_byte_for_byte() {
    let mut tested = Vec::new();
    for entry in hooke::integrate::INTEGRATORS {
        let kind = entry.name;
        if kind == "static" {
            continue;
        }
        let candidates = [
            bar_scene(kind, "stable_neo_hookean", true),
            bar_scene(kind, "corotational", true),
            bar_scene(kind, "corotational", false),
            bar_scene(kind, "stable_neo_hookean", false).replace("release_time = 0.07\n", ""),
            rope_scene(kind),
            discontinuous_plate_scene(kind),
        ];
        let Some(text) = candidates.iter().find(|text| {
            Scene::from_text(text, "resume.toml", std::env::temp_dir())
                .and_then(|s| s.build())
                .is_ok()
        }) else {
            continue;
        };
        // Between frames (an extra last frame is written, then dropped on
        // resume), and on a frame step just before the release.
        for stop_after in [4, 6] {
            assert_resume_is_exact(text, kind, stop_after);
        }
        tested.push(kind);
    }
    // Viscoelastic damping makes symplectic Euler carry the previous positions.
    let damped =
        bar_scene("symplectic_euler", "stable_neo_hookean", true) + "[damping]\nviscoelastic_coefficient = 0.005\n";
    for stop_after in [4, 6] {
        assert_resume_is_exact(&damped, "symplectic_euler (viscoelastic)", stop_after);
    }
    let all: Vec<&str> = hooke::integrate::INTEGRATORS
        .iter()
        .map(|e| e.name)
        .filter(|&n| n != "static")
        .collect();
    assert_eq!(tested, all, "some integrators refused every scene");
}

/// A scene that starts from a frame of an earlier run (`[initial] frame`)
/// continues it: with no history and nothing that depends on the clock
/// (backward Euler, fixed pins, constant gravity), five steps from the frame
/// at step 5 end where the ten-step run ends, to the last bit.
#[test]
fn a_scene_started_from_a_frame_continues_the_run() {
    let whole = scratch("initial-frame-whole");
    let text = bar_scene("backward_euler", "stable_neo_hookean", true)
        .replace("release_time = 0.07\n", "")
        .replace("duration = 0.12", "duration = 0.1")
        .replace("vtk_every = 3", "vtk_every = 5");
    let outcome = run(&text, &whole, None).unwrap();
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    let frame = whole.join("frame_0001.vtu");
    let continued_text = text.replace("duration = 0.1", "duration = 0.05")
        + &format!("[initial]\nframe = {:?}\n", frame.display().to_string());
    let continued = run(&continued_text, &scratch("initial-frame-part"), None).unwrap();
    assert!(continued.failure.is_none(), "{:?}", continued.failure);
    assert_eq!(continued.state.positions, outcome.state.positions);
    assert_eq!(continued.state.velocities, outcome.state.velocities);
    // A frame of other bodies is refused, naming the key.
    let other = continued_text.replace("cells = [4, 1, 1]", "cells = [5, 1, 1]");
    let error = Scene::from_text(&other, "other.toml", std::env::temp_dir())
        .unwrap()
        .build()
        .err()
        .unwrap();
    assert!(error.to_string().contains("initial.frame"), "{error}");
    let _ = std::fs::remove_dir_all(&whole);
}

/// `[initial] displacement` and `velocity` read one CSV row per vertex
/// (a header line allowed); a wrong row is reported at its line.
#[test]
fn initial_fields_come_from_per_vertex_tables() {
    let directory = scratch("initial-tables");
    std::fs::create_dir_all(&directory).unwrap();
    let text = bar_scene("backward_euler", "stable_neo_hookean", true).replace("release_time = 0.07\n", "");
    let vertices = Scene::from_text(&text, "bar.toml", directory.clone())
        .unwrap()
        .build()
        .unwrap()
        .model
        .mesh()
        .vertex_count();
    let table = |row: &str| format!("x,y,z\n{}", format!("{row}\n").repeat(vertices));
    std::fs::write(directory.join("u.csv"), table("0.0, 0.0, 0.01")).unwrap();
    std::fs::write(directory.join("v.csv"), table("0.5,0,0")).unwrap();
    let with_tables = text.clone() + "[initial]\ndisplacement = \"u.csv\"\nvelocity = \"v.csv\"\n";
    let built = Scene::from_text(&with_tables, "bar.toml", directory.clone())
        .unwrap()
        .build()
        .unwrap();
    let rest = built.model.initial_state();
    let pinned = built.model.dof_map(0.0);
    for v in 0..vertices {
        assert_eq!(
            built.initial_state.positions[3 * v + 2],
            rest.positions[3 * v + 2] + 0.01
        );
        if pinned.free_index[3 * v].is_some() {
            assert_eq!(built.initial_state.velocities[3 * v], 0.5, "vertex {v}");
        }
    }
    std::fs::write(directory.join("v.csv"), table("0.5,0,0") + "1,2\n").unwrap();
    let error = Scene::from_text(&with_tables, "bar.toml", directory.clone())
        .unwrap()
        .build()
        .err()
        .unwrap();
    assert!(
        error.to_string().contains(&format!("v.csv, line {}", vertices + 2)),
        "{error}"
    );
    std::fs::write(directory.join("v.csv"), "0.5,0,0\n").unwrap();
    let error = Scene::from_text(&with_tables, "bar.toml", directory.clone())
        .unwrap()
        .build()
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .contains(&format!("1 rows, but the model has {vertices} vertices")),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&directory);
}

/// A run that tears (scenes/tearing_curtain.toml, shortened) resumes with the
/// same springs torn: the checkpoint keeps them, and the files match the run
/// that was never stopped, stopped before and after the first tears.
#[test]
fn a_torn_run_resumes_with_its_tears() {
    let text = std::fs::read_to_string("../../scenes/tearing_curtain.toml")
        .unwrap()
        .replace("duration = 4.0", "duration = 0.6")
        .replace("render_every = 15", "render_every = 0");
    for stop_after in [3, 12] {
        assert_resume_is_exact(&text, "backward_euler (tearing)", stop_after);
    }
}

/// A run with obstacles writes them beside each frame (`obstacle.pvd`, the
/// same times and numbers), and a resumed one goes on with both series.
#[test]
fn a_run_with_obstacles_resumes_both_series_byte_for_byte() {
    let text = bar_scene("backward_euler", "neo_hookean", true).replace(
        "[integrator]",
        "[[obstacles]]\nshape = { sphere = { center = [0.2, 0.05, -0.3], radius = 0.25 } }\nstiffness = 1e4\n\
         [[obstacles]]\nshape = { plane = { point = [0.0, 0.0, -0.2], normal = [0.0, 0.0, 1.0] } }\nstiffness = 1e4\n\
         [integrator]",
    );
    let whole = scratch("obstacles");
    assert!(run(&text, &whole, None).unwrap().failure.is_none());
    let times = |name: &str| -> Vec<String> {
        let text = std::fs::read_to_string(whole.join(name)).unwrap();
        text.split("timestep=\"")
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap().to_string())
            .collect()
    };
    let frames = times("frame.pvd");
    assert!(frames.len() > 2);
    assert_eq!(times("obstacle.pvd"), frames, "the obstacles at every frame's time");
    for k in 0..frames.len() {
        let frame = hooke::output::read_frame(&whole.join(format!("obstacle_{k:04}.vtu"))).unwrap();
        // The ball (16 × 32 bands, one triangle a cell in the bands at the poles) and the plane's square.
        assert_eq!(
            frame.mesh.element_count(),
            2 * 16 * 32 - 2 * 32 + 2,
            "obstacle_{k:04}.vtu"
        );
    }
    let _ = std::fs::remove_dir_all(&whole);
    for stop_after in [4, 9] {
        assert_resume_is_exact(&text, "backward_euler (obstacles)", stop_after);
    }
}

/// A subspace run (mixed FEM, its u, u̇ and stretches in the checkpoint)
/// resumes to the same files as the run that was never stopped.
#[test]
fn a_subspace_run_resumes_byte_for_byte() {
    let text = bar_scene("backward_euler", "fixed_corotational", true)
        .replace("release_time = 0.07", "release_time = 0.07\nsoft = { stiffness = 1e3 }")
        .replace(
            "[output]",
            "[subspace]\nmodes = 3\n[solver]\nkind = \"mixed_sqp\"\niterations = 2\n[output]",
        );
    for stop_after in [4, 9] {
        assert_resume_is_exact(&text, "backward_euler (subspace mixed FEM)", stop_after);
    }
}

/// An EigenFit run (nonlinear material, a pin released at step 7) resumes
/// to the same files: the checkpoint keeps the last modes, the next refit's
/// warm start.
#[test]
fn an_eigenfit_run_resumes_byte_for_byte() {
    let text = bar_scene("backward_euler", "stable_neo_hookean", true).replace(
        "[output]",
        "[eigenfit]\nreference = { box = { size = [0.4, 0.1, 0.1], cells = [8, 2, 2] } }\nmodes = 4\n[output]",
    );
    for stop_after in [4, 8] {
        assert_resume_is_exact(&text, "backward_euler (EigenFit)", stop_after);
    }
    // Carrying modes between refits: the checkpoint keeps how long they serve.
    let carried = text.replace("modes = 4\n", "modes = 4\nrefit_drift = 0.5\n");
    assert_ne!(carried, text);
    for stop_after in [3, 5] {
        assert_resume_is_exact(&carried, "backward_euler (EigenFit, refit_drift)", stop_after);
    }
    // A semi-implicit step solves with the refit's factorisation of its own
    // matrix (a stiffer bar, whose modes that matrix follows fast enough).
    let shared = bar_scene("semi_implicit_backward_euler", "stable_neo_hookean", true)
        .replace("youngs_modulus = 2e3", "youngs_modulus = 1e6")
        .replace(
            "[output]",
            "[eigenfit]\nreference = { box = { size = [0.4, 0.1, 0.1], cells = [8, 2, 2] } }\nmodes = 4\nrefit_drift = 0.5\n[output]",
        );
    for stop_after in [3, 8] {
        assert_resume_is_exact(&shared, "semi_implicit (EigenFit, one factorisation)", stop_after);
    }
}
