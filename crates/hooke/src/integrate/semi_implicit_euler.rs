//! Semi-implicit backward Euler (Baraff & Witkin 1998): one Newton iteration of
//! backward Euler, linearised at the start of the step.
//!
//! (M + hD + h²K) Δv = h (f(xₙ) − D vₙ − h K vₙ),  v_{n+1} = vₙ + Δv,  x_{n+1} = xₙ + h v_{n+1},
//! with K = K(xₙ) (optionally projected to PSD) and the external force at t_{n+1}.
//! The linearised solve is shared with MSSI (another K) and SIERE (the same
//! solve on the part of the state outside its modal subspace).

use super::entry::{settings_from, IntegratorEntry};
use super::{axpy, commit_step_factorising, Capabilities, Integrator, StepReport};
use crate::error::Result;
use crate::linalg::FactorizationOutcome;
use crate::linalg::LowRank;
use crate::model::{DofMap, Model, State, StepMatrix};
use crate::solve::{FreeSystem, IndefiniteSystem, SolverSettings};
use web_time::Instant;

/// Semi-implicit backward Euler (Baraff and Witkin 1998): one Newton iteration of backward
/// Euler, linearised at the start of the step; first order, one factorisation per step.
pub struct SemiImplicitBackwardEuler {
    project_hessian: bool,
    indefinite: IndefiniteSystem,
    system: Option<FreeSystem>,
}

impl SemiImplicitBackwardEuler {
    /// With an indefinite A (exact K of a compressed or inverted region), a diagonal shift.
    pub fn new(project_hessian: bool) -> Self {
        Self::with_indefinite(project_hessian, IndefiniteSystem::Shift)
    }

    /// `IndefiniteSystem::Exact` solves an indefinite A as it is (LBLᵀ), as
    /// the semi-implicit Euler of Chen's thesis does, and can then blow up where the
    /// shifted default is only damped.
    pub fn with_indefinite(project_hessian: bool, indefinite: IndefiniteSystem) -> Self {
        SemiImplicitBackwardEuler {
            project_hessian,
            indefinite,
            system: None,
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    #[serde(default = "default_true")]
    project_hessian: bool,
    /// An indefinite A (possible only with the exact Hessian): `shift` it
    /// (default) or solve it `exact`ly, as the semi-implicit Euler of Chen's thesis does.
    #[serde(default)]
    indefinite: IndefiniteSystem,
}

fn default_true() -> bool {
    true
}

fn build(table: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    let settings: Settings = settings_from(table)?;
    Ok(Box::new(SemiImplicitBackwardEuler::with_indefinite(
        settings.project_hessian,
        settings.indefinite,
    )))
}

fn build_exact(_: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(SemiImplicitBackwardEuler::with_indefinite(
        false,
        IndefiniteSystem::Exact,
    )))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "semi_implicit_backward_euler",
    aliases: &["si"],
    summary: "one linearised backward Euler step (Baraff–Witkin): order 1, one factorisation per step",
    keys: &["project_hessian", "indefinite"],
    uses_solver: false,
    build,
};

/// The plain semi-implicit Euler of the Chen 2019 thesis: the exact Hessian, and an indefinite A solved as it is.
pub(crate) const EXACT_ENTRY: IntegratorEntry = IntegratorEntry {
    name: "semi_implicit_exact",
    aliases: &["si_exact"],
    summary:
        "semi-implicit Euler with the exact Hessian and an indefinite system solved as it is (LBLᵀ), as in the Chen 2019 thesis",
    keys: &[],
    uses_solver: false,
    build: build_exact,
};

/// The quantities of a step linearised at (xₙ, vₙ).
pub(crate) struct Linearisation {
    pub dofs: DofMap,
    /// K(xₙ) (or the part of it the method treats implicitly), full pattern.
    pub stiffness: Vec<f64>,
    /// K's low-rank part (stiffness corrections), if any.
    pub low_rank: Option<LowRank>,
    pub damping: Option<Vec<f64>>,
    /// How an indefinite A = M + hD + h²K is factorised.
    pub indefinite: IndefiniteSystem,
    /// f = f_ext(t_{n+1}) − ∇W(xₙ) − D vₙ over all DOFs.
    pub force: Vec<f64>,
    pub assembly_seconds: f64,
}

impl Linearisation {
    /// Assembles K (the full potential Hessian, optionally PSD-projected) and f.
    pub fn at(model: &Model, state: &State, dt: f64, project_hessian: bool) -> Result<Linearisation> {
        let started = Instant::now();
        let n = model.dof_count();
        let mut gradient = vec![0.0; n];
        let mut stiffness = vec![0.0; model.pattern().nonzeros()];
        let mut low_rank = Vec::new();
        model.hessian(
            &state.positions,
            state.time + dt,
            project_hessian,
            &mut gradient,
            &mut stiffness,
            &mut low_rank,
        )?;
        let mut linearisation = Self::from_parts(model, state, dt, gradient, stiffness, started)?;
        linearisation.low_rank = LowRank::combined(&low_rank.iter().map(|l| (1.0, l)).collect::<Vec<_>>());
        Ok(linearisation)
    }

    /// Builds f from the gradient of E(xₙ, t_{n+1}) (loads included), with the given implicit stiffness.
    pub fn from_parts(
        model: &Model,
        state: &State,
        dt: f64,
        gradient: Vec<f64>,
        stiffness: Vec<f64>,
        started: Instant,
    ) -> Result<Linearisation> {
        let n = model.dof_count();
        let next_time = state.time + dt;
        let damping = model.damping_values(&state.positions)?.map(|d| d.into_owned());
        let mut force = vec![0.0; n];
        let mut damping_velocity = vec![0.0; n];
        if let Some(d) = &damping {
            model
                .pattern()
                .symmetric_multiply(d, &state.velocities, &mut damping_velocity);
        }
        for i in 0..n {
            force[i] -= gradient[i] + damping_velocity[i];
        }
        Ok(Linearisation {
            dofs: model.dof_map(next_time),
            stiffness,
            low_rank: None,
            damping,
            indefinite: IndefiniteSystem::Shift,
            force,
            assembly_seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// A = M + hD + h²K over the full pattern.
    fn system_values(&self, model: &Model, dt: f64) -> Vec<f64> {
        let mut terms: Vec<(f64, &[f64])> = vec![(1.0, model.mass().values()), (dt * dt, &self.stiffness)];
        if let Some(d) = &self.damping {
            terms.push((dt, d));
        }
        (0..model.pattern().nonzeros())
            .map(|k| terms.iter().map(|(w, a)| w * a[k]).sum())
            .collect()
    }

    /// Factorises A = M + hD + h²K on the free DOFs into `cache`; returns whether
    /// A was indefinite (and so shifted, or factorised as LBLᵀ, per `self.indefinite`).
    pub fn factorize(&self, cache: &mut Option<FreeSystem>, model: &Model, dt: f64) -> Result<bool> {
        let system = FreeSystem::for_dofs(cache, model, &self.dofs)?;
        system.load(&[(1.0, &self.system_values(model, dt))]);
        let scaled = self.low_rank.as_ref().map(|l| LowRank {
            vectors: l.vectors.clone(),
            core: &l.core * (dt * dt),
        });
        system.set_low_rank(scaled, &self.dofs);
        // A term that factorised exactly this A at the step's start (an
        // EigenFit refit) offers its factor: taken only if the values match to the bit.
        let outcome = system.factorize_adopting(self.indefinite, model.take_step_factor())?;
        Ok(outcome != FactorizationOutcome::PositiveDefinite)
    }

    /// Solves A Δv = h (force − h K velocity) on the free DOFs with the
    /// factorisation in `cache` (see [`Self::factorize`]); the pinned DOFs' Δv is
    /// what takes them to their prescribed positions at t_{n+1} (its column of A
    /// moves to the right-hand side). Returns Δv over all DOFs.
    pub fn solve_factorized(
        &self,
        cache: &mut Option<FreeSystem>,
        model: &Model,
        state: &State,
        dt: f64,
        force: &[f64],
        velocity: &[f64],
    ) -> Result<Vec<f64>> {
        let n = model.dof_count();
        let pattern = model.pattern();
        let mut stiffness_velocity = vec![0.0; n];
        pattern.symmetric_multiply(&self.stiffness, velocity, &mut stiffness_velocity);
        if let Some(l) = &self.low_rank {
            l.multiply_add(1.0, velocity, &mut stiffness_velocity);
        }
        let mut rhs: Vec<f64> = (0..n).map(|i| dt * (force[i] - dt * stiffness_velocity[i])).collect();

        let mut prescribed = state.positions.clone();
        model.apply_prescribed_positions(state.time + dt, &mut prescribed);
        let mut change = vec![0.0; n];
        let mut any_pinned = false;
        for (i, slot) in change.iter_mut().enumerate() {
            if self.dofs.free_index[i].is_none() {
                *slot = (prescribed[i] - state.positions[i]) / dt - state.velocities[i];
                any_pinned |= *slot != 0.0;
            }
        }
        if any_pinned {
            let mut coupling = vec![0.0; n];
            pattern.symmetric_multiply(&self.system_values(model, dt), &change, &mut coupling);
            if let Some(l) = &self.low_rank {
                l.multiply_add(dt * dt, &change, &mut coupling);
            }
            rhs.iter_mut().zip(&coupling).for_each(|(r, c)| *r -= c);
        }

        let system = FreeSystem::for_dofs(cache, model, &self.dofs)?;
        let mut free_change = self.dofs.gather(&rhs);
        system.solve_in_place(&mut free_change)?;
        self.dofs.scatter(&free_change, &mut change);
        Ok(change)
    }

    /// [`Self::factorize`] then [`Self::solve_factorized`]; also returns whether A needed a shift.
    pub fn solve(
        &self,
        cache: &mut Option<FreeSystem>,
        model: &Model,
        state: &State,
        dt: f64,
        force: &[f64],
        velocity: &[f64],
    ) -> Result<(Vec<f64>, bool)> {
        let shifted = self.factorize(cache, model, dt)?;
        Ok((
            self.solve_factorized(cache, model, state, dt, force, velocity)?,
            shifted,
        ))
    }
}

impl Linearisation {
    /// The report of a one-solve step that began at `started` (assembly
    /// included); `adopted`: its factor was a term's (model/step_matrix.rs).
    pub fn step_report(&self, shifted: bool, adopted: bool, started: Instant) -> StepReport {
        StepReport {
            iterations: 1,
            factorizations: usize::from(!adopted),
            shifted_factorizations: usize::from(shifted),
            assembly_seconds: self.assembly_seconds,
            solve_seconds: started.elapsed().as_secs_f64() - self.assembly_seconds,
            ..StepReport::default()
        }
    }

    /// The whole semi-implicit step: solve with (f, vₙ), then update.
    pub fn semi_implicit_step(
        &self,
        cache: &mut Option<FreeSystem>,
        model: &Model,
        state: &State,
        dt: f64,
        started: Instant,
    ) -> Result<(State, StepReport)> {
        let (change, shifted) = self.solve(cache, model, state, dt, &self.force, &state.velocities)?;
        let adopted = cache.as_ref().is_some_and(FreeSystem::adopted);
        Ok(semi_implicit_update(
            model,
            state,
            dt,
            &change,
            self,
            (shifted, adopted),
            started,
        ))
    }
}

/// Commits v_{n+1} = vₙ + Δv, x_{n+1} = xₙ + h v_{n+1} (pins at their motion).
fn semi_implicit_update(
    model: &Model,
    state: &State,
    dt: f64,
    velocity_change: &[f64],
    linearisation: &Linearisation,
    (shifted, adopted): (bool, bool),
    started: Instant,
) -> (State, StepReport) {
    let velocities: Vec<f64> = state
        .velocities
        .iter()
        .zip(velocity_change)
        .map(|(v, dv)| v + dv)
        .collect();
    let mut positions = axpy(&state.positions, dt, &velocities);
    model.apply_prescribed_positions(state.time + dt, &mut positions);
    (
        State {
            time: state.time + dt,
            positions,
            velocities,
        },
        linearisation.step_report(shifted, adopted, started),
    )
}

impl Integrator for SemiImplicitBackwardEuler {
    fn name(&self) -> &'static str {
        match self.indefinite {
            IndefiniteSystem::Shift => "semi_implicit_backward_euler",
            IndefiniteSystem::Exact => "semi_implicit_exact",
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::COMMON
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        // Undamped, the step factorises A = M + h²K(xₙ) (model/step_matrix.rs).
        let matrix = model.damping().is_none().then_some(StepMatrix {
            mass: 1.0,
            stiffness: dt * dt,
        });
        commit_step_factorising(model, state, dt, matrix, |state| {
            let started = Instant::now();
            let mut linearisation = Linearisation::at(model, state, dt, self.project_hessian)?;
            linearisation.indefinite = self.indefinite;
            linearisation.semi_implicit_step(&mut self.system, model, state, dt, started)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bar held at one end, ARAP, corrected by EigenFit to a finer bar's
    /// four lowest modes and refit every step.
    fn corrected_bar() -> (Model, State) {
        let text = r#"
name = "shared"
[simulation]
duration = 0.1
time_step = 0.01
[[bodies]]
mesh = { box = { size = [0.4, 0.1, 0.1], cells = [4, 1, 1] } }
material = { model = "arap", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000.0 }
[[pins]]
select = { box = { min = [-1.0, -1.0, -1.0], max = [0.01, 1.0, 1.0] } }
[eigenfit]
reference = { box = { size = [0.4, 0.1, 0.1], cells = [8, 2, 2] } }
modes = 4
"#;
        let scene = crate::scene::Scene::from_text(text, "shared.toml", ".".into()).unwrap();
        let built = scene.build().unwrap();
        let mut state = built.initial_state.clone();
        for (i, v) in state.velocities.iter_mut().enumerate() {
            *v = 0.5 * ((i * 7919) % 13) as f64 / 13.0;
        }
        (built.model, state)
    }

    #[test]
    fn a_refit_factor_of_the_step_matrix_serves_the_step_to_the_bit() {
        let (model, mut state) = corrected_bar();
        let dt = 0.01;
        let mut integrator = SemiImplicitBackwardEuler::new(true);
        // The first refit solves afresh; the next ones follow their modes
        // with the step's own matrix, M + h²K, and hand its factor over.
        let factorised: Vec<usize> = (0..3)
            .map(|_| integrator.step(&model, &mut state, dt).unwrap().factorizations)
            .collect();
        assert_eq!(factorised, [1, 0, 0]);
        // The next step by hand: the offered factor solves as the step's own does, to the bit.
        let matrix = crate::model::StepMatrix {
            mass: 1.0,
            stiffness: dt * dt,
        };
        model.begin_step_with(&state, state.time + dt, Some(matrix)).unwrap();
        let offered = model.take_step_factor().expect("the refit offers its factor");
        let linearisation = Linearisation::at(&model, &state, dt, true).unwrap();
        let solve = |system: &mut Option<FreeSystem>| {
            let (change, _) = linearisation
                .solve(system, &model, &state, dt, &linearisation.force, &state.velocities)
                .unwrap();
            let adopted = system.as_ref().is_some_and(FreeSystem::adopted);
            (change.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), adopted)
        };
        let (computed, adopted) = solve(&mut None);
        assert!(!adopted, "nothing offered: factorised");
        model.offer_step_factor(offered);
        let (shared, adopted) = solve(&mut None);
        assert!(adopted);
        assert_eq!(shared, computed);
        assert!(
            linearisation.low_rank.is_some(),
            "the EigenFit correction is in the step"
        );
    }
}
