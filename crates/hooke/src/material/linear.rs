//! Small-strain linear elasticity: ψ = μ‖ε‖² + λ/2 tr(ε)², ε = sym(F) − I.
//! Quadratic in F, so ∂P/∂F is constant; it is positive semi-definite for every
//! valid (E, ν), so projection changes nothing.

use super::{vec_index, Evaluation, Lame, Matrix9, StressDerivative, Want};
use nalgebra::Matrix3;

pub fn evaluate(f: &Matrix3<f64>, lame: &Lame, want: Want) -> Evaluation {
    let identity = Matrix3::identity();
    let strain = (f + f.transpose()) * 0.5 - identity;
    let trace = strain.trace();
    let energy_density = lame.mu * strain.norm_squared() + 0.5 * lame.lambda * trace * trace;
    let first_piola = if want == Want::Energy {
        Matrix3::zeros()
    } else {
        strain * (2.0 * lame.mu) + identity * (lame.lambda * trace)
    };
    let first_piola_derivative = want
        .derivative()
        .map(|_| StressDerivative::Matrix(elasticity_tensor(lame)));
    Evaluation {
        energy_density: if f.iter().all(|x| x.is_finite()) {
            energy_density
        } else {
            f64::INFINITY
        },
        first_piola,
        first_piola_derivative,
    }
}

/// C[(a,b),(c,d)] = μ(δac δbd + δad δbc) + λ δab δcd.
fn elasticity_tensor(lame: &Lame) -> Matrix9 {
    let mut c = Matrix9::zeros();
    for a in 0..3 {
        for b in 0..3 {
            c[(vec_index(a, b), vec_index(a, b))] += lame.mu;
            c[(vec_index(a, b), vec_index(b, a))] += lame.mu;
            c[(vec_index(a, a), vec_index(b, b))] += lame.lambda;
        }
    }
    c
}
