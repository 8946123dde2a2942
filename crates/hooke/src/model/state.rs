//! The evolving state of a simulation.

/// Positions and velocities of every vertex (interleaved x, y(, z): `Model::dimension` per vertex) at a time.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct State {
    pub time: f64,
    pub positions: Vec<f64>,
    pub velocities: Vec<f64>,
}

impl State {
    /// True when every position and velocity is finite.
    pub fn is_finite(&self) -> bool {
        self.positions.iter().chain(&self.velocities).all(|v| v.is_finite())
    }
}
