//! Springs: the 1D element of mass-spring networks (ropes, cloth).
//!
//! E = ½ k (l − l₀)², with l = |xₐ − x_b|. With ŝ the unit direction, the force on
//! a is −k (l − l₀) ŝ, and the 3×3 Hessian block is
//!   H = k ŝŝᵀ + k (1 − l₀/l)(I − ŝŝᵀ)
//! (material + geometric stiffness; the material block of the Chen 2019 thesis,
//! Eq. 5.7, is printed as ssᵀ without normalising and with a wrong block sign). The element
//! Hessian is [[H, −H], [−H, H]]. The geometric part is negative for a compressed
//! spring; PSD projection drops it then.

use crate::error::{HookeError, Result};
use crate::linalg::LowerPattern;
use crate::model::tearing::{Tearable, Torn, TornMask};
use crate::model::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use nalgebra::{Matrix3, Vector3};

/// One spring between two vertices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spring {
    /// The two vertices it joins (indices into the model's vertices).
    pub vertices: [usize; 2],
    /// l₀, the length at which it stores no energy, m.
    pub rest_length: f64,
    /// k, N/m.
    pub stiffness: f64,
}

impl Spring {
    fn direction(a: &Vector3<f64>, b: &Vector3<f64>) -> (Vector3<f64>, f64) {
        let s = a - b;
        let length = s.norm();
        // A spring collapsed to a point has no direction; any unit vector serves.
        (if length > 0.0 { s / length } else { Vector3::x() }, length)
    }

    /// Stored energy.
    pub fn energy(&self, a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
        let stretch = (a - b).norm() - self.rest_length;
        0.5 * self.stiffness * stretch * stretch
    }

    /// ∂E/∂xₐ (the gradient with respect to x_b is its negative).
    pub fn gradient(&self, a: &Vector3<f64>, b: &Vector3<f64>) -> Vector3<f64> {
        let (unit, length) = Self::direction(a, b);
        unit * (self.stiffness * (length - self.rest_length))
    }

    /// The material part k ŝŝᵀ of the block H: stiffness along the spring only,
    /// always positive semi-definite (MSSI's implicit term, Chen 2019 thesis, ch. 5).
    pub fn material_block(&self, a: &Vector3<f64>, b: &Vector3<f64>) -> Matrix3<f64> {
        let (unit, _) = Self::direction(a, b);
        unit * unit.transpose() * self.stiffness
    }

    /// The block H of the element Hessian [[H, −H], [−H, H]].
    pub fn hessian_block(&self, a: &Vector3<f64>, b: &Vector3<f64>, project: bool) -> Matrix3<f64> {
        let (unit, length) = Self::direction(a, b);
        let along = unit * unit.transpose();
        let mut geometric = if length > 0.0 {
            1.0 - self.rest_length / length
        } else {
            0.0
        };
        if project {
            geometric = geometric.max(0.0);
        }
        (along + (Matrix3::identity() - along) * geometric) * self.stiffness
    }
}

/// The springs of a model and the masses their vertices carry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpringNetwork {
    /// Every spring of every network.
    pub springs: Vec<Spring>,
    /// Mass of each vertex (of the whole model) from the networks, kg; empty when none.
    pub vertex_masses: Vec<f64>,
}

/// The springs of a model as one term of its potential (3D only).
pub struct Springs {
    springs: Vec<Spring>,
    blocks: Vec<SpringBlocks>,
    torn: TornMask,
}

fn point(x: &[f64], v: usize) -> Vector3<f64> {
    Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2])
}

impl Springs {
    /// Checks that every spring joins two distinct vertices among `vertex_count`.
    pub fn new(springs: Vec<Spring>, vertex_count: usize) -> Result<Springs> {
        for (s, spring) in springs.iter().enumerate() {
            let [a, b] = spring.vertices;
            if a == b || a.max(b) >= vertex_count {
                return Err(HookeError::Mesh {
                    reason: format!("spring {s} joins vertices {a} and {b}: they must differ and exist"),
                });
            }
        }
        Ok(Springs {
            torn: TornMask::new(springs.len()),
            springs,
            blocks: Vec::new(),
        })
    }

    /// The springs that have not torn, with their numbers.
    fn whole(&self) -> impl Iterator<Item = (usize, &Spring)> {
        self.springs.iter().enumerate().filter(|(s, _)| !self.torn.is_torn(*s))
    }
}

impl Tearable for Springs {
    fn tear_overstretched(&self, x: &[f64], limit: f64) -> Torn {
        let overstretched: Vec<(usize, f64)> = self
            .whole()
            .filter_map(|(k, s)| {
                let (a, b) = (point(x, s.vertices[0]), point(x, s.vertices[1]));
                ((a - b).norm() > limit * s.rest_length).then(|| (k, s.energy(&a, &b)))
            })
            .collect();
        let mut torn = Torn::default();
        for (k, energy) in overstretched {
            if self.torn.tear(k) {
                torn += Torn { elements: 1, energy };
            }
        }
        torn
    }

    fn torn_mask(&self) -> &TornMask {
        &self.torn
    }
}

impl EnergyTerm for Springs {
    fn name(&self) -> String {
        format!("{} springs", self.springs.len())
    }

    fn kind(&self) -> TermKind {
        TermKind::Elastic
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            material_stiffness: true,
            // Springs index 3 coordinates per vertex.
            planar: false,
            ..TermCapabilities::SMOOTH
        }
    }

    fn couplings(&self, coupled: &mut dyn FnMut(&[usize])) {
        for s in &self.springs {
            coupled(&s.vertices);
        }
    }

    fn bind(&mut self, pattern: &LowerPattern, _dimension: usize) {
        self.blocks = self
            .springs
            .iter()
            .map(|s| SpringBlocks::locate(pattern, s.vertices))
            .collect();
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        self.whole()
            .map(|(_, s)| s.energy(&point(x, s.vertices[0]), &point(x, s.vertices[1])))
            .sum()
    }

    fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        for (_, s) in self.whole() {
            let [a, b] = s.vertices;
            let g = s.gradient(&point(x, a), &point(x, b));
            for k in 0..3 {
                gradient[3 * a + k] += g[k];
                gradient[3 * b + k] -= g[k];
            }
        }
        Ok(self.energy(x, time))
    }

    fn hessian(
        &self,
        x: &[f64],
        time: f64,
        project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> Result<f64> {
        if overwrite {
            hessian.values.fill(0.0);
        }
        let energy = self.gradient(x, time, gradient, overwrite)?;
        for (k, s) in self.whole() {
            let [a, b] = s.vertices;
            self.blocks[k].add(hessian.values, &s.hessian_block(&point(x, a), &point(x, b), project));
        }
        Ok(energy)
    }

    fn drawn_edges(&self) -> Vec<[usize; 2]> {
        self.whole().map(|(_, s)| s.vertices).collect()
    }

    fn add_material_stiffness(&self, x: &[f64], _time: f64, values: &mut [f64]) {
        for (k, s) in self.whole() {
            let [a, b] = s.vertices;
            self.blocks[k].add(values, &s.material_block(&point(x, a), &point(x, b)));
        }
    }

    fn as_tearable(&self) -> Option<&dyn Tearable> {
        Some(self)
    }

    /// k(‖x₁₂‖ − l₀) x̂₁₂ = k x₁₂ − k p with p = l₀ x̂₁₂, the projection of the
    /// spring onto its rest length (Liu 2018 thesis, §5.1, eq. 5.1).
    fn projective(&self) -> bool {
        true
    }

    fn add_laplacian(&self, _time: f64, _: &crate::material::laplacian_weight::StretchSamples, values: &mut [f64]) {
        // k [1, −1; −1, 1] on each coordinate (Liu 2018 thesis, eqs. 8.1–8.2); torn
        // springs stay in it (see model::tearing).
        for (s, blocks) in self.springs.iter().zip(&self.blocks) {
            blocks.add(values, &(Matrix3::identity() * s.stiffness));
        }
    }
}

/// Where a spring's 3×3 blocks live in the lower-triangle pattern: the two
/// diagonal blocks (lower triangles) and the off-diagonal block (row: the larger vertex).
struct SpringBlocks {
    diagonal: [[Option<usize>; 6]; 2],
    off_diagonal: [usize; 9],
}

impl SpringBlocks {
    fn locate(pattern: &LowerPattern, [a, b]: [usize; 2]) -> SpringBlocks {
        let lower = |v: usize| {
            let mut slots = [None; 6];
            let mut n = 0;
            for r in 0..3 {
                for c in 0..=r {
                    slots[n] = pattern.position(3 * v + r, 3 * v + c);
                    n += 1;
                }
            }
            slots
        };
        let (high, low) = (a.max(b), a.min(b));
        let off_diagonal = std::array::from_fn(|k| {
            pattern
                .position(3 * high + k / 3, 3 * low + k % 3)
                .expect("spring edges are in the pattern")
        });
        SpringBlocks {
            diagonal: [lower(a), lower(b)],
            off_diagonal,
        }
    }

    /// Adds [[H, −H], [−H, H]] (H symmetric).
    fn add(&self, values: &mut [f64], h: &Matrix3<f64>) {
        for slots in &self.diagonal {
            let mut n = 0;
            for r in 0..3 {
                for c in 0..=r {
                    if let Some(k) = slots[n] {
                        values[k] += h[(r, c)];
                    }
                    n += 1;
                }
            }
        }
        for (k, &position) in self.off_diagonal.iter().enumerate() {
            values[position] -= h[(k / 3, k % 3)];
        }
    }
}
