//! Volume preservation, a projective constraint (Liu 2018 thesis, §6.2, the SL(3)
//! projection, Fig. 6.2): ψ = k/2 ‖F − p(F)‖² where p(F) = U diag(q) Vᵀ is the
//! closest deformation whose volume ratio det p = q₁q₂q₃ lies in [min, max]
//! (min = max = 1 is SL(3)). Volumes inside the range cost nothing.
//!
//! **The projection.** With c = clamp(σ₁σ₂σ₃, min, max), q minimises ‖q − σ‖²
//! subject to q₁q₂q₃ = c. Its optimality conditions, qᵢ − σᵢ = ν c / qᵢ for
//! one multiplier ν, give each qᵢ as a root of qᵢ² − σᵢqᵢ − νc = 0. Writing the
//! component with the smallest σ as t, ν c = t (t − σ_min), and every other
//! component is qᵢ(t) = (σᵢ + √(σᵢ² + 4 t (t − σ_min)))/2. The volume
//! q₁q₂q₃(t) runs from below c to above it across a bracket of t (compressed:
//! t from max(σ_min, 0) upward; stretched: t from 0 to σ_min), so a safeguarded
//! Newton iteration on t finds it to rounding. An inverted element (σ_min < 0)
//! is projected to positive stretches: its constraint pushes it back through
//! zero volume, which is what a volume constraint is for.
//!
//! **The weight.** k = 3κ = 3λ + 2μ, so that a small volume change J − 1
//! costs κ/2 (J − 1)², the bulk modulus' energy (‖F − p‖² ≈ (J − 1)²/3 near
//! rest); k is also the Laplacian weight local/global needs.

use super::isotropic::StretchEnergy;
use super::Lame;
use nalgebra::{Matrix3, Matrix4, Vector3};

/// k/2 ‖σ − q(σ)‖², q the projection onto volume ratios in [min, max].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeEnergy {
    /// The weight k, Pa.
    pub stiffness: f64,
    /// The smallest volume ratio det F that costs nothing.
    pub min: f64,
    /// The largest volume ratio det F that costs nothing.
    pub max: f64,
}

/// The projection of stretches σ onto q₁q₂q₃ = c, with its multiplier ν c.
#[derive(Clone, Copy, Debug)]
pub struct VolumeProjection {
    /// The projected stretches q, whose product is c.
    pub stretches: Vector3<f64>,
    /// ν c = t (t − σ_min), from qᵢ − σᵢ = ν c / qᵢ.
    pub scaled_multiplier: f64,
}

impl VolumeEnergy {
    /// The target volume ratio, or None when det = σ₁σ₂σ₃ is already in range.
    fn target(&self, s: &Vector3<f64>) -> Option<f64> {
        let volume = s.x * s.y * s.z;
        let target = volume.clamp(self.min, self.max);
        (target != volume).then_some(target)
    }
}

/// The stretches with product `target` (> 0) closest to `s`.
pub fn project_volume(s: &Vector3<f64>, target: f64) -> VolumeProjection {
    let smallest = (0..3).min_by(|&a, &b| s[a].total_cmp(&s[b])).unwrap_or(0);
    let s_min = s[smallest];
    let at = |t: f64| -> (Vector3<f64>, f64) {
        let shift = 4.0 * t * (t - s_min);
        let mut q = Vector3::zeros();
        let mut log_derivative = 0.0;
        for i in 0..3 {
            if i == smallest {
                q[i] = t;
                log_derivative += 1.0 / t;
            } else {
                let root = (s[i] * s[i] + shift).max(0.0).sqrt();
                q[i] = 0.5 * (s[i] + root);
                if root > 0.0 {
                    log_derivative += (2.0 * t - s_min) / root / q[i];
                }
            }
        }
        (q, log_derivative)
    };
    let residual = |q: &Vector3<f64>| (q.x * q.y * q.z).ln() - target.ln();
    // A bracket [low, high] with the volume below the target at low, above at high.
    let (mut low, mut high) = if s.x * s.y * s.z < target {
        let low = s_min.max(0.0);
        let mut high = low.max(1e-3 * s.amax()).max(f64::MIN_POSITIVE);
        while residual(&at(high).0) < 0.0 && high < 1e300 {
            high *= 2.0;
        }
        (low, high)
    } else {
        (0.0, s_min)
    };
    let mut t = 0.5 * (low + high);
    for _ in 0..200 {
        let (q, log_derivative) = at(t);
        let r = residual(&q);
        if r.abs() <= 1e-15 {
            break;
        }
        if r < 0.0 {
            low = t;
        } else {
            high = t;
        }
        let newton = t - r / log_derivative;
        t = if newton > low && newton < high && log_derivative.is_finite() {
            newton
        } else {
            0.5 * (low + high)
        };
        if high - low <= 1e-16 * high {
            break;
        }
    }
    VolumeProjection {
        stretches: at(t).0,
        scaled_multiplier: t * (t - s_min),
    }
}

/// ∂q/∂σ of the projection, from differentiating its optimality conditions
/// qᵢ − σᵢ − ν ∂ᵢ(q₁q₂q₃) = 0 and q₁q₂q₃ = c (a 4×4 linear system).
fn projection_derivative(projection: &VolumeProjection) -> Matrix3<f64> {
    let q = projection.stretches;
    let volume = q.x * q.y * q.z;
    let nu = projection.scaled_multiplier / volume;
    let gradient = Vector3::new(q.y * q.z, q.x * q.z, q.x * q.y);
    let mut system = Matrix4::zeros();
    for i in 0..3 {
        for j in 0..3 {
            let second = if i == j { 0.0 } else { q[3 - i - j] };
            system[(i, j)] = if i == j { 1.0 } else { 0.0 } - nu * second;
        }
        system[(i, 3)] = -gradient[i];
        system[(3, i)] = gradient[i];
    }
    match system.try_inverse() {
        Some(inverse) => inverse.fixed_view::<3, 3>(0, 0).into_owned(),
        None => Matrix3::zeros(),
    }
}

impl StretchEnergy for VolumeEnergy {
    fn energy(&self, s: &Vector3<f64>, _lame: &Lame) -> f64 {
        match self.target(s) {
            Some(target) => 0.5 * self.stiffness * (s - project_volume(s, target).stretches).norm_squared(),
            None => 0.0,
        }
    }

    /// k (σ − q): the derivative of q drops out because σ − q is normal to
    /// the constraint surface at q.
    fn gradient(&self, s: &Vector3<f64>, _lame: &Lame) -> Vector3<f64> {
        match self.target(s) {
            Some(target) => (s - project_volume(s, target).stretches) * self.stiffness,
            None => Vector3::zeros(),
        }
    }

    /// k (I − ∂q/∂σ) outside the range, 0 inside: C¹ energy, Hessian jumps
    /// at the limits.
    fn hessian(&self, s: &Vector3<f64>, _lame: &Lame) -> Matrix3<f64> {
        match self.target(s) {
            Some(target) => {
                let derivative = projection_derivative(&project_volume(s, target));
                (Matrix3::identity() - derivative) * self.stiffness
            }
            None => Matrix3::zeros(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stretches(seed: &mut u64) -> Vector3<f64> {
        let mut next = || {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (*seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut s = Vector3::new(0.4 + 1.4 * next(), 0.4 + 1.4 * next(), 0.4 + 1.4 * next());
        s.as_mut_slice().sort_by(|a, b| b.total_cmp(a));
        if next() < 0.15 {
            s.z = -s.z; // inverted
        }
        s
    }

    /// det q = c to rounding, and q is the closest such point: no point of the
    /// constraint surface sampled near it is closer to σ.
    #[test]
    fn the_projection_meets_the_volume_and_is_closest() {
        let mut seed = 3;
        for _ in 0..300 {
            let s = stretches(&mut seed);
            for target in [0.9, 1.0, 1.1] {
                let q = project_volume(&s, target).stretches;
                assert!(((q.x * q.y * q.z) / target - 1.0).abs() < 1e-12, "{s} → {q}");
                let distance = (q - s).norm();
                for a in -4..=4 {
                    for b in -4..=4 {
                        let (x, y) = (q.x * (1.0 + 0.01 * a as f64), q.y * (1.0 + 0.01 * b as f64));
                        let other = Vector3::new(x, y, target / (x * y));
                        assert!(
                            (other - s).norm() >= distance - 1e-12,
                            "{s}: {other} is closer than {q}"
                        );
                    }
                }
            }
        }
    }

    /// Gradient and Hessian against central differences of the energy and
    /// gradient, away from the range limits.
    #[test]
    fn derivatives_match_finite_differences() {
        let energy = VolumeEnergy {
            stiffness: 3.0,
            min: 0.95,
            max: 1.05,
        };
        let lame = Lame { mu: 0.0, lambda: 0.0 };
        let mut seed = 11;
        let mut checked = 0;
        for _ in 0..300 {
            let s = stretches(&mut seed);
            let volume = s.x * s.y * s.z;
            if (volume - 0.95).abs() < 1e-3 || (volume - 1.05).abs() < 1e-3 {
                continue;
            }
            let h = 1e-6;
            let gradient = energy.gradient(&s, &lame);
            let hessian = energy.hessian(&s, &lame);
            for i in 0..3 {
                let (mut plus, mut minus) = (s, s);
                plus[i] += h;
                minus[i] -= h;
                let fd = (energy.energy(&plus, &lame) - energy.energy(&minus, &lame)) / (2.0 * h);
                assert!(
                    (fd - gradient[i]).abs() < 1e-6 * (1.0 + gradient.amax()),
                    "{s}: {fd} vs {gradient}"
                );
                let fd = (energy.gradient(&plus, &lame) - energy.gradient(&minus, &lame)) / (2.0 * h);
                for j in 0..3 {
                    assert!(
                        (fd[j] - hessian[(j, i)]).abs() < 1e-5 * (1.0 + hessian.amax()),
                        "{s}: column {i}: {fd} vs {hessian}"
                    );
                }
            }
            checked += 1;
        }
        assert!(checked > 250);
    }

    /// Near rest, ψ ≈ κ/2 (J − 1)² with k = 3κ: the bulk modulus' energy.
    #[test]
    fn small_volume_changes_cost_the_bulk_energy() {
        let k: f64 = 3.0;
        let energy = VolumeEnergy {
            stiffness: k,
            min: 1.0,
            max: 1.0,
        };
        let lame = Lame { mu: 0.0, lambda: 0.0 };
        for s in [
            Vector3::<f64>::new(1.001, 1.0, 1.0),
            Vector3::new(0.999, 0.9995, 1.0002),
        ] {
            let j = s.x * s.y * s.z;
            let bulk = 0.5 * (k / 3.0) * (j - 1.0).powi(2);
            assert!((energy.energy(&s, &lame) / bulk - 1.0).abs() < 1e-2);
        }
    }
}
