//! Membrane triangles: cloth as elastic triangles in 3D (seed 004 §2.9,
//! Fig. 6.1, strain-limited cloth under projective dynamics).
//!
//! Each triangle has a rest shape in its own plane, D_m (2×2), and a 3×2
//! deformation gradient F = [x₁ − x₀, x₂ − x₀] D_m⁻¹ whose two singular values
//! σ₁, σ₂ are the in-plane stretches. The energy is area × thickness ×
//! ψ(σ₁, σ₂, 1): a stretch energy of the three-stretch form with the
//! thickness direction left at rest (for strain limiting and ARAP the third
//! stretch then costs nothing, so this is exactly their membrane form).
//!
//! With F = U Σ Vᵀ (U 3×2, V 2×2) and n = u₁ × u₂, P = U diag(ψ₁, ψ₂) Vᵀ, and
//! ∂P/∂F has six eigenmodes in closed form: the 2×2 scaling block ∂²ψ/∂σ²
//! on uᵢvᵢᵀ; (ψ₁ + ψ₂)/(σ₁ + σ₂) on the in-plane rotation u₁v₂ᵀ − u₂v₁ᵀ;
//! (ψ₁ − ψ₂)/(σ₁ − σ₂) on the in-plane shear u₁v₂ᵀ + u₂v₁ᵀ; and ψᵢ/σᵢ on the
//! out-of-plane modes n vᵢᵀ (a fold that lengthens the stretches only at
//! second order). Clamping the six eigenvalues at zero projects it to PSD.

use super::gather::ElementGather;
use super::kind::packed_index;
use crate::error::{HookeError, Result};
use crate::linalg::LowerPattern;
use crate::material::laplacian_weight::StretchSamples;
use crate::material::Lame;
use crate::material::StretchEnergy;
use crate::model::tearing::{Tearable, Torn, TornMask};
use crate::model::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use nalgebra::{Matrix2, SMatrix, SVector, Vector2, Vector3};
use rayon::prelude::*;

const NODES: usize = 3;
const LOCAL: usize = 9;
const PACKED: usize = LOCAL * (LOCAL + 1) / 2;
/// Below this relative gap two stretches count as equal (the shear
/// eigenvalue then takes its limit ∂²ψ/∂σ₁² − ∂²ψ/∂σ₁∂σ₂).
const EQUAL_STRETCH_GAP: f64 = 1e-8;

type Matrix6 = SMatrix<f64, 6, 6>;
type Vector6 = SVector<f64, 6>;

/// Membrane triangles of one stretch energy.
pub struct Membrane<S: StretchEnergy + Send + Sync> {
    triangles: Vec<[usize; 3]>,
    /// ∂F/∂xₖ = Bₖ (a row per node: the shape-function gradients in the rest plane).
    shape_gradients: Vec<[Vector2<f64>; 3]>,
    /// Area × thickness, m³.
    volumes: Vec<f64>,
    energy: S,
    /// The constant Laplacian weight (Pa) for quasi-Newton solvers.
    laplacian_weight: f64,
    gather: Option<ElementGather>,
    torn: TornMask,
}

/// ψ(σ₁, σ₂, 1) and its first two derivatives in (σ₁, σ₂).
fn stretch_terms<S: StretchEnergy>(energy: &S, sigma: &Vector2<f64>) -> (f64, Vector2<f64>, Matrix2<f64>) {
    const NO_LAME: Lame = Lame { mu: 0.0, lambda: 0.0 };
    let s = Vector3::new(sigma.x, sigma.y, 1.0);
    let g = energy.gradient(&s, &NO_LAME);
    let h = energy.hessian(&s, &NO_LAME);
    (
        energy.energy(&s, &NO_LAME),
        Vector2::new(g.x, g.y),
        h.fixed_view::<2, 2>(0, 0).into_owned(),
    )
}

/// The thin SVD of a 3×2 F: U (orthonormal columns), σ (descending, ≥ 0), V,
/// and the unit normal n = u₁ × u₂.
fn thin_svd(f: &SMatrix<f64, 3, 2>) -> (SMatrix<f64, 3, 2>, Vector2<f64>, Matrix2<f64>, Vector3<f64>) {
    let gram = f.transpose() * f;
    let eigen = gram.symmetric_eigen();
    let order = if eigen.eigenvalues.x >= eigen.eigenvalues.y {
        [0, 1]
    } else {
        [1, 0]
    };
    let mut v = Matrix2::from_columns(&[eigen.eigenvectors.column(order[0]), eigen.eigenvectors.column(order[1])]);
    let sigma = Vector2::new(
        eigen.eigenvalues[order[0]].max(0.0).sqrt(),
        eigen.eigenvalues[order[1]].max(0.0).sqrt(),
    );
    if v.determinant() < 0.0 {
        v.column_mut(1).neg_mut();
    }
    let u0 = if sigma.x > 0.0 {
        (f * v.column(0)) / sigma.x
    } else {
        Vector3::x()
    };
    let projected = f * v.column(1) - u0 * u0.dot(&(f * v.column(1)));
    let u1 = if projected.norm() > 1e-14 * sigma.x.max(1e-300) {
        projected.normalize()
    } else {
        crate::linalg::orthogonal_unit(&u0)
    };
    let n = u0.cross(&u1);
    (SMatrix::<f64, 3, 2>::from_columns(&[u0, u1]), sigma, v, n)
}

/// vec (column-major) of a 3×2 matrix a bᵀ.
fn outer(a: &Vector3<f64>, b: Vector2<f64>) -> Vector6 {
    Vector6::from_fn(|k, _| a[k % 3] * b[k / 3])
}

impl<S: StretchEnergy + Send + Sync> Membrane<S> {
    /// Triangles over `rest` (3 coordinates per vertex), each of thickness
    /// `thickness`; `laplacian_weight` is the constant stiffness k of the
    /// quasi-Newton matrix (2μ for strain limiting).
    pub fn new(
        triangles: Vec<[usize; 3]>,
        rest: &[f64],
        thickness: f64,
        energy: S,
        laplacian_weight: f64,
    ) -> Result<Membrane<S>> {
        let point = |v: usize| Vector3::new(rest[3 * v], rest[3 * v + 1], rest[3 * v + 2]);
        let mut shape_gradients = Vec::with_capacity(triangles.len());
        let mut volumes = Vec::with_capacity(triangles.len());
        for (t, &[a, b, c]) in triangles.iter().enumerate() {
            if a.max(b).max(c) >= rest.len() / 3 {
                return Err(HookeError::Mesh {
                    reason: format!("membrane triangle {t} names a vertex that does not exist"),
                });
            }
            let (e1, e2) = (point(b) - point(a), point(c) - point(a));
            let normal = e1.cross(&e2);
            let area = 0.5 * normal.norm();
            if !(area > 0.0 && area.is_finite()) {
                return Err(HookeError::Mesh {
                    reason: format!("membrane triangle {t} is degenerate at rest"),
                });
            }
            let t1 = e1.normalize();
            let t2 = normal.normalize().cross(&t1);
            let rest_shape = Matrix2::new(e1.dot(&t1), e2.dot(&t1), e1.dot(&t2), e2.dot(&t2));
            let inverse = rest_shape.try_inverse().ok_or_else(|| HookeError::Mesh {
                reason: format!("membrane triangle {t} is degenerate at rest"),
            })?;
            let (g1, g2) = (inverse.row(0).transpose(), inverse.row(1).transpose());
            shape_gradients.push([-(g1 + g2), g1, g2]);
            volumes.push(area * thickness);
        }
        Ok(Membrane {
            torn: TornMask::new(triangles.len()),
            triangles,
            shape_gradients,
            volumes,
            energy,
            laplacian_weight,
            gather: None,
        })
    }

    fn deformation_gradient(&self, t: usize, x: &[f64]) -> SMatrix<f64, 3, 2> {
        let mut f = SMatrix::<f64, 3, 2>::zeros();
        for (k, &v) in self.triangles[t].iter().enumerate() {
            let position = Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]);
            f += position * self.shape_gradients[t][k].transpose();
        }
        f
    }

    /// Energy, element gradient (9) and, when asked, the packed element Hessian.
    fn element(&self, t: usize, x: &[f64], hessian: Option<bool>) -> (f64, [f64; LOCAL], Option<[f64; PACKED]>) {
        let volume = self.volumes[t];
        let f = self.deformation_gradient(t, x);
        let (u, sigma, v, n) = thin_svd(&f);
        let (psi, g, h) = stretch_terms(&self.energy, &sigma);
        let p = u * Matrix2::from_diagonal(&g) * v.transpose();
        let b = &self.shape_gradients[t];
        let mut gradient = [0.0; LOCAL];
        for k in 0..NODES {
            let force = p * b[k] * volume;
            gradient[3 * k..3 * k + 3].copy_from_slice(force.as_slice());
        }
        let packed = hessian.map(|project| {
            let c = self.stress_derivative(&u, &sigma, &v, &n, &g, &h, project);
            let mut out = [0.0; PACKED];
            for p_local in 0..LOCAL {
                let (k, a) = (p_local / 3, p_local % 3);
                for q_local in 0..=p_local {
                    let (l, bb) = (q_local / 3, q_local % 3);
                    let mut sum = 0.0;
                    for j in 0..2 {
                        for m in 0..2 {
                            sum += b[k][j] * b[l][m] * c[(3 * j + a, 3 * m + bb)];
                        }
                    }
                    out[packed_index(p_local, q_local)] = volume * sum;
                }
            }
            out
        });
        (volume * psi, gradient, packed)
    }

    /// ∂P/∂F (6×6, column-major vec) from its six eigenmodes, optionally clamped.
    #[allow(clippy::too_many_arguments)]
    fn stress_derivative(
        &self,
        u: &SMatrix<f64, 3, 2>,
        sigma: &Vector2<f64>,
        v: &Matrix2<f64>,
        n: &Vector3<f64>,
        g: &Vector2<f64>,
        h: &Matrix2<f64>,
        project: bool,
    ) -> Matrix6 {
        let clamp = |value: f64| if project { value.max(0.0) } else { value };
        let (u1, u2) = (u.column(0).into_owned(), u.column(1).into_owned());
        let (v1, v2) = (v.column(0).into_owned(), v.column(1).into_owned());
        let mut c = Matrix6::zeros();
        // Scaling: the 2×2 block ∂²ψ/∂σ² on u₁v₁ᵀ, u₂v₂ᵀ.
        let scaling = [outer(&u1, v1), outer(&u2, v2)];
        let block = h.symmetric_eigen();
        for i in 0..2 {
            let w = block.eigenvectors.column(i);
            let mode = scaling[0] * w[0] + scaling[1] * w[1];
            c += mode * mode.transpose() * clamp(block.eigenvalues[i]);
        }
        let half = std::f64::consts::FRAC_1_SQRT_2;
        let rotation = (outer(&u1, v2) - outer(&u2, v1)) * half;
        let shear = (outer(&u1, v2) + outer(&u2, v1)) * half;
        let sum = sigma.x + sigma.y;
        let rotation_value = if sum > 0.0 {
            (g.x + g.y) / sum
        } else {
            h[(0, 0)] + h[(0, 1)]
        };
        let gap = sigma.x - sigma.y;
        let shear_value = if gap > EQUAL_STRETCH_GAP * sigma.x.max(1.0) {
            (g.x - g.y) / gap
        } else {
            h[(0, 0)] - h[(0, 1)]
        };
        c += rotation * rotation.transpose() * clamp(rotation_value);
        c += shear * shear.transpose() * clamp(shear_value);
        for (i, vi) in [v1, v2].into_iter().enumerate() {
            let fold = outer(n, vi);
            let value = if sigma[i] > 1e-12 { g[i] / sigma[i] } else { h[(i, i)] };
            c += fold * fold.transpose() * clamp(value);
        }
        c
    }

    fn gather(&self) -> &ElementGather {
        self.gather
            .as_ref()
            .expect("a model binds its terms to its pattern before evaluating them")
    }

    /// Σ energy, and the gradient and Hessian gathered when asked.
    fn evaluate(
        &self,
        x: &[f64],
        gradient: Option<(&mut [f64], bool)>,
        hessian: Option<(&mut [f64], bool, bool)>,
    ) -> f64 {
        let project = hessian.as_ref().map(|(_, _, project)| *project);
        let results: Vec<(f64, [f64; LOCAL], Option<[f64; PACKED]>)> = (0..self.triangles.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|t| match self.torn.is_torn(t) {
                true => (0.0, [0.0; LOCAL], project.map(|_| [0.0; PACKED])),
                false => self.element(t, x, project),
            })
            .collect();
        if let Some((out, overwrite)) = gradient {
            let flat: Vec<f64> = results.iter().flat_map(|r| r.1).collect();
            self.gather().vectors(&flat, out, overwrite);
        }
        if let Some((values, overwrite, _)) = hessian {
            let flat: Vec<f64> = results.iter().flat_map(|r| r.2.unwrap_or([0.0; PACKED])).collect();
            self.gather().matrices(&flat, values, overwrite);
        }
        results.iter().map(|r| r.0).sum()
    }

    fn connectivity(&self) -> Vec<usize> {
        self.triangles.iter().flatten().copied().collect()
    }
}

impl<S: StretchEnergy + Send + Sync> EnergyTerm for Membrane<S> {
    fn name(&self) -> String {
        format!("{} membrane triangles", self.triangles.len())
    }

    fn kind(&self) -> TermKind {
        TermKind::Elastic
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            // Three coordinates per vertex.
            planar: false,
            ..TermCapabilities::SMOOTH
        }
    }

    fn couplings(&self, coupled: &mut dyn FnMut(&[usize])) {
        for t in &self.triangles {
            coupled(t);
        }
    }

    fn bind(&mut self, pattern: &LowerPattern, dimension: usize) {
        self.gather = Some(ElementGather::new(&self.connectivity(), NODES, dimension, pattern));
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        self.evaluate(x, None, None)
    }

    fn gradient(&self, x: &[f64], _time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        Ok(self.evaluate(x, Some((gradient, overwrite)), None))
    }

    fn hessian(
        &self,
        x: &[f64],
        _time: f64,
        project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> Result<f64> {
        Ok(self.evaluate(
            x,
            Some((gradient, overwrite)),
            Some((&mut *hessian.values, overwrite, project)),
        ))
    }

    /// Strain limiting and ARAP are projective: k/2 ‖F − p(F)‖² per triangle.
    fn projective(&self) -> bool {
        true
    }

    /// k V (∇Nₐ·∇N_b) on each coordinate, torn triangles included (see model::tearing).
    fn add_laplacian(&self, _time: f64, _stretches: &StretchSamples, values: &mut [f64]) {
        let mut packed = vec![0.0; self.triangles.len() * PACKED];
        for (t, out) in packed.chunks_mut(PACKED).enumerate() {
            let b = &self.shape_gradients[t];
            let weight = self.laplacian_weight * self.volumes[t];
            for k in 0..NODES {
                for l in 0..=k {
                    let entry = weight * b[k].dot(&b[l]);
                    for a in 0..3 {
                        out[packed_index(3 * k + a, 3 * l + a)] = entry;
                    }
                }
            }
        }
        self.gather().matrices(&packed, values, false);
    }

    fn drawn_edges(&self) -> Vec<[usize; 2]> {
        let mut edges: Vec<[usize; 2]> = (0..self.triangles.len())
            .filter(|&t| !self.torn.is_torn(t))
            .flat_map(|t| {
                let [a, b, c] = self.triangles[t];
                [[a.min(b), a.max(b)], [b.min(c), b.max(c)], [a.min(c), a.max(c)]]
            })
            .collect();
        edges.sort_unstable();
        edges.dedup();
        edges
    }

    fn as_tearable(&self) -> Option<&dyn Tearable> {
        Some(self)
    }
}

impl<S: StretchEnergy + Send + Sync> Tearable for Membrane<S> {
    fn tear_overstretched(&self, x: &[f64], limit: f64) -> Torn {
        let mut torn = Torn::default();
        for t in 0..self.triangles.len() {
            if self.torn.is_torn(t) {
                continue;
            }
            let f = self.deformation_gradient(t, x);
            let (_, sigma, _, _) = thin_svd(&f);
            if sigma.x > limit && self.torn.tear(t) {
                torn += Torn {
                    elements: 1,
                    energy: self.element(t, x, None).0,
                };
            }
        }
        torn
    }

    fn torn_mask(&self) -> &TornMask {
        &self.torn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::strain_limit::StrainLimitEnergy;

    /// The thin SVD reproduces F with orthonormal U and V.
    #[test]
    fn thin_svd_reproduces_f() {
        let f = SMatrix::<f64, 3, 2>::new(1.1, 0.2, -0.3, 0.9, 0.4, 0.1);
        let (u, sigma, v, n) = thin_svd(&f);
        assert!((u * Matrix2::from_diagonal(&sigma) * v.transpose() - f).amax() < 1e-12);
        assert!((u.transpose() * u - Matrix2::identity()).amax() < 1e-12);
        assert!((n.norm() - 1.0).abs() < 1e-12 && (u.transpose() * n).amax() < 1e-12);
        assert!(sigma.x >= sigma.y);
    }

    /// At rest a strain-limited membrane stores nothing, and a flat triangle
    /// stretched by 1.3 along x stores μ A h (1.3 − 1.1)².
    #[test]
    fn energy_at_rest_and_under_uniaxial_stretch() {
        let mu = 2.0;
        let rest = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        let energy = StrainLimitEnergy { mu, min: 0.9, max: 1.1 };
        let membrane = Membrane::new(vec![[0, 1, 2]], &rest, 0.01, energy, 2.0 * mu).unwrap();
        assert_eq!(membrane.element(0, &rest, None).0, 0.0);
        let stretched = [0.0, 0.0, 0.0, 1.3, 0.0, 0.0, 0.0, 1.0, 0.0];
        let expected = mu * 0.5 * 0.01 * 0.2f64.powi(2);
        assert!((membrane.element(0, &stretched, None).0 - expected).abs() < 1e-14);
    }
}
