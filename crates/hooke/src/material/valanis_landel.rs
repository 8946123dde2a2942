//! Materials in Valanis–Landel form (seed 004 §2.3, eq. 7.12; Xu et al. 2015):
//! ψ(σ) = Σᵢ a(σᵢ) + Σᵢ<ⱼ b(σᵢσⱼ) + c(σ₁σ₂σ₃), with σ the principal stretches.
//! Each of a, b, c is a closed form (a polynomial in x or in log x, the
//! anti-inversion cubic) or a natural cubic spline through control points a
//! scene gives, so new materials are designed by editing curves.
//!
//! Scene models: `valanis_landel` (a, b, c as lists of [stretch, value]
//! control points), `polynomial` (a(x) = μ(x − 1)⁴: stiff at large strain,
//! soft at rest), and `spline_a` / `spline_b` (Neo-Hookean resisting
//! compression, or tension, more strongly; control points below).

use super::entry::{settings_from, MaterialContext, MaterialEntry, MaterialSource};
use super::isotropic::{evaluate, evaluate_at_svd, StretchEnergy};
use super::{Evaluation, Lame, Material, MaterialCapabilities, MaterialParameters, Want};
use crate::error::{HookeError, Result};
use nalgebra::{Matrix3, Vector3};
use std::sync::Arc;

/// A natural cubic spline through control points (x strictly increasing),
/// continued beyond them by its end tangents: C² everywhere, since a natural
/// spline has zero curvature at its ends.
#[derive(Clone, Debug, PartialEq)]
pub struct Spline {
    x: Vec<f64>,
    y: Vec<f64>,
    /// Second derivatives at the control points.
    curvature: Vec<f64>,
    /// 1 / spacing when the stretches are evenly spaced: a point's segment
    /// is then found by a division and a check, not a search.
    even_spacing: Option<f64>,
}

impl Spline {
    /// From [x, value] pairs; `key` names them in errors.
    pub fn new(points: &[[f64; 2]], key: &str) -> Result<Spline> {
        if points.len() < 2 {
            return Err(HookeError::scene(
                key,
                "needs at least two control points [stretch, value]",
            ));
        }
        if points.iter().flatten().any(|v| !v.is_finite()) {
            return Err(HookeError::scene(key, "control points must be finite"));
        }
        if let Some(i) = (1..points.len()).find(|&i| points[i][0] <= points[i - 1][0]) {
            return Err(HookeError::scene(
                format!("{key}[{i}]"),
                format!("stretches must increase: {} after {}", points[i][0], points[i - 1][0]),
            ));
        }
        let x: Vec<f64> = points.iter().map(|p| p[0]).collect();
        let y: Vec<f64> = points.iter().map(|p| p[1]).collect();
        let n = x.len();
        // Tridiagonal system for the interior curvatures (Thomas algorithm).
        let mut curvature = vec![0.0; n];
        if n > 2 {
            let (mut diagonal, mut rhs) = (vec![0.0; n], vec![0.0; n]);
            let h: Vec<f64> = (0..n - 1).map(|i| x[i + 1] - x[i]).collect();
            for i in 1..n - 1 {
                diagonal[i] = 2.0 * (h[i - 1] + h[i]);
                rhs[i] = 6.0 * ((y[i + 1] - y[i]) / h[i] - (y[i] - y[i - 1]) / h[i - 1]);
            }
            for i in 2..n - 1 {
                let factor = h[i - 1] / diagonal[i - 1];
                diagonal[i] -= factor * h[i - 1];
                rhs[i] -= factor * rhs[i - 1];
            }
            for i in (1..n - 1).rev() {
                let above = if i + 1 < n - 1 { h[i] * curvature[i + 1] } else { 0.0 };
                curvature[i] = (rhs[i] - above) / diagonal[i];
            }
        }
        let step = (x[n - 1] - x[0]) / (n - 1) as f64;
        let even = (1..n).all(|i| ((x[i] - x[i - 1]) - step).abs() <= 1e-9 * step);
        Ok(Spline {
            even_spacing: even.then_some(1.0 / step),
            x,
            y,
            curvature,
        })
    }

    /// (value, first, second derivative) at t.
    fn evaluate(&self, t: f64) -> [f64; 3] {
        let n = self.x.len();
        let slope_at = |i: usize, at_right: bool| {
            let (j, h) = if at_right {
                (i - 1, self.x[i] - self.x[i - 1])
            } else {
                (i, self.x[i + 1] - self.x[i])
            };
            let secant = (self.y[j + 1] - self.y[j]) / h;
            if at_right {
                secant + h * (self.curvature[j] + 2.0 * self.curvature[j + 1]) / 6.0
            } else {
                secant - h * (2.0 * self.curvature[j] + self.curvature[j + 1]) / 6.0
            }
        };
        if t <= self.x[0] {
            let slope = slope_at(0, false);
            return [self.y[0] + slope * (t - self.x[0]), slope, 0.0];
        }
        if t >= self.x[n - 1] {
            let slope = slope_at(n - 1, true);
            return [self.y[n - 1] + slope * (t - self.x[n - 1]), slope, 0.0];
        }
        // The last control point at or before t (the search's answer either way).
        let i = match self.even_spacing {
            Some(inverse) => {
                let mut i = (((t - self.x[0]) * inverse) as usize).min(n - 2);
                while i + 1 < n - 1 && self.x[i + 1] <= t {
                    i += 1;
                }
                while i > 0 && self.x[i] > t {
                    i -= 1;
                }
                i
            }
            None => self.x.partition_point(|&x| x <= t).saturating_sub(1).min(n - 2),
        };
        let h = self.x[i + 1] - self.x[i];
        let (a, b) = ((self.x[i + 1] - t) / h, (t - self.x[i]) / h);
        let (m0, m1) = (self.curvature[i], self.curvature[i + 1]);
        let value = a * self.y[i] + b * self.y[i + 1] + ((a * a * a - a) * m0 + (b * b * b - b) * m1) * h * h / 6.0;
        let first = (self.y[i + 1] - self.y[i]) / h + ((1.0 - 3.0 * a * a) * m0 + (3.0 * b * b - 1.0) * m1) * h / 6.0;
        let second = a * m0 + b * m1;
        [value, first, second]
    }
}

/// One of the functions a, b, c.
#[derive(Clone, Debug, PartialEq)]
pub enum Profile {
    Zero,
    /// Σₖ cₖ xᵏ.
    Polynomial(Vec<f64>),
    /// Σₖ cₖ (log x)ᵏ; +∞ for x ≤ 0.
    LogPolynomial(Vec<f64>),
    /// κ/12 ((1 − x)/6)³ for x < 1, else 0: the anti-inversion term St.
    /// Venant–Kirchhoff adds to c (seed 004's code).
    CubicBelowOne(f64),
    Spline(Spline),
}

impl Profile {
    /// (value, first, second derivative) at x.
    fn evaluate(&self, x: f64) -> [f64; 3] {
        match self {
            Profile::Zero => [0.0; 3],
            Profile::Polynomial(c) => polynomial(c, x),
            Profile::LogPolynomial(c) => {
                if x <= 0.0 {
                    return [f64::INFINITY, 0.0, 0.0];
                }
                // d/dx p(log x) = p′/x; d²/dx² = (p″ − p′)/x².
                let [p, dp, ddp] = polynomial(c, x.ln());
                [p, dp / x, (ddp - dp) / (x * x)]
            }
            Profile::CubicBelowOne(kappa) => {
                if x >= 1.0 {
                    return [0.0; 3];
                }
                let u = (1.0 - x) / 6.0;
                let k = kappa / 12.0;
                [k * u * u * u, -k * u * u / 2.0, k * u / 6.0]
            }
            Profile::Spline(spline) => spline.evaluate(x),
        }
    }
}

/// Σₖ cₖ tᵏ with its first two derivatives in t (Horner's scheme).
fn polynomial(c: &[f64], t: f64) -> [f64; 3] {
    let (mut value, mut first, mut second) = (0.0, 0.0, 0.0);
    for &ck in c.iter().rev() {
        second = second * t + first * 2.0;
        first = first * t + value;
        value = value * t + ck;
    }
    [value, first, second]
}

/// ψ(σ) = Σ a(σᵢ) + Σ b(σᵢσⱼ) + c(σ₁σ₂σ₃), shifted so that ψ(I) = 0.
#[derive(Clone, Debug, PartialEq)]
pub struct ValanisLandelEnergy {
    pub a: Profile,
    pub b: Profile,
    pub c: Profile,
}

const PAIRS: [(usize, usize, usize); 3] = [(0, 1, 2), (0, 2, 1), (1, 2, 0)];

impl ValanisLandelEnergy {
    fn raw(&self, s: &Vector3<f64>) -> f64 {
        let a: f64 = (0..3).map(|i| self.a.evaluate(s[i])[0]).sum();
        let b: f64 = PAIRS.iter().map(|&(i, j, _)| self.b.evaluate(s[i] * s[j])[0]).sum();
        a + b + self.c.evaluate(s.product())[0]
    }

    /// The unshifted ψ at σ = (1, 1, 1), [`Self::raw`]'s sums of three
    /// profile values instead of seven.
    fn raw_at_rest(&self) -> f64 {
        let (a, b) = (self.a.evaluate(1.0)[0], self.b.evaluate(1.0)[0]);
        [a; 3].iter().sum::<f64>() + [b; 3].iter().sum::<f64>() + self.c.evaluate(1.0)[0]
    }

    /// a′(1) + 2b′(1) + c′(1): the stress at rest, which must vanish.
    pub fn rest_stress(&self) -> f64 {
        self.a.evaluate(1.0)[1] + 2.0 * self.b.evaluate(1.0)[1] + self.c.evaluate(1.0)[1]
    }
}

impl StretchEnergy for ValanisLandelEnergy {
    fn energy(&self, s: &Vector3<f64>, _lame: &Lame) -> f64 {
        self.raw(s) - self.raw_at_rest()
    }

    /// Each profile evaluated once for both (the value and the slope come
    /// together), instead of once for ψ and once for ∂ψ/∂σ; the sums in
    /// [`Self::raw`]'s and [`StretchEnergy::gradient`]'s order, so that both
    /// paths give the same bits.
    fn energy_and_gradient(&self, s: &Vector3<f64>, _lame: &Lame) -> (f64, Vector3<f64>) {
        let a = [0, 1, 2].map(|i| self.a.evaluate(s[i]));
        let b = PAIRS.map(|(i, j, _)| self.b.evaluate(s[i] * s[j]));
        let [c, dc, _] = self.c.evaluate(s.product());
        let energy = a.iter().map(|a| a[0]).sum::<f64>() + b.iter().map(|b| b[0]).sum::<f64>() + c;
        let mut g = Vector3::from_fn(|i, _| a[i][1]);
        for (&(i, k, _), b) in PAIRS.iter().zip(&b) {
            g[i] += b[1] * s[k];
            g[k] += b[1] * s[i];
        }
        for i in 0..3 {
            g[i] += dc * s[(i + 1) % 3] * s[(i + 2) % 3];
        }
        (energy - self.raw_at_rest(), g)
    }

    fn gradient(&self, s: &Vector3<f64>, _lame: &Lame) -> Vector3<f64> {
        let j = s.product();
        let dc = self.c.evaluate(j)[1];
        let mut g = Vector3::from_fn(|i, _| self.a.evaluate(s[i])[1]);
        for &(i, k, _) in &PAIRS {
            let db = self.b.evaluate(s[i] * s[k])[1];
            g[i] += db * s[k];
            g[k] += db * s[i];
        }
        for i in 0..3 {
            g[i] += dc * s[(i + 1) % 3] * s[(i + 2) % 3];
        }
        g
    }

    fn hessian(&self, s: &Vector3<f64>, _lame: &Lame) -> Matrix3<f64> {
        let j = s.product();
        let [_, dc, ddc] = self.c.evaluate(j);
        let others = |i: usize| s[(i + 1) % 3] * s[(i + 2) % 3];
        let mut h = Matrix3::from_fn(|i, k| {
            let volume = ddc * others(i) * others(k);
            if i == k {
                self.a.evaluate(s[i])[2] + volume
            } else {
                // ∂²J/∂σᵢ∂σₖ is the third stretch.
                volume + dc * s[3 - i - k]
            }
        });
        for &(i, k, _) in &PAIRS {
            let [_, db, ddb] = self.b.evaluate(s[i] * s[k]);
            h[(i, i)] += ddb * s[k] * s[k];
            h[(k, k)] += ddb * s[i] * s[i];
            let cross = ddb * s[i] * s[k] + db;
            h[(i, k)] += cross;
            h[(k, i)] += cross;
        }
        h
    }
}

/// A Valanis–Landel material: its energy and density.
#[derive(Clone, Debug)]
pub struct ValanisLandel {
    pub name: String,
    pub energy: ValanisLandelEnergy,
    pub density: f64,
}

/// The profiles are not Lamé-parametrised; evaluation ignores this.
const NO_LAME: Lame = Lame { mu: 0.0, lambda: 0.0 };

impl Material for ValanisLandel {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn density(&self) -> f64 {
        self.density
    }

    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        evaluate(&self.energy, f, &NO_LAME, want)
    }

    /// The signed SVDs sixteen at a time (the eigen-decompositions of FᵀF in
    /// vector lanes), each element's ψ and P then as [`Material::evaluate`]
    /// gives them, bit for bit.
    fn evaluate_stresses(&self, f: &[Matrix3<f64>], want: Want, energies: &mut [f64], stresses: &mut [Matrix3<f64>]) {
        use crate::linalg::{signed_svd3_lanes, SignedSvd, SVD_LANES};
        let mut start = 0;
        while start < f.len() {
            let end = (start + SVD_LANES).min(f.len());
            let block = &f[start..end];
            let whole = block.len() == SVD_LANES && block.iter().all(|m| m.iter().all(|x| x.is_finite()));
            if let (true, Ok(block)) = (whole, <&[Matrix3<f64>; SVD_LANES]>::try_from(block)) {
                let mut svds: [SignedSvd; SVD_LANES] =
                    [(Matrix3::zeros(), Vector3::zeros(), Matrix3::zeros()); SVD_LANES];
                signed_svd3_lanes(block, &mut svds);
                for (i, (u, sigma, v)) in svds.iter().enumerate() {
                    let evaluation = evaluate_at_svd(&self.energy, u, sigma, v, &NO_LAME, want);
                    (energies[start + i], stresses[start + i]) = (evaluation.energy_density, evaluation.first_piola);
                }
            } else {
                for i in start..end {
                    let evaluation = self.evaluate(&f[i], want);
                    (energies[i], stresses[i]) = (evaluation.energy_density, evaluation.first_piola);
                }
            }
            start = end;
        }
    }

    fn capabilities(&self) -> MaterialCapabilities {
        let undefined = |p: &Profile| matches!(p, Profile::LogPolynomial(_));
        MaterialCapabilities {
            defined_under_inversion: !(undefined(&self.energy.a)
                || undefined(&self.energy.b)
                || undefined(&self.energy.c)),
            rotation_invariant: true,
            corotated_quadratic: false,
            projective: false,
        }
    }
}

impl ValanisLandelEnergy {
    /// Neo-Hookean: a = μ/2 (x² − 1), b = 0, c = −μ log x + λ/2 log² x.
    pub fn neo_hookean(lame: &Lame) -> Self {
        ValanisLandelEnergy {
            a: Profile::Polynomial(vec![-0.5 * lame.mu, 0.0, 0.5 * lame.mu]),
            b: Profile::Zero,
            c: Profile::LogPolynomial(vec![0.0, -lame.mu, 0.5 * lame.lambda]),
        }
    }

    /// St. Venant–Kirchhoff: a = (μ/4 + λ/8)(x² − 1)² − λ/2 (x² − 1),
    /// b = λ/4 (x² − 1), with the anti-inversion term κ/12 ((1 − J)/6)³ in c
    /// when `kappa` > 0.
    pub fn st_venant_kirchhoff(lame: &Lame, kappa: f64) -> Self {
        let q = lame.mu / 4.0 + lame.lambda / 8.0;
        ValanisLandelEnergy {
            // q (x⁴ − 2x² + 1) − λ/2 x² + λ/2.
            a: Profile::Polynomial(vec![q + 0.5 * lame.lambda, 0.0, -2.0 * q - 0.5 * lame.lambda, 0.0, q]),
            b: Profile::Polynomial(vec![-0.25 * lame.lambda, 0.0, 0.25 * lame.lambda]),
            c: if kappa > 0.0 {
                Profile::CubicBelowOne(kappa)
            } else {
                Profile::Zero
            },
        }
    }

    /// Fixed corotated: a = μ (x − 1)², c = λ/2 (x − 1)².
    pub fn fixed_corotated(lame: &Lame) -> Self {
        ValanisLandelEnergy {
            a: Profile::Polynomial(vec![lame.mu, -2.0 * lame.mu, lame.mu]),
            b: Profile::Zero,
            c: Profile::Polynomial(vec![0.5 * lame.lambda, -lame.lambda, 0.5 * lame.lambda]),
        }
    }

    /// Xu et al.'s polynomial material: a = μ (x − 1)⁴, b = c = 0.
    pub fn polynomial(mu: f64) -> Self {
        ValanisLandelEnergy {
            a: Profile::Polynomial(vec![mu, -4.0 * mu, 6.0 * mu, -4.0 * mu, mu]),
            b: Profile::Zero,
            c: Profile::Zero,
        }
    }

    /// Spline A and B: Neo-Hookean stiffened on one side of rest, sampled as
    /// splines. With g = `compression` below 1 and `tension` above it (2 and 1
    /// for A, which resists compression more; 1 and 2 for B, which resists
    /// tension more), the control points at stretches (and J) 0.1, 0.2, …, 3.0
    /// are those of
    ///
    /// a(x) = μ/2 (x² − 1) + (g(x) − 1) μ (x − 1)²,
    /// c(J) = −μ log J + g(J) λ/2 log² J,
    ///
    /// each Neo-Hookean's profile plus a term that is convex, flat at rest and
    /// zero on the unstiffened side, so the rest stiffness is at least
    /// Neo-Hookean's for every Poisson ratio. (Scaling the whole of c instead
    /// would scale −μ log J, negative just above J = 1, and leave the material
    /// unstable at rest.) Beyond the control points the splines continue along
    /// their end tangents.
    pub fn neo_hookean_spline(lame: &Lame, compression: f64, tension: f64) -> Result<Self> {
        let (mu, lambda) = (lame.mu, lame.lambda);
        let side = |x: f64| if x < 1.0 { compression } else { tension };
        let stretches: Vec<f64> = (1..=30).map(|k| 0.1 * k as f64).collect();
        let a: Vec<[f64; 2]> = stretches
            .iter()
            .map(|&x| [x, 0.5 * mu * (x * x - 1.0) + (side(x) - 1.0) * mu * (x - 1.0).powi(2)])
            .collect();
        let c: Vec<[f64; 2]> = stretches
            .iter()
            .map(|&j| {
                let log = j.ln();
                [j, -mu * log + side(j) * 0.5 * lambda * log * log]
            })
            .collect();
        let mut energy = ValanisLandelEnergy {
            a: Profile::Spline(Spline::new(&a, "spline")?),
            b: Profile::Zero,
            c: Profile::Spline(Spline::new(&c, "spline")?),
        };
        // The splines' slopes at 1 are not exactly Neo-Hookean's ±μ. A natural
        // spline reproduces a linear function exactly, so taking r·x from a's
        // control points takes r from its slope everywhere: the rest stays
        // stress-free.
        let residual = energy.rest_stress();
        let a: Vec<[f64; 2]> = a.iter().map(|&[x, value]| [x, value - residual * x]).collect();
        energy.a = Profile::Spline(Spline::new(&a, "spline")?);
        Ok(energy)
    }
}

/// Scene settings of the family: density, and the model's own keys.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    density: f64,
    youngs_modulus: Option<f64>,
    poisson_ratio: Option<f64>,
    a: Option<Vec<[f64; 2]>>,
    b: Option<Vec<[f64; 2]>>,
    c: Option<Vec<[f64; 2]>>,
}

fn parse(name: &str, table: &toml::Table, context: &MaterialContext) -> Result<MaterialSource> {
    let key = context.key;
    let settings: Settings = settings_from(table, key)?;
    let lame = || -> Result<Lame> {
        let parameters = MaterialParameters {
            youngs_modulus: settings
                .youngs_modulus
                .ok_or_else(|| HookeError::scene(format!("{key}.youngs_modulus"), "is missing"))?,
            poisson_ratio: settings
                .poisson_ratio
                .ok_or_else(|| HookeError::scene(format!("{key}.poisson_ratio"), "is missing"))?,
            density: settings.density,
        };
        parameters.validate(key)?;
        Ok(parameters.lame())
    };
    let curves_given = settings.a.is_some() || settings.b.is_some() || settings.c.is_some();
    let energy = match name {
        "valanis_landel" => {
            if settings.youngs_modulus.is_some() || settings.poisson_ratio.is_some() {
                return Err(HookeError::scene(
                    key,
                    "valanis_landel takes curves a, b, c, not youngs_modulus or poisson_ratio",
                ));
            }
            let curve = |points: &Option<Vec<[f64; 2]>>, which: &str| match points {
                None => Ok(Profile::Zero),
                Some(points) => Spline::new(points, &format!("{key}.{which}")).map(Profile::Spline),
            };
            let energy = ValanisLandelEnergy {
                a: curve(&settings.a, "a")?,
                b: curve(&settings.b, "b")?,
                c: curve(&settings.c, "c")?,
            };
            let scale = [&settings.a, &settings.b, &settings.c]
                .iter()
                .filter_map(|p| p.as_ref())
                .flatten()
                .map(|p| p[1].abs())
                .fold(0.0, f64::max)
                .max(f64::MIN_POSITIVE);
            let stress = energy.rest_stress();
            if stress.abs() > 1e-6 * scale {
                return Err(HookeError::scene(
                    key,
                    format!("the rest shape must be free of stress: a′(1) + 2b′(1) + c′(1) = {stress:.6e}, not 0; move the curves' slopes at 1"),
                ));
            }
            energy
        }
        _ if curves_given => {
            return Err(HookeError::scene(
                key,
                format!("{name} takes youngs_modulus and poisson_ratio, not curves a, b, c"),
            ));
        }
        "polynomial" => ValanisLandelEnergy::polynomial(lame()?.mu),
        "spline_a" => ValanisLandelEnergy::neo_hookean_spline(&lame()?, 2.0, 1.0)?,
        "spline_b" => ValanisLandelEnergy::neo_hookean_spline(&lame()?, 1.0, 2.0)?,
        other => {
            return Err(HookeError::scene(
                format!("{key}.model"),
                format!("no Valanis–Landel model {other}"),
            ))
        }
    };
    if !(settings.density.is_finite() && settings.density > 0.0) {
        return Err(HookeError::scene(
            format!("{key}.density"),
            format!("must be positive, got {}", settings.density),
        ));
    }
    Ok(MaterialSource::Uniform(Arc::new(ValanisLandel {
        name: name.to_string(),
        energy,
        density: settings.density,
    })))
}

pub(crate) const ENTRY: MaterialEntry = MaterialEntry {
    names: &["valanis_landel", "polynomial", "spline_a", "spline_b"],
    keys: &["density", "youngs_modulus", "poisson_ratio", "a", "b", "c"],
    summary: "Valanis–Landel materials ψ = Σ a(σᵢ) + Σ b(σᵢσⱼ) + c(J): valanis_landel with spline curves a, b, c \
              ([[stretch, value], …]); polynomial (a = μ(x − 1)⁴), spline_a and spline_b (Neo-Hookean resisting \
              compression or tension twice as much) with youngs_modulus and poisson_ratio; density (kg/m³)",
    parse,
};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// On evenly spaced stretches the segment found by division is the
        /// one the search finds, so values and slopes are bit for bit the
        /// same, at the control points themselves too (where the division
        /// may round to the segment before), and beyond them.
        #[test]
        fn evenly_spaced_splines_find_the_searched_segment(
            values in prop::collection::vec(-5.0..5.0f64, 30),
            k in 0usize..30,
            offset in -0.5..0.5f64,
            at_a_point in any::<bool>(),
        ) {
            let points: Vec<[f64; 2]> = values.iter().enumerate().map(|(i, &v)| [0.1 * (i + 1) as f64, v]).collect();
            let even = Spline::new(&points, "s").unwrap();
            prop_assert!(even.even_spacing.is_some());
            let searched = Spline { even_spacing: None, ..even.clone() };
            let t = if at_a_point { points[k][0] } else { points[k][0] + 0.1 * offset * 3.0 };
            let (a, b) = (even.evaluate(t), searched.evaluate(t));
            for j in 0..3 {
                prop_assert_eq!(a[j].to_bits(), b[j].to_bits(), "t = {}", t);
            }
        }
    }

    /// ψ and ∂ψ/∂σ evaluated together are bit for bit ψ and ∂ψ/∂σ evaluated
    /// apart, b ≠ 0 included, and ψ(I) is exactly 0 either way.
    #[test]
    fn energy_and_gradient_together_equal_them_apart() {
        let lame = Lame { mu: 3e5, lambda: 1.2e6 };
        let with_b = ValanisLandelEnergy {
            b: Profile::Spline(Spline::new(&[[0.5, 3e4], [1.0, 0.0], [1.5, 2e4], [2.2, 9e4]], "b").unwrap()),
            ..ValanisLandelEnergy::st_venant_kirchhoff(&lame, 1e6)
        };
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for energy in [
            ValanisLandelEnergy::neo_hookean_spline(&lame, 2.0, 1.0).unwrap(),
            ValanisLandelEnergy::polynomial(lame.mu),
            ValanisLandelEnergy::st_venant_kirchhoff(&lame, 1e6),
            with_b,
        ] {
            for k in 0..50 {
                let s = match k {
                    0 => Vector3::repeat(1.0),
                    _ => Vector3::from_fn(|_, _| 1.0 + 0.8 * next()),
                };
                let (psi, g) = energy.energy_and_gradient(&s, &lame);
                assert_eq!(psi.to_bits(), energy.energy(&s, &lame).to_bits(), "ψ at {s}");
                let apart = energy.gradient(&s, &lame);
                for i in 0..3 {
                    assert_eq!(g[i].to_bits(), apart[i].to_bits(), "∂ψ/∂σ at {s}");
                }
                if k == 0 {
                    assert_eq!(psi, 0.0);
                }
            }
        }
    }

    /// Unevenly spaced stretches keep the search.
    #[test]
    fn uneven_stretches_are_searched() {
        let spline = Spline::new(&[[0.5, 1.0], [0.9, 0.0], [1.0, 0.0], [2.0, 3.0]], "s").unwrap();
        assert!(spline.even_spacing.is_none());
    }
}
