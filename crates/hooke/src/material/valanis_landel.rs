//! Materials in Valanis–Landel form (Liu 2018 thesis, §7.1, eq. 7.12; Xu et al. 2015):
//! ψ(σ) = Σᵢ a(σᵢ) + Σᵢ<ⱼ b(σᵢσⱼ) + c(σ₁σ₂σ₃), with σ the principal stretches.
//! Each of a, b, c is a closed form (a polynomial in x or in log x, the
//! anti-inversion cubic) or a natural cubic spline through control points a
//! scene gives, so new materials are designed by editing curves.
//!
//! Scene models: `valanis_landel` (a, b, c as lists of [stretch, value]
//! control points), `polynomial` (a(x) = μ(x − 1)⁴: stiff at large strain,
//! soft at rest), and `spline_a` / `spline_b` (Neo-Hookean resisting
//! compression, or tension, more strongly; control points below).
//!
//! Energies and stresses alone (the gradient passes of L-BFGS and of
//! explicit steps) take the trace form of `stretch_polynomial`
//! where it serves: b = 0, F neither inverted, nearly flat nor needle-like,
//! and one polynomial that is a on all three stretches (always for a
//! polynomial a; for a spline, while the stretches stay in one of its
//! pieces). Elsewhere, and for every Hessian, the signed SVD serves. The
//! trace form gives ψ(I) = 0 to rounding (a spline piece about rest is
//! centred on a control point, not on 1), the SVD exactly.

use super::entry::{settings_from, MaterialContext, MaterialEntry, MaterialSource};
use super::isotropic::{evaluate, evaluate_at_svd, StretchEnergy};
use super::stretch_polynomial::{entries, horner, stretches, trace_form, Piece, PieceLanes, VolumeLanes};
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
    /// The value at stretch 1, which every energy evaluation subtracts.
    at_rest: f64,
    /// The polynomial on each segment: the line before the first control
    /// point, the cubic of each interval, the line beyond the last.
    pieces: Vec<Piece>,
}

/// Where a point lies: before the first control point, in the segment
/// starting at control point i, or beyond the last.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Segment {
    Before,
    Inner(usize),
    After,
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
        let mut spline = Spline {
            even_spacing: even.then_some(1.0 / step),
            x,
            y,
            curvature,
            at_rest: 0.0,
            pieces: Vec::new(),
        };
        spline.pieces = std::iter::once(Piece::line(spline.x[0], spline.y[0], spline.end_slope(false)))
            .chain((0..n - 1).map(|i| spline.cubic(i)))
            .chain(std::iter::once(Piece::line(
                spline.x[n - 1],
                spline.y[n - 1],
                spline.end_slope(true),
            )))
            .collect();
        spline.at_rest = spline.evaluate(1.0)[0];
        Ok(spline)
    }

    /// The cubic on [xᵢ, xᵢ₊₁], about xᵢ: there the curvature runs linearly
    /// from mᵢ to mᵢ₊₁.
    fn cubic(&self, i: usize) -> Piece {
        let h = self.x[i + 1] - self.x[i];
        let (m0, m1) = (self.curvature[i], self.curvature[i + 1]);
        let slope = (self.y[i + 1] - self.y[i]) / h - h * (2.0 * m0 + m1) / 6.0;
        Piece {
            center: self.x[i],
            coefficients: [self.y[i], slope, 0.5 * m0, (m1 - m0) / (6.0 * h), 0.0],
        }
    }

    /// The piece of the segment t lies in.
    fn piece_at(&self, t: f64) -> &Piece {
        match self.segment(t) {
            Segment::Before => &self.pieces[0],
            Segment::Inner(i) => &self.pieces[i + 1],
            Segment::After => &self.pieces[self.pieces.len() - 1],
        }
    }

    /// The slope at the first (`at_right` false) or last control point.
    fn end_slope(&self, at_right: bool) -> f64 {
        let n = self.x.len();
        let (j, h) = if at_right {
            (n - 2, self.x[n - 1] - self.x[n - 2])
        } else {
            (0, self.x[1] - self.x[0])
        };
        let secant = (self.y[j + 1] - self.y[j]) / h;
        if at_right {
            secant + h * (self.curvature[j] + 2.0 * self.curvature[j + 1]) / 6.0
        } else {
            secant - h * (2.0 * self.curvature[j] + self.curvature[j + 1]) / 6.0
        }
    }

    /// (value, first, second derivative) at t.
    fn evaluate(&self, t: f64) -> [f64; 3] {
        self.piece_at(t).evaluate(t)
    }

    /// The segment t lies in; a control point starts its segment.
    fn segment(&self, t: f64) -> Segment {
        let n = self.x.len();
        if t <= self.x[0] {
            return Segment::Before;
        }
        if t >= self.x[n - 1] {
            return Segment::After;
        }
        // The last control point at or before t (the search's answer either way).
        Segment::Inner(match self.even_spacing {
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
        })
    }

    /// The index in `pieces` of a piece that is the spline at t: for evenly
    /// spaced stretches by a division and a rounding alone (at a control
    /// point it may give the piece on either side, the two agreeing there to
    /// the second derivative).
    #[inline(always)]
    fn piece_index(&self, t: f64) -> usize {
        let n = self.x.len();
        if let Some(inverse) = self.even_spacing {
            return ((t - self.x[0]) * inverse + 1.0).floor().clamp(0.0, n as f64) as usize;
        }
        match self.segment(t) {
            Segment::Before => 0,
            Segment::Inner(i) => i + 1,
            Segment::After => n,
        }
    }
}

/// One of the functions a, b, c.
#[derive(Clone, Debug, PartialEq)]
pub enum Profile {
    /// The zero function: the term is absent.
    Zero,
    /// Σₖ cₖ xᵏ.
    Polynomial(Vec<f64>),
    /// Σₖ cₖ (log x)ᵏ; +∞ for x ≤ 0.
    LogPolynomial(Vec<f64>),
    /// κ/12 ((1 − x)/6)³ for x < 1, else 0: the anti-inversion term St.
    /// Venant–Kirchhoff adds to c (in the code released with Liu et al. 2017, not in the thesis).
    CubicBelowOne(f64),
    /// A natural cubic spline through control points a scene gives.
    Spline(Spline),
}

impl Profile {
    /// (value, first, second derivative) at x.
    fn evaluate(&self, x: f64) -> [f64; 3] {
        match self {
            Profile::Zero => [0.0; 3],
            Profile::Polynomial(c) => horner(c, x),
            Profile::LogPolynomial(c) => {
                if x <= 0.0 {
                    return [f64::INFINITY, 0.0, 0.0];
                }
                // d/dx p(log x) = p′/x; d²/dx² = (p″ − p′)/x².
                let [p, dp, ddp] = horner(c, x.ln());
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

    /// The value at 1 (for a spline, kept from its construction).
    fn at_rest(&self) -> f64 {
        match self {
            Profile::Spline(spline) => spline.at_rest,
            other => other.evaluate(1.0)[0],
        }
    }

    /// The one polynomial that is this profile everywhere, if there is
    /// one: for zero and a polynomial up to degree 4.
    #[inline(always)]
    fn single_piece(&self) -> Option<Piece> {
        match self {
            Profile::Zero => Some(Piece::ZERO),
            Profile::Polynomial(c) => Piece::about_rest(c),
            _ => None,
        }
    }

    /// (value, slope) at x; a spline's from the piece [`Spline::piece_index`]
    /// finds.
    #[inline(always)]
    fn value_and_slope(&self, x: f64) -> [f64; 2] {
        let [value, slope, _] = match self {
            Profile::Spline(spline) => spline.pieces[spline.piece_index(x)].evaluate(x),
            other => other.evaluate(x),
        };
        [value, slope]
    }
}

/// ψ(σ) = Σ a(σᵢ) + Σ b(σᵢσⱼ) + c(σ₁σ₂σ₃), shifted so that ψ(I) = 0.
#[derive(Clone, Debug, PartialEq)]
pub struct ValanisLandelEnergy {
    /// a, of each principal stretch σᵢ.
    pub a: Profile,
    /// b, of each product σᵢσⱼ of two stretches.
    pub b: Profile,
    /// c, of the volume ratio σ₁σ₂σ₃.
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
        let (a, b) = (self.a.at_rest(), self.b.at_rest());
        [a; 3].iter().sum::<f64>() + [b; 3].iter().sum::<f64>() + self.c.at_rest()
    }

    /// a's piece on [lo, hi] (`single`: a's one piece, if it has one), if
    /// one piece covers it.
    #[inline(always)]
    fn piece_over(&self, single: Option<Piece>, lo: f64, hi: f64) -> Option<Piece> {
        match (single, &self.a) {
            (Some(piece), _) => Some(piece),
            (None, Profile::Spline(spline)) => {
                let k = spline.piece_index(lo);
                (k == spline.piece_index(hi)).then(|| spline.pieces[k])
            }
            _ => None,
        }
    }

    /// ψ and, with `stress`, P of L elements by the trace form
    /// ([`super::stretch_polynomial`]) where it serves: b is zero, F is
    /// finite and not inverted, and one polynomial piece is a on every
    /// stretch of F; c takes J = det F. Returns the lanes served (the others
    /// are left as they were); lane by lane the same bits as alone.
    #[inline(always)]
    fn trace_form_lanes<const L: usize>(
        &self,
        f: &[Matrix3<f64>; L],
        stress: bool,
        energies: &mut [f64; L],
        stresses: &mut [Matrix3<f64>; L],
    ) -> [bool; L] {
        let mut served = [false; L];
        let single = self.a.single_piece();
        if self.b != Profile::Zero || (single.is_none() && !matches!(self.a, Profile::Spline(_))) {
            return served;
        }
        let f_entries = entries(f);
        let stretch = stretches(&f_entries);
        let mut pieces = PieceLanes::new();
        let mut volume = VolumeLanes {
            value: [0.0; L],
            slope: [0.0; L],
        };
        for l in 0..L {
            if !stretch.valid[l] {
                continue;
            }
            if let Some(piece) = self.piece_over(single, stretch.lo[l], stretch.hi[l]) {
                served[l] = true;
                pieces.set(l, &piece);
                [volume.value[l], volume.slope[l]] = self.c.value_and_slope(stretch.determinant[l]);
            }
        }
        if !served.contains(&true) {
            return served;
        }
        let (mut lane_energies, mut lane_stresses) = ([0.0; L], [[0.0; L]; 9]);
        let rest = self.raw_at_rest();
        trace_form(
            &f_entries,
            &stretch,
            &pieces,
            &volume,
            rest,
            stress,
            &mut lane_energies,
            &mut lane_stresses,
        );
        for l in 0..L {
            if served[l] {
                energies[l] = lane_energies[l];
                stresses[l] = Matrix3::from_fn(|i, k| lane_stresses[i + 3 * k][l]);
            }
        }
        served
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
    /// `Self::raw`'s and [`StretchEnergy::gradient`]'s order, so that both
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

    /// The trace form (`ValanisLandelEnergy::trace_form_lanes`) where it
    /// serves: with b = 0 and U the stretch of F, Σ a(σᵢ) = tr a(U) with
    /// derivative F U⁻¹ a′(U), sums of powers of U wherever one polynomial
    /// is a on all of F's stretches, exact and without an eigen-decomposition.
    fn direct(&self, f: &Matrix3<f64>, _lame: &Lame, stress: bool) -> Option<(f64, Matrix3<f64>)> {
        let (mut energy, mut first_piola) = ([0.0], [Matrix3::zeros()]);
        let [served] = self.trace_form_lanes(&[*f], stress, &mut energy, &mut first_piola);
        served.then_some((energy[0], first_piola[0]))
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
    /// The scene-file model name it was made from (`valanis_landel`, `polynomial`, …).
    pub name: String,
    /// The energy density in the principal stretches.
    pub energy: ValanisLandelEnergy,
    /// Mass density, kg/m³.
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

    /// Sixteen elements at a time by the trace form, in vector lanes (the
    /// stretches U, then powers of U); those it does not serve have
    /// their signed SVDs found sixteen at a time (the eigen-decompositions
    /// of FᵀF in lanes). Each element's ψ and P are bit for bit what
    /// [`Material::evaluate`] gives it.
    fn evaluate_stresses(&self, f: &[Matrix3<f64>], want: Want, energies: &mut [f64], stresses: &mut [Matrix3<f64>]) {
        debug_assert!(matches!(want, Want::Energy | Want::Stress));
        let finite = |m: &Matrix3<f64>| m.iter().all(|x| x.is_finite());
        let mut queue = SvdQueue {
            indices: [0; crate::linalg::SVD_LANES],
            len: 0,
        };
        let stress = want == Want::Stress;
        for start in (0..f.len()).step_by(LANES) {
            let group = &f[start..(start + LANES).min(f.len())];
            let padded = std::array::from_fn(|l| group.get(l).copied().unwrap_or_else(Matrix3::identity));
            let (mut lane_energies, mut lane_stresses) = ([0.0; LANES], [Matrix3::zeros(); LANES]);
            let served = trace_form_in_lanes(&self.energy, &padded, stress, &mut lane_energies, &mut lane_stresses);
            for (l, fl) in group.iter().enumerate() {
                let i = start + l;
                if served[l] && lane_energies[l].is_finite() {
                    (energies[i], stresses[i]) = (lane_energies[l], lane_stresses[l]);
                } else if served[l] || !finite(fl) {
                    // ψ undefined, or F not finite: as one element alone.
                    self.write(f, i, want, energies, stresses);
                } else {
                    queue.indices[queue.len] = i;
                    queue.len += 1;
                    if queue.len == queue.indices.len() {
                        self.evaluate_by_svd(f, &mut queue, want, energies, stresses);
                    }
                }
            }
        }
        self.evaluate_by_svd(f, &mut queue, want, energies, stresses);
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

/// Elements the trace form takes together: two vector registers of AVX-512
/// an entry, so that one's divisions wait while the other's go through.
const LANES: usize = 16;

crate::linalg::kernels::dispatch! {
    /// [`ValanisLandelEnergy::trace_form_lanes`] of [`LANES`] elements, in
    /// the widest vectors the processor has.
    trace_form_in_lanes(
        energy: &ValanisLandelEnergy,
        f: &[Matrix3<f64>; LANES],
        stress: bool,
        energies: &mut [f64; LANES],
        stresses: &mut [Matrix3<f64>; LANES]
    ) -> [bool; LANES] {
        energy.trace_form_lanes(f, stress, energies, stresses)
    }
}

/// Elements (finite F) waiting for their signed SVDs in lanes.
struct SvdQueue {
    indices: [usize; crate::linalg::SVD_LANES],
    len: usize,
}

impl ValanisLandel {
    /// Element i as [`Material::evaluate`] gives it.
    fn write(&self, f: &[Matrix3<f64>], i: usize, want: Want, energies: &mut [f64], stresses: &mut [Matrix3<f64>]) {
        let evaluation = self.evaluate(&f[i], want);
        (energies[i], stresses[i]) = (evaluation.energy_density, evaluation.first_piola);
    }

    /// Empties the queue through the SVDs in lanes (a partial queue padded
    /// with identities; one element alone), the same bits either way.
    fn evaluate_by_svd(
        &self,
        f: &[Matrix3<f64>],
        queue: &mut SvdQueue,
        want: Want,
        energies: &mut [f64],
        stresses: &mut [Matrix3<f64>],
    ) {
        use crate::linalg::{signed_svd3, signed_svd3_lanes, SignedSvd, SVD_LANES};
        let queued = &queue.indices[..queue.len];
        let mut svds: [SignedSvd; SVD_LANES] = [(Matrix3::zeros(), Vector3::zeros(), Matrix3::zeros()); SVD_LANES];
        match queued {
            [] => return,
            [i] => svds[0] = signed_svd3(&f[*i]),
            _ => {
                let block = std::array::from_fn(|l| queued.get(l).map_or_else(Matrix3::identity, |&i| f[i]));
                signed_svd3_lanes(&block, &mut svds);
            }
        }
        for ((u, sigma, v), &i) in svds.iter().zip(queued) {
            let evaluation = evaluate_at_svd(&self.energy, u, sigma, v, &NO_LAME, want);
            (energies[i], stresses[i]) = (evaluation.energy_density, evaluation.first_piola);
        }
        queue.len = 0;
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
    /// tension more), the control points, a's at stretches 0.1, 0.3, …, 2.9
    /// and c's at J = 0.1, 0.2, …, 3.0, are those of
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
    ///
    /// Rest lies in the middle of a's piece [0.9, 1.1], not on a control
    /// point: while an element's stretches stay within 10 % of rest, one cubic
    /// is a on all three, and its energy and stress come from powers of the
    /// stretch U without an SVD ([`StretchEnergy::direct`]), about half the
    /// cost.
    /// The one-sided stiffening then begins across that piece instead of
    /// at 1 exactly.
    pub fn neo_hookean_spline(lame: &Lame, compression: f64, tension: f64) -> Result<Self> {
        let (mu, lambda) = (lame.mu, lame.lambda);
        let side = |x: f64| if x < 1.0 { compression } else { tension };
        let stretches: Vec<f64> = (0..15).map(|k| 0.1 + 0.2 * k as f64).collect();
        let a: Vec<[f64; 2]> = stretches
            .iter()
            .map(|&x| [x, 0.5 * mu * (x * x - 1.0) + (side(x) - 1.0) * mu * (x - 1.0).powi(2)])
            .collect();
        let c: Vec<[f64; 2]> = (1..=30)
            .map(|k| 0.1 * k as f64)
            .map(|j| {
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
