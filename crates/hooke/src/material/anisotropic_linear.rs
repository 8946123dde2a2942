//! Linear anisotropic elasticity with a full elasticity tensor C (Voigt, see
//! [`super::voigt`]): the material numerical coarsening produces (Kharevych 2010
//! thesis, §4.3.7, eq. 4.5), one tensor per coarse element.
//!
//! Plain: ψ = ½ ε:C:ε with ε = sym(F) − I, so P = C:ε and ∂P/∂F is constant (PSD
//! when C is positive definite). Not rotation invariant.
//!
//! Co-rotated: ε = S − I with S the symmetric factor of F = R S (R a rotation; S
//! from the signed SVD F = U Σ Vᵀ as S = V Σ Vᵀ, so inverted elements stay
//! defined). This is an exact hyperelastic energy, and its derivatives are
//! exact, not the "fixed rotation" stiffness warping: with τ = C:ε in the frame
//! of V (τ' = Vᵀ τ V),
//!   P = U P' Vᵀ,  P'ᵢᵢ = τ'ᵢᵢ,  P'ᵢⱼ = 2σᵢ τ'ᵢⱼ / (σᵢ + σⱼ)  (i ≠ j),
//! from S Y + Y S = τ, P = 2 F Y. For a direction δF, with G = Uᵀ δF V, the
//! rotation and stretch rates are Ω'ᵢⱼ = (Gᵢⱼ − Gⱼᵢ)/(σᵢ + σⱼ) and
//! δS' = G − Ω'Σ, and
//!   Uᵀ δP V = Ω' P' + δQ',  δQ'ᵢᵢ = δτ'ᵢᵢ,
//!   δQ'ᵢⱼ = [δS'ᵢⱼ(τ'ⱼⱼ − τ'ᵢᵢ) + 2σⱼ (δS' Y)ᵢⱼ − 2σᵢ (Y δS')ᵢⱼ + 2σᵢ δτ'ᵢⱼ] / (σᵢ + σⱼ),
//! where Y holds τ'ᵢⱼ/(σᵢ + σⱼ) off the diagonal and zeros on it (the diagonal
//! terms cancel analytically, so flat elements with σᵢ = 0 stay finite). ∂P/∂F is
//! assembled from the nine unit directions and symmetrised; PSD projection
//! clamps its 9×9 eigenvalues. With an isotropic C this is exactly the
//! `corotational` model (tested).

use super::entry::{settings_from, MaterialContext, MaterialEntry, MaterialSource};
use super::voigt::ElasticityTensor;
use super::{project_to_psd, vec_index, Evaluation, Material, MaterialCapabilities, Matrix9, StressDerivative, Want};
use crate::error::{HookeError, Result};
use crate::linalg::signed_svd3;
use nalgebra::{Matrix3, Vector3};
use std::path::Path;
use std::sync::Arc;

/// C with ε = sym(F) − I, or co-rotated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnisotropicLinear {
    /// The elasticity tensor C (Voigt form, engineering shears), Pa.
    pub tensor: ElasticityTensor,
    /// Measure the strain as ε = S − I in the rotated frame (F = R S), which makes the
    /// material rotation invariant; false: ε = sym(F) − I.
    pub corotated: bool,
    /// Mass density, kg/m³.
    pub density: f64,
}

/// Below this relative size, σᵢ + σⱼ is bounded away from zero (an element
/// flattened through inversion, where the rotation rate is unbounded).
const SUM_GAP: f64 = 1e-8;

fn bounded(sum: f64, scale: f64) -> f64 {
    if sum.abs() > SUM_GAP * scale {
        sum
    } else {
        SUM_GAP * scale * if sum < 0.0 { -1.0 } else { 1.0 }
    }
}

fn undefined() -> Evaluation {
    Evaluation {
        energy_density: f64::INFINITY,
        first_piola: Matrix3::zeros(),
        first_piola_derivative: None,
    }
}

impl AnisotropicLinear {
    fn evaluate_plain(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        let strain = (f + f.transpose()) * 0.5 - Matrix3::identity();
        Evaluation {
            energy_density: self.tensor.energy(&strain),
            first_piola: if want == Want::Energy {
                Matrix3::zeros()
            } else {
                self.tensor.stress(&strain)
            },
            first_piola_derivative: want
                .derivative()
                .map(|_| StressDerivative::Matrix(self.tensor.matrix9())),
        }
    }

    fn evaluate_corotated(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        let (u, sigma, v) = signed_svd3(f);
        let stretch = v * Matrix3::from_diagonal(&sigma) * v.transpose();
        let strain = stretch - Matrix3::identity();
        let energy_density = self.tensor.energy(&strain);
        if want == Want::Energy {
            return Evaluation {
                energy_density,
                first_piola: Matrix3::zeros(),
                first_piola_derivative: None,
            };
        }
        let scale = sigma.abs().max().max(1.0);
        let tau = v.transpose() * self.tensor.stress(&strain) * v;
        let mut p_frame = tau;
        let mut y = Matrix3::zeros();
        for i in 0..3 {
            for j in 0..3 {
                if i != j {
                    let sum = bounded(sigma[i] + sigma[j], scale);
                    p_frame[(i, j)] = 2.0 * sigma[i] * tau[(i, j)] / sum;
                    y[(i, j)] = tau[(i, j)] / sum;
                }
            }
        }
        let first_piola = u * p_frame * v.transpose();
        let first_piola_derivative = want.derivative().map(|project| {
            let mut c = Matrix9::zeros();
            for k in 0..3 {
                for l in 0..3 {
                    // G = Uᵀ E_kl V.
                    let g = Matrix3::from_fn(|i, j| u[(k, i)] * v[(l, j)]);
                    let direction = self.corotated_direction(&g, &sigma, &tau, &y, &p_frame, &v, scale);
                    let change = u * direction * v.transpose();
                    for i in 0..3 {
                        for j in 0..3 {
                            c[(vec_index(i, j), vec_index(k, l))] = change[(i, j)];
                        }
                    }
                }
            }
            let c = (c + c.transpose()) * 0.5;
            StressDerivative::Matrix(if project { project_to_psd(&c) } else { c })
        });
        Evaluation {
            energy_density,
            first_piola,
            first_piola_derivative,
        }
    }

    /// Uᵀ δP V for the direction with G = Uᵀ δF V (see the module notes).
    #[allow(clippy::too_many_arguments)]
    fn corotated_direction(
        &self,
        g: &Matrix3<f64>,
        sigma: &Vector3<f64>,
        tau: &Matrix3<f64>,
        y: &Matrix3<f64>,
        p_frame: &Matrix3<f64>,
        v: &Matrix3<f64>,
        scale: f64,
    ) -> Matrix3<f64> {
        let mut omega = Matrix3::zeros();
        for i in 0..3 {
            for j in 0..3 {
                if i != j {
                    omega[(i, j)] = (g[(i, j)] - g[(j, i)]) / bounded(sigma[i] + sigma[j], scale);
                }
            }
        }
        let stretch_rate = g - omega * Matrix3::from_diagonal(sigma);
        let stretch_rate = (stretch_rate + stretch_rate.transpose()) * 0.5;
        let stress_rate = v.transpose() * self.tensor.stress(&(v * stretch_rate * v.transpose())) * v;
        let left = stretch_rate * y;
        let right = y * stretch_rate;
        let mut q_rate = Matrix3::zeros();
        for i in 0..3 {
            for j in 0..3 {
                q_rate[(i, j)] = if i == j {
                    stress_rate[(i, i)]
                } else {
                    (stretch_rate[(i, j)] * (tau[(j, j)] - tau[(i, i)]) + 2.0 * sigma[j] * left[(i, j)]
                        - 2.0 * sigma[i] * right[(i, j)]
                        + 2.0 * sigma[i] * stress_rate[(i, j)])
                        / bounded(sigma[i] + sigma[j], scale)
                };
            }
        }
        omega * p_frame + q_rate
    }
}

impl Material for AnisotropicLinear {
    fn name(&self) -> String {
        if self.corotated {
            "anisotropic_linear (co-rotated)".to_string()
        } else {
            "anisotropic_linear".to_string()
        }
    }

    fn density(&self) -> f64 {
        self.density
    }

    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        if !f.iter().all(|x| x.is_finite()) {
            return undefined();
        }
        if self.corotated {
            self.evaluate_corotated(f, want)
        } else {
            self.evaluate_plain(f, want)
        }
    }

    fn capabilities(&self) -> MaterialCapabilities {
        MaterialCapabilities {
            defined_under_inversion: true,
            rotation_invariant: self.corotated,
            corotated_quadratic: self.corotated,
            projective: false,
        }
    }
}

/// The scene settings: a tensor inline or per element from a file.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    elasticity: Option<Vec<Vec<f64>>>,
    elasticity_file: Option<String>,
    #[serde(default)]
    corotated: bool,
    density: f64,
}

fn parse(_name: &str, table: &toml::Table, context: &MaterialContext) -> Result<MaterialSource> {
    let key = context.key;
    let settings: Settings = settings_from(table, key)?;
    if let Some(reason) = super::parameters::density_problem(settings.density) {
        return Err(HookeError::Material {
            context: key.to_string(),
            reason,
        });
    }
    let make = |tensor: ElasticityTensor| -> Arc<dyn Material> {
        Arc::new(AnisotropicLinear {
            tensor,
            corotated: settings.corotated,
            density: settings.density,
        })
    };
    match (&settings.elasticity, &settings.elasticity_file) {
        (Some(rows), None) => Ok(MaterialSource::Uniform(make(ElasticityTensor::from_rows(
            rows,
            context.dimension,
            &format!("{key}.elasticity"),
        )?))),
        (None, Some(file)) => {
            let path = context.base_directory.join(file);
            let rows = read_tensor_file(&path, context.dimension)?;
            let make_row = |row: TensorRow| -> Arc<dyn Material> {
                Arc::new(AnisotropicLinear {
                    tensor: row.tensor,
                    corotated: settings.corotated,
                    density: row.density.unwrap_or(settings.density),
                })
            };
            Ok(MaterialSource::PerElement {
                path,
                materials: rows.into_iter().map(|r| r.map(make_row)).collect(),
            })
        }
        _ => Err(HookeError::scene(
            key,
            "anisotropic_linear needs exactly one of `elasticity` (the Voigt matrix) and `elasticity_file` (one tensor per element)",
        )),
    }
}

/// One row of a tensor file: the element's tensor, and its own density if the row gives one.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorRow {
    pub tensor: ElasticityTensor,
    pub density: Option<f64>,
}

/// Reads per-element tensors: CSV lines `element, c11, c12, …` with the upper
/// triangle of the Voigt matrix row by row (21 numbers in 3D, 6 in 2D),
/// optionally followed by the element's density (kg/m³; numerical coarsening
/// writes it, so the lumped mass integrates the fine one); `#` starts a
/// comment line, and a first line starting with `element` is a header.
/// Elements are numbered from 0 within their body; each may appear once.
pub fn read_tensor_file(path: &Path, dimension: usize) -> Result<Vec<Option<TensorRow>>> {
    let text = std::fs::read_to_string(path).map_err(|e| HookeError::io(path, e))?;
    let mut tensors: Vec<Option<TensorRow>> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line_number = number + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("element") {
            continue;
        }
        let fail = |reason: String| HookeError::parse(path, Some(line_number), reason);
        let fields: Vec<&str> = trimmed.split(',').map(str::trim).collect();
        let element: usize = fields[0].parse().map_err(|_| {
            fail(format!(
                "the element number {:?} is not a non-negative integer",
                fields[0]
            ))
        })?;
        let mut values = fields[1..]
            .iter()
            .map(|f| f.parse::<f64>().map_err(|_| fail(format!("{f:?} is not a number"))))
            .collect::<Result<Vec<f64>>>()?;
        let entries = if dimension == 2 { 6 } else { 21 };
        if values.len() != entries && values.len() != entries + 1 {
            return Err(fail(format!(
                "element {element}: needs {entries} tensor entries (and optionally a density), got {} numbers",
                values.len()
            )));
        }
        let density = if values.len() == entries + 1 {
            let density = values.pop();
            if let Some(problem) = density.and_then(super::parameters::density_problem) {
                return Err(fail(format!("element {element}: density: {problem}")));
            }
            density
        } else {
            None
        };
        let tensor = ElasticityTensor::from_upper_triangle(&values, dimension, &format!("element {element}"))
            .map_err(|e| fail(e.to_string()))?;
        let row = TensorRow { tensor, density };
        if element >= tensors.len() {
            if element > 100_000_000 {
                return Err(fail(format!("element {element} is beyond any mesh Hooke can hold")));
            }
            tensors.resize(element + 1, None);
        }
        if tensors[element].replace(row).is_some() {
            return Err(fail(format!("element {element} appears twice")));
        }
    }
    Ok(tensors)
}

pub(crate) const ENTRY: MaterialEntry = MaterialEntry {
    names: &["anisotropic_linear"],
    keys: &["elasticity", "elasticity_file", "corotated", "density"],
    summary: "linear anisotropic elasticity: elasticity (Voigt rows xx, yy, zz, yz, xz, xy; 2D: xx, yy, xy) or elasticity_file (one tensor per element), corotated, density",
    parse,
};
