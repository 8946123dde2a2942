//! Vector kernels of the hot loops, compiled also for AVX2 and AVX-512 and
//! chosen at run time (the crate itself targets baseline x86-64, which has
//! only 128-bit vectors). Every variant performs the same operations in the
//! same order (no fused multiply-add), so results are identical bit for bit
//! whichever the processor runs.

/// Runs `$body` (an expression over the function's arguments) with the
/// widest vector instructions the processor has.
macro_rules! dispatch {
    ($(#[$meta:meta])* $vis:vis $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) -> $ret {
            #[inline(always)]
            fn portable($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                unsafe fn avx512($($arg: $ty),*) -> $ret { portable($($arg),*) }
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) -> $ret { portable($($arg),*) }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the processor has the instructions just checked for.
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: as above.
                    return unsafe { avx2($($arg),*) };
                }
            }
            portable($($arg),*)
        }
    };
}
pub(crate) use dispatch;

/// A stored number read as f64: a factor kept in single precision is
/// widened as it is read.
pub(crate) trait Widen: Copy + Send + Sync {
    fn widen(self) -> f64;
}

impl Widen for f64 {
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
}

impl Widen for f32 {
    #[inline(always)]
    fn widen(self) -> f64 {
        f64::from(self)
    }
}

/// aᵀb with eight partial sums (a sequential sum cannot be vectorised):
/// for kernels that inline it into their own dispatched body. Every
/// instruction set gives the same bits.
#[inline(always)]
pub(crate) fn dot_in_lanes<T: Widen>(a: &[T], b: &[f64]) -> f64 {
    let mut partial = [0.0; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x.widen() * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for k in 0..8 {
            partial[k] += x[k].widen() * y[k];
        }
    }
    partial.iter().sum::<f64>() + tail
}

dispatch! {
    // Dot product with eight partial sums.
    pub(crate) dot(a: &[f64], b: &[f64]) -> f64 {
        dot_in_lanes(a, b)
    }
}

dispatch! {
    // The nine dot products of three blocks of g with three blocks of v
    // (each of length q): entry c + 3e is dot(g_e, v_c), bit for bit as
    // `dot` computes it, with each block loaded once for all nine.
    pub(crate) dot3x3(g: &[f64], v: &[f64], q: usize) -> [f64; 9] {
        let whole = q - q % 8;
        let mut partial = [[0.0; 8]; 9];
        for start in (0..whole).step_by(8) {
            for e in 0..3 {
                let x = &g[e * q + start..e * q + start + 8];
                for c in 0..3 {
                    let y = &v[c * q + start..c * q + start + 8];
                    for k in 0..8 {
                        partial[c + 3 * e][k] += x[k] * y[k];
                    }
                }
            }
        }
        std::array::from_fn(|i| {
            let (c, e) = (i % 3, i / 3);
            let tail: f64 = g[e * q + whole..(e + 1) * q]
                .iter()
                .zip(&v[c * q + whole..(c + 1) * q])
                .map(|(x, y)| x * y)
                .sum();
            partial[i].iter().sum::<f64>() + tail
        })
    }
}

dispatch! {
    // out = w₀ a + w₁ b + w₂ c (all of out's length).
    pub(crate) combine3(out: &mut [f64], a: &[f64], b: &[f64], c: &[f64], w: [f64; 3]) -> () {
        let n = out.len();
        let (a, b, c) = (&a[..n], &b[..n], &c[..n]);
        for i in 0..n {
            out[i] = w[0] * a[i] + w[1] * b[i] + w[2] * c[i];
        }
    }
}

dispatch! {
    // y += A x for the symmetric matrix whose lower triangle is given in
    // compressed columns, x and y blocks of `width` vectors stored row by
    // row, so that each matrix entry meets all the vectors at once.
    pub(crate) symmetric_block_product(
        column_starts: &[usize],
        row_indices: &[usize],
        values: &[f64],
        x: &[f64],
        width: usize,
        y: &mut [f64]
    ) -> () {
        let mut accumulated = vec![0.0; width];
        for column in 0..column_starts.len() - 1 {
            let x_column = &x[column * width..(column + 1) * width];
            accumulated.fill(0.0);
            for k in column_starts[column]..column_starts[column + 1] {
                let row = row_indices[k];
                let a = values[k];
                for (y, x) in y[row * width..(row + 1) * width].iter_mut().zip(x_column) {
                    *y += a * x;
                }
                if row != column {
                    for (sum, x) in accumulated.iter_mut().zip(&x[row * width..(row + 1) * width]) {
                        *sum += a * x;
                    }
                }
            }
            for (y, sum) in y[column * width..(column + 1) * width].iter_mut().zip(&accumulated) {
                *y += sum;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nine_dot_products_are_those_of_dot_bit_for_bit() {
        for q in [3, 8, 20, 64, 67] {
            let g: Vec<f64> = (0..3 * q).map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0).collect();
            let v: Vec<f64> = (0..3 * q).map(|i| ((i * 53 % 97) as f64 - 48.0) / 3.0).collect();
            let nine = dot3x3(&g, &v, q);
            for e in 0..3 {
                for c in 0..3 {
                    let one = dot(&g[e * q..(e + 1) * q], &v[c * q..(c + 1) * q]);
                    assert_eq!(nine[c + 3 * e].to_bits(), one.to_bits(), "q {q}, block ({c}, {e})");
                }
            }
        }
    }

    /// The baseline build's dot product, bit for bit the reference.
    fn baseline_dot(a: &[f64], b: &[f64]) -> f64 {
        let mut partial = [0.0; 8];
        let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
        let tail: f64 = a_chunks
            .remainder()
            .iter()
            .zip(b_chunks.remainder())
            .map(|(x, y)| x * y)
            .sum();
        for (x, y) in a_chunks.zip(b_chunks) {
            for k in 0..8 {
                partial[k] += x[k] * y[k];
            }
        }
        partial.iter().sum::<f64>() + tail
    }

    #[test]
    fn every_variant_gives_the_baseline_bits() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for n in 0..200 {
            let a: Vec<f64> = (0..n).map(|_| next() * 1e3).collect();
            let b: Vec<f64> = (0..n).map(|_| next()).collect();
            assert_eq!(dot(&a, &b).to_bits(), baseline_dot(&a, &b).to_bits(), "length {n}");
        }
    }

    #[test]
    fn kernels_equal_their_plain_definitions() {
        let a: Vec<f64> = (0..37).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..37).map(|i| (i as f64 * 1.3).cos()).collect();
        let c: Vec<f64> = (0..37).map(|i| 1.0 / (1.0 + i as f64)).collect();
        let plain: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-12);
        let mut out = vec![0.0; 37];
        combine3(&mut out, &a, &b, &c, [2.0, -0.75, 0.5]);
        for i in 0..37 {
            assert_eq!(out[i], 2.0 * a[i] + -0.75 * b[i] + 0.5 * c[i]);
        }
    }
}
