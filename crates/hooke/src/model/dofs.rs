//! The map between all degrees of freedom and the free ones (pinned components removed).

/// Which DOFs are unknowns at a given time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DofMap {
    /// For each DOF, its index among the free ones (None when pinned).
    pub free_index: Vec<Option<usize>>,
    /// The free DOFs in increasing order.
    pub free_dofs: Vec<usize>,
    /// Which pins were active; two maps of one model with the same key are the same map.
    pub active_pins: Vec<bool>,
}

impl DofMap {
    /// The map with the listed DOFs pinned.
    pub fn new(dof_count: usize, pinned_dofs: impl Iterator<Item = usize>, active_pins: Vec<bool>) -> Self {
        let mut pinned = vec![false; dof_count];
        for dof in pinned_dofs {
            pinned[dof] = true;
        }
        let mut free_index = vec![None; dof_count];
        let mut free_dofs = Vec::with_capacity(dof_count);
        for (dof, &is_pinned) in pinned.iter().enumerate() {
            if !is_pinned {
                free_index[dof] = Some(free_dofs.len());
                free_dofs.push(dof);
            }
        }
        DofMap {
            free_index,
            free_dofs,
            active_pins,
        }
    }

    /// The number of free DOFs: the unknowns of a step.
    pub fn free_count(&self) -> usize {
        self.free_dofs.len()
    }

    /// The free entries of a full vector.
    pub fn gather(&self, full: &[f64]) -> Vec<f64> {
        self.free_dofs.iter().map(|&d| full[d]).collect()
    }

    /// The free entries of a full vector, written into `free`.
    pub fn gather_into(&self, full: &[f64], free: &mut [f64]) {
        assert_eq!(free.len(), self.free_dofs.len());
        for (slot, &d) in free.iter_mut().zip(&self.free_dofs) {
            *slot = full[d];
        }
    }

    /// Writes free values into a full vector (pinned entries are left alone).
    pub fn scatter(&self, free: &[f64], full: &mut [f64]) {
        for (&d, &value) in self.free_dofs.iter().zip(free) {
            full[d] = value;
        }
    }
}

/// The full pattern restricted to the free DOFs of one [`DofMap`]: the pattern
/// of the matrices an implicit step factorises, and where each of its entries
/// comes from in the full pattern.
#[derive(Debug)]
pub struct Restriction {
    /// The lower-triangle sparsity pattern over the free DOFs.
    pub pattern: std::sync::Arc<crate::linalg::LowerPattern>,
    /// For each entry of `pattern`, its position in the full pattern.
    pub source: Vec<usize>,
}

impl Restriction {
    /// Restricts the model's `full` pattern to the free DOFs of `dofs`.
    pub fn new(full: &crate::linalg::LowerPattern, dofs: &DofMap) -> Restriction {
        let (pattern, source) = full.restrict(&dofs.free_index);
        Restriction {
            pattern: std::sync::Arc::new(pattern),
            source,
        }
    }

    /// The free part of Σ wₖ Aₖ for full-pattern matrices Aₖ, into `values`.
    pub fn load(&self, terms: &[(f64, &[f64])], values: &mut [f64]) {
        for (value, &k) in values.iter_mut().zip(&self.source) {
            *value = terms.iter().map(|(w, a)| w * a[k]).sum();
        }
    }
}
