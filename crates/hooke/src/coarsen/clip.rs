//! Exact overlap measures of two simplices by convex clipping: the volume
//! shared by two tetrahedra and the area shared by two triangles, for the
//! fine–coarse averages of numerical coarsening (Kharevych 2010 thesis, §4.3.7). One
//! simplex is cut by the half-spaces of the other's faces, one plane at a
//! time; what is left is convex, and its measure follows from the divergence
//! theorem over its faces.

use nalgebra::{Vector2, Vector3};

/// A convex polyhedron as its faces, each a polygon ordered counter-clockwise
/// seen from outside.
type Polyhedron = Vec<Vec<Vector3<f64>>>;

/// The faces of a positively oriented tetrahedron, each ordered so that its
/// normal points outward.
const OUTWARD_FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

fn signed_volume(t: &[Vector3<f64>; 4]) -> f64 {
    (t[1] - t[0]).cross(&(t[2] - t[0])).dot(&(t[3] - t[0])) / 6.0
}

/// The tetrahedron's corners reordered to positive orientation.
fn oriented(t: &[Vector3<f64>; 4]) -> [Vector3<f64>; 4] {
    if signed_volume(t) < 0.0 {
        [t[0], t[2], t[1], t[3]]
    } else {
        *t
    }
}

/// The volume shared by two tetrahedra (corners in any order).
pub fn tetrahedra_overlap(a: &[Vector3<f64>; 4], b: &[Vector3<f64>; 4]) -> f64 {
    let (a, b) = (oriented(a), oriented(b));
    // Quick rejection by bounding boxes.
    let (low_a, high_a) = bounds(&a);
    let (low_b, high_b) = bounds(&b);
    if (0..3).any(|i| high_a[i] < low_b[i] || high_b[i] < low_a[i]) {
        return 0.0;
    }
    let scale = (high_a - low_a).norm().max((high_b - low_b).norm());
    let tolerance = 1e-12 * scale;
    let mut polyhedron: Polyhedron = OUTWARD_FACES
        .iter()
        .map(|f| f.iter().map(|&i| a[i]).collect())
        .collect();
    for face in OUTWARD_FACES {
        let [p, q, r] = face.map(|i| b[i]);
        let normal = (q - p).cross(&(r - p));
        let length = normal.norm();
        if length == 0.0 {
            return 0.0;
        }
        let normal = normal / length;
        polyhedron = clip_polyhedron(polyhedron, &normal, normal.dot(&p), tolerance);
        if polyhedron.is_empty() {
            return 0.0;
        }
    }
    polyhedron_volume(&polyhedron).max(0.0)
}

fn bounds<const N: usize>(points: &[Vector3<f64>; N]) -> (Vector3<f64>, Vector3<f64>) {
    let mut low = points[0];
    let mut high = points[0];
    for p in points {
        low = low.inf(p);
        high = high.sup(p);
    }
    (low, high)
}

/// Keeps the part of a convex polyhedron where n·x ≤ offset (n a unit vector).
fn clip_polyhedron(polyhedron: Polyhedron, normal: &Vector3<f64>, offset: f64, tolerance: f64) -> Polyhedron {
    let distance = |p: &Vector3<f64>| normal.dot(p) - offset;
    if polyhedron.iter().flatten().all(|p| distance(p) <= tolerance) {
        return polyhedron;
    }
    let mut kept = Vec::with_capacity(polyhedron.len() + 1);
    let mut on_plane: Vec<Vector3<f64>> = Vec::new();
    for face in polyhedron {
        let mut clipped = Vec::with_capacity(face.len() + 1);
        for i in 0..face.len() {
            let (p, q) = (face[i], face[(i + 1) % face.len()]);
            let (dp, dq) = (distance(&p), distance(&q));
            if dp <= tolerance {
                clipped.push(p);
                if dp >= -tolerance {
                    on_plane.push(p);
                }
            }
            if (dp < -tolerance && dq > tolerance) || (dp > tolerance && dq < -tolerance) {
                let crossing = p + (q - p) * (dp / (dp - dq));
                clipped.push(crossing);
                on_plane.push(crossing);
            }
        }
        if clipped.len() >= 3 {
            kept.push(clipped);
        }
    }
    if kept.is_empty() {
        return kept;
    }
    if let Some(cap) = cap_polygon(on_plane, normal, tolerance) {
        kept.push(cap);
    }
    kept
}

/// The new face in the cutting plane: its distinct points ordered
/// counter-clockwise about the outward normal `normal`.
fn cap_polygon(points: Vec<Vector3<f64>>, normal: &Vector3<f64>, tolerance: f64) -> Option<Vec<Vector3<f64>>> {
    let mut distinct: Vec<Vector3<f64>> = Vec::with_capacity(points.len());
    for p in points {
        if distinct.iter().all(|q| (p - q).norm() > tolerance) {
            distinct.push(p);
        }
    }
    if distinct.len() < 3 {
        return None;
    }
    let center = distinct.iter().sum::<Vector3<f64>>() / distinct.len() as f64;
    let helper = if normal.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let u = normal.cross(&helper).normalize();
    let v = normal.cross(&u);
    distinct.sort_by(|p, q| {
        let angle = |r: &Vector3<f64>| (r - center).dot(&v).atan2((r - center).dot(&u));
        angle(p).total_cmp(&angle(q))
    });
    Some(distinct)
}

/// Volume of a closed polyhedron with outward-ordered faces (divergence theorem).
fn polyhedron_volume(polyhedron: &Polyhedron) -> f64 {
    let origin = polyhedron[0][0];
    let mut volume = 0.0;
    for face in polyhedron {
        let first = face[0] - origin;
        for i in 1..face.len() - 1 {
            volume += first.dot(&(face[i] - origin).cross(&(face[i + 1] - origin)));
        }
    }
    volume / 6.0
}

/// The area shared by two triangles (corners in any order).
pub fn triangles_overlap(a: &[Vector2<f64>; 3], b: &[Vector2<f64>; 3]) -> f64 {
    let counter_clockwise = |t: &[Vector2<f64>; 3]| {
        let cross = (t[1] - t[0]).perp(&(t[2] - t[0]));
        if cross < 0.0 {
            [t[0], t[2], t[1]]
        } else {
            *t
        }
    };
    let (a, b) = (counter_clockwise(a), counter_clockwise(b));
    let scale = a.iter().chain(&b).map(|p| p.norm()).fold(0.0, f64::max).max(1e-300);
    let tolerance = 1e-14 * scale;
    let mut polygon: Vec<Vector2<f64>> = a.to_vec();
    for i in 0..3 {
        let (p, q) = (b[i], b[(i + 1) % 3]);
        let edge = q - p;
        // Inside: left of the edge of a counter-clockwise triangle.
        let side = |r: &Vector2<f64>| edge.perp(&(r - p));
        let mut clipped = Vec::with_capacity(polygon.len() + 1);
        for j in 0..polygon.len() {
            let (r, s) = (polygon[j], polygon[(j + 1) % polygon.len()]);
            let (dr, ds) = (side(&r), side(&s));
            if dr >= -tolerance * edge.norm() {
                clipped.push(r);
            }
            if (dr < 0.0 && ds > 0.0) || (dr > 0.0 && ds < 0.0) {
                clipped.push(r + (s - r) * (dr / (dr - ds)));
            }
        }
        polygon = clipped;
        if polygon.len() < 3 {
            return 0.0;
        }
    }
    let mut area = 0.0;
    for j in 0..polygon.len() {
        area += polygon[j].perp(&polygon[(j + 1) % polygon.len()]);
    }
    (0.5 * area).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> [Vector3<f64>; 4] {
        [Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()]
    }

    #[test]
    fn a_tetrahedron_overlaps_itself_whole_and_a_far_one_not_at_all() {
        let t = unit();
        assert!((tetrahedra_overlap(&t, &t) - 1.0 / 6.0).abs() < 1e-15);
        let far = t.map(|p| p + Vector3::new(5.0, 0.0, 0.0));
        assert_eq!(tetrahedra_overlap(&t, &far), 0.0);
        // Touching along a face: zero.
        let mirrored = [Vector3::zeros(), Vector3::x(), Vector3::y(), -Vector3::z()];
        assert!(tetrahedra_overlap(&t, &mirrored).abs() < 1e-15);
    }

    #[test]
    fn a_corner_cut_by_a_scaled_copy_has_the_cube_law_volume() {
        // The unit corner tetrahedron and a copy scaled by s about the origin
        // share the smaller one: s³/6; shifted copies share a similar corner.
        let t = unit();
        for s in [0.3, 0.5, 0.9] {
            let small = t.map(|p| p * s);
            assert!((tetrahedra_overlap(&t, &small) - s * s * s / 6.0).abs() < 1e-15);
            assert!((tetrahedra_overlap(&small, &t) - s * s * s / 6.0).abs() < 1e-15);
        }
        // The copy moved by d along x: the shared part is the corner x ≥ d, of size (1 − d).
        let d = 0.25;
        let moved = t.map(|p| p + Vector3::new(d, 0.0, 0.0));
        let expected = (1.0f64 - d).powi(3) / 6.0;
        assert!((tetrahedra_overlap(&t, &moved) - expected).abs() < 1e-15);
    }

    #[test]
    fn the_tetrahedra_of_a_cube_split_any_tetrahedron_into_its_volume() {
        // Overlaps with a partition of space sum to the volume: the six
        // tetrahedra of a cube against a tetrahedron inside it.
        let cube = crate::mesh::box_mesh(&crate::mesh::BoxMeshOptions {
            origin: Vector3::zeros(),
            size: Vector3::new(1.0, 1.0, 1.0),
            cells: [2, 2, 2],
            tets_per_hex: crate::mesh::TetsPerHex::Six,
        })
        .unwrap();
        let probe = [
            Vector3::new(0.1, 0.2, 0.15),
            Vector3::new(0.85, 0.3, 0.2),
            Vector3::new(0.4, 0.9, 0.25),
            Vector3::new(0.35, 0.4, 0.95),
        ];
        let total: f64 = cube
            .tets
            .iter()
            .map(|t| tetrahedra_overlap(&t.map(|v| cube.vertices[v]), &probe))
            .sum();
        assert!((total - signed_volume(&probe).abs()).abs() < 1e-14, "{total}");
    }

    #[test]
    fn triangle_overlaps_follow_the_same_laws() {
        let t = [Vector2::zeros(), Vector2::x(), Vector2::y()];
        assert!((triangles_overlap(&t, &t) - 0.5).abs() < 1e-15);
        let d = 0.25;
        let moved = t.map(|p| p + Vector2::new(d, 0.0));
        assert!((triangles_overlap(&t, &moved) - 0.5 * (1.0f64 - d).powi(2)).abs() < 1e-15);
        let reversed = [t[0], t[2], t[1]];
        assert!((triangles_overlap(&reversed, &moved) - 0.5 * (1.0f64 - d).powi(2)).abs() < 1e-15);
        let grid = crate::mesh::rectangle_mesh([0.0, 0.0], [1.0, 1.0], [3, 3]).unwrap();
        let probe = [Vector2::new(0.1, 0.1), Vector2::new(0.9, 0.3), Vector2::new(0.3, 0.8)];
        let total: f64 = grid
            .triangles
            .iter()
            .map(|t| triangles_overlap(&t.map(|v| grid.vertices[v].xy()), &probe))
            .sum();
        let area = 0.5 * (probe[1] - probe[0]).perp(&(probe[2] - probe[0]));
        assert!((total - area).abs() < 1e-15, "{total} vs {area}");
    }
}
