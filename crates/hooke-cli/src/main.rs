//! `hooke`: run elastodynamics scenes from the command line.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use hooke::integrate::IntegratorConfig;
use hooke::output::{readable, tidy};
use hooke::scene::Scene;
use hooke::HookeError;
use indicatif::{ProgressBar, ProgressStyle};
use signal_hook::consts::{SIGINT, SIGTERM};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Prints a line to standard output; a closed pipe (`hooke mesh ... | head`)
/// ends the output quietly instead of panicking.
macro_rules! say {
    ($($argument:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($argument)*);
    }};
}

/// The demo run by `hooke run` without a scene.
const DEMO_SCENE: &str = include_str!("../../../scenes/twisting_bar.toml");

#[derive(Parser)]
#[command(
    name = "hooke",
    version,
    about = "Finite element simulation of elastic deformable solids",
    arg_required_else_help = true,
    after_help = "To see Hooke at work, `hooke run` runs the built-in demo (a twisted bar) into out/twisting_bar."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The `--cache` option of the commands that build scenes.
#[derive(clap::Args, Clone, Default)]
struct CacheOption {
    /// Where scenes keep precomputations between runs: [eigenfit]'s fine-mesh rest eigenvalues,
    /// [subspace]'s eigenmodes and cubature (default: .hooke-cache beside the scene file).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
}

/// The `--cache` folder, set once from the command line.
static CACHE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// A scene read from a file, with the command line's cache folder.
fn scene_from_file(path: &Path) -> Result<Scene, HookeError> {
    Scene::from_file(path).map(with_cache)
}

fn with_cache(mut scene: Scene) -> Scene {
    scene.cache_directory = CACHE.get().cloned();
    scene
}

#[derive(Subcommand)]
enum Command {
    /// Run a scene (the built-in twisting-bar demo when none is given).
    Run {
        /// The scene file (TOML).
        scene: Option<PathBuf>,
        /// Output folder (default: the scene's `output.directory`, else out/<scene name>).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// No progress bar.
        #[arg(short, long)]
        quiet: bool,
        /// Go on with the stopped run in this folder (interrupted, failed or killed) from its last
        /// checkpoint; its scene is the one kept in the checkpoint.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["scene", "output"])]
        resume: Option<PathBuf>,
        #[command(flatten)]
        cache: CacheOption,
    },
    /// Run a scene several ways and compare the runs: integrators (the default), minimisers
    /// (--solvers), resolutions with EigenFit and DAC (--eigenfit), subspace solvers (--subspace),
    /// a subspace's modes and cubature (--subspace-grid), 2D discretizations (--discretizations)
    /// or a coarsening (--coarsening).
    Compare {
        /// The scene file (TOML).
        scene: PathBuf,
        /// Comma-separated integrators by name or alias (`hooke integrators` lists them). The
        /// scene's own integrator keeps its settings, the others take their defaults (the adaptive
        /// ones then take fixed steps, σ = 1).
        #[arg(short, long, value_delimiter = ',', default_value = "be,im,bdf2")]
        integrators: Vec<String>,
        /// Compare minimisers instead, on the scene's backward-Euler or static steps: comma-separated
        /// newton, lbfgs, local_global, each optionally with :history=N, :iterations=N, :cg=N (N
        /// preconditioned CG iterations per linear solve) or :initial=frame_hessian (L-BFGS on the
        /// frame's Hessian) (writes solvers.csv, solvers_iterations.png and solvers_seconds.png).
        #[arg(long, value_delimiter = ',', conflicts_with = "integrators")]
        solvers: Option<Vec<String>>,
        /// Compare resolutions instead (the scene needs an [eigenfit] table): runs fine, coarse,
        /// dac and eigenfit into subfolders and writes errors.csv and errors.png (largest position
        /// and velocity error against the fine run, on the fine mesh).
        #[arg(long, conflicts_with_all = ["integrators", "solvers"])]
        eigenfit: bool,
        /// Compare subspace solvers instead (the scene needs a [subspace] table): subspace mixed FEM
        /// and subspace FEM at the scene's iterations per step, and converged subspace FEM, into
        /// subfolders; writes subspace.csv, angular_momentum.png and angle.png (angular momentum and turn per block
        /// about the long axis), decrements.csv and decrements.png (the first step's Newton decrements).
        #[arg(long, conflicts_with_all = ["integrators", "solvers", "eigenfit"])]
        subspace: bool,
        /// Measure a skinning subspace over a grid of modes and cubature points instead (Trusty et
        /// al. 2023, Figs. 11 and 14): the scene's first step by converged subspace FEM per cell, against the
        /// full-space step; writes grid.csv, residual.png, displacement.png and cost.png.
        #[arg(long, conflicts_with_all = ["integrators", "solvers", "eigenfit", "subspace"])]
        subspace_grid: bool,
        /// Compare discretizations instead (2D scenes; Chen 2019 thesis, ch. 3 and 5): with --penalties, the
        /// lowest elastic eigenvalue of the scene made discontinuous (BZ and IP) at each penalty,
        /// beside the continuous one (penalty.csv, penalty.png); with --refinements, the same for
        /// continuous, BZ and IP with every rectangle's cells multiplied by each factor
        /// (refinement.csv, refinement.png); with neither, the scene as written and its continuous
        /// twin (semi-implicit Euler where it names dgsi) run, with their total energies in energies.png.
        #[arg(long, conflicts_with_all = ["integrators", "solvers", "eigenfit", "subspace", "subspace_grid"])]
        discretizations: bool,
        /// Compare a fine scene with its coarsening instead: DIR is the output of `hooke coarsen`
        /// on this scene; runs the fine scene, DIR/coarse.toml and DIR/coarse_averaged.toml into
        /// fine/, coarsened/ and averaged/, and writes trajectories.csv and trajectories.png (the
        /// centre of mass's fall), tracked_point.csv and tracked_point.png (one fine vertex's fall),
        /// extent.csv and extent.png (the body's extent along gravity) and runs.csv (sizes, times,
        /// speed-ups).
        #[arg(long, value_name = "DIR", conflicts_with_all = ["integrators", "solvers", "eigenfit", "subspace", "subspace_grid", "discretizations"])]
        coarsening: Option<PathBuf>,
        /// With --discretizations: the penalties η_f (Pa/m), comma-separated.
        #[arg(long, value_delimiter = ',', requires = "discretizations")]
        penalties: Option<Vec<f64>>,
        /// With --discretizations: the refinement factors, comma-separated (e.g. 1,2,4,8).
        #[arg(long, value_delimiter = ',', requires = "discretizations")]
        refinements: Option<Vec<usize>>,
        /// With --subspace-grid: the mode counts m.
        #[arg(long, value_delimiter = ',', default_value = "2,4,8,16")]
        grid_modes: Vec<usize>,
        /// With --subspace-grid: the cubature sizes, each a count (300), a multiple of m (20m) or all.
        #[arg(long, value_delimiter = ',', default_value = "1m,2m,5m,20m,all")]
        grid_points: Vec<String>,
        /// With --subspace: the slabs across the axis whose angular momenta about it are recorded.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
        blocks: u32,
        /// With --subspace: that axis, x, y or z (default: the body's longest at rest).
        #[arg(long, value_parser = ["x", "y", "z"])]
        axis: Option<String>,
        /// With --solvers: compare on variants of the scene with every spring stiffness of its
        /// networks scaled by each factor (Liu 2018 thesis, Fig. 5.3, left), comma-separated; writes each
        /// variant's comparison into a subfolder, and sweep.csv and sweep.png.
        #[arg(long, value_delimiter = ',', requires = "solvers")]
        stiffness_scales: Option<Vec<f64>>,
        /// With --solvers: the same with every cloth's cells multiplied by each factor and its
        /// springs' stiffness with them, the same cloth finer (Liu 2018 thesis, Fig. 5.3, right).
        #[arg(long, value_delimiter = ',', requires = "solvers")]
        cloth_refinements: Option<Vec<f64>>,
        /// With --solvers: how many frames (steps) to compare on.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        frames: u32,
        /// With --solvers: iterations per frame of each solver (Newton: at most 20).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
        iterations: u32,
        /// Output folder (default: out/<scene name>-comparison); each integrator writes a subfolder.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// No progress bar.
        #[arg(short, long)]
        quiet: bool,
        #[command(flatten)]
        cache: CacheOption,
    },
    /// Numerical coarsening (Kharevych 2010 thesis, ch. 4): the scene's one heterogeneous body carried onto a
    /// coarse mesh as one anisotropic tensor per coarse element. Writes OUTPUT/coarse.toml (runs as
    /// it is), its mesh and tensors.csv, the naive volume-averaged alternative
    /// (coarse_averaged.toml), and frequencies.csv/.png: the lowest frequencies of all three.
    Coarsen {
        /// The fine scene (TOML), with one body.
        scene: PathBuf,
        /// The coarse mesh: a mesh file, or a `bodies.mesh` value such as
        /// '{ box = { size = [1, 1, 1], cells = [2, 2, 2] } }' (2D: '{ rectangle = … }').
        #[arg(long, value_name = "MESH_SPEC")]
        coarse: String,
        /// The output folder.
        #[arg(short, long)]
        output: PathBuf,
        /// Write a co-rotated anisotropic material (for large rotations).
        #[arg(long)]
        corotated: bool,
        /// Load the harmonic problems along the fine boundary's own normals instead of the coarse faces'.
        #[arg(long)]
        fine_normals: bool,
        /// Hold what the scene's pins hold for the whole run at the affine field in the harmonic
        /// problems (mixed Dirichlet/Neumann), so a held edge stays straight; the pins must hold
        /// the body in place.
        #[arg(long)]
        held_pins: bool,
        /// How many of the lowest frequencies to compare.
        #[arg(short = 'n', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        modes: u32,
        /// Also write OUTPUT/coarse_eigenfit.toml: the coarsened scene corrected by EigenFit in this
        /// many lowest modes against the fine scene (`hooke compare OUTPUT/coarse_eigenfit.toml
        /// --eigenfit` runs fine, coarsened, DAC and the two composed).
        #[arg(long, value_name = "MODES", value_parser = clap::value_parser!(u32).range(1..))]
        eigenfit: Option<u32>,
        #[command(flatten)]
        cache: CacheOption,
    },
    /// Shows a run of a coarsened scene on its fine mesh (Kharevych 2010 thesis, §4.4.3): every frame of RUN
    /// reconstructed per coarse element from the harmonic displacements, as OUTPUT/fine.pvd.
    Uncoarsen {
        /// The coarse run's output folder (with frame.pvd).
        run: PathBuf,
        /// The folder `hooke coarsen` wrote (with display.json).
        #[arg(long, value_name = "DIR")]
        coarsening: PathBuf,
        /// Where the fine frames go.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// The lowest vibration modes of a scene's model about its initial state:
    /// frequencies (modes.csv) and mode shapes (mode.pvd).
    Modes {
        /// The scene file (TOML).
        scene: PathBuf,
        /// How many modes (at least 1; at most the free DOFs, which the table then says).
        #[arg(short = 'n', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        count: u32,
        /// Output folder (default: out/<scene name>-modes).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Run the scene and track its lowest eigenvalues at every step instead, and how many
        /// modes still match a rest mode (mode_tracks.csv, mode_tracks.png; Chen et al. 2019 (EigenFit), Fig. 5).
        #[arg(long)]
        track: bool,
        #[command(flatten)]
        about: AboutState,
        #[command(flatten)]
        cache: CacheOption,
    },
    /// Write the scene's stiffness K.mtx, mass M.mtx (and Rayleigh damping D.mtx), load f.mtx and
    /// gradient g.mtx over the free DOFs (Matrix Market), its energy E (energy.txt) and the list of
    /// free DOFs (free_dofs.csv), at its initial state or a frame's.
    Export {
        /// The scene file (TOML).
        scene: PathBuf,
        /// Output folder (default: out/<scene name>-matrices).
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        about: AboutState,
        #[command(flatten)]
        cache: CacheOption,
    },
    /// Write a scene for the browser page (web/): a copy of the scene file and, for a [subspace]
    /// scene, its eigenmodes and cubature (NAME.subspace.json), which the page then loads instead of
    /// computing them.
    ExportWeb {
        /// The scene file (TOML); its meshes must be generated (the page has no files).
        scene: PathBuf,
        /// Output folder (default: the current folder).
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        cache: CacheOption,
    },
    /// List the integrators a scene can name, with their aliases, settings and what they handle.
    Integrators,
    /// List the solvers a scene's [solver] table can name: the minimisers, with their own keys,
    /// defaults and what they need, the keys they all share, and the solvers with an integrator
    /// of their own (subspaces, mixed FEM).
    Solvers,
    /// Check a scene: parse it, build its meshes and model, and report what it contains.
    Check {
        /// The scene file (TOML).
        scene: PathBuf,
        #[command(flatten)]
        cache: CacheOption,
    },
    /// Mesh a closed surface (.obj, .stl, .ply) or a shape recipe (.toml) into
    /// tetrahedra by isosurface stuffing, and report the mesh quality.
    Mesh {
        /// The surface file or recipe.
        input: PathBuf,
        /// Output mesh: .mesh (MEDIT) or .vtu (VTK).
        #[arg(short, long)]
        output: PathBuf,
        /// Lattice spacing (default: the recipe's, or 1/30 of a surface's bounding box diagonal).
        #[arg(short, long)]
        edge_length: Option<f64>,
    },
    /// Draw a mesh (.mesh, .node, .msh), a frame of a run (.vtu) or a scene's
    /// initial state (.toml) into a PNG picture; or a whole run (its output
    /// folder) into one picture per frame, with one camera and colour range,
    /// time stamps and a colour bar, and with --gif an animation.
    Render {
        /// What to draw: a mesh file, a frame (.vtu), a scene (.toml) or a run's output folder.
        input: PathBuf,
        /// The PNG to write; for a run, the folder for its pictures.
        #[arg(short, long)]
        output: PathBuf,
        /// For a run: also write animation.gif (an output ending in .gif is the animation alone).
        #[arg(long)]
        gif: bool,
        /// Cut the body open to show its inside: a plane through (px, py, pz); the side its normal
        /// (nx, ny, nz) points to is taken away.
        #[arg(
            long,
            value_name = "PX,PY,PZ,NX,NY,NZ",
            value_delimiter = ',',
            allow_hyphen_values = true
        )]
        clip: Option<Vec<f64>>,
        /// Fixed colour range of a scalar field (default: the range over all pictures drawn).
        #[arg(long, value_name = "LOW,HIGH", value_delimiter = ',', allow_hyphen_values = true)]
        range: Option<Vec<f64>>,
        /// Colour by: label, material (scenes), energy_density, displacement, volume_ratio (det F) or plain.
        #[arg(short, long, default_value = "label")]
        field: hooke::output::RenderField,
        /// Named view: iso, front, back, left, right or top (overridden by --azimuth/--elevation).
        #[arg(short, long, default_value = "iso")]
        view: String,
        /// Camera azimuth in degrees about the vertical (z) axis, from +x toward +y (−90: the front view, from −y).
        #[arg(long, allow_hyphen_values = true)]
        azimuth: Option<f64>,
        /// Camera elevation in degrees above the horizontal (90: from the top).
        #[arg(long, allow_hyphen_values = true)]
        elevation: Option<f64>,
        /// Image size, WIDTHxHEIGHT.
        #[arg(short, long, default_value = "800x600")]
        size: String,
        #[command(flatten)]
        cache: CacheOption,
    },
}

fn load(scene: Option<&Path>) -> Result<Scene, HookeError> {
    match scene {
        Some(path) => scene_from_file(path),
        None => Scene::from_text(
            DEMO_SCENE,
            "<embedded demo: scenes/twisting_bar.toml>",
            PathBuf::from("."),
        ),
    }
}

/// Ctrl-C (SIGINT) and SIGTERM ask a run to stop at the end of its current
/// step; a second one ends the process at once. The exit status is then the
/// shell's 128 + signal number (130, 143).
struct StopRequest {
    requested: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl StopRequest {
    fn install() -> StopRequest {
        let requested = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        for number in [SIGINT, SIGTERM] {
            // Without handlers the default action still ends the run, only less tidily.
            let exit_code = 128 + number;
            let _ = signal_hook::flag::register_conditional_shutdown(number, exit_code, Arc::clone(&requested));
            let _ = signal_hook::flag::register_usize(number, Arc::clone(&signal), number as usize);
            let _ = signal_hook::flag::register(number, Arc::clone(&requested));
        }
        StopRequest { requested, signal }
    }

    /// The exit status after the run stopped on request.
    fn exit_status(&self) -> u8 {
        match self.signal.load(Ordering::SeqCst) as i32 {
            SIGTERM => 143,
            _ => 130,
        }
    }
}

/// "153 vertices, 384 tetrahedra", with the springs and membrane triangles
/// when there are any and without elements when there are none (a pure
/// mass-spring network).
fn model_size(model: &hooke::model::Model) -> String {
    let mut parts = vec![format!("{} vertices", model.mesh().vertex_count())];
    let elements = model.mesh().element_count();
    if elements > 0 {
        parts.push(format!("{elements} {}", model.mesh().element_name()));
    }
    // Springs and membranes are the terms drawn as edges; each is named "N
    // things", and the counts of terms of one kind are summed.
    let mut counted: Vec<(usize, String)> = Vec::new();
    for term in model.terms().iter().filter(|t| !t.drawn_edges().is_empty()) {
        let name = term.name();
        let (count, what) = match name.split_once(' ').map(|(n, w)| (n.parse::<usize>(), w)) {
            Some((Ok(count), what)) => (count, what.to_string()),
            _ => (1, name),
        };
        match counted.iter_mut().find(|(_, w)| *w == what) {
            Some((total, _)) => *total += count,
            None => counted.push((count, what)),
        }
    }
    parts.extend(counted.into_iter().map(|(count, what)| format!("{count} {what}")));
    parts.join(", ")
}

/// What `main` ends with.
enum Outcome {
    Done,
    Stopped { status: u8 },
}

fn run(scene: Option<&Path>, output: Option<&Path>, quiet: bool) -> Result<Outcome, HookeError> {
    let scene = load(scene)?;
    let settings = scene.run_settings(output);
    simulate(&scene, &settings, None, quiet)
}

/// `hooke run --resume DIR`: the scene kept in the checkpoint, into the same folder.
fn resume_run(directory: &Path, quiet: bool) -> Result<Outcome, HookeError> {
    let checkpoint = hooke::checkpoint::Checkpoint::read(directory)?;
    let origin = format!(
        "the scene kept in {}",
        directory.join(hooke::checkpoint::FILE_NAME).display()
    );
    let scene = with_cache(Scene::from_text(
        &checkpoint.scene_text,
        &origin,
        checkpoint.scene_directory.clone(),
    )?);
    let settings = scene.run_settings(Some(directory));
    eprintln!(
        "resuming after step {} of {} (t = {})",
        checkpoint.step,
        checkpoint.steps_planned,
        tidy(checkpoint.state.time)
    );
    simulate(&scene, &settings, Some(checkpoint), quiet)
}

/// Runs a scene (from the start, or from a checkpoint), printing its progress and how it ended.
fn simulate(
    scene: &Scene,
    settings: &hooke::simulation::RunSettings,
    checkpoint: Option<hooke::checkpoint::Checkpoint>,
    quiet: bool,
) -> Result<Outcome, HookeError> {
    let mut built = scene.build()?;
    for note in &built.notes {
        eprintln!("note: {note}");
    }
    let steps = settings.step_count();
    eprintln!(
        "{}: {}, {} steps of {} s with {} → {}",
        settings.name,
        model_size(&built.model),
        steps,
        readable(settings.time_step),
        built.integrator.name(),
        settings.output_directory.display()
    );
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new(steps as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} steps  {elapsed} (eta {eta})") {
            bar.set_style(style);
        }
        bar
    };
    let mut progress = |step: usize, _: usize| bar.set_position(step as u64);
    let stop = StopRequest::install();
    let mut simulation = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), settings)
        .notes(built.notes.clone())
        .scene_text(scene.text.clone())
        .scene_directory(std::path::absolute(&scene.base_directory).unwrap_or_else(|_| scene.base_directory.clone()))
        .progress(&mut progress)
        .stop_when(&stop.requested);
    if let Some(checkpoint) = checkpoint {
        simulation = simulation.resume_from(checkpoint);
    }
    let result = simulation.run(built.initial_state.clone());
    bar.finish_and_clear();
    // An Err here means the run could not start: nothing was kept.
    let outcome = result?;
    let summary = &outcome.summary;
    // The scene's notes were printed above; the rest are the run's own.
    for note in summary.notes.iter().skip(built.notes.len()) {
        eprintln!("note: {note}");
    }
    match outcome.failure {
        None => {
            eprintln!(
                "completed {} steps in {:.2} s ({} {}); results in {}",
                summary.statistics.steps,
                summary.wall_seconds,
                summary.statistics.total_iterations,
                summary.iterations_are,
                settings.output_directory.display()
            );
            Ok(Outcome::Done)
        }
        Some(HookeError::Interrupted { .. }) => {
            eprintln!(
                "interrupted: stopped at t = {} after {} of {} steps; the steps it finished are kept in {} (see summary.json); `hooke run --resume {}` goes on",
                tidy(summary.final_time),
                summary.statistics.steps,
                summary.steps_planned,
                settings.output_directory.display(),
                settings.output_directory.display()
            );
            Ok(Outcome::Stopped {
                status: stop.exit_status(),
            })
        }
        Some(error) => {
            eprintln!(
                "the run stopped early at t = {} after {} of {} steps; the steps it finished are kept in {} (see summary.json)",
                tidy(summary.final_time),
                summary.statistics.steps,
                summary.steps_planned,
                settings.output_directory.display()
            );
            Err(error)
        }
    }
}

/// Progress of named runs one after another (a comparison) on one bar.
fn named_progress(bar: &ProgressBar) -> impl FnMut(&str, usize, usize) + '_ {
    |name: &str, step: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_message(name.to_string());
        bar.set_position(step as u64);
    }
}

fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("{msg:>28} {bar:40} {pos}/{len} steps  {elapsed} (eta {eta})") {
        bar.set_style(style);
    }
    bar
}

/// `hooke compare --subspace`: subspace mixed FEM, subspace FEM and the converged reference.
fn compare_subspace(
    scene: &Path,
    blocks: usize,
    axis: Option<&str>,
    output: Option<&Path>,
    quiet: bool,
) -> Result<(), HookeError> {
    let axis = axis.map(|a| match a {
        "x" => 0,
        "y" => 1,
        _ => 2,
    });
    let scene = scene_from_file(scene)?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-subspace", scene.name())));
    let bar = progress_bar(quiet);
    let stop = StopRequest::install();
    let progress = &mut named_progress(&bar);
    let comparison =
        hooke::studies::subspace::compare_subspace(&scene, &directory, blocks, axis, progress, Some(&stop.requested))?;
    bar.finish_and_clear();
    say!("largest |angular momentum| of block {} of {blocks}:", comparison.block);
    for (name, seconds, peak) in &comparison.runs {
        say!("{name:<10} {peak:>12.4e} kg m²/s   {seconds:>8.2} s");
    }
    for (name, decrements) in ["mixed_fem", "fem"].iter().zip(&comparison.decrements) {
        let shown: Vec<String> = decrements.iter().take(6).map(|d| format!("{d:.1e}")).collect();
        say!("{name:<10} first-step decrements: {} …", shown.join(", "));
    }
    say!("written to {}", directory.display());
    Ok(())
}

/// `hooke compare --subspace-grid`: a subspace's accuracy and cost over modes × cubature points.
fn compare_subspace_grid(
    scene: &Path,
    modes: &[usize],
    points: &[String],
    output: Option<&Path>,
    quiet: bool,
) -> Result<(), HookeError> {
    let points = points
        .iter()
        .map(|p| hooke::studies::subspace_grid::PointCount::parse(p))
        .collect::<Result<Vec<_>, _>>()?;
    let scene = scene_from_file(scene)?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-subspace-grid", scene.name())));
    let bar = progress_bar(quiet);
    let progress = &mut named_progress(&bar);
    let grid = hooke::studies::subspace_grid::compare_subspace_grid(&scene, modes, &points, &directory, progress)?;
    bar.finish_and_clear();
    say!(
        "{:>6} {:>7} {:>12} {:>14} {:>12}",
        "m",
        "points",
        "residual",
        "displacement",
        "ms/iter"
    );
    for cell in std::iter::once(&grid.reference).chain(&grid.cells) {
        let m = match cell.modes {
            0 => "full".to_string(),
            m => m.to_string(),
        };
        say!(
            "{m:>6} {:>7} {:>12.3e} {:>14.5} {:>12.3}{}",
            cell.points,
            cell.residual / grid.start_residual.max(f64::MIN_POSITIVE),
            cell.max_displacement,
            1e3 * cell.seconds_per_iteration,
            if cell.converged { "" } else { "  (not converged)" }
        );
    }
    say!("written to {}", directory.display());
    Ok(())
}

/// `hooke uncoarsen`: a coarse run's frames on the fine mesh.
fn uncoarsen(run: &Path, coarsening: &Path, output: &Path) -> Result<(), HookeError> {
    let map = hooke::coarsen::display::read_display_map(&coarsening.join("display.json"))?;
    let frames = hooke::coarsen::display::show_run_on_fine_mesh(run, &map, output)?;
    say!(
        "{frames} frames on the fine mesh ({} vertices) written to {}",
        map.fine_positions.len() / map.dimension,
        output.join("fine.pvd").display()
    );
    Ok(())
}

/// `hooke coarsen`: a fine scene coarsened onto a coarse mesh, with its frequency check.
fn coarsen(
    scene: &Path,
    coarse: &str,
    output: &Path,
    corotated: bool,
    fine_normals: bool,
    held_pins: bool,
    (modes, eigenfit): (usize, Option<usize>),
) -> Result<(), HookeError> {
    let scene = scene_from_file(scene)?;
    if eigenfit.is_some() {
        hooke::scene::refuse_fine_eigenfit(&scene)?;
    }
    let settings = hooke::coarsen::CoarseningSettings {
        fine_normals,
        held_pins,
    };
    let result = hooke::scene::coarsen_scene(&scene, coarse, corotated, settings, modes, output)?;
    let coverage = result.coarsening.coverage.iter().copied().fold(f64::INFINITY, f64::min);
    say!(
        "{} fine elements → {} coarse in {:.2} s; least covered coarse element {:.1} %, fine mass outside the coarse mesh {:.2} %",
        result.fine_elements,
        result.coarse_elements,
        result.seconds,
        100.0 * coverage,
        100.0 * result.coarsening.lost_mass_fraction
    );
    if !result.coarsening.voids.is_empty() {
        say!(
            "{} coarse elements hold (almost) no fine material or came out nearly singular and were given the void floor (first: {:?})",
            result.coarsening.voids.len(),
            &result.coarsening.voids[..result.coarsening.voids.len().min(8)]
        );
    }
    say!("{:>5} {:>12} {:>12} {:>12}", "mode", "fine Hz", "coarsened", "averaged");
    for (i, [fine, coarsened, averaged]) in result.frequencies.iter().enumerate() {
        say!("{:>5} {fine:>12.5} {coarsened:>12.5} {averaged:>12.5}", i + 1);
    }
    if let Some(modes) = eigenfit {
        let path = hooke::scene::write_coarse_eigenfit_scene(&scene, output, modes)?;
        say!(
            "{} corrects the coarsened scene's {modes} lowest modes by EigenFit; `hooke compare {} --eigenfit` compares it",
            path.display(),
            path.display()
        );
    }
    say!("written to {}", output.display());
    Ok(())
}

/// `hooke compare --discretizations`: the discontinuous Galerkin studies of the Chen 2019 thesis.
fn compare_discretizations(
    scene: &Path,
    penalties: Option<&[f64]>,
    refinements: Option<&[usize]>,
    output: Option<&Path>,
    quiet: bool,
) -> Result<(), HookeError> {
    use hooke::studies::discretizations::{compare_energies, sweep_penalties, sweep_refinements};
    let scene = scene_from_file(scene)?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-discretizations", scene.name())));
    let bar = progress_bar(quiet);
    let progress = &mut named_progress(&bar);
    if let Some(penalties) = penalties {
        let (continuous, rows) = sweep_penalties(&scene, penalties, &directory, progress)?;
        bar.finish_and_clear();
        say!("lowest elastic eigenvalue (rad²/s²); continuous {continuous:.6e}");
        say!("{:>12} {:>14} {:>14}", "penalty", "DG-BZ", "DG-IP");
        for [eta, bz, ip] in rows {
            say!("{eta:>12.3e} {bz:>14.6e} {ip:>14.6e}");
        }
    }
    if let Some(factors) = refinements {
        let rows = sweep_refinements(&scene, factors, &directory, progress)?;
        bar.finish_and_clear();
        say!("lowest elastic eigenvalue (rad²/s²) against resolution");
        say!(
            "{:>7} {:>10} {:>14} {:>14} {:>14}",
            "factor",
            "triangles",
            "continuous",
            "DG-BZ",
            "DG-IP"
        );
        for row in rows {
            let [c, b, i] = row.eigenvalues;
            say!(
                "{:>7} {:>10} {c:>14.6e} {b:>14.6e} {i:>14.6e}",
                row.factor,
                row.triangles
            );
        }
    }
    if penalties.is_none() && refinements.is_none() {
        let stop = StopRequest::install();
        let runs = compare_energies(&scene, &directory, progress, Some(&stop.requested))?;
        bar.finish_and_clear();
        for (name, records) in runs {
            if let (Some(first), Some(last)) = (records.first(), records.last()) {
                say!(
                    "{name:<40} total energy {:.6e} → {:.6e} J/m ({:+.2} %)",
                    first.total,
                    last.total,
                    100.0 * (last.total - first.total) / first.total.abs().max(f64::MIN_POSITIVE)
                );
            }
        }
    }
    say!("written to {}", directory.display());
    Ok(())
}

/// `hooke compare --coarsening DIR`: the fine scene and its two coarse scenes run, their falls and times.
fn compare_coarsening(scene: &Path, coarsening: &Path, output: Option<&Path>, quiet: bool) -> Result<(), HookeError> {
    let scene = scene_from_file(scene)?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-coarsening", scene.name())));
    let bar = progress_bar(quiet);
    let stop = StopRequest::install();
    let progress = &mut named_progress(&bar);
    let runs = hooke::studies::coarsening::compare_coarsening(
        &scene,
        coarsening,
        &directory,
        progress,
        Some(&stop.requested),
    )?;
    bar.finish_and_clear();
    say!(
        "{:<10} {:>9} {:>7} {:>10} {:>10} {:>10} {:>9} {:>14}",
        "run",
        "elements",
        "steps",
        "iterations",
        "wall (s)",
        "steps (s)",
        "speed-up",
        "final fall (m)"
    );
    for run in &runs {
        say!(
            "{:<10} {:>9} {:>7} {:>10} {:>10.3} {:>10.3} {:>8.1}× {:>14.5}",
            run.name,
            run.elements,
            run.steps,
            run.iterations,
            run.seconds,
            run.step_seconds,
            run.speedup_over(&runs[0]),
            run.drops.last().map_or(0.0, |d| d.1)
        );
    }
    say!("written to {}", directory.display());
    Ok(())
}

/// `hooke compare --eigenfit`: fine, coarse, DAC and EigenFit runs, and the coarse ones' errors.
fn compare_resolutions(scene: &Path, output: Option<&Path>, quiet: bool) -> Result<(), HookeError> {
    let scene = scene_from_file(scene)?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-resolutions", scene.name())));
    let bar = progress_bar(quiet);
    let stop = StopRequest::install();
    let progress = &mut named_progress(&bar);
    let comparison =
        hooke::studies::resolution::compare_resolutions(&scene, &directory, progress, Some(&stop.requested))?;
    bar.finish_and_clear();
    for (name, seconds) in &comparison.seconds {
        say!("{name:<10} {seconds:>10.2} s");
    }
    if let Some(last) = comparison.rows.last() {
        let frames = comparison.rows.len() as f64;
        say!(
            "errors against the fine run (largest over the fine vertices at each frame; mean over the {} frames, and at t = {}):",
            comparison.rows.len(),
            tidy(last.time)
        );
        say!(
            "{:<10} {:>15} {:>15} {:>17} {:>17}",
            "",
            "mean position",
            "final position",
            "mean velocity",
            "final velocity"
        );
        for (v, (position, velocity)) in last.errors.iter().enumerate() {
            let mean = |part: fn(&(f64, f64)) -> f64| {
                comparison.rows.iter().map(|row| part(&row.errors[v])).sum::<f64>() / frames
            };
            say!(
                "{:<10} {:>13.3e} m {:>13.3e} m {:>13.3e} m/s {:>13.3e} m/s",
                hooke::studies::resolution::VARIANTS[v + 1],
                mean(|e| e.0),
                position,
                mean(|e| e.1),
                velocity
            );
        }
    }
    say!("written to {}", directory.display());
    Ok(())
}

/// `hooke compare --solvers`: minimisers at an equal budget, per iteration and per second.
fn compare_solvers(
    scene: &Path,
    names: &[String],
    frames: usize,
    iterations: usize,
    output: Option<&Path>,
    (stiffness_scales, refinements): (Option<&[f64]>, Option<&[f64]>),
) -> Result<(), HookeError> {
    let scene = scene_from_file(scene)?;
    let variants = hooke::studies::solvers::parse_solver_variants(names, iterations)?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-solvers", scene.name())));
    let stop = StopRequest::install();
    if stiffness_scales.is_some() || refinements.is_some() {
        for (option, values) in [
            ("--stiffness-scales", stiffness_scales),
            ("--cloth-refinements", refinements),
        ] {
            let values = values.unwrap_or(&[]);
            if (1..values.len()).any(|i| values[..i].contains(&values[i])) {
                return Err(HookeError::scene(
                    option,
                    "names a factor twice (each writes its own subfolder)",
                ));
            }
        }
        let mut sweep = Vec::new();
        for &stiffness in stiffness_scales.unwrap_or(&[1.0]) {
            for &refinement in refinements.unwrap_or(&[1.0]) {
                let mut label = Vec::new();
                if stiffness_scales.is_some() {
                    label.push(format!("stiffness_x{stiffness}"));
                }
                if refinements.is_some() {
                    label.push(format!("cells_x{refinement}"));
                }
                let variant = hooke::studies::solvers::network_variant(&scene, stiffness, refinement)?;
                sweep.push((label.join("_"), variant));
            }
        }
        let rows = hooke::studies::solvers::compare_solver_sweep(
            &sweep,
            &variants,
            frames,
            &directory,
            Some(&stop.requested),
        )?;
        let width = rows
            .iter()
            .map(|r| r.0.len() + r.1.len() + 1)
            .max()
            .unwrap_or(0)
            .max(28);
        say!(
            "{:<width$} {:>16} {:>16}",
            "variant and solver",
            "error at 10",
            "error at 100"
        );
        for (label, solver, points) in &rows {
            let at = |k: usize| {
                points
                    .get(k.min(points.len()).saturating_sub(1))
                    .map_or(f64::NAN, |p| p.1)
            };
            say!(
                "{:<width$} {:>16.3e} {:>16.3e}",
                format!("{label} {solver}"),
                at(10),
                at(100)
            );
        }
        say!("(geometric mean over the frames of the relative error after 10 and 100 iterations, or where the solver stopped)");
        say!("written to {}", directory.display());
        return Ok(());
    }
    let samples =
        hooke::studies::solvers::compare_solvers(&scene, &variants, frames, &directory, Some(&stop.requested))?;
    let width = variants
        .iter()
        .map(|v| v.label.chars().count())
        .max()
        .unwrap_or(0)
        .max(28);
    say!(
        "{:<width$} {:>12} {:>16} {:>14}",
        "solver",
        "iterations",
        "relative error",
        "ms per frame"
    );
    for variant in &variants {
        if let Some((iterations, error, seconds)) = hooke::studies::solvers::frame_summary(&variant.label, &samples) {
            say!(
                "{:<width$} {:>12.1} {:>16.3e} {:>14.2}",
                variant.label,
                iterations,
                error,
                1e3 * seconds
            );
        }
    }
    say!("(per frame, averaged over the frames: iterations taken, relative error where the solver stopped (geometric mean), time)");
    say!("written to {}", directory.display());
    Ok(())
}

fn compare(scene: &Path, names: &[String], output: Option<&Path>, quiet: bool) -> Result<Outcome, HookeError> {
    let scene = scene_from_file(scene)?;
    let integrators = names
        .iter()
        .map(|name| {
            IntegratorConfig::from_name(name.trim()).ok_or_else(|| {
                HookeError::scene(
                    "--integrators",
                    format!(
                        "unknown integrator '{name}' (known: {})",
                        hooke::integrate::registry::names()
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-comparison", scene.name())));
    let bar = progress_bar(quiet);
    let stop = StopRequest::install();
    let progress = &mut named_progress(&bar);
    let runs = hooke::studies::integrators::compare(&scene, &integrators, &directory, progress, Some(&stop.requested))?;
    bar.finish_and_clear();
    say!(
        "{:<30} {:>10} {:>8} {:>10} {:>14} {:>14}",
        "integrator",
        "status",
        "steps",
        "seconds",
        "E(0) [J]",
        "E(end) [J]"
    );
    for run in &runs {
        say!(
            "{:<30} {:>10} {:>8} {:>10.2} {:>14.6e} {:>14}",
            run.integrator,
            run.status,
            run.steps,
            run.wall_seconds,
            tidy(run.initial_total_energy),
            run.final_total_energy
                .map_or("-".to_string(), |e| format!("{:.6e}", tidy(e)))
        );
        if let Some(error) = &run.error {
            say!("    stopped: {error}");
        }
    }
    let plot = directory.join("comparison.png");
    if plot.is_file() {
        say!("plot: {}", plot.display());
    }
    if let Some(run) = runs
        .iter()
        .find(|r| r.status == hooke::simulation::RunStatus::Interrupted)
    {
        eprintln!(
            "interrupted during {}: the integrators after it were not run; each run's folder keeps what it finished",
            run.integrator
        );
        return Ok(Outcome::Stopped {
            status: stop.exit_status(),
        });
    }
    match hooke::studies::integrators::incomplete(&runs) {
        Some(error) => Err(error),
        None => Ok(Outcome::Done),
    }
}

/// The state `modes` and `export` linearise about: the scene's start, or a frame of a run.
#[derive(clap::Args)]
struct AboutState {
    /// About the deformed state of this frame of a run (.vtu) instead of the scene's start.
    #[arg(long, value_name = "FRAME.vtu")]
    at: Option<PathBuf>,
    /// The time of that frame, s: it decides which pins hold.
    #[arg(long, default_value_t = 0.0, requires = "at")]
    time: f64,
}

impl AboutState {
    fn state(&self, built: &hooke::scene::BuiltScene) -> Result<hooke::model::State, HookeError> {
        match &self.at {
            Some(frame) => hooke::modal::state_at_frame(&built.model, frame, self.time),
            None => Ok(built.initial_state.clone()),
        }
    }
}

fn modes(scene: &Path, count: usize, output: Option<&Path>, about: &AboutState) -> Result<(), HookeError> {
    let scene = scene_from_file(scene)?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-modes", scene.name())));
    // With [eigenfit]: the fine, coarse and corrected frequencies, and the coarse mesh's shapes.
    let scene = match scene.file.eigenfit.is_some() {
        true => {
            let table = hooke::studies::resolution::write_frequency_table(&scene, count, &directory)?;
            say!(
                "{:>5} {:>14} {:>14} {:>14}",
                "mode",
                "fine [Hz]",
                "coarse [Hz]",
                "corrected [Hz]"
            );
            for (i, [fine, coarse, corrected]) in table.rows.iter().enumerate() {
                say!("{:>5} {:>14.6} {:>14.6} {:>14.6}", i + 1, fine, coarse, corrected);
            }
            say!("(frequencies.csv; the shapes below are the coarse mesh's)");
            if !table.pairs.is_empty() {
                say!("pairing of the corrected modes (pairing.csv):");
                say!("{:>12} {:>10} {:>8} {:>10}", "coarse mode", "fine mode", "MAC", "ratio");
                for pair in &table.pairs {
                    let fine = pair.fine.map_or("-".to_string(), |j| (j + 1).to_string());
                    let mac = match pair.mac.is_nan() {
                        true => "-".to_string(),
                        false => format!("{:.3}", pair.mac),
                    };
                    say!("{:>12} {:>10} {:>8} {:>10.4}", pair.coarse + 1, fine, mac, pair.ratio);
                }
            }
            hooke::studies::resolution::coarse_scene(&scene)?
        }
        false => scene,
    };
    let built = scene.build()?;
    let state = about.state(&built)?;
    let modes = hooke::modal::lowest_modes(&built.model, &state, count, &Default::default())?;
    hooke::modal::write_modes(&built.model, &state, &modes, &directory)?;
    say!(
        "{:>5} {:>16} {:>14} {:>10}",
        "mode",
        "frequency [Hz]",
        "ω² [rad²/s²]",
        "residual"
    );
    for (i, ((f, l), r)) in modes
        .frequencies()
        .iter()
        .zip(&modes.eigenvalues)
        .zip(&modes.residuals)
        .enumerate()
    {
        say!("{:>5} {:>16.6} {:>14.6e} {:>10.1e}", i + 1, tidy(*f), tidy(*l), r);
    }
    let frequencies = modes.frequencies();
    if modes.eigenvalues.len() < count {
        say!(
            "note: asked for {count} modes; the model has {} free DOFs, so that many were computed",
            modes.eigenvalues.len()
        );
    }
    let rigid = frequencies.iter().filter(|f| **f == 0.0).count();
    if rigid > 0 {
        say!("note: {rigid} rigid-body modes (ω² zero to rounding): the body is not held against them");
    }
    let unstable = frequencies.iter().filter(|f| f.is_nan()).count();
    if unstable > 0 {
        say!("note: {unstable} modes have ω² < 0 (frequency NaN): the state is unstable, as in buckling");
    }
    say!("written to {}", directory.display());
    Ok(())
}

/// `hooke modes --track`: the lowest eigenvalues over a run, and how many modes still match.
fn track_modes(scene: &Path, count: usize, output: Option<&Path>) -> Result<(), HookeError> {
    let scene = scene_from_file(scene)?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-mode-tracks", scene.name())));
    let tracks = hooke::studies::resolution::track_modes(&scene, count, &directory)?;
    let fewest = tracks.iter().map(|t| t.matched).min().unwrap_or(0);
    let first_loss = tracks.iter().find(|t| t.matched < count);
    say!(
        "{} steps tracked; fewest modes matching a rest mode: {fewest} of {count}",
        tracks.len()
    );
    if let Some(track) = first_loss {
        say!(
            "first loss at t = {}: {} of {count} matched",
            tidy(track.time),
            track.matched
        );
    }
    say!("written to {}", directory.display());
    Ok(())
}

fn export(scene: &Path, output: Option<&Path>, about: &AboutState) -> Result<(), HookeError> {
    let scene = scene_from_file(scene)?;
    let built = scene.build()?;
    let directory = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-matrices", scene.name())));
    let state = about.state(&built)?;
    for path in hooke::modal::export_matrices(&built.model, &state, &directory)? {
        say!("{}", path.display());
    }
    Ok(())
}

fn export_web(path: &Path, output: Option<&Path>) -> Result<(), HookeError> {
    let scene = scene_from_file(path)?;
    let directory = output.unwrap_or(Path::new("."));
    std::fs::create_dir_all(directory).map_err(|e| HookeError::io(directory, e))?;
    let stem = path
        .file_stem()
        .map_or("scene".into(), |s| s.to_string_lossy().into_owned());
    let copy = directory.join(format!("{stem}.toml"));
    if std::fs::canonicalize(path).ok() != std::fs::canonicalize(&copy).ok() {
        std::fs::copy(path, &copy).map_err(|e| HookeError::io(&copy, e))?;
    }
    say!("{}", copy.display());
    if scene.file.subspace.is_some() {
        let file = directory.join(format!("{stem}.subspace.json"));
        // Written beside, then renamed: a stopped export leaves no half file under the name.
        let partial = directory.join(format!("{stem}.subspace.json.partial"));
        std::fs::write(&partial, scene.precompute_subspace()?).map_err(|e| HookeError::io(&partial, e))?;
        std::fs::rename(&partial, &file).map_err(|e| HookeError::io(&file, e))?;
        say!("{}", file.display());
    }
    Ok(())
}

fn integrators() -> Result<(), HookeError> {
    for entry in hooke::integrate::INTEGRATORS {
        let integrator = entry.with_defaults();
        let aliases = if entry.aliases.is_empty() {
            String::new()
        } else {
            format!(" ({})", entry.aliases.join(", "))
        };
        say!("{}{aliases}", entry.name);
        say!("    {}", entry.summary);
        let mut keys: Vec<&str> = entry.keys.to_vec();
        if entry.uses_solver {
            keys.push("[solver]");
        }
        if !keys.is_empty() {
            say!("    settings: {}", keys.join(", "));
        }
        if let Ok(integrator) = integrator {
            say!("    handles: {}", integrator.capabilities());
        }
    }
    Ok(())
}

fn solvers() -> Result<(), HookeError> {
    say!("minimisers of the incremental potential ([solver] kind):");
    for entry in hooke::solve::registry::MINIMIZERS {
        let aliases = match entry.aliases.is_empty() {
            true => String::new(),
            false => format!(" ({})", entry.aliases.join(", ")),
        };
        say!("{}{aliases}", entry.name);
        say!("    {}", entry.summary);
        for key in entry.keys {
            let default = match key.default {
                "" => "unset".to_string(),
                value => value.to_string(),
            };
            say!("    {} = {default}: {}", key.name, key.meaning);
        }
        let needs = entry.capabilities.describe();
        if !needs.is_empty() {
            say!("    uses: {}", needs.join("; "));
        }
        say!(
            "    iterations per step by default: at most {}",
            entry.default_iteration_limit
        );
    }
    let shared: Vec<&str> = hooke::solve::SHARED_SOLVER_KEYS
        .iter()
        .copied()
        .filter(|k| *k != "kind")
        .collect();
    say!("keys every minimiser takes: {}", shared.join(", "));
    say!("solvers with an integrator of their own (backward Euler):");
    for entry in hooke::reduced::registry::REDUCED_SOLVERS {
        say!("{}", entry.name);
        say!("    {}", entry.summary);
    }
    say!("docs/scene-format.md, \"The [solver] table\", says what each key does.");
    Ok(())
}

fn check(scene: &Path) -> Result<(), HookeError> {
    let scene = scene_from_file(scene)?;
    let built = scene.build()?;
    for note in &built.notes {
        say!("note: {note}");
    }
    let model = &built.model;
    say!(
        "{}: {}, {} free DOFs at t = 0, integrator {}, {} steps",
        scene.name(),
        model_size(model),
        model.dof_map(0.0).free_count(),
        built.integrator.name(),
        scene.run_settings(None).step_count()
    );
    Ok(())
}

fn mesh(input: &Path, output: &Path, edge_length: Option<f64>) -> Result<(), HookeError> {
    let meshed = hooke::meshing::mesh_input(input, edge_length)?;
    hooke::meshing::write_mesh(output, &meshed.mesh)?;
    say!("{}", meshed.quality);
    say!(
        "lattice {:?} cells, {} cut points, {} vertices snapped to the surface",
        meshed.stuffing.lattice_cells,
        meshed.stuffing.cut_points,
        meshed.stuffing.warped_vertices
    );
    for note in meshed.stuffing.notes() {
        eprintln!("note: {note}");
    }
    let mut labels: Vec<i32> = meshed.mesh.labels.clone();
    labels.sort_unstable();
    labels.dedup();
    say!("labels             {labels:?}");
    say!("written to {}", output.display());
    Ok(())
}

struct RenderOptions<'a> {
    field: hooke::output::RenderField,
    view: &'a str,
    azimuth: Option<f64>,
    elevation: Option<f64>,
    size: &'a str,
    gif: bool,
    clip: Option<&'a [f64]>,
    range: Option<&'a [f64]>,
}

fn render(input: &Path, output: &Path, options: &RenderOptions) -> Result<(), HookeError> {
    let bad = |reason: String| HookeError::scene("render", reason);
    let mut settings = hooke::output::RenderSettings {
        field: options.field,
        ..Default::default()
    }
    .with_view(options.view)
    .map_err(bad)?;
    settings.azimuth_degrees = options.azimuth.unwrap_or(settings.azimuth_degrees);
    settings.elevation_degrees = options.elevation.unwrap_or(settings.elevation_degrees);
    let (width, height) = options
        .size
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
        .ok_or_else(|| bad(format!("size {:?} must read WIDTHxHEIGHT, e.g. 800x600", options.size)))?;
    settings.width = width;
    settings.height = height;
    settings.clip = match options.clip {
        None => None,
        Some(&[px, py, pz, nx, ny, nz]) => Some(hooke::output::ClipPlane {
            point: [px, py, pz],
            normal: [nx, ny, nz],
        }),
        Some(other) => {
            return Err(HookeError::scene(
                "--clip",
                format!("takes 6 numbers, PX,PY,PZ,NX,NY,NZ; got {}", other.len()),
            ))
        }
    };
    settings.range = match options.range {
        None => None,
        Some(&[low, high]) => Some([low, high]),
        Some(other) => {
            return Err(HookeError::scene(
                "--range",
                format!("takes 2 numbers, LOW,HIGH; got {}", other.len()),
            ))
        }
    };
    settings.validate("--range")?;
    let gif_file = output
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("gif"));
    if input.is_dir() && gif_file {
        // `-o anim.gif` names the animation itself, with no pictures beside it.
        let obstacles = run_obstacles(input);
        let path = hooke::output::render_run_gif(input, output, &settings, &obstacles)?;
        say!("an animation of {} in {}", input.display(), path.display());
        return Ok(());
    }
    if input.is_dir() {
        let obstacles = run_obstacles(input);
        let written = hooke::output::render_run(input, output, &settings, &obstacles, options.gif)?;
        say!(
            "{} pictures of {} in {}",
            written.len(),
            input.display(),
            output.display()
        );
        return Ok(());
    }
    if options.gif {
        return Err(bad("--gif needs a run's output folder as input".to_string()));
    }
    let extension = input
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let image = match extension.as_str() {
        "vtu" => {
            let frame = hooke::output::read_frame(input)?;
            hooke::output::render(
                &hooke::output::RenderInput {
                    mesh: &frame.mesh,
                    positions: &frame.positions,
                    element_values: &frame.strain_energy_density,
                    edges: &frame.edges,
                    obstacles: &[],
                },
                &settings,
            )?
        }
        "toml" => {
            let built = Scene::from_file(input)?.build()?;
            hooke::simulation::render_state(&built.model, &built.initial_state, &settings)?
        }
        _ => {
            let mesh = hooke::mesh::Mesh::Tetrahedra(hooke::io::read_mesh(input)?);
            hooke::output::render(
                &hooke::output::RenderInput {
                    mesh: &mesh,
                    positions: mesh.vertices(),
                    element_values: &vec![0.0; mesh.element_count()],
                    edges: &[],
                    obstacles: &[],
                },
                &settings,
            )?
        }
    };
    image.write_png(output)?;
    match image.field_range {
        Some((lo, hi)) => say!("{}: {:?} from {lo:.4e} to {hi:.4e}", output.display(), options.field),
        None => say!("{}", output.display()),
    }
    Ok(())
}

/// The obstacles of the run in `directory`, from the scene its output
/// folder keeps; none, with a note, when it keeps none.
fn run_obstacles(directory: &Path) -> Vec<hooke::model::Obstacle> {
    match Scene::of_run(directory) {
        Ok(scene) => scene.file.obstacles.clone(),
        Err(error) => {
            eprintln!("note: obstacles are not drawn: the run's scene was not found ({error})");
            Vec::new()
        }
    }
}

/// Runs one command; only `run` may end stopped on request.
fn dispatch(command: &Command) -> Result<Outcome, HookeError> {
    let done = |result: Result<(), HookeError>| result.map(|()| Outcome::Done);
    match command {
        Command::Run {
            scene,
            output,
            quiet,
            resume,
            ..
        } => match resume {
            Some(directory) => resume_run(directory, *quiet),
            None => run(scene.as_deref(), output.as_deref(), *quiet),
        },
        Command::Compare {
            scene,
            solvers: Some(solvers),
            frames,
            iterations,
            output,
            stiffness_scales,
            cloth_refinements,
            ..
        } => done(compare_solvers(
            scene,
            solvers,
            *frames as usize,
            *iterations as usize,
            output.as_deref(),
            (stiffness_scales.as_deref(), cloth_refinements.as_deref()),
        )),
        Command::Compare {
            scene,
            eigenfit: true,
            output,
            quiet,
            ..
        } => done(compare_resolutions(scene, output.as_deref(), *quiet)),
        Command::Compare {
            scene,
            coarsening: Some(coarsening),
            output,
            quiet,
            ..
        } => done(compare_coarsening(scene, coarsening, output.as_deref(), *quiet)),
        Command::Compare {
            scene,
            discretizations: true,
            penalties,
            refinements,
            output,
            quiet,
            ..
        } => done(compare_discretizations(
            scene,
            penalties.as_deref(),
            refinements.as_deref(),
            output.as_deref(),
            *quiet,
        )),
        Command::Compare {
            scene,
            subspace_grid: true,
            grid_modes,
            grid_points,
            output,
            quiet,
            ..
        } => done(compare_subspace_grid(
            scene,
            grid_modes,
            grid_points,
            output.as_deref(),
            *quiet,
        )),
        Command::Compare {
            scene,
            subspace: true,
            blocks,
            axis,
            output,
            quiet,
            ..
        } => done(compare_subspace(
            scene,
            *blocks as usize,
            axis.as_deref(),
            output.as_deref(),
            *quiet,
        )),
        Command::Compare {
            scene,
            integrators,
            output,
            quiet,
            ..
        } => compare(scene, integrators, output.as_deref(), *quiet),
        Command::Modes {
            scene,
            count,
            output,
            track: true,
            ..
        } => done(track_modes(scene, *count as usize, output.as_deref())),
        Command::Modes {
            scene,
            count,
            output,
            about,
            ..
        } => done(modes(scene, *count as usize, output.as_deref(), about)),
        Command::Export {
            scene, output, about, ..
        } => done(export(scene, output.as_deref(), about)),
        Command::ExportWeb { scene, output, .. } => done(export_web(scene, output.as_deref())),
        Command::Check { scene, .. } => done(check(scene)),
        Command::Uncoarsen {
            run,
            coarsening,
            output,
        } => done(uncoarsen(run, coarsening, output)),
        Command::Coarsen {
            scene,
            coarse,
            output,
            corotated,
            fine_normals,
            held_pins,
            modes,
            eigenfit,
            ..
        } => done(coarsen(
            scene,
            coarse,
            output,
            *corotated,
            *fine_normals,
            *held_pins,
            (*modes as usize, eigenfit.map(|m| m as usize)),
        )),
        Command::Integrators => done(integrators()),
        Command::Solvers => done(solvers()),
        Command::Mesh {
            input,
            output,
            edge_length,
        } => done(mesh(input, output, *edge_length)),
        Command::Render {
            input,
            output,
            gif,
            clip,
            field,
            view,
            azimuth,
            elevation,
            size,
            range,
            ..
        } => done(render(
            input,
            output,
            &RenderOptions {
                range: range.as_deref(),
                field: *field,
                view,
                azimuth: *azimuth,
                elevation: *elevation,
                size,
                gif: *gif,
                clip: clip.as_deref(),
            },
        )),
    }
}

/// The integrators `compare` accepts, for its help: every name with its aliases.
fn integrator_names() -> String {
    let names: Vec<String> = hooke::integrate::INTEGRATORS
        .iter()
        .map(|entry| match entry.aliases {
            [] => entry.name.to_string(),
            aliases => format!("{} ({})", entry.name, aliases.join(", ")),
        })
        .collect();
    format!("Integrators: {}.", names.join(", "))
}

fn main() -> ExitCode {
    // The list of integrators lives in the registry, so the help is completed here.
    let command = Cli::command().mut_subcommand("compare", |compare| compare.after_help(integrator_names()));
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let cache = match &cli.command {
        Command::Run { cache, .. }
        | Command::Compare { cache, .. }
        | Command::Coarsen { cache, .. }
        | Command::Modes { cache, .. }
        | Command::Export { cache, .. }
        | Command::ExportWeb { cache, .. }
        | Command::Check { cache, .. }
        | Command::Render { cache, .. } => cache.cache.clone(),
        _ => None,
    };
    if let Some(cache) = cache {
        let _ = CACHE.set(cache);
    }
    match dispatch(&cli.command) {
        Ok(Outcome::Done) => ExitCode::SUCCESS,
        Ok(Outcome::Stopped { status }) => ExitCode::from(status),
        Err(error) => {
            // Hooke's errors say what and where in their own message, their cause included.
            eprintln!("error: {error}");
            // Status 3: the machine was at fault (a full disk, a read-only folder, no memory);
            // 2: the input was; 1: a failure inside Hooke (numerics, solver).
            ExitCode::from(if error.is_environment_error() {
                3
            } else if error.is_user_error() {
                2
            } else {
                1
            })
        }
    }
}
