//! A material of your own, used by every part of Hooke that takes a material:
//! a compressible Mooney–Rivlin solid written in F, with its first Piola
//! stress and, for Newton, the stress derivative by central differences of
//! the stress (simple to write; an analytic derivative is faster). The same
//! bar is then run with Hooke's own Neo-Hookean material, which a
//! Mooney–Rivlin solid with c₂ = 0 reduces to; the two runs agree.
//!
//! ```sh
//! cargo run --release -p hooke --example custom_material
//! ```

use hooke::material::{Matrix9, StressDerivative};
use hooke::prelude::*;
use nalgebra::{Matrix3, Vector3};
use std::sync::Arc;

/// ψ = c₁ (Ī₁ − 3) + c₂ (Ī₂ − 3) + (κ/2)(J − 1)², with Ī₁ = J^(−2/3) tr(FᵀF)
/// and Ī₂ = J^(−4/3) ½[(tr C)² − tr(C²)]: undefined (+∞) for J ≤ 0.
#[derive(Debug)]
struct MooneyRivlin {
    c1: f64,
    c2: f64,
    bulk: f64,
    density: f64,
}

impl MooneyRivlin {
    fn energy(&self, f: &Matrix3<f64>) -> f64 {
        let j = f.determinant();
        if j <= 0.0 {
            return f64::INFINITY;
        }
        let c = f.transpose() * f;
        let i1 = c.trace();
        let i2 = 0.5 * (i1 * i1 - (c * c).trace());
        self.c1 * (j.powf(-2.0 / 3.0) * i1 - 3.0)
            + self.c2 * (j.powf(-4.0 / 3.0) * i2 - 3.0)
            + 0.5 * self.bulk * (j - 1.0).powi(2)
    }

    /// P = ∂ψ/∂F.
    fn stress(&self, f: &Matrix3<f64>) -> Matrix3<f64> {
        let j = f.determinant();
        let cofactor = j * f.try_inverse().expect("J > 0").transpose();
        let c = f.transpose() * f;
        let i1 = c.trace();
        let i2 = 0.5 * (i1 * i1 - (c * c).trace());
        let d_i1 = 2.0 * f;
        let d_i2 = 2.0 * (i1 * f - f * c);
        let d_j = cofactor;
        self.c1 * (j.powf(-2.0 / 3.0) * d_i1 - (2.0 / 3.0) * j.powf(-5.0 / 3.0) * i1 * d_j)
            + self.c2 * (j.powf(-4.0 / 3.0) * d_i2 - (4.0 / 3.0) * j.powf(-7.0 / 3.0) * i2 * d_j)
            + self.bulk * (j - 1.0) * d_j
    }
}

impl Material for MooneyRivlin {
    fn name(&self) -> String {
        "mooney_rivlin".to_string()
    }

    fn density(&self) -> f64 {
        self.density
    }

    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        let energy_density = self.energy(f);
        if !energy_density.is_finite() || want == Want::Energy {
            return Evaluation {
                energy_density,
                first_piola: Matrix3::zeros(),
                first_piola_derivative: None,
            };
        }
        let first_piola = self.stress(f);
        let first_piola_derivative = want.derivative().map(|project| {
            // Column k of ∂P/∂F: the change of vec(P) along vec(F)'s k-th entry.
            let h = 1e-7 * f.norm().max(1.0);
            let mut derivative = Matrix9::zeros();
            for k in 0..9 {
                let mut up = *f;
                let mut down = *f;
                up[k] += h;
                down[k] -= h;
                let column = (self.stress(&up) - self.stress(&down)) / (2.0 * h);
                derivative.set_column(k, &nalgebra::SVector::<f64, 9>::from_column_slice(column.as_slice()));
            }
            let symmetric = 0.5 * (derivative + derivative.transpose());
            StressDerivative::Matrix(match project {
                true => hooke::material::project_to_psd(&symmetric),
                false => symmetric,
            })
        });
        Evaluation {
            energy_density,
            first_piola,
            first_piola_derivative,
        }
    }

    fn capabilities(&self) -> MaterialCapabilities {
        MaterialCapabilities {
            defined_under_inversion: false,
            rotation_invariant: true,
            corotated_quadratic: false,
            projective: false,
        }
    }
}

/// A bar clamped at x = 0 sagging for 20 backward Euler steps; the lowest z.
fn sag(material: MaterialRef) -> Result<f64> {
    let mesh = box_mesh(&BoxMeshOptions {
        origin: Vector3::zeros(),
        size: Vector3::new(0.5, 0.1, 0.1),
        cells: [10, 2, 2],
        tets_per_hex: TetsPerHex::Six,
    })?;
    let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
    let clamped = Selection::Plane {
        point: [0.0; 3],
        normal: [-1.0, 0.0, 0.0],
        tolerance: None,
    }
    .vertices(model.mesh(), "clamp")?;
    model.add_pin(Pin::new(clamped, Motion::Fixed {}, None));
    model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
    let mut integrator = BackwardEuler::new(SolverSettings::default())?;
    integrator.check(&model)?;
    let mut state = model.initial_state();
    for _ in 0..20 {
        integrator.step(&model, &mut state, 0.01)?;
    }
    Ok(state
        .positions
        .iter()
        .skip(2)
        .step_by(3)
        .fold(f64::INFINITY, |a, &z| a.min(z)))
}

fn main() -> Result<()> {
    // Neo-Hookean with Young's modulus E and Poisson ratio ν: μ = E / 2(1 + ν)
    // and, in the split form above, c₁ = μ/2 and κ = the bulk modulus.
    let (youngs_modulus, poisson_ratio, density) = (2e5, 0.3, 1000.0);
    let mu = youngs_modulus / (2.0 * (1.0 + poisson_ratio));
    let bulk = youngs_modulus / (3.0 * (1.0 - 2.0 * poisson_ratio));
    let ours = |c2: f64| -> MaterialRef {
        Arc::new(MooneyRivlin {
            c1: 0.5 * mu,
            c2,
            bulk,
            density,
        })
    };
    let modified_neo_hookean = IsotropicMaterial::shared(
        MaterialModel::ModifiedNeoHookean,
        &MaterialParameters {
            youngs_modulus,
            poisson_ratio,
            density,
        },
    );
    let reference = sag(modified_neo_hookean)?;
    let neo_hookean_limit = sag(ours(0.0))?;
    let stiffer = sag(ours(0.5 * mu))?;
    println!("lowest z after 0.2 s: Hooke's modified Neo-Hookean {reference:.6} m");
    println!("                      Mooney-Rivlin, c2 = 0        {neo_hookean_limit:.6} m");
    println!("                      Mooney-Rivlin, c2 = mu/2     {stiffer:.6} m (stiffer: sags less)");
    Ok(())
}
