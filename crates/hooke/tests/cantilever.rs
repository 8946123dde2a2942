//! A clamped cantilever under its own weight: the static tip deflection of
//! linear tetrahedra converges toward Euler–Bernoulli beam theory,
//! δ = q L⁴ / (8 E I), as the mesh is refined.

mod common;

use common::{bar, clamp_left_end, parameters, uniform_model};
use hooke::integrate::{Integrator, StaticEquilibrium};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::Motion;
use hooke::solve::SolverSettings;
use nalgebra::Vector3;

const LENGTH: f64 = 1.0;
const SIDE: f64 = 0.1;
const YOUNGS_MODULUS: f64 = 1e9;
const DENSITY: f64 = 1000.0;
const GRAVITY: f64 = 9.81;

/// Euler–Bernoulli tip deflection of a clamped beam under uniform load (ν = 0, so
/// the 3D body has no Poisson coupling; shear deformation adds about 0.8% at L/h = 10).
fn beam_theory_deflection() -> f64 {
    let load_per_length = DENSITY * GRAVITY * SIDE * SIDE;
    let second_moment = SIDE.powi(4) / 12.0;
    load_per_length * LENGTH.powi(4) / (8.0 * YOUNGS_MODULUS * second_moment)
}

fn tip_deflection(cells_along: usize, cells_across: usize) -> f64 {
    let mesh = bar(
        [LENGTH, SIDE, SIDE],
        [cells_along, cells_across, cells_across],
        TetsPerHex::Six,
    );
    let mut model = uniform_model(
        mesh,
        MaterialModel::Linear,
        parameters(YOUNGS_MODULUS, 0.0),
        MassKind::Lumped,
    );
    model.set_gravity(Vector3::new(0.0, 0.0, -GRAVITY));
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let mut state = model.initial_state();
    let mut solver = StaticEquilibrium::new(SolverSettings::default()).unwrap();
    let report = solver.step(&model, &mut state, 1.0).unwrap();
    assert!(
        report.iterations <= 3,
        "a linear problem needs one Newton step (and one to confirm)"
    );
    // Mean vertical displacement of the free end's vertices.
    let tip: Vec<usize> = (0..model.mesh().vertex_count())
        .filter(|&v| (model.mesh().vertices()[v].x - LENGTH).abs() < 1e-12)
        .collect();
    -tip.iter()
        .map(|&v| state.positions[3 * v + 2] - model.mesh().vertices()[v].z)
        .sum::<f64>()
        / tip.len() as f64
}

#[test]
fn tip_deflection_converges_to_beam_theory() {
    let expected = beam_theory_deflection();
    let mut errors = Vec::new();
    for refinement in [1, 2, 4, 8] {
        let deflection = tip_deflection(10 * refinement, refinement);
        let error = (deflection - expected).abs() / expected;
        eprintln!(
            "cells {}×{r}×{r}: δ = {deflection:.6e} (beam theory {expected:.6e}), error {error:.4}",
            10 * refinement,
            r = refinement
        );
        assert!(
            deflection < expected,
            "linear tets are stiffer than the beam: they converge from below"
        );
        errors.push(error);
    }
    assert!(
        errors.windows(2).all(|w| w[1] < w[0]),
        "errors must shrink with refinement: {errors:?}"
    );
    // Linear elements converge in displacement at second order once the mesh resolves bending.
    let order = (errors[2] / errors[3]).log2();
    assert!(
        (1.7..=2.3).contains(&order),
        "observed order {order:.2}, expected about 2 ({errors:?})"
    );
    assert!(errors[3] < 0.05, "finest mesh within 5% of beam theory: {errors:?}");
}

/// The same cantilever in 2D (plane strain, per unit thickness): a scene with
/// `dimension = 2`, a rectangle of linear triangles, 2-component gravity and
/// selections. With ν = 0 plane strain is plane stress, and beam theory gives
/// δ = q L⁴ / (8 E I) with q = ρ g H and I = H³/12.
fn planar_tip_deflection(cells_along: usize, cells_across: usize, poisson_ratio: f64) -> f64 {
    let text = format!(
        r#"
dimension = 2
gravity = [0.0, -{GRAVITY}]
[simulation]
duration = 1.0
time_step = 1.0
[[bodies]]
mesh = {{ rectangle = {{ size = [{LENGTH}, {SIDE}], cells = [{cells_along}, {cells_across}] }} }}
material = {{ model = "linear", youngs_modulus = {YOUNGS_MODULUS}, poisson_ratio = {poisson_ratio}, density = {DENSITY} }}
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0], normal = [-1.0, 0.0] }} }}
[integrator]
kind = "static"
[solver]
tolerance = 1e-12
"#
    );
    let scene = hooke::scene::Scene::from_text(&text, "cantilever_2d", ".".into()).unwrap();
    let mut built = scene.build().unwrap();
    assert_eq!(built.model.dimension(), 2);
    let mut state = built.initial_state.clone();
    built.integrator.step(&built.model, &mut state, 1.0).unwrap();
    let vertices = built.model.mesh().vertices();
    let tip: Vec<usize> = (0..vertices.len())
        .filter(|&v| (vertices[v].x - LENGTH).abs() < 1e-12)
        .collect();
    -tip.iter()
        .map(|&v| state.positions[2 * v + 1] - vertices[v].y)
        .sum::<f64>()
        / tip.len() as f64
}

#[test]
fn planar_tip_deflection_converges_to_beam_theory() {
    let second_moment = SIDE.powi(3) / 12.0;
    let expected = DENSITY * GRAVITY * SIDE * LENGTH.powi(4) / (8.0 * YOUNGS_MODULUS * second_moment);
    let mut errors = Vec::new();
    for refinement in [1, 2, 4, 8] {
        let deflection = planar_tip_deflection(10 * refinement, refinement, 0.0);
        let error = (deflection - expected).abs() / expected;
        eprintln!(
            "2D cells {}×{refinement}: δ = {deflection:.6e} (beam {expected:.6e}), error {error:.4}",
            10 * refinement
        );
        assert!(deflection < expected, "linear triangles are stiffer than the beam");
        errors.push(error);
    }
    assert!(errors.windows(2).all(|w| w[1] < w[0]), "errors must shrink: {errors:?}");
    let order = (errors[2] / errors[3]).log2();
    assert!((1.7..=2.3).contains(&order), "observed order {order:.2} ({errors:?})");
    assert!(errors[3] < 0.05, "finest mesh within 5% of beam theory: {errors:?}");
    // Plane strain stiffens by 1/(1 − ν²): with ν = 0.3 the beam deflects (1 − ν²) as much.
    let fine = planar_tip_deflection(80, 8, 0.0);
    let strained = planar_tip_deflection(80, 8, 0.3);
    let ratio = strained / fine;
    assert!(
        (ratio - 0.91).abs() < 0.01,
        "plane-strain ratio {ratio:.4}, expected about 1 − ν² = 0.91"
    );
}
