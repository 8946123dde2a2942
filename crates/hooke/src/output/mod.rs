//! What a run leaves on disk: a ParaView frame series, the energies table and
//! a plot of the energies.

pub mod animation;
pub(crate) mod atomic;
mod energies;
mod font;
mod frame_reader;
mod obstacle_shapes;
mod plot;
mod render;
pub(crate) mod run_files;
mod vtk_series;
mod xml_check;

pub use crate::numbers::{readable, significant, tidy};
pub use animation::{render_frames, render_run, render_run_gif, run_frames, series_frames};
pub use energies::{EnergiesCsvWriter, OptionalColumns};
pub use frame_reader::{parse_frame, read_frame, FrameData};
pub(crate) use obstacle_shapes::obstacle_triangles;
pub use plot::{plot_convergence, plot_energies, plot_lines};
pub use render::{render, render_framed, ClipPlane, Framing, Image, RenderField, RenderInput, RenderSettings};
pub use vtk_series::{write_vtu, Frame, VtkSeriesWriter};

/// One row of the energies table.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct EnergyRecord {
    /// Simulation time, s.
    pub time: f64,
    /// Kinetic energy ½ vᵀMv, J.
    pub kinetic: f64,
    /// Elastic energy stored in the elements and springs, J.
    pub elastic: f64,
    /// Gravitational potential energy, J, measured from the gravity term's datum
    /// (for a scene, the run's initial state, so it starts at 0).
    pub gravitational: f64,
    /// Contact penalty energy.
    pub penalty: f64,
    /// kinetic + elastic + gravitational + penalty.
    pub total: f64,
    /// Work done against damping forces since the start (physical dissipation).
    pub dissipated: f64,
    /// Linear momentum Σ mᵢvᵢ, kg·m/s.
    pub linear_momentum: [f64; 3],
    /// Angular momentum Σ xᵢ × mᵢvᵢ about the origin, kg·m²/s (along z in 2D).
    pub angular_momentum: [f64; 3],
    /// Deepest penetration into an obstacle, m.
    pub max_penetration: f64,
    /// How far a mixed solve's stretch unknowns are from the stretches of its
    /// positions (None for solvers without stretch unknowns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraint_gap: Option<ConstraintGap>,
    /// The closest approach and the pairs of barrier contact (None without `[contact]`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub contact: Option<ContactRecord>,
}

/// Barrier contact at one state (Li et al. 2020): its energy is the
/// record's `penalty` (the contact energy column, in the total).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContactRecord {
    /// The smallest distance between two surface primitives (or a vertex
    /// and a plane) within d̂, m; ∞ when no pair is that close.
    pub smallest_distance: f64,
    /// The pairs within d̂ (point–triangle, edge–edge and vertex–plane).
    pub active_pairs: usize,
}

/// The constraint gap of mixed FEM (Trusty et al. 2023, Subspace Mixed Finite
/// Elements, Eq. 6): at each cubature point c, the relative distance
/// ‖S(F_c(u)) − S_c‖ / ‖S(F_c(u))‖ (Frobenius norms) between the stretch of the
/// deformation and the stretch unknown the solver carries. A converged step
/// has none; a step cut to a fixed number of iterations keeps some, and the
/// elastic energy it records is ψ at the unknowns, the energy it minimises.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConstraintGap {
    /// The largest gap over the points.
    pub largest: f64,
    /// The mean gap, weighted by the points' volumes (cubature weights).
    pub mean: f64,
}

/// A fresh, empty directory under the system temp dir for one test, so that
/// tests running in parallel never share files.
#[cfg(test)]
fn scratch_directory(tag: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or(0);
    let directory = std::env::temp_dir().join(format!(
        "hooke-output-{tag}-{}-{nanos}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    // A leftover from an earlier run would make the test see stale files.
    let _ = std::fs::remove_dir_all(&directory);
    directory
}
