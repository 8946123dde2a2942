//! The map between all 3n degrees of freedom and the free ones (pinned vertices removed).

/// Which DOFs are unknowns at a given time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DofMap {
    /// For each of the 3n DOFs, its index among the free ones (None when pinned).
    pub free_index: Vec<Option<usize>>,
    /// The free DOFs in increasing order.
    pub free_dofs: Vec<usize>,
    /// Which pins were active; two maps with the same key are the same map.
    pub active_pins: Vec<bool>,
}

impl DofMap {
    pub fn new(dof_count: usize, pinned_vertices: impl Iterator<Item = usize>, active_pins: Vec<bool>) -> Self {
        let mut pinned = vec![false; dof_count];
        for v in pinned_vertices {
            pinned[3 * v..3 * v + 3].iter_mut().for_each(|p| *p = true);
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

    pub fn free_count(&self) -> usize {
        self.free_dofs.len()
    }

    /// The free entries of a full vector.
    pub fn gather(&self, full: &[f64]) -> Vec<f64> {
        self.free_dofs.iter().map(|&d| full[d]).collect()
    }

    /// Writes free values into a full vector (pinned entries are left alone).
    pub fn scatter(&self, free: &[f64], full: &mut [f64]) {
        for (&d, &value) in self.free_dofs.iter().zip(free) {
            full[d] = value;
        }
    }
}
