//! Hooke for Python: the extension module `hooke._hooke`, which the package
//! `hooke` (python/hooke) re-exports. numpy arrays in, numpy arrays and
//! scipy.sparse matrices out; Hooke's errors become the exceptions of
//! `hooke.errors`; long calls release the interpreter's lock and stop on Ctrl-C.

mod arrays;
mod contact;
mod errors;
mod frames;
mod meshes;
mod model;
mod scene;
mod simulation;
mod toml_value;

use pyo3::prelude::*;

/// The scene names of the integrators, with a line on each.
#[pyfunction]
fn integrators() -> Vec<(String, String)> {
    hooke::integrate::INTEGRATORS
        .iter()
        .map(|e| (e.name.to_string(), e.summary.to_string()))
        .collect()
}

/// A minimiser's own key: (key, default as TOML text, meaning).
type SettingRow = (String, String, String);

/// The minimisers a solver dict's `kind` takes, with a line on each and
/// their own keys.
#[pyfunction]
fn solvers() -> Vec<(String, String, Vec<SettingRow>)> {
    hooke::solve::registry::MINIMIZERS
        .iter()
        .map(|e| {
            let keys = e
                .keys
                .iter()
                .map(|k| (k.name.to_string(), k.default.to_string(), k.meaning.to_string()))
                .collect();
            (e.name.to_string(), e.summary.to_string(), keys)
        })
        .collect()
}

/// The names of the material models a material dict's `model` key takes.
#[pyfunction]
fn materials() -> Vec<&'static str> {
    hooke::material::registry::names()
}

#[pymodule]
mod _hooke {
    #[pymodule_export]
    use super::contact::{
        barrier_potential, barrier_potential_2d, barrier_with_derivatives, candidate_counts, collision_free_step,
        collision_free_step_2d, edge_edge_ccd, edge_edge_distance, edge_edge_mollifier, edge_edge_mollifier_threshold,
        friction_potential, initial_barrier_stiffness, point_edge_ccd, point_edge_distance, point_triangle_ccd,
        point_triangle_distance, updated_barrier_stiffness, Surface,
    };
    #[pymodule_export]
    use super::frames::read_frame;
    #[pymodule_export]
    use super::integrators;
    #[pymodule_export]
    use super::materials;
    #[pymodule_export]
    use super::meshes::{mesh_shape, read_mesh, read_surface, write_mesh, write_surface};
    #[pymodule_export]
    use super::model::{modes, PyModel};
    #[pymodule_export]
    use super::scene::{PyScene, RunResult};
    #[pymodule_export]
    use super::simulation::PySimulation;
    #[pymodule_export]
    use super::solvers;
}
