//! Quasi-Newton minimisation (Liu 2018 thesis, §7.1–7.2 and §8.1): the weighted Laplacian of
//! the model's terms, and L-BFGS on it as a `[solver]` of any implicit step.

mod common;

use hooke::integrate::{BackwardEuler, Integrator, StaticEquilibrium};
use hooke::material::laplacian_weight::{laplacian_weight, DEFAULT_STRETCHES};
use hooke::material::MaterialModel;
use hooke::model::Model;
use hooke::solve::{InitialHessian, LbfgsSettings, NewtonSettings, SolverSettings};
use nalgebra::{Matrix3, Vector3};

fn clamped_bar(material: MaterialModel) -> Model {
    common::clamped_bar_under_gravity(material, [8, 2, 2])
}

/// For a displacement u = A X, uᵀ L u = k V ‖A‖²_F: L weighs each element's
/// squared gradient by k and its volume. Rigid translations are in its null space.
#[test]
fn the_laplacian_measures_squared_gradients() {
    let model = clamped_bar(MaterialModel::NeoHookean);
    let laplacian = model.laplacian(0.0);
    let pattern = model.pattern();
    let rest = model.rest_positions();
    let a = Matrix3::new(0.3, -0.2, 0.5, 0.1, 0.7, -0.4, 0.25, 0.05, -0.6);
    let u: Vec<f64> = rest
        .chunks(3)
        .flat_map(|p| (a * Vector3::new(p[0], p[1], p[2])).data.0[0])
        .collect();
    let mut product = vec![0.0; u.len()];
    pattern.symmetric_multiply(&laplacian, &u, &mut product);
    let quadratic: f64 = u.iter().zip(&product).map(|(x, y)| x * y).sum();
    let k = laplacian_weight(model.materials()[0].as_ref(), DEFAULT_STRETCHES);
    let expected = k * 0.4 * 0.1 * 0.1 * a.norm_squared();
    assert!(
        (quadratic - expected).abs() < 1e-10 * expected,
        "{quadratic} vs {expected}"
    );

    let translation: Vec<f64> = (0..rest.len()).map(|i| [1.0, -2.0, 0.5][i % 3]).collect();
    pattern.symmetric_multiply(&laplacian, &translation, &mut product);
    assert!(
        product.iter().all(|p| p.abs() < 1e-9 * k),
        "a translation stores energy"
    );
}

fn lbfgs(tolerance: f64) -> SolverSettings {
    SolverSettings {
        kind: "lbfgs".into(),
        tolerance,
        ..SolverSettings::default()
    }
}

/// The model of a scene's text and its state after `steps` steps of `h`.
fn run_scene_text(text: &str, steps: usize, h: f64) -> (Model, hooke::model::State) {
    let built = hooke::scene::Scene::from_text(text, "s.toml", ".".into())
        .unwrap()
        .build()
        .unwrap();
    let mut state = built.initial_state.clone();
    let mut integrator = built.integrator;
    for _ in 0..steps {
        integrator.step(&built.model, &mut state, h).unwrap();
    }
    (built.model, state)
}

fn largest_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// Backward Euler by L-BFGS reaches the step Newton reaches, for Neo-Hookean
/// and stable Neo-Hookean bars sagging under gravity; so does a static solve.
#[test]
fn lbfgs_steps_agree_with_newton() {
    for material in [MaterialModel::NeoHookean, MaterialModel::StableNeoHookean] {
        let model = clamped_bar(material);
        let rest = model.rest_positions();
        let tight = SolverSettings {
            tolerance: 1e-11,
            ..SolverSettings::default()
        };
        let (mut newton, mut quasi) = (model.initial_state(), model.initial_state());
        let mut newton_integrator = BackwardEuler::new(tight.clone()).unwrap();
        let mut quasi_integrator = BackwardEuler::new(lbfgs(1e-11)).unwrap();
        let mut iterations = 0;
        for _ in 0..5 {
            newton_integrator.step(&model, &mut newton, 0.01).unwrap();
            iterations += quasi_integrator.step(&model, &mut quasi, 0.01).unwrap().iterations;
        }
        let moved = largest_difference(&newton.positions, &rest);
        assert!(moved > 1e-4, "{moved}");
        let apart = largest_difference(&newton.positions, &quasi.positions);
        assert!(apart < 1e-7 * moved, "{material:?}: {apart} apart of {moved}");
        assert!(iterations > 5, "{material:?}: L-BFGS took {iterations} iterations");

        let (mut newton, mut quasi) = (model.initial_state(), model.initial_state());
        StaticEquilibrium::new(tight.clone())
            .unwrap()
            .step(&model, &mut newton, 1.0)
            .unwrap();
        StaticEquilibrium::new(lbfgs(1e-11))
            .unwrap()
            .step(&model, &mut quasi, 1.0)
            .unwrap();
        let moved = largest_difference(&newton.positions, &rest);
        let apart = largest_difference(&newton.positions, &quasi.positions);
        assert!(apart < 1e-6 * moved, "{material:?} static: {apart} apart of {moved}");
    }
}

/// A scene chooses L-BFGS in its `[solver]` table, with a fixed budget of
/// iterations per step; unknown values are refused with the key.
#[test]
fn scenes_choose_lbfgs() {
    let body = ARAP_BAR.replace("\"arap\"", "\"stable_neo_hookean\"");
    let text = |solver: &str| scene_text(&body, solver);
    let scene = hooke::scene::Scene::from_text(
        &text("kind = \"lbfgs\"\niterations = 10\nhistory = 7"),
        "lbfgs.toml",
        ".".into(),
    )
    .unwrap();
    assert_eq!(scene.file.solver.kind, "lbfgs");
    assert_eq!(
        scene
            .file
            .solver
            .own_settings::<LbfgsSettings>("solver")
            .unwrap()
            .history,
        7
    );
    let mut built = scene.build().unwrap();
    let mut state = built.initial_state.clone();
    for _ in 0..5 {
        let report = built.integrator.step(&built.model, &mut state, 0.01).unwrap();
        assert!(report.iterations <= 10, "{report:?}");
    }
    assert!(state.positions.iter().all(|x| x.is_finite()));
    for (bad, key) in [
        (
            "kind = \"bfgs\"",
            "line 14: solver.kind: unknown solver \"bfgs\" (minimisers: newton, lbfgs",
        ),
        ("iterations = 0", "solver.iterations"),
        (
            "kind = \"lbfgs\"\nhistory = -1",
            "expected a whole number, 0 or more, got the whole number -1",
        ),
    ] {
        let error = hooke::scene::Scene::from_text(&text(bad), "bad.toml", ".".into())
            .and_then(|scene| scene.build().map(|_| ()))
            .unwrap_err()
            .to_string();
        assert!(error.contains(key), "{bad}: {error}");
    }
}

/// The quasi-Newton matrix of a backward-Euler step comes as one scalar matrix
/// S per coordinate (I ⊗ S, 3× smaller to factorise) when every vertex is
/// wholly free or wholly pinned; I ⊗ S then equals M/h² + L on the free DOFs
/// exactly. With a pin on one component only, the whole matrix comes instead.
#[test]
fn the_quasi_newton_matrix_is_per_coordinate_where_it_can_be() {
    use hooke::linalg::SystemMatrix;
    use hooke::solve::{Coordinates, IncrementalPotential, Inertia, Objective};
    let model = clamped_bar(MaterialModel::NeoHookean);
    let dofs = model.dof_map(0.0);
    let rest = model.rest_positions();
    let weight = 900.0;
    let objective = IncrementalPotential {
        step_length: None,
        model: &model,
        coordinates: Coordinates::Free {
            dofs: &dofs,
            restriction: model.restriction(&dofs),
        },
        base: rest.clone(),
        inertia: Some(Inertia {
            weight,
            predicted: rest.clone(),
        }),
        damping: None,
        time: 0.0,
        extra_force: None,
        viscoelastic: None,
        contact_at_end: None,
        project_hessian: true,
    };
    let split = objective.quasi_newton_matrix().unwrap();
    assert_eq!(split.coordinates, 3);
    let SystemMatrix::Sparse { pattern, values, .. } = &split.matrix else {
        panic!("a sparse matrix")
    };
    let scalar = common::dense(pattern, values);
    assert_eq!(scalar.nrows() * 3, dofs.free_count());
    // The full matrix from the same terms, restricted to the free DOFs.
    let laplacian = model.laplacian(0.0);
    let full_values: Vec<f64> = (0..laplacian.len())
        .map(|k| laplacian[k] + weight * model.mass().values()[k])
        .collect();
    let full = common::dense(model.pattern(), &full_values);
    let free = &dofs.free_dofs;
    for (r, &row) in free.iter().enumerate() {
        for (c, &column) in free.iter().enumerate() {
            let expected = full[(row, column)];
            let split_value = if r % 3 == c % 3 { scalar[(r / 3, c / 3)] } else { 0.0 };
            assert!(
                (split_value - expected).abs() <= 1e-12 * full[(row, row)],
                "({row}, {column}): {split_value} vs {expected}"
            );
        }
    }
}

fn scene_text(body: &str, solver: &str) -> String {
    format!(
        "gravity = [0.0, 0.0, -9.81]\n[simulation]\nduration = 0.1\ntime_step = 0.0333333333333\n{body}\n[integrator]\nkind = \"backward_euler\"\n[solver]\n{solver}\n"
    )
}

const CURTAIN: &str = r#"[[networks]]
shape = { cloth = { origin = [0.0, 0.0, 0.0], size = [1.0, 1.0], cells = [10, 10] } }
stiffness = 500.0
shear_stiffness = 100.0
density = 0.1
[[pins]]
select = { plane = { point = [0.0, 1.0, 0.0], normal = [0.0, 1.0, 0.0] } }
"#;

const ARAP_BAR: &str = r#"[[bodies]]
mesh = { box = { size = [0.4, 0.1, 0.1], cells = [4, 1, 1] } }
material = { model = "arap", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[pins]]
select = { plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }
"#;

/// Local/global iterations (fast mass-springs on a cloth, projective dynamics
/// on an ARAP bar) lower Φ at every iteration with full steps and no line
/// search, and converge to Newton's step.
#[test]
fn local_global_descends_at_every_iteration_and_reaches_newtons_step() {
    let strain_limited = ARAP_BAR.replace(
        "model = \"arap\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0",
        "model = \"strain_limit\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0, min = 0.995, max = 1.005",
    );
    let strain_and_volume = strain_limited.replace("max = 1.005", "max = 1.005, volume = { min = 0.999, max = 1.001 }");
    let volume = ARAP_BAR.replace(
        "model = \"arap\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0",
        "model = \"volume\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0, min = 0.999, max = 1.001",
    );
    for (what, body) in [
        ("cloth", CURTAIN),
        ("arap bar", ARAP_BAR),
        ("strain-limited bar", strain_limited.as_str()),
        ("strain- and volume-limited bar", strain_and_volume.as_str()),
        ("volume-limited bar", volume.as_str()),
    ] {
        let built = hooke::scene::Scene::from_text(
            &scene_text(body, "kind = \"newton\"\ntolerance = 1e-10"),
            "s.toml",
            ".".into(),
        )
        .unwrap()
        .build()
        .unwrap();
        let (model, start) = (&built.model, &built.initial_state);
        let h = 1.0 / 30.0;
        let mut newton = start.clone();
        let mut integrator = built.integrator;
        integrator.step(model, &mut newton, h).unwrap();
        let step_with = |settings: SolverSettings| {
            let mut state = start.clone();
            let report = BackwardEuler::new(settings.clone())
                .unwrap()
                .step(model, &mut state, h)
                .unwrap();
            assert_eq!(report.halvings, 0, "{what}: the step was split");
            state
        };
        // Local/global converges linearly, and slowly for a hanging cloth: thousands of iterations.
        let local_global = |iterations| SolverSettings {
            kind: "local_global".into(),
            iterations,
            tolerance: 1e-10,
            max_iterations: Some(100_000),
            max_step_halvings: 0,
            ..SolverSettings::default()
        };
        let mut previous = common::backward_euler_potential(model, start, h, &start.positions);
        for k in 1..=12 {
            let value = common::backward_euler_potential(model, start, h, &step_with(local_global(Some(k))).positions);
            assert!(
                value <= previous,
                "{what}: Φ rose at iteration {k}: {previous} → {value}"
            );
            previous = value;
        }
        let converged = step_with(local_global(None));
        let moved = largest_difference(&newton.positions, &start.positions);
        let apart = largest_difference(&newton.positions, &converged.positions);
        // The stopping test is Newton's (the increment below the tolerance), so a
        // linear rate ρ leaves an error near increment · ρ/(1 − ρ): here ρ ≈ 1 − 2e-4.
        assert!(
            apart < 1e-4 * moved,
            "{what}: {apart} from Newton's step (moved {moved})"
        );
    }
}

/// A scene asking local/global of energies that are not projective is
/// refused when it is built, naming the key and the term.
#[test]
fn local_global_refuses_energies_that_are_not_projective() {
    let body = ARAP_BAR.replace("\"arap\"", "\"stable_neo_hookean\"");
    let error = hooke::scene::Scene::from_text(&scene_text(&body, "kind = \"local_global\""), "s.toml", ".".into())
        .unwrap()
        .build()
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(error.contains("solver.kind") && error.contains("elasticity"), "{error}");
    let damped = format!("{ARAP_BAR}[damping]\nstiffness_coefficient = 0.01\n");
    let error = hooke::scene::Scene::from_text(&scene_text(&damped, "kind = \"local_global\""), "s.toml", ".".into())
        .unwrap()
        .build()
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(error.contains("mass-proportional"), "{error}");
}

/// Local/global (its local step, the ARAP tets and strain-limited membranes,
/// runs in parallel) and L-BFGS give the same bits on 1, 2 and 3 threads.
#[test]
fn local_global_and_lbfgs_are_bit_for_bit_identical_for_any_thread_count() {
    const BODIES: &str = r#"[[bodies]]
mesh = { box = { size = [0.6, 0.1, 0.1], cells = [24, 4, 4] } }
material = { model = "arap", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000.0 }
[[networks]]
shape = { cloth = { origin = [1.0, 0.0, 0.0], size = [1.0, 1.0], cells = [24, 24] } }
stiffness = 0.0
density = 0.2
membrane = { youngs_modulus = 1e5, poisson_ratio = 0.3, thickness = 0.001, min = 0.9, max = 1.1 }
[[pins]]
select = { plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }
[[pins]]
select = { plane = { point = [0.0, 1.0, 0.0], normal = [0.0, 1.0, 0.0] } }
"#;
    let text = |solver: &str| scene_text(BODIES, solver);
    for solver in [
        "kind = \"local_global\"\niterations = 10",
        "kind = \"lbfgs\"\niterations = 10",
    ] {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut built = hooke::scene::Scene::from_text(&text(solver), "t.toml", ".".into())
                    .unwrap()
                    .build()
                    .unwrap();
                let mut state = built.initial_state.clone();
                for _ in 0..3 {
                    built.integrator.step(&built.model, &mut state, 1.0 / 30.0).unwrap();
                }
                common::state_bits(&state)
            })
        };
        let reference = run(1);
        for threads in [2, 3] {
            assert!(
                run(threads) == reference,
                "{solver}: {threads} threads differ from 1 thread"
            );
        }
    }
}

/// An integrator whose step minimises nothing (explicit, semi-implicit,
/// exponential) refuses a minimiser other than Newton, or any other
/// `[solver]` setting, instead of ignoring it, naming the key and the
/// integrators that take one; Newton, the default, stays accepted.
#[test]
fn integrators_that_minimise_nothing_refuse_a_minimiser() {
    for integrator in [
        "symplectic_euler",
        "semi_implicit_backward_euler",
        "exponential_rosenbrock_euler",
    ] {
        // The ARAP bar's scene under `integrator` with `solver`, built: its error, if any.
        let build = |solver: &str| {
            let text = scene_text(ARAP_BAR, solver).replace("\"backward_euler\"", &format!("\"{integrator}\""));
            hooke::scene::Scene::from_text(&text, "s.toml", ".".into())
                .unwrap()
                .build()
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        for kind in ["lbfgs", "local_global"] {
            let error = build(&format!("kind = \"{kind}\"")).unwrap_err();
            assert!(
                error.contains("solver.kind") && error.contains(integrator) && error.contains("backward_euler"),
                "{integrator} with {kind}: {error}"
            );
        }
        assert!(build("kind = \"newton\"").is_ok(), "{integrator} with newton");
        // Any other [solver] setting would be ignored just the same.
        for setting in ["tolerance = 1e-6", "cg_iterations = 5"] {
            let error = build(setting).unwrap_err();
            assert!(
                error.contains("[solver] settings"),
                "{integrator} with {setting}: {error}"
            );
        }
    }
}

/// `compare --solvers`: every solver takes the same frames from the same
/// states; the relative error starts below 1 and ends far lower, Newton's at
/// rounding level; solvers.csv and both plots are written; bad names and
/// settings are refused with the option named.
#[test]
fn solvers_are_compared_at_an_equal_budget() {
    use hooke::studies::solvers::{compare_solvers, means, parse_solver_variants};
    let directory = std::env::temp_dir().join(format!("hooke-solvers-{}", std::process::id()));
    let scene =
        hooke::scene::Scene::from_text(&scene_text(CURTAIN, "kind = \"newton\""), "curtain.toml", ".".into()).unwrap();
    let names: Vec<String> = ["newton", "lbfgs", "lbfgs:history=0", "local_global:iterations=40"]
        .map(String::from)
        .to_vec();
    let variants = parse_solver_variants(&names, 60).unwrap();
    assert_eq!(
        variants[2]
            .settings
            .own_settings::<LbfgsSettings>("lbfgs")
            .unwrap()
            .history,
        0
    );
    assert_eq!(variants[3].settings.iterations, Some(40));
    let samples = compare_solvers(&scene, &variants, 3, &directory, None).unwrap();
    for variant in &variants {
        let mean = means(&variant.label, &samples);
        let (first, last) = (mean.first().unwrap(), mean.last().unwrap());
        assert!(
            first.1 < 1.0 && last.1 < 0.1 * first.1,
            "{}: {first:?} → {last:?}",
            variant.label
        );
        assert!(last.2 > first.2, "{}: time runs", variant.label);
        let frames: std::collections::BTreeSet<usize> = samples
            .iter()
            .filter(|s| s.solver == variant.label)
            .map(|s| s.frame)
            .collect();
        assert_eq!(frames.len(), 3, "{}", variant.label);
    }
    assert!(means("newton", &samples).last().unwrap().1 < 1e-8);
    // L-BFGS with a history beats its own history-free iteration at the same count.
    let at = |label: &str, iteration: usize| means(label, &samples)[iteration - 1].1;
    assert!(at("lbfgs", 40) < at("lbfgs:history=0", 40));
    for file in ["solvers.csv", "solvers_iterations.png", "solvers_seconds.png"] {
        assert!(directory.join(file).is_file(), "{file}");
    }
    let rows = std::fs::read_to_string(directory.join("solvers.csv")).unwrap();
    assert!(rows.starts_with("solver,frame,iteration,seconds,relative_error\n"));
    assert_eq!(rows.lines().count(), samples.len() + 1);
    for (bad, what) in [
        ("bfgs", "unknown minimiser"),
        ("lbfgs:window=3", "lbfgs takes no `window`"),
        (
            "lbfgs:history=x",
            "expected a whole number, 0 or more, got the string \"x\"",
        ),
    ] {
        let error = parse_solver_variants(&[bad.to_string()], 10).unwrap_err().to_string();
        assert!(error.contains("--solvers") && error.contains(what), "{bad}: {error}");
    }
    // A scene of another integrator, or energies local/global cannot take, is refused.
    let midpoint = scene_text(ARAP_BAR, "").replace("backward_euler", "implicit_midpoint");
    let scene = hooke::scene::Scene::from_text(&midpoint, "m.toml", ".".into()).unwrap();
    let error = compare_solvers(&scene, &variants[..1], 1, &directory, None)
        .unwrap_err()
        .to_string();
    assert!(error.contains("integrator.kind"), "{error}");
    let soft = scene_text(&ARAP_BAR.replace("\"arap\"", "\"neo_hookean\""), "");
    let scene = hooke::scene::Scene::from_text(&soft, "n.toml", ".".into()).unwrap();
    let error = compare_solvers(&scene, &variants[3..], 1, &directory, None)
        .unwrap_err()
        .to_string();
    assert!(error.contains("local_global"), "{error}");
    let _ = std::fs::remove_dir_all(directory);
}

/// A fibre term stays out of the weighted Laplacian (Liu 2018 thesis, §8.3: its
/// Hessian is not in A₀; it acts through the gradient): L is that of the base
/// material alone.
#[test]
fn fibres_stay_out_of_the_laplacian() {
    let model_with = |material: &str| {
        let body = ARAP_BAR.replace(
            "material = { model = \"arap\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }",
            material,
        );
        hooke::scene::Scene::from_text(&scene_text(&body, ""), "f.toml", ".".into())
            .unwrap()
            .build()
            .unwrap()
            .model
    };
    let base = "material = { model = \"corotational\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }";
    let fibred = "material = { model = \"corotational\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0, fibre = { direction = [1, 0, 0], stiffness = 1e7 } }";
    let (plain, with_fibre) = (model_with(base).laplacian(0.0), model_with(fibred).laplacian(0.0));
    assert!(plain.iter().any(|v| *v != 0.0));
    assert_eq!(plain, with_fibre);
}

/// Liu 2018 thesis, Fig. 7.2: from random vertex positions (most elements inverted),
/// L-BFGS with 10 iterations a frame brings the corotated cube of
/// scenes/random_start.toml back to its rest shape: after 4 s every element
/// is upright and the elastic energy is below a millionth of its start.
#[test]
fn a_scrambled_body_recovers_its_rest_shape() {
    let scene = hooke::scene::Scene::from_file(std::path::Path::new("../../scenes/random_start.toml")).unwrap();
    let built = scene.build().unwrap();
    let (model, mut state) = (&built.model, built.initial_state.clone());
    let elastic = |state: &hooke::model::State| hooke::simulation::energy_record(model, state).elastic;
    let gradients = |state: &hooke::model::State| {
        model
            .terms()
            .iter()
            .filter_map(|t| t.as_elasticity())
            .flat_map(|e| e.deformation_gradients(&state.positions))
            .collect::<Vec<_>>()
    };
    let inverted = gradients(&state).iter().filter(|f| f.determinant() <= 0.0).count();
    assert!(inverted > 300, "only {inverted} elements start inverted");
    let start = elastic(&state);
    let mut integrator = built.integrator;
    for _ in 0..120 {
        integrator
            .step(model, &mut state, scene.file.simulation.time_step)
            .unwrap();
    }
    assert!(
        gradients(&state).iter().all(|f| f.determinant() > 0.0),
        "elements stay inverted"
    );
    assert!(elastic(&state) < 1e-6 * start, "{} of {start}", elastic(&state));
}

/// Strain limiting: free inside [min, max], μ Σ (σ − clamp σ)² outside; ARAP
/// when min = max = 1; P and ∂P/∂F agree with central differences away from
/// the limits; its Laplacian weight is exactly 2μ, which local/global needs.
#[test]
fn strain_limiting_is_free_inside_its_range_and_arap_at_its_limit() {
    use hooke::material::projective::Projective;
    use hooke::material::strain_limit::StrainLimitEnergy;
    use hooke::material::{derivative_matrix, vec_index, Material, Want};
    let mu = 2e4;
    let limited = |min: f64, max: f64| Projective::strain_limit(StrainLimitEnergy { mu, min, max }, 1000.0);
    let m = limited(0.9, 1.1);
    let inside = Matrix3::new(1.05, 0.02, 0.0, 0.0, 0.95, 0.01, 0.0, 0.0, 1.0);
    assert!(m.evaluate(&inside, Want::Stress).energy_density.abs() < 1e-12);
    assert_eq!(
        m.laplacian_weight(&hooke::material::laplacian_weight::DEFAULT_STRETCHES),
        Some(2.0 * mu)
    );
    let arap = hooke::material::IsotropicMaterial {
        model: MaterialModel::Arap,
        lame: hooke::material::Lame { mu, lambda: 0.0 },
        density: 1000.0,
    };
    let mut rng = common::Lcg::new(5);
    for _ in 0..30 {
        let f = rng.rotation() * (Matrix3::identity() + rng.matrix(0.5));
        let (a, b) = (
            limited(1.0, 1.0).evaluate(&f, Want::Stress),
            arap.evaluate(&f, Want::Stress),
        );
        assert!(
            (a.energy_density - b.energy_density).abs() < 1e-9 * mu,
            "not ARAP at its limit"
        );
        // Away from the limits (the Hessian jumps there), central differences.
        let sigma = f.svd(false, false).singular_values;
        if sigma.iter().any(|s| (s - 0.9).abs() < 1e-3 || (s - 1.1).abs() < 1e-3) {
            continue;
        }
        let h = 1e-6;
        let here = m.evaluate(&f, Want::Stress);
        let c = derivative_matrix(&m, &f, false);
        for k in 0..9 {
            let (row, col) = (k % 3, k / 3);
            let (mut plus, mut minus) = (f, f);
            plus[(row, col)] += h;
            minus[(row, col)] -= h;
            let (p, q) = (m.evaluate(&plus, Want::Stress), m.evaluate(&minus, Want::Stress));
            let dpsi = (p.energy_density - q.energy_density) / (2.0 * h);
            assert!((dpsi - here.first_piola[(row, col)]).abs() < 1e-5 * mu, "P at {f}");
            let dp = (p.first_piola - q.first_piola) / (2.0 * h);
            for j in 0..9 {
                let analytic = c[(vec_index(j % 3, j / 3), vec_index(row, col))];
                assert!((dp[(j % 3, j / 3)] - analytic).abs() < 1e-4 * mu, "∂P/∂F at {f}");
            }
        }
    }
}

/// `[[attachments]]`: zero-length springs pull the selected vertices to a
/// target point (the attachments of Liu's thesis, §8.2); a cube whose top face is attached
/// 0.2 m above it ends hanging there, sagging m g / k; a target of the wrong
/// length is refused with its key.
#[test]
fn attachments_pull_vertices_to_their_target() {
    let text = |target: &str| {
        format!(
            r#"gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 3.0
time_step = 0.02
[[bodies]]
mesh = {{ box = {{ size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }} }}
material = {{ model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }}
[[attachments]]
select = {{ plane = {{ point = [0.0, 0.0, 0.1], normal = [0.0, 0.0, 1.0] }} }}
stiffness = 1e4
target = {target}
[damping]
mass_coefficient = 5.0
[integrator]
kind = "backward_euler"
[solver]
kind = "lbfgs"
"#
        )
    };
    // The model and the state after 3 s.
    let hang = |text: &str| run_scene_text(text, 150, 0.02);
    let (model, state) = hang(&text("[0.05, 0.05, 0.3]"));
    let top: Vec<usize> = (0..model.mesh().vertex_count())
        .filter(|&v| (model.mesh().vertices()[v].z - 0.1).abs() < 1e-9)
        .collect();
    let mean_z = top.iter().map(|&v| state.positions[3 * v + 2]).sum::<f64>() / top.len() as f64;
    // The cube (1 kg) hangs on springs of 1e4 N/m in all: about 1 mm below the target.
    let sag = 1.0 * 9.81 / 1e4;
    assert!((mean_z - (0.3 - sag)).abs() < 2e-3, "top face at z = {mean_z}");
    let error = hooke::scene::Scene::from_text(&text("[0.05, 0.3]"), "a.toml", ".".into())
        .and_then(|s| s.build().map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(error.contains("attachments[0].target"), "{error}");
    // Without a target each vertex is held at its rest position: the top face
    // hangs about the same 1 mm below z = 0.1.
    let (model, state) = hang(&text("X").replace("target = X\n", ""));
    for &v in &top {
        let rest = model.mesh().vertices()[v];
        let moved = [state.positions[3 * v] - rest.x, state.positions[3 * v + 1] - rest.y];
        assert!(
            moved[0].abs() < 1e-3 && moved[1].abs() < 1e-3,
            "vertex {v} moved {moved:?} across"
        );
    }
    let mean_z = top.iter().map(|&v| state.positions[3 * v + 2]).sum::<f64>() / top.len() as f64;
    assert!(
        (mean_z - (0.1 - sag)).abs() < 2e-3,
        "top face at z = {mean_z} without a target"
    );
}

/// L-BFGS serves every integrator that minimises a step's potential, not only
/// backward Euler: implicit midpoint, BDF2 and Newmark reach Newton's steps.
#[test]
fn lbfgs_serves_every_minimising_integrator() {
    let model = clamped_bar(MaterialModel::StableNeoHookean);
    let rest = model.rest_positions();
    for name in ["implicit_midpoint", "bdf2", "newmark"] {
        let config = hooke::integrate::IntegratorConfig::from_name(name).unwrap();
        let tight = SolverSettings {
            tolerance: 1e-11,
            ..SolverSettings::default()
        };
        let mut newton = config.build(&tight).unwrap();
        let mut quasi = config.build(&lbfgs(1e-11)).unwrap();
        let (mut a, mut b) = (model.initial_state(), model.initial_state());
        for _ in 0..4 {
            newton.step(&model, &mut a, 0.01).unwrap();
            quasi.step(&model, &mut b, 0.01).unwrap();
        }
        let moved = largest_difference(&a.positions, &rest);
        let apart = largest_difference(&a.positions, &b.positions);
        assert!(apart < 1e-6 * moved, "{name}: {apart} apart of {moved}");
    }
}

/// Inexact solves (Liu 2018 thesis, Figs. 7.7–7.8): Newton with Jacobi-preconditioned
/// CG, L-BFGS with A₀ solved by CG with its incomplete Cholesky factor, and
/// L-BFGS on the frame's Hessian (factorised, or by CG preconditioned with
/// the rest pose's IC(0)) all reach the step Newton reaches with a direct
/// solve; the frame's Hessian takes L-BFGS there in fewer iterations than the
/// Laplacian; a few CG iterations leave Newton's first iteration less accurate
/// than the exact solve does.
#[test]
fn inexact_solves_reach_newtons_step() {
    let model = clamped_bar(MaterialModel::StableNeoHookean);
    let mut start = model.initial_state();
    BackwardEuler::new(SolverSettings::default())
        .unwrap()
        .step(&model, &mut start, 0.02)
        .unwrap();
    let step = |settings: SolverSettings| {
        let mut state = start.clone();
        let report = BackwardEuler::new(settings.clone())
            .unwrap()
            .step(&model, &mut state, 0.02)
            .unwrap();
        (state, report)
    };
    let tight = |kind: &str, cg_iterations: Option<usize>, initial_hessian: InitialHessian| {
        let typed = match kind {
            "newton" => SolverSettings::with_minimizer(NewtonSettings {
                cg_iterations,
                ..NewtonSettings::default()
            }),
            _ => SolverSettings::with_minimizer(LbfgsSettings {
                cg_iterations,
                initial_hessian,
                ..LbfgsSettings::default()
            }),
        };
        SolverSettings {
            tolerance: 1e-10,
            max_iterations: Some(5000),
            ..typed.clone()
        }
    };
    let (reference, _) = step(tight("newton", None, InitialHessian::Laplacian));
    let moved = largest_difference(&reference.positions, &start.positions);
    let mut lbfgs_iterations = Vec::new();
    for (what, kind, cg, initial) in [
        ("newton, cg = 400", "newton", Some(400), InitialHessian::Laplacian),
        ("lbfgs", "lbfgs", None, InitialHessian::Laplacian),
        ("lbfgs, cg = 15", "lbfgs", Some(15), InitialHessian::Laplacian),
        ("lbfgs, frame Hessian", "lbfgs", None, InitialHessian::FrameHessian),
        (
            "lbfgs, frame Hessian, cg = 15",
            "lbfgs",
            Some(15),
            InitialHessian::FrameHessian,
        ),
    ] {
        let (state, report) = step(tight(kind, cg, initial));
        let apart = largest_difference(&state.positions, &reference.positions);
        assert!(
            apart < 1e-6 * moved,
            "{what}: {apart} from Newton's step (moved {moved})"
        );
        assert_eq!(
            report.factorizations,
            usize::from(cg.is_none()) * if kind == "newton" { report.iterations } else { 1 },
            "{what}"
        );
        if kind == "lbfgs" && cg.is_none() {
            lbfgs_iterations.push(report.iterations);
        }
    }
    assert!(
        lbfgs_iterations[1] < lbfgs_iterations[0],
        "frame Hessian {} iterations, Laplacian {}",
        lbfgs_iterations[1],
        lbfgs_iterations[0]
    );
    // One Newton iteration: with 3 CG iterations it falls short of the exact solve's.
    let one = |cg| {
        let settings = SolverSettings {
            iterations: Some(1),
            ..tight("newton", cg, InitialHessian::Laplacian)
        };
        largest_difference(&step(settings).0.positions, &reference.positions)
    };
    let (exact, inexact) = (one(None), one(Some(3)));
    assert!(inexact > exact, "3 CG iterations {inexact}, direct {exact}");
    // A truncated solve's short step never passes for convergence: with one
    // CG iteration Newton either reaches Newton's step within the tolerance or
    // fails, never stops early claiming it.
    for tolerance in [1e-3, 1e-4, 1e-5, 1e-6] {
        let truncated = SolverSettings {
            tolerance,
            max_iterations: Some(200),
            max_step_halvings: 0,
            ..tight("newton", Some(1), InitialHessian::Laplacian)
        };
        let mut state = start.clone();
        if BackwardEuler::new(truncated.clone())
            .unwrap()
            .step(&model, &mut state, 0.02)
            .is_ok()
        {
            // Measured with the step size alone as the test: 9e-3 and 4e-3 of
            // the body's size at tolerances 1e-3 and 1e-4.
            let apart = largest_difference(&state.positions, &reference.positions);
            let size = model.length_scale();
            assert!(
                apart <= 2.0 * tolerance * size,
                "tolerance {tolerance}: Newton with cg = 1 stopped {:.1e} of the body from Newton's step",
                apart / size
            );
        }
    }
}

/// The inexact solves' scene keys: `cg_iterations` for newton and lbfgs
/// (local/global's decrease needs exact solves), `initial_hessian` for
/// lbfgs; anything else is refused with the key.
#[test]
fn inexact_solve_keys_are_checked() {
    let body = ARAP_BAR.replace("\"arap\"", "\"neo_hookean\"");
    let build = |solver: &str| {
        hooke::scene::Scene::from_text(&scene_text(&body, solver), "i.toml", ".".into())
            .and_then(|s| s.build())
            .map(|_| ())
    };
    build("kind = \"newton\"\ncg_iterations = 5").unwrap();
    build("kind = \"lbfgs\"\ncg_iterations = 5\ninitial_hessian = \"frame_hessian\"").unwrap();
    for (solver, key) in [
        ("kind = \"newton\"\ncg_iterations = 0", "cg_iterations"),
        ("kind = \"local_global\"\ncg_iterations = 5", "cg_iterations"),
        (
            "kind = \"newton\"\ninitial_hessian = \"frame_hessian\"",
            "initial_hessian",
        ),
        ("kind = \"lbfgs\"\ninitial_hessian = \"rest\"", "frame_hessian"),
    ] {
        let error = build(solver).unwrap_err().to_string();
        assert!(error.contains(key), "{solver}: {error}");
    }
    // The same settings as `compare --solvers` variants.
    use hooke::studies::solvers::parse_solver_variants;
    let variants = parse_solver_variants(
        &[
            "lbfgs:initial_hessian=frame_hessian:cg_iterations=5".into(),
            "newton:cg_iterations=15".into(),
        ],
        50,
    )
    .unwrap();
    let lbfgs: LbfgsSettings = variants[0].settings.own_settings("lbfgs").unwrap();
    assert_eq!(lbfgs.initial_hessian, InitialHessian::FrameHessian);
    assert_eq!(lbfgs.cg_iterations, Some(5));
    let newton: NewtonSettings = variants[1].settings.own_settings("newton").unwrap();
    assert_eq!(newton.cg_iterations, Some(15));
    for (bad, named) in [
        ("lbfgs:initial_hessian=rest", "frame_hessian"),
        ("local_global:cg_iterations=5", "local_global takes no `cg_iterations`"),
        (
            "newton:initial_hessian=frame_hessian",
            "newton takes no `initial_hessian`",
        ),
        ("newton:cg_iterations=0", "cg_iterations: must be at least 1"),
        ("lbfgs:cg=5", "lbfgs takes no `cg`"),
        ("lbfgs:history", "key=value"),
        ("bfgs", "unknown minimiser \"bfgs\""),
    ] {
        let error = parse_solver_variants(&[bad.into()], 50).unwrap_err().to_string();
        assert!(error.contains(named), "{bad}: {error}");
    }
}

/// `[solver] laplacian_stretches` sets the stretches over which each
/// material's Laplacian stiffness is fitted (the interval of the Liu 2018 thesis, Fig. 7.6):
/// L scales by the ratio of the fitted weights; an interval not around 1 is refused.
#[test]
fn the_laplacian_interval_is_a_setting() {
    use hooke::material::laplacian_weight::{laplacian_weight, StretchSamples, DEFAULT_STRETCHES};
    let body = ARAP_BAR.replace("\"arap\"", "\"neo_hookean\"");
    let build = |solver: &str| {
        hooke::scene::Scene::from_text(&scene_text(&body, solver), "i.toml", ".".into()).and_then(|s| s.build())
    };
    let wide = build("kind = \"lbfgs\"").unwrap().model;
    let narrow = build("kind = \"lbfgs\"\nlaplacian_stretches = [0.9, 1.1]")
        .unwrap()
        .model;
    let material = wide.materials()[0].clone();
    let ratio = laplacian_weight(
        material.as_ref(),
        StretchSamples {
            low: 0.9,
            high: 1.1,
            samples: DEFAULT_STRETCHES.samples,
        },
    ) / laplacian_weight(material.as_ref(), DEFAULT_STRETCHES);
    assert!((ratio - 1.0).abs() > 0.01, "the intervals give the same weight");
    for (a, b) in wide.laplacian(0.0).iter().zip(narrow.laplacian(0.0)) {
        assert!(
            (b - ratio * a).abs() <= 1e-12 * a.abs().max(1.0),
            "{b} vs {ratio} × {a}"
        );
    }
    let error = build("kind = \"lbfgs\"\nlaplacian_stretches = [1.1, 1.5]")
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(error.contains("solver.laplacian_stretches"), "{error}");
}

/// In reduced coordinates (x = x₀ + B u, here 12 modes) the quasi-Newton
/// matrix is Bᵀ(M/h² + L)B, dense, and L-BFGS reaches Newton's reduced step.
#[test]
fn lbfgs_works_in_reduced_coordinates() {
    let body = ARAP_BAR.replace("\"arap\"", "\"stable_neo_hookean\"");
    let text = |solver: &str| scene_text(&body, solver) + "[coordinates]\nkind = \"modal\"\nmodes = 12\n";
    let run = |solver: &str| {
        let (model, state) = run_scene_text(&text(solver), 3, 1.0 / 30.0);
        (state.positions, model.rest_positions())
    };
    let (newton, rest) = run("kind = \"newton\"\ntolerance = 1e-11");
    let (quasi, _) = run("kind = \"lbfgs\"\ntolerance = 1e-11");
    let moved = largest_difference(&newton, &rest);
    assert!(moved > 1e-4, "{moved}");
    assert!(largest_difference(&newton, &quasi) < 1e-6 * moved);
}

/// Liu 2018 thesis, Fig. 6.2 (scenes/volume_preserving_columns.toml): squeezed to 70 %
/// of its height under local/global, a column with strain limiting alone
/// loses 30 % of its volume; with the volume constraint (range [0.99, 1.01])
/// it keeps more of it the heavier the constraint's weight against the strain
/// limit's (ν = 0.3, 0.45, 0.49: 0.884, 0.947, 0.979; Newton gives the same
/// to 1e-4).
#[test]
fn volume_constraint_keeps_a_squeezed_column_full() {
    let scene =
        hooke::scene::Scene::from_file(std::path::Path::new("../../scenes/volume_preserving_columns.toml")).unwrap();
    let built = scene.build().unwrap();
    let (model, mut state) = (&built.model, built.initial_state.clone());
    let mut integrator = built.integrator;
    let steps = (scene.file.simulation.duration / scene.file.simulation.time_step).round() as usize;
    for _ in 0..steps {
        integrator
            .step(model, &mut state, scene.file.simulation.time_step)
            .unwrap();
    }
    let tets = model.mesh().tetrahedra().unwrap();
    let now: Vec<Vector3<f64>> = state.positions.chunks(3).map(Vector3::from_column_slice).collect();
    // The columns stand at x = 0, 0.5, 1.0 and 1.5.
    let mut ratios = [(0.0, 0.0); 4];
    for e in 0..tets.tet_count() {
        let column = (tets.centroid(e).x / 0.5).round() as usize;
        ratios[column].0 += tets.signed_volume(e, &now);
        ratios[column].1 += tets.signed_volume(e, &tets.vertices);
    }
    let [strain_only, volume_low, volume_high, volume_highest] = ratios.map(|(now, rest)| now / rest);
    eprintln!("volume ratios: strain only {strain_only:.4}, with volume ν = 0.3 {volume_low:.4}, ν = 0.45 {volume_high:.4}, ν = 0.49 {volume_highest:.4}");
    assert!(strain_only < 0.71, "strain limiting alone kept {strain_only}");
    assert!(
        0.85 < volume_low && volume_low < volume_high && volume_high < volume_highest && volume_highest > 0.97,
        "the volume constraint does not hold volume by its weight"
    );
}

/// Liu 2018 thesis, Fig. 8.3 (scenes/ring_squeeze.toml): the soft ball squeezes
/// through the narrower ring under L-BFGS with the ring's penalty in Φ and ∇Φ
/// only. The constant matrix is factorised once for the whole run (contact
/// never changes it), every vertex ends below the ring, and penetration stays
/// at the penalty's f/k scale (about 1.4 cm at κ = 1e5 s⁻²).
#[test]
fn a_soft_ball_squeezes_through_a_ring_with_one_factorisation() {
    let scene = hooke::scene::Scene::from_file(std::path::Path::new("../../scenes/ring_squeeze.toml")).unwrap();
    let built = scene.build().unwrap();
    let (model, mut state) = (&built.model, built.initial_state.clone());
    let mut integrator = built.integrator;
    let (mut factorizations, mut deepest, mut touched) = (0, 0.0_f64, false);
    for _ in 0..40 {
        let report = integrator
            .step(model, &mut state, scene.file.simulation.time_step)
            .unwrap();
        factorizations += report.factorizations;
        let depth = hooke::model::max_penetration(model.obstacles(), &state.positions, 3);
        touched |= depth > 0.0;
        deepest = deepest.max(depth);
    }
    assert_eq!(factorizations, 1);
    assert!(touched, "the ball never met the ring");
    assert!(deepest < 0.03, "penetrated {deepest} m");
    let ring_bottom = -0.15;
    let highest = state
        .positions
        .chunks(3)
        .map(|p| p[2])
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(highest < ring_bottom, "the ball is stuck: its top is at z = {highest}");
}
