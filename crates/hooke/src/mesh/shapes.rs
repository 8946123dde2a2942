//! Solids described by signed distance functions (negative inside), combined
//! by union, intersection, difference and repetition, for meshing (the
//! stuffing mesher) and for picking material regions by shape.
//!
//! The combinations return the usual bounds (min/max of the parts), which are
//! exact signs and Lipschitz-1 but may underestimate distance away from the
//! surface; the mesher only needs the sign and the root along short segments.

use super::TriangleSoup;
use crate::error::{HookeError, Result};
use nalgebra::Vector3;
use std::f64::consts::PI;
use std::sync::Arc;

/// A solid. In scene files: `{ ball = { center = [0, 0, 0], radius = 0.1 } }`,
/// `{ union = [ {...}, {...} ] }`, `{ surface = { file = "part.stl" } }`, and so on.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Shape {
    /// Axis-aligned box [min, max].
    Box {
        /// The corner with the smallest coordinates, m.
        min: [f64; 3],
        /// The corner with the largest coordinates, m (above `min` along every axis).
        max: [f64; 3],
    },
    /// A ball.
    Ball {
        /// Centre, m.
        center: [f64; 3],
        /// Radius, m.
        radius: f64,
    },
    /// Capped cylinder around the segment start–end.
    Cylinder {
        /// Centre of one cap, m.
        start: [f64; 3],
        /// Centre of the other cap, m.
        end: [f64; 3],
        /// Radius, m.
        radius: f64,
    },
    /// All points within `radius` of the segment start–end.
    Capsule {
        /// One end of the segment, m.
        start: [f64; 3],
        /// The other end of the segment, m.
        end: [f64; 3],
        /// Radius, m.
        radius: f64,
    },
    /// Ring around `axis` through `center`.
    Torus {
        /// The ring's centre, m.
        center: [f64; 3],
        /// Direction of the ring's axis, any length but zero (default `[0, 0, 1]`).
        #[serde(default = "default_axis")]
        axis: [f64; 3],
        /// From the centre to the tube's centre line, m.
        major_radius: f64,
        /// Radius of the tube, m.
        minor_radius: f64,
    },
    /// A coiled tube (a rope): the helix of `radius` around the z axis through
    /// `center`, rising `pitch` per turn from `center`, swept by a ball of radius `thickness`.
    Helix {
        /// The point on the coil's axis at the height it starts from, m.
        center: [f64; 3],
        /// From the axis to the tube's centre line, m.
        radius: f64,
        /// Rise along z per turn, m.
        pitch: f64,
        /// Number of turns (need not be whole).
        turns: f64,
        /// Radius of the tube, m.
        thickness: f64,
    },
    /// Regular hexagonal prism along z: `radius` from the axis to a corner.
    HexagonalPrism {
        /// The prism's centre, m.
        center: [f64; 3],
        /// From the axis to a corner (a corner lies along x), m.
        radius: f64,
        /// Length along z, centred on `center`, m.
        height: f64,
    },
    /// The points inside any of the shapes (at least one).
    Union(Vec<Shape>),
    /// The points inside all of the shapes (at least one).
    Intersection(Vec<Shape>),
    /// `base` with every shape of `subtract` removed.
    Difference {
        /// The solid the others are removed from.
        base: Box<Shape>,
        /// The solids removed from `base`.
        subtract: Vec<Shape>,
    },
    /// `count` copies of `shape` spaced by `spacing` along x, y, z; with
    /// `stagger`, every odd row along y shifts by half a spacing in x (a
    /// honeycomb's hexagons, a brick bond).
    Repeat {
        /// The shape copied; the first copy is the shape itself.
        shape: Box<Shape>,
        /// The offsets between copies along x, y and z, m.
        spacing: [f64; 3],
        /// Copies along x, y and z (each at least 1).
        count: [usize; 3],
        /// Shift every odd row along y by half a spacing in x (default false).
        #[serde(default)]
        stagger: bool,
    },
    /// A closed triangle surface (OBJ, STL or PLY), inside by winding number.
    Surface {
        /// The surface file (.obj, .stl ASCII or binary, .ply), relative to the scene's folder.
        file: String,
        /// The surface as read by [`Shape::prepare`] (None before: the shape
        /// then contains nothing); not a scene key.
        #[serde(skip)]
        loaded: Option<Arc<TriangleSoup>>,
    },
}

fn default_axis() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}

fn v(a: [f64; 3]) -> Vector3<f64> {
    Vector3::from(a)
}

/// Capped extrusion: combines an in-plane distance and an axial one.
fn extrude(planar: f64, axial: f64) -> f64 {
    planar.max(axial).min(0.0) + (planar.max(0.0).powi(2) + axial.max(0.0).powi(2)).sqrt()
}

fn segment_distance(p: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
    let ab = b - a;
    let t = ((p - a).dot(&ab) / ab.norm_squared().max(f64::MIN_POSITIVE)).clamp(0.0, 1.0);
    (p - (a + ab * t)).norm()
}

impl Shape {
    /// Signed distance (bound) at `p`: negative inside.
    pub fn distance(&self, p: &Vector3<f64>) -> f64 {
        match self {
            Shape::Box { min, max } => {
                let (lo, hi) = (v(*min), v(*max));
                let q = (p - (lo + hi) * 0.5).abs() - (hi - lo) * 0.5;
                q.sup(&Vector3::zeros()).norm() + q.max().min(0.0)
            }
            Shape::Ball { center, radius } => (p - v(*center)).norm() - radius,
            Shape::Cylinder { start, end, radius } => {
                let (a, b) = (v(*start), v(*end));
                let length = (b - a).norm();
                let axis = (b - a) / length;
                let t = (p - a).dot(&axis);
                let radial = (p - a - axis * t).norm();
                extrude(radial - radius, (t - 0.5 * length).abs() - 0.5 * length)
            }
            Shape::Capsule { start, end, radius } => segment_distance(p, &v(*start), &v(*end)) - radius,
            Shape::Torus {
                center,
                axis,
                major_radius,
                minor_radius,
            } => {
                let n = v(*axis).normalize();
                let q = p - v(*center);
                let along = q.dot(&n);
                let radial = (q - n * along).norm();
                ((radial - major_radius).powi(2) + along * along).sqrt() - minor_radius
            }
            Shape::Helix {
                center,
                radius,
                pitch,
                turns,
                thickness,
            } => helix_distance(&(p - v(*center)), *radius, *pitch, *turns) - thickness,
            Shape::HexagonalPrism { center, radius, height } => {
                let q = p - v(*center);
                extrude(hexagon_distance(q.x, q.y, *radius), q.z.abs() - 0.5 * height)
            }
            Shape::Union(parts) => parts.iter().map(|s| s.distance(p)).fold(f64::INFINITY, f64::min),
            Shape::Intersection(parts) => parts.iter().map(|s| s.distance(p)).fold(f64::NEG_INFINITY, f64::max),
            Shape::Difference { base, subtract } => {
                subtract.iter().map(|s| -s.distance(p)).fold(base.distance(p), f64::max)
            }
            Shape::Repeat {
                shape,
                spacing,
                count,
                stagger,
            } => {
                // The nearest copy and its neighbours (a copy must fit in its cell),
                // measured from the original's centre.
                let (lo, hi) = shape.bounds();
                let centre = (lo + hi) * 0.5;
                let index = |axis: usize, coordinate: f64| -> i64 {
                    let last = count[axis] as i64 - 1;
                    if last <= 0 || spacing[axis] == 0.0 {
                        0
                    } else {
                        (((coordinate - centre[axis]) / spacing[axis]).round() as i64).clamp(0, last)
                    }
                };
                let (j0, k0) = (index(1, p.y), index(2, p.z));
                let mut best = f64::INFINITY;
                for j in (j0 - 1).max(0)..=(j0 + 1).min(count[1] as i64 - 1) {
                    let shift = if *stagger && j % 2 == 1 { 0.5 * spacing[0] } else { 0.0 };
                    let i0 = index(0, p.x - shift);
                    for i in (i0 - 1).max(0)..=(i0 + 1).min(count[0] as i64 - 1) {
                        for k in (k0 - 1).max(0)..=(k0 + 1).min(count[2] as i64 - 1) {
                            let offset = Vector3::new(
                                i as f64 * spacing[0] + shift,
                                j as f64 * spacing[1],
                                k as f64 * spacing[2],
                            );
                            best = best.min(shape.distance(&(p - offset)));
                        }
                    }
                }
                best
            }
            Shape::Surface { loaded, .. } => match loaded {
                Some(soup) => soup.signed_distance(p),
                None => f64::INFINITY,
            },
        }
    }

    /// Whether `p` is inside (distance ≤ 0).
    pub fn contains(&self, p: &Vector3<f64>) -> bool {
        self.distance(p) <= 0.0
    }

    /// An axis-aligned box around the solid.
    pub fn bounds(&self) -> (Vector3<f64>, Vector3<f64>) {
        let around = |c: Vector3<f64>, r: f64| (c - Vector3::repeat(r), c + Vector3::repeat(r));
        match self {
            Shape::Box { min, max } => (v(*min), v(*max)),
            Shape::Ball { center, radius } => around(v(*center), *radius),
            Shape::Cylinder { start, end, radius } | Shape::Capsule { start, end, radius } => {
                let (a, b) = (v(*start), v(*end));
                (
                    a.inf(&b) - Vector3::repeat(*radius),
                    a.sup(&b) + Vector3::repeat(*radius),
                )
            }
            Shape::Torus {
                center,
                major_radius,
                minor_radius,
                ..
            } => around(v(*center), major_radius + minor_radius),
            Shape::Helix {
                center,
                radius,
                pitch,
                turns,
                thickness,
            } => {
                let c = v(*center);
                let reach = radius + thickness;
                let rise = pitch * turns;
                (
                    c + Vector3::new(-reach, -reach, rise.min(0.0) - thickness),
                    c + Vector3::new(reach, reach, rise.max(0.0) + thickness),
                )
            }
            Shape::HexagonalPrism { center, radius, height } => {
                let c = v(*center);
                let half = Vector3::new(*radius, *radius, 0.5 * height);
                (c - half, c + half)
            }
            Shape::Union(parts) => parts.iter().map(Shape::bounds).fold(
                (Vector3::repeat(f64::INFINITY), Vector3::repeat(f64::NEG_INFINITY)),
                |(lo, hi), (a, b)| (lo.inf(&a), hi.sup(&b)),
            ),
            Shape::Intersection(parts) => parts.iter().map(Shape::bounds).fold(
                (Vector3::repeat(f64::NEG_INFINITY), Vector3::repeat(f64::INFINITY)),
                |(lo, hi), (a, b)| (lo.sup(&a), hi.inf(&b)),
            ),
            Shape::Difference { base, .. } => base.bounds(),
            Shape::Repeat {
                shape,
                spacing,
                count,
                stagger,
            } => {
                let (lo, hi) = shape.bounds();
                let mut extent = Vector3::from_fn(|a, _| spacing[a] * (count[a].max(1) - 1) as f64);
                if *stagger && count[1] > 1 {
                    extent.x += 0.5 * spacing[0];
                }
                (lo, hi + extent)
            }
            Shape::Surface { loaded, .. } => loaded
                .as_ref()
                .map(|s| s.bounding_box())
                .unwrap_or((Vector3::zeros(), Vector3::zeros())),
        }
    }

    /// Checks sizes (positive radii, counts, non-empty combinations) and loads
    /// surface files relative to `base`; `key` names the shape in errors.
    /// The surface files in this shape that are not closed, with the number
    /// of their open edges. Their inside is still decided (by winding
    /// number), but near a hole the mesh may not be what was meant.
    pub fn open_surfaces(&self) -> Vec<(String, usize)> {
        match self {
            Shape::Surface { file, loaded } => loaded
                .as_ref()
                .map(|soup| soup.open_edge_count())
                .filter(|&open| open > 0)
                .map(|open| vec![(file.clone(), open)])
                .unwrap_or_default(),
            Shape::Union(shapes) | Shape::Intersection(shapes) => {
                shapes.iter().flat_map(Shape::open_surfaces).collect()
            }
            Shape::Difference { base, subtract } => std::iter::once(base.as_ref())
                .chain(subtract)
                .flat_map(Shape::open_surfaces)
                .collect(),
            Shape::Repeat { shape, .. } => shape.open_surfaces(),
            _ => Vec::new(),
        }
    }

    /// Checks the shape's dimensions (positive radii, `max` > `min`, …) and
    /// reads the surface files it names, relative to `base`, with `read`
    /// (`hooke::io::read_surface` reads .obj, .stl and .ply); `key` names the
    /// shape in errors (such as `bodies[0].mesh.solid.shape`).
    pub fn prepare(&mut self, base: &std::path::Path, key: &str, read: &SurfaceReader) -> Result<()> {
        let positive = |name: &str, value: f64| {
            if value > 0.0 && value.is_finite() {
                Ok(())
            } else {
                Err(HookeError::scene(
                    format!("{key}.{name}"),
                    format!("must be positive, got {value}"),
                ))
            }
        };
        match self {
            Shape::Box { min, max } => {
                if (0..3).any(|a| max[a].partial_cmp(&min[a]) != Some(std::cmp::Ordering::Greater)) {
                    return Err(HookeError::scene(key, "box needs max > min along every axis"));
                }
            }
            Shape::Ball { radius, .. } => positive("radius", *radius)?,
            Shape::Cylinder { start, end, radius } | Shape::Capsule { start, end, radius } => {
                positive("radius", *radius)?;
                if start == end {
                    return Err(HookeError::scene(key, "start and end must differ"));
                }
            }
            Shape::Torus {
                axis,
                major_radius,
                minor_radius,
                ..
            } => {
                positive("major_radius", *major_radius)?;
                positive("minor_radius", *minor_radius)?;
                if v(*axis).norm() == 0.0 {
                    return Err(HookeError::scene(format!("{key}.axis"), "must be non-zero"));
                }
            }
            Shape::Helix {
                radius,
                pitch,
                turns,
                thickness,
                ..
            } => {
                positive("radius", *radius)?;
                positive("turns", *turns)?;
                positive("thickness", *thickness)?;
                if !pitch.is_finite() {
                    return Err(HookeError::scene(format!("{key}.pitch"), "must be finite"));
                }
            }
            Shape::HexagonalPrism { radius, height, .. } => {
                positive("radius", *radius)?;
                positive("height", *height)?;
            }
            Shape::Union(parts) | Shape::Intersection(parts) => {
                if parts.is_empty() {
                    return Err(HookeError::scene(key, "needs at least one shape"));
                }
                for (i, part) in parts.iter_mut().enumerate() {
                    part.prepare(base, &format!("{key}[{i}]"), read)?;
                }
            }
            Shape::Difference { base: inner, subtract } => {
                inner.prepare(base, &format!("{key}.base"), read)?;
                for (i, part) in subtract.iter_mut().enumerate() {
                    part.prepare(base, &format!("{key}.subtract[{i}]"), read)?;
                }
            }
            Shape::Repeat {
                shape, spacing, count, ..
            } => {
                if count.contains(&0) {
                    return Err(HookeError::scene(
                        format!("{key}.count"),
                        "every count must be at least 1",
                    ));
                }
                if spacing.iter().any(|s| !s.is_finite()) {
                    return Err(HookeError::scene(format!("{key}.spacing"), "must be finite"));
                }
                shape.prepare(base, &format!("{key}.shape"), read)?;
            }
            // Already read (a shape prepared twice): keep it.
            Shape::Surface { loaded: Some(_), .. } => {}
            Shape::Surface { file, loaded } => {
                let path = base.join(&*file);
                let soup = read(&path)?;
                if soup.triangles.is_empty() {
                    return Err(HookeError::Mesh {
                        reason: format!("{}: the surface has no triangles", path.display()),
                    });
                }
                *loaded = Some(Arc::new(soup));
            }
        }
        Ok(())
    }
}

/// Reads a closed surface file into a triangle soup (`hooke::io::read_surface`).
pub type SurfaceReader = dyn Fn(&std::path::Path) -> Result<TriangleSoup>;

/// Distance from q (relative to the helix's centre) to the helix curve
/// c(θ) = (R cos θ, R sin θ, pitch θ / 2π), θ ∈ [0, 2π turns].
fn helix_distance(q: &Vector3<f64>, radius: f64, pitch: f64, turns: f64) -> f64 {
    let end = 2.0 * PI * turns;
    let curve = |t: f64| Vector3::new(radius * t.cos(), radius * t.sin(), pitch * t / (2.0 * PI));
    let phi = q.y.atan2(q.x);
    // Candidate windings: the one whose height is nearest q.z, and its neighbours.
    let k0 = if pitch != 0.0 {
        ((q.z * 2.0 * PI / pitch - phi) / (2.0 * PI)).round()
    } else {
        0.0
    };
    let mut candidates = vec![0.0, end];
    for k in [k0 - 1.0, k0, k0 + 1.0] {
        candidates.push((phi + 2.0 * PI * k).clamp(0.0, end));
    }
    candidates
        .into_iter()
        .map(|mut t| {
            // Newton on g(t) = ½|c(t) − q|², clamped to the curve's range.
            for _ in 0..8 {
                let c = curve(t);
                let d1 = Vector3::new(-radius * t.sin(), radius * t.cos(), pitch / (2.0 * PI));
                let d2 = Vector3::new(-radius * t.cos(), -radius * t.sin(), 0.0);
                let g = (c - q).dot(&d1);
                let h = d1.norm_squared() + (c - q).dot(&d2);
                if h <= 0.0 {
                    break;
                }
                t = (t - g / h).clamp(0.0, end);
            }
            (curve(t) - q).norm()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Signed distance to a regular hexagon centred at the origin with corners at
/// distance `radius` on the x axis (flat sides facing ±y).
fn hexagon_distance(x: f64, y: f64, radius: f64) -> f64 {
    let apothem = radius * (PI / 6.0).cos();
    // Fold into the sector between the +y flat side and the next one by symmetry.
    let (kx, ky) = (-(PI / 6.0).cos(), (PI / 6.0).sin()); // the slanted side's mirror normal
    let (mut px, mut py) = (x.abs(), y.abs());
    let along = (kx * px + ky * py).min(0.0);
    px -= 2.0 * along * kx;
    py -= 2.0 * along * ky;
    let half_side = apothem * (PI / 6.0).tan();
    let dx = px - px.clamp(-half_side, half_side);
    let dy = py - apothem;
    (dx * dx + dy * dy).sqrt() * dy.signum()
}
