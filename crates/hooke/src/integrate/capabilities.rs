//! What an integrator can handle, checked against a model when a scene is
//! built (a scene error naming the key, exit status 2) and again before a run
//! steps, instead of failing at some step.

use crate::error::{HookeError, Result};
use crate::model::{moves, Model, TermKind};

/// The model features an integrator supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Viscoelastic damping (Kharevych 2010 thesis, §2.3).
    pub viscoelastic_damping: bool,
    /// Rayleigh damping αM + βK.
    pub rayleigh_damping: bool,
    /// Obstacles (penalty contact, projection).
    pub obstacles: bool,
    /// Surface constraints (`[[constraints]]`).
    pub surface_constraints: bool,
    /// Gravity and forces.
    pub loads: bool,
    /// Pins that move or are released.
    pub moving_pins: bool,
    /// Elements with materials (false: spring networks only).
    pub element_terms: bool,
    /// 2D (plane-strain) models.
    pub two_dimensional: bool,
    /// Reduced coordinates x = x₀ + B u.
    pub reduced_coordinates: bool,
    /// Energy terms whose Hessian has a low-rank part U S Uᵀ.
    pub low_rank_terms: bool,
    /// It uses gradients only (explicit methods), so terms without a Hessian are fine.
    pub gradient_only: bool,
    /// Barrier contact (`[contact]`): every step minimises over the free DOFs
    /// with a minimiser that respects the feasible step bound and adds the
    /// contact pairs' Hessian blocks.
    pub barrier_contact: bool,
}

/// The refusal of viscoelastic damping by an integrator that does not apply it.
pub(crate) fn viscoelastic_refused(integrator: &str) -> HookeError {
    HookeError::scene(
        "damping.viscoelastic_coefficient",
        format!("{integrator} does not handle viscoelastic damping; use backward_euler, implicit_midpoint, variational_midpoint or symplectic_euler"),
    )
}

impl std::fmt::Display for Capabilities {
    /// The features it handles, comma-separated.
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let features = [
            (self.loads, "gravity and forces"),
            (self.moving_pins, "moving and released pins"),
            (self.rayleigh_damping, "Rayleigh damping"),
            (self.viscoelastic_damping, "viscoelastic damping"),
            (self.obstacles, "obstacles"),
            (self.surface_constraints, "surface constraints"),
            (self.element_terms, "elements with materials"),
            (self.two_dimensional, "2D"),
            (self.reduced_coordinates, "reduced coordinates"),
            (self.low_rank_terms, "low-rank stiffness terms"),
            (self.gradient_only, "terms without a Hessian"),
            (self.barrier_contact, "barrier contact"),
        ];
        let names: Vec<&str> = features.iter().filter(|(on, _)| *on).map(|(_, name)| *name).collect();
        f.write_str(&names.join(", "))
    }
}

impl Capabilities {
    /// Everything but surface constraints, viscoelastic damping and reduced coordinates.
    pub const COMMON: Capabilities = Capabilities {
        viscoelastic_damping: false,
        rayleigh_damping: true,
        obstacles: true,
        surface_constraints: false,
        loads: true,
        moving_pins: true,
        element_terms: true,
        two_dimensional: true,
        reduced_coordinates: false,
        low_rank_terms: true,
        gradient_only: false,
        barrier_contact: false,
    };

    /// Refuses a model that needs what `integrator` lacks; the error names the scene key.
    pub fn check(&self, integrator: &str, model: &Model) -> Result<()> {
        let refuse =
            |key: &str, what: &str| Err(HookeError::scene(key, format!("{integrator} does not handle {what}")));
        let damping = model.damping();
        if !self.viscoelastic_damping && damping.is_some_and(|d| d.viscoelastic_coefficient > 0.0) {
            return Err(viscoelastic_refused(integrator));
        }
        if !self.rayleigh_damping && damping.is_some_and(|d| d.has_rayleigh()) {
            return refuse(
                "damping",
                "Rayleigh damping (it would break time symmetry or energy conservation)",
            );
        }
        if !self.obstacles && !model.obstacles().is_empty() {
            return refuse(
                "obstacles",
                "obstacles (they would break time symmetry or energy conservation)",
            );
        }
        if !self.surface_constraints && !model.constraints().is_empty() {
            return refuse(
                "constraints[0]",
                "surface constraints; use variational_midpoint, which enforces them",
            );
        }
        if !self.loads
            && model
                .terms()
                .iter()
                .any(|t| matches!(t.kind(), TermKind::Gravity | TermKind::Load))
        {
            return refuse(
                if model.gravity() != nalgebra::Vector3::zeros() {
                    "gravity"
                } else {
                    "forces"
                },
                "gravity or forces: it integrates conservative elastic motion only",
            );
        }
        if !self.moving_pins {
            if let Some((p, pin)) = model
                .pins()
                .iter()
                .enumerate()
                .find(|(_, p)| moves(&p.motion, p.release_time))
            {
                return refuse(&pin.name(p), "pins that move or are released");
            }
            if let Some(term) = model.terms().iter().find(|t| t.capabilities().time_dependent) {
                return refuse("pins", &format!("{} that moves or is released", term.name()));
            }
        }
        if !self.element_terms {
            if let Some(term) = model
                .terms()
                .iter()
                .find(|t| t.as_elasticity().is_some_and(|e| e.element_count() > 0))
            {
                return refuse("bodies", &format!("{} (it splits spring stiffness only)", term.name()));
            }
        }
        if !self.two_dimensional && model.dimension() == 2 {
            return refuse("dimension", "2D models");
        }
        if !self.low_rank_terms {
            if let Some(term) = model.terms().iter().find(|t| t.capabilities().low_rank) {
                return refuse(
                    "integrator.kind",
                    &format!("{}, whose stiffness has a low-rank part", term.name()),
                );
            }
        }
        if !self.gradient_only {
            if let Some(term) = model.terms().iter().find(|t| !t.capabilities().hessian) {
                return refuse("integrator.kind", &format!("{}, which has no Hessian", term.name()));
            }
        }
        if let Some(term) = model.terms().iter().find(|t| t.changes_couplings()) {
            if !self.barrier_contact {
                return Err(HookeError::scene(
                    "contact",
                    format!(
                        "{integrator} does not handle {}; use backward_euler, implicit_midpoint, bdf2, newmark or static, whose minimisers keep every step free of intersection",
                        term.name()
                    ),
                ));
            }
            if model.subspace().is_some() {
                return refuse("coordinates", "reduced coordinates together with barrier contact");
            }
        }
        if !self.reduced_coordinates && model.subspace().is_some() {
            return refuse(
                "coordinates",
                "reduced coordinates; use backward_euler, implicit_midpoint, bdf2 or static",
            );
        }
        Ok(())
    }
}
