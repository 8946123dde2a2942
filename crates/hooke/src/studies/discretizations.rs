//! `hooke compare SCENE --discretizations`: the discontinuous Galerkin studies
//! of the Chen 2019 thesis on a 2D scene (§2.2.2, §3.2 with Fig. 3.3, §5.2–5.3).
//!
//! - [`sweep_penalties`] (Fig. 3.3): the lowest non-rigid eigenvalue of the
//!   scene's model, every body made discontinuous (BZ, then IP) at each
//!   penalty η_f, beside the continuous one; `penalty.csv` and `penalty.png`.
//! - [`sweep_refinements`] (the numerical-stiffening table): the same
//!   eigenvalue with every rectangle body's cells multiplied by each factor,
//!   continuous, BZ and IP (each at the scene's penalty, or the default);
//!   `refinement.csv` and `refinement.png`.
//! - [`compare_energies`] (Ch. 5): the scene as written, and the scene with
//!   continuous bodies stepped by semi-implicit Euler where it names `dgsi`,
//!   run into `discontinuous/` and `continuous/`; `energies.png`, the total
//!   energy of both. The total counts the interface energy as elastic energy
//!   (the code Chen's thesis was run with, hyperbolicFE, leaves it out).
//!
//! Eigenvalues are those of K u = λ M u about the rest state with the
//! scene's pins, dense for small models and by the shift-invert Lanczos
//! solver above; the rigid motions the pins leave free are skipped. For
//! interior penalty below its coercivity threshold the lowest one is
//! negative, and is reported as it is.

use crate::error::{HookeError, Result};
use crate::fem::Formulation;
use crate::integrate::IntegratorConfig;
use crate::linalg::EigenSettings;
use crate::output::{plot_energies, plot_lines, EnergyRecord};
use crate::scene::{DiscontinuousSection, Discretization, MeshSource, Scene};
use crate::simulation::{RunSettings, Simulation};
use std::fmt::Write as _;
use std::path::Path;

/// The scene with every body continuous, or discontinuous with `formulation` and `penalty`.
pub fn with_discretization(scene: &Scene, discontinuous: Option<(Formulation, Option<f64>)>) -> Scene {
    let mut scene = scene.clone();
    for body in &mut scene.file.bodies {
        body.discretization = match discontinuous {
            None => Discretization::Continuous,
            Some((formulation, penalty)) => {
                Discretization::Discontinuous(DiscontinuousSection { formulation, penalty })
            }
        };
    }
    scene
}

/// The penalty the scene gives its first discontinuous body, if any.
fn scene_penalty(scene: &Scene) -> Option<f64> {
    scene.file.bodies.iter().find_map(|b| match &b.discretization {
        Discretization::Discontinuous(section) => section.penalty,
        Discretization::Continuous => None,
    })
}

fn require_planar(scene: &Scene) -> Result<()> {
    if scene.file.dimension != 2 {
        return Err(HookeError::scene(
            "dimension",
            "discontinuous Galerkin comparisons need a 2D scene (dimension = 2)",
        ));
    }
    Ok(())
}

/// Models up to this many free DOFs are solved densely: interior penalty
/// below its threshold is indefinite far below what the shift-invert solver's
/// automatic shifts reach.
const DENSE_LIMIT: usize = 1500;

/// The lowest eigenvalue above the rigid modes of the scene's model at rest.
pub fn lowest_elastic_eigenvalue(scene: &Scene) -> Result<f64> {
    let built = scene.build()?;
    let model = &built.model;
    let dofs = model.dof_map(0.0);
    let rigid = crate::modal::free_rigid_motions(model, 0.0);
    if dofs.free_count() <= rigid {
        return Err(HookeError::Solver {
            reason: "every free motion is rigid: the model has no elastic mode".into(),
        });
    }
    if dofs.free_count() <= DENSE_LIMIT {
        let stiffness = model.stiffness(&built.initial_state.positions, 0.0, false)?;
        let (pattern, source) = model.pattern().restrict(&dofs.free_index);
        let dense = |values: &[f64]| {
            let mut matrix = nalgebra::DMatrix::zeros(pattern.size, pattern.size);
            for column in 0..pattern.size {
                for position in pattern.column_starts[column]..pattern.column_starts[column + 1] {
                    let row = pattern.row_indices[position];
                    let value = values[source[position]];
                    matrix[(row, column)] = value;
                    matrix[(column, row)] = value;
                }
            }
            matrix
        };
        let (k, m) = (dense(&stiffness), dense(model.mass().values()));
        let l = m.cholesky().ok_or_else(|| HookeError::LinearSolver {
            reason: "the mass matrix is not positive definite".into(),
        })?;
        let l_inverse = l.l().try_inverse().ok_or_else(|| HookeError::LinearSolver {
            reason: "the mass matrix is singular".into(),
        })?;
        let a = &l_inverse * k * l_inverse.transpose();
        let values: Vec<f64> = ((&a + a.transpose()) * 0.5)
            .symmetric_eigenvalues()
            .iter()
            .copied()
            .collect();
        return Ok(lowest_without_rigid(values, rigid));
    }
    let modes = crate::modal::lowest_modes(model, &built.initial_state, rigid + 1, &EigenSettings::default())?;
    Ok(lowest_without_rigid(modes.eigenvalues, rigid))
}

/// The smallest eigenvalue once the `rigid` ones nearest zero are set aside
/// (negative ones, of an indefinite interior penalty, lie below the zeros).
fn lowest_without_rigid(mut values: Vec<f64>, rigid: usize) -> f64 {
    values.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    values[rigid..].iter().copied().fold(f64::INFINITY, f64::min)
}

/// One row of the penalty sweep: η_f, then the BZ and IP eigenvalues.
pub type PenaltyRow = [f64; 3];

/// Fig. 3.3: returns the continuous eigenvalue and one row per penalty.
pub fn sweep_penalties(
    scene: &Scene,
    penalties: &[f64],
    output: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<(f64, Vec<PenaltyRow>)> {
    require_planar(scene)?;
    if let Some(bad) = penalties.iter().find(|p| !(p.is_finite() && **p > 0.0)) {
        return Err(HookeError::scene(
            "--penalties",
            format!("each must be finite and > 0, got {bad}"),
        ));
    }
    let continuous = lowest_elastic_eigenvalue(&with_discretization(scene, None))?;
    let mut rows = Vec::with_capacity(penalties.len());
    for (i, &eta) in penalties.iter().enumerate() {
        progress("penalties", i, penalties.len());
        let [bz, ip] = [Formulation::Bz, Formulation::Ip]
            .map(|f| lowest_elastic_eigenvalue(&with_discretization(scene, Some((f, Some(eta))))));
        rows.push([eta, bz?, ip?]);
    }
    progress("penalties", penalties.len(), penalties.len());
    crate::output::run_files::create_output_directory(output)?;
    let mut csv = String::from("penalty,bz,ip,continuous\n");
    for row in &rows {
        let _ = writeln!(csv, "{:e},{:e},{:e},{continuous:e}", row[0], row[1], row[2]);
    }
    crate::output::atomic::write_bytes_atomically(&output.join("penalty.csv"), csv.as_bytes())?;
    let line = |column: usize| rows.iter().map(|r| (r[0].log10(), r[column])).collect::<Vec<_>>();
    let first = penalties.iter().copied().fold(f64::INFINITY, f64::min).log10();
    let last = penalties.iter().copied().fold(f64::NEG_INFINITY, f64::max).log10();
    plot_lines(
        &output.join("penalty.png"),
        &format!("{}: lowest elastic eigenvalue against the penalty", scene.name()),
        ("log₁₀ η_f (Pa/m)", "λ (rad²/s²)"),
        &[
            ("DG-BZ".to_string(), line(1)),
            ("DG-IP".to_string(), line(2)),
            ("continuous".to_string(), vec![(first, continuous), (last, continuous)]),
        ],
    )?;
    Ok((continuous, rows))
}

/// One row of the refinement sweep: the factor, the continuous mesh's
/// triangle count, then the continuous, BZ and IP eigenvalues.
#[derive(Clone, Debug, PartialEq)]
pub struct RefinementRow {
    /// The factor every rectangle body's cell counts were multiplied by.
    pub factor: usize,
    /// Triangles of the continuous mesh, all bodies together.
    pub triangles: usize,
    /// The lowest non-rigid eigenvalue λ (rad²/s²): continuous, BZ, IP.
    pub eigenvalues: [f64; 3],
}

/// The numerical-stiffening table: every rectangle body refined by each factor.
pub fn sweep_refinements(
    scene: &Scene,
    factors: &[usize],
    output: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Vec<RefinementRow>> {
    require_planar(scene)?;
    if !scene
        .file
        .bodies
        .iter()
        .all(|b| matches!(b.mesh, MeshSource::Rectangle(_)))
    {
        return Err(HookeError::scene(
            "bodies.mesh",
            "--refinements refines generated rectangles; every body needs mesh = { rectangle = … }",
        ));
    }
    if factors.contains(&0) {
        return Err(HookeError::scene("--refinements", "factors must be ≥ 1"));
    }
    let penalty = scene_penalty(scene);
    let mut rows = Vec::with_capacity(factors.len());
    for (i, &factor) in factors.iter().enumerate() {
        progress("refinements", i, factors.len());
        let mut refined = scene.clone();
        let mut triangles = 0;
        for body in &mut refined.file.bodies {
            if let MeshSource::Rectangle(section) = &mut body.mesh {
                section.cells = section.cells.map(|c| c * factor);
                triangles += 2 * section.cells[0] * section.cells[1];
            }
        }
        let variants = [None, Some((Formulation::Bz, penalty)), Some((Formulation::Ip, penalty))];
        let mut eigenvalues = [0.0; 3];
        for (slot, variant) in eigenvalues.iter_mut().zip(variants) {
            *slot = lowest_elastic_eigenvalue(&with_discretization(&refined, variant))?;
        }
        rows.push(RefinementRow {
            factor,
            triangles,
            eigenvalues,
        });
    }
    progress("refinements", factors.len(), factors.len());
    crate::output::run_files::create_output_directory(output)?;
    let mut csv = String::from("factor,triangles,continuous,bz,ip\n");
    for row in &rows {
        let [c, b, i] = row.eigenvalues;
        let _ = writeln!(csv, "{},{},{c:e},{b:e},{i:e}", row.factor, row.triangles);
    }
    crate::output::atomic::write_bytes_atomically(&output.join("refinement.csv"), csv.as_bytes())?;
    let line = |k: usize| -> Vec<(f64, f64)> {
        rows.iter()
            .map(|r| ((r.triangles as f64).log10(), r.eigenvalues[k]))
            .collect()
    };
    plot_lines(
        &output.join("refinement.png"),
        &format!("{}: lowest elastic eigenvalue against resolution", scene.name()),
        ("log₁₀ triangles", "λ (rad²/s²)"),
        &[
            ("continuous".to_string(), line(0)),
            ("DG-BZ".to_string(), line(1)),
            ("DG-IP".to_string(), line(2)),
        ],
    )?;
    Ok(rows)
}

/// Ch. 5: the scene as written and its continuous twin, run into
/// `discontinuous/` and `continuous/`; returns each run's energy records.
pub fn compare_energies(
    scene: &Scene,
    output: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Vec<(String, Vec<EnergyRecord>)>> {
    require_planar(scene)?;
    let mut continuous = with_discretization(scene, None);
    if scene.file.integrator.name()? == "dgsi" {
        continuous.file.integrator =
            IntegratorConfig::from_name("semi_implicit_backward_euler").expect("a registered integrator");
    }
    let mut runs = Vec::new();
    for (name, variant) in [("discontinuous", scene), ("continuous", &continuous)] {
        let mut built = variant.build()?;
        let settings = RunSettings {
            output_directory: output.join(name),
            ..variant.run_settings(None)
        };
        let mut report = |step, total| progress(name, step, total);
        let mut simulation = Simulation::new(&built.model, built.integrator.as_mut(), &settings)
            .notes(built.notes.clone())
            .scene_text(variant.text.clone())
            .progress(&mut report);
        if let Some(flag) = stop {
            simulation = simulation.stop_when(flag);
        }
        let outcome = simulation.run(built.initial_state.clone())?;
        if let Some(failure) = outcome.failure {
            return Err(HookeError::Solver {
                reason: format!("the {name} run stopped: {failure}"),
            });
        }
        runs.push((format!("{name} ({})", built.integrator.name()), outcome.records));
    }
    let series: Vec<(&str, &[EnergyRecord])> = runs.iter().map(|(n, r)| (n.as_str(), r.as_slice())).collect();
    plot_energies(
        &output.join("energies.png"),
        &format!("{}: total energy, continuous and discontinuous", scene.name()),
        &series,
    )?;
    Ok(runs)
}
