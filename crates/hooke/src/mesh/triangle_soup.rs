//! Closed (or nearly closed) triangle surfaces as solids: the generalized
//! winding number decides inside/outside, so small holes, cracks and
//! duplicated faces change the answer only near the defect (Jacobson et al.
//! 2013); the unsigned distance to the nearest triangle gives the magnitude.

use nalgebra::Vector3;
use rayon::prelude::*;

/// A triangle surface: vertices and index triples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriangleSoup {
    /// The surface's vertex positions, m.
    pub vertices: Vec<Vector3<f64>>,
    /// The three vertex indices of each triangle.
    pub triangles: Vec<[usize; 3]>,
}

impl TriangleSoup {
    fn corners(&self, t: &[usize; 3]) -> [Vector3<f64>; 3] {
        [self.vertices[t[0]], self.vertices[t[1]], self.vertices[t[2]]]
    }

    /// Axis-aligned bounding box (min, max).
    pub fn bounding_box(&self) -> (Vector3<f64>, Vector3<f64>) {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for p in &self.vertices {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        (lo, hi)
    }

    /// Σ solid angle / 4π of the triangles seen from `p`: 1 inside a closed,
    /// outward-oriented surface, 0 outside, in between near holes.
    pub fn winding_number(&self, p: &Vector3<f64>) -> f64 {
        let total: f64 = self
            .triangles
            .iter()
            .map(|t| {
                let [a, b, c] = self.corners(t).map(|v| v - p);
                let (la, lb, lc) = (a.norm(), b.norm(), c.norm());
                // Van Oosterom–Strackee: tan(Ω/2) = det[a b c] / (|a||b||c| + (a·b)|c| + (b·c)|a| + (c·a)|b|).
                let numerator = a.dot(&b.cross(&c));
                let denominator = la * lb * lc + a.dot(&b) * lc + b.dot(&c) * la + c.dot(&a) * lb;
                2.0 * numerator.atan2(denominator)
            })
            .sum();
        total / (4.0 * std::f64::consts::PI)
    }

    /// Distance from `p` to the nearest triangle.
    pub fn distance(&self, p: &Vector3<f64>) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = self.corners(t);
                (closest_point_on_triangle(p, &a, &b, &c) - p).norm_squared()
            })
            .fold(f64::INFINITY, f64::min)
            .sqrt()
    }

    /// Signed distance: negative inside (winding number above ½).
    pub fn signed_distance(&self, p: &Vector3<f64>) -> f64 {
        let d = self.distance(p);
        if self.winding_number(p) > 0.5 {
            -d
        } else {
            d
        }
    }

    /// Edges used by one triangle only: the rim of a hole. A closed surface
    /// has none.
    pub fn open_edge_count(&self) -> usize {
        let mut uses: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
        for t in &self.triangles {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *uses.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
        uses.values().filter(|&&count| count == 1).count()
    }

    /// The winding number at many points, in parallel.
    pub fn winding_numbers(&self, points: &[Vector3<f64>]) -> Vec<f64> {
        points.par_iter().map(|p| self.winding_number(p)).collect()
    }
}

/// The point of triangle abc nearest to p (Ericson, Real-Time Collision Detection §5.1.5).
pub fn closest_point_on_triangle(
    p: &Vector3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    c: &Vector3<f64>,
) -> Vector3<f64> {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return *a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return *b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return *c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denominator = 1.0 / (va + vb + vc);
    a + ab * (vb * denominator) + ac * (vc * denominator)
}
