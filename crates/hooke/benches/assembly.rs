//! Energy + gradient + Hessian assembly (with per-element PSD projection) and one
//! Newton iteration of backward Euler, for a Stable Neo-Hookean bar at about 10k
//! and 100k tetrahedra. Recorded in BENCHMARKS.md.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hooke::linalg::{IndefiniteSystem, SystemSolver};
use hooke::model::HessianTarget;
use hooke::model::Model;
use hooke::solve::{Coordinates, IncrementalPotential, Inertia, Objective};
use nalgebra::Vector3;
use std::hint::black_box;

/// The benchmark bar with 1 cm cells, and two states bent slightly (by 5% and
/// 5.1% of its length at the tip) so that neither is the rest state.
///
/// The samples alternate between the two states: the elasticity term keeps its
/// per-element results for a second Hessian at the same point (a refit and a
/// semi-implicit step both linearise at xₙ), so timing one state over and over
/// would time that reuse, not the assembly a Newton iteration pays.
fn bar_model(cells: [usize; 3]) -> (Model, [Vec<f64>; 2]) {
    let size = Vector3::new(cells[0] as f64, cells[1] as f64, cells[2] as f64) * 0.01;
    let model = common::clamped_bar(size, cells);
    let length = size.x;
    let bent = |tip: f64| -> Vec<f64> {
        model
            .rest_positions()
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2] - tip * (p[0] / length).powi(2) * length])
            .collect()
    };
    let states = [bent(0.05), bent(0.051)];
    (model, states)
}

const SIZES: [(&str, [usize; 3]); 2] = [("10k", [28, 8, 8]), ("100k", [58, 17, 17])];

fn assembly(c: &mut Criterion) {
    let mut group = c.benchmark_group("assembly_stable_neo_hookean_psd");
    group.sample_size(10);
    for (label, cells) in SIZES {
        let (model, states) = bar_model(cells);
        let tets = model.mesh().element_count();
        let mut gradient = vec![0.0; states[0].len()];
        let mut values = vec![0.0; model.pattern().nonzeros()];
        let mut low_rank = Vec::new();
        // The elasticity term alone: the work the foundation benchmark measured.
        let elasticity = &model.terms()[0];
        group.throughput(Throughput::Elements(tets as u64));
        let mut sample = 0usize;
        group.bench_with_input(
            BenchmarkId::new("energy_gradient_hessian", format!("{label} ({tets} tets)")),
            &states,
            |b, states| {
                b.iter(|| {
                    sample += 1;
                    let x = &states[sample % 2];
                    let mut target = HessianTarget {
                        values: &mut values,
                        low_rank: &mut low_rank,
                    };
                    black_box(
                        elasticity
                            .hessian(x, 0.0, true, &mut gradient, &mut target, true)
                            .expect("defined"),
                    )
                })
            },
        );
    }
    group.finish();
}

fn newton_iteration(c: &mut Criterion) {
    let mut group = c.benchmark_group("backward_euler_newton_iteration");
    group.sample_size(10);
    for (label, cells) in SIZES {
        let (model, states) = bar_model(cells);
        let x = &states[0];
        let tets = model.mesh().element_count();
        let dofs = model.dof_map(0.0);
        let dt = 0.01;
        let potential = IncrementalPotential {
            step_length: None,
            model: &model,
            coordinates: Coordinates::Free {
                dofs: &dofs,
                restriction: model.restriction(&dofs),
            },
            base: x.clone(),
            inertia: Some(Inertia {
                weight: 1.0 / (dt * dt),
                predicted: model.rest_positions(),
            }),
            damping: None,
            time: dt,
            extra_force: None,
            project_hessian: true,
            viscoelastic: None,
            contact_at_end: None,
        };
        let free = states.each_ref().map(|state| dofs.gather(state));
        let mut sample = 0usize;
        let mut hessian = potential.hessian_matrix();
        // The symbolic analysis happens once, as in a run.
        let mut solver = SystemSolver::new();
        let mut gradient = vec![0.0; free[0].len()];
        potential
            .hessian(&free[0], &mut gradient, &mut hessian)
            .expect("defined");
        solver.factorize(&hessian, IndefiniteSystem::Shift).expect("SPD");
        group.bench_function(
            BenchmarkId::new("assemble_factorize_solve", format!("{label} ({tets} tets)")),
            |b| {
                b.iter(|| {
                    sample += 1;
                    potential
                        .hessian(&free[sample % 2], &mut gradient, &mut hessian)
                        .expect("defined");
                    solver.factorize(&hessian, IndefiniteSystem::Shift).expect("SPD");
                    let mut direction: Vec<f64> = gradient.iter().map(|g| -g).collect();
                    solver.solve_in_place(&mut direction).expect("solve");
                    black_box(direction)
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, assembly, newton_iteration);
criterion_main!(benches);
