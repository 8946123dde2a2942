//! Damping: Rayleigh D = αM + βK, and the viscoelastic damping of seed 001 §2.6.
//!
//! Viscoelastic damping measures the deformation *within* one step with the
//! material's own energy: the previous positions x_k act as the rest shape, and
//! the step receives the impulse −k_D ∇W(F(x_k, x_{k+1})) (an impulse, not a
//! force: no factor h). Its strength per unit of strain rate is k_D (in seconds),
//! so the energy it removes does not depend on the time step, and since W is
//! frame-invariant it exerts no net force or torque.

/// Which stiffness the β term uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DampingStiffness {
    /// K at the rest configuration, computed once (seed 000 eq. 4.7, "K0"); it is
    /// positive semi-definite there, so projecting it changes nothing.
    #[default]
    Rest,
    /// K at the start of each step (projected to positive semi-definite, so that
    /// damping never injects energy).
    Current,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Damping {
    /// α, 1/s.
    #[serde(default)]
    pub mass_coefficient: f64,
    /// β, s.
    #[serde(default)]
    pub stiffness_coefficient: f64,
    #[serde(default)]
    pub stiffness: DampingStiffness,
    /// k_D, s: viscoelastic damping coefficient (0: none).
    #[serde(default)]
    pub viscoelastic_coefficient: f64,
}

impl Damping {
    /// Whether the Rayleigh part is present.
    pub fn has_rayleigh(&self) -> bool {
        self.mass_coefficient != 0.0 || self.stiffness_coefficient != 0.0
    }
}
