//! Tearing (Liu 2018 thesis, §8.4): springs and elements stretched beyond a limit
//! leave the energy, gradient and Hessian for good, while L-BFGS keeps its
//! prefactorised matrix.

mod common;

use hooke::integrate::{BackwardEuler, Integrator};
use hooke::model::Model;
use hooke::scene::Scene;
use hooke::solve::SolverSettings;

/// Groups of vertices joined by whole springs (union–find over the edges drawn).
fn pieces(model: &Model) -> usize {
    let n = model.mesh().vertex_count();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    for [a, b] in model.spring_edges() {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra] = rb;
    }
    (0..n).filter(|&v| root(&mut parent, v) == v).count()
}

/// scenes/tearing_curtain.toml: pulled apart, the curtain rips into two
/// pieces (and at most a few loose vertices), with one factorisation of
/// M/h² + L for the whole run; the energy the torn springs held is counted.
#[test]
fn the_curtain_tears_in_two_with_one_factorisation() {
    let scene = Scene::from_file(std::path::Path::new("../../scenes/tearing_curtain.toml")).unwrap();
    let built = scene.build().unwrap();
    let (model, mut state) = (&built.model, built.initial_state.clone());
    let mut integrator = built.integrator;
    assert_eq!(pieces(model), 1);
    let (mut factorizations, mut torn, mut released) = (0, 0, 0.0);
    for _ in 0..120 {
        let report = integrator
            .step(model, &mut state, scene.file.simulation.time_step)
            .unwrap();
        factorizations += report.factorizations;
        torn += report.torn_elements;
        released += report.torn_energy;
    }
    assert_eq!(factorizations, 1);
    assert_eq!(torn, model.torn_elements().concat().len());
    assert!(released > 0.0);
    let count = pieces(model);
    assert!((2..=6).contains(&count), "{count} pieces");
    // The two halves of the top edge are no longer joined.
    let edges = model.spring_edges();
    let vertices = model.mesh().vertices();
    assert!(
        !edges
            .iter()
            .any(|&[a, b]| (vertices[a].x - 0.5) * (vertices[b].x - 0.5) < 0.0 && vertices[a].y > 0.9),
        "springs still cross the rip at the top"
    );
}

/// After tears, L-BFGS with the untouched matrix still converges to the
/// minimiser Newton finds on the torn model (whose Hessian leaves the torn
/// springs out).
#[test]
fn lbfgs_with_the_matrix_kept_converges_to_newtons_step_on_the_torn_model() {
    let scene = Scene::from_file(std::path::Path::new("../../scenes/tearing_curtain.toml")).unwrap();
    let mut built = scene.build().unwrap();
    let h = scene.file.simulation.time_step;
    let mut state = built.initial_state.clone();
    for _ in 0..30 {
        built.integrator.step(&built.model, &mut state, h).unwrap();
    }
    let torn = built.model.torn_elements().concat().len();
    assert!(torn > 10, "only {torn} torn");
    // No more tearing: both steps must see the same model.
    built.model.set_tearing_limit(None);
    let step = |kind: &str| {
        let mut next = state.clone();
        let settings = SolverSettings {
            tolerance: 1e-10,
            max_iterations: Some(5000),
            ..SolverSettings::named(kind).unwrap()
        };
        BackwardEuler::new(settings.clone())
            .unwrap()
            .step(&built.model, &mut next, h)
            .unwrap();
        next
    };
    let (quasi_newton, newton) = (step("lbfgs"), step("newton"));
    let largest = quasi_newton
        .positions
        .iter()
        .zip(&newton.positions)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(largest < 1e-7, "L-BFGS and Newton differ by {largest} m");
}

/// Tetrahedra tear too: a bar stretched to 1.5× tears the elements beyond
/// a 1.3 limit; the torn model's energy drops by exactly what they held, and
/// its gradient and Hessian still match finite differences.
#[test]
fn stretched_tetrahedra_tear_and_leave_the_derivatives() {
    let mut model = common::uniform_model(
        common::bar([0.3, 0.1, 0.1], [6, 2, 2], hooke::mesh::TetsPerHex::Six),
        hooke::material::MaterialModel::StableNeoHookean,
        common::parameters(1e5, 0.3),
        hooke::model::MassKind::Lumped,
    );
    // Stretch the right half 1.5× along x; the left half stays at rest.
    let x: Vec<f64> = model
        .rest_positions()
        .chunks(3)
        .flat_map(|p| {
            let x = if p[0] > 0.15 { 0.15 + 1.5 * (p[0] - 0.15) } else { p[0] };
            [x, p[1], p[2]]
        })
        .collect();
    let before = model.energy(&x, 0.0);
    let whole_stiffness = model.stiffness(&x, 0.0, false).unwrap();
    model.set_tearing_limit(Some(1.3));
    let torn = model.tear(&x);
    // A Hessian at the same point after a tear is not the one remembered from before it.
    let torn_stiffness = model.stiffness(&x, 0.0, false).unwrap();
    assert_ne!(torn_stiffness, whole_stiffness);
    model.energy(&model.rest_positions(), 0.0);
    assert_eq!(model.stiffness(&x, 0.0, false).unwrap(), torn_stiffness);
    let elements = model.torn_elements().concat();
    assert_eq!(torn.elements, elements.len());
    let tets = model.mesh().tetrahedra().unwrap();
    for e in 0..tets.tet_count() {
        let stretched = tets.centroid(e).x > 0.15;
        assert_eq!(elements.contains(&e), stretched, "element {e}");
    }
    assert!(((before - model.energy(&x, 0.0)) - torn.energy).abs() < 1e-9 * before);
    // Tearing again tears nothing new.
    assert_eq!(model.tear(&x).elements, 0);
    let mut rng = common::Lcg::new(9);
    let perturbed: Vec<f64> = x.iter().map(|v| v + 1e-4 * rng.next()).collect();
    common::assert_potential_derivatives(&model, &perturbed, 1e-7, 1e-5, "torn bar");
}
