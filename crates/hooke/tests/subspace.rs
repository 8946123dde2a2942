//! Skinning eigenmodes, cubature and subspace (mixed) FEM: the numerical
//! checks of what Trusty et al. 2023 state (§4–5, §7).

mod common;

use common::{bar, parameters, uniform_model, Lcg};
use hooke::material::{IsotropicMaterial, Material, MaterialModel};
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::{Model, Motion, State};
use hooke::reduced::stretch::{
    evaluate_stretch, general_stretch_evaluation, to_matrix, to_vector, Stretch, OFF_DIAGONAL_WEIGHT,
};
use hooke::reduced::{skinning_eigenmodes, ReducedMethod, ReducedModel, SkinningBasis, SubspaceSettings};
use nalgebra::{DMatrix, DVector, Matrix3, Vector3, Vector6};

fn material(model: MaterialModel, youngs_modulus: f64) -> std::sync::Arc<dyn Material> {
    IsotropicMaterial::shared(model, &parameters(youngs_modulus, 0.35))
}

/// A 3:1:1 bar, soft (E_soft) for x < 1.5 and stiff (E_stiff) beyond.
fn two_material_bar(soft: f64, stiff: f64, cells: [usize; 3], model: MaterialModel) -> Model {
    let mesh = bar([3.0, 1.0, 1.0], cells, TetsPerHex::Six);
    let materials = mesh
        .tets
        .iter()
        .map(|tet| {
            let x = tet.iter().map(|&v| mesh.vertices[v].x).sum::<f64>() / 4.0;
            material(model, if x < 1.5 { soft } else { stiff })
        })
        .collect();
    Model::new(mesh, materials, MassKind::Lumped).expect("model")
}

#[test]
fn the_polar_decomposition_and_its_jacobian_match_finite_differences() {
    let mut random = Lcg::new(5);
    let inverted = Matrix3::from_diagonal(&Vector3::new(1.1, 0.9, -0.4));
    let nearly_flat = Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, 1e-3));
    let mut cases = vec![inverted, nearly_flat, Matrix3::identity()];
    for _ in 0..20 {
        cases.push(random.rotation() * (Matrix3::identity() + random.matrix(0.4)));
    }
    for f in cases {
        let polar = Stretch::of(&f);
        assert!((polar.rotation * polar.stretch - f).norm() < 1e-12 * f.norm().max(1.0));
        assert!((polar.rotation.determinant() - 1.0).abs() < 1e-12);
        assert!((polar.stretch - polar.stretch.transpose()).norm() < 1e-12);
        let jacobian = polar.jacobian();
        let h = 1e-6;
        for k in 0..9 {
            let mut plus = f;
            let mut minus = f;
            plus[(k % 3, k / 3)] += h;
            minus[(k % 3, k / 3)] -= h;
            let numeric = (Stretch::of(&plus).vector() - Stretch::of(&minus).vector()) / (2.0 * h);
            let error = (numeric - jacobian.column(k)).norm();
            assert!(
                error < 1e-6 * (1.0 + numeric.norm()),
                "∂z/∂F column {k} off by {error} at F = {f}"
            );
        }
    }
}

#[test]
fn materials_in_stretch_form_match_finite_differences_and_rest_at_identity() {
    let mut random = Lcg::new(11);
    for model in [
        MaterialModel::FixedCorotational,
        MaterialModel::Arap,
        MaterialModel::StableNeoHookean,
    ] {
        let m = material(model, 1e5);
        let rest = evaluate_stretch(&*m, &to_vector(&Matrix3::identity()), false).expect("defined");
        assert!(
            rest.energy.abs() < 1e-9 && rest.gradient.norm() < 1e-6,
            "{model:?} is not at rest at S = I"
        );
        for _ in 0..10 {
            let s = Matrix3::identity() + random.matrix(0.2);
            let z = to_vector(&(0.5 * (s + s.transpose())));
            let at = evaluate_stretch(&*m, &z, false).expect("defined");
            let h = 1e-6;
            for k in 0..6 {
                let mut plus = z;
                let mut minus = z;
                plus[k] += h;
                minus[k] -= h;
                let (p, q) = (
                    evaluate_stretch(&*m, &plus, false).unwrap(),
                    evaluate_stretch(&*m, &minus, false).unwrap(),
                );
                let gradient = (p.energy - q.energy) / (2.0 * h);
                assert!(
                    (gradient - at.gradient[k]).abs() < 1e-5 * (1.0 + at.gradient.norm()),
                    "{model:?} ∂ψ/∂z{k}"
                );
                let column = (p.gradient - q.gradient) / (2.0 * h);
                assert!(
                    (column - at.hessian.column(k)).norm() < 1e-4 * (1.0 + at.hessian.norm()),
                    "{model:?} ∂²ψ/∂z∂z{k}"
                );
            }
            let projected = evaluate_stretch(&*m, &z, true).unwrap();
            assert!(projected.hessian.symmetric_eigenvalues().min() >= -1e-9 * projected.hessian.norm());
        }
        // The Frobenius product: zᵀ D y = S : Y.
        let (a, b) = (random.matrix(1.0), random.matrix(1.0));
        let (a, b) = (a + a.transpose(), b + b.transpose());
        let d = Vector6::from_column_slice(&OFF_DIAGONAL_WEIGHT);
        assert!((to_vector(&a).component_mul(&d).dot(&to_vector(&b)) - a.dot(&b)).abs() < 1e-12);
        assert_eq!(to_matrix(&to_vector(&a)), a);
    }
}

#[test]
fn the_direct_symmetric_form_equals_the_general_path_for_every_isotropic_model() {
    let mut random = Lcg::new(17);
    let mut stretches = vec![
        Matrix3::identity(),
        Matrix3::from_diagonal(&Vector3::new(1.2, 1.2, 0.9)),
        Matrix3::from_diagonal(&Vector3::new(0.3, 2.5, 1.0)),
    ];
    for _ in 0..20 {
        let a = Matrix3::identity() + random.matrix(0.3);
        stretches.push(a.transpose() * a);
    }
    let models = MaterialModel::ALL.into_iter().filter(|&m| m != MaterialModel::Linear);
    for model in models {
        let m = material(model, 1e5);
        for s in &stretches {
            let z = to_vector(s);
            for project in [false, true] {
                let direct = m
                    .evaluate_symmetric(s, hooke::material::Want::Derivative { project })
                    .unwrap_or_else(|| panic!("{model:?} has a direct form at S = {s}"));
                let general = general_stretch_evaluation(&*m, s, project).expect("defined");
                let scale = 1.0 + general.hessian.norm();
                assert!((direct.energy - general.energy).abs() < 1e-9 * (1.0 + general.energy.abs()));
                assert!(
                    (direct.gradient - general.gradient).norm() < 1e-9 * scale,
                    "{model:?} gradient"
                );
                assert!(
                    (direct.hessian - general.hessian).norm() < 1e-8 * scale,
                    "{model:?} Hessian (projected: {project}) at S = {s}: {} against {}",
                    direct.hessian,
                    general.hessian
                );
                assert_eq!(evaluate_stretch(&*m, &z, project).unwrap().hessian, direct.hessian);
            }
        }
        // An inverted stretch has no direct form; the general path serves it.
        let inverted = Matrix3::from_diagonal(&Vector3::new(1.1, 0.9, -0.4));
        assert!(m.evaluate_symmetric(&inverted, hooke::material::Want::Energy).is_none());
    }
    // A scaled material scales every part.
    let base = material(MaterialModel::StableNeoHookean, 1e5);
    let scaled = hooke::material::scaled::Scaled {
        base: base.clone(),
        factor: 3.0,
    };
    let s = stretches[5];
    let want = hooke::material::Want::Derivative { project: false };
    let (a, b) = (
        base.evaluate_symmetric(&s, want).unwrap(),
        scaled.evaluate_symmetric(&s, want).unwrap(),
    );
    assert!((3.0 * a.hessian - b.hessian).norm() < 1e-12 * b.hessian.norm());
    assert!((3.0 * a.energy - b.energy).abs() < 1e-12 * b.energy.abs());
}

#[test]
fn skinning_weights_are_mass_orthonormal_and_start_with_the_constant() {
    let model = uniform_model(
        bar([2.0, 0.5, 0.5], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::FixedCorotational,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let modes = skinning_eigenmodes(&model, 6).expect("modes");
    let masses = DMatrix::from_diagonal(&DVector::from_column_slice(model.mass().lumped()));
    let gram = modes.weights.transpose() * &masses * &modes.weights;
    assert!((gram - DMatrix::identity(6, 6)).amax() < 1e-8);
    assert!(modes.eigenvalues[0].abs() < 1e-6 * modes.eigenvalues[1]);
    let first = modes.weights.column(0);
    assert!(
        first.max() - first.min() < 1e-6 * first.amax(),
        "the first weight is constant on a free body"
    );
    assert!(modes.eigenvalues.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn skinning_weights_bend_in_the_soft_half_and_not_in_the_stiff_one() {
    let model = two_material_bar(1e5, 1e9, [12, 3, 3], MaterialModel::FixedCorotational);
    let modes = skinning_eigenmodes(&model, 5).expect("modes");
    let vertices = model.mesh().vertices();
    for j in 1..5 {
        let spread = |soft: bool| {
            let values: Vec<f64> = (0..vertices.len())
                .filter(|&v| (vertices[v].x < 1.4) == soft && (vertices[v].x > 1.6 || soft))
                .map(|v| modes.weights[(v, j)])
                .collect();
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            values.iter().map(|w| (w - mean).powi(2)).sum::<f64>() / values.len() as f64
        };
        assert!(
            spread(false) < 1e-2 * spread(true),
            "mode {j} varies as much in the stiff half ({:.3e}) as in the soft half ({:.3e})",
            spread(false),
            spread(true)
        );
    }
}

#[test]
fn the_skinning_basis_reproduces_rigid_and_affine_motion_and_has_full_rank() {
    let model = uniform_model(
        bar([2.0, 0.5, 0.5], [6, 2, 2], TetsPerHex::Six),
        MaterialModel::Arap,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let modes = skinning_eigenmodes(&model, 4).expect("modes");
    let basis = SkinningBasis::new(&modes, model.mesh().vertices());
    let dense = basis.dense();
    let singular = dense.clone().svd(false, false).singular_values;
    assert!(singular.min() > 1e-8 * singular.max(), "B has full column rank 12m");
    let reduced = ReducedModel::new(&model, &SubspaceSettings::new(4)).expect("reduced");
    let mut random = Lcg::new(3);
    for affine in [false, true] {
        let a = match affine {
            false => random.rotation(),
            true => random.rotation() * (Matrix3::identity() + random.matrix(0.3)),
        };
        let t = Vector3::new(random.next(), random.next(), random.next());
        let displacement: Vec<f64> = model
            .mesh()
            .vertices()
            .iter()
            .flat_map(|x| {
                let y = a * x + t - x;
                [y.x, y.y, y.z]
            })
            .collect();
        let u = reduced.project(&model, &displacement).expect("projection");
        let error = basis
            .displacement(&u)
            .iter()
            .zip(&displacement)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(error < 1e-10, "affine motion reproduced to {error}");
        // The structured products agree with the dense B.
        let dense_product = &dense * DVector::from_column_slice(&u);
        let structured = basis.displacement(&u);
        assert!(dense_product
            .iter()
            .zip(&structured)
            .all(|(a, b)| (a - b).abs() < 1e-12));
    }
}

#[test]
fn cubature_weights_sum_to_the_volume_and_integrate_affine_states_exactly() {
    let model = two_material_bar(1e5, 1e8, [12, 4, 4], MaterialModel::FixedCorotational);
    let settings = SubspaceSettings {
        modes: 4,
        cubature_points: Some(40),
        seed: 1,
    };
    let reduced = ReducedModel::new(&model, &settings).expect("reduced");
    let volume: f64 = reduced.points.iter().map(|p| p.weight).sum();
    assert!((volume - 3.0).abs() < 1e-10, "Σw = {volume}");
    assert_eq!(
        ReducedModel::new(&model, &settings).unwrap().cubature,
        reduced.cubature,
        "deterministic"
    );
    // Points per unit volume: the soft half gets more.
    let soft = reduced.points.iter().filter(|p| {
        let tet = model.mesh().element(p.element);
        tet.iter().map(|&v| model.mesh().vertices()[v].x).sum::<f64>() / 4.0 < 1.5
    });
    let soft_count = soft.count();
    assert!(
        soft_count * 2 > reduced.points.len() + 4,
        "{soft_count} of {} points in the soft half",
        reduced.points.len()
    );

    // One material, an affine state: the cubature energy is the exact energy.
    let uniform = uniform_model(
        bar([2.0, 0.5, 0.5], [8, 2, 2], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let reduced = ReducedModel::new(&uniform, &SubspaceSettings::new(3)).expect("reduced");
    let f = Matrix3::new(1.1, 0.2, 0.0, -0.1, 0.95, 0.05, 0.0, 0.1, 1.02);
    let displacement: Vec<f64> = uniform
        .mesh()
        .vertices()
        .iter()
        .flat_map(|x| {
            let y = f * x - x;
            [y.x, y.y, y.z]
        })
        .collect();
    let u = reduced.project(&uniform, &displacement).unwrap();
    let exact = uniform.elastic_energy(&reduced.positions(&u));
    let cubature = reduced.elastic_energy(&u);
    assert!((cubature - exact).abs() < 1e-12 * exact, "{cubature} against {exact}");
}

#[test]
fn enough_cubature_points_leave_only_the_rigid_null_space_and_too_few_leave_more() {
    let model = uniform_model(
        bar([2.0, 0.5, 0.5], [10, 3, 3], TetsPerHex::Six),
        MaterialModel::FixedCorotational,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    let zero_modes = |points: usize| {
        let settings = SubspaceSettings {
            modes: 4,
            cubature_points: Some(points),
            seed: 0,
        };
        let reduced = ReducedModel::new(&model, &settings).expect("reduced");
        let k = reduced.elastic_hessian(&vec![0.0; reduced.rank()]).unwrap();
        let eigenvalues = k.symmetric_eigenvalues();
        let top = eigenvalues.max();
        eigenvalues.iter().filter(|&&l| l < 1e-9 * top).count()
    };
    assert_eq!(zero_modes(80), 6, "the rigid motions only, at |𝒞| = 20 m");
    assert!(zero_modes(3) > 6, "|𝒞| < 2m leaves spurious zero-energy modes");
}

/// One step's reduced potential from a bent state of a pinned bar moving
/// (the prediction ũ bent twice as far), and that state.
fn bent_problem(model: &Model, reduced: &ReducedModel) -> (hooke::reduced::StepPotential, Vec<f64>) {
    let vertices = model.mesh().vertices();
    let displacement: Vec<f64> = vertices
        .iter()
        .flat_map(|x| {
            let s = x.x / 3.0;
            [0.0, 0.3 * s * s, 0.1 * s * s * s]
        })
        .collect();
    let u = reduced.project(model, &displacement).unwrap();
    let loads = reduced.loads(model, 0.0).unwrap();
    let h = 0.02;
    let velocity: Vec<f64> = u.iter().map(|u| u / h).collect();
    (reduced.step_potential(&u, &velocity, h, &loads), u)
}

fn pinned_two_material_bar(stiff: f64) -> Model {
    let mut model = two_material_bar(1e5, stiff, [9, 3, 3], MaterialModel::FixedCorotational);
    common::clamp_left_end(&mut model, Motion::Fixed {}, None);
    model
}

#[test]
fn the_condensed_step_solves_the_full_kkt_system() {
    let model = pinned_two_material_bar(1e6);
    let settings = SubspaceSettings {
        modes: 2,
        cubature_points: Some(12),
        seed: 0,
    };
    let reduced = ReducedModel::new(&model, &settings).unwrap();
    let (step, u0) = bent_problem(&model, &reduced);
    let r = reduced.rank();
    let count = reduced.points.len();
    // z away from z̄(u) so every block of the KKT system is exercised.
    let z0: Vec<Vector6<f64>> = reduced
        .stretches(&u0)
        .iter()
        .map(|z| z + Vector6::new(0.01, -0.02, 0.0, 0.005, 0.0, -0.01))
        .collect();
    // The full system (5): [H_u 0 G_uᵀ; 0 H_z G_zᵀ; G_u G_z 0] [du; dz; μ] = −[f_u; f_z; f_μ].
    let n = r + 12 * count;
    let mut kkt = DMatrix::zeros(n, n);
    let mut rhs = DVector::zeros(n);
    kkt.view_mut((0, 0), (r, r)).copy_from(&step.inertia);
    let hu_u = &step.inertia * DVector::from_column_slice(&u0);
    for i in 0..r {
        rhs[i] = -(hu_u[i] - step.rhs[i]);
    }
    let d = Vector6::from_column_slice(&OFF_DIAGONAL_WEIGHT);
    for (c, point) in reduced.points.iter().enumerate() {
        let w = point.weight;
        let polar = Stretch::of(&reduced.deformation_gradient(c, &u0));
        let a = reduced.element_map(c);
        let j = polar.jacobian() * a; // 6 × r
        let eval = evaluate_stretch(&*point.material, &z0[c], true).unwrap();
        let (zi, mi) = (r + 6 * c, r + 6 * count + 6 * c);
        kkt.view_mut((zi, zi), (6, 6)).copy_from(&(eval.hessian * w));
        for row in 0..6 {
            for col in 0..r {
                kkt[(mi + row, col)] = w * d[row] * j[(row, col)];
                kkt[(col, mi + row)] = w * d[row] * j[(row, col)];
            }
            kkt[(mi + row, zi + row)] = -w * d[row];
            kkt[(zi + row, mi + row)] = -w * d[row];
            rhs[zi + row] = -w * eval.gradient[row];
            rhs[mi + row] = -w * d[row] * (polar.vector() - z0[c])[row];
        }
    }
    let solution = kkt.lu().solve(&rhs).expect("KKT solvable");
    let mut u = u0.clone();
    let mut z = z0.clone();
    let mut multipliers = Vec::new();
    let report = reduced
        .mixed_iteration(&step, &mut u, &mut z, &mut multipliers)
        .unwrap();
    let alpha = report.step_length;
    assert!(alpha > 0.0);
    let scale = solution.rows(0, r).amax();
    for i in 0..r {
        let du = (u[i] - u0[i]) / alpha;
        assert!(
            (du - solution[i]).abs() < 1e-9 * scale,
            "du[{i}] {du} against {}",
            solution[i]
        );
    }
    for c in 0..count {
        let dz = (z[c] - z0[c]) / alpha;
        let expected = solution.rows(r + 6 * c, 6);
        assert!(
            (dz - expected).amax() < 1e-8 * (1.0 + expected.amax()),
            "dz at point {c}"
        );
        let expected_mu = solution.rows(r + 6 * count + 6 * c, 6);
        assert!(
            (multipliers[c] - expected_mu).amax() < 1e-8 * (1.0 + expected_mu.amax()),
            "μ at point {c}"
        );
    }
    // The full step was taken, and the merit the iteration computed for it in
    // its local pass is the Lagrangian there, bit for bit.
    assert_eq!(alpha, 1.0);
    let lagrangian = reduced.lagrangian(&step, &u, &z, &multipliers);
    assert_eq!(report.merit.to_bits(), lagrangian.to_bits());
}

#[test]
fn mixed_and_plain_subspace_fem_converge_to_the_same_state() {
    for stiff in [1e6, 1e9] {
        let model = pinned_two_material_bar(stiff);
        let reduced = ReducedModel::new(&model, &SubspaceSettings::new(3)).unwrap();
        let (step, u0) = bent_problem(&model, &reduced);
        let mut fem = u0.clone();
        for _ in 0..60 {
            if reduced.newton_iteration(&step, &mut fem).unwrap().decrement < 1e-24 {
                break;
            }
        }
        let mut mixed = u0.clone();
        let mut z = reduced.stretches(&u0);
        let mut multipliers = Vec::new();
        for _ in 0..200 {
            let report = reduced
                .mixed_iteration(&step, &mut mixed, &mut z, &mut multipliers)
                .unwrap();
            if report.decrement < 1e-24 && report.increment < 1e-14 {
                break;
            }
        }
        let norm = fem.iter().map(|x| x * x).sum::<f64>().sqrt();
        let start = u0.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(
            norm > 0.1 * start,
            "the step ends away from rest ({norm:.3e} against {start:.3e})"
        );
        let difference = fem.iter().zip(&mixed).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
        // Both end at rounding level. Mixed FEM stops where its line search
        // on the Lagrangian (ℒ ≈ −3e5 here, a sum of more and larger terms
        // than Φ) sees no decrease: changes of ℒ below about 1e-10 are lost to
        // rounding, which leaves u fixed only to about √(1e-10/λ_min) along the
        // softest direction. Measured: 5e-8 of ‖u‖ at E_stiff = 1e6 and 7e-10
        // at 1e9 (a wrong condensation or multiplier update is off by 1e-3).
        let tolerance = 1e-7;
        assert!(
            difference < tolerance * norm,
            "E_stiff = {stiff:e}: ‖u_MFEM − u_FEM‖/‖u‖ = {:.3e}",
            difference / norm
        );
        // At convergence the stretches are those of the positions.
        let gap = reduced
            .stretches(&mixed)
            .iter()
            .zip(&z)
            .map(|(a, b)| (a - b).amax())
            .fold(0.0, f64::max);
        assert!(gap < 1e-8, "z − z̄(u) = {gap:.3e}");
    }
}

#[test]
fn pinned_vertices_do_not_move_and_a_free_body_falls_at_g() {
    let model = pinned_two_material_bar(1e7);
    let pinned: Vec<usize> = model.pins()[0].vertices.clone();
    let solver = hooke::solve::SolverSettings {
        iterations: Some(2),
        ..Default::default()
    };
    for method in [ReducedMethod::MixedSqp, ReducedMethod::Newton] {
        let mut model = pinned_two_material_bar(1e7);
        model.set_gravity(Vector3::new(0.0, -9.81, 0.0));
        let mut integrator =
            hooke::reduced::SubspaceBackwardEuler::new(&model, &SubspaceSettings::new(4), method, solver.clone())
                .unwrap();
        let mut state = model.initial_state();
        for _ in 0..20 {
            hooke::integrate::Integrator::step(&mut integrator, &model, &mut state, 0.01).unwrap();
        }
        let rest = model.rest_positions();
        for &v in &pinned {
            for c in 0..3 {
                assert_eq!(state.positions[3 * v + c], rest[3 * v + c]);
            }
        }
        let tip = state
            .positions
            .iter()
            .skip(1)
            .step_by(3)
            .fold(f64::INFINITY, |a, &b| a.min(b));
        assert!(tip < -0.001, "{method:?}: the bar sags under gravity (lowest y {tip})");
    }
    // A free body in free fall: backward Euler's discrete free fall, exactly, and no deformation.
    let mut free = two_material_bar(1e5, 1e8, [6, 2, 2], MaterialModel::FixedCorotational);
    free.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    let mut integrator =
        hooke::reduced::SubspaceBackwardEuler::new(&free, &SubspaceSettings::new(3), ReducedMethod::MixedSqp, solver)
            .unwrap();
    let mut state: State = free.initial_state();
    let h = 0.01;
    let mut expected_velocity = 0.0;
    let mut expected_drop = 0.0;
    for _ in 0..10 {
        hooke::integrate::Integrator::step(&mut integrator, &free, &mut state, h).unwrap();
        expected_velocity -= 9.81 * h;
        expected_drop += h * expected_velocity;
    }
    let rest = free.rest_positions();
    for (i, (x, x0)) in state.positions.iter().zip(&rest).enumerate() {
        let expected = if i % 3 == 2 { x0 + expected_drop } else { *x0 };
        assert!((x - expected).abs() < 1e-9, "DOF {i}: {x} against {expected}");
    }
}

/// The 3:1:1 bar (soft 1e5 / stiff 1e7, 6×2×2 cells) under gravity, with a
/// soft pin turning its far end until it is released at t = 5.
fn bar_with_turning_soft_pin(material_model: MaterialModel, mass: MassKind) -> Model {
    use hooke::model::Attachment;
    let mesh = bar([3.0, 1.0, 1.0], [6, 2, 2], TetsPerHex::Six);
    let materials = mesh
        .tets
        .iter()
        .map(|tet| {
            let x = tet.iter().map(|&v| mesh.vertices[v].x).sum::<f64>() / 4.0;
            material(material_model, if x < 1.5 { 1e5 } else { 1e7 })
        })
        .collect();
    let mut model = Model::new(mesh, materials, mass).expect("model");
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    let vertices: Vec<usize> = (0..model.mesh().vertex_count())
        .filter(|&v| model.mesh().vertices()[v].x > 2.9)
        .collect();
    let masses: Vec<f64> = vertices.iter().map(|&v| model.mass().lumped()[v]).collect();
    let rest = vertices.iter().map(|&v| model.mesh().vertices()[v]).collect();
    let motion = Motion::Rotation {
        axis: [1.0, 0.0, 0.0],
        center: [0.0, 0.5, 0.5],
        angular_velocity: 1.0,
        velocity: [0.0; 3],
    };
    let pin = Attachment::new(vertices, rest, &masses, 1e4, motion, Some(5.0), [true; 3], 3);
    model.add_term(Box::new(pin)).unwrap();
    model
}

#[test]
fn reduced_soft_pins_and_loads_equal_the_full_terms_on_the_subspace() {
    let model = bar_with_turning_soft_pin(MaterialModel::FixedCorotational, MassKind::Lumped);
    let reduced = ReducedModel::new(&model, &SubspaceSettings::new(3)).unwrap();
    let mut random = Lcg::new(9);
    let u: Vec<f64> = (0..reduced.rank()).map(|_| 0.01 * random.next()).collect();
    let x = reduced.positions(&u);
    let rest = model.rest_positions();
    // 0.7 twice: the pin's Hessian again after its release (its reduction is kept between steps).
    for time in [0.0, 0.7, 6.0, 0.7] {
        let loads = reduced.loads(&model, time).unwrap();
        let non_elastic = |x: &[f64]| -> f64 {
            model
                .terms()
                .iter()
                .filter(|t| t.as_elasticity().is_none())
                .map(|t| t.energy(x, time))
                .sum()
        };
        let qu = &loads.stiffness * DVector::from_column_slice(&u);
        let reduced_energy = non_elastic(&rest) - loads.force.iter().zip(&u).map(|(f, u)| f * u).sum::<f64>()
            + 0.5 * u.iter().zip(qu.iter()).map(|(a, b)| a * b).sum::<f64>();
        let exact = non_elastic(&x);
        assert!(
            (reduced_energy - exact).abs() < 1e-9 * exact.abs().max(1.0),
            "t = {time}: reduced {reduced_energy} against {exact}"
        );
    }
}

/// BᵀHB of the model's non-elastic terms at `time`, from the full Hessian and the dense basis.
fn dense_reduced_loads(model: &Model, reduced: &ReducedModel, time: f64) -> DMatrix<f64> {
    let x = model.rest_positions();
    let n = x.len();
    let mut hessian = DMatrix::zeros(n, n);
    for term in model.terms().iter().filter(|t| t.as_elasticity().is_none()) {
        let pattern = model.pattern();
        let mut values = vec![0.0; pattern.nonzeros()];
        let mut gradient = vec![0.0; n];
        let mut low_rank = Vec::new();
        let mut target = hooke::model::HessianTarget {
            values: &mut values,
            low_rank: &mut low_rank,
        };
        term.hessian(&x, time, false, &mut gradient, &mut target, false)
            .unwrap();
        for column in 0..pattern.size {
            for k in pattern.column_starts[column]..pattern.column_starts[column + 1] {
                let row = pattern.row_indices[k];
                hessian[(row, column)] += values[k];
                if row != column {
                    hessian[(column, row)] += values[k];
                }
            }
        }
    }
    let b = reduced.basis.dense();
    b.transpose() * hessian * b
}

#[test]
fn the_held_point_is_reduced_again_when_it_changes_and_kept_while_it_does_not() {
    use hooke::model::PointerSpring;
    let mut model = bar_with_turning_soft_pin(MaterialModel::FixedCorotational, MassKind::Lumped);
    model.set_pointer_spring(PointerSpring::new(None, 0.0)).unwrap();
    let reduced = ReducedModel::new(&model, &SubspaceSettings::new(3)).unwrap();
    let x = model.rest_positions();
    let at = |v: usize, dz: f64| Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2] + dz);
    // Nothing held; vertex 7 held, then dragged (same Hessian, other force);
    // vertex 12 held by another stiffness; let go; vertex 7 again.
    let holds = [
        None,
        Some((7, 0.1, 300.0)),
        Some((7, 0.3, 300.0)),
        Some((12, 0.1, 800.0)),
        None,
        Some((7, 0.1, 300.0)),
    ];
    for (step, held) in holds.into_iter().enumerate() {
        let stiffness = held.map_or(0.0, |h| h.2);
        let spring = PointerSpring::new(held.map(|(v, dz, _)| (v, at(v, dz))), stiffness);
        model.set_pointer_spring(spring).unwrap();
        let time = 0.1 * step as f64;
        let loads = reduced.loads(&model, time).unwrap();
        let dense = dense_reduced_loads(&model, &reduced, time);
        let error = (&loads.stiffness - &dense).abs().max();
        assert!(
            error <= 1e-9 * dense.abs().max(),
            "hold {step} ({held:?}): reduced stiffness off the dense BᵀHB by {error:e}"
        );
        // The pull on the held point is in the reduced force: Bᵀ of the full gradient.
        let mut gradient = vec![0.0; x.len()];
        for term in model.terms().iter().filter(|t| t.as_elasticity().is_none()) {
            term.gradient(&x, time, &mut gradient, false).unwrap();
        }
        let expected = reduced.basis.reduce(&gradient);
        for (f, g) in loads.force.iter().zip(&expected) {
            assert!((f + g).abs() <= 1e-9 * expected.iter().fold(1.0f64, |m, v| m.max(v.abs())));
        }
    }
}

#[test]
fn energies_and_momenta_recorded_in_the_subspace_equal_those_of_the_expanded_state() {
    // With every element a cubature point the elastic energy is exact too;
    // the rest (kinetic, momenta, gravity, soft pins) is exact at any |𝒞|.
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        let model = bar_with_turning_soft_pin(MaterialModel::StableNeoHookean, mass);
        let elements = model.mesh().element_count();
        for points in [elements, 12] {
            let settings = SubspaceSettings {
                cubature_points: Some(points),
                ..SubspaceSettings::new(3)
            };
            let reduced = ReducedModel::new(&model, &settings).unwrap();
            let mut random = Lcg::new(4);
            let u: Vec<f64> = (0..reduced.rank()).map(|_| 0.02 * random.next()).collect();
            let velocity: Vec<f64> = (0..reduced.rank()).map(|_| random.next()).collect();
            for time in [0.0, 0.7, 6.0] {
                let state = reduced.full_state(time, &u, &velocity);
                let full = hooke::simulation::energy_record(&model, &state);
                let loads = reduced.loads(&model, time).unwrap();
                let sub = reduced.energy_record(&u, &velocity, None, &loads, time);
                let close = |a: f64, b: f64, scale: f64| (a - b).abs() <= 1e-9 * scale.max(1e-12);
                let what = format!("{mass:?}, |𝒞| = {points}, t = {time}");
                let momentum_scale = full
                    .linear_momentum
                    .iter()
                    .chain(&full.angular_momentum)
                    .fold(0.0, |m, x| x.abs().max(m));
                assert!(
                    close(sub.kinetic, full.kinetic, full.kinetic),
                    "{what}: kinetic {} against {}",
                    sub.kinetic,
                    full.kinetic
                );
                assert!(
                    close(sub.gravitational, full.gravitational, full.gravitational.abs()),
                    "{what}: gravity"
                );
                for k in 0..3 {
                    assert!(
                        close(sub.linear_momentum[k], full.linear_momentum[k], momentum_scale),
                        "{what}: p[{k}]"
                    );
                    assert!(
                        close(sub.angular_momentum[k], full.angular_momentum[k], momentum_scale),
                        "{what}: L[{k}] {} against {}",
                        sub.angular_momentum[k],
                        full.angular_momentum[k]
                    );
                }
                let pin_energy: f64 = model
                    .terms()
                    .iter()
                    .filter(|t| t.as_elasticity().is_none() && t.kind() == hooke::model::TermKind::Elastic)
                    .map(|t| t.energy(&state.positions, time))
                    .sum();
                assert!(pin_energy > 0.0 || time > 5.0, "{what}: the soft pin holds energy");
                let cubature = sub.elastic - pin_energy;
                assert!(
                    close(cubature, reduced.elastic_energy(&u), full.elastic),
                    "{what}: soft pin energy"
                );
                if points == elements {
                    assert!(
                        close(sub.elastic, full.elastic, full.elastic),
                        "{what}: elastic {} against {}",
                        sub.elastic,
                        full.elastic
                    );
                }
            }
        }
    }
}

#[test]
fn a_run_expands_the_subspace_state_only_for_its_frames_and_records_the_same_energies() {
    let text = turned_bar_scene("kind = \"mixed_sqp\"\niterations = 2", "");
    let scene = hooke::scene::Scene::from_text(&text, "test.toml", ".".into()).unwrap();
    // By hand, with the full state at every step.
    let mut by_hand = scene.build().unwrap();
    let mut state = by_hand.initial_state.clone();
    let mut states = Vec::new();
    for _ in 0..10 {
        by_hand.integrator.step(&by_hand.model, &mut state, 0.02).unwrap();
        states.push(state.clone());
    }
    // Through the run loop, which defers the full state.
    let mut built = scene.build().unwrap();
    let outcome = common::run_quietly(
        &built.model,
        built.integrator.as_mut(),
        built.initial_state.clone(),
        0.2,
        0.02,
        "deferred_subspace_state",
    );
    assert_eq!(
        outcome.state.positions, states[9].positions,
        "the final state is expanded"
    );
    assert_eq!(outcome.state.velocities, states[9].velocities);
    for (record, state) in outcome.records[1..].iter().zip(&states) {
        let full = hooke::simulation::energy_record(&built.model, state);
        assert!(
            (record.kinetic - full.kinetic).abs() <= 1e-9 * full.kinetic,
            "t = {}",
            record.time
        );
        assert!(
            (record.angular_momentum[0] - full.angular_momentum[0]).abs()
                <= 1e-9 * full.angular_momentum[0].abs().max(1e-9)
        );
    }
    // A run that goes back one step (a rejected result) expands the step before.
    let mut deferred = scene.build().unwrap();
    deferred.integrator.defer_full_state(true);
    let mut state = deferred.initial_state.clone();
    for _ in 0..2 {
        deferred.integrator.step(&deferred.model, &mut state, 0.02).unwrap();
    }
    assert_eq!(
        state.positions, deferred.initial_state.positions,
        "a deferred step leaves the positions"
    );
    state.time = states[0].time;
    deferred.integrator.expand_state(&deferred.model, &mut state).unwrap();
    assert_eq!(state.positions, states[0].positions);
}

/// A small scene: a bar held at x = 0, its far end turned by a soft pin.
fn turned_bar_scene(solver: &str, extra: &str) -> String {
    format!(
        r#"
name = "turned_bar"
gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 0.5
time_step = 0.02
[[bodies]]
mesh = {{ box = {{ size = [1.0, 0.2, 0.2], cells = [10, 2, 2], origin = [0.0, -0.1, -0.1] }} }}
material = {{ model = "fixed_corotational", youngs_modulus = 1e5, poisson_ratio = 0.4, density = 1000.0 }}
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}
[[pins]]
select = {{ plane = {{ point = [1.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }} }}
motion = {{ kind = "rotation", axis = [1.0, 0.0, 0.0], center = [1.0, 0.0, 0.0], angular_velocity = 1.0 }}
soft = {{ stiffness = 1e6 }}
[subspace]
modes = 6
[solver]
{solver}
{extra}
"#
    )
}

#[test]
fn a_scene_turns_a_subspace_body_with_a_moving_soft_pin() {
    // Building a scene replaces its gravity term after the subspace is made
    // (the terms change places): the soft pin must still be found and act.
    for solver in ["kind = \"mixed_sqp\"\niterations = 2", "kind = \"newton\""] {
        let scene = hooke::scene::Scene::from_text(&turned_bar_scene(solver, ""), "test.toml", ".".into()).unwrap();
        let mut built = scene.build().unwrap();
        assert!(
            built.notes.iter().any(|n| n.contains("skinning eigenmodes")),
            "{:?}",
            built.notes
        );
        let mut state = built.initial_state.clone();
        for _ in 0..25 {
            built.integrator.step(&built.model, &mut state, 0.02).unwrap();
        }
        // The far end has turned about 0.5 rad with its pin.
        let rest = built.model.rest_positions();
        let (mut turned, mut count) = (0.0, 0);
        for (v, p) in rest.chunks(3).enumerate() {
            if p[0] > 0.99 && (p[1].abs() > 0.05 || p[2].abs() > 0.05) {
                let before = p[2].atan2(p[1]);
                let after = state.positions[3 * v + 2].atan2(state.positions[3 * v + 1]);
                let pi = std::f64::consts::PI;
                turned += (after - before + pi).rem_euclid(2.0 * pi) - pi;
                count += 1;
            }
        }
        let angle = turned / count as f64;
        assert!(
            (angle - 0.5).abs() < 0.05,
            "{solver}: the end turned {angle} rad, not 0.5"
        );
    }
}

#[test]
fn subspace_scenes_refuse_what_they_cannot_do() {
    let cases = [
        ("kind = \"lbfgs\"", "", "solver.kind"),
        (
            "kind = \"newton\"",
            "[integrator]\nkind = \"implicit_midpoint\"",
            "subspace",
        ),
        (
            "kind = \"newton\"",
            "[coordinates]\nkind = \"modal\"\nmodes = 4",
            "subspace",
        ),
        ("kind = \"newton\"", "[tearing]\nstretch = 1.5", "tearing"),
        ("kind = \"newton\"", "[damping]\nether_drag = 0.1", "damping.ether_drag"),
    ];
    for (solver, extra, key) in cases {
        let text = turned_bar_scene(solver, extra);
        let error = hooke::scene::Scene::from_text(&text, "test.toml", ".".into())
            .and_then(|s| s.build())
            .err()
            .unwrap_or_else(|| panic!("{solver} {extra} was accepted"));
        assert!(error.to_string().contains(key), "{error}");
    }
    // mixed_sqp without a subspace is full-space mixed FEM, by backward Euler only.
    let text = turned_bar_scene("kind = \"mixed_sqp\"", "[integrator]\nkind = \"implicit_midpoint\"")
        .replace("[subspace]\nmodes = 6\n", "");
    let error = hooke::scene::Scene::from_text(&text, "test.toml", ".".into())
        .and_then(|s| s.build())
        .err()
        .expect("refused");
    assert!(error.to_string().contains("mixed_sqp"), "{error}");
    // A hard pin that moves cannot be followed by a skinning subspace.
    let text = turned_bar_scene("kind = \"newton\"", "").replace("soft = { stiffness = 1e6 }\n", "");
    let error = hooke::scene::Scene::from_text(&text, "test.toml", ".".into())
        .and_then(|s| s.build())
        .err()
        .expect("refused");
    assert!(error.to_string().contains("hold still"), "{error}");
}

/// The decrements of 30 iterations of one step of a soft/stiff bar yanked at
/// its stiff end, for mixed FEM and FEM (Trusty et al. 2023, Fig. 9).
fn yanked_bar_decrements(stiff: f64) -> [Vec<f64>; 2] {
    use hooke::model::Attachment;
    let mut model = two_material_bar(1e5, stiff, [12, 4, 4], MaterialModel::FixedCorotational);
    common::clamp_left_end(&mut model, Motion::Fixed {}, None);
    let end: Vec<usize> = (0..model.mesh().vertex_count())
        .filter(|&v| model.mesh().vertices()[v].x > 2.99)
        .collect();
    let masses: Vec<f64> = end.iter().map(|&v| model.mass().lumped()[v]).collect();
    let targets = end
        .iter()
        .map(|&v| model.mesh().vertices()[v] + Vector3::new(0.0, 0.0, 1.0))
        .collect();
    model
        .add_term(Box::new(Attachment::new(
            end,
            targets,
            &masses,
            1e7,
            Motion::Fixed {},
            None,
            [true; 3],
            3,
        )))
        .unwrap();
    let reduced = ReducedModel::new(&model, &SubspaceSettings::new(6)).unwrap();
    let zero = vec![0.0; reduced.rank()];
    let step = reduced.step_potential(&zero, &zero, 1.0 / 60.0, &reduced.loads(&model, 0.0).unwrap());
    let mut fem = zero.clone();
    let fem_decrements = (0..30)
        .map(|_| reduced.newton_iteration(&step, &mut fem).unwrap().decrement)
        .collect();
    let (mut u, mut z, mut multipliers) = (zero.clone(), reduced.stretches(&zero), Vec::new());
    let mixed_decrements = (0..30)
        .map(|_| {
            reduced
                .mixed_iteration(&step, &mut u, &mut z, &mut multipliers)
                .unwrap()
                .decrement
        })
        .collect();
    [mixed_decrements, fem_decrements]
}

#[test]
fn mixed_fem_keeps_converging_where_stiffness_contrast_stalls_fem() {
    let iterations_to = |decrements: &[f64]| {
        let first = decrements[0];
        decrements.iter().position(|d| *d < 1e-10 * first).unwrap_or(usize::MAX)
    };
    let [mixed, fem] = yanked_bar_decrements(1e10);
    eprintln!(
        "1e10 mixed {:?}",
        mixed.iter().map(|d| format!("{d:.0e}")).collect::<Vec<_>>()
    );
    eprintln!(
        "1e10 fem {:?}",
        fem.iter().map(|d| format!("{d:.0e}")).collect::<Vec<_>>()
    );
    let [mixed_mild, fem_mild] = yanked_bar_decrements(1e6);
    eprintln!(
        "1e6 mixed {:?}",
        mixed_mild.iter().map(|d| format!("{d:.0e}")).collect::<Vec<_>>()
    );
    eprintln!(
        "1e6 fem {:?}",
        fem_mild.iter().map(|d| format!("{d:.0e}")).collect::<Vec<_>>()
    );
    assert!(iterations_to(&mixed) < 30, "mixed FEM converges at a contrast of 1e5");
    assert!(iterations_to(&fem) > iterations_to(&mixed), "FEM is slower there");
    assert!(
        iterations_to(&mixed_mild) < 30 && iterations_to(&fem_mild) < 30,
        "both converge at a contrast of 10"
    );
}

#[test]
fn a_soft_pin_that_spins_a_body_from_rest_is_not_taken_for_divergence() {
    // No gravity, nothing else acting: the kinetic energy the turning soft pin
    // gives its vertices at once is energy the scene accounts for, in the
    // full space as in a subspace.
    let fast = turned_bar_scene("kind = \"newton\"", "")
        .replace("gravity = [0.0, 0.0, -9.81]", "")
        .replace("angular_velocity = 1.0", "angular_velocity = 6.0");
    for text in [fast.clone(), fast.replace("[subspace]\nmodes = 6\n", "")] {
        let scene = hooke::scene::Scene::from_text(&text, "test.toml", ".".into()).unwrap();
        let mut built = scene.build().unwrap();
        let outcome = common::run_quietly(
            &built.model,
            built.integrator.as_mut(),
            built.initial_state.clone(),
            0.1,
            0.02,
            "spun_by_soft_pin",
        );
        assert_eq!(outcome.summary.statistics.steps, 5);
    }
}

#[test]
fn every_material_gets_its_own_cubature_points() {
    // A thin stiff core inside a soft bar: clustered with the soft elements
    // around it, it would be integrated as soft.
    let mesh = bar([3.0, 1.0, 1.0], [12, 4, 4], TetsPerHex::Six);
    let (soft, stiff) = (
        material(MaterialModel::FixedCorotational, 1e5),
        material(MaterialModel::FixedCorotational, 1e10),
    );
    let core = |tet: &[usize; 4]| {
        let c = tet.iter().map(|&v| mesh.vertices[v]).sum::<Vector3<f64>>() / 4.0;
        (c.y - 0.5).abs() < 0.2 && (c.z - 0.5).abs() < 0.2
    };
    let materials = mesh
        .tets
        .iter()
        .map(|t| if core(t) { stiff.clone() } else { soft.clone() })
        .collect();
    let model = Model::new(mesh.clone(), materials, MassKind::Lumped).unwrap();
    let settings = SubspaceSettings {
        modes: 4,
        cubature_points: Some(40),
        seed: 0,
    };
    let reduced = ReducedModel::new(&model, &settings).unwrap();
    let core_volume: f64 = reduced
        .points
        .iter()
        .filter(|p| core(&mesh.tets[p.element]))
        .map(|p| p.weight)
        .sum();
    // The core's points carry exactly the core's volume: no cluster straddles.
    let exact: f64 = mesh
        .tets
        .iter()
        .filter(|t| core(t))
        .map(|t| hooke::reduced::skinning::rest_frame(&mesh.vertices, t).unwrap().1)
        .sum();
    assert!(
        core_volume > 0.0 && (core_volume - exact).abs() < 1e-12,
        "{core_volume} against {exact}"
    );
    // Fewer points than materials is refused.
    let settings = SubspaceSettings {
        cubature_points: Some(1),
        ..settings
    };
    assert!(ReducedModel::new(&model, &settings).is_err());
}

#[test]
fn a_subspace_is_read_back_from_the_cache_and_recomputed_when_the_scene_changes() {
    let cache = std::env::temp_dir().join(format!("hooke-subspace-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let build = |text: &str| {
        let mut scene = hooke::scene::Scene::from_text(text, "test.toml", ".".into()).unwrap();
        scene.cache_directory = Some(cache.clone());
        scene.build().unwrap()
    };
    let note = |built: &hooke::scene::BuiltScene| built.notes.iter().find(|n| n.contains("skinning")).cloned().unwrap();
    let text = turned_bar_scene("kind = \"newton\"", "");
    let first = build(&text);
    assert!(note(&first).contains("computed"), "{}", note(&first));
    let second = build(&text);
    assert!(note(&second).contains("read from the cache"), "{}", note(&second));
    // The same steps from the cached subspace as from the computed one.
    let step = |mut built: hooke::scene::BuiltScene| {
        let mut state = built.initial_state.clone();
        for _ in 0..3 {
            built.integrator.step(&built.model, &mut state, 0.02).unwrap();
        }
        state.positions
    };
    let computed = step(first);
    assert_eq!(computed, step(second));
    // Precomputed where no cache can be written (its folder is a file): the
    // same steps again, and the note says where the subspace came from.
    let unwritable = cache.with_extension("file");
    std::fs::write(&unwritable, b"").unwrap();
    let mut scene = hooke::scene::Scene::from_text(&text, "test.toml", ".".into()).unwrap();
    scene.cache_directory = Some(unwritable.clone());
    let bytes = scene.precompute_subspace().unwrap();
    let given = scene
        .build_with(&hooke::scene::BuildOptions {
            pointer: false,
            subspace: Some(bytes),
        })
        .unwrap();
    assert!(note(&given).contains("given precomputed"), "{}", note(&given));
    assert_eq!(step(given), computed);
    let _ = std::fs::remove_file(&unwritable);
    // Another material: computed again. A damaged file: computed again.
    let stiffer = build(&text.replace("youngs_modulus = 1e5", "youngs_modulus = 2e5"));
    assert!(note(&stiffer).contains("computed"));
    for entry in std::fs::read_dir(&cache).unwrap() {
        std::fs::write(entry.unwrap().path(), b"{ not json").unwrap();
    }
    assert!(note(&build(&text)).contains("computed"));
    let _ = std::fs::remove_dir_all(&cache);
}

/// Subspace FEM iterated to convergence on one step of `model` from `start`
/// (positions), at rest velocity; returns the full positions x = X̄ + B u*.
fn converged_step(model: &Model, settings: &SubspaceSettings, start: &[f64], h: f64) -> Vec<f64> {
    let reduced = ReducedModel::new(model, settings).unwrap();
    let rest = model.rest_positions();
    let displacement: Vec<f64> = start.iter().zip(&rest).map(|(x, r)| x - r).collect();
    let u0 = reduced.project(model, &displacement).unwrap();
    let zero = vec![0.0; reduced.rank()];
    let step = reduced.step_potential(&u0, &zero, h, &reduced.loads(model, 0.0).unwrap());
    let mut u = u0;
    for _ in 0..100 {
        let report = reduced.newton_iteration(&step, &mut u).unwrap();
        if report.step_length == 0.0 || report.increment < 1e-13 {
            break;
        }
    }
    reduced.positions(&u)
}

#[test]
fn the_full_space_residual_falls_as_the_subspace_grows_and_rises_when_under_integrated() {
    // Trusty et al. 2023, Fig. 11: a homogeneous bar bent and let go for one step; the
    // full-space gradient of the step's potential at x = X̄ + B u*.
    let mut model = uniform_model(
        bar([3.0, 1.0, 1.0], [12, 4, 4], TetsPerHex::Six),
        MaterialModel::FixedCorotational,
        parameters(1e5, 0.4),
        MassKind::Lumped,
    );
    common::clamp_left_end(&mut model, Motion::Fixed {}, None);
    let rest = model.rest_positions();
    let start: Vec<f64> = rest
        .chunks(3)
        .flat_map(|p| {
            let s = p[0] / 3.0;
            [p[0], p[1] + 0.4 * s * s, p[2]]
        })
        .collect();
    let h = 1.0 / 60.0;
    let free = model.dof_map(0.0);
    let residual = |modes: usize, points: usize| {
        let settings = SubspaceSettings {
            modes,
            cubature_points: Some(points),
            seed: 0,
        };
        let x = converged_step(&model, &settings, &start, h);
        let mut gradient = vec![0.0; x.len()];
        model.gradient(&x, 0.0, &mut gradient).unwrap();
        let offset: Vec<f64> = x.iter().zip(&start).map(|(a, b)| a - b).collect();
        let mut inertia = vec![0.0; x.len()];
        model.mass_multiply(&offset, &mut inertia);
        free.free_dofs
            .iter()
            .map(|&i| (gradient[i] + inertia[i] / (h * h)).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    // The grid of Fig. 11: m against |𝒞| = m, 5 m, 20 m and every element.
    let elements = model.mesh().element_count();
    let grid: Vec<[f64; 4]> = [2, 4, 8, 16]
        .iter()
        .map(|&m| [m, 5 * m, 20 * m, elements].map(|c| residual(m, c.min(elements))))
        .collect();
    eprintln!("‖∇Φ‖ for m = 2, 4, 8, 16 (rows) at |𝒞| = m, 5m, 20m, all: {grid:?}");
    // Exact integration: a larger subspace is a better one.
    assert!(grid[3][3] < 0.2 * grid[0][3], "{grid:?}");
    // Under-integration: |𝒞| = m is the worst at every m, and grows with m.
    for row in &grid {
        assert!(row[0] > row[2] && row[0] > row[3], "{row:?}");
    }
    assert!(grid[3][0] > 10.0 * grid[3][3] && grid[3][0] > grid[0][0], "{grid:?}");
}

#[test]
fn too_few_cubature_points_soften_a_heterogeneous_cantilever() {
    // Trusty et al. 2023, Fig. 14: the tip of a cantilever (soft 1e5 near the clamp,
    // stiff 1e7 beyond) under gravity, m = 5, nearly static (h = 10 s).
    let mut model = two_material_bar(1e5, 1e7, [12, 4, 4], MaterialModel::FixedCorotational);
    common::clamp_left_end(&mut model, Motion::Fixed {}, None);
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    let rest = model.rest_positions();
    let tip = |points: usize| {
        let settings = SubspaceSettings {
            modes: 5,
            cubature_points: Some(points),
            seed: 0,
        };
        let x = converged_step(&model, &settings, &rest, 10.0);
        x.chunks(3)
            .zip(rest.chunks(3))
            .map(|(a, b)| b[2] - a[2])
            .fold(0.0, f64::max)
    };
    let deflections: Vec<f64> = [12, 25, 50, 100, 200].iter().map(|&c| tip(c)).collect();
    let last = deflections[4];
    assert!(deflections[0] > last, "{deflections:?}");
    assert!(
        (deflections[3] - last).abs() < 0.25 * (deflections[0] - last).abs(),
        "the deflection settles as |𝒞| grows: {deflections:?}"
    );
}

#[test]
fn full_space_mixed_fem_converges_to_the_backward_euler_step() {
    // Trusty 2022 without reduction: the same step as Newton on the
    // incremental potential, once both have converged.
    let text = turned_bar_scene("kind = \"mixed_sqp\"\ntolerance = 1e-12\nmax_iterations = 100", "")
        .replace("[subspace]\nmodes = 6\n", "")
        .replace("youngs_modulus = 1e5", "youngs_modulus = 1e6");
    let newton_text = text.replace("kind = \"mixed_sqp\"", "kind = \"newton\"");
    let run = |text: &str| {
        let scene = hooke::scene::Scene::from_text(text, "test.toml", ".".into()).unwrap();
        let mut built = scene.build().unwrap();
        let mut state = built.initial_state.clone();
        for _ in 0..3 {
            built.integrator.step(&built.model, &mut state, 0.02).unwrap();
        }
        state.positions
    };
    let (mixed, newton) = (run(&text), run(&newton_text));
    let rest = hooke::scene::Scene::from_text(&text, "test.toml", ".".into())
        .unwrap()
        .build()
        .unwrap()
        .model
        .rest_positions();
    let moved = newton.iter().zip(&rest).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let difference = mixed
        .iter()
        .zip(&newton)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(moved > 1e-3, "the steps do something ({moved})");
    assert!(
        difference < 1e-8 * moved.max(1.0),
        "mixed FEM and Newton differ by {difference:.3e} (moved {moved:.3e})"
    );
}

#[test]
fn one_iteration_a_step_stays_stable_for_ten_thousand_steps() {
    // The one-iteration regime of Trusty et al. 2023 (§7.1, §7.7): mixed FEM
    // at one iteration a step, a bar turned by
    // a soft pin that lets go at 0.2 s, no gravity: over 10⁴ steps the energy
    // the method works with (reduced kinetic energy and cubature elastic
    // energy) never rises far above what the pin left in it.
    let text = turned_bar_scene("kind = \"mixed_sqp\"\niterations = 1", "")
        .replace("gravity = [0.0, 0.0, -9.81]", "")
        .replace(
            "soft = { stiffness = 1e6 }",
            "soft = { stiffness = 1e6 }\nrelease_time = 0.2",
        );
    let scene = hooke::scene::Scene::from_text(&text, "test.toml", ".".into()).unwrap();
    let model = scene.build().unwrap().model;
    let reduced = ReducedModel::new(&model, &SubspaceSettings::new(3)).unwrap();
    let h = 0.02;
    let mut u = vec![0.0; reduced.rank()];
    let mut velocity = u.clone();
    let mut z = reduced.stretches(&u);
    let mut multipliers = Vec::new();
    let energy = |u: &[f64], v: &[f64]| {
        let mv = &reduced.mass * DVector::from_column_slice(v);
        0.5 * v.iter().zip(mv.iter()).map(|(a, b)| a * b).sum::<f64>() + reduced.elastic_energy(u)
    };
    let (mut at_release, mut peak) = (0.0, 0.0f64);
    for step in 0..10_000 {
        let time = (step + 1) as f64 * h;
        let potential = reduced.step_potential(&u, &velocity, h, &reduced.loads(&model, time).unwrap());
        let before = u.clone();
        reduced
            .mixed_iteration(&potential, &mut u, &mut z, &mut multipliers)
            .unwrap();
        velocity = u.iter().zip(&before).map(|(a, b)| (a - b) / h).collect();
        let e = energy(&u, &velocity);
        assert!(e.is_finite(), "step {step}");
        if step == 9 {
            at_release = e;
        }
        if step > 9 {
            peak = peak.max(e);
        }
    }
    assert!(
        at_release > 0.0 && peak < 1.5 * at_release,
        "energy after the release peaks at {peak:.3e} against {at_release:.3e}"
    );
}

#[test]
fn the_pinned_end_of_a_pendulum_gets_few_cubature_points() {
    // Trusty et al. 2023, Fig. 16: weights vanish at the pin, so the elements there sit
    // close together in weight space and share few clusters (the paper shows
    // one; here the first slab gets 3 of the 5 its volume would).
    let mut model = uniform_model(
        bar([3.0, 1.0, 1.0], [24, 4, 4], TetsPerHex::Six),
        MaterialModel::FixedCorotational,
        parameters(1e5, 0.4),
        MassKind::Lumped,
    );
    common::clamp_left_end(&mut model, Motion::Fixed {}, None);
    let reduced = ReducedModel::new(&model, &SubspaceSettings::new(6)).unwrap();
    let near_pin = reduced
        .points
        .iter()
        .filter(|p| {
            let tet = model.mesh().element(p.element);
            tet.iter().map(|&v| model.mesh().vertices()[v].x).sum::<f64>() / 4.0 < 0.125
        })
        .count();
    // The first slab of cells holds 1/24 of the elements: 5 of 120 points by volume.
    assert!(near_pin < 5, "{near_pin} cubature points in the slab at the pin");
}

#[test]
fn a_rank_deficient_skinning_basis_is_refused_with_the_key() {
    // Three thin beams and 30 modes: the skinning columns become dependent.
    let beam = |y: f64, model: &str| {
        format!(
            "[[bodies]]\nmesh = {{ box = {{ size = [1.0, 0.1, 0.1], cells = [20, 2, 2], origin = [0.0, {y}, 0.0] }} }}\nmaterial = {{ model = \"{model}\", youngs_modulus = 5e6, poisson_ratio = 0.4, density = 1000.0 }}\n"
        )
    };
    let text = format!(
        "name = \"beams\"\n[simulation]\nduration = 0.1\ntime_step = 0.05\n{}{}{}[[pins]]\nselect = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}\n[subspace]\nmodes = 30\ncubature_points = 1440\n",
        beam(0.0, "arap"),
        beam(0.3, "fixed_corotational"),
        beam(0.6, "stable_neo_hookean")
    );
    let error = hooke::scene::Scene::from_text(&text, "test.toml", ".".into())
        .and_then(|s| s.build())
        .err()
        .expect("a rank-deficient basis is refused when the scene is built");
    assert!(
        error.to_string().contains("subspace.modes") && error.to_string().contains("fewer modes"),
        "{error}"
    );
}

#[test]
fn the_subspace_grid_measures_every_cell_against_the_full_step() {
    use hooke::studies::subspace_grid::{compare_subspace_grid, PointCount};
    assert_eq!(PointCount::parse("20m").unwrap(), PointCount::PerMode(20));
    assert_eq!(PointCount::parse("all").unwrap(), PointCount::All);
    assert_eq!(PointCount::parse(" 300").unwrap(), PointCount::Fixed(300));
    for bad in ["", "0", "m", "2.5m", "-3"] {
        let error = PointCount::parse(bad).unwrap_err();
        assert!(error.to_string().contains("--grid-points"), "{bad}: {error}");
    }
    assert_eq!(PointCount::PerMode(20).resolve(16, 100), 100, "at most every element");
    let text = turned_bar_scene("kind = \"newton\"", "");
    let scene = hooke::scene::Scene::from_text(&text, "test.toml", ".".into()).unwrap();
    let output = std::env::temp_dir().join(format!("hooke-grid-{}", std::process::id()));
    let grid = compare_subspace_grid(
        &scene,
        &[2, 4],
        &[PointCount::PerMode(1), PointCount::All],
        &output,
        &mut |_, _, _| {},
    )
    .unwrap();
    let table = std::fs::read_to_string(output.join("grid.csv")).unwrap();
    assert_eq!(table.lines().count(), 1 + 1 + 4, "{table}");
    for plot in ["residual.png", "displacement.png", "cost.png"] {
        assert!(output.join(plot).exists(), "{plot}");
    }
    let _ = std::fs::remove_dir_all(&output);
    // The full step is converged; a subspace leaves a residual, smaller with
    // more modes under exact integration, larger when under-integrated.
    assert!(grid.reference.residual < 1e-6 * grid.start_residual, "{grid:?}");
    let cell = |m: usize, all: bool| {
        grid.cells
            .iter()
            .find(|c| c.modes == m && (c.points == 240) == all)
            .unwrap_or_else(|| panic!("m = {m}: {grid:?}"))
    };
    assert!(cell(4, true).residual < cell(2, true).residual, "{grid:?}");
    assert!(cell(4, false).residual > cell(4, true).residual, "{grid:?}");
    assert!(cell(2, true).residual > grid.reference.residual);
}

#[test]
fn the_subspace_comparison_records_each_blocks_turn_and_momentum() {
    // The far end is turned at 1 rad/s by its soft pin: after 0.5 s its
    // block has turned about 0.5 rad in every variant.
    let text = turned_bar_scene("kind = \"mixed_sqp\"\niterations = 2", "");
    let scene = hooke::scene::Scene::from_text(&text, "test.toml", ".".into()).unwrap();
    let output = std::env::temp_dir().join(format!("hooke-subspace-comparison-{}", std::process::id()));
    let comparison =
        hooke::studies::subspace::compare_subspace(&scene, &output, 4, Some(0), &mut |_, _, _| {}, None).unwrap();
    assert!(comparison.block < 4);
    assert!(comparison.decrements.iter().all(|d| !d.is_empty() && d.len() <= 30));
    let table = std::fs::read_to_string(output.join("subspace.csv")).unwrap();
    assert!(table.starts_with("variant,time,block,angular_momentum,kinetic_energy,angle\n"));
    for variant in hooke::studies::subspace::VARIANTS {
        let last = table
            .lines()
            .rfind(|l| l.starts_with(&format!("{variant},")) && l.split(',').nth(2) == Some("3"))
            .unwrap();
        let fields: Vec<f64> = last.split(',').skip(1).map(|f| f.parse().unwrap()).collect();
        assert!((fields[0] - 0.5).abs() < 1e-9, "{last}");
        assert!(
            (fields[4] - 0.5).abs() < 0.05,
            "{variant}: the far block turned {} rad",
            fields[4]
        );
        assert!(fields[2] > 0.0, "{variant}: it turns the positive way about x");
    }
    for plot in ["angular_momentum.png", "angle.png", "decrements.png"] {
        assert!(output.join(plot).exists(), "{plot}");
    }
    let _ = std::fs::remove_dir_all(&output);
}

/// The bar of the one-iteration defect: 0.6 × 0.1 × 0.1 m, soft ends (E = 1e5 Pa)
/// and a stiff middle third (E = 1e10 Pa), spun freely about z at `spin`
/// rad/s, backward Euler at h = 0.01 s by mixed FEM at one iteration a step;
/// `subspace` adds `[subspace] modes = 4, cubature_points = 48`.
fn spun_two_material_bar(spin: f64, subspace: bool) -> String {
    let mut text = format!(
        r#"
[simulation]
duration = 0.3
time_step = 0.01
[[bodies]]
mesh = {{ box = {{ size = [0.6, 0.1, 0.1], cells = [12, 2, 2], origin = [-0.3, -0.05, -0.05] }} }}
material = {{ model = "fixed_corotational", youngs_modulus = 1e5, poisson_ratio = 0.4, density = 1000.0 }}
angular_velocity = [0.0, 0.0, {spin:?}]
[[bodies.regions]]
select = {{ box = {{ min = [-0.1, -1.0, -1.0], max = [0.1, 1.0, 1.0] }} }}
material = {{ model = "fixed_corotational", youngs_modulus = 1e10, poisson_ratio = 0.4, density = 1000.0 }}
[integrator]
kind = "backward_euler"
[solver]
kind = "mixed_sqp"
iterations = 1
"#
    );
    if subspace {
        text.push_str("[subspace]\nmodes = 4\ncubature_points = 48\n");
    }
    text
}

fn run_scene_text(text: &str, tag: &str) -> (hooke::simulation::RunOutcome, std::path::PathBuf) {
    let scene = hooke::scene::Scene::from_text(text, "spun.toml", ".".into()).unwrap();
    let mut built = scene.build().unwrap();
    let directory = std::env::temp_dir().join(format!("hooke-spun-{tag}-{}", std::process::id()));
    let mut settings = scene.run_settings(Some(&directory));
    settings.vtk_every = 0;
    settings.render_every = 0;
    let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap();
    (outcome, directory)
}

#[test]
fn mixed_fem_at_one_iteration_records_the_energy_it_minimises_and_its_constraint_gap() {
    // Recorded as ψ(F(u)), the 2% gap one SQP iteration leaves in the stiff
    // third was worth 750× the kinetic energy and stopped the run at step 1
    // as diverged; the positions were sound (angular momentum kept).
    for subspace in [true, false] {
        let (outcome, directory) = run_scene_text(&spun_two_material_bar(20.0, subspace), &format!("{subspace}"));
        assert!(outcome.failure.is_none(), "subspace {subspace}: {:?}", outcome.failure);
        assert_eq!(outcome.summary.statistics.steps, 30);
        let first = &outcome.records[0];
        for record in &outcome.records {
            let gap = record.constraint_gap.expect("a mixed run records its gap");
            assert!(
                gap.largest < 0.05 && gap.mean <= gap.largest,
                "subspace {subspace}: {gap:?}"
            );
            // Nothing does work: the energy the solver works with does not grow,
            // and angular momentum is kept.
            assert!(record.total < first.total * 1.001, "subspace {subspace}: {record:?}");
            let spin = record.angular_momentum[2] / first.angular_momentum[2];
            assert!(
                (spin - 1.0).abs() < 1e-6,
                "subspace {subspace}: angular momentum ratio {spin}"
            );
        }
        let gap = outcome.summary.constraint_gap.expect("the summary has the run's gap");
        assert!(gap.largest > 1e-3, "one iteration leaves a gap: {gap:?}");
        assert!(outcome.summary.notes.iter().any(|n| n.contains("stretch unknowns")));
        let table = std::fs::read_to_string(directory.join("energies.csv")).unwrap();
        assert!(table
            .lines()
            .next()
            .unwrap()
            .ends_with("constraint_gap_largest,constraint_gap_mean"));
        assert_eq!(table.lines().nth(5).unwrap().split(',').count(), 16);
        let _ = std::fs::remove_dir_all(&directory);
    }
}

#[test]
fn the_subspace_mixed_record_is_the_cubature_energy_at_the_stretch_unknowns() {
    let scene = hooke::scene::Scene::from_text(&spun_two_material_bar(20.0, true), "spun.toml", ".".into()).unwrap();
    let model = scene.build().unwrap().model;
    let reduced = ReducedModel::new(&model, &SubspaceSettings::new(4)).unwrap();
    let mut lcg = Lcg::new(11);
    let u: Vec<f64> = (0..reduced.rank()).map(|_| 0.01 * lcg.next()).collect();
    let loads = reduced.loads(&model, 0.0).unwrap();
    let velocity = vec![0.0; u.len()];
    // At z = z̄(u) the two records agree and the gap is zero.
    let z = reduced.stretches(&u);
    let plain = reduced.energy_record(&u, &velocity, None, &loads, 0.0);
    let mixed = reduced.energy_record(&u, &velocity, Some(&z), &loads, 0.0);
    assert!(
        (plain.elastic - mixed.elastic).abs() <= 1e-9 * plain.elastic.abs(),
        "{plain:?} {mixed:?}"
    );
    assert_eq!(mixed.constraint_gap.unwrap().largest, 0.0);
    assert!(plain.constraint_gap.is_none());
    // Scaling one point's unknown by 1.1 gives a 10% gap there.
    let mut moved = z.clone();
    moved[3] *= 1.1;
    let gap = reduced
        .energy_record(&u, &velocity, Some(&moved), &loads, 0.0)
        .constraint_gap
        .unwrap();
    assert!((gap.largest - 0.1).abs() < 1e-12, "{gap:?}");
    assert!(gap.mean > 0.0 && gap.mean < gap.largest);
}

#[test]
fn a_mixed_solve_that_loses_the_body_is_still_stopped() {
    // Fifty times faster: one iteration leaves the unknowns 90% from the
    // positions' stretches and the angular momentum is lost; the run must not
    // go on as if the small ψ(z) it records described the body.
    for subspace in [true, false] {
        let (outcome, directory) =
            run_scene_text(&spun_two_material_bar(1000.0, subspace), &format!("fast-{subspace}"));
        let failure = outcome.failure.expect("stopped").to_string();
        assert!(
            failure.contains("stretch unknowns") && failure.contains("iterations"),
            "{failure}"
        );
        assert_eq!(outcome.summary.final_time, 0.0, "stopped at the first step: {failure}");
        let _ = std::fs::remove_dir_all(&directory);
    }
}
