//! The assembled elastic potential: finite-difference checks of gradient and
//! Hessian, rigid-motion invariance, the six zero modes of a free body, the
//! patch test, mass matrices, and bit-for-bit determinism across thread counts.

mod common;

use common::{bar, dense, parameters, uniform_model, Lcg};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::Model;
use nalgebra::{Matrix3, SymmetricEigen, Vector3};

fn small_model(model: MaterialModel) -> Model {
    uniform_model(
        bar([1.0, 0.6, 0.5], [2, 2, 2], TetsPerHex::Five),
        model,
        parameters(1e3, 0.3),
        MassKind::Lumped,
    )
}

fn perturbed(model: &Model, scale: f64, seed: u64) -> Vec<f64> {
    let mut rng = Lcg::new(seed);
    model.rest_positions().iter().map(|x| x + scale * rng.next()).collect()
}

#[test]
fn assembled_gradient_matches_finite_differences() {
    for material in MaterialModel::ALL {
        let model = small_model(material);
        let x = perturbed(&model, 0.05, 1);
        let mut gradient = vec![0.0; x.len()];
        gradient.copy_from_slice(&common::internal_gradient(&model, &x, 0.0).unwrap());
        let scale = gradient.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        let h = 1e-6;
        for i in 0..x.len() {
            let mut plus = x.clone();
            let mut minus = x.clone();
            plus[i] += h;
            minus[i] -= h;
            let numeric = (model.elastic_energy(&plus) - model.elastic_energy(&minus)) / (2.0 * h);
            let error = (numeric - gradient[i]).abs() / scale;
            assert!(
                error < 1e-6,
                "{material:?}: dof {i}: {} vs {numeric} (error {error:e})",
                gradient[i]
            );
        }
    }
}

#[test]
fn assembled_hessian_matches_finite_differences() {
    for material in MaterialModel::ALL {
        let model = small_model(material);
        let x = perturbed(&model, 0.05, 2);
        let values = model.stiffness(&x, 0.0, false).unwrap();
        let k = dense(model.pattern(), &values);
        let h = 1e-6;
        let n = x.len();
        for j in 0..n {
            let mut plus = x.clone();
            let mut minus = x.clone();
            plus[j] += h;
            minus[j] -= h;
            let mut g_plus = vec![0.0; n];
            let mut g_minus = vec![0.0; n];
            g_plus.copy_from_slice(&common::internal_gradient(&model, &plus, 0.0).unwrap());
            g_minus.copy_from_slice(&common::internal_gradient(&model, &minus, 0.0).unwrap());
            for i in 0..n {
                let numeric = (g_plus[i] - g_minus[i]) / (2.0 * h);
                let error = (numeric - k[(i, j)]).abs() / k.amax();
                assert!(error < 1e-6, "{material:?}: K[{i},{j}] = {} vs {numeric}", k[(i, j)]);
            }
        }
        assert!(
            (&k - k.transpose()).amax() == 0.0,
            "the assembled Hessian is symmetric by construction"
        );
    }
}

/// A second Hessian at the same point reuses the per-element results of the
/// first (EigenFit's refit and a semi-implicit step both linearise at xₙ);
/// any other point, or the other projection, computes afresh.
#[test]
fn a_repeated_hessian_is_the_same_and_any_other_is_fresh() {
    let model = small_model(MaterialModel::StableNeoHookean);
    let (x, y) = (perturbed(&model, 0.2, 3), perturbed(&model, 0.2, 4));
    let fresh = |x: &[f64], project: bool| {
        let twin = small_model(MaterialModel::StableNeoHookean);
        twin.stiffness(x, 0.0, project).unwrap()
    };
    let exact_x = model.stiffness(&x, 0.0, false).unwrap();
    assert_eq!(exact_x, fresh(&x, false));
    assert_eq!(model.stiffness(&x, 0.0, false).unwrap(), exact_x);
    let projected_x = model.stiffness(&x, 0.0, true).unwrap();
    assert_eq!(projected_x, fresh(&x, true));
    assert_ne!(
        projected_x, exact_x,
        "x must be far enough from rest for the projection to act"
    );
    // A gradient elsewhere overwrites the per-element results.
    model.elastic_energy(&y);
    common::internal_gradient(&model, &y, 0.0).unwrap();
    assert_eq!(model.stiffness(&x, 0.0, true).unwrap(), projected_x);
    assert_eq!(model.stiffness(&y, 0.0, true).unwrap(), fresh(&y, true));
}

#[test]
fn rigid_motions_produce_no_force() {
    let rotation = Lcg::new(9).rotation();
    let shift = Vector3::new(0.3, -1.2, 2.0);
    for material in MaterialModel::ALL {
        let model = small_model(material);
        let moved: Vec<f64> = model
            .mesh()
            .vertices()
            .iter()
            .flat_map(|p| {
                let q = if material == MaterialModel::Linear {
                    p + shift
                } else {
                    rotation * p + shift
                };
                [q.x, q.y, q.z]
            })
            .collect();
        let mut gradient = vec![0.0; moved.len()];
        let energy = model.gradient(&moved, 0.0, &mut gradient).unwrap();
        assert!(
            energy.abs() < 1e-9,
            "{material:?}: rigid motion stores energy {energy:e}"
        );
        let largest = gradient.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        assert!(largest < 1e-9, "{material:?}: rigid motion produces force {largest:e}");
    }
}

#[test]
fn free_body_at_rest_has_exactly_six_zero_modes() {
    for material in MaterialModel::ALL.into_iter().filter(|m| *m != MaterialModel::Arap) {
        let model = small_model(material);
        let values = model.stiffness(&model.rest_positions(), 0.0, false).unwrap();
        let mut eigenvalues: Vec<f64> = SymmetricEigen::new(dense(model.pattern(), &values))
            .eigenvalues
            .iter()
            .copied()
            .collect();
        eigenvalues.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let largest = eigenvalues[eigenvalues.len() - 1];
        let zero = 1e-10 * largest;
        assert!(
            eigenvalues[..6].iter().all(|l| l.abs() < zero),
            "{material:?}: {:?}",
            &eigenvalues[..7]
        );
        assert!(
            eigenvalues[6] > 1e-4 * largest,
            "{material:?}: a seventh near-zero mode {:e}",
            eigenvalues[6]
        );
    }
}

#[test]
fn linear_elasticity_passes_the_patch_test() {
    // An affine displacement u = A X + b: every interior vertex is in equilibrium
    // and every element carries the exact constant stress.
    let model = uniform_model(
        bar([1.0, 1.0, 1.0], [3, 3, 3], TetsPerHex::Five),
        MaterialModel::Linear,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let a = Matrix3::new(0.01, 0.002, -0.003, 0.004, -0.02, 0.001, 0.0, 0.003, 0.015);
    let b = Vector3::new(0.1, 0.2, -0.1);
    let x: Vec<f64> = model
        .mesh()
        .vertices()
        .iter()
        .flat_map(|p| (p + a * p + b).as_slice().to_vec())
        .collect();
    let mut gradient = vec![0.0; x.len()];
    gradient.copy_from_slice(&common::internal_gradient(&model, &x, 0.0).unwrap());
    let stress = model.materials()[0]
        .evaluate(&(Matrix3::identity() + a), hooke::material::Want::Stress)
        .first_piola;
    let (lo, hi) = model.mesh().bounding_box();
    let mut interior = 0;
    for (v, p) in model.mesh().vertices().iter().enumerate() {
        let on_boundary = (0..3).any(|k| (p[k] - lo[k]).abs() < 1e-12 || (p[k] - hi[k]).abs() < 1e-12);
        if !on_boundary {
            interior += 1;
            for k in 0..3 {
                assert!(
                    gradient[3 * v + k].abs() < 1e-9 * stress.norm(),
                    "interior vertex {v} is not in equilibrium"
                );
            }
        }
    }
    assert_eq!(interior, 8);
    // The boundary forces are the tractions of that stress: their sum vanishes.
    for k in 0..3 {
        let sum: f64 = gradient.iter().skip(k).step_by(3).sum();
        assert!(sum.abs() < 1e-9 * stress.norm());
    }
}

#[test]
fn mass_matrices_agree_on_totals() {
    let mesh = bar([2.0, 0.5, 0.25], [4, 2, 2], TetsPerHex::Six);
    let density = 1000.0;
    let lumped = uniform_model(
        mesh.clone(),
        MaterialModel::Linear,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let consistent = uniform_model(mesh, MaterialModel::Linear, parameters(1e5, 0.3), MassKind::Consistent);
    let total: f64 = lumped.mass().lumped().iter().sum();
    assert!((total - density * 0.25).abs() < 1e-9);
    // Row sums of the consistent mass are the lumped masses, so a rigid velocity has the same momentum.
    let velocity: Vec<f64> = (0..lumped.dof_count()).map(|i| [1.0, -2.0, 0.5][i % 3]).collect();
    let mut a = vec![0.0; velocity.len()];
    let mut b = vec![0.0; velocity.len()];
    lumped.mass_multiply(&velocity, &mut a);
    consistent.mass_multiply(&velocity, &mut b);
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-12);
    }
    let kinetic = consistent.kinetic_energy(&velocity);
    assert!((kinetic - 0.5 * total * (1.0 + 4.0 + 0.25)).abs() < 1e-9);
    // The consistent mass is positive definite.
    let eigenvalues = SymmetricEigen::new(dense(consistent.pattern(), consistent.mass().values())).eigenvalues;
    assert!(eigenvalues.min() > 0.0);
}

#[test]
fn assembly_is_bit_for_bit_identical_for_any_thread_count() {
    let model = uniform_model(
        bar([1.0, 0.2, 0.2], [20, 4, 4], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.45),
        MassKind::Lumped,
    );
    let x = perturbed(&model, 0.01, 4);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut gradient = vec![0.0; x.len()];
            let mut values = vec![0.0; model.pattern().nonzeros()];
            let energy = model
                .hessian(&x, 0.0, true, &mut gradient, &mut values, &mut Vec::new())
                .unwrap();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
            (
                energy.to_bits(),
                bits(&gradient),
                bits(&values),
                model.elastic_energy(&x).to_bits(),
            )
        })
    };
    let reference = run(1);
    for threads in [2, 3, 4, 7] {
        assert!(run(threads) == reference, "{threads} threads differ from 1 thread");
    }
}

/// Elements that share a material are evaluated in groups (one call for many
/// F); elements that each hold their own copy are evaluated one by one. The
/// energy and gradient are the same bits either way, for the models that
/// group their work (the polar-rotation ones) and one that does not.
#[test]
fn grouped_and_element_by_element_gradients_are_the_same_bits() {
    for material in [
        MaterialModel::Arap,
        MaterialModel::Corotational,
        MaterialModel::FixedCorotational,
        MaterialModel::StableNeoHookean,
    ] {
        let mesh = bar([1.0, 0.6, 0.5], [5, 3, 3], TetsPerHex::Six);
        let count = mesh.tet_count();
        let shared = uniform_model(mesh.clone(), material, parameters(1e3, 0.3), MassKind::Lumped);
        let own: Vec<_> = (0..count)
            .map(|_| hooke::material::IsotropicMaterial::shared(material, &parameters(1e3, 0.3)))
            .collect();
        let separate = Model::new(mesh, own, MassKind::Lumped).unwrap();
        let x = perturbed(&shared, 0.2, 3);
        let (mut a, mut b) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        let energy_a = shared.gradient(&x, 0.0, &mut a).unwrap();
        let energy_b = separate.gradient(&x, 0.0, &mut b).unwrap();
        assert_eq!(energy_a.to_bits(), energy_b.to_bits(), "{material:?}");
        assert_eq!(shared.energy(&x, 0.0).to_bits(), separate.energy(&x, 0.0).to_bits());
        assert!(
            a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()),
            "{material:?}"
        );
        assert!(a.iter().any(|g| *g != 0.0));
    }
}
