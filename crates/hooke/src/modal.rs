//! Modal analysis: the lowest vibration modes of a model about its initial
//! state, K u = ω² M u on the free DOFs (pinned components held), written as a
//! frequency table and mode-shape frames.

use crate::error::{HookeError, Result};
use crate::linalg::{smallest_eigenpairs, EigenSettings};
use crate::model::{vertex_point, Model, State};
use crate::output::{Frame, VtkSeriesWriter};
use nalgebra::Vector3;
use std::path::{Path, PathBuf};

/// The lowest modes: eigenvalues ω² (rad²/s²) and mode shapes over all DOFs
/// (zero on pinned ones), M-orthonormal.
#[derive(Clone, Debug)]
pub struct Modes {
    /// ω² of each mode, (rad/s)², increasing.
    pub eigenvalues: Vec<f64>,
    /// Each mode's shape: a value per DOF of the model (d per vertex), zero on pinned ones.
    pub shapes: Vec<Vec<f64>>,
    /// Each mode's relative residual ‖Ku − ω²Mu‖ / ‖Ku‖, as the eigensolver reports it.
    pub residuals: Vec<f64>,
    /// max Kᵢᵢ/Mᵢᵢ over the free DOFs: a bound of the largest ω² of the model,
    /// the scale against which an eigenvalue is zero to rounding.
    pub stiffness_scale: f64,
    /// How many rigid motions the pins leave free ([`free_rigid_motions`]):
    /// at most this many of the lowest modes can be rigid.
    pub rigid_motions: usize,
}

/// Eigenvalues within this fraction of the stiffness scale are zero to rounding:
/// rigid-body modes (the assembled K has relative rounding near 1e-16, and an
/// eigensolver's residual tolerance near 1e-10 of the scale).
const RIGID_FRACTION: f64 = 1e-8;

impl Modes {
    /// Whether mode `i` is a rigid-body mode: one of the rigid motions the
    /// pins leave free, with |ω²| zero to rounding. (The scale alone misleads
    /// where a vertex has almost no mass, as a coarsened void does: its Kᵢᵢ/Mᵢᵢ
    /// then dwarfs the elastic modes.)
    pub fn is_rigid(&self, i: usize) -> bool {
        i < self.rigid_motions && self.eigenvalues[i].abs() <= RIGID_FRACTION * self.stiffness_scale
    }

    /// Frequencies in Hz: 0 for rigid-body modes, NaN for clearly negative
    /// eigenvalues (an unstable state, as in buckling).
    pub fn frequencies(&self) -> Vec<f64> {
        (0..self.eigenvalues.len())
            .map(|i| match self.eigenvalues[i] {
                _ if self.is_rigid(i) => 0.0,
                l if l > 0.0 => l.sqrt() / (2.0 * std::f64::consts::PI),
                _ => f64::NAN,
            })
            .collect()
    }
}

/// An upper bound of the largest angular frequency ω (rad/s) of the free
/// DOFs about `state`, by Gershgorin's theorem on M⁻¹K with the lumped mass:
/// ω² ≤ maxᵢ Σⱼ |Kᵢⱼ| / mᵢ. Cheap (one assembly), and within a small factor
/// of the true ω for the meshes Hooke builds; for stability estimates.
pub fn highest_frequency_bound(model: &Model, state: &State) -> Result<f64> {
    let dofs = model.dof_map(state.time);
    let stiffness = model.stiffness(&state.positions, state.time, false)?;
    let (pattern, source) = model.pattern().restrict(&dofs.free_index);
    let mut row_sums = vec![0.0; pattern.size];
    for column in 0..pattern.size {
        for position in pattern.column_starts[column]..pattern.column_starts[column + 1] {
            let row = pattern.row_indices[position];
            let value = stiffness[source[position]].abs();
            row_sums[row] += value;
            if row != column {
                row_sums[column] += value;
            }
        }
    }
    let lumped = model.mass().lumped();
    let d = model.dimension();
    let bound = dofs
        .free_dofs
        .iter()
        .zip(&row_sums)
        .map(|(&dof, sum)| sum / lumped[dof / d])
        .fold(0.0, f64::max);
    Ok(bound.sqrt())
}

/// The state of `model` in a frame a run wrote (its positions and
/// velocities), at `time` (which decides the pins that hold): for modes and
/// matrices about a deformed state, and for a run that starts from a frame.
pub fn state_at_frame(model: &Model, frame: &Path, time: f64) -> Result<State> {
    let data = crate::output::read_frame(frame)?;
    let vertices = model.mesh().vertex_count();
    if data.positions.len() != vertices {
        return Err(HookeError::parse(
            frame,
            None,
            format!(
                "the frame has {} vertices, the scene's model {vertices}: it is a frame of another scene",
                data.positions.len()
            ),
        ));
    }
    if !time.is_finite() {
        return Err(HookeError::scene("--time", format!("must be finite, got {time}")));
    }
    let d = model.dimension();
    let flat = |points: &[Vector3<f64>]| -> Vec<f64> {
        points
            .iter()
            .flat_map(|p| p.iter().take(d).copied().collect::<Vec<_>>())
            .collect()
    };
    Ok(State {
        time,
        positions: flat(&data.positions),
        velocities: flat(&data.velocities),
    })
}

/// The `count` lowest modes about `state` (stiffness at its positions, pins at its time).
///
/// A cantilever's lowest modes: two bending modes (one per transverse
/// direction) well below the twist and the stretch, each shape zero where
/// the clamp holds it:
///
/// ```
/// use hooke::linalg::EigenSettings;
/// use hooke::modal::lowest_modes;
/// use hooke::prelude::*;
/// use nalgebra::Vector3;
///
/// # fn main() -> hooke::Result<()> {
/// let mesh = box_mesh(&BoxMeshOptions {
///     origin: Vector3::zeros(),
///     size: Vector3::new(0.8, 0.1, 0.1),
///     cells: [16, 2, 2],
///     tets_per_hex: TetsPerHex::Six,
/// })?;
/// let steel = MaterialParameters { youngs_modulus: 2e11, poisson_ratio: 0.3, density: 7800.0 };
/// let material = IsotropicMaterial::shared(MaterialModel::Linear, &steel);
/// let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Consistent)?;
/// let clamped = Selection::Plane { point: [0.0; 3], normal: [-1.0, 0.0, 0.0], tolerance: None }
///     .vertices(model.mesh(), "clamp")?;
/// model.add_pin(Pin::new(clamped.clone(), Motion::Fixed {}, None));
/// let modes = lowest_modes(&model, &model.initial_state(), 4, &EigenSettings::default())?;
/// let hertz: Vec<f64> = modes.eigenvalues.iter().map(|w2| w2.sqrt() / std::f64::consts::TAU).collect();
/// assert!(hertz[2] > 4.0 * hertz[1], "two bending modes, then the rest: {hertz:?}");
/// // Euler–Bernoulli: f₁ = 1.875² / 2π · √(EI / ρA) / L² = 128 Hz; two linear
/// // tetrahedra across the section are stiffer in bending (about 164 Hz).
/// assert!(hertz[0] > 128.0 && hertz[0] < 1.35 * 128.0, "{}", hertz[0]);
/// // The first mode bends: its tip moves across the bar, not along it.
/// let tip = mesh.vertices.iter().position(|p| p.x == 0.8).unwrap();
/// let shape = &modes.shapes[0][3 * tip..3 * tip + 3];
/// assert!(shape[0].abs() < 0.2 * shape[1].abs().max(shape[2].abs()), "{shape:?}");
/// assert!(clamped.iter().all(|&v| (0..3).all(|c| modes.shapes[0][3 * v + c] == 0.0)));
/// # Ok(())
/// # }
/// ```
pub fn lowest_modes(model: &Model, state: &State, count: usize, settings: &EigenSettings) -> Result<Modes> {
    if count == 0 {
        return Err(HookeError::scene("modes", "ask for at least one mode"));
    }
    let dofs = model.dof_map(state.time);
    let stiffness = model.stiffness(&state.positions, state.time, false)?;
    let (pattern, source) = model.pattern().restrict(&dofs.free_index);
    let k: Vec<f64> = source.iter().map(|&s| stiffness[s]).collect();
    let m: Vec<f64> = source.iter().map(|&s| model.mass().values()[s]).collect();
    let stiffness_scale = pattern
        .diagonal_positions()
        .into_iter()
        .map(|d| k[d].abs() / m[d])
        .fold(0.0, f64::max);
    let pairs = smallest_eigenpairs(&pattern, &k, &m, count.min(dofs.free_count()), settings)?;
    let shapes = pairs
        .vectors
        .iter()
        .map(|free| {
            let mut full = vec![0.0; model.dof_count()];
            dofs.scatter(free, &mut full);
            full
        })
        .collect();
    Ok(Modes {
        rigid_motions: free_rigid_motions(model, state.time),
        eigenvalues: pairs.values,
        shapes,
        residuals: pairs.residuals,
        stiffness_scale,
    })
}

/// Writes `modes.csv` (mode, ω², ω, frequency, residual) and a VTK series with
/// one frame per mode (its "time" is the mode number), each shape scaled so that
/// its largest displacement is a tenth of the body's size. Returns the paths.
pub fn write_modes(model: &Model, state: &State, modes: &Modes, directory: &Path) -> Result<Vec<PathBuf>> {
    crate::output::run_files::create_output_directory(directory)?;
    // Fewer modes than last time must not leave the old shapes in the series.
    crate::output::run_files::clear_previous_modes(directory)?;
    let csv = directory.join("modes.csv");
    let mut text = String::from("mode,eigenvalue,angular_frequency,frequency_hz,residual\n");
    for (i, ((l, f), r)) in modes
        .eigenvalues
        .iter()
        .zip(modes.frequencies())
        .zip(&modes.residuals)
        .enumerate()
    {
        // Adding +0 turns −0 into 0: "-0e0" in a table reads as a sign that means something.
        let (l, f) = (l + 0.0, f + 0.0);
        text.push_str(&format!("{},{l:e},{:e},{f:e},{r:e}\n", i + 1, l.max(0.0).sqrt()));
    }
    crate::output::atomic::write_bytes_atomically(&csv, text.as_bytes())?;
    let mut writer = VtkSeriesWriter::create(directory, "mode")?;
    let size = model.length_scale();
    let densities = vec![0.0; model.mesh().element_count()];
    let d = model.dimension();
    let edges = model.spring_edges();
    let zero = vec![Vector3::zeros(); model.mesh().vertex_count()];
    let materials = model.material_numbers();
    for (i, shape) in modes.shapes.iter().enumerate() {
        let largest = shape.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(f64::MIN_POSITIVE);
        let positions: Vec<Vector3<f64>> = (0..model.mesh().vertex_count())
            .map(|v| vertex_point(&state.positions, v, d) + vertex_point(shape, v, d) * (0.1 * size / largest))
            .collect();
        writer.write_frame(&Frame {
            time: (i + 1) as f64,
            mesh: model.mesh(),
            positions: &positions,
            velocities: &zero,
            strain_energy_density: &densities,
            edges: &edges,
            materials: &materials,
            continuous_displacement: &[],
            contact_force: &[],
        })?;
    }
    Ok(vec![csv, writer.finish()?])
}

/// Writes the free-DOF stiffness (at `state`), mass and, with Rayleigh damping,
/// damping matrices as `K.mtx`, `M.mtx`, `D.mtx` (Matrix Market, symmetric),
/// the potential's free gradient `g.mtx` and value `energy.txt`, the load
/// `f.mtx` and the DOF map `free_dofs.csv`.
pub fn export_matrices(model: &Model, state: &State, directory: &Path) -> Result<Vec<PathBuf>> {
    use crate::io::matrix_market::write_symmetric;
    crate::output::run_files::create_output_directory(directory)?;
    let dofs = model.dof_map(state.time);
    let (pattern, source) = model.pattern().restrict(&dofs.free_index);
    let restrict = |values: &[f64]| -> Vec<f64> { source.iter().map(|&s| values[s]).collect() };
    let stiffness = model.stiffness(&state.positions, state.time, false)?;
    let note = format!(
        "Hooke: {} free DOFs of {} (pinned components removed), interleaved x, y(, z) per vertex",
        dofs.free_count(),
        model.dof_count()
    );
    let mut written = Vec::new();
    let mut write = |name: &str, values: &[f64], what: &str| -> Result<()> {
        let path = directory.join(name);
        write_symmetric(&path, &pattern, &restrict(values), &format!("{what}\n{note}"))?;
        written.push(path);
        Ok(())
    };
    write("K.mtx", &stiffness, "stiffness K = d²E/dx² at the state")?;
    write("M.mtx", model.mass().values(), "mass matrix M")?;
    if let Some(damping) = model.damping_values(&state.positions)? {
        write("D.mtx", &damping, "Rayleigh damping D = alpha M + beta K")?;
    }
    // The potential E(x, t) and its free gradient, for checks of other front ends (the Python package).
    let mut gradient = vec![0.0; model.dof_count()];
    let energy = model.gradient(&state.positions, state.time, &mut gradient)?;
    let free_gradient: Vec<f64> = dofs.free_dofs.iter().map(|&dof| gradient[dof]).collect();
    let path = directory.join("g.mtx");
    crate::io::matrix_market::write_vector(
        &path,
        &free_gradient,
        &format!(
            "gradient dE/dx of the potential at the state (t = {}), N\n{note}",
            state.time
        ),
    )?;
    written.push(path);
    let path = directory.join("energy.txt");
    crate::output::atomic::write_bytes_atomically(&path, format!("{energy:e}\n").as_bytes())?;
    written.push(path);
    let mut load = vec![0.0; model.dof_count()];
    model.external_force(state.time, &mut load);
    let free_load: Vec<f64> = dofs.free_dofs.iter().map(|&dof| load[dof]).collect();
    let path = directory.join("f.mtx");
    crate::io::matrix_market::write_vector(
        &path,
        &free_load,
        &format!("external load f (gravity and forces at t = {}), N\n{note}", state.time),
    )?;
    written.push(path);
    // Which DOF of the model each row is: vertex and component.
    let d = model.dimension();
    let mut text = String::from("row,dof,vertex,component\n");
    for (row, &dof) in dofs.free_dofs.iter().enumerate() {
        text.push_str(&format!("{},{dof},{},{}\n", row + 1, dof / d, ["x", "y", "z"][dof % d]));
    }
    let path = directory.join("free_dofs.csv");
    crate::output::atomic::write_bytes_atomically(&path, text.as_bytes())?;
    written.push(path);
    Ok(written)
}

/// How many rigid motions the pins active at `time` leave free: the rigid motions (2D: two
/// translations and a turn; 3D: three of each) that vanish on every pinned
/// DOF. They are the zero modes at rest, whatever the spread of the other
/// eigenvalues (interface penalties can put the elastic ones far below any
/// fixed fraction of the largest).
pub fn free_rigid_motions(model: &Model, time: f64) -> usize {
    let d = model.dimension();
    let dofs = model.dof_map(time);
    let rest = model.rest_positions();
    let vertices = rest.len() / d;
    let centroid: Vec<f64> = (0..d)
        .map(|a| (0..vertices).map(|v| rest[v * d + a]).sum::<f64>() / vertices.max(1) as f64)
        .collect();
    let axes: Vec<[usize; 2]> = if d == 2 {
        vec![[0, 1]]
    } else {
        vec![[1, 2], [2, 0], [0, 1]]
    };
    let motions = d + axes.len();
    let pinned: Vec<usize> = (0..rest.len()).filter(|&i| dofs.free_index[i].is_none()).collect();
    if pinned.is_empty() {
        return motions;
    }
    let length = model.length_scale().max(f64::MIN_POSITIVE);
    let basis = nalgebra::DMatrix::from_fn(pinned.len(), motions, |row, motion| {
        let i = pinned[row];
        let (v, a) = (i / d, i % d);
        if motion < d {
            return f64::from(u8::from(motion == a));
        }
        // A small turn in the plane of `axes`: (−y, x) about the centroid.
        let [p, q] = axes[motion - d];
        let offset = |b: usize| (rest[v * d + b] - centroid[b]) / length;
        match a {
            _ if a == p => -offset(q),
            _ if a == q => offset(p),
            _ => 0.0,
        }
    });
    let singular = basis.singular_values();
    let largest = singular.max();
    motions - singular.iter().filter(|&&s| s > 1e-10 * largest.max(1.0)).count()
}
