//! EigenFit (Chen et al. 2019 (EigenFit)): the corrected coarse model's spectrum, forces and
//! solves, and what leaves a run unchanged.

mod common;

use common::{bar, clamp_left_end, parameters, uniform_model, Lcg};
use hooke::integrate::{BackwardEuler, Integrator};
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::eigenfit::Refit;
use hooke::model::MassKind;
use hooke::model::{EigenFit, EnergyTerm, Model, Motion};
use hooke::solve::SolverSettings;
use nalgebra::{DMatrix, DVector};

const MODES: usize = 4;

/// The same 0.4 m bar at `cells`, clamped at x = 0, consistent mass.
fn clamped(material: MaterialModel, cells: [usize; 3]) -> Model {
    let mut model = uniform_model(
        bar([0.4, 0.1, 0.1], cells, TetsPerHex::Six),
        material,
        parameters(1e5, 0.3),
        MassKind::Consistent,
    );
    clamp_left_end(&mut model, Motion::Fixed {}, None);
    model
}

fn coarse_and_fine(material: MaterialModel) -> (Model, Model) {
    (clamped(material, [4, 1, 1]), clamped(material, [8, 2, 2]))
}

/// Free-DOF dense K (with the low-rank parts) and M of `model` at x.
fn dense_free(model: &Model, x: &[f64]) -> (DMatrix<f64>, DMatrix<f64>, Vec<usize>) {
    let mut gradient = vec![0.0; x.len()];
    let mut values = vec![0.0; model.pattern().nonzeros()];
    let mut low_rank = Vec::new();
    model
        .hessian(x, 0.0, true, &mut gradient, &mut values, &mut low_rank)
        .unwrap();
    let mut k = common::dense(model.pattern(), &values);
    for part in &low_rank {
        k += &part.vectors * &part.core * part.vectors.transpose();
    }
    let m = common::dense(model.pattern(), model.mass().values());
    let free = model.dof_map(0.0).free_dofs;
    let pick = |a: &DMatrix<f64>| DMatrix::from_fn(free.len(), free.len(), |r, c| a[(free[r], free[c])]);
    (pick(&k), pick(&m), free)
}

/// Generalised eigenvalues of (K, M), increasing.
fn generalized_eigenvalues(k: &DMatrix<f64>, m: &DMatrix<f64>) -> Vec<f64> {
    let l = m.clone().cholesky().unwrap().l();
    let l_inverse = l.clone().try_inverse().unwrap();
    let c = &l_inverse * k * l_inverse.transpose();
    let mut values: Vec<f64> = c.symmetric_eigen().eigenvalues.iter().copied().collect();
    values.sort_by(f64::total_cmp);
    values
}

/// Linear elasticity: the corrected coarse model's m lowest generalised
/// eigenvalues are the fine model's, and the next ones are the coarse
/// model's, unchanged (EigenFit paper, §3.3.3, Eq. 15).
#[test]
fn the_corrected_spectrum_is_the_fine_one_in_the_fitted_modes() {
    let (coarse, fine) = coarse_and_fine(MaterialModel::Linear);
    let (k, m, _) = dense_free(&coarse, &coarse.rest_positions());
    let plain = generalized_eigenvalues(&k, &m);
    let (k, m, _) = dense_free(&fine, &fine.rest_positions());
    let reference = generalized_eigenvalues(&k, &m);

    let mut corrected = coarse_and_fine(MaterialModel::Linear).0;
    // Eq. 15 pairs by index (here the coarse mesh's third mode has the shape
    // of the fine mesh's fifth: by shape it takes that one's eigenvalue).
    let fit = EigenFit::new(fine, MODES)
        .unwrap()
        .with_pairing(hooke::model::eigenfit::Pairing::Index);
    let rest = fit.rest_fit(&corrected, 0.0).unwrap();
    for i in 0..MODES {
        assert!((rest.fine_eigenvalues[i] / reference[i] - 1.0).abs() < 1e-8);
        assert!(
            rest.ratios[i] < 1.0,
            "the coarse mesh is stiffer: r = {}",
            rest.ratios[i]
        );
    }
    corrected.add_term(Box::new(fit)).unwrap();
    let start = corrected.initial_state();
    corrected.begin_step(&start, 0.01).unwrap();
    let (k, m, _) = dense_free(&corrected, &start.positions);
    let fitted = generalized_eigenvalues(&k, &m);
    for i in 0..MODES {
        assert!(
            (fitted[i] / reference[i] - 1.0).abs() < 1e-7,
            "mode {i}: {} vs fine {}",
            fitted[i],
            reference[i]
        );
    }
    for i in MODES..MODES + 4 {
        assert!(
            (fitted[i] / plain[i] - 1.0).abs() < 1e-7,
            "mode {i}: {} vs coarse {}",
            fitted[i],
            plain[i]
        );
    }
}

/// Linear elasticity: the corrected force is −K‡(x − X) exactly, refitted at
/// one displaced state and evaluated at another (EigenFit paper, Eq. 15, f‡ = −K‡x).
#[test]
fn the_corrected_linear_force_is_minus_the_corrected_stiffness_times_the_displacement() {
    let (mut model, fine) = coarse_and_fine(MaterialModel::Linear);
    model.add_term(Box::new(EigenFit::new(fine, MODES).unwrap())).unwrap();
    let rest = model.rest_positions();
    let mut rng = Lcg::new(2);
    let mut state = model.initial_state();
    state.positions.iter_mut().for_each(|p| *p += 1e-3 * rng.next());
    let free = model.dof_map(0.01).free_dofs;
    for &dof in (0..rest.len()).collect::<Vec<_>>().iter().filter(|d| !free.contains(d)) {
        state.positions[dof] = rest[dof];
    }
    model.begin_step(&state, 0.01).unwrap();
    let mut x = state.positions.clone();
    for &dof in &free {
        x[dof] += 1e-3 * rng.next();
    }
    let mut gradient = vec![0.0; x.len()];
    model.gradient(&x, 0.0, &mut gradient).unwrap();
    let (k, _, free) = dense_free(&model, &x);
    let displacement = DVector::from_iterator(free.len(), free.iter().map(|&d| x[d] - rest[d]));
    let expected = k * displacement;
    for (r, &dof) in free.iter().enumerate() {
        assert!(
            (gradient[dof] - expected[r]).abs() < 1e-9 * expected.amax(),
            "DOF {dof}: {} vs {}",
            gradient[dof],
            expected[r]
        );
    }
}

/// Nonlinear material: the correction's gradient and Hessian (its low-rank
/// part included) match finite differences of its energy.
#[test]
fn the_correction_is_the_derivative_of_its_energy() {
    let (mut model, fine) = coarse_and_fine(MaterialModel::StableNeoHookean);
    model.add_term(Box::new(EigenFit::new(fine, MODES).unwrap())).unwrap();
    let mut rng = Lcg::new(6);
    let mut state = model.initial_state();
    state.positions.iter_mut().for_each(|p| *p += 5e-3 * rng.next());
    model.begin_step(&state, 0.0).unwrap();
    let x: Vec<f64> = state.positions.iter().map(|p| p + 2e-3 * rng.next()).collect();
    let n = x.len();
    let mut gradient = vec![0.0; n];
    model.gradient(&x, 0.0, &mut gradient).unwrap();
    let h = 1e-7;
    let scale = gradient.iter().fold(0.0_f64, |m, g| m.max(g.abs()));
    for j in 0..n {
        let (mut plus, mut minus) = (x.clone(), x.clone());
        plus[j] += h;
        minus[j] -= h;
        let numeric = (model.energy(&plus, 0.0) - model.energy(&minus, 0.0)) / (2.0 * h);
        assert!(
            (numeric - gradient[j]).abs() < 1e-5 * scale,
            "gradient {j}: {} vs {numeric}",
            gradient[j]
        );
    }
}

/// One Newton iteration of a backward-Euler step on the linear corrected
/// model, solved by Sherman–Morrison–Woodbury, equals the dense solve of
/// (M/h² + K‡) δ = −∇Φ.
#[test]
fn the_woodbury_solve_equals_the_dense_one() {
    let (mut model, fine) = coarse_and_fine(MaterialModel::Linear);
    model.add_term(Box::new(EigenFit::new(fine, MODES).unwrap())).unwrap();
    let h = 0.01;
    let mut start = model.initial_state();
    let mut rng = Lcg::new(3);
    let free = model.dof_map(h).free_dofs;
    for &dof in &free {
        start.velocities[dof] = 0.5 * rng.next();
    }
    let mut stepped = start.clone();
    let settings = SolverSettings {
        iterations: Some(1),
        ..SolverSettings::default()
    };
    BackwardEuler::new(settings.clone())
        .unwrap()
        .step(&model, &mut stepped, h)
        .unwrap();
    // The dense reference, with the fit the step made at its start.
    let (k, m, free) = dense_free(&model, &start.positions);
    let y: Vec<f64> = (0..start.positions.len())
        .map(|i| start.positions[i] + h * start.velocities[i])
        .collect();
    let mut gradient = vec![0.0; y.len()];
    model.gradient(&y, h, &mut gradient).unwrap();
    let residual = DVector::from_iterator(free.len(), free.iter().map(|&d| -gradient[d]));
    let delta = (m / (h * h) + k).lu().solve(&residual).unwrap();
    for (r, &dof) in free.iter().enumerate() {
        let expected = y[dof] + delta[r];
        assert!(
            (stepped.positions[dof] - expected).abs() < 1e-10 * delta.amax().max(1e-12),
            "DOF {dof}: {} vs {expected}",
            stepped.positions[dof]
        );
    }
}

/// Ratios of 1 change nothing: the run is bit for bit the uncorrected one.
#[test]
fn unit_ratios_reproduce_the_uncorrected_run_bit_for_bit() {
    let plain = clamped(MaterialModel::StableNeoHookean, [4, 1, 1]);
    let mut corrected = clamped(MaterialModel::StableNeoHookean, [4, 1, 1]);
    corrected
        .add_term(Box::new(EigenFit::with_ratios(vec![1.0; MODES]).unwrap()))
        .unwrap();
    let run = |model: &Model| {
        let mut state = model.initial_state();
        state.velocities.iter_mut().step_by(3).for_each(|v| *v = 0.1);
        let mut integrator = BackwardEuler::new(SolverSettings::default()).unwrap();
        for _ in 0..5 {
            integrator.step(model, &mut state, 0.01).unwrap();
        }
        state
    };
    assert_eq!(run(&plain), run(&corrected));
}

/// Releasing a pin changes the free DOFs, and the ratios are computed again
/// for the new boundary conditions (EigenFit paper, Fig. 9).
#[test]
fn ratios_are_recomputed_when_a_pin_is_released() {
    let build = |cells| {
        let mut model = uniform_model(
            bar([0.4, 0.1, 0.1], cells, TetsPerHex::Six),
            MaterialModel::Linear,
            parameters(1e5, 0.3),
            MassKind::Consistent,
        );
        clamp_left_end(&mut model, Motion::Fixed {}, Some(0.05));
        model
    };
    let (coarse, fine) = (build([4, 1, 1]), build([8, 2, 2]));
    let fit = EigenFit::new(fine, 8).unwrap();
    let held = fit.rest_fit(&coarse, 0.0).unwrap();
    let free = fit.rest_fit(&coarse, 0.1).unwrap();
    assert!(free.free_dofs.len() > held.free_dofs.len());
    // Free: six rigid motions keep ratio 1; the first elastic mode is corrected.
    assert!(free.ratios[..6].iter().all(|r| *r == 1.0), "{:?}", free.ratios);
    assert!(free.ratios[6] < 1.0 && held.ratios[0] < 1.0);
    assert!((free.ratios[6] - held.ratios[0]).abs() > 1e-3);
}

/// A nonlinear body's modes move every step: each refit after the first
/// follows the last modes (block LOBPCG) instead of solving afresh, and finds
/// the eigenvalues of the current PSD-projected stiffness, to the square of
/// its tolerance, as a dense solve does.
#[test]
fn each_refit_follows_the_modes_to_the_current_stiffness() {
    for (tolerance, agreement) in [(1e-3, 1e-5), (1e-7, 1e-11)] {
        let (coarse, fine) = coarse_and_fine(MaterialModel::StableNeoHookean);
        let fit = EigenFit::new(fine, MODES)
            .unwrap()
            .with_refit_tolerance(tolerance)
            .unwrap();
        let mut state = coarse.initial_state();
        let rest = coarse.rest_positions();
        for step in 0..6 {
            // Bent down and twisted about the bar's axis, a little more each step.
            bend(&mut state, &rest, step as f64 / 5.0);
            fit.refit(&coarse, &state, 0.0).unwrap();
            let report = fit.report();
            match step {
                0 => assert_eq!(report.refit, Refit::Solved),
                _ => assert!(
                    matches!(report.refit, Refit::Tracked { .. }),
                    "step {step}: {:?}",
                    report.refit
                ),
            }
            let (k, m, _) = dense_free(&coarse, &state.positions);
            let dense = generalized_eigenvalues(&k, &m);
            for (i, value) in report.eigenvalues.iter().enumerate() {
                let error = (value / dense[i] - 1.0).abs();
                assert!(
                    error < agreement,
                    "tolerance {tolerance:e}, step {step}, mode {i}: {error:e}"
                );
            }
        }
    }
}

/// The first-frame test of the EigenFit paper (§3.5): a body's modes read on a mesh of
/// itself pair each with its own, at overlap 1; on the hanging bar of
/// Fig. 14, whose one-cell-thick coarse mesh orders its modes differently,
/// the axial and torsion modes cross, and `pairing = "shape"` gives the axial
/// mode its own ratio (about 1) instead of the torsion mode's (0.51).
#[test]
fn modes_pair_by_shape_where_the_meshes_order_them_differently() {
    let fit = EigenFit::new(clamped(MaterialModel::Linear, [4, 1, 1]), 6).unwrap();
    let rest = fit.rest_fit(&clamped(MaterialModel::Linear, [4, 1, 1]), 0.0).unwrap();
    for (i, pair) in rest.shape_pairs.iter().enumerate() {
        let (j, overlap) = pair.expect("every mode resembles itself");
        assert_eq!(j, i);
        assert!((overlap - 1.0).abs() < 1e-9, "mode {i}: {overlap}");
    }
    let path = std::path::Path::new("../../scenes/large_deformation_failure_eigenfit.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let ratios = |text: &str| {
        let mut scene = hooke::scene::Scene::from_text(text, "fig14.toml", "../../scenes".into()).unwrap();
        scene.cache_directory = Some(scratch("pairing-cache"));
        let built = scene.build().unwrap();
        let notes = built.notes.join("\n");
        let line = notes
            .lines()
            .find(|n| n.contains("ratios λ_fine/λ_coarse"))
            .unwrap()
            .to_string();
        let values: Vec<f64> = line
            .rsplit(": ")
            .next()
            .unwrap()
            .split(", ")
            .map(|v| v.parse().unwrap())
            .collect();
        (values, notes)
    };
    let (by_index, notes) = ratios(&text.replace("modes = 10", "modes = 10\npairing = \"index\""));
    assert!(notes.contains("5 ~ fine 6") && notes.contains("6 ~ fine 5"), "{notes}");
    assert!((by_index[4] - 0.51).abs() < 0.01, "{by_index:?}");
    // By shape (the default): each mode its own ratio, the axial one about
    // 1, and the tenth, whose shape is the fine mesh's twelfth, that one's.
    let (by_shape, notes) = ratios(&text);
    assert!(
        (by_shape[4] - 1.0).abs() < 0.05,
        "the axial mode's own ratio: {by_shape:?}"
    );
    assert_eq!(by_shape[..4], by_index[..4]);
    assert!(notes.contains("10 ~ fine 12"), "{notes}");
}

/// Where the coarse and fine meshes order their modes alike, pairing by
/// shape gives exactly the ratios of pairing by index.
#[test]
fn where_the_orders_agree_pairing_by_shape_changes_no_ratio() {
    let coarse = clamped(MaterialModel::Linear, [8, 2, 2]);
    let fine = || clamped(MaterialModel::Linear, [16, 4, 4]);
    let shape = EigenFit::new(fine(), MODES).unwrap().rest_fit(&coarse, 0.0).unwrap();
    let index = EigenFit::new(fine(), MODES)
        .unwrap()
        .with_pairing(hooke::model::eigenfit::Pairing::Index)
        .rest_fit(&coarse, 0.0)
        .unwrap();
    for (i, pair) in shape.shape_pairs.iter().enumerate() {
        let (j, mac) = pair.expect("every mode pairs");
        assert_eq!(j, i, "mode {i} pairs with its own index");
        assert!(mac > 0.9, "mode {i}: MAC {mac}");
    }
    assert_eq!(shape.ratios, index.ratios);
}

/// DAC, the baseline: one Young's-modulus rescale by the first ratio fits
/// the first mode exactly and leaves the others off (EigenFit paper, Fig. 2).
#[test]
fn dac_fits_the_first_mode_only() {
    let (mut coarse, fine) = coarse_and_fine(MaterialModel::Linear);
    let (k, m, _) = dense_free(&fine, &fine.rest_positions());
    let reference = generalized_eigenvalues(&k, &m);
    let factor = hooke::model::eigenfit::dac_factor(&coarse, fine, 0.0, None).unwrap();
    assert!(factor < 1.0);
    coarse.scale_elasticity(factor);
    let (k, m, _) = dense_free(&coarse, &coarse.rest_positions());
    let scaled = generalized_eigenvalues(&k, &m);
    assert!((scaled[0] / reference[0] - 1.0).abs() < 1e-8);
    let worst = (1..6)
        .map(|i| (scaled[i] / reference[i] - 1.0).abs())
        .fold(0.0, f64::max);
    assert!(worst > 0.01, "DAC fitted the higher modes too ({worst})");
}

const SCENE: &str = r#"[simulation]
duration = 0.05
time_step = 0.01
mass = "consistent"
[[bodies]]
mesh = { box = { size = [0.4, 0.1, 0.1], cells = [4, 1, 1] } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
velocity = [0.0, 0.2, 0.0]
[[pins]]
select = { plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }
[integrator]
kind = "implicit_midpoint"
[eigenfit]
reference = { box = { size = [0.4, 0.1, 0.1], cells = [8, 2, 2] } }
modes = 4
"#;

fn scene(text: &str, cache: &std::path::Path) -> hooke::scene::Scene {
    let mut scene = hooke::scene::Scene::from_text(text, "eigenfit.toml", ".".into()).unwrap();
    scene.cache_directory = Some(cache.to_path_buf());
    scene
}

fn scratch(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("hooke-eigenfit-{tag}-{}", std::process::id()))
}

fn run_scene(text: &str) -> hooke::model::State {
    let built = scene(text, &scratch("run")).build().unwrap();
    let mut state = built.initial_state.clone();
    let mut integrator = built.integrator;
    for _ in 0..5 {
        integrator.step(&built.model, &mut state, 0.01).unwrap();
    }
    state
}

/// A scene's [eigenfit]: modes = 0 is the plain run bit for bit; EigenFit and
/// DAC both change it; integrators that cannot take the correction, and
/// scenes of several bodies, are refused with the key named.
#[test]
fn the_eigenfit_table_of_a_scene() {
    let plain = run_scene(&SCENE[..SCENE.find("[eigenfit]").unwrap()]);
    assert_eq!(run_scene(&SCENE.replace("modes = 4", "modes = 0")), plain);
    let corrected = run_scene(SCENE);
    let dac = run_scene(&SCENE.replace("modes = 4", "modes = 4\nmethod = \"dac\""));
    assert!(corrected != plain && dac != plain && dac != corrected);
    // SIERE takes the correction too (its modes are the corrected stiffness's).
    let siere = |text: &str| run_scene(&text.replace("kind = \"implicit_midpoint\"", "kind = \"siere\"\nmodes = 3"));
    assert_ne!(siere(SCENE), siere(&SCENE[..SCENE.find("[eigenfit]").unwrap()]));
    for text in [
        SCENE.replace("kind = \"implicit_midpoint\"", "kind = \"symplectic_euler\""),
        SCENE.replace("[[pins]]", "[[bodies]]\nmesh = { box = { size = [0.1, 0.1, 0.1], cells = [1, 1, 1], origin = [1.0, 0.0, 0.0] } }\nmaterial = { model = \"linear\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }\n[[pins]]"),
    ] {
        match hooke::scene::Scene::from_text(&text, "eigenfit.toml", ".".into()).and_then(|mut s| {
            s.cache_directory = Some(scratch("refused"));
            s.build()
        }) {
            Err(hooke::HookeError::Scene { key, .. }) => assert_eq!(key, "eigenfit"),
            other => panic!("expected a scene error on eigenfit, got {:?}", other.map(|_| ())),
        }
    }
}

/// `hooke compare --eigenfit` on a scene whose integrator EigenFit cannot
/// correct fails naming the key before it runs anything (no fine run first).
#[test]
fn a_comparison_refuses_an_uncorrectable_scene_before_running() {
    let directory = scratch("compare-refused");
    let _ = std::fs::remove_dir_all(&directory);
    let text = SCENE.replace("kind = \"implicit_midpoint\"", "kind = \"symplectic_euler\"");
    let mut scene = hooke::scene::Scene::from_text(&text, "refused.toml", directory.clone()).unwrap();
    scene.cache_directory = Some(directory.join("cache"));
    let outcome =
        hooke::studies::resolution::compare_resolutions(&scene, &directory.join("out"), &mut |_, _, _| {}, None);
    match outcome {
        Err(hooke::HookeError::Scene { key, .. }) => assert_eq!(key, "eigenfit"),
        other => panic!("expected a scene error on eigenfit, got {:?}", other.map(|_| ())),
    }
    assert!(
        !directory.join("out").join("fine").exists(),
        "the fine variant ran first"
    );
    let _ = std::fs::remove_dir_all(&directory);
}

/// A refit tolerance outside (0, 1) is refused naming `eigenfit.tolerance`,
/// and an unknown pairing names its line.
#[test]
fn bad_refit_settings_are_refused_by_name() {
    for tolerance in ["0.0", "1.5", "-1e-3"] {
        let text = SCENE.replace("modes = 4", &format!("modes = 4\ntolerance = {tolerance}"));
        let mut scene = hooke::scene::Scene::from_text(&text, "bad.toml", ".".into()).unwrap();
        scene.cache_directory = Some(scratch("bad-settings"));
        match scene.build() {
            Err(hooke::HookeError::Scene { key, .. }) => assert_eq!(key, "eigenfit.tolerance"),
            other => panic!(
                "tolerance {tolerance}: expected a scene error, got {:?}",
                other.map(|_| ())
            ),
        }
    }
    let text = SCENE.replace("modes = 4", "modes = 4\npairing = \"closest\"");
    let Err(error) = hooke::scene::Scene::from_text(&text, "bad.toml", ".".into()) else {
        panic!("an unknown pairing was accepted");
    };
    let message = error.to_string();
    assert!(message.contains("bad.toml") && message.contains("closest"), "{message}");
}

/// The fine mesh's rest eigenvalues are kept in the cache folder: a second
/// build reads them (the same ratios), and an unreadable cache file is only
/// recomputed and replaced.
#[test]
fn the_fine_eigenvalues_are_cached() {
    let cache = scratch("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let notes = |built: &hooke::scene::BuiltScene| built.notes.iter().find(|n| n.contains("ratios")).cloned();
    let first = scene(SCENE, &cache).build().unwrap();
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let second = scene(SCENE, &cache).build().unwrap();
    assert_eq!(notes(&first), notes(&second));
    // The file is what the build reads: doubled eigenvalues double the ratios.
    let mut stored: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    for value in stored["values"].as_array_mut().unwrap() {
        *value = serde_json::json!(2.0 * value.as_f64().unwrap());
    }
    std::fs::write(&files[0], serde_json::to_string(&stored).unwrap()).unwrap();
    assert_ne!(notes(&scene(SCENE, &cache).build().unwrap()), notes(&first));
    std::fs::write(&files[0], "not json").unwrap();
    let third = scene(SCENE, &cache).build().unwrap();
    assert_eq!(notes(&first), notes(&third));
    assert!(std::fs::read_to_string(&files[0]).unwrap().starts_with("{\"values\":["));
    let _ = std::fs::remove_dir_all(&cache);
}

/// `track_modes` (EigenFit paper, Fig. 5) records the lowest eigenvalues before every
/// step; at rest every mode matches itself, and the table has a row per step.
#[test]
fn mode_tracks_start_matched_and_cover_every_step() {
    let directory = scratch("tracks");
    let tracks =
        hooke::studies::resolution::track_modes(&scene(SCENE, &scratch("tracks-cache")), 3, &directory).unwrap();
    assert_eq!(tracks.len(), 6);
    assert_eq!(tracks[0].matched, 3);
    assert!(tracks[0].eigenvalues.windows(2).all(|w| w[0] <= w[1]));
    let table = std::fs::read_to_string(directory.join("mode_tracks.csv")).unwrap();
    assert!(table.starts_with("time,matched,eigenvalue_1,eigenvalue_2,eigenvalue_3\n"));
    assert_eq!(table.lines().count(), 7);
    assert!(directory.join("mode_tracks.png").is_file());
    let _ = std::fs::remove_dir_all(&directory);
}

/// `reference_scene` names the fine reference as a whole scene: a scene
/// written as this one with its body meshed finer gives the same correction
/// as `reference`; giving both, or neither, is refused naming the key.
#[test]
fn a_reference_scene_is_the_same_reference() {
    let directory = scratch("reference-scene");
    std::fs::create_dir_all(&directory).unwrap();
    let plain = &SCENE[..SCENE.find("[eigenfit]").unwrap()];
    let fine = plain.replace("cells = [4, 1, 1]", "cells = [8, 2, 2]");
    assert_ne!(fine, plain, "the coarse mesh line moved");
    std::fs::write(directory.join("fine.toml"), fine).unwrap();
    let by_scene = format!("{plain}[eigenfit]\nreference_scene = \"fine.toml\"\nmodes = 4\n");
    let build = |text: &str| {
        let mut scene = hooke::scene::Scene::from_text(text, "coarse.toml", directory.clone())?;
        scene.cache_directory = Some(directory.join("cache"));
        scene.build()
    };
    let ratios = |built: hooke::scene::BuiltScene| built.notes.into_iter().find(|n| n.contains("ratios")).unwrap();
    assert_eq!(ratios(build(&by_scene).unwrap()), ratios(build(SCENE).unwrap()));
    for text in [
        format!("{plain}[eigenfit]\nmodes = 4\n"),
        by_scene.replace(
            "modes = 4",
            "modes = 4\nreference = { box = { size = [0.4, 0.1, 0.1], cells = [8, 2, 2] } }",
        ),
    ] {
        match build(&text) {
            Err(hooke::HookeError::Scene { key, .. }) => assert_eq!(key, "eigenfit.reference"),
            other => panic!(
                "expected a scene error on eigenfit.reference, got {:?}",
                other.map(|_| ())
            ),
        }
    }
    let _ = std::fs::remove_dir_all(&directory);
}

/// Bends the clamped bar of [`coarse_and_fine`] down and twists it about its
/// axis, by `amount` (1: 0.6 rad of twist and 8 cm of droop at the tip).
fn bend(state: &mut hooke::model::State, rest: &[f64], amount: f64) {
    for (p, r) in state.positions.chunks_mut(3).zip(rest.chunks(3)) {
        let along = r[0] / 0.4;
        let angle = 0.6 * amount * along;
        let (y, z) = (r[1] - 0.05, r[2] - 0.05);
        p[1] = 0.05 + angle.cos() * y - angle.sin() * z - 0.08 * amount * along * along;
        p[2] = 0.05 + angle.sin() * y + angle.cos() * z;
    }
}

/// With a drift budget, a refit's modes serve the next steps while their
/// measured move per step, times the steps, stays within it: a slow bend
/// carries them, a tight budget or none follows them every step. A carried
/// step takes its slopes at its own start, so the correction's force there
/// is the one a fresh refit gives, up to the modes' small move.
#[test]
fn a_drift_budget_carries_the_modes_while_they_move_less_than_it() {
    let run = |drift: f64, rate: f64| -> (Vec<Refit>, f64) {
        let (coarse, fine) = coarse_and_fine(MaterialModel::StableNeoHookean);
        let fit = EigenFit::new(fine, MODES).unwrap().with_refit_drift(drift).unwrap();
        let mut state = coarse.initial_state();
        let rest = coarse.rest_positions();
        let mut refits = Vec::new();
        let mut worst: f64 = 0.0;
        for step in 0..12 {
            bend(&mut state, &rest, rate * step as f64);
            fit.refit(&coarse, &state, 0.0).unwrap();
            refits.push(fit.report().refit);
            // The correction's force at the step's start against a fresh fit's.
            let fresh = EigenFit::new(coarse_and_fine(MaterialModel::StableNeoHookean).1, MODES).unwrap();
            fresh.refit(&coarse, &state, 0.0).unwrap();
            let force = |f: &EigenFit| {
                let mut g = vec![0.0; state.positions.len()];
                f.gradient(&state.positions, 0.0, &mut g, true).unwrap();
                g
            };
            let (carried, exact) = (force(&fit), force(&fresh));
            // Against the elastic force it corrects.
            let (_, elastic) = coarse.element_hessian(&state.positions, 0.0, false).unwrap();
            let size = elastic.iter().map(|g| g * g).sum::<f64>().sqrt();
            let gap = carried
                .iter()
                .zip(&exact)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                .sqrt();
            if size > 0.0 {
                worst = worst.max(gap / size);
            }
        }
        (refits, worst)
    };
    let carried = |refits: &[Refit]| refits.iter().filter(|r| matches!(r, Refit::Carried { .. })).count();
    // Measured: no budget 1.2e-6, 0.1 carries 7 of 12 steps at 4.7e-3, 0.5 carries 8 at 5.4e-3.
    let (every, exact) = run(0.0, 0.01);
    assert!(
        every[1..].iter().all(|r| matches!(r, Refit::Tracked { .. })),
        "{every:?}"
    );
    assert!(exact < 1e-4, "{exact:e}");
    for drift in [0.1, 0.5] {
        let (refits, gap) = run(drift, 0.01);
        assert!(carried(&refits) >= 4, "drift {drift}: {refits:?}");
        assert!(
            gap < 0.02,
            "drift {drift}: the correction's force off by {gap:e} of the elastic force"
        );
        // Never more steps than the cap, and a refit follows each run of carried steps.
        assert!(refits
            .iter()
            .all(|r| !matches!(r, Refit::Carried { steps } if *steps > hooke::model::eigenfit::MAX_CARRIED_STEPS)));
    }
    let (tight, _) = run(1e-6, 0.01);
    assert_eq!(carried(&tight), 0, "{tight:?}");
    // A budget is the sine of an angle.
    for bad in [-0.1, 1.0, f64::NAN] {
        let (_, fine) = coarse_and_fine(MaterialModel::Linear);
        let error = EigenFit::new(fine, MODES)
            .unwrap()
            .with_refit_drift(bad)
            .err()
            .expect("refused");
        assert!(error.to_string().contains("eigenfit.refit_drift"), "{error}");
    }
}
