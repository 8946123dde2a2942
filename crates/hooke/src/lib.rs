//! Hooke: finite element elastodynamics of deformable solids.
//!
//! The data flow: scene file → [`scene::Scene`] → [`model::Model`] (mesh,
//! materials, mass, boundary conditions, forces) → an [`integrate::Integrator`]
//! stepping a [`model::State`] → outputs (VTK series, energies CSV, summary, plot).

pub mod comparison;
pub mod error;
pub mod fem;
pub mod integrate;
pub mod io;
pub mod linalg;
pub mod material;
pub mod mesh;
pub mod model;
pub mod output;
pub mod scene;
pub mod simulation;
pub mod solve;

pub use error::{HookeError, Result};
