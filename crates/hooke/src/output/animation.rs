//! Pictures of a whole run, for an animation: every frame of its series drawn
//! with one camera window and one colour range (those that hold all frames,
//! or the range the settings fix), the obstacles, a time stamp and a colour
//! bar with units, and, on request, one animated GIF.

use super::atomic::write_atomically;
use super::{read_frame, render_framed, Framing, Image, RenderField, RenderInput, RenderSettings};
use crate::error::{HookeError, Result};
use crate::model::{Obstacle, ObstacleShape};
use std::path::{Path, PathBuf};

/// Hundredths of a second each picture shows in the GIF (25 pictures a second).
const GIF_DELAY: u16 = 4;

/// The frames of the run in `run_directory`, from its `frame.pvd`: time and path.
pub fn run_frames(run_directory: &Path) -> Result<Vec<(f64, PathBuf)>> {
    series_frames(run_directory, "frame")
}

/// The frames of the series `name` (`name.pvd`) in `run_directory`: time and
/// path (`fine` holds a coarse run shown on its fine mesh).
pub fn series_frames(run_directory: &Path, name: &str) -> Result<Vec<(f64, PathBuf)>> {
    let index = run_directory.join(format!("{name}.pvd"));
    let text = std::fs::read_to_string(&index).map_err(|error| {
        HookeError::io(
            &index,
            std::io::Error::new(
                error.kind(),
                format!("{error}: is {} a run's output folder?", run_directory.display()),
            ),
        )
    })?;
    let attribute = |line: &str, name: &str| -> Option<String> {
        let start = line.find(&format!("{name}=\""))? + name.len() + 2;
        line[start..].split('"').next().map(str::to_string)
    };
    let mut frames = Vec::new();
    for (number, line) in text.lines().enumerate().filter(|(_, l)| l.contains("<DataSet")) {
        let time = attribute(line, "timestep").and_then(|t| t.parse::<f64>().ok());
        let file = attribute(line, "file");
        match (time, file) {
            (Some(time), Some(file)) => frames.push((time, run_directory.join(file))),
            _ => {
                return Err(HookeError::parse(
                    &index,
                    Some(number + 1),
                    "a DataSet without a timestep or file",
                ))
            }
        }
    }
    if frames.is_empty() {
        return Err(HookeError::parse(&index, None, "the series holds no frame"));
    }
    Ok(frames)
}

/// Draws every frame of the run in `run_directory` into `output`
/// (`render_0000.png`, …, and `animation.gif` when `gif`) with the run's
/// `obstacles`; returns the paths.
pub fn render_run(
    run_directory: &Path,
    output: &Path,
    settings: &RenderSettings,
    obstacles: &[Obstacle],
    gif: bool,
) -> Result<Vec<PathBuf>> {
    let frames = run_frames(run_directory)?;
    render_frames(&frames, output, settings, obstacles, gif)
}

/// Draws every frame of the run in `run_directory` into one looping GIF at
/// `path` (no pictures beside it).
pub fn render_run_gif(
    run_directory: &Path,
    path: &Path,
    settings: &RenderSettings,
    obstacles: &[Obstacle],
) -> Result<PathBuf> {
    let frames = run_frames(run_directory)?;
    let mut pictures = Vec::with_capacity(frames.len());
    draw_frames(&frames, settings, obstacles, |_, image| {
        pictures.push(image);
        Ok(())
    })?;
    if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| HookeError::io(parent, e))?;
    }
    write_gif(path, &pictures)?;
    Ok(path.to_path_buf())
}

/// Draws `frames` (time, path) in one framing into `output` as
/// `render_0000.png`, … in their order (and `animation.gif` when `gif`).
pub fn render_frames(
    frames: &[(f64, PathBuf)],
    output: &Path,
    settings: &RenderSettings,
    obstacles: &[Obstacle],
    gif: bool,
) -> Result<Vec<PathBuf>> {
    settings.validate("render")?;
    crate::output::run_files::create_output_directory(output)?;
    let mut written = Vec::new();
    let mut pictures = Vec::new();
    draw_frames(frames, settings, obstacles, |index, image| {
        let png = output.join(format!("render_{index:04}.png"));
        image.write_png(&png)?;
        written.push(png);
        if gif {
            pictures.push(image);
        }
        Ok(())
    })?;
    if gif {
        let path = output.join("animation.gif");
        write_gif(&path, &pictures)?;
        written.push(path);
    }
    Ok(written)
}

/// Draws `frames` in one framing (one window and colour range for all, found
/// in a first pass), each with its time stamp and colour bar, and hands each
/// picture to `each` with its index.
fn draw_frames(
    frames: &[(f64, PathBuf)],
    settings: &RenderSettings,
    obstacles: &[Obstacle],
    mut each: impl FnMut(usize, Image) -> Result<()>,
) -> Result<()> {
    settings.validate("render")?;
    let draw = |time: f64, path: &Path, framing: &Framing| -> Result<Image> {
        let frame = read_frame(path)?;
        // Moving obstacles where they are at the frame's time.
        let shapes: Vec<ObstacleShape> = obstacles.iter().map(|o| o.shape_at(time)).collect();
        let element_values = match settings.field {
            RenderField::EnergyDensity => frame.strain_energy_density,
            // Frames of older runs have no material numbers: labels serve.
            RenderField::Material => frame.materials.into_iter().map(f64::from).collect(),
            _ => Vec::new(),
        };
        render_framed(
            &RenderInput {
                mesh: &frame.mesh,
                positions: &frame.positions,
                element_values: &element_values,
                edges: &frame.edges,
                obstacles: &shapes,
            },
            settings,
            framing,
        )
    };
    // First pass: the window and the colour range of every frame (pixels dropped).
    let mut extents = Vec::with_capacity(frames.len());
    for (time, path) in frames {
        let mut image = draw(*time, path, &Framing::default())?;
        image.pixels = Vec::new();
        extents.push(image);
    }
    let mut framing = Framing::covering(&extents);
    if let Some([low, high]) = settings.range {
        framing.field_range = Some((low, high));
    }
    let unit = match settings.field {
        RenderField::EnergyDensity => Some("J/m³"),
        RenderField::Displacement => Some("m"),
        RenderField::VolumeRatio => Some(""),
        _ => None,
    };
    for (index, (time, path)) in frames.iter().enumerate() {
        let mut image = draw(*time, path, &framing)?;
        let bar = unit
            .zip(framing.field_range)
            .map(|(unit, (low, high))| (low, high, unit));
        image.annotate(&format!("t = {} s", crate::output::readable(*time)), bar)?;
        each(index, image)?;
    }
    Ok(())
}

/// Writes the pictures as a looping GIF (each quantised to its own palette).
fn write_gif(path: &Path, pictures: &[Image]) -> Result<()> {
    let Some(first) = pictures.first() else {
        return Ok(());
    };
    let (width, height) = match (u16::try_from(first.width), u16::try_from(first.height)) {
        (Ok(w), Ok(h)) => (w, h),
        _ => {
            return Err(HookeError::scene(
                "--size",
                "a GIF is at most 65535 pixels wide and high",
            ))
        }
    };
    write_atomically(path, |writer| {
        let mut encoder = gif::Encoder::new(writer, width, height, &[]).map_err(std::io::Error::other)?;
        encoder
            .set_repeat(gif::Repeat::Infinite)
            .map_err(std::io::Error::other)?;
        for picture in pictures {
            let rgb: Vec<u8> = picture.pixels.iter().flatten().copied().collect();
            // Speed 10 of 30: NeuQuant quality good enough for smooth colour maps.
            let mut frame = gif::Frame::from_rgb_speed(width, height, &rgb, 10);
            frame.delay = GIF_DELAY;
            encoder.write_frame(&frame).map_err(std::io::Error::other)?;
        }
        Ok(())
    })
}
