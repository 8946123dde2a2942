//! The time-reversible co-rotational integrator of the Kharevych 2010 thesis, §3.4.2 (eq. 3.33):
//! implicit midpoint for linear elasticity with per-element rotations, taken from
//! the known configuration for the velocity solve and from the new one for the
//! momentum update:
//!
//!   v_{k+1} = [M + (h²/4) Σₑ Rₖ Kₑ Rₖᵀ]⁻¹ (p_k − (h/2)(Σₑ Rₖ Kₑ Rₖᵀ q_k − Σₑ Rₖ Kₑ q₀))
//!   q_{k+1} = q_k + h v_{k+1};  R_{k+1} from q_{k+1}
//!   p_{k+1} = M v_{k+1} − (h/2)[Σₑ R_{k+1} Kₑ R_{k+1}ᵀ (q_k + ½h v_{k+1}) − Σₑ R_{k+1} Kₑ q₀]
//!
//! (the thesis prints the last term outside the bracket; the bracket is the
//! consistent form). One linear solve per step, time-reversible in (q, R); energy
//! and angular momentum are not exactly conserved but stay bounded. Kₑ is the
//! element's linear-elastic stiffness at rest; Rₑ is the rotation of the polar
//! decomposition of Fₑ (the scheme works with any rotation rule; barycentre terms
//! vanish because Kₑ annihilates translations). Every element's material must be
//! a co-rotated quadratic (`corotational`, or `anisotropic_linear` with
//! `corotated = true`), whose energy is exactly ½ ûᵀKₑû of the rotated-back
//! displacement, so the energies table stays consistent.
//!
//! Σₑ Rₑ Kₑ Rₑᵀ and the co-rotated force are the Hessian and gradient of the
//! elements with a per-element material [`RotatedQuadratic`] (linear elasticity
//! in the fixed frame Rₑ), so the model's own element terms assemble them.
//! Gravity and loads enter as impulses (h/2) f(t_{k+½}) on both sides of the
//! step, which keeps the scheme time-reversible for constant loads.

use super::acceleration::solve_mass;
use super::entry::IntegratorEntry;
use super::{commit_step, history_from_json, history_to_json, Capabilities, Integrator, StepReport, Timed};
use crate::error::{HookeError, Result};
use crate::linalg::signed_svd3;
use crate::material::{derivative_matrix, Evaluation, Material, MaterialCapabilities, Matrix9, StressDerivative, Want};
use crate::model::{EnergyTerm, HessianTarget, Model, State, TermKind};
use crate::solve::{FreeSystem, SolverSettings};
use nalgebra::{Matrix3, SVector};

/// Linear elasticity in a fixed rotated frame: ψ(F) = ½ gᵀC₀g with
/// g = vec(RᵀF − I), C₀ the element material's ∂P/∂F at rest and R fixed. Then
/// P = R mat(C₀ g) and ∂P/∂F = (I ⊗ R) C₀ (I ⊗ Rᵀ): over an element this is
/// ½ (Rᵀx − X)ᵀ K (Rᵀx − X), with gradient R K (Rᵀx − X) and Hessian R K Rᵀ.
#[derive(Debug)]
struct RotatedQuadratic {
    rotation: Matrix3<f64>,
    rest_tangent: Matrix9,
    density: f64,
}

fn vec9(m: &Matrix3<f64>) -> SVector<f64, 9> {
    SVector::<f64, 9>::from_column_slice(m.as_slice())
}

impl Material for RotatedQuadratic {
    fn name(&self) -> String {
        "linear elasticity in a fixed rotated frame".to_string()
    }

    fn density(&self) -> f64 {
        self.density
    }

    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        let r = &self.rotation;
        let g = vec9(&(r.transpose() * f - Matrix3::identity()));
        let stress = self.rest_tangent * g;
        let first_piola_derivative = want.derivative().map(|_| {
            let mut block = Matrix9::zeros();
            for j in 0..3 {
                block.fixed_view_mut::<3, 3>(3 * j, 3 * j).copy_from(r);
            }
            StressDerivative::Matrix(block * self.rest_tangent * block.transpose())
        });
        Evaluation {
            energy_density: 0.5 * g.dot(&stress),
            first_piola: r * Matrix3::from_column_slice(stress.as_slice()),
            first_piola_derivative,
        }
    }

    fn capabilities(&self) -> MaterialCapabilities {
        MaterialCapabilities {
            defined_under_inversion: true,
            rotation_invariant: false,
            corotated_quadratic: false,
            projective: false,
        }
    }
}

/// The time-reversible co-rotational integrator of the Kharevych 2010 thesis (§3.4.2):
/// implicit midpoint for linear elasticity in per-element rotations, one linear solve per
/// step; energy and angular momentum stay bounded. Every material must be a co-rotated
/// quadratic (`corotational`, or `anisotropic_linear` co-rotated).
#[derive(Default)]
pub struct CorotationalReversible {
    /// C₀ = ∂P/∂F at rest, per element (all element terms, in order).
    rest_tangents: Vec<Matrix9>,
    system: Option<FreeSystem>,
    mass_system: Option<FreeSystem>,
    momentum: Option<Timed<Vec<f64>>>,
}

fn build(_: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(CorotationalReversible::default()))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "corotational_reversible",
    aliases: &["cr"],
    summary:
        "time-reversible co-rotational scheme (Kharevych 2010 thesis, §3.4.2): one linear solve per step; co-rotated quadratic materials",
    keys: &[],
    uses_solver: false,
    build,
};

/// Every element's material must be a co-rotated quadratic.
fn check_materials(model: &Model) -> Result<()> {
    for term in model.terms().iter().filter(|t| t.kind() == TermKind::Elastic) {
        let Some(elements) = term.as_elasticity() else {
            return Err(HookeError::scene(
                "integrator.kind",
                format!(
                    "corotational_reversible works on elements with materials; this model has {}",
                    term.name()
                ),
            ));
        };
        if let Some(e) = elements
            .materials()
            .iter()
            .position(|m| !m.capabilities().corotated_quadratic)
        {
            return Err(HookeError::scene(
                "bodies.material.model",
                format!(
                    "corotational_reversible needs a co-rotated quadratic material everywhere (corotational, or anisotropic_linear with corotated = true); element {e} (numbered over all bodies) is {}",
                    elements.materials()[e].name()
                ),
            ));
        }
    }
    Ok(())
}

impl CorotationalReversible {
    fn prepare(&mut self, model: &Model) -> Result<()> {
        if !self.rest_tangents.is_empty() {
            return Ok(());
        }
        check_materials(model)?;
        self.rest_tangents = model
            .materials()
            .iter()
            .map(|m| derivative_matrix(m.as_ref(), &Matrix3::identity(), false))
            .collect();
        Ok(())
    }

    /// The model's element terms with each element's material replaced by
    /// linear elasticity in the frame of its rotation at positions x.
    fn rotated_terms(&self, model: &Model, x: &[f64]) -> Vec<Box<dyn EnergyTerm>> {
        let mut offset = 0;
        let mut terms = Vec::new();
        for elements in model.terms().iter().filter_map(|t| t.as_elasticity()) {
            let materials = elements
                .deformation_gradients(x)
                .iter()
                .zip(elements.materials())
                .enumerate()
                .map(|(e, (f, material))| -> crate::material::MaterialRef {
                    let (u, _, v) = signed_svd3(f);
                    std::sync::Arc::new(RotatedQuadratic {
                        rotation: u * v.transpose(),
                        rest_tangent: self.rest_tangents[offset + e],
                        density: material.density(),
                    })
                })
                .collect();
            offset += elements.element_count();
            terms.push(elements.with_materials(materials));
        }
        terms
    }
}

/// Σₑ Rₑ Kₑ (Rₑᵀ y − Xₑ) of the rotated terms, and with `hessian`, Σₑ Rₑ Kₑ Rₑᵀ into it.
fn rotated_force(terms: &[Box<dyn EnergyTerm>], y: &[f64], hessian: Option<&mut [f64]>) -> Result<Vec<f64>> {
    let mut gradient = vec![0.0; y.len()];
    match hessian {
        Some(values) => {
            values.fill(0.0);
            let mut low_rank = Vec::new();
            for term in terms {
                let mut target = HessianTarget {
                    values: &mut *values,
                    low_rank: &mut low_rank,
                };
                term.hessian(y, 0.0, false, &mut gradient, &mut target, false)?;
            }
        }
        None => {
            for term in terms {
                term.gradient(y, 0.0, &mut gradient, false)?;
            }
        }
    }
    Ok(gradient)
}

impl Integrator for CorotationalReversible {
    fn name(&self) -> &'static str {
        "corotational_reversible"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // Damping and obstacles would break time symmetry.
            rayleigh_damping: false,
            obstacles: false,
            ..Capabilities::COMMON
        }
    }

    fn requirements(&self, model: &Model) -> Result<()> {
        check_materials(model)
    }

    fn history(&self) -> Result<serde_json::Value> {
        history_to_json(&self.momentum)
    }

    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        self.momentum = history_from_json(self.name(), history)?;
        Ok(())
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        self.prepare(model)?;
        let p = match self.momentum.as_ref().and_then(|p| p.at(state.time)) {
            Some(p) => p.clone(),
            None => {
                let mut p = vec![0.0; state.positions.len()];
                model.mass_multiply(&state.velocities, &mut p);
                p
            }
        };
        let mut accepted = None;
        let mut linear_system = self.system.take();
        let mut mass_cache = self.mass_system.take();
        let this = &*self;
        let report = commit_step(model, state, dt, |s| {
            let started = web_time::Instant::now();
            let end = s.time + dt;
            let q = &s.positions;
            let n = q.len();
            let dofs = model.dof_map(end);
            // Loads at the midpoint time, as impulses (h/2) f on both sides.
            let mut load = vec![0.0; n];
            model.external_force(s.time + 0.5 * dt, &mut load);
            // A = M + (h²/4) Σ Rₖ Kₑ Rₖᵀ, and the co-rotated force at q_k.
            let rotated = this.rotated_terms(model, q);
            let mut stiffness = vec![0.0; model.pattern().nonzeros()];
            let force = rotated_force(&rotated, q, Some(&mut stiffness))?;
            let quarter = 0.25 * dt * dt;
            let values: Vec<f64> = stiffness
                .iter()
                .zip(model.mass().values())
                .map(|(k, m)| m + quarter * k)
                .collect();
            // Right-hand side p − (h/2)(f_R(q_k) − f), with pinned velocities moved over.
            let mut rhs: Vec<f64> = (0..n).map(|i| p[i] - 0.5 * dt * (force[i] - load[i])).collect();
            let mut pinned_velocity = vec![0.0; n];
            model.apply_prescribed_velocities(end, &mut pinned_velocity);
            let mut coupling = vec![0.0; n];
            model
                .pattern()
                .symmetric_multiply(&values, &pinned_velocity, &mut coupling);
            rhs.iter_mut().zip(&coupling).for_each(|(r, c)| *r -= c);
            let system = FreeSystem::for_dofs(&mut linear_system, model, &dofs)?;
            system.load(&[(1.0, &values)]);
            system.factorize()?;
            let mut free = dofs.gather(&rhs);
            system.solve_in_place(&mut free)?;
            let mut velocity = pinned_velocity.clone();
            dofs.scatter(&free, &mut velocity);
            let positions: Vec<f64> = q.iter().zip(&velocity).map(|(x, v)| x + dt * v).collect();
            // Momentum with the rotations of the new configuration.
            let new_rotated = this.rotated_terms(model, &positions);
            let midpoint: Vec<f64> = q.iter().zip(&velocity).map(|(x, v)| x + 0.5 * dt * v).collect();
            let new_force = rotated_force(&new_rotated, &midpoint, None)?;
            let mut mv = vec![0.0; n];
            model.mass_multiply(&velocity, &mut mv);
            let mut momentum: Vec<f64> = (0..n).map(|i| mv[i] - 0.5 * dt * (new_force[i] - load[i])).collect();
            for (i, value) in momentum.iter_mut().enumerate() {
                if dofs.free_index[i].is_none() {
                    *value = mv[i];
                }
            }
            // Reported velocity M⁻¹p: M_ff v_f = p_f − M_fp v_p.
            let mut pinned_momentum = vec![0.0; n];
            model.mass_multiply(&pinned_velocity, &mut pinned_momentum);
            let free_momentum: Vec<f64> = momentum.iter().zip(&pinned_momentum).map(|(a, b)| a - b).collect();
            let mut velocities = solve_mass(model, &dofs, &free_momentum, &mut mass_cache)?;
            model.apply_prescribed_velocities(end, &mut velocities);
            accepted = Some(Timed::new(end, momentum));
            Ok((
                State {
                    time: end,
                    positions,
                    velocities,
                },
                StepReport {
                    iterations: 1,
                    solve_seconds: started.elapsed().as_secs_f64(),
                    ..StepReport::default()
                },
            ))
        });
        self.system = linear_system;
        self.mass_system = mass_cache;
        if let (Ok(_), Some(momentum)) = (&report, accepted) {
            self.momentum = Some(momentum);
        }
        report
    }
}
