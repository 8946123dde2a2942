//! Distances between the primitives of contact surfaces (Li et al. 2020,
//! "Incremental Potential Contact", §4 and its supplement): point–triangle
//! and edge–edge pairs, each reduced to the closest pair of features (two
//! points, a point and a line, a point and a plane, two lines), whose
//! *squared* distance is smooth where that feature stays the closest.
//!
//! Squared distances are what the barrier takes (b(d²) in the paper's
//! implementation): they avoid the square root's singularity at contact and
//! have polynomial-over-polynomial closed forms. Each function returns the
//! squared distance and its gradient with respect to the pair's stacked
//! coordinates (3 per vertex, in the order of the arguments); the `*_hessian`
//! functions add the Hessian, by second-order forward differentiation of the
//! same closed forms (contact/jet.rs).

use super::jet::{self, Jet};
use nalgebra::{SMatrix, Vector3};

/// Which features of a point–triangle pair are closest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointTriangleKind {
    /// The point and triangle vertex `0`, `1` or `2`.
    Vertex(usize),
    /// The point and the line of edge `i` (from vertex i to vertex i + 1 mod 3).
    Edge(usize),
    /// The point and the triangle's plane (its projection falls inside).
    Face,
}

/// Which features of an edge–edge pair are closest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeEdgeKind {
    /// Endpoint `a` (0, 1) of the first edge and endpoint `b` of the second.
    Vertices(usize, usize),
    /// Endpoint `a` of the first edge and the line of the second.
    FirstVertexSecondEdge(usize),
    /// The line of the first edge and endpoint `b` of the second.
    FirstEdgeSecondVertex(usize),
    /// The two lines (the closest points are inside both edges).
    Lines,
}

/// The closest features of point `p` and triangle (t0, t1, t2), from the
/// projection of `p` onto the triangle's plane in barycentric coordinates.
/// A degenerate triangle (zero area) is treated through its edges.
pub fn point_triangle_kind(
    p: &Vector3<f64>,
    t0: &Vector3<f64>,
    t1: &Vector3<f64>,
    t2: &Vector3<f64>,
) -> PointTriangleKind {
    let corners = [t0, t1, t2];
    let normal = (t1 - t0).cross(&(t2 - t0));
    let area2 = normal.norm_squared();
    if area2 > 0.0 {
        // Barycentric coordinates of the projection: λᵢ ∝ n·((tⱼ − q) × (tₖ − q)).
        let lambda: [f64; 3] = std::array::from_fn(|i| {
            let (j, k) = ((i + 1) % 3, (i + 2) % 3);
            normal.dot(&(corners[j] - p).cross(&(corners[k] - p))) / area2
        });
        if lambda.iter().all(|&l| l >= 0.0) {
            return PointTriangleKind::Face;
        }
    }
    // Outside the face (or no face): the nearest of the three edges decides.
    let mut best = (f64::INFINITY, PointTriangleKind::Vertex(0));
    for i in 0..3 {
        let (a, b) = (corners[i], corners[(i + 1) % 3]);
        let (kind, distance) = match point_segment_parameter(p, a, b) {
            t if t <= 0.0 => (PointTriangleKind::Vertex(i), (p - a).norm_squared()),
            t if t >= 1.0 => (PointTriangleKind::Vertex((i + 1) % 3), (p - b).norm_squared()),
            t => (PointTriangleKind::Edge(i), (p - (a + (b - a) * t)).norm_squared()),
        };
        if distance < best.0 {
            best = (distance, kind);
        }
    }
    best.1
}

/// Which feature of an edge is closest to a point (2D point–edge contact).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointEdgeKind {
    /// Endpoint `0` or `1` of the edge.
    Vertex(usize),
    /// The edge's line (the projection falls inside the edge).
    Line,
}

/// The closest feature of edge (a, b) to point p. A degenerate edge is its first endpoint.
pub fn point_edge_kind(p: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> PointEdgeKind {
    match point_segment_parameter(p, a, b) {
        t if t <= 0.0 => PointEdgeKind::Vertex(0),
        t if t >= 1.0 => PointEdgeKind::Vertex(1),
        _ => PointEdgeKind::Line,
    }
}

/// Below this sin² of the angle between two edges they count as parallel
/// (the IPC toolkit's threshold).
pub const PARALLEL_SIN_SQUARED: f64 = 2.5e-16;

/// The closest features of edges (a0, a1) and (b0, b1). Nearly parallel edges
/// (sin² of their angle below [`PARALLEL_SIN_SQUARED`]) are treated through
/// their endpoints, where the line–line distance is ill-conditioned: exactly
/// parallel edges of a flat face (a grid's diagonals) give uu·vv − (u·v)² a
/// rounding residue, so the test uses |u × v|², which is 0 for them.
pub fn edge_edge_kind(a0: &Vector3<f64>, a1: &Vector3<f64>, b0: &Vector3<f64>, b1: &Vector3<f64>) -> EdgeEdgeKind {
    let u = a1 - a0;
    let v = b1 - b0;
    let w = a0 - b0;
    let (uu, uv, vv, uw, vw) = (u.dot(&u), u.dot(&v), v.dot(&v), u.dot(&w), v.dot(&w));
    let denominator = u.cross(&v).norm_squared();
    if denominator >= PARALLEL_SIN_SQUARED * uu * vv && denominator > 0.0 {
        let s = (uv * vw - vv * uw) / denominator;
        let t = (uu * vw - uv * uw) / denominator;
        if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t) {
            return EdgeEdgeKind::Lines;
        }
    }
    // The closest points lie on the boundary of the parameter square: the
    // nearest of the four endpoint-to-edge pairs decides.
    let ends_a = [a0, a1];
    let ends_b = [b0, b1];
    let mut best = (f64::INFINITY, EdgeEdgeKind::Vertices(0, 0));
    let mut consider = |distance: f64, kind: EdgeEdgeKind| {
        if distance < best.0 {
            best = (distance, kind);
        }
    };
    for (i, p) in ends_a.iter().enumerate() {
        match point_segment_parameter(p, b0, b1) {
            t if t <= 0.0 => consider((*p - b0).norm_squared(), EdgeEdgeKind::Vertices(i, 0)),
            t if t >= 1.0 => consider((*p - b1).norm_squared(), EdgeEdgeKind::Vertices(i, 1)),
            t => consider(
                (*p - (b0 + v * t)).norm_squared(),
                EdgeEdgeKind::FirstVertexSecondEdge(i),
            ),
        }
    }
    for (j, q) in ends_b.iter().enumerate() {
        match point_segment_parameter(q, a0, a1) {
            t if t <= 0.0 => consider((*q - a0).norm_squared(), EdgeEdgeKind::Vertices(0, j)),
            t if t >= 1.0 => consider((*q - a1).norm_squared(), EdgeEdgeKind::Vertices(1, j)),
            t => consider(
                (*q - (a0 + u * t)).norm_squared(),
                EdgeEdgeKind::FirstEdgeSecondVertex(j),
            ),
        }
    }
    best.1
}

/// The parameter t of the point of the line a + t (b − a) nearest to p
/// (0 for a degenerate segment).
pub(crate) fn point_segment_parameter(p: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
    let e = b - a;
    let length2 = e.norm_squared();
    if length2 > 0.0 {
        (p - a).dot(&e) / length2
    } else {
        0.0
    }
}

/// |p − q|² and its gradient with respect to (p, q).
pub fn point_point(p: &Vector3<f64>, q: &Vector3<f64>) -> (f64, [f64; 6]) {
    let d = p - q;
    let mut gradient = [0.0; 6];
    for k in 0..3 {
        gradient[k] = 2.0 * d[k];
        gradient[3 + k] = -2.0 * d[k];
    }
    (d.norm_squared(), gradient)
}

/// The squared distance from p to the line through (a, b),
/// |(a − p) × (b − p)|² / |b − a|², and its gradient with respect to (p, a, b).
/// The segment must not be degenerate.
pub fn point_line(p: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> (f64, [f64; 9]) {
    let (ap, bp) = (a - p, b - p);
    let c = ap.cross(&bp);
    let e = b - a;
    let (cc, ee) = (c.norm_squared(), e.norm_squared());
    let value = cc / ee;
    // ∂(c·c) = 2 c·∂c, with ∂c/∂a = −[bp]ₓ·da → c·(da × bp) = da·(bp × c), and likewise.
    let grad_a = bp.cross(&c) * (2.0 / ee) + e * (2.0 * value / ee);
    let grad_b = c.cross(&ap) * (2.0 / ee) - e * (2.0 * value / ee);
    let grad_p = -(grad_a + grad_b);
    let mut gradient = [0.0; 9];
    for k in 0..3 {
        gradient[k] = grad_p[k];
        gradient[3 + k] = grad_a[k];
        gradient[6 + k] = grad_b[k];
    }
    (value, gradient)
}

/// The squared distance from p to the plane of (t0, t1, t2),
/// ((p − t0)·n)² / |n|² with n = (t1 − t0) × (t2 − t0), and its gradient with
/// respect to (p, t0, t1, t2). The triangle must not be degenerate.
pub fn point_plane(p: &Vector3<f64>, t0: &Vector3<f64>, t1: &Vector3<f64>, t2: &Vector3<f64>) -> (f64, [f64; 12]) {
    let (e1, e2) = (t1 - t0, t2 - t0);
    let n = e1.cross(&e2);
    let r = p - t0;
    let nn = n.norm_squared();
    let s = r.dot(&n);
    let value = s * s / nn;
    // ∂value = 2 s/|n|² (∂r·n + r·∂n) − s²/|n|⁴ 2 n·∂n, with ∂n = ∂e1 × e2 + e1 × ∂e2.
    // For a vector m, m·(∂e1 × e2) = ∂e1·(e2 × m) and m·(e1 × ∂e2) = ∂e2·(m × e1).
    let m = r * (2.0 * s / nn) - n * (2.0 * s * s / (nn * nn));
    let grad_p = n * (2.0 * s / nn);
    let grad_t1 = e2.cross(&m);
    let grad_t2 = m.cross(&e1);
    let grad_t0 = -(grad_p + grad_t1 + grad_t2);
    let mut gradient = [0.0; 12];
    for k in 0..3 {
        gradient[k] = grad_p[k];
        gradient[3 + k] = grad_t0[k];
        gradient[6 + k] = grad_t1[k];
        gradient[9 + k] = grad_t2[k];
    }
    (value, gradient)
}

/// The squared distance between the lines through (a0, a1) and (b0, b1),
/// ((a0 − b0)·n)² / |n|² with n = (a1 − a0) × (b1 − b0), and its gradient
/// with respect to (a0, a1, b0, b1). The lines must not be parallel.
pub fn line_line(a0: &Vector3<f64>, a1: &Vector3<f64>, b0: &Vector3<f64>, b1: &Vector3<f64>) -> (f64, [f64; 12]) {
    let (u, v) = (a1 - a0, b1 - b0);
    let n = u.cross(&v);
    let w = a0 - b0;
    let nn = n.norm_squared();
    let s = w.dot(&n);
    let value = s * s / nn;
    let m = w * (2.0 * s / nn) - n * (2.0 * s * s / (nn * nn));
    // ∂n = ∂u × v + u × ∂v: m·(∂u × v) = ∂u·(v × m), m·(u × ∂v) = ∂v·(m × u).
    let grad_u = v.cross(&m);
    let grad_v = m.cross(&u);
    let grad_w = n * (2.0 * s / nn);
    let grad_a0 = grad_w - grad_u;
    let grad_a1 = grad_u;
    let grad_b0 = -grad_w - grad_v;
    let grad_b1 = grad_v;
    let mut gradient = [0.0; 12];
    for k in 0..3 {
        gradient[k] = grad_a0[k];
        gradient[3 + k] = grad_a1[k];
        gradient[6 + k] = grad_b0[k];
        gradient[9 + k] = grad_b1[k];
    }
    (value, gradient)
}

/// The squared distance between point p and triangle (t0, t1, t2), and its
/// gradient with respect to (p, t0, t1, t2), through the closest features.
pub fn point_triangle(p: &Vector3<f64>, t0: &Vector3<f64>, t1: &Vector3<f64>, t2: &Vector3<f64>) -> (f64, [f64; 12]) {
    let corners = [t0, t1, t2];
    let mut gradient = [0.0; 12];
    let mut place = |slot: usize, part: &[f64]| {
        for k in 0..3 {
            gradient[3 * slot + k] += part[k];
        }
    };
    match point_triangle_kind(p, t0, t1, t2) {
        PointTriangleKind::Face => point_plane(p, t0, t1, t2),
        PointTriangleKind::Vertex(i) => {
            let (value, g) = point_point(p, corners[i]);
            place(0, &g[0..3]);
            place(1 + i, &g[3..6]);
            (value, gradient)
        }
        PointTriangleKind::Edge(i) => {
            let j = (i + 1) % 3;
            let (value, g) = point_line(p, corners[i], corners[j]);
            place(0, &g[0..3]);
            place(1 + i, &g[3..6]);
            place(1 + j, &g[6..9]);
            (value, gradient)
        }
    }
}

/// The squared distance between point p and edge (a, b), and its gradient
/// with respect to (p, a, b), through the closest feature: the pair of 2D
/// contact (Li et al. 2020 treat 2D meshes by point–edge pairs alone).
pub fn point_edge(p: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> (f64, [f64; 9]) {
    let ends = [a, b];
    match point_edge_kind(p, a, b) {
        PointEdgeKind::Line => point_line(p, a, b),
        PointEdgeKind::Vertex(i) => {
            let (value, g) = point_point(p, ends[i]);
            let mut gradient = [0.0; 9];
            gradient[..3].copy_from_slice(&g[..3]);
            gradient[3 + 3 * i..6 + 3 * i].copy_from_slice(&g[3..]);
            (value, gradient)
        }
    }
}

/// The squared distance between edges (a0, a1) and (b0, b1), and its gradient
/// with respect to (a0, a1, b0, b1), through the closest features.
pub fn edge_edge(a0: &Vector3<f64>, a1: &Vector3<f64>, b0: &Vector3<f64>, b1: &Vector3<f64>) -> (f64, [f64; 12]) {
    let points = [a0, a1, b0, b1];
    let mut gradient = [0.0; 12];
    let mut place = |slot: usize, part: &[f64]| {
        for k in 0..3 {
            gradient[3 * slot + k] += part[k];
        }
    };
    match edge_edge_kind(a0, a1, b0, b1) {
        EdgeEdgeKind::Lines => line_line(a0, a1, b0, b1),
        EdgeEdgeKind::Vertices(i, j) => {
            let (value, g) = point_point(points[i], points[2 + j]);
            place(i, &g[0..3]);
            place(2 + j, &g[3..6]);
            (value, gradient)
        }
        EdgeEdgeKind::FirstVertexSecondEdge(i) => {
            let (value, g) = point_line(points[i], b0, b1);
            place(i, &g[0..3]);
            place(2, &g[3..6]);
            place(3, &g[6..9]);
            (value, gradient)
        }
        EdgeEdgeKind::FirstEdgeSecondVertex(j) => {
            let (value, g) = point_line(points[2 + j], a0, a1);
            place(2 + j, &g[0..3]);
            place(0, &g[3..6]);
            place(1, &g[6..9]);
            (value, gradient)
        }
    }
}

/// A squared distance with its gradient and Hessian with respect to the
/// pair's stacked coordinates (3 per vertex, in the order of the arguments).
pub type WithHessian<const N: usize> = (f64, [f64; N], SMatrix<f64, N, N>);

fn from_jet<const N: usize>(jet: Jet<N>) -> WithHessian<N> {
    (jet.value, jet.gradient, jet.hessian)
}

/// [`point_point`] with its Hessian, 2 [[I, −I], [−I, I]].
pub fn point_point_hessian(p: &Vector3<f64>, q: &Vector3<f64>) -> WithHessian<6> {
    let x = jet::variables::<6>(&[*p, *q]);
    let d = jet::sub(&x[0], &x[1]);
    from_jet(jet::dot(&d, &d))
}

/// [`point_line`] with its Hessian.
pub fn point_line_hessian(p: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> WithHessian<9> {
    let x = jet::variables::<9>(&[*p, *a, *b]);
    let c = jet::cross(&jet::sub(&x[1], &x[0]), &jet::sub(&x[2], &x[0]));
    let e = jet::sub(&x[2], &x[1]);
    from_jet(jet::dot(&c, &c) / jet::dot(&e, &e))
}

/// [`point_plane`] with its Hessian.
pub fn point_plane_hessian(
    p: &Vector3<f64>,
    t0: &Vector3<f64>,
    t1: &Vector3<f64>,
    t2: &Vector3<f64>,
) -> WithHessian<12> {
    let x = jet::variables::<12>(&[*p, *t0, *t1, *t2]);
    let n = jet::cross(&jet::sub(&x[2], &x[1]), &jet::sub(&x[3], &x[1]));
    let s = jet::dot(&jet::sub(&x[0], &x[1]), &n);
    from_jet(s * s / jet::dot(&n, &n))
}

/// [`line_line`] with its Hessian.
pub fn line_line_hessian(
    a0: &Vector3<f64>,
    a1: &Vector3<f64>,
    b0: &Vector3<f64>,
    b1: &Vector3<f64>,
) -> WithHessian<12> {
    let x = jet::variables::<12>(&[*a0, *a1, *b0, *b1]);
    let n = jet::cross(&jet::sub(&x[1], &x[0]), &jet::sub(&x[3], &x[2]));
    let s = jet::dot(&jet::sub(&x[0], &x[2]), &n);
    from_jet(s * s / jet::dot(&n, &n))
}

/// Scatters a feature's squared distance, gradient and Hessian (over the
/// pair's vertices `slots`, in the feature's order) into the pair's N.
fn scatter<const M: usize, const N: usize>(part: WithHessian<M>, slots: &[usize]) -> WithHessian<N> {
    let (value, g, h) = part;
    let mut gradient = [0.0; N];
    let mut hessian = SMatrix::<f64, N, N>::zeros();
    for (a, &sa) in slots.iter().enumerate() {
        for k in 0..3 {
            gradient[3 * sa + k] += g[3 * a + k];
            for (b, &sb) in slots.iter().enumerate() {
                for l in 0..3 {
                    hessian[(3 * sa + k, 3 * sb + l)] += h[(3 * a + k, 3 * b + l)];
                }
            }
        }
    }
    (value, gradient, hessian)
}

/// [`point_triangle`] with its Hessian (that of the closest features, which
/// is exact where they stay the closest).
pub fn point_triangle_hessian(
    p: &Vector3<f64>,
    t0: &Vector3<f64>,
    t1: &Vector3<f64>,
    t2: &Vector3<f64>,
) -> WithHessian<12> {
    let corners = [t0, t1, t2];
    match point_triangle_kind(p, t0, t1, t2) {
        PointTriangleKind::Face => point_plane_hessian(p, t0, t1, t2),
        PointTriangleKind::Vertex(i) => scatter(point_point_hessian(p, corners[i]), &[0, 1 + i]),
        PointTriangleKind::Edge(i) => {
            let j = (i + 1) % 3;
            scatter(point_line_hessian(p, corners[i], corners[j]), &[0, 1 + i, 1 + j])
        }
    }
}

/// [`point_edge`] with its Hessian (that of the closest feature).
pub fn point_edge_hessian(p: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> WithHessian<9> {
    let ends = [a, b];
    match point_edge_kind(p, a, b) {
        PointEdgeKind::Line => point_line_hessian(p, a, b),
        PointEdgeKind::Vertex(i) => scatter(point_point_hessian(p, ends[i]), &[0, 1 + i]),
    }
}

/// [`edge_edge`] with its Hessian (that of the closest features).
pub fn edge_edge_hessian(
    a0: &Vector3<f64>,
    a1: &Vector3<f64>,
    b0: &Vector3<f64>,
    b1: &Vector3<f64>,
) -> WithHessian<12> {
    let points = [a0, a1, b0, b1];
    match edge_edge_kind(a0, a1, b0, b1) {
        EdgeEdgeKind::Lines => line_line_hessian(a0, a1, b0, b1),
        EdgeEdgeKind::Vertices(i, j) => scatter(point_point_hessian(points[i], points[2 + j]), &[i, 2 + j]),
        EdgeEdgeKind::FirstVertexSecondEdge(i) => scatter(point_line_hessian(points[i], b0, b1), &[i, 2, 3]),
        EdgeEdgeKind::FirstEdgeSecondVertex(j) => scatter(point_line_hessian(points[2 + j], a0, a1), &[2 + j, 0, 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_diagonals_of_a_grid_are_a_cell_apart_not_touching() {
        // Two diagonals of neighbouring cells of a 3 × 3 grid on a face of a
        // unit box at z = 0.299019: exactly parallel, 0.0667 / √2 apart. The
        // rounding residue of uu·vv − (u·v)² once classed them as crossing lines.
        let (third, z) = (0.2 / 3.0, 0.299019);
        let a0 = Vector3::new(0.05 + third, 0.03, z);
        let a1 = Vector3::new(0.05 + 2.0 * third, 0.03 + third, z);
        let b0 = Vector3::new(0.05 + third, 0.03 + third, z);
        let b1 = Vector3::new(0.05 + 2.0 * third, 0.03 + 2.0 * third, z);
        assert_ne!(edge_edge_kind(&a0, &a1, &b0, &b1), EdgeEdgeKind::Lines);
        let (d2, _) = edge_edge(&a0, &a1, &b0, &b1);
        assert!((d2.sqrt() - third / 2f64.sqrt()).abs() < 1e-12, "{}", d2.sqrt());
    }

    /// A small deterministic generator of points in the unit cube.
    fn points(seed: u64, count: usize) -> Vec<Vector3<f64>> {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..count).map(|_| Vector3::new(next(), next(), next())).collect()
    }

    /// The squared distance between two convex hulls of `a` and `b` points,
    /// by a fine sampling of both (an upper bound within the sampling error).
    fn sampled(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
        let n = 60;
        let hull = |corners: &[Vector3<f64>]| -> Vec<Vector3<f64>> {
            match corners.len() {
                1 => vec![corners[0]],
                2 => (0..=n)
                    .map(|i| corners[0].lerp(&corners[1], i as f64 / n as f64))
                    .collect(),
                _ => {
                    let mut out = Vec::new();
                    for i in 0..=n {
                        for j in 0..=(n - i) {
                            let (s, t) = (i as f64 / n as f64, j as f64 / n as f64);
                            out.push(corners[0] + (corners[1] - corners[0]) * s + (corners[2] - corners[0]) * t);
                        }
                    }
                    out
                }
            }
        };
        let (ha, hb) = (hull(a), hull(b));
        let mut best = f64::INFINITY;
        for p in &ha {
            for q in &hb {
                best = best.min((p - q).norm_squared());
            }
        }
        best
    }

    fn check_gradient<const N: usize>(f: impl Fn(&[Vector3<f64>]) -> (f64, [f64; N]), at: &[Vector3<f64>]) {
        let (_, gradient) = f(at);
        let h = 1e-6;
        for index in 0..N {
            let (v, k) = (index / 3, index % 3);
            let mut plus = at.to_vec();
            plus[v][k] += h;
            let mut minus = at.to_vec();
            minus[v][k] -= h;
            let difference = (f(&plus).0 - f(&minus).0) / (2.0 * h);
            let scale = gradient.iter().fold(1e-8_f64, |m, g| m.max(g.abs()));
            assert!(
                (difference - gradient[index]).abs() <= 1e-6 * scale,
                "component {index}: analytic {} against difference {difference}",
                gradient[index]
            );
        }
    }

    #[test]
    fn point_triangle_distances_are_the_least_over_the_triangle() {
        for seed in 0..200 {
            let v = points(seed, 4);
            let (value, _) = point_triangle(&v[0], &v[1], &v[2], &v[3]);
            let reference = sampled(&v[0..1], &v[1..4]);
            assert!(
                value <= reference + 1e-12,
                "seed {seed}: {value} above the sampled {reference}"
            );
            assert!(
                reference - value <= 2e-3 * (1.0 + reference),
                "seed {seed}: {value} against {reference}"
            );
        }
    }

    #[test]
    fn edge_edge_distances_are_the_least_over_the_edges() {
        for seed in 0..200 {
            let v = points(1000 + seed, 4);
            let (value, _) = edge_edge(&v[0], &v[1], &v[2], &v[3]);
            let reference = sampled(&v[0..2], &v[2..4]);
            assert!(
                value <= reference + 1e-12,
                "seed {seed}: {value} above the sampled {reference}"
            );
            assert!(
                reference - value <= 2e-3 * (1.0 + reference),
                "seed {seed}: {value} against {reference}"
            );
        }
    }

    #[test]
    fn gradients_match_differences_for_every_feature_kind() {
        let mut kinds_seen = std::collections::HashSet::new();
        for seed in 0..300 {
            let v = points(5000 + seed, 4);
            let kind = point_triangle_kind(&v[0], &v[1], &v[2], &v[3]);
            // Away from a change of closest feature, the distance is smooth.
            let stable = (0..12).all(|index| {
                [-1e-5, 1e-5].iter().all(|&h| {
                    let mut moved = v.clone();
                    moved[index / 3][index % 3] += h;
                    point_triangle_kind(&moved[0], &moved[1], &moved[2], &moved[3]) == kind
                })
            });
            if stable {
                kinds_seen.insert(format!("{kind:?}"));
                check_gradient(|x| point_triangle(&x[0], &x[1], &x[2], &x[3]), &v);
            }
            let kind = edge_edge_kind(&v[0], &v[1], &v[2], &v[3]);
            let stable = (0..12).all(|index| {
                [-1e-5, 1e-5].iter().all(|&h| {
                    let mut moved = v.clone();
                    moved[index / 3][index % 3] += h;
                    edge_edge_kind(&moved[0], &moved[1], &moved[2], &moved[3]) == kind
                })
            });
            if stable {
                kinds_seen.insert(format!("{kind:?}"));
                check_gradient(|x| edge_edge(&x[0], &x[1], &x[2], &x[3]), &v);
            }
        }
        for kind in ["Face", "Lines"] {
            assert!(kinds_seen.contains(kind), "{kind} never met: {kinds_seen:?}");
        }
        check_gradient(|x| point_point(&x[0], &x[1]), &points(7, 2));
        check_gradient(|x| point_line(&x[0], &x[1], &x[2]), &points(8, 3));
        check_gradient(|x| point_plane(&x[0], &x[1], &x[2], &x[3]), &points(9, 4));
        check_gradient(|x| line_line(&x[0], &x[1], &x[2], &x[3]), &points(10, 4));
    }

    #[test]
    fn a_point_on_the_face_and_crossing_edges_are_at_distance_zero() {
        let t = [Vector3::zeros(), Vector3::x(), Vector3::y()];
        let p = Vector3::new(0.25, 0.25, 0.0);
        assert_eq!(point_triangle(&p, &t[0], &t[1], &t[2]).0, 0.0);
        assert_eq!(point_triangle_kind(&p, &t[0], &t[1], &t[2]), PointTriangleKind::Face);
        let (a0, a1) = (Vector3::new(0.5, -1.0, 0.0), Vector3::new(0.5, 1.0, 0.0));
        let (b0, b1) = (Vector3::new(-1.0, 0.0, 0.0), Vector3::new(1.0, 0.0, 0.0));
        assert_eq!(edge_edge(&a0, &a1, &b0, &b1).0, 0.0);
        // Parallel edges: through their endpoints, never a division by zero.
        let (c0, c1) = (Vector3::new(0.0, 0.0, 1.0), Vector3::new(2.0, 0.0, 1.0));
        let (value, gradient) = edge_edge(&b0, &b1, &c0, &c1);
        assert!(
            (value - 1.0).abs() < 1e-12 && gradient.iter().all(|g| g.is_finite()),
            "{value}"
        );
    }

    /// A squared distance with its gradient and Hessian (row-major), flattened.
    type Flat = (f64, Vec<f64>, Vec<f64>);
    /// A squared distance with its Hessian, as a function of the points.
    type WithHessianOf = dyn Fn(&[Vector3<f64>]) -> Flat;
    /// A squared distance with its gradient alone.
    type PlainOf = dyn Fn(&[Vector3<f64>]) -> (f64, Vec<f64>);

    #[test]
    fn hessians_match_differences_of_the_gradients_and_the_gradients_agree() {
        let h = 1e-6;
        let check = |name: &str, v: &[Vector3<f64>], with: &WithHessianOf, plain: &PlainOf| {
            let (value, gradient, hessian) = with(v);
            let (plain_value, plain_gradient) = plain(v);
            let n = gradient.len();
            assert!(
                (value - plain_value).abs() <= 1e-12 * (1.0 + value.abs()),
                "{name}: value"
            );
            let scale = plain_gradient.iter().fold(1e-8_f64, |m, g| m.max(g.abs()));
            for i in 0..n {
                assert!(
                    (gradient[i] - plain_gradient[i]).abs() <= 1e-10 * scale,
                    "{name}: gradient {i}"
                );
            }
            let hessian_scale = hessian.iter().fold(1e-8_f64, |m, g| m.max(g.abs()));
            for j in 0..n {
                let mut plus = v.to_vec();
                plus[j / 3][j % 3] += h;
                let mut minus = v.to_vec();
                minus[j / 3][j % 3] -= h;
                let (gp, gm) = (plain(&plus).1, plain(&minus).1);
                for i in 0..n {
                    let difference = (gp[i] - gm[i]) / (2.0 * h);
                    assert!(
                        (difference - hessian[i * n + j]).abs() <= 1e-5 * hessian_scale,
                        "{name}: H[{i}][{j}] = {} against {difference}",
                        hessian[i * n + j]
                    );
                    assert!(
                        (hessian[i * n + j] - hessian[j * n + i]).abs() <= 1e-12 * hessian_scale,
                        "{name}: symmetric"
                    );
                }
            }
        };
        fn flat<const N: usize>(r: WithHessian<N>) -> Flat {
            (r.0, r.1.to_vec(), r.2.transpose().as_slice().to_vec())
        }
        for seed in 0..40 {
            let v = points(9000 + seed, 4);
            check(
                "point_point",
                &v[..2],
                &|x| flat(point_point_hessian(&x[0], &x[1])),
                &|x| {
                    let r = point_point(&x[0], &x[1]);
                    (r.0, r.1.to_vec())
                },
            );
            check(
                "point_line",
                &v[..3],
                &|x| flat(point_line_hessian(&x[0], &x[1], &x[2])),
                &|x| {
                    let r = point_line(&x[0], &x[1], &x[2]);
                    (r.0, r.1.to_vec())
                },
            );
            check(
                "point_plane",
                &v,
                &|x| flat(point_plane_hessian(&x[0], &x[1], &x[2], &x[3])),
                &|x| {
                    let r = point_plane(&x[0], &x[1], &x[2], &x[3]);
                    (r.0, r.1.to_vec())
                },
            );
            check(
                "line_line",
                &v,
                &|x| flat(line_line_hessian(&x[0], &x[1], &x[2], &x[3])),
                &|x| {
                    let r = line_line(&x[0], &x[1], &x[2], &x[3]);
                    (r.0, r.1.to_vec())
                },
            );
            // The closest-feature forms agree with their plain gradients wherever they are evaluated.
            let (value, gradient, _) = point_triangle_hessian(&v[0], &v[1], &v[2], &v[3]);
            let (plain_value, plain_gradient) = point_triangle(&v[0], &v[1], &v[2], &v[3]);
            assert!(
                (value - plain_value).abs() <= 1e-12
                    && gradient
                        .iter()
                        .zip(&plain_gradient)
                        .all(|(a, b)| (a - b).abs() <= 1e-10 * (1.0 + b.abs()))
            );
            let (value, gradient, _) = edge_edge_hessian(&v[0], &v[1], &v[2], &v[3]);
            let (plain_value, plain_gradient) = edge_edge(&v[0], &v[1], &v[2], &v[3]);
            assert!(
                (value - plain_value).abs() <= 1e-12
                    && gradient
                        .iter()
                        .zip(&plain_gradient)
                        .all(|(a, b)| (a - b).abs() <= 1e-10 * (1.0 + b.abs()))
            );
        }
    }

    #[test]
    fn point_edge_distances_are_the_least_over_the_edge_with_matching_derivatives_in_each_kind() {
        let mut kinds_seen = std::collections::HashSet::new();
        for seed in 0..200 {
            // In the plane z = 0, as 2D contact lifts its points.
            let v: Vec<Vector3<f64>> = points(20_000 + seed, 3)
                .into_iter()
                .map(|p| Vector3::new(2.0 * p.x - 0.5, p.y, 0.0))
                .collect();
            let (value, gradient) = point_edge(&v[0], &v[1], &v[2]);
            let reference = sampled(&v[0..1], &v[1..3]);
            assert!(value <= reference + 1e-12, "seed {seed}: {value} above {reference}");
            assert!(reference - value <= 2e-3 * (1.0 + reference), "seed {seed}");
            let (with_value, with_gradient, hessian) = point_edge_hessian(&v[0], &v[1], &v[2]);
            assert!((with_value - value).abs() <= 1e-12);
            assert!(with_gradient
                .iter()
                .zip(&gradient)
                .all(|(a, b)| (a - b).abs() <= 1e-10 * (1.0 + b.abs())));
            let kind = point_edge_kind(&v[0], &v[1], &v[2]);
            let stable = (0..9).all(|index| {
                [-1e-5, 1e-5].iter().all(|&h| {
                    let mut moved = v.clone();
                    moved[index / 3][index % 3] += h;
                    point_edge_kind(&moved[0], &moved[1], &moved[2]) == kind
                })
            });
            if !stable {
                continue;
            }
            kinds_seen.insert(format!("{kind:?}"));
            check_gradient(|x| point_edge(&x[0], &x[1], &x[2]), &v);
            let h = 1e-6;
            for j in 0..9 {
                let moved = |s: f64| {
                    let mut y = v.clone();
                    y[j / 3][j % 3] += s;
                    point_edge(&y[0], &y[1], &y[2]).1
                };
                let (plus, minus) = (moved(h), moved(-h));
                for i in 0..9 {
                    let difference = (plus[i] - minus[i]) / (2.0 * h);
                    assert!(
                        (difference - hessian[(i, j)]).abs() <= 1e-5 * (1.0 + hessian[(i, j)].abs()),
                        "seed {seed} {kind:?}: H[{i}][{j}] = {} against {difference}",
                        hessian[(i, j)]
                    );
                }
            }
        }
        for kind in ["Line", "Vertex(0)", "Vertex(1)"] {
            assert!(kinds_seen.contains(kind), "{kind} never met: {kinds_seen:?}");
        }
        // A degenerate edge is a point.
        let p = Vector3::new(1.0, 2.0, 0.0);
        assert_eq!(point_edge(&p, &Vector3::zeros(), &Vector3::zeros()).0, 5.0);
    }
}
