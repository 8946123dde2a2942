//! Every material: ψ(I) = 0, P(I) = 0, frame invariance, P against finite
//! differences of ψ, ∂P/∂F against finite differences of P, symmetry, the same
//! small-strain response for the same (E, ν), and the PSD projection.

mod common;

use common::Lcg;
use hooke::material::{
    energy_density, evaluate, first_piola, first_piola_derivative, vec_index, Lame, MaterialModel, Matrix9, Want,
};
use nalgebra::{Matrix3, SymmetricEigen};

const LAME: Lame = Lame { mu: 1.3, lambda: 4.7 };

/// Deformation gradients near and far from identity, none inverted.
fn test_gradients() -> Vec<Matrix3<f64>> {
    let mut rng = Lcg::new(7);
    let mut list = Vec::new();
    for scale in [0.05, 0.2, 0.4] {
        for _ in 0..6 {
            let mut f = Matrix3::identity() + rng.matrix(scale);
            if f.determinant() <= 0.1 {
                f = Matrix3::identity();
            }
            list.push(rng.rotation() * f);
        }
    }
    list.push(Matrix3::from_diagonal(&nalgebra::Vector3::new(1.5, 0.8, 0.9)));
    list
}

fn relative_error(a: f64, b: f64, scale: f64) -> f64 {
    (a - b).abs() / scale.max(1e-30)
}

#[test]
fn energy_and_stress_vanish_at_rest() {
    for model in MaterialModel::ALL {
        let identity = Matrix3::identity();
        assert!(
            energy_density(model, &identity, &LAME).abs() < 1e-12,
            "{model:?}: ψ(I) ≠ 0"
        );
        assert!(
            first_piola(model, &identity, &LAME).norm() < 1e-12,
            "{model:?}: P(I) ≠ 0"
        );
    }
}

#[test]
fn energy_is_frame_invariant_except_linear() {
    let mut rng = Lcg::new(11);
    for model in MaterialModel::ALL.into_iter().filter(|m| *m != MaterialModel::Linear) {
        for f in test_gradients() {
            let q = rng.rotation();
            let a = energy_density(model, &f, &LAME);
            let b = energy_density(model, &(q * f), &LAME);
            assert!(
                (a - b).abs() <= 1e-11 * a.abs().max(1.0),
                "{model:?}: ψ(QF) = {b} but ψ(F) = {a}"
            );
        }
    }
    // Linear elasticity is not: a pure rotation costs energy.
    let rotation = Lcg::new(3).rotation();
    assert!(energy_density(MaterialModel::Linear, &rotation, &LAME) > 1e-3);
}

#[test]
fn stress_matches_finite_differences_of_energy() {
    let h = 1e-6;
    for model in MaterialModel::ALL {
        for f in test_gradients() {
            let p = first_piola(model, &f, &LAME);
            for (row, col) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
                let mut plus = f;
                let mut minus = f;
                plus[(row, col)] += h;
                minus[(row, col)] -= h;
                let numeric = (energy_density(model, &plus, &LAME) - energy_density(model, &minus, &LAME)) / (2.0 * h);
                let error = relative_error(numeric, p[(row, col)], p.norm().max(1.0));
                assert!(
                    error < 1e-6,
                    "{model:?}: P[{row},{col}] = {} vs {numeric} (error {error:e})",
                    p[(row, col)]
                );
            }
        }
    }
}

fn check_derivative(model: MaterialModel, f: &Matrix3<f64>, lame: &Lame) {
    let h = 1e-6;
    let c = first_piola_derivative(model, f, lame, false);
    for (row, col) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
        let mut plus = *f;
        let mut minus = *f;
        plus[(row, col)] += h;
        minus[(row, col)] -= h;
        let numeric = (first_piola(model, &plus, lame) - first_piola(model, &minus, lame)) / (2.0 * h);
        for (a, b) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
            let analytic = c[(vec_index(a, b), vec_index(row, col))];
            let error = relative_error(numeric[(a, b)], analytic, c.norm().max(1.0));
            assert!(
                error < 1e-6,
                "{model:?} at F = {f}: ∂P[{a},{b}]/∂F[{row},{col}] = {analytic} vs {} (error {error:e})",
                numeric[(a, b)]
            );
        }
    }
}

#[test]
fn stress_derivative_matches_finite_differences_of_stress() {
    for model in MaterialModel::ALL {
        for f in test_gradients() {
            check_derivative(model, &f, &LAME);
        }
    }
}

#[test]
fn models_defined_through_inversion_have_consistent_derivatives_there() {
    let inverted = Matrix3::new(0.9, 0.1, 0.0, -0.05, 1.1, 0.2, 0.1, 0.0, -0.6);
    assert!(inverted.determinant() < 0.0);
    for model in [
        MaterialModel::StableNeoHookean,
        MaterialModel::FixedCorotational,
        MaterialModel::Corotational,
        MaterialModel::Arap,
        MaterialModel::StVenantKirchhoff,
    ] {
        assert!(energy_density(model, &inverted, &LAME).is_finite());
        check_derivative(model, &inverted, &LAME);
    }
    for model in [MaterialModel::NeoHookean, MaterialModel::ModifiedNeoHookean] {
        let evaluation = evaluate(model, &inverted, &LAME, Want::Derivative { project: false });
        assert!(
            evaluation.is_undefined(),
            "{model:?} must be undefined (ψ = +∞) for J ≤ 0"
        );
        assert!(evaluation.first_piola_derivative.is_none());
    }
}

#[test]
fn stress_derivative_is_symmetric() {
    for model in MaterialModel::ALL {
        for f in test_gradients() {
            let c = first_piola_derivative(model, &f, &LAME, false);
            let asymmetry = (c - c.transpose()).norm();
            assert!(asymmetry <= 1e-10 * c.norm(), "{model:?}: ‖C − Cᵀ‖ = {asymmetry:e}");
        }
    }
}

/// The isotropic small-strain elasticity tensor for (μ, λ) acting on vec(F).
fn hooke_tensor(lame: &Lame) -> Matrix9 {
    first_piola_derivative(MaterialModel::Linear, &Matrix3::identity(), lame, false)
}

#[test]
fn every_model_linearises_to_the_same_hookes_law() {
    let expected = hooke_tensor(&LAME);
    for model in MaterialModel::ALL {
        let c = first_piola_derivative(model, &Matrix3::identity(), &LAME, false);
        let reference = if model == MaterialModel::Arap {
            // ARAP has no volume term: it matches Hooke's law with λ = 0.
            hooke_tensor(&Lame {
                mu: LAME.mu,
                lambda: 0.0,
            })
        } else {
            expected
        };
        // Rotation-invariant models have no stiffness against infinitesimal rotations;
        // compare on symmetric perturbations only.
        let mut symmetric_part = Matrix9::zeros();
        for (a, b) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
            symmetric_part[(vec_index(a, b), vec_index(a, b))] += 0.5;
            symmetric_part[(vec_index(a, b), vec_index(b, a))] += 0.5;
        }
        let difference = (c - reference) * symmetric_part;
        assert!(
            difference.norm() < 1e-9 * reference.norm(),
            "{model:?} linearises differently:\n{c}\nvs\n{reference}"
        );
    }
}

#[test]
fn projection_gives_positive_semidefinite_and_keeps_definite_tensors() {
    // Strong compression makes most models indefinite.
    let compressed = Matrix3::from_diagonal(&nalgebra::Vector3::new(0.5, 0.6, 1.2)) * Lcg::new(5).rotation();
    for model in MaterialModel::ALL {
        let projected = first_piola_derivative(model, &compressed, &LAME, true);
        let smallest = SymmetricEigen::new(projected).eigenvalues.min();
        assert!(
            smallest >= -1e-10 * projected.norm(),
            "{model:?}: projected tensor has eigenvalue {smallest:e}"
        );
        // Already positive semi-definite at rest: projection must not change it.
        let at_rest = first_piola_derivative(model, &Matrix3::identity(), &LAME, false);
        let projected_at_rest = first_piola_derivative(model, &Matrix3::identity(), &LAME, true);
        assert!(
            (at_rest - projected_at_rest).norm() <= 1e-10 * at_rest.norm(),
            "{model:?}"
        );
    }
    // And the compressed tensor really was indefinite for Neo-Hookean, so the test has teeth.
    let unprojected = first_piola_derivative(MaterialModel::StableNeoHookean, &compressed, &LAME, false);
    assert!(SymmetricEigen::new(unprojected).eigenvalues.min() < 0.0);
}

#[test]
fn lame_parameters_from_youngs_modulus_and_poisson_ratio() {
    let lame = Lame::from_youngs_poisson(1e6, 0.25);
    assert!((lame.mu - 4e5).abs() < 1e-6);
    assert!((lame.lambda - 4e5).abs() < 1e-6);
}

/// Stable Neo-Hookean, Neo-Hookean and St. Venant–Kirchhoff give energies and
/// stresses straight from F (no SVD), and the co-rotated models and ARAP from
/// F's polar rotation by Newton's iteration, for explicit steps and
/// quasi-Newton iterations: the same ψ and P as the stretch form their
/// Hessians use, at stretched, sheared, rotated and (where defined) inverted F.
#[test]
fn direct_energies_and_stresses_match_the_stretch_form() {
    let lame = Lame { mu: 3e5, lambda: 2e6 };
    let mut rng = Lcg::new(42);
    for model in [
        MaterialModel::StableNeoHookean,
        MaterialModel::NeoHookean,
        MaterialModel::StVenantKirchhoff,
        MaterialModel::Corotational,
        MaterialModel::FixedCorotational,
        MaterialModel::Arap,
    ] {
        for case in 0..200 {
            let mut f = rng.rotation() * (Matrix3::identity() + rng.matrix(0.4));
            if case % 4 == 0 {
                // An inverted element: one column flipped.
                f.column_mut(0).neg_mut();
            }
            let direct = hooke::material::evaluate(model, &f, &lame, Want::Stress);
            let stretch = hooke::material::evaluate(model, &f, &lame, Want::Derivative { project: false });
            if stretch.is_undefined() {
                assert!(direct.is_undefined(), "{model:?}: defined directly at an undefined F");
                continue;
            }
            let scale = lame.lambda * (1.0 + f.norm_squared());
            assert!(
                (direct.energy_density - stretch.energy_density).abs() <= 1e-10 * scale,
                "{model:?} ψ: {} vs {}",
                direct.energy_density,
                stretch.energy_density
            );
            assert!(
                (direct.first_piola - stretch.first_piola).amax() <= 1e-10 * scale,
                "{model:?} P at case {case}: {} vs {}",
                direct.first_piola,
                stretch.first_piola
            );
        }
    }
}

/// Many elements at once (the gradient passes) give each element's ψ and P
/// bit for bit as one at a time, for every model, in runs that mix
/// stretched, rotated, inverted, degenerate and non-finite F and do not fill
/// the last group of lanes.
#[test]
fn many_elements_at_once_equal_one_at_a_time_bit_for_bit() {
    let lame = Lame { mu: 3e5, lambda: 2e6 };
    let mut rng = Lcg::new(5);
    let f: Vec<Matrix3<f64>> = (0..77)
        .map(|case| {
            let f = rng.rotation() * (Matrix3::identity() + rng.matrix(0.4));
            match case % 11 {
                3 => -f,
                5 => Matrix3::zeros(),
                7 => f * f64::NAN,
                9 => f * 1e-12,
                _ => f,
            }
        })
        .collect();
    for model in MaterialModel::ALL {
        for want in [Want::Energy, Want::Stress] {
            let (mut energies, mut stresses) = (vec![0.0; f.len()], vec![Matrix3::zeros(); f.len()]);
            hooke::material::evaluate_stresses(model, &f, &lame, want, &mut energies, &mut stresses);
            for (i, f) in f.iter().enumerate() {
                let alone = evaluate(model, f, &lame, want);
                assert_eq!(
                    energies[i].to_bits(),
                    alone.energy_density.to_bits(),
                    "{model:?} {want:?} ψ of element {i}"
                );
                for k in 0..9 {
                    assert_eq!(
                        stresses[i][k].to_bits(),
                        alone.first_piola[k].to_bits(),
                        "{model:?} {want:?} P of element {i}"
                    );
                }
            }
        }
    }
}
