//! Skinning eigenmodes (Trusty et al. 2023, §5.1, after Benchekroun et al. 2023): the
//! m lowest generalised eigenvectors W of the elastic energy Laplacian
//! H_w W = M_w W Γ, used as the weights of a linear-blend-skinning subspace.
//!
//! H_w is the sum of the d per-coordinate diagonal blocks of the elastic
//! stiffness at rest (for linear elasticity Σₜ Vₜ(4μₜ + λₜ)∇φₐ·∇φ_b, a
//! material-weighted Laplacian), taken from whatever elements and springs the
//! model has; M_w is the lumped vertex mass. Stiff regions make high modes
//! expensive there, so the weights vary in soft regions and stay nearly
//! constant in stiff ones: the subspace is material-aware.
//!
//! Pinned vertices get zero weight (a Dirichlet eigenproblem on the other
//! vertices), and positions are written as displacements, x = X̄ + B u, so a
//! pinned vertex stays at its rest position whatever u is. On a free body the
//! first weight is constant, so B spans every affine map and rigid motions
//! are exact.

use crate::error::{HookeError, Result};
use crate::linalg::{smallest_eigenpairs, EigenSettings, LowerPattern};
use crate::model::Model;
use nalgebra::{DMatrix, Matrix3, Vector3};

/// The weights W (one column per mode, one row per vertex, M_w-orthonormal)
/// and their eigenvalues Γ, increasing.
#[derive(Clone, Debug)]
pub struct SkinningEigenmodes {
    /// W, |V| × m: one row per vertex, one column per mode.
    pub weights: DMatrix<f64>,
    /// Γ, the modes' generalised eigenvalues, increasing.
    pub eigenvalues: Vec<f64>,
}

/// The m lowest skinning eigenmodes of a 3D model under its pins at t = 0.
/// Vertices with every component pinned get zero weight; a vertex pinned in
/// some components only cannot be held by a skinning subspace (its columns
/// move all coordinates together) and is refused.
pub fn skinning_eigenmodes(model: &Model, count: usize) -> Result<SkinningEigenmodes> {
    let d = model.dimension();
    if d != 3 {
        return Err(HookeError::scene(
            "subspace",
            "skinning eigenmodes need a 3D model of tetrahedra",
        ));
    }
    let vertices = model.mesh().vertex_count();
    let pinned = pinned_vertices(model)?;
    let free: Vec<usize> = (0..vertices).filter(|&v| !pinned[v]).collect();
    if count == 0 || count > free.len() {
        return Err(HookeError::scene(
            "subspace.modes",
            format!("{count} modes asked of a model with {} free vertices", free.len()),
        ));
    }
    let (pattern, laplacian) = elastic_laplacian(model)?;
    let mut mass = vec![0.0; pattern.nonzeros()];
    for (v, &k) in pattern.diagonal_positions().iter().enumerate() {
        mass[k] = model.mass().lumped()[v];
    }
    let mut new_index = vec![None; vertices];
    for (i, &v) in free.iter().enumerate() {
        new_index[v] = Some(i);
    }
    let (free_pattern, source) = pattern.restrict(&new_index);
    let stiffness: Vec<f64> = source.iter().map(|&s| laplacian[s]).collect();
    let masses: Vec<f64> = source.iter().map(|&s| mass[s]).collect();
    let pairs = smallest_eigenpairs(&free_pattern, &stiffness, &masses, count, &EigenSettings::default())?;
    let mut weights = DMatrix::zeros(vertices, count);
    for (j, vector) in pairs.vectors.iter().enumerate() {
        // A fixed sign (largest entry positive), so the same model gives the same basis.
        let largest = vector
            .iter()
            .copied()
            .fold(0.0f64, |a, b| if b.abs() > a.abs() { b } else { a });
        let sign = if largest < 0.0 { -1.0 } else { 1.0 };
        for (i, &v) in free.iter().enumerate() {
            weights[(v, j)] = sign * vector[i];
        }
    }
    Ok(SkinningEigenmodes {
        weights,
        eigenvalues: pairs.values,
    })
}

/// Which vertices are pinned in every component at t = 0; an error for a
/// vertex pinned in some components only.
fn pinned_vertices(model: &Model) -> Result<Vec<bool>> {
    let d = model.dimension();
    let dofs = model.dof_map(0.0);
    let vertices = model.mesh().vertex_count();
    let mut pinned = vec![false; vertices];
    for (v, flag) in pinned.iter_mut().enumerate() {
        let held = (0..d).filter(|c| dofs.free_index[d * v + c].is_none()).count();
        if held != 0 && held != d {
            return Err(HookeError::scene(
                "pins",
                format!("vertex {v} is pinned in {held} of its {d} components; a skinning subspace can only hold whole vertices"),
            ));
        }
        *flag = held == d;
    }
    Ok(pinned)
}

/// H_w on a vertex pattern: Σ_c K[dv+c, dw+c] of the elastic terms' stiffness
/// at rest (elements and springs; soft pins, gravity and loads left out).
fn elastic_laplacian(model: &Model) -> Result<(LowerPattern, Vec<f64>)> {
    let d = model.dimension();
    let rest = model.rest_positions();
    let dof_pattern = model.pattern();
    let (values, _) = model.element_hessian(&rest, 0.0, true)?;
    let vertices = dof_pattern.size / d;
    let columns: Vec<Vec<usize>> = (0..vertices)
        .map(|w| {
            let column = d * w;
            (dof_pattern.column_starts[column]..dof_pattern.column_starts[column + 1])
                .map(|k| dof_pattern.row_indices[k])
                .filter(|row| row % d == 0)
                .map(|row| row / d)
                .collect()
        })
        .collect();
    let pattern = LowerPattern::from_columns(columns);
    let mut laplacian = vec![0.0; pattern.nonzeros()];
    for column in 0..dof_pattern.size {
        for k in dof_pattern.column_starts[column]..dof_pattern.column_starts[column + 1] {
            let row = dof_pattern.row_indices[k];
            if row % d == column % d {
                let position = pattern
                    .position(row / d, column / d)
                    .expect("every coupled vertex pair has its block in the pattern");
                laplacian[position] += values[k];
            }
        }
    }
    Ok((pattern, laplacian))
}

/// The linear-blend-skinning basis of the weights (Trusty et al. 2023, Eq. 10, in its
/// coordinate-major order B = I₃ ⊗ ((1ᵀ ⊗ X̄ₕ) ⊙ (W ⊗ 1₄ᵀ))): x = X̄ + B u with
/// u = [u₀; u₁; u₂], one block of q = 4m entries per coordinate, and entry
/// 4j + k of block c is Tⱼ[c, k] for a 3×4 affine map Tⱼ per weight, so
/// coordinate c of vertex i moves by Σⱼ Wᵢⱼ (row c of Tⱼ)·[X̄ᵢ; 1] = yᵢ·u_c with
/// yᵢ = Wᵢ ⊗ [X̄ᵢ; 1]. B is never formed: its products cost |V|·12m.
#[derive(Clone, Debug)]
pub struct SkinningBasis {
    /// W, |V| × m: one row per vertex, one column per weight.
    pub weights: DMatrix<f64>,
    /// X̄, the vertices' rest positions, m.
    pub rest: Vec<Vector3<f64>>,
    /// W again, row by row (a vertex's m weights side by side), for the
    /// products that visit every vertex once a step.
    by_vertex: Vec<f64>,
}

impl SkinningBasis {
    /// The basis of the weights of `modes` about the rest positions `rest` (one per vertex).
    pub fn new(modes: &SkinningEigenmodes, rest: &[Vector3<f64>]) -> SkinningBasis {
        let weights = &modes.weights;
        SkinningBasis {
            by_vertex: (0..weights.nrows())
                .flat_map(|i| weights.row(i).iter().copied().collect::<Vec<_>>())
                .collect(),
            weights: weights.clone(),
            rest: rest.to_vec(),
        }
    }

    /// m, the number of weights.
    pub fn handles(&self) -> usize {
        self.weights.ncols()
    }

    /// q = 4m, the reduced coordinates per spatial coordinate.
    pub fn block(&self) -> usize {
        4 * self.handles()
    }

    /// r = 12 m.
    pub fn rank(&self) -> usize {
        3 * self.block()
    }

    /// yᵢ = Wᵢ ⊗ [X̄ᵢ; 1]: entry 4j + k.
    pub fn vertex_row(&self, i: usize) -> Vec<f64> {
        let x = self.rest[i];
        let homogeneous = [x.x, x.y, x.z, 1.0];
        (0..self.block())
            .map(|jk| self.weights[(i, jk / 4)] * homogeneous[jk % 4])
            .collect()
    }

    /// B u over all DOFs (the displacement from rest): for each vertex,
    /// Σⱼ Wᵢⱼ (Tⱼ [X̄ᵢ; 1]), with no allocation per vertex.
    pub fn displacement(&self, u: &[f64]) -> Vec<f64> {
        let q = self.block();
        let m = self.handles();
        let mut out = vec![0.0; 3 * self.rest.len()];
        use rayon::prelude::*;
        out.par_chunks_mut(3).enumerate().for_each(|(i, chunk)| {
            let x = self.rest[i];
            for (j, &w) in self.by_vertex[i * m..(i + 1) * m].iter().enumerate() {
                if w == 0.0 {
                    continue;
                }
                for (c, value) in chunk.iter_mut().enumerate() {
                    let t = &u[c * q + 4 * j..c * q + 4 * j + 4];
                    *value += w * (t[0] * x.x + t[1] * x.y + t[2] * x.z + t[3]);
                }
            }
        });
        out
    }

    /// Bᵀ v for v over all DOFs.
    pub fn reduce(&self, v: &[f64]) -> Vec<f64> {
        let q = self.block();
        let mut out = vec![0.0; 3 * q];
        for (i, chunk) in v.chunks(3).enumerate() {
            if chunk.iter().all(|x| *x == 0.0) {
                continue;
            }
            let y = self.vertex_row(i);
            for (c, value) in chunk.iter().enumerate() {
                for (o, yv) in out[c * q..(c + 1) * q].iter_mut().zip(&y) {
                    *o += yv * value;
                }
            }
        }
        out
    }

    /// B as a dense matrix (tests, small models).
    pub fn dense(&self) -> DMatrix<f64> {
        let q = self.block();
        let n = self.rest.len();
        let mut b = DMatrix::zeros(3 * n, 3 * q);
        for i in 0..n {
            for (jk, value) in self.vertex_row(i).iter().enumerate() {
                for c in 0..3 {
                    b[(3 * i + c, c * q + jk)] = *value;
                }
            }
        }
        b
    }

    /// BᵀNB for a matrix N that acts alike and separately on each coordinate,
    /// given by its scalar entries between vertices (`scalar(visit)` calls
    /// visit(a, b, value) for each entry of the lower triangle, a ≥ b): three
    /// copies of the q×q block Yᵀ N Y on the diagonal.
    pub fn reduce_scalar_matrix(&self, scalar: impl Fn(&mut dyn FnMut(usize, usize, f64))) -> DMatrix<f64> {
        let q = self.block();
        let n = self.rest.len();
        let rows = DMatrix::from_fn(n, q, |i, jk| {
            let x = self.rest[i];
            let homogeneous = [x.x, x.y, x.z, 1.0];
            self.weights[(i, jk / 4)] * homogeneous[jk % 4]
        });
        let mut product = DMatrix::zeros(n, q);
        scalar(&mut |a, b, value| {
            for column in 0..q {
                product[(a, column)] += value * rows[(b, column)];
                if a != b {
                    product[(b, column)] += value * rows[(a, column)];
                }
            }
        });
        let block = rows.tr_mul(&product);
        let mut reduced = DMatrix::zeros(3 * q, 3 * q);
        for c in 0..3 {
            reduced.view_mut((c * q, c * q), (q, q)).copy_from(&block);
        }
        reduced
    }

    /// The three vectors gₑ = Σₐ ∂ₑφₐ yₐ (each of length q) of a tetrahedron,
    /// concatenated: F = I + G(u) with F[c, e] = gₑ·u_c, so ∂vec(F)/∂u has row
    /// c + 3e equal to gₑ on block c and zero elsewhere.
    pub fn element_gradients(&self, tet: &[usize], rest_inverse: &Matrix3<f64>) -> Vec<f64> {
        let gradients = shape_gradients(rest_inverse);
        let q = self.block();
        let mut g = vec![0.0; 3 * q];
        for (a, &vertex) in tet.iter().enumerate() {
            let y = self.vertex_row(vertex);
            for (e, ge) in g.chunks_mut(q).enumerate() {
                let slope = gradients[a][e];
                for (value, yv) in ge.iter_mut().zip(&y) {
                    *value += slope * yv;
                }
            }
        }
        g
    }
}

/// ∇φₐ of a tetrahedron's four shape functions from Dm⁻¹ (Dm = [X₁−X₀, X₂−X₀, X₃−X₀]):
/// ∇φₐ is row a−1 of Dm⁻¹ for a = 1, 2, 3 and ∇φ₀ = −Σ.
pub fn shape_gradients(rest_inverse: &Matrix3<f64>) -> [Vector3<f64>; 4] {
    let g1: Vector3<f64> = rest_inverse.row(0).transpose();
    let g2: Vector3<f64> = rest_inverse.row(1).transpose();
    let g3: Vector3<f64> = rest_inverse.row(2).transpose();
    [-(g1 + g2 + g3), g1, g2, g3]
}

/// Dm⁻¹ and the volume of a tetrahedron at rest; None when it is flat.
pub fn rest_frame(vertices: &[Vector3<f64>], tet: &[usize]) -> Option<(Matrix3<f64>, f64)> {
    let x0 = vertices[tet[0]];
    let dm = Matrix3::from_columns(&[vertices[tet[1]] - x0, vertices[tet[2]] - x0, vertices[tet[3]] - x0]);
    let volume = dm.determinant().abs() / 6.0;
    dm.try_inverse()
        .filter(|_| volume > 0.0)
        .map(|inverse| (inverse, volume))
}

/// Yᵀ M X̄ₐ for a = x, y, z and Yᵀ M 1 (Y the q columns of one coordinate's
/// block of B, M the scalar mass between vertices): with them the momenta of
/// x = X̄ + Bu, v = Bu̇ need no sum over vertices.
pub(super) fn mass_moments(model: &Model, basis: &SkinningBasis) -> [Vec<f64>; 4] {
    let q = basis.block();
    let n = basis.rest.len();
    std::array::from_fn(|a| {
        let mut field = vec![0.0; 3 * n];
        for (i, x) in basis.rest.iter().enumerate() {
            field[3 * i] = if a < 3 { x[a] } else { 1.0 };
        }
        let mut weighted = vec![0.0; 3 * n];
        model.mass_multiply(&field, &mut weighted);
        basis.reduce(&weighted)[..q].to_vec()
    })
}
