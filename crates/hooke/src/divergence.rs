//! Catching a run that has become unstable while its numbers are still finite:
//! an explicit method past its stability limit multiplies the energy every step,
//! and without a check a run reaches 1e81 J and keeps writing frames as if
//! nothing were wrong.
//!
//! After each step the run compares the total energy E = kinetic + elastic +
//! gravitational + penalty with the start. Two tests:
//! - when nothing does work on the body (no moving pins, no loads, no
//!   time-dependent terms; gravity is inside E), E cannot grow: growth beyond
//!   [`GROWTH_FACTOR`] times the energy the scene can account for, which is also
//!   most of the energy in motion (so it is energy created, not exchanged), is
//!   divergence;
//! - for every run, an energy in motion [`MAGNITUDE_FACTOR`] times larger than
//!   anything the scene can account for is divergence, whatever did work.
//!
//! "The energy the scene can account for" is the larger of a static scale (mass
//! times gravity times size, initial kinetic and elastic energy, the kinetic
//! energy of moving pins) and the largest energy in motion seen in a trusted
//! state (one whose energy was not created). Dissipative and conservative
//! methods stay far inside both tests; the midpoint rules' few-percent
//! nonlinear error (see `implicit_midpoint.rs`) does too.

use crate::model::{Model, Motion, State};
use crate::output::EnergyRecord;

/// Energy created beyond this many times the accountable scale, with no work
/// done on the body, is divergence.
pub const GROWTH_FACTOR: f64 = 10.0;

/// Energy in motion beyond this many times the accountable scale is divergence
/// even where pins or loads do work.
pub const MAGNITUDE_FACTOR: f64 = 1e8;

/// A mixed solver whose stretch unknowns are further than this from the
/// stretches of its positions, relatively, at some point has lost the body:
/// the energy it records (ψ at the unknowns) no longer describes the
/// positions. Steps cut to one iteration stay near 1% on the scenes of
/// `scenes/` (largest 1.9% on a bar with a 10⁵ stiffness contrast spun at
/// 20 rad/s); a spin fifty times faster lost its angular momentum at 90%.
pub const CONSTRAINT_GAP_LIMIT: f64 = 0.5;

/// Watches the energies of a run, step by step.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DivergenceWatch {
    initial_total: f64,
    initial_gravitational: f64,
    /// The static energy scale of the scene, J.
    scale: f64,
    /// Whether pins, loads or time-dependent terms do work on the body.
    work_input: bool,
    /// The largest energy in motion of a trusted state, J.
    trusted: f64,
}

impl DivergenceWatch {
    /// The watch of a run from `start`, whose energies are `record`.
    pub fn new(model: &Model, start: &State, record: &EnergyRecord) -> DivergenceWatch {
        let masses = model.mass().lumped();
        let total_mass: f64 = masses.iter().sum();
        let dimension = model.dimension();
        let points: Vec<&[f64]> = start.positions.chunks(dimension).collect();
        let size = (0..dimension)
            .map(|axis| {
                let (low, high) = points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                    (l.min(p[axis]), h.max(p[axis]))
                });
                (high - low).max(0.0).powi(2)
            })
            .sum::<f64>()
            .sqrt();
        let pin_kinetic: f64 = model
            .pins()
            .iter()
            .filter(|p| p.motion != Motion::Fixed {})
            .flat_map(|p| p.vertices.iter().map(move |&v| (p, v)))
            .map(|(pin, v)| {
                let rest = &model.mesh().vertices()[v];
                let speed = pin.motion.velocity(rest, 0.0).norm();
                0.5 * masses[v] * speed * speed
            })
            .sum::<f64>()
            + model
                .terms()
                .iter()
                .map(|t| t.driven_kinetic_energy(masses))
                .sum::<f64>();
        // A floor for a scene at rest with nothing acting: rounding-level energy
        // must not count as growth (a speed of 1 µm/s over the whole mass).
        let floor = 0.5 * total_mass * 1e-12;
        // Loads (forces, tractions, a ramped gravity) may do work of about their
        // size times the body's: sampled at a few times, as they may ramp or
        // oscillate (the magnitude test allows 10⁸ times the scale anyway).
        let mut force = vec![0.0; model.dof_count()];
        let load_work = [0.0, 0.37, 1.9, 7.3, 1e6]
            .iter()
            .map(|&time| {
                model.external_force(time, &mut force);
                force.iter().map(|f| f.abs()).sum::<f64>() * size
            })
            .fold(0.0, f64::max);
        let scale = (total_mass * model.gravity().norm() * size
            + load_work
            + motion_energy(record, record.gravitational)
            + pin_kinetic)
            .max(floor);
        let work_input = model.does_work_on_the_body();
        DivergenceWatch {
            initial_total: record.total,
            initial_gravitational: record.gravitational,
            scale,
            work_input,
            trusted: 0.0,
        }
    }

    /// Why the state with this energy record has diverged, or None.
    pub fn check(&mut self, record: &EnergyRecord) -> Option<String> {
        let fields = [
            record.kinetic,
            record.elastic,
            record.gravitational,
            record.penalty,
            record.total,
        ];
        if fields.iter().any(|v| !v.is_finite()) {
            return Some(format!(
                "the energies are not finite (kinetic {}, elastic {}, gravitational {})",
                record.kinetic, record.elastic, record.gravitational
            ));
        }
        // A NaN gap is past the limit too.
        if let Some(gap) = record
            .constraint_gap
            .filter(|g| g.largest.is_nan() || g.largest > CONSTRAINT_GAP_LIMIT)
        {
            return Some(format!(
                "the mixed solver's stretch unknowns are {:.0}% away from the stretches of the positions at one point (the limit is {:.0}%): the step is too far from converged for its energy to describe the body; raise [solver] iterations or use a smaller time step",
                100.0 * gap.largest,
                100.0 * CONSTRAINT_GAP_LIMIT
            ));
        }
        let in_motion = motion_energy(record, self.initial_gravitational);
        let created = record.total - self.initial_total;
        let accountable = self.scale.max(self.trusted);
        if !self.work_input && created > GROWTH_FACTOR * accountable && created > 0.5 * in_motion {
            return Some(format!(
                "the total energy grew from {:.3e} J to {:.3e} J with no work done on the body ({:.0}× the {:.3e} J the scene accounts for): the integration is unstable; use a smaller time step or an implicit integrator",
                self.initial_total,
                record.total,
                created / accountable,
                accountable
            ));
        }
        if in_motion > MAGNITUDE_FACTOR * accountable {
            return Some(format!(
                "the energy in motion reached {in_motion:.3e} J, {MAGNITUDE_FACTOR:.0e}× the {accountable:.3e} J the scene accounts for: the integration is unstable; use a smaller time step or an implicit integrator"
            ));
        }
        if created <= 0.1 * in_motion.max(self.scale) {
            self.trusted = self.trusted.max(in_motion);
        }
        None
    }
}

/// Kinetic + elastic + penalty energy + the change of gravitational energy
/// from the start, in either direction: the energy in motion.
fn motion_energy(record: &EnergyRecord, initial_gravitational: f64) -> f64 {
    record.kinetic + record.elastic + record.penalty + (record.gravitational - initial_gravitational).abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kinetic: f64, elastic: f64, gravitational: f64) -> EnergyRecord {
        EnergyRecord {
            kinetic,
            elastic,
            gravitational,
            total: kinetic + elastic + gravitational,
            ..EnergyRecord::default()
        }
    }

    fn watch(scale: f64, work_input: bool) -> DivergenceWatch {
        DivergenceWatch {
            initial_total: 0.0,
            initial_gravitational: 0.0,
            scale,
            work_input,
            trusted: 0.0,
        }
    }

    #[test]
    fn exchange_between_energies_is_not_growth() {
        let mut w = watch(1.0, false);
        // A body falling far: kinetic grows as gravitational falls, total constant.
        for k in 1..200 {
            let drop = k as f64 * 10.0;
            assert_eq!(w.check(&record(drop * 0.9, drop * 0.1, -drop)), None, "at {drop}");
        }
    }

    #[test]
    fn created_energy_is_caught_at_the_first_clear_excess() {
        let mut w = watch(1.0, false);
        assert_eq!(w.check(&record(0.5, 0.5, 0.0)), None);
        // Doubling every step: caught once created energy passes 10× the scale.
        let mut energy = 1.0;
        let mut caught = None;
        for step in 0..20 {
            energy *= 2.0;
            if let Some(reason) = w.check(&record(energy, 0.0, 0.0)) {
                caught = Some((step, reason));
                break;
            }
        }
        let (step, reason) = caught.expect("divergence caught");
        assert!(
            energy > 10.0 && energy <= 40.0,
            "caught late, at {energy} (step {step})"
        );
        assert!(reason.contains("no work done"), "{reason}");
    }

    #[test]
    fn work_input_allows_growth_but_not_without_bound() {
        let mut w = watch(1.0, true);
        assert_eq!(
            w.check(&record(0.0, 50.0, 0.0)),
            None,
            "a pin twisting the body stores energy"
        );
        let reason = w.check(&record(1e81, 0.0, 0.0)).expect("1e81 J is divergence");
        assert!(reason.contains("1.000e81"), "{reason}");
    }

    #[test]
    fn non_finite_energies_are_divergence() {
        let mut w = watch(1.0, true);
        assert!(w.check(&record(f64::INFINITY, 0.0, 0.0)).is_some());
        assert!(w.check(&record(0.0, f64::NAN, 0.0)).is_some());
    }
}
