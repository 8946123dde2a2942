//! `hooke compare SCENE --eigenfit`: the same scene at two resolutions and
//! with the two corrections of the coarse one (EigenFit paper, §4): `fine` (the
//! `[eigenfit]` reference mesh, plain FEM, the ground truth), `coarse` (plain
//! FEM), `dac` and `eigenfit`, each run into a subfolder of that name. The
//! coarse runs are compared with the fine one frame by frame on the fine
//! mesh: each fine rest vertex takes the coarse solution interpolated
//! barycentrically in the coarse tetrahedron that holds it at rest, and the
//! largest distance (m) and velocity difference (m/s) over the fine vertices
//! go into `errors.csv` and `errors.png`.

use crate::error::{HookeError, Result};
use crate::mesh::TetMesh;
use crate::output::{plot_lines, read_frame};
use crate::scene::EigenFitMethod;
use crate::scene::Scene;
use crate::simulation::Simulation;
use nalgebra::{Vector3, Vector4};
use std::path::{Path, PathBuf};

/// The variants, in the order of the run and of the table.
pub const VARIANTS: [&str; 4] = ["fine", "coarse", "dac", "eigenfit"];

/// One row of `errors.csv`: at `time`, (position, velocity) error of coarse, DAC and EigenFit.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorRow {
    /// The frame's time, s.
    pub time: f64,
    /// (largest position error m, largest velocity error m/s) of coarse, DAC and EigenFit.
    pub errors: [(f64, f64); 3],
}

/// What a comparison found: the rows, and each variant's wall time.
#[derive(Clone, Debug)]
pub struct ResolutionComparison {
    /// One row per frame of the fine run.
    pub rows: Vec<ErrorRow>,
    /// Each variant's name and the wall-clock time of its run, s.
    pub seconds: Vec<(String, f64)>,
}

/// The scene as one variant.
fn variant(scene: &Scene, name: &str) -> Result<Scene> {
    if scene.file.eigenfit.is_none() {
        return Err(HookeError::scene(
            "eigenfit",
            "the scene has no [eigenfit] table to compare with",
        ));
    }
    let mut scene = scene.clone();
    match name {
        "fine" => scene = scene.eigenfit_reference()?,
        "coarse" => scene.file.eigenfit = None,
        "dac" => scene.file.eigenfit.as_mut().expect("checked above").method = EigenFitMethod::Dac,
        _ => scene.file.eigenfit.as_mut().expect("checked above").method = EigenFitMethod::Eigenfit,
    }
    Ok(scene)
}

/// Runs the four variants into `output/<variant>/` and writes the errors.
pub fn compare_resolutions(
    scene: &Scene,
    output: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<ResolutionComparison> {
    // The corrected variants are built first: a scene they refuse (an
    // integrator EigenFit cannot correct) fails before the long fine run.
    // The fine rest eigenvalues they compute stay in the cache for the runs.
    for name in ["eigenfit", "dac"] {
        variant(scene, name)?.build()?;
    }
    let mut seconds = Vec::new();
    let mut meshes = Vec::new();
    for name in VARIANTS {
        let scene = variant(scene, name)?;
        let directory = output.join(name);
        let (built, _, elapsed) = run_variant(&scene, name, &directory, None, progress, stop)?;
        seconds.push((name.to_string(), elapsed));
        let tets = built
            .model
            .mesh()
            .tetrahedra()
            .cloned()
            .ok_or_else(|| HookeError::scene("eigenfit", "the comparison needs a tetrahedral (3D) body"))?;
        meshes.push((directory, tets));
    }
    let rows = frame_errors(&meshes)?;
    write_errors(output, &rows)?;
    Ok(ResolutionComparison { rows, seconds })
}

/// Runs one variant of a comparison into `directory`, writing a frame every
/// `frame_every` steps (None: the scene's own, or every step if it writes
/// none, since the comparison reads them); returns the built scene, the
/// run's outcome and its seconds. A run that stops early is an error naming the variant.
pub(crate) fn run_variant(
    scene: &Scene,
    name: &str,
    directory: &Path,
    frame_every: Option<usize>,
    progress: &mut dyn FnMut(&str, usize, usize),
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<(crate::scene::BuiltScene, crate::simulation::RunOutcome, f64)> {
    let mut settings = scene.run_settings(Some(directory));
    settings.vtk_every = frame_every.unwrap_or(settings.vtk_every).max(1);
    let mut built = scene.build()?;
    let started = web_time::Instant::now();
    let mut simulation_progress = |step: usize, total: usize| progress(name, step, total);
    let mut simulation = Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .notes(built.notes.clone())
        .scene_text(scene.text.clone())
        .progress(&mut simulation_progress);
    if let Some(stop) = stop {
        simulation = simulation.stop_when(stop);
    }
    let mut outcome = simulation.run(built.initial_state.clone())?;
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(failure) = outcome.failure.take() {
        return Err(HookeError::Solver {
            reason: format!("the {name} run stopped: {failure}"),
        });
    }
    Ok((built, outcome, elapsed))
}

/// The frames of a run folder with their times, from its `frame.pvd`.
pub(crate) fn frames(directory: &Path) -> Result<Vec<(f64, PathBuf)>> {
    let index = directory.join("frame.pvd");
    let text = std::fs::read_to_string(&index).map_err(|e| HookeError::io(&index, e))?;
    let mut frames = Vec::new();
    for line in text.lines().filter(|l| l.contains("<DataSet")) {
        let attribute = |key: &str| {
            line.split(&format!("{key}=\""))
                .nth(1)
                .and_then(|rest| rest.split('"').next())
        };
        let (Some(time), Some(file)) = (attribute("timestep"), attribute("file")) else {
            continue;
        };
        let time: f64 = time
            .parse()
            .map_err(|_| HookeError::parse(&index, None, format!("bad timestep {time}")))?;
        frames.push((time, directory.join(file)));
    }
    Ok(frames)
}

fn frame_errors(meshes: &[(PathBuf, TetMesh)]) -> Result<Vec<ErrorRow>> {
    let (fine_directory, fine_mesh) = &meshes[0];
    let fine_frames = frames(fine_directory)?;
    let coarse_mesh = &meshes[1].1;
    let weights = coarse_mesh.locate(&fine_mesh.vertices);
    let mut series: Vec<Vec<(f64, PathBuf)>> = Vec::new();
    for (directory, _) in &meshes[1..] {
        series.push(frames(directory)?);
    }
    let mut rows = Vec::new();
    for (k, (time, fine_path)) in fine_frames.iter().enumerate() {
        let fine = read_frame(fine_path)?;
        let mut errors = [(0.0, 0.0); 3];
        for (v, frames) in series.iter().enumerate() {
            let Some((other_time, path)) = frames.get(k) else {
                return Err(HookeError::Solver {
                    reason: format!("{} has fewer frames than the fine run", VARIANTS[v + 1]),
                });
            };
            if (other_time - time).abs() > 1e-9 * time.abs().max(1.0) {
                return Err(HookeError::Solver {
                    reason: format!(
                        "frame {k}: the fine run is at t = {time}, {} at {other_time}",
                        VARIANTS[v + 1]
                    ),
                });
            }
            let coarse = read_frame(path)?;
            let interpolate = |field: &[Vector3<f64>], (e, w): &(usize, Vector4<f64>)| -> Vector3<f64> {
                let tet = coarse_mesh.tets[*e];
                (0..4).map(|i| field[tet[i]] * w[i]).sum()
            };
            let (mut position, mut velocity) = (0.0_f64, 0.0_f64);
            for (i, embedded) in weights.iter().enumerate() {
                position = position.max((interpolate(&coarse.positions, embedded) - fine.positions[i]).norm());
                velocity = velocity.max((interpolate(&coarse.velocities, embedded) - fine.velocities[i]).norm());
            }
            errors[v] = (position, velocity);
        }
        rows.push(ErrorRow { time: *time, errors });
    }
    Ok(rows)
}

fn write_errors(output: &Path, rows: &[ErrorRow]) -> Result<()> {
    let path = output.join("errors.csv");
    let mut text = String::from(
        "time,coarse_position,coarse_velocity,dac_position,dac_velocity,eigenfit_position,eigenfit_velocity\n",
    );
    for row in rows {
        let e = row.errors;
        text.push_str(&format!(
            "{},{:e},{:e},{:e},{:e},{:e},{:e}\n",
            row.time, e[0].0, e[0].1, e[1].0, e[1].1, e[2].0, e[2].1
        ));
    }
    std::fs::write(&path, text).map_err(|e| HookeError::io(&path, e))?;
    let series: Vec<(String, Vec<(f64, f64)>)> = (0..3)
        .map(|v| {
            (
                format!("{} (position)", VARIANTS[v + 1]),
                rows.iter().map(|r| (r.time, r.errors[v].0)).collect(),
            )
        })
        .collect();
    plot_lines(
        &output.join("errors.png"),
        "largest position error against the fine mesh",
        ("time [s]", "error [m]"),
        &series,
    )
}

/// The scene without its `[eigenfit]` table: the plain coarse model.
pub fn coarse_scene(scene: &Scene) -> Result<Scene> {
    variant(scene, "coarse")
}

/// One pair of the EigenFit correction as the simulation uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModePairing {
    /// The coarse mode, from 0.
    pub coarse: usize,
    /// The fine mode its ratio comes from (None: it keeps ratio 1, unpaired).
    pub fine: Option<usize>,
    /// The MAC of the two shapes (NaN where the meshes give none to compare).
    pub mac: f64,
    /// The ratio λ_fine/λ_coarse it is corrected by.
    pub ratio: f64,
}

/// The frequency table of an `[eigenfit]` scene and the pairing its simulation uses.
#[derive(Clone, Debug, PartialEq)]
pub struct FrequencyTable {
    /// Frequencies (Hz) of each mode: fine, coarse, corrected.
    pub rows: Vec<[f64; 3]>,
    /// The scene's `modes` corrected modes with their partners (empty for DAC).
    pub pairs: Vec<ModePairing>,
}

/// Frequencies (Hz) of the `count` lowest modes at rest of the fine mesh, the
/// coarse mesh and the corrected coarse model as the simulation uses it
/// (EigenFit: rᵢ λᵢ^coarse with the scene's pairing, for the scene's
/// `modes` = m lowest, and λᵢ^coarse unchanged above them whatever `count`
/// is; DAC: the first elastic ratio times every λᵢ^coarse), written to
/// `frequencies.csv` (mode, fine_hz, coarse_hz, corrected_hz) in `output`;
/// for EigenFit also the pairing, to `pairing.csv` (coarse_mode, fine_mode,
/// mac, ratio; modes from 1, an empty fine_mode where unpaired).
pub fn write_frequency_table(scene: &Scene, count: usize, output: &Path) -> Result<FrequencyTable> {
    let section = scene
        .file
        .eigenfit
        .clone()
        .ok_or_else(|| HookeError::scene("eigenfit", "the scene has no [eigenfit] table"))?;
    let coarse = variant(scene, "coarse")?.build()?.model;
    let fine = || -> Result<crate::model::Model> { Ok(variant(scene, "fine")?.build()?.model) };
    // The modes side by side, paired by index (DAC's first elastic ratio).
    let fit = crate::model::EigenFit::new(fine()?, count)?
        .with_cache(scene.cache_folder())
        .with_pairing(crate::model::eigenfit::Pairing::Index)
        .rest_fit(&coarse, 0.0)?;
    // The correction as the simulation builds it: its modes, its pairing.
    let used = match section.method {
        EigenFitMethod::Eigenfit => {
            let mut correction = crate::model::EigenFit::new(fine()?, section.modes)?
                .with_cache(scene.cache_folder())
                .with_pairing(section.pairing);
            if let Some(threshold) = section.pairing_threshold {
                correction = correction.with_pairing_threshold(threshold)?;
            }
            Some(correction.rest_fit(&coarse, 0.0)?)
        }
        EigenFitMethod::Dac => None,
    };
    let dac = fit.ratios.iter().find(|r| **r != 1.0).copied().unwrap_or(1.0);
    let hertz = |eigenvalue: f64| eigenvalue.max(0.0).sqrt() / (2.0 * std::f64::consts::PI);
    let rows: Vec<[f64; 3]> = (0..fit.coarse_eigenvalues.len())
        .map(|i| {
            let coarse = fit.coarse_eigenvalues[i];
            let corrected = match (&used, section.method) {
                (Some(used), _) => used.ratios.get(i).map_or(coarse, |r| r * coarse),
                (None, _) if fit.ratios[i] == 1.0 => coarse,
                (None, _) => dac * coarse,
            };
            [hertz(fit.fine_eigenvalues[i]), hertz(coarse), hertz(corrected)]
        })
        .collect();
    let pairs: Vec<ModePairing> = used
        .iter()
        .flat_map(|used| {
            (0..used.ratios.len()).map(|i| {
                let pair = used.shape_pairs.get(i).copied().flatten();
                let by_index = section.pairing == crate::model::eigenfit::Pairing::Index;
                let threshold = section
                    .pairing_threshold
                    .unwrap_or(crate::model::eigenfit::DEFAULT_PAIRING_THRESHOLD);
                ModePairing {
                    coarse: i,
                    fine: match (by_index || used.shape_pairs.is_empty(), pair) {
                        (true, _) => Some(i),
                        (false, Some((j, mac))) if mac >= threshold => Some(j),
                        _ => None,
                    },
                    mac: pair.map_or(f64::NAN, |(_, mac)| mac),
                    ratio: used.ratios[i],
                }
            })
        })
        .collect();
    crate::output::run_files::create_output_directory(output)?;
    let mut text = String::from("mode,fine_hz,coarse_hz,corrected_hz\n");
    for (i, [fine, coarse, corrected]) in rows.iter().enumerate() {
        text.push_str(&format!("{},{fine:e},{coarse:e},{corrected:e}\n", i + 1));
    }
    let path = output.join("frequencies.csv");
    std::fs::write(&path, text).map_err(|e| HookeError::io(&path, e))?;
    if !pairs.is_empty() {
        let mut text = String::from("coarse_mode,fine_mode,mac,ratio\n");
        for pair in &pairs {
            let fine = pair.fine.map_or(String::new(), |j| (j + 1).to_string());
            text.push_str(&format!("{},{fine},{:e},{:e}\n", pair.coarse + 1, pair.mac, pair.ratio));
        }
        let path = output.join("pairing.csv");
        std::fs::write(&path, text).map_err(|e| HookeError::io(&path, e))?;
    }
    Ok(FrequencyTable { rows, pairs })
}

/// One step's lowest elastic eigenvalues and how many matched a rest mode.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeTrack {
    /// The time of the state before the step, s.
    pub time: f64,
    /// The lowest eigenvalues of the elastic stiffness against M, (rad/s)².
    pub eigenvalues: Vec<f64>,
    /// How many of those modes still match a rest mode (|uᵀMu_rest| > 0.6).
    pub matched: usize,
}

/// Chen et al. 2019 (EigenFit), Fig. 5: runs the scene (its `[eigenfit]` correction left out) and
/// records, before every step, the `count` lowest eigenvalues of the elastic
/// stiffness against M and how many of those modes still match a rest mode
/// (|uᵀMu_rest| > 0.6): where modes cross, the count drops, and EigenFit's
/// ratios no longer apply to the modes they were fitted on. Writes
/// `mode_tracks.csv` (time, matched, eigenvalue_1 …) and `mode_tracks.png`
/// (the lowest three) in `output`.
pub fn track_modes(scene: &Scene, count: usize, output: &Path) -> Result<Vec<ModeTrack>> {
    let mut plain = scene.clone();
    plain.file.eigenfit = None;
    let mut built = plain.build()?;
    let h = plain.file.simulation.time_step;
    let steps = (plain.file.simulation.duration / h).round() as usize;
    let probe = crate::model::EigenFit::with_ratios(vec![1.0; count])?;
    let mut state = built.initial_state.clone();
    let mut tracks = Vec::with_capacity(steps + 1);
    for step in 0..=steps {
        probe.refit(&built.model, &state, state.time + h)?;
        let report = probe.report();
        tracks.push(ModeTrack {
            time: state.time,
            eigenvalues: report.eigenvalues,
            matched: report.matched,
        });
        if step < steps {
            built.integrator.step(&built.model, &mut state, h)?;
        }
    }
    crate::output::run_files::create_output_directory(output)?;
    let mut text = String::from("time,matched");
    for i in 0..count {
        text.push_str(&format!(",eigenvalue_{}", i + 1));
    }
    text.push('\n');
    for track in &tracks {
        text.push_str(&format!("{},{}", track.time, track.matched));
        for value in &track.eigenvalues {
            text.push_str(&format!(",{value:e}"));
        }
        text.push('\n');
    }
    let path = output.join("mode_tracks.csv");
    std::fs::write(&path, text).map_err(|e| HookeError::io(&path, e))?;
    let series: Vec<(String, Vec<(f64, f64)>)> = (0..count.min(3))
        .map(|i| {
            (
                format!("mode {}", i + 1),
                tracks
                    .iter()
                    .filter_map(|t| t.eigenvalues.get(i).map(|v| (t.time, *v)))
                    .collect(),
            )
        })
        .collect();
    plot_lines(
        &output.join("mode_tracks.png"),
        "lowest eigenvalues of the elastic stiffness over time",
        ("time [s]", "eigenvalue [rad²/s²]"),
        &series,
    )?;
    Ok(tracks)
}
