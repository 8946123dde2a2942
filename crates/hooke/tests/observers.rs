//! A run's observers: one of the caller's own is told about the start,
//! every step and the end, in order, after the built-in ones; one that
//! refuses a state ends the run at the state before it, with the outputs so
//! far and the summary written.

use hooke::prelude::*;
use hooke::simulation::{RunEnding, RunObserver, RunView};
use std::cell::RefCell;
use std::rc::Rc;

const SCENE: &str = r#"
gravity = [0, 0, -9.81]
[simulation]
duration = 0.1
time_step = 0.01
[[bodies]]
mesh = { box = { size = [0.3, 0.1, 0.1], cells = [3, 1, 1] } }
material = { model = "corotational", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000 }
[output]
vtk_every = 2
"#;

/// Writes down what it is told, and refuses states below `floor`.
struct Log {
    events: Rc<RefCell<Vec<String>>>,
    floor: f64,
}

impl RunObserver for Log {
    fn start(&mut self, run: &RunView) -> hooke::Result<()> {
        self.events
            .borrow_mut()
            .push(format!("start {} {}", run.step, run.records.len()));
        Ok(())
    }
    fn refuses(&mut self, run: &RunView) -> Option<String> {
        let lowest = run
            .state
            .positions
            .iter()
            .skip(2)
            .step_by(3)
            .fold(f64::INFINITY, |a, &z| a.min(z));
        (lowest < self.floor).then(|| format!("a vertex went below z = {}", self.floor))
    }
    fn after_step(&mut self, run: &RunView) -> hooke::Result<()> {
        assert_eq!(run.records.len(), run.step + 1, "the step's record comes with it");
        self.events.borrow_mut().push(format!("step {}", run.step));
        Ok(())
    }
    fn finish(&mut self, run: &RunView, ending: &mut RunEnding) {
        self.events
            .borrow_mut()
            .push(format!("finish {} {}", run.step, ending.failure.is_some()));
        ending.notes.push("logged".to_string());
    }
}

fn run(floor: f64, directory: &std::path::Path) -> (RunOutcome, Vec<String>) {
    let scene = Scene::from_text(SCENE, "log.toml", ".".into()).unwrap();
    let mut built = scene.build().unwrap();
    let settings = scene.run_settings(Some(directory));
    let events = Rc::new(RefCell::new(Vec::new()));
    let log = Log {
        events: events.clone(),
        floor,
    };
    let outcome = Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .observe(Box::new(log))
        .run(built.initial_state.clone())
        .unwrap();
    let events = events.borrow().clone();
    (outcome, events)
}

#[test]
fn an_observer_of_the_callers_is_told_about_every_step() {
    let directory = std::env::temp_dir().join(format!("hooke-observers-all-{}", std::process::id()));
    let (outcome, events) = run(f64::NEG_INFINITY, &directory);
    assert!(outcome.failure.is_none());
    let expected: Vec<String> = std::iter::once("start 0 1".to_string())
        .chain((1..=10).map(|s| format!("step {s}")))
        .chain(std::iter::once("finish 10 false".to_string()))
        .collect();
    assert_eq!(events, expected);
    assert!(outcome.summary.notes.contains(&"logged".to_string()));
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn a_refused_state_ends_the_run_at_the_state_before_it() {
    let directory = std::env::temp_dir().join(format!("hooke-observers-refused-{}", std::process::id()));
    // Backward Euler's free fall, z_n = −g h² n(n + 1)/2: −2.9 mm after step 2,
    // −5.9 mm after step 3, which the floor at −4 mm refuses.
    let (outcome, events) = run(-0.004, &directory);
    let Some(HookeError::StepFailed { step, reason, .. }) = &outcome.failure else {
        panic!("{:?}", outcome.failure);
    };
    assert_eq!(*step, 3);
    assert!(reason.contains("went below z = -0.004"), "{reason}");
    assert_eq!(events.last().unwrap(), "finish 2 true");
    assert_eq!(outcome.state.time, 0.02, "the last good state");
    assert_eq!(outcome.records.len(), 3, "the start and two steps");
    // The frames so far and the last good state, and the summary, are on disk.
    assert!(directory.join("frame.pvd").is_file() && directory.join("summary.json").is_file());
    let _ = std::fs::remove_dir_all(&directory);
}
