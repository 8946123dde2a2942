//! The deterministic gather from per-element results to global vectors and
//! matrices.
//!
//! Elements are evaluated in parallel, each into its own slot; every global
//! entry then sums its element contributions in a fixed order (the order of the
//! elements), itself in parallel over entries. No floating-point sum depends on
//! how work was split among threads, so results are bit-for-bit identical for
//! any thread count.

use super::kind::packed_index;
use crate::linalg::LowerPattern;
use rayon::prelude::*;

/// Where each global entry finds its element contributions.
#[derive(Clone, Debug)]
pub struct ElementGather {
    dimension: usize,
    /// For Hessian entry k: sources[source_starts[k]..source_starts[k+1]] are
    /// indices e·packed + local packed index into the element matrices.
    hessian_source_starts: Vec<usize>,
    hessian_sources: Sources,
    /// For vertex v: the (element · nodes + local vertex) slots that touch it.
    vertex_source_starts: Vec<usize>,
    vertex_sources: Sources,
}

/// Indices into the per-element results, in 32 bits whenever they fit (a
/// gather reads as many of them as values, and half the bytes keep more of
/// what the next solve reads in the cache), in 64 otherwise.
#[derive(Clone, Debug)]
enum Sources {
    Narrow(Vec<u32>),
    Wide(Vec<usize>),
}

impl Sources {
    fn new(indices: Vec<usize>) -> Sources {
        match indices.iter().all(|&i| u32::try_from(i).is_ok()) {
            true => Sources::Narrow(indices.into_iter().map(|i| i as u32).collect()),
            false => Sources::Wide(indices),
        }
    }
}

/// An index of a source list, read as usize.
trait SourceIndex: Copy + Send + Sync {
    fn at(self) -> usize;
}

impl SourceIndex for u32 {
    #[inline(always)]
    fn at(self) -> usize {
        self as usize
    }
}

impl SourceIndex for usize {
    #[inline(always)]
    fn at(self) -> usize {
        self
    }
}

impl ElementGather {
    /// The gather of elements with `nodes` vertices each (`connectivity` flat,
    /// element by element) into `pattern` over `dimension` DOFs per vertex.
    /// Every element's vertex pairs must be in the pattern.
    pub fn new(connectivity: &[usize], nodes: usize, dimension: usize, pattern: &LowerPattern) -> ElementGather {
        let element_count = connectivity.len() / nodes;
        let local = nodes * dimension;
        let packed = local * (local + 1) / 2;
        let mut contributions: Vec<(usize, usize)> = Vec::with_capacity(element_count * packed);
        for (e, element) in connectivity.chunks(nodes).enumerate() {
            for p in 0..local {
                for q in 0..=p {
                    let r = dimension * element[p / dimension] + p % dimension;
                    let s = dimension * element[q / dimension] + q % dimension;
                    let (row, column) = if r >= s { (r, s) } else { (s, r) };
                    let position = pattern
                        .position(row, column)
                        .expect("every element entry is in the pattern built from the same elements");
                    contributions.push((position, e * packed + packed_index(p, q)));
                }
            }
        }
        // Stable sort by position keeps element order within each entry: a fixed summation order.
        contributions.sort_by_key(|&(position, _)| position);
        let (hessian_source_starts, hessian_sources) = group_by_key(pattern.nonzeros(), contributions);
        let hessian_sources = Sources::new(hessian_sources);

        let vertex_count = pattern.size / dimension;
        let mut vertex_slots = Vec::with_capacity(connectivity.len());
        for (slot, &v) in connectivity.iter().enumerate() {
            vertex_slots.push((v, slot));
        }
        vertex_slots.sort_by_key(|&(v, _)| v);
        let (vertex_source_starts, vertex_sources) = group_by_key(vertex_count, vertex_slots);
        let vertex_sources = Sources::new(vertex_sources);
        ElementGather {
            dimension,
            hessian_source_starts,
            hessian_sources,
            vertex_source_starts,
            vertex_sources,
        }
    }

    /// Sums per-element packed matrices (`elements` flat, element by element)
    /// into `values` on the pattern; `overwrite` replaces every entry instead of
    /// adding to it (entries no element touches become zero).
    pub fn matrices(&self, elements: &[f64], values: &mut [f64], overwrite: bool) {
        match &self.hessian_sources {
            Sources::Narrow(sources) => self.sum_matrices(sources, elements, values, overwrite),
            Sources::Wide(sources) => self.sum_matrices(sources, elements, values, overwrite),
        }
    }

    fn sum_matrices<I: SourceIndex>(&self, sources: &[I], elements: &[f64], values: &mut [f64], overwrite: bool) {
        let starts = &self.hessian_source_starts;
        values
            .par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .for_each(|(k, value)| {
                let sum: f64 = sources[starts[k]..starts[k + 1]].iter().map(|s| elements[s.at()]).sum();
                if overwrite {
                    *value = sum;
                } else {
                    *value += sum;
                }
            });
    }

    /// Sums per-element local vectors (vertex by vertex, `dimension` values each)
    /// into a full vector; `overwrite` as for [`Self::matrices`].
    pub fn vectors(&self, elements: &[f64], out: &mut [f64], overwrite: bool) {
        match &self.vertex_sources {
            Sources::Narrow(sources) => self.sum_vectors(sources, elements, out, overwrite),
            Sources::Wide(sources) => self.sum_vectors(sources, elements, out, overwrite),
        }
    }

    fn sum_vectors<I: SourceIndex>(&self, sources: &[I], elements: &[f64], out: &mut [f64], overwrite: bool) {
        let dimension = self.dimension;
        out.par_chunks_mut(dimension).enumerate().for_each(|(v, slot)| {
            let mut sum = [0.0; 3];
            // A source is the slot element · nodes + local vertex, whose
            // values start at slot · dimension.
            for source in &sources[self.vertex_source_starts[v]..self.vertex_source_starts[v + 1]] {
                let start = source.at() * dimension;
                for a in 0..dimension {
                    sum[a] += elements[start + a];
                }
            }
            for a in 0..dimension {
                if overwrite {
                    slot[a] = sum[a];
                } else {
                    slot[a] += sum[a];
                }
            }
        });
    }
}

/// Groups (key, value) pairs sorted by key into CSR-style (starts, values) over `key_count` keys.
fn group_by_key(key_count: usize, pairs: Vec<(usize, usize)>) -> (Vec<usize>, Vec<usize>) {
    let mut starts = vec![0; key_count + 1];
    for &(key, _) in &pairs {
        starts[key + 1] += 1;
    }
    for k in 0..key_count {
        starts[k + 1] += starts[k];
    }
    (starts, pairs.into_iter().map(|(_, value)| value).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two tetrahedra sharing a face, over three DOFs a vertex.
    fn two_tetrahedra() -> (Vec<usize>, LowerPattern) {
        let connectivity = vec![0, 1, 2, 3, 1, 2, 3, 4];
        let mut columns = vec![Vec::new(); 15];
        for element in connectivity.chunks(4) {
            for &a in element {
                for &b in element {
                    for (i, j) in (0..3).flat_map(|i| (0..3).map(move |j| (i, j))) {
                        let (row, column) = (3 * a + i, 3 * b + j);
                        if row >= column {
                            columns[column].push(row);
                        }
                    }
                }
            }
        }
        columns.iter_mut().for_each(|c| {
            c.sort_unstable();
            c.dedup()
        });
        (connectivity, LowerPattern::from_columns(columns))
    }

    /// The 64-bit source lists, kept for results too large for 32-bit
    /// indices, sum the same entries in the same order as the 32-bit ones.
    #[test]
    fn wide_and_narrow_sources_gather_the_same_bits() {
        let (connectivity, pattern) = two_tetrahedra();
        let narrow = ElementGather::new(&connectivity, 4, 3, &pattern);
        let widen = |sources: &Sources| match sources {
            Sources::Narrow(s) => Sources::Wide(s.iter().map(|&i| i as usize).collect()),
            Sources::Wide(_) => panic!("these indices fit in 32 bits"),
        };
        let wide = ElementGather {
            hessian_sources: widen(&narrow.hessian_sources),
            vertex_sources: widen(&narrow.vertex_sources),
            ..narrow.clone()
        };
        let vectors: Vec<f64> = (0..24).map(|i| (i as f64 * 0.77).sin()).collect();
        let matrices: Vec<f64> = (0..2 * 78).map(|i| (i as f64 * 1.3).cos()).collect();
        let (mut a, mut b) = (vec![1.0; 15], vec![1.0; 15]);
        narrow.vectors(&vectors, &mut a, false);
        wide.vectors(&vectors, &mut b, false);
        assert_eq!(a, b);
        // Vertex 1 sums its slot in each element.
        assert_eq!(a[3], 1.0 + vectors[3] + vectors[12]);
        let (mut a, mut b) = (vec![0.0; pattern.nonzeros()], vec![0.0; pattern.nonzeros()]);
        narrow.matrices(&matrices, &mut a, true);
        wide.matrices(&matrices, &mut b, true);
        assert_eq!(a, b);
        assert!(a.iter().all(|v| *v != 0.0));
    }
}
