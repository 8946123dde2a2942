//! `hooke compare SCENE --subspace`: a `[subspace]` scene under subspace
//! mixed FEM and subspace FEM at the scene's iteration budget, and subspace
//! FEM iterated to convergence as the reference (Trusty et al. 2023, Figs. 7, 13 and 16),
//! each run into a subfolder of its name. The body is cut into slabs
//! ("blocks") across an axis (by default its longest at rest), and each
//! block's angular momentum about that axis through the rest centroid, Σ mᵢ ((xᵢ − c) × vᵢ)·a, goes into
//! `subspace.csv` and `angular_momentum.png` (the block that turns most):
//! damped rotations show as a shrinking curve. Each block's turn about the
//! axis (the best-fit rotation angle of its vertices from rest, unwrapped;
//! the sword angle of Trusty et al. 2023, Fig. 7) goes into the table and `angle.png`. The first step is also iterated
//! 30 times by each solver, and the Newton decrement of every iteration goes
//! into `decrements.csv` and `decrements.png` (Trusty et al. 2023, Fig. 9).

use crate::error::{HookeError, Result};
use crate::output::{plot_lines, read_frame};
use crate::reduced::{ReducedMethod, SubspaceBackwardEuler, SubspaceSettings};
use crate::scene::Scene;
use nalgebra::Vector3;
use std::fmt::Write as _;
use std::path::Path;

/// The variants, in the order of the runs and of the table.
pub const VARIANTS: [&str; 3] = ["mixed_fem", "fem", "reference"];

/// Iterations of the first step for the convergence record.
pub const DECREMENT_ITERATIONS: usize = 30;

/// What a comparison found.
#[derive(Clone, Debug)]
pub struct SubspaceComparison {
    /// Per variant: its wall time (s) and the largest |L| of the reported block.
    pub runs: Vec<(String, f64, f64)>,
    /// The block the plot shows (0 at the low end of the longest axis).
    pub block: usize,
    /// Newton decrements of the first step's iterations, mixed FEM then FEM.
    pub decrements: [Vec<f64>; 2],
}

/// The scene as one variant: the solver kind, and for the reference no budget.
fn variant(scene: &Scene, name: &str) -> Result<Scene> {
    if scene.file.subspace.is_none() {
        return Err(HookeError::scene(
            "subspace",
            "the scene has no [subspace] table to compare in",
        ));
    }
    let mut scene = scene.clone();
    let solver = &mut scene.file.solver;
    let budget = solver.iterations.unwrap_or(1);
    match name {
        "mixed_fem" => {
            solver.kind = "mixed_sqp".to_string();
            solver.iterations = Some(budget);
        }
        "fem" => {
            solver.kind = "newton".to_string();
            solver.iterations = Some(budget);
        }
        _ => {
            solver.kind = "newton".to_string();
            solver.iterations = None;
            solver.tolerance = solver.tolerance.min(1e-7);
            solver.max_iterations = Some(solver.max_iterations.unwrap_or(100).max(100));
        }
    }
    Ok(scene)
}

/// The block of each vertex (slabs across `axis`, or the longest axis of the
/// rest shape), the axis and the rest centroid.
fn blocks_of(rest: &[Vector3<f64>], count: usize, axis: Option<usize>) -> (Vec<usize>, Vector3<f64>, Vector3<f64>) {
    let mut low = Vector3::repeat(f64::INFINITY);
    let mut high = Vector3::repeat(f64::NEG_INFINITY);
    for p in rest {
        low = low.inf(p);
        high = high.sup(p);
    }
    let extent = high - low;
    let axis_index = axis.unwrap_or_else(|| extent.imax());
    let mut axis = Vector3::zeros();
    axis[axis_index] = 1.0;
    let centroid = rest.iter().sum::<Vector3<f64>>() / rest.len() as f64;
    let blocks = rest
        .iter()
        .map(|p| {
            let s = (p[axis_index] - low[axis_index]) / extent[axis_index].max(f64::MIN_POSITIVE);
            ((s * count as f64) as usize).min(count - 1)
        })
        .collect();
    (blocks, axis, centroid)
}

/// Runs the variants into `output/<variant>/`, writes `subspace.csv`,
/// `angular_momentum.png`, `decrements.csv` and `decrements.png`.
///
/// One function of about 120 lines: the study runs three variants and writes their table and plots,
/// each from the same runs.
pub fn compare_subspace(
    scene: &Scene,
    output: &Path,
    block_count: usize,
    axis: Option<usize>,
    progress: &mut dyn FnMut(&str, usize, usize),
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<SubspaceComparison> {
    let block_count = block_count.max(1);
    let mut table = String::from("variant,time,block,angular_momentum,kinetic_energy,angle\n");
    let mut series: Vec<Vec<Vec<(f64, f64)>>> = Vec::new();
    let mut angles: Vec<Vec<Vec<(f64, f64)>>> = Vec::new();
    let mut seconds = Vec::new();
    let mut built_model = None;
    for name in VARIANTS {
        let scene = variant(scene, name)?;
        let directory = output.join(name);
        let (built, _, elapsed) =
            crate::studies::resolution::run_variant(&scene, name, &directory, Some(1), progress, stop)?;
        seconds.push(elapsed);
        let rest = built.model.mesh().vertices().to_vec();
        let masses = built.model.mass().lumped().to_vec();
        let (blocks, axis, centroid) = blocks_of(&rest, block_count, axis);
        let mut per_block = vec![Vec::new(); block_count];
        let mut angle_per_block = vec![Vec::new(); block_count];
        for (time, path) in crate::studies::resolution::frames(&directory)? {
            let frame = read_frame(&path)?;
            let mut momentum = vec![0.0; block_count];
            let mut kinetic = vec![0.0; block_count];
            // The block's best-fit turn about the axis: atan2(Σ m (r₀ × r)·a, Σ m r₀·r)
            // over offsets from the axis, at rest (r₀) and now (r).
            let mut turn = vec![(0.0, 0.0); block_count];
            for (i, (x, v)) in frame.positions.iter().zip(&frame.velocities).enumerate() {
                momentum[blocks[i]] += masses[i] * (x - centroid).cross(v).dot(&axis);
                kinetic[blocks[i]] += 0.5 * masses[i] * v.norm_squared();
                let across = |p: Vector3<f64>| (p - centroid) - axis * (p - centroid).dot(&axis);
                let (r0, r) = (across(rest[i]), across(*x));
                turn[blocks[i]].0 += masses[i] * r0.cross(&r).dot(&axis);
                turn[blocks[i]].1 += masses[i] * r0.dot(&r);
            }
            for b in 0..block_count {
                // Unwrapped from frame to frame: a block may turn past π.
                let raw = turn[b].0.atan2(turn[b].1);
                let previous = angle_per_block[b].last().map_or(0.0, |&(_, a): &(f64, f64)| a);
                let pi = std::f64::consts::PI;
                let angle = previous + (raw - previous + pi).rem_euclid(2.0 * pi) - pi;
                let _ = writeln!(table, "{name},{time},{b},{:e},{:e},{angle:e}", momentum[b], kinetic[b]);
                per_block[b].push((time, momentum[b]));
                angle_per_block[b].push((time, angle));
            }
        }
        series.push(per_block);
        angles.push(angle_per_block);
        built_model = Some((built.model, built.initial_state));
    }
    let csv = output.join("subspace.csv");
    crate::output::atomic::write_bytes_atomically(&csv, table.as_bytes())?;
    // The block that turns most in the reference.
    let peak = |curve: &[(f64, f64)]| curve.iter().fold(0.0f64, |m, (_, l)| m.max(l.abs()));
    let block = (0..block_count)
        .max_by(|&a, &b| peak(&series[2][a]).total_cmp(&peak(&series[2][b])))
        .unwrap_or(0);
    // Each variant's curve of that block, for one quantity.
    let of_block = |per_variant: &[Vec<Vec<(f64, f64)>>]| -> Vec<(String, Vec<(f64, f64)>)> {
        VARIANTS
            .iter()
            .zip(per_variant)
            .map(|(name, per_block)| (name.to_string(), per_block[block].clone()))
            .collect()
    };
    let axis_name = axis.map_or("longest", |a| ["x", "y", "z"][a]);
    plot_lines(
        &output.join("angular_momentum.png"),
        &format!("angular momentum of block {block} of {block_count} about the {axis_name} axis"),
        ("time (s)", "L (kg m²/s)"),
        &of_block(&series),
    )?;
    plot_lines(
        &output.join("angle.png"),
        &format!("turn of block {block} of {block_count} about the {axis_name} axis (best fit)"),
        ("time (s)", "angle (rad)"),
        &of_block(&angles),
    )?;
    let (model, start) = built_model.expect("three runs");
    let decrements = first_step_decrements(scene, &model, &start)?;
    let mut text = String::from("solver,iteration,decrement\n");
    for (name, values) in ["mixed_fem", "fem"].iter().zip(&decrements) {
        for (k, d) in values.iter().enumerate() {
            let _ = writeln!(text, "{name},{},{d:e}", k + 1);
        }
    }
    crate::output::atomic::write_bytes_atomically(&output.join("decrements.csv"), text.as_bytes())?;
    let curves: Vec<(String, Vec<(f64, f64)>)> = ["mixed_fem", "fem"]
        .iter()
        .zip(&decrements)
        .map(|(name, values)| {
            let points = values
                .iter()
                .enumerate()
                .filter(|(_, d)| **d > 0.0)
                .map(|(k, d)| ((k + 1) as f64, d.log10()))
                .collect();
            (name.to_string(), points)
        })
        .collect();
    plot_lines(
        &output.join("decrements.png"),
        "first step: Newton decrement per iteration",
        ("iteration", "log10 decrement"),
        &curves,
    )?;
    Ok(SubspaceComparison {
        runs: VARIANTS
            .iter()
            .zip(&seconds)
            .zip(&series)
            .map(|((name, s), per_block)| (name.to_string(), *s, peak(&per_block[block])))
            .collect(),
        block,
        decrements,
    })
}

/// The decrement of each of the first step's iterations, mixed FEM then FEM.
fn first_step_decrements(
    scene: &Scene,
    model: &crate::model::Model,
    start: &crate::model::State,
) -> Result<[Vec<f64>; 2]> {
    let section = scene.file.subspace.expect("checked by variant");
    let settings = SubspaceSettings {
        modes: section.modes,
        cubature_points: section.cubature_points,
        seed: section.seed,
    };
    let solver = crate::solve::SolverSettings {
        iterations: Some(DECREMENT_ITERATIONS),
        tolerance: 0.0,
        ..scene.file.solver.clone()
    };
    let mut result = [Vec::new(), Vec::new()];
    for (slot, method) in result.iter_mut().zip([ReducedMethod::MixedSqp, ReducedMethod::Newton]) {
        let mut stepper = SubspaceBackwardEuler::new(model, &settings, method, solver.clone())?;
        let mut state = start.clone();
        crate::integrate::Integrator::step(&mut stepper, model, &mut state, scene.file.simulation.time_step)?;
        *slot = stepper.last_iterations().iter().map(|r| r.decrement).collect();
    }
    Ok(result)
}
