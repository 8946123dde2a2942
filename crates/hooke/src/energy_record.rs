//! The energies and momenta of one state of a model: a row of a run's
//! energies table, whatever stepped to it.

use crate::model::{Model, State};
use crate::output::EnergyRecord;

/// Energies and momenta of a state.
pub fn energy_record(model: &Model, state: &State) -> EnergyRecord {
    let kinetic = model.kinetic_energy(&state.velocities);
    let parts = model.energies(&state.positions, state.time);
    let (linear, angular) = model.momentum(&state.positions, &state.velocities);
    EnergyRecord {
        time: state.time,
        kinetic,
        elastic: parts.elastic,
        gravitational: parts.gravitational,
        penalty: parts.contact,
        total: kinetic + parts.elastic + parts.gravitational + parts.contact,
        dissipated: 0.0,
        linear_momentum: linear.into(),
        angular_momentum: angular.into(),
        max_penetration: crate::model::max_penetration(model.obstacles(), &state.positions, model.dimension()),
        constraint_gap: None,
        contact: model.barrier_contact().map(|contact| {
            let report = contact.report(&state.positions);
            crate::output::ContactRecord {
                smallest_distance: report.smallest_distance,
                active_pairs: report.active_pairs,
            }
        }),
    }
}
