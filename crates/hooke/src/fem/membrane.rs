//! Membrane triangles: cloth as elastic triangles in 3D (Liu 2018 thesis, ch. 6,
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
use crate::linalg::kernels::dispatch;
use crate::linalg::LowerPattern;
use crate::material::laplacian_weight::StretchSamples;
use crate::material::Lame;
use crate::material::StretchEnergy;
use crate::model::tearing::{Tearable, Torn, TornMask};
use crate::model::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use nalgebra::{Matrix2, SMatrix, SVector, Vector2, Vector3};
use rayon::prelude::*;
use std::sync::Mutex;

const NODES: usize = 3;
const LOCAL: usize = 9;
const PACKED: usize = LOCAL * (LOCAL + 1) / 2;
/// Below this relative gap two stretches count as equal (the shear
/// eigenvalue then takes its limit ∂²ψ/∂σ₁² − ∂²ψ/∂σ₁∂σ₂).
const EQUAL_STRETCH_GAP: f64 = 1e-8;

type Matrix6 = SMatrix<f64, 6, 6>;
type Vector6 = SVector<f64, 6>;

/// Stretch energies of membranes take no Lamé parameters of their own.
const NO_LAME: Lame = Lame { mu: 0.0, lambda: 0.0 };
/// Below σ₂ = STRETCH_FLOOR σ₁ the stress is formed from U (see
/// [`Membrane::element_gradient`]): F v₂ / σ₂ would lose more than four digits.
const STRETCH_FLOOR: f64 = 1e-4;

/// Per-triangle results, kept between calls to avoid reallocating.
#[derive(Default)]
struct Workspace {
    energies: Vec<f64>,
    gradients: Vec<f64>,
    hessians: Vec<f64>,
}

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
    workspace: Mutex<Workspace>,
}

/// ψ(σ₁, σ₂, 1) and its first two derivatives in (σ₁, σ₂).
fn stretch_terms<S: StretchEnergy>(energy: &S, sigma: &Vector2<f64>) -> (f64, Vector2<f64>, Matrix2<f64>) {
    let s = Vector3::new(sigma.x, sigma.y, 1.0);
    let g = energy.gradient(&s, &NO_LAME);
    let h = energy.hessian(&s, &NO_LAME);
    (
        energy.energy(&s, &NO_LAME),
        Vector2::new(g.x, g.y),
        h.fixed_view::<2, 2>(0, 0).into_owned(),
    )
}

/// The stretches σ₁ ≥ σ₂ ≥ 0 of a 3×2 F and the rotation V = [v₁ v₂] of the
/// rest plane that carries them, from the 2×2 Gram matrix FᵀF in closed form.
fn in_plane_stretches(f: &SMatrix<f64, 3, 2>) -> (Vector2<f64>, Matrix2<f64>) {
    let (mut sigma, mut v) = ([Vector2::zeros()], [Matrix2::zeros()]);
    stretch_lanes(&[*f], &mut sigma, &mut v);
    (sigma[0], v[0])
}

/// Triangles whose stretches are found together, in vector lanes.
const LANES: usize = 16;

dispatch! {
    /// [`in_plane_stretches`] of [`LANES`] triangles at once, each bit for
    /// bit what it gives alone.
    stretches_of_lanes(f: &[SMatrix<f64, 3, 2>; LANES], sigma: &mut [Vector2<f64>; LANES], v: &mut [Matrix2<f64>; LANES]) -> () {
        stretch_lanes(f, sigma, v)
    }
}

/// σ and V of L gradients, lane by lane, with the same operations in every
/// lane and no branch but the selections, so that the lanes run as vectors.
///
/// V turns by θ with tan 2θ = 2 f₁·f₂ / (‖f₁‖² − ‖f₂‖²); cos θ or sin θ,
/// whichever is at least 1/√2, comes from a square root and the other from
/// sin 2θ, so neither loses digits. σ₂ = ‖f₁ × f₂‖ / σ₁ (the area ratio over
/// σ₁) keeps its relative accuracy when the triangle is nearly flattened,
/// where the smaller eigenvalue of FᵀF would cancel.
#[inline(always)]
fn stretch_lanes<const L: usize>(
    f: &[SMatrix<f64, 3, 2>; L],
    sigma: &mut [Vector2<f64>; L],
    v: &mut [Matrix2<f64>; L],
) {
    // Each lane works on F times the power of two 2⁻ᵉ that brings its
    // largest entry into [1, 2): exact, so the squares below stay in range for
    // any finite F, and σ is scaled back by 2ᵉ exactly.
    let mut entries = [[0.0; L]; 6];
    let mut exponent = [0i64; L];
    for (l, matrix) in f.iter().enumerate() {
        let largest = matrix.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        exponent[l] = (((largest.to_bits() >> 52) & 0x7ff) as i64 - 1023).clamp(-1022, 1022);
        let scale = f64::from_bits(((1023 - exponent[l]) as u64) << 52);
        for k in 0..6 {
            entries[k][l] = matrix[k] * scale;
        }
    }
    let [f0, f1, f2, f3, f4, f5] = entries;
    for l in 0..L {
        let a = f0[l] * f0[l] + f1[l] * f1[l] + f2[l] * f2[l];
        let b = f0[l] * f3[l] + f1[l] * f4[l] + f2[l] * f5[l];
        let c = f3[l] * f3[l] + f4[l] * f4[l] + f5[l] * f5[l];
        let half_difference = 0.5 * (a - c);
        let radius = (half_difference * half_difference + b * b).sqrt();
        let (n0, n1, n2) = (
            f1[l] * f5[l] - f2[l] * f4[l],
            f2[l] * f3[l] - f0[l] * f5[l],
            f0[l] * f4[l] - f1[l] * f3[l],
        );
        let area = (n0 * n0 + n1 * n1 + n2 * n2).sqrt();
        let sigma1 = (0.5 * (a + c) + radius).sqrt();
        // At most σ₁, which rounding could pass when the two are equal.
        let sigma2 = if sigma1 > 0.0 { (area / sigma1).min(sigma1) } else { 0.0 };
        let t = 0.5 * half_difference / radius;
        let cos_near_one = (0.5 + t).sqrt();
        let sin_near_one = (0.5 - t).sqrt().copysign(b);
        let (cos, sin) = if radius == 0.0 {
            (1.0, 0.0)
        } else if half_difference >= 0.0 {
            (cos_near_one, b / (2.0 * radius * cos_near_one))
        } else {
            (b / (2.0 * radius * sin_near_one), sin_near_one)
        };
        let unscale = f64::from_bits(((1023 + exponent[l]) as u64) << 52);
        sigma[l] = Vector2::new(sigma1 * unscale, sigma2 * unscale);
        v[l] = Matrix2::new(cos, -sin, sin, cos);
    }
}

/// The thin SVD of a 3×2 F: U (orthonormal columns), σ (descending, ≥ 0), V
/// (a rotation), and the unit normal n = u₁ × u₂.
fn thin_svd(f: &SMatrix<f64, 3, 2>) -> (SMatrix<f64, 3, 2>, Vector2<f64>, Matrix2<f64>, Vector3<f64>) {
    let (sigma, v) = in_plane_stretches(f);
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
            workspace: Mutex::new(Workspace::default()),
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

    /// The energy of triangle t alone.
    fn element_energy(&self, t: usize, x: &[f64]) -> f64 {
        let (sigma, _) = in_plane_stretches(&self.deformation_gradient(t, x));
        self.volumes[t] * self.energy.energy(&Vector3::new(sigma.x, sigma.y, 1.0), &NO_LAME)
    }

    /// The energy of triangle t and its gradient (9), without the eigenmodes
    /// a Hessian needs. P = U diag(∂ψ/∂σ) Vᵀ = F V diag(∂ψ/∂σᵢ / σᵢ) Vᵀ needs
    /// no U while σ₂ is well away from zero; a triangle whose stretches cost
    /// nothing to first order (strain limiting inside its range) has no force.
    fn element_gradient(&self, t: usize, x: &[f64], gradient: &mut [f64]) -> f64 {
        let f = self.deformation_gradient(t, x);
        let (sigma, v) = in_plane_stretches(&f);
        self.gradient_from_stretches(t, &f, &sigma, &v, gradient)
    }

    /// [`Self::element_gradient`] from F's stretches and V, found already.
    fn gradient_from_stretches(
        &self,
        t: usize,
        f: &SMatrix<f64, 3, 2>,
        sigma: &Vector2<f64>,
        v: &Matrix2<f64>,
        gradient: &mut [f64],
    ) -> f64 {
        let stretches = Vector3::new(sigma.x, sigma.y, 1.0);
        let volume = self.volumes[t];
        let energy = volume * self.energy.energy(&stretches, &NO_LAME);
        let g = self.energy.gradient(&stretches, &NO_LAME);
        if g.x == 0.0 && g.y == 0.0 {
            gradient.fill(0.0);
            return energy;
        }
        let p = if sigma.y > STRETCH_FLOOR * sigma.x {
            let (v1, v2) = (v.column(0), v.column(1));
            f * (v1 * v1.transpose() * (g.x / sigma.x) + v2 * v2.transpose() * (g.y / sigma.y))
        } else {
            let (u, _, v, _) = thin_svd(f);
            u * Matrix2::from_diagonal(&Vector2::new(g.x, g.y)) * v.transpose()
        };
        let b = &self.shape_gradients[t];
        let second = p * b[1] * volume;
        let third = p * b[2] * volume;
        // The first shape gradient is minus the sum of the others.
        let first = -(second + third);
        gradient[..3].copy_from_slice(first.as_slice());
        gradient[3..6].copy_from_slice(second.as_slice());
        gradient[6..].copy_from_slice(third.as_slice());
        energy
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

    /// Energies and gradients of the triangles from `first` on, as many as
    /// `energies` holds: a whole batch of untorn triangles has its stretches
    /// found in vector lanes, the same bits as one at a time.
    fn gradients_of_batch(&self, first: usize, x: &[f64], energies: &mut [f64], gradients: &mut [f64]) {
        let count = energies.len();
        let whole = count == LANES && (self.torn.count() == 0 || (first..first + LANES).all(|t| !self.torn.is_torn(t)));
        if !whole {
            for (i, energy) in energies.iter_mut().enumerate() {
                let gradient = &mut gradients[i * LOCAL..(i + 1) * LOCAL];
                *energy = match self.torn.is_torn(first + i) {
                    true => {
                        gradient.fill(0.0);
                        0.0
                    }
                    false => self.element_gradient(first + i, x, gradient),
                };
            }
            return;
        }
        let f: [SMatrix<f64, 3, 2>; LANES] = std::array::from_fn(|i| self.deformation_gradient(first + i, x));
        let mut sigma = [Vector2::zeros(); LANES];
        let mut v = [Matrix2::zeros(); LANES];
        stretches_of_lanes(&f, &mut sigma, &mut v);
        for (i, energy) in energies.iter_mut().enumerate() {
            let gradient = &mut gradients[i * LOCAL..(i + 1) * LOCAL];
            *energy = self.gradient_from_stretches(first + i, &f[i], &sigma[i], &v[i], gradient);
        }
    }

    /// Σ energy, and the gradient and Hessian gathered when asked.
    fn evaluate(
        &self,
        x: &[f64],
        gradient: Option<(&mut [f64], bool)>,
        hessian: Option<(&mut [f64], bool, bool)>,
    ) -> f64 {
        const MIN_TRIANGLES: usize = 256;
        let count = self.triangles.len();
        let mut guard = self.workspace.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let workspace = &mut *guard;
        workspace.energies.resize(count, 0.0);
        if gradient.is_none() && hessian.is_none() {
            // Each triangle in its slot, then summed in order: the same bits
            // on any thread count.
            workspace
                .energies
                .par_iter_mut()
                .enumerate()
                .with_min_len(MIN_TRIANGLES)
                .for_each(|(t, energy)| {
                    *energy = match self.torn.is_torn(t) {
                        true => 0.0,
                        false => self.element_energy(t, x),
                    }
                });
            return workspace.energies.iter().sum();
        }
        workspace.gradients.resize(count * LOCAL, 0.0);
        match hessian.as_ref().map(|(_, _, project)| *project) {
            None => workspace
                .energies
                .par_chunks_mut(LANES)
                .zip(workspace.gradients.par_chunks_mut(LANES * LOCAL))
                .enumerate()
                .with_min_len(MIN_TRIANGLES / LANES)
                .for_each(|(batch, (energies, gradients))| {
                    self.gradients_of_batch(batch * LANES, x, energies, gradients)
                }),
            Some(project) => {
                workspace.hessians.resize(count * PACKED, 0.0);
                workspace
                    .energies
                    .par_iter_mut()
                    .zip(workspace.gradients.par_chunks_mut(LOCAL))
                    .enumerate()
                    .with_min_len(MIN_TRIANGLES)
                    .zip(workspace.hessians.par_chunks_mut(PACKED))
                    .for_each(|((t, (energy, element_gradient)), element_hessian)| {
                        if self.torn.is_torn(t) {
                            *energy = 0.0;
                            element_gradient.fill(0.0);
                            element_hessian.fill(0.0);
                            return;
                        }
                        let (value, local_gradient, packed) = self.element(t, x, Some(project));
                        *energy = value;
                        element_gradient.copy_from_slice(&local_gradient);
                        element_hessian.copy_from_slice(&packed.expect("asked for"));
                    })
            }
        }
        if let Some((out, overwrite)) = gradient {
            self.gather().vectors(&workspace.gradients, out, overwrite);
        }
        if let Some((values, overwrite, _)) = hessian {
            self.gather().matrices(&workspace.hessians, values, overwrite);
        }
        workspace.energies.iter().sum()
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
            let (sigma, _) = in_plane_stretches(&f);
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
    use proptest::prelude::*;

    /// A 3×2 F with entries in [−2, 2], scaled by 2^k (k in [−40, 40]),
    /// sometimes with its second column a multiple of the first (a triangle
    /// flattened to a segment) or orthogonal to it with the same length (equal
    /// stretches).
    fn gradient() -> impl Strategy<Value = SMatrix<f64, 3, 2>> {
        (prop::array::uniform6(-2.0..2.0f64), -40i32..40, 0..4u8, -1.5..1.5f64).prop_map(
            |(entries, k, shape, ratio)| {
                let mut f = SMatrix::<f64, 3, 2>::from_column_slice(&entries) * 2f64.powi(k);
                let first = f.column(0).into_owned();
                match shape {
                    0 => f.set_column(1, &(first * ratio)),
                    1 => f.set_column(
                        1,
                        &(first.cross(&Vector3::new(0.3, -0.7, 0.2)).normalize() * first.norm()),
                    ),
                    _ => {}
                }
                f
            },
        )
    }

    proptest! {
        /// Sixteen triangles at once give each one's stretches and V bit for
        /// bit as alone, whatever their neighbours are.
        #[test]
        fn stretches_in_lanes_equal_one_at_a_time(f in prop::array::uniform16(gradient())) {
            let mut sigma = [Vector2::zeros(); LANES];
            let mut v = [Matrix2::zeros(); LANES];
            stretches_of_lanes(&f, &mut sigma, &mut v);
            for l in 0..LANES {
                let (alone_sigma, alone_v) = in_plane_stretches(&f[l]);
                for k in 0..2 {
                    prop_assert_eq!(sigma[l][k].to_bits(), alone_sigma[k].to_bits());
                }
                for k in 0..4 {
                    prop_assert_eq!(v[l][k].to_bits(), alone_v[k].to_bits());
                }
            }
        }

        /// The closed form is F's SVD: σ₁ ≥ σ₂ ≥ 0 equal to nalgebra's to
        /// rounding (σ₂ relative to itself, so flattened triangles keep their
        /// small stretch), V a rotation, and F vᵢ of length σᵢ.
        #[test]
        fn closed_form_stretches_are_the_singular_values(f in gradient()) {
            let (sigma, v) = in_plane_stretches(&f);
            let reference = f.singular_values();
            let (largest, smallest) = (reference.max(), reference.min());
            prop_assert!(sigma.x >= sigma.y && sigma.y >= 0.0);
            prop_assert!((sigma.x - largest).abs() <= 1e-14 * largest);
            // nalgebra's smaller singular value is itself only accurate to ε σ₁.
            prop_assert!((sigma.y - smallest).abs() <= 1e-14 * smallest + 1e-14 * largest);
            prop_assert!((v.transpose() * v - Matrix2::identity()).amax() < 1e-15);
            prop_assert!((v.determinant() - 1.0).abs() < 1e-15);
            prop_assert!(((f * v.column(0)).norm() - sigma.x).abs() <= 1e-14 * sigma.x);
            prop_assert!(((f * v.column(1)).norm() - sigma.y).abs() <= 1e-14 * sigma.x);
        }
    }

    /// The stretches of a nearly flattened triangle keep their relative
    /// accuracy (the smaller eigenvalue of FᵀF would cancel away), and
    /// those of tiny and huge F neither underflow nor overflow.
    #[test]
    fn stretches_of_flattened_tiny_and_huge_triangles() {
        let rotation = nalgebra::Rotation3::from_euler_angles(0.3, -1.1, 2.0).into_inner();
        let plane = SMatrix::<f64, 3, 2>::new(1.0, 0.0, 0.0, 1.0, 0.0, 0.0);
        for small in [1e-3, 1e-9, 1e-14] {
            let f = rotation * plane * Matrix2::new(1.3, 0.0, 0.0, small);
            let (sigma, _) = in_plane_stretches(&f);
            assert!((sigma.x - 1.3).abs() < 1e-15 * 1.3);
            assert!(
                (sigma.y - small).abs() < 1e-12 * small,
                "σ₂ {} against {small}",
                sigma.y
            );
        }
        let f = rotation * plane * Matrix2::new(1.3, 0.2, -0.1, 0.7);
        let (reference, reference_v) = in_plane_stretches(&f);
        for scale in [1e-300, 1e-150, 1e150, 1e300] {
            let (sigma, v) = in_plane_stretches(&(f * scale));
            assert!(((sigma / scale) - reference).amax() < 1e-14, "scale {scale:e}");
            assert!((v - reference_v).amax() < 1e-15, "scale {scale:e}");
        }
        assert_eq!(in_plane_stretches(&SMatrix::<f64, 3, 2>::zeros()).0, Vector2::zeros());
    }

    /// The gradient alone (P = F V diag(ψᵢ/σᵢ) Vᵀ, or from U for a flattened
    /// triangle) is the gradient computed beside the Hessian (from U).
    #[test]
    fn gradient_alone_matches_the_gradient_beside_the_hessian() {
        let rest = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.2, 0.9, 0.0];
        let energy = StrainLimitEnergy {
            mu: 3.0,
            min: 0.95,
            max: 1.05,
        };
        let membrane = Membrane::new(vec![[0, 1, 2]], &rest, 0.01, energy, 6.0).unwrap();
        let cases = [
            [0.0, 0.0, 0.0, 1.3, 0.1, 0.2, 0.1, 0.6, 0.5],
            [0.1, -0.2, 0.0, 0.7, 0.3, -0.1, 0.4, 1.4, 0.3],
            // Flattened: the third vertex on the line through the others.
            [0.0, 0.0, 0.0, 1.2, 0.3, 0.1, 2.4, 0.6, 0.2],
            [0.0, 0.0, 0.0, 1.2, 0.3, 0.1, 2.4, 0.6, 0.2 + 1e-9],
        ];
        for (case, x) in cases.iter().enumerate() {
            let (energy, beside, _) = membrane.element(0, x, Some(false));
            let mut alone = [0.0; LOCAL];
            let energy_alone = membrane.element_gradient(0, x, &mut alone);
            assert!((energy - energy_alone).abs() <= 1e-14 * energy.abs(), "case {case}");
            let size = beside.iter().fold(0.0f64, |m, g| m.max(g.abs()));
            assert!(size > 0.0, "case {case} has a force");
            for k in 0..LOCAL {
                assert!(
                    (alone[k] - beside[k]).abs() <= 1e-12 * size,
                    "case {case}, entry {k}: {} against {}",
                    alone[k],
                    beside[k]
                );
            }
        }
    }

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
