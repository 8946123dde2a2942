//! Vectors as scenes write them: 3 components in 3D scenes, 2 in 2D ones (z is
//! then 0). The scene format's fields read either length through these
//! functions; the scene check then holds every vector to its scene's dimension
//! and names the key that differs.

use serde::Deserialize;

/// Reads [x, y] or [x, y, z] into [x, y, z] (z = 0 when absent).
pub fn two_or_three<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<[f64; 3], D::Error> {
    let values = Vec::<f64>::deserialize(deserializer)?;
    match values.as_slice() {
        [x, y] => Ok([*x, *y, 0.0]),
        [x, y, z] => Ok([*x, *y, *z]),
        other => Err(serde::de::Error::invalid_length(other.len(), &"2 or 3 numbers")),
    }
}

/// An angular velocity: a 3-vector in 3D, a number ω (about z) in 2D.
pub fn angular<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<[f64; 3], D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Angular {
        About(f64),
        Vector(Vec<f64>),
    }
    match Angular::deserialize(deserializer)? {
        Angular::About(omega) => Ok([0.0, 0.0, omega]),
        Angular::Vector(v) if v.len() == 3 => Ok([v[0], v[1], v[2]]),
        Angular::Vector(v) => Err(serde::de::Error::invalid_length(
            v.len(),
            &"3 numbers (a number, the rate about z, in 2D)",
        )),
    }
}

/// The z axis, the rotation axis of 2D scenes.
pub fn z_axis() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}

/// Whether a vector is zero: an optional vector at its default is left out
/// when a scene is written back.
pub fn is_zero(vector: &[f64; 3]) -> bool {
    vector.iter().all(|c| *c == 0.0)
}
