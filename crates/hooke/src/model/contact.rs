//! Contact with analytic obstacles by penalty (Kharevych 2010 thesis, §3.2.10): each vertex at
//! penetration depth d > 0 stores ½ κ m d², m its lumped mass. With κ per unit
//! mass (1/s²) the contact frequency √κ, and so the bounce, is the same at any
//! mesh resolution. The penalty is a potential, so every integrator uses it and
//! energy-conserving ones keep it through a bounce. Explicit methods may also
//! project penetrating vertices back onto the surface (closest-point projection,
//! Chen 2019 thesis, ch. 4).

use super::term::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use crate::error::Result;
use crate::linalg::LowerPattern;
use nalgebra::{Matrix3, Vector3};

/// A rigid, fixed obstacle: points must stay out of it.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ObstacleShape {
    /// The half-space behind a plane: (x − point)·n̂ < 0 is inside.
    Plane {
        /// A point of the plane, m.
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        point: [f64; 3],
        /// The plane's normal n, pointing out of the obstacle (any length but zero).
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        normal: [f64; 3],
    },
    /// A solid ball.
    Sphere {
        /// Centre, m.
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        center: [f64; 3],
        /// Radius, m.
        radius: f64,
    },
    /// A solid axis-aligned box.
    Box {
        /// The corner with the smallest coordinates, m.
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        min: [f64; 3],
        /// The corner with the largest coordinates, m.
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        max: [f64; 3],
    },
    /// A solid ring (3D only): the points within `minor_radius` of the circle
    /// of `major_radius` about `center` in the plane normal to `axis`.
    Torus {
        /// The ring's centre, m.
        center: [f64; 3],
        /// Direction of the ring's axis (any length but zero).
        axis: [f64; 3],
        /// From the centre to the tube's centre line, m.
        major_radius: f64,
        /// Radius of the tube, m.
        minor_radius: f64,
    },
    /// A fixed triangle surface from a file (OBJ, STL or PLY; open surfaces
    /// allowed), for barrier contact (`[contact]`) only: it has no inside a
    /// penalty could measure.
    Mesh {
        /// The file, relative to the scene's folder.
        file: String,
        /// Its welded vertices and triangles, m, read when the scene is built.
        #[serde(skip)]
        surface: Option<std::sync::Arc<crate::mesh::TriangleSoup>>,
    },
}

/// An obstacle with its penalty stiffness.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Obstacle {
    /// The obstacle's solid.
    pub shape: ObstacleShape,
    /// κ, 1/s²: penalty stiffness per unit mass; required for penalty
    /// contact, refused with barrier contact (`[contact]`), where the
    /// obstacle takes part in the barrier instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stiffness: Option<f64>,
    /// Explicit integrators move penetrating vertices onto the surface and remove
    /// their inward normal velocity.
    #[serde(default)]
    pub project: bool,
    /// A prescribed rigid motion (barrier contact only; planes translate only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub motion: Option<super::ObstacleMotion>,
}

/// Signed distance (negative inside) and outward unit normal at a point, with the
/// normal's derivative ∂n/∂x where the surface is curved.
pub struct Proximity {
    pub distance: f64,
    pub normal: Vector3<f64>,
    pub normal_derivative: Matrix3<f64>,
}

impl ObstacleShape {
    /// The signed distance from `x` to the surface, the outward normal there
    /// and the normal's derivative.
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
            ObstacleShape::Torus {
                center,
                axis,
                major_radius,
                minor_radius,
            } => torus_proximity(
                &(x - Vector3::from(*center)),
                &Vector3::from(*axis).normalize(),
                *major_radius,
                *minor_radius,
            ),
            // No inside: a penalty never acts (the scene refuses it without [contact]).
            ObstacleShape::Mesh { .. } => Proximity {
                distance: f64::INFINITY,
                normal: Vector3::z(),
                normal_derivative: Matrix3::zeros(),
            },
        }
    }
}

/// Proximity to a solid torus about the origin. With e the unit radial
/// direction of x in the ring's plane (distance ρ from the axis) and h its
/// height along the axis a, the nearest point of the core circle is R e and
/// q = x − R e = (ρ − R) e + h a; the distance is |q| − r and the normal
/// n = q/|q|. Moving around the ring turns n with e, which gives
/// ∂n/∂x = [(I − n nᵀ) − (R/ρ) t tᵀ] / |q|, t = a × e.
fn torus_proximity(x: &Vector3<f64>, a: &Vector3<f64>, major: f64, minor: f64) -> Proximity {
    let height = x.dot(a);
    let planar = x - a * height;
    let rho = planar.norm();
    // On the axis every radial direction is nearest alike: take any.
    let e = if rho > 0.0 {
        planar / rho
    } else {
        crate::linalg::orthogonal_unit(a)
    };
    let q = x - e * major;
    let length = q.norm();
    let n = if length > 0.0 { q / length } else { *a };
    let normal_derivative = if length > 0.0 && rho > 0.0 {
        let t = a.cross(&e);
        ((Matrix3::identity() - n * n.transpose()) - t * t.transpose() * (major / rho)) / length
    } else {
        Matrix3::zeros()
    };
    Proximity {
        distance: length - minor,
        normal: n,
        normal_derivative,
    }
}

impl Obstacle {
    /// The shape where the obstacle's motion has it at `time` (as given
    /// when it does not move): for drawing.
    pub fn shape_at(&self, time: f64) -> ObstacleShape {
        let Some(motion) = &self.motion else {
            return self.shape.clone();
        };
        let pose = motion.pose(time);
        match &self.shape {
            ObstacleShape::Plane { point, normal } => ObstacleShape::Plane {
                point: pose.apply(&Vector3::from(*point)).into(),
                normal: pose.turn(&Vector3::from(*normal)).into(),
            },
            ObstacleShape::Mesh { file, surface } => ObstacleShape::Mesh {
                file: file.clone(),
                surface: surface.as_ref().map(|s| {
                    let mut moved = (**s).clone();
                    moved.vertices.iter_mut().for_each(|p| *p = pose.apply(p));
                    std::sync::Arc::new(moved)
                }),
            },
            // Penalty obstacles do not move (the scene refuses a motion for them).
            other => other.clone(),
        }
    }

    /// Penalty energy, gradient (3) and Hessian (3×3) of one vertex of mass m;
    /// None when it does not penetrate. `project` drops the curvature term, which
    /// is negative inside a sphere, so that the Hessian is positive semi-definite.
    pub fn penalty(&self, x: &Vector3<f64>, mass: f64, project: bool) -> Option<(f64, Vector3<f64>, Matrix3<f64>)> {
        let proximity = self.shape.proximity(x);
        if proximity.distance >= 0.0 {
            return None;
        }
        let k = self.stiffness.unwrap_or(0.0) * mass;
        let d = proximity.distance;
        let n = proximity.normal;
        let mut hessian = n * n.transpose() * k;
        if !project {
            hessian += proximity.normal_derivative * (k * d);
        }
        Some((0.5 * k * d * d, n * (k * d), hessian))
    }
}

/// A vertex's position as a 3-vector (z = 0 in 2D).
#[inline]
pub fn vertex_point(x: &[f64], v: usize, dimension: usize) -> Vector3<f64> {
    let mut p = Vector3::zeros();
    p.as_mut_slice()[..dimension].copy_from_slice(&x[dimension * v..dimension * (v + 1)]);
    p
}

/// The penalties of all obstacles on all vertices, as one term of the potential.
#[derive(Clone, Debug)]
pub struct ContactPenalty {
    obstacles: Vec<Obstacle>,
    /// Lumped mass of each vertex (the penalty stiffness is per unit mass).
    masses: Vec<f64>,
    dimension: usize,
    /// Positions of each vertex's diagonal block (lower triangle, row by row) in the pattern.
    blocks: Vec<[usize; 6]>,
}

impl ContactPenalty {
    /// The penalties of `obstacles` on vertices of lumped `masses` (kg), with
    /// `dimension` coordinates per vertex.
    pub fn new(obstacles: Vec<Obstacle>, masses: Vec<f64>, dimension: usize) -> ContactPenalty {
        ContactPenalty {
            obstacles,
            masses,
            dimension,
            blocks: Vec::new(),
        }
    }

    /// (vertex, energy, gradient, Hessian) of every penetrating vertex, obstacle by obstacle.
    fn penalties<'a>(
        &'a self,
        x: &'a [f64],
        project: bool,
    ) -> impl Iterator<Item = (usize, f64, Vector3<f64>, Matrix3<f64>)> + 'a {
        let d = self.dimension;
        self.obstacles.iter().flat_map(move |obstacle| {
            (0..x.len() / d).filter_map(move |v| {
                obstacle
                    .penalty(&vertex_point(x, v, d), self.masses[v], project)
                    .map(|(e, g, h)| (v, e, g, h))
            })
        })
    }

    fn add_block(&self, values: &mut [f64], v: usize, h: &Matrix3<f64>) {
        let d = self.dimension;
        let mut n = 0;
        for a in 0..d {
            for b in 0..=a {
                values[self.blocks[v][n]] += h[(a, b)];
                n += 1;
            }
        }
    }
}

/// Deepest penetration of the vertices at x into any of the obstacles (0 when none).
pub fn max_penetration(obstacles: &[Obstacle], x: &[f64], dimension: usize) -> f64 {
    let mut deepest: f64 = 0.0;
    for obstacle in obstacles {
        for v in 0..x.len() / dimension {
            deepest = deepest.max(-obstacle.shape.proximity(&vertex_point(x, v, dimension)).distance);
        }
    }
    deepest
}

/// Moves vertices that penetrate a projecting obstacle onto its surface and
/// removes their inward normal velocity (explicit methods, Chen 2019 thesis, ch. 4).
pub fn project_out_of_obstacles(
    obstacles: &[Obstacle],
    dimension: usize,
    positions: &mut [f64],
    velocities: &mut [f64],
) {
    let d = dimension;
    for obstacle in obstacles.iter().filter(|o| o.project) {
        for (p, v) in positions.chunks_mut(d).zip(velocities.chunks_mut(d)) {
            let mut x = Vector3::zeros();
            x.as_mut_slice()[..d].copy_from_slice(p);
            let proximity = obstacle.shape.proximity(&x);
            if proximity.distance < 0.0 {
                let surface = x - proximity.normal * proximity.distance;
                p.copy_from_slice(&surface.as_slice()[..d]);
                let inward = (0..d).map(|a| v[a] * proximity.normal[a]).sum::<f64>().min(0.0);
                for a in 0..d {
                    v[a] -= inward * proximity.normal[a];
                }
            }
        }
    }
}

impl EnergyTerm for ContactPenalty {
    fn name(&self) -> String {
        format!("contact penalties of {} obstacles", self.obstacles.len())
    }

    fn kind(&self) -> TermKind {
        TermKind::Contact
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            material_stiffness: true,
            ..TermCapabilities::SMOOTH
        }
    }

    fn bind(&mut self, pattern: &LowerPattern, dimension: usize) {
        let d = dimension;
        self.blocks = (0..pattern.size / d)
            .map(|v| {
                let mut slots = [0; 6];
                let mut n = 0;
                for a in 0..d {
                    for b in 0..=a {
                        slots[n] = pattern
                            .position(d * v + a, d * v + b)
                            .expect("every vertex's own block is in the pattern");
                        n += 1;
                    }
                }
                slots
            })
            .collect();
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        self.penalties(x, true).map(|(_, e, _, _)| e).sum()
    }

    fn gradient(&self, x: &[f64], _time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        let d = self.dimension;
        let mut energy = 0.0;
        for (v, e, g, _) in self.penalties(x, true) {
            energy += e;
            for a in 0..d {
                gradient[d * v + a] += g[a];
            }
        }
        Ok(energy)
    }

    fn hessian(
        &self,
        x: &[f64],
        _time: f64,
        project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
            hessian.values.fill(0.0);
        }
        let d = self.dimension;
        let mut energy = 0.0;
        for (v, e, g, h) in self.penalties(x, project) {
            energy += e;
            for a in 0..d {
                gradient[d * v + a] += g[a];
            }
            self.add_block(hessian.values, v, &h);
        }
        Ok(energy)
    }

    fn add_material_stiffness(&self, x: &[f64], _time: f64, values: &mut [f64]) {
        for (v, _, _, h) in self.penalties(x, true) {
            self.add_block(values, v, &h);
        }
    }
}
