//! Lagged, smoothed Coulomb friction (Li et al. 2020, "Incremental Potential
//! Contact", §5): a dissipative potential on the tangential relative motion
//! of every contact pair, whose normal force λ, closest points and tangent
//! plane are taken from one configuration (the lag) and held while the step
//! is solved:
//!
//!   D(x) = Σ_k μ λ_k f₀(‖u_k‖),   u_k = Q_k Σ_i w_ki (x_i − x_iⁿ),
//!
//! with w_k the weights that give the relative displacement of the pair's
//! two closest points (1 and −1 for two vertices, barycentric otherwise),
//! Q_k = I − n_k n_kᵀ the projector onto the plane normal to the direction
//! between those points, and f₀ the paper's C¹ smoothing of y ↦ y (Eq. 15):
//!
//!   f₀(y) = −y³/(3ε²) + y²/ε + ε/3 for y < ε,  y from ε on,   ε = ε_v h,
//!
//! so that slip slower than ε_v is resisted like a stiff viscous drag (static
//! friction, up to a creep below ε_v) and faster slip by μλ (kinetic). The
//! projector gives the same values as the toolkit's 3 × 2 tangent bases: D
//! depends only on the plane they span. D is in joules (λ in newtons times a
//! slip in metres): the paper's potential with velocities, times h.
//!
//! With the lag fixed, D is convex in x (f₀ is convex and u linear in x), so
//! its Hessian needs no projection. As the toolkit does, an edge–edge pair
//! whose mollifier is active (nearly parallel edges) gets no friction: its
//! tangent plane is not defined.

use super::distance::{edge_edge_kind, point_segment_parameter, point_triangle_kind, EdgeEdgeKind, PointTriangleKind};
use super::point;
use nalgebra::{Matrix3, Vector3};

/// f₀(y) for the smoothing length ε (y ≥ 0): f₀(0) = ε/3, f₀ = y from ε on.
pub fn smoothed_slip(y: f64, epsilon: f64) -> f64 {
    match y < epsilon {
        true => -y * y * y / (3.0 * epsilon * epsilon) + y * y / epsilon + epsilon / 3.0,
        false => y,
    }
}

/// f₁ = f₀′: 2y/ε − y²/ε² below ε, 1 from ε on.
pub fn smoothed_slip_derivative(y: f64, epsilon: f64) -> f64 {
    match y < epsilon {
        true => y * (2.0 / epsilon - y / (epsilon * epsilon)),
        false => 1.0,
    }
}

/// f₁(y)/y, finite at y = 0 (2/ε).
fn derivative_over_slip(y: f64, epsilon: f64) -> f64 {
    match y < epsilon {
        true => 2.0 / epsilon - y / (epsilon * epsilon),
        false => 1.0 / y,
    }
}

/// f₁′(y) = f₀″(y): 2/ε − 2y/ε² below ε, 0 from ε on; never negative.
fn second_derivative(y: f64, epsilon: f64) -> f64 {
    match y < epsilon {
        true => 2.0 / epsilon - 2.0 * y / (epsilon * epsilon),
        false => 0.0,
    }
}

/// One frictional contact, lagged: up to four vertices with the weights of
/// their relative displacement, the tangent plane and the normal force.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionContact {
    /// The vertices (the first `count` are used).
    pub vertices: [usize; 4],
    /// How many vertices: 1 (a vertex against a fixed plane), 2, 3 or 4.
    pub count: usize,
    /// The weights of the relative displacement, Σ wᵢ Δxᵢ.
    pub weights: [f64; 4],
    /// The unit normal of the tangent plane.
    pub normal: Vector3<f64>,
    /// λ, N: the barrier's normal force on the pair at the lag.
    pub normal_force: f64,
}

/// The relative position of the closest points of a point–triangle pair
/// (p, t0, t1, t2) as weights: 1 on p, minus the closest point's on the triangle.
pub fn point_triangle_weights(x: &[f64], vertices: [usize; 4]) -> [f64; 4] {
    let [p, t0, t1, t2] = vertices.map(|v| point(x, v));
    let corners = [t0, t1, t2];
    let mut weights = [1.0, 0.0, 0.0, 0.0];
    match point_triangle_kind(&p, &t0, &t1, &t2) {
        PointTriangleKind::Vertex(i) => weights[1 + i] = -1.0,
        PointTriangleKind::Edge(i) => {
            let j = (i + 1) % 3;
            let t = point_segment_parameter(&p, &corners[i], &corners[j]);
            weights[1 + i] = -(1.0 - t);
            weights[1 + j] = -t;
        }
        PointTriangleKind::Face => {
            let normal = (t1 - t0).cross(&(t2 - t0));
            let area2 = normal.norm_squared();
            for i in 0..3 {
                let (j, k) = ((i + 1) % 3, (i + 2) % 3);
                weights[1 + i] = -normal.dot(&(corners[j] - p).cross(&(corners[k] - p))) / area2;
            }
        }
    }
    weights
}

/// The relative position of the closest points of a point–edge pair
/// (p, a, b) of a planar surface as weights: [1, −(1 − t), −t] with t the
/// closest point's parameter on the edge, clamped to it (the fourth is 0).
pub fn point_edge_weights(x: &[f64], vertices: [usize; 4]) -> [f64; 4] {
    let [p, a, b, _] = vertices.map(|v| point(x, v));
    let t = point_segment_parameter(&p, &a, &b).clamp(0.0, 1.0);
    [1.0, -(1.0 - t), -t, 0.0]
}

/// The relative position of the closest points of edges (a0, a1) and
/// (b0, b1) as weights: the first edge's point minus the second's.
pub fn edge_edge_weights(x: &[f64], vertices: [usize; 4]) -> [f64; 4] {
    let [a0, a1, b0, b1] = vertices.map(|v| point(x, v));
    let on = |t: f64| [1.0 - t, t];
    let (a, b) = match edge_edge_kind(&a0, &a1, &b0, &b1) {
        EdgeEdgeKind::Vertices(i, j) => (on(i as f64), on(j as f64)),
        EdgeEdgeKind::FirstVertexSecondEdge(i) => {
            let end = [a0, a1][i];
            (on(i as f64), on(point_segment_parameter(&end, &b0, &b1)))
        }
        EdgeEdgeKind::FirstEdgeSecondVertex(j) => {
            let end = [b0, b1][j];
            (on(point_segment_parameter(&end, &a0, &a1)), on(j as f64))
        }
        EdgeEdgeKind::Lines => {
            let (u, v, w) = (a1 - a0, b1 - b0, a0 - b0);
            let (uu, uv, vv, uw, vw) = (u.dot(&u), u.dot(&v), v.dot(&v), u.dot(&w), v.dot(&w));
            let denominator = u.cross(&v).norm_squared();
            let s = (uv * vw - vv * uw) / denominator;
            let t = (uu * vw - uv * uw) / denominator;
            (on(s), on(t))
        }
    };
    [a[0], a[1], -b[0], -b[1]]
}

impl FrictionContact {
    /// A pair's contact at positions `x` on its first `count` vertices (4,
    /// or 3 for a point–edge pair), from the weights of its closest points;
    /// None where they coincide (no tangent plane).
    pub fn of_pair(
        x: &[f64],
        vertices: [usize; 4],
        count: usize,
        weights: [f64; 4],
        normal_force: f64,
    ) -> Option<FrictionContact> {
        let contact = FrictionContact {
            vertices,
            count,
            weights,
            normal: Vector3::zeros(),
            normal_force,
        };
        let gap = contact.relative(x);
        let length = gap.norm();
        (length > 0.0).then(|| FrictionContact {
            normal: gap / length,
            ..contact
        })
    }

    /// A vertex against a plane of unit normal `normal`; the plane's own
    /// motion is that of a stand-in vertex `plane_point` (its point), so a
    /// moving plane drags what it touches.
    pub fn of_plane(vertex: usize, plane_point: usize, normal: Vector3<f64>, normal_force: f64) -> FrictionContact {
        FrictionContact {
            vertices: [vertex, plane_point, 0, 0],
            count: 2,
            weights: [1.0, -1.0, 0.0, 0.0],
            normal,
            normal_force,
        }
    }

    /// Σ wᵢ yᵢ over the contact's vertices of `y` (3 per vertex).
    fn relative(&self, y: &[f64]) -> Vector3<f64> {
        (0..self.count).fold(Vector3::zeros(), |sum, i| {
            sum + self.weights[i] * point(y, self.vertices[i])
        })
    }

    /// The tangential slip u = Q Σ wᵢ Δxᵢ for displacements `displacement`.
    pub fn slip(&self, displacement: &[f64]) -> Vector3<f64> {
        let r = self.relative(displacement);
        r - self.normal * self.normal.dot(&r)
    }

    /// μλ f₀(‖u‖), and ∂/∂(Σ wᵢ Δxᵢ) of it.
    fn energy_and_force(&self, displacement: &[f64], mu: f64, epsilon: f64) -> (f64, Vector3<f64>) {
        let u = self.slip(displacement);
        let y = u.norm();
        let scale = mu * self.normal_force;
        (
            scale * smoothed_slip(y, epsilon),
            scale * derivative_over_slip(y, epsilon) * u,
        )
    }

    /// ∂²/∂r² of μλ f₀(‖Q r‖), r = Σ wᵢ Δxᵢ: μλ [(f₁/y) Q + (f₁′ − f₁/y) ûûᵀ],
    /// positive semi-definite (f₁/y ≥ f₁′ ≥ 0).
    pub fn slip_hessian(&self, displacement: &[f64], mu: f64, epsilon: f64) -> Matrix3<f64> {
        let u = self.slip(displacement);
        let y = u.norm();
        let projector = Matrix3::identity() - self.normal * self.normal.transpose();
        let over = derivative_over_slip(y, epsilon);
        let mut hessian = over * projector;
        if y > 0.0 {
            let direction = u / y;
            hessian += (second_derivative(y, epsilon) - over) * direction * direction.transpose();
        }
        mu * self.normal_force * hessian
    }
}

/// D over `contacts` for `displacement` (3 per vertex, from the lag), with
/// its gradient added into `gradient` for the vertices below `moving` (the
/// others are fixed: their displacement is 0 and they take no gradient).
pub fn dissipation(
    contacts: &[FrictionContact],
    displacement: &[f64],
    mu: f64,
    epsilon: f64,
    moving: usize,
    gradient: &mut [f64],
) -> f64 {
    let mut energy = 0.0;
    for contact in contacts {
        let (e, force) = contact.energy_and_force(displacement, mu, epsilon);
        energy += e;
        for i in 0..contact.count {
            let v = contact.vertices[i];
            if v < moving {
                for k in 0..3 {
                    gradient[3 * v + k] += contact.weights[i] * force[k];
                }
            }
        }
    }
    energy
}

/// A contact's Hessian block on its vertices, column-major: wᵢ wⱼ A with A
/// the 3 × 3 slip Hessian.
pub fn contact_block(contact: &FrictionContact, displacement: &[f64], mu: f64, epsilon: f64) -> Vec<f64> {
    let a = contact.slip_hessian(displacement, mu, epsilon);
    let n = 3 * contact.count;
    let mut block = vec![0.0; n * n];
    for j in 0..contact.count {
        for i in 0..contact.count {
            let w = contact.weights[i] * contact.weights[j];
            for l in 0..3 {
                for k in 0..3 {
                    block[(3 * j + l) * n + 3 * i + k] = w * a[(k, l)];
                }
            }
        }
    }
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smoothing_is_c1_at_epsilon_and_matches_its_derivatives() {
        let epsilon = 0.3;
        assert!((smoothed_slip(epsilon, epsilon) - epsilon).abs() < 1e-15);
        assert!((smoothed_slip(0.0, epsilon) - epsilon / 3.0).abs() < 1e-15);
        assert!((smoothed_slip_derivative(epsilon * (1.0 - 1e-12), epsilon) - 1.0).abs() < 1e-9);
        let h = 1e-7;
        for y in [0.0, 0.05, 0.2, 0.29, 0.31, 1.0] {
            let derivative =
                (smoothed_slip(y + h, epsilon) - smoothed_slip((y - h).max(0.0), epsilon)) / (y + h - (y - h).max(0.0));
            assert!(
                (derivative - smoothed_slip_derivative(y, epsilon)).abs() < 1e-6,
                "y = {y}"
            );
            let second = (smoothed_slip_derivative(y + h, epsilon)
                - smoothed_slip_derivative((y - h).max(0.0), epsilon))
                / (y + h - (y - h).max(0.0));
            assert!((second - second_derivative(y, epsilon)).abs() < 1e-5, "y = {y}");
        }
    }

    /// A point over a triangle (face, edge and vertex closest), two crossing
    /// edges, and a plane contact, at a lag; then displaced.
    fn cases() -> Vec<(FrictionContact, Vec<f64>)> {
        let lag = vec![
            0.3, 0.2, 0.12, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, // face
        ];
        let beside = vec![0.8, 0.8, 0.1, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]; // edge
        let corner = vec![-0.2, -0.1, 0.1, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]; // vertex
        let edges = vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.5, -0.5, 0.15, 0.5, 0.5, 0.15];
        let mut out = Vec::new();
        for x in [lag, beside, corner] {
            let w = point_triangle_weights(&x, [0, 1, 2, 3]);
            out.push((FrictionContact::of_pair(&x, [0, 1, 2, 3], 4, w, 2.5).unwrap(), x));
        }
        let w = edge_edge_weights(&edges, [0, 1, 2, 3]);
        out.push((
            FrictionContact::of_pair(&edges, [0, 1, 2, 3], 4, w, 0.7).unwrap(),
            edges,
        ));
        let tilted = Vector3::new(0.3, 0.1, 1.0).normalize();
        out.push((FrictionContact::of_plane(0, 1, tilted, 4.0), vec![0.0; 6]));
        // Points over an edge in the plane z = 0: within it, and past its end.
        for p in [[0.3, 0.12], [1.2, 0.3]] {
            let x = vec![p[0], p[1], 0.0, 0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 0.0, 0.0, 0.0];
            let w = point_edge_weights(&x, [0, 1, 2, 3]);
            out.push((FrictionContact::of_pair(&x, [0, 1, 2, 3], 3, w, 1.5).unwrap(), x));
        }
        out
    }

    #[test]
    fn point_edge_weights_give_the_distance_and_a_normal_in_the_plane() {
        for (contact, x) in cases().into_iter().skip(5) {
            assert_eq!(contact.count, 3);
            let gap = contact.relative(&x).norm();
            let [p, a, b, _] = contact.vertices.map(|v| point(&x, v));
            let expected = super::super::distance::point_edge(&p, &a, &b).0;
            assert!((gap * gap - expected).abs() < 1e-14, "{gap}² vs {expected}");
            assert_eq!(contact.normal.z, 0.0);
            // Sliding along the edge slips; moving the pair together does not.
            let together: Vec<f64> = (0..4).flat_map(|_| [0.03, -0.02, 0.0]).collect();
            assert!(contact.slip(&together).norm() < 1e-15);
        }
    }

    #[test]
    fn closest_point_weights_give_the_distance_of_the_pair() {
        for (case, (contact, x)) in cases().into_iter().take(4).enumerate() {
            let gap = contact.relative(&x).norm();
            let [a, b, c, d] = contact.vertices.map(|v| point(&x, v));
            let expected = match case {
                3 => super::super::distance::edge_edge(&a, &b, &c, &d).0,
                _ => super::super::distance::point_triangle(&a, &b, &c, &d).0,
            };
            assert!((gap * gap - expected).abs() < 1e-14, "{gap}² vs {expected}");
        }
    }

    #[test]
    fn gradients_and_hessians_match_central_differences_in_the_static_and_kinetic_regimes() {
        let (mu, epsilon) = (0.4, 0.01);
        for (case, (contact, _)) in cases().iter().enumerate() {
            let n = 3 * contact.count;
            // Slips below ε (static), near it, and far above it (kinetic).
            for size in [0.002, 0.009, 0.05] {
                let displacement: Vec<f64> = (0..n).map(|i| size * ((i as f64 * 1.7).sin())).collect();
                let mut padded = vec![0.0; 12];
                padded[..n].copy_from_slice(&displacement);
                let evaluate = |y: &[f64]| {
                    let mut g = vec![0.0; 12];
                    let e = dissipation(std::slice::from_ref(contact), y, mu, epsilon, 4, &mut g);
                    (e, g)
                };
                let (_, gradient) = evaluate(&padded);
                let block = contact_block(contact, &padded, mu, epsilon);
                let h = 1e-8;
                for i in 0..n {
                    let shifted = |s: f64| {
                        let mut y = padded.clone();
                        y[i] += s;
                        evaluate(&y)
                    };
                    let (plus, minus) = (shifted(h), shifted(-h));
                    let g = (plus.0 - minus.0) / (2.0 * h);
                    assert!(
                        (g - gradient[i]).abs() < 1e-6 * (1.0 + gradient[i].abs()),
                        "case {case}, slip {size}, ∂{i}: {g} vs {}",
                        gradient[i]
                    );
                    for j in 0..n {
                        let column = (plus.1[j] - minus.1[j]) / (2.0 * h);
                        let exact = block[i * n + j];
                        assert!(
                            (column - exact).abs() < 1e-4 * (1.0 + exact.abs()),
                            "case {case}, slip {size}, H[{i},{j}]: {column} vs {exact}"
                        );
                    }
                }
                let eigen = nalgebra::DMatrix::from_column_slice(n, n, &block).symmetric_eigen();
                assert!(eigen.eigenvalues.min() > -1e-9, "case {case}: not semi-definite");
            }
        }
    }

    #[test]
    fn motion_along_the_normal_and_rigid_motion_of_the_pair_do_not_slip() {
        for (contact, _) in cases().into_iter().take(4) {
            let normal = contact.normal;
            let apart: Vec<f64> = (0..4)
                .flat_map(|i| (contact.weights[i].signum() * 0.01 * normal).as_slice().to_vec())
                .collect();
            assert!(contact.slip(&apart).norm() < 1e-15);
            let together: Vec<f64> = (0..4).flat_map(|_| [0.03, -0.02, 0.05]).collect();
            assert!(contact.slip(&together).norm() < 1e-14, "weights sum to zero");
        }
    }
}
