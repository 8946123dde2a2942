//! SIERE (Chen 2019 thesis, ch. 6) and MSSI (ch. 5) against dense evaluations of their
//! defining formulas, their limits (s = 0 is semi-implicit Euler), and the
//! modal energy behaviour on a linear problem.

mod common;

use common::{bar, clamp_left_end, dense, parameters, uniform_model, Lcg};
use hooke::fem::spring_networks::{chain, straight_rope};
use hooke::fem::SpringNetwork;
use hooke::integrate::{
    undamped_modal_phi1, Integrator, MassSpringSemiImplicit, ModeRefresh, SemiImplicitBackwardEuler, Siere,
};
use hooke::linalg::{phi1_times, smallest_eigenpairs, EigenSettings};
use hooke::material::MaterialModel;
use hooke::mesh::{TetMesh, TetsPerHex};
use hooke::model::MassKind;
use hooke::model::{Damping, DampingStiffness, Model, Motion, State};
use nalgebra::{DMatrix, DVector, Vector3};

/// A clamped neo-Hookean bar, bent and moving, with gravity.
fn moving_bar(damping: Option<Damping>) -> (Model, State) {
    let mut model = uniform_model(
        bar([0.3, 0.06, 0.06], [5, 1, 1], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(2e5, 0.4),
        MassKind::Consistent,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    model.set_damping(damping).unwrap();
    let mut state = model.initial_state();
    let mut rng = Lcg::new(11);
    for (i, p) in state.positions.chunks_mut(3).enumerate() {
        if p[0] > 1e-9 {
            p[2] += 0.3 * p[0] * p[0] + 1e-4 * rng.next();
            p[1] += 1e-4 * rng.next();
            state.velocities[3 * i + 1] = 0.5 * p[0] + 0.01 * rng.next();
            state.velocities[3 * i + 2] = -2.0 * p[0] * p[0] + 0.01 * rng.next();
        }
    }
    (model, state)
}

/// Eq. 6.1 evaluated densely: u + (I − hJ_H)⁻¹ (h H(u) + h φ₁(hJ_G) G(u)) on the free DOFs.
fn dense_siere_step(model: &Model, state: &State, h: f64, s: usize) -> DVector<f64> {
    let dofs = model.dof_map(state.time + h);
    let n_all = model.dof_count();
    let mut gradient = vec![0.0; n_all];
    let mut k_values = vec![0.0; model.pattern().nonzeros()];
    let mut low_rank = Vec::new();
    model
        .hessian(
            &state.positions,
            0.0,
            false,
            &mut gradient,
            &mut k_values,
            &mut low_rank,
        )
        .unwrap();
    common::add_external_force(model, &mut gradient);
    let mut force = vec![0.0; n_all];
    model.external_force(state.time + h, &mut force);
    let d_values = model.damping_values(&state.positions).unwrap().map(|d| d.into_owned());
    let full_d = d_values.as_ref().map(|d| dense(model.pattern(), d));
    let damping_force = full_d
        .as_ref()
        .map(|d| d * DVector::from_column_slice(&state.velocities))
        .unwrap_or_else(|| DVector::zeros(n_all));
    let free = &dofs.free_dofs;
    let n = free.len();
    let pick = |a: &DMatrix<f64>| DMatrix::from_fn(n, n, |i, j| a[(free[i], free[j])]);
    let mut full_k = dense(model.pattern(), &k_values);
    for l in &low_rank {
        full_k += &l.vectors * &l.core * l.vectors.transpose();
    }
    let k = pick(&full_k);
    let m = pick(&dense(model.pattern(), model.mass().values()));
    let d = full_d.as_ref().map(pick).unwrap_or_else(|| DMatrix::zeros(n, n));
    let f = DVector::from_fn(n, |i, _| force[free[i]] - gradient[free[i]] - damping_force[free[i]]);
    let v = DVector::from_fn(n, |i, _| state.velocities[free[i]]);
    let x = DVector::from_fn(n, |i, _| state.positions[free[i]]);

    // Dense generalized eigenvectors: M = LLᵀ, U = L⁻ᵀ Z for the s smallest.
    let l_inverse = m.clone().cholesky().unwrap().l().try_inverse().unwrap();
    let reduced = &l_inverse * &k * l_inverse.transpose();
    let eigen = nalgebra::SymmetricEigen::new((&reduced + reduced.transpose()) * 0.5);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[a].total_cmp(&eigen.eigenvalues[b]));
    let z = DMatrix::from_fn(n, s, |i, j| eigen.eigenvectors[(i, order[j])]);
    let u = l_inverse.transpose() * z;
    let projector = &u * u.transpose() * &m; // U Uᵀ M

    let m_inverse = m.clone().try_inverse().unwrap();
    let mut jacobian = DMatrix::zeros(2 * n, 2 * n);
    jacobian.view_mut((0, n), (n, n)).copy_from(&DMatrix::identity(n, n));
    jacobian.view_mut((n, 0), (n, n)).copy_from(&(-&m_inverse * &k));
    jacobian.view_mut((n, n), (n, n)).copy_from(&(-&m_inverse * &d));
    let mut p_hat = DMatrix::zeros(2 * n, 2 * n);
    p_hat.view_mut((0, 0), (n, n)).copy_from(&projector);
    p_hat.view_mut((n, n), (n, n)).copy_from(&projector);
    let j_g = &jacobian * &p_hat;
    let j_h = &jacobian - &j_g;
    let v_g = &projector * &v;
    let a_g = &u * u.transpose() * &f; // M⁻¹ f_G
    let g = DVector::from_iterator(2 * n, v_g.iter().chain(a_g.iter()).copied());
    let total = DVector::from_iterator(2 * n, v.iter().chain((&m_inverse * &f).iter()).copied());
    let h_part = &total - &g;
    let modal = phi1_times(&(&j_g * h), &(&g * h)).unwrap();
    let system = DMatrix::identity(2 * n, 2 * n) - &j_h * h;
    let change = system.lu().solve(&(&h_part * h + modal)).unwrap();
    let current = DVector::from_iterator(2 * n, x.iter().chain(v.iter()).copied());
    current + change
}

fn free_state(model: &Model, state: &State) -> DVector<f64> {
    let free = model.dof_map(state.time).free_dofs;
    DVector::from_iterator(
        2 * free.len(),
        free.iter()
            .map(|&d| state.positions[d])
            .chain(free.iter().map(|&d| state.velocities[d])),
    )
}

#[test]
fn siere_step_equals_a_dense_evaluation_of_its_formula() {
    let h = 0.01;
    let s = 4;
    for (what, damping) in [
        ("undamped", None),
        (
            "mass-proportional damping",
            Some(Damping {
                mass_coefficient: 2.0,
                stiffness_coefficient: 0.0,
                stiffness: DampingStiffness::Rest,
                viscoelastic_coefficient: 0.0,
                ether_drag: 0.0,
            }),
        ),
    ] {
        let (model, start) = moving_bar(damping);
        let expected = dense_siere_step(&model, &start, h, s);
        let mut state = start.clone();
        let mut siere = Siere::new(s, ModeRefresh::EveryStep, 1e-12, false);
        siere.step(&model, &mut state, h).unwrap();
        let found = free_state(&model, &state);
        let before = free_state(&model, &start);
        let error = (&found - &expected).norm() / (&expected - &before).norm();
        assert!(error < 1e-10, "{what}: relative difference of the step {error:e}");
    }
}

/// With EigenFit's low-rank correction K‡ = K + Y S Yᵀ in the stiffness,
/// SIERE's modes are those of K‡ and the step is still eq. 6.1 exactly.
#[test]
fn siere_with_an_eigenfit_correction_equals_a_dense_evaluation() {
    let (h, s) = (0.01, 4);
    let (mut model, start) = moving_bar(None);
    let fit = hooke::model::EigenFit::with_ratios(vec![0.6, 0.8, 0.7, 0.9]).unwrap();
    model.add_term(Box::new(fit)).unwrap();
    // The refit the step makes at its start, so that the dense step sees the same correction.
    model.begin_step(&start, h).unwrap();
    let expected = dense_siere_step(&model, &start, h, s);
    let mut state = start.clone();
    let mut siere = Siere::new(s, ModeRefresh::EveryStep, 1e-12, false);
    siere.step(&model, &mut state, h).unwrap();
    let (found, before) = (free_state(&model, &state), free_state(&model, &start));
    let error = (&found - &expected).norm() / (&expected - &before).norm();
    assert!(error < 1e-10, "relative difference of the step {error:e}");
    // The correction changed the step: without it, it lands elsewhere.
    let (plain, _) = moving_bar(None);
    let mut uncorrected = start.clone();
    Siere::new(s, ModeRefresh::EveryStep, 1e-12, false)
        .step(&plain, &mut uncorrected, h)
        .unwrap();
    let moved = (&free_state(&plain, &uncorrected) - &found).norm() / (&expected - &before).norm();
    assert!(moved > 1e-3, "the correction changed the step by only {moved:e}");
}

#[test]
fn siere_without_modes_is_semi_implicit_euler() {
    let damping = Some(Damping {
        mass_coefficient: 0.5,
        stiffness_coefficient: 0.01,
        stiffness: DampingStiffness::Rest,
        viscoelastic_coefficient: 0.0,
        ether_drag: 0.0,
    });
    let (model, start) = moving_bar(damping);
    let (mut a, mut b) = (start.clone(), start);
    let mut siere = Siere::new(0, ModeRefresh::EveryStep, 1e-8, false);
    let mut semi_implicit = SemiImplicitBackwardEuler::new(false);
    for _ in 0..20 {
        siere.step(&model, &mut a, 0.01).unwrap();
        semi_implicit.step(&model, &mut b, 0.01).unwrap();
    }
    assert_eq!(a.positions, b.positions);
    assert_eq!(a.velocities, b.velocities);
}

/// Linear elasticity without damping: the first s modes keep their energy
/// exactly; a mode outside loses it as backward Euler does, by 1/(1 + h²λ) a step.
#[test]
fn modes_inside_conserve_energy_and_modes_outside_decay_as_backward_euler() {
    let mut model = uniform_model(
        bar([0.4, 0.05, 0.05], [8, 1, 1], TetsPerHex::Six),
        MaterialModel::Linear,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    let s = 3;
    let dofs = model.dof_map(0.0);
    let rest = model.rest_positions();
    let stiffness = model.stiffness(&rest, 0.0, false).unwrap();
    let (pattern, source) = model.pattern().restrict(&dofs.free_index);
    let k: Vec<f64> = source.iter().map(|&i| stiffness[i]).collect();
    let m: Vec<f64> = source.iter().map(|&i| model.mass().values()[i]).collect();
    let settings = EigenSettings {
        tolerance: 1e-11,
        ..EigenSettings::default()
    };
    let pairs = smallest_eigenpairs(&pattern, &k, &m, s + 2, &settings).unwrap();
    let (inside, outside) = (0, s + 1);
    let mut state = model.initial_state();
    let mut displacement = vec![0.0; model.dof_count()];
    let combination: Vec<f64> = (0..dofs.free_count())
        .map(|i| 0.01 * pairs.vectors[inside][i] + 0.002 * pairs.vectors[outside][i])
        .collect();
    dofs.scatter(&combination, &mut displacement);
    state.positions.iter_mut().zip(&displacement).for_each(|(x, d)| *x += d);

    let modal_energy = |state: &State, l: usize| {
        let u = &pairs.vectors[l];
        let (mut mu, mut kx) = (vec![0.0; u.len()], 0.0);
        pattern.symmetric_multiply(&m, u, &mut mu);
        let q: f64 = dofs
            .free_dofs
            .iter()
            .zip(&mu)
            .map(|(&d, w)| w * (state.positions[d] - rest[d]))
            .sum();
        let a: f64 = dofs
            .free_dofs
            .iter()
            .zip(&mu)
            .map(|(&d, w)| w * state.velocities[d])
            .sum();
        kx += pairs.values[l] * q * q;
        0.5 * (a * a + kx)
    };
    let (inside_start, outside_start) = (modal_energy(&state, inside), modal_energy(&state, outside));
    let h = 0.005;
    let steps = 40;
    let mut siere = Siere::new(s, ModeRefresh::EveryStep, 1e-11, false);
    for _ in 0..steps {
        siere.step(&model, &mut state, h).unwrap();
    }
    let kept = modal_energy(&state, inside) / inside_start;
    assert!(
        (kept - 1.0).abs() < 1e-8,
        "energy in mode 1 changed by {:e}",
        kept - 1.0
    );
    let decay = modal_energy(&state, outside) / outside_start;
    let backward_euler = (1.0 + h * h * pairs.values[outside]).powi(-steps);
    assert!(
        (decay / backward_euler - 1.0).abs() < 1e-6,
        "mode {} kept {decay:e} of its energy; backward Euler keeps {backward_euler:e}",
        outside + 1
    );
    assert!(backward_euler < 0.9, "the test needs visible decay ({backward_euler})");
}

#[test]
fn reusing_modes_by_ritz_residual_saves_eigen_solves_and_stays_close() {
    // Swinging from rest under gravity: K changes smoothly.
    let (model, _) = moving_bar(None);
    let start = model.initial_state();
    let mut every = Siere::new(4, ModeRefresh::EveryStep, 1e-9, false);
    let mut reuse = Siere::new(4, ModeRefresh::RitzResidual(1e-2), 1e-9, false);
    let (mut a, mut b) = (start.clone(), start);
    for _ in 0..20 {
        every.step(&model, &mut a, 0.005).unwrap();
        reuse.step(&model, &mut b, 0.005).unwrap();
    }
    assert_eq!(every.eigen_solves(), 20);
    // Davidson corrections with the step's own factor keep the modes: only the first step solves.
    assert!(reuse.eigen_solves() <= 2, "{} eigen solves", reuse.eigen_solves());
    let difference = a
        .positions
        .iter()
        .zip(&b.positions)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max);
    assert!(difference < 1e-3 * 0.3, "positions differ by {difference}");
}

#[test]
fn modal_phi1_closed_forms_match_the_dense_exponential() {
    let h = 0.03;
    for lambda in [250.0, -40.0, 0.0, 1e-9, 1e6] {
        let closed = undamped_modal_phi1(lambda, h);
        for column in 0..2 {
            let b = DMatrix::from_row_slice(2, 2, &[0.0, h, -h * lambda, 0.0]);
            let mut e = DVector::zeros(2);
            e[column] = h;
            let dense = phi1_times(&b, &e).unwrap();
            for row in 0..2 {
                let scale = closed.column(column).amax().max(1e-300);
                assert!(
                    // The closed form is exact; the Padé reference carries ~1e-10 at ωh = 30.
                    (closed[(row, column)] - dense[row]).abs() <= 1e-9 * scale,
                    "λ = {lambda}: ({row}, {column}) {} vs {}",
                    closed[(row, column)],
                    dense[row]
                );
            }
        }
    }
}

fn rope(stiffness: f64) -> Model {
    let points = straight_rope(Vector3::zeros(), Vector3::new(1.0, 0.0, 0.0), 5).unwrap();
    let part = chain(points, stiffness, 0.1).unwrap();
    let mesh = TetMesh::new(part.vertices, Vec::new(), Vec::new()).unwrap();
    let mut model = Model::with_springs(
        mesh,
        Vec::new(),
        SpringNetwork {
            springs: part.springs,
            vertex_masses: part.masses,
        },
        MassKind::Lumped,
    )
    .unwrap();
    model.add_pin(hooke::model::Pin::new(vec![0], Motion::Fixed {}, None));
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    model
}

/// MSSI against the corrected eq. 5.8: (M + h²K_s) Δv = h (f − h K_s v) with
/// K_s the springs' material stiffness only.
#[test]
fn mssi_step_equals_the_corrected_formula() {
    let model = rope(100.0);
    let mut state = model.initial_state();
    let mut rng = Lcg::new(3);
    state.positions.iter_mut().skip(3).for_each(|x| *x += 0.05 * rng.next());
    state.velocities.iter_mut().skip(3).for_each(|v| *v = 0.3 * rng.next());
    let h = 0.02;
    let n = model.dof_count();
    // K_s = Σ k ŝŝᵀ per spring, assembled densely here.
    let mut k_s = DMatrix::zeros(n, n);
    // Every spring of rope(100.0) has k = EA/l₀ = 100 N / l₀.
    for [a, b] in model.spring_edges() {
        let stiffness = 100.0 / (model.mesh().vertices()[a] - model.mesh().vertices()[b]).norm();
        let p = |v: usize| {
            Vector3::new(
                state.positions[3 * v],
                state.positions[3 * v + 1],
                state.positions[3 * v + 2],
            )
        };
        let unit = (p(a) - p(b)).normalize();
        let block = unit * unit.transpose() * stiffness;
        for (r, c, sign) in [(a, a, 1.0), (b, b, 1.0), (a, b, -1.0), (b, a, -1.0)] {
            for i in 0..3 {
                for j in 0..3 {
                    k_s[(3 * r + i, 3 * c + j)] += sign * block[(i, j)];
                }
            }
        }
    }
    let mut gradient = vec![0.0; n];
    gradient.copy_from_slice(&common::internal_gradient(&model, &state.positions, 0.0).unwrap());
    let mut force = vec![0.0; n];
    model.external_force(h, &mut force);
    let free: Vec<usize> = (3..n).collect();
    let pick = |a: &DMatrix<f64>| DMatrix::from_fn(free.len(), free.len(), |i, j| a[(free[i], free[j])]);
    let m = DMatrix::from_diagonal(&DVector::from_fn(n, |i, _| model.mass().lumped()[i / 3]));
    let v = DVector::from_column_slice(&state.velocities);
    let rhs_full = (DVector::from_fn(n, |i, _| force[i] - gradient[i]) - &k_s * &v * h) * h;
    let rhs = DVector::from_fn(free.len(), |i, _| rhs_full[free[i]]);
    let dv = (pick(&m) + pick(&k_s) * (h * h)).lu().solve(&rhs).unwrap();
    let mut mssi = MassSpringSemiImplicit::default();
    let start = state.clone();
    mssi.step(&model, &mut state, h).unwrap();
    for (i, &d) in free.iter().enumerate() {
        let expected_v = start.velocities[d] + dv[i];
        assert!(
            (state.velocities[d] - expected_v).abs() < 1e-12 * (1.0 + expected_v.abs()),
            "{} vs {expected_v}",
            state.velocities[d]
        );
        let expected_x = start.positions[d] + h * expected_v;
        assert!((state.positions[d] - expected_x).abs() < 1e-12);
    }
}

/// The stiff pendulum of Chen's thesis, §5.3.1 (k = 10⁴, h = 0.1): MSSI stays bounded, and its
/// matrix needs no shift even where springs are compressed.
#[test]
fn mssi_is_stable_on_a_stiff_rope_and_refuses_tetrahedra() {
    let model = rope(1e4);
    let mut state = model.initial_state();
    let mut mssi = MassSpringSemiImplicit::default();
    for _ in 0..100 {
        let report = mssi.step(&model, &mut state, 0.1).unwrap();
        assert_eq!(report.shifted_factorizations, 0);
    }
    let lowest = state.positions.chunks(3).map(|p| p[2]).fold(f64::INFINITY, f64::min);
    assert!(lowest > -1.2 && lowest < 0.0, "the rope fell to {lowest}");

    let mut bar_model = uniform_model(
        bar([0.3, 0.06, 0.06], [3, 1, 1], TetsPerHex::Six),
        MaterialModel::StableNeoHookean,
        parameters(1e5, 0.4),
        MassKind::Lumped,
    );
    clamp_left_end(&mut bar_model, Motion::Fixed {}, None);
    let mut state = bar_model.initial_state();
    let error = mssi.step(&bar_model, &mut state, 0.01).unwrap_err().to_string();
    assert!(error.contains("tetrahedra"), "{error}");
}

/// More modes than free DOFs is refused when the scene is built, naming the
/// key, rather than clamped silently.
#[test]
fn siere_refuses_more_modes_than_unknowns() {
    let (model, _) = moving_bar(None);
    let free = model.dof_map(0.0).free_count();
    let too_many = Siere::new(free + 1, ModeRefresh::EveryStep, 1e-10, true);
    let error = too_many.check(&model).unwrap_err();
    assert!(
        error.to_string().contains("integrator.modes") && error.is_user_error(),
        "{error}"
    );
    assert!(Siere::new(free, ModeRefresh::EveryStep, 1e-10, true)
        .check(&model)
        .is_ok());
}

/// The falling bar of scenes/falling_bar.toml (pinned at one end, sagging,
/// released at t = 0.5 s) stepped by `integrator` at h = 0.01 s for 1 s.
fn falling_bar_run(integrator: &str, tag: &str) -> hooke::simulation::RunOutcome {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/falling_bar.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("kind = \"backward_euler\"", &format!("kind = \"{integrator}\""))
        .replace("[solver]\ntolerance = 1e-8\nmax_iterations = 50\n", "");
    let scene = hooke::scene::Scene::from_text(&text, "falling_bar.toml", ".".into()).unwrap();
    let mut built = scene.build().unwrap();
    let directory = std::env::temp_dir().join(format!("hooke-falling-{tag}-{}", std::process::id()));
    let mut settings = scene.run_settings(Some(&directory));
    settings.vtk_every = 0;
    settings.render_every = 0;
    settings.plot = false;
    let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap();
    let _ = std::fs::remove_dir_all(&directory);
    outcome
}

#[test]
fn siere_keeps_its_modes_when_the_released_bar_becomes_free() {
    // Free, the bar's five lowest modes lie in its six rigid ones: the
    // eigensolver locked two and stalled on the third at 1.7–72× the
    // tolerance ("found 1 of 5 eigenpairs"), one step after the release.
    let outcome = falling_bar_run("siere", "siere");
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    assert_eq!(outcome.summary.statistics.steps, 100);
    // Released, it falls: its centre drops by at least ½ g (0.5 s)² below the sag.
    let last = outcome.records.last().unwrap();
    let at_release = &outcome.records[50];
    let mass = 1000.0 * 0.8 * 0.1 * 0.1;
    let drop = (at_release.gravitational - last.gravitational) / (mass * 9.81);
    assert!(drop > 0.5 * 9.81 * 0.25, "fell {drop} m after the release");
}

#[test]
fn exponential_rosenbrock_euler_splits_the_steps_a_release_would_break() {
    // At h = 0.01 s the release step created 12 J (30% of the energy in
    // motion) and the next inverted an element; split where a step creates
    // more than 2% with nothing doing work, the run goes through.
    let outcome = falling_bar_run("exponential_rosenbrock_euler", "ere");
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    assert_eq!(outcome.summary.statistics.steps, 100);
    assert!(
        outcome.summary.notes.iter().any(|n| n.contains("split into sub-steps")),
        "{:?}",
        outcome.summary.notes
    );
    // Before the release nothing is split: the pinned bar sags and swings
    // within its energy.
    let before: Vec<f64> = outcome.records[..=50].iter().map(|r| r.total).collect();
    assert!(before.iter().all(|&e| e.abs() < 0.2), "{before:?}");
}
