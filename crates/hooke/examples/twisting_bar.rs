//! The demo scene run from Rust: read a scene file, build it, run it with a
//! progress line, and print where the outputs went and what the run did.
//!
//! ```sh
//! cargo run --release -p hooke --example twisting_bar [-- SCENE.toml [OUTPUT_DIR]]
//! ```

use hooke::prelude::*;
use std::path::PathBuf;

fn main() -> Result<()> {
    let mut arguments = std::env::args().skip(1);
    let scene_path = arguments
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes/twisting_bar.toml")));
    let scene = Scene::from_file(&scene_path)?;
    let mut built = scene.build()?;
    for note in &built.notes {
        println!("note: {note}");
    }
    let settings = scene.run_settings(arguments.next().map(PathBuf::from).as_deref());
    let mut progress = |step: usize, steps: usize| {
        if step % 10 == 0 || step == steps {
            println!("step {step} of {steps}");
        }
    };
    let outcome = Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .notes(built.notes.clone())
        .progress(&mut progress)
        .run(built.initial_state.clone())?
        .into_result()?;
    let statistics = &outcome.summary.statistics;
    println!(
        "{} steps of {} s with {}, {} iterations; outputs in {}",
        statistics.steps,
        settings.time_step,
        built.integrator.name(),
        statistics.total_iterations,
        settings.output_directory.display()
    );
    Ok(())
}
