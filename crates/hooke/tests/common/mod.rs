//! Helpers shared by the verification tests.
#![allow(dead_code)]

use hooke::material::{IsotropicMaterial, MaterialModel, MaterialParameters};
use hooke::mesh::{box_mesh, BoxMeshOptions, TetMesh, TetsPerHex};
use hooke::model::MassKind;
use hooke::model::{Model, Motion, Pin, Selection, State};
use nalgebra::{Matrix3, Rotation3, Vector3};

/// A small deterministic pseudo-random generator (tests must not depend on an RNG crate's stream).
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Lcg(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
    }

    /// Uniform in [-1, 1).
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    pub fn matrix(&mut self, scale: f64) -> Matrix3<f64> {
        Matrix3::from_fn(|_, _| scale * self.next())
    }

    pub fn rotation(&mut self) -> Matrix3<f64> {
        let axis = Vector3::new(self.next(), self.next(), self.next());
        Rotation3::from_scaled_axis(axis * 2.0).into_inner()
    }
}

/// The bits of a state's positions and velocities, to compare runs exactly.
pub fn state_bits(state: &State) -> Vec<u64> {
    state
        .positions
        .iter()
        .chain(&state.velocities)
        .map(|x| x.to_bits())
        .collect()
}

pub fn parameters(youngs_modulus: f64, poisson_ratio: f64) -> MaterialParameters {
    MaterialParameters {
        youngs_modulus,
        poisson_ratio,
        density: 1000.0,
    }
}

pub fn bar(size: [f64; 3], cells: [usize; 3], tets_per_hex: TetsPerHex) -> TetMesh {
    box_mesh(&BoxMeshOptions {
        origin: Vector3::zeros(),
        size: Vector3::from(size),
        cells,
        tets_per_hex,
    })
    .expect("valid box")
}

pub fn uniform_model(mesh: TetMesh, model: MaterialModel, params: MaterialParameters, mass: MassKind) -> Model {
    let material = IsotropicMaterial::shared(model, &params);
    let count = mesh.tet_count();
    Model::new(mesh, vec![material; count], mass).expect("valid model")
}

/// Dense symmetric matrix from lower-triangle CSC values.
pub fn dense(pattern: &hooke::linalg::LowerPattern, values: &[f64]) -> nalgebra::DMatrix<f64> {
    let n = pattern.size;
    let mut a = nalgebra::DMatrix::zeros(n, n);
    for column in 0..n {
        for k in pattern.column_starts[column]..pattern.column_starts[column + 1] {
            let row = pattern.row_indices[k];
            a[(row, column)] = values[k];
            a[(column, row)] = values[k];
        }
    }
    a
}

/// Pins the vertices on the plane x = 0 with the given motion; returns them.
pub fn clamp_left_end(model: &mut Model, motion: Motion, release_time: Option<f64>) -> Vec<usize> {
    let vertices = Selection::Plane {
        point: [0.0; 3],
        normal: [-1.0, 0.0, 0.0],
        tolerance: None,
    }
    .vertices(model.mesh(), "clamp")
    .expect("the mesh has vertices at x = 0");
    model.add_pin(Pin::new(vertices.clone(), motion, release_time));
    vertices
}

/// Checks the model's potential gradient and Hessian (unprojected) at `x` against
/// central finite differences with step `h`, to `tolerance` relative to their largest entries.
pub fn assert_potential_derivatives(model: &Model, x: &[f64], h: f64, tolerance: f64, what: &str) {
    let n = x.len();
    let mut gradient = vec![0.0; n];
    let mut values = vec![0.0; model.pattern().nonzeros()];
    model
        .hessian(x, 0.0, false, &mut gradient, &mut values, &mut Vec::new())
        .unwrap();
    let k = dense(model.pattern(), &values);
    let scale = gradient.iter().fold(0.0f64, |m, g| m.max(g.abs()));
    for j in 0..n {
        let mut plus = x.to_vec();
        let mut minus = x.to_vec();
        plus[j] += h;
        minus[j] -= h;
        let numeric = (model.energy(&plus, 0.0) - model.energy(&minus, 0.0)) / (2.0 * h);
        assert!(
            (numeric - gradient[j]).abs() < tolerance * scale,
            "{what}: gradient {j}: {} vs {numeric}",
            gradient[j]
        );
        let (mut g_plus, mut g_minus) = (vec![0.0; n], vec![0.0; n]);
        model.gradient(&plus, 0.0, &mut g_plus).unwrap();
        model.gradient(&minus, 0.0, &mut g_minus).unwrap();
        for i in 0..n {
            let numeric = (g_plus[i] - g_minus[i]) / (2.0 * h);
            assert!(
                (numeric - k[(i, j)]).abs() < tolerance * k.amax(),
                "{what}: Hessian ({i}, {j}): {} vs {numeric}",
                k[(i, j)]
            );
        }
    }
}

/// Runs `integrator` on `model` from `start` through the library's run loop
/// (no files kept), returning the outcome of a run that must succeed.
pub fn run_quietly(
    model: &Model,
    integrator: &mut dyn hooke::integrate::Integrator,
    start: hooke::model::State,
    duration: f64,
    time_step: f64,
    name: &str,
) -> hooke::simulation::RunOutcome {
    let directory = std::env::temp_dir().join(format!("hooke-run-{name}-{}", std::process::id()));
    let settings = hooke::simulation::RunSettings {
        name: name.to_string(),
        duration,
        time_step,
        output_directory: directory.clone(),
        vtk_every: 0,
        energies: false,
        plot: false,
        render_every: 0,
        render: Default::default(),
        fine_display: None,
    };
    let outcome = hooke::simulation::Simulation::new(model, integrator, &settings)
        .run(start)
        .unwrap()
        .into_result()
        .unwrap();
    let _ = std::fs::remove_dir_all(directory);
    outcome
}

/// A free Neo-Hookean rod (8 × 2 × 2 cells) spinning and bending: the
/// conservative test case of the adaptive variational integrators.
pub fn tumbling_rod() -> (Model, State) {
    let model = uniform_model(
        bar([0.4, 0.05, 0.05], [8, 2, 2], TetsPerHex::Five),
        MaterialModel::NeoHookean,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let mut state = model.initial_state();
    let center = Vector3::new(0.2, 0.025, 0.025);
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        let r = p - center;
        let velocity = Vector3::new(1.0, 6.0, 10.0).cross(&r) + Vector3::new(0.0, 0.0, 20.0 * r.x * r.x);
        state.velocities[3 * v..3 * v + 3].copy_from_slice(velocity.as_slice());
    }
    (model, state)
}

/// A clamped Stable Neo-Hookean bar (0.4 m, 6×2×2 cells) and positions that
/// compress it to about 60% of its length, with a little noise; the clamped end
/// (x = 0) stays where its pins hold it. K is indefinite there.
pub fn compressed_clamped_bar() -> (Model, Vec<f64>) {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], [6, 2, 2], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.45),
        MassKind::Lumped,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let mut rng = Lcg::new(2);
    let positions = model
        .rest_positions()
        .chunks(3)
        .flat_map(|p| [p[0] * (0.6 + 0.01 * rng.next()), p[1], p[2]])
        .collect();
    (model, positions)
}

/// The gradient of the model's internal energy (elasticity, springs, contact)
/// at time t: the full potential's gradient plus the external force it contains.
pub fn internal_gradient(model: &Model, x: &[f64], time: f64) -> hooke::Result<Vec<f64>> {
    let mut gradient = vec![0.0; x.len()];
    model.gradient(x, time, &mut gradient)?;
    let mut force = vec![0.0; x.len()];
    model.external_force(time, &mut force);
    gradient.iter_mut().zip(&force).for_each(|(g, f)| *g += f);
    Ok(gradient)
}

/// The Hessian of the potential (values on the model's pattern) and the
/// internal gradient at time t.
pub fn hessian_and_internal_gradient(
    model: &Model,
    x: &[f64],
    time: f64,
    project: bool,
) -> hooke::Result<(Vec<f64>, Vec<f64>)> {
    let mut values = vec![0.0; model.pattern().nonzeros()];
    let mut gradient = vec![0.0; x.len()];
    model.hessian(x, time, project, &mut gradient, &mut values, &mut Vec::new())?;
    let mut force = vec![0.0; x.len()];
    model.external_force(time, &mut force);
    gradient.iter_mut().zip(&force).for_each(|(g, f)| *g += f);
    Ok((values, gradient))
}

/// Turns the potential's gradient into the internal one: adds the external force (time-independent loads).
pub fn add_external_force(model: &Model, gradient: &mut [f64]) {
    let mut force = vec![0.0; gradient.len()];
    model.external_force(0.0, &mut force);
    gradient.iter_mut().zip(&force).for_each(|(g, f)| *g += f);
}

/// A 0.4 × 0.1 × 0.1 m bar of `material` (E = 1e5 Pa, ν = 0.3), clamped at
/// x = 0, under gravity.
#[allow(dead_code)]
pub fn clamped_bar_under_gravity(material: MaterialModel, cells: [usize; 3]) -> Model {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], cells, TetsPerHex::Six),
        material,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    model.set_gravity(nalgebra::Vector3::new(0.0, 0.0, -9.81));
    model
}

/// Φ(x) = ‖x − xₙ − h vₙ‖²_M / 2h² + E(x): backward Euler's incremental potential.
pub fn backward_euler_potential(model: &Model, start: &State, h: f64, x: &[f64]) -> f64 {
    let difference: Vec<f64> = (0..x.len())
        .map(|i| x[i] - start.positions[i] - h * start.velocities[i])
        .collect();
    let mut product = vec![0.0; x.len()];
    model.mass_multiply(&difference, &mut product);
    difference.iter().zip(&product).map(|(a, b)| a * b).sum::<f64>() / (2.0 * h * h) + model.energy(x, start.time + h)
}
