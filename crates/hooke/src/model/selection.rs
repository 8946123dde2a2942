//! Choosing vertices and elements: by half-space, box, shape, explicit list or label.

use crate::error::{HookeError, Result};
use crate::mesh::{Mesh, Shape};
use nalgebra::Vector3;

/// A set of vertices or elements of a mesh, as a scene describes it.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Selection {
    /// Points on the plane through `point` or beyond it along `normal`:
    /// (x − point)·n̂ ≥ −tolerance. (normal = [-1,0,0] through the origin picks x ≤ 0.)
    Plane {
        /// A point of the plane, m.
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        point: [f64; 3],
        /// The plane's normal, pointing to the side selected (any length but zero).
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        normal: [f64; 3],
        /// How far behind the plane a point may lie and still be selected, m
        /// (None: 1e-9 of the mesh's bounding-box diagonal).
        #[serde(default)]
        tolerance: Option<f64>,
    },
    /// Points inside the axis-aligned box [min, max] (inclusive, with a small tolerance).
    Box {
        /// The corner with the smallest coordinates, m.
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        min: [f64; 3],
        /// The corner with the largest coordinates, m.
        #[serde(deserialize_with = "crate::model::vectors::two_or_three")]
        max: [f64; 3],
    },
    /// Explicit vertex indices (0-based); for element selection, elements all of whose vertices are listed.
    Vertices(Vec<usize>),
    /// Elements with this label (and, for vertex selection, their vertices).
    Label(i32),
    /// Points inside a shape (elements by their centroid): `{ shape = { ball = { ... } } }`.
    Shape(Shape),
    /// Everything.
    All,
}

impl Selection {
    fn default_tolerance(mesh: &Mesh) -> f64 {
        let (lo, hi) = mesh.bounding_box();
        1e-9 * (hi - lo).norm().max(f64::MIN_POSITIVE)
    }

    fn contains_point(&self, p: &Vector3<f64>, tolerance: f64) -> bool {
        match self {
            Selection::Plane {
                point,
                normal,
                tolerance: own,
            } => {
                let n = Vector3::from(*normal).normalize();
                (p - Vector3::from(*point)).dot(&n) >= -own.unwrap_or(tolerance)
            }
            Selection::Box { min, max } => (0..3).all(|a| p[a] >= min[a] - tolerance && p[a] <= max[a] + tolerance),
            Selection::Shape(shape) => shape.distance(p) <= tolerance,
            Selection::All => true,
            Selection::Vertices(_) | Selection::Label(_) => false,
        }
    }

    /// Checks a shape's numbers and loads the surface files it names (relative
    /// to `base`) with `read`.
    pub fn prepare(&mut self, base: &std::path::Path, key: &str, read: &crate::mesh::SurfaceReader) -> Result<()> {
        match self {
            Selection::Shape(shape) => shape.prepare(base, &format!("{key}.shape"), read),
            _ => Ok(()),
        }
    }

    /// Checks the selection's own numbers; `key` names it in errors.
    pub fn validate(&self, mesh: &Mesh, key: &str) -> Result<()> {
        match self {
            Selection::Plane { normal, .. } if Vector3::from(*normal).norm() == 0.0 => {
                Err(HookeError::scene(key, "plane normal must not be zero"))
            }
            Selection::Box { min, max } if (0..3).any(|a| min[a] > max[a]) => {
                Err(HookeError::scene(key, format!("box min {min:?} exceeds max {max:?}")))
            }
            Selection::Vertices(list) => match list.iter().find(|&&v| v >= mesh.vertex_count()) {
                Some(v) => Err(HookeError::scene(
                    key,
                    format!("vertex {v} does not exist (the mesh has {})", mesh.vertex_count()),
                )),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// Selected vertices, sorted; an empty selection is an error naming `key`.
    pub fn vertices(&self, mesh: &Mesh, key: &str) -> Result<Vec<usize>> {
        self.validate(mesh, key)?;
        let tolerance = Self::default_tolerance(mesh);
        let mut chosen: Vec<usize> = match self {
            Selection::Vertices(list) => list.clone(),
            Selection::Label(label) => (0..mesh.element_count())
                .filter(|&e| mesh.labels()[e] == *label)
                .flat_map(|e| mesh.element(e).iter().copied())
                .collect(),
            _ => (0..mesh.vertex_count())
                .filter(|&v| self.contains_point(&mesh.vertices()[v], tolerance))
                .collect(),
        };
        chosen.sort_unstable();
        chosen.dedup();
        if chosen.is_empty() {
            return Err(HookeError::scene(key, "selects no vertex of the mesh"));
        }
        Ok(chosen)
    }

    /// For each element, whether it belongs to the selection (by label, by all its
    /// vertices being listed, or by its centroid).
    pub fn element_mask(&self, mesh: &Mesh, key: &str) -> Result<Vec<bool>> {
        self.validate(mesh, key)?;
        let tolerance = Self::default_tolerance(mesh);
        let listed = match self {
            Selection::Vertices(list) => {
                let mut listed = vec![false; mesh.vertex_count()];
                list.iter().for_each(|&v| listed[v] = true);
                listed
            }
            _ => Vec::new(),
        };
        Ok((0..mesh.element_count())
            .map(|e| match self {
                Selection::Label(label) => mesh.labels()[e] == *label,
                Selection::Vertices(_) => mesh.element(e).iter().all(|&v| listed[v]),
                _ => self.contains_point(&mesh.centroid(e), tolerance),
            })
            .collect())
    }
}
