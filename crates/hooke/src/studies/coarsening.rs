//! `hooke compare FINE_SCENE --coarsening DIR`: the fine scene and the two
//! coarse scenes `hooke coarsen` wrote into DIR (numerically coarsened,
//! `coarse.toml`, and the naive volume average, `coarse_averaged.toml`) run one
//! after the other into `fine/`, `coarsened/` and `averaged/` (Kharevych 2010
//! thesis, Figs. 4.1 and 4.8: the coarse body should move like the fine one, faster).
//!
//! Written: `trajectories.csv` and `trajectories.png`, the centre of mass's
//! displacement along gravity over time for each run; `tracked_point.csv`
//! and `tracked_point.png`, the same for one fine vertex (the one the fine run
//! moved furthest by its end), read from the fine run's frames and from the
//! coarse runs' frames shown on the fine mesh (their `fine.pvd`);
//! `extent.csv` and `extent.png`, how much the body's extent along gravity
//! (its highest fine vertex's height over its lowest) has changed from rest,
//! from the same frames: the squash of a body that lands, where its
//! stiffness shows while the centre of mass follows the contact; and
//! `runs.csv`, each run's size, steps, iterations, wall-clock time and time in
//! steps, with its speed-up over the fine run (time per step). The displacement comes from the gravitational energy:
//! E_g = −Σ mᵢ g·xᵢ, so E_g(0) − E_g(t) = M |g| (x_c(t) − x_c(0))·ĝ, exactly,
//! for each run's own mass M (a coarse mesh that misses some of the fine
//! body's volume carries less).

use crate::error::{HookeError, Result};
use crate::output::{plot_lines, EnergyRecord};
use crate::scene::Scene;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// One run of the comparison.
pub struct CoarseningRun {
    /// Which run: `fine`, `coarsened` or `averaged`.
    pub name: &'static str,
    /// Elements of the run's mesh.
    pub elements: usize,
    /// Steps taken.
    pub steps: usize,
    /// Minimiser iterations summed over the steps.
    pub iterations: usize,
    /// Wall-clock time of the run (stepping and outputs, the fine frames of a coarse run included), s.
    pub seconds: f64,
    /// Of that, the time in steps, s: what the speed-up compares.
    pub step_seconds: f64,
    /// Displacement of the centre of mass along gravity at each record, m.
    pub drops: Vec<(f64, f64)>,
}

impl CoarseningRun {
    /// Time in steps per step, s.
    pub fn seconds_per_step(&self) -> f64 {
        self.step_seconds / self.steps.max(1) as f64
    }

    /// How many times faster a step than in `fine`.
    pub fn speedup_over(&self, fine: &CoarseningRun) -> f64 {
        fine.seconds_per_step() / self.seconds_per_step()
    }
}

/// Runs the three scenes into `output` and writes the trajectories and timings.
pub fn compare_coarsening(
    fine: &Scene,
    coarsening: &Path,
    output: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
    stop: Option<&AtomicBool>,
) -> Result<Vec<CoarseningRun>> {
    let gravity = nalgebra::Vector3::from(fine.file.gravity).norm();
    if gravity == 0.0 {
        return Err(HookeError::scene(
            "gravity",
            "the comparison follows the fall of the centre of mass: the scene needs gravity",
        ));
    }
    let coarsened = Scene::from_file(&coarsening.join("coarse.toml"))?;
    let averaged = Scene::from_file(&coarsening.join("coarse_averaged.toml"))?;
    crate::output::run_files::create_output_directory(output)?;
    let frame_interval = match fine.file.output.vtk_every {
        0 => 10,
        every => every,
    };
    let mut runs = Vec::new();
    for (name, scene) in [("fine", fine), ("coarsened", &coarsened), ("averaged", &averaged)] {
        // Every run writes frames at the same steps, for the tracked point.
        let (built, outcome, _) = crate::studies::resolution::run_variant(
            scene,
            name,
            &output.join(name),
            Some(frame_interval),
            progress,
            stop,
        )?;
        let mass: f64 = built.model.mass().lumped().iter().sum();
        let first = outcome.records.first().map_or(0.0, |r: &EnergyRecord| r.gravitational);
        runs.push(CoarseningRun {
            name,
            elements: built.model.mesh().element_count(),
            steps: outcome.summary.statistics.steps,
            iterations: outcome.summary.statistics.total_iterations,
            seconds: outcome.summary.wall_seconds,
            step_seconds: outcome.summary.statistics.step_seconds,
            drops: outcome
                .records
                .iter()
                .map(|r| (r.time, (first - r.gravitational) / (mass * gravity)))
                .collect(),
        });
    }
    let drops: Vec<Vec<(f64, f64)>> = runs.iter().map(|run| run.drops.clone()).collect();
    write_columns(
        &runs,
        &drops,
        &output.join("trajectories"),
        "the centre of mass's displacement along gravity, m",
        (
            &format!("{}: centre of mass, fine and coarse", fine.name()),
            "centre of mass moved along gravity (m)",
        ),
    )?;
    write_runs(&runs, output)?;
    track_point(&runs, output, nalgebra::Vector3::from(fine.file.gravity) / gravity)?;
    Ok(runs)
}

/// The fine vertex the fine run moved furthest, followed through every run's frames on the fine mesh.
fn track_point(runs: &[CoarseningRun], output: &Path, down: nalgebra::Vector3<f64>) -> Result<()> {
    let fine_frames = crate::output::series_frames(&output.join("fine"), "frame")?;
    let first = crate::output::read_frame(&fine_frames[0].1)?;
    let last = crate::output::read_frame(&fine_frames[fine_frames.len() - 1].1)?;
    let rest = first.mesh.vertices().to_vec();
    let vertex = (0..rest.len())
        .max_by(|&a, &b| {
            let moved = |v: usize| (last.positions[v] - rest[v]).norm();
            moved(a).total_cmp(&moved(b))
        })
        .unwrap_or(0);
    let rest_extent = extent_along(&rest, down);
    let (mut points, mut extents) = (Vec::new(), Vec::new());
    for run in runs {
        let frames = match run.name {
            "fine" => fine_frames.clone(),
            _ => crate::output::series_frames(&output.join(run.name), "fine")?,
        };
        let (mut point, mut extent) = (Vec::with_capacity(frames.len()), Vec::with_capacity(frames.len()));
        for (time, path) in &frames {
            let frame = crate::output::read_frame(path)?;
            if frame.positions.len() != rest.len() {
                return Err(HookeError::parse(
                    path,
                    None,
                    format!(
                        "the frame holds {} vertices, the fine mesh {}",
                        frame.positions.len(),
                        rest.len()
                    ),
                ));
            }
            point.push((*time, (frame.positions[vertex] - rest[vertex]).dot(&down)));
            extent.push((*time, extent_along(&frame.positions, down) - rest_extent));
        }
        points.push(point);
        extents.push(extent);
    }
    write_columns(
        runs,
        &points,
        &output.join("tracked_point"),
        &format!(
            "fine vertex {vertex} at rest ({}, {}, {}); displacement along gravity, m",
            rest[vertex].x, rest[vertex].y, rest[vertex].z
        ),
        (
            &format!("fine vertex {vertex}: displacement along gravity"),
            "displacement along gravity (m)",
        ),
    )?;
    write_columns(
        runs,
        &extents,
        &output.join("extent"),
        &format!("the body's extent along gravity less its extent at rest ({rest_extent} m), m"),
        (
            "the body's extent along gravity, change from rest",
            "change of extent along gravity (m)",
        ),
    )
}

/// The spread of `points` along `down`: the highest one's height over the lowest's.
fn extent_along(points: &[nalgebra::Vector3<f64>], down: nalgebra::Vector3<f64>) -> f64 {
    let heights = points.iter().map(|p| p.dot(&down));
    heights.clone().fold(f64::NEG_INFINITY, f64::max) - heights.fold(f64::INFINITY, f64::min)
}

/// `columns` (one per run, (time, value) at the frames) as `stem`.csv, headed
/// by the comment `note`, and plotted as `stem`.png with `title` and `label`.
fn write_columns(
    runs: &[CoarseningRun],
    columns: &[Vec<(f64, f64)>],
    stem: &Path,
    note: &str,
    (title, label): (&str, &str),
) -> Result<()> {
    let mut csv = format!("# {note}\ntime");
    for run in runs {
        let _ = write!(csv, ",{}", run.name);
    }
    csv.push('\n');
    let rows = columns.iter().map(Vec::len).min().unwrap_or(0);
    for i in 0..rows {
        let _ = write!(csv, "{}", columns[0][i].0);
        for column in columns {
            let _ = write!(csv, ",{:e}", column[i].1);
        }
        csv.push('\n');
    }
    crate::output::atomic::write_bytes_atomically(&stem.with_extension("csv"), csv.as_bytes())?;
    let series: Vec<(String, Vec<(f64, f64)>)> = runs
        .iter()
        .zip(columns)
        .map(|(run, column)| (format!("{} ({} elements)", run.name, run.elements), column.clone()))
        .collect();
    plot_lines(&stem.with_extension("png"), title, ("time (s)", label), &series)
}

/// `runs.csv`: each run's size, work and time, with its speed-up over the fine run.
fn write_runs(runs: &[CoarseningRun], output: &Path) -> Result<()> {
    let mut table =
        String::from("run,elements,steps,iterations,wall_seconds,step_seconds,seconds_per_step,speedup_over_fine\n");
    for run in runs {
        let _ = writeln!(
            table,
            "{},{},{},{},{},{},{},{}",
            run.name,
            run.elements,
            run.steps,
            run.iterations,
            run.seconds,
            run.step_seconds,
            run.seconds_per_step(),
            run.speedup_over(&runs[0])
        );
    }
    crate::output::atomic::write_bytes_atomically(&output.join("runs.csv"), table.as_bytes())
}
