//! Hyperelastic materials: energy density ψ(F), first Piola–Kirchhoff stress
//! P = ∂ψ/∂F and its derivative ∂P/∂F (9×9, column-major vec(F)), behind the
//! [`Material`] trait. A material value carries its own parameters, so every
//! element can have its own (elements of one region share one value).
//!
//! The isotropic models ([`MaterialModel`]) take the same user parameters
//! (Young's modulus, Poisson ratio, density); each converts the Lamé pair so that
//! all of them linearise to the same Hooke's law at F = I (tested in
//! `tests/materials.rs`). Beside them: a linear anisotropic material with a full
//! 6×6 elasticity tensor, optionally co-rotated, and a fibre term that can be
//! added to any material. Scenes find materials through [`registry`].

mod anisotropic_linear;
mod arap;
mod corotational;
pub(crate) mod entry;
mod fibre;
mod fixed_corotational;
mod isotropic;
mod isotropic_material;
pub mod laplacian_weight;
mod linear;
mod modified_neo_hookean;
mod neo_hookean;
pub mod parameters;
pub mod projective;
pub mod registry;
pub mod scaled;
mod st_venant_kirchhoff;
mod stable_neo_hookean;
pub mod strain_limit;
pub(crate) mod stretch_coordinates;
mod stretch_polynomial;
pub(crate) mod symmetric;
pub mod valanis_landel;
mod voigt;
pub mod volume;

pub use anisotropic_linear::AnisotropicLinear;
pub use fibre::WithFibre;
pub use isotropic::{StretchEnergy, PAIRS};
pub use isotropic_material::IsotropicMaterial;
pub use parameters::{Lame, MaterialParameters};
pub use voigt::{ElasticityTensor, Matrix6};

use nalgebra::{Matrix3, SMatrix, Vector3};
use std::sync::Arc;

/// A constitutive model with its parameters: what the elements of a body are made of.
///
/// A material of your own: ψ(F) = μ ‖F − I‖², so P = 2μ (F − I) and
/// ∂P/∂F = 2μ I₉ (not rotation-invariant: a toy, but every element kind,
/// integrator and minimiser takes it). Materials that scenes name are
/// registered in [`registry`] (docs/architecture.md, "Add a material").
///
/// ```
/// use hooke::material::{Matrix9, StressDerivative};
/// use hooke::prelude::*;
/// use nalgebra::{Matrix3, Vector3};
/// use std::sync::Arc;
///
/// #[derive(Debug)]
/// struct Quadratic {
///     mu: f64,
///     density: f64,
/// }
///
/// impl Material for Quadratic {
///     fn name(&self) -> String {
///         "quadratic".to_string()
///     }
///     fn density(&self) -> f64 {
///         self.density
///     }
///     fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
///         let strain = f - Matrix3::identity();
///         Evaluation {
///             energy_density: self.mu * strain.norm_squared(),
///             first_piola: match want {
///                 Want::Energy => Matrix3::zeros(),
///                 _ => 2.0 * self.mu * strain,
///             },
///             first_piola_derivative: want
///                 .derivative()
///                 .map(|_| StressDerivative::Matrix(Matrix9::identity() * (2.0 * self.mu))),
///         }
///     }
///     fn capabilities(&self) -> MaterialCapabilities {
///         MaterialCapabilities {
///             defined_under_inversion: true,
///             rotation_invariant: false,
///             corotated_quadratic: false,
///             projective: false,
///         }
///     }
/// }
///
/// # fn main() -> hooke::Result<()> {
/// let mesh = box_mesh(&BoxMeshOptions {
///     origin: Vector3::zeros(),
///     size: Vector3::new(0.4, 0.1, 0.1),
///     cells: [4, 1, 1],
///     tets_per_hex: TetsPerHex::Six,
/// })?;
/// let material: MaterialRef = Arc::new(Quadratic { mu: 1e5, density: 1000.0 });
/// let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
/// let clamped = Selection::Plane { point: [0.0; 3], normal: [-1.0, 0.0, 0.0], tolerance: None }
///     .vertices(model.mesh(), "clamp")?;
/// model.add_pin(Pin::new(clamped, Motion::Fixed {}, None));
/// model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
/// let mut state = model.initial_state();
/// let mut integrator = BackwardEuler::new(SolverSettings::default())?;
/// let report = integrator.step(&model, &mut state, 0.01)?;
/// assert!(report.iterations <= 2, "a quadratic energy: Newton converges at once");
/// # Ok(())
/// # }
/// ```
pub trait Material: Send + Sync + std::fmt::Debug {
    /// The scene-file name of the model (with "+ fibre" when a fibre term is added).
    fn name(&self) -> String;
    /// Mass density, kg/m³.
    fn density(&self) -> f64;
    /// ψ, P and ∂P/∂F at F, as much as `want` asks for. A 2D element passes its
    /// in-plane F embedded in 3×3 (plane strain: F₃₃ = 1).
    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation;
    /// ψ and P at each F of `f`, as [`Material::evaluate`] gives them with
    /// `want` = `Want::Energy` or `Want::Stress` (then P is zero): the
    /// gradient passes, where a model may do many elements faster than one
    /// at a time. Default: one at a time.
    fn evaluate_stresses(&self, f: &[Matrix3<f64>], want: Want, energies: &mut [f64], stresses: &mut [Matrix3<f64>]) {
        for ((f, energy), stress) in f.iter().zip(energies).zip(stresses) {
            let evaluation = self.evaluate(f, want);
            (*energy, *stress) = (evaluation.energy_density, evaluation.first_piola);
        }
    }
    /// What the model guarantees; integrators and damping models ask this instead
    /// of comparing model names.
    fn capabilities(&self) -> MaterialCapabilities;
    /// The stiffness k of the weighted Laplacian of quasi-Newton solvers when
    /// the material sets it; None: fitted to its uniaxial stress
    /// ([`laplacian_weight`]). A projective material gives its own weight (the
    /// local/global iteration is exact only with it); a fibre term gives its
    /// base material's, since the Liu 2018 thesis (§8.3) leaves anisotropy out of the
    /// constant matrix to act through the gradient.
    fn laplacian_weight(&self, _stretches: &laplacian_weight::StretchSamples) -> Option<f64> {
        None
    }
    /// ψ and its derivatives in z at a symmetric positive-definite F = S
    /// (`symmetric`), the mixed formulation's per-point work, where the
    /// model has a direct form. None: evaluate at F = S and carry P and ∂P/∂F
    /// to z through ∂S/∂z (the general path, and the one for inverted S).
    fn evaluate_symmetric(&self, _s: &Matrix3<f64>, _want: Want) -> Option<symmetric::SymmetricEvaluation> {
        None
    }
}

/// Properties of a material that other parts of Hooke depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaterialCapabilities {
    /// ψ is finite for every F; when false it is +∞ for some (inverted elements),
    /// so a state can be undefined and a line search must stay out of it.
    pub defined_under_inversion: bool,
    /// ψ(QF) = ψ(F) for every rotation Q: rigid rotations store no energy.
    pub rotation_invariant: bool,
    /// ψ = ½ ε:C:ε of the co-rotated strain ε = sym(RᵀF) − I with R the rotation of
    /// F's polar decomposition (corotational, co-rotated anisotropic): the
    /// co-rotated linearisation of the Kharevych 2010 thesis, §3.4.2, is then exact.
    pub corotated_quadratic: bool,
    /// ψ = k/2 · min over a constraint set of ‖F − p‖², with k the material's
    /// Laplacian weight (ARAP: k = 2μ, p the rotation of F): a local/global
    /// iteration (projective dynamics, Liu 2018 thesis, ch. 6) minimises it exactly.
    pub projective: bool,
}

/// A shared material: the elements of a region point to the same value.
pub type MaterialRef = Arc<dyn Material>;

/// ∂P/∂F as a 9×9 matrix, whatever form the evaluation produced it in.
pub fn derivative_matrix(material: &dyn Material, f: &Matrix3<f64>, project: bool) -> Matrix9 {
    match material
        .evaluate(f, Want::Derivative { project })
        .first_piola_derivative
    {
        Some(StressDerivative::Matrix(c)) => c,
        Some(StressDerivative::Eigensystem(system)) => system.to_matrix(),
        None => Matrix9::zeros(),
    }
}

/// The positive semi-definite part of a symmetric 9×9 matrix (eigenvalues clamped at zero).
pub fn project_to_psd(c: &Matrix9) -> Matrix9 {
    let eigen = nalgebra::SymmetricEigen::new(*c);
    if eigen.eigenvalues.iter().all(|l| *l >= 0.0) {
        return *c;
    }
    let clamped = eigen.eigenvalues.map(|l| l.max(0.0));
    eigen.eigenvectors * Matrix9::from_diagonal(&clamped) * eigen.eigenvectors.transpose()
}

/// 9×9 matrix acting on column-major vec(F).
pub type Matrix9 = SMatrix<f64, 9, 9>;

/// Index of F[(row, col)] in column-major vec(F).
#[inline]
pub fn vec_index(row: usize, col: usize) -> usize {
    row + 3 * col
}

/// The constitutive models Hooke offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MaterialModel {
    /// Small-strain linear elasticity, ψ = μ‖ε‖² + λ/2 tr(ε)², ε = sym(F) − I. Not rotation invariant.
    Linear,
    /// Co-rotational linear, ψ = μ‖F − R‖² + λ/2 tr(RᵀF − I)².
    Corotational,
    /// St. Venant–Kirchhoff, ψ = μ‖E‖² + λ/2 tr(E)², E = ½(FᵀF − I).
    StVenantKirchhoff,
    /// Neo-Hookean, ψ = μ/2 (I_C − 3) − μ log J + λ/2 (log J)²; +∞ for J ≤ 0.
    NeoHookean,
    /// Stable Neo-Hookean (Smith, de Goes, Kim 2018), defined for inverted elements.
    StableNeoHookean,
    /// Fixed co-rotational (Stomakhin et al. 2012), ψ = μ‖F − R‖² + λ/2 (J − 1)².
    FixedCorotational,
    /// As-rigid-as-possible, ψ = μ‖F − R‖²; the Poisson ratio is not used.
    Arap,
    /// Modified (isochoric/volumetric) Neo-Hookean of the Kharevych 2010 thesis, eq. 2.4; +∞ for J ≤ 0.
    ModifiedNeoHookean,
}

impl MaterialModel {
    /// Every model, in the order of the enum.
    pub const ALL: [MaterialModel; 8] = [
        MaterialModel::Linear,
        MaterialModel::Corotational,
        MaterialModel::StVenantKirchhoff,
        MaterialModel::NeoHookean,
        MaterialModel::StableNeoHookean,
        MaterialModel::FixedCorotational,
        MaterialModel::Arap,
        MaterialModel::ModifiedNeoHookean,
    ];

    /// Whether ψ is +∞ for some F (inverted elements), so that a state can be undefined.
    pub fn has_undefined_states(self) -> bool {
        matches!(self, MaterialModel::NeoHookean | MaterialModel::ModifiedNeoHookean)
    }

    /// The scene-file name of the model.
    pub fn name(self) -> &'static str {
        match self {
            MaterialModel::Linear => "linear",
            MaterialModel::Corotational => "corotational",
            MaterialModel::StVenantKirchhoff => "st_venant_kirchhoff",
            MaterialModel::NeoHookean => "neo_hookean",
            MaterialModel::StableNeoHookean => "stable_neo_hookean",
            MaterialModel::FixedCorotational => "fixed_corotational",
            MaterialModel::Arap => "arap",
            MaterialModel::ModifiedNeoHookean => "modified_neo_hookean",
        }
    }
}

/// What an evaluation should compute: each level includes the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// ψ alone.
    Energy,
    /// ψ and P.
    Stress,
    /// Stress and ∂P/∂F as a 9×9 matrix; `project` clamps it to positive semi-definite.
    Derivative {
        /// Clamp ∂P/∂F's eigenvalues at zero (positive semi-definite).
        project: bool,
    },
    /// Stress and ∂P/∂F in whichever form is cheapest to turn into an element
    /// stiffness: the eigen-system for stretch-based models, the 9×9 matrix otherwise.
    Stiffness {
        /// Clamp ∂P/∂F's eigenvalues at zero (positive semi-definite).
        project: bool,
    },
}

impl Want {
    /// Whether a derivative (in any form) is asked for, and whether to project it.
    pub fn derivative(self) -> Option<bool> {
        match self {
            Want::Derivative { project } | Want::Stiffness { project } => Some(project),
            _ => None,
        }
    }
}

/// ∂P/∂F of an isotropic model as nine eigen-pairs: ∂P/∂F = Σₖ λₖ vec(Qₖ) vec(Qₖ)ᵀ,
/// with Qₖ = U Dₖ Vᵀ. Scaling modes have Dₖ = diag(eₖ) (eₖ the eigenvectors of
/// ∂²ψ/∂σ²); flip and twist modes of pair (i, j) have Dₖ = (Eᵢⱼ ± Eⱼᵢ)/√2.
#[derive(Clone, Debug)]
pub struct StretchEigensystem {
    /// U of F's signed SVD F = U diag(σ) Vᵀ, a rotation.
    pub u: Matrix3<f64>,
    /// V of F's signed SVD, a rotation.
    pub v: Matrix3<f64>,
    /// Eigenvalues of the scaling block ∂²ψ/∂σ².
    pub scaling_values: Vector3<f64>,
    /// Eigenvectors of the scaling block, as columns in the order of `scaling_values`.
    pub scaling_vectors: Matrix3<f64>,
    /// (flip, twist) eigenvalues of the pairs (0,1), (0,2), (1,2).
    pub pair_values: [(f64, f64); 3],
}

/// ∂P/∂F in the form an evaluation produced it.
#[derive(Clone, Debug)]
pub enum StressDerivative {
    /// The 9×9 matrix acting on column-major vec(F).
    Matrix(Matrix9),
    /// The nine eigen-pairs of an isotropic model ([`StretchEigensystem::to_matrix`] gives the matrix).
    Eigensystem(StretchEigensystem),
}

/// The result of evaluating a material at one deformation gradient.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// ψ(F); +∞ where the model is undefined (for example J ≤ 0 for Neo-Hookean).
    pub energy_density: f64,
    /// P(F) when asked for; zero otherwise.
    pub first_piola: Matrix3<f64>,
    /// ∂P/∂F when asked for.
    pub first_piola_derivative: Option<StressDerivative>,
}

impl Evaluation {
    /// The model is undefined at this F (derivatives must not be used).
    pub fn is_undefined(&self) -> bool {
        !self.energy_density.is_finite()
    }
}

/// Evaluates `model` at `f` with Lamé parameters `lame`.
pub fn evaluate(model: MaterialModel, f: &Matrix3<f64>, lame: &Lame, want: Want) -> Evaluation {
    match model {
        MaterialModel::Linear => linear::evaluate(f, lame, want),
        MaterialModel::Corotational => isotropic::evaluate(&corotational::Corotational, f, lame, want),
        MaterialModel::StVenantKirchhoff => isotropic::evaluate(&st_venant_kirchhoff::StVenantKirchhoff, f, lame, want),
        MaterialModel::NeoHookean => isotropic::evaluate(&neo_hookean::NeoHookean, f, lame, want),
        MaterialModel::StableNeoHookean => isotropic::evaluate(&stable_neo_hookean::StableNeoHookean, f, lame, want),
        MaterialModel::FixedCorotational => isotropic::evaluate(&fixed_corotational::FixedCorotational, f, lame, want),
        MaterialModel::Arap => isotropic::evaluate(&arap::Arap, f, lame, want),
        MaterialModel::ModifiedNeoHookean => {
            isotropic::evaluate(&modified_neo_hookean::ModifiedNeoHookean, f, lame, want)
        }
    }
}

/// [`evaluate`] with `Want::Energy` or `Want::Stress` at each F of `f`, bit
/// for bit; the models written in F's polar rotation decompose many at once.
pub fn evaluate_stresses(
    model: MaterialModel,
    f: &[Matrix3<f64>],
    lame: &Lame,
    want: Want,
    energies: &mut [f64],
    stresses: &mut [Matrix3<f64>],
) {
    use isotropic::evaluate_stresses_by_rotation as by_rotation;
    match model {
        MaterialModel::Corotational => by_rotation(&corotational::Corotational, f, lame, want, energies, stresses),
        MaterialModel::FixedCorotational => by_rotation(
            &fixed_corotational::FixedCorotational,
            f,
            lame,
            want,
            energies,
            stresses,
        ),
        MaterialModel::Arap => by_rotation(&arap::Arap, f, lame, want, energies, stresses),
        _ => {
            for ((f, energy), stress) in f.iter().zip(energies).zip(stresses) {
                let evaluation = evaluate(model, f, lame, want);
                (*energy, *stress) = (evaluation.energy_density, evaluation.first_piola);
            }
        }
    }
}

/// `model` at a symmetric positive-definite F = S, in z (`symmetric`);
/// None for the linear model (not rotation invariant) and where S is not
/// positive definite.
pub fn evaluate_symmetric(
    model: MaterialModel,
    s: &Matrix3<f64>,
    lame: &Lame,
    want: Want,
) -> Option<symmetric::SymmetricEvaluation> {
    match model {
        MaterialModel::Linear => None,
        MaterialModel::Corotational => symmetric::evaluate(&corotational::Corotational, s, lame, want),
        MaterialModel::StVenantKirchhoff => symmetric::evaluate(&st_venant_kirchhoff::StVenantKirchhoff, s, lame, want),
        MaterialModel::NeoHookean => symmetric::evaluate(&neo_hookean::NeoHookean, s, lame, want),
        MaterialModel::StableNeoHookean => symmetric::evaluate(&stable_neo_hookean::StableNeoHookean, s, lame, want),
        MaterialModel::FixedCorotational => symmetric::evaluate(&fixed_corotational::FixedCorotational, s, lame, want),
        MaterialModel::Arap => symmetric::evaluate(&arap::Arap, s, lame, want),
        MaterialModel::ModifiedNeoHookean => {
            symmetric::evaluate(&modified_neo_hookean::ModifiedNeoHookean, s, lame, want)
        }
    }
}

/// ψ(F) alone.
pub fn energy_density(model: MaterialModel, f: &Matrix3<f64>, lame: &Lame) -> f64 {
    evaluate(model, f, lame, Want::Energy).energy_density
}

/// P(F) alone.
pub fn first_piola(model: MaterialModel, f: &Matrix3<f64>, lame: &Lame) -> Matrix3<f64> {
    evaluate(model, f, lame, Want::Stress).first_piola
}

/// ∂P/∂F alone (optionally projected to positive semi-definite).
pub fn first_piola_derivative(model: MaterialModel, f: &Matrix3<f64>, lame: &Lame, project: bool) -> Matrix9 {
    match evaluate(model, f, lame, Want::Derivative { project }).first_piola_derivative {
        Some(StressDerivative::Matrix(c)) => c,
        Some(StressDerivative::Eigensystem(system)) => system.to_matrix(),
        None => Matrix9::zeros(),
    }
}
