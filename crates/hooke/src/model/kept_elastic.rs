//! The elastic Hessian a term computed at a step's start, kept for that
//! step's own linearisation at the same point.
//!
//! An EigenFit refit needs the elastic stiffness at xₙ (its modes are that
//! stiffness's), and a semi-implicit step linearises at the same xₙ: without
//! this, the element Hessians would be assembled twice. The window is one
//! step's: [`super::Model::begin_step`] opens it, [`super::Model::element_hessian`]
//! keeps what it computes while it is open, and the step's first Hessian
//! closes it, using what was kept when it asks for the same positions, time
//! and projection (to the bit), else discarding it. Nothing is kept outside
//! the window, so terms changed between steps (tearing, a resumed torn state)
//! never meet a stale Hessian.

use std::sync::Mutex;

/// The elastic terms' Hessian values (on the model's pattern), gradient and
/// energy at one point.
pub(crate) struct ElasticAt {
    positions: Vec<f64>,
    time: f64,
    project: bool,
    pub values: Vec<f64>,
    pub gradient: Vec<f64>,
    pub energy: f64,
}

impl ElasticAt {
    pub fn new(
        (positions, time, project): (&[f64], f64, bool),
        values: Vec<f64>,
        gradient: Vec<f64>,
        energy: f64,
    ) -> ElasticAt {
        ElasticAt {
            positions: positions.to_vec(),
            time,
            project,
            values,
            gradient,
            energy,
        }
    }

    fn is_at(&self, positions: &[f64], time: f64, project: bool) -> bool {
        self.project == project
            && self.time.to_bits() == time.to_bits()
            && self.positions.len() == positions.len()
            && self
                .positions
                .iter()
                .zip(positions)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

#[derive(Default)]
enum Window {
    #[default]
    Closed,
    Open,
    Kept(ElasticAt),
}

/// The one-step window of a kept elastic Hessian (see the module's text).
#[derive(Default)]
pub(crate) struct KeptElastic(Mutex<Window>);

impl KeptElastic {
    fn window(&self) -> std::sync::MutexGuard<'_, Window> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A step begins: what its terms compute may be kept (and nothing older is).
    pub fn open(&self) {
        *self.window() = Window::Open;
    }

    /// The terms changed: nothing kept may serve.
    pub fn close(&self) {
        *self.window() = Window::Closed;
    }

    /// Whether a Hessian computed now would be kept.
    pub fn is_open(&self) -> bool {
        !matches!(*self.window(), Window::Closed)
    }

    /// Keeps `at` if the window is open, in place of anything kept before
    /// (a refit's first step also computes the rest stiffness).
    pub fn keep(&self, at: ElasticAt) {
        let mut window = self.window();
        if !matches!(*window, Window::Closed) {
            *window = Window::Kept(at);
        }
    }

    /// Closes the window, returning what was kept if it is at these
    /// positions, time and projection.
    pub fn take_if_at(&self, positions: &[f64], time: f64, project: bool) -> Option<ElasticAt> {
        match std::mem::take(&mut *self.window()) {
            Window::Kept(at) if at.is_at(positions, time, project) => Some(at),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: f64) -> ElasticAt {
        ElasticAt::new((&[x, 1.0], 0.5, true), vec![2.0], vec![3.0, 4.0], 5.0)
    }

    #[test]
    fn kept_only_while_open_and_taken_once_at_the_same_point() {
        let kept = KeptElastic::default();
        kept.keep(at(0.0));
        assert!(
            kept.take_if_at(&[0.0, 1.0], 0.5, true).is_none(),
            "closed: nothing kept"
        );
        kept.open();
        kept.keep(at(7.0));
        kept.keep(at(0.0));
        assert_eq!(
            kept.take_if_at(&[7.0, 1.0], 0.5, true).map(|a| a.energy),
            None,
            "the latest is kept"
        );
        kept.open();
        kept.keep(at(0.0));
        assert_eq!(kept.take_if_at(&[0.0, 1.0], 0.5, true).map(|a| a.energy), Some(5.0));
        assert!(!kept.is_open(), "taking closes");
        assert!(kept.take_if_at(&[0.0, 1.0], 0.5, true).is_none(), "taken once");
    }

    #[test]
    fn another_point_time_or_projection_discards_it() {
        let kept = KeptElastic::default();
        for (x, time, project) in [(1e-300, 0.5, true), (0.0, 0.5 + 1e-16, true), (0.0, 0.5, false)] {
            kept.open();
            kept.keep(at(0.0));
            assert!(kept.take_if_at(&[x, 1.0], time, project).is_none());
            assert!(
                kept.take_if_at(&[0.0, 1.0], 0.5, true).is_none(),
                "discarded, not kept for later"
            );
        }
        kept.open();
        kept.keep(at(0.0));
        kept.close();
        assert!(kept.take_if_at(&[0.0, 1.0], 0.5, true).is_none());
    }

    /// A box under a soft pin (a non-elastic term with a Hessian), bent.
    fn bent_box() -> (crate::model::Model, crate::model::State) {
        let text = r#"
name = "kept"
[simulation]
duration = 0.1
time_step = 0.01
[[bodies]]
mesh = { box = { size = [0.4, 0.1, 0.1], cells = [4, 1, 1] } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[pins]]
select = { box = { min = [-1.0, -1.0, -1.0], max = [0.01, 1.0, 1.0] } }
soft = { stiffness = 1e6 }
"#;
        let scene = crate::scene::Scene::from_text(text, "kept.toml", ".".into()).unwrap();
        let built = scene.build().unwrap();
        let mut state = built.initial_state.clone();
        for (i, x) in state.positions.iter_mut().enumerate() {
            *x += 0.01 * ((i * 7919) % 13) as f64 / 13.0;
        }
        (built.model, state)
    }

    fn hessian_bits(model: &crate::model::Model, x: &[f64], time: f64) -> (Vec<u64>, Vec<u64>, u64) {
        let mut gradient = vec![0.0; x.len()];
        let mut values = vec![0.0; model.pattern().nonzeros()];
        let energy = model
            .hessian(x, time, true, &mut gradient, &mut values, &mut Vec::new())
            .unwrap();
        let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect();
        (bits(&values), bits(&gradient), energy.to_bits())
    }

    #[test]
    fn the_steps_hessian_after_a_kept_one_is_the_assembled_one_to_the_bit() {
        let (model, state) = bent_box();
        let x = &state.positions;
        let assembled = hessian_bits(&model, x, 0.01);
        model.begin_step(&state, 0.01).unwrap();
        model.element_hessian(x, 0.01, true).unwrap();
        assert!(matches!(*model.kept_elastic.window(), Window::Kept(_)));
        assert_eq!(hessian_bits(&model, x, 0.01), assembled);
        assert!(
            matches!(*model.kept_elastic.window(), Window::Closed),
            "the step's first Hessian closes it"
        );
    }

    #[test]
    fn what_is_kept_at_the_point_is_what_the_step_takes_and_elsewhere_it_assembles() {
        let (model, state) = bent_box();
        let x = &state.positions;
        let n = model.pattern().nonzeros();
        let fake = || ElasticAt::new((x, 0.01, true), vec![1.0; n], vec![2.0; x.len()], 3.0);
        // Kept at this point: the elastic part is taken as kept, the soft pin added to it.
        model.begin_step(&state, 0.01).unwrap();
        model.kept_elastic.keep(fake());
        let (values, gradient, energy) = hessian_bits(&model, x, 0.01);
        let value = |b: &u64| f64::from_bits(*b);
        assert!(values.iter().all(|v| value(v) >= 1.0) && gradient.iter().all(|g| value(g) != 0.0));
        assert!(values.iter().any(|v| value(v) > 1.0), "the soft pin is added to it");
        assert!(value(&energy) > 3.0);
        // At another time or point: assembled.
        for (time, shift) in [(0.02, 0.0), (0.01, 1e-9)] {
            let mut y = x.clone();
            y[0] += shift;
            let assembled = hessian_bits(&model, &y, time);
            model.begin_step(&state, 0.01).unwrap();
            model.kept_elastic.keep(fake());
            assert_eq!(hessian_bits(&model, &y, time), assembled);
        }
    }
}
