//! Second-order forward differentiation for the small closed forms of
//! contact (a squared distance of up to 12 coordinates): a number carries its
//! value, gradient and Hessian, and the arithmetic applies the product and
//! quotient rules to all three. Exact to rounding, with no expression to
//! derive by hand; the cost (N² per product) is that of the closed forms'
//! own Hessians written out, for N = 12.

use nalgebra::SMatrix;

/// A value with its gradient and Hessian with respect to N variables.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Jet<const N: usize> {
    pub value: f64,
    pub gradient: [f64; N],
    pub hessian: SMatrix<f64, N, N>,
}

impl<const N: usize> Jet<N> {
    /// A constant.
    pub fn constant(value: f64) -> Self {
        Jet {
            value,
            gradient: [0.0; N],
            hessian: SMatrix::zeros(),
        }
    }

    /// Variable `index` at `value`.
    pub fn variable(index: usize, value: f64) -> Self {
        let mut jet = Jet::constant(value);
        jet.gradient[index] = 1.0;
        jet
    }

    /// 1 / self.
    pub fn recip(&self) -> Self {
        let inverse = 1.0 / self.value;
        let square = inverse * inverse;
        let mut out = Jet::constant(inverse);
        for i in 0..N {
            out.gradient[i] = -self.gradient[i] * square;
        }
        // (1/a)'' = −a''/a² + 2 a'a'ᵀ/a³.
        for i in 0..N {
            for j in 0..N {
                out.hessian[(i, j)] =
                    -self.hessian[(i, j)] * square + 2.0 * self.gradient[i] * self.gradient[j] * square * inverse;
            }
        }
        out
    }
}

impl<const N: usize> std::ops::Add for Jet<N> {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        let mut out = self;
        out.value += other.value;
        for i in 0..N {
            out.gradient[i] += other.gradient[i];
        }
        out.hessian += other.hessian;
        out
    }
}

impl<const N: usize> std::ops::Sub for Jet<N> {
    type Output = Self;
    fn sub(self, other: Self) -> Self {
        self + other * -1.0
    }
}

impl<const N: usize> std::ops::Mul<f64> for Jet<N> {
    type Output = Self;
    fn mul(self, factor: f64) -> Self {
        let mut out = self;
        out.value *= factor;
        for g in &mut out.gradient {
            *g *= factor;
        }
        out.hessian *= factor;
        out
    }
}

impl<const N: usize> std::ops::Mul for Jet<N> {
    type Output = Self;
    fn mul(self, other: Self) -> Self {
        let mut out = Jet::constant(self.value * other.value);
        for i in 0..N {
            out.gradient[i] = self.gradient[i] * other.value + other.gradient[i] * self.value;
        }
        // (ab)'' = a''b + ab'' + a'b'ᵀ + b'a'ᵀ.
        for i in 0..N {
            for j in 0..N {
                out.hessian[(i, j)] = self.hessian[(i, j)] * other.value
                    + other.hessian[(i, j)] * self.value
                    + self.gradient[i] * other.gradient[j]
                    + other.gradient[i] * self.gradient[j];
            }
        }
        out
    }
}

impl<const N: usize> std::ops::Div for Jet<N> {
    type Output = Self;
    // a / b = a · (1/b): the quotient rule through the reciprocal's.
    #[allow(clippy::suspicious_arithmetic_impl)]
    fn div(self, other: Self) -> Self {
        self * other.recip()
    }
}

/// A 3-vector of jets.
pub(crate) type JetVector<const N: usize> = [Jet<N>; 3];

/// The coordinates of `points` as variables 0 … 3·len − 1, in order.
pub(crate) fn variables<const N: usize>(points: &[nalgebra::Vector3<f64>]) -> Vec<JetVector<N>> {
    points
        .iter()
        .enumerate()
        .map(|(p, point)| std::array::from_fn(|k| Jet::variable(3 * p + k, point[k])))
        .collect()
}

pub(crate) fn sub<const N: usize>(a: &JetVector<N>, b: &JetVector<N>) -> JetVector<N> {
    std::array::from_fn(|k| a[k] - b[k])
}

pub(crate) fn dot<const N: usize>(a: &JetVector<N>, b: &JetVector<N>) -> Jet<N> {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn cross<const N: usize>(a: &JetVector<N>, b: &JetVector<N>) -> JetVector<N> {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
