//! A scene running live: built from its text, stepped once a frame, grabbed
//! by the pointer. Plain Rust (no JavaScript types), so that native tests and
//! the reference runs drive exactly what the page drives.

use hooke::integrate::Integrator;
use hooke::mesh::{boundary_facets, Mesh};
use hooke::model::{Model, PointerSpring, State};
use hooke::scene::{BuildOptions, Scene};
use hooke::HookeError;
use nalgebra::Vector3;

/// The pointer spring's stiffness per kilogram of body, N/(m·kg): the body,
/// held by one vertex, follows the hand at about √200 rad/s ≈ 2 Hz, quick
/// enough to feel direct and slow enough not to tear a soft body apart.
pub const POINTER_STIFFNESS_PER_KG: f64 = 200.0;

/// A built scene, its state and the pointer.
pub struct LiveScene {
    model: Model,
    integrator: Box<dyn Integrator>,
    state: State,
    initial: State,
    time_step: f64,
    pointer_stiffness: f64,
    held: Option<(usize, Vector3<f64>)>,
    surface: Vec<u32>,
    surface_vertices: Vec<usize>,
    steps: usize,
    solver: SolverTime,
}

/// The minimiser's iterations and the time they took, summed over steps.
#[derive(Clone, Copy, Default)]
struct SolverTime {
    iterations: usize,
    seconds: f64,
}

impl LiveScene {
    /// Reads and builds the scene `text` (named `name` in errors); files it
    /// names are not available, so its meshes must be generated
    /// (`box`, `solid`…). A `[subspace]` scene takes its eigenmodes and
    /// cubature from `subspace` (what [`LiveScene::precompute`] wrote) when
    /// given, and computes them otherwise.
    pub fn new(text: &str, name: &str, subspace: Option<&[u8]>) -> hooke::Result<LiveScene> {
        let scene = scene_of(text, name)?;
        let built = scene.build_with(&BuildOptions {
            pointer: true,
            subspace: subspace.map(<[u8]>::to_vec),
        })?;
        let pointer_stiffness = POINTER_STIFFNESS_PER_KG * built.model.mass().lumped().iter().sum::<f64>();
        let (surface, surface_vertices) = surface_of(built.model.mesh());
        Ok(LiveScene {
            time_step: scene.file.simulation.time_step,
            model: built.model,
            integrator: built.integrator,
            initial: built.initial_state.clone(),
            state: built.initial_state,
            pointer_stiffness,
            held: None,
            surface,
            surface_vertices,
            steps: 0,
            solver: SolverTime::default(),
        })
    }

    /// The eigenmodes and cubature of the `[subspace]` scene `text`, for
    /// [`LiveScene::new`]: computed once (natively, where it is quicker), they
    /// give the page the subspace a native run has, bit for bit.
    pub fn precompute(text: &str, name: &str) -> hooke::Result<Vec<u8>> {
        scene_of(text, name)?.precompute_subspace()
    }

    /// One time step of the scene's integrator, with the pointer where it is.
    pub fn step(&mut self) -> hooke::Result<()> {
        let report = self.integrator.step(&self.model, &mut self.state, self.time_step)?;
        self.steps += 1;
        self.solver.iterations += report.iterations;
        self.solver.seconds += report.solve_seconds;
        Ok(())
    }

    /// Back to the state at t = 0, nothing held.
    pub fn reset(&mut self) -> hooke::Result<()> {
        self.release()?;
        self.state = self.initial.clone();
        self.steps = 0;
        self.solver = SolverTime::default();
        Ok(())
    }

    /// Vertex positions, x y z per vertex.
    pub fn positions(&self) -> &[f64] {
        &self.state.positions
    }

    /// The boundary triangles (three vertex indices each), outward.
    pub fn surface(&self) -> &[u32] {
        &self.surface
    }

    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        self.state.time
    }

    /// The time step, s.
    pub fn time_step(&self) -> f64 {
        self.time_step
    }

    /// Steps taken since the start or the last reset.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The mean time of one iteration of the minimiser over the steps since
    /// the start or the last reset, ms: the iterations alone, without the
    /// step's reduction of its time-varying loads or the forming of every
    /// vertex's position (NaN before the first step).
    pub fn iteration_ms(&self) -> f64 {
        match self.solver.iterations {
            0 => f64::NAN,
            n => 1e3 * self.solver.seconds / n as f64,
        }
    }

    /// The body's total energy (kinetic, elastic, gravitational), J; the
    /// pointer's spring is not counted.
    pub fn energy(&self) -> hooke::Result<f64> {
        Ok(self.integrator.energy_record(&self.model, &self.state)?.total)
    }

    /// The pointer spring's stiffness, N/m.
    pub fn pointer_stiffness(&self) -> f64 {
        self.pointer_stiffness
    }

    /// The surface vertex nearest the ray from `origin` along `direction`
    /// (a click through the camera), if one lies within `radius` of it, in front.
    pub fn pick(&self, origin: Vector3<f64>, direction: Vector3<f64>, radius: f64) -> Option<usize> {
        let direction = direction.try_normalize(0.0)?;
        let mut best: Option<(f64, f64, usize)> = None;
        for &v in &self.surface_vertices {
            let p = Vector3::from_column_slice(&self.state.positions[3 * v..3 * v + 3]);
            let along = (p - origin).dot(&direction);
            if along <= 0.0 {
                continue;
            }
            let off = (p - origin - along * direction).norm();
            if off > radius {
                continue;
            }
            // The nearest to the eye among those close to the ray; then the closest to it.
            let key = (along, off);
            if best.is_none_or(|(a, o, _)| key.0 < a - radius || (key.0 <= a + radius && key.1 < o)) {
                best = Some((along, off, v));
            }
        }
        best.map(|(_, _, v)| v)
    }

    /// Holds `vertex` toward `target` (the pointer's point in the scene).
    pub fn grab(&mut self, vertex: usize, target: Vector3<f64>) -> hooke::Result<()> {
        self.set_held(Some((vertex, target)))
    }

    /// Moves the pointer's point; nothing happens when nothing is held.
    pub fn drag_to(&mut self, target: Vector3<f64>) -> hooke::Result<()> {
        match self.held {
            Some((vertex, _)) => self.set_held(Some((vertex, target))),
            None => Ok(()),
        }
    }

    /// Lets go.
    pub fn release(&mut self) -> hooke::Result<()> {
        self.set_held(None)
    }

    /// The vertex held and the pointer's point, if any.
    pub fn held(&self) -> Option<(usize, Vector3<f64>)> {
        self.held
    }

    fn set_held(&mut self, held: Option<(usize, Vector3<f64>)>) -> hooke::Result<()> {
        self.model
            .set_pointer_spring(PointerSpring::new(held, self.pointer_stiffness))?;
        self.held = held;
        Ok(())
    }
}

/// The scene of `text`, if the page can run it.
fn scene_of(text: &str, name: &str) -> hooke::Result<Scene> {
    let scene = Scene::from_text(text, name, ".".into())?;
    if scene.file.dimension != 3 {
        return Err(HookeError::scene("dimension", "the live page runs 3D scenes"));
    }
    Ok(scene)
}

/// The boundary triangles of the bodies (flattened) and the vertices on them.
fn surface_of(mesh: &Mesh) -> (Vec<u32>, Vec<usize>) {
    let mut triangles = Vec::new();
    let mut on_surface = vec![false; mesh.vertex_count()];
    for (face, ..) in boundary_facets(mesh) {
        for &v in &face {
            on_surface[v] = true;
            triangles.push(v as u32);
        }
    }
    let vertices = (0..on_surface.len()).filter(|&v| on_surface[v]).collect();
    (triangles, vertices)
}
