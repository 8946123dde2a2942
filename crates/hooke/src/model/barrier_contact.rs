//! Barrier contact as one term of the model's potential (Li et al. 2020, §4):
//!
//!   E_c(x) = κ ( Σ_pairs m_k b(d_k², d̂²) + Σ_(vertex, plane) b(d², d̂²) ),
//!
//! over the surface's point–triangle and edge–edge pairs closer than d̂
//! (contact/potential.rs) and each surface vertex near a fixed plane. The
//! term bounds every minimiser's steps by continuous collision detection
//! (contact/ccd.rs), so a run that starts apart never intersects; its
//! couplings change with x, so its Hessian comes as one block per pair
//! ([`EnergyTerm::add_changing_blocks`]), each projected to PSD on its own
//! (§4.4) when the solver projects.
//!
//! A 2D model's surface is planar (its boundary edges, point–edge pairs):
//! its positions are lifted to the plane z = 0 before the geometry sees
//! them, and the z parts of gradients and blocks are dropped after.
//!
//! κ is fixed, or adaptive (contact/stiffness.rs): balanced against the
//! rest of the potential at each step's start, and doubled when the smallest
//! distance keeps shrinking while tiny. (The toolkit's users apply the
//! doubling after each Newton iteration; Hooke's terms see steps, so it is
//! applied from step to step.) The adaptive state is the term's history,
//! kept by checkpoints.

use super::term::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use super::{Model, ObstacleMotion, State};
use crate::contact::barrier::{barrier, barrier_first_derivative, barrier_second_derivative};
use crate::contact::friction::{edge_edge_weights, point_edge_weights, point_triangle_weights, FrictionContact};
use crate::contact::mollifier::cross_squared_norm;
use crate::contact::potential::{active_pairs, clamp_to_psd, energy_and_gradient, pair_term, ActivePair, PairKind};
use crate::contact::surface::ContactSurface;
use crate::contact::{bounding_diagonal, lifted, point};
use crate::error::{HookeError, Result};
use crate::linalg::VertexBlocks;
use nalgebra::{Matrix3, Vector3};
use std::sync::Mutex;

/// A fixed half-space the surface stays out of: (x − point)·normal ≥ 0 is outside.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPlane {
    /// A point of the plane, m.
    pub point: Vector3<f64>,
    /// Its unit normal, out of the obstacle.
    pub normal: Vector3<f64>,
}

impl ContactPlane {
    /// The plane through `point` with normal along `normal` (any length but zero).
    pub fn new(point: Vector3<f64>, normal: Vector3<f64>) -> ContactPlane {
        ContactPlane {
            point,
            normal: normal.normalize(),
        }
    }

    fn distance(&self, p: &Vector3<f64>) -> f64 {
        (p - self.point).dot(&self.normal)
    }
}

/// How κ is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BarrierStiffness {
    /// A fixed κ, J/m⁴ (the barrier b is in m⁴).
    Fixed(f64),
    /// The paper's rule (contact/stiffness.rs).
    Adaptive,
}

/// The adaptive rule's state between steps.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Adaptive {
    /// κ now (None until a step starts with a pair within reach).
    stiffness: Option<f64>,
    /// Its ceiling, 100 × the floor.
    ceiling: f64,
    /// The smallest squared distance at the last step's start (None: no
    /// pair was within reach; JSON has no infinity).
    previous_distance: Option<f64>,
}

/// The contact of a model's surface with itself, with fixed planes and with
/// fixed triangle surfaces (mesh obstacles). The surface's vertices number
/// the model's first, then the fixed surfaces' (`fixed`): positions, gradients
/// and displacements are extended by these before the geometry sees them,
/// and their entries are dropped after (they are not unknowns).
pub struct BarrierContact {
    surface: ContactSurface,
    /// Rest positions of the model's vertices, then the fixed ones.
    rest: Vec<f64>,
    /// The model's vertex count.
    model_vertices: usize,
    /// The model's coordinates per vertex: 3, or 2 for a planar surface.
    dimension: usize,
    /// The fixed surfaces' vertex positions as given, 3 per vertex.
    fixed: Vec<f64>,
    /// The planes as given.
    planes: Vec<ContactPlane>,
    /// The obstacles that move, and how.
    movers: Vec<Mover>,
    /// Where the fixed surfaces and planes are now, and where the step takes them.
    placement: Mutex<Placement>,
    dhat: f64,
    rule: BarrierStiffness,
    adaptive: Mutex<Adaptive>,
    diagonal: f64,
    /// The body of each vertex, when pairs within one body do not count.
    bodies: Option<Vec<usize>>,
    /// The pairs of the last positions asked about: a Newton iteration asks
    /// for the gradient and the Hessian blocks at one x, and the broad phase
    /// is the costly part of each.
    last_pairs: Mutex<Option<(Vec<f64>, Vec<ActivePair>)>>,
}

/// Which part of the obstacles a prescribed motion moves.
#[derive(Clone, Debug)]
enum Part {
    /// These fixed-surface vertices (numbered among the fixed ones).
    Vertices(std::ops::Range<usize>),
    /// This plane (translation only).
    Plane(usize),
}

#[derive(Clone, Debug)]
struct Mover {
    part: Part,
    motion: ObstacleMotion,
}

/// The obstacles' positions at one moment.
#[derive(Clone, Debug, PartialEq)]
struct Placed {
    /// The fixed surfaces' vertices, 3 per vertex.
    fixed: Vec<f64>,
    planes: Vec<ContactPlane>,
}

/// Where the obstacles are, and where the step under way takes them (None
/// when they are there): a step moves them in stages, each as far as the
/// bodies at their latest positions let them (see [`EnergyTerm::advance_motion`]).
#[derive(Clone, Debug)]
struct Placement {
    now: Placed,
    target: Option<Placed>,
}

/// What the contact looks like at one configuration: for outputs and checks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactReport {
    /// The smallest distance between two primitives or a vertex and a plane
    /// within d̂ (∞ when none is).
    pub smallest_distance: f64,
    /// The pairs (and vertex–plane pairs) within d̂.
    pub active_pairs: usize,
}

impl BarrierContact {
    /// Barrier contact on `surface` (model vertices, positions at rest
    /// `rest`, 3 per vertex, or 2 for a planar surface) and `planes`, acting below `dhat`.
    pub fn new(
        surface: ContactSurface,
        rest: Vec<f64>,
        planes: Vec<ContactPlane>,
        dhat: f64,
        rule: BarrierStiffness,
    ) -> Result<BarrierContact> {
        if !(dhat.is_finite() && dhat > 0.0) {
            return Err(HookeError::scene(
                "contact.distance",
                format!("d̂ must be a positive length in metres, not {dhat}"),
            ));
        }
        if let BarrierStiffness::Fixed(kappa) = rule {
            if !(kappa.is_finite() && kappa > 0.0) {
                return Err(HookeError::scene(
                    "contact.stiffness",
                    format!("κ must be positive and finite, or \"adaptive\", not {kappa}"),
                ));
            }
        }
        let dimension = if surface.planar { 2 } else { 3 };
        let rest = lifted(&rest, dimension).into_owned();
        if surface.planar && planes.iter().any(|p| p.normal.z != 0.0 || p.point.z != 0.0) {
            return Err(HookeError::scene(
                "obstacles",
                "a 2D scene's plane obstacles are lines in z = 0: give their point and normal two components",
            ));
        }
        let diagonal = bounding_diagonal(&rest, &surface.vertices);
        Ok(BarrierContact {
            surface,
            model_vertices: rest.len() / 3,
            dimension,
            rest,
            fixed: Vec::new(),
            movers: Vec::new(),
            placement: Mutex::new(Placement {
                now: Placed {
                    fixed: Vec::new(),
                    planes: planes.clone(),
                },
                target: None,
            }),
            planes,
            dhat,
            rule,
            adaptive: Mutex::new(Adaptive {
                stiffness: None,
                ceiling: f64::INFINITY,
                previous_distance: None,
            }),
            diagonal,
            bodies: None,
            last_pairs: Mutex::new(None),
        })
    }

    /// Adds a fixed triangle surface (a mesh obstacle): `vertices`, m, and
    /// `triangles` indexing them. Its pairs with the bodies count; pairs
    /// within it do not.
    pub fn with_fixed_surface(mut self, vertices: &[Vector3<f64>], triangles: &[[usize; 3]]) -> BarrierContact {
        let offset = self.model_vertices + self.fixed.len() / 3;
        let mut faces = self.surface.faces.clone();
        faces.extend(triangles.iter().map(|t| t.map(|v| v + offset)));
        let flat: Vec<f64> = vertices.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
        self.fixed.extend_from_slice(&flat);
        self.placement
            .get_mut()
            .expect("not poisoned")
            .now
            .fixed
            .extend_from_slice(&flat);
        self.rest.extend_from_slice(&flat);
        self.surface = ContactSurface::of_triangles(faces);
        self
    }

    /// Gives the fixed surface added last (by [`Self::with_fixed_surface`], of
    /// `vertex_count` vertices) a prescribed motion.
    pub fn moving_last_surface(mut self, vertex_count: usize, motion: ObstacleMotion) -> BarrierContact {
        let end = self.fixed.len() / 3;
        self.movers.push(Mover {
            part: Part::Vertices(end - vertex_count..end),
            motion,
        });
        self.place_at(0.0);
        self
    }

    /// Gives plane `plane` a prescribed motion; it must not rotate (a plane's
    /// barrier moves by translation only).
    pub fn moving_plane(mut self, plane: usize, motion: ObstacleMotion) -> Result<BarrierContact> {
        if motion.rotates() {
            return Err(HookeError::scene(
                "motion",
                "a plane obstacle moves by translation only; give a turning obstacle as a mesh",
            ));
        }
        self.movers.push(Mover {
            part: Part::Plane(plane),
            motion,
        });
        self.place_at(0.0);
        Ok(self)
    }

    /// The obstacles at `time`, as their motions place them.
    fn placed_at(&self, time: f64) -> Placed {
        let mut placed = Placed {
            fixed: self.fixed.clone(),
            planes: self.planes.clone(),
        };
        for mover in &self.movers {
            let pose = mover.motion.pose(time);
            match &mover.part {
                Part::Vertices(range) => {
                    for v in range.clone() {
                        let p = pose.apply(&point(&self.fixed, v));
                        placed.fixed[3 * v..3 * v + 3].copy_from_slice(p.as_slice());
                    }
                }
                Part::Plane(i) => {
                    let given = self.planes[*i];
                    placed.planes[*i] = ContactPlane {
                        point: pose.apply(&given.point),
                        normal: pose.turn(&given.normal),
                    };
                }
            }
        }
        placed
    }

    /// Puts the obstacles where their motions have them at `time`, with no step under way.
    pub fn place_at(&self, time: f64) {
        if self.movers.is_empty() {
            return;
        }
        let placed = self.placed_at(time);
        *self.placement.lock().expect("not poisoned") = Placement {
            now: placed,
            target: None,
        };
    }

    /// Whether some obstacle moves.
    pub fn has_moving_obstacles(&self) -> bool {
        !self.movers.is_empty()
    }

    /// The fixed surfaces' vertices where they are now, 3 per vertex.
    pub fn fixed_positions(&self) -> Vec<f64> {
        self.placement.lock().expect("not poisoned").now.fixed.clone()
    }

    /// Where the obstacles are now, as friction measures their slip: the
    /// fixed surfaces' vertices, then each plane's point, 3 per vertex (the
    /// vertices of [`Self::friction_contacts`] past the model's).
    pub fn obstacle_positions(&self) -> Vec<f64> {
        let placement = self.placement.lock().expect("not poisoned");
        let mut all = placement.now.fixed.clone();
        all.extend(
            placement
                .now
                .planes
                .iter()
                .flat_map(|p| [p.point.x, p.point.y, p.point.z]),
        );
        all
    }

    /// The planes where they are now.
    fn planes_now(&self) -> Vec<ContactPlane> {
        match self.movers.is_empty() {
            true => self.planes.clone(),
            false => self.placement.lock().expect("not poisoned").now.planes.clone(),
        }
    }

    /// Leaves out the pairs within one body (no self-contact): `bodies` gives
    /// each model vertex's body.
    pub fn without_self_contact(mut self, bodies: Vec<usize>) -> BarrierContact {
        self.bodies = Some(bodies);
        self
    }

    /// Whose a surface vertex is: its body's index (0 without self-contact
    /// rules), or past every body for a fixed surface's.
    fn owner(&self, v: usize) -> usize {
        match (&self.bodies, v < self.model_vertices) {
            (_, false) => usize::MAX,
            (None, true) => 0,
            (Some(body), true) => body[v],
        }
    }

    /// Whether a pair on these vertices counts: it moves (a model vertex is
    /// in it), and without self-contact, it joins two owners.
    fn counts(&self, vertices: &[usize]) -> bool {
        if vertices.iter().all(|&v| v >= self.model_vertices) {
            return false;
        }
        match &self.bodies {
            None => true,
            Some(_) => vertices.iter().any(|&v| self.owner(v) != self.owner(vertices[0])),
        }
    }

    /// Model positions (or displacements, with `fixed` zero), in 3D, extended by the fixed surfaces'.
    fn extended<'a>(&self, x: &'a [f64], displacement: bool) -> std::borrow::Cow<'a, [f64]> {
        let x = lifted(x, self.dimension);
        if self.fixed.is_empty() {
            return x;
        }
        let mut all = Vec::with_capacity(x.len() + self.fixed.len());
        all.extend_from_slice(&x);
        match displacement {
            true => all.resize(x.len() + self.fixed.len(), 0.0),
            false if self.movers.is_empty() => all.extend_from_slice(&self.fixed),
            false => all.extend_from_slice(&self.placement.lock().expect("not poisoned").now.fixed),
        }
        std::borrow::Cow::Owned(all)
    }

    /// The pairs within d̂ at extended positions x that count.
    fn pairs(&self, x: &[f64]) -> Vec<ActivePair> {
        if let Some((at, pairs)) = self.last_pairs.lock().expect("not poisoned").as_ref() {
            if at.as_slice() == x {
                return pairs.clone();
            }
        }
        let mut pairs = active_pairs(&self.surface, &self.rest, x, self.dhat);
        if self.bodies.is_some() || !self.fixed.is_empty() {
            pairs.retain(|p| self.counts(p.points()));
        }
        *self.last_pairs.lock().expect("not poisoned") = Some((x.to_vec(), pairs.clone()));
        pairs
    }

    /// The contact surface: the model's vertices, then the fixed surfaces'
    /// (numbered from [`Self::model_vertex_count`] on).
    pub fn surface(&self) -> &ContactSurface {
        &self.surface
    }

    /// How many of the surface's vertex numbers are the model's.
    pub fn model_vertex_count(&self) -> usize {
        self.model_vertices
    }

    /// The model's positions x (lifted to z = 0 for a 2D model) followed by
    /// the fixed surfaces' vertices: the positions [`Self::surface`] is numbered in.
    pub fn with_fixed_positions(&self, x: &[f64]) -> Vec<f64> {
        self.extended(x, false).into_owned()
    }

    /// The planes, where they are now.
    pub fn planes(&self) -> Vec<ContactPlane> {
        self.planes_now()
    }

    /// d̂, m.
    pub fn activation_distance(&self) -> f64 {
        self.dhat
    }

    /// κ now (None: adaptive and not yet set, so the barrier is not yet on).
    pub fn stiffness(&self) -> Option<f64> {
        match self.rule {
            BarrierStiffness::Fixed(kappa) => Some(kappa),
            BarrierStiffness::Adaptive => self.adaptive.lock().expect("not poisoned").stiffness,
        }
    }

    /// κ for evaluation: 0 before the adaptive rule's first step (the
    /// initial state's record), where no step can cross anything.
    fn kappa(&self) -> f64 {
        self.stiffness().unwrap_or(0.0)
    }

    fn plane_pairs(&self, x: &[f64]) -> Vec<(usize, usize, f64)> {
        let mut found = Vec::new();
        for (p, plane) in self.planes_now().iter().enumerate() {
            for &v in self.surface.vertices.iter().filter(|&&v| v < self.model_vertices) {
                let d = plane.distance(&point(x, v));
                if d < self.dhat {
                    found.push((v, p, d));
                }
            }
        }
        found
    }

    /// The smallest distance within d̂ and the number of pairs there, at
    /// the model's positions x.
    pub fn report(&self, x: &[f64]) -> ContactReport {
        let x = &self.extended(x, false);
        let pairs = self.pairs(x);
        let planes = self.plane_pairs(x);
        let mut smallest = planes.iter().fold(f64::INFINITY, |m, &(_, _, d)| m.min(d));
        for pair in &pairs {
            smallest = smallest.min(pair_distance(pair, x));
        }
        ContactReport {
            smallest_distance: smallest,
            active_pairs: pairs.len() + planes.len(),
        }
    }

    /// The force of the contact on each vertex, −∂E_c/∂x (as x, d per vertex), N.
    pub fn forces(&self, x: &[f64]) -> Vec<f64> {
        let mut gradient = vec![0.0; x.len()];
        let kappa = self.kappa();
        if kappa > 0.0 {
            self.barrier_sum(x, Some(&mut gradient));
        }
        gradient.iter().map(|g| -kappa * g).collect()
    }

    /// The frictional contacts of the model's positions x, for friction lagged
    /// there (contact/friction.rs): one per pair and vertex–plane pair within
    /// d̂, with the barrier's normal force λ = −κ ∂b/∂d = −2dκ b′(d²). As in
    /// the IPC toolkit, edge–edge pairs whose mollifier is active (nearly
    /// parallel edges) get none. Vertices are numbered as [`Self::surface`]'s.
    pub fn friction_contacts(&self, x: &[f64]) -> Vec<FrictionContact> {
        let kappa = self.kappa();
        if kappa == 0.0 {
            return Vec::new();
        }
        let x = &self.extended(x, false);
        let reach = self.dhat * self.dhat;
        let force = |d2: f64| -kappa * barrier_first_derivative(d2, reach) * 2.0 * d2.sqrt();
        let mut contacts: Vec<FrictionContact> = self
            .pairs(x)
            .iter()
            .filter_map(|pair| {
                let [p0, p1, p2, p3] = pair.vertices.map(|v| point(x, v));
                let weights = match pair.kind {
                    PairKind::PointTriangle => point_triangle_weights(x, pair.vertices),
                    PairKind::PointEdge => point_edge_weights(x, pair.vertices),
                    PairKind::EdgeEdge { mollifier_threshold } => {
                        if cross_squared_norm(&p0, &p1, &p2, &p3) < mollifier_threshold {
                            return None;
                        }
                        edge_edge_weights(x, pair.vertices)
                    }
                };
                let d2 = pair.squared_distance(x);
                FrictionContact::of_pair(x, pair.vertices, pair.points().len(), weights, force(d2))
            })
            .collect();
        for (v, p, d) in self.plane_pairs(x) {
            // The plane's point stands in as a vertex after the fixed surfaces'
            // (numbered as in obstacle_positions).
            let stand_in = self.model_vertices + self.fixed.len() / 3 + p;
            contacts.push(FrictionContact::of_plane(
                v,
                stand_in,
                self.planes[p].normal,
                force(d * d),
            ));
        }
        contacts
    }

    /// Σ b over every pair within reach (κ not applied) at the model's
    /// positions x, its gradient added into `gradient` (as x, d per model vertex).
    fn barrier_sum(&self, x: &[f64], gradient: Option<&mut [f64]>) -> f64 {
        let x = &self.extended(x, false);
        let mut all = vec![0.0; x.len()];
        let sum = self.extended_barrier_sum(x, &mut all);
        if let Some(gradient) = gradient {
            let d = self.dimension;
            for v in 0..self.model_vertices {
                for k in 0..d {
                    gradient[d * v + k] += all[3 * v + k];
                }
            }
        }
        sum
    }

    /// [`Self::barrier_sum`] on extended positions and gradient.
    fn extended_barrier_sum(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let pairs = self.pairs(x);
        let reach = self.dhat * self.dhat;
        let mut sum = energy_and_gradient(&pairs, x, self.dhat, gradient);
        for (v, p, d) in self.plane_pairs(x) {
            if d <= 0.0 {
                return f64::INFINITY;
            }
            let d2 = d * d;
            sum += barrier(d2, reach);
            // ∂b/∂x = b′(d²) 2d n.
            let force = barrier_first_derivative(d2, reach) * 2.0 * d * self.planes[p].normal;
            for k in 0..3 {
                gradient[3 * v + k] += force[k];
            }
        }
        sum
    }
}

/// The distance of a pair from its squared distance.
fn pair_distance(pair: &ActivePair, x: &[f64]) -> f64 {
    pair.squared_distance(x).sqrt()
}

impl EnergyTerm for BarrierContact {
    fn name(&self) -> String {
        match self.surface.planar {
            true => format!(
                "2D barrier contact of {} boundary edges and {} planes",
                self.surface.edges.len(),
                self.planes.len()
            ),
            false => format!(
                "barrier contact of {} surface triangles and {} planes",
                self.surface.faces.len(),
                self.planes.len()
            ),
        }
    }

    fn kind(&self) -> TermKind {
        TermKind::Contact
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            planar: self.surface.planar,
            ..TermCapabilities::SMOOTH
        }
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        let kappa = self.kappa();
        if kappa == 0.0 {
            return 0.0;
        }
        kappa * self.barrier_sum(x, None)
    }

    fn gradient(&self, x: &[f64], _time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        let kappa = self.kappa();
        if kappa == 0.0 {
            return Ok(0.0);
        }
        let mut own = vec![0.0; x.len()];
        let sum = self.barrier_sum(x, Some(&mut own));
        gradient.iter_mut().zip(&own).for_each(|(g, o)| *g += kappa * o);
        Ok(kappa * sum)
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
        // Every coupling of this term is a changing one: see add_changing_blocks.
        if overwrite {
            hessian.values.fill(0.0);
        }
        self.gradient(x, time, gradient, overwrite)
    }

    fn changes_couplings(&self) -> bool {
        true
    }

    fn add_changing_blocks(&self, x: &[f64], _time: f64, project: bool, blocks: &mut VertexBlocks) -> Result<()> {
        let kappa = self.kappa();
        if kappa == 0.0 {
            return Ok(());
        }
        use rayon::prelude::*;
        // Entries of fixed vertices lie past the model's unknowns, where the
        // system drops them (linalg/blocks.rs).
        let x = &self.extended(x, false);
        let pairs = self.pairs(x);
        let hessians: Vec<_> = pairs
            .par_iter()
            .map(|pair| {
                let (_, _, h) = pair_term(pair, x, self.dhat);
                match project {
                    true => clamp_to_psd(h),
                    false => h,
                }
            })
            .collect();
        for (pair, h) in pairs.iter().zip(&hessians) {
            blocks.push_from_3d(pair.points(), kappa, &pair.block(h));
        }
        let reach = self.dhat * self.dhat;
        for (v, p, d) in self.plane_pairs(x) {
            let d2 = d * d;
            // ∂²b/∂x² = (4 d² b″ + 2 b′) n nᵀ: a rank-one block whose weight may be negative.
            let mut weight =
                4.0 * d2 * barrier_second_derivative(d2, reach) + 2.0 * barrier_first_derivative(d2, reach);
            if project {
                weight = weight.max(0.0);
            }
            let n = self.planes[p].normal;
            let block: Matrix3<f64> = weight * n * n.transpose();
            blocks.push_from_3d(&[v], kappa, block.as_slice());
        }
        Ok(())
    }

    fn bounds_steps(&self) -> bool {
        true
    }

    fn as_barrier_contact(&self) -> Option<&BarrierContact> {
        Some(self)
    }

    fn feasible_step(&self, x: &[f64], displacement: &[f64]) -> Result<f64> {
        let (x, displacement) = (&self.extended(x, false), &self.extended(displacement, true));
        let mut bound = crate::contact::ccd::step_bound_where(&self.surface, x, displacement, |v| self.counts(v));
        // A vertex moving toward a plane covers at most 90% of its distance,
        // as additive CCD leaves a tenth of each pair's gap.
        for plane in &self.planes_now() {
            for &v in self.surface.vertices.iter().filter(|&&v| v < self.model_vertices) {
                let approach = -plane.normal.dot(&point(displacement, v));
                if approach > 0.0 {
                    bound = bound.min(0.9 * plane.distance(&point(x, v)).max(0.0) / approach);
                }
            }
        }
        Ok(bound.clamp(0.0, 1.0))
    }

    fn begin_step(&self, model: &Model, state: &State, time: f64) -> Result<()> {
        if !self.movers.is_empty() {
            // The step starts with the obstacles where they are at its start
            // and moves them toward where they are at its end (advance_motion).
            *self.placement.lock().expect("not poisoned") = Placement {
                now: self.placed_at(state.time),
                target: Some(self.placed_at(time)),
            };
        }
        if self.rule != BarrierStiffness::Adaptive {
            return Ok(());
        }
        let x = &state.positions;
        let squared = self.report(x).smallest_distance.powi(2);
        // The balance of ∇B against ∇Φ at the step's start, as the IPC toolkit's
        // users recompute it before each step's solve.
        let h = (time - state.time).max(f64::MIN_POSITIVE);
        let masses = model.mass().lumped();
        let mass = masses.iter().sum::<f64>() / masses.len().max(1) as f64 / (h * h);
        let mut energy_gradient = vec![0.0; x.len()];
        model.gradient(x, time, &mut energy_gradient)?;
        let d = self.dimension;
        for (v, m) in masses.iter().enumerate() {
            for k in 0..d {
                // Inertia: ∂/∂x ‖x − x̃‖²_M / 2h² at x = xₙ is −M vₙ / h.
                energy_gradient[d * v + k] -= m * state.velocities[d * v + k] / h;
            }
        }
        let mut barrier_gradient = vec![0.0; x.len()];
        self.barrier_sum(x, Some(&mut barrier_gradient));
        let (balanced, ceiling) =
            crate::contact::stiffness::initial(self.diagonal, self.dhat, mass, &energy_gradient, &barrier_gradient);
        let mut adaptive = self.adaptive.lock().expect("not poisoned");
        // The doubling rule, from one step's start to the next: when the
        // smallest distance keeps shrinking while tiny, twice the last κ if
        // that is more than the balance.
        let doubled = adaptive.stiffness.and_then(|kappa| {
            let previous = adaptive.previous_distance.unwrap_or(f64::INFINITY);
            let next = crate::contact::stiffness::updated(previous, squared, kappa, ceiling, self.diagonal);
            (next > kappa).then_some(next)
        });
        adaptive.stiffness = Some(doubled.map_or(balanced, |d| d.max(balanced)));
        adaptive.ceiling = ceiling;
        adaptive.previous_distance = squared.is_finite().then_some(squared);
        Ok(())
    }

    fn advance_motion(&self, _model: &Model, x: &[f64]) -> Result<bool> {
        let placement = self.placement.lock().expect("not poisoned");
        let Some(target) = placement.target.clone() else {
            return Ok(true);
        };
        let now = placement.now.clone();
        drop(placement);
        // The obstacles' straight way from now to the target, with the bodies
        // held at x: as far along it as CCD allows (each pair keeps a tenth of
        // its gap), and 90% of each vertex's distance to a moving plane.
        let x = &lifted(x, self.dimension);
        let mut at = x.to_vec();
        at.extend_from_slice(&now.fixed);
        let mut way = vec![0.0; x.len()];
        way.extend(target.fixed.iter().zip(&now.fixed).map(|(t, n)| t - n));
        let mut bound = match way.iter().any(|w| *w != 0.0) {
            true => crate::contact::ccd::step_bound_where(&self.surface, &at, &way, |v| self.counts(v)),
            false => 1.0,
        };
        for (plane, goal) in now.planes.iter().zip(&target.planes) {
            let approach = (goal.point - plane.point).dot(&plane.normal);
            if approach > 0.0 {
                for &v in self.surface.vertices.iter().filter(|&&v| v < self.model_vertices) {
                    bound = bound.min(0.9 * plane.distance(&point(x, v)).max(0.0) / approach);
                }
            }
        }
        let bound = bound.clamp(0.0, 1.0);
        let mut placement = self.placement.lock().expect("not poisoned");
        if bound >= 1.0 {
            *placement = Placement {
                now: target,
                target: None,
            };
            return Ok(true);
        }
        let between = |a: f64, b: f64| a + bound * (b - a);
        placement.now = Placed {
            fixed: now
                .fixed
                .iter()
                .zip(&target.fixed)
                .map(|(a, b)| between(*a, *b))
                .collect(),
            planes: now
                .planes
                .iter()
                .zip(&target.planes)
                .map(|(a, b)| ContactPlane {
                    point: a.point + bound * (b.point - a.point),
                    normal: a.normal,
                })
                .collect(),
        };
        Ok(false)
    }

    fn history(&self) -> serde_json::Value {
        match self.rule {
            BarrierStiffness::Fixed(_) => serde_json::Value::Null,
            BarrierStiffness::Adaptive => {
                serde_json::to_value(*self.adaptive.lock().expect("not poisoned")).unwrap_or(serde_json::Value::Null)
            }
        }
    }

    fn restore_history(&self, history: &serde_json::Value) -> Result<()> {
        if history.is_null() {
            return Ok(());
        }
        let restored: Adaptive = serde_json::from_value(history.clone()).map_err(|e| HookeError::Solver {
            reason: format!("the checkpoint's barrier stiffness cannot be read: {e}"),
        })?;
        *self.adaptive.lock().expect("not poisoned") = restored;
        Ok(())
    }
}
