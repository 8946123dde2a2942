//! Continuous collision detection: how far along a step two surface
//! primitives can move before they touch, by additive CCD (Li, Kaufman and
//! Jiang 2021, "Codimensional Incremental Potential Contact", Algorithm 1).
//!
//! The pair advances in steps that no relative motion can cover before the
//! distance is used up: with the displacements made relative (their mean
//! removed) and l_p the largest closing speed they allow (the largest
//! displacement on one side plus the largest on the other), a step of
//! 0.9 d/l_p cannot close the distance d. The search stops once the distance
//! falls below s = 0.1 of where it started and returns the time before that
//! (the toolkit's conservative rescaling 0.9 = 1 − s). The result is never
//! after the true time of impact, and the pair is still 10% of its starting
//! distance apart there, which the barrier's line search needs: at distance
//! zero the barrier is infinite.
//!
//! [`step_bound`] gives the largest fraction of a whole step of a contact
//! surface that no pair can tunnel through: the feasible step bound of Li et
//! al. 2020 (§4.2, "CCD-filtered line search") that barrier contact hands the
//! minimisers.

use super::broad_phase::candidates;
use super::distance::{edge_edge, point_edge, point_triangle};
use super::surface::ContactSurface;
use nalgebra::Vector3;
use rayon::prelude::*;

/// The fraction of the starting distance below which the search stops.
pub const STOP_FRACTION: f64 = 0.1;

/// Advancing steps a pair may take before its time is taken as it stands
/// (still before impact): a pair sliding along each other at a tiny distance
/// can otherwise creep on for very long.
const MAX_ADVANCES: usize = 1_000_000;

/// The N vertices of a pair and their displacements over the step.
type Pair<const N: usize> = ([Vector3<f64>; N], [Vector3<f64>; N]);

/// Additive CCD of a pair whose squared distance is `squared_distance`,
/// the first `first` vertices one primitive, the rest the other: the time in
/// [0, 1] at which to stop, or None when the pair cannot meet within the step.
fn additive_ccd<const N: usize>(
    (mut x, mut p): Pair<N>,
    first: usize,
    squared_distance: impl Fn(&[Vector3<f64>; N]) -> f64,
) -> Option<f64> {
    let mean = p.iter().sum::<Vector3<f64>>() / N as f64;
    p.iter_mut().for_each(|v| *v -= mean);
    let largest = |range: std::ops::Range<usize>| p[range].iter().map(|v| v.norm()).fold(0.0, f64::max);
    let closing = largest(0..first) + largest(first..N);
    if closing == 0.0 {
        return None;
    }
    let mut distance = squared_distance(&x).sqrt();
    // Touching already: no step is safe (and advancing by 0.9 · 0 would loop).
    if distance == 0.0 {
        return Some(0.0);
    }
    let gap = STOP_FRACTION * distance;
    let mut time = 0.0;
    let mut advance = (1.0 - STOP_FRACTION) * distance / closing;
    for _ in 0..MAX_ADVANCES {
        x.iter_mut().zip(&p).for_each(|(xi, pi)| *xi += advance * pi);
        distance = squared_distance(&x).sqrt();
        if time > 0.0 && distance < gap {
            return Some(time);
        }
        time += advance;
        // Still apart at the step's end: the whole step is free.
        if time >= 1.0 {
            return None;
        }
        advance = 0.9 * distance / closing;
    }
    Some(time)
}

/// The time in [0, 1] at which point p and triangle (t0, t1, t2), moving by
/// `dp` and `dt`, are to stop (see the module), or None.
pub fn point_triangle_time(p: [Vector3<f64>; 4], displacements: [Vector3<f64>; 4]) -> Option<f64> {
    additive_ccd((p, displacements), 1, |x| point_triangle(&x[0], &x[1], &x[2], &x[3]).0)
}

/// The time in [0, 1] at which edges (x0, x1) and (x2, x3), moving by their
/// displacements, are to stop, or None.
pub fn edge_edge_time(x: [Vector3<f64>; 4], displacements: [Vector3<f64>; 4]) -> Option<f64> {
    additive_ccd((x, displacements), 2, |x| edge_edge(&x[0], &x[1], &x[2], &x[3]).0)
}

/// The time in [0, 1] at which point x0 and edge (x1, x2) of a planar
/// surface, moving by their displacements, are to stop, or None.
pub fn point_edge_time(x: [Vector3<f64>; 3], displacements: [Vector3<f64>; 3]) -> Option<f64> {
    additive_ccd((x, displacements), 1, |x| point_edge(&x[0], &x[1], &x[2]).0)
}

/// The largest α ∈ (0, 1] such that the surface can move from `x` by α·`dx`
/// (3 per model vertex) with no pair of its primitives meeting: the least
/// stopping time over the broad phase's candidates of the whole step, 1 when
/// there is none.
pub fn step_bound(surface: &ContactSurface, x: &[f64], dx: &[f64]) -> f64 {
    step_bound_where(surface, x, dx, |_| true)
}

/// [`step_bound`] over the candidate pairs whose vertices `counts`
/// (a scene without self-contact leaves out the pairs within one body).
pub fn step_bound_where(
    surface: &ContactSurface,
    x: &[f64],
    dx: &[f64],
    counts: impl Fn(&[usize]) -> bool + Sync,
) -> f64 {
    let end: Vec<f64> = x.iter().zip(dx).map(|(a, b)| a + b).collect();
    let pairs = candidates(surface, x, &end, 0.0);
    let at = |v: usize| Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]);
    let by = |v: usize| Vector3::new(dx[3 * v], dx[3 * v + 1], dx[3 * v + 2]);
    let gather = |vertices: [usize; 4]| (vertices.map(at), vertices.map(by));
    let faces = pairs.vertex_face.par_iter().filter_map(|&(v, f)| {
        let (v, f) = (v as usize, f as usize);
        let [a, b, c] = surface.faces[f];
        let vertices = [v, a, b, c];
        if !counts(&vertices) {
            return None;
        }
        let (points, moves) = gather(vertices);
        point_triangle_time(points, moves)
    });
    let edges = pairs.edge_edge.par_iter().filter_map(|&(i, j)| {
        let (i, j) = (i as usize, j as usize);
        let ([a, b], [c, d]) = (surface.edges[i], surface.edges[j]);
        let vertices = [a, b, c, d];
        if !counts(&vertices) {
            return None;
        }
        let (points, moves) = gather(vertices);
        edge_edge_time(points, moves)
    });
    let points = pairs.vertex_edge.par_iter().filter_map(|&(v, e)| {
        let [a, b] = surface.edges[e as usize];
        if !counts(&[v as usize, a, b]) {
            return None;
        }
        let vertices = [v as usize, a, b];
        point_edge_time(vertices.map(at), vertices.map(by))
    });
    faces.chain(edges).chain(points).reduce(|| 1.0, f64::min).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64, y: f64, z: f64) -> Vector3<f64> {
        Vector3::new(x, y, z)
    }

    const TRIANGLE: [[f64; 3]; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];

    fn falling_point(height: f64, drop: f64) -> ([Vector3<f64>; 4], [Vector3<f64>; 4]) {
        let [a, b, c] = TRIANGLE.map(|p| v(p[0], p[1], p[2]));
        (
            [v(0.2, 0.2, height), a, b, c],
            [v(0.0, 0.0, -drop), v(0.0, 0.0, 0.0), v(0.0, 0.0, 0.0), v(0.0, 0.0, 0.0)],
        )
    }

    #[test]
    fn a_point_falling_onto_a_triangle_stops_before_it_at_a_tenth_of_its_height() {
        // From 1 m above, 2 m down: impact at t = 0.5.
        let (x, p) = falling_point(1.0, 2.0);
        let t = point_triangle_time(x, p).expect("it hits");
        assert!(t < 0.5 && t > 0.4, "{t}");
        let height = 1.0 - 2.0 * t;
        assert!(height >= STOP_FRACTION * 1.0 - 1e-12, "stopped at {height}");
        // Half as far down: no impact within the step.
        assert_eq!(
            point_triangle_time(falling_point(1.0, 0.9).0, falling_point(1.0, 0.9).1),
            None
        );
        // Moving together (a rigid translation) never meets.
        let (x, _) = falling_point(1.0, 2.0);
        assert_eq!(point_triangle_time(x, [v(0.0, 0.0, -5.0); 4]), None);
    }

    #[test]
    fn a_pair_already_touching_admits_no_step_at_once() {
        // The point on the triangle, moving into it or along it.
        let (x, p) = falling_point(0.0, 1.0);
        assert_eq!(point_triangle_time(x, p), Some(0.0));
        let sliding = [v(1.0, 0.0, 0.0), v(0.0, 0.0, 0.0), v(0.0, 0.0, 0.0), v(0.0, 0.0, 0.0)];
        assert_eq!(point_triangle_time(x, sliding), Some(0.0));
        // Two edges crossing at a point.
        let x = [v(-1.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, -1.0, 0.0), v(0.0, 1.0, 0.0)];
        let up = v(0.0, 0.0, 1.0);
        let zero = v(0.0, 0.0, 0.0);
        assert_eq!(edge_edge_time(x, [up, up, zero, zero]), Some(0.0));
    }

    #[test]
    fn crossing_edges_stop_before_they_meet() {
        // Edge a along x at z = 1 moving down by 2; edge b along y at z = 0.
        let x = [v(-1.0, 0.0, 1.0), v(1.0, 0.0, 1.0), v(0.0, -1.0, 0.0), v(0.0, 1.0, 0.0)];
        let down = v(0.0, 0.0, -2.0);
        let zero = v(0.0, 0.0, 0.0);
        let t = edge_edge_time(x, [down, down, zero, zero]).expect("they cross");
        assert!(t < 0.5 && t > 0.4, "{t}");
    }

    /// The first time the squared distance reaches zero along the straight
    /// paths, by sampling (an upper bound on the true time of impact).
    fn sampled_impact(
        x: &[Vector3<f64>; 4],
        p: &[Vector3<f64>; 4],
        distance: impl Fn(&[Vector3<f64>; 4]) -> f64,
    ) -> Option<f64> {
        let samples = 20_000;
        (0..=samples).map(|k| k as f64 / samples as f64).find(|&t| {
            let at: [Vector3<f64>; 4] = std::array::from_fn(|i| x[i] + t * p[i]);
            distance(&at) < 1e-10
        })
    }

    type SquaredDistance = Box<dyn Fn(&[Vector3<f64>; 4]) -> f64>;

    #[test]
    fn random_pairs_never_stop_after_impact_and_always_stop_apart() {
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut hits = 0;
        for case in 0..1000 {
            let x: [Vector3<f64>; 4] = std::array::from_fn(|_| v(next(), next(), next()));
            let p: [Vector3<f64>; 4] = std::array::from_fn(|_| 3.0 * v(next(), next(), next()));
            let (time, distance): (Option<f64>, SquaredDistance) = match case % 2 {
                0 => (
                    point_triangle_time(x, p),
                    Box::new(|y: &[Vector3<f64>; 4]| point_triangle(&y[0], &y[1], &y[2], &y[3]).0),
                ),
                _ => (
                    edge_edge_time(x, p),
                    Box::new(|y: &[Vector3<f64>; 4]| edge_edge(&y[0], &y[1], &y[2], &y[3]).0),
                ),
            };
            let start = distance(&x).sqrt();
            if let Some(impact) = sampled_impact(&x, &p, &distance) {
                hits += 1;
                let t = time.expect("a pair that meets is caught");
                assert!(t <= impact, "case {case}: stops at {t} after impact at {impact}");
            }
            if let Some(t) = time {
                let at: [Vector3<f64>; 4] = std::array::from_fn(|i| x[i] + t * p[i]);
                assert!(
                    distance(&at).sqrt() >= STOP_FRACTION * start * (1.0 - 1e-9),
                    "case {case}"
                );
            }
        }
        assert!(hits > 30, "{hits} of 1000 random pairs meet");
    }

    #[test]
    fn the_step_bound_of_a_surface_stops_a_falling_triangle_above_another() {
        let surface = ContactSurface::of_triangles(vec![[0, 1, 2], [3, 4, 5]]);
        let x = [
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, //
            0.1, 0.1, 0.5, 0.6, 0.1, 0.5, 0.1, 0.6, 0.5,
        ];
        let mut dx = [0.0; 18];
        for k in 3..6 {
            dx[3 * k + 2] = -1.0; // the upper triangle drops 1 m: contact at α = 0.5
        }
        let alpha = step_bound(&surface, &x, &dx);
        assert!(alpha < 0.5 && alpha > 0.4, "{alpha}");
        // Half the drop: free.
        let half: Vec<f64> = dx.iter().map(|d| 0.4 * d).collect();
        assert_eq!(step_bound(&surface, &x, &half), 1.0);
    }

    #[test]
    fn points_and_edges_in_the_plane_never_stop_after_impact_and_always_stop_apart() {
        let mut state = 11u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let distance = |y: &[Vector3<f64>; 4]| point_edge(&y[0], &y[1], &y[2]).0;
        let mut hits = 0;
        for case in 0..300 {
            let x: [Vector3<f64>; 3] = std::array::from_fn(|_| v(next(), next(), 0.0));
            let p: [Vector3<f64>; 3] = std::array::from_fn(|_| 3.0 * v(next(), next(), 0.0));
            let time = point_edge_time(x, p);
            // The sampler takes four points: the fourth stands still, unused.
            let (x4, p4) = ([x[0], x[1], x[2], x[2]], [p[0], p[1], p[2], p[2]]);
            let start = distance(&x4).sqrt();
            if let Some(impact) = sampled_impact(&x4, &p4, distance) {
                hits += 1;
                let t = time.expect("a pair that meets is caught");
                assert!(t <= impact, "case {case}: stops at {t} after impact at {impact}");
            }
            if let Some(t) = time {
                let at: [Vector3<f64>; 4] = std::array::from_fn(|i| x4[i] + t * p4[i]);
                assert!(
                    distance(&at).sqrt() >= STOP_FRACTION * start * (1.0 - 1e-9),
                    "case {case}"
                );
            }
        }
        assert!(hits > 30, "{hits} of 300 random pairs meet");
        // A point falling onto an edge 1 m below, 2 m down: impact at t = 0.5.
        let zero = v(0.0, 0.0, 0.0);
        let x = [v(0.3, 1.0, 0.0), v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0)];
        let t = point_edge_time(x, [v(0.0, -2.0, 0.0), zero, zero]).expect("it hits");
        assert!(t < 0.5 && t > 0.4, "{t}");
        assert_eq!(point_edge_time(x, [v(0.0, -0.8, 0.0), zero, zero]), None);
    }
}
