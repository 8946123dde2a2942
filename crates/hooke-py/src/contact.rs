//! Contact geometry for Python (`hooke.contact`): the squared distances of
//! point–triangle and edge–edge pairs, the edge–edge mollifier and the
//! barrier of Li et al. 2020, each with its derivatives, as the contact
//! terms use them; they are compared with the IPC toolkit's (`ipctk`) in the
//! package's tests.

use crate::arrays::{to_matrix, Floats};
use hooke::contact::{barrier, distance, mollifier};
use nalgebra::{SMatrix, Vector3};
use numpy::PyArray1;
use pyo3::prelude::*;

type Derivatives<'py> = (f64, Bound<'py, PyAny>, Bound<'py, PyAny>);

fn point(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vector3<f64>> {
    let [x, y, z] = Floats::read(value, name)?.fixed_vector(3)?;
    Ok(Vector3::new(x, y, z))
}

fn four(values: [(&Bound<'_, PyAny>, &str); 4]) -> PyResult<[Vector3<f64>; 4]> {
    Ok([
        point(values[0].0, values[0].1)?,
        point(values[1].0, values[1].1)?,
        point(values[2].0, values[2].1)?,
        point(values[3].0, values[3].1)?,
    ])
}

fn out<'py>(
    py: Python<'py>,
    (value, gradient, hessian): (f64, [f64; 12], SMatrix<f64, 12, 12>),
) -> PyResult<Derivatives<'py>> {
    // Symmetric: row-major and column-major orders are the same matrix.
    let hessian = to_matrix(py, hessian.as_slice().to_vec(), 12)?;
    Ok((value, PyArray1::from_vec(py, gradient.to_vec()).into_any(), hessian))
}

/// The squared distance between point p and triangle (t0, t1, t2), with its
/// gradient (12,) and Hessian (12, 12) with respect to (p, t0, t1, t2),
/// through the closest features.
#[pyfunction]
pub fn point_triangle_distance<'py>(
    py: Python<'py>,
    p: &Bound<'py, PyAny>,
    t0: &Bound<'py, PyAny>,
    t1: &Bound<'py, PyAny>,
    t2: &Bound<'py, PyAny>,
) -> PyResult<Derivatives<'py>> {
    let [p, t0, t1, t2] = four([(p, "p"), (t0, "t0"), (t1, "t1"), (t2, "t2")])?;
    out(py, distance::point_triangle_hessian(&p, &t0, &t1, &t2))
}

/// The squared distance between edges (ea0, ea1) and (eb0, eb1), with its
/// gradient (12,) and Hessian (12, 12) with respect to (ea0, ea1, eb0, eb1).
#[pyfunction]
pub fn edge_edge_distance<'py>(
    py: Python<'py>,
    ea0: &Bound<'py, PyAny>,
    ea1: &Bound<'py, PyAny>,
    eb0: &Bound<'py, PyAny>,
    eb1: &Bound<'py, PyAny>,
) -> PyResult<Derivatives<'py>> {
    let [a0, a1, b0, b1] = four([(ea0, "ea0"), (ea1, "ea1"), (eb0, "eb0"), (eb1, "eb1")])?;
    out(py, distance::edge_edge_hessian(&a0, &a1, &b0, &b1))
}

/// The edge–edge mollifier m for the threshold `eps_x`, with its gradient
/// and Hessian with respect to (ea0, ea1, eb0, eb1).
#[pyfunction]
pub fn edge_edge_mollifier<'py>(
    py: Python<'py>,
    ea0: &Bound<'py, PyAny>,
    ea1: &Bound<'py, PyAny>,
    eb0: &Bound<'py, PyAny>,
    eb1: &Bound<'py, PyAny>,
    eps_x: f64,
) -> PyResult<Derivatives<'py>> {
    let [a0, a1, b0, b1] = four([(ea0, "ea0"), (ea1, "ea1"), (eb0, "eb0"), (eb1, "eb1")])?;
    out(py, mollifier::mollifier(&a0, &a1, &b0, &b1, eps_x))
}

/// The mollifier's threshold ε = 10⁻³ ‖ea1 − ea0‖² ‖eb1 − eb0‖² of edges at rest.
#[pyfunction]
pub fn edge_edge_mollifier_threshold(
    ea0: &Bound<'_, PyAny>,
    ea1: &Bound<'_, PyAny>,
    eb0: &Bound<'_, PyAny>,
    eb1: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let [a0, a1, b0, b1] = four([(ea0, "ea0"), (ea1, "ea1"), (eb0, "eb0"), (eb1, "eb1")])?;
    Ok(mollifier::threshold(&a0, &a1, &b0, &b1))
}

/// The barrier b(d, d̂) = −(d − d̂)² ln(d/d̂) below d̂ (0 above, ∞ at d ≤ 0),
/// and its first and second derivatives with respect to d.
#[pyfunction]
pub fn barrier_with_derivatives(d: f64, dhat: f64) -> (f64, f64, f64) {
    (
        barrier::barrier(d, dhat),
        barrier::barrier_first_derivative(d, dhat),
        barrier::barrier_second_derivative(d, dhat),
    )
}

/// The barrier's first stiffness and its ceiling (Li et al. 2020's adaptive
/// rule, as `contact::stiffness::initial` computes it): κ = −∇B·∇E/‖∇B‖²
/// clamped to [κ_min, 100 κ_min], κ_min from the mean vertex `mass`.
#[pyfunction]
pub fn initial_barrier_stiffness(
    diagonal: f64,
    dhat: f64,
    mass: f64,
    energy_gradient: &Bound<'_, PyAny>,
    barrier_gradient: &Bound<'_, PyAny>,
) -> PyResult<(f64, f64)> {
    let energy = Floats::read(energy_gradient, "energy_gradient")?;
    let barrier = Floats::read(barrier_gradient, "barrier_gradient")?;
    let (energy, barrier) = (energy.finite_values()?, barrier.finite_values()?);
    if energy.len() != barrier.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "the gradients differ in length: {} and {}",
            energy.len(),
            barrier.len()
        )));
    }
    Ok(hooke::contact::stiffness::initial(
        diagonal, dhat, mass, &energy, &barrier,
    ))
}

/// κ after a solve: doubled (up to `ceiling`) when the smallest squared
/// distance, before and now, is tiny and still shrinking.
#[pyfunction]
pub fn updated_barrier_stiffness(
    previous_distance: f64,
    distance: f64,
    stiffness: f64,
    ceiling: f64,
    diagonal: f64,
) -> f64 {
    hooke::contact::stiffness::updated(previous_distance, distance, stiffness, ceiling, diagonal)
}

/// The N points of a pair.
type Points<const N: usize> = [Vector3<f64>; N];

/// The N points of a pair at the step's start, and their displacements to its end.
fn pair_motion<const N: usize>(start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<(Points<N>, Points<N>)> {
    let read = |value: &Bound<'_, PyAny>, name: &str| -> PyResult<[Vector3<f64>; N]> {
        let (points, _) = Floats::read(value, name)?.points()?;
        let points: [Vector3<f64>; N] = points.try_into().map_err(|p: Vec<Vector3<f64>>| {
            pyo3::exceptions::PyValueError::new_err(format!("{name}: expected {N} points, got {}", p.len()))
        })?;
        Ok(points)
    };
    let (x0, x1) = (read(start, "start")?, read(end, "end")?);
    Ok((x0, std::array::from_fn(|i| x1[i] - x0[i])))
}

/// Additive CCD of point x[0] and triangle x[1..4] moving from `start` to
/// `end` (each (4, 3)): the time in [0, 1] to stop at, or None when they do
/// not meet within the step.
#[pyfunction]
pub fn point_triangle_ccd(start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    let (x, dx) = pair_motion(start, end)?;
    Ok(hooke::contact::ccd::point_triangle_time(x, dx))
}

/// Additive CCD of point x[0] and edge (x[1], x[2]) of the plane moving
/// from `start` to `end` (each (3, 2)).
#[pyfunction]
pub fn point_edge_ccd(start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    let (x, dx) = pair_motion(start, end)?;
    Ok(hooke::contact::ccd::point_edge_time(x, dx))
}

/// Additive CCD of edges (x[0], x[1]) and (x[2], x[3]) moving from `start`
/// to `end` (each (4, 3)).
#[pyfunction]
pub fn edge_edge_ccd(start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    let (x, dx) = pair_motion(start, end)?;
    Ok(hooke::contact::ccd::edge_edge_time(x, dx))
}

/// Points (n, 3) as coordinates, 3 per point.
fn flat_points(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<f64>> {
    let (points, _) = Floats::read(value, name)?.points()?;
    Ok(points.iter().flat_map(|p| [p.x, p.y, p.z]).collect())
}

/// The triangle surface `faces` over positions `start` and `end` (each (n, 3)).
fn surface_motion(
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    faces: &Bound<'_, PyAny>,
) -> PyResult<(hooke::contact::ContactSurface, Vec<f64>, Vec<f64>)> {
    let (x0, x1) = motion(start, end, None)?;
    Ok((triangle_surface(faces, x0.len() / 3)?, x0, x1))
}

/// Positions `start` and `end` (each (n, 3)) as flat lists, of one length,
/// and of `vertex_count` points when it is given.
fn motion(
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    vertex_count: Option<usize>,
) -> PyResult<(Vec<f64>, Vec<f64>)> {
    let (x0, x1) = (flat_points(start, "start")?, flat_points(end, "end")?);
    if x0.len() != x1.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "start has {} points and end {}",
            x0.len() / 3,
            x1.len() / 3
        )));
    }
    if let Some(count) = vertex_count.filter(|&count| count != x0.len() / 3) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "the surface has {count} vertices, but start and end have {} points",
            x0.len() / 3
        )));
    }
    Ok((x0, x1))
}

/// A triangle surface built once (its triangles, edges and vertices) for
/// repeated queries over motions of its vertices, as the IPC toolkit's
/// `CollisionMesh` is: each query then pays for the motion alone.
///
/// >>> surface = hooke.contact.Surface(faces, len(vertices))
/// >>> surface.candidate_counts(start, end, 1e-3)
#[pyclass(name = "Surface", module = "hooke.contact", frozen)]
pub struct Surface {
    surface: hooke::contact::ContactSurface,
    vertex_count: usize,
}

#[pymethods]
impl Surface {
    /// The surface of triangles `faces` ((m, 3) indices) over `vertex_count` vertices.
    #[new]
    fn new(faces: &Bound<'_, PyAny>, vertex_count: usize) -> PyResult<Surface> {
        Ok(Surface {
            surface: triangle_surface(faces, vertex_count)?,
            vertex_count,
        })
    }

    /// The numbers of triangles, edges and vertices on the surface.
    fn counts(&self) -> (usize, usize, usize) {
        let s = &self.surface;
        (s.faces.len(), s.edges.len(), s.vertices.len())
    }

    /// As the function `candidate_counts`, for this surface.
    fn candidate_counts(
        &self,
        start: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        reach: f64,
    ) -> PyResult<(usize, usize)> {
        let (x0, x1) = motion(start, end, Some(self.vertex_count))?;
        Ok(counts_of(&self.surface, &x0, &x1, reach))
    }

    /// As the function `collision_free_step`, for this surface.
    fn collision_free_step(&self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<f64> {
        let (x0, x1) = motion(start, end, Some(self.vertex_count))?;
        Ok(step_of(&self.surface, &x0, &x1))
    }
}

/// The numbers of vertex–triangle and edge–edge candidates of the motion x0 → x1.
fn counts_of(surface: &hooke::contact::ContactSurface, x0: &[f64], x1: &[f64], reach: f64) -> (usize, usize) {
    let found = hooke::contact::broad_phase::candidates(surface, x0, x1, reach);
    (found.vertex_face.len(), found.edge_edge.len())
}

/// The collision-free fraction of the motion x0 → x1.
fn step_of(surface: &hooke::contact::ContactSurface, x0: &[f64], x1: &[f64]) -> f64 {
    let dx: Vec<f64> = x1.iter().zip(x0).map(|(b, a)| b - a).collect();
    hooke::contact::ccd::step_bound(surface, x0, &dx)
}

/// The triangle surface `faces` ((m, 3) indices) over `vertex_count` vertices.
fn triangle_surface(faces: &Bound<'_, PyAny>, vertex_count: usize) -> PyResult<hooke::contact::ContactSurface> {
    let (triangles, _) = crate::arrays::elements(faces, "faces")?;
    let mut list = Vec::with_capacity(triangles.len());
    for (f, t) in triangles.iter().enumerate() {
        let face: [usize; 3] = t.as_slice().try_into().map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!("faces[{f}]: a triangle has 3 corners, got {}", t.len()))
        })?;
        if let Some(v) = face.iter().find(|&&v| v >= vertex_count) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "faces[{f}] names vertex {v}, but there are {vertex_count}"
            )));
        }
        list.push(face);
    }
    Ok(hooke::contact::ContactSurface::of_triangles(list))
}

/// Adds a block on `vertices` (3 coordinates each; entries column-major) to
/// the dense row-major `hessian` of `size` coordinates.
fn add_block(hessian: &mut [f64], size: usize, vertices: &[usize], block: &[f64]) {
    let m = 3 * vertices.len();
    for (a, &va) in vertices.iter().enumerate() {
        for (b, &vb) in vertices.iter().enumerate() {
            for k in 0..3 {
                for l in 0..3 {
                    hessian[(3 * va + k) * size + 3 * vb + l] += block[(3 * b + l) * m + 3 * a + k];
                }
            }
        }
    }
}

/// The barrier potential of `surface` at `x` (3 per vertex; `rest` for the
/// mollifier): B, its gradient and its dense row-major Hessian, each pair's
/// part projected to positive semi-definite with `project`.
fn dense_barrier(
    surface: &hooke::contact::ContactSurface,
    rest: &[f64],
    x: &[f64],
    dhat: f64,
    project: bool,
) -> (f64, Vec<f64>, Vec<f64>) {
    use hooke::contact::potential::{active_pairs, clamp_to_psd, energy_and_gradient, pair_term};
    let pairs = active_pairs(surface, rest, x, dhat);
    let mut gradient = vec![0.0; x.len()];
    let energy = energy_and_gradient(&pairs, x, dhat, &mut gradient);
    let mut hessian = vec![0.0; x.len() * x.len()];
    for pair in &pairs {
        let (_, _, h) = pair_term(pair, x, dhat);
        let h = if project { clamp_to_psd(h) } else { h };
        add_block(&mut hessian, x.len(), pair.points(), &pair.block(&h));
    }
    (energy, gradient, hessian)
}

/// The largest fraction of the motion from `start` to `end` (each (n, 3))
/// that no pair of the triangle surface `faces` can cross (additive CCD over
/// the broad phase's candidates; `EnergyTerm::feasible_step` of barrier contact).
#[pyfunction]
pub fn collision_free_step(
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    faces: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let (surface, x0, x1) = surface_motion(start, end, faces)?;
    Ok(step_of(&surface, &x0, &x1))
}

/// The broad phase's candidates for the motion from `start` to `end`: the
/// numbers of vertex–triangle and edge–edge pairs whose swept boxes come
/// within `reach`.
#[pyfunction]
pub fn candidate_counts(
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    faces: &Bound<'_, PyAny>,
    reach: f64,
) -> PyResult<(usize, usize)> {
    let (surface, x0, x1) = surface_motion(start, end, faces)?;
    Ok(counts_of(&surface, &x0, &x1, reach))
}

/// The barrier potential B(x) of the triangle surface `faces` over
/// `vertices` (n, 3) with activation distance `dhat` (stiffness 1), its
/// gradient (n, 3) and its Hessian (3n, 3n), exact or, with `project`, with
/// each pair's part projected to positive semi-definite; `rest` (default
/// `vertices`) gives the edge–edge mollifier's thresholds.
#[pyfunction]
#[pyo3(signature = (vertices, faces, dhat, rest=None, project=false))]
pub fn barrier_potential<'py>(
    py: Python<'py>,
    vertices: &Bound<'py, PyAny>,
    faces: &Bound<'py, PyAny>,
    dhat: f64,
    rest: Option<&Bound<'py, PyAny>>,
    project: bool,
) -> PyResult<(f64, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let x = flat_points(vertices, "vertices")?;
    let rest = match rest {
        Some(rest) => flat_points(rest, "rest")?,
        None => x.clone(),
    };
    let n = x.len() / 3;
    let surface = triangle_surface(faces, n)?;
    let (energy, gradient, hessian) = dense_barrier(&surface, &rest, &x, dhat, project);
    Ok((energy, to_matrix(py, gradient, 3)?, to_matrix(py, hessian, 3 * n)?))
}

/// The squared distance between point p and edge (e0, e1) of the plane (2
/// numbers each, or 3 with z = 0), with its gradient (6,) and Hessian (6, 6)
/// with respect to (p, e0, e1) in the plane, through the closest feature.
#[pyfunction]
pub fn point_edge_distance<'py>(
    py: Python<'py>,
    p: &Bound<'py, PyAny>,
    e0: &Bound<'py, PyAny>,
    e1: &Bound<'py, PyAny>,
) -> PyResult<Derivatives<'py>> {
    let planar = |value: &Bound<'py, PyAny>, name: &str| -> PyResult<Vector3<f64>> {
        let [x, y, _] = Floats::read(value, name)?.fixed_vector(2)?;
        Ok(Vector3::new(x, y, 0.0))
    };
    let (p, e0, e1) = (planar(p, "p")?, planar(e0, "e0")?, planar(e1, "e1")?);
    let (value, gradient, hessian) = distance::point_edge_hessian(&p, &e0, &e1);
    let kept = [0, 1, 3, 4, 6, 7];
    let gradient: Vec<f64> = kept.iter().map(|&i| gradient[i]).collect();
    let hessian: Vec<f64> = kept
        .iter()
        .flat_map(|&i| kept.iter().map(move |&j| hessian[(i, j)]))
        .collect();
    Ok((
        value,
        PyArray1::from_vec(py, gradient).into_any(),
        to_matrix(py, hessian, 6)?,
    ))
}

/// The barrier potential B(x) of the 2D curves `edges` ((m, 2) indices)
/// over `vertices` (n, 2), point–edge pairs closer than `dhat` (stiffness 1):
/// its gradient (n, 2) and Hessian (2n, 2n), exact or, with `project`, each
/// pair's part projected to positive semi-definite.
#[pyfunction]
#[pyo3(signature = (vertices, edges, dhat, project=false))]
pub fn barrier_potential_2d<'py>(
    py: Python<'py>,
    vertices: &Bound<'py, PyAny>,
    edges: &Bound<'py, PyAny>,
    dhat: f64,
    project: bool,
) -> PyResult<(f64, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let (points, d) = Floats::read(vertices, "vertices")?.points()?;
    if d != 2 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "vertices: expected an (n, 2) array of points in the plane",
        ));
    }
    let n = points.len();
    let x: Vec<f64> = points.iter().flat_map(|p| [p.x, p.y, 0.0]).collect();
    let surface = hooke::contact::ContactSurface::of_plane_edges(crate::arrays::edges(edges, "edges", n)?);
    let (energy, lifted, hessian3) = dense_barrier(&surface, &x, &x, dhat, project);
    // Drop z: rows and columns 3v + 2.
    let kept: Vec<usize> = (0..x.len()).filter(|i| i % 3 != 2).collect();
    let gradient: Vec<f64> = kept.iter().map(|&i| lifted[i]).collect();
    let hessian: Vec<f64> = kept
        .iter()
        .flat_map(|&i| kept.iter().map(|&j| hessian3[i * x.len() + j]).collect::<Vec<_>>())
        .collect();
    Ok((energy, to_matrix(py, gradient, 2)?, to_matrix(py, hessian, 2 * n)?))
}

/// The largest fraction of the motion from `start` to `end` (each (n, 2))
/// that no point of the 2D curves `edges` can cross an edge (additive CCD
/// over the broad phase's vertex–edge candidates).
#[pyfunction]
pub fn collision_free_step_2d(
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    edges: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let (x0, x1) = (flat_points(start, "start")?, flat_points(end, "end")?);
    if x0.len() != x1.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "start has {} points and end {}",
            x0.len() / 3,
            x1.len() / 3
        )));
    }
    let surface = hooke::contact::ContactSurface::of_plane_edges(crate::arrays::edges(edges, "edges", x0.len() / 3)?);
    let dx: Vec<f64> = x1.iter().zip(&x0).map(|(b, a)| b - a).collect();
    Ok(hooke::contact::ccd::step_bound(&surface, &x0, &dx))
}

/// The lagged friction potential D of Li et al. 2020, §5, of the triangle
/// surface `faces`: normal forces, closest points and tangent planes taken
/// at `lagged` (n, 3) with the barrier of stiffness `stiffness` (J/m⁴) and
/// activation distance `dhat`, and the slip measured from `lagged` to
/// `vertices` (n, 3) over a step `dt` with Coulomb coefficient `mu` and
/// smoothing speed `eps_v` (m/s). Returns D (J), its gradient (n, 3) and
/// Hessian (3n, 3n) with respect to `vertices`; `rest` (default `lagged`)
/// gives the edge–edge mollifier's thresholds.
#[pyfunction]
#[pyo3(signature = (lagged, vertices, faces, dhat, stiffness, mu, eps_v, dt, rest=None))]
#[allow(clippy::too_many_arguments)]
pub fn friction_potential<'py>(
    py: Python<'py>,
    lagged: &Bound<'py, PyAny>,
    vertices: &Bound<'py, PyAny>,
    faces: &Bound<'py, PyAny>,
    dhat: f64,
    stiffness: f64,
    mu: f64,
    eps_v: f64,
    dt: f64,
    rest: Option<&Bound<'py, PyAny>>,
) -> PyResult<(f64, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    use hooke::contact::friction::{contact_block, dissipation};
    use hooke::model::{BarrierContact, BarrierStiffness};
    let start = flat_points(lagged, "lagged")?;
    let x = flat_points(vertices, "vertices")?;
    if x.len() != start.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "vertices: expected as many points as lagged",
        ));
    }
    if !(dt.is_finite() && dt > 0.0) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "dt: expected a positive step, got {dt}"
        )));
    }
    let rest = match rest {
        Some(rest) => flat_points(rest, "rest")?,
        None => start.clone(),
    };
    let n = x.len() / 3;
    let surface = triangle_surface(faces, n)?;
    let contact = BarrierContact::new(surface, rest, Vec::new(), dhat, BarrierStiffness::Fixed(stiffness))
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    let contacts = contact.friction_contacts(&start);
    let displacement: Vec<f64> = x.iter().zip(&start).map(|(a, b)| a - b).collect();
    let epsilon = eps_v * dt;
    let mut gradient = vec![0.0; x.len()];
    let energy = dissipation(&contacts, &displacement, mu, epsilon, n, &mut gradient);
    let mut hessian = vec![0.0; x.len() * x.len()];
    for c in &contacts {
        let block = contact_block(c, &displacement, mu, epsilon);
        add_block(&mut hessian, x.len(), &c.vertices[..c.count], &block);
    }
    Ok((energy, to_matrix(py, gradient, 3)?, to_matrix(py, hessian, 3 * n)?))
}
