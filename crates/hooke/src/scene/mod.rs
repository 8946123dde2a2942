//! The TOML scene format: what to simulate, how, and what to write.
//! `Scene::from_file` parses and checks it; `Scene::build` makes the model and integrator.

mod build;
mod coarsened;
mod contact;
mod dimension;
mod format;
mod key_at;
mod materials;

pub use build::{BuildOptions, BuiltScene};
pub use coarsened::{coarsen_scene, refuse_fine_eigenfit, write_coarse_eigenfit_scene, CoarsenedScene};
pub use format::{
    BodySection, BoxMeshSection, ConstraintSection, ContactSection, ContactStiffness, CoordinatesSection,
    DiscontinuousSection, Discretization, EigenFitMethod, EigenFitSection, ForceSection, MaterialSection,
    MembraneSection, MeshSource, NetworkSection, NetworkShape, OutputSection, PinSection, RegionSection, SceneFile,
    SimulationSection, SubspaceSection,
};
pub use materials::BodyMaterials;

use crate::error::{HookeError, Result};
use std::path::{Path, PathBuf};

/// A parsed scene and the folder its relative paths are resolved against.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The scene's tables and keys, as parsed and checked.
    pub file: SceneFile,
    /// The scene's own text, kept for the run summary.
    pub text: String,
    /// Where the scene came from (a path, or `"<embedded demo>"`).
    pub origin: String,
    /// The folder the scene's relative paths (meshes, surfaces, tables) are resolved against.
    pub base_directory: PathBuf,
    /// The materials of each body and its regions, read from the material tables.
    pub materials: Vec<BodyMaterials>,
    /// Where precomputations are kept between runs, `[eigenfit]`'s fine-mesh
    /// eigenvalues and `[subspace]`'s eigenmodes and cubature (None:
    /// `.hooke-cache` beside the scene file; `hooke … --cache DIR`).
    pub cache_directory: Option<PathBuf>,
}

impl Scene {
    /// The folder precomputations are cached in (see `cache_directory`).
    pub fn cache_folder(&self) -> PathBuf {
        self.cache_directory
            .clone()
            .unwrap_or_else(|| self.base_directory.join(".hooke-cache"))
    }

    /// Reads and checks a scene file.
    pub fn from_file(path: &Path) -> Result<Scene> {
        let text = std::fs::read_to_string(path).map_err(|e| HookeError::io(path, e))?;
        // A bare file name's folder is the current one, said as such: an empty
        // path made absolute is an error, and a checkpoint must keep a real folder
        // to be resumed from elsewhere.
        let base = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Scene::from_text(&text, &path.display().to_string(), base)
    }

    /// The scene a run was made from, as its output folder keeps it (the
    /// scene text in `summary.json`, or in `checkpoint.json` while the run is
    /// unfinished). Paths in it are taken relative to the folder.
    pub fn of_run(directory: &Path) -> Result<Scene> {
        let mut last_error = None;
        for (name, key) in [("summary.json", "scene"), ("checkpoint.json", "scene_text")] {
            let path = directory.join(name);
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let text = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|json| json.get(key)?.as_str().map(str::to_string));
            match text {
                Some(text) => {
                    return Scene::from_text(&text, &format!("the scene in {}", path.display()), directory.into())
                }
                None => last_error = Some(HookeError::parse(&path, None, format!("holds no {key:?} text"))),
            }
        }
        Err(last_error.unwrap_or_else(|| {
            HookeError::io(
                directory.join("summary.json"),
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "not a run's output folder, or the run kept no scene",
                ),
            )
        }))
    }

    /// Parses scene text; `origin` names it in errors.
    pub fn from_text(text: &str, origin: &str, base_directory: PathBuf) -> Result<Scene> {
        let mut file: SceneFile = toml::from_str(text).map_err(|e| {
            let start = e.span().map(|span| span.start.min(text.len()));
            // Count the newlines before the error, so a key at the start of its line gets that line.
            let line = start.map(|start| text[..start].matches('\n').count() + 1);
            // The reader says where, in Rust's words; say which key, in the user's.
            let reason = crate::error::in_plain_words(e.message());
            let reason = match start.and_then(|start| key_at::key_at(text, start)) {
                Some(key) => format!("{key}: {reason}"),
                None => reason,
            };
            HookeError::parse(origin, line, reason)
        })?;
        let table: toml::Table =
            toml::from_str(text).map_err(|e| HookeError::parse(origin, None, e.message().to_string()))?;
        let raw = toml::Value::Table(table.clone());
        check_numbers(&raw, "")?;
        // Fixed-size lists (a vector's three coordinates) read only what they
        // take: a longer list written would be cut silently. The scene read
        // back as TOML has each list as long as it was taken.
        if let Ok(taken) = toml::Value::try_from(&file) {
            check_lengths(&raw, &taken, "")?;
        }
        dimension::check(&table)?;
        materials::check_material_keys(&file, text, origin)?;
        check_integrator_keys(&file, text, origin)?;
        check_solver_keys(&file, text, origin)?;
        file.validate()?;
        let materials = materials::body_materials(&file, &base_directory)?;
        file.prepare_shapes(&base_directory)?;
        Ok(Scene {
            file,
            text: text.to_string(),
            origin: origin.to_string(),
            base_directory,
            cache_directory: None,
            materials,
        })
    }

    /// The scene's name: its `name` key, else the file stem.
    pub fn name(&self) -> String {
        self.file.name.clone().unwrap_or_else(|| {
            Path::new(&self.origin)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scene".to_string())
        })
    }
}

/// Refuses an `[integrator]` key its integrator does not take, naming its line
/// (and saying where the Newton settings moved, for those).
fn check_integrator_keys(file: &SceneFile, text: &str, origin: &str) -> Result<()> {
    file.integrator.entry()?;
    if let Some((_, span, reason)) = file.integrator.unknown_key() {
        let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
        return Err(HookeError::parse(origin, Some(line), reason));
    }
    Ok(())
}

/// Refuses a `[solver]` key the chosen solver does not take (and an unknown
/// kind), naming its line.
fn check_solver_keys(file: &SceneFile, text: &str, origin: &str) -> Result<()> {
    #[derive(serde::Deserialize)]
    struct Spans {
        #[serde(default)]
        solver: std::collections::BTreeMap<toml::Spanned<String>, serde::de::IgnoredAny>,
    }
    let Some((key, reason)) = file.solver_key_problem() else {
        return Ok(());
    };
    let line = toml::from_str::<Spans>(text).ok().and_then(|spans| {
        let span = spans.solver.keys().find(|k| k.get_ref() == &key)?.span();
        Some(text[..span.start.min(text.len())].matches('\n').count() + 1)
    });
    Err(HookeError::parse(origin, line, format!("solver.{key}: {reason}")))
}

impl Scene {
    /// Run settings from the scene; `output_override` replaces its output folder.
    pub fn run_settings(&self, output_override: Option<&Path>) -> crate::simulation::RunSettings {
        let output = &self.file.output;
        let directory = match (output_override, &output.directory) {
            (Some(path), _) => path.to_path_buf(),
            (None, Some(dir)) => PathBuf::from(dir),
            (None, None) => PathBuf::from("out").join(self.name()),
        };
        crate::simulation::RunSettings {
            name: self.name(),
            duration: self.file.simulation.duration,
            time_step: self.file.simulation.time_step,
            output_directory: directory,
            vtk_every: output.vtk_every,
            energies: output.energies,
            plot: output.plot,
            render_every: output.render_every,
            render: output.render.unwrap_or_default(),
            fine_display: output.fine_display.as_ref().map(|path| self.base_directory.join(path)),
        }
    }
}

/// The largest magnitude a scene's number may have. Nothing physical in SI
/// units comes near it (stiffnesses reach 1e15), and numbers beyond it
/// overflow in the first products of a step, where the failure would blame
/// the solver instead of the input.
const LARGEST_SCENE_NUMBER: f64 = 1e30;

/// Refuses numbers no scene means: infinities, NaN, magnitudes beyond
/// [`LARGEST_SCENE_NUMBER`], and subnormal numbers (below 2.2e-308, where
/// precision is lost), naming the key.
fn check_numbers(value: &toml::Value, key: &str) -> Result<()> {
    match value {
        toml::Value::Float(x) => {
            let x = *x;
            let reason = if x.is_nan() {
                Some("is not a number (nan)".to_string())
            } else if x.is_infinite() {
                Some("must be finite".to_string())
            } else if x.abs() > LARGEST_SCENE_NUMBER {
                Some(format!(
                    "{x:e} is beyond any physical value (at most {LARGEST_SCENE_NUMBER:e} in magnitude)"
                ))
            } else if x != 0.0 && !x.is_normal() {
                Some(format!(
                    "{x:e} is too small to compute with (below {:e}); use 0 or a larger value",
                    f64::MIN_POSITIVE
                ))
            } else {
                None
            };
            match reason {
                Some(reason) => Err(HookeError::scene(key, reason)),
                None => Ok(()),
            }
        }
        toml::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_numbers(item, &format!("{key}[{i}]"))?;
            }
            Ok(())
        }
        toml::Value::Table(table) => {
            for (name, item) in table {
                let path = if key.is_empty() {
                    name.clone()
                } else {
                    format!("{key}.{name}")
                };
                check_numbers(item, &path)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Refuses a list in the scene as written (`raw`) longer than the scene
/// took it (`taken`, the parsed scene written back), naming its key.
fn check_lengths(raw: &toml::Value, taken: &toml::Value, key: &str) -> Result<()> {
    match (raw, taken) {
        (toml::Value::Array(written), toml::Value::Array(read)) => {
            if written.len() > read.len() {
                return Err(HookeError::scene(
                    key,
                    format!("has {} entries, but takes {}", written.len(), read.len()),
                ));
            }
            for (i, (a, b)) in written.iter().zip(read).enumerate() {
                check_lengths(a, b, &format!("{key}[{i}]"))?;
            }
            Ok(())
        }
        (toml::Value::Table(written), toml::Value::Table(read)) => {
            for (name, value) in written {
                if let Some(other) = read.get(name) {
                    let path = if key.is_empty() {
                        name.clone()
                    } else {
                        format!("{key}.{name}")
                    };
                    check_lengths(value, other, &path)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
