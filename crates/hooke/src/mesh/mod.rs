//! Tetrahedral meshes with per-element labels: the geometry every body is made of.

mod discontinuous;
mod generate;
pub mod limits;
mod orientation;
mod quality;
mod shapes;
mod stuffing;
mod surface;
mod triangle_soup;
mod triangles;

pub use discontinuous::{DiscontinuousMesh, Interface};
pub use generate::{box_mesh, BoxMeshOptions, TetsPerHex};
pub use orientation::OrientationReport;
pub use quality::{dihedral_angles, mesh_quality, tet_volume, QualityReport};
pub use shapes::{Shape, SurfaceReader};
pub use stuffing::{stuff, stuff_shape, StuffingReport};
pub use surface::{boundary_faces, boundary_facets};
pub use triangle_soup::{closest_point_on_triangle, TriangleSoup};
pub use triangles::{rectangle_mesh, TriangleMesh};

use crate::error::{HookeError, Result};
use nalgebra::Vector3;

/// A point whose barycentric coordinates are all above −this is inside.
const LOCATE_INSIDE: f64 = 1e-12;

/// The tetrahedra whose bounding boxes meet each cell of a uniform grid
/// over the mesh, in increasing order.
struct TetGrid {
    origin: Vector3<f64>,
    cell: Vector3<f64>,
    cells: [usize; 3],
    members: Vec<Vec<usize>>,
}

impl TetGrid {
    fn new(mesh: &TetMesh) -> TetGrid {
        let (mut low, mut high) = (Vector3::repeat(f64::INFINITY), Vector3::repeat(f64::NEG_INFINITY));
        for v in &mesh.vertices {
            low = low.inf(v);
            high = high.sup(v);
        }
        // About one tetrahedron per cell along each axis' share.
        let per_axis = ((mesh.tets.len() as f64).cbrt().ceil() as usize).clamp(1, 256);
        let extent = (high - low).map(|d| d.max(f64::MIN_POSITIVE));
        let cells = [per_axis; 3];
        let cell = extent / per_axis as f64;
        let mut members = vec![Vec::new(); per_axis * per_axis * per_axis];
        if !low.iter().all(|v| v.is_finite()) {
            return TetGrid {
                origin: low,
                cell,
                cells,
                members: Vec::new(),
            };
        }
        let index = |x: f64, axis: usize| (((x - low[axis]) / cell[axis]).floor().max(0.0) as usize).min(per_axis - 1);
        for (e, tet) in mesh.tets.iter().enumerate() {
            let (mut a, mut b) = (Vector3::repeat(f64::INFINITY), Vector3::repeat(f64::NEG_INFINITY));
            for &v in tet {
                a = a.inf(&mesh.vertices[v]);
                b = b.sup(&mesh.vertices[v]);
            }
            for i in index(a.x, 0)..=index(b.x, 0) {
                for j in index(a.y, 1)..=index(b.y, 1) {
                    for k in index(a.z, 2)..=index(b.z, 2) {
                        members[(i * per_axis + j) * per_axis + k].push(e);
                    }
                }
            }
        }
        TetGrid {
            origin: low,
            cell,
            cells,
            members,
        }
    }

    /// The tetrahedra that may contain x (none when x is outside the grid).
    fn candidates(&self, x: &Vector3<f64>) -> &[usize] {
        let mut at = [0; 3];
        for axis in 0..3 {
            let position = (x[axis] - self.origin[axis]) / self.cell[axis];
            // A point just outside the box may still be in a tetrahedron, within rounding.
            if !(-1e-9..=self.cells[axis] as f64 + 1e-9).contains(&position) || self.members.is_empty() {
                return &[];
            }
            at[axis] = (position.floor().max(0.0) as usize).min(self.cells[axis] - 1);
        }
        &self.members[(at[0] * self.cells[1] + at[1]) * self.cells[2] + at[2]]
    }
}

/// A tetrahedral mesh: rest positions, connectivity and an integer label per element.
///
/// Labels name material regions (the TetGen region attribute, the MEDIT reference,
/// the Gmsh physical group); generated meshes start with label 0 everywhere.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TetMesh {
    /// Rest positions of the vertices, m.
    pub vertices: Vec<Vector3<f64>>,
    /// The four vertex indices of each tetrahedron.
    pub tets: Vec<[usize; 4]>,
    /// The label of each tetrahedron (its material region).
    pub labels: Vec<i32>,
}

impl TetMesh {
    /// For each point, a tetrahedron and the point's barycentric coordinates
    /// in it: the first tetrahedron (by index) that contains the point, or for
    /// a point outside them all the one whose most negative coordinate is the
    /// least negative. This is how fields of this mesh are read at the
    /// vertices of another mesh of the same body. A uniform grid of the
    /// tetrahedra's bounding boxes finds the containing one; only points
    /// outside every tetrahedron are compared with all of them.
    pub fn locate(&self, points: &[Vector3<f64>]) -> Vec<(usize, nalgebra::Vector4<f64>)> {
        let inverses: Vec<Option<nalgebra::Matrix3<f64>>> = self
            .tets
            .iter()
            .map(|t| {
                let p = |k: usize| self.vertices[t[k]];
                nalgebra::Matrix3::from_columns(&[p(1) - p(0), p(2) - p(0), p(3) - p(0)]).try_inverse()
            })
            .collect();
        let weights_in = |e: usize, x: &Vector3<f64>| {
            inverses[e].map(|inverse| {
                let local = inverse * (x - self.vertices[self.tets[e][0]]);
                nalgebra::Vector4::new(1.0 - local.sum(), local.x, local.y, local.z)
            })
        };
        let grid = TetGrid::new(self);
        points
            .iter()
            .map(|x| {
                let inside = grid
                    .candidates(x)
                    .iter()
                    .find_map(|&e| weights_in(e, x).filter(|w| w.min() >= -LOCATE_INSIDE).map(|w| (e, w)));
                inside.unwrap_or_else(|| {
                    let mut best = (0, nalgebra::Vector4::new(1.0, 0.0, 0.0, 0.0), f64::NEG_INFINITY);
                    for e in 0..self.tets.len() {
                        let Some(weights) = weights_in(e, x) else { continue };
                        let worst = weights.min();
                        if worst > best.2 {
                            best = (e, weights, worst);
                            if worst >= -LOCATE_INSIDE {
                                break;
                            }
                        }
                    }
                    (best.0, best.1)
                })
            })
            .collect()
    }

    /// Builds a mesh, checking that every index is in range and that labels match tets.
    pub fn new(vertices: Vec<Vector3<f64>>, tets: Vec<[usize; 4]>, labels: Vec<i32>) -> Result<Self> {
        check_elements(&vertices, &tets, labels.len(), "tetrahedra", "element")?;
        Ok(TetMesh { vertices, tets, labels })
    }

    /// The number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.vertices.len()
    }

    /// The number of tetrahedra.
    pub fn tet_count(&self) -> usize {
        self.tets.len()
    }

    /// Signed volume of element `e` at the given positions (positive when
    /// the vertex order is right-handed).
    pub fn signed_volume(&self, e: usize, positions: &[Vector3<f64>]) -> f64 {
        let [a, b, c, d] = self.tets[e];
        let p0 = positions[a];
        (positions[b] - p0)
            .cross(&(positions[c] - p0))
            .dot(&(positions[d] - p0))
            / 6.0
    }

    /// Centroid of element `e` in the rest configuration.
    pub fn centroid(&self, e: usize) -> Vector3<f64> {
        let t = self.tets[e];
        (self.vertices[t[0]] + self.vertices[t[1]] + self.vertices[t[2]] + self.vertices[t[3]]) / 4.0
    }

    /// Axis-aligned bounding box (min, max) of the rest vertices.
    pub fn bounding_box(&self) -> (Vector3<f64>, Vector3<f64>) {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for p in &self.vertices {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        (lo, hi)
    }

    /// Appends another mesh (a second body); its labels are kept as they are.
    pub fn append(&mut self, other: &TetMesh) {
        let offset = self.vertices.len();
        self.vertices.extend_from_slice(&other.vertices);
        self.tets.extend(other.tets.iter().map(|t| t.map(|v| v + offset)));
        self.labels.extend_from_slice(&other.labels);
    }
}

impl TetMesh {
    /// Drops vertices that no element uses (they would make the mass matrix
    /// singular) and renumbers the rest in order. Returns how many were dropped.
    pub fn remove_unused_vertices(&mut self) -> usize {
        compact(&mut self.vertices, &mut self.tets)
    }
}

/// Checks elements of N vertices against their vertices and labels: indices in
/// range, no vertex repeated within an element, finite coordinates. `plural` and
/// `singular` name the elements in errors.
pub(crate) fn check_elements<const N: usize>(
    vertices: &[Vector3<f64>],
    elements: &[[usize; N]],
    label_count: usize,
    plural: &str,
    singular: &str,
) -> Result<()> {
    if label_count != elements.len() {
        return Err(HookeError::Mesh {
            reason: format!("{label_count} labels for {} {plural}", elements.len()),
        });
    }
    for (e, element) in elements.iter().enumerate() {
        if let Some(v) = element.iter().find(|&&v| v >= vertices.len()) {
            return Err(HookeError::Mesh {
                reason: format!(
                    "{singular} {e} refers to vertex {v}, but the mesh has {} vertices",
                    vertices.len()
                ),
            });
        }
        for a in 0..N {
            if element[a + 1..].contains(&element[a]) {
                return Err(HookeError::Mesh {
                    reason: format!("{singular} {e} repeats vertex {}", element[a]),
                });
            }
        }
    }
    if let Some(v) = vertices.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(HookeError::Mesh {
            reason: format!("vertex {v} has a non-finite coordinate"),
        });
    }
    Ok(())
}

/// Drops vertices that no element uses and renumbers the rest in order;
/// returns how many were dropped.
pub(crate) fn compact<const N: usize>(vertices: &mut Vec<Vector3<f64>>, elements: &mut [[usize; N]]) -> usize {
    let mut used = vec![false; vertices.len()];
    elements.iter().flatten().for_each(|&v| used[v] = true);
    let mut new_index = vec![usize::MAX; vertices.len()];
    let mut kept = Vec::with_capacity(vertices.len());
    for (v, &is_used) in used.iter().enumerate() {
        if is_used {
            new_index[v] = kept.len();
            kept.push(vertices[v]);
        }
    }
    let removed = vertices.len() - kept.len();
    *vertices = kept;
    elements.iter_mut().for_each(|t| *t = t.map(|v| new_index[v]));
    removed
}

/// The mesh a model is made of: tetrahedra in 3D, triangles in 2D.
#[derive(Clone, Debug, PartialEq)]
pub enum Mesh {
    /// A 3D body meshed with tetrahedra.
    Tetrahedra(TetMesh),
    /// A 2D (plane-strain) body meshed with triangles in the plane z = 0.
    Triangles(TriangleMesh),
}

impl Mesh {
    /// 3 for tetrahedra, 2 for triangles.
    pub fn dimension(&self) -> usize {
        match self {
            Mesh::Tetrahedra(_) => 3,
            Mesh::Triangles(_) => 2,
        }
    }

    /// Rest positions (z = 0 in 2D).
    pub fn vertices(&self) -> &[Vector3<f64>] {
        match self {
            Mesh::Tetrahedra(m) => &m.vertices,
            Mesh::Triangles(m) => &m.vertices,
        }
    }

    /// The rest positions, to move or replace (z = 0 in 2D).
    pub fn vertices_mut(&mut self) -> &mut Vec<Vector3<f64>> {
        match self {
            Mesh::Tetrahedra(m) => &mut m.vertices,
            Mesh::Triangles(m) => &mut m.vertices,
        }
    }

    /// The number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.vertices().len()
    }

    /// The number of elements (tetrahedra or triangles).
    pub fn element_count(&self) -> usize {
        match self {
            Mesh::Tetrahedra(m) => m.tet_count(),
            Mesh::Triangles(m) => m.triangle_count(),
        }
    }

    /// What the elements are called in messages.
    pub fn element_name(&self) -> &'static str {
        match self {
            Mesh::Tetrahedra(_) => "tetrahedra",
            Mesh::Triangles(_) => "triangles",
        }
    }

    /// The vertices of element e.
    pub fn element(&self, e: usize) -> &[usize] {
        match self {
            Mesh::Tetrahedra(m) => &m.tets[e],
            Mesh::Triangles(m) => &m.triangles[e],
        }
    }

    /// The label of each element (its material region).
    pub fn labels(&self) -> &[i32] {
        match self {
            Mesh::Tetrahedra(m) => &m.labels,
            Mesh::Triangles(m) => &m.labels,
        }
    }

    /// Centroid of element e at rest.
    pub fn centroid(&self, e: usize) -> Vector3<f64> {
        match self {
            Mesh::Tetrahedra(m) => m.centroid(e),
            Mesh::Triangles(m) => m.centroid(e),
        }
    }

    /// Axis-aligned bounding box (min, max) of the rest vertices.
    pub fn bounding_box(&self) -> (Vector3<f64>, Vector3<f64>) {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for p in self.vertices() {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        (lo, hi)
    }

    /// The tetrahedral mesh, in 3D.
    pub fn tetrahedra(&self) -> Option<&TetMesh> {
        match self {
            Mesh::Tetrahedra(m) => Some(m),
            Mesh::Triangles(_) => None,
        }
    }

    /// The triangle mesh, in 2D.
    pub fn triangles(&self) -> Option<&TriangleMesh> {
        match self {
            Mesh::Tetrahedra(_) => None,
            Mesh::Triangles(m) => Some(m),
        }
    }
}
