//! Every registered minimiser on the same implicit step: a twisted bar of
//! 8,640 tetrahedra released from a twist, one backward Euler step of
//! 1/30 s each, with the iterations, the time, and how far each lands from
//! Newton converged. `hooke solvers` lists the minimisers and their keys;
//! `hooke compare SCENE --solvers …` measures them on a scene's frames.
//!
//! ```sh
//! cargo run --release -p hooke --example minimisers
//! ```

use hooke::prelude::*;
use hooke::solve::registry::MINIMIZERS;
use nalgebra::{Rotation3, Vector3};
use std::time::Instant;

fn main() -> Result<()> {
    let mesh = box_mesh(&BoxMeshOptions {
        origin: Vector3::zeros(),
        size: Vector3::new(0.8, 0.1, 0.1),
        cells: [40, 6, 6],
        tets_per_hex: TetsPerHex::Six,
    })?;
    let material = IsotropicMaterial::shared(
        MaterialModel::Arap,
        &MaterialParameters {
            youngs_modulus: 1e6,
            poisson_ratio: 0.3,
            density: 1000.0,
        },
    );
    let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
    let clamped = Selection::Plane {
        point: [0.0; 3],
        normal: [-1.0, 0.0, 0.0],
        tolerance: None,
    }
    .vertices(model.mesh(), "clamp")?;
    model.add_pin(Pin::new(clamped, Motion::Fixed {}, None));

    // Start twisted: each cross-section turned about the bar's axis in
    // proportion to its distance from the clamp, half a turn at the far end.
    let mut start = model.initial_state();
    for (v, p) in mesh.vertices.iter().enumerate() {
        let axis = Vector3::new(p.x, 0.05, 0.05);
        let turned = Rotation3::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI * p.x / 0.8) * (p - axis);
        for c in 0..3 {
            start.positions[3 * v + c] = axis[c] + turned[c];
        }
    }

    let step = |settings: SolverSettings| -> Result<(State, StepReport, f64)> {
        let mut integrator = BackwardEuler::new(settings)?;
        let mut state = start.clone();
        let started = Instant::now();
        let report = integrator.step(&model, &mut state, 1.0 / 30.0)?;
        Ok((state, report, started.elapsed().as_secs_f64()))
    };
    let reference = step(SolverSettings {
        tolerance: 1e-10,
        ..SolverSettings::default()
    })?
    .0;
    println!(
        "{} tetrahedra, {} unknowns",
        mesh.tet_count(),
        model.dof_map(0.0).free_count()
    );
    println!(
        "{:<14} {:>10} {:>10} {:>22}",
        "minimiser", "iterations", "ms", "from Newton converged"
    );
    for entry in MINIMIZERS {
        let settings = SolverSettings {
            iterations: Some(if entry.name == "newton" { 1 } else { 25 }),
            ..SolverSettings::named(entry.name)?
        };
        let (state, report, seconds) = step(settings)?;
        let apart = state
            .positions
            .iter()
            .zip(&reference.positions)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        println!(
            "{:<14} {:>10} {:>10.1} {:>20.2e} m",
            entry.name,
            report.iterations,
            1e3 * seconds,
            apart
        );
    }
    Ok(())
}
