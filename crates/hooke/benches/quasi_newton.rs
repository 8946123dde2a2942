//! A real-time frame (h = 1/30 s) of backward Euler on a ~20k-tet Stable
//! Neo-Hookean bar, clamped at one end, under gravity, from a sagging, moving
//! state: Newton against L-BFGS (Liu 2018 thesis, §7.2), converged and on fixed
//! budgets (Newton 1 iteration, L-BFGS 10, the pairing of Liu's thesis, ch. 10).
//! Before timing, the relative error (Φ(x) − Φ(x*)) / (Φ(x⁰) − Φ(x*)) of each
//! budget against Newton converged to 1e-10 is printed. Recorded in BENCHMARKS.md.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hooke::integrate::{BackwardEuler, Integrator};
use hooke::model::{Model, State};
use hooke::solve::SolverSettings;
use nalgebra::Vector3;

const FRAME: f64 = 1.0 / 30.0;

fn bar(cells: [usize; 3]) -> (Model, State) {
    let model = common::clamped_bar(Vector3::new(0.8, 0.16, 0.2), cells);
    let state = common::sagging(&model);
    (model, state)
}

/// Φ(x⁰) and Φ(x*) of the frame from `state`: x⁰ = xₙ + h vₙ with the pins
/// where they are prescribed at the frame's end (where every minimiser
/// starts; with a moving pin, xₙ itself is not a point of the frame), x* by
/// Newton to 1e-10.
fn start_and_minimum(model: &Model, state: &State) -> (f64, f64) {
    let mut guess: Vec<f64> = (0..state.positions.len())
        .map(|i| state.positions[i] + FRAME * state.velocities[i])
        .collect();
    model.apply_prescribed_positions(state.time + FRAME, &mut guess);
    let mut next = state.clone();
    let settings = SolverSettings {
        tolerance: 1e-10,
        ..SolverSettings::default()
    };
    BackwardEuler::new(settings.clone())
        .unwrap()
        .step(model, &mut next, FRAME)
        .expect("step");
    (
        incremental_potential(model, state, &guess),
        incremental_potential(model, state, &next.positions),
    )
}

/// Times one frame of `integrator` from `state` (each sample from the same state).
fn bench_frame(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    id: BenchmarkId,
    integrator: &mut BackwardEuler,
    model: &Model,
    state: &State,
) {
    group.bench_function(id, |b| {
        b.iter(|| {
            let mut next = state.clone();
            integrator.step(model, &mut next, FRAME).expect("step");
            next
        })
    });
}

/// Φ(x) = ‖x − xₙ − h vₙ‖²_M / 2h² + E(x): backward Euler's incremental potential.
fn incremental_potential(model: &Model, start: &State, x: &[f64]) -> f64 {
    let difference: Vec<f64> = (0..x.len())
        .map(|i| x[i] - start.positions[i] - FRAME * start.velocities[i])
        .collect();
    let mut product = vec![0.0; x.len()];
    model.mass_multiply(&difference, &mut product);
    let inertia: f64 = difference.iter().zip(&product).map(|(a, b)| a * b).sum::<f64>() / (2.0 * FRAME * FRAME);
    inertia + model.energy(x, start.time + FRAME)
}

fn variants() -> Vec<(&'static str, SolverSettings)> {
    let solver = |kind: &str, iterations| SolverSettings {
        iterations,
        ..SolverSettings::named(kind).expect("registered")
    };
    vec![
        ("newton_converged", solver("newton", None)),
        ("newton_1_iteration", solver("newton", Some(1))),
        ("lbfgs_10_iterations", solver("lbfgs", Some(10))),
        ("lbfgs_25_iterations", solver("lbfgs", Some(25))),
        ("lbfgs_30_iterations", solver("lbfgs", Some(30))),
        ("lbfgs_converged", solver("lbfgs", None)),
    ]
}

/// The 19,200-tet bar of the integrator benchmarks with every variant, and a
/// 100,800-tet bar (60×14×20 cells) with the fixed budgets only.
fn frame(c: &mut Criterion) {
    frame_of(
        c,
        [40, 8, 10],
        &[
            "newton_converged",
            "newton_1_iteration",
            "lbfgs_10_iterations",
            "lbfgs_30_iterations",
            "lbfgs_converged",
        ],
    );
    frame_of(
        c,
        [60, 14, 20],
        &["newton_1_iteration", "lbfgs_10_iterations", "lbfgs_30_iterations"],
    );
}

fn frame_of(c: &mut Criterion, cells: [usize; 3], chosen: &[&str]) {
    let (model, state) = bar(cells);
    let (start, exact) = start_and_minimum(&model, &state);
    let tets = model.mesh().element_count();
    let mut group = c.benchmark_group(format!("backward_euler_frame_{tets}_tets"));
    group.sample_size(10);
    for (label, settings) in variants().into_iter().filter(|(label, _)| chosen.contains(label)) {
        let mut integrator = BackwardEuler::new(settings.clone()).unwrap();
        // The second step is what the timing repeats: L-BFGS's factor is kept from the first.
        integrator.step(&model, &mut state.clone(), FRAME).expect("step");
        let mut next = state.clone();
        let report = integrator.step(&model, &mut next, FRAME).expect("step");
        let error = (incremental_potential(&model, &state, &next.positions) - exact) / (start - exact);
        eprintln!(
            "{label}: {} iterations, relative error {error:.3e} ({} line-search halvings; {:.1} ms evaluating, {:.1} ms solving)",
            report.iterations,
            report.line_search_reductions,
            1e3 * report.assembly_seconds,
            1e3 * report.solve_seconds
        );
        bench_frame(
            &mut group,
            BenchmarkId::from_parameter(label),
            &mut integrator,
            &model,
            &state,
        );
    }
    group.finish();
}

/// The twisting Neo-Hookean bar of the Liu 2018 thesis (Fig. 7.3; scenes/twisting_bar_lbfgs.toml: E =
/// 1e5 Pa, ν = 0.4, one end turning at 1 rad/s) meshed with about 10k and
/// 100k tets: the frame after 0.5 s of the scene's own run, one Newton
/// iteration against 10, 25 and 30 of L-BFGS, with the relative errors printed
/// first (issue: the same frames of the twisting bar at 10k and 100k tets).
fn twisting_frame(c: &mut Criterion) {
    for cells in ["35, 7, 7", "75, 15, 15"] {
        let tets = 6 * cells
            .split(", ")
            .map(|n| n.parse::<usize>().expect("a count"))
            .product::<usize>();
        let prepare = || {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/twisting_bar_lbfgs.toml");
            let text = std::fs::read_to_string(&path).expect("the scene reads");
            let variant = text.replace("cells = [20, 4, 4]", &format!("cells = [{cells}]"));
            let scene = hooke::scene::Scene::from_text(&variant, "twisting_bar_lbfgs.toml", ".".into()).expect("reads");
            let mut built = scene.build().expect("builds");
            let mut state = built.initial_state.clone();
            for _ in 0..15 {
                built.integrator.step(&built.model, &mut state, FRAME).expect("step");
            }
            (built.model, state)
        };
        let mut group = c.benchmark_group(format!("twisting_bar_frame_{tets}_tets"));
        group.sample_size(10);
        timed_frames(&mut group, "", &format!("twisting bar, {tets} tets"), prepare);
        group.finish();
    }
}

/// Times one frame of newton_1_iteration and lbfgs_{10,25,30}_iterations
/// (25: about Newton's time at 10k tets) from the state `prepare` gives, each printing its
/// relative error first. The model is prepared, and each integrator warmed
/// (L-BFGS keeps its factor from a first frame, as in a run), only when a
/// benchmark of it is selected: criterion calls a routine once per sample, and
/// a filtered-out one never.
fn timed_frames(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    name: &str,
    what: &str,
    prepare: impl Fn() -> (Model, State),
) {
    let prepared = std::cell::OnceCell::new();
    for (label, settings) in variants().into_iter().filter(|(label, _)| {
        [
            "newton_1_iteration",
            "lbfgs_10_iterations",
            "lbfgs_25_iterations",
            "lbfgs_30_iterations",
        ]
        .contains(label)
    }) {
        let id = match name {
            "" => BenchmarkId::from_parameter(label),
            _ => BenchmarkId::new(name, label),
        };
        let mut warmed: Option<BackwardEuler> = None;
        group.bench_function(id, |b| {
            let (model, state, start, exact) = prepared.get_or_init(|| {
                let (model, state) = prepare();
                let (start, exact) = start_and_minimum(&model, &state);
                (model, state, start, exact)
            });
            let integrator = warmed.get_or_insert_with(|| {
                let mut integrator = BackwardEuler::new(settings.clone()).unwrap();
                integrator.step(model, &mut state.clone(), FRAME).expect("step");
                let mut next = state.clone();
                integrator.step(model, &mut next, FRAME).expect("step");
                let error = (incremental_potential(model, state, &next.positions) - exact) / (start - exact);
                eprintln!("{what}, {label}: relative error {error:.3e}");
                integrator
            });
            b.iter(|| {
                let mut next = state.clone();
                integrator.step(model, &mut next, FRAME).expect("step");
                next
            })
        });
    }
}

/// The material gallery of the Liu 2018 thesis, Fig. 7.1: one frame of the sagging bar in each
/// material (E = 1e6 Pa, ν = 0.45) at 10,368 and 100,800 tets, one Newton
/// iteration against 10, 25 and 30 of L-BFGS, with the relative error of each
/// printed first.
fn gallery(c: &mut Criterion) {
    use hooke::material::valanis_landel::{ValanisLandel, ValanisLandelEnergy};
    use hooke::material::{IsotropicMaterial, MaterialModel, MaterialParameters, MaterialRef};
    let parameters = MaterialParameters {
        youngs_modulus: 1e6,
        poisson_ratio: 0.45,
        density: 1000.0,
    };
    let lame = parameters.lame();
    let valanis_landel = |name: &str, energy: ValanisLandelEnergy| -> MaterialRef {
        std::sync::Arc::new(ValanisLandel {
            name: name.to_string(),
            energy,
            density: 1000.0,
        })
    };
    let materials: Vec<(&str, MaterialRef)> = vec![
        (
            "corotational",
            IsotropicMaterial::shared(MaterialModel::Corotational, &parameters),
        ),
        (
            "neo_hookean",
            IsotropicMaterial::shared(MaterialModel::NeoHookean, &parameters),
        ),
        (
            "st_venant_kirchhoff",
            IsotropicMaterial::shared(MaterialModel::StVenantKirchhoff, &parameters),
        ),
        (
            "polynomial",
            valanis_landel("polynomial", ValanisLandelEnergy::polynomial(lame.mu)),
        ),
        (
            "spline_a",
            valanis_landel(
                "spline_a",
                ValanisLandelEnergy::neo_hookean_spline(&lame, 2.0, 1.0).expect("spline"),
            ),
        ),
        (
            "spline_b",
            valanis_landel(
                "spline_b",
                ValanisLandelEnergy::neo_hookean_spline(&lame, 1.0, 2.0).expect("spline"),
            ),
        ),
    ];
    for cells in [[32, 6, 9], [60, 14, 20]] {
        let tets = 6 * cells.iter().product::<usize>();
        let mut group = c.benchmark_group(format!("material_gallery_frame_{tets}_tets"));
        group.sample_size(10);
        for (name, material) in &materials {
            gallery_material(&mut group, name, material.clone(), cells);
        }
        group.finish();
    }
}

/// [`gallery`]'s frame of one material on a bar of `cells`.
fn gallery_material(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    name: &str,
    material: hooke::material::MaterialRef,
    cells: [usize; 3],
) {
    let tets = 6 * cells.iter().product::<usize>();
    timed_frames(group, name, &format!("{name}, {tets} tets"), || {
        let model = common::clamped_bar_of(Vector3::new(0.8, 0.16, 0.2), cells, material.clone());
        let state = common::sagging(&model);
        (model, state)
    });
}

/// One local/global (projective dynamics) iteration at about 49k DOFs, the
/// size Bouaziz et al. 2014 timed (3.1 ms): an ARAP bar of 16,500 vertices
/// (100×10×14 cells, 49,500 unknowns less the clamp), one frame of 10
/// iterations after a first frame has factorised the matrix; also L-BFGS's
/// iteration on the same bar, and both on a bar 8× smaller, for the cost
/// against size.
fn projective_iteration(c: &mut Criterion) {
    use hooke::material::{IsotropicMaterial, MaterialModel, MaterialParameters};
    let parameters = MaterialParameters {
        youngs_modulus: 1e6,
        poisson_ratio: 0.3,
        density: 1000.0,
    };
    let mut group = c.benchmark_group("ten_iterations_arap_bar");
    group.sample_size(10);
    for cells in [[50, 5, 7], [100, 10, 14]] {
        let material = IsotropicMaterial::shared(MaterialModel::Arap, &parameters);
        let model = common::clamped_bar_of(Vector3::new(0.8, 0.16, 0.2), cells, material);
        let state = model.initial_state();
        let unknowns = model.dof_map(0.0).free_count();
        for kind in ["local_global", "lbfgs"] {
            let settings = SolverSettings {
                iterations: Some(10),
                ..SolverSettings::named(kind).expect("registered")
            };
            let mut integrator = BackwardEuler::new(settings.clone()).unwrap();
            integrator.step(&model, &mut state.clone(), FRAME).expect("step");
            group.bench_function(
                BenchmarkId::new(format!("{kind:?}"), format!("{unknowns}_unknowns")),
                |b| {
                    b.iter(|| {
                        let mut next = state.clone();
                        integrator.step(&model, &mut next, FRAME).expect("step");
                        next
                    })
                },
            );
        }
    }
    group.finish();
}

/// One local/global frame (10 iterations) of scenes/projective_dynamics_yardstick.toml:
/// the size and kind of Bouaziz et al. 2014's Fig. 1 (49k DOFs, 43k constraints,
/// cloth and a solid; 3.1 ms an iteration), 5 frames in, so that the cloth
/// hangs stretched at its corners.
fn projective_yardstick(c: &mut Criterion) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/projective_dynamics_yardstick.toml");
    let scene = hooke::scene::Scene::from_file(&path).expect("the scene reads");
    let mut built = scene.build().expect("builds");
    let h = scene.file.simulation.time_step;
    let mut state = built.initial_state.clone();
    for _ in 0..5 {
        built.integrator.step(&built.model, &mut state, h).expect("step");
    }
    let unknowns = built.model.dof_map(0.0).free_count();
    let mut group = c.benchmark_group("projective_dynamics_yardstick");
    group.sample_size(20);
    group.bench_function(format!("ten_iterations_{unknowns}_unknowns"), |b| {
        b.iter(|| {
            let mut next = state.clone();
            built.integrator.step(&built.model, &mut next, h).expect("step");
            next
        })
    });
    group.finish();
}

/// The kernels of a projective-dynamics iteration on the 100×10×14 bar,
/// alone: the polar rotations of its 84,000 tetrahedra on one thread, one at
/// a time and sixteen at a time, the ARAP energy and gradient of the bent bar
/// (F, rotations, stresses, element forces and their gather) on the pool's
/// threads, and the solve of three right-hand sides
/// with the factor of its 16,665-vertex graph Laplacian (plus a diagonal, as
/// M/h² adds), on the pool's threads, in double and in single precision.
fn projective_kernels(c: &mut Criterion) {
    use hooke::linalg::{polar_rotation, polar_rotations, LowerPattern, SparseCholesky, POLAR_LANES};
    use nalgebra::Matrix3;
    let mut group = c.benchmark_group("projective_kernels");
    group.sample_size(20);
    let gradients: Vec<Matrix3<f64>> = (0..84_000)
        .map(|e| {
            let rotation = nalgebra::Rotation3::from_euler_angles(e as f64 * 0.1, 0.3, e as f64 * 0.07).into_inner();
            rotation
                * (Matrix3::identity() + Matrix3::from_fn(|a, b| 0.05 * ((9 * e + 3 * a + b) as f64 * 0.731).sin()))
        })
        .collect();
    group.bench_function("polar_84000_one_at_a_time", |b| {
        b.iter(|| {
            gradients
                .iter()
                .map(|f| polar_rotation(f).expect("rotation")[0])
                .sum::<f64>()
        })
    });
    group.bench_function("polar_84000_sixteen_at_a_time", |b| {
        b.iter(|| {
            gradients
                .chunks_exact(POLAR_LANES)
                .map(|f| {
                    let mut rotations = [nalgebra::Matrix3::zeros(); POLAR_LANES];
                    assert!(polar_rotations(f.try_into().expect("a full group"), &mut rotations)[0]);
                    rotations[0][0]
                })
                .sum::<f64>()
        })
    });
    {
        use hooke::material::{IsotropicMaterial, MaterialModel, MaterialParameters};
        let parameters = MaterialParameters {
            youngs_modulus: 1e6,
            poisson_ratio: 0.3,
            density: 1000.0,
        };
        let material = IsotropicMaterial::shared(MaterialModel::Arap, &parameters);
        let model = common::clamped_bar_of(Vector3::new(0.8, 0.16, 0.2), [100, 10, 14], material);
        let x: Vec<f64> = model
            .rest_positions()
            .chunks_exact(3)
            .flat_map(|p| {
                let bend = 0.3 * p[0];
                [
                    p[0] * bend.cos() - p[2] * bend.sin(),
                    p[1],
                    p[0] * bend.sin() + p[2] * bend.cos(),
                ]
            })
            .collect();
        let mut gradient = vec![0.0; x.len()];
        let pool = rayon::ThreadPoolBuilder::new().build().expect("pool");
        group.bench_function("arap_gradient_84000_tets", |b| {
            b.iter(|| pool.install(|| model.gradient(&x, 0.0, &mut gradient).expect("gradient")))
        });
    }
    let mesh = hooke::mesh::box_mesh(&hooke::mesh::BoxMeshOptions {
        origin: Vector3::zeros(),
        size: Vector3::new(0.8, 0.16, 0.2),
        cells: [100, 10, 14],
        tets_per_hex: hooke::mesh::TetsPerHex::Six,
    })
    .expect("valid box");
    let mut columns = vec![Vec::new(); mesh.vertex_count()];
    for tet in &mesh.tets {
        for a in tet {
            for b in tet {
                if a >= b {
                    columns[*b].push(*a);
                }
            }
        }
    }
    columns.iter_mut().for_each(|c| {
        c.sort_unstable();
        c.dedup()
    });
    let pattern = LowerPattern::from_columns(columns);
    let mut values = vec![-1.0; pattern.nonzeros()];
    for k in pattern.diagonal_positions() {
        values[k] = 30.0;
    }
    let mut cholesky = SparseCholesky::analyse(&pattern).expect("analysis");
    cholesky.factorize(&values).expect("definite");
    let mut rhs: Vec<f64> = (0..3 * pattern.size).map(|i| (i as f64).cos()).collect();
    let pool = rayon::ThreadPoolBuilder::new().build().expect("pool");
    group.bench_function("solve_3_columns_16665_vertices", |b| {
        b.iter(|| pool.install(|| cholesky.solve_columns_in_place(&mut rhs, 3).expect("solve")))
    });
    // Local/global solves with the factor rounded to single precision.
    assert!(cholesky.keep_in_single_precision());
    group.bench_function("solve_3_columns_16665_vertices_single", |b| {
        b.iter(|| pool.install(|| cholesky.solve_columns_in_place(&mut rhs, 3).expect("solve")))
    });
    group.finish();
}

criterion_group!(
    benches,
    frame,
    twisting_frame,
    gallery,
    projective_iteration,
    projective_yardstick,
    projective_kernels
);
criterion_main!(benches);
