//! Sets of M-orthonormal vectors kept with their M-images, so that M-inner
//! products against them need no further product with M (the eigensolver's
//! search spaces and locked pairs, SIERE's Rayleigh–Ritz bases).

use super::kernels::dot;

/// M-orthonormal vectors with their M-images.
#[derive(Clone, Debug, Default)]
pub struct MOrthonormal {
    /// The vectors q, M-orthonormal: qᵢᵀ M qⱼ = δᵢⱼ.
    pub vectors: Vec<Vec<f64>>,
    /// Their M-images M q, in the same order.
    pub mass_vectors: Vec<Vec<f64>>,
}

impl MOrthonormal {
    /// The number of vectors.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    /// Whether it holds no vector.
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// Removes from `w` its M-components along these vectors.
    pub fn project_out(&self, w: &mut [f64]) {
        for (q, mass_q) in self.vectors.iter().zip(&self.mass_vectors) {
            axpy_in_place(w, -dot(mass_q, w), q);
        }
    }

    /// Makes `v` M-orthogonal to `others` and to this set (classical
    /// Gram–Schmidt, twice), M-normalises it and appends it. False, leaving the
    /// set as it was, when `v` lies (numerically) in the span already.
    pub fn append(
        &mut self,
        mut v: Vec<f64>,
        others: &[&MOrthonormal],
        mass_times: impl Fn(&[f64]) -> Vec<f64>,
    ) -> bool {
        let before = dot(&v, &mass_times(&v)).sqrt();
        for _ in 0..2 {
            for set in others {
                set.project_out(&mut v);
            }
            self.project_out(&mut v);
        }
        let mass_v = mass_times(&v);
        let length = dot(&v, &mass_v).sqrt();
        if !(length.is_finite() && length > 1e-10 * before) {
            return false;
        }
        self.vectors.push(v.iter().map(|x| x / length).collect());
        self.mass_vectors.push(mass_v.iter().map(|x| x / length).collect());
        true
    }
}

/// y ← y + a x.
pub(crate) fn axpy_in_place(y: &mut [f64], a: f64, x: &[f64]) {
    y.iter_mut().zip(x).for_each(|(yi, xi)| *yi += a * xi);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_vectors_are_m_orthonormal_and_dependent_ones_are_refused() {
        let mass = [1.0, 2.0, 3.0, 4.0];
        let mass_times = |x: &[f64]| x.iter().zip(&mass).map(|(x, m)| x * m).collect::<Vec<f64>>();
        let mut first = MOrthonormal::default();
        assert!(first.append(vec![1.0, 1.0, 0.0, 0.0], &[], mass_times));
        let mut second = MOrthonormal::default();
        assert!(second.append(vec![1.0, 0.0, 1.0, 0.5], &[&first], mass_times));
        assert!(second.append(vec![0.3, -1.0, 2.0, 1.0], &[&first], mass_times));
        assert!(!second.append(vec![2.0, 2.0, 0.0, 0.0], &[&first], mass_times));
        let all: Vec<&Vec<f64>> = first.vectors.iter().chain(&second.vectors).collect();
        let all_mass: Vec<&Vec<f64>> = first.mass_vectors.iter().chain(&second.mass_vectors).collect();
        for (i, a) in all.iter().enumerate() {
            for (j, mb) in all_mass.iter().enumerate() {
                let expected = if i == j { 1.0 } else { 0.0 };
                assert!((dot(a, mb) - expected).abs() < 1e-12);
            }
        }
        assert!((dot(&[1.0; 11], &[2.0; 11]) - 22.0).abs() < 1e-12);
    }
}
