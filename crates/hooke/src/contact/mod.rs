//! Intersection-free barrier contact (Li et al. 2020, "Incremental Potential
//! Contact: Intersection- and Inversion-free, Large-Deformation Dynamics",
//! ACM TOG 39(4)), its geometry: the distances between surface primitives
//! (`distance`), the barrier of a distance (`barrier`), the mollifier of
//! nearly parallel edges (`mollifier`), the contact surface of a body
//! (`surface`), the candidate pairs of a step (`broad_phase`), continuous
//! collision detection with the step bound it gives (`ccd`, for
//! `EnergyTerm::feasible_step`), the barrier potential of a surface with its
//! derivatives (`potential`), the barrier's stiffness rule (`stiffness`) and
//! an independent intersection check (`intersection`), and lagged smoothed
//! Coulomb friction on the pairs (`friction`). The energy terms built on
//! them are model/barrier_contact.rs and model/friction.rs.

pub mod barrier;
pub mod broad_phase;
mod bvh;
pub mod ccd;
pub mod distance;
pub mod friction;
pub mod intersection;
mod jet;
pub mod mollifier;
pub mod potential;
pub mod stiffness;
pub mod surface;

pub use surface::ContactSurface;

use nalgebra::Vector3;

/// Vertex `v` of positions stored 3 per vertex.
pub fn point(x: &[f64], v: usize) -> Vector3<f64> {
    Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2])
}

/// The diagonal of the box around `vertices` at positions `x` (3 per
/// vertex); 0 for none: the scale the default d̂ and the stiffness rule use.
pub fn bounding_diagonal(x: &[f64], vertices: &[usize]) -> f64 {
    if vertices.is_empty() {
        return 0.0;
    }
    let (mut lo, mut hi) = (Vector3::repeat(f64::INFINITY), Vector3::repeat(f64::NEG_INFINITY));
    for &v in vertices {
        let p = point(x, v);
        lo = lo.inf(&p);
        hi = hi.sup(&p);
    }
    (hi - lo).norm()
}

/// Positions (or displacements) of `dimension` coordinates per vertex as 3
/// per vertex: a 2D model's lie in the plane z = 0, where its contact is computed.
pub fn lifted(x: &[f64], dimension: usize) -> std::borrow::Cow<'_, [f64]> {
    match dimension {
        3 => std::borrow::Cow::Borrowed(x),
        _ => std::borrow::Cow::Owned(x.chunks(dimension).flat_map(|p| [p[0], p[1], 0.0]).collect()),
    }
}
