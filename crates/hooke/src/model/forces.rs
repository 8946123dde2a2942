//! External loads as terms of the potential: gravity, −Σ mᵢ g·xᵢ, and forces
//! on regions, −f(t)·x, with a total force (constant plus a sinusoid) spread
//! over the selected vertices in proportion to their mass, so that the same
//! scene behaves alike at every mesh resolution.

use super::term::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use crate::error::Result;
use nalgebra::Vector3;

const LINEAR: TermCapabilities = TermCapabilities {
    hessian: true,
    psd_projection: true,
    defined_under_inversion: true,
    material_stiffness: true,
    linear: true,
    time_dependent: false,
    anchoring: false,
    low_rank: false,
    planar: true,
};

/// A linear term's Hessian is zero: only its gradient is added.
fn linear_hessian(
    term: &dyn EnergyTerm,
    x: &[f64],
    time: f64,
    gradient: &mut [f64],
    hessian: &mut HessianTarget,
    overwrite: bool,
) -> Result<f64> {
    if overwrite {
        hessian.values.fill(0.0);
    }
    term.gradient(x, time, gradient, overwrite)
}

/// The fraction of a load applied at `time` when it grows linearly from 0 at
/// t = 0 to its full value at `ramp_time` (and stays there); 1 throughout
/// when `ramp_time` is 0. A load switched on at once sets a body ringing
/// about its equilibrium (twice the static deflection at the peak); one
/// ramped over several periods of the body's lowest mode barely does.
pub fn ramp(ramp_time: f64, time: f64) -> f64 {
    if ramp_time > 0.0 {
        (time / ramp_time).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// Uniform gravitational acceleration acting on the lumped masses, applied
/// in full from the start or ramped up over `ramp_time`.
///
/// Its energy −s(t) Σ mᵢ g·(xᵢ − x⁰ᵢ) is measured from a datum x⁰, the
/// initial state of a run, so that reported gravitational energies start at 0
/// wherever the body sits; the datum shifts the energy by a constant and
/// leaves every force and step unchanged.
#[derive(Clone, Debug, PartialEq)]
pub struct Gravity {
    /// Gravitational acceleration g, m/s².
    pub acceleration: Vector3<f64>,
    /// Lumped mass of each vertex.
    pub masses: Vec<f64>,
    /// Coordinates per vertex of the model it acts on (2 or 3).
    pub dimension: usize,
    /// Seconds over which gravity grows from 0 to full (0: full at once).
    pub ramp_time: f64,
    /// x⁰, interleaved. Heights are taken per vertex as differences, so the
    /// energy's rounding scales with the energy, not with the distance of the
    /// body from the origin.
    pub datum: Vec<f64>,
}

impl EnergyTerm for Gravity {
    fn name(&self) -> String {
        format!("gravity {:?}", self.acceleration.as_slice())
    }

    fn kind(&self) -> TermKind {
        TermKind::Gravity
    }

    fn capabilities(&self) -> TermCapabilities {
        LINEAR
    }

    fn varies_in_time(&self) -> bool {
        self.ramp_time > 0.0
    }

    fn energy(&self, x: &[f64], time: f64) -> f64 {
        let d = self.dimension;
        let acceleration = self.acceleration * ramp(self.ramp_time, time);
        -x.chunks(d)
            .zip(self.datum.chunks(d))
            .zip(&self.masses)
            .map(|((p, p0), m)| m * (0..d).map(|a| (p[a] - p0[a]) * acceleration[a]).sum::<f64>())
            .sum::<f64>()
    }

    fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        let d = self.dimension;
        let acceleration = self.acceleration * ramp(self.ramp_time, time);
        let mut energy = 0.0;
        let vertices = gradient.chunks_mut(d).zip(x.chunks(d)).zip(self.datum.chunks(d));
        for (((g, p), p0), m) in vertices.zip(&self.masses) {
            for a in 0..d {
                let weight = m * acceleration[a];
                energy -= weight * (p[a] - p0[a]);
                g[a] = if overwrite { -weight } else { g[a] - weight };
            }
        }
        Ok(energy)
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
        linear_hessian(self, x, time, gradient, hessian, overwrite)
    }
}

/// A force on a region.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionForce {
    /// The vertices the force acts on.
    pub vertices: Vec<usize>,
    /// Fraction of the total that each selected vertex receives (sums to 1).
    pub shares: Vec<f64>,
    /// Constant part of the total force, N (z ignored in 2D).
    pub total: Vector3<f64>,
    /// Amplitude of the periodic part, N: total + amplitude · sin(2π f t + phase).
    pub amplitude: Vector3<f64>,
    /// f of the periodic part, Hz.
    pub frequency: f64,
    /// The periodic part's phase, rad.
    pub phase: f64,
    /// Seconds over which the force grows from 0 to full (0: full at once).
    pub ramp_time: f64,
    /// Coordinates per vertex of the model it acts on.
    pub dimension: usize,
}

impl RegionForce {
    /// The total force at time t.
    pub fn total_at(&self, time: f64) -> Vector3<f64> {
        let periodic = (2.0 * std::f64::consts::PI * self.frequency * time + self.phase).sin();
        (self.total + self.amplitude * periodic) * ramp(self.ramp_time, time)
    }
}

impl EnergyTerm for RegionForce {
    fn name(&self) -> String {
        format!("force on {} vertices", self.vertices.len())
    }

    fn kind(&self) -> TermKind {
        TermKind::Load
    }

    fn capabilities(&self) -> TermCapabilities {
        LINEAR
    }

    fn energy(&self, x: &[f64], time: f64) -> f64 {
        let total = self.total_at(time);
        let d = self.dimension;
        -self
            .vertices
            .iter()
            .zip(&self.shares)
            .map(|(&v, share)| share * (0..d).map(|a| total[a] * x[d * v + a]).sum::<f64>())
            .sum::<f64>()
    }

    fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        let total = self.total_at(time);
        let d = self.dimension;
        for (&v, &share) in self.vertices.iter().zip(&self.shares) {
            for a in 0..d {
                gradient[d * v + a] -= share * total[a];
            }
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
        linear_hessian(self, x, time, gradient, hessian, overwrite)
    }
}

/// A dead load on a surface: a pressure or a force per area acting on the
/// boundary faces of a selected region, integrated over each face of the
/// rest shape (a third of a face's force to each corner), so the load is
/// where the surface is, whatever the vertex masses, and the same total at
/// every mesh resolution. "Dead": the force keeps its rest direction and size
/// as the body deforms (a follower pressure would turn with the faces).
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceLoad {
    /// The force on each DOF at full load, N.
    pub forces: Vec<f64>,
    /// Faces loaded (for messages).
    pub faces: usize,
    /// Seconds over which the load grows from 0 to full (0: full at once).
    pub ramp_time: f64,
}

impl SurfaceLoad {
    /// The load of `traction` (N/m², a force per area) and `pressure` (Pa,
    /// pushing against each face's outward normal) on `faces` (outward
    /// triangles of the rest shape `rest`, 3D).
    pub fn on_faces(
        rest: &[Vector3<f64>],
        faces: &[[usize; 3]],
        traction: Vector3<f64>,
        pressure: f64,
        ramp_time: f64,
    ) -> SurfaceLoad {
        let mut forces = vec![0.0; 3 * rest.len()];
        for face in faces {
            let [a, b, c] = face.map(|v| rest[v]);
            let area_vector = 0.5 * (b - a).cross(&(c - a));
            let force = traction * area_vector.norm() - pressure * area_vector;
            for &v in face {
                for axis in 0..3 {
                    forces[3 * v + axis] += force[axis] / 3.0;
                }
            }
        }
        SurfaceLoad {
            forces,
            faces: faces.len(),
            ramp_time,
        }
    }

    /// The total force at full load, N.
    pub fn total(&self) -> Vector3<f64> {
        self.forces
            .chunks(3)
            .fold(Vector3::zeros(), |sum, f| sum + Vector3::new(f[0], f[1], f[2]))
    }
}

impl EnergyTerm for SurfaceLoad {
    fn name(&self) -> String {
        format!("surface load on {} faces", self.faces)
    }

    fn kind(&self) -> TermKind {
        TermKind::Load
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            planar: false,
            ..LINEAR
        }
    }

    fn varies_in_time(&self) -> bool {
        self.ramp_time > 0.0
    }

    fn energy(&self, x: &[f64], time: f64) -> f64 {
        -ramp(self.ramp_time, time) * x.iter().zip(&self.forces).map(|(x, f)| x * f).sum::<f64>()
    }

    fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        let scale = ramp(self.ramp_time, time);
        for (g, f) in gradient.iter_mut().zip(&self.forces) {
            *g = if overwrite { -scale * f } else { *g - scale * f };
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
        linear_hessian(self, x, time, gradient, hessian, overwrite)
    }
}
