//! The feasible step bound: every minimiser and every line search keeps the
//! state admissible when the objective (or a term of the model) bounds how
//! far a step may go — the seam intersection-free contact builds on. Each
//! test also runs without the bound and sees the state leave the admissible
//! set, so it fails for the right reason if the bound is ignored.

mod common;

use common::{bar, parameters, uniform_model};
use hooke::integrate::{BackwardEuler, Integrator};
use hooke::linalg::SystemMatrix;
use hooke::material::MaterialModel;
use hooke::mesh::TetsPerHex;
use hooke::model::MassKind;
use hooke::model::{EnergyTerm, HessianTarget, Model, TermCapabilities, TermKind};
use hooke::reduced::{FullMixedBackwardEuler, ReducedMethod, SubspaceBackwardEuler, SubspaceSettings};
use hooke::solve::{registry::MINIMIZERS, Objective, QuasiNewtonMatrix, SolverSettings};
use nalgebra::{DMatrix, Vector3};
use std::cell::Cell;

/// The fraction of the distance to the boundary a bounded step may cover
/// (as continuous collision detection keeps a gap).
const SAFETY: f64 = 0.9;

/// The largest α ≤ 1 with every coordinate of `x + α dx` selected by `keep`
/// at most `limit` — or at least it, for a floor — scaled by [`SAFETY`].
fn wall_bound(values: impl Iterator<Item = (f64, f64)>, limit: f64, floor: bool) -> f64 {
    values.fold(1.0f64, |bound, (x, dx)| {
        let (gap, approach) = match floor {
            true => (x - limit, -dx),
            false => (limit - x, dx),
        };
        match approach > 0.0 {
            true => bound.min(SAFETY * gap.max(0.0) / approach),
            false => bound,
        }
    })
}

/// Φ(u) = ½ (u − 2)ᵀ A (u − 2) with A SPD: unconstrained minimum at u = 2,
/// admissible set u ≤ 1 (every coordinate). Counts the points evaluated
/// beyond the wall.
struct WalledQuadratic {
    a: DMatrix<f64>,
    bounded: bool,
    beyond: Cell<usize>,
}

impl WalledQuadratic {
    fn new(bounded: bool) -> Self {
        WalledQuadratic {
            a: DMatrix::from_fn(4, 4, |i, j| if i == j { 3.0 + i as f64 } else { 0.4 }),
            bounded,
            beyond: Cell::new(0),
        }
    }

    fn look(&self, u: &[f64]) {
        if u.iter().any(|&x| x > 1.0) {
            self.beyond.set(self.beyond.get() + 1);
        }
    }
}

impl Objective for WalledQuadratic {
    fn size(&self) -> usize {
        4
    }
    fn value(&self, u: &[f64]) -> f64 {
        self.look(u);
        let d = nalgebra::DVector::from_iterator(4, u.iter().map(|x| x - 2.0));
        0.5 * d.dot(&(&self.a * &d))
    }
    fn gradient(&self, u: &[f64], gradient: &mut [f64]) -> hooke::Result<f64> {
        let d = nalgebra::DVector::from_iterator(4, u.iter().map(|x| x - 2.0));
        gradient.copy_from_slice((&self.a * &d).as_slice());
        Ok(self.value(u))
    }
    fn hessian(&self, u: &[f64], gradient: &mut [f64], hessian: &mut SystemMatrix) -> hooke::Result<f64> {
        *hessian = SystemMatrix::Dense(self.a.clone());
        self.gradient(u, gradient)
    }
    fn hessian_matrix(&self) -> SystemMatrix {
        SystemMatrix::Dense(DMatrix::zeros(4, 4))
    }
    fn quasi_newton_key(&self) -> Option<u64> {
        Some(1)
    }
    fn quasi_newton_matrix(&self) -> hooke::Result<QuasiNewtonMatrix> {
        Ok(QuasiNewtonMatrix {
            matrix: SystemMatrix::Dense(DMatrix::from_diagonal(&self.a.diagonal())),
            coordinates: 1,
        })
    }
    fn feasible_step(&self, u: &[f64], direction: &[f64]) -> hooke::Result<f64> {
        Ok(match self.bounded {
            true => wall_bound(u.iter().copied().zip(direction.iter().copied()), 1.0, false),
            false => 1.0,
        })
    }
    fn length_scale(&self) -> f64 {
        1.0
    }
}

/// Every registered minimiser, with and without its line search where it has
/// one: bounded, no point it evaluates or ends at lies beyond the wall, and
/// it ends pressed against it; unbounded, it crosses.
#[test]
fn every_minimiser_stays_on_the_admissible_side() {
    for entry in MINIMIZERS {
        let mut variants = vec![SolverSettings::named(entry.name).unwrap()];
        if entry.keys.iter().any(|k| k.name == "line_search") {
            let mut without = variants[0].clone();
            without.set("line_search", false.into()).unwrap();
            variants.push(without);
        }
        for settings in variants {
            let what = format!("{} {:?}", entry.name, settings.own);
            // Without a barrier the minimiser presses on into the wall, each
            // bounded step closing SAFETY of the gap: ten leave 1e-10 of it.
            let settings = SolverSettings {
                iterations: Some(10),
                ..settings
            };
            let bounded = WalledQuadratic::new(true);
            let mut u = vec![0.0; 4];
            let report = settings.minimizer().unwrap().minimize(&bounded, &mut u).unwrap();
            assert_eq!(bounded.beyond.get(), 0, "{what}: evaluated beyond the wall");
            assert!(u.iter().all(|&x| x <= 1.0), "{what}: ended beyond the wall at {u:?}");
            assert!(u.iter().any(|&x| x > 0.99), "{what}: never reached the wall: {u:?}");
            assert!(report.bounded_steps > 0, "{what}: {report:?}");

            let free = WalledQuadratic::new(false);
            let mut u = vec![0.0; 4];
            settings.minimizer().unwrap().minimize(&free, &mut u).unwrap();
            assert!(
                u.iter().any(|&x| x > 1.0),
                "{what}: the unbounded problem must cross: {u:?}"
            );
        }
    }
}

/// A bound of 0 along a direction that leaves the set is an error that says so,
/// not a silent non-step.
#[test]
fn a_bound_of_zero_is_reported() {
    let objective = WalledQuadratic::new(true);
    let mut u = vec![1.0; 4];
    let error = SolverSettings::default()
        .minimizer()
        .unwrap()
        .minimize(&objective, &mut u)
        .unwrap_err()
        .to_string();
    assert!(error.contains("feasible step bound admits no step"), "{error}");
}

/// A term with no energy that keeps every vertex above the plane y = `floor`
/// (a stand-in for contact's continuous collision detection).
struct Floor {
    floor: f64,
    bounded: bool,
}

impl EnergyTerm for Floor {
    fn name(&self) -> String {
        "floor".to_string()
    }
    fn kind(&self) -> TermKind {
        TermKind::Contact
    }
    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            linear: true,
            ..TermCapabilities::SMOOTH
        }
    }
    fn energy(&self, _x: &[f64], _time: f64) -> f64 {
        0.0
    }
    fn gradient(&self, _x: &[f64], _time: f64, gradient: &mut [f64], overwrite: bool) -> hooke::Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        Ok(0.0)
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
        self.gradient(x, time, gradient, overwrite)
    }
    fn bounds_steps(&self) -> bool {
        self.bounded
    }
    fn feasible_step(&self, x: &[f64], displacement: &[f64]) -> hooke::Result<f64> {
        let heights = x.iter().zip(displacement).skip(1).step_by(3).map(|(a, b)| (*a, *b));
        Ok(wall_bound(heights, self.floor, true))
    }
}

const FLOOR: f64 = -0.05;

/// A free ARAP bar 0.3 m long resting 0.05 m above the floor, under gravity.
fn falling_bar(bounded: bool) -> Model {
    let mut model = uniform_model(
        bar([0.3, 0.1, 0.1], [3, 1, 1], TetsPerHex::Six),
        MaterialModel::Arap,
        parameters(1e5, 0.3),
        MassKind::Lumped,
    );
    model.set_gravity(Vector3::new(0.0, -9.81, 0.0));
    model.add_term(Box::new(Floor { floor: FLOOR, bounded })).unwrap();
    model
}

/// The lowest height any vertex reached over 8 steps of 0.02 s (the bar
/// reaches the floor after about 5).
fn lowest_height(model: &Model, integrator: &mut dyn Integrator) -> f64 {
    let mut state = model.initial_state();
    let mut lowest = f64::INFINITY;
    for _ in 0..8 {
        integrator.step(model, &mut state, 0.02).unwrap();
        lowest = state.positions.iter().skip(1).step_by(3).fold(lowest, |m, &y| m.min(y));
    }
    lowest
}

/// Backward Euler with every registered minimiser, subspace FEM, subspace
/// mixed FEM and full-space mixed FEM: the falling bar stops at the floor
/// the term's bound draws (the step's starting point and every iteration
/// respect it), and falls through it when the term does not bound.
#[test]
fn every_solver_keeps_a_falling_body_above_a_bounding_term() {
    type Build = Box<dyn Fn(&Model) -> Box<dyn Integrator>>;
    // Without a barrier the bar presses on into the floor at every
    // iteration, each closing SAFETY of the gap: a small budget keeps it open.
    let budget = |name: &str| SolverSettings {
        iterations: Some(3),
        max_step_halvings: 0,
        ..SolverSettings::named(name).unwrap()
    };
    let mut solvers: Vec<(String, Build)> = MINIMIZERS
        .iter()
        .map(|entry| {
            let settings = budget(entry.name);
            let build: Build = Box::new(move |_| Box::new(BackwardEuler::new(settings.clone()).unwrap()));
            (entry.name.to_string(), build)
        })
        .collect();
    for method in [ReducedMethod::Newton, ReducedMethod::MixedSqp] {
        let build: Build = Box::new(move |model| {
            let settings = SubspaceSettings {
                cubature_points: Some(12),
                ..SubspaceSettings::new(3)
            };
            Box::new(SubspaceBackwardEuler::new(model, &settings, method, budget("newton")).unwrap())
        });
        solvers.push((format!("subspace {method:?}"), build));
    }
    let build: Build = Box::new(move |model| Box::new(FullMixedBackwardEuler::new(model, budget("newton")).unwrap()));
    solvers.push(("full-space mixed FEM".to_string(), build));

    for (name, build) in &solvers {
        let bounded = falling_bar(true);
        let lowest = lowest_height(&bounded, build(&bounded).as_mut());
        assert!(
            lowest >= FLOOR,
            "{name}: a vertex reached y = {lowest} below the floor {FLOOR}"
        );
        assert!(
            lowest < FLOOR + 0.01,
            "{name}: the bar never reached the floor (lowest {lowest})"
        );
        let free = falling_bar(false);
        let lowest = lowest_height(&free, build(&free).as_mut());
        assert!(
            lowest < FLOOR - 0.02,
            "{name}: without the bound the bar must fall through ({lowest})"
        );
    }
}
