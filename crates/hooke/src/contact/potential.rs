//! The barrier potential of a contact surface (Li et al. 2020, §4, Eq. 7):
//!
//!   B(x) = Σ_{point–triangle pairs} b(d², d̂²) + Σ_{edge–edge pairs} m · b(d², d̂²),
//!
//! over the pairs closer than d̂ (squared distances through the closest
//! features, contact/distance.rs; m the edge–edge mollifier of nearly
//! parallel edges, contact/mollifier.rs, with ε from the rest positions). As
//! in the paper, a pair whose closest features are two points or a point and
//! an edge counts once for each pair it comes from (the IPC toolkit's
//! default, non-convergent formulation sums the same terms as weights).
//!
//! A planar surface (2D, in z = 0) has point–edge pairs alone, each
//! b(d², d̂²) (Li et al. 2020 treat 2D the same way; the IPC toolkit's 2D
//! meshes do so too).
//!
//! The stiffness κ multiplies B outside this module. Gradients and Hessians
//! are with respect to all 3 coordinates of every vertex; the Hessian comes
//! as one 12×12 block per pair, on the pair's four vertices (a point–edge
//! pair's fourth slot is empty: its rows and columns are zero).

use super::barrier::{barrier, barrier_first_derivative, barrier_second_derivative};
use super::broad_phase::candidates;
use super::distance::{edge_edge_hessian, point_edge_hessian, point_triangle_hessian, WithHessian};
use super::mollifier::{cross_squared_norm, mollifier, threshold};
use super::point;
use super::surface::ContactSurface;
use nalgebra::{SMatrix, SVector};
use rayon::prelude::*;

/// What a pair's primitives are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PairKind {
    /// A point and a triangle: vertices [p, t0, t1, t2].
    PointTriangle,
    /// Two edges [a0, a1, b0, b1], with the mollifier's ε (from the rest positions).
    EdgeEdge {
        /// The edge–edge mollifier's ε.
        mollifier_threshold: f64,
    },
    /// A point and an edge of a planar surface: [p, a, b] (2D contact).
    PointEdge,
}

/// A pair within the barrier's reach: its vertices (point and triangle, the
/// two edges' ends, or point and edge) and what they are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActivePair {
    /// The model's vertices of the pair, in the order of the distance
    /// functions; a point–edge pair uses the first three (see [`Self::points`]).
    pub vertices: [usize; 4],
    /// Point–triangle, edge–edge or point–edge.
    pub kind: PairKind,
}

impl ActivePair {
    /// The pair's vertices: four, or three for a point–edge pair.
    pub fn points(&self) -> &[usize] {
        match self.kind {
            PairKind::PointEdge => &self.vertices[..3],
            _ => &self.vertices,
        }
    }

    /// The mollifier's ε of an edge–edge pair.
    pub fn mollifier_threshold(&self) -> Option<f64> {
        match self.kind {
            PairKind::EdgeEdge { mollifier_threshold } => Some(mollifier_threshold),
            _ => None,
        }
    }

    /// The squared distance of the pair at positions `x` (3 per vertex).
    pub fn squared_distance(&self, x: &[f64]) -> f64 {
        let [a, b, c, d] = self.vertices.map(|v| point(x, v));
        match self.kind {
            PairKind::PointTriangle => super::distance::point_triangle(&a, &b, &c, &d).0,
            PairKind::EdgeEdge { .. } => super::distance::edge_edge(&a, &b, &c, &d).0,
            PairKind::PointEdge => super::distance::point_edge(&a, &b, &c).0,
        }
    }

    /// A pair's 12×12 block (as [`pair_term`] gives it) on [`Self::points`]
    /// alone, column-major.
    pub fn block(&self, hessian: &SMatrix<f64, 12, 12>) -> Vec<f64> {
        let n = 3 * self.points().len();
        hessian.view((0, 0), (n, n)).iter().copied().collect()
    }
}

/// One pair's energy, gradient and Hessian on its 12 coordinates.
pub type PairTerm = WithHessian<12>;

/// The pairs of `surface` closer than `dhat` at positions `x` (3 per model
/// vertex; `rest` gives the mollifier's thresholds), in a fixed order.
pub fn active_pairs(surface: &ContactSurface, rest: &[f64], x: &[f64], dhat: f64) -> Vec<ActivePair> {
    let found = candidates(surface, x, x, dhat);
    let reach = dhat * dhat;
    if surface.planar {
        return found
            .vertex_edge
            .par_iter()
            .filter_map(|&(v, e)| {
                let [a, b] = surface.edges[e as usize];
                let pair = ActivePair {
                    vertices: [v as usize, a, b, b],
                    kind: PairKind::PointEdge,
                };
                (pair.squared_distance(x) < reach).then_some(pair)
            })
            .collect();
    }
    let faces = found.vertex_face.par_iter().filter_map(|&(v, f)| {
        let (v, f) = (v as usize, f as usize);
        let [a, b, c] = surface.faces[f];
        let (d2, _) = super::distance::point_triangle(&point(x, v), &point(x, a), &point(x, b), &point(x, c));
        (d2 < reach).then_some(ActivePair {
            vertices: [v, a, b, c],
            kind: PairKind::PointTriangle,
        })
    });
    let edges = found.edge_edge.par_iter().filter_map(|&(i, j)| {
        let (i, j) = (i as usize, j as usize);
        let ([a, b], [c, d]) = (surface.edges[i], surface.edges[j]);
        let (d2, _) = super::distance::edge_edge(&point(x, a), &point(x, b), &point(x, c), &point(x, d));
        (d2 < reach).then(|| ActivePair {
            vertices: [a, b, c, d],
            kind: PairKind::EdgeEdge {
                mollifier_threshold: threshold(&point(rest, a), &point(rest, b), &point(rest, c), &point(rest, d)),
            },
        })
    });
    let mut pairs: Vec<ActivePair> = faces.collect();
    pairs.extend(edges.collect::<Vec<_>>());
    pairs
}

/// The barrier of one pair at `x`: b(d², d̂²), times the mollifier for
/// edges, with its gradient and Hessian (exact, not projected).
pub fn pair_term(pair: &ActivePair, x: &[f64], dhat: f64) -> PairTerm {
    let [p0, p1, p2, p3] = pair.vertices.map(|v| point(x, v));
    let reach = dhat * dhat;
    let (d2, g, h) = match pair.kind {
        PairKind::PointTriangle => point_triangle_hessian(&p0, &p1, &p2, &p3),
        PairKind::EdgeEdge { .. } => edge_edge_hessian(&p0, &p1, &p2, &p3),
        PairKind::PointEdge => padded(point_edge_hessian(&p0, &p1, &p2)),
    };
    let g = SVector::<f64, 12>::from_column_slice(&g);
    let (b, b1, b2) = (
        barrier(d2, reach),
        barrier_first_derivative(d2, reach),
        barrier_second_derivative(d2, reach),
    );
    let plain_gradient = b1 * g;
    let plain_hessian = b2 * g * g.transpose() + b1 * h;
    let Some(epsilon) = pair
        .mollifier_threshold()
        .filter(|&e| cross_squared_norm(&p0, &p1, &p2, &p3) < e)
    else {
        return (b, plain_gradient.into(), plain_hessian);
    };
    // m b: ∇ = m ∇b + b ∇m; ∇² = m ∇²b + ∇b ∇mᵀ + ∇m ∇bᵀ + b ∇²m.
    let (m, gm, hm) = mollifier(&p0, &p1, &p2, &p3, epsilon);
    let gm = SVector::<f64, 12>::from_column_slice(&gm);
    let gradient = m * plain_gradient + b * gm;
    let hessian: SMatrix<f64, 12, 12> =
        m * plain_hessian + plain_gradient * gm.transpose() + gm * plain_gradient.transpose() + b * hm;
    (m * b, gradient.into(), hessian)
}

/// A three-vertex term in the first 9 of 12 coordinates.
fn padded((value, g, h): WithHessian<9>) -> WithHessian<12> {
    let mut gradient = [0.0; 12];
    gradient[..9].copy_from_slice(&g);
    let mut hessian = SMatrix::<f64, 12, 12>::zeros();
    hessian.fixed_view_mut::<9, 9>(0, 0).copy_from(&h);
    (value, gradient, hessian)
}

/// The positive semi-definite part of a pair's Hessian (its eigenvalues
/// clamped at zero), as Newton's method needs it (Li et al. 2020, §4.4: each
/// pair's Hessian projected on its own).
pub fn clamp_to_psd(hessian: SMatrix<f64, 12, 12>) -> SMatrix<f64, 12, 12> {
    let eigen = hessian.symmetric_eigen();
    let kept = SMatrix::<f64, 12, 12>::from_diagonal(&eigen.eigenvalues.map(|l| l.max(0.0)));
    eigen.eigenvectors * kept * eigen.eigenvectors.transpose()
}

/// B(x) over `pairs`, and its gradient added into `gradient` (3 per model vertex).
pub fn energy_and_gradient(pairs: &[ActivePair], x: &[f64], dhat: f64, gradient: &mut [f64]) -> f64 {
    let terms: Vec<PairTerm> = pairs.par_iter().map(|p| pair_term(p, x, dhat)).collect();
    let mut energy = 0.0;
    for (pair, (e, g, _)) in pairs.iter().zip(&terms) {
        energy += e;
        for (slot, &v) in pair.points().iter().enumerate() {
            for k in 0..3 {
                gradient[3 * v + k] += g[3 * slot + k];
            }
        }
    }
    energy
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles facing each other `gap` apart, and a crossing edge pair.
    fn facing(gap: f64) -> (ContactSurface, Vec<f64>) {
        let surface = ContactSurface::of_triangles(vec![[0, 1, 2], [3, 4, 5]]);
        let x = vec![
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, //
            0.2, 0.2, gap, 0.2, 0.7, gap, 0.7, 0.2, gap,
        ];
        (surface, x)
    }

    #[test]
    fn a_point_just_above_a_face_is_one_active_pair_with_the_barrier_of_its_height() {
        let dhat = 0.1;
        let (surface, x) = facing(0.05);
        let pairs = active_pairs(&surface, &x, &x, dhat);
        // The upper triangle's three vertices over the lower face; no edge pair
        // comes within d̂ except through those vertices' edges, which lie in
        // parallel planes 0.05 apart.
        let point_face: Vec<_> = pairs.iter().filter(|p| p.kind == PairKind::PointTriangle).collect();
        assert_eq!(point_face.len(), 3, "{pairs:?}");
        let (energy, _, _) = pair_term(point_face[0], &x, dhat);
        assert!((energy - barrier(0.05 * 0.05, dhat * dhat)).abs() < 1e-15);
        // Out of reach: nothing.
        let (surface, x) = facing(0.2);
        assert!(active_pairs(&surface, &x, &x, dhat).is_empty());
    }

    #[test]
    fn the_projected_hessian_is_semidefinite_and_keeps_a_semidefinite_one() {
        let pair = ActivePair {
            vertices: [0, 1, 2, 3],
            kind: PairKind::EdgeEdge {
                mollifier_threshold: 1e-3,
            },
        };
        let x = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.1, 0.01, 0.15, 0.9, 0.025, 0.15];
        let (_, _, hessian) = pair_term(&pair, &x, 0.3);
        assert!(
            hessian.symmetric_eigen().eigenvalues.min() < 0.0,
            "this pair's Hessian is indefinite"
        );
        let projected = clamp_to_psd(hessian);
        assert!(projected.symmetric_eigen().eigenvalues.min() > -1e-9 * hessian.norm());
        let again = clamp_to_psd(projected);
        assert!((again - projected).norm() <= 1e-12 * projected.norm());
    }

    #[test]
    fn gradients_and_hessians_match_central_differences_with_and_without_the_mollifier() {
        let dhat = 0.3;
        // A point over a face, and two edges: crossing, then nearly parallel.
        let cases: Vec<(ActivePair, Vec<f64>)> = vec![
            (
                ActivePair {
                    vertices: [0, 1, 2, 3],
                    kind: PairKind::PointTriangle,
                },
                vec![0.3, 0.2, 0.12, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
            ),
            (
                ActivePair {
                    vertices: [0, 1, 2, 3],
                    kind: PairKind::EdgeEdge {
                        mollifier_threshold: 1e-3,
                    },
                },
                vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.5, -0.5, 0.15, 0.5, 0.5, 0.15],
            ),
            (
                ActivePair {
                    vertices: [0, 1, 2, 3],
                    kind: PairKind::EdgeEdge {
                        mollifier_threshold: 1e-3,
                    },
                },
                vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.1, 0.01, 0.15, 0.9, 0.025, 0.15],
            ),
        ];
        // A point over an edge in the plane z = 0, inside it and past its end
        // (the fourth vertex is not the pair's).
        let mut cases = cases;
        for x in [
            vec![0.3, 0.12, 0.0, 0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 5.0, 5.0, 0.0],
            vec![1.1, 0.2, 0.0, 0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 5.0, 5.0, 0.0],
        ] {
            let pair = ActivePair {
                vertices: [0, 1, 2, 3],
                kind: PairKind::PointEdge,
            };
            cases.push((pair, x));
        }
        for (case, (pair, x)) in cases.iter().enumerate() {
            let (_, gradient, hessian) = pair_term(pair, x, dhat);
            let h = 1e-7;
            for i in 0..12 {
                let shifted = |s: f64| {
                    let mut y = x.clone();
                    y[i] += s;
                    pair_term(pair, &y, dhat)
                };
                let (plus, minus) = (shifted(h), shifted(-h));
                let g = (plus.0 - minus.0) / (2.0 * h);
                assert!(
                    (g - gradient[i]).abs() < 1e-5 * (1.0 + gradient[i].abs()),
                    "case {case}, ∂{i}: {g} vs {}",
                    gradient[i]
                );
                for j in 0..12 {
                    let column = (plus.1[j] - minus.1[j]) / (2.0 * h);
                    assert!(
                        (column - hessian[(i, j)]).abs() < 1e-4 * (1.0 + hessian[(i, j)].abs()),
                        "case {case}, H[{i},{j}]: {column} vs {}",
                        hessian[(i, j)]
                    );
                }
            }
        }
    }
}
