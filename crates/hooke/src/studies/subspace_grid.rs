//! `hooke compare SCENE --subspace-grid`: the accuracy and cost of a skinning
//! subspace over a grid of modes m and cubature points |𝒞| (Trusty et al. 2023,
//! Figs. 11 and 14). Each cell takes the scene's first step from its initial state by
//! subspace FEM iterated to convergence, so what it measures is the subspace
//! and its cubature, not a solver's budget:
//!
//! - `residual`: the norm, over the free DOFs, of the full-space gradient of
//!   the step's potential, ∇E(x) + M (x − xₙ − h vₙ)/h², at x = X̄ + B u*
//!   (0 would be the exact step; Fig. 11 left);
//! - `seconds_per_iteration` and `precompute_seconds` (Fig. 11 right);
//! - `max_displacement`: the largest vertex displacement from rest (a
//!   cantilever's tip deflection under gravity with a long step; Fig. 14,
//!   where too few points soften the body).
//!
//! A cell whose Newton iteration does not converge in 100 iterations (the
//! spurious modes of far too few points) is recorded with `converged` false.
//! The full-space Newton step is the reference row (`modes` 0). Writes
//! `grid.csv`, `residual.png`, `displacement.png` and `cost.png`.

use crate::error::{HookeError, Result};
use crate::integrate::Integrator;
use crate::model::{Model, State};
use crate::output::plot_lines;
use crate::reduced::{ReducedMethod, SubspaceBackwardEuler, SubspaceSettings};
use crate::scene::Scene;
use crate::solve::SolverSettings;
use std::fmt::Write as _;
use std::path::Path;
use web_time::Instant;

/// A cubature size of the grid: a multiple of m, a number, or every element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PointCount {
    /// This many points per mode (`20m`: 20 m).
    PerMode(usize),
    /// This many points whatever m (`300`).
    Fixed(usize),
    /// Every element a point (`all`): no cubature.
    All,
}

impl PointCount {
    /// "20m", "300" or "all".
    pub fn parse(text: &str) -> Result<PointCount> {
        let text = text.trim();
        let refuse = || {
            HookeError::scene(
                "--grid-points",
                format!("`{text}` is not a cubature size: write a count (300), a multiple of the modes (20m) or all"),
            )
        };
        if text == "all" {
            return Ok(PointCount::All);
        }
        let (number, per_mode) = match text.strip_suffix('m') {
            Some(number) => (number, true),
            None => (text, false),
        };
        let value: usize = number.parse().map_err(|_| refuse())?;
        match (value, per_mode) {
            (0, _) => Err(refuse()),
            (v, true) => Ok(PointCount::PerMode(v)),
            (v, false) => Ok(PointCount::Fixed(v)),
        }
    }

    /// |𝒞| for m modes on a body of `elements` elements.
    pub fn resolve(self, modes: usize, elements: usize) -> usize {
        match self {
            PointCount::PerMode(k) => k * modes,
            PointCount::Fixed(c) => c,
            PointCount::All => elements,
        }
        .clamp(1, elements)
    }
}

/// One cell of the grid (modes 0: the full-space reference).
#[derive(Clone, Debug)]
pub struct GridCell {
    /// m, the number of skinning modes (0: the full space).
    pub modes: usize,
    /// |𝒞|, the number of cubature points (the element count for the full space).
    pub points: usize,
    /// Newton reached the tolerance (else: the last of its iterations).
    pub converged: bool,
    /// Seconds to build the subspace (eigenmodes and cubature); 0 for the full space.
    pub precompute_seconds: f64,
    /// Newton iterations of the step.
    pub iterations: usize,
    /// Seconds per Newton iteration.
    pub seconds_per_iteration: f64,
    /// ‖∇E(x) + M (x − xₙ − h vₙ)/h²‖ over the free DOFs at the step's result, N (0: the exact step).
    pub residual: f64,
    /// The largest vertex displacement from rest after the step, m.
    pub max_displacement: f64,
}

/// What a grid found.
#[derive(Clone, Debug)]
pub struct SubspaceGrid {
    /// The subspace cells, mode count by mode count.
    pub cells: Vec<GridCell>,
    /// The full-space Newton step (`modes` 0).
    pub reference: GridCell,
    /// The residual of the start state itself (x = xₙ), the scale of the others.
    pub start_residual: f64,
}

/// ‖∇E(x) + M (x − xₙ − h vₙ)/h²‖ over the DOFs free at `time`.
fn step_residual(model: &Model, start: &State, x: &[f64], h: f64) -> Result<f64> {
    let time = start.time + h;
    let mut gradient = vec![0.0; x.len()];
    model.gradient(x, time, &mut gradient)?;
    let offset: Vec<f64> = x
        .iter()
        .zip(&start.positions)
        .zip(&start.velocities)
        .map(|((x, p), v)| x - p - h * v)
        .collect();
    let mut inertia = vec![0.0; x.len()];
    model.mass_multiply(&offset, &mut inertia);
    Ok(model
        .dof_map(time)
        .free_dofs
        .iter()
        .map(|&i| (gradient[i] + inertia[i] / (h * h)).powi(2))
        .sum::<f64>()
        .sqrt())
}

fn max_displacement(model: &Model, x: &[f64]) -> f64 {
    let rest = model.rest_positions();
    x.chunks(3)
        .zip(rest.chunks(3))
        .map(|(a, b)| a.iter().zip(b).map(|(p, q)| (p - q).powi(2)).sum::<f64>().sqrt())
        .fold(0.0, f64::max)
}

/// The iterations a cell may take to converge.
const MAX_ITERATIONS: usize = 100;

/// Newton to convergence whatever the scene's budget. The full space must
/// converge; a subspace cell that does not (spurious zero-energy modes when
/// |𝒞| is far too small) is recorded as such, with its last iterate.
fn converged(solver: &SolverSettings, subspace: bool) -> SolverSettings {
    SolverSettings {
        kind: "newton".to_string(),
        iterations: subspace.then_some(MAX_ITERATIONS),
        tolerance: solver.tolerance.min(1e-8),
        max_iterations: Some(solver.max_iterations.unwrap_or(MAX_ITERATIONS).max(MAX_ITERATIONS)),
        ..solver.clone()
    }
}

/// Runs the grid of `modes` × `points` on the scene's first step and writes
/// its table and plots into `output`.
pub fn compare_subspace_grid(
    scene: &Scene,
    modes: &[usize],
    points: &[PointCount],
    output: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<SubspaceGrid> {
    if modes.is_empty() || points.is_empty() || modes.contains(&0) {
        return Err(HookeError::scene(
            "--grid-modes",
            "the grid needs at least one mode count (each at least 1) and one cubature size",
        ));
    }
    let seed = scene.file.subspace.map_or(0, |s| s.seed);
    let mut full = scene.clone();
    full.file.subspace = None;
    full.file.solver = converged(&scene.file.solver, false);
    let mut built = full.build()?;
    let model = &built.model;
    let start = built.initial_state.clone();
    let h = scene.file.simulation.time_step;
    let elements = model.mesh().element_count();
    std::fs::create_dir_all(output).map_err(|e| HookeError::io(output, e))?;

    let tolerance = converged(&scene.file.solver, true).tolerance;
    let total = modes.len() * points.len() + 1;
    progress("full space", 0, total);
    let mut state = start.clone();
    let report = built.integrator.step(model, &mut state, h)?;
    let reference = GridCell {
        modes: 0,
        points: elements,
        converged: true,
        precompute_seconds: 0.0,
        iterations: report.iterations,
        seconds_per_iteration: report.total_seconds / report.iterations.max(1) as f64,
        residual: step_residual(model, &start, &state.positions, h)?,
        max_displacement: max_displacement(model, &state.positions),
    };
    let mut cells = Vec::new();
    for &m in modes {
        let mut sizes: Vec<usize> = points.iter().map(|p| p.resolve(m, elements)).collect();
        sizes.dedup();
        for c in sizes {
            progress(&format!("m = {m}, |𝒞| = {c}"), cells.len() + 1, total);
            let settings = SubspaceSettings {
                modes: m,
                cubature_points: Some(c),
                seed,
            };
            let cell_error = |error: HookeError| HookeError::Solver {
                reason: format!("the grid cell m = {m}, |𝒞| = {c}: {error}"),
            };
            let started = Instant::now();
            let mut stepper = SubspaceBackwardEuler::new(
                model,
                &settings,
                ReducedMethod::Newton,
                converged(&scene.file.solver, true),
            )
            .map_err(cell_error)?;
            let precompute_seconds = started.elapsed().as_secs_f64();
            let mut state = start.clone();
            let report = stepper.step(model, &mut state, h).map_err(cell_error)?;
            cells.push(GridCell {
                modes: m,
                points: c,
                converged: report.iterations < MAX_ITERATIONS || report.relative_increment <= tolerance,
                precompute_seconds,
                iterations: report.iterations,
                seconds_per_iteration: report.solve_seconds / report.iterations.max(1) as f64,
                residual: step_residual(model, &start, &state.positions, h)?,
                max_displacement: max_displacement(model, &state.positions),
            });
        }
    }
    progress("done", total, total);
    let grid = SubspaceGrid {
        cells,
        reference,
        start_residual: step_residual(model, &start, &start.positions, h)?,
    };
    write_grid(&grid, output)?;
    Ok(grid)
}

fn write_grid(grid: &SubspaceGrid, output: &Path) -> Result<()> {
    let mut table = String::from(
        "modes,points,converged,precompute_seconds,iterations,seconds_per_iteration,residual,relative_residual,max_displacement\n",
    );
    for cell in std::iter::once(&grid.reference).chain(&grid.cells) {
        let _ = writeln!(
            table,
            "{},{},{},{:e},{},{:e},{:e},{:e},{:e}",
            cell.modes,
            cell.points,
            cell.converged,
            cell.precompute_seconds,
            cell.iterations,
            cell.seconds_per_iteration,
            cell.residual,
            cell.residual / grid.start_residual.max(f64::MIN_POSITIVE),
            cell.max_displacement
        );
    }
    crate::output::atomic::write_bytes_atomically(&output.join("grid.csv"), table.as_bytes())?;
    let mut modes: Vec<usize> = grid.cells.iter().map(|c| c.modes).collect();
    modes.dedup();
    let curves = |value: &dyn Fn(&GridCell) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        modes
            .iter()
            .map(|&m| {
                let points = grid
                    .cells
                    .iter()
                    .filter(|c| c.modes == m)
                    .map(|c| ((c.points as f64).log10(), value(c)))
                    .collect();
                (format!("m = {m}"), points)
            })
            .collect()
    };
    let x_range = {
        let xs: Vec<f64> = grid.cells.iter().map(|c| (c.points as f64).log10()).collect();
        (
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    };
    let scale = grid.start_residual.max(f64::MIN_POSITIVE);
    plot_lines(
        &output.join("residual.png"),
        "full-space residual of the step at x = X̄ + Bu* (relative to the start's)",
        ("log10 cubature points", "log10 relative residual"),
        &curves(&|c| (c.residual / scale).log10()),
    )?;
    let mut displacement = curves(&|c| c.max_displacement);
    displacement.push((
        "full space".to_string(),
        vec![
            (x_range.0, grid.reference.max_displacement),
            (x_range.1, grid.reference.max_displacement),
        ],
    ));
    plot_lines(
        &output.join("displacement.png"),
        "largest displacement from rest after the step",
        ("log10 cubature points", "displacement (m)"),
        &displacement,
    )?;
    plot_lines(
        &output.join("cost.png"),
        "time per subspace FEM iteration",
        ("log10 cubature points", "ms per iteration"),
        &curves(&|c| 1e3 * c.seconds_per_iteration),
    )?;
    Ok(())
}
