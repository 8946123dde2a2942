//! The shift-invert Lanczos eigensolver against dense references: pinned and free
//! bodies (six zero modes), repeated eigenvalues, indefinite K, M-orthonormality.

mod common;

use common::{bar, clamp_left_end, dense, parameters, uniform_model};
use hooke::linalg::{smallest_eigenpairs, EigenSettings};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::{Model, Motion};
use nalgebra::{DMatrix, SymmetricEigen};

/// K and M restricted to the free DOFs (pattern, values), and the dense eigenvalues of M⁻¹K.
fn problem(model: &Model, x: &[f64]) -> (hooke::linalg::LowerPattern, Vec<f64>, Vec<f64>, Vec<f64>) {
    let dofs = model.dof_map(0.0);
    let stiffness = model.stiffness(x, 0.0, false).unwrap();
    let (pattern, source) = model.pattern().restrict(&dofs.free_index);
    let k: Vec<f64> = source.iter().map(|&s| stiffness[s]).collect();
    let m: Vec<f64> = source.iter().map(|&s| model.mass().values()[s]).collect();
    // Dense reference: M = LLᵀ, eigenvalues of L⁻¹ K L⁻ᵀ.
    let kd = dense(&pattern, &k);
    let md = dense(&pattern, &m);
    let l = md.cholesky().unwrap().l();
    let l_inverse = l.clone().try_inverse().unwrap();
    let reduced: DMatrix<f64> = &l_inverse * kd * l_inverse.transpose();
    let mut values: Vec<f64> = SymmetricEigen::new((&reduced + reduced.transpose()) * 0.5)
        .eigenvalues
        .iter()
        .copied()
        .collect();
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (pattern, k, m, values)
}

fn check(model: &Model, x: &[f64], count: usize, settings: &EigenSettings, what: &str) {
    let (pattern, k, m, reference) = problem(model, x);
    let pairs = smallest_eigenpairs(&pattern, &k, &m, count, settings).unwrap();
    let scale = reference.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    for (i, (found, expected)) in pairs.values.iter().zip(&reference).enumerate() {
        assert!(
            (found - expected).abs() <= 1e-8 * expected.abs().max(1e-6 * scale),
            "{what}: λ{i} = {found} vs {expected}"
        );
    }
    assert!(
        pairs.residuals.iter().all(|r| *r < 1e-8),
        "{what}: residuals {:?}",
        pairs.residuals
    );
    // M-orthonormal eigenvectors.
    let md = dense(&pattern, &m);
    for (i, a) in pairs.vectors.iter().enumerate() {
        for (j, b) in pairs.vectors.iter().enumerate() {
            let ma = &md * nalgebra::DVector::from_column_slice(a);
            let product: f64 = ma.iter().zip(b).map(|(x, y)| x * y).sum();
            let expected = if i == j { 1.0 } else { 0.0 };
            assert!(
                (product - expected).abs() < 1e-10,
                "{what}: uᵢᵀMuⱼ ({i},{j}) = {product}"
            );
        }
    }
}

#[test]
fn pinned_bar_matches_the_dense_solver() {
    let mut model = uniform_model(
        bar([1.0, 0.1, 0.1], [12, 2, 2], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.4),
        MassKind::Consistent,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    check(
        &model,
        &model.rest_positions(),
        10,
        &EigenSettings::default(),
        "pinned bar",
    );
}

/// A stiffness with a low-rank part, K + Y S Yᵀ (EigenFit's correction has
/// this form): the pairs match a dense solve of the whole matrix, whether the
/// part softens (negative S) or stiffens, and differ from the sparse part's.
#[test]
fn a_low_rank_part_is_part_of_the_stiffness() {
    let mut model = uniform_model(
        bar([1.0, 0.1, 0.1], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.4),
        MassKind::Consistent,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let (pattern, k, m, sparse_only) = problem(&model, &model.rest_positions());
    let n = pattern.size;
    let (kd, md) = (dense(&pattern, &k), dense(&pattern, &m));
    // Y: M times the two lowest dense modes and a smooth field; S mixes them.
    let l_inverse = md.clone().cholesky().unwrap().l().try_inverse().unwrap();
    let reduced = &l_inverse * &kd * l_inverse.transpose();
    let eigen = SymmetricEigen::new((&reduced + reduced.transpose()) * 0.5);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[a].total_cmp(&eigen.eigenvalues[b]));
    let mode = |j: usize| l_inverse.transpose() * eigen.eigenvectors.column(order[j]);
    let smooth = nalgebra::DVector::from_fn(n, |i, _| ((i as f64) * 0.37).sin());
    let columns = [&md * mode(0), &md * mode(1), &md * smooth];
    let vectors = DMatrix::from_columns(&columns);
    for scale in [-0.4, 2.0] {
        let (a, b, c) = (scale * sparse_only[0], scale * sparse_only[1], sparse_only[2]);
        let core = DMatrix::from_row_slice(3, 3, &[a, 0.0, 0.0, 0.0, b, 0.1 * c, 0.0, 0.1 * c, 0.3 * c]);
        let low_rank = hooke::linalg::LowRank::new(vectors.clone(), core).unwrap();
        let whole = &kd + &low_rank.vectors * &low_rank.core * low_rank.vectors.transpose();
        let reduced = &l_inverse * whole * l_inverse.transpose();
        let mut reference: Vec<f64> = SymmetricEigen::new((&reduced + reduced.transpose()) * 0.5)
            .eigenvalues
            .iter()
            .copied()
            .collect();
        reference.sort_by(f64::total_cmp);
        let pairs = hooke::linalg::smallest_eigenpairs_with_low_rank(
            &mut None,
            (&pattern, &k, Some(&low_rank)),
            &m,
            6,
            &EigenSettings::default(),
        )
        .unwrap();
        for i in 0..6 {
            let error = (pairs.values[i] / reference[i] - 1.0).abs();
            assert!(
                error < 1e-8,
                "scale {scale}, λ{i}: {} vs {}",
                pairs.values[i],
                reference[i]
            );
        }
        assert!(
            (pairs.values[0] / sparse_only[0] - 1.0).abs() > 0.1,
            "the low-rank part moved λ₁"
        );
    }
}

#[test]
fn free_body_has_six_zero_modes_and_repeated_eigenvalues_are_found() {
    // A free cube: six zero modes and, by symmetry, repeated nonzero eigenvalues.
    let model = uniform_model(
        bar([0.2, 0.2, 0.2], [3, 3, 3], TetsPerHex::Six),
        MaterialModel::NeoHookean,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    check(
        &model,
        &model.rest_positions(),
        14,
        &EigenSettings::default(),
        "free cube",
    );
    let (pattern, k, m, _) = problem(&model, &model.rest_positions());
    let pairs = smallest_eigenpairs(&pattern, &k, &m, 7, &EigenSettings::default()).unwrap();
    assert!(
        pairs.values[..6].iter().all(|l| l.abs() < 1e-6 * pairs.values[6]),
        "{:?}",
        pairs.values
    );
}

#[test]
fn indefinite_stiffness_needs_and_accepts_a_shift_below_the_spectrum() {
    // Strongly compressed: K is indefinite.
    let (model, x) = common::compressed_clamped_bar();
    let (pattern, k, m, reference) = problem(&model, &x);
    assert!(reference[0] < 0.0, "the test needs an indefinite K ({})", reference[0]);
    // A shift above the negative eigenvalues is a clear error.
    let too_high = EigenSettings {
        shift: Some(0.5 * reference[0]),
        ..EigenSettings::default()
    };
    let error = smallest_eigenpairs(&pattern, &k, &m, 4, &too_high).unwrap_err();
    assert!(error.to_string().contains("shift"), "{error}");
    // The automatic shift steps below the spectrum by itself.
    check(&model, &x, 4, &EigenSettings::default(), "indefinite, automatic shift");
    let settings = EigenSettings {
        shift: Some(2.0 * reference[0] - 1.0),
        ..EigenSettings::default()
    };
    check(&model, &x, 4, &settings, "indefinite");
}

/// The lowest bending modes of a clamped square beam: a repeated pair (two
/// bending directions) near Euler–Bernoulli's f₁ = (1.8751²/2π)√(EI/ρAL⁴);
/// and K, M exported to Matrix Market read back exactly.
#[test]
fn cantilever_modes_and_matrix_export() {
    let (length, side, youngs, density) = (1.0, 0.1, 1e9, 1000.0);
    // The alternating 5-tet split is symmetric under y ↔ z (the 6-tet split is not), so the pair is exact.
    let mut model = uniform_model(
        bar([length, side, side], [40, 4, 4], TetsPerHex::Five),
        MaterialModel::Linear,
        parameters(youngs, 0.0),
        MassKind::Consistent,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let state = model.initial_state();
    let modes = hooke::modal::lowest_modes(&model, &state, 3, &EigenSettings::default()).unwrap();
    let f = modes.frequencies();
    let beam = 1.8751f64.powi(2) / (2.0 * std::f64::consts::PI)
        * (youngs * side.powi(4) / 12.0 / (density * side * side * length.powi(4))).sqrt();
    assert!((f[0] - f[1]).abs() < 1e-6 * f[0], "bending pair {f:?}");
    assert!(f[0] > beam && f[0] < 1.1 * beam, "f₁ = {} vs beam theory {beam}", f[0]);

    let directory = std::env::temp_dir().join(format!("hooke-export-{}", std::process::id()));
    let written = hooke::modal::export_matrices(&model, &state, &directory).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["K.mtx", "M.mtx", "g.mtx", "energy.txt", "f.mtx", "free_dofs.csv"],
        "no damping: no D.mtx"
    );
    let text = std::fs::read_to_string(directory.join("M.mtx")).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('%'));
    let header: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let dofs = model.dof_map(0.0);
    assert_eq!(header[0], dofs.free_count());
    // Sum of all entries of the symmetric M (lower triangle, off-diagonals twice) = 3 × free mass.
    let total: f64 = lines
        .map(|l| {
            let parts: Vec<&str> = l.split_whitespace().collect();
            let (r, c, v): (usize, usize, f64) = (
                parts[0].parse().unwrap(),
                parts[1].parse().unwrap(),
                parts[2].parse().unwrap(),
            );
            if r == c {
                v
            } else {
                2.0 * v
            }
        })
        .sum();
    let _ = std::fs::remove_dir_all(&directory);
    assert!(total > 0.0 && total.is_finite());
    let consistent_total: f64 = {
        let (pattern, source) = model.pattern().restrict(&dofs.free_index);
        let values: Vec<f64> = source.iter().map(|&s| model.mass().values()[s]).collect();
        let ones = vec![1.0; pattern.size];
        let mut product = vec![0.0; pattern.size];
        pattern.symmetric_multiply(&values, &ones, &mut product);
        product.iter().sum()
    };
    assert!(
        (total - consistent_total).abs() < 1e-9 * consistent_total,
        "{total} vs {consistent_total}"
    );
}

/// Started from the previous state's eigenvectors (as SIERE does every step),
/// the solver finds the same pairs at a nearby state with fewer solves.
#[test]
fn warm_start_from_nearby_eigenvectors_saves_solves() {
    let mut model = uniform_model(
        bar([0.6, 0.1, 0.12], [12, 2, 3], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.4),
        MassKind::Lumped,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let rest = model.rest_positions();
    let (pattern, k0, m, _) = problem(&model, &rest);
    let settings = EigenSettings {
        verify_complete: false,
        krylov_dimension: 20,
        // As many as the warm-start vectors, so that both runs use the same blocks.
        block_size: 6,
        ..EigenSettings::default()
    };
    let before = smallest_eigenpairs(&pattern, &k0, &m, 6, &settings).unwrap();
    // A slightly bent state.
    let bent: Vec<f64> = rest
        .chunks(3)
        .flat_map(|p| [p[0], p[1], p[2] - 0.01 * p[0] * p[0]])
        .collect();
    let (_, k1, _, reference) = problem(&model, &bent);
    let cold = smallest_eigenpairs(&pattern, &k1, &m, 6, &settings).unwrap();
    let warm_settings = EigenSettings {
        warm_start: before.vectors.clone(),
        ..settings.clone()
    };
    let warm = smallest_eigenpairs(&pattern, &k1, &m, 6, &warm_settings).unwrap();
    for (i, expected) in reference.iter().take(6).enumerate() {
        for (what, pairs) in [("cold", &cold), ("warm", &warm)] {
            assert!(
                (pairs.values[i] - expected).abs() < 1e-8 * expected.abs(),
                "{what}: λ{i} = {} vs {expected}",
                pairs.values[i]
            );
        }
    }
    assert!(
        warm.solves < cold.solves && warm.block_solves < cold.block_solves,
        "warm start took {} solves in {} blocks, cold {} in {}",
        warm.solves,
        warm.block_solves,
        cold.solves,
        cold.block_solves
    );
}

/// Numerical stiffening (EigenFit paper, §2.1; Chen 2019 thesis, §2.2.2; the
/// typos in their printed element matrices corrected): the 1D wave equation
/// u_tt = c²u_xx on [0, 1], fixed ends, linear
/// elements of length l. With consistent mass the lowest eigenvalue is
/// (6c²/l²)(1 − cos πl)/(2 + cos πl), above π²c² and falling toward it as the
/// mesh is refined; with lumped mass it is (4c²/l²) sin²(πl/2), below π²c².
#[test]
fn one_dimensional_stiffening_matches_its_closed_form() {
    use hooke::linalg::LowerPattern;
    let c2 = 2.0; // c²
    let mut previous_consistent = f64::INFINITY;
    for elements in [4usize, 8, 16, 32, 64] {
        let l = 1.0 / elements as f64;
        let n = elements - 1; // interior nodes
        let columns: Vec<Vec<usize>> = (0..n)
            .map(|j| if j + 1 < n { vec![j, j + 1] } else { vec![j] })
            .collect();
        let pattern = LowerPattern::from_columns(columns);
        let mut k = vec![0.0; pattern.nonzeros()];
        let mut consistent = vec![0.0; pattern.nonzeros()];
        let mut lumped = vec![0.0; pattern.nonzeros()];
        for j in 0..n {
            let diagonal = pattern.position(j, j).unwrap();
            k[diagonal] = 2.0 * c2 / l;
            consistent[diagonal] = 4.0 * l / 6.0;
            lumped[diagonal] = l;
            if j + 1 < n {
                let off = pattern.position(j + 1, j).unwrap();
                k[off] = -c2 / l;
                consistent[off] = l / 6.0;
            }
        }
        let settings = EigenSettings::default();
        let found_consistent = smallest_eigenpairs(&pattern, &k, &consistent, 1, &settings)
            .unwrap()
            .values[0];
        let found_lumped = smallest_eigenpairs(&pattern, &k, &lumped, 1, &settings).unwrap().values[0];
        let pi_l = std::f64::consts::PI * l;
        let closed_consistent = 6.0 * c2 / (l * l) * (1.0 - pi_l.cos()) / (2.0 + pi_l.cos());
        let closed_lumped = 4.0 * c2 / (l * l) * (0.5 * pi_l).sin().powi(2);
        let exact = std::f64::consts::PI.powi(2) * c2;
        assert!(
            (found_consistent - closed_consistent).abs() < 1e-10 * exact,
            "l = {l}: {found_consistent} vs {closed_consistent}"
        );
        assert!(
            (found_lumped - closed_lumped).abs() < 1e-10 * exact,
            "l = {l}: {found_lumped} vs {closed_lumped}"
        );
        assert!(
            found_consistent > exact && found_consistent < previous_consistent,
            "stiffening from above at l = {l}"
        );
        assert!(found_lumped < exact, "lumped mass approaches from below at l = {l}");
        previous_consistent = found_consistent;
        if elements == 4 {
            // The closed form's value for l = 1/4 with c = 1: 10.3866.
            assert!((closed_consistent / c2 - 10.3866).abs() < 1e-4);
        }
    }
}

/// A free body has exactly six rigid-body modes: each reported at 0 Hz (never
/// NaN, whatever the sign of its rounding-level ω²), and the first elastic mode
/// is not mistaken for one. Asking for no modes is a user error.
#[test]
fn rigid_body_modes_are_zero_frequencies_and_counted() {
    let model = uniform_model(
        bar([0.4, 0.1, 0.1], [4, 1, 1], TetsPerHex::Six),
        MaterialModel::NeoHookean,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let state = model.initial_state();
    let modes = hooke::modal::lowest_modes(&model, &state, 8, &EigenSettings::default()).unwrap();
    assert!(
        modes.eigenvalues[..6].iter().any(|l| *l < 0.0),
        "the test needs a negative rounding-level ω²"
    );
    let f = modes.frequencies();
    assert_eq!(&f[..6], &[0.0; 6], "{f:?}");
    assert!((0..6).all(|i| modes.is_rigid(i)) && !modes.is_rigid(6));
    assert!(f[6] > 1.0 && f[7] >= f[6], "{f:?}");
    let error = hooke::modal::lowest_modes(&model, &state, 0, &EigenSettings::default()).unwrap_err();
    assert!(error.is_user_error(), "{error}");
}
