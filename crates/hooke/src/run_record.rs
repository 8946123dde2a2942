//! What a run records besides its frames: the totals over its steps (Newton
//! iterations, residuals, split steps, timings) and the energies and momenta
//! of a state. The run loop, its checkpoints and its divergence watch all
//! read these; none of them owns them.

use crate::integrate::StepReport;
use crate::numbers::tidy;

/// Totals over the steps of a run.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct StepStatistics {
    /// Steps taken.
    pub steps: usize,
    /// Minimiser iterations summed over the steps (force evaluations for explicit methods).
    pub total_iterations: usize,
    /// The most iterations any one step took.
    pub max_iterations: usize,
    /// The largest residual ‖∇Φ‖∞ at the start of a step's last iteration.
    pub max_residual: f64,
    /// Line-search step-length halvings, over all steps.
    pub line_search_reductions: usize,
    /// Factorisations of an indefinite matrix that needed a diagonal shift, over all steps.
    pub shifted_factorizations: usize,
    /// Steps that were split in two (or further) because the minimiser failed at
    /// the full step: they were taken with smaller sub-steps.
    pub split_steps: usize,
    /// The end time of the first split step.
    pub first_split_at: Option<f64>,
    /// Steps whose minimiser stalled at rounding level above the tolerance.
    pub steps_short_of_tolerance: usize,
    /// The end time of the first step short of the tolerance.
    pub first_short_at: Option<f64>,
    /// The largest final increment of a step's minimiser, as a fraction of the
    /// body's size: comparable with `[solver] tolerance`.
    pub max_relative_increment: f64,
    /// Elements (springs or finite elements) torn so far, and when the first tore.
    #[serde(default)]
    pub torn_elements: usize,
    /// The end time of the step in which the first element tore, s (None: nothing tore).
    #[serde(default)]
    pub first_tear_at: Option<f64>,
    /// Barrier contact: the smallest distance between two primitives (or a
    /// vertex and a plane) at the end of any step, m (None: no pair came
    /// within d̂, or no contact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_closest_approach: Option<f64>,
    /// Barrier contact: the most pairs within d̂ at the end of any step.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contact_most_pairs: usize,
    /// Seconds spent evaluating energies, forces and Hessians, over all steps.
    pub assembly_seconds: f64,
    /// Seconds spent in linear solves and factorisations, over all steps.
    pub solve_seconds: f64,
    /// Seconds spent in the steps in all (assembly and solves included).
    pub step_seconds: f64,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl StepStatistics {
    /// Adds what barrier contact looked like at the end of a step: its
    /// smallest distance within d̂ (∞ when none) and its pairs.
    pub(crate) fn add_contact(&mut self, smallest_distance: f64, pairs: usize) {
        if smallest_distance.is_finite() {
            let closest = self.contact_closest_approach.get_or_insert(smallest_distance);
            *closest = closest.min(smallest_distance);
        }
        self.contact_most_pairs = self.contact_most_pairs.max(pairs);
    }

    /// Adds the report of the step that ended at `time`.
    pub(crate) fn add(&mut self, report: &StepReport, time: f64) {
        self.steps += 1;
        self.total_iterations += report.iterations;
        self.max_iterations = self.max_iterations.max(report.iterations);
        self.max_residual = self.max_residual.max(report.residual);
        self.line_search_reductions += report.line_search_reductions;
        self.shifted_factorizations += report.shifted_factorizations;
        if report.halvings > 0 {
            self.split_steps += 1;
            self.first_split_at.get_or_insert(time);
        }
        if report.short_of_tolerance {
            self.steps_short_of_tolerance += 1;
            self.first_short_at.get_or_insert(time);
        }
        self.max_relative_increment = self.max_relative_increment.max(report.relative_increment);
        if report.torn_elements > 0 {
            self.torn_elements += report.torn_elements;
            self.first_tear_at.get_or_insert(time);
        }
        self.assembly_seconds += report.assembly_seconds;
        self.solve_seconds += report.solve_seconds;
        self.step_seconds += report.total_seconds;
    }
}

impl StepStatistics {
    /// What a user must know about how the steps were solved: steps that were
    /// split, and steps that stopped short of the tolerance.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(time) = self.first_tear_at {
            notes.push(format!(
                "{} elements tore (the first at t = {}); the energy they held is counted as dissipated",
                self.torn_elements,
                tidy(time)
            ));
        }
        if let Some(time) = self.first_split_at {
            notes.push(format!(
                "{} of {} steps were split into sub-steps because the full step failed (the solver did not converge, or a linearised step inverted an element; the first ending at t = {}); their results are those of the smaller steps (for implicit integrators, [solver] max_step_halvings = 0 makes such a step fail instead)",
                self.split_steps,
                self.steps,
                tidy(time)
            ));
        }
        if let Some(time) = self.first_short_at {
            notes.push(format!(
                "{} of {} steps stopped short of [solver] tolerance (the first ending at t = {}): Newton stalled at rounding level, with final increments up to {:.2e} of the body's size; the tolerance is below what rounding allows for this problem ([solver] stagnation = \"fail\" makes such a step fail instead)",
                self.steps_short_of_tolerance,
                self.steps,
                tidy(time),
                self.max_relative_increment
            ));
        }
        notes
    }
}

pub use crate::energy_record::energy_record;
