#![warn(missing_docs)]
//! Hooke: finite element elastodynamics of deformable solids.
//!
//! Hooke simulates elastic bodies, stiff and strongly heterogeneous ones
//! included, with tetrahedral (and plane-strain triangle) finite elements:
//! isotropic, anisotropic and fibre-reinforced hyperelastic materials,
//! eighteen time integrators behind one interface, interchangeable
//! minimisers for implicit steps (Newton, L-BFGS, local/global), spectral
//! methods, EigenFit, numerical coarsening and real-time subspace mixed FEM.
//! The `hooke` command-line program and the Python package are thin layers
//! over this crate.
//!
//! # The data flow
//!
//! A scene file (or your own code) gives a [`Model`](model::Model): the mesh,
//! a material per element, the mass, pins, forces, and the list of
//! [energy terms](model::EnergyTerm) whose sum is the potential E(x, t). An
//! [`Integrator`](integrate::Integrator) advances a [`State`](model::State)
//! (positions, velocities, time) by one step; implicit integrators minimise
//! an [`Objective`](solve::Objective) (the incremental potential) with a
//! [`Minimizer`](solve::Minimizer) that the `[solver]` table
//! ([`SolverSettings`](solve::SolverSettings)) chooses. A
//! [`Simulation`](simulation::Simulation) runs the steps and writes the
//! outputs: a ParaView series, an energies table and plot, a summary, and
//! checkpoints to resume from.
//!
//! [`prelude`] holds what most programs need.
//!
//! # A model from arrays
//!
//! A bar of 6 × 1 × 1 cells (six tetrahedra each), clamped at x = 0, sagging
//! under gravity for ten backward Euler steps:
//!
//! ```
//! use hooke::prelude::*;
//! use nalgebra::Vector3;
//!
//! # fn main() -> hooke::Result<()> {
//! let mesh = box_mesh(&BoxMeshOptions {
//!     origin: Vector3::zeros(),
//!     size: Vector3::new(0.6, 0.1, 0.1),
//!     cells: [6, 1, 1],
//!     tets_per_hex: TetsPerHex::Six,
//! })?;
//! // Or from your own arrays: TetMesh::new(vertices, tets, labels)?
//! let rubber = MaterialParameters { youngs_modulus: 1e6, poisson_ratio: 0.45, density: 1100.0 };
//! let material = IsotropicMaterial::shared(MaterialModel::StableNeoHookean, &rubber);
//! let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
//! let clamped = Selection::Plane { point: [0.0; 3], normal: [-1.0, 0.0, 0.0], tolerance: None }
//!     .vertices(model.mesh(), "clamp")?;
//! model.add_pin(Pin::new(clamped, Motion::Fixed {}, None));
//! model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
//!
//! let mut integrator = BackwardEuler::new(SolverSettings::default())?;
//! integrator.check(&model)?;
//! let mut state = model.initial_state();
//! for _ in 0..10 {
//!     integrator.step(&model, &mut state, 0.01)?;
//! }
//! let lowest = state.positions.iter().skip(2).step_by(3).fold(f64::INFINITY, |a, &z| a.min(z));
//! assert!(lowest < 0.0, "the free end sags");
//! # Ok(())
//! # }
//! ```
//!
//! # A scene run
//!
//! The same as a scene (docs/scene-format.md describes every key), run with
//! its outputs written to a folder:
//!
//! ```
//! use hooke::prelude::*;
//!
//! # fn main() -> hooke::Result<()> {
//! let text = r#"
//! [simulation]
//! duration = 0.05
//! time_step = 0.01
//! [[bodies]]
//! mesh = { box = { size = [0.6, 0.1, 0.1], cells = [6, 1, 1] } }
//! material = { model = "stable_neo_hookean", youngs_modulus = 1e6, poisson_ratio = 0.45, density = 1100 }
//! [[pins]]
//! select = { plane = { point = [0, 0, 0], normal = [-1, 0, 0] } }
//! [solver]
//! kind = "lbfgs"
//! iterations = 20
//! "#;
//! let scene = Scene::from_text(text, "bar.toml", ".".into())?;
//! let mut built = scene.build()?;
//! let output = std::env::temp_dir().join(format!("hooke-doc-scene-{}", std::process::id()));
//! let settings = scene.run_settings(Some(&output));
//! let outcome = Simulation::new(&built.model, built.integrator.as_mut(), &settings)
//!     .notes(built.notes.clone())
//!     .run(built.initial_state.clone())?
//!     .into_result()?;
//! assert_eq!(outcome.summary.statistics.steps, 5);
//! assert!(output.join("energies.csv").is_file());
//! # std::fs::remove_dir_all(&output).ok();
//! # Ok(())
//! # }
//! ```
//!
//! # Extending
//!
//! Each seam is a trait with a registry where scenes need names:
//! [`Material`](material::Material) (and the material registry),
//! [`EnergyTerm`](model::EnergyTerm), [`Integrator`](integrate::Integrator)
//! ([`integrate::registry`]), [`Minimizer`](solve::Minimizer)
//! ([`solve::registry`]). Their documentation shows each with a small
//! implementation; docs/architecture.md gives the recipe for each kind of
//! extension, and `crates/hooke/examples/` holds whole programs.

pub mod checkpoint;
pub mod coarsen;
pub mod contact;
pub(crate) mod disk_cache;
pub(crate) mod divergence;
pub(crate) mod energy_record;
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
pub mod numbers;
pub mod output;
pub mod prelude;
pub(crate) mod quiet_panic;
pub mod reduced;
pub(crate) mod run_record;
pub mod scene;
pub mod simulation;
pub mod solve;
pub mod studies;
pub(crate) mod workers;

pub use error::{HookeError, Result};
