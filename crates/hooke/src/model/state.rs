//! The evolving state of a simulation.

/// Positions and velocities of every vertex (interleaved x, y(, z): `Model::dimension` per vertex) at a time.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct State {
    /// Simulation time, s.
    pub time: f64,
    /// Vertex positions, m, interleaved.
    pub positions: Vec<f64>,
    /// Vertex velocities, m/s, interleaved.
    pub velocities: Vec<f64>,
}

impl State {
    /// True when every position and velocity is finite.
    pub fn is_finite(&self) -> bool {
        self.positions.iter().chain(&self.velocities).all(|v| v.is_finite())
    }
}
