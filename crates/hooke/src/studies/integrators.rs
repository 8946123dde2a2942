//! Running one scene under several integrators and comparing their energy over
//! time in one plot (`hooke compare`). A method that fails (an explicit method
//! past its stability limit, say) is kept in the comparison up to where it stopped.

use crate::error::{HookeError, Result};
use crate::integrate::IntegratorConfig;
use crate::output::{plot_energies, EnergyRecord};
use crate::scene::Scene;
use crate::simulation::{RunSettings, RunStatus, Simulation};
use std::path::Path;

/// One integrator's part of a comparison.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ComparedRun {
    /// The integrator's registered name.
    pub integrator: String,
    /// How the run ended (a refused scene counts as failed).
    pub status: RunStatus,
    /// The message of the error that stopped or refused it; None when there was none.
    pub error: Option<String>,
    /// The integrator refused the scene (it lacks a capability the model needs).
    pub refused: bool,
    /// Steps taken.
    pub steps: usize,
    /// Wall-clock time of the run, s.
    pub wall_seconds: f64,
    /// Minimiser iterations summed over the steps (force evaluations for explicit methods).
    pub newton_iterations: usize,
    /// The total energy of the initial state, J.
    pub initial_total_energy: f64,
    /// The total energy at the last record, J; None when nothing was recorded.
    pub final_total_energy: Option<f64>,
    /// The run's energy records (not written to comparison.json).
    #[serde(skip)]
    pub records: Vec<EnergyRecord>,
}

/// Runs `scene` once per integrator into `<output>/<integrator>/`, then writes
/// `<output>/comparison.png` (total energy of each run that took a step; none
/// when every integrator refused the scene) and `<output>/comparison.json`.
/// Every run uses the scene's `[solver]`; the integrator the scene names keeps
/// all its settings, the others take their defaults. An integrator that cannot
/// run the scene (a capability it lacks) is recorded as failed with the reason.
///
/// Backward Euler against implicit midpoint on a free, spinning bar: the
/// midpoint rule keeps its energy, backward Euler dissipates it.
///
/// ```
/// use hooke::prelude::*;
/// use hooke::studies::integrators::compare;
///
/// # fn main() -> hooke::Result<()> {
/// let text = r#"
/// [simulation]
/// duration = 0.1
/// time_step = 0.01
/// [[bodies]]
/// mesh = { box = { size = [0.4, 0.1, 0.1], cells = [4, 1, 1] } }
/// material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000 }
/// angular_velocity = [0, 0, 10]
/// "#;
/// let scene = Scene::from_text(text, "spin.toml", ".".into())?;
/// let methods = ["backward_euler", "implicit_midpoint"].map(|name| IntegratorConfig::from_name(name).expect("registered"));
/// let output = std::env::temp_dir().join(format!("hooke-doc-compare-{}", std::process::id()));
/// let runs = compare(&scene, &methods, &output, &mut |_, _, _| {}, None)?;
/// let loss = |run: &hooke::studies::integrators::ComparedRun| run.initial_total_energy - run.final_total_energy.unwrap();
/// assert!(loss(&runs[0]) > 10.0 * loss(&runs[1]).abs(), "{} against {}", loss(&runs[0]), loss(&runs[1]));
/// assert!(output.join("comparison.png").is_file());
/// # std::fs::remove_dir_all(&output).ok();
/// # Ok(())
/// # }
/// ```
pub fn compare(
    scene: &Scene,
    integrators: &[IntegratorConfig],
    output: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Vec<ComparedRun>> {
    if integrators.is_empty() {
        return Err(HookeError::scene(
            "integrators",
            "name at least one integrator to compare",
        ));
    }
    let built = scene.build()?;
    let solver = &scene.file.solver;
    let scene_integrator = scene.file.integrator.name()?;
    let mut runs = Vec::new();
    for config in integrators {
        // The scene's own integrator keeps all its settings (SIERE's mode count, say).
        // Compared by registered name, so that variants (si and si_exact) stay apart.
        let own = config.name()? == scene_integrator;
        let mut integrator = if own {
            scene.file.integrator.build(solver)?
        } else {
            config.build(solver)?
        };
        let name = integrator.name().to_string();
        let settings = RunSettings {
            output_directory: output.join(&name),
            ..scene.run_settings(None)
        };
        let initial_total_energy = crate::simulation::energy_record(&built.model, &built.initial_state).total;
        let refused = |error: HookeError| ComparedRun {
            integrator: name.clone(),
            status: RunStatus::Failed,
            error: Some(error.to_string()),
            refused: true,
            steps: 0,
            wall_seconds: 0.0,
            newton_iterations: 0,
            initial_total_energy,
            final_total_energy: None,
            records: Vec::new(),
        };
        if let Err(error) = integrator.check(&built.model) {
            runs.push(refused(error));
            continue;
        }
        let mut report = |step, total| progress(&name, step, total);
        let mut simulation = Simulation::new(&built.model, integrator.as_mut(), &settings)
            .notes(built.notes.clone())
            .scene_text(scene.text.clone())
            .progress(&mut report);
        if let Some(flag) = stop {
            simulation = simulation.stop_when(flag);
        }
        let outcome = simulation.run(built.initial_state.clone())?;
        let interrupted = outcome.summary.status == RunStatus::Interrupted;
        runs.push(ComparedRun {
            integrator: name,
            status: outcome.summary.status,
            error: outcome.summary.error.clone(),
            refused: false,
            steps: outcome.summary.statistics.steps,
            wall_seconds: outcome.summary.wall_seconds,
            newton_iterations: outcome.summary.statistics.total_iterations,
            initial_total_energy,
            final_total_energy: outcome.records.last().map(|r| r.total),
            records: outcome.records,
        });
        // Asked to stop: the integrators not yet run are left out.
        if interrupted {
            break;
        }
    }
    let series: Vec<(&str, &[EnergyRecord])> = runs
        .iter()
        .filter(|r| !r.records.is_empty())
        .map(|r| (r.integrator.as_str(), r.records.as_slice()))
        .collect();
    crate::output::run_files::create_output_directory(output)?;
    if !series.is_empty() {
        plot_energies(
            &output.join("comparison.png"),
            &format!("{}: total energy", scene.name()),
            &series,
        )?;
    } else {
        // No stale plot of an earlier comparison may stand for this one.
        let _ = std::fs::remove_file(output.join("comparison.png"));
    }
    let path = output.join("comparison.json");
    let text = serde_json::to_string_pretty(&runs).map_err(|e| HookeError::io(&path, std::io::Error::other(e)))?;
    crate::output::atomic::write_bytes_atomically(&path, text.as_bytes())?;
    Ok(runs)
}

/// The error a comparison ends with when some of its runs did not finish: a
/// scene error (the input's fault) when every one of them refused the scene, a
/// solver error otherwise. None when every run completed.
pub fn incomplete(runs: &[ComparedRun]) -> Option<HookeError> {
    let failed: Vec<&ComparedRun> = runs.iter().filter(|r| r.status != RunStatus::Completed).collect();
    if failed.is_empty() {
        return None;
    }
    let names = failed
        .iter()
        .map(|r| r.integrator.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let reason = format!(
        "{} of {} integrators did not finish ({names}); the table above and comparison.json say why",
        failed.len(),
        runs.len()
    );
    Some(if failed.iter().all(|r| r.refused) {
        HookeError::scene("--integrators", reason)
    } else {
        HookeError::Solver { reason }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scene's own integrator keeps its settings, and another variant of
    /// the same kind (si_exact beside a scene's si) keeps its own.
    #[test]
    fn variants_of_the_scene_integrator_keep_their_own_settings() {
        let text = r#"
name = "tiny"
gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 0.02
time_step = 0.01
[[bodies]]
mesh = { box = { size = [0.1, 0.02, 0.02], cells = [2, 1, 1] } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.4, density = 1000.0 }
[integrator]
kind = "semi_implicit_backward_euler"
project_hessian = false
"#;
        let scene = Scene::from_text(text, "tiny", ".".into()).unwrap();
        let output = std::env::temp_dir().join(format!("hooke-compare-variants-{}", std::process::id()));
        let configs: Vec<IntegratorConfig> = ["si", "si_exact"]
            .iter()
            .map(|name| IntegratorConfig::from_name(name).unwrap())
            .collect();
        let runs = compare(&scene, &configs, &output, &mut |_, _, _| {}, None).unwrap();
        let names: Vec<&str> = runs.iter().map(|r| r.integrator.as_str()).collect();
        assert_eq!(names, ["semi_implicit_backward_euler", "semi_implicit_exact"]);
        std::fs::remove_dir_all(&output).ok();
    }
}
