//! `hooke coarsen`: a fine scene's one body coarsened onto a coarse mesh,
//! written as a scene Hooke runs as it is (Kharevych 2010 thesis, §4.4), with a
//! check of the thesis' claim that the coarse body moves like the fine one: the lowest vibration
//! frequencies of the fine model, of the coarsened one, and of the naive
//! alternative whose coarse elements take the volume average of the fine
//! tensors.
//!
//! The output folder holds `coarse.toml` (the scene with the body's mesh
//! replaced by the coarse one and its material by `anisotropic_linear` read
//! per element from `tensors.csv`, densities included), `coarse_averaged.toml`
//! with `tensors_averaged.csv` (the naive one), the coarse mesh
//! (`coarse.mesh`, MEDIT, or `coarse.obj` in 2D), and `frequencies.csv` with
//! `frequencies.png`, and `display.json` (the fine mesh and the harmonic
//! fields at both meshes' vertices, for `hooke uncoarsen`). The body's regions, translation and discretization are
//! dropped from the coarse scene (the tensors hold the materials, the mesh is
//! written where it sits); pins, forces and everything else stay as written.

use super::Scene;
use crate::coarsen::{coarsen, Coarsening, CoarseningSettings};
use crate::error::{HookeError, Result};
use crate::mesh::Mesh;
use crate::output::atomic::write_bytes_atomically;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What `hooke coarsen` did.
pub struct CoarsenedScene {
    /// The coarsening itself: per coarse element tensor, density and coverage.
    pub coarsening: Coarsening,
    /// Elements of the fine body.
    pub fine_elements: usize,
    /// Elements of the coarse mesh.
    pub coarse_elements: usize,
    /// Lowest frequencies (Hz) of the fine, coarsened and averaged models.
    pub frequencies: Vec<[f64; 3]>,
    /// The files written into the output folder.
    pub files: Vec<PathBuf>,
    /// Wall-clock time of the whole command, s.
    pub seconds: f64,
}

/// The scene's text as a table, with its one body's keys changed by `edit`
/// and `suffix` appended to its name.
fn edited_scene(scene: &Scene, suffix: &str, edit: impl FnOnce(&mut toml::Table)) -> Result<String> {
    let mut table: toml::Table =
        toml::from_str(&scene.text).map_err(|e| HookeError::parse(&scene.origin, None, e.message().to_string()))?;
    if !suffix.is_empty() {
        table.insert("name".into(), toml::Value::String(format!("{}{suffix}", scene.name())));
    }
    let body = table
        .get_mut("bodies")
        .and_then(|b| b.as_array_mut())
        .and_then(|b| b.first_mut())
        .and_then(|b| b.as_table_mut())
        .ok_or_else(|| HookeError::scene("bodies", "hooke coarsen needs a scene with one [[bodies]] entry"))?;
    edit(body);
    if !suffix.is_empty() {
        // The coarse scenes show their runs on the fine mesh through the display map beside them.
        let output = table
            .entry("output")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let Some(output) = output.as_table_mut() {
            output.insert("fine_display".into(), toml::Value::String("display.json".into()));
        }
    }
    toml::to_string(&table).map_err(|e| HookeError::scene("bodies", format!("cannot write the scene: {e}")))
}

/// The check [`write_coarse_eigenfit_scene`] makes first, for callers that
/// want to refuse before the coarsening runs: the fine scene must not have
/// an `[eigenfit]` table of its own (the composed scene gets one).
pub fn refuse_fine_eigenfit(scene: &Scene) -> Result<()> {
    match scene.file.eigenfit {
        Some(_) => Err(HookeError::scene(
            "eigenfit",
            "the fine scene has its own [eigenfit] table; --eigenfit writes one for the coarse scene",
        )),
        None => Ok(()),
    }
}

/// Coarsening composed with EigenFit (Kharevych 2010 thesis, ch. 4, with
/// Chen et al. 2019 (EigenFit)): writes `output/coarse_eigenfit.toml`, the
/// coarsened scene `output/coarse.toml` (written by [`coarsen_scene`]) with
/// an `[eigenfit]` table whose reference is the fine `scene` itself and
/// whose `modes` lowest modes it corrects. The coarsening gives the coarse
/// elements the fine material's anisotropy; EigenFit then removes what is
/// left of the coarse mesh's own stiffening, mode by mode. `hooke compare
/// output/coarse_eigenfit.toml --eigenfit` runs the fine scene, the coarsened
/// one alone, with DAC and with EigenFit. Returns the file's path.
pub fn write_coarse_eigenfit_scene(scene: &Scene, output: &Path, modes: usize) -> Result<PathBuf> {
    refuse_fine_eigenfit(scene)?;
    if modes == 0 {
        return Err(HookeError::scene("--eigenfit", "must correct at least one mode"));
    }
    let fine_path = std::fs::canonicalize(&scene.origin).map_err(|e| HookeError::io(Path::new(&scene.origin), e))?;
    let coarse_path = output.join("coarse.toml");
    let coarse = std::fs::read_to_string(&coarse_path).map_err(|e| HookeError::io(&coarse_path, e))?;
    let mut table: toml::Table = toml::from_str(&coarse)
        .map_err(|e| HookeError::parse(coarse_path.display().to_string(), None, e.message().to_string()))?;
    table.insert(
        "name".into(),
        toml::Value::String(format!("{}_coarse_eigenfit", scene.name())),
    );
    let mut eigenfit = toml::Table::new();
    eigenfit.insert(
        "reference_scene".into(),
        toml::Value::String(fine_path.to_string_lossy().into_owned()),
    );
    eigenfit.insert("modes".into(), toml::Value::Integer(modes as i64));
    table.insert("eigenfit".into(), toml::Value::Table(eigenfit));
    let text =
        toml::to_string(&table).map_err(|e| HookeError::scene("eigenfit", format!("cannot write the scene: {e}")))?;
    let header = format!(
        "# Written by hooke coarsen --eigenfit {modes} from {}: the coarsened scene (coarse.toml) with EigenFit \
         against the fine scene (Chen et al. 2019) on top of numerical coarsening (Kharevych 2010 thesis, ch. 4).\n",
        scene.origin
    );
    let path = output.join("coarse_eigenfit.toml");
    write_bytes_atomically(&path, (header + &text).as_bytes())?;
    Ok(path)
}

/// The `--coarse` argument: a mesh file, or a `bodies.mesh` value such as
/// `{ box = { size = [1, 1, 1], cells = [2, 2, 2] } }`.
fn mesh_value(spec: &str) -> Result<toml::Value> {
    let path = Path::new(spec);
    if path.is_file() {
        let absolute = std::fs::canonicalize(path).map_err(|e| HookeError::io(path, e))?;
        let mut file = toml::Table::new();
        file.insert(
            "file".into(),
            toml::Value::String(absolute.to_string_lossy().into_owned()),
        );
        return Ok(toml::Value::Table(file));
    }
    #[derive(serde::Deserialize)]
    struct Spec {
        mesh: toml::Value,
    }
    toml::from_str::<Spec>(&format!("mesh = {spec}"))
        .map(|s| s.mesh)
        .map_err(|e| {
            HookeError::scene(
                "--coarse",
                format!(
                    "{spec:?} is neither a mesh file nor a mesh value like {{ box = {{ size = [1, 1, 1], cells = [2, 2, 2] }} }}: {}",
                    e.message()
                ),
            )
        })
}

fn write_text(path: PathBuf, text: &str, files: &mut Vec<PathBuf>) -> Result<()> {
    write_bytes_atomically(&path, text.as_bytes())?;
    files.push(path);
    Ok(())
}

/// A planar triangle mesh as OBJ (z = 0), which 2D scenes read.
fn obj_text(mesh: &crate::mesh::TriangleMesh) -> String {
    let mut text = String::from("# coarse mesh written by hooke coarsen\n");
    for p in &mesh.vertices {
        let _ = writeln!(text, "v {:e} {:e} 0", p.x, p.y);
    }
    for t in &mesh.triangles {
        let _ = writeln!(text, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    text
}

/// The lowest `count` frequencies of a built scene's model about its start.
fn frequencies(scene: &Scene, count: usize) -> Result<Vec<f64>> {
    let built = scene.build()?;
    let free = built.model.dof_map(0.0).free_count();
    let modes = crate::modal::lowest_modes(
        &built.model,
        &built.initial_state,
        count.min(free),
        &crate::linalg::EigenSettings::default(),
    )?;
    Ok(modes.frequencies())
}

/// Coarsens the scene's body onto `coarse_spec` and writes the coarse scene
/// into `output`; `corotated` makes its material co-rotated, `modes` is how
/// many frequencies the check compares.
///
/// One function of about 125 lines: it writes the coarse scene, its tensor file and the averaged
/// scene from the same coarsening and keys.
pub fn coarsen_scene(
    scene: &Scene,
    coarse_spec: &str,
    corotated: bool,
    settings: CoarseningSettings,
    modes: usize,
    output: &Path,
) -> Result<CoarsenedScene> {
    let started = web_time::Instant::now();
    if scene.file.bodies.len() != 1 || !scene.file.networks.is_empty() {
        return Err(HookeError::scene(
            "bodies",
            "hooke coarsen takes a scene with exactly one body and no networks",
        ));
    }
    let fine = scene.build()?;
    if fine.model.vertex_groups().is_some() {
        return Err(HookeError::scene(
            "bodies[0].discretization",
            "hooke coarsen takes a continuous fine body",
        ));
    }
    // The coarse mesh, built by the scene's own mesh grammar where it sits.
    let mesh = mesh_value(coarse_spec)?;
    let coarse_text = edited_scene(scene, "", |body| {
        body.insert("mesh".into(), mesh);
        body.remove("regions");
        body.remove("discretization");
    })?;
    let coarse_scene = Scene::from_text(&coarse_text, &scene.origin, scene.base_directory.clone())
        .map_err(|e| HookeError::scene("--coarse", e.to_string()))?;
    let coarse_mesh = coarse_scene.build()?.model.mesh().clone();
    let coarsening = coarsen(&fine.model, &coarse_mesh, settings)?;

    crate::output::run_files::create_output_directory(output)?;
    let mut files = Vec::new();
    let mesh_name = match &coarse_mesh {
        Mesh::Tetrahedra(tets) => {
            let path = output.join("coarse.mesh");
            crate::io::medit::write_medit(&path, tets)?;
            files.push(path);
            "coarse.mesh"
        }
        Mesh::Triangles(triangles) => {
            write_text(output.join("coarse.obj"), &obj_text(triangles), &mut files)?;
            "coarse.obj"
        }
    };
    let mut written = Vec::new();
    for (averaged, tensors, name) in [
        (false, "tensors.csv", "coarse.toml"),
        (true, "tensors_averaged.csv", "coarse_averaged.toml"),
    ] {
        write_text(output.join(tensors), &coarsening.tensor_file(averaged), &mut files)?;
        let suffix = if averaged { "_averaged" } else { "_coarse" };
        let text = edited_scene(scene, suffix, |body| {
            let mut mesh = toml::Table::new();
            mesh.insert("file".into(), toml::Value::String(mesh_name.into()));
            let mut material = toml::Table::new();
            material.insert("model".into(), toml::Value::String("anisotropic_linear".into()));
            material.insert("elasticity_file".into(), toml::Value::String(tensors.into()));
            material.insert("corotated".into(), toml::Value::Boolean(corotated));
            // Every row of the tensor file carries its element's own density.
            material.insert("density".into(), toml::Value::Float(1000.0));
            body.insert("mesh".into(), toml::Value::Table(mesh));
            body.insert("material".into(), toml::Value::Table(material));
            for key in ["regions", "translate", "discretization"] {
                body.remove(key);
            }
        })?;
        let header = format!(
            "# Written by hooke coarsen from {} onto {coarse_spec} ({}): {} fine elements → {} coarse.\n",
            scene.origin,
            if averaged {
                "the naive volume average of the fine tensors, for comparison"
            } else {
                "numerical coarsening, Kharevych 2010 thesis, ch. 4"
            },
            fine.model.mesh().element_count(),
            coarse_mesh.element_count()
        );
        let path = output.join(name);
        write_text(path.clone(), &(header + &text), &mut files)?;
        written.push(path);
    }
    // What `hooke uncoarsen` needs to show a coarse run on the fine mesh.
    let map = crate::coarsen::display::DisplayMap::new(fine.model.mesh(), &coarse_mesh, &coarsening)?;
    let json = serde_json::to_string(&map).map_err(|e| HookeError::scene("bodies", format!("display map: {e}")))?;
    write_text(output.join("display.json"), &json, &mut files)?;
    // The check: the lowest frequencies of the three models.
    let fine_frequencies = frequencies(scene, modes)?;
    let coarse_frequencies = frequencies(&Scene::from_file(&written[0])?, modes)?;
    let averaged_frequencies = frequencies(&Scene::from_file(&written[1])?, modes)?;
    let rows: Vec<[f64; 3]> = (0..fine_frequencies
        .len()
        .min(coarse_frequencies.len())
        .min(averaged_frequencies.len()))
        .map(|i| [fine_frequencies[i], coarse_frequencies[i], averaged_frequencies[i]])
        .collect();
    let mut csv = String::from("mode,fine_hz,coarsened_hz,averaged_hz\n");
    for (i, row) in rows.iter().enumerate() {
        let _ = writeln!(csv, "{},{:e},{:e},{:e}", i + 1, row[0], row[1], row[2]);
    }
    write_text(output.join("frequencies.csv"), &csv, &mut files)?;
    let line = |k: usize| -> Vec<(f64, f64)> { rows.iter().enumerate().map(|(i, r)| ((i + 1) as f64, r[k])).collect() };
    let plot = output.join("frequencies.png");
    crate::output::plot_lines(
        &plot,
        &format!("{}: lowest frequencies, fine and coarse", scene.name()),
        ("mode", "frequency (Hz)"),
        &[
            ("fine".to_string(), line(0)),
            ("coarsened".to_string(), line(1)),
            ("averaged".to_string(), line(2)),
        ],
    )?;
    files.push(plot);
    Ok(CoarsenedScene {
        fine_elements: fine.model.mesh().element_count(),
        coarse_elements: coarse_mesh.element_count(),
        coarsening,
        frequencies: rows,
        files,
        seconds: started.elapsed().as_secs_f64(),
    })
}
