//! Rayleigh damping D = αM + βK.

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
pub struct RayleighDamping {
    /// α, 1/s.
    #[serde(default)]
    pub mass_coefficient: f64,
    /// β, s.
    #[serde(default)]
    pub stiffness_coefficient: f64,
    #[serde(default)]
    pub stiffness: DampingStiffness,
}
