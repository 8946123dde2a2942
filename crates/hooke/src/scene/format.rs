//! The scene file's structure. Every table rejects unknown keys, so a typo is an
//! error that names the key instead of a silently ignored setting.

use crate::error::{HookeError, Result};
use crate::integrate::IntegratorConfig;
use crate::mesh::limits::{available_memory, check_memory, generated_elements, model_bytes};
use crate::mesh::{Shape, TetsPerHex};
use crate::model::MassKind;
use crate::model::{Damping, Motion, Obstacle, ObstacleShape, Selection};
use crate::solve::SolverSettings;

/// `[eigenfit]`: correct the (single) body's lowest modes to those of the
/// same body meshed finer (Chen et al. 2019 (EigenFit)).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct EigenFitSection {
    /// The fine mesh, in the grammar of `bodies.mesh`; the body's materials,
    /// regions and the scene's pins apply to it by the same selections.
    #[serde(default)]
    pub reference: Option<MeshSource>,
    /// Or a whole fine scene (relative to this one), its body, materials and
    /// pins as written: for a body whose coarse materials cannot be laid on a
    /// fine mesh, such as the per-element tensors of a coarsened scene.
    #[serde(default)]
    pub reference_scene: Option<String>,
    /// Modes corrected (EigenFit) or compared (DAC uses the first elastic one).
    #[serde(default = "default_eigenfit_modes")]
    pub modes: usize,
    /// `method`: `"eigenfit"` (default: the lowest modes corrected every step)
    /// or `"dac"` (the whole stiffness scaled once).
    #[serde(default)]
    pub method: EigenFitMethod,
    /// The relative error of each step's modes in the energy norm of
    /// K − σM at which they are accepted (default 1e-3).
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// The modes' predicted move (the sine of their angle in the mass inner product) up
    /// to which a refit's modes serve the next steps unchanged (default 0:
    /// every step follows the modes; at most 8 steps).
    #[serde(default)]
    pub refit_drift: Option<f64>,
    /// How ratios pair coarse and fine modes: "shape" (default: by the MAC
    /// of their shapes, optimally assigned) or "index" (as in the EigenFit paper).
    #[serde(default)]
    pub pairing: crate::model::eigenfit::Pairing,
    /// The MAC below which a shape pairing keeps ratio 1 and is reported (default 0.6).
    #[serde(default)]
    pub pairing_threshold: Option<f64>,
}

fn default_eigenfit_modes() -> usize {
    10
}

/// `[eigenfit] method`: how the body's stiffness is corrected toward the fine mesh's frequencies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EigenFitMethod {
    /// Every step, the lowest modes' stiffness scaled to the fine mesh's.
    #[default]
    Eigenfit,
    /// Once, the whole body's stiffness scaled by the first mode's ratio.
    Dac,
}

/// `[tearing]`: what tears, after each step, for the rest of the run.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TearingSection {
    /// A spring tears beyond this length over its rest length, an element
    /// beyond this largest principal stretch.
    pub stretch: f64,
}

/// `[contact]`: barrier contact (Li et al. 2020, "Incremental Potential Contact").
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSection {
    /// d̂, m: the barrier acts below this distance (default 10⁻³ × the
    /// diagonal of the bodies' bounding box).
    pub distance: Option<f64>,
    /// κ: `"adaptive"` (default) or a number, J/m⁴.
    #[serde(default)]
    pub stiffness: ContactStiffness,
    /// The Coulomb coefficient μ (default 0).
    #[serde(default)]
    pub friction: f64,
    /// ε_v, m/s: slip below this speed is smoothed (default 10⁻³).
    pub friction_velocity: Option<f64>,
    /// How many times a step takes friction's normal forces and tangent
    /// planes (default 1: at its start; each more solves the step again).
    pub friction_updates: Option<usize>,
    /// A body against its own surface (default true).
    #[serde(default = "yes")]
    pub self_contact: bool,
}

fn yes() -> bool {
    true
}

/// `contact.stiffness`: `"adaptive"` or a number.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum ContactStiffness {
    /// The paper's rule.
    #[default]
    Adaptive,
    /// A fixed κ, J/m⁴.
    Fixed(f64),
}

impl serde::Serialize for ContactStiffness {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            ContactStiffness::Adaptive => serializer.serialize_str("adaptive"),
            ContactStiffness::Fixed(k) => serializer.serialize_f64(*k),
        }
    }
}

impl<'de> serde::Deserialize<'de> for ContactStiffness {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Word;
        impl serde::de::Visitor<'_> for Word {
            type Value = ContactStiffness;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"adaptive\" or a number (J/m⁴)")
            }
            fn visit_str<E: serde::de::Error>(self, word: &str) -> std::result::Result<ContactStiffness, E> {
                match word {
                    "adaptive" => Ok(ContactStiffness::Adaptive),
                    other => Err(E::custom(format!(
                        "κ is \"adaptive\" or a number (J/m⁴), not \"{other}\""
                    ))),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, k: f64) -> std::result::Result<ContactStiffness, E> {
                Ok(ContactStiffness::Fixed(k))
            }
            fn visit_i64<E: serde::de::Error>(self, k: i64) -> std::result::Result<ContactStiffness, E> {
                Ok(ContactStiffness::Fixed(k as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, k: u64) -> std::result::Result<ContactStiffness, E> {
                Ok(ContactStiffness::Fixed(k as f64))
            }
        }
        deserializer.deserialize_any(Word)
    }
}

/// A scene file as written: its top-level keys and tables (docs/scene-format.md
/// describes each).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// `name`: names the run and its default output folder `out/<name>` (None: the file's stem).
    pub name: Option<String>,
    /// `description`: free text about the scene, for its readers.
    pub description: Option<String>,
    /// Which experiment of which source document the scene reproduces, if any.
    pub reproduces: Option<String>,
    /// 3 (default), or 2 for plane strain: triangle bodies, 2-component vectors.
    #[serde(default = "default_dimension")]
    pub dimension: usize,
    /// `[simulation]`: the duration, time step and mass matrix (required).
    pub simulation: SimulationSection,
    /// `[[bodies]]`: the deformable bodies, merged into one mesh in the order given.
    #[serde(default)]
    pub bodies: Vec<BodySection>,
    /// Mass-spring networks (ropes, cloth), after the bodies in vertex numbering.
    #[serde(default)]
    pub networks: Vec<NetworkSection>,
    /// `[[pins]]`: vertices held or moved along prescribed paths (default: none).
    #[serde(default)]
    pub pins: Vec<PinSection>,
    /// Zero-length springs pulling vertices to a point (Liu 2018 thesis, §8.2).
    #[serde(default)]
    pub attachments: Vec<AttachmentSection>,
    /// Vertices kept on a plane or sphere (variational midpoint only).
    #[serde(default)]
    pub constraints: Vec<ConstraintSection>,
    /// `[[forces]]`: total forces on selected vertices (default: none).
    #[serde(default)]
    pub forces: Vec<ForceSection>,
    /// Pressures and tractions on surfaces (3D).
    #[serde(default)]
    pub tractions: Vec<TractionSection>,
    /// Gravitational acceleration, m/s².
    #[serde(default, deserialize_with = "crate::model::vectors::two_or_three")]
    pub gravity: [f64; 3],
    /// Seconds over which gravity grows linearly from 0 to full (0: at once).
    #[serde(default)]
    pub gravity_ramp_time: f64,
    /// `[damping]`: Rayleigh and viscoelastic damping and ether drag (None: undamped).
    pub damping: Option<Damping>,
    /// Springs and elements stretched beyond a limit tear (Liu 2018 thesis, §8.4).
    pub tearing: Option<TearingSection>,
    /// The same motion at every resolution: EigenFit or DAC against a finer mesh (Chen et al. 2019 (EigenFit)).
    pub eigenfit: Option<EigenFitSection>,
    /// Rigid obstacles the bodies collide with (penalty contact, or barrier
    /// contact with `[contact]`).
    #[serde(default)]
    pub obstacles: Vec<Obstacle>,
    /// `[contact]`: intersection-free barrier contact among the bodies, each
    /// body with itself, and the obstacles (Li et al. 2020).
    pub contact: Option<ContactSection>,
    /// `[integrator]`: the time integration method and its own keys (default `backward_euler`).
    #[serde(default)]
    pub integrator: IntegratorConfig,
    /// The minimiser of the implicit integrators and the static solve.
    #[serde(default)]
    pub solver: SolverSettings,
    /// Reduced coordinates x = x₀ + B u (absent: every free DOF is an unknown).
    pub coordinates: Option<CoordinatesSection>,
    /// Real-time subspace simulation: skinning eigenmodes and cubature (Trusty et al. 2023).
    pub subspace: Option<SubspaceSection>,
    /// Where the run starts, when not at rest: a frame of an earlier run.
    pub initial: Option<InitialSection>,
    /// `[output]`: the output folder and what is written (default: a frame every
    /// step, the energies table and its plot).
    #[serde(default)]
    pub output: OutputSection,
}

/// A dead load on the boundary faces whose three corners are selected.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TractionSection {
    pub select: Selection,
    /// Pa, pushing against the faces' outward normals (into the body when positive).
    #[serde(default)]
    pub pressure: f64,
    /// N/m², a force per area in a fixed direction.
    #[serde(default)]
    pub traction: [f64; 3],
    /// Seconds over which the load grows linearly from 0 to full (0: at once).
    #[serde(default)]
    pub ramp_time: f64,
}

/// The initial state from files: a frame of an earlier run, or per-vertex
/// displacement and velocity tables.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct InitialSection {
    /// A `.vtu` frame of a run of the same bodies (relative to the scene): its
    /// positions and velocities. The clock starts at 0 all the same.
    pub frame: Option<String>,
    /// A CSV of one row per vertex (in the model's order), its displacement
    /// from the rest shape, m: x, y(, z).
    pub displacement: Option<String>,
    /// A CSV of one row per vertex, its velocity, m/s.
    pub velocity: Option<String>,
}

fn default_dimension() -> usize {
    3
}

/// The `[coordinates]` table: the subspace a scene is simulated in.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CoordinatesSection {
    /// The lowest `modes` vibration modes of (K, M) at rest, with the pins held:
    /// linear modal reduction, for small deformations about the rest shape.
    Modal {
        /// The number m of modes: the subspace's coordinates.
        modes: usize,
    },
}

/// The `[subspace]` table: x = X̄ + B u with B the linear-blend skinning of
/// `modes` skinning eigenmodes, elastic forces integrated by `cubature_points`
/// elements (Trusty et al. 2023); `[solver] kind` = "mixed_sqp" or "newton".
#[derive(Clone, Copy, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SubspaceSection {
    /// m: the subspace has 12 m coordinates.
    pub modes: usize,
    /// |𝒞|; default 20 m (fewer than 2 m leaves spurious zero-energy modes).
    pub cubature_points: Option<usize>,
    /// The seed of the k-means clustering.
    #[serde(default)]
    pub seed: u64,
}

/// `[simulation]`: how long to simulate, with which time step and mass matrix.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSection {
    /// Simulated time, s (rounded to a whole number of steps).
    pub duration: f64,
    /// Time step h, s.
    pub time_step: f64,
    /// `mass`: `"lumped"` (default) or `"consistent"`.
    #[serde(default)]
    pub mass: MassKind,
}

/// `[[bodies]]`: one deformable body: its mesh, its material and material
/// regions, where it is placed and how it starts moving.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct BodySection {
    /// `mesh`: a generated box or rectangle, a mesh file, or a solid meshed by isosurface stuffing.
    pub mesh: MeshSource,
    /// `material`: the body's material table (`model` and that model's keys),
    /// for the elements no region selects.
    pub material: MaterialSection,
    /// Material overrides for parts of the body (later entries win).
    #[serde(default)]
    pub regions: Vec<RegionSection>,
    /// Rigid offset applied to the mesh, m (after `rotate`).
    #[serde(default, deserialize_with = "crate::model::vectors::two_or_three")]
    pub translate: [f64; 3],
    /// Rigid rotation of the mesh about its own centroid, before `translate`:
    /// a rotation vector in 3D (axis times angle, rad), the angle about z in 2D.
    #[serde(default, deserialize_with = "crate::model::vectors::angular")]
    pub rotate: [f64; 3],
    /// Initial velocity of every vertex, m/s.
    #[serde(default, deserialize_with = "crate::model::vectors::two_or_three")]
    pub velocity: [f64; 3],
    /// Initial spin about the body's centroid, rad/s (added to `velocity`): a
    /// vector in 3D, the rate about z in 2D.
    #[serde(default, deserialize_with = "crate::model::vectors::angular")]
    pub angular_velocity: [f64; 3],
    /// Continuous elements (the default), or discontinuous Galerkin triangles
    /// joined by interface terms (2D).
    #[serde(default)]
    pub discretization: Discretization,
}

/// `discretization = "continuous"` or `{ discontinuous = { formulation, penalty } }`.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Discretization {
    /// Conforming elements that share their vertices.
    #[default]
    Continuous,
    /// Every triangle with vertices of its own, joined across edges by interface terms (2D).
    Discontinuous(DiscontinuousSection),
}

/// A discontinuous Galerkin body (Chen 2019 thesis, §5.2): every triangle its own
/// vertices, joined across edges by the `formulation`'s interface energy.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct DiscontinuousSection {
    /// `"ip"` (symmetric interior penalty, the default) or `"bz"` (Babuška–Zlámal).
    #[serde(default = "default_formulation")]
    pub formulation: crate::fem::Formulation,
    /// η_f, Pa/m, for every interface; default (k₋ + k₊)/2 · L (1/A₋ + 1/A₊) (fem::interface).
    pub penalty: Option<f64>,
}

fn default_formulation() -> crate::fem::Formulation {
    crate::fem::Formulation::Ip
}

/// A generated mass-spring network.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    /// `shape`: a rope, a coiled rope (`helix`) or a cloth.
    pub shape: NetworkShape,
    /// Ropes: axial stiffness EA, N (each segment gets EA/l₀). Cloth: stretch springs, N/m.
    pub stiffness: f64,
    /// Cloth: shear (diagonal) springs, N/m (0: none).
    #[serde(default)]
    pub shear_stiffness: f64,
    /// Cloth: bend springs across every second vertex, N/m (0: none).
    #[serde(default)]
    pub bend_stiffness: f64,
    /// Ropes: kg/m. Cloth: kg/m².
    pub density: f64,
    /// Initial velocity of every vertex, m/s.
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Cloth: strain-limited membrane triangles over the grid (Liu 2018 thesis, Fig. 6.1).
    pub membrane: Option<MembraneSection>,
}

/// `membrane = { … }` of a cloth: each grid triangle a membrane whose in-plane
/// stretches are free within [min, max] and cost μ (σ − clamp σ)² per unit
/// volume beyond (strain limiting, projective with weight 2μ).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MembraneSection {
    /// Young's modulus, Pa; with `poisson_ratio`, it sets μ.
    pub youngs_modulus: f64,
    /// Poisson's ratio, in (−1, 0.5).
    pub poisson_ratio: f64,
    /// m: the membrane's volume is its area times this.
    pub thickness: f64,
    /// The smallest in-plane stretch that costs nothing (in (0, 1]).
    pub min: f64,
    /// The largest in-plane stretch that costs nothing (at least 1).
    pub max: f64,
}

/// A network's `shape`: a straight rope, a coiled rope or a cloth.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum NetworkShape {
    /// A straight rope.
    Rope {
        /// One end of the rope, m.
        start: [f64; 3],
        /// The other end of the rope, m.
        end: [f64; 3],
        /// Springs along the rope (it has `segments` + 1 vertices).
        segments: usize,
    },
    /// A coiled rope: a helix about the z axis through `center`.
    Helix {
        /// The point on the coil's axis at the height the rope starts from, m.
        center: [f64; 3],
        /// Radius of the coil, m.
        radius: f64,
        /// Rise along z per turn, m.
        pitch: f64,
        /// Number of turns (need not be whole).
        turns: f64,
        /// Springs along the rope (it has `segments` + 1 vertices).
        segments: usize,
    },
    /// A rectangular cloth in the plane z = origin.z.
    Cloth {
        /// The corner with the smallest x and y, m.
        origin: [f64; 3],
        /// Side lengths along x and y, m.
        size: [f64; 2],
        /// Grid cells along x and y.
        cells: [usize; 2],
    },
}

/// A body's `mesh` (and `[eigenfit]`'s `reference`): where its mesh comes from.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum MeshSource {
    /// A generated box of hexahedral cells split into tets.
    Box(BoxMeshSection),
    /// A TetGen (.node/.ele), MEDIT (.mesh) or Gmsh (.msh) file, relative to the scene.
    File(String),
    /// A solid (a shape, a combination of shapes, or a closed surface file)
    /// meshed by isosurface stuffing.
    Solid(SolidMeshSection),
    /// 2D: a rectangle of cells, each split into two triangles.
    Rectangle(RectangleMeshSection),
}

#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RectangleMeshSection {
    pub size: [f64; 2],
    pub cells: [usize; 2],
    #[serde(default)]
    pub origin: [f64; 2],
}

#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SolidMeshSection {
    pub shape: Shape,
    /// Lattice spacing, m (the longest edges are about this long).
    pub edge_length: f64,
}

/// `mesh = { box = { … } }`: an axis-aligned box of hexahedral cells, each
/// split into tetrahedra (3D).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct BoxMeshSection {
    /// `size`: the box's edge lengths along x, y and z, m.
    pub size: [f64; 3],
    /// `cells`: hexahedral cells along x, y and z.
    pub cells: [usize; 3],
    /// `origin`: the box's minimum corner, m (default `[0, 0, 0]`).
    #[serde(default)]
    pub origin: [f64; 3],
    /// `tets_per_hex`: tetrahedra per cell, 5 or 6 (default 6).
    #[serde(default = "default_tets_per_hex")]
    pub tets_per_hex: usize,
}

fn default_tets_per_hex() -> usize {
    6
}

impl BoxMeshSection {
    /// The split that `tets_per_hex` names; an error on `{key}.tets_per_hex`
    /// when it is neither 5 nor 6.
    pub fn tets_per_hex(&self, key: &str) -> Result<TetsPerHex> {
        match self.tets_per_hex {
            5 => Ok(TetsPerHex::Five),
            6 => Ok(TetsPerHex::Six),
            other => Err(HookeError::scene(
                format!("{key}.tets_per_hex"),
                format!("must be 5 or 6, got {other}"),
            )),
        }
    }
}

/// A material table: `model`, that model's keys (its entry in
/// [`crate::material::registry`] lists them) and an optional `fibre`. The keys
/// keep their place in the file, so an unknown one is reported with its line.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(transparent)]
pub struct MaterialSection(pub std::collections::BTreeMap<toml::Spanned<String>, toml::Value>);

impl MaterialSection {
    /// The table without the keys' positions.
    pub fn table(&self) -> toml::Table {
        self.0.iter().map(|(k, v)| (k.get_ref().clone(), v.clone())).collect()
    }

    /// A key the table's model does not take, with its byte range in the scene
    /// text and the keys it does take (None when every key is known, or the
    /// model itself is unknown, which the registry reports).
    pub fn unknown_key(&self) -> Option<(String, std::ops::Range<usize>, Vec<&'static str>)> {
        let model = self.0.iter().find(|(k, _)| k.get_ref() == "model")?.1.as_str()?;
        let accepted = crate::material::registry::accepted_keys(model)?;
        self.0
            .keys()
            .find(|k| !accepted.contains(&k.get_ref().as_str()))
            .map(|k| (k.get_ref().clone(), k.span(), accepted))
    }
}

/// `[[bodies.regions]]`: a part of a body with a material of its own (later regions win).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSection {
    /// Elements in the region: by label, or by centroid inside a box or half-space.
    pub select: Selection,
    /// `material`: the region's material table, as a body's.
    pub material: MaterialSection,
}

/// `[[pins]]`: vertices held in place or moved along a prescribed path, until
/// an optional release time; pinned components are removed from the unknowns.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PinSection {
    /// `select`: the pinned vertices.
    pub select: Selection,
    /// `motion`: how the pinned vertices move from their rest positions (default
    /// `{ kind = "fixed" }`: held at rest).
    #[serde(default)]
    pub motion: Motion,
    /// Time at which the pinned vertices are let go, s.
    pub release_time: Option<f64>,
    /// The components held ("x", "y", "z"); all of them when absent. Holding
    /// only some makes a roller or a symmetry plane.
    pub components: Option<Vec<String>>,
    /// A soft pin: the vertices stay unknowns, pulled toward their prescribed
    /// positions by zero-length springs of this total stiffness.
    pub soft: Option<SoftPinSection>,
}

/// `[[attachments]]`: the selected vertices are pulled by zero-length springs
/// of total stiffness `stiffness` (shared by lumped mass) toward `target`, or
/// toward their rest positions without one: soft pins to a point.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct AttachmentSection {
    pub select: Selection,
    /// N/m (N/m per metre of thickness in 2D).
    pub stiffness: f64,
    /// [x, y, z] (2D: [x, y]); default: each vertex's rest position.
    pub target: Option<Vec<f64>>,
}

#[derive(Clone, Copy, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SoftPinSection {
    /// Total stiffness of the group, N/m (N/m per metre of thickness in 2D),
    /// shared among its vertices by lumped mass.
    pub stiffness: f64,
}

impl PinSection {
    /// Which of x, y, z the pin holds; `key` names it in errors.
    pub fn held_components(&self, dimension: usize, key: &str) -> Result<[bool; 3]> {
        let Some(names) = &self.components else {
            return Ok(crate::model::ALL_COMPONENTS);
        };
        let mut held = [false; 3];
        for name in names {
            let axis = match name.as_str() {
                "x" => 0,
                "y" => 1,
                "z" if dimension == 3 => 2,
                other => {
                    return Err(HookeError::scene(
                        format!("{key}.components"),
                        format!(
                            "{other:?} is not a component of a {dimension}D scene (use {})",
                            if dimension == 3 {
                                "\"x\", \"y\", \"z\""
                            } else {
                                "\"x\", \"y\""
                            }
                        ),
                    ))
                }
            };
            if held[axis] {
                return Err(HookeError::scene(
                    format!("{key}.components"),
                    format!("{name:?} is listed twice"),
                ));
            }
            held[axis] = true;
        }
        if !held.contains(&true) {
            return Err(HookeError::scene(format!("{key}.components"), "lists no component"));
        }
        Ok(held)
    }
}

/// Holonomic constraint: the selected vertices stay on `surface` (Kharevych 2010 thesis, §3.2.7).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintSection {
    /// `select`: the vertices kept on the surface (they should start on it).
    pub select: Selection,
    /// A plane or a sphere (the obstacle shapes; a box is refused: not smooth).
    pub surface: ObstacleShape,
}

/// `[[forces]]`: a total force on the selected vertices, shared among them by
/// their lumped mass: a constant part, a periodic part and an optional ramp.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ForceSection {
    /// `select`: the vertices the force acts on.
    pub select: Selection,
    /// Constant total force on the region, N.
    #[serde(default, deserialize_with = "crate::model::vectors::two_or_three")]
    pub total: [f64; 3],
    /// Amplitude of a periodic total force, N: total + amplitude · sin(2π frequency t + phase).
    #[serde(default, deserialize_with = "crate::model::vectors::two_or_three")]
    pub amplitude: [f64; 3],
    /// `frequency` of the periodic part, Hz (default 0).
    #[serde(default)]
    pub frequency: f64,
    /// `phase` of the periodic part, rad (default 0).
    #[serde(default)]
    pub phase: f64,
    /// Seconds over which the force grows linearly from 0 to full (0: at once).
    #[serde(default)]
    pub ramp_time: f64,
}

/// `[output]`: where a run's results go and which of them are written.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputSection {
    /// Folder for the results; default `out/<scene name>`.
    pub directory: Option<String>,
    /// Write a VTK frame every this many steps (0: none).
    pub vtk_every: usize,
    /// Write the energies table `energies.csv`, one row a step (default true).
    pub energies: bool,
    /// Plot the energies over time into `energies.png` at the end of the run (default true).
    pub plot: bool,
    /// Draw a PNG picture (render_0000.png, ...) every this many steps (0: none).
    pub render_every: usize,
    /// Field, view and size of those pictures.
    pub render: Option<crate::output::RenderSettings>,
    /// A display map written by `hooke coarsen` (display.json, relative to the
    /// scene): the run's frames are also written on the fine mesh (fine.pvd).
    pub fine_display: Option<String>,
}

impl Default for OutputSection {
    fn default() -> Self {
        OutputSection {
            directory: None,
            vtk_every: 1,
            energies: true,
            plot: true,
            render_every: 0,
            render: None,
            fine_display: None,
        }
    }
}

/// A run keeps one energy record per step; beyond this many steps that alone is gigabytes.
const MAX_STEPS: f64 = 1e8;

fn positive(key: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(HookeError::scene(
            key,
            format!("must be a positive number, got {value}"),
        ))
    }
}

fn finite(key: &str, values: &[f64]) -> Result<()> {
    match values.iter().find(|v| !v.is_finite()) {
        Some(v) => Err(HookeError::scene(key, format!("must be finite, got {v}"))),
        None => Ok(()),
    }
}

/// A duration that may be zero (a ramp that is not there).
fn non_negative_time(key: &str, value: f64) -> Result<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(HookeError::scene(key, format!("must be a time ≥ 0 s, got {value}")))
    }
}

impl SceneFile {
    /// The number of elements and springs the generated meshes will hold, as
    /// the size checks count them (a stuffed solid by its 12 tetrahedra per
    /// lattice cell of the bounding box, an upper bound); mesh files are not
    /// counted. Call after [`SceneFile::validate`] and the shapes' preparation.
    pub fn generated_element_estimate(&self) -> usize {
        let product = |counts: &[usize], per_cell: usize| counts.iter().fold(per_cell, |n, &c| n.saturating_mul(c));
        let bodies = self.bodies.iter().map(|body| match &body.mesh {
            MeshSource::Box(section) => product(&section.cells, section.tets_per_hex),
            MeshSource::Rectangle(section) => product(&section.cells, 2),
            MeshSource::Solid(section) => {
                let (lo, hi) = section.shape.bounds();
                let cells: Vec<usize> = (0..3)
                    .map(|axis| ((hi[axis] - lo[axis]) / section.edge_length).ceil().clamp(1.0, 1e12) as usize)
                    .collect();
                product(&cells, 12)
            }
            MeshSource::File(_) => 0,
        });
        let networks = self.networks.iter().map(|network| match &network.shape {
            NetworkShape::Rope { segments, .. } | NetworkShape::Helix { segments, .. } => *segments,
            NetworkShape::Cloth { cells, .. } => product(cells, 8),
        });
        bodies.chain(networks).fold(0, usize::saturating_add)
    }

    /// Checks every value that can be checked without building meshes, section
    /// by section; errors name the key.
    pub fn validate(&self) -> Result<()> {
        self.validate_eigenfit()?;
        if let Some(render) = &self.output.render {
            render.validate("output.render")?;
        }
        self.validate_simulation()?;
        self.validate_networks()?;
        self.validate_loads()?;
        self.validate_bodies()?;
        self.validate_attachments()?;
        self.validate_pins()?;
        self.validate_damping()?;
        self.validate_obstacles()?;
        self.validate_contact()?;
        self.validate_reductions()?;
        // Building checks the integrator's own settings.
        self.integrator.build(&self.integrator_solver()).map(|_| ())
    }

    /// `[eigenfit]`: one fine reference, a mesh or a scene.
    fn validate_eigenfit(&self) -> Result<()> {
        if let Some(section) = &self.eigenfit {
            match (&section.reference, &section.reference_scene) {
                (Some(_), None) | (None, Some(_)) => {}
                _ => {
                    return Err(HookeError::scene(
                        "eigenfit.reference",
                        "give the fine reference either as a mesh (`reference = { … }`) or as a scene (`reference_scene = \"fine.toml\"`), not both or neither",
                    ))
                }
            }
        }
        Ok(())
    }

    /// `[simulation]`: duration and time step, and at least one body or network.
    fn validate_simulation(&self) -> Result<()> {
        positive("simulation.duration", self.simulation.duration)?;
        positive("simulation.time_step", self.simulation.time_step)?;
        if self.simulation.time_step > self.simulation.duration {
            return Err(HookeError::scene(
                "simulation.time_step",
                "is longer than simulation.duration",
            ));
        }
        let steps = self.simulation.duration / self.simulation.time_step;
        if steps > MAX_STEPS {
            return Err(HookeError::scene(
                "simulation.time_step",
                format!("duration / time_step = {steps:.3e} steps, more than the {MAX_STEPS:e} a run may take"),
            ));
        }
        if self.bodies.is_empty() && self.networks.is_empty() {
            return Err(HookeError::scene(
                "bodies",
                "a scene needs at least one [[bodies]] or [[networks]] entry",
            ));
        }
        Ok(())
    }

    /// `[[networks]]`: stiffnesses, density, membranes and the number of springs.
    fn validate_networks(&self) -> Result<()> {
        for (n, network) in self.networks.iter().enumerate() {
            let key = format!("networks[{n}]");
            match &network.membrane {
                // A membrane cloth may leave its springs out.
                Some(membrane) => {
                    if !matches!(network.shape, NetworkShape::Cloth { .. }) {
                        return Err(HookeError::scene(
                            format!("{key}.membrane"),
                            "only a cloth has triangles to make membranes of",
                        ));
                    }
                    if !(network.stiffness.is_finite() && network.stiffness >= 0.0) {
                        return Err(HookeError::scene(
                            format!("{key}.stiffness"),
                            format!("must be ≥ 0, got {}", network.stiffness),
                        ));
                    }
                    let parameters = crate::material::MaterialParameters {
                        youngs_modulus: membrane.youngs_modulus,
                        poisson_ratio: membrane.poisson_ratio,
                        density: network.density,
                    };
                    parameters.validate(&format!("{key}.membrane"))?;
                    positive(&format!("{key}.membrane.thickness"), membrane.thickness)?;
                    if !(membrane.min > 0.0 && membrane.min <= 1.0 && membrane.max >= 1.0 && membrane.max.is_finite()) {
                        return Err(HookeError::scene(
                            format!("{key}.membrane"),
                            format!(
                                "needs 0 < min ≤ 1 ≤ max, got min = {}, max = {}",
                                membrane.min, membrane.max
                            ),
                        ));
                    }
                }
                None => positive(&format!("{key}.stiffness"), network.stiffness)?,
            }
            positive(&format!("{key}.density"), network.density)?;
            if let Some(problem) = crate::material::parameters::density_problem(network.density) {
                return Err(HookeError::scene(format!("{key}.density"), problem));
            }
            for (name, value) in [
                ("shear_stiffness", network.shear_stiffness),
                ("bend_stiffness", network.bend_stiffness),
            ] {
                if !(value.is_finite() && value >= 0.0) {
                    return Err(HookeError::scene(
                        format!("{key}.{name}"),
                        format!("must be ≥ 0, got {value}"),
                    ));
                }
            }
            finite(&format!("{key}.velocity"), &network.velocity)?;
            let (what, counts, per_cell) = match &network.shape {
                NetworkShape::Rope { segments, .. } => ("rope.segments", vec![*segments], 1),
                NetworkShape::Helix { segments, .. } => ("helix.segments", vec![*segments], 1),
                NetworkShape::Cloth { cells, .. } => ("cloth.cells", cells.to_vec(), 8),
            };
            generated_elements(&counts, per_cell).map_err(|e| HookeError::scene(format!("{key}.shape.{what}"), e))?;
        }
        Ok(())
    }

    /// Gravity, `[[forces]]` and `[[tractions]]`.
    fn validate_loads(&self) -> Result<()> {
        finite("gravity", &self.gravity)?;
        non_negative_time("gravity_ramp_time", self.gravity_ramp_time)?;
        for (f, force) in self.forces.iter().enumerate() {
            non_negative_time(&format!("forces[{f}].ramp_time"), force.ramp_time)?;
        }
        for (t, traction) in self.tractions.iter().enumerate() {
            let key = format!("tractions[{t}]");
            non_negative_time(&format!("{key}.ramp_time"), traction.ramp_time)?;
            finite(&format!("{key}.traction"), &traction.traction)?;
            if !traction.pressure.is_finite() {
                return Err(HookeError::scene(format!("{key}.pressure"), "must be finite"));
            }
            if traction.pressure == 0.0 && traction.traction == [0.0; 3] {
                return Err(HookeError::scene(key, "give a pressure or a traction (both are zero)"));
            }
            if self.dimension == 2 {
                return Err(HookeError::scene(
                    key,
                    "surface loads are 3D only; a 2D scene takes [[forces]]",
                ));
            }
        }
        for (f, force) in self.forces.iter().enumerate() {
            finite(&format!("forces[{f}]"), &[force.total, force.amplitude].concat())?;
            finite(&format!("forces[{f}]"), &[force.frequency, force.phase])?;
        }
        Ok(())
    }

    /// `[[bodies]]`: generated meshes, discretisation, offsets and velocities.
    fn validate_bodies(&self) -> Result<()> {
        for (b, body) in self.bodies.iter().enumerate() {
            let key = format!("bodies[{b}]");
            if let MeshSource::Rectangle(section) = &body.mesh {
                for (axis, size) in section.size.iter().enumerate() {
                    positive(&format!("{key}.mesh.rectangle.size[{axis}]"), *size)?;
                }
                finite(&format!("{key}.mesh.rectangle.origin"), &section.origin)?;
                let triangles = generated_elements(&section.cells, 2)
                    .map_err(|e| HookeError::scene(format!("{key}.mesh.rectangle.cells"), e))?;
                check_memory(model_bytes(0, triangles, 0), available_memory())
                    .map_err(|e| HookeError::scene(format!("{key}.mesh.rectangle.cells"), e))?;
            }
            if let MeshSource::Box(section) = &body.mesh {
                section.tets_per_hex(&format!("{key}.mesh.box"))?;
                for (axis, size) in section.size.iter().enumerate() {
                    positive(&format!("{key}.mesh.box.size[{axis}]"), *size)?;
                }
                let tets = generated_elements(&section.cells, section.tets_per_hex)
                    .map_err(|e| HookeError::scene(format!("{key}.mesh.box.cells"), e))?;
                // Before meshing: the model of this box alone must fit in memory.
                check_memory(model_bytes(tets, 0, 0), available_memory())
                    .map_err(|e| HookeError::scene(format!("{key}.mesh.box.cells"), e))?;
            }
            if let Discretization::Discontinuous(section) = &body.discretization {
                if self.dimension != 2 {
                    return Err(HookeError::scene(
                        format!("{key}.discretization"),
                        "discontinuous Galerkin bodies are 2D only (dimension = 2): 3D interfaces are not implemented",
                    ));
                }
                if let Some(eta) = section.penalty {
                    if !(eta.is_finite() && eta >= 0.0) {
                        return Err(HookeError::scene(
                            format!("{key}.discretization.discontinuous.penalty"),
                            format!("must be finite and ≥ 0, got {eta}"),
                        ));
                    }
                }
            }
            finite(&format!("{key}.translate"), &body.translate)?;
            finite(&format!("{key}.rotate"), &body.rotate)?;
            finite(&format!("{key}.velocity"), &body.velocity)?;
            finite(&format!("{key}.angular_velocity"), &body.angular_velocity)?;
        }
        Ok(())
    }

    /// `[[attachments]]`: stiffness and target.
    fn validate_attachments(&self) -> Result<()> {
        for (a, attachment) in self.attachments.iter().enumerate() {
            positive(&format!("attachments[{a}].stiffness"), attachment.stiffness)?;
            if let Some(target) = &attachment.target {
                if target.len() != self.dimension || !target.iter().all(|v| v.is_finite()) {
                    return Err(HookeError::scene(
                        format!("attachments[{a}].target"),
                        format!("needs {} finite coordinates, got {target:?}", self.dimension),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `[[pins]]`: components, soft pins, release times and motions.
    fn validate_pins(&self) -> Result<()> {
        for (p, pin) in self.pins.iter().enumerate() {
            pin.held_components(self.dimension, &format!("pins[{p}]"))?;
            if let Some(soft) = &pin.soft {
                positive(&format!("pins[{p}].soft.stiffness"), soft.stiffness)?;
            }
            if let Some(t) = pin.release_time {
                if !(t.is_finite() && t >= 0.0) {
                    return Err(HookeError::scene(
                        format!("pins[{p}].release_time"),
                        format!("must be a time ≥ 0, got {t}"),
                    ));
                }
            }
            let key = format!("pins[{p}].motion");
            match &pin.motion {
                Motion::Fixed {} => {}
                Motion::Translation { velocity } => finite(&format!("{key}.velocity"), velocity)?,
                Motion::Rotation {
                    axis,
                    center,
                    angular_velocity,
                    velocity,
                } => {
                    finite(&format!("{key}.axis"), axis)?;
                    finite(&format!("{key}.center"), center)?;
                    finite(&format!("{key}.velocity"), velocity)?;
                    finite(&format!("{key}.angular_velocity"), &[*angular_velocity])?;
                    if axis.iter().all(|a| *a == 0.0) {
                        return Err(HookeError::scene(format!("{key}.axis"), "must not be zero"));
                    }
                }
                Motion::Shake {
                    amplitude,
                    frequency,
                    cycles,
                } => {
                    finite(&format!("{key}.amplitude"), amplitude)?;
                    finite(&format!("{key}.frequency"), &[*frequency])?;
                    if let Some(cycles) = cycles {
                        if !(cycles.is_finite() && *cycles > 0.0 && cycles.fract() == 0.0) {
                            return Err(HookeError::scene(
                                format!("{key}.cycles"),
                                format!(
                                    "must be a whole number of periods (the shake then ends at rest), got {cycles}"
                                ),
                            ));
                        }
                    }
                }
                Motion::Segment {
                    start_displacement,
                    velocity,
                    ..
                } => {
                    finite(&format!("{key}.start_displacement"), start_displacement)?;
                    finite(&format!("{key}.velocity"), velocity)?;
                }
            }
        }
        Ok(())
    }

    /// `[damping]`: finite coefficients ≥ 0.
    fn validate_damping(&self) -> Result<()> {
        if let Some(d) = &self.damping {
            for (name, value) in [
                ("mass_coefficient", d.mass_coefficient),
                ("stiffness_coefficient", d.stiffness_coefficient),
                ("viscoelastic_coefficient", d.viscoelastic_coefficient),
            ] {
                if !(value.is_finite() && value >= 0.0) {
                    return Err(HookeError::scene(
                        format!("damping.{name}"),
                        format!("must be a finite number ≥ 0, got {value}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `[contact]`: lengths and coefficients, and what is not built yet.
    fn validate_contact(&self) -> Result<()> {
        let Some(contact) = &self.contact else {
            return Ok(());
        };
        if let Some(d) = contact.distance {
            positive("contact.distance", d)?;
        }
        if let ContactStiffness::Fixed(k) = contact.stiffness {
            positive("contact.stiffness", k)?;
        }
        if let Some(v) = contact.friction_velocity {
            positive("contact.friction_velocity", v)?;
        }
        if contact.friction_updates == Some(0) {
            return Err(HookeError::scene(
                "contact.friction_updates",
                "must be 1 or more: friction takes its normal forces and tangent planes at least at each step's start",
            ));
        }
        if !(contact.friction.is_finite() && contact.friction >= 0.0) {
            return Err(HookeError::scene(
                "contact.friction",
                format!("μ must be a finite number ≥ 0, got {}", contact.friction),
            ));
        }
        if self.dimension == 2 {
            // 2D contact is between boundary edges of continuous triangle
            // bodies and plane obstacles (lines).
            for (b, body) in self.bodies.iter().enumerate() {
                if let super::Discretization::Discontinuous(_) = body.discretization {
                    return Err(HookeError::scene(
                        format!("bodies[{b}].discretization"),
                        "barrier contact needs a continuous body: the discontinuous Galerkin triangles' own edges touch each other; remove [contact] or the discretization",
                    ));
                }
            }
            for (o, obstacle) in self.obstacles.iter().enumerate() {
                if let ObstacleShape::Mesh { .. } = obstacle.shape {
                    return Err(HookeError::scene(
                        format!("obstacles[{o}].shape"),
                        "mesh obstacles are 3D surfaces; 2D barrier contact takes plane obstacles (lines in the plane)",
                    ));
                }
            }
        }
        Ok(())
    }

    /// `[[obstacles]]`: stiffness and shape.
    fn validate_obstacles(&self) -> Result<()> {
        for (o, obstacle) in self.obstacles.iter().enumerate() {
            let key = format!("obstacles[{o}].stiffness");
            if let (None, ObstacleShape::Mesh { file, .. }) = (&self.contact, &obstacle.shape) {
                return Err(HookeError::scene(
                    format!("obstacles[{o}].shape"),
                    format!("the surface {file} is an obstacle for barrier contact: add [contact] (a penalty needs an inside, which an open surface has not)"),
                ));
            }
            match (&self.contact, obstacle.stiffness) {
                (None, Some(k)) => positive(&key, k)?,
                (None, None) => {
                    return Err(HookeError::scene(
                        key,
                        "a penalty obstacle needs its stiffness per unit mass (1/s²); or add [contact] for barrier contact, which needs none",
                    ))
                }
                (Some(_), Some(_)) => {
                    return Err(HookeError::scene(
                        key,
                        "with [contact] every obstacle takes part in the barrier and has no penalty stiffness; remove it",
                    ))
                }
                (Some(_), None) => {
                    if !matches!(obstacle.shape, ObstacleShape::Plane { .. } | ObstacleShape::Mesh { .. }) {
                        return Err(HookeError::scene(
                            format!("obstacles[{o}].shape"),
                            "barrier contact takes plane and mesh obstacles; spheres, boxes and tori are penalty obstacles (remove [contact]), or give them as a mesh (shape = { mesh = { file = \"….obj\" } })",
                        ));
                    }
                    if obstacle.project {
                        return Err(HookeError::scene(
                            format!("obstacles[{o}].project"),
                            "projection out of an obstacle is for explicit integrators with penalty contact; barrier contact never lets a vertex in",
                        ));
                    }
                }
            }
            if let Some(motion) = &obstacle.motion {
                if self.contact.is_none() {
                    return Err(HookeError::scene(
                        format!("obstacles[{o}].motion"),
                        "moving obstacles are built for barrier contact only: add [contact]",
                    ));
                }
                motion.validate(&format!("obstacles[{o}].motion"))?;
            }
            let key = format!("obstacles[{o}].shape");
            match &obstacle.shape {
                ObstacleShape::Mesh { file, .. } => {
                    if self.contact.is_none() {
                        return Err(HookeError::scene(
                            key,
                            format!("the surface {file} is an obstacle for barrier contact: add [contact] (a penalty needs an inside, which an open surface has not)"),
                        ));
                    }
                }
                ObstacleShape::Plane { point, normal } => {
                    finite(&key, &[*point, *normal].concat())?;
                    if normal.iter().all(|c| *c == 0.0) {
                        return Err(HookeError::scene(format!("{key}.normal"), "must not be zero"));
                    }
                }
                ObstacleShape::Sphere { center, radius } => {
                    finite(&key, center)?;
                    positive(&format!("{key}.radius"), *radius)?;
                }
                ObstacleShape::Box { min, max } => {
                    finite(&key, &[*min, *max].concat())?;
                    if (0..self.dimension).any(|a| min[a] >= max[a]) {
                        return Err(HookeError::scene(
                            key,
                            format!("box min {min:?} must be below max {max:?}"),
                        ));
                    }
                }
                ObstacleShape::Torus {
                    center,
                    axis,
                    major_radius,
                    minor_radius,
                } => {
                    if self.dimension != 3 {
                        return Err(HookeError::scene(key, "a torus needs a 3D scene"));
                    }
                    finite(&key, &[*center, *axis].concat())?;
                    if axis.iter().all(|c| *c == 0.0) {
                        return Err(HookeError::scene(format!("{key}.axis"), "must not be zero"));
                    }
                    positive(&format!("{key}.minor_radius"), *minor_radius)?;
                    if !(major_radius.is_finite() && major_radius > minor_radius) {
                        return Err(HookeError::scene(
                            format!("{key}.major_radius"),
                            format!(
                                "must be larger than minor_radius ({minor_radius}) for the ring to have a hole, got {major_radius}"
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// `[tearing]`, `[solver]`, `[coordinates]` and `[subspace]`.
    fn validate_reductions(&self) -> Result<()> {
        if let Some(tearing) = &self.tearing {
            if !(tearing.stretch.is_finite() && tearing.stretch > 1.0) {
                return Err(HookeError::scene(
                    "tearing.stretch",
                    format!(
                        "must be a finite stretch above 1 (a spring's length over its rest length, an element's largest principal stretch), got {}",
                        tearing.stretch
                    ),
                ));
            }
        }
        self.check_solver_kind()?;
        self.solver.validate("solver")?;
        if let Some(CoordinatesSection::Modal { modes }) = &self.coordinates {
            if *modes == 0 {
                return Err(HookeError::scene("coordinates.modes", "must be at least 1"));
            }
        }
        if let Some(subspace) = &self.subspace {
            if subspace.modes == 0 {
                return Err(HookeError::scene("subspace.modes", "must be at least 1"));
            }
            if subspace.cubature_points == Some(0) {
                return Err(HookeError::scene("subspace.cubature_points", "must be at least 1"));
            }
        }
        Ok(())
    }

    /// `[solver] kind` names a minimiser or a solver with an integrator of
    /// its own (a subspace's, the mixed formulation's), which take no keys
    /// besides the shared ones.
    fn check_solver_kind(&self) -> Result<()> {
        match self.solver_key_problem() {
            Some((key, reason)) => Err(HookeError::scene(format!("solver.{key}"), reason)),
            None => Ok(()),
        }
    }

    /// The first `[solver]` key the chosen solver does not take (`kind` for
    /// an unknown solver), with the reason.
    pub(crate) fn solver_key_problem(&self) -> Option<(String, String)> {
        let kind = &self.solver.kind;
        let mut own = self.solver.own.keys();
        if let Some(entry) = crate::solve::registry::entry(kind) {
            let unknown = own.find(|k| !entry.keys.iter().any(|s| s.name == k.as_str()))?;
            return Some((unknown.clone(), entry.unknown_key_reason(unknown)));
        }
        if crate::reduced::registry::entry(kind).is_some() {
            let unknown = own.next()?;
            return Some((
                unknown.clone(),
                format!("{kind} takes no `{unknown}`; it has no keys besides the shared ones"),
            ));
        }
        Some((
            "kind".to_string(),
            format!(
                "unknown solver {kind:?} (minimisers: {}; solvers with an integrator of their own: {}; `hooke solvers` lists them)",
                crate::solve::registry::names(),
                crate::reduced::registry::names()
            ),
        ))
    }

    /// The `[solver]` settings the scene's integrator is built with: the
    /// table itself, or for a solver that steps with an integrator of its own
    /// (which replaces the scene's), Newton with the table's shared keys.
    pub fn integrator_solver(&self) -> SolverSettings {
        match crate::solve::registry::entry(&self.solver.kind) {
            Some(_) => self.solver.clone(),
            None => SolverSettings {
                kind: "newton".to_string(),
                own: toml::Table::new(),
                ..self.solver.clone()
            },
        }
    }
}

impl SceneFile {
    /// Checks every shape (in solid meshes and in selections) and loads the
    /// surface files they name, relative to the scene's folder.
    pub fn prepare_shapes(&mut self, base: &std::path::Path) -> Result<()> {
        let read_surface = crate::io::read_surface;
        for (b, body) in self.bodies.iter_mut().enumerate() {
            if let MeshSource::Solid(section) = &mut body.mesh {
                section
                    .shape
                    .prepare(base, &format!("bodies[{b}].mesh.solid.shape"), &read_surface)?;
                if !(section.edge_length > 0.0 && section.edge_length.is_finite()) {
                    return Err(HookeError::scene(
                        format!("bodies[{b}].mesh.solid.edge_length"),
                        format!("must be positive, got {}", section.edge_length),
                    ));
                }
            }
            for (r, region) in body.regions.iter_mut().enumerate() {
                region
                    .select
                    .prepare(base, &format!("bodies[{b}].regions[{r}].select"), &read_surface)?;
            }
        }
        for (p, pin) in self.pins.iter_mut().enumerate() {
            pin.select.prepare(base, &format!("pins[{p}].select"), &read_surface)?;
        }
        for (f, force) in self.forces.iter_mut().enumerate() {
            force
                .select
                .prepare(base, &format!("forces[{f}].select"), &read_surface)?;
        }
        for (c, constraint) in self.constraints.iter_mut().enumerate() {
            constraint
                .select
                .prepare(base, &format!("constraints[{c}].select"), &read_surface)?;
        }
        Ok(())
    }
}
