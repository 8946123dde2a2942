//! EigenFit (Chen et al. 2019 (EigenFit), §3; Chen 2019 thesis, ch. 3): a coarse
//! mesh corrected, at every step, to vibrate in its lowest modes at the
//! frequencies of a fine reference mesh.
//!
//! **Offline.** With the same boundary conditions, the m lowest generalised
//! eigenvalues of the fine and the coarse mesh at rest give the ratios
//! rᵢ = λᵢ^fine / λᵢ^coarse (rigid modes, λ ≈ 0, keep rᵢ = 1). They are
//! recomputed whenever the set of pinned DOFs changes (a pin released).
//!
//! **Each step** (at its start state xₙ): the m lowest eigenpairs (λᵢ, uᵢ) of
//! the coarse elastic stiffness K(xₙ) (PSD-projected) against M, followed
//! from the previous step's (block LOBPCG preconditioned by K − σM,
//! linalg/eigen_tracking.rs, whose factor the step itself solves with when
//! it is the step's own matrix, model/step_matrix.rs; a warm-started Lanczos
//! run when that fails or the pins changed), are matched to the rest modes by
//! |uᵢᵀ M u_rest,j| > 0.6 (a mode that matches none keeps ratio 1), and the
//! elastic stiffness and force become (EigenFit paper, Eq. 15; the force has
//! the Uᵀ where the paper's Eq. 12 misprints U⁻¹):
//!
//!   K‡ = K + M U (R − I) Λ Uᵀ M,      f‡ = f + M U (R − I) Uᵀ f.
//!
//! Within the step Hooke takes the correction as the energy whose gradient and
//! Hessian these are at xₙ, ΔE(x) = Σᵢ (rᵢ − 1)(gᵢ aᵢ + ½ λᵢ aᵢ²) with
//! aᵢ = uᵢᵀ M (x − xₙ) and gᵢ = uᵢᵀ ∇E(xₙ): exact for linear elasticity
//! (f‡ = −K‡ x), the paper's own linearisation for semi-implicit steps, and
//! an energy, so Newton's line search and L-BFGS can use it in fully implicit
//! ones. Its Hessian is a rank-m term that the solvers apply by
//! Sherman–Morrison–Woodbury. Only finite-element elasticity is corrected:
//! gravity, loads, contact and soft pins are not.

use super::{DofMap, EnergyTerm, HessianTarget, Model, State, StepMatrix, TermCapabilities, TermKind};
use crate::disk_cache;
use crate::error::{HookeError, Result};
use crate::linalg::{
    smallest_eigenpairs_reusing, track_eigenpairs, EigenSettings, LowRank, LowerPattern, ShiftInvert, SparseCholesky,
    TrackingSettings,
};
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::sync::{Arc, Mutex};

/// |uᵀ M u_rest| above this matches a mode to a rest mode (EigenFit paper, §3.5: loss tolerance 0.4).
pub const MATCH_THRESHOLD: f64 = 0.6;

/// The modal assurance criterion (MAC, the squared cosine of two shapes in
/// the mass inner product) at or above which a coarse mode takes the ratio
/// of the fine mode it is paired with (the tracking's threshold, 0.6); below
/// it the pairing is reported and the coarse mode keeps ratio 1.
pub const DEFAULT_PAIRING_THRESHOLD: f64 = 0.6;

/// Fine modes computed beyond the corrected ones, for the pairing by shape:
/// a coarse mode near the top of the range whose shape is a higher fine mode
/// (the coarse mesh stiffens some motions more than others) finds it.
const EXTRA_FINE_MODES: usize = 3;

/// Rest eigenvalues within this fraction of the largest one found are rigid motions.
const RIGID_FRACTION: f64 = 1e-8;

/// Eigenpairs followed beyond the corrected ones: they set the rate at which
/// a refit converges (through the gap to the first eigenvalue past them) and
/// catch a mode that sinks into the corrected range.
const GUARD_MODES: usize = 3;

/// A refit accepts its modes when each one's relative error in the energy
/// norm is below this (linalg/eigen_tracking.rs); the eigenvalues are then
/// good to about its square, far below what the ratios are known to. A
/// tighter value costs solves and changes no figure (BENCHMARKS.md, EigenFit).
pub const DEFAULT_REFIT_TOLERANCE: f64 = 1e-3;

/// The slowest convergence rate an iteration (see `step_shift`) at which a
/// refit follows its modes with the step's own matrix, so that one
/// factorisation serves the refit and the step. The shaken figure's
/// (h = 1e-2, λ₁₀ ≈ 2.6e3, λ₁₃ ≈ 7.6e3) is 0.71, against 0.34 with the
/// refit's own shift. Its refits then take 0–2 iterations, and their errors
/// are measured in the norm of M + h²K, which weighs a mode's
/// high-frequency error less: 40 refits in 200 steps instead of 47, and a
/// mean error of 3.20 mm instead of 3.09 mm (BENCHMARKS.md, EigenFit).
pub const STEP_SHIFT_RATE: f64 = 0.75;

/// The most steps a refit's modes are carried under a drift budget
/// ([`EigenFit::with_refit_drift`]), however slowly they move.
pub const MAX_CARRIED_STEPS: usize = 8;

/// The rest data for one set of pinned DOFs.
#[derive(Clone, Debug)]
pub struct RestFit {
    /// The free DOFs (with the pins active then) this fit is for.
    pub free_dofs: Vec<usize>,
    /// The coarse model's lowest eigenvalues λ = ω² at rest, 1/s².
    pub coarse_eigenvalues: Vec<f64>,
    /// The fine reference's lowest eigenvalues at rest, 1/s², a few more than
    /// the coarse ones (empty when the ratios were given).
    pub fine_eigenvalues: Vec<f64>,
    /// rᵢ = λⱼ^fine / λᵢ^coarse with j the fine mode paired with coarse mode
    /// i by shape (by default; j = i under [`Pairing::Index`]); 1 for rigid
    /// modes and for modes paired below the threshold.
    pub ratios: Vec<f64>,
    /// For each coarse mode, the fine mode the optimal assignment pairs it
    /// with (the one that maximises the total MAC over all pairs) and their
    /// MAC, in the coarse mass inner product (with the fine mode's whole
    /// cluster where fine eigenvalues lie within [`CLUSTER_GAP`]); None where no fine mode is
    /// left; empty when the ratios were given or the meshes are not both
    /// tetrahedral.
    pub shape_pairs: Vec<Option<(usize, f64)>>,
    /// M u_rest,j over all DOFs (zero on pinned ones; column j), for mode matching.
    mass_modes: DMatrix<f64>,
}

/// The correction's quadratic model about one step's start.
#[derive(Clone, Debug)]
struct StepFit {
    origin: Vec<f64>,
    /// uᵢ over all DOFs (column i), for the slopes of the steps that carry them.
    modes: DMatrix<f64>,
    /// M uᵢ over all DOFs (column i).
    mass_modes: DMatrix<f64>,
    /// (rᵢ − 1) after matching.
    weights: Vec<f64>,
    values: Vec<f64>,
    slopes: Vec<f64>,
}

impl StepFit {
    /// ΔE at modal coordinates a: Σᵢ (rᵢ − 1)(gᵢ aᵢ + ½ λᵢ aᵢ²).
    fn energy(&self, a: &[f64]) -> f64 {
        (0..a.len())
            .map(|i| self.weights[i] * (self.slopes[i] * a[i] + 0.5 * self.values[i] * a[i] * a[i]))
            .sum()
    }
}

/// How a refit found its modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refit {
    /// Block Lanczos (the first step, a pin change, or tracking failed).
    #[default]
    Solved,
    /// Followed from the last step's modes with this many Rayleigh–Ritz
    /// steps beyond the first (each one more block solve; 0: the old modes,
    /// projected on the new K, passed).
    Tracked {
        /// Rayleigh–Ritz steps beyond the first.
        iterations: usize,
    },
    /// The last refit's modes carried unchanged (a drift budget is set and
    /// they are predicted to have moved less than it): only their slopes
    /// are taken afresh at this step's start.
    Carried {
        /// Steps since the modes were found, this one included.
        steps: usize,
    },
    /// The stiffness was the same to the bit (linear elasticity): the last modes.
    Reused,
}

/// How the ratios pair coarse modes with fine ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// The i-th with the i-th, as the EigenFit paper does.
    Index,
    /// By shape: the fine modes sampled at the coarse vertices through the
    /// fine elements, compared with the coarse modes by the MAC in the coarse
    /// mass inner product, and paired by the assignment of largest total MAC
    /// (the Hungarian method); fine modes within [`CLUSTER_GAP`] of each other
    /// count as the subspace they span. A coarse mesh that orders its modes
    /// otherwise than the fine one (one motion stiffened more than the next)
    /// gets each mode's own ratio; a pair below the threshold keeps ratio 1.
    #[default]
    Shape,
}

/// What the last step's refit found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FitReport {
    /// How the step's modes were found.
    pub refit: Refit,
    /// Current modes matched to a rest mode (the others keep ratio 1).
    pub matched: usize,
    /// The current modes computed (the scene's `modes`; fewer on a tiny model).
    pub modes: usize,
    /// The ratio applied to each current mode.
    pub applied_ratios: Vec<f64>,
    /// The current modes' eigenvalues λ = ω² of the uncorrected stiffness at the step's start, 1/s².
    pub eigenvalues: Vec<f64>,
}

/// The EigenFit correction of a coarse model, as one of its energy terms.
pub struct EigenFit {
    modes: usize,
    /// The fine model (same boundary conditions by construction); None when
    /// the ratios are given.
    reference: Option<Box<Model>>,
    /// Ratios given by hand (art direction, tests): used for every pin set.
    given_ratios: Option<Vec<f64>>,
    /// Where the fine mesh's rest eigenvalues are kept between runs.
    cache: Option<std::path::PathBuf>,
    rest: Mutex<Vec<Arc<RestFit>>>,
    step: Mutex<Option<StepFit>>,
    /// The last refit's modes: the next refit's warm start, and reused
    /// outright by a step whose K is the same (linear elasticity, every
    /// step). A checkpoint keeps them ([`EnergyTerm::history`]).
    last_modes: Mutex<Option<LastModes>>,
    /// The symbolic analysis of K − σM over the free DOFs, kept between refits.
    factor: Mutex<Option<SparseCholesky>>,
    /// The pattern and mass over the free DOFs of the last refit.
    free_matrices: Mutex<Option<std::sync::Arc<FreeMatrices>>>,
    tracking: TrackingSettings,
    pairing: Pairing,
    pairing_threshold: f64,
    /// The modes' predicted move (the sine of their angle to the current
    /// modes in the mass inner product) up to which a refit's modes are
    /// carried to the next steps; 0: every step tracks.
    refit_drift: f64,
    report: Mutex<FitReport>,
}

impl EigenFit {
    /// Corrects the `modes` lowest modes to those of `reference`, the same
    /// body meshed finer with the same materials and pins.
    pub fn new(reference: Model, modes: usize) -> Result<EigenFit> {
        Self::checked(modes)?;
        Ok(Self::unfitted(modes, Some(Box::new(reference)), None))
    }

    /// Applies the given ratios to the rest modes instead of computing them.
    pub fn with_ratios(ratios: Vec<f64>) -> Result<EigenFit> {
        Self::checked(ratios.len())?;
        if let Some(bad) = ratios.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            return Err(HookeError::scene(
                "eigenfit",
                format!("ratios must be positive, got {bad}"),
            ));
        }
        Ok(Self::unfitted(ratios.len(), None, Some(ratios)))
    }

    /// An EigenFit that has fitted nothing yet.
    fn unfitted(modes: usize, reference: Option<Box<Model>>, given_ratios: Option<Vec<f64>>) -> EigenFit {
        EigenFit {
            modes,
            reference,
            given_ratios,
            cache: None,
            rest: Mutex::new(Vec::new()),
            step: Mutex::new(None),
            last_modes: Mutex::new(None),
            factor: Mutex::new(None),
            free_matrices: Mutex::new(None),
            tracking: TrackingSettings {
                tolerance: DEFAULT_REFIT_TOLERANCE,
                max_iterations: 4,
            },
            pairing: Pairing::Shape,
            pairing_threshold: DEFAULT_PAIRING_THRESHOLD,
            refit_drift: 0.0,
            report: Mutex::new(FitReport::default()),
        }
    }

    /// Keeps the fine mesh's rest eigenvalues in `directory` (one small JSON
    /// file per mesh, materials, pins and mode count), so that a rerun skips
    /// the fine eigen solve.
    pub fn with_cache(mut self, directory: std::path::PathBuf) -> EigenFit {
        self.cache = Some(directory);
        self
    }

    /// Accepts each step's modes at relative energy-norm error `tolerance`
    /// (default [`DEFAULT_REFIT_TOLERANCE`]).
    pub fn with_refit_tolerance(mut self, tolerance: f64) -> Result<EigenFit> {
        if !(tolerance.is_finite() && tolerance > 0.0 && tolerance < 1.0) {
            return Err(HookeError::scene(
                "eigenfit.tolerance",
                format!("must lie in (0, 1), got {tolerance}"),
            ));
        }
        self.tracking.tolerance = tolerance;
        Ok(self)
    }

    /// Pairs coarse and fine modes as `pairing` says (default by shape).
    pub fn with_pairing(mut self, pairing: Pairing) -> EigenFit {
        self.pairing = pairing;
        self
    }

    /// The MAC below which a shape pairing keeps ratio 1 (default
    /// [`DEFAULT_PAIRING_THRESHOLD`]).
    pub fn with_pairing_threshold(mut self, threshold: f64) -> Result<EigenFit> {
        if !(threshold.is_finite() && (0.0..=1.0).contains(&threshold)) {
            return Err(HookeError::scene(
                "eigenfit.pairing_threshold",
                format!("must lie in [0, 1] (a MAC), got {threshold}"),
            ));
        }
        self.pairing_threshold = threshold;
        Ok(self)
    }

    /// Carries each refit's modes over the next steps while their predicted
    /// move stays below `drift` (default 0: every step follows the modes).
    ///
    /// Each tracked refit measures how far the modes moved since they were
    /// found: the sine of each start vector's angle to its new mode in the
    /// mass inner product (the one EigenFit's modal coordinates use), from
    /// the first check block LOBPCG makes anyway
    /// ([`TrackedPairs::start_errors`](crate::linalg::TrackedPairs::start_errors)); the largest over the
    /// corrected modes, divided by the steps
    /// since, that is the modes' drift per step; the next refit comes after
    /// as many steps as keep the drift below `drift` (at most
    /// [`MAX_CARRIED_STEPS`], and at most twice the last interval, so that a
    /// quickening motion is caught). Steps in between keep the modes,
    /// eigenvalues and matching and take only the slopes at their own start
    /// (an elastic gradient, no Hessian, factorisation or solve).
    pub fn with_refit_drift(mut self, drift: f64) -> Result<EigenFit> {
        if !(drift.is_finite() && (0.0..1.0).contains(&drift)) {
            return Err(HookeError::scene(
                "eigenfit.refit_drift",
                format!("must lie in [0, 1) (the sine of an angle; 0 refits every step), got {drift}"),
            ));
        }
        self.refit_drift = drift;
        Ok(self)
    }

    /// How many steps the modes just tracked may serve, from their error
    /// `moved` against the new stiffness `steps` steps after they were
    /// found, when the last interval was `interval`.
    fn carrying_interval(&self, moved: f64, steps: usize, interval: usize) -> usize {
        if self.refit_drift == 0.0 {
            return 1;
        }
        let per_step = moved / steps.max(1) as f64;
        let allowed = match per_step > 0.0 {
            true => (self.refit_drift / per_step).floor().min(MAX_CARRIED_STEPS as f64) as usize,
            false => MAX_CARRIED_STEPS,
        };
        allowed.clamp(1, (2 * interval.max(1)).min(MAX_CARRIED_STEPS))
    }

    /// When a drift budget lets this step carry the last refit's modes (over
    /// the same free DOFs): the steps since they were found, and the modes
    /// themselves unless the step fit already holds them; counts the step.
    fn carried_modes(&self, model: &Model, dofs: &DofMap) -> Option<(Option<ElasticModes>, usize)> {
        let mut last = self.last_modes.lock().unwrap_or_else(|p| p.into_inner());
        let l = last.as_mut()?;
        // Read back from a checkpoint, the modes' own length stands for their DOFs.
        let same_dofs = match self.free_matrices.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(free) => free.free_dofs == dofs.free_dofs,
            None => l.modes.free_vectors.iter().all(|v| v.len() == dofs.free_count()),
        };
        if self.refit_drift == 0.0 || !same_dofs || l.carried + 1 >= l.interval {
            return None;
        }
        l.carried += 1;
        // A step fit, once made, is of the last refit's modes (a checkpoint's
        // read-back clears it).
        if self.step.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
            return Some((None, l.carried + 1));
        }
        l.derive_read_back(model, dofs, self.modes);
        Some((Some(l.modes.clone()), l.carried + 1))
    }

    fn checked(modes: usize) -> Result<()> {
        match modes {
            0 => Err(HookeError::scene("eigenfit.modes", "must be at least 1")),
            _ => Ok(()),
        }
    }

    /// The rest fit for the pins active at `time` (computed on first use).
    pub fn rest_fit(&self, model: &Model, time: f64) -> Result<RestFit> {
        Ok(self.shared_rest_fit(model, time)?.as_ref().clone())
    }

    /// The rest fit, shared with the cache (a refit reads it every step).
    fn shared_rest_fit(&self, model: &Model, time: f64) -> Result<Arc<RestFit>> {
        let dofs = model.dof_map(time);
        let mut cache = self.rest.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(fit) = cache.iter().find(|f| f.free_dofs == dofs.free_dofs) {
            return Ok(fit.clone());
        }
        let rest_positions = model.rest_positions();
        let free = FreeMatrices::new(model, &dofs);
        let (coarse, _) = modes_of(
            model,
            (&elastic_stiffness(model, &rest_positions, &free, time)?.0, &free),
            &dofs,
            (self.modes, 0),
            &[],
            &mut None,
        )?;
        let count = coarse.values.len();
        let (fine_eigenvalues, ratios, pairs) = match (&self.reference, &self.given_ratios) {
            (_, Some(given)) => (Vec::new(), given.clone(), Vec::new()),
            (Some(fine), None) => {
                let fine = fine_rest_modes(fine, model, time, count + EXTRA_FINE_MODES, self.cache.as_deref())?;
                let pairs = shape_pairs(&free, &coarse.free_vectors, &fine.sampled, &fine.values);
                let scale = coarse.values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
                let ratios = (0..count)
                    .map(|i| {
                        let rigid = coarse.values[i].abs() <= RIGID_FRACTION * scale;
                        let partner = match (self.pairing, pairs.get(i)) {
                            (Pairing::Index, _) => Some(i),
                            // No shapes to compare (not two tetrahedral meshes): by index.
                            (Pairing::Shape, None) => Some(i),
                            (Pairing::Shape, Some(Some((j, mac)))) if *mac >= self.pairing_threshold => Some(*j),
                            (Pairing::Shape, Some(_)) => None,
                        };
                        // A fine model with fewer modes than asked (tiny) leaves the rest at 1.
                        match partner.and_then(|j| fine.values.get(j)) {
                            Some(value) if !rigid => value / coarse.values[i],
                            _ => 1.0,
                        }
                    })
                    .collect();
                (fine.values, ratios, pairs)
            }
            (None, None) => unreachable!("an EigenFit has a reference or ratios"),
        };
        let fit = RestFit {
            shape_pairs: pairs,
            free_dofs: dofs.free_dofs.clone(),
            coarse_eigenvalues: coarse.values,
            fine_eigenvalues,
            ratios,
            mass_modes: columns(&coarse.mass_vectors, dofs.free_index.len()),
        };
        let fit = Arc::new(fit);
        cache.push(fit.clone());
        Ok(fit)
    }

    /// What the last refit found.
    pub fn report(&self) -> FitReport {
        self.report.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Refits about `state` for a step to `time`: the current modes, matched
    /// to the rest modes, and the correction's quadratic model.
    pub fn refit(&self, model: &Model, state: &State, time: f64) -> Result<()> {
        let rest = self.shared_rest_fit(model, time)?;
        let dofs = model.dof_map(time);
        if let Some((modes, steps)) = self.carried_modes(model, &dofs) {
            let gradient = elastic_gradient(model, &state.positions, time)?;
            let how = Refit::Carried { steps };
            return match modes {
                Some(modes) => self.fit_step(&rest, state, modes, gradient, how),
                None => self.move_step_fit(state, &gradient, how),
            };
        }
        let free = self.free_matrices(model, &dofs);
        let (stiffness, gradient) = elastic_stiffness(model, &state.positions, &free, time)?;
        let fingerprint = stiffness_fingerprint(&stiffness);
        let (current, how) = {
            let mut last = self.last_modes.lock().unwrap_or_else(|p| p.into_inner());
            match last.as_mut() {
                Some(l) if l.stiffness == fingerprint => {
                    l.derive_read_back(model, &dofs, self.modes);
                    (l.modes.clone(), Refit::Reused)
                }
                _ => {
                    let mut factor = self.factor.lock().unwrap_or_else(|p| p.into_inner());
                    let tracked = match last.as_ref() {
                        Some(l) => self.track(model, (&stiffness, &free), &dofs, l, &mut factor)?,
                        None => None,
                    };
                    let mut interval = 1;
                    let (modes, shift, how) = match tracked {
                        Some((modes, shift, iterations, moved)) => {
                            if let Some(l) = last.as_ref() {
                                interval = self.carrying_interval(moved, l.carried + 1, l.interval);
                            }
                            (modes, shift, Refit::Tracked { iterations })
                        }
                        None => {
                            let warm = last.as_ref().map(|l| l.modes.free_vectors.as_slice()).unwrap_or(&[]);
                            let wanted = (self.modes, GUARD_MODES);
                            let operators = (stiffness.as_slice(), free.as_ref());
                            let (modes, shift) = modes_of(model, operators, &dofs, wanted, warm, &mut factor)?;
                            (modes, shift, Refit::Solved)
                        }
                    };
                    *last = Some(LastModes {
                        stiffness: fingerprint,
                        shift,
                        modes: modes.clone(),
                        interval,
                        carried: 0,
                    });
                    (modes, how)
                }
            }
        };
        self.fit_step(&rest, state, current, gradient, how)
    }

    /// Matches `current` (modes of the stiffness about `state`) to the rest
    /// modes and sets the step's quadratic model, its slopes from the
    /// elastic `gradient` at the step's start.
    fn fit_step(
        &self,
        rest: &RestFit,
        state: &State,
        current: ElasticModes,
        gradient: Vec<f64>,
        how: Refit,
    ) -> Result<()> {
        let n = state.positions.len();
        let count = current.full_vectors.len();
        let modes = columns(&current.full_vectors, n);
        // Each mode's overlap with every rest mode in the mass inner product.
        let overlaps = rest.mass_modes.tr_mul(&modes);
        let mut weights = vec![0.0; count];
        let mut matched = 0;
        for (i, overlaps) in overlaps.column_iter().enumerate() {
            // The rest mode this one overlaps most.
            let (best, overlap) = overlaps
                .iter()
                .map(|o| o.abs())
                .enumerate()
                .fold((0, 0.0), |(bi, bo), (j, o)| if o > bo { (j, o) } else { (bi, bo) });
            if overlap > MATCH_THRESHOLD && best < rest.ratios.len() {
                weights[i] = rest.ratios[best] - 1.0;
                matched += 1;
            }
        }
        let slopes = slopes_of(&modes, &gradient);
        let mass_modes = columns(&current.mass_vectors, n);
        *self.report.lock().unwrap_or_else(|p| p.into_inner()) = FitReport {
            refit: how,
            matched,
            modes: count,
            applied_ratios: weights.iter().map(|w| w + 1.0).collect(),
            eigenvalues: current.values[..count].to_vec(),
        };
        *self.step.lock().unwrap_or_else(|p| p.into_inner()) = Some(StepFit {
            origin: state.positions.clone(),
            modes,
            mass_modes,
            weights,
            values: current.values[..count].to_vec(),
            slopes,
        });
        Ok(())
    }

    /// Moves the step fit of the carried modes to `state`: its origin and
    /// the slopes from the elastic `gradient` there (the modes, their
    /// eigenvalues and matching stay).
    fn move_step_fit(&self, state: &State, gradient: &[f64], how: Refit) -> Result<()> {
        let mut step = self.step.lock().unwrap_or_else(|p| p.into_inner());
        let fit = step.as_mut().ok_or_else(|| HookeError::Solver {
            reason: "EigenFit carried modes that no step fit holds".to_string(),
        })?;
        fit.origin.copy_from_slice(&state.positions);
        fit.slopes = slopes_of(&fit.modes, gradient);
        self.report.lock().unwrap_or_else(|p| p.into_inner()).refit = how;
        Ok(())
    }

    /// The model's pattern and mass over the free DOFs of `dofs`, kept while they do not change.
    fn free_matrices(&self, model: &Model, dofs: &DofMap) -> std::sync::Arc<FreeMatrices> {
        let mut kept = self.free_matrices.lock().unwrap_or_else(|p| p.into_inner());
        match kept.as_ref() {
            Some(free) if free.free_dofs == dofs.free_dofs => free.clone(),
            _ => {
                let free = std::sync::Arc::new(FreeMatrices::new(model, dofs));
                *kept = Some(free.clone());
                free
            }
        }
    }

    /// The last refit's modes followed to the stiffness `k` (values over the
    /// free DOFs), with the shift, the iterations it took and how far the
    /// modes had moved (the largest start error); None when the free
    /// DOFs changed or tracking did not converge.
    fn track(
        &self,
        model: &Model,
        (k, free_matrices): (&[f64], &FreeMatrices),
        dofs: &DofMap,
        last: &LastModes,
        factor: &mut Option<SparseCholesky>,
    ) -> Result<Option<(ElasticModes, f64, usize, f64)>> {
        let free = dofs.free_count();
        let wanted = self.modes.min(free);
        let start = &last.modes.free_vectors;
        if start.len() < wanted || start.iter().any(|v| v.len() != free) || last.shift >= 0.0 {
            return Ok(None);
        }
        let FreeMatrices { pattern, mass: m, .. } = free_matrices;
        if factor.as_ref().is_none_or(|f| f.pattern() != pattern) {
            *factor = Some(SparseCholesky::analyse(pattern)?);
        }
        let factor = factor.as_mut().expect("analysed just above");
        let step = step_shift(model.step_matrix(), &last.modes.values, wanted);
        let preconditioner = match step {
            Some(step) => ShiftInvert {
                factor: &mut *factor,
                mass: step.mass,
                stiffness: step.stiffness,
            },
            None => ShiftInvert::with_shift(&mut *factor, last.shift),
        };
        let tracked = track_eigenpairs(pattern, k, m, start, wanted, preconditioner, &self.tracking)?;
        if let (Some(step), Some(_)) = (step, &tracked) {
            // What was factorised is the step's own A on the free DOFs when
            // the step's K is this elastic one: offered, taken only if so.
            let values = m
                .iter()
                .zip(k)
                .map(|(m, k)| step.mass * m + step.stiffness * k)
                .collect();
            if let Some(taken) = factor.take_factor(values) {
                model.offer_step_factor(taken);
            }
        }
        Ok(tracked.map(|pairs| {
            let iterations = pairs.iterations;
            let moved = pairs.start_errors.iter().fold(0.0f64, |m, e| m.max(*e));
            let modes = ElasticModes::from_free(model, dofs, pairs.values, pairs.vectors, wanted);
            (modes, last.shift, iterations, moved)
        }))
    }

    /// The modal coordinates aᵢ = uᵢᵀ M (x − xₙ) and the fit, or None before any refit
    /// or when no ratio differs from 1.
    fn with_fit<T>(&self, x: &[f64], use_fit: impl FnOnce(&StepFit, Vec<f64>) -> T) -> Option<T> {
        let guard = self.step.lock().unwrap_or_else(|p| p.into_inner());
        let fit = guard.as_ref()?;
        if fit.weights.iter().all(|w| *w == 0.0) {
            return None;
        }
        let offset: Vec<f64> = x.iter().zip(&fit.origin).map(|(a, b)| a - b).collect();
        let coordinates = (0..fit.values.len())
            .map(|i| fit.mass_modes.column(i).iter().zip(&offset).map(|(m, d)| m * d).sum())
            .collect();
        Some(use_fit(fit, coordinates))
    }
}

/// The fine model's lowest rest modes: their eigenvalues, and their shapes
/// read at the coarse model's free DOFs (barycentrically, at its rest
/// vertices), to pair modes by shape (the first-frame test of the EigenFit paper, §3.5).
#[derive(serde::Serialize, serde::Deserialize)]
struct FineRest {
    values: Vec<f64>,
    sampled: Vec<Vec<f64>>,
}

/// The fine model's `count` lowest rest modes with the pins active at `time`,
/// from `cache` when it holds them for this fine mesh, these materials and
/// pins, and this coarse model (a file `eigenfit-<key>.json`), else computed
/// and stored there. A cache that cannot be read or written is only a cost:
/// it is recomputed.
fn fine_rest_modes(
    fine: &Model,
    coarse: &Model,
    time: f64,
    count: usize,
    cache: Option<&std::path::Path>,
) -> Result<FineRest> {
    let dofs = fine.dof_map(time);
    let coarse_dofs = coarse.dof_map(time);
    let path = cache.map(|directory| {
        let mut key = fine.fingerprint(&dofs);
        key.feed_number(count as u64);
        key.feed_number(coarse.fingerprint(&coarse_dofs).value());
        key.path(directory, "eigenfit")
    });
    let expected = count.min(dofs.free_count());
    if let Some(rest) = path.as_deref().and_then(disk_cache::load::<FineRest>).filter(|r| {
        r.values.len() == expected
            && r.values.iter().all(|v| v.is_finite())
            && r.sampled.len() == expected
            && r.sampled.iter().all(|v| v.len() == coarse_dofs.free_count())
    }) {
        return Ok(rest);
    }
    let free = FreeMatrices::new(fine, &dofs);
    let (stiffness, _) = elastic_stiffness(fine, &fine.rest_positions(), &free, time)?;
    let (modes, _) = modes_of(fine, (&stiffness, &free), &dofs, (count, 0), &[], &mut None)?;
    let sampled = match (fine.mesh().tetrahedra(), coarse.mesh().tetrahedra()) {
        (Some(fine_mesh), Some(coarse_mesh)) => {
            let located = fine_mesh.locate(&coarse_mesh.vertices);
            modes
                .full_vectors
                .iter()
                .map(|u| {
                    coarse_dofs
                        .free_dofs
                        .iter()
                        .map(|&dof| {
                            let (e, weights) = &located[dof / 3];
                            let tet = fine_mesh.tets[*e];
                            (0..4).map(|k| weights[k] * u[3 * tet[k] + dof % 3]).sum()
                        })
                        .collect()
                })
                .collect()
        }
        // Not two tetrahedral meshes: no shapes to compare.
        _ => Vec::new(),
    };
    let rest = FineRest {
        values: modes.values,
        sampled,
    };
    if let Some(path) = path {
        disk_cache::store(&path, &rest);
    }
    Ok(rest)
}

/// For each coarse mode (over the free DOFs), the fine mode (`sampled` at
/// the coarse vertices, eigenvalues `fine_values`) the optimal assignment
/// pairs it with, and their MAC (uᵀMv)² / (uᵀMu vᵀMv) in the coarse mass
/// inner product: the assignment of coarse to fine modes, one to one, of
/// largest total MAC. A greedy choice (each coarse mode its most similar fine
/// mode) can give two coarse modes one fine mode's ratio; the assignment
/// cannot.
///
/// Fine modes of (nearly) one eigenvalue ([`fine_clusters`]) are compared as
/// the subspace they span: within it any basis is as good as another (a
/// square bar's two bendings, a free body's six rigid motions), so the two
/// meshes' eigensolvers can return different ones, and a coarse mode at 45°
/// to both would pair with neither by its single-vector MAC. The MAC with a
/// cluster is the share of the coarse mode's mass norm in the cluster's span
/// (bᵀG⁻¹b / uᵀMu with b = VᵀMu, G = VᵀMV); for one mode it is the MAC.
/// Within a cluster the coarse modes assigned to it take its members in
/// increasing order.
fn shape_pairs(
    free: &FreeMatrices,
    coarse_modes: &[Vec<f64>],
    sampled: &[Vec<f64>],
    fine_values: &[f64],
) -> Vec<Option<(usize, f64)>> {
    let with_mass = |v: &Vec<f64>| {
        let mut mv = vec![0.0; v.len()];
        free.pattern.symmetric_multiply(&free.mass, v, &mut mv);
        mv
    };
    let fine_mass: Vec<Vec<f64>> = sampled.iter().map(with_mass).collect();
    let clusters = fine_clusters(&fine_values[..sampled.len().min(fine_values.len())]);
    let cluster_of: Vec<usize> = (0..sampled.len())
        .map(|j| clusters.iter().position(|c| c.contains(&j)).unwrap_or(usize::MAX))
        .collect();
    // Each cluster's Gram matrix VᵀMV, inverted on its well-conditioned part
    // (sampled modes that nearly coincide at the coarse vertices add nothing).
    let inverses: Vec<DMatrix<f64>> = clusters
        .iter()
        .map(|members| {
            let gram = DMatrix::from_fn(members.len(), members.len(), |r, c| {
                dot(&sampled[members[r]], &fine_mass[members[c]])
            });
            let eigen = gram.symmetric_eigen();
            let largest = eigen.eigenvalues.iter().fold(0.0_f64, |m, v| m.max(*v));
            let kept = eigen
                .eigenvalues
                .map(|v| if v > 1e-10 * largest && v > 0.0 { 1.0 / v } else { 0.0 });
            &eigen.eigenvectors * DMatrix::from_diagonal(&kept) * eigen.eigenvectors.transpose()
        })
        .collect();
    let subspace_mac = |u: &Vec<f64>, u_squared: f64, cluster: usize| -> f64 {
        if u_squared.is_nan() || u_squared <= 0.0 {
            return 0.0;
        }
        let members = &clusters[cluster];
        let b = nalgebra::DVector::from_iterator(members.len(), members.iter().map(|&j| dot(u, &fine_mass[j])));
        ((b.transpose() * &inverses[cluster] * &b)[(0, 0)] / u_squared).clamp(0.0, 1.0)
    };
    let by_cluster: Vec<Vec<f64>> = coarse_modes
        .iter()
        .map(|u| {
            let u_squared = dot(u, &with_mass(u));
            (0..clusters.len()).map(|c| subspace_mac(u, u_squared, c)).collect()
        })
        .collect();
    let mac = DMatrix::from_fn(coarse_modes.len(), sampled.len(), |i, j| match cluster_of[j] {
        usize::MAX => 0.0,
        c => by_cluster[i][c],
    });
    let mut assigned = best_assignment(&mac);
    for members in &clusters {
        let mut rows: Vec<usize> = (0..assigned.len())
            .filter(|&i| assigned[i].is_some_and(|j| members.contains(&j)))
            .collect();
        rows.sort_unstable();
        let mut columns: Vec<usize> = rows.iter().filter_map(|&i| assigned[i]).collect();
        columns.sort_unstable();
        for (i, j) in rows.into_iter().zip(columns) {
            assigned[i] = Some(j);
        }
    }
    assigned
        .into_iter()
        .enumerate()
        .map(|(i, j)| j.map(|j| (j, mac[(i, j)])))
        .collect()
}

/// Relative gap between eigenvalues below which fine modes are compared as
/// one subspace when modes pair by shape ([`Pairing::Shape`]): 2% in λ, 1%
/// in frequency, far below the ratios EigenFit corrects, so a cluster's
/// members' ratios differ by less than the pairing could tell apart.
pub const CLUSTER_GAP: f64 = crate::linalg::NEAR_EQUAL_GAP;

/// Runs of consecutive eigenvalues (increasing) each within [`CLUSTER_GAP`]
/// of the run's first, counting every value within [`RIGID_FRACTION`] of the
/// largest as zero (a free body's rigid motions are one cluster).
fn fine_clusters(values: &[f64]) -> Vec<Vec<usize>> {
    let scale = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    crate::linalg::near_equal_runs(values, RIGID_FRACTION * scale)
}

/// The one-to-one assignment of rows to columns of largest total weight
/// (the Hungarian method with potentials, O(n²m) for n rows ≤ m columns;
/// with more rows than columns, the extra rows get None).
pub fn best_assignment(weights: &DMatrix<f64>) -> Vec<Option<usize>> {
    let (rows, columns) = weights.shape();
    if rows > columns {
        let transposed = best_assignment(&weights.transpose());
        let mut of_row = vec![None; rows];
        for (column, row) in transposed.into_iter().enumerate() {
            if let Some(row) = row {
                of_row[row] = Some(column);
            }
        }
        return of_row;
    }
    // Minimise the cost −w. Index 0 is a sentinel column; rows and columns
    // are 1-based, as in the classical formulation.
    let cost = |i: usize, j: usize| -weights[(i - 1, j - 1)];
    let mut u = vec![0.0; rows + 1];
    let mut v = vec![0.0; columns + 1];
    let mut row_of = vec![0usize; columns + 1];
    let mut way = vec![0usize; columns + 1];
    for i in 1..=rows {
        row_of[0] = i;
        let mut j0 = 0;
        let mut least = vec![f64::INFINITY; columns + 1];
        let mut used = vec![false; columns + 1];
        loop {
            used[j0] = true;
            let i0 = row_of[j0];
            let mut delta = f64::INFINITY;
            let mut j1 = 0;
            for j in 1..=columns {
                if used[j] {
                    continue;
                }
                let reduced = cost(i0, j) - u[i0] - v[j];
                if reduced < least[j] {
                    least[j] = reduced;
                    way[j] = j0;
                }
                if least[j] < delta {
                    delta = least[j];
                    j1 = j;
                }
            }
            for j in 0..=columns {
                if used[j] {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    least[j] -= delta;
                }
            }
            j0 = j1;
            if row_of[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            row_of[j0] = row_of[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut column_of = vec![None; rows];
    for j in 1..=columns {
        if row_of[j] > 0 {
            column_of[row_of[j] - 1] = Some(j - 1);
        }
    }
    column_of
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Eigenpairs of the elastic stiffness over the free DOFs: the corrected
/// modes, then the guards. A checkpoint keeps the values and free vectors;
/// the rest derives from them.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct ElasticModes {
    values: Vec<f64>,
    /// Eigenvectors over the free DOFs (the next refit's start).
    free_vectors: Vec<Vec<f64>>,
    /// The corrected ones over all DOFs, zero on pinned ones (empty when read back).
    #[serde(skip)]
    full_vectors: Vec<Vec<f64>>,
    /// M uᵢ over all DOFs of the corrected ones (empty when read back).
    #[serde(skip)]
    mass_vectors: Vec<Vec<f64>>,
}

/// The finite-element elastic stiffness at x over the free DOFs (values on
/// the restricted pattern), projected to PSD element by element (EigenFit paper, §3.3.1),
/// and the elastic energy's gradient there over all DOFs. Gravity, loads,
/// contact and soft pins are left out.
fn elastic_stiffness(model: &Model, x: &[f64], free: &FreeMatrices, time: f64) -> Result<(Vec<f64>, Vec<f64>)> {
    let (values, gradient) = model.element_hessian(x, time, true)?;
    Ok((free.source.iter().map(|&s| values[s]).collect(), gradient))
}

/// The elastic energy's gradient at x over all DOFs, as [`elastic_stiffness`] gives it.
fn elastic_gradient(model: &Model, x: &[f64], time: f64) -> Result<Vec<f64>> {
    let mut gradient = vec![0.0; x.len()];
    for term in model.terms().iter().filter(|t| t.as_elasticity().is_some()) {
        term.gradient(x, time, &mut gradient, false)?;
    }
    Ok(gradient)
}

/// The model's pattern and mass restricted to one set of free DOFs.
struct FreeMatrices {
    free_dofs: Vec<usize>,
    pattern: LowerPattern,
    /// For each entry of `pattern`, the position of the entry it copies.
    source: Vec<usize>,
    mass: Vec<f64>,
}

impl FreeMatrices {
    fn new(model: &Model, dofs: &DofMap) -> FreeMatrices {
        let (pattern, source) = model.pattern().restrict(&dofs.free_index);
        let mass = source.iter().map(|&s| model.mass().values()[s]).collect();
        FreeMatrices {
            free_dofs: dofs.free_dofs.clone(),
            pattern,
            source,
            mass,
        }
    }
}

/// The lowest eigenpairs of (K, M) over the free DOFs, K from
/// [`elastic_stiffness`]: `(corrected, guards)` of them, and the shift used.
/// `factor` keeps the symbolic analysis between calls.
fn modes_of(
    model: &Model,
    (k, free_matrices): (&[f64], &FreeMatrices),
    dofs: &DofMap,
    (count, guards): (usize, usize),
    warm_start: &[Vec<f64>],
    factor: &mut Option<SparseCholesky>,
) -> Result<(ElasticModes, f64)> {
    let FreeMatrices { pattern, mass: m, .. } = free_matrices;
    let warm_start: Vec<Vec<f64>> = warm_start
        .iter()
        .filter(|v| v.len() == dofs.free_count())
        .cloned()
        .collect();
    // A refit warm-started from the last step's modes needs them near the
    // bottom, matched by shape: no search for a missed lower copy, and a
    // residual of 1e-7 (the ratios themselves are known to a few digits).
    let settings = match warm_start.is_empty() {
        true => EigenSettings::default(),
        false => EigenSettings {
            warm_start,
            tolerance: 1e-7,
            verify_complete: false,
            ..EigenSettings::default()
        },
    };
    let free = dofs.free_count();
    let pairs = smallest_eigenpairs_reusing(factor, pattern, k, m, (count + guards).min(free), &settings)?;
    let modes = ElasticModes::from_free(model, dofs, pairs.values, pairs.vectors, count.min(free));
    Ok((modes, pairs.shift))
}

impl ElasticModes {
    /// The modes of eigenvectors over the free DOFs, the first `count` of
    /// which are corrected: those over all DOFs (zero on pinned ones) and
    /// their M-images.
    fn from_free(
        model: &Model,
        dofs: &DofMap,
        values: Vec<f64>,
        free_vectors: Vec<Vec<f64>>,
        count: usize,
    ) -> ElasticModes {
        let n = dofs.free_index.len();
        let full_vectors: Vec<Vec<f64>> = free_vectors[..count.min(free_vectors.len())]
            .iter()
            .map(|free| {
                let mut full = vec![0.0; n];
                for (&dof, value) in dofs.free_dofs.iter().zip(free) {
                    full[dof] = *value;
                }
                full
            })
            .collect();
        // One product per mode, side by side (each as it would be alone).
        let mass_vectors = full_vectors
            .par_iter()
            .map(|u| {
                let mut mu = vec![0.0; u.len()];
                model.mass_multiply(u, &mut mu);
                // M u on pinned DOFs would couple the correction to held DOFs: zero them.
                for (dof, index) in dofs.free_index.iter().enumerate() {
                    if index.is_none() {
                        mu[dof] = 0.0;
                    }
                }
                mu
            })
            .collect();
        ElasticModes {
            values,
            free_vectors,
            full_vectors,
            mass_vectors,
        }
    }
}

/// The last refit's modes with a fingerprint of the stiffness (over the free
/// DOFs) they came from.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct LastModes {
    stiffness: u64,
    /// The shift σ of K − σM that found or followed them.
    #[serde(default)]
    shift: f64,
    modes: ElasticModes,
    /// Steps these modes serve (1: the next step refits).
    #[serde(default = "one")]
    interval: usize,
    /// Steps they were carried to since they were found.
    #[serde(default)]
    carried: usize,
}

fn one() -> usize {
    1
}

impl LastModes {
    /// Modes read back from a checkpoint keep only their values and free
    /// vectors: derives the rest, once (the first `count` corrected).
    fn derive_read_back(&mut self, model: &Model, dofs: &DofMap, count: usize) {
        if self.modes.full_vectors.is_empty() {
            let (values, free) = (self.modes.values.clone(), self.modes.free_vectors.clone());
            self.modes = ElasticModes::from_free(model, dofs, values, free, count);
        }
    }
}

/// The step's matrix a M + b K (model/step_matrix.rs) as the tracking's
/// preconditioner, when the step declared one whose shift σ = −a/b still
/// lets the wanted pairs converge at [`STEP_SHIFT_RATE`] an iteration or
/// faster: about (λ_wanted − σ)/(λ_highest − σ), λ_wanted the highest
/// corrected eigenvalue of `values` and λ_highest the highest followed (the
/// guards'), a rate that a shift far below the spectrum (a small time step)
/// drives toward 1. Otherwise the refit's own shift serves.
fn step_shift(step: Option<StepMatrix>, values: &[f64], wanted: usize) -> Option<StepMatrix> {
    let step = step?;
    let usable = step.mass > 0.0 && step.stiffness > 0.0 && step.mass.is_finite() && step.stiffness.is_finite();
    let (Some(&corrected), Some(&highest)) = (values.get(wanted.checked_sub(1)?), values.last()) else {
        return None;
    };
    let shift = step.shift();
    let rate = (corrected - shift) / (highest - shift);
    (usable && rate <= STEP_SHIFT_RATE).then_some(step)
}

/// Vectors of length `n` as the columns of a matrix.
fn columns(vectors: &[Vec<f64>], n: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, vectors.len(), |r, c| vectors[c][r])
}

/// gᵢ = uᵢ · g for each column uᵢ of `modes`: the one routine for a refit and
/// for the steps that carry its modes, so that a resumed run, which fits
/// afresh, repeats the bits of one that carried.
fn slopes_of(modes: &DMatrix<f64>, gradient: &[f64]) -> Vec<f64> {
    modes.column_iter().map(|u| dot(u.as_slice(), gradient)).collect()
}

/// A 64-bit hash of the stiffness values' bits and count: equal fingerprints
/// are taken for the same K. Four independent multiply–xorshift lanes, one
/// word at a time (FNV-1a went byte by byte, and cost a tenth of a refit).
fn stiffness_fingerprint(values: &[f64]) -> u64 {
    const MULTIPLIER: u64 = 0xbf58_476d_1ce4_e5b9;
    let mix = |hash: u64, word: u64| {
        let mixed = (hash ^ word).wrapping_mul(MULTIPLIER);
        mixed ^ (mixed >> 31)
    };
    let mut lanes = [0x9e37_79b9_7f4a_7c15 ^ values.len() as u64, 1, 2, 3];
    let chunks = values.chunks_exact(4);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (lane, value) in lanes.iter_mut().zip(chunk) {
            *lane = mix(*lane, value.to_bits());
        }
    }
    let mut hash = lanes.iter().fold(0, |hash, lane| mix(hash, *lane));
    for value in tail {
        hash = mix(hash, value.to_bits());
    }
    hash
}

impl EnergyTerm for EigenFit {
    fn name(&self) -> String {
        format!("EigenFit correction of {} modes", self.modes)
    }

    fn kind(&self) -> TermKind {
        TermKind::Elastic
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            low_rank: true,
            time_dependent: true,
            planar: true,
            ..TermCapabilities::SMOOTH
        }
    }

    fn begin_step(&self, model: &Model, state: &State, time: f64) -> Result<()> {
        self.refit(model, state, time)
    }

    fn history(&self) -> serde_json::Value {
        let last = self.last_modes.lock().unwrap_or_else(|p| p.into_inner());
        serde_json::to_value(&*last).unwrap_or(serde_json::Value::Null)
    }

    fn restore_history(&self, history: &serde_json::Value) -> Result<()> {
        let last: Option<LastModes> = serde_json::from_value(history.clone()).map_err(|error| HookeError::Solver {
            reason: format!("the checkpoint's EigenFit history does not fit this version: {error}"),
        })?;
        *self.last_modes.lock().unwrap_or_else(|p| p.into_inner()) = last;
        // The step fit was of other modes: the next step fits the read-back ones afresh.
        *self.step.lock().unwrap_or_else(|p| p.into_inner()) = None;
        Ok(())
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        self.with_fit(x, |fit, a| fit.energy(&a)).unwrap_or(0.0)
    }

    fn gradient(&self, x: &[f64], _time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        let energy = self.with_fit(x, |fit, a| {
            for i in 0..a.len() {
                let scale = fit.weights[i] * (fit.slopes[i] + fit.values[i] * a[i]);
                gradient
                    .iter_mut()
                    .zip(fit.mass_modes.column(i).iter())
                    .for_each(|(g, m)| *g += scale * m);
            }
            fit.energy(&a)
        });
        Ok(energy.unwrap_or(0.0))
    }

    fn hessian(
        &self,
        x: &[f64],
        time: f64,
        _project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> Result<f64> {
        if overwrite {
            hessian.values.fill(0.0);
        }
        let part = self.with_fit(x, |fit, _| {
            let core = DMatrix::from_fn(fit.values.len(), fit.values.len(), |r, c| {
                if r == c {
                    fit.weights[r] * fit.values[r]
                } else {
                    0.0
                }
            });
            LowRank::new(fit.mass_modes.clone(), core)
        });
        if let Some(part) = part {
            hessian.low_rank.push(part?);
        }
        self.gradient(x, time, gradient, overwrite)
    }
}

/// Dynamics-aware coarsening's factor (Chen et al. 2017, as the EigenFit paper describes it in §2): the
/// first elastic mode's ratio λ₁^fine / λ₁^coarse at rest, with the pins
/// active at `time` (rigid modes skipped).
pub fn dac_factor(coarse: &Model, fine: Model, time: f64, cache: Option<std::path::PathBuf>) -> Result<f64> {
    // Up to six rigid modes come first in a free body.
    let mut fit = EigenFit::new(fine, 7)?;
    if let Some(cache) = cache {
        fit = fit.with_cache(cache);
    }
    let fit = fit.rest_fit(coarse, time)?;
    let scale = fit.coarse_eigenvalues.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    fit.coarse_eigenvalues
        .iter()
        .position(|v| v.abs() > RIGID_FRACTION * scale)
        .map(|i| fit.ratios[i])
        .ok_or_else(|| {
            HookeError::scene(
                "eigenfit",
                "the coarse model has no elastic mode among its lowest seven",
            )
        })
}

impl Model {
    /// Scales every element's material stiffness by `factor` (DAC's rescaled
    /// Young's modulus, for any material).
    pub fn scale_elasticity(&mut self, factor: f64) {
        for term in self.terms.iter_mut() {
            let scaled = term.as_elasticity().map(|elastic| {
                let materials = elastic
                    .materials()
                    .iter()
                    .map(|m| {
                        std::sync::Arc::new(crate::material::scaled::Scaled {
                            base: m.clone(),
                            factor,
                        }) as crate::material::MaterialRef
                    })
                    .collect();
                elastic.with_materials(materials)
            });
            if let Some(scaled) = scaled {
                *term = scaled;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest total weight over all one-to-one assignments, by trying every permutation.
    fn brute_force(weights: &DMatrix<f64>) -> f64 {
        fn best(weights: &DMatrix<f64>, row: usize, used: &mut Vec<bool>) -> f64 {
            if row == weights.nrows() {
                return 0.0;
            }
            let mut top = f64::NEG_INFINITY;
            for j in 0..weights.ncols() {
                if !used[j] {
                    used[j] = true;
                    top = top.max(weights[(row, j)] + best(weights, row + 1, used));
                    used[j] = false;
                }
            }
            top
        }
        best(weights, 0, &mut vec![false; weights.ncols()])
    }

    #[test]
    fn the_steps_matrix_preconditions_a_refit_only_where_it_converges_fast_enough() {
        let values = [10.0, 50.0, 100.0, 400.0];
        let step = |stiffness: f64| Some(StepMatrix { mass: 1.0, stiffness });
        // σ = −100: the third pair at (100 + 100)/(400 + 100) = 0.4 an iteration.
        assert_eq!(step_shift(step(1e-2), &values, 3), step(1e-2));
        // σ = −1e4 (a time step of 1e-2 s): 0.97, too slow. The bound, 0.75, is at σ = −800.
        assert_eq!(step_shift(step(1e-4), &values, 3), None);
        assert_eq!(step_shift(step(1.0 / 700.0), &values, 3), step(1.0 / 700.0));
        assert_eq!(step_shift(step(1.0 / 900.0), &values, 3), None);
        // Undeclared, or not a shift below the spectrum.
        assert_eq!(step_shift(None, &values, 3), None);
        assert_eq!(step_shift(step(-1.0), &values, 3), None);
        assert_eq!(step_shift(step(1e-2), &values, 0), None);
        assert_eq!(step_shift(step(1e-2), &[], 1), None);
    }

    #[test]
    fn the_assignment_has_the_largest_total_weight() {
        let mut state = 3u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for (rows, columns) in [(1, 1), (3, 3), (5, 5), (4, 6), (6, 6), (7, 7)] {
            for _ in 0..20 {
                let weights = DMatrix::from_fn(rows, columns, |_, _| next());
                let assignment = best_assignment(&weights);
                let mut taken: Vec<usize> = assignment.iter().map(|j| j.expect("every row")).collect();
                let total: f64 = taken.iter().enumerate().map(|(i, &j)| weights[(i, j)]).sum();
                assert!((total - brute_force(&weights)).abs() < 1e-12, "{rows}×{columns}");
                taken.sort_unstable();
                taken.dedup();
                assert_eq!(taken.len(), rows, "one to one");
            }
        }
        // More rows than columns: the rows left over get None.
        let tall = DMatrix::from_row_slice(3, 2, &[0.9, 0.1, 0.8, 0.7, 0.2, 0.3]);
        assert_eq!(best_assignment(&tall), vec![Some(0), Some(1), None]);
    }

    #[test]
    fn the_assignment_does_not_give_two_modes_one_partner() {
        // Coarse modes 0 and 1 both look most like fine mode 0; greedily both
        // would take its ratio. The assignment gives mode 1 fine mode 1.
        let mac = DMatrix::from_row_slice(2, 2, &[0.95, 0.05, 0.70, 0.65]);
        assert_eq!(best_assignment(&mac), vec![Some(0), Some(1)]);
    }

    /// Four DOFs with masses 1, 2, 3, 4 (a diagonal mass matrix).
    fn diagonal_mass() -> FreeMatrices {
        let pattern = LowerPattern::from_columns((0..4).map(|c| vec![c]).collect());
        FreeMatrices {
            free_dofs: (0..4).collect(),
            source: (0..4).collect(),
            mass: vec![1.0, 2.0, 3.0, 4.0],
            pattern,
        }
    }

    /// M-unit vector along DOF `k` of [`diagonal_mass`].
    fn unit(k: usize) -> Vec<f64> {
        let mut v = vec![0.0; 4];
        v[k] = 1.0 / ((k + 1) as f64).sqrt();
        v
    }

    fn mix(a: &[f64], b: &[f64], angle: f64) -> Vec<f64> {
        a.iter()
            .zip(b)
            .map(|(x, y)| angle.cos() * x + angle.sin() * y)
            .collect()
    }

    #[test]
    fn near_equal_eigenvalues_cluster_and_rigid_ones_are_one_cluster() {
        assert_eq!(
            fine_clusters(&[1e-12, -3e-12, 2e-13, 1.0, 1.01, 1.5, 2.0, 2.03, 2.05]),
            vec![vec![0, 1, 2], vec![3, 4], vec![5], vec![6, 7], vec![8]]
        );
        assert_eq!(fine_clusters(&[]), Vec::<Vec<usize>>::new());
    }

    /// Two fine modes of one eigenvalue span a plane in which either mesh's
    /// eigensolver may return any basis: coarse modes at 45° to the fine
    /// ones are the same plane and pair at MAC 1 (each alone would be 0.5,
    /// below the threshold); a third fine mode apart pairs as one vector.
    #[test]
    fn a_degenerate_pair_pairs_as_the_plane_it_spans() {
        let free = diagonal_mass();
        let quarter = std::f64::consts::FRAC_PI_4;
        let coarse = vec![
            mix(&unit(0), &unit(1), quarter),
            mix(&unit(0), &unit(1), -quarter),
            mix(&unit(2), &unit(3), 0.3),
        ];
        let fine = vec![unit(0), unit(1), unit(2)];
        let pairs = shape_pairs(&free, &coarse, &fine, &[1.0, 1.0, 4.0]);
        for (i, expected) in [(0, 1.0), (1, 1.0), (2, 0.3_f64.cos().powi(2))] {
            let (j, mac) = pairs[i].expect("paired");
            assert_eq!(j, i, "within the pair, in increasing order");
            assert!((mac - expected).abs() < 1e-12, "mode {i}: MAC {mac}");
        }
        // Apart (eigenvalues 1 and 2), the same shapes compare one by one.
        let apart = shape_pairs(&free, &coarse, &fine, &[1.0, 2.0, 4.0]);
        assert!((apart[0].expect("paired").1 - 0.5).abs() < 1e-12, "{apart:?}");
    }
}
