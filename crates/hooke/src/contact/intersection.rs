//! Whether a surface intersects itself: some edge crossing a triangle it
//! does not share a vertex with. Barrier contact never lets this happen, so
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

/// An edge crossing a triangle: which, and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossing {
    /// The edge's vertices.
    pub edge: [usize; 2],
    /// The triangle's vertices.
    pub face: [usize; 3],
    /// Where the edge meets the triangle's plane, m.
    pub point: Vector3<f64>,
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
                                face,
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
}
