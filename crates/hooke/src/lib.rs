//! Hooke: finite element elastodynamics of deformable solids.
//!
//! The data flow: scene file → [`scene::Scene`] → [`model::Model`] (mesh,
//! materials, mass, boundary conditions, forces) → an [`integrate::Integrator`]
//! stepping a [`model::State`] → outputs (VTK series, energies CSV, summary, plot).
//!
//! ```no_run
//! use hooke::scene::Scene;
//!
//! # fn main() -> Result<(), hooke::HookeError> {
//! let scene = Scene::from_file("scenes/falling_bar.toml".as_ref())?;
//! let mut built = scene.build()?;
//! let settings = scene.run_settings(None);
//! let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
//!     .notes(built.notes.clone())
//!     .run(built.initial_state.clone())?;
//! // `into_result` turns a run that stopped early into its error (the outputs so far stay on disk).
//! let outcome = outcome.into_result()?;
//! println!("{} steps; final energies {:?}", outcome.summary.statistics.steps, outcome.records.last());
//! # Ok(())
//! # }
//! ```

pub mod checkpoint;
pub mod coarsen;
pub mod disk_cache;
pub mod divergence;
pub mod energy_record;
pub mod error;
pub mod fem;
pub mod integrate;
pub mod io;
pub mod linalg;
pub mod material;
pub mod mesh;
pub mod meshing;
pub mod modal;
pub mod model;
pub mod output;
pub mod reduced;
pub mod run_record;
pub mod scene;
pub mod simulation;
pub mod solve;
pub mod studies;
pub mod workers;

pub use error::{HookeError, Result};
