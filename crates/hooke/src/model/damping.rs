//! Damping: Rayleigh D = αM + βK, and the viscoelastic damping of the Kharevych 2010 thesis, §2.3.
//!
//! Viscoelastic damping measures the deformation *within* one step with the
//! material's own energy: the previous positions x_k act as the rest shape, and
//! the step receives the impulse −k_D ∇W(F(x_k, x_{k+1})) (an impulse, not a
//! force: no factor h). Its strength per unit of strain rate is k_D (in seconds),
//! so the energy it removes does not depend on the time step, and since W is
//! frame-invariant it exerts no net force or torque.

use super::{HessianTarget, RebasedElasticity, TermKind};
use crate::error::{HookeError, Result};

/// Which stiffness the β term uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DampingStiffness {
    /// K at the rest configuration, computed once (Chen 2019 thesis, eq. 4.7, "K0"); it is
    /// positive semi-definite there, so projecting it changes nothing.
    #[default]
    Rest,
    /// K at the start of each step (projected to positive semi-definite, so that
    /// damping never injects energy).
    Current,
}

/// The `[damping]` table: Rayleigh damping D = αM + βK, viscoelastic damping
/// and ether drag; every coefficient defaults to 0 (none).
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Damping {
    /// α, 1/s.
    #[serde(default)]
    pub mass_coefficient: f64,
    /// β, s.
    #[serde(default)]
    pub stiffness_coefficient: f64,
    /// Which K the β term uses: `"rest"` (default, once) or `"current"` (each step's start).
    #[serde(default)]
    pub stiffness: DampingStiffness,
    /// k_D, s: viscoelastic damping coefficient (0: none).
    #[serde(default)]
    pub viscoelastic_coefficient: f64,
    /// c in [0, 1): ether drag (Liu 2018 thesis, §8.6): each step starts from the
    /// free DOFs' velocities times 1 − c, a drag on all motion, rigid included.
    #[serde(default)]
    pub ether_drag: f64,
}

/// The largest damping coefficient taken (in its own unit, 1/s or s): a
/// larger one is an error in the input, not a damping anything could use
/// (it would only overflow the step's matrix).
const LARGEST_COEFFICIENT: f64 = 1e30;

impl Damping {
    /// Refuses a coefficient that is not a number, infinite, negative or
    /// absurdly large, naming it: such a value would pass as input and fail
    /// later as a solver error.
    pub fn check_coefficients(&self) -> Result<()> {
        let coefficients = [
            ("mass_coefficient", self.mass_coefficient, "1/s"),
            ("stiffness_coefficient", self.stiffness_coefficient, "s"),
            ("viscoelastic_coefficient", self.viscoelastic_coefficient, "s"),
            ("ether_drag", self.ether_drag, "a fraction"),
        ];
        for (key, value, unit) in coefficients {
            if !(0.0..=LARGEST_COEFFICIENT).contains(&value) {
                let why = match value.is_finite() {
                    false => format!("must be a finite number ({unit}), got {value}"),
                    true if value < 0.0 => format!("must be ≥ 0 ({unit}): negative damping adds energy, got {value}"),
                    true => format!("{value:e} ({unit}) is beyond any damping (the limit is {LARGEST_COEFFICIENT:e})"),
                };
                return Err(HookeError::scene(format!("damping.{key}"), why));
            }
        }
        Ok(())
    }

    /// Whether the Rayleigh part is present.
    pub fn has_rayleigh(&self) -> bool {
        self.mass_coefficient != 0.0 || self.stiffness_coefficient != 0.0
    }
}

impl super::Model {
    /// Sets the damping; with the rest stiffness, K(rest) is assembled here once.
    /// Viscoelastic damping needs rotation-invariant materials and elements only.
    pub fn set_damping(&mut self, damping: Option<Damping>) -> Result<()> {
        if let Some(d) = damping {
            d.check_coefficients()?;
        }
        if let Some(c) = damping.map(|d| d.ether_drag) {
            if !(0.0..1.0).contains(&c) {
                return Err(HookeError::scene(
                    "damping.ether_drag",
                    format!("must lie in [0, 1) (the fraction of velocity a step removes), got {c}"),
                ));
            }
        }
        if damping.is_some_and(|d| d.viscoelastic_coefficient > 0.0) {
            let reason = if self.materials().iter().any(|m| !m.capabilities().rotation_invariant) {
                Some("it needs a rotation-invariant material; linear elasticity would damp rigid rotation (Kharevych's thesis, §2.3, uses it with non-linear materials only)".to_string())
            } else {
                self.terms
                    .iter()
                    .find(|t| t.kind() == TermKind::Elastic && t.as_elasticity().is_none())
                    .map(|t| {
                        format!(
                            "it acts on elements with materials only; this model has {}, which would stay undamped",
                            t.name()
                        )
                    })
            };
            if let Some(reason) = reason {
                return Err(HookeError::scene("damping.viscoelastic_coefficient", reason));
            }
        }
        self.damping = damping;
        self.rest_damping_values = None;
        if let Some(d) = damping.filter(Damping::has_rayleigh) {
            if d.stiffness == DampingStiffness::Rest {
                let rest = self.rest_positions();
                self.rest_damping_values = Some(self.damping_values_at(&d, &rest)?);
            }
        }
        Ok(())
    }

    /// The model's damping (None: undamped).
    pub fn damping(&self) -> Option<Damping> {
        self.damping
    }

    /// α M + β K_elastic(x), K projected to PSD.
    fn damping_values_at(&self, damping: &Damping, x: &[f64]) -> Result<Vec<f64>> {
        let mut values = vec![0.0; self.pattern.nonzeros()];
        if damping.stiffness_coefficient != 0.0 {
            let mut gradient = vec![0.0; x.len()];
            let mut low_rank = Vec::new();
            for term in self.terms.iter().filter(|t| t.kind() == TermKind::Elastic) {
                let mut target = HessianTarget {
                    values: &mut values,
                    low_rank: &mut low_rank,
                };
                term.hessian(x, 0.0, true, &mut gradient, &mut target, false)?;
            }
        }
        for (v, m) in values.iter_mut().zip(self.mass.values()) {
            *v = damping.stiffness_coefficient * *v + damping.mass_coefficient * m;
        }
        Ok(values)
    }

    /// The damping matrix D = αM + βK on the pattern for a step starting at `x`
    /// (None without damping); borrowed when it uses the rest stiffness.
    pub fn damping_values(&self, x: &[f64]) -> Result<Option<std::borrow::Cow<'_, [f64]>>> {
        match (&self.damping.filter(Damping::has_rayleigh), &self.rest_damping_values) {
            (None, _) => Ok(None),
            (Some(_), Some(rest)) => Ok(Some(std::borrow::Cow::Borrowed(rest))),
            (Some(d), None) => self.damping_values_at(d, x).map(|v| Some(std::borrow::Cow::Owned(v))),
        }
    }

    /// The velocities a step starts from under ether drag at `time`: the free
    /// DOFs' scaled by 1 − c (pinned ones keep their prescribed velocity);
    /// None without drag.
    pub fn dragged_velocities(&self, velocities: &[f64], time: f64) -> Option<Vec<f64>> {
        let c = self.damping.map_or(0.0, |d| d.ether_drag);
        if c == 0.0 {
            return None;
        }
        let dofs = self.dof_map(time);
        let mut dragged = velocities.to_vec();
        for &dof in &dofs.free_dofs {
            dragged[dof] *= 1.0 - c;
        }
        Some(dragged)
    }

    /// The kinetic energy ether drag removes at the start of a step at `time`:
    /// ½ vᵀMv − ½ ṽᵀMṽ (0 without drag).
    pub fn ether_drag_work(&self, velocities: &[f64], time: f64) -> f64 {
        match self.dragged_velocities(velocities, time) {
            Some(dragged) => self.kinetic_energy(velocities) - self.kinetic_energy(&dragged),
            None => 0.0,
        }
    }

    /// The viscoelastic damping coefficient k_D (0 without).
    pub fn viscoelastic_coefficient(&self) -> f64 {
        self.damping.map_or(0.0, |d| d.viscoelastic_coefficient)
    }

    /// Work done against the damping forces over a step from `x0` to `x1` of length h:
    /// Rayleigh h v̄ᵀD v̄ with v̄ = (x1 − x0)/h (D as the step used it), and
    /// viscoelastic k_D ∇W_ref(x1)·(x1 − x0) with x0 as the rest shape. This is
    /// the physical dissipation; numerical dissipation is not included.
    pub fn damping_work(&self, x0: &[f64], x1: &[f64], h: f64) -> Result<f64> {
        let displacement: Vec<f64> = x1.iter().zip(x0).map(|(b, a)| b - a).collect();
        let mut work = 0.0;
        if let Some(d) = self.damping_values(x0)? {
            let mut product = vec![0.0; displacement.len()];
            self.pattern.symmetric_multiply(&d, &displacement, &mut product);
            work += product.iter().zip(&displacement).map(|(p, u)| p * u).sum::<f64>() / h;
        }
        let coefficient = self.viscoelastic_coefficient();
        if coefficient > 0.0 {
            let mut gradient = vec![0.0; x1.len()];
            RebasedElasticity::new(self, x0)?.gradient(x1, &mut gradient)?;
            work += coefficient * gradient.iter().zip(&displacement).map(|(g, u)| g * u).sum::<f64>();
        }
        Ok(work)
    }
}
