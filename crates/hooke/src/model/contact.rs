//! Contact with analytic obstacles by penalty (seed 001 §3.2.10): each vertex at
//! penetration depth d > 0 stores ½ κ m d², m its lumped mass. With κ per unit
//! mass (1/s²) the contact frequency √κ, and so the bounce, is the same at any
//! mesh resolution. The penalty is a potential, so every integrator uses it and
//! energy-conserving ones keep it through a bounce. Explicit methods may also
//! project penetrating vertices back onto the surface (closest-point projection,
//! seed 000 ch. 4).

use nalgebra::{Matrix3, Vector3};

/// A rigid, fixed obstacle: points must stay out of it.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ObstacleShape {
    /// The half-space behind a plane: (x − point)·n̂ < 0 is inside.
    Plane { point: [f64; 3], normal: [f64; 3] },
    /// A solid ball.
    Sphere { center: [f64; 3], radius: f64 },
    /// A solid axis-aligned box.
    Box { min: [f64; 3], max: [f64; 3] },
}

/// An obstacle with its penalty stiffness.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Obstacle {
    pub shape: ObstacleShape,
    /// κ, 1/s²: penalty stiffness per unit mass.
    pub stiffness: f64,
    /// Explicit integrators move penetrating vertices onto the surface and remove
    /// their inward normal velocity.
    #[serde(default)]
    pub project: bool,
}

/// Signed distance (negative inside) and outward unit normal at a point, with the
/// normal's derivative ∂n/∂x where the surface is curved.
pub struct Proximity {
    pub distance: f64,
    pub normal: Vector3<f64>,
    pub normal_derivative: Matrix3<f64>,
}

impl ObstacleShape {
    pub fn proximity(&self, x: &Vector3<f64>) -> Proximity {
        match self {
            ObstacleShape::Plane { point, normal } => {
                let n = Vector3::from(*normal).normalize();
                Proximity {
                    distance: (x - Vector3::from(*point)).dot(&n),
                    normal: n,
                    normal_derivative: Matrix3::zeros(),
                }
            }
            ObstacleShape::Sphere { center, radius } => {
                let offset = x - Vector3::from(*center);
                let length = offset.norm();
                // At the exact centre any direction is as good as another.
                let n = if length > 0.0 { offset / length } else { Vector3::z() };
                Proximity {
                    distance: length - radius,
                    normal: n,
                    normal_derivative: if length > 0.0 {
                        (Matrix3::identity() - n * n.transpose()) / length
                    } else {
                        Matrix3::zeros()
                    },
                }
            }
            ObstacleShape::Box { min, max } => {
                let (lo, hi) = (Vector3::from(*min), Vector3::from(*max));
                let inside = (0..3).all(|a| x[a] > lo[a] && x[a] < hi[a]);
                if inside {
                    // Nearest face: its outward normal, distance minus the depth.
                    let mut best = (f64::INFINITY, Vector3::zeros());
                    for a in 0..3 {
                        for (depth, sign) in [(x[a] - lo[a], -1.0), (hi[a] - x[a], 1.0)] {
                            if depth < best.0 {
                                let mut n = Vector3::zeros();
                                n[a] = sign;
                                best = (depth, n);
                            }
                        }
                    }
                    Proximity {
                        distance: -best.0,
                        normal: best.1,
                        normal_derivative: Matrix3::zeros(),
                    }
                } else {
                    let nearest = x.sup(&lo).inf(&hi);
                    let offset = x - nearest;
                    let length = offset.norm();
                    Proximity {
                        distance: length,
                        normal: if length > 0.0 { offset / length } else { Vector3::z() },
                        normal_derivative: Matrix3::zeros(),
                    }
                }
            }
        }
    }
}

impl Obstacle {
    /// Penalty energy, gradient (3) and Hessian (3×3) of one vertex of mass m;
    /// None when it does not penetrate. `project` drops the curvature term, which
    /// is negative inside a sphere, so that the Hessian is positive semi-definite.
    pub fn penalty(&self, x: &Vector3<f64>, mass: f64, project: bool) -> Option<(f64, Vector3<f64>, Matrix3<f64>)> {
        let proximity = self.shape.proximity(x);
        if proximity.distance >= 0.0 {
            return None;
        }
        let k = self.stiffness * mass;
        let d = proximity.distance;
        let n = proximity.normal;
        let mut hessian = n * n.transpose() * k;
        if !project {
            hessian += proximity.normal_derivative * (k * d);
        }
        Some((0.5 * k * d * d, n * (k * d), hessian))
    }
}
