//! The prescribed rigid motion of an obstacle: a steady screw (a velocity
//! and a spin about a centre) or keyframes of translation and rotation
//! interpolated linearly, as a pose at each time.
//!
//! A pose maps a point p of the obstacle as given in the scene to
//! R (p − c) + c + t: the rotation R about the centre c, then the translation t.

use crate::error::{HookeError, Result};
use nalgebra::{Rotation3, Vector3};

/// One keyframe: the obstacle's translation and rotation (a rotation
/// vector, axis times angle in rad, about the motion's `center`) at `time`.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Keyframe {
    /// s.
    pub time: f64,
    /// m.
    #[serde(default, deserialize_with = "crate::model::vectors::two_or_three")]
    pub translation: [f64; 3],
    /// rad.
    #[serde(default)]
    pub rotation: [f64; 3],
}

/// `motion = { velocity, angular_velocity, center }` or
/// `motion = { keyframes = […], center }`.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ObstacleMotion {
    /// A steady velocity, m/s.
    #[serde(default, deserialize_with = "crate::model::vectors::two_or_three")]
    pub velocity: [f64; 3],
    /// A steady spin about `center`, rad/s (a vector along the axis).
    #[serde(default)]
    pub angular_velocity: [f64; 3],
    /// The centre rotations turn about, m (default the origin).
    #[serde(default, deserialize_with = "crate::model::vectors::two_or_three")]
    pub center: [f64; 3],
    /// Keyframes in increasing time, instead of a steady motion: the pose is
    /// the first key's before it, the last key's after it, and linear in
    /// translation and rotation vector between keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keyframes: Vec<Keyframe>,
}

/// A rigid pose: p ↦ rotation (p − center) + center + translation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// R.
    pub rotation: Rotation3<f64>,
    /// c, m: the point R turns about.
    pub center: Vector3<f64>,
    /// t, m: applied after the rotation.
    pub translation: Vector3<f64>,
}

impl Pose {
    /// Where the pose takes point `p`.
    pub fn apply(&self, p: &Vector3<f64>) -> Vector3<f64> {
        self.rotation * (p - self.center) + self.center + self.translation
    }

    /// Where the pose turns direction `n`.
    pub fn turn(&self, n: &Vector3<f64>) -> Vector3<f64> {
        self.rotation * n
    }

    /// Whether it rotates at all.
    pub fn rotates(&self) -> bool {
        self.rotation.angle() != 0.0
    }
}

impl ObstacleMotion {
    /// Refuses numbers that are not finite and keyframes out of order or
    /// mixed with a steady motion, naming the key under `key`.
    pub fn validate(&self, key: &str) -> Result<()> {
        let finite = |name: &str, values: &[f64]| match values.iter().all(|v| v.is_finite()) {
            true => Ok(()),
            false => Err(HookeError::scene(format!("{key}.{name}"), "must be finite numbers")),
        };
        finite("velocity", &self.velocity)?;
        finite("angular_velocity", &self.angular_velocity)?;
        finite("center", &self.center)?;
        if self.keyframes.is_empty() {
            return Ok(());
        }
        if self.velocity != [0.0; 3] || self.angular_velocity != [0.0; 3] {
            return Err(HookeError::scene(
                format!("{key}.keyframes"),
                "give keyframes or a steady velocity and angular_velocity, not both",
            ));
        }
        for (k, frame) in self.keyframes.iter().enumerate() {
            let at = format!("{key}.keyframes[{k}]");
            finite(&format!("keyframes[{k}].translation"), &frame.translation)?;
            finite(&format!("keyframes[{k}].rotation"), &frame.rotation)?;
            if !frame.time.is_finite() {
                return Err(HookeError::scene(format!("{at}.time"), "must be a finite time in s"));
            }
            if k > 0 && frame.time <= self.keyframes[k - 1].time {
                return Err(HookeError::scene(
                    format!("{at}.time"),
                    format!(
                        "keyframes must come in increasing time: {} s follows {} s",
                        frame.time,
                        self.keyframes[k - 1].time
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The pose at `time`.
    pub fn pose(&self, time: f64) -> Pose {
        let center = Vector3::from(self.center);
        let (translation, rotation) = match self.keyframes.as_slice() {
            [] => (
                Vector3::from(self.velocity) * time,
                Vector3::from(self.angular_velocity) * time,
            ),
            frames => {
                let key = |f: &Keyframe| (Vector3::from(f.translation), Vector3::from(f.rotation));
                let first = &frames[0];
                let last = &frames[frames.len() - 1];
                if time <= first.time {
                    key(first)
                } else if time >= last.time {
                    key(last)
                } else {
                    let next = frames
                        .iter()
                        .position(|f| f.time > time)
                        .expect("time is before the last key");
                    let (a, b) = (&frames[next - 1], &frames[next]);
                    let s = (time - a.time) / (b.time - a.time);
                    let ((ta, ra), (tb, rb)) = (key(a), key(b));
                    (ta + s * (tb - ta), ra + s * (rb - ra))
                }
            }
        };
        Pose {
            rotation: Rotation3::from_scaled_axis(rotation),
            center,
            translation,
        }
    }

    /// Whether the obstacle ever turns.
    pub fn rotates(&self) -> bool {
        self.angular_velocity != [0.0; 3] || self.keyframes.iter().any(|k| k.rotation != [0.0; 3])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyframes_interpolate_linearly_and_hold_outside_their_span() {
        let motion = ObstacleMotion {
            keyframes: vec![
                Keyframe {
                    time: 1.0,
                    translation: [0.0, 0.0, 0.0],
                    rotation: [0.0, 0.0, 0.0],
                },
                Keyframe {
                    time: 3.0,
                    translation: [2.0, 0.0, 0.0],
                    rotation: [0.0, 0.0, std::f64::consts::FRAC_PI_2],
                },
            ],
            center: [1.0, 0.0, 0.0],
            ..Default::default()
        };
        motion.validate("m").unwrap();
        let p = Vector3::new(2.0, 0.0, 0.0);
        assert_eq!(motion.pose(0.0).apply(&p), p);
        // Halfway: moved 1 m along x and turned 45° about z through (1, 0, 0).
        let half = motion.pose(2.0).apply(&p);
        let s = std::f64::consts::FRAC_1_SQRT_2;
        assert!((half - Vector3::new(2.0 + s, s, 0.0)).norm() < 1e-12, "{half}");
        let end = motion.pose(10.0).apply(&p);
        assert!((end - Vector3::new(3.0, 1.0, 0.0)).norm() < 1e-12, "{end}");
    }

    #[test]
    fn a_steady_motion_moves_at_its_velocity_and_keyframes_out_of_order_are_refused() {
        let motion = ObstacleMotion {
            velocity: [0.0, 0.0, -0.5],
            ..Default::default()
        };
        let p = motion.pose(2.0).apply(&Vector3::zeros());
        assert!((p - Vector3::new(0.0, 0.0, -1.0)).norm() < 1e-15);
        let backwards = ObstacleMotion {
            keyframes: vec![
                Keyframe {
                    time: 1.0,
                    translation: [0.0; 3],
                    rotation: [0.0; 3],
                },
                Keyframe {
                    time: 0.5,
                    translation: [0.0; 3],
                    rotation: [0.0; 3],
                },
            ],
            ..Default::default()
        };
        let message = backwards.validate("obstacles[0].motion").unwrap_err().to_string();
        assert!(message.contains("obstacles[0].motion.keyframes[1].time"), "{message}");
    }
}
