//! What energy terms carry from step to step, kept in a checkpoint so that a
//! resumed run takes the same steps as one never interrupted (EigenFit's
//! warm start and last modes; see [`EnergyTerm::history`]).

use super::{EnergyTerm, Model};
use crate::error::{HookeError, Result};

/// One term's history, with the term's index and name to check it against
/// the model it is given back to.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TermHistory {
    /// The term's index among the model's terms.
    pub term: usize,
    /// The term's name, checked against the term it is given back to.
    pub name: String,
    /// What the term carries between steps, as its `history` gave it.
    pub history: serde_json::Value,
}

impl Model {
    /// Each term's [`EnergyTerm::history`] that is not `Null`.
    pub fn term_histories(&self) -> Vec<TermHistory> {
        self.terms()
            .iter()
            .enumerate()
            .map(|(term, t)| TermHistory {
                term,
                name: t.name(),
                history: t.history(),
            })
            .filter(|h| !h.history.is_null())
            .collect()
    }

    /// Gives each term back its history (resuming a run); the terms must be
    /// those that wrote it.
    pub fn restore_term_histories(&self, histories: &[TermHistory]) -> Result<()> {
        for h in histories {
            let term: &dyn EnergyTerm = self
                .terms()
                .get(h.term)
                .map(|t| &**t)
                .filter(|t| t.name() == h.name)
                .ok_or_else(|| HookeError::Solver {
                    reason: format!(
                        "the checkpoint holds a history of term {} ({}), which this model does not have there",
                        h.term, h.name
                    ),
                })?;
            term.restore_history(&h.history)?;
        }
        Ok(())
    }
}
