//! One term of the model's potential energy (elasticity of the elements of one
//! kind, springs, gravity, a load, contact penalties, …): its value, gradient
//! and Hessian, and what it supports. The model's potential is the sum of its
//! terms; implicit steps add inertia and damping to it.

use crate::error::Result;
use crate::linalg::{LowRank, LowerPattern, VertexBlocks};
use crate::material::laplacian_weight::StretchSamples;
use crate::material::MaterialRef;
use nalgebra::Matrix3;

/// Which column of the energies table a term's energy belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermKind {
    /// Stored elastic energy (elements, springs, soft attachments, stiffness corrections).
    Elastic,
    /// The gravitational potential −Σ mᵢ g·xᵢ.
    Gravity,
    /// An external load −f(t)·x. Not counted in the total energy: a load that
    /// varies in time does work that is not a potential.
    Load,
    /// Contact penalties and barriers.
    Contact,
    /// Friction's dissipation potential (lagged at the step's start). Part of
    /// a step's objective, not of the total energy: it is not stored energy.
    Friction,
}

/// A part of a model's terms, for an objective that feels its parts at
/// different positions (implicit midpoint, whose unknown is the step's
/// midpoint but whose contact must hold at the step's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermGroup {
    /// Every term.
    All,
    /// Barrier contact: the terms that bound steps or couple vertices that
    /// change with the positions, friction aside. They put all their
    /// couplings in changing blocks.
    Barrier,
    /// Friction on barrier contact.
    Friction,
    /// Every other term (elasticity, gravity, loads, penalty contact).
    Rest,
}

impl TermGroup {
    /// Whether `term` belongs to this group.
    pub fn holds(self, term: &dyn EnergyTerm) -> bool {
        let friction = term.kind() == TermKind::Friction;
        let barrier = !friction && (term.bounds_steps() || term.changes_couplings());
        match self {
            TermGroup::All => true,
            TermGroup::Barrier => barrier,
            TermGroup::Friction => friction,
            TermGroup::Rest => !friction && !barrier,
        }
    }
}

/// What a term provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermCapabilities {
    /// A Hessian is available (sparse entries, and possibly a low-rank part).
    pub hessian: bool,
    /// `project = true` gives a positive semi-definite Hessian.
    pub psd_projection: bool,
    /// The energy is finite for every configuration (false: +∞ where an
    /// element is inverted, so a state can be undefined).
    pub defined_under_inversion: bool,
    /// It can give a stress-independent, PSD "material" stiffness
    /// ([`EnergyTerm::add_material_stiffness`]).
    pub material_stiffness: bool,
    /// Linear in x: the gradient is a constant force and the Hessian zero.
    pub linear: bool,
    /// It changes with time other than through x (a moving or released soft pin).
    pub time_dependent: bool,
    /// It holds the body in place (a soft pin): the potential then has no rigid
    /// motions, and a static solve is defined without hard pins.
    pub anchoring: bool,
    /// Its Hessian has a low-rank part U S Uᵀ.
    pub low_rank: bool,
    /// Which model dimensions it works in (springs are 3D only).
    pub planar: bool,
}

impl TermCapabilities {
    /// A term with a PSD-projectable Hessian, defined everywhere.
    pub const SMOOTH: TermCapabilities = TermCapabilities {
        hessian: true,
        psd_projection: true,
        defined_under_inversion: true,
        material_stiffness: false,
        linear: false,
        time_dependent: false,
        anchoring: false,
        low_rank: false,
        planar: true,
    };
}

/// Where a term writes its Hessian: values on the model's pattern, and low-rank parts.
pub struct HessianTarget<'a> {
    /// The Hessian's entries on the model's lower-triangle pattern.
    pub values: &'a mut [f64],
    /// Low-rank parts U S Uᵀ of the Hessian kept apart from the pattern (EigenFit's correction).
    pub low_rank: &'a mut Vec<LowRank>,
}

/// One term of the potential.
///
/// A term of your own: ½ k ‖x − r‖², every vertex pulled toward its rest
/// position r. Its Hessian is k on the diagonal, whose positions in the
/// model's sparse pattern it finds when bound. Hung from it alone (no pins),
/// a bar sinks under gravity until the springs carry its weight:
///
/// ```
/// use hooke::linalg::LowerPattern;
/// use hooke::prelude::*;
/// use nalgebra::Vector3;
///
/// struct Anchor {
///     stiffness: f64,
///     rest: Vec<f64>,
///     diagonal: Vec<usize>,
/// }
///
/// impl EnergyTerm for Anchor {
///     fn name(&self) -> String {
///         "anchor".to_string()
///     }
///     fn kind(&self) -> TermKind {
///         TermKind::Elastic
///     }
///     fn capabilities(&self) -> TermCapabilities {
///         TermCapabilities { anchoring: true, ..TermCapabilities::SMOOTH }
///     }
///     fn bind(&mut self, pattern: &LowerPattern, _dimension: usize) {
///         self.diagonal = pattern.diagonal_positions();
///     }
///     fn energy(&self, x: &[f64], _time: f64) -> f64 {
///         let squares: f64 = x.iter().zip(&self.rest).map(|(a, r)| (a - r).powi(2)).sum();
///         0.5 * self.stiffness * squares
///     }
///     fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64], overwrite: bool) -> hooke::Result<f64> {
///         for ((g, a), r) in gradient.iter_mut().zip(x).zip(&self.rest) {
///             let force = self.stiffness * (a - r);
///             *g = if overwrite { force } else { *g + force };
///         }
///         Ok(self.energy(x, time))
///     }
///     fn hessian(
///         &self,
///         x: &[f64],
///         time: f64,
///         _project: bool,
///         gradient: &mut [f64],
///         hessian: &mut HessianTarget,
///         overwrite: bool,
///     ) -> hooke::Result<f64> {
///         if overwrite {
///             hessian.values.fill(0.0);
///         }
///         for &position in &self.diagonal {
///             hessian.values[position] += self.stiffness;
///         }
///         self.gradient(x, time, gradient, overwrite)
///     }
/// }
///
/// # fn main() -> hooke::Result<()> {
/// let mesh = box_mesh(&BoxMeshOptions {
///     origin: Vector3::zeros(),
///     size: Vector3::new(0.4, 0.1, 0.1),
///     cells: [4, 1, 1],
///     tets_per_hex: TetsPerHex::Six,
/// })?;
/// let material = IsotropicMaterial::shared(MaterialModel::Corotational, &MaterialParameters {
///     youngs_modulus: 1e5,
///     poisson_ratio: 0.3,
///     density: 1000.0,
/// });
/// let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
/// model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
/// let stiffness = 50.0;
/// let rest = model.rest_positions();
/// model.add_term(Box::new(Anchor { stiffness, rest: rest.clone(), diagonal: Vec::new() }))?;
///
/// let mut state = model.initial_state();
/// hooke::integrate::StaticEquilibrium::new(SolverSettings::default())?.step(&model, &mut state, 1.0)?;
/// // At rest the springs hold the weight: Σ k (z − z_rest) = −m g.
/// let held: f64 = (0..mesh.vertex_count()).map(|v| stiffness * (state.positions[3 * v + 2] - rest[3 * v + 2])).sum();
/// let weight: f64 = model.mass().lumped().iter().sum::<f64>() * 9.81;
/// assert!((held + weight).abs() < 1e-6 * weight, "{held} against {weight}");
/// # Ok(())
/// # }
/// ```
pub trait EnergyTerm: Send + Sync {
    /// What the term is, for messages ("elasticity of 1200 tetrahedra").
    fn name(&self) -> String;

    /// Which column of the energies table its energy belongs to.
    fn kind(&self) -> TermKind;

    /// What the term provides: Hessians, PSD projection, linearity, time dependence, ….
    fn capabilities(&self) -> TermCapabilities;

    /// Calls `coupled` with each group of vertices whose DOFs the term couples
    /// (an element, a spring), so the Hessian's pattern can hold them. Every
    /// vertex's own block is always in the pattern.
    fn couplings(&self, _coupled: &mut dyn FnMut(&[usize])) {}

    /// The few vertices whose entries the term's Hessian and gradient touch
    /// at `time`, when it touches only those (a held point, a handful of
    /// pins); None: it may touch any. A subspace that reduces the term again
    /// every step then visits those vertices' entries only.
    fn hessian_vertices(&self, _time: f64) -> Option<Vec<usize>> {
        None
    }

    /// Prepares the term for the model's pattern (positions of its entries);
    /// called once the pattern is built, and again if it changes.
    fn bind(&mut self, _pattern: &LowerPattern, _dimension: usize) {}

    /// Whether the term's gathers visit every entry, so it can overwrite the
    /// outputs instead of adding to them (the model then skips clearing them).
    fn overwrites(&self) -> bool {
        false
    }

    /// Whether E changes with time at fixed x (a moving anchor, a ramped or
    /// periodic load): then the term does work on the body and the total
    /// energy is not conserved.
    fn varies_in_time(&self) -> bool {
        self.capabilities().time_dependent
    }

    /// E(x, t); +∞ where the term is undefined.
    fn energy(&self, x: &[f64], time: f64) -> f64;

    /// Adds ∂E/∂x to `gradient` (overwrites it when `overwrite`); returns E.
    /// An error where E is undefined says which element and why.
    fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64>;

    /// Adds the gradient and the Hessian (projected to PSD with `project`) into
    /// `gradient` and `hessian` (overwriting both when `overwrite`); returns E.
    fn hessian(
        &self,
        x: &[f64],
        time: f64,
        project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> Result<f64>;

    /// Adds the stress-independent part of the Hessian (PSD), when the term has
    /// one (`capabilities().material_stiffness`): springs' k ŝŝᵀ, the penalty's
    /// projected Hessian, zero for loads.
    fn add_material_stiffness(&self, _x: &[f64], _time: f64, _values: &mut [f64]) {}

    /// Adds the term's weighted Laplacian L at `time` (Liu 2018 thesis, §8.1): a
    /// constant PSD matrix acting alike on each coordinate, which quasi-Newton
    /// minimisers add to the inertia and factorise once. Terms without one
    /// (loads, contact, gravity) add nothing: their forces still count, in the
    /// gradient, and the line search keeps every step a descent.
    /// Elements fit their materials' stiffness over `stretches`.
    fn add_laplacian(&self, _time: f64, _stretches: &StretchSamples, _values: &mut [f64]) {}

    /// Whether the term is projective (Liu 2018 thesis, ch. 6 and eq. 7.9): its gradient is
    /// L x − J p(x) with L its Laplacian and p a projection, so that one
    /// local/global iteration with M/h² + L minimises it exactly. Linear
    /// terms (gravity, loads) are: their constant force joins the right-hand side.
    fn projective(&self) -> bool {
        self.capabilities().linear
    }

    /// Whether the term's Laplacian is switched on at `time` (a soft pin is
    /// off once released): when this changes, L must be rebuilt.
    fn laplacian_active(&self, _time: f64) -> bool {
        true
    }

    /// Whether the term bounds the steps of minimisers: its admissible set is
    /// not every configuration (intersection-free contact), and
    /// [`EnergyTerm::feasible_step`] says how far a step may go.
    fn bounds_steps(&self) -> bool {
        false
    }

    /// The largest α ∈ [0, 1] such that every x + β dx with 0 ≤ β ≤ α is
    /// admissible for this term; asked only of terms that
    /// [`bound steps`](EnergyTerm::bounds_steps). Every minimiser's steps,
    /// line searches and the step's starting point respect it.
    fn feasible_step(&self, _x: &[f64], _displacement: &[f64]) -> Result<f64> {
        Ok(1.0)
    }

    /// Whether the term couples vertices that change with x (the pairs of
    /// barrier contact): [`EnergyTerm::hessian`] then adds only what lies on
    /// the model's pattern, and the couplings come from
    /// [`EnergyTerm::add_changing_blocks`], which an implicit step adds to
    /// its system, extending the pattern where they need it.
    fn changes_couplings(&self) -> bool {
        false
    }

    /// Adds the Hessian blocks of the couplings present at x (projected to
    /// PSD with `project`), asked only of terms that
    /// [`change their couplings`](EnergyTerm::changes_couplings).
    fn add_changing_blocks(&self, _x: &[f64], _time: f64, _project: bool, _blocks: &mut VertexBlocks) -> Result<()> {
        Ok(())
    }

    /// Edges the outputs draw for this term beside the mesh's elements (springs).
    fn drawn_edges(&self) -> Vec<[usize; 2]> {
        Vec::new()
    }

    /// Called before each step from `state` to `time` with the whole model:
    /// a term that depends on the step's start (a quasi-linearisation, such
    /// as EigenFit's) refreshes itself here.
    fn begin_step(&self, _model: &super::Model, _state: &super::State, _time: f64) -> Result<()> {
        Ok(())
    }

    /// Called after the step's solve number `round` (1, 2, …) ended at x (the
    /// positions contact sees: the step's end): a term that lags what it knew
    /// at the step's start (friction's normal forces and tangent planes) may
    /// take it again at x and return true to have the step solved again.
    fn update_lag(&self, _model: &super::Model, _x: &[f64], _round: usize) -> Result<bool> {
        Ok(false)
    }

    /// Moves what this term prescribes for the step under way (a moving
    /// obstacle) as far toward its place at the step's end as the positions
    /// x (3 per vertex) allow; true when it is there. The step's solve
    /// alternates these moves with minimisations until every term is (see
    /// integrate/implicit.rs). Terms that read another's motion follow it
    /// here (friction, after the barrier).
    fn advance_motion(&self, _model: &super::Model, _x: &[f64]) -> Result<bool> {
        Ok(true)
    }

    /// What [`EnergyTerm::begin_step`] carries from one step to the next
    /// that a resumed run needs to take the same steps (EigenFit's warm
    /// start); `Null` when nothing.
    fn history(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// Takes back what [`EnergyTerm::history`] gave, on a term built afresh
    /// from the same scene.
    fn restore_history(&self, history: &serde_json::Value) -> Result<()> {
        match history {
            serde_json::Value::Null => Ok(()),
            _ => Err(crate::error::HookeError::Solver {
                reason: format!(
                    "the term {} keeps no history, but the checkpoint holds one",
                    self.name()
                ),
            }),
        }
    }

    /// The kinetic energy the term gives the body by moving it (a soft pin
    /// that turns or translates drags its vertices along at its speed), with
    /// `masses` the lumped vertex masses: divergence checks count it as
    /// energy the scene accounts for.
    fn driven_kinetic_energy(&self, _masses: &[f64]) -> f64 {
        0.0
    }

    /// The term's elements can tear (springs, finite elements).
    fn as_tearable(&self) -> Option<&dyn super::tearing::Tearable> {
        None
    }

    /// The term as elements with materials, if it is one.
    fn as_elasticity(&self) -> Option<&dyn ElasticityTerm> {
        None
    }

    /// The term as barrier contact, if it is (for its records and forces).
    fn as_barrier_contact(&self) -> Option<&super::BarrierContact> {
        None
    }
}

/// A term made of elements with materials: what methods working element by
/// element (viscoelastic damping, co-rotated integrators, outputs) may ask.
pub trait ElasticityTerm: Send + Sync {
    /// The number of elements.
    fn element_count(&self) -> usize;
    /// The vertices of element e.
    fn element_vertices(&self, e: usize) -> &[usize];
    /// The material of each element.
    fn materials(&self) -> &[MaterialRef];
    /// F of every element at positions x.
    fn deformation_gradients(&self, x: &[f64]) -> Vec<Matrix3<f64>>;
    /// ψ of every element at x (+∞ where undefined).
    fn energy_densities(&self, x: &[f64]) -> Vec<f64>;
    /// The same elements with other materials (bound to the same pattern).
    fn with_materials(&self, materials: Vec<MaterialRef>) -> Box<dyn EnergyTerm>;
    /// The same elements and materials measured from another rest shape
    /// (positions over all DOFs); elements flat there contribute nothing.
    fn rebased(&self, reference: &[f64]) -> Box<dyn EnergyTerm>;
    /// Adds the elements' masses ρV: a quarter (a third) to each vertex's lumped
    /// mass, and, when given, the consistent mass matrix on the pattern.
    fn add_masses(&self, lumped: &mut [f64], consistent: Option<(&LowerPattern, &mut [f64])>);
}
