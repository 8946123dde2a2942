//! Pinned vertices: held in place, or moved along a prescribed path, until an
//! optional release time. A pin may hold only some components (a roller, a
//! symmetry plane).

use super::{DofMap, Restriction};
use nalgebra::{Rotation3, Unit, Vector3};
use std::sync::Arc;

/// How pinned vertices move (measured from their rest positions, starting at t = 0).
///
/// Every variant is a struct (even an empty one): serde checks unknown keys only
/// on struct variants of an internally tagged enum.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Motion {
    /// Held at the rest position.
    Fixed {},
    /// x(t) = X + v t.
    Translation {
        /// v, m/s.
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        velocity: [f64; 3],
    },
    /// x(t) = c + v t + R(ω t, axis)(X − c): a rigid rotation about an axis
    /// through `center`, the axis carried along at `velocity` (a screw when v
    /// lies along the axis, as when a rod's end turns and pushes in).
    Rotation {
        /// The z axis when absent (2D scenes leave it out).
        #[serde(
            default = "crate::model::vectors::z_axis",
            deserialize_with = "crate::model::vectors::two_or_three"
        )]
        axis: [f64; 3],
        /// c, m: a point of the axis (in 2D, the point turned about).
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        center: [f64; 3],
        /// Radians per second.
        angular_velocity: f64,
        /// v, m/s: the axis's own velocity (zero when absent).
        #[serde(
            default,
            deserialize_with = "crate::model::vectors::two_or_three",
            skip_serializing_if = "crate::model::vectors::is_zero"
        )]
        velocity: [f64; 3],
    },
    /// x(t) = X + A sin(2π f t); with `cycles = n`, for the first n periods
    /// only, then held at X (where the sine ends at zero).
    Shake {
        /// A, m: the largest displacement from rest.
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        amplitude: [f64; 3],
        /// f, Hz.
        frequency: f64,
        /// The number of periods shaken, then held at rest (None: for ever).
        #[serde(default)]
        cycles: Option<f64>,
    },
    /// x(t) = X + d₀ + v (min(t, t₁) − t₀): a straight segment from the
    /// displacement d₀ at t₀, held from t₁ on. What a program driving a pin
    /// step by step sets (the Python package's `Simulation.move_pin`); not a
    /// scene key.
    #[serde(skip)]
    Segment {
        /// t₀, s: the time at which the displacement is d₀.
        start_time: f64,
        /// t₁, s: the vertices are held from then on.
        end_time: f64,
        /// d₀, m: the displacement from rest at t₀.
        start_displacement: [f64; 3],
        /// v, m/s: the velocity along the segment.
        velocity: [f64; 3],
    },
}

impl Motion {
    /// Position at time t of a vertex whose rest position is `rest`.
    pub fn position(&self, rest: &Vector3<f64>, time: f64) -> Vector3<f64> {
        match self {
            Motion::Fixed {} => *rest,
            Motion::Translation { velocity } => rest + Vector3::from(*velocity) * time,
            Motion::Rotation {
                axis,
                center,
                angular_velocity,
                velocity,
            } => {
                let center = Vector3::from(*center);
                let rotation =
                    Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::from(*axis)), angular_velocity * time);
                center + Vector3::from(*velocity) * time + rotation * (rest - center)
            }
            Motion::Shake { .. } if self.shaking_ended(time) => *rest,
            Motion::Shake {
                amplitude, frequency, ..
            } => rest + Vector3::from(*amplitude) * (2.0 * std::f64::consts::PI * frequency * time).sin(),
            Motion::Segment {
                start_time,
                end_time,
                start_displacement,
                velocity,
            } => {
                rest + Vector3::from(*start_displacement)
                    + Vector3::from(*velocity) * (time.min(*end_time) - start_time)
            }
        }
    }

    /// Velocity at time t of a vertex whose rest position is `rest` (the derivative of [`Motion::position`]).
    pub fn velocity(&self, rest: &Vector3<f64>, time: f64) -> Vector3<f64> {
        match self {
            Motion::Fixed {} => Vector3::zeros(),
            Motion::Translation { velocity } => Vector3::from(*velocity),
            Motion::Rotation {
                axis,
                center,
                angular_velocity,
                velocity,
            } => {
                let axis = Vector3::from(*axis).normalize();
                let velocity = Vector3::from(*velocity);
                let moved_center = Vector3::from(*center) + velocity * time;
                velocity + axis.cross(&(self.position(rest, time) - moved_center)) * *angular_velocity
            }
            Motion::Shake { .. } if self.shaking_ended(time) => Vector3::zeros(),
            Motion::Shake {
                amplitude, frequency, ..
            } => {
                let angular_frequency = 2.0 * std::f64::consts::PI * frequency;
                Vector3::from(*amplitude) * (angular_frequency * (angular_frequency * time).cos())
            }
            // Up to and including t₁ (within rounding), where a step that ends there reads it.
            Motion::Segment { velocity, end_time, .. } if holds(Some(*end_time), time) => Vector3::from(*velocity),
            Motion::Segment { .. } => Vector3::zeros(),
        }
    }
}

impl Motion {
    /// A shake with `cycles` is over once they have passed.
    fn shaking_ended(&self, time: f64) -> bool {
        match self {
            Motion::Shake {
                frequency,
                cycles: Some(cycles),
                ..
            } => time * frequency >= *cycles,
            _ => false,
        }
    }
}

impl Default for Motion {
    fn default() -> Self {
        Motion::Fixed {}
    }
}

/// Whether a pin released at `release_time` still holds at `time`: up to and
/// including the release time (a vertex released at t_r is where its pin puts
/// it at t_r, and moves only after). Times within rounding of t_r count as t_r.
pub fn holds(release_time: Option<f64>, time: f64) -> bool {
    release_time.is_none_or(|release| time <= release + 1e-12 * release.abs().max(1.0))
}

/// Whether a pin with this motion and release time ever moves its vertices or lets them go.
pub fn moves(motion: &Motion, release_time: Option<f64>) -> bool {
    release_time.is_some() || *motion != Motion::Fixed {}
}

/// Every component held.
pub const ALL_COMPONENTS: [bool; 3] = [true, true, true];

/// A group of pinned vertices.
#[derive(Clone, Debug, PartialEq)]
pub struct Pin {
    /// The pinned vertices.
    pub vertices: Vec<usize>,
    /// How the pinned vertices move from their rest positions.
    pub motion: Motion,
    /// From this time on the vertices are free (None: pinned for ever).
    pub release_time: Option<f64>,
    /// Which components (x, y, z) the pin holds; the others stay free.
    pub components: [bool; 3],
    /// The scene key it came from (`pins[2]`), for messages; None for pins made in code.
    pub key: Option<String>,
}

impl Pin {
    /// A pin holding every component.
    pub fn new(vertices: Vec<usize>, motion: Motion, release_time: Option<f64>) -> Pin {
        Pin {
            vertices,
            motion,
            release_time,
            components: ALL_COMPONENTS,
            key: None,
        }
    }

    /// The scene key of the pin, or its place among the model's pins.
    pub fn name(&self, index: usize) -> String {
        self.key.clone().unwrap_or_else(|| format!("pins[{index}]"))
    }

    /// Whether the pin still holds at time t: up to and including its release
    /// time (within rounding). A step from t to t + h treats the pin as
    /// holding when it holds at t + h.
    pub fn is_active(&self, time: f64) -> bool {
        holds(self.release_time, time)
    }
}

impl super::Model {
    /// Adds a group of pinned vertices.
    pub fn add_pin(&mut self, pin: Pin) {
        self.pins.push(pin);
    }

    /// The pins, in the order they were added (a scene's `pins` order).
    pub fn pins(&self) -> &[Pin] {
        &self.pins
    }

    /// Gives pin `index` a new motion from now on (a program driving it step
    /// by step); an error if there is no such pin.
    pub fn set_pin_motion(&mut self, index: usize, motion: Motion) -> crate::Result<()> {
        let count = self.pins.len();
        let pin = self.pins.get_mut(index).ok_or_else(|| {
            crate::HookeError::scene(format!("pins[{index}]"), format!("no such pin (the model has {count})"))
        })?;
        pin.motion = motion;
        Ok(())
    }

    /// Which DOFs are free at time t.
    pub fn dof_map(&self, time: f64) -> DofMap {
        let d = self.dimension();
        let active: Vec<bool> = self.pins.iter().map(|p| p.is_active(time)).collect();
        let pinned = self.pins.iter().filter(|p| p.is_active(time)).flat_map(|p| {
            p.vertices
                .iter()
                .flat_map(move |&v| (0..d).filter(|&a| p.components[a]).map(move |a| d * v + a))
        });
        DofMap::new(self.dof_count(), pinned, active)
    }

    /// The pattern restricted to the free DOFs of `dofs` (cached while the same pins hold).
    pub fn restriction(&self, dofs: &DofMap) -> Arc<Restriction> {
        let mut cache = self.restriction.lock().unwrap_or_else(|p| p.into_inner());
        match cache.as_ref() {
            Some((key, restriction)) if *key == dofs.active_pins => restriction.clone(),
            _ => {
                let restriction = Arc::new(Restriction::new(&self.pattern, dofs));
                *cache = Some((dofs.active_pins.clone(), restriction.clone()));
                restriction
            }
        }
    }

    /// Overwrites the pinned components of vertices pinned at time t with their prescribed values.
    pub fn apply_prescribed_positions(&self, time: f64, positions: &mut [f64]) {
        let d = self.dimension();
        for pin in self.pins.iter().filter(|p| p.is_active(time)) {
            for &v in &pin.vertices {
                let x = pin.motion.position(&self.mesh.vertices()[v], time);
                for a in (0..d).filter(|&a| pin.components[a]) {
                    positions[d * v + a] = x[a];
                }
            }
        }
    }

    /// Overwrites the pinned components' velocities with their motion's velocity at time t.
    pub fn apply_prescribed_velocities(&self, time: f64, velocities: &mut [f64]) {
        let d = self.dimension();
        for pin in self.pins.iter().filter(|p| p.is_active(time)) {
            for &v in &pin.vertices {
                let velocity = pin.motion.velocity(&self.mesh.vertices()[v], time);
                for a in (0..d).filter(|&a| pin.components[a]) {
                    velocities[d * v + a] = velocity[a];
                }
            }
        }
    }
}

#[cfg(test)]
mod motion_tests {
    use super::*;

    /// A shake of whole cycles moves as a sine, then rests where it started.
    #[test]
    fn a_shake_with_cycles_ends_at_rest() {
        let motion = Motion::Shake {
            amplitude: [0.1, 0.0, 0.0],
            frequency: 2.0,
            cycles: Some(1.0),
        };
        let rest = Vector3::new(1.0, 2.0, 3.0);
        let quarter = motion.position(&rest, 0.125);
        assert!((quarter.x - 1.1).abs() < 1e-12);
        assert!(motion.velocity(&rest, 0.1).x.abs() > 0.0);
        for t in [0.5, 0.7, 3.0] {
            assert_eq!(motion.position(&rest, t), rest);
            assert_eq!(motion.velocity(&rest, t), Vector3::zeros());
        }
    }

    /// A screw (a turn whose axis moves): the velocity is the position's
    /// derivative, the centre travels at v and the distance to the axis is kept.
    #[test]
    fn a_rotation_with_a_moving_axis_is_a_screw() {
        let motion = Motion::Rotation {
            axis: [1.0, 0.0, 0.0],
            center: [0.5, 0.0, 0.1],
            angular_velocity: 3.0,
            velocity: [-0.2, 0.05, 0.0],
        };
        let rest = Vector3::new(0.5, 0.03, 0.12);
        for t in [0.0, 0.3, 1.7] {
            let h = 1e-6;
            let derivative = (motion.position(&rest, t + h) - motion.position(&rest, t - h)) / (2.0 * h);
            assert!((derivative - motion.velocity(&rest, t)).norm() < 1e-7, "t = {t}");
            let centre = Vector3::new(0.5 - 0.2 * t, 0.05 * t, 0.1);
            let offset = motion.position(&rest, t) - centre;
            assert!((offset.x).abs() < 1e-12, "the point stays in its plane across the axis");
            assert!((offset.norm() - (0.03f64.hypot(0.02))).abs() < 1e-12);
        }
        let angle: f64 = 3.0 * 0.5;
        let turned = motion.position(&rest, 0.5) - Vector3::new(0.4, 0.025, 0.1);
        let expected = Vector3::new(
            0.0,
            0.03 * angle.cos() - 0.02 * angle.sin(),
            0.03 * angle.sin() + 0.02 * angle.cos(),
        );
        assert!((turned - expected).norm() < 1e-12);
    }
}
