//! Showing a coarse run on the fine mesh (Kharevych 2010 thesis, §4.4.3,
//! eqs. 4.6–4.7): per coarse element, a rotation R and a symmetric strain S with
//!
//!   R (xⁱ − x⁰) ≈ (Xⁱ − X⁰) + (Hⁱ − H⁰) : S,   i = 1 … d,
//!
//! in the least-squares sense (Eq. 4.6: d² equations, d(d+1)/2 + rotation
//! unknowns, a square system), started by alternating a linear least-squares
//! step for S with a Procrustes step for R and finished by Gauss–Newton on
//! both (alternation alone converges linearly, slowly where the rotation and
//! the fields' own rotational part trade off); each fine vertex the element holds at rest is then
//! placed by Eq. 4.7, x = x⁰ + Rᵀ(X − X⁰ + (Hˣ − H⁰) : S). H holds the harmonic
//! displacements at a point (the fine ones at fine vertices, the sampled ones
//! at coarse vertices), so the fine mesh moves with the harmonic shapes the
//! coarse element's motion selects: at rest it is at rest, under a rigid
//! motion it moves rigidly, and a coarse motion along the sampled harmonic
//! fields shows the fine harmonic fields themselves. Elements are not blended
//! across coarse faces, so large deformations show seams (as the thesis says, §4.4.3).

use super::grid::ElementGrid;
use super::simplex::Simplex;
use super::{locate, Coarsening};
use crate::error::{HookeError, Result};
use crate::mesh::Mesh;
use crate::model::{flatten, vertex_point};
use nalgebra::{DMatrix, DVector, Vector3};
use rayon::prelude::*;

/// Alternating least-squares sweeps that start the reconstruction.
const SWEEPS: usize = 5;
/// Gauss–Newton iterations that finish it (the system is square: d² equations,
/// rotation plus d(d+1)/2 unknowns; it converges quadratically where ALS crawls).
const NEWTON_STEPS: usize = 30;
/// How far (largest entry of the change of R) Gauss–Newton may turn away from
/// the alternation's rotation before its solution is taken for another branch.
const MAX_NEWTON_TURN: f64 = 0.1;

/// What the reconstruction needs, written by `hooke coarsen` as display.json.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DisplayMap {
    /// Spatial dimension d, 2 (triangles) or 3 (tetrahedra).
    pub dimension: usize,
    /// Harmonic fields (probes) per point.
    pub probes: usize,
    /// The fine mesh's rest positions, d numbers per vertex (m).
    pub fine_positions: Vec<f64>,
    /// The fine elements, each as its vertex indices.
    pub fine_elements: Vec<Vec<usize>>,
    /// The fine elements' integer labels (material regions), one per element.
    pub fine_labels: Vec<i32>,
    /// The coarse mesh's rest positions, d numbers per vertex (m).
    pub coarse_positions: Vec<f64>,
    /// The coarse elements, each as its vertex indices.
    pub coarse_elements: Vec<Vec<usize>>,
    /// For each fine vertex, the coarse element holding it at rest.
    pub holders: Vec<usize>,
    /// H at each fine vertex: probes × d numbers, probe by probe.
    pub fine_harmonic: Vec<f64>,
    /// H at each coarse vertex, the same layout.
    pub coarse_harmonic: Vec<f64>,
}

/// Per vertex, the probes' values one after the other (probe-major within a vertex).
fn per_vertex(fields: &[Vec<f64>], d: usize) -> Vec<f64> {
    let vertices = fields.first().map_or(0, |f| f.len() / d);
    (0..vertices)
        .flat_map(|v| fields.iter().flat_map(move |f| (0..d).map(move |a| f[v * d + a])))
        .collect()
}

impl DisplayMap {
    /// The map from a fine mesh, the coarse mesh and their coarsening: locates each
    /// fine vertex in a coarse element at rest. Fails if a coarse element is flat.
    pub fn new(fine: &Mesh, coarse: &Mesh, coarsening: &Coarsening) -> Result<DisplayMap> {
        let d = fine.dimension();
        let coarse_simplices: Vec<Simplex> = (0..coarse.element_count())
            .map(|q| {
                Simplex::of(coarse, q).ok_or_else(|| HookeError::Mesh {
                    reason: format!("coarse element {q} is flat"),
                })
            })
            .collect::<Result<_>>()?;
        let grid = ElementGrid::new(&coarse_simplices.iter().map(|s| s.corners.clone()).collect::<Vec<_>>());
        let holders = fine
            .vertices()
            .par_iter()
            .map(|p| locate(p, &grid, &coarse_simplices).element)
            .collect();
        Ok(DisplayMap {
            dimension: d,
            probes: coarsening.harmonic.len(),
            fine_positions: flatten(fine.vertices(), d),
            fine_elements: (0..fine.element_count()).map(|e| fine.element(e).to_vec()).collect(),
            fine_labels: fine.labels().to_vec(),
            coarse_positions: flatten(coarse.vertices(), d),
            coarse_elements: (0..coarse.element_count())
                .map(|q| coarse.element(q).to_vec())
                .collect(),
            holders,
            fine_harmonic: per_vertex(&coarsening.harmonic, d),
            coarse_harmonic: per_vertex(&coarsening.coarse_harmonic, d),
        })
    }

    /// The fine mesh at rest.
    pub fn fine_mesh(&self) -> Result<Mesh> {
        let d = self.dimension;
        let vertices: Vec<Vector3<f64>> = (0..self.fine_positions.len() / d)
            .map(|v| vertex_point(&self.fine_positions, v, d))
            .collect();
        Ok(if d == 3 {
            let tets = self.fine_elements.iter().map(|e| [e[0], e[1], e[2], e[3]]).collect();
            Mesh::Tetrahedra(crate::mesh::TetMesh::new(vertices, tets, self.fine_labels.clone())?)
        } else {
            let triangles = self.fine_elements.iter().map(|e| [e[0], e[1], e[2]]).collect();
            Mesh::Triangles(crate::mesh::TriangleMesh::new(
                vertices,
                triangles,
                self.fine_labels.clone(),
            )?)
        })
    }

    /// The d × probes matrix H at vertex v of a field table.
    fn harmonic_at(&self, table: &[f64], v: usize) -> DMatrix<f64> {
        let (d, probes) = (self.dimension, self.probes);
        DMatrix::from_fn(d, probes, |a, j| table[(v * probes + j) * d + a])
    }

    /// R and the strain coefficients t (H : S = H t) of coarse element q at `current` coarse positions.
    fn fit(&self, q: usize, current: &[f64]) -> (DMatrix<f64>, DVector<f64>) {
        let d = self.dimension;
        let element = &self.coarse_elements[q];
        let at = |positions: &[f64], v: usize| DVector::from_fn(d, |a, _| positions[v * d + a]);
        let (rest0, now0) = (at(&self.coarse_positions, element[0]), at(current, element[0]));
        let h0 = self.harmonic_at(&self.coarse_harmonic, element[0]);
        let edges: Vec<(DVector<f64>, DVector<f64>, DMatrix<f64>)> = element[1..]
            .iter()
            .map(|&v| {
                (
                    at(current, v) - &now0,
                    at(&self.coarse_positions, v) - &rest0,
                    self.harmonic_at(&self.coarse_harmonic, v) - &h0,
                )
            })
            .collect();
        let stacked = DMatrix::from_fn(d * edges.len(), self.probes, |r, j| edges[r / d].2[(r % d, j)]);
        let procrustes = |t: &DVector<f64>| -> DMatrix<f64> {
            let mut m = DMatrix::zeros(d, d);
            for (a, c, h) in &edges {
                m += (c + h * t) * a.transpose();
            }
            let svd = m.svd(true, true);
            let (u, v_t) = (svd.u.expect("asked for"), svd.v_t.expect("asked for"));
            let mut correction = DMatrix::identity(d, d);
            if (&u * &v_t).determinant() < 0.0 {
                correction[(d - 1, d - 1)] = -1.0;
            }
            u * correction * v_t
        };
        let mut t = DVector::zeros(self.probes);
        let mut rotation = procrustes(&t);
        let solver = stacked.clone().svd(true, true);
        // Singular values below this are taken as zero (the fields are tiny: ~ 1/stiffness).
        let cutoff = 1e-12 * solver.singular_values.max();
        for _ in 0..SWEEPS {
            let residual = DVector::from_fn(d * edges.len(), |r, _| {
                let (a, c, _) = &edges[r / d];
                (&rotation * a - c)[r % d]
            });
            t = solver
                .solve(&residual, cutoff)
                .unwrap_or_else(|_| DVector::zeros(self.probes));
            rotation = procrustes(&t);
        }
        // Gauss–Newton on r(ω, t) = R exp(ω) a − c − D t, ∂r/∂ωₖ = R (eₖ × a), ∂r/∂t = −D.
        // The equations can have several exact solutions with different
        // rotations (the fields turn too); only one near the alternation's
        // rotation is taken, else the alternation's result stands.
        let (started_rotation, started_t) = (rotation.clone(), t.clone());
        let turns = if d == 2 { 1 } else { 3 };
        let cross = |k: usize, a: &DVector<f64>| -> DVector<f64> {
            if d == 2 {
                DVector::from_vec(vec![-a[1], a[0]])
            } else {
                let axis = Vector3::ith(k, 1.0);
                let v = axis.cross(&Vector3::new(a[0], a[1], a[2]));
                DVector::from_vec(vec![v.x, v.y, v.z])
            }
        };
        for _ in 0..NEWTON_STEPS {
            let residual = DVector::from_fn(d * edges.len(), |r, _| {
                let (a, c, h) = &edges[r / d];
                (&rotation * a - c - h * &t)[r % d]
            });
            let mut jacobian = DMatrix::zeros(d * edges.len(), turns + self.probes);
            for (i, (a, _, h)) in edges.iter().enumerate() {
                for k in 0..turns {
                    let column = &rotation * cross(k, a);
                    for row in 0..d {
                        jacobian[(i * d + row, k)] = column[row];
                    }
                }
                for j in 0..self.probes {
                    for row in 0..d {
                        jacobian[(i * d + row, turns + j)] = -h[(row, j)];
                    }
                }
            }
            let svd = jacobian.svd(true, true);
            let cutoff = 1e-12 * svd.singular_values.max();
            let Ok(step) = svd.solve(&(-&residual), cutoff) else {
                break;
            };
            let omega: Vec<f64> = (0..turns).map(|k| step[k]).collect();
            let turn = if d == 2 {
                let (c, s) = (omega[0].cos(), omega[0].sin());
                DMatrix::from_row_slice(2, 2, &[c, -s, s, c])
            } else {
                let r = nalgebra::Rotation3::from_scaled_axis(Vector3::new(omega[0], omega[1], omega[2]));
                DMatrix::from_fn(3, 3, |i, j| r[(i, j)])
            };
            rotation = &rotation * turn;
            t += step.rows(turns, self.probes);
            if step.amax() < 1e-15 * (1.0 + t.amax()) {
                break;
            }
        }
        let drift = (&rotation - &started_rotation).amax();
        let within = drift.is_finite() && drift < MAX_NEWTON_TURN;
        if !within || !t.iter().all(|v| v.is_finite()) {
            return (started_rotation, started_t);
        }
        (rotation, t)
    }

    /// The fine vertices' positions for coarse vertices at `current` (d per vertex).
    pub fn reconstruct(&self, current: &[f64]) -> Result<Vec<f64>> {
        let d = self.dimension;
        if current.len() != self.coarse_positions.len() {
            return Err(HookeError::Mesh {
                reason: format!(
                    "{} coarse positions for a coarse mesh of {} vertices",
                    current.len() / d,
                    self.coarse_positions.len() / d
                ),
            });
        }
        let fits: Vec<(DMatrix<f64>, DVector<f64>)> = (0..self.coarse_elements.len())
            .into_par_iter()
            .map(|q| self.fit(q, current))
            .collect();
        let vertices = self.fine_positions.len() / d;
        Ok((0..vertices)
            .into_par_iter()
            .flat_map_iter(|v| {
                let q = self.holders[v];
                let (rotation, t) = &fits[q];
                let first = self.coarse_elements[q][0];
                let rest0 = DVector::from_fn(d, |a, _| self.coarse_positions[first * d + a]);
                let now0 = DVector::from_fn(d, |a, _| current[first * d + a]);
                let h0 = self.harmonic_at(&self.coarse_harmonic, first);
                let here = DVector::from_fn(d, |a, _| self.fine_positions[v * d + a]);
                let h = self.harmonic_at(&self.fine_harmonic, v);
                let placed = now0 + rotation.transpose() * (here - rest0 + (h - h0) * t);
                placed.iter().copied().collect::<Vec<_>>()
            })
            .collect())
    }
}

/// For each vertex of a run's mesh, the coarse vertex of the map at the same rest position.
fn match_vertices(map: &DisplayMap, mesh: &Mesh) -> std::result::Result<Vec<usize>, String> {
    let d = map.dimension;
    let count = map.coarse_positions.len() / d;
    if mesh.vertex_count() != count {
        return Err(format!(
            "the run's mesh has {} vertices, the coarse mesh of this coarsening {count}: it is not a run of coarse.toml",
            mesh.vertex_count()
        ));
    }
    let size = map
        .coarse_positions
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(1e-300);
    let key = |p: &[f64]| -> Vec<i64> { p.iter().map(|v| (v / size * 1e9).round() as i64).collect() };
    let ours: std::collections::HashMap<Vec<i64>, usize> = (0..count)
        .map(|v| (key(&map.coarse_positions[v * d..v * d + d]), v))
        .collect();
    mesh.vertices()
        .iter()
        .map(|p| {
            let point: Vec<f64> = (0..d).map(|a| p[a]).collect();
            ours.get(&key(&point))
                .copied()
                .ok_or_else(|| format!("the run's vertex at {point:?} is no vertex of this coarsening's coarse mesh"))
        })
        .collect()
}

/// Reads the display map `hooke coarsen` wrote.
pub fn read_display_map(path: &std::path::Path) -> Result<DisplayMap> {
    let text = std::fs::read_to_string(path).map_err(|e| HookeError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| HookeError::parse(path, Some(e.line()), e.to_string()))
}

/// Writes every frame of a coarse run (`run`, a folder with frame.pvd) on
/// the fine mesh into `output` as the series fine.pvd; returns how many.
pub fn show_run_on_fine_mesh(run: &std::path::Path, map: &DisplayMap, output: &std::path::Path) -> Result<usize> {
    let d = map.dimension;
    let mesh = map.fine_mesh()?;
    let frames = crate::output::run_frames(run)?;
    if frames.is_empty() {
        return Err(HookeError::parse(
            run.join("frame.pvd"),
            None,
            "the run wrote no frames",
        ));
    }
    crate::output::run_files::create_output_directory(output)?;
    let mut writer = crate::output::VtkSeriesWriter::create(output, "fine")?;
    let zeros = vec![Vector3::zeros(); mesh.vertex_count()];
    let densities = vec![0.0; mesh.element_count()];
    // Mesh readers may number vertices their own way: match them by rest position.
    let order = match_vertices(map, &crate::output::read_frame(&frames[0].1)?.mesh)
        .map_err(|reason| HookeError::parse(&frames[0].1, None, reason))?;
    for (time, path) in &frames {
        let frame = crate::output::read_frame(path)?;
        if frame.positions.len() != order.len() {
            return Err(HookeError::parse(path, None, "the frames of the run differ in size"));
        }
        let mut current = vec![0.0; map.coarse_positions.len()];
        for (read, &ours) in order.iter().enumerate() {
            for a in 0..d {
                current[ours * d + a] = frame.positions[read][a];
            }
        }
        let fine = map
            .reconstruct(&current)
            .map_err(|e| HookeError::parse(path, None, e.to_string()))?;
        let points: Vec<Vector3<f64>> = (0..fine.len() / d).map(|v| vertex_point(&fine, v, d)).collect();
        writer.write_frame(&crate::output::Frame {
            time: *time,
            mesh: &mesh,
            positions: &points,
            velocities: &zeros,
            strain_energy_density: &densities,
            edges: &[],
            materials: &[],
            continuous_displacement: &[],
            contact_force: &[],
        })?;
    }
    writer.finish()?;
    Ok(frames.len())
}
