//! Hooke in the browser: a scene built and stepped in WebAssembly, and
//! grabbed with the pointer.
//!
//! The page (`web/`) makes a [`Live`] from a scene's text, calls
//! [`Live::step`] once a frame and draws [`Live::positions`] over
//! [`Live::surface`]. The library runs as it does natively, on one thread
//! (rayon's loops fall back to the calling thread) and without C code
//! (minimum-degree orderings instead of METIS), so a run in the page equals
//! a native one-thread run of [`LiveScene`] to rounding.
//!
//! `scripts/build-web` builds the module and the site into `target/web/`.

mod live;

pub use live::{LiveScene, POINTER_STIFFNESS_PER_KG};

use nalgebra::Vector3;
use wasm_bindgen::prelude::*;

/// Hooke's error, as the page shows it: its whole message.
fn to_js(error: hooke::HookeError) -> JsError {
    JsError::new(&error.to_string())
}

/// A scene running live in the page.
#[wasm_bindgen]
pub struct Live(LiveScene);

#[wasm_bindgen]
impl Live {
    /// Reads and builds the scene `text` (a scene file's TOML; `name` names it
    /// in errors). Its meshes must be generated (`box`, `solid`…): the page
    /// has no files. A subspace's modes and cubature come from `subspace`
    /// (the bytes of `hooke export-web`'s subspace.json) when it is not
    /// empty, and are computed here otherwise.
    #[wasm_bindgen(constructor)]
    pub fn new(text: &str, name: &str, subspace: &[u8]) -> Result<Live, JsError> {
        let subspace = (!subspace.is_empty()).then_some(subspace);
        LiveScene::new(text, name, subspace).map(Live).map_err(to_js)
    }

    /// One time step.
    pub fn step(&mut self) -> Result<(), JsError> {
        self.0.step().map_err(to_js)
    }

    /// The mean time of one minimiser iteration since the start or the last
    /// reset, ms (NaN before the first step).
    pub fn iteration_ms(&self) -> f64 {
        self.0.iteration_ms()
    }

    /// Back to t = 0, nothing held.
    pub fn reset(&mut self) -> Result<(), JsError> {
        self.0.reset().map_err(to_js)
    }

    /// Vertex positions, x y z per vertex (single precision, for drawing).
    pub fn positions(&self) -> Vec<f32> {
        self.0.positions().iter().map(|&x| x as f32).collect()
    }

    /// Vertex positions in double precision (for comparing runs).
    pub fn positions_f64(&self) -> Vec<f64> {
        self.0.positions().to_vec()
    }

    /// Boundary triangles, three vertex indices each, outward.
    pub fn surface(&self) -> Vec<u32> {
        self.0.surface().to_vec()
    }

    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        self.0.time()
    }

    /// The time step, s.
    #[wasm_bindgen(js_name = timeStep)]
    pub fn time_step(&self) -> f64 {
        self.0.time_step()
    }

    /// The body's total energy, J (the pointer's spring not counted).
    pub fn energy(&self) -> Result<f64, JsError> {
        self.0.energy().map_err(to_js)
    }

    /// The surface vertex nearest the ray (origin, direction) within
    /// `radius` of it, or −1.
    #[allow(clippy::too_many_arguments)]
    pub fn pick(&self, ox: f64, oy: f64, oz: f64, dx: f64, dy: f64, dz: f64, radius: f64) -> i32 {
        self.0
            .pick(Vector3::new(ox, oy, oz), Vector3::new(dx, dy, dz), radius)
            .map_or(-1, |v| v as i32)
    }

    /// Holds `vertex` toward (x, y, z).
    pub fn grab(&mut self, vertex: u32, x: f64, y: f64, z: f64) -> Result<(), JsError> {
        self.0.grab(vertex as usize, Vector3::new(x, y, z)).map_err(to_js)
    }

    /// Moves the pointer's point (nothing happens when nothing is held).
    #[wasm_bindgen(js_name = dragTo)]
    pub fn drag_to(&mut self, x: f64, y: f64, z: f64) -> Result<(), JsError> {
        self.0.drag_to(Vector3::new(x, y, z)).map_err(to_js)
    }

    /// Lets go.
    pub fn release(&mut self) -> Result<(), JsError> {
        self.0.release().map_err(to_js)
    }
}
