//! The simulated system: mesh, materials, mass, pins, forces and damping, with
//! the energy, gradient and Hessian that every integrator and solver uses.

mod constraints;
mod contact;
mod damping;
mod dofs;
mod forces;
mod pins;
mod selection;
mod state;

pub use constraints::SurfaceConstraint;
pub use contact::{Obstacle, ObstacleShape};
pub use damping::{Damping, DampingStiffness};
pub use dofs::DofMap;
pub use forces::RegionForce;
pub use pins::{Motion, Pin};
pub use selection::Selection;
pub use state::State;

use crate::error::{HookeError, Result};
use crate::fem::{lumped_masses, Assembler, ElementGeometry, MassKind, SpringNetwork};
use crate::linalg::LowerPattern;
use crate::material::MaterialRef;
use crate::mesh::TetMesh;
use nalgebra::Vector3;

/// A deformable body (or several, merged into one mesh) with everything acting on it.
pub struct Model {
    mesh: TetMesh,
    assembler: Assembler,
    mass_kind: MassKind,
    lumped_mass: Vec<f64>,
    /// Mass matrix values on the Hessian pattern (diagonal only when lumped).
    mass_values: Vec<f64>,
    pins: Vec<Pin>,
    gravity: Vector3<f64>,
    forces: Vec<RegionForce>,
    obstacles: Vec<Obstacle>,
    constraints: Vec<SurfaceConstraint>,
    damping: Option<Damping>,
    /// β K(rest) + α M on the pattern, when damping uses the rest stiffness.
    rest_damping_values: Option<Vec<f64>>,
}

impl Model {
    /// A model with no pins, forces, gravity or damping. The mesh must be oriented.
    pub fn new(mesh: TetMesh, materials: Vec<MaterialRef>, mass_kind: MassKind) -> Result<Model> {
        Model::with_springs(mesh, materials, SpringNetwork::default(), mass_kind)
    }

    /// A model of tetrahedra and springs over the mesh's vertices (a vertex may
    /// belong to springs only). Every vertex must carry mass.
    pub fn with_springs(
        mesh: TetMesh,
        materials: Vec<MaterialRef>,
        network: SpringNetwork,
        mass_kind: MassKind,
    ) -> Result<Model> {
        let assembler = Assembler::new(&mesh, materials, network.springs)?;
        let mut lumped_mass = lumped_masses(&mesh, &assembler.element_masses());
        for (total, extra) in lumped_mass.iter_mut().zip(&network.vertex_masses) {
            *total += extra;
        }
        if let Some(v) = lumped_mass.iter().position(|m| m.is_nan() || *m <= 0.0) {
            return Err(crate::error::HookeError::Mesh {
                reason: format!("vertex {v} has no mass: it belongs to no element and no spring network"),
            });
        }
        let mass_values = match mass_kind {
            MassKind::Consistent => {
                // Springs' vertex masses are lumped even in a consistent mass matrix.
                let mut values = assembler.consistent_mass_values();
                let diagonal = assembler.pattern().diagonal_positions();
                for (dof, k) in diagonal.into_iter().enumerate() {
                    values[k] += network.vertex_masses.get(dof / 3).copied().unwrap_or(0.0);
                }
                values
            }
            MassKind::Lumped => {
                let pattern = assembler.pattern();
                let mut values = vec![0.0; pattern.nonzeros()];
                for (dof, k) in pattern.diagonal_positions().into_iter().enumerate() {
                    values[k] = lumped_mass[dof / 3];
                }
                values
            }
        };
        Ok(Model {
            mesh,
            assembler,
            mass_kind,
            lumped_mass,
            mass_values,
            pins: Vec::new(),
            gravity: Vector3::zeros(),
            forces: Vec::new(),
            obstacles: Vec::new(),
            constraints: Vec::new(),
            damping: None,
            rest_damping_values: None,
        })
    }

    pub fn mesh(&self) -> &TetMesh {
        &self.mesh
    }

    pub fn materials(&self) -> &[MaterialRef] {
        self.assembler.materials()
    }

    pub fn mass_kind(&self) -> MassKind {
        self.mass_kind
    }

    pub fn dof_count(&self) -> usize {
        3 * self.mesh.vertex_count()
    }

    /// Length scale of the body (bounding-box diagonal), for relative tolerances.
    pub fn length_scale(&self) -> f64 {
        let (lo, hi) = self.mesh.bounding_box();
        (hi - lo).norm().max(f64::MIN_POSITIVE)
    }

    pub fn add_pin(&mut self, pin: Pin) {
        self.pins.push(pin);
    }

    pub fn pins(&self) -> &[Pin] {
        &self.pins
    }

    pub fn set_gravity(&mut self, gravity: Vector3<f64>) {
        self.gravity = gravity;
    }

    pub fn gravity(&self) -> Vector3<f64> {
        self.gravity
    }

    pub fn add_force(&mut self, force: RegionForce) {
        self.forces.push(force);
    }

    /// Sets the damping; with the rest stiffness, K(rest) is assembled here once.
    /// Viscoelastic damping is applied by the integrators that support it
    /// (backward Euler, implicit and variational midpoint, symplectic Euler); the
    /// others refuse a model that has it.
    pub fn set_damping(&mut self, damping: Option<Damping>) -> Result<()> {
        if damping.is_some_and(|d| d.viscoelastic_coefficient > 0.0) {
            let reason = if self.materials().iter().any(|m| !m.capabilities().rotation_invariant) {
                Some("it needs a rotation-invariant material; linear elasticity would damp rigid rotation (seed 001 §2.6 uses it with non-linear materials only)")
            } else if !self.assembler.springs().is_empty() {
                Some("it acts on tetrahedra only; this model has springs, which would stay undamped")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(crate::error::HookeError::scene(
                    "damping.viscoelastic_coefficient",
                    reason,
                ));
            }
        }
        self.damping = damping;
        self.rest_damping_values = None;
        if let Some(d) = damping.filter(Damping::has_rayleigh) {
            if d.stiffness == DampingStiffness::Rest {
                let rest = self.rest_positions();
                self.rest_damping_values = Some(self.damping_values_at(&d, &rest)?);
            }
        }
        Ok(())
    }

    pub fn damping(&self) -> Option<Damping> {
        self.damping
    }

    fn damping_values_at(&self, damping: &Damping, x: &[f64]) -> Result<Vec<f64>> {
        let mut values = vec![0.0; self.pattern().nonzeros()];
        if damping.stiffness_coefficient != 0.0 {
            self.assembler.energy_gradient_hessian(x, true, None, &mut values)?;
        }
        for (v, m) in values.iter_mut().zip(&self.mass_values) {
            *v = damping.stiffness_coefficient * *v + damping.mass_coefficient * m;
        }
        Ok(values)
    }

    /// The damping matrix D = αM + βK on the pattern for a step starting at `x`
    /// (None without damping); borrowed when it uses the rest stiffness.
    pub fn damping_values(&self, x: &[f64]) -> Result<Option<std::borrow::Cow<'_, [f64]>>> {
        match (&self.damping.filter(Damping::has_rayleigh), &self.rest_damping_values) {
            (None, _) => Ok(None),
            (Some(_), Some(rest)) => Ok(Some(std::borrow::Cow::Borrowed(rest))),
            (Some(d), None) => self.damping_values_at(d, x).map(|v| Some(std::borrow::Cow::Owned(v))),
        }
    }

    /// The viscoelastic damping coefficient k_D (0 without).
    pub fn viscoelastic_coefficient(&self) -> f64 {
        self.damping.map_or(0.0, |d| d.viscoelastic_coefficient)
    }

    /// Element geometry with `positions` as the rest shape, for viscoelastic damping.
    pub fn reference_geometry(&self, positions: &[f64]) -> Vec<ElementGeometry> {
        self.assembler.reference_geometry(positions)
    }

    /// Elastic energy of `x` measured from the rest shape `geometry`.
    pub fn energy_from(&self, geometry: &[ElementGeometry], x: &[f64]) -> f64 {
        self.assembler.energy_with(geometry, x)
    }

    /// Energy, gradient and (optionally) Hessian of `x` measured from the rest shape `geometry`.
    pub fn derivatives_from(
        &self,
        geometry: &[ElementGeometry],
        x: &[f64],
        project: bool,
        gradient: &mut [f64],
        hessian_values: Option<&mut [f64]>,
    ) -> Result<f64> {
        self.assembler
            .evaluate_with(geometry, x, project, gradient, hessian_values)
    }

    /// Rest positions, interleaved.
    pub fn rest_positions(&self) -> Vec<f64> {
        self.mesh.vertices.iter().flat_map(|p| [p.x, p.y, p.z]).collect()
    }

    /// The state at t = 0: at rest, with pinned vertices where their motion puts them.
    pub fn initial_state(&self) -> State {
        let mut state = State {
            time: 0.0,
            positions: self.rest_positions(),
            velocities: vec![0.0; self.dof_count()],
        };
        self.apply_prescribed_positions(0.0, &mut state.positions);
        state
    }

    /// Pattern of the lower triangle of all 3n×3n matrices (K, M, D).
    pub fn pattern(&self) -> &LowerPattern {
        self.assembler.pattern()
    }

    /// Which DOFs are free at time t.
    pub fn dof_map(&self, time: f64) -> DofMap {
        let active: Vec<bool> = self.pins.iter().map(|p| p.is_active(time)).collect();
        let pinned = self
            .pins
            .iter()
            .filter(|p| p.is_active(time))
            .flat_map(|p| p.vertices.iter().copied());
        DofMap::new(self.dof_count(), pinned, active)
    }

    /// Overwrites the positions of vertices pinned at time t with their prescribed values.
    pub fn apply_prescribed_positions(&self, time: f64, positions: &mut [f64]) {
        for pin in self.pins.iter().filter(|p| p.is_active(time)) {
            for &v in &pin.vertices {
                let x = pin.motion.position(&self.mesh.vertices[v], time);
                positions[3 * v..3 * v + 3].copy_from_slice(x.as_slice());
            }
        }
    }

    /// Overwrites the velocities of vertices pinned at time t with their motion's velocity.
    pub fn apply_prescribed_velocities(&self, time: f64, velocities: &mut [f64]) {
        for pin in self.pins.iter().filter(|p| p.is_active(time)) {
            for &v in &pin.vertices {
                let velocity = pin.motion.velocity(&self.mesh.vertices[v], time);
                velocities[3 * v..3 * v + 3].copy_from_slice(velocity.as_slice());
            }
        }
    }

    pub fn add_obstacle(&mut self, obstacle: Obstacle) {
        self.obstacles.push(obstacle);
    }

    /// Adds vertices that must stay on a surface (variational midpoint only).
    pub fn add_constraint(&mut self, constraint: SurfaceConstraint) -> Result<()> {
        constraint.validate(self.mesh.vertex_count(), "constraint")?;
        self.constraints.push(constraint);
        Ok(())
    }

    pub fn constraints(&self) -> &[SurfaceConstraint] {
        &self.constraints
    }

    pub fn obstacles(&self) -> &[Obstacle] {
        &self.obstacles
    }

    /// Penalty energy of all vertices against all obstacles.
    pub fn penalty_energy(&self, x: &[f64]) -> f64 {
        self.penalties(x, true).map(|(_, (energy, _, _))| energy).sum()
    }

    /// Deepest penetration into any obstacle (0 when none).
    pub fn max_penetration(&self, x: &[f64]) -> f64 {
        let mut deepest: f64 = 0.0;
        for obstacle in &self.obstacles {
            for p in x.chunks(3) {
                deepest = deepest.max(-obstacle.shape.proximity(&Vector3::new(p[0], p[1], p[2])).distance);
            }
        }
        deepest
    }

    fn penalties<'a>(
        &'a self,
        x: &'a [f64],
        project: bool,
    ) -> impl Iterator<Item = (usize, (f64, Vector3<f64>, nalgebra::Matrix3<f64>))> + 'a {
        self.obstacles.iter().flat_map(move |obstacle| {
            x.chunks(3).enumerate().filter_map(move |(v, p)| {
                obstacle
                    .penalty(&Vector3::new(p[0], p[1], p[2]), self.lumped_mass[v], project)
                    .map(|penalty| (v, penalty))
            })
        })
    }

    /// The potential the integrators move in: elastic plus contact penalty.
    pub fn potential_energy(&self, x: &[f64]) -> f64 {
        let elastic = self.elastic_energy(x);
        if self.obstacles.is_empty() {
            elastic
        } else {
            elastic + self.penalty_energy(x)
        }
    }

    /// Potential energy and its gradient.
    pub fn potential_gradient(&self, x: &[f64], gradient: &mut [f64]) -> Result<f64> {
        let mut energy = self.elastic_gradient(x, gradient)?;
        for (v, (e, g, _)) in self.penalties(x, true) {
            energy += e;
            for a in 0..3 {
                gradient[3 * v + a] += g[a];
            }
        }
        Ok(energy)
    }

    /// Potential energy, gradient and Hessian (the penalty adds 3×3 vertex blocks).
    pub fn potential_hessian(
        &self,
        x: &[f64],
        project: bool,
        gradient: Option<&mut [f64]>,
        values: &mut [f64],
    ) -> Result<f64> {
        let mut scratch = Vec::new();
        let gradient = match gradient {
            Some(g) => g,
            None => {
                scratch.resize(x.len(), 0.0);
                &mut scratch[..]
            }
        };
        let mut energy = self.elastic_hessian(x, project, Some(gradient), values)?;
        let pattern = self.pattern();
        for (v, (e, g, h)) in self.penalties(x, project) {
            energy += e;
            for a in 0..3 {
                gradient[3 * v + a] += g[a];
                for b in 0..=a {
                    // Every vertex's own 3×3 block is in the pattern (its lower triangle).
                    if let Some(k) = pattern.position(3 * v + a, 3 * v + b) {
                        values[k] += h[(a, b)];
                    }
                }
            }
        }
        Ok(energy)
    }

    /// Adds the contact stiffness κ m n nᵀ of the vertices that rest on the
    /// surface of a projecting obstacle (within 1e-9 of it, outside), where the
    /// penalty itself is zero. Closest-point projection leaves vertices exactly
    /// there, so a linearised step that ignored them would let the cloth's
    /// compressed springs buckle freely into the obstacle: the exponential
    /// integrator then grows those unstable modes over the whole step and the
    /// projection pumps energy in (seed 000's cloth on a sphere). Counting them
    /// as in contact for the step keeps its Jacobian honest.
    pub fn add_resting_contact_stiffness(&self, x: &[f64], values: &mut [f64]) {
        let pattern = self.pattern();
        for obstacle in self.obstacles.iter().filter(|o| o.project) {
            for (v, p) in x.chunks(3).enumerate() {
                let proximity = obstacle.shape.proximity(&Vector3::new(p[0], p[1], p[2]));
                if !(0.0..=1e-9).contains(&proximity.distance) {
                    continue;
                }
                let k = obstacle.stiffness * self.lumped_mass[v];
                let n = proximity.normal;
                for a in 0..3 {
                    for b in 0..=a {
                        if let Some(position) = pattern.position(3 * v + a, 3 * v + b) {
                            values[position] += k * n[a] * n[b];
                        }
                    }
                }
            }
        }
    }

    /// MSSI's implicit stiffness (seed 000 ch. 5): the springs' material part
    /// Σ k ŝŝᵀ plus the contact penalty Hessian, into `values`; the full potential
    /// gradient into `gradient`. Tetrahedra have no such split and are refused.
    pub fn material_stiffness(&self, x: &[f64], gradient: &mut [f64], values: &mut [f64]) -> Result<f64> {
        if self.mesh.tet_count() > 0 {
            return Err(HookeError::scene(
                "integrator.kind",
                "mass_spring_semi_implicit splits spring stiffness only; this model has tetrahedra (use semi_implicit_backward_euler or siere)",
            ));
        }
        values.iter_mut().for_each(|v| *v = 0.0);
        let energy = self.potential_gradient(x, gradient)?;
        self.assembler.add_spring_material_stiffness(x, values);
        let pattern = self.pattern();
        for (v, (_, _, h)) in self.penalties(x, true) {
            for a in 0..3 {
                for b in 0..=a {
                    if let Some(k) = pattern.position(3 * v + a, 3 * v + b) {
                        values[k] += h[(a, b)];
                    }
                }
            }
        }
        Ok(energy)
    }

    /// Moves vertices that penetrate a projecting obstacle onto its surface and
    /// removes their inward normal velocity (explicit methods, seed 000 ch. 4).
    pub fn project_out_of_obstacles(&self, positions: &mut [f64], velocities: &mut [f64]) {
        for obstacle in self.obstacles.iter().filter(|o| o.project) {
            for (p, v) in positions.chunks_mut(3).zip(velocities.chunks_mut(3)) {
                let x = Vector3::new(p[0], p[1], p[2]);
                let proximity = obstacle.shape.proximity(&x);
                if proximity.distance < 0.0 {
                    let surface = x - proximity.normal * proximity.distance;
                    p.copy_from_slice(surface.as_slice());
                    let inward = Vector3::new(v[0], v[1], v[2]).dot(&proximity.normal).min(0.0);
                    for a in 0..3 {
                        v[a] -= inward * proximity.normal[a];
                    }
                }
            }
        }
    }

    /// The element assembler (per-element data and gathers), for integrators
    /// that work element by element.
    pub fn assembler(&self) -> &Assembler {
        &self.assembler
    }

    /// The springs' vertex pairs.
    pub fn spring_edges(&self) -> Vec<[usize; 2]> {
        self.assembler.springs().iter().map(|s| s.vertices).collect()
    }

    /// Work done against the damping forces over a step from `x0` to `x1` of length h:
    /// Rayleigh h v̄ᵀD v̄ with v̄ = (x1 − x0)/h (D as the step used it), and
    /// viscoelastic k_D ∇W_ref(x1)·(x1 − x0) with x0 as the rest shape. This is
    /// the physical dissipation; numerical dissipation is not included.
    pub fn damping_work(&self, x0: &[f64], x1: &[f64], h: f64) -> Result<f64> {
        let displacement: Vec<f64> = x1.iter().zip(x0).map(|(b, a)| b - a).collect();
        let mut work = 0.0;
        if let Some(d) = self.damping_values(x0)? {
            let mut product = vec![0.0; displacement.len()];
            self.pattern().symmetric_multiply(&d, &displacement, &mut product);
            work += product.iter().zip(&displacement).map(|(p, u)| p * u).sum::<f64>() / h;
        }
        let coefficient = self.viscoelastic_coefficient();
        if coefficient > 0.0 {
            let reference = self.reference_geometry(x0);
            let mut gradient = vec![0.0; x1.len()];
            self.derivatives_from(&reference, x1, false, &mut gradient, None)?;
            work += coefficient * gradient.iter().zip(&displacement).map(|(g, u)| g * u).sum::<f64>();
        }
        Ok(work)
    }

    /// Whether some element's material is undefined for some deformations (J ≤ 0).
    pub fn may_be_undefined(&self) -> bool {
        self.materials()
            .iter()
            .any(|m| !m.capabilities().defined_under_inversion)
    }

    /// Elastic energy; +∞ where an element leaves its material's domain.
    pub fn elastic_energy(&self, x: &[f64]) -> f64 {
        self.assembler.energy(x)
    }

    /// Elastic energy and its gradient over all DOFs.
    pub fn elastic_gradient(&self, x: &[f64], gradient: &mut [f64]) -> Result<f64> {
        self.assembler.energy_and_gradient(x, gradient)
    }

    /// Elastic energy, gradient and Hessian (stiffness K) over all DOFs.
    pub fn elastic_hessian(
        &self,
        x: &[f64],
        project: bool,
        gradient: Option<&mut [f64]>,
        values: &mut [f64],
    ) -> Result<f64> {
        self.assembler.energy_gradient_hessian(x, project, gradient, values)
    }

    /// Strain energy density of each element.
    pub fn energy_densities(&self, x: &[f64]) -> Vec<f64> {
        self.assembler.energy_densities(x)
    }

    /// Mass matrix values on the pattern.
    pub fn mass_values(&self) -> &[f64] {
        &self.mass_values
    }

    /// Lumped (row-sum) mass of each vertex.
    pub fn lumped_masses(&self) -> &[f64] {
        &self.lumped_mass
    }

    /// out = M v.
    pub fn mass_multiply(&self, v: &[f64], out: &mut [f64]) {
        match self.mass_kind {
            MassKind::Lumped => {
                for (i, (o, x)) in out.iter_mut().zip(v).enumerate() {
                    *o = self.lumped_mass[i / 3] * x;
                }
            }
            MassKind::Consistent => self.pattern().symmetric_multiply(&self.mass_values, v, out),
        }
    }

    /// External force (gravity and regional forces) at time t over all DOFs.
    pub fn external_force(&self, time: f64, force: &mut [f64]) {
        for (i, f) in force.iter_mut().enumerate() {
            *f = self.lumped_mass[i / 3] * self.gravity[i % 3];
        }
        for region in &self.forces {
            region.add_to(time, force);
        }
    }

    /// Kinetic energy ½ vᵀMv.
    pub fn kinetic_energy(&self, v: &[f64]) -> f64 {
        let mut mv = vec![0.0; v.len()];
        self.mass_multiply(v, &mut mv);
        0.5 * mv.iter().zip(v).map(|(a, b)| a * b).sum::<f64>()
    }

    /// Gravitational potential −Σ mᵢ g·xᵢ (zero at the origin).
    pub fn gravitational_energy(&self, x: &[f64]) -> f64 {
        -x.chunks(3)
            .zip(&self.lumped_mass)
            .map(|(p, m)| m * (p[0] * self.gravity.x + p[1] * self.gravity.y + p[2] * self.gravity.z))
            .sum::<f64>()
    }

    /// Linear momentum Σ (Mv)ᵢ and angular momentum Σ xᵢ × (Mv)ᵢ about the origin.
    pub fn momentum(&self, x: &[f64], v: &[f64]) -> (Vector3<f64>, Vector3<f64>) {
        let mut mv = vec![0.0; v.len()];
        self.mass_multiply(v, &mut mv);
        let mut linear = Vector3::zeros();
        let mut angular = Vector3::zeros();
        for (p, q) in x.chunks(3).zip(mv.chunks(3)) {
            let p = Vector3::new(p[0], p[1], p[2]);
            let q = Vector3::new(q[0], q[1], q[2]);
            linear += q;
            angular += p.cross(&q);
        }
        (linear, angular)
    }
}
