//! External forces on regions: a total force (constant plus a sinusoid) spread
//! over the selected vertices in proportion to their mass, so that the same
//! scene behaves alike at every mesh resolution.

use nalgebra::Vector3;

#[derive(Clone, Debug, PartialEq)]
pub struct RegionForce {
    pub vertices: Vec<usize>,
    /// Fraction of the total that each selected vertex receives (sums to 1).
    pub shares: Vec<f64>,
    /// Constant part of the total force, N.
    pub total: Vector3<f64>,
    /// Amplitude of the periodic part, N: total + amplitude · sin(2π f t + phase).
    pub amplitude: Vector3<f64>,
    pub frequency: f64,
    pub phase: f64,
}

impl RegionForce {
    /// The total force at time t.
    pub fn total_at(&self, time: f64) -> Vector3<f64> {
        self.total + self.amplitude * (2.0 * std::f64::consts::PI * self.frequency * time + self.phase).sin()
    }

    /// Adds this force at time t into a full force vector.
    pub fn add_to(&self, time: f64, force: &mut [f64]) {
        let total = self.total_at(time);
        for (&v, &share) in self.vertices.iter().zip(&self.shares) {
            for a in 0..3 {
                force[3 * v + a] += share * total[a];
            }
        }
    }
}
