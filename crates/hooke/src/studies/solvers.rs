//! Minimisers compared at an equal budget (`hooke compare --solvers`, Liu 2018
//! thesis, Figs. 5.1–5.3 and 7.3–7.8): every solver takes the same frames of a scene,
//! each from the same state, and the relative error
//! (Φ(xᵏ) − Φ(x*)) / (Φ(x⁰) − Φ(x*)) of the step's incremental potential is
//! recorded after every iteration with the seconds spent, against x* from
//! Newton iterated to convergence. x⁰ is the step's starting guess, where
//! every minimiser starts: xₙ + h vₙ with the pins at their prescribed places.
//! (The source starts from y = xₙ + h vₙ + h² M⁻¹ f_ext and normalises by
//! g(y); under gravity that guess starts lower, so the source's denominators
//! differ from these by the external force's work.) The frames follow the
//! converged trajectory.

use crate::error::{HookeError, Result};
use crate::integrate::{BackwardEuler, Integrator, StaticEquilibrium};
use crate::output::plot_convergence;
use crate::scene::Scene;
use crate::solve::{Minimizer, MinimizerReport, Objective, SolverSettings, TracePoint};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One solver of a comparison: a label and its settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverVariant {
    /// The name it was given on the command line (e.g. `lbfgs:history=10`), which labels its results.
    pub label: String,
    /// Its `[solver]` settings.
    pub settings: SolverSettings,
}

/// Solvers by name, each optionally with `[solver]` keys after colons, read
/// by the same settings types as a scene's table: `newton`, `lbfgs`,
/// `local_global`, `lbfgs:history=10`, `lbfgs:history=0:iterations=50`,
/// `lbfgs:cg_iterations=20:initial_hessian=frame_hessian`. A value is TOML
/// (a number, `true`, a quoted or bare word). `iterations` caps that
/// solver's iterations per frame (default `default_iterations`; Newton at
/// most 20).
pub fn parse_solver_variants(names: &[String], default_iterations: usize) -> Result<Vec<SolverVariant>> {
    if names.is_empty() {
        return Err(HookeError::scene("--solvers", "name at least one solver to compare"));
    }
    names
        .iter()
        .map(|name| {
            let in_option = |error: HookeError| match error {
                HookeError::Scene { key, reason } => match key.strip_prefix("solver.") {
                    Some(key) if key != "kind" => HookeError::scene("--solvers", format!("{name}: {key}: {reason}")),
                    _ => HookeError::scene("--solvers", format!("{name}: {reason}")),
                },
                other => other,
            };
            let mut parts = name.split(':');
            let kind = parts.next().unwrap_or_default();
            let mut settings = SolverSettings::named(kind).map_err(in_option)?;
            settings.iterations = Some(match settings.kind.as_str() {
                "newton" => default_iterations.min(20),
                _ => default_iterations,
            });
            for option in parts {
                let Some((key, value)) = option.split_once('=') else {
                    return Err(HookeError::scene(
                        "--solvers",
                        format!("{name}: {option:?} must read key=value (a [solver] key of {kind}, `hooke solvers` lists them)"),
                    ));
                };
                settings.set(key, option_value(value)).map_err(in_option)?;
            }
            Ok(SolverVariant {
                label: name.clone(),
                settings,
            })
        })
        .collect()
}

/// A `key=value` option's value as TOML: a number, a boolean, an array or a
/// quoted string as written; any other word as a string.
fn option_value(text: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("value = {text}"))
        .ok()
        .and_then(|mut table| table.remove("value"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// One scene of a sweep (Liu 2018 thesis, Fig. 5.3): every network's spring
/// stiffnesses (stretch, shear, bend) times `stiffness`, and every cloth's
/// cells times `refinement` with those stiffnesses times `refinement` as
/// well, the thesis' rule for the same cloth finer (springs half as long,
/// twice as stiff; size and mass kept). A refinement that leaves a cloth
/// without whole cells is refused.
pub fn network_variant(scene: &Scene, stiffness: f64, refinement: f64) -> Result<Scene> {
    if !(stiffness > 0.0 && stiffness.is_finite() && refinement > 0.0 && refinement.is_finite()) {
        return Err(HookeError::scene(
            "--stiffness-scales",
            format!("scales must be positive and finite, got stiffness × {stiffness}, cells × {refinement}"),
        ));
    }
    if scene.file.networks.is_empty() {
        return Err(HookeError::scene(
            "--stiffness-scales",
            "sweeps spring networks ([[networks]]); this scene has none",
        ));
    }
    if refinement != 1.0 {
        let is_cloth = |n: &crate::scene::NetworkSection| matches!(n.shape, crate::scene::NetworkShape::Cloth { .. });
        if !scene.file.networks.iter().any(is_cloth) {
            return Err(HookeError::scene(
                "--cloth-refinements",
                "refines cloth networks; this scene has none",
            ));
        }
        // Refining renumbers the cloth's vertices: a selection by index would
        // land on other vertices.
        let file = &scene.file;
        let by_index = file
            .pins
            .iter()
            .map(|p| ("pins", &p.select))
            .chain(file.attachments.iter().map(|a| ("attachments", &a.select)))
            .chain(file.constraints.iter().map(|c| ("constraints", &c.select)))
            .chain(file.forces.iter().map(|f| ("forces", &f.select)))
            .find(|(_, select)| matches!(select, crate::model::Selection::Vertices(_)));
        if let Some((table, _)) = by_index {
            return Err(HookeError::scene(
                "--cloth-refinements",
                format!("refining renumbers the cloth's vertices, and [[{table}]] selects vertices by index: select them by plane or box instead"),
            ));
        }
    }
    let mut variant = scene.clone();
    for (index, network) in variant.file.networks.iter_mut().enumerate() {
        let mut scale = stiffness;
        if let crate::scene::NetworkShape::Cloth { cells, .. } = &mut network.shape {
            for count in cells.iter_mut() {
                let refined = *count as f64 * refinement;
                if (refined - refined.round()).abs() > 1e-9 || refined.round() < 1.0 {
                    return Err(HookeError::scene(
                        format!("networks[{index}].shape.cloth.cells"),
                        format!("{count} cells × {refinement} is not a whole number of cells"),
                    ));
                }
                *count = refined.round() as usize;
            }
            scale *= refinement;
        }
        network.stiffness *= scale;
        network.shear_stiffness *= scale;
        network.bend_stiffness *= scale;
    }
    Ok(variant)
}

/// One variant's and solver's [`means`] in a sweep: (variant, solver, points).
pub type SweepRow = (String, String, Vec<(usize, f64, f64)>);

/// Fig. 5.3: [`compare_solvers`] on each scene of a sweep, into a subfolder
/// per scene (named by its label), then `sweep.csv` (variant, solver,
/// iteration, relative_error, seconds: the geometric mean over the frames
/// after each iteration) and `sweep.png`, every variant's and solver's error
/// against iterations on one plot.
pub fn compare_solver_sweep(
    sweep: &[(String, Scene)],
    variants: &[SolverVariant],
    frames: usize,
    output: &Path,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Vec<SweepRow>> {
    let mut rows = Vec::new();
    let mut failure = None;
    for (label, scene) in sweep {
        match compare_solvers(scene, variants, frames, &output.join(label), stop) {
            Ok(samples) => {
                for variant in variants {
                    rows.push((label.clone(), variant.label.clone(), means(&variant.label, &samples)));
                }
            }
            Err(error) => {
                // What was finished is kept: the sweep's files hold the variants before it.
                failure = Some(HookeError::Solver {
                    reason: format!("variant {label}: {error}"),
                });
                break;
            }
        }
    }
    crate::output::run_files::create_output_directory(output)?;
    crate::output::atomic::write_atomically(&output.join("sweep.csv"), |writer| {
        writeln!(writer, "variant,solver,iteration,relative_error,seconds")?;
        for (label, solver, points) in &rows {
            for (iteration, error, seconds) in points {
                writeln!(writer, "{label},{solver},{iteration},{error:e},{seconds:e}")?;
            }
        }
        Ok(())
    })?;
    let series: Vec<(String, Vec<(f64, f64)>)> = rows
        .iter()
        .map(|(label, solver, points)| {
            let name = if variants.len() == 1 {
                label.clone()
            } else {
                format!("{label} {solver}")
            };
            (name, points.iter().map(|&(k, error, _)| (k as f64, error)).collect())
        })
        .collect();
    let title = format!(
        "{}: error per iteration across the sweep",
        sweep.first().map_or(String::new(), |s| s.1.name())
    );
    plot_convergence(&output.join("sweep.png"), &title, "iteration", &series)?;
    match failure {
        Some(error) => Err(error),
        None => Ok(rows),
    }
}

/// One iterate of one solver on one frame.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SolverSample {
    /// The solver's label.
    pub solver: String,
    /// The frame (step) number, from 0.
    pub frame: usize,
    /// The iteration number within the frame, from 1.
    pub iteration: usize,
    /// The minimiser's seconds in this frame up to this iterate.
    pub seconds: f64,
    /// (Φ(xᵏ) − Φ(x*)) / (Φ(x⁰) − Φ(x*)), with x* the converged Newton iterate.
    pub relative_error: f64,
}

/// Where a traced minimiser leaves its last trace.
type TraceSink = Arc<Mutex<Vec<TracePoint>>>;

/// A minimiser that keeps the trace of its last minimisation where the caller can read it.
struct Traced {
    inner: Box<dyn Minimizer>,
    trace: TraceSink,
}

impl Minimizer for Traced {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn minimize(&mut self, objective: &dyn Objective, u: &mut [f64]) -> Result<MinimizerReport> {
        let report = self.inner.minimize(objective, u)?;
        *self.trace.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = report.trace.clone();
        Ok(report)
    }
}

/// An integrator of the scene's kind (backward Euler or static) whose
/// minimiser is built from `settings` with tracing on.
fn traced_integrator(kind: &str, settings: SolverSettings) -> Result<(Box<dyn Integrator>, TraceSink)> {
    let settings = SolverSettings {
        trace: true,
        // A comparison measures the solver as it is: no sub-steps.
        max_step_halvings: 0,
        ..settings
    };
    let trace = Arc::new(Mutex::new(Vec::new()));
    let minimizer = Box::new(Traced {
        inner: settings.minimizer()?,
        trace: trace.clone(),
    });
    let integrator: Box<dyn Integrator> = match kind {
        "backward_euler" => Box::new(BackwardEuler::with_minimizer(settings, minimizer)),
        "static" => Box::new(StaticEquilibrium::with_minimizer(settings, minimizer)),
        other => {
            return Err(HookeError::scene(
                "integrator.kind",
                format!("solvers are compared on backward_euler or static steps, not on {other}"),
            ))
        }
    };
    Ok((integrator, trace))
}

/// Compares `variants` on the first `frames` steps of `scene`; writes
/// `solvers.csv` and the plots `solvers_iterations.png` and
/// `solvers_seconds.png` (the geometric mean of the relative error over the
/// frames) into `output`, and returns the samples. A frame where a solver or
/// the reference fails ends the comparison with that error, after the frames
/// before it are written.
pub fn compare_solvers(
    scene: &Scene,
    variants: &[SolverVariant],
    frames: usize,
    output: &Path,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Vec<SolverSample>> {
    let built = scene.build()?;
    for variant in variants {
        variant.settings.check_model(&built.model, "--solvers")?;
    }
    let kind = built.integrator.name().to_string();
    let h = scene.file.simulation.time_step;
    // 1e-9 of the body's size, far below the errors compared. Where rounding
    // keeps Newton wandering above that (a large, soft cloth), its iterate
    // after 200 iterations stands as x*: a budget, not a failure.
    let reference_settings = SolverSettings {
        tolerance: 1e-9,
        iterations: Some(200),
        ..SolverSettings::default()
    };
    let (mut reference, reference_trace) = traced_integrator(&kind, reference_settings)?;
    let mut compared = variants
        .iter()
        .map(|v| traced_integrator(&kind, v.settings.clone()).map(|(integrator, trace)| (v, integrator, trace)))
        .collect::<Result<Vec<_>>>()?;
    let model = &built.model;
    let mut state = built.initial_state.clone();
    let mut samples = Vec::new();
    let mut failure = None;
    'frames: for frame in 0..frames {
        if stop.is_some_and(|flag| flag.load(std::sync::atomic::Ordering::SeqCst)) {
            break;
        }
        let start = state.clone();
        if let Err(error) = reference.step(model, &mut state, h) {
            failure = Some(HookeError::Solver {
                reason: format!("the converged reference step failed at frame {frame}: {error}"),
            });
            break;
        }
        let exact = reference_trace.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let (Some(first), Some(last)) = (exact.first(), exact.last()) else {
            continue;
        };
        let (initial, minimum) = (first.value, last.value);
        for (variant, integrator, trace) in &mut compared {
            let mut trial = start.clone();
            if let Err(error) = integrator.step(model, &mut trial, h) {
                failure = Some(HookeError::Solver {
                    reason: format!("{} failed at frame {frame}: {error}", variant.label),
                });
                break 'frames;
            }
            let points = trace.lock().unwrap_or_else(|p| p.into_inner()).clone();
            for (iteration, point) in points.iter().enumerate().skip(1) {
                samples.push(SolverSample {
                    solver: variant.label.clone(),
                    frame,
                    iteration,
                    seconds: point.seconds,
                    relative_error: (point.value - minimum) / (initial - minimum),
                });
            }
        }
    }
    // What was finished is kept, also when a frame failed.
    crate::output::run_files::create_output_directory(output)?;
    write_samples(&output.join("solvers.csv"), &samples)?;
    plot_means(output, &scene.name(), variants, &samples)?;
    match failure {
        Some(error) => Err(error),
        None => Ok(samples),
    }
}

fn write_samples(path: &Path, samples: &[SolverSample]) -> Result<()> {
    crate::output::atomic::write_atomically(path, |writer| {
        writeln!(writer, "solver,frame,iteration,seconds,relative_error")?;
        for s in samples {
            writeln!(
                writer,
                "{},{},{},{:e},{:e}",
                s.solver, s.frame, s.iteration, s.seconds, s.relative_error
            )?;
        }
        Ok(())
    })
}

/// Per solver and iteration k: the geometric mean over the frames of the
/// relative error after k iterations, and the mean seconds to reach it. A
/// frame whose solver stopped before k (converged) counts with its last
/// iterate, so later iterations are not an average of the hardest frames only.
pub fn means(label: &str, samples: &[SolverSample]) -> Vec<(usize, f64, f64)> {
    let mut frames: std::collections::BTreeMap<usize, Vec<&SolverSample>> = Default::default();
    for s in samples.iter().filter(|s| s.solver == label) {
        frames.entry(s.frame).or_default().push(s);
    }
    let longest = frames.values().map(Vec::len).max().unwrap_or(0);
    let count = frames.len() as f64;
    (1..=longest)
        .map(|k| {
            let at = |trace: &[&SolverSample]| -> (f64, f64) {
                let sample = trace[k.min(trace.len()) - 1];
                (sample.relative_error.abs().max(1e-16).ln(), sample.seconds)
            };
            let log_error = frames.values().map(|t| at(t).0).sum::<f64>();
            let seconds = frames.values().map(|t| at(t).1).sum::<f64>();
            (k, (log_error / count).exp(), seconds / count)
        })
        .collect()
}

/// Per solver, over the frames: the mean iterations it took, the geometric
/// mean of the relative error where it stopped, and the mean seconds per frame.
pub fn frame_summary(label: &str, samples: &[SolverSample]) -> Option<(f64, f64, f64)> {
    let mut last: std::collections::BTreeMap<usize, &SolverSample> = Default::default();
    for s in samples.iter().filter(|s| s.solver == label) {
        last.insert(s.frame, s);
    }
    let count = last.len() as f64;
    (count > 0.0).then(|| {
        let iterations = last.values().map(|s| s.iteration as f64).sum::<f64>() / count;
        let log_error = last
            .values()
            .map(|s| s.relative_error.abs().max(1e-16).ln())
            .sum::<f64>()
            / count;
        let seconds = last.values().map(|s| s.seconds).sum::<f64>() / count;
        (iterations, log_error.exp(), seconds)
    })
}

fn plot_means(output: &Path, name: &str, variants: &[SolverVariant], samples: &[SolverSample]) -> Result<()> {
    let series = |x: fn(&(usize, f64, f64)) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        variants
            .iter()
            .map(|v| {
                let points = means(&v.label, samples).iter().map(|m| (x(m), m.1)).collect();
                (v.label.clone(), points)
            })
            .collect()
    };
    plot_convergence(
        &output.join("solvers_iterations.png"),
        &format!("{name}: error per iteration"),
        "iteration",
        &series(|m| m.0 as f64),
    )?;
    plot_convergence(
        &output.join("solvers_seconds.png"),
        &format!("{name}: error against time"),
        "seconds in the frame",
        &series(|m| m.2),
    )
}
