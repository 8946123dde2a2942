//! Whether a surface intersects itself: some edge crossing a triangle it
//! does not share a vertex with, or on a planar (2D) surface, two edges
//! crossing that share no vertex. Barrier contact never lets this happen, so
//! the check is independent of it: scenes are refused when they start
//! intersecting, and tests check every frame of a contact run with it.
//!
//! The crossing test uses the signs of tetrahedra's volumes (the segment's
//! ends on opposite sides of the triangle's plane, and the segment's line
//! passing inside the triangle's three edges), in floating point: a touch
//! exactly on a boundary counts as a crossing.

use super::bvh::{Aabb, Bvh};
use super::point;
use super::surface::ContactSurface;
use nalgebra::Vector3;
use rayon::prelude::*;

/// What an edge crosses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Crossed {
    /// A triangle, by its vertices.
    Triangle([usize; 3]),
    /// Another edge of a planar surface, by its vertices.
    Edge([usize; 2]),
}

/// An edge crossing a triangle (or in 2D, another edge): which, and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossing {
    /// The edge's vertices.
    pub edge: [usize; 2],
    /// What it crosses.
    pub crossed: Crossed,
    /// Where the edge meets it, m.
    pub point: Vector3<f64>,
}

impl Crossing {
    /// A vertex of what the edge crosses.
    pub fn crossed_vertex(&self) -> usize {
        match self.crossed {
            Crossed::Triangle(face) => face[0],
            Crossed::Edge(edge) => edge[0],
        }
    }
}

/// Twice the signed area of the triangle (a, b, c) in the xy plane.
fn area(a: &Vector3<f64>, b: &Vector3<f64>, c: &Vector3<f64>) -> f64 {
    (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
}

/// Where the segments p–q and a–b of the xy plane cross, if they do
/// (proper crossings, and touches beyond rounding; collinear overlaps are
/// not crossings, as flat faces are not in 3D).
pub fn segments_cross(p: &Vector3<f64>, q: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> Option<Vector3<f64>> {
    let scale = (q - p).norm() * (b - a).norm();
    let tolerance = COPLANAR * scale;
    let side = |v: f64| (v > tolerance) as i32 - (v < -tolerance) as i32;
    let (sa, sb) = (area(p, q, a), area(p, q, b));
    let (sp, sq) = (area(a, b, p), area(a, b, q));
    if side(sa) * side(sb) > 0 || side(sp) * side(sq) > 0 {
        return None;
    }
    if side(sa) == 0 && side(sb) == 0 {
        return None;
    }
    let t = sp / (sp - sq);
    t.is_finite().then(|| p + t * (q - p))
}

/// Six times the signed volume of the tetrahedron (a, b, c, d).
fn volume(a: &Vector3<f64>, b: &Vector3<f64>, c: &Vector3<f64>, d: &Vector3<f64>) -> f64 {
    (b - a).cross(&(c - a)).dot(&(d - a))
}

/// Where the segment p–q crosses the triangle (t0, t1, t2), if it does.
pub fn segment_crosses_triangle(
    p: &Vector3<f64>,
    q: &Vector3<f64>,
    t0: &Vector3<f64>,
    t1: &Vector3<f64>,
    t2: &Vector3<f64>,
) -> Option<Vector3<f64>> {
    // Volumes below this are rounding: a segment in the triangle's plane (the
    // flat faces of a mesh) is not crossing it.
    let normal = (t1 - t0).cross(&(t2 - t0));
    let tolerance = COPLANAR * normal.norm() * (q - p).norm().max((t1 - t0).norm());
    let side = |v: f64| {
        if v > tolerance {
            1
        } else if v < -tolerance {
            -1
        } else {
            0
        }
    };
    let (vp, vq) = (normal.dot(&(p - t0)), normal.dot(&(q - t0)));
    let (sp, sq) = (side(vp), side(vq));
    if sp == sq || (sp == 0 && sq == 0) {
        return None;
    }
    // The line p→q passes inside when it turns the same way around all three edges.
    let sides = [volume(p, q, t0, t1), volume(p, q, t1, t2), volume(p, q, t2, t0)];
    let scale = sides.iter().fold(0.0f64, |m, s| m.max(s.abs()));
    let ahead = sides.iter().all(|&s| s >= -COPLANAR * scale);
    let behind = sides.iter().all(|&s| s <= COPLANAR * scale);
    if !(ahead || behind) {
        return None;
    }
    let t = vp / (vp - vq);
    Some(p + t * (q - p))
}

/// The relative size of a volume that counts as zero.
const COPLANAR: f64 = 1e-10;

/// The first crossing of an edge of `surface` through one of its triangles
/// at positions `x` (3 per model vertex), in the surface's edge order, or
/// None when the surface is free of intersections.
pub fn first_crossing(surface: &ContactSurface, x: &[f64]) -> Option<Crossing> {
    if surface.planar {
        return first_planar_crossing(surface, x);
    }
    let boxes: Vec<Aabb> = surface.faces.iter().map(|f| Aabb::swept(f, x, x, 0.0)).collect();
    let faces = Bvh::new(&boxes);
    surface
        .edges
        .par_iter()
        .filter_map(|edge| {
            let (p, q) = (point(x, edge[0]), point(x, edge[1]));
            let mut near = Vec::new();
            faces.for_each_overlap(&Aabb::swept(edge, x, x, 0.0), |f| near.push(f));
            near.into_iter()
                .filter(|&f| !surface.faces[f].iter().any(|v| edge.contains(v)))
                .filter_map(|f| {
                    let face = surface.faces[f];
                    let [a, b, c] = face.map(|v| point(x, v));
                    segment_crosses_triangle(&p, &q, &a, &b, &c).map(|point| {
                        (
                            f,
                            Crossing {
                                edge: *edge,
                                crossed: Crossed::Triangle(face),
                                point,
                            },
                        )
                    })
                })
                .min_by_key(|(index, _)| *index)
                .map(|(_, crossing)| crossing)
        })
        .find_first(|_| true)
}

/// [`first_crossing`] of a planar surface: edges crossing edges.
fn first_planar_crossing(surface: &ContactSurface, x: &[f64]) -> Option<Crossing> {
    let boxes: Vec<Aabb> = surface.edges.iter().map(|e| Aabb::swept(e, x, x, 0.0)).collect();
    let edges = Bvh::new(&boxes);
    surface
        .edges
        .par_iter()
        .enumerate()
        .filter_map(|(i, edge)| {
            let (p, q) = (point(x, edge[0]), point(x, edge[1]));
            let mut near = Vec::new();
            edges.for_each_overlap(&boxes[i], |j| near.push(j));
            near.into_iter()
                .filter(|&j| j > i && !surface.edges[j].iter().any(|v| edge.contains(v)))
                .filter_map(|j| {
                    let other = surface.edges[j];
                    let (a, b) = (point(x, other[0]), point(x, other[1]));
                    segments_cross(&p, &q, &a, &b).map(|point| {
                        (
                            j,
                            Crossing {
                                edge: *edge,
                                crossed: Crossed::Edge(other),
                                point,
                            },
                        )
                    })
                })
                .min_by_key(|(j, _)| *j)
                .map(|(_, crossing)| crossing)
        })
        .find_first(|_| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_through_a_triangle_crosses_it_and_one_beside_it_does_not() {
        let [a, b, c] = [Vector3::zeros(), Vector3::x(), Vector3::y()];
        let through = segment_crosses_triangle(&Vector3::new(0.2, 0.2, 1.0), &Vector3::new(0.2, 0.2, -1.0), &a, &b, &c);
        assert!((through.expect("crosses") - Vector3::new(0.2, 0.2, 0.0)).norm() < 1e-15);
        assert!(
            segment_crosses_triangle(&Vector3::new(0.8, 0.8, 1.0), &Vector3::new(0.8, 0.8, -1.0), &a, &b, &c).is_none()
        );
        assert!(
            segment_crosses_triangle(&Vector3::new(0.2, 0.2, 1.0), &Vector3::new(0.2, 0.2, 0.5), &a, &b, &c).is_none()
        );
    }

    #[test]
    fn two_overlapping_boxes_cross_and_two_apart_do_not() {
        let cube = |offset: f64| -> (Vec<[usize; 3]>, Vec<f64>) {
            let mesh = crate::mesh::box_mesh(&crate::mesh::BoxMeshOptions {
                origin: Vector3::new(offset, 0.3 * offset, 0.1 * offset),
                size: Vector3::new(1.0, 1.0, 1.0),
                cells: [2, 2, 2],
                tets_per_hex: crate::mesh::TetsPerHex::Six,
            })
            .unwrap();
            let faces = crate::mesh::boundary_faces(&mesh).into_iter().map(|(f, _)| f).collect();
            (faces, mesh.vertices.iter().flat_map(|p| [p.x, p.y, p.z]).collect())
        };
        for (gap, crossing) in [(0.5, true), (1.01, false)] {
            let (mut faces, mut x) = cube(0.0);
            let (other, y) = cube(gap);
            let shift = x.len() / 3;
            faces.extend(other.iter().map(|f| f.map(|v| v + shift)));
            x.extend(y);
            let surface = ContactSurface::of_triangles(faces);
            assert_eq!(first_crossing(&surface, &x).is_some(), crossing, "gap {gap}");
        }
    }

    #[test]
    fn crossing_segments_in_the_plane_cross_and_touching_or_apart_ones_do_not_unless_they_overlap() {
        let v = |x: f64, y: f64| Vector3::new(x, y, 0.0);
        let at = segments_cross(&v(0.0, -1.0), &v(0.0, 1.0), &v(-1.0, 0.5), &v(1.0, 0.5));
        assert!((at.expect("crosses") - v(0.0, 0.5)).norm() < 1e-15);
        assert!(segments_cross(&v(0.0, -1.0), &v(0.0, 1.0), &v(0.1, 0.5), &v(1.0, 0.5)).is_none());
        assert!(segments_cross(&v(0.0, 0.0), &v(1.0, 0.0), &v(2.0, 0.0), &v(3.0, 0.0)).is_none());
        // Two squares' boundaries, overlapping or apart.
        for (gap, crossing) in [(0.5, true), (1.01, false)] {
            let mesh = crate::mesh::rectangle_mesh([0.0, 0.0], [1.0, 1.0], [3, 3]).unwrap();
            let other = crate::mesh::rectangle_mesh([gap, 0.3], [1.0, 1.0], [3, 3]).unwrap();
            let mut x: Vec<f64> = mesh.vertices.iter().flat_map(|p| [p.x, p.y, 0.0]).collect();
            x.extend(other.vertices.iter().flat_map(|p| [p.x, p.y, 0.0]));
            let shift = mesh.vertices.len();
            let first = ContactSurface::of_plane_triangles(&mesh);
            let second = ContactSurface::of_plane_triangles(&other);
            let edges = first
                .edges
                .iter()
                .copied()
                .chain(second.edges.iter().map(|e| e.map(|v| v + shift)))
                .collect();
            let surface = ContactSurface::of_plane_edges(edges);
            let found = first_crossing(&surface, &x);
            assert_eq!(found.is_some(), crossing, "gap {gap}: {found:?}");
            if let Some(found) = found {
                assert!(matches!(found.crossed, Crossed::Edge(_)));
            }
        }
    }
}
