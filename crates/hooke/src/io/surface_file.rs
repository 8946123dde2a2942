//! A surface as a reader returns it: vertices, triangles, and where each
//! triangle was written (for error messages), before validation and welding.

use nalgebra::Vector3;

/// Where a triangle was written in its file, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriangleSource {
    /// The line of a text file (the face, or the ASCII STL `facet`).
    Line(usize),
    /// A binary STL facet and the byte it starts at.
    Facet { facet: usize, byte: usize },
    /// A PLY face, by number.
    Face(usize),
}

impl std::fmt::Display for TriangleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            TriangleSource::Line(line) => write!(f, "the face on line {line}"),
            TriangleSource::Facet { facet, byte } => write!(f, "facet {facet} (at byte {byte})"),
            TriangleSource::Face(face) => write!(f, "face {face}"),
        }
    }
}

/// A surface as read: vertices, triangles and where each triangle came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SurfaceFile {
    pub vertices: Vec<Vector3<f64>>,
    pub triangles: Vec<[usize; 3]>,
    pub sources: Vec<TriangleSource>,
}

impl SurfaceFile {
    /// Adds a triangle on existing vertices.
    pub fn push(&mut self, triangle: [usize; 3], source: TriangleSource) {
        self.triangles.push(triangle);
        self.sources.push(source);
    }

    /// Adds a triangle with three new vertices (welded later).
    pub fn push_corners(&mut self, corners: [Vector3<f64>; 3], source: TriangleSource) {
        let first = self.vertices.len();
        self.vertices.extend(corners);
        self.push([first, first + 1, first + 2], source);
    }
}
