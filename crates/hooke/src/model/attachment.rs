//! Soft pins: vertices pulled toward their prescribed positions by zero-length
//! springs (the attachments of the Liu 2018 thesis, §8.2), instead of being removed from the
//! unknowns. E = ½ Σᵥ kᵥ Σₐ (xᵥₐ − pᵥₐ(t))² over the held components a, with
//! pᵥ(t) the pin's motion; the group's stiffness k is shared among its vertices
//! in proportion to their lumped mass (kᵥ = k mᵥ / Σm), so the same scene
//! behaves alike at every mesh resolution. After the release time the term is zero.

use super::pins::Motion;
use super::term::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use crate::error::Result;
use crate::linalg::LowerPattern;
use nalgebra::Vector3;

/// A group of soft-pinned vertices: zero-length springs of total stiffness k
/// pull their held components toward the positions `motion` prescribes, until
/// `release_time`.
#[derive(Clone, Debug)]
pub struct Attachment {
    /// The vertices pulled.
    pub vertices: Vec<usize>,
    /// Rest positions of the vertices (z = 0 in 2D).
    pub rest: Vec<Vector3<f64>>,
    /// How the targets move from `rest` (`Fixed`: they stay there).
    pub motion: Motion,
    /// The time after which the springs are gone, s (None: never).
    pub release_time: Option<f64>,
    /// Which components (x, y, z) are pulled; the others are left free.
    pub components: [bool; 3],
    /// kᵥ of each vertex, N/m.
    pub stiffnesses: Vec<f64>,
    /// Coordinates per vertex of the model it acts on (2 or 3).
    pub dimension: usize,
    /// Each vertex's diagonal positions in the pattern, per component.
    diagonal: Vec<[usize; 3]>,
}

impl Attachment {
    /// A group of total stiffness `stiffness` (N/m) shared by the vertices' lumped `masses`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        vertices: Vec<usize>,
        rest: Vec<Vector3<f64>>,
        masses: &[f64],
        stiffness: f64,
        motion: Motion,
        release_time: Option<f64>,
        components: [bool; 3],
        dimension: usize,
    ) -> Attachment {
        let total: f64 = masses.iter().sum();
        Attachment {
            stiffnesses: masses.iter().map(|m| stiffness * m / total).collect(),
            vertices,
            rest,
            motion,
            release_time,
            components,
            dimension,
            diagonal: Vec::new(),
        }
    }

    fn active(&self, time: f64) -> bool {
        super::pins::holds(self.release_time, time)
    }

    /// (DOF, stiffness, offset from the target) of every held component.
    fn offsets<'a>(&'a self, x: &'a [f64], time: f64) -> impl Iterator<Item = (usize, usize, f64, f64)> + 'a {
        let d = self.dimension;
        let active = self.active(time);
        self.vertices
            .iter()
            .enumerate()
            .filter(move |_| active)
            .flat_map(move |(i, &v)| {
                let target = self.motion.position(&self.rest[i], time);
                (0..d)
                    .filter(|&a| self.components[a])
                    .map(move |a| (i, d * v + a, self.stiffnesses[i], x[d * v + a] - target[a]))
            })
    }
}

impl EnergyTerm for Attachment {
    fn name(&self) -> String {
        format!("soft pin of {} vertices", self.vertices.len())
    }

    fn kind(&self) -> TermKind {
        TermKind::Elastic
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            material_stiffness: true,
            time_dependent: super::pins::moves(&self.motion, self.release_time),
            anchoring: true,
            ..TermCapabilities::SMOOTH
        }
    }

    fn driven_kinetic_energy(&self, masses: &[f64]) -> f64 {
        self.vertices
            .iter()
            .zip(&self.rest)
            .map(|(&v, rest)| 0.5 * masses[v] * self.motion.velocity(rest, 0.0).norm_squared())
            .sum()
    }

    fn hessian_vertices(&self, _time: f64) -> Option<Vec<usize>> {
        Some(self.vertices.clone())
    }

    fn bind(&mut self, pattern: &LowerPattern, dimension: usize) {
        self.diagonal = self
            .vertices
            .iter()
            .map(|&v| {
                std::array::from_fn(|a| {
                    pattern
                        .position(
                            dimension * v + a.min(dimension - 1),
                            dimension * v + a.min(dimension - 1),
                        )
                        .expect("diagonal entries are in the pattern")
                })
            })
            .collect();
    }

    fn energy(&self, x: &[f64], time: f64) -> f64 {
        self.offsets(x, time).map(|(_, _, k, e)| 0.5 * k * e * e).sum()
    }

    fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        for (_, dof, k, e) in self.offsets(x, time) {
            gradient[dof] += k * e;
        }
        Ok(self.energy(x, time))
    }

    fn hessian(
        &self,
        x: &[f64],
        time: f64,
        _project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> Result<f64> {
        if overwrite {
            hessian.values.fill(0.0);
        }
        let d = self.dimension;
        for (i, dof, k, _) in self.offsets(x, time) {
            hessian.values[self.diagonal[i][dof % d]] += k;
        }
        self.gradient(x, time, gradient, overwrite)
    }

    fn add_material_stiffness(&self, x: &[f64], time: f64, values: &mut [f64]) {
        let d = self.dimension;
        for (i, dof, k, _) in self.offsets(x, time) {
            values[self.diagonal[i][dof % d]] += k;
        }
    }

    fn add_laplacian(&self, time: f64, _: &crate::material::laplacian_weight::StretchSamples, values: &mut [f64]) {
        // A zero-length spring to its target: k on the diagonal (Liu 2018 thesis, §8.2, eq. 8.6).
        if self.active(time) {
            for (i, stiffness) in self.stiffnesses.iter().enumerate() {
                for a in (0..self.dimension).filter(|&a| self.components[a]) {
                    values[self.diagonal[i][a]] += stiffness;
                }
            }
        }
    }

    /// A zero-length spring: its Laplacian times (x − target), a constant projection.
    fn projective(&self) -> bool {
        true
    }

    fn laplacian_active(&self, time: f64) -> bool {
        self.active(time)
    }
}
