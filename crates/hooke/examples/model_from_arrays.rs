//! A model from your own arrays: a tetrahedral mesh given as vertex and
//! element lists (a cube split into five tetrahedra), two materials by
//! element label, a pin, gravity, and backward Euler steps written as a
//! ParaView series.
//!
//! ```sh
//! cargo run --release -p hooke --example model_from_arrays [-- OUTPUT_DIR]
//! ```

use hooke::output::VtkSeriesWriter;
use hooke::prelude::*;
use hooke::simulation::write_state;
use nalgebra::Vector3;
use std::path::PathBuf;

fn main() -> Result<()> {
    let output = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("out/model_from_arrays"));

    // Vertices in metres and tetrahedra as four vertex indices each: a unit
    // cube of 0.1 m split into five tetrahedra, labelled by region.
    let corners = [
        [0.0, 0.0, 0.0],
        [0.1, 0.0, 0.0],
        [0.0, 0.1, 0.0],
        [0.1, 0.1, 0.0],
        [0.0, 0.0, 0.1],
        [0.1, 0.0, 0.1],
        [0.0, 0.1, 0.1],
        [0.1, 0.1, 0.1],
    ];
    let vertices: Vec<Vector3<f64>> = corners.iter().map(|&p| Vector3::from(p)).collect();
    let tets = vec![[0, 1, 2, 4], [1, 3, 2, 7], [1, 4, 5, 7], [2, 4, 7, 6], [1, 2, 4, 7]];
    let labels = vec![0, 0, 0, 0, 1];
    let mesh = TetMesh::new(vertices, tets, labels)?;

    // A soft rubber with a stiff core element, by label.
    let soft = IsotropicMaterial::shared(
        MaterialModel::StableNeoHookean,
        &MaterialParameters {
            youngs_modulus: 1e5,
            poisson_ratio: 0.45,
            density: 1100.0,
        },
    );
    let stiff = IsotropicMaterial::shared(
        MaterialModel::StableNeoHookean,
        &MaterialParameters {
            youngs_modulus: 1e7,
            poisson_ratio: 0.45,
            density: 1100.0,
        },
    );
    let materials = mesh
        .labels
        .iter()
        .map(|&label| if label == 1 { stiff.clone() } else { soft.clone() })
        .collect();
    let mut model = Model::new(mesh, materials, MassKind::Lumped)?;

    // The face x = 0 is held; gravity pulls along −z.
    let clamped = Selection::Plane {
        point: [0.0; 3],
        normal: [-1.0, 0.0, 0.0],
        tolerance: None,
    }
    .vertices(model.mesh(), "clamp")?;
    model.add_pin(Pin::new(clamped, Motion::Fixed {}, None));
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));

    let mut integrator = BackwardEuler::new(SolverSettings::default())?;
    integrator.check(&model)?;
    let mut state = model.initial_state();
    let mut series = VtkSeriesWriter::create(&output, "cube")?;
    let rest = model.rest_positions();
    for step in 0..=50 {
        if step > 0 {
            integrator.step(&model, &mut state, 0.005)?;
        }
        if step % 10 == 0 {
            write_state(&mut series, &model, &state)?;
            let lowest = state
                .positions
                .iter()
                .skip(2)
                .step_by(3)
                .fold(f64::INFINITY, |a, &z| a.min(z));
            let energy = model.energies(&state.positions, state.time);
            println!(
                "t = {:.3} s: lowest z {:.5} m, elastic energy {:.3e} J",
                state.time, lowest, energy.elastic
            );
        }
    }
    let moved = state
        .positions
        .iter()
        .zip(&rest)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!("largest displacement {moved:.4} m; frames in {}", output.display());
    series.finish()?;
    Ok(())
}
