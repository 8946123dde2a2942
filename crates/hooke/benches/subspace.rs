//! Subspace mixed FEM (Trusty et al. 2023, Table 1): the time of one iteration of
//! subspace MFEM and of subspace FEM for (m, |𝒞|) = (5, 227), (10, 192),
//! (16, 342), (16, 581) on 3:1:1 bars of about 9k, 105k and 486k tets whose
//! x < 1.5 half is soft (E = 1e5) and the other half stiff (E = 1e10), FCR,
//! clamped at x = 0; and the precomputation (eigenmodes, cubature, maps).
//!
//! Each mesh and subspace is precomputed only when a benchmark that needs it
//! runs (`cargo bench --bench subspace -- 9216` runs the smallest mesh alone);
//! the precomputation's time is printed, and measured by `precompute/…`.
//!
//! `HOOKE_WRITE_MESHES=DIR` writes the three bars as MEDIT files (label 1
//! soft, 2 stiff) for the same measurement with simkit
//! (scripts/simkit_subspace.py), and exits.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hooke::material::{IsotropicMaterial, MaterialModel, MaterialParameters};
use hooke::mesh::{box_mesh, BoxMeshOptions, TetsPerHex};
use hooke::model::MassKind;
use hooke::model::Model;
use hooke::reduced::{ReducedModel, StepPotential, SubspaceSettings};
use nalgebra::Vector3;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

const MESHES: [[usize; 3]; 3] = [[24, 8, 8], [54, 18, 18], [90, 30, 30]];
const SUBSPACES: [(usize, usize); 4] = [(5, 227), (10, 192), (16, 342), (16, 581)];

/// The heterogeneous bar of `cells` hexahedra (6 tets each).
pub fn heterogeneous_bar(cells: [usize; 3]) -> Model {
    let mesh = box_mesh(&BoxMeshOptions {
        origin: Vector3::zeros(),
        size: Vector3::new(3.0, 1.0, 1.0),
        cells,
        tets_per_hex: TetsPerHex::Six,
    })
    .expect("valid box");
    let material = |youngs_modulus| {
        IsotropicMaterial::shared(
            MaterialModel::FixedCorotational,
            &MaterialParameters {
                youngs_modulus,
                poisson_ratio: 0.45,
                density: 1000.0,
            },
        )
    };
    let (soft, stiff) = (material(1e5), material(1e10));
    let materials = mesh
        .tets
        .iter()
        .map(|tet| {
            let x = tet.iter().map(|&v| mesh.vertices[v].x).sum::<f64>() / 4.0;
            if x < 1.5 {
                soft.clone()
            } else {
                stiff.clone()
            }
        })
        .collect();
    let mut model = Model::new(mesh, materials, MassKind::Lumped).expect("valid model");
    common::clamp_at_origin(&mut model);
    model.set_gravity(Vector3::new(0.0, -9.81, 0.0));
    model
}

/// A step from a bent, moving state: the reduced model, its step potential and the start.
struct Prepared {
    reduced: ReducedModel,
    step: StepPotential,
    start: Vec<f64>,
}

fn prepare(model: &Model, modes: usize, points: usize) -> Prepared {
    let started = Instant::now();
    let settings = SubspaceSettings {
        modes,
        cubature_points: Some(points),
        seed: 0,
    };
    let reduced = ReducedModel::new(model, &settings).expect("precompute");
    eprintln!(
        "precomputed m = {modes}, |C| = {points} on {} tets in {:.2} s",
        model.mesh().element_count(),
        started.elapsed().as_secs_f64()
    );
    let displacement: Vec<f64> = model
        .mesh()
        .vertices()
        .iter()
        .flat_map(|x| {
            let s = x.x / 3.0;
            [0.0, -0.3 * s * s, 0.1 * s * s * s]
        })
        .collect();
    let start = reduced.project(model, &displacement).expect("projection");
    let h = 1.0 / 60.0;
    let velocity: Vec<f64> = start.iter().map(|u| 0.5 * u / h).collect();
    let loads = reduced.loads(model, 0.0).expect("loads");
    let step = reduced.step_potential(&start, &velocity, h, &loads);
    Prepared { reduced, step, start }
}

/// The bars as MEDIT files, for the peer measurement.
fn write_meshes(directory: &std::path::Path) {
    std::fs::create_dir_all(directory).expect("mesh folder");
    for cells in MESHES {
        let model = heterogeneous_bar(cells);
        let hooke::mesh::Mesh::Tetrahedra(mesh) = model.mesh() else {
            unreachable!("a box of tetrahedra")
        };
        let mut labelled = mesh.clone();
        labelled.labels = mesh
            .tets
            .iter()
            .map(
                |tet| match tet.iter().map(|&v| mesh.vertices[v].x).sum::<f64>() / 4.0 < 1.5 {
                    true => 1,
                    false => 2,
                },
            )
            .collect();
        let path = directory.join(format!("bar_{}.mesh", mesh.tets.len()));
        hooke::io::medit::write_medit(&path, &labelled).expect("mesh written");
        eprintln!("wrote {}", path.display());
    }
}

fn iteration(c: &mut Criterion) {
    if let Some(directory) = std::env::var_os("HOOKE_WRITE_MESHES") {
        write_meshes(std::path::Path::new(&directory));
        std::process::exit(0);
    }
    let models: RefCell<HashMap<usize, Arc<Model>>> = RefCell::default();
    let prepared: RefCell<HashMap<(usize, usize, usize), Arc<Prepared>>> = RefCell::default();
    let model_of = |cells: [usize; 3]| {
        models
            .borrow_mut()
            .entry(cells[0])
            .or_insert_with(|| Arc::new(heterogeneous_bar(cells)))
            .clone()
    };
    let prepared_of = |cells: [usize; 3], m: usize, points: usize| {
        let model = model_of(cells);
        prepared
            .borrow_mut()
            .entry((cells[0], m, points))
            .or_insert_with(|| Arc::new(prepare(&model, m, points)))
            .clone()
    };
    let mut group = c.benchmark_group("subspace_iteration");
    group.sample_size(20);
    for cells in MESHES {
        let tets = 6 * cells.iter().product::<usize>();
        for (m, points) in SUBSPACES {
            let label = format!("{tets}_tets/m{m}_c{points}");
            group.bench_function(BenchmarkId::new("mixed_fem", &label), |b| {
                let p = prepared_of(cells, m, points);
                let z = p.reduced.stretches(&p.start);
                // On the thread pool, as a step runs it (integrate::commit_step).
                b.iter(|| {
                    rayon::scope(|_| {
                        let mut u = p.start.clone();
                        let mut z = z.clone();
                        let mut multipliers = Vec::new();
                        p.reduced
                            .mixed_iteration(&p.step, &mut u, &mut z, &mut multipliers)
                            .expect("iteration")
                    })
                })
            });
            group.bench_function(BenchmarkId::new("fem", &label), |b| {
                let p = prepared_of(cells, m, points);
                b.iter(|| {
                    rayon::scope(|_| {
                        let mut u = p.start.clone();
                        p.reduced.newton_iteration(&p.step, &mut u).expect("iteration")
                    })
                })
            });
        }
    }
    group.finish();
    // Full-space mixed FEM (Trusty 2022): one iteration a step, from the bent state.
    let mut group = c.benchmark_group("full_mixed_iteration");
    group.sample_size(10);
    for cells in MESHES {
        let tets = 6 * cells.iter().product::<usize>();
        group.bench_function(BenchmarkId::new("mixed_fem", format!("{tets}_tets")), |b| {
            let model = model_of(cells);
            let settings = hooke::solve::SolverSettings {
                kind: "mixed_sqp".into(),
                iterations: Some(1),
                ..Default::default()
            };
            let mut integrator = hooke::reduced::FullMixedBackwardEuler::new(&model, settings).expect("integrator");
            let mut start = model.initial_state();
            for (x, p) in start.positions.chunks_mut(3).zip(model.mesh().vertices()) {
                let s = p.x / 3.0;
                x[1] -= 0.3 * s * s;
                x[2] += 0.1 * s * s * s;
            }
            b.iter(|| {
                let mut state = start.clone();
                hooke::integrate::Integrator::step(&mut integrator, &model, &mut state, 1.0 / 60.0).expect("step")
            })
        });
    }
    group.finish();
    let mut group = c.benchmark_group("subspace_precompute");
    group.sample_size(10);
    for cells in MESHES {
        let tets = 6 * cells.iter().product::<usize>();
        group.bench_function(BenchmarkId::new("m16_c581", format!("{tets}_tets")), |b| {
            let model = model_of(cells);
            b.iter(|| {
                let settings = SubspaceSettings {
                    modes: 16,
                    cubature_points: Some(581),
                    seed: 0,
                };
                ReducedModel::new(&model, &settings).expect("precompute")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, iteration);
criterion_main!(benches);
