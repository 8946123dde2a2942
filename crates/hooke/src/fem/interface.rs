//! The interface energies that join the triangles of a discontinuous
//! Galerkin body (Chen 2019 thesis, §5.2 and Appendix A).
//!
//! On an interface f between triangles − and + each side's field is affine,
//! x±(X) = F± X + b±, so the jump ⟦x⟧ = x₋ − x₊ along the edge is linear in
//! the edge parameter and, the mesh being conforming, equals at each end the
//! difference of the two copies of that end: j₀ and j₁. The line integrals of
//! the appendix (quadratic, linear and constant parts of ‖(F₋−F₊)X + b₋−b₊‖²)
//! then reduce to the exact
//!
//!   ∫_f ‖⟦x⟧‖² dX = L/3 (‖j₀‖² + j₀·j₁ + ‖j₁‖²),   ∫_f ⟦x⟧ dX = L/2 (j₀ + j₁),
//!
//! with L the edge's rest length. ⟦x⟧ is also the jump of the displacement,
//! X being continuous.
//!
//! - **Babuška–Zlámal** (BZ): E_f = η_f ∫_f ‖⟦x⟧‖² dX, as Eq. 5.10 writes it
//!   (no factor ½), a quadratic in the four end copies.
//! - **Symmetric interior penalty** (IP): the same penalty plus the
//!   consistency term E_c = −∫_f ⟦x⟧ · {P} n₋ dX with {P} = ½(P₋ + P₊), the
//!   nonlinear generalisation of −∫⟦u⟧·{σ(u)}n: its derivative at rest gives
//!   the symmetric bilinear form a_IP of §2.7 (whose penalty is then 2η_f). As
//!   P is constant on a linear triangle, E_c = −(L/4) (j₀ + j₁)·(P₋ + P₊) n₋.
//!   Its Hessian holds the jump–F blocks (through ∂P/∂F) and the term
//!   −(L/4) ∂²[(j₀+j₁)n₋ᵀ : P(F)]/∂F², the third derivative of ψ, which
//!   vanishes for linear materials and wherever the field is continuous; it is
//!   taken by central differences of ∂P/∂F (relative step 1e-5, so the
//!   Hessian is exact to about 1e-10 of ∂P/∂F) and left out when a projected
//!   Hessian is asked for. The IP Hessian is indefinite for small η_f: the
//!   element terms make the sum positive only above a threshold of order
//!   (stiffness / element size).
//!
//! The default penalty is η_f = (k₋ + k₊)/2 · L (1/A₋ + 1/A₊), k the largest
//! in-plane stiffness of each side's material at rest (λ + 2μ for an isotropic
//! one) and A the triangles' rest areas: a modulus over an element size, as
//! interior-penalty theory asks. The code Chen's thesis was run with (hyperbolicFE) uses 0.1 · L (1/W₋ + 1/W₊)
//! with W the triangle areas, without a modulus (the scale then differs by
//! material); see [`default_penalty`].

use super::kind::ElementKind;
use super::triangle::{LinearTriangle, TriangleGeometry};
use crate::error::{HookeError, Result};
use crate::linalg::LowerPattern;
use crate::material::laplacian_weight::StretchSamples;
use crate::material::{derivative_matrix, vec_index, MaterialRef, Matrix9, StressDerivative, Want};
use crate::mesh::Interface;
use crate::model::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use nalgebra::{Matrix2, Matrix3, SMatrix, Vector2};
use rayon::prelude::*;

/// Local DOFs of an interface: both triangles' three vertices, two coordinates each.
const LOCAL: usize = 12;
type Local = SMatrix<f64, LOCAL, LOCAL>;

/// Relative step of the central differences of ∂P/∂F (the IP Hessian's third-derivative part).
const THIRD_DERIVATIVE_STEP: f64 = 1e-5;

/// How the triangles of a discontinuous body are joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Formulation {
    /// Babuška–Zlámal: the penalty alone.
    Bz,
    /// Symmetric interior penalty: consistency term and penalty.
    Ip,
}

impl Formulation {
    /// Its name in scene files: `bz` or `ip`.
    pub fn name(self) -> &'static str {
        match self {
            Formulation::Bz => "bz",
            Formulation::Ip => "ip",
        }
    }
}

/// One side of an interface: its triangle's vertices and rest data, and
/// which of its corners sit at the edge's two ends.
#[derive(Clone, Debug)]
struct Side {
    vertices: [usize; 3],
    ends: [usize; 2],
    geometry: TriangleGeometry,
    material: MaterialRef,
}

#[derive(Clone, Debug)]
struct Face {
    sides: [Side; 2],
    length: f64,
    normal: Vector2<f64>,
    penalty: f64,
}

impl Face {
    /// The 12 DOFs of the face: side 0's vertices, then side 1's.
    fn dofs(&self) -> [usize; LOCAL] {
        std::array::from_fn(|p| {
            let (side, rest) = (p / 6, p % 6);
            2 * self.sides[side].vertices[rest / 2] + rest % 2
        })
    }

    /// Local DOF of end k's copy on `side`, coordinate a.
    fn end_dof(&self, side: usize, k: usize, a: usize) -> usize {
        6 * side + 2 * self.sides[side].ends[k] + a
    }

    fn local(&self, x: &[f64]) -> [f64; LOCAL] {
        let dofs = self.dofs();
        std::array::from_fn(|p| x[dofs[p]])
    }

    /// The jumps at the edge's two ends.
    fn jumps(&self, local: &[f64; LOCAL]) -> [Vector2<f64>; 2] {
        std::array::from_fn(|k| Vector2::from_fn(|a, _| local[self.end_dof(0, k, a)] - local[self.end_dof(1, k, a)]))
    }

    fn deformation_gradient(&self, side: usize, local: &[f64; LOCAL]) -> Matrix3<f64> {
        LinearTriangle::deformation_gradient(&self.sides[side].geometry, &local[6 * side..6 * side + 6])
    }

    /// Adds the penalty's constant Hessian: ∂²/∂jₖ∂jₗ = η L/3 (2 if k = l
    /// else 1) I, with ∂jₖ = ±∂x of the two copies of end k.
    fn add_penalty_hessian(&self, h: &mut Local) {
        let weight = self.penalty * self.length / 3.0;
        for k in 0..2 {
            for l in 0..2 {
                let c = weight * if k == l { 2.0 } else { 1.0 };
                for a in 0..2 {
                    for (s, t) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                        let sign = if s == t { 1.0 } else { -1.0 };
                        h[(self.end_dof(s, k, a), self.end_dof(t, l, a))] += sign * c;
                    }
                }
            }
        }
    }

    /// Energy, and gradient and Hessian (local) when asked.
    fn evaluate(
        &self,
        formulation: Formulation,
        local: &[f64; LOCAL],
        element: usize,
        gradient: Option<&mut [f64; LOCAL]>,
        hessian: Option<(&mut Local, bool)>,
    ) -> Result<f64> {
        let [j0, j1] = self.jumps(local);
        let weight = self.penalty * self.length / 3.0;
        let mut energy = weight * (j0.norm_squared() + j0.dot(&j1) + j1.norm_squared());
        let mut g = [0.0; LOCAL];
        let mut h = Local::zeros();
        let want_gradient = gradient.is_some() || hessian.is_some();
        if want_gradient {
            let by_end = [weight * (2.0 * j0 + j1), weight * (j0 + 2.0 * j1)];
            for (k, d) in by_end.iter().enumerate() {
                for a in 0..2 {
                    g[self.end_dof(0, k, a)] += d[a];
                    g[self.end_dof(1, k, a)] -= d[a];
                }
            }
        }
        if hessian.is_some() {
            self.add_penalty_hessian(&mut h);
        }
        if formulation == Formulation::Ip {
            let sum = j0 + j1;
            let scale = -self.length / 4.0;
            let want = if want_gradient {
                Want::Derivative { project: false }
            } else {
                Want::Stress
            };
            let mut stress_sum = Matrix2::zeros();
            let mut derivatives = [Matrix9::zeros(), Matrix9::zeros()];
            let mut forms = [Matrix3::zeros(), Matrix3::zeros()];
            for side in 0..2 {
                let f = self.deformation_gradient(side, local);
                forms[side] = f;
                let evaluation = self.sides[side].material.evaluate(&f, want);
                if evaluation.is_undefined() {
                    return Err(undefined(element, side));
                }
                stress_sum += evaluation.first_piola.fixed_view::<2, 2>(0, 0);
                derivatives[side] = match evaluation.first_piola_derivative {
                    Some(StressDerivative::Matrix(c)) => c,
                    Some(StressDerivative::Eigensystem(system)) => system.to_matrix(),
                    None => Matrix9::zeros(),
                };
            }
            let traction = stress_sum * self.normal;
            energy += scale * sum.dot(&traction);
            if want_gradient {
                // S = (j₀ + j₁) n₋ᵀ, embedded in 3×3; ∂E_c/∂F = scale · ∂P/∂F : S.
                let mut s = Matrix3::zeros();
                for a in 0..2 {
                    for b in 0..2 {
                        s[(a, b)] = sum[a] * self.normal[b];
                    }
                }
                for k in 0..2 {
                    for a in 0..2 {
                        g[self.end_dof(0, k, a)] += scale * traction[a];
                        g[self.end_dof(1, k, a)] -= scale * traction[a];
                    }
                }
                for side in 0..2 {
                    let c = &derivatives[side];
                    let shape = &self.sides[side].geometry.shape_gradients;
                    let stress_like = contract(c, &s);
                    for (i, gradient_i) in shape.iter().enumerate() {
                        for a in 0..2 {
                            let value: f64 = (0..2).map(|b| stress_like[(a, b)] * gradient_i[b]).sum();
                            g[6 * side + 2 * i + a] += scale * value;
                        }
                    }
                }
                if let Some((_, project)) = &hessian {
                    self.consistency_hessian(scale, &sum, &forms, &derivatives, *project, &mut h);
                }
            }
        }
        if let Some(out) = gradient {
            *out = g;
        }
        if let Some((out, _)) = hessian {
            *out = h;
        }
        Ok(energy)
    }

    /// The Hessian of E_c = scale · (j₀ + j₁) · Σ P n: jump–F blocks and, unless
    /// `project`, the third-derivative blocks of each side.
    fn consistency_hessian(
        &self,
        scale: f64,
        sum: &Vector2<f64>,
        forms: &[Matrix3<f64>; 2],
        derivatives: &[Matrix9; 2],
        project: bool,
        h: &mut Local,
    ) {
        for side in 0..2 {
            let c = &derivatives[side];
            let shape = &self.sides[side].geometry.shape_gradients;
            // ∂²E_c/∂jₖ[a] ∂x_i[c] = scale Σ_{b,d} n_b C[(a,b),(c,d)] ∇Nᵢ[d], for both ends k.
            for (i, gradient_i) in shape.iter().enumerate() {
                for a in 0..2 {
                    for cc in 0..2 {
                        let mut value = 0.0;
                        for b in 0..2 {
                            for d in 0..2 {
                                value += self.normal[b] * c[(vec_index(a, b), vec_index(cc, d))] * gradient_i[d];
                            }
                        }
                        let column = 6 * side + 2 * i + cc;
                        for k in 0..2 {
                            for (s, sign) in [(0, 1.0), (1, -1.0)] {
                                let row = self.end_dof(s, k, a);
                                h[(row, column)] += sign * scale * value;
                                h[(column, row)] += sign * scale * value;
                            }
                        }
                    }
                }
            }
            if project {
                continue;
            }
            // ∂²[S : P(F)]/∂F² by central differences of ∂P/∂F : S over the in-plane entries of F.
            let mut s = Matrix3::zeros();
            for a in 0..2 {
                for b in 0..2 {
                    s[(a, b)] = sum[a] * self.normal[b];
                }
            }
            let material = self.sides[side].material.as_ref();
            let step = THIRD_DERIVATIVE_STEP * forms[side].fixed_view::<2, 2>(0, 0).norm().max(1.0);
            let mut third = [[Matrix2::zeros(); 2]; 2];
            for g in 0..2 {
                for hh in 0..2 {
                    let mut plus = forms[side];
                    let mut minus = forms[side];
                    plus[(g, hh)] += step;
                    minus[(g, hh)] -= step;
                    let difference = contract(&derivative_matrix(material, &plus, false), &s)
                        - contract(&derivative_matrix(material, &minus, false), &s);
                    third[g][hh] = difference.fixed_view::<2, 2>(0, 0) / (2.0 * step);
                }
            }
            // third[g][h][(c, d)] = ∂²(S:P)/∂F_cd ∂F_gh.
            for (i, gi) in shape.iter().enumerate() {
                for (j, gj) in shape.iter().enumerate() {
                    for cc in 0..2 {
                        for g in 0..2 {
                            let mut value = 0.0;
                            for d in 0..2 {
                                for hh in 0..2 {
                                    value += third[g][hh][(cc, d)] * gi[d] * gj[hh];
                                }
                            }
                            h[(6 * side + 2 * i + cc, 6 * side + 2 * j + g)] += scale * value;
                        }
                    }
                }
            }
        }
    }
}

/// Adds the packed lower triangle of a local Hessian at its pattern positions.
fn scatter_lower(h: &Local, slots: &[usize; LOCAL * (LOCAL + 1) / 2], values: &mut [f64]) {
    let mut n = 0;
    for p in 0..LOCAL {
        for q in 0..=p {
            values[slots[n]] += h[(p, q)];
            n += 1;
        }
    }
}

/// ∂P/∂F : S as a 3×3 matrix (C symmetric: the same as Cᵀ vec S).
fn contract(c: &Matrix9, s: &Matrix3<f64>) -> Matrix3<f64> {
    let mut out = Matrix3::zeros();
    for row in 0..3 {
        for column in 0..3 {
            let mut value = 0.0;
            for a in 0..3 {
                for b in 0..3 {
                    value += c[(vec_index(row, column), vec_index(a, b))] * s[(a, b)];
                }
            }
            out[(row, column)] = value;
        }
    }
    out
}

fn undefined(interface: usize, side: usize) -> HookeError {
    HookeError::InvalidDeformation {
        element: interface,
        reason: format!(
            "the interior-penalty term of interface {interface} needs the stress of its {} triangle, which is undefined (inverted)",
            ["minus", "plus"][side]
        ),
    }
}

/// The largest in-plane stiffness of a material at rest: the largest
/// eigenvalue of the in-plane block of ∂P/∂F at F = I (λ + 2μ for an isotropic one).
pub fn in_plane_stiffness(material: &dyn crate::material::Material) -> f64 {
    let c = derivative_matrix(material, &Matrix3::identity(), false);
    let indices = [vec_index(0, 0), vec_index(1, 0), vec_index(0, 1), vec_index(1, 1)];
    let block = nalgebra::Matrix4::from_fn(|r, s| c[(indices[r], indices[s])]);
    nalgebra::SymmetricEigen::new(block).eigenvalues.max()
}

/// The default penalty of an interface: (k₋ + k₊)/2 · L (1/A₋ + 1/A₊), with
/// k the sides' [`in_plane_stiffness`] and A their rest areas (Pa/m).
pub fn default_penalty(stiffnesses: [f64; 2], length: f64, areas: [f64; 2]) -> f64 {
    0.5 * (stiffnesses[0] + stiffnesses[1]) * length * (1.0 / areas[0] + 1.0 / areas[1])
}

/// The interfaces of discontinuous triangles, as one energy term.
pub struct Interfaces {
    formulation: Formulation,
    faces: Vec<Face>,
    /// For each face, the pattern positions of its packed lower 12×12 block.
    slots: Vec<[usize; LOCAL * (LOCAL + 1) / 2]>,
}

impl Interfaces {
    /// The interfaces of a 2D model whose triangles (`triangles[e]`, with
    /// `materials[e]`) are at rest at `rest` (two coordinates per vertex).
    /// `penalty`: η_f for every interface, or None for [`default_penalty`].
    pub fn new(
        interfaces: &[Interface],
        triangles: &[[usize; 3]],
        materials: &[MaterialRef],
        rest: &[f64],
        formulation: Formulation,
        penalty: Option<f64>,
    ) -> Result<Interfaces> {
        if let Some(eta) = penalty {
            if !(eta.is_finite() && eta >= 0.0) {
                return Err(HookeError::Material {
                    context: "interface penalty".into(),
                    reason: format!("must be finite and ≥ 0, got {eta}"),
                });
            }
        }
        let side = |element: usize, ends: [usize; 2]| -> Result<Side> {
            let vertices = triangles[element];
            let corners: Vec<_> = vertices
                .iter()
                .map(|&v| nalgebra::Vector3::new(rest[2 * v], rest[2 * v + 1], 0.0))
                .collect();
            let geometry = LinearTriangle::geometry(&corners).ok_or_else(|| HookeError::Mesh {
                reason: format!("triangle {element} is flat or inverted at rest"),
            })?;
            let local = |v: usize| vertices.iter().position(|&w| w == v);
            let ends = match (local(ends[0]), local(ends[1])) {
                (Some(a), Some(b)) => [a, b],
                _ => {
                    return Err(HookeError::Mesh {
                        reason: format!("interface end vertices {ends:?} are not corners of triangle {element}"),
                    })
                }
            };
            Ok(Side {
                vertices,
                ends,
                geometry,
                material: materials[element].clone(),
            })
        };
        let faces = interfaces
            .iter()
            .map(|interface| {
                let sides = [
                    side(interface.elements[0], interface.ends[0])?,
                    side(interface.elements[1], interface.ends[1])?,
                ];
                let penalty = penalty.unwrap_or_else(|| {
                    default_penalty(
                        [0, 1].map(|s| in_plane_stiffness(sides[s].material.as_ref())),
                        interface.length,
                        [0, 1].map(|s| sides[s].geometry.rest_area),
                    )
                });
                Ok(Face {
                    sides,
                    length: interface.length,
                    normal: interface.normal,
                    penalty,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Interfaces {
            formulation,
            faces,
            slots: Vec::new(),
        })
    }

    /// How the triangles are joined.
    pub fn formulation(&self) -> Formulation {
        self.formulation
    }

    /// η_f of each interface.
    pub fn penalties(&self) -> Vec<f64> {
        self.faces.iter().map(|f| f.penalty).collect()
    }

    /// The number of interfaces: interior edges shared by two triangles.
    pub fn interface_count(&self) -> usize {
        self.faces.len()
    }

    /// Adds every interface's penalty Hessian on the pattern.
    fn add_penalty_hessians(&self, values: &mut [f64]) {
        for (face, slots) in self.faces.iter().zip(&self.slots) {
            let mut h = Local::zeros();
            face.add_penalty_hessian(&mut h);
            scatter_lower(&h, slots, values);
        }
    }

    fn each<T: Send>(&self, job: impl Fn(usize, &Face) -> T + Sync) -> Vec<T> {
        self.faces.par_iter().enumerate().map(|(i, f)| job(i, f)).collect()
    }
}

impl EnergyTerm for Interfaces {
    fn name(&self) -> String {
        format!(
            "{} interface terms of {} edges",
            match self.formulation {
                Formulation::Bz => "Babuška–Zlámal",
                Formulation::Ip => "interior-penalty",
            },
            self.faces.len()
        )
    }

    fn kind(&self) -> TermKind {
        TermKind::Elastic
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            // The BZ penalty is a PSD quadratic; the IP consistency term is indefinite.
            psd_projection: self.formulation == Formulation::Bz,
            defined_under_inversion: self.formulation == Formulation::Bz
                || self.faces.iter().all(|f| {
                    f.sides
                        .iter()
                        .all(|s| s.material.capabilities().defined_under_inversion)
                }),
            material_stiffness: self.formulation == Formulation::Bz,
            ..TermCapabilities::SMOOTH
        }
    }

    fn couplings(&self, coupled: &mut dyn FnMut(&[usize])) {
        for face in &self.faces {
            let vertices: Vec<usize> = face.sides.iter().flat_map(|s| s.vertices).collect();
            coupled(&vertices);
        }
    }

    fn bind(&mut self, pattern: &LowerPattern, dimension: usize) {
        assert_eq!(dimension, 2, "interfaces join triangles of a 2D model");
        self.slots = self
            .faces
            .iter()
            .map(|face| {
                let dofs = face.dofs();
                let mut slots = [0; LOCAL * (LOCAL + 1) / 2];
                let mut n = 0;
                for p in 0..LOCAL {
                    for q in 0..=p {
                        let (row, column) = (dofs[p].max(dofs[q]), dofs[p].min(dofs[q]));
                        slots[n] = pattern
                            .position(row, column)
                            .expect("the pattern holds the interface couplings");
                        n += 1;
                    }
                }
                slots
            })
            .collect();
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        self.each(|i, face| {
            face.evaluate(self.formulation, &face.local(x), i, None, None)
                .unwrap_or(f64::INFINITY)
        })
        .iter()
        .sum()
    }

    fn gradient(&self, x: &[f64], _time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        let locals = self.each(|i, face| {
            let mut g = [0.0; LOCAL];
            face.evaluate(self.formulation, &face.local(x), i, Some(&mut g), None)
                .map(|e| (e, g))
        });
        let mut energy = 0.0;
        for (face, local) in self.faces.iter().zip(locals) {
            let (e, g) = local?;
            energy += e;
            for (dof, value) in face.dofs().iter().zip(g) {
                gradient[*dof] += value;
            }
        }
        Ok(energy)
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
        if overwrite {
            gradient.fill(0.0);
            hessian.values.fill(0.0);
        }
        let locals = self.each(|i, face| {
            let mut g = [0.0; LOCAL];
            let mut h = Local::zeros();
            face.evaluate(
                self.formulation,
                &face.local(x),
                i,
                Some(&mut g),
                Some((&mut h, project)),
            )
            .map(|e| (e, g, h))
        });
        let mut energy = 0.0;
        for ((face, slots), local) in self.faces.iter().zip(&self.slots).zip(locals) {
            let (e, g, h) = local?;
            energy += e;
            let dofs = face.dofs();
            for (dof, value) in dofs.iter().zip(g) {
                gradient[*dof] += value;
            }
            scatter_lower(&h, slots, hessian.values);
        }
        Ok(energy)
    }

    fn add_material_stiffness(&self, _x: &[f64], _time: f64, values: &mut [f64]) {
        // The BZ penalty's Hessian is constant and PSD: all of it is "material".
        if self.formulation == Formulation::Bz {
            self.add_penalty_hessians(values);
        }
    }

    fn add_laplacian(&self, _time: f64, _: &StretchSamples, values: &mut [f64]) {
        // The penalty's Hessian acts alike on each coordinate: a weighted
        // Laplacian, exact for BZ; IP's consistency term acts through the gradient.
        self.add_penalty_hessians(values);
    }

    fn projective(&self) -> bool {
        // BZ is a quadratic whose Hessian is its Laplacian: ∇E = L x exactly.
        self.formulation == Formulation::Bz
    }
}
