//! The open core: objectives over coordinates (free DOFs and reduced x = x₀ + B u),
//! interchangeable minimisers, energy terms with low-rank Hessians, pins by
//! component, the integrator registry and capability checks at scene build.

mod common;

use common::Lcg;
use hooke::error::HookeError;
use hooke::integrate::{BackwardEuler, Integrator, IntegratorConfig, SemiImplicitBackwardEuler, StaticEquilibrium};
use hooke::linalg::LowRank;
use hooke::material::MaterialModel;
use hooke::model::{
    Damping, DampingStiffness, EnergyTerm, HessianTarget, Model, Motion, RebasedElasticity, Subspace, TermCapabilities,
    TermKind,
};
use hooke::solve::{
    backtrack, Coordinates, DampingPart, IncrementalPotential, Inertia, Minimizer, MinimizerReport, Objective,
    SolverSettings, ViscoelasticTerm,
};
use nalgebra::{DMatrix, DVector, Vector3};

/// A clamped bar of `material` under gravity.
fn clamped_bar(material: MaterialModel, cells: [usize; 3]) -> Model {
    common::clamped_bar_under_gravity(material, cells)
}

fn tight() -> SolverSettings {
    SolverSettings {
        tolerance: 1e-12,
        ..SolverSettings::default()
    }
}

fn largest_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn static_solution(model: &Model) -> Vec<f64> {
    let mut state = model.initial_state();
    StaticEquilibrium::new(tight())
        .unwrap()
        .step(model, &mut state, 1.0)
        .unwrap();
    state.positions
}

#[test]
fn a_reduced_static_solve_with_identity_columns_equals_the_full_one() {
    let mut model = clamped_bar(MaterialModel::StableNeoHookean, [4, 1, 1]);
    let full = static_solution(&model);
    let dofs = model.dof_map(0.0);
    let basis = DMatrix::from_fn(model.dof_count(), dofs.free_count(), |row, column| {
        f64::from(u8::from(dofs.free_dofs[column] == row))
    });
    model
        .set_subspace(Some(Subspace::new(model.rest_positions(), basis).unwrap()))
        .unwrap();
    let reduced = static_solution(&model);
    let sag = largest_difference(&full, &model.rest_positions());
    assert!(sag > 1e-3, "the test needs a visible deflection ({sag})");
    assert!(largest_difference(&full, &reduced) < 1e-9 * sag);
}

/// With the lowest eigenmodes (M-orthonormal) as the basis, the linear static
/// response is the modal solution x₀ + Σ φᵢ (φᵢᵀf)/λᵢ.
#[test]
fn a_reduced_static_solve_in_eigenmodes_is_the_modal_solution() {
    let mut model = clamped_bar(MaterialModel::Linear, [6, 2, 2]);
    let modes = hooke::modal::lowest_modes(&model, &model.initial_state(), 6, &Default::default()).unwrap();
    let n = model.dof_count();
    let basis = DMatrix::from_fn(n, modes.shapes.len(), |row, column| modes.shapes[column][row]);
    let mut force = vec![0.0; n];
    model.external_force(0.0, &mut force);
    let mut expected = model.rest_positions();
    for (shape, lambda) in modes.shapes.iter().zip(&modes.eigenvalues) {
        let amplitude = shape.iter().zip(&force).map(|(a, b)| a * b).sum::<f64>() / lambda;
        expected.iter_mut().zip(shape).for_each(|(x, s)| *x += amplitude * s);
    }
    model
        .set_subspace(Some(Subspace::new(model.rest_positions(), basis).unwrap()))
        .unwrap();
    let reduced = static_solution(&model);
    let sag = largest_difference(&expected, &model.rest_positions());
    assert!(largest_difference(&expected, &reduced) < 1e-7 * sag);
}

/// Backward Euler in an eigenmode basis decouples into one recurrence per mode:
/// q⁺ = (q + h v)/(1 + h²λ), v⁺ = (q⁺ − q)/h.
#[test]
fn backward_euler_in_eigenmodes_follows_each_modes_recurrence() {
    let mut model = clamped_bar(MaterialModel::Linear, [6, 2, 2]);
    model.set_gravity(Vector3::zeros());
    let modes = hooke::modal::lowest_modes(&model, &model.initial_state(), 3, &Default::default()).unwrap();
    let n = model.dof_count();
    let basis = DMatrix::from_fn(n, 3, |row, column| modes.shapes[column][row]);
    model
        .set_subspace(Some(Subspace::new(model.rest_positions(), basis.clone()).unwrap()))
        .unwrap();
    let (h, rest) = (0.01, model.rest_positions());
    let amplitudes = [1e-3, -2e-4, 5e-4];
    let mut state = model.initial_state();
    let modal_velocity = basis.clone() * DVector::from_column_slice(&amplitudes);
    state.velocities.copy_from_slice(modal_velocity.as_slice());
    let mut integrator = BackwardEuler::new(tight()).unwrap();
    let (mut q, mut v) = ([0.0; 3], amplitudes);
    for _ in 0..10 {
        integrator.step(&model, &mut state, h).unwrap();
        for i in 0..3 {
            let next = (q[i] + h * v[i]) / (1.0 + h * h * modes.eigenvalues[i]);
            v[i] = (next - q[i]) / h;
            q[i] = next;
        }
        let expected = basis.clone() * DVector::from_column_slice(&q);
        let displacement: Vec<f64> = state.positions.iter().zip(&rest).map(|(x, r)| x - r).collect();
        let scale = expected.amax();
        assert!(largest_difference(&displacement, expected.as_slice()) < 1e-8 * scale);
    }
}

/// The step objective's gradient and Hessian against finite differences, over
/// the free DOFs and over a random subspace, with inertia, Rayleigh and
/// viscoelastic damping and gravity.
#[test]
fn the_step_objective_has_consistent_derivatives_in_both_coordinates() {
    let mut model = clamped_bar(MaterialModel::StableNeoHookean, [3, 1, 1]);
    model
        .set_damping(Some(Damping {
            mass_coefficient: 0.3,
            stiffness_coefficient: 1e-3,
            stiffness: DampingStiffness::Rest,
            viscoelastic_coefficient: 0.0,
            ether_drag: 0.0,
        }))
        .unwrap();
    let n = model.dof_count();
    let dofs = model.dof_map(0.0);
    let mut rng = Lcg::new(9);
    let rest = model.rest_positions();
    let moved: Vec<f64> = rest.iter().map(|x| x + 0.01 * rng.next()).collect();
    let mut base = moved.clone();
    model.apply_prescribed_positions(0.0, &mut base);
    let subspace = Subspace::new(rest.clone(), {
        let mut b = DMatrix::from_fn(n, 5, |_, _| rng.next());
        for (d, free) in dofs.free_index.iter().enumerate() {
            if free.is_none() {
                b.row_mut(d).fill(0.0);
            }
        }
        b
    })
    .unwrap();
    let damping = model.damping_values(&rest).unwrap().unwrap();
    for reduced in [false, true] {
        let coordinates = if reduced {
            Coordinates::Reduced(&subspace)
        } else {
            Coordinates::Free {
                dofs: &dofs,
                restriction: model.restriction(&dofs),
            }
        };
        let objective = IncrementalPotential {
            step_length: None,
            model: &model,
            coordinates,
            base: base.clone(),
            inertia: Some(Inertia {
                weight: 1e4,
                predicted: rest.iter().map(|x| x + 0.005).collect(),
            }),
            damping: Some(DampingPart {
                weight: 100.0,
                values: damping.clone(),
                center: rest.clone(),
            }),
            time: 0.0,
            extra_force: Some((0..n).map(|i| 0.01 * (i % 5) as f64).collect()),
            viscoelastic: Some(ViscoelasticTerm {
                weight: 0.2,
                scale: 2.0,
                offset: rest.iter().map(|x| -x).collect(),
                reference: RebasedElasticity::new(&model, &moved).unwrap(),
            }),
            contact_at_end: None,
            project_hessian: false,
        };
        let size = objective.size();
        let u: Vec<f64> = objective
            .unknowns_of(&moved)
            .unwrap()
            .iter()
            .map(|x| x + 1e-3 * rng.next())
            .collect();
        let mut gradient = vec![0.0; size];
        let mut hessian = objective.hessian_matrix();
        objective.hessian(&u, &mut gradient, &mut hessian).unwrap();
        let dense = hessian.to_dense();
        // The Hessian-free product agrees with the assembled matrix.
        let direction: Vec<f64> = (0..size).map(|i| (i as f64 * 0.7).sin()).collect();
        let mut product = vec![0.0; size];
        objective.hessian_times(&u, &direction, &mut product).unwrap();
        let expected = &dense * DVector::from_column_slice(&direction);
        assert!(largest_difference(&product, expected.as_slice()) < 1e-10 * expected.amax());
        let step = 1e-6;
        let (g_scale, h_scale) = (gradient.iter().fold(0.0f64, |m, g| m.max(g.abs())), dense.amax());
        for j in 0..size {
            let (mut plus, mut minus) = (u.clone(), u.clone());
            plus[j] += step;
            minus[j] -= step;
            let numeric = (objective.value(&plus) - objective.value(&minus)) / (2.0 * step);
            assert!(
                (numeric - gradient[j]).abs() < 1e-5 * g_scale,
                "reduced {reduced}: ∂Φ/∂u{j} {} vs {numeric}",
                gradient[j]
            );
            let (mut g_plus, mut g_minus) = (vec![0.0; size], vec![0.0; size]);
            objective.gradient(&plus, &mut g_plus).unwrap();
            objective.gradient(&minus, &mut g_minus).unwrap();
            for i in 0..size {
                let numeric = (g_plus[i] - g_minus[i]) / (2.0 * step);
                assert!(
                    (numeric - dense[(i, j)]).abs() < 1e-5 * h_scale,
                    "reduced {reduced}: H({i}, {j}) {} vs {numeric}",
                    dense[(i, j)]
                );
            }
        }
    }
}

/// A minimiser written outside Hooke (Barzilai–Borwein gradient descent: value
/// and gradient only) runs backward Euler through the same interface as Newton
/// and reaches the same step.
struct GradientDescent;

impl Minimizer for GradientDescent {
    fn name(&self) -> &'static str {
        "barzilai_borwein"
    }

    fn minimize(&mut self, objective: &dyn Objective, u: &mut [f64]) -> hooke::Result<MinimizerReport> {
        let n = objective.size();
        let mut report = MinimizerReport::default();
        let mut gradient = vec![0.0; n];
        let mut value = objective.gradient(u, &mut gradient)?;
        let mut length = 1e-6;
        for iteration in 1..=20_000 {
            report.iterations = iteration;
            report.residual = gradient.iter().fold(0.0, |m: f64, g| m.max(g.abs()));
            if report.residual < 1e-9 {
                return Ok(report);
            }
            let direction: Vec<f64> = gradient.iter().map(|g| -length * g).collect();
            let slope: f64 = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
            let step = backtrack(objective, u, &direction, value, slope)?.step;
            let previous = (u.to_vec(), gradient.clone());
            u.iter_mut().zip(&direction).for_each(|(x, d)| *x += step * d);
            value = objective.gradient(u, &mut gradient)?;
            let s: Vec<f64> = u.iter().zip(&previous.0).map(|(a, b)| a - b).collect();
            let y: Vec<f64> = gradient.iter().zip(&previous.1).map(|(a, b)| a - b).collect();
            let sy: f64 = s.iter().zip(&y).map(|(a, b)| a * b).sum();
            if sy > 0.0 {
                length = s.iter().map(|a| a * a).sum::<f64>() / sy;
            }
        }
        Err(HookeError::Solver {
            reason: "gradient descent did not converge".to_string(),
        })
    }
}

#[test]
fn a_minimiser_from_outside_runs_backward_euler() {
    let model = clamped_bar(MaterialModel::StableNeoHookean, [2, 1, 1]);
    let start = model.initial_state();
    let h = 1e-3;
    let mut newton_state = start.clone();
    BackwardEuler::new(tight())
        .unwrap()
        .step(&model, &mut newton_state, h)
        .unwrap();
    let mut descent_state = start;
    let mut descent = BackwardEuler::with_minimizer(tight(), Box::new(GradientDescent));
    let report = descent.step(&model, &mut descent_state, h).unwrap();
    assert!(report.iterations > 3, "{report:?}");
    let moved = largest_difference(&newton_state.positions, &model.rest_positions());
    assert!(largest_difference(&newton_state.positions, &descent_state.positions) < 1e-6 * moved);
}

/// ½ (x − r)ᵀ U S Uᵀ (x − r): a term whose Hessian is purely low-rank (the
/// shape of EigenFit's stiffness correction).
struct LowRankAnchor {
    part: LowRank,
    rest: Vec<f64>,
}

impl LowRankAnchor {
    fn image(&self, x: &[f64]) -> Vec<f64> {
        let offset: Vec<f64> = x.iter().zip(&self.rest).map(|(a, b)| a - b).collect();
        let mut image = vec![0.0; x.len()];
        self.part.multiply_add(1.0, &offset, &mut image);
        image
    }
}

impl EnergyTerm for LowRankAnchor {
    fn name(&self) -> String {
        "low-rank anchor".to_string()
    }

    fn kind(&self) -> TermKind {
        TermKind::Elastic
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            low_rank: true,
            ..TermCapabilities::SMOOTH
        }
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        let image = self.image(x);
        0.5 * x
            .iter()
            .zip(&self.rest)
            .zip(&image)
            .map(|((a, b), c)| (a - b) * c)
            .sum::<f64>()
    }

    fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64], overwrite: bool) -> hooke::Result<f64> {
        let image = self.image(x);
        gradient
            .iter_mut()
            .zip(&image)
            .for_each(|(g, i)| *g = if overwrite { *i } else { *g + i });
        Ok(self.energy(x, time))
    }

    fn hessian(
        &self,
        x: &[f64],
        time: f64,
        _project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> hooke::Result<f64> {
        if overwrite {
            hessian.values.fill(0.0);
        }
        hessian.low_rank.push(self.part.clone());
        self.gradient(x, time, gradient, overwrite)
    }
}

fn anchored_bar() -> (Model, LowRank) {
    let mut model = clamped_bar(MaterialModel::Linear, [4, 1, 1]);
    let n = model.dof_count();
    let mut rng = Lcg::new(4);
    let part = LowRank::new(
        DMatrix::from_fn(n, 2, |_, _| rng.next()),
        DMatrix::from_row_slice(2, 2, &[3e3, 500.0, 500.0, 1e3]),
    )
    .unwrap();
    model
        .add_term(Box::new(LowRankAnchor {
            part: part.clone(),
            rest: model.rest_positions(),
        }))
        .unwrap();
    (model, part)
}

/// Newton on a model with a low-rank term: the Woodbury solve makes the first
/// iteration exact for a quadratic potential, so the step ends in equilibrium
/// after the confirming second iteration.
#[test]
fn newton_uses_the_low_rank_part_of_the_hessian() {
    let (model, _) = anchored_bar();
    let mut state = model.initial_state();
    let report = BackwardEuler::new(tight())
        .unwrap()
        .step(&model, &mut state, 0.01)
        .unwrap();
    assert!(report.iterations <= 2, "{report:?}");
    let mut gradient = vec![0.0; model.dof_count()];
    model.gradient(&state.positions, 0.01, &mut gradient).unwrap();
    assert!(model.energies(&state.positions, 0.0).elastic > 0.0);
}

/// Semi-implicit Euler with a low-rank stiffness part against the dense formula
/// (M + h²K) Δv = h (f − h K v) with K = K_sparse + U S Uᵀ on the free DOFs.
#[test]
fn semi_implicit_euler_includes_the_low_rank_stiffness() {
    let (model, part) = anchored_bar();
    let mut state = model.initial_state();
    let mut rng = Lcg::new(5);
    state.velocities.iter_mut().for_each(|v| *v = 0.1 * rng.next());
    model.apply_prescribed_velocities(0.0, &mut state.velocities);
    let h = 0.01;
    let n = model.dof_count();
    let dofs = model.dof_map(h);
    let (sparse, _) = common::hessian_and_internal_gradient(&model, &state.positions, 0.0, false).unwrap();
    let k = common::dense(model.pattern(), &sparse) + &part.vectors * &part.core * part.vectors.transpose();
    let m = common::dense(model.pattern(), model.mass().values());
    let mut gradient = vec![0.0; n];
    model.gradient(&state.positions, h, &mut gradient).unwrap();
    let free = &dofs.free_dofs;
    let pick = |a: &DMatrix<f64>| DMatrix::from_fn(free.len(), free.len(), |i, j| a[(free[i], free[j])]);
    let kv = &k * DVector::from_column_slice(&state.velocities);
    let rhs = DVector::from_fn(free.len(), |i, _| h * (-gradient[free[i]] - h * kv[free[i]]));
    let change = (pick(&m) + pick(&k) * (h * h)).lu().solve(&rhs).unwrap();
    let start = state.clone();
    SemiImplicitBackwardEuler::new(false)
        .step(&model, &mut state, h)
        .unwrap();
    for (i, &d) in free.iter().enumerate() {
        let expected = start.velocities[d] + change[i];
        assert!(
            (state.velocities[d] - expected).abs() < 1e-9 * (1.0 + expected.abs()),
            "DOF {d}"
        );
    }
}

fn scene(text: &str) -> hooke::Result<hooke::scene::BuiltScene> {
    hooke::scene::Scene::from_text(text, "test.toml", std::path::PathBuf::from("."))?.build()
}

const BLOCK: &str = r#"
[simulation]
duration = 1.0
time_step = 1.0
[[bodies]]
mesh = { box = { size = [0.1, 0.1, 0.1], cells = [2, 2, 2] } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e4, poisson_ratio = 0.45, density = 1000.0 }
"#;

/// A block standing on rollers (only z held at its base, plus the least to
/// stop rigid sliding) sinks under its weight and spreads sideways: the base
/// stays at z = 0 and moves in x and y.
#[test]
fn pins_hold_only_the_components_they_list() {
    let text = format!(
        r#"gravity = [0, 0, -9.81]
{BLOCK}
[integrator]
kind = "static"
[[pins]]
select = {{ plane = {{ point = [0, 0, 0], normal = [0, 0, -1] }} }}
components = ["z"]
[[pins]]
select = {{ vertices = [0] }}
components = ["x", "y"]
[[pins]]
select = {{ box = {{ min = [0.1, 0, 0], max = [0.1, 0, 0] }} }}
components = ["y"]
"#
    );
    let mut built = scene(&text).unwrap();
    let mut state = built.initial_state.clone();
    built.integrator.step(&built.model, &mut state, 1.0).unwrap();
    let rest = built.model.rest_positions();
    let mut spread: f64 = 0.0;
    for (v, p) in built.model.mesh().vertices().iter().enumerate() {
        if p.z == 0.0 {
            assert_eq!(state.positions[3 * v + 2], 0.0, "base vertex {v} left the floor");
            spread = spread.max((state.positions[3 * v] - rest[3 * v]).abs());
        }
    }
    assert!(spread > 1e-6, "the base does not spread ({spread:e})");
    let sink = (0..rest.len() / 3)
        .map(|v| rest[3 * v + 2] - state.positions[3 * v + 2])
        .fold(0.0, f64::max);
    assert!(
        sink > spread,
        "the block sinks ({sink:e}) more than its base spreads ({spread:e})"
    );
    let bad = text.replace(r#"components = ["z"]"#, r#"components = ["w"]"#);
    let error = scene(&bad).err().expect("refused").to_string();
    assert!(error.contains("pins[0].components"), "{error}");
}

/// What an integrator cannot handle is refused when the scene is built, with
/// a scene error naming the key (exit status 2), not at some step.
#[test]
fn capability_checks_run_at_scene_build_and_name_the_key() {
    let cases = [
        ("[damping]\nviscoelastic_coefficient = 0.01\n[integrator]\nkind = \"bdf2\"\n", "damping.viscoelastic_coefficient"),
        ("[integrator]\nkind = \"corotational_reversible\"\n", "bodies.material.model"),
        ("[integrator]\nkind = \"mssi\"\n", "bodies"),
        ("[integrator]\nkind = \"static\"\n", "pins"),
        (
            "[integrator]\nkind = \"symplectic_adaptive\"\nstep_size = \"constant\"\n[[obstacles]]\nshape = { plane = { point = [0, 0, -1], normal = [0, 0, 1] } }\nstiffness = 1e4\n",
            "obstacles",
        ),
    ];
    for (extra, key) in cases {
        let text = format!("{BLOCK}{extra}");
        match scene(&text).err().expect("refused") {
            HookeError::Scene { key: found, reason } => {
                assert_eq!(found, key, "{extra}: {reason}");
            }
            other => panic!("{extra}: expected a scene error, got {other:?}"),
        }
    }
    // Gravity is refused by the conservative integrators, and named.
    let text = format!(
        "gravity = [0, 0, -9.81]\n{BLOCK}[integrator]\nkind = \"time_reversible_adaptive\"\nstep_size = \"constant\"\n"
    );
    assert!(matches!(scene(&text), Err(HookeError::Scene { key, .. }) if key == "gravity"));
}

/// The Newton settings moved from [integrator] to [solver]: the old place is an
/// error with its line that says where they went; the new one takes effect.
#[test]
fn newton_settings_live_in_the_solver_table() {
    let old = format!("{BLOCK}[integrator]\nkind = \"backward_euler\"\ntolerance = 1e-6\n");
    match hooke::scene::Scene::from_text(&old, "test.toml", ".".into()).unwrap_err() {
        HookeError::Parse { line, reason, .. } => {
            let expected = old.lines().position(|l| l.starts_with("tolerance")).unwrap() + 1;
            assert_eq!(line, Some(expected));
            assert!(reason.contains("[solver]") && reason.contains("tolerance"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let new = format!("{BLOCK}[integrator]\nkind = \"be\"\n[solver]\ntolerance = 1e-6\nmax_iterations = 3\n");
    let scene = hooke::scene::Scene::from_text(&new, "test.toml", ".".into()).unwrap();
    assert_eq!(scene.file.solver.tolerance, 1e-6);
    assert_eq!(scene.file.solver.max_iterations, Some(3));
    let bad = format!("{BLOCK}[solver]\ntolerance = 2.0\n");
    assert!(matches!(
        hooke::scene::Scene::from_text(&bad, "test.toml", ".".into()),
        Err(HookeError::Scene { key, .. }) if key == "solver.tolerance"
    ));
}

/// Every registered integrator: a unique name and aliases, resolvable by each,
/// built with its defaults, named as
/// registered, and described in docs/scene-format.md.
#[test]
fn the_registry_lists_every_integrator_once_and_the_docs_cover_it() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scene-format.md")).unwrap();
    let mut seen = std::collections::HashSet::new();
    for entry in hooke::integrate::INTEGRATORS {
        for name in std::iter::once(&entry.name).chain(entry.aliases) {
            assert!(seen.insert(*name), "{name} registered twice");
            assert_eq!(IntegratorConfig::from_name(name).unwrap().name().unwrap(), entry.name);
        }
        assert!(
            docs.contains(&format!("`{}`", entry.name)),
            "docs/scene-format.md does not describe {}",
            entry.name
        );
        let integrator: Box<dyn Integrator> = entry.with_defaults().unwrap();
        assert_eq!(integrator.name(), entry.name);
    }
    assert!(IntegratorConfig::from_name("no_such_method").is_none());
}

/// The section of docs/scene-format.md under the heading `#### `name``.
fn solver_section<'a>(docs: &'a str, name: &str) -> Option<&'a str> {
    let start = docs.find(&format!("#### `{name}`"))?;
    let rest = &docs[start + 5..];
    Some(&rest[..rest.find("\n#").unwrap_or(rest.len())])
}

/// Every registered minimiser: a unique name and aliases; its documented
/// defaults read back through its settings type as a table of its own keys;
/// an unknown key refused naming it; built by name; and described, with each
/// of its keys, in its own section of docs/scene-format.md. The solvers with
/// integrators of their own are documented too.
#[test]
fn the_registry_lists_every_minimiser_once_and_the_docs_cover_it() {
    use hooke::solve::registry::{entry, MINIMIZERS};
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scene-format.md")).unwrap();
    let mut seen = std::collections::HashSet::new();
    for minimiser in MINIMIZERS {
        for name in std::iter::once(&minimiser.name).chain(minimiser.aliases) {
            assert!(seen.insert(*name), "{name} registered twice");
            assert_eq!(entry(name).unwrap().name, minimiser.name);
            assert_eq!(SolverSettings::named(name).unwrap().kind, minimiser.name);
        }
        let section = solver_section(&docs, minimiser.name)
            .unwrap_or_else(|| panic!("docs/scene-format.md has no section for {}", minimiser.name));
        let mut written = SolverSettings::named(minimiser.name).unwrap();
        for key in minimiser.keys {
            assert!(
                section.contains(&format!("`{}`", key.name)),
                "{}: {} undocumented",
                minimiser.name,
                key.name
            );
            if !key.default.is_empty() {
                let value: toml::Table = toml::from_str(&format!("v = {}", key.default)).unwrap();
                written.set(key.name, value["v"].clone()).unwrap();
            }
        }
        assert!(
            written.minimizer().is_ok(),
            "{}: its documented defaults",
            minimiser.name
        );
        let mut wrong = SolverSettings::named(minimiser.name).unwrap();
        let error = wrong.set("no_such_key", 1.into()).unwrap_err().to_string();
        assert!(error.contains("takes no `no_such_key`"), "{error}");
        let built = SolverSettings::named(minimiser.name).unwrap().minimizer().unwrap();
        assert_eq!(built.name(), minimiser.name);
    }
    for solver in hooke::reduced::registry::REDUCED_SOLVERS {
        assert!(
            docs.contains(&format!("`\"{}\"`", solver.name)),
            "{} undocumented",
            solver.name
        );
    }
    assert!(SolverSettings::named("no_such_method").is_err());
}

/// A scene's `[solver]` table: a key of another minimiser is refused with its
/// line and the minimisers that take it; typed settings round-trip through
/// the table a scene writes.
#[test]
fn solver_tables_are_read_through_the_minimisers_settings_types() {
    use hooke::solve::{LbfgsSettings, NewtonSettings};
    let typed = SolverSettings::with_minimizer(LbfgsSettings {
        history: 11,
        ..LbfgsSettings::default()
    });
    let table: toml::Table = typed.clone().into();
    let read: SolverSettings = toml::Value::Table(table).try_into().unwrap();
    assert_eq!(read.own_settings::<LbfgsSettings>("solver").unwrap().history, 11);
    assert_eq!(read.kind, "lbfgs");
    let newton = SolverSettings::with_minimizer(NewtonSettings {
        cg_iterations: Some(3),
        ..NewtonSettings::default()
    });
    assert_eq!(
        newton.own_settings::<NewtonSettings>("solver").unwrap().cg_iterations,
        Some(3)
    );
    let scene = |solver: &str| {
        format!(
            "[simulation]\nduration = 0.02\ntime_step = 0.01\n[[bodies]]\nmesh = {{ box = {{ size = [0.2, 0.05, 0.05], cells = [2, 1, 1] }} }}\nmaterial = {{ model = \"neo_hookean\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000 }}\n[solver]\n{solver}\n"
        )
    };
    let error = hooke::scene::Scene::from_text(&scene("kind = \"newton\"\nhistory = 3"), "s.toml", ".".into())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("s.toml, line 9: solver.history: newton takes no `history` (a key of lbfgs)"),
        "{error}"
    );
    hooke::scene::Scene::from_text(&scene("kind = \"lbfgs\"\nhistory = 3"), "s.toml", ".".into()).unwrap();
    let error = hooke::scene::Scene::from_text(&scene("kind = \"mixed_sqp\"\nhistory = 3"), "s.toml", ".".into())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("line 9: solver.history: mixed_sqp takes no `history`"),
        "{error}"
    );
}

/// A model carries the reduced coordinates it is simulated in; pins that move
/// cannot be followed by a subspace and are refused.
#[test]
fn subspaces_refuse_what_they_cannot_represent() {
    let mut model = clamped_bar(MaterialModel::Linear, [2, 1, 1]);
    let n = model.dof_count();
    let rest = model.rest_positions();
    let full = DMatrix::from_fn(n, 2, |r, c| if r % 2 == c { 1.0 } else { 0.0 });
    let error = model
        .set_subspace(Some(Subspace::new(rest.clone(), full).unwrap()))
        .unwrap_err();
    assert!(error.to_string().contains("zero row"), "{error}");
    assert!(Subspace::new(rest.clone(), DMatrix::zeros(n, 2)).is_err());
    model.add_pin(hooke::model::Pin::new(
        vec![n / 3 - 1],
        Motion::Translation {
            velocity: [1.0, 0.0, 0.0],
        },
        None,
    ));
    let dofs = model.dof_map(0.0);
    let basis = DMatrix::from_fn(n, 1, |r, _| f64::from(u8::from(dofs.free_index[r].is_some())));
    let error = model
        .set_subspace(Some(Subspace::new(rest, basis).unwrap()))
        .unwrap_err();
    assert!(error.to_string().contains("hold still"), "{error}");
}

/// A soft pin on every vertex of a block under gravity: the block moves down
/// rigidly by M g / k (each vertex's spring carries its own weight, as the
/// stiffness is shared by mass), and stores no elastic energy in its elements.
#[test]
fn soft_pins_hold_with_zero_length_springs_shared_by_mass() {
    let stiffness = 2e4;
    let text = format!(
        "gravity = [0, 0, -9.81]\n{BLOCK}[integrator]\nkind = \"static\"\n[[pins]]\nselect = \"all\"\nsoft = {{ stiffness = {stiffness} }}\n"
    );
    let mut built = scene(&text).unwrap();
    let mut state = built.initial_state.clone();
    built.integrator.step(&built.model, &mut state, 1.0).unwrap();
    let mass: f64 = built.model.mass().lumped().iter().sum();
    let drop = mass * 9.81 / stiffness;
    let rest = built.model.rest_positions();
    for (v, p) in state.positions.chunks(3).enumerate() {
        assert!((p[2] - rest[3 * v + 2] + drop).abs() < 1e-9 * drop, "vertex {v}");
        assert!((p[0] - rest[3 * v]).abs() < 1e-12 && (p[1] - rest[3 * v + 1]).abs() < 1e-12);
    }
    // The potential of a moving soft pin has consistent derivatives.
    let moving = text.replace(
        "soft = {",
        "motion = { kind = \"translation\", velocity = [0.1, 0, 0] }\nsoft = {",
    );
    let moving = moving.replace("kind = \"static\"", "kind = \"be\"");
    let built = scene(&moving).unwrap();
    let mut rng = Lcg::new(1);
    let x: Vec<f64> = built
        .model
        .rest_positions()
        .iter()
        .map(|p| p + 0.01 * rng.next())
        .collect();
    common::assert_potential_derivatives(&built.model, &x, 1e-6, 1e-6, "soft pin");
    // Conservative integrators refuse a moving one, naming the pins.
    let refused = moving
        .replace(
            "kind = \"be\"",
            "kind = \"symplectic_adaptive\"\nstep_size = \"constant\"",
        )
        .replacen("gravity = [0, 0, -9.81]\n", "", 1);
    assert!(matches!(scene(&refused), Err(HookeError::Scene { key, .. }) if key == "pins"));
}

/// `[coordinates] kind = "modal"` simulates a scene in its lowest modes: a
/// clamped bar released from a sag under gravity swings as the full model
/// does (its motion lives in the lowest modes), and integrators that cannot
/// take reduced coordinates are refused.
#[test]
fn scenes_can_run_in_their_lowest_modes() {
    let text = |coordinates: &str, kind: &str| {
        format!(
            r#"
gravity = [0, 0, -9.81]
[simulation]
duration = 0.2
time_step = 0.005
[[bodies]]
mesh = {{ box = {{ size = [0.5, 0.05, 0.05], cells = [10, 1, 1] }} }}
material = {{ model = "linear", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000.0 }}
[[pins]]
select = {{ plane = {{ point = [0, 0, 0], normal = [-1, 0, 0] }} }}
[integrator]
kind = "{kind}"
{coordinates}
"#
        )
    };
    let tip_path = |text: &str| {
        let mut built = scene(text).unwrap();
        let mut state = built.initial_state.clone();
        let tip = built
            .model
            .mesh()
            .vertices()
            .iter()
            .position(|p| p.x == 0.5 && p.y == 0.0 && p.z == 0.0)
            .unwrap();
        let mut path = Vec::new();
        for _ in 0..40 {
            built.integrator.step(&built.model, &mut state, 0.005).unwrap();
            path.push(state.positions[3 * tip + 2]);
        }
        path
    };
    let full = tip_path(&text("", "im"));
    let modal = tip_path(&text("[coordinates]\nkind = \"modal\"\nmodes = 12", "im"));
    let amplitude = full.iter().fold(0.0f64, |m, z| m.max(z.abs()));
    assert!(amplitude > 1e-3, "the bar swings ({amplitude})");
    let difference = largest_difference(&full, &modal);
    assert!(
        difference < 0.03 * amplitude,
        "modal path differs by {difference:e} of {amplitude:e}"
    );
    let refused = text("[coordinates]\nkind = \"modal\"\nmodes = 12", "se");
    assert!(matches!(scene(&refused), Err(HookeError::Scene { key, .. }) if key == "coordinates"));
    let too_many = text("[coordinates]\nkind = \"modal\"\nmodes = 100000", "im");
    assert!(matches!(scene(&too_many), Err(HookeError::Scene { key, .. }) if key == "coordinates.modes"));
}
