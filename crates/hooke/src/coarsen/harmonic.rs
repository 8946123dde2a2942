//! The global harmonic displacements of numerical coarsening (Kharevych 2010
//! thesis, §4.3.5, eq. 4.3): for each unit
//! symmetric strain E_αβ = ½(e_α⊗e_β + e_β⊗e_α) (six in 3D, three in 2D),
//! the fine mesh's linear-elastic displacement h_αβ under the boundary
//! traction E_αβ n, with no other support (a pure Neumann problem):
//!
//!   div(C : ε(h_αβ)) = 0 in Ω,   (C : ε(h_αβ)) n = E_αβ n on ∂Ω.
//!
//! The load on a boundary facet is constant, so its consistent nodal share is
//! the facet's measure over its vertex count. With the fine normals the load
//! is self-equilibrated exactly (E is constant and symmetric); with another
//! normal per facet (the coarse-normal tweak of §4.4.2) it may not be, and its
//! rigid-body part (its projection on translations and rotations) is removed
//! so the problem keeps a solution. All probes share one factorisation of the
//! stiffness with three vertices held (3-2-1: six DOFs in 3D, three in 2D),
//! which only fixes the rigid motion; the rigid part of each solution is then
//! projected out (zero mean translation and rotation).
//!
//! The mixed variant (Kharevych's thesis, §4.3.9, names it for vertices that stay held
//! during the simulation; the thesis gives no details, so these are Hooke's):
//! the DOFs that the scene's pins hold for the whole run are held at the
//! affine field E_αβ x, and the rest of the boundary carries the traction
//! that field would make there, (C_e : E_αβ) n with C_e the tensor of the
//! element under the facet. A homogeneous body then gives exactly the affine
//! field (so it still coarsens to its own material), and a held edge stays
//! straight in every probe, so the coarse element and the fine
//! reconstruction keep it so. The effective tensors do not depend on how the
//! probes are scaled, so the change from E n to (C : E) n changes nothing
//! else. The pins must hold every rigid motion.

use super::simplex::voigt_pairs;
use crate::error::{HookeError, Result};
use crate::linalg::SparseCholesky;
use crate::model::{moves, Model};
use nalgebra::{DMatrix, Vector3};

/// Orthonormal columns spanning the rigid motions of `rest` (`dimension` per vertex).
pub fn rigid_basis(rest: &[f64], dimension: usize) -> DMatrix<f64> {
    let d = dimension;
    let vertices = rest.len() / d;
    let centroid: Vec<f64> = (0..d)
        .map(|a| (0..vertices).map(|v| rest[v * d + a]).sum::<f64>() / vertices.max(1) as f64)
        .collect();
    let planes: &[(usize, usize)] = if d == 2 { &[(0, 1)] } else { &[(1, 2), (2, 0), (0, 1)] };
    let mut basis = DMatrix::zeros(rest.len(), d + planes.len());
    for v in 0..vertices {
        for a in 0..d {
            basis[(v * d + a, a)] = 1.0;
        }
        for (k, &(p, q)) in planes.iter().enumerate() {
            basis[(v * d + p, d + k)] = -(rest[v * d + q] - centroid[q]);
            basis[(v * d + q, d + k)] = rest[v * d + p] - centroid[p];
        }
    }
    basis.qr().q()
}

/// Removes the part of `field` along the orthonormal columns of `basis`.
fn project_out(basis: &DMatrix<f64>, field: &mut [f64]) {
    for column in basis.column_iter() {
        let weight: f64 = column.iter().zip(field.iter()).map(|(b, f)| b * f).sum();
        field.iter_mut().zip(column.iter()).for_each(|(f, b)| *f -= weight * b);
    }
}

/// Three well-spread vertices' DOFs to hold (3-2-1): every rigid motion moves at least one.
fn held_dofs(rest: &[f64], dimension: usize) -> Result<Vec<usize>> {
    let d = dimension;
    let point = |v: usize| Vector3::from_fn(|a, _| if a < d { rest[v * d + a] } else { 0.0 });
    let vertices = rest.len() / d;
    let farthest_from = |from: Vector3<f64>| {
        (0..vertices)
            .max_by(|&a, &b| (point(a) - from).norm().total_cmp(&(point(b) - from).norm()))
            .unwrap_or(0)
    };
    let centroid = (0..vertices).map(point).sum::<Vector3<f64>>() / vertices.max(1) as f64;
    let a = farthest_from(centroid);
    let b = farthest_from(point(a));
    let along = point(b) - point(a);
    // b keeps its DOF most along a→b free; in 3D c holds the one most across the plane.
    let free_at_b = (0..d)
        .max_by(|&i, &j| along[i].abs().total_cmp(&along[j].abs()))
        .unwrap_or(0);
    let mut held: Vec<usize> = (0..d).map(|i| a * d + i).collect();
    held.extend((0..d).filter(|&i| i != free_at_b).map(|i| b * d + i));
    if d == 3 {
        let c = (0..vertices)
            .max_by(|&i, &j| {
                let off = |v: usize| along.cross(&(point(v) - point(a))).norm();
                off(i).total_cmp(&off(j))
            })
            .unwrap_or(0);
        let normal = along.cross(&(point(c) - point(a)));
        let across = (0..3)
            .max_by(|&i, &j| normal[i].abs().total_cmp(&normal[j].abs()))
            .unwrap_or(0);
        held.push(c * d + across);
    }
    // Check that the held DOFs stop every rigid motion (a non-degenerate choice).
    let basis = rigid_basis(rest, d);
    let rows = DMatrix::from_fn(held.len(), basis.ncols(), |r, c| basis[(held[r], c)]);
    let singular = rows.singular_values();
    if singular.min() < 1e-8 * singular.max() {
        return Err(HookeError::Mesh {
            reason: "the fine mesh is too degenerate (flat or collinear) to hold its rigid motions for the harmonic problems".into(),
        });
    }
    Ok(held)
}

/// The mixed variant's data: the DOFs held at E_αβ x, and the Voigt tensor
/// (engineering shears) of the element under each boundary facet.
pub struct HeldBoundary {
    pub dofs: Vec<usize>,
    pub facet_tensors: Vec<DMatrix<f64>>,
}

/// The DOFs that `model`'s pins hold at rest for the whole run (fixed and
/// never released), in increasing order.
pub fn permanently_held_dofs(model: &Model) -> Vec<usize> {
    let d = model.dimension();
    let mut dofs: Vec<usize> = model
        .pins()
        .iter()
        .filter(|pin| !moves(&pin.motion, pin.release_time))
        .flat_map(|pin| {
            pin.vertices
                .iter()
                .flat_map(move |&v| (0..d).filter(move |&a| pin.components[a]).map(move |a| v * d + a))
        })
        .collect();
    dofs.sort_unstable();
    dofs.dedup();
    dofs
}

/// Refuses held DOFs that leave a rigid motion of the body free (the mixed
/// problems would then be singular).
fn check_holds_rigid_motion(rigid: &DMatrix<f64>, held: &[usize]) -> Result<()> {
    if held.is_empty() {
        return Err(HookeError::scene(
            "pins",
            "no pin holds for the whole run (fixed and never released); the mixed harmonic problems (--held-pins) need pins that hold the body in place",
        ));
    }
    let rows = DMatrix::from_fn(held.len(), rigid.ncols(), |i, j| rigid[(held[i], j)]);
    let singular = rows.svd(false, false).singular_values;
    let largest = singular.iter().copied().fold(0.0, f64::max);
    let free = rigid.ncols() - singular.iter().filter(|&&s| s > 1e-9 * largest.max(1e-300)).count();
    match free {
        0 => Ok(()),
        _ => Err(HookeError::scene(
            "pins",
            format!(
                "the pins that hold for the whole run leave {free} rigid motion(s) of the body free; the mixed harmonic problems (--held-pins) need pins that hold it in place"
            ),
        )),
    }
}

/// The harmonic displacements of the fine model's elements, one per Voigt
/// probe (in [`voigt_pairs`] order), each over all DOFs; `normals[f]` is the
/// normal used on boundary facet f of `facets` (vertices, measure). With
/// `held` (the mixed variant), its DOFs are held at E_αβ x.
pub fn harmonic_displacements(
    model: &Model,
    facets: &[(Vec<usize>, f64)],
    normals: &[Vector3<f64>],
    held: Option<&HeldBoundary>,
) -> Result<Vec<Vec<f64>>> {
    let d = model.dimension();
    let n = model.dof_count();
    let rest = model.rest_positions();
    // The elements' own stiffness at rest (linear elasticity with their C).
    let (stiffness, _) = model.element_hessian(&rest, 0.0, false)?;
    let rigid = rigid_basis(&rest, d);
    let facet_tensors = held.map(|h| &h.facet_tensors);
    let mixed = held.is_some();
    let held = match held {
        Some(boundary) => {
            check_holds_rigid_motion(&rigid, &boundary.dofs)?;
            boundary.dofs.clone()
        }
        None => held_dofs(&rest, d)?,
    };
    let mut free_index = vec![None; n];
    let mut free = 0;
    for (i, slot) in free_index.iter_mut().enumerate() {
        if !held.contains(&i) {
            *slot = Some(free);
            free += 1;
        }
    }
    let (pattern, source) = model.pattern().restrict(&free_index);
    let values: Vec<f64> = source.iter().map(|&k| stiffness[k]).collect();
    let mut factor = SparseCholesky::analyse(&pattern)?;
    factor.factorize(&values).map_err(|e| HookeError::LinearSolver {
        reason: format!("the fine stiffness with its rigid motions held does not factorise ({e}): is every element attached to the rest?"),
    })?;
    let pairs = voigt_pairs(d);
    let mut loads = vec![0.0; free * pairs.len()];
    let mut full_loads = Vec::with_capacity(pairs.len());
    // The mixed variant's held values, E_αβ x: (E x)_a = ½(δ_aα x_β + δ_aβ x_α).
    let held_fields: Vec<Vec<f64>> = pairs
        .iter()
        .map(|&(alpha, beta)| {
            let mut field = vec![0.0; n];
            if mixed {
                for &i in &held {
                    let (v, a) = (i / d, i % d);
                    let x = |b: usize| rest[v * d + b];
                    field[i] = 0.5 * (if a == alpha { x(beta) } else { 0.0 } + if a == beta { x(alpha) } else { 0.0 });
                }
            }
            field
        })
        .collect();
    for (j, &(alpha, beta)) in pairs.iter().enumerate() {
        let mut load = vec![0.0; n];
        for (f, ((vertices, measure), normal)) in facets.iter().zip(normals).enumerate() {
            let mut traction = [0.0; 3];
            match facet_tensors {
                // t = (C_e : E_αβ) n: σ's Voigt vector is column j of C_e.
                Some(tensors) => {
                    for (k, &(a, b)) in pairs.iter().enumerate() {
                        let stress = tensors[f][(k, j)];
                        traction[a] += stress * normal[b];
                        if a != b {
                            traction[b] += stress * normal[a];
                        }
                    }
                }
                // t = E_αβ n, E_αβ = ½(e_α⊗e_β + e_β⊗e_α).
                None => {
                    traction[alpha] += 0.5 * normal[beta];
                    traction[beta] += 0.5 * normal[alpha];
                }
            }
            let share = measure / vertices.len() as f64;
            for &v in vertices {
                for a in 0..d {
                    load[v * d + a] += share * traction[a];
                }
            }
        }
        if mixed {
            // The held values' pull on the free DOFs moves to the right-hand side.
            let mut pull = vec![0.0; n];
            model
                .pattern()
                .symmetric_multiply(&stiffness, &held_fields[j], &mut pull);
            load.iter_mut().zip(&pull).for_each(|(l, p)| *l -= p);
        } else {
            project_out(&rigid, &mut load);
        }
        full_loads.push(load);
    }
    for (j, load) in full_loads.iter().enumerate() {
        for (i, slot) in free_index.iter().enumerate() {
            if let Some(f) = slot {
                loads[j * free + f] = load[i];
            }
        }
    }
    factor.solve_columns_in_place(&mut loads, pairs.len())?;
    Ok((0..pairs.len())
        .map(|j| {
            let mut field = held_fields[j].clone();
            for (i, slot) in free_index.iter().enumerate() {
                if let Some(f) = slot {
                    field[i] = loads[j * free + f];
                }
            }
            if !mixed {
                project_out(&rigid, &mut field);
            }
            field
        })
        .collect())
}
