//! Pictures without a viewer: a small software rasterizer that draws a body's
//! boundary surface (and its springs) as a shaded, coloured PNG.
//!
//! Orthographic camera from an azimuth and elevation, fitted to the body; a
//! z-buffer; flat Lambert shading with a headlight; colour by element label
//! (a categorical palette) or by a scalar field (a perceptually ordered map,
//! its range printed by the caller). No GPU or display is needed.

use crate::error::{HookeError, Result};
use crate::mesh::{boundary_faces, Mesh, TetMesh};
use crate::model::ObstacleShape;
use nalgebra::Vector3;
use std::path::Path;

/// What colours the surface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RenderField {
    /// Element label (from the mesh file or `hooke mesh` regions).
    #[default]
    Label,
    /// Material (each distinct material of a scene its own colour; labels
    /// where no scene is known).
    Material,
    /// Strain energy density of the element, J/m³.
    EnergyDensity,
    /// Distance of each vertex from its rest position, m.
    Displacement,
    /// Each tetrahedron's volume over its rest volume (det F): where a body
    /// is compressed (< 1) or dilated (> 1).
    VolumeRatio,
    /// One colour for everything.
    Plain,
}

impl std::str::FromStr for RenderField {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        Ok(match text {
            "label" => RenderField::Label,
            "material" => RenderField::Material,
            "energy_density" | "energy" => RenderField::EnergyDensity,
            "displacement" => RenderField::Displacement,
            "volume_ratio" => RenderField::VolumeRatio,
            "plain" => RenderField::Plain,
            other => {
                return Err(format!(
                    "unknown field {other:?}: expected label, material, energy_density, displacement, volume_ratio or plain"
                ))
            }
        })
    }
}

/// Camera and image size.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RenderSettings {
    /// What colours the body (default `label`).
    #[serde(default)]
    pub field: RenderField,
    /// Camera direction around the vertical (z) axis, degrees from +x toward +y.
    #[serde(default = "default_azimuth")]
    pub azimuth_degrees: f64,
    /// Camera height above the horizontal plane, degrees (90: from the top).
    #[serde(default = "default_elevation")]
    pub elevation_degrees: f64,
    /// Image width in pixels (default 800).
    #[serde(default = "default_width")]
    pub width: u32,
    /// Image height in pixels (default 600).
    #[serde(default = "default_height")]
    pub height: u32,
    /// Cut the body open: elements whose centroid lies on the side of the
    /// plane the normal points to are not drawn, so the inside shows.
    #[serde(default)]
    pub clip: Option<ClipPlane>,
    /// Colour range [low, high] of a scalar field, fixed for every picture
    /// (unset: the range of the pictures drawn together).
    #[serde(default)]
    pub range: Option<[f64; 2]>,
}

/// A plane through `point` whose `normal` points to the side taken away.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClipPlane {
    /// A point of the plane, m.
    pub point: [f64; 3],
    /// The plane's normal, pointing to the side taken away.
    pub normal: [f64; 3],
}

fn default_azimuth() -> f64 {
    -60.0
}
fn default_elevation() -> f64 {
    25.0
}
fn default_width() -> u32 {
    800
}
fn default_height() -> u32 {
    600
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            field: RenderField::default(),
            azimuth_degrees: default_azimuth(),
            elevation_degrees: default_elevation(),
            width: default_width(),
            height: default_height(),
            clip: None,
            range: None,
        }
    }
}

impl RenderSettings {
    /// Named views: front (from −y), back, left (from −x), right, top, iso.
    pub fn with_view(mut self, view: &str) -> std::result::Result<Self, String> {
        let (azimuth, elevation) = match view {
            "front" => (-90.0, 0.0),
            "back" => (90.0, 0.0),
            "left" => (180.0, 0.0),
            "right" => (0.0, 0.0),
            "top" => (-90.0, 90.0),
            "iso" => (default_azimuth(), default_elevation()),
            other => {
                return Err(format!(
                    "unknown view {other:?}: expected front, back, left, right, top or iso"
                ))
            }
        };
        self.azimuth_degrees = azimuth;
        self.elevation_degrees = elevation;
        Ok(self)
    }

    /// Checks the sizes and angles; errors name `key` (`output.render` in a scene).
    pub fn validate(&self, key: &str) -> Result<()> {
        if self.width < 16 || self.height < 16 || self.width > 16384 || self.height > 16384 {
            return Err(HookeError::scene(
                key,
                format!("image size {}×{} must lie within 16..16384", self.width, self.height),
            ));
        }
        if !self.azimuth_degrees.is_finite() {
            return Err(HookeError::scene(
                format!("{key}.azimuth_degrees"),
                format!("must be finite, got {}", self.azimuth_degrees),
            ));
        }
        if !(-90.0..=90.0).contains(&self.elevation_degrees) {
            return Err(HookeError::scene(
                format!("{key}.elevation_degrees"),
                format!("must lie in [-90, 90], got {}", self.elevation_degrees),
            ));
        }
        if let Some(clip) = &self.clip {
            let finite = clip.point.iter().chain(&clip.normal).all(|v| v.is_finite());
            if !finite || Vector3::from(clip.normal).norm() == 0.0 {
                return Err(HookeError::scene(
                    format!("{key}.clip"),
                    "needs a finite point and a non-zero normal",
                ));
            }
        }
        if let Some([low, high]) = self.range {
            if !(low.is_finite() && high.is_finite() && low < high) {
                return Err(HookeError::scene(
                    format!("{key}.range"),
                    format!("needs finite low < high, got [{low}, {high}]"),
                ));
            }
        }
        Ok(())
    }
}

/// What to draw: the mesh with current positions and the fields it may be coloured by.
#[derive(Clone, Copy, Debug)]
pub struct RenderInput<'a> {
    /// The mesh: elements, labels and rest positions.
    pub mesh: &'a Mesh,
    /// The vertices' current positions, m, one per mesh vertex.
    pub positions: &'a [Vector3<f64>],
    /// Per element: the energy density (for `EnergyDensity`) or a material
    /// number (for `Material`); may be empty otherwise.
    pub element_values: &'a [f64],
    /// Springs drawn as lines.
    pub edges: &'a [[usize; 2]],
    /// Obstacles drawn around the body (they do not move the camera).
    pub obstacles: &'a [ObstacleShape],
}

/// An RGB image and what was drawn.
#[derive(Clone, Debug)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The RGB colour of every pixel, row by row (`width` × `height` of them).
    pub pixels: Vec<[u8; 3]>,
    /// Range of the colouring field (min, max), when it is a scalar field.
    pub field_range: Option<(f64, f64)>,
    /// The projected extent of the body on the view plane (lower, upper corner).
    pub view_bounds: Option<([f64; 2], [f64; 2])>,
}

/// What the pictures of an animation share so that they can be compared:
/// one camera window (view-plane bounds) and one colour range. `None` fits
/// each picture to itself.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Framing {
    /// The camera window on the view plane (lower, upper corner) that every
    /// picture shares (None: each picture fits its own body).
    pub view_bounds: Option<([f64; 2], [f64; 2])>,
    /// The colour range (min, max) of a scalar field that every picture shares
    /// (None: each picture its own).
    pub field_range: Option<(f64, f64)>,
}

impl Framing {
    /// The framing that holds every one of `images`: the union of their
    /// windows and of their colour ranges.
    pub fn covering(images: &[Image]) -> Framing {
        let union_bounds = |a: ([f64; 2], [f64; 2]), b: ([f64; 2], [f64; 2])| {
            (
                [a.0[0].min(b.0[0]), a.0[1].min(b.0[1])],
                [a.1[0].max(b.1[0]), a.1[1].max(b.1[1])],
            )
        };
        Framing {
            view_bounds: images.iter().filter_map(|i| i.view_bounds).reduce(union_bounds),
            field_range: images
                .iter()
                .filter_map(|i| i.field_range)
                .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1))),
        }
    }
}

const BACKGROUND: [u8; 3] = [255, 255, 255];

impl Image {
    /// Pixels that show the body (not background).
    pub fn covered_pixels(&self) -> usize {
        self.pixels.iter().filter(|p| **p != BACKGROUND).count()
    }

    /// The bounding box (x0, y0, x1, y1) of the covered pixels, if any.
    pub fn covered_box(&self) -> Option<(u32, u32, u32, u32)> {
        let mut found: Option<(u32, u32, u32, u32)> = None;
        for (i, p) in self.pixels.iter().enumerate() {
            if *p != BACKGROUND {
                let (x, y) = (i as u32 % self.width, i as u32 / self.width);
                found = Some(match found {
                    None => (x, y, x, y),
                    Some((a, b, c, d)) => (a.min(x), b.min(y), c.max(x), d.max(y)),
                });
            }
        }
        found
    }

    /// Writes `caption` at the top left (a time stamp) and, when given
    /// (low, high, unit), a colour bar with its range on the right.
    pub fn annotate(&mut self, caption: &str, colour_bar: Option<(f64, f64, &str)>) -> Result<()> {
        use plotters::prelude::*;
        let fail = |reason: String| HookeError::Mesh {
            reason: format!("the picture could not be annotated: {reason}"),
        };
        super::font::register_embedded_font().map_err(fail)?;
        let (w, h) = (self.width, self.height);
        let mut rgb: Vec<u8> = self.pixels.iter().flatten().copied().collect();
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            let size = (h as f64 / 28.0).clamp(10.0, 28.0);
            let font = (super::font::FONT_FAMILY, size).into_font().color(&BLACK);
            let margin = (size * 0.6) as i32;
            root.draw(&Text::new(caption.to_string(), (margin, margin), font.clone()))
                .map_err(|e| fail(e.to_string()))?;
            if let Some((low, high, unit)) = colour_bar {
                let (x0, x1) = (w as i32 - (3.2 * size) as i32, w as i32 - (2.4 * size) as i32);
                let (y0, y1) = ((h as f64 * 0.15) as i32, (h as f64 * 0.85) as i32);
                for y in y0..y1 {
                    let t = (y1 - 1 - y) as f64 / (y1 - y0 - 1).max(1) as f64;
                    let [r, g, b] = colour_map(t).map(|c| (c * 255.0).round() as u8);
                    root.draw(&Rectangle::new([(x0, y), (x1, y + 1)], RGBColor(r, g, b).filled()))
                        .map_err(|e| fail(e.to_string()))?;
                }
                let label = |value: f64| {
                    format!("{} {unit}", crate::output::significant(value, 3))
                        .trim_end()
                        .to_string()
                };
                let small = (super::font::FONT_FAMILY, size * 0.8).into_font().color(&BLACK);
                let right = |text: String, y: i32| {
                    Text::new(
                        text,
                        (x0 - margin / 2, y),
                        small.clone().pos(plotters::style::text_anchor::Pos::new(
                            plotters::style::text_anchor::HPos::Right,
                            plotters::style::text_anchor::VPos::Center,
                        )),
                    )
                };
                root.draw(&right(label(high), y0)).map_err(|e| fail(e.to_string()))?;
                root.draw(&right(label(low), y1)).map_err(|e| fail(e.to_string()))?;
            }
            root.present().map_err(|e| fail(e.to_string()))?;
        }
        for (pixel, chunk) in self.pixels.iter_mut().zip(rgb.chunks(3)) {
            *pixel = [chunk[0], chunk[1], chunk[2]];
        }
        Ok(())
    }

    /// Writes the picture as a PNG file, atomically.
    pub fn write_png(&self, path: &Path) -> Result<()> {
        let bytes: Vec<u8> = self.pixels.iter().flatten().copied().collect();
        write_rgb_png(path, self.width, self.height, &bytes)
    }
}

/// Writes 8-bit RGB pixels (row by row) as a PNG file, atomically.
pub(crate) fn write_rgb_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> Result<()> {
    super::atomic::write_atomically(path, |writer| {
        let mut encoder = png::Encoder::new(writer, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut png = encoder.write_header().map_err(std::io::Error::other)?;
        png.write_image_data(rgb).map_err(std::io::Error::other)?;
        png.finish().map_err(std::io::Error::other)
    })
}

/// A perceptually ordered map from 0 (dark blue) to 1 (yellow), close to viridis.
fn colour_map(t: f64) -> [f64; 3] {
    const STOPS: [[f64; 3]; 6] = [
        [0.267, 0.005, 0.329],
        [0.254, 0.265, 0.530],
        [0.164, 0.471, 0.558],
        [0.134, 0.659, 0.518],
        [0.478, 0.821, 0.320],
        [0.993, 0.906, 0.144],
    ];
    let x = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    [0, 1, 2].map(|c| STOPS[i][c] * (1.0 - f) + STOPS[i + 1][c] * f)
}

fn label_colour(label: i32) -> [f64; 3] {
    const PALETTE: [[f64; 3]; 8] = [
        [0.35, 0.55, 0.85],
        [0.90, 0.45, 0.25],
        [0.35, 0.70, 0.40],
        [0.80, 0.30, 0.55],
        [0.95, 0.80, 0.25],
        [0.55, 0.40, 0.75],
        [0.40, 0.75, 0.80],
        [0.60, 0.60, 0.60],
    ];
    PALETTE[label.rem_euclid(PALETTE.len() as i32) as usize]
}

/// Draws the body, fitted to the picture.
pub fn render(input: &RenderInput, settings: &RenderSettings) -> Result<Image> {
    render_framed(input, settings, &Framing::default())
}

/// Draws the body in a given framing (one camera window and colour range
/// for every picture of an animation).
///
/// One function of about 190 lines: the picture is one pass of the rasteriser, where the camera,
/// the projected faces in depth order, the colour map and the bar, and the labels all share the
/// framing.
pub fn render_framed(input: &RenderInput, settings: &RenderSettings, framing: &Framing) -> Result<Image> {
    settings.validate("render")?;
    let mesh = input.mesh;
    if input.positions.len() != mesh.vertex_count() {
        return Err(HookeError::Mesh {
            reason: format!(
                "{} positions for {} vertices",
                input.positions.len(),
                mesh.vertex_count()
            ),
        });
    }
    if settings.field == RenderField::EnergyDensity && input.element_values.len() != mesh.element_count() {
        return Err(HookeError::Mesh {
            reason: format!(
                "{} energy densities for {} elements",
                input.element_values.len(),
                mesh.element_count()
            ),
        });
    }
    let (azimuth, elevation) = (
        settings.azimuth_degrees.to_radians(),
        settings.elevation_degrees.to_radians(),
    );
    let toward_camera = Vector3::new(
        elevation.cos() * azimuth.cos(),
        elevation.cos() * azimuth.sin(),
        elevation.sin(),
    );
    let right = {
        let r = Vector3::z().cross(&toward_camera);
        if r.norm() < 1e-9 {
            Vector3::new(-azimuth.sin(), azimuth.cos(), 0.0)
        } else {
            r.normalize()
        }
    };
    let up = toward_camera.cross(&right);
    let light = (toward_camera + 0.4 * up + 0.3 * right).normalize();

    // A solid shows its boundary (of the elements the clipping plane keeps);
    // a planar mesh is all surface.
    let kept = |element: &[usize]| match &settings.clip {
        None => true,
        Some(clip) => {
            let centroid = element.iter().map(|&v| input.positions[v]).sum::<Vector3<f64>>() / element.len() as f64;
            (centroid - Vector3::from(clip.point)).dot(&Vector3::from(clip.normal)) <= 0.0
        }
    };
    let faces: Vec<([usize; 3], usize)> = match mesh {
        Mesh::Tetrahedra(tets) if settings.clip.is_some() => {
            let chosen: Vec<usize> = (0..tets.tets.len()).filter(|&e| kept(&tets.tets[e])).collect();
            let part = TetMesh {
                vertices: tets.vertices.clone(),
                tets: chosen.iter().map(|&e| tets.tets[e]).collect(),
                labels: chosen.iter().map(|&e| tets.labels[e]).collect(),
            };
            boundary_faces(&part)
                .into_iter()
                .map(|(face, e)| (face, chosen[e]))
                .collect()
        }
        Mesh::Tetrahedra(tets) => boundary_faces(tets),
        Mesh::Triangles(planar) => (0..planar.triangles.len())
            .filter(|&e| kept(&planar.triangles[e]))
            .map(|e| (planar.triangles[e], e))
            .collect(),
    };
    let mut used: Vec<usize> = faces.iter().flat_map(|(f, _)| f.iter().copied()).collect();
    used.extend(input.edges.iter().flatten().copied());
    if used.is_empty() {
        used = (0..mesh.vertex_count()).collect();
    }
    let (w, h) = (settings.width as usize, settings.height as usize);
    let mut image = Image {
        width: settings.width,
        height: settings.height,
        pixels: vec![BACKGROUND; w * h],
        field_range: None,
        view_bounds: None,
    };
    if used.is_empty() {
        return Ok(image);
    }
    // Fit the projected body into the image with a margin.
    let project = |p: &Vector3<f64>| (p.dot(&right), p.dot(&up), p.dot(&toward_camera));
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for &v in &used {
        let (x, y, _) = project(&input.positions[v]);
        lo = [lo[0].min(x), lo[1].min(y)];
        hi = [hi[0].max(x), hi[1].max(y)];
    }
    image.view_bounds = Some((lo, hi));
    let (lo, hi) = framing.view_bounds.unwrap_or((lo, hi));
    let margin = 0.06 * w.min(h) as f64;
    let span = [(hi[0] - lo[0]).max(1e-300), (hi[1] - lo[1]).max(1e-300)];
    let scale = ((w as f64 - 2.0 * margin) / span[0]).min((h as f64 - 2.0 * margin) / span[1]);
    let centre = [(lo[0] + hi[0]) * 0.5, (lo[1] + hi[1]) * 0.5];
    let to_screen = |p: &Vector3<f64>| {
        let (x, y, depth) = project(p);
        (
            w as f64 * 0.5 + (x - centre[0]) * scale,
            h as f64 * 0.5 - (y - centre[1]) * scale,
            depth,
        )
    };
    let mut depth = vec![f64::NEG_INFINITY; w * h];
    if !input.obstacles.is_empty() {
        // The point the view looks at: the window's centre at the body's mean depth.
        let mean_depth = used
            .iter()
            .map(|&v| input.positions[v].dot(&toward_camera))
            .sum::<f64>()
            / used.len() as f64;
        let view = ObstacleView {
            focus: right * centre[0] + up * centre[1] + toward_camera * mean_depth,
            half_width: 2.0 * span[0].hypot(span[1]),
            toward_camera,
            light,
        };
        for obstacle in input.obstacles {
            draw_obstacle(obstacle, &view, &to_screen, &mut image.pixels, &mut depth, (w, h));
        }
    }

    // Per-face base colour.
    let displacement: Vec<f64> = match settings.field {
        RenderField::Displacement => (0..mesh.vertex_count())
            .map(|v| (input.positions[v] - mesh.vertices()[v]).norm())
            .collect(),
        _ => Vec::new(),
    };
    let volume_ratio = |element: usize| {
        mesh.tetrahedra()
            .map(|tets| tets.signed_volume(element, input.positions) / tets.signed_volume(element, mesh.vertices()))
    };
    let face_value = |face: &[usize; 3], element: usize| match settings.field {
        RenderField::EnergyDensity => Some(input.element_values[element]),
        RenderField::Displacement => Some(face.iter().map(|&v| displacement[v]).sum::<f64>() / 3.0),
        RenderField::VolumeRatio => volume_ratio(element),
        _ => None,
    };
    let values: Vec<f64> = faces.iter().filter_map(|(f, e)| face_value(f, *e)).collect();
    let fixed_range = settings.range.map(|[low, high]| (low, high));
    let range = fixed_range.or(framing.field_range).unwrap_or_else(|| {
        values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)))
    });
    if !values.is_empty() {
        image.field_range = Some(range);
    }
    let normalise = |v: f64| {
        if range.1 > range.0 {
            (v - range.0) / (range.1 - range.0)
        } else {
            0.5
        }
    };

    for (face, element) in &faces {
        let [a, b, c] = face.map(|v| input.positions[v]);
        let normal = (b - a).cross(&(c - a));
        let length = normal.norm();
        if length == 0.0 {
            continue;
        }
        let shade = 0.3 + 0.7 * (normal / length).dot(&light).abs();
        let base = match face_value(face, *element) {
            Some(v) => colour_map(normalise(v).clamp(0.0, 1.0)),
            None if settings.field == RenderField::Material && input.element_values.len() == mesh.element_count() => {
                label_colour(input.element_values[*element] as i32)
            }
            None if matches!(settings.field, RenderField::Label | RenderField::Material) => {
                label_colour(mesh.labels()[*element])
            }
            None => [0.7, 0.72, 0.75],
        };
        let colour = base.map(|c| (255.0 * (c * shade).clamp(0.0, 1.0)).round() as u8);
        let corners = [a, b, c].map(|p| to_screen(&p));
        fill_triangle(&corners, colour, &mut image.pixels, &mut depth, w, h);
    }
    // Springs: dark lines, depth-tested against the surface.
    let line_colour = [40, 40, 48];
    for edge in input.edges {
        let [p, q] = edge.map(|v| to_screen(&input.positions[v]));
        draw_line(p, q, line_colour, &mut image.pixels, &mut depth, w, h);
    }
    Ok(image)
}

/// From a world point to screen x, y (pixels) and depth (larger is nearer).
type ToScreen<'a> = &'a dyn Fn(&Vector3<f64>) -> (f64, f64, f64);

/// Colour of obstacles: a warm grey, apart from the body's colours.
const OBSTACLE_COLOUR: [f64; 3] = [0.86, 0.83, 0.76];
/// Colour of a plane seen edge-on, drawn as a line.
const OBSTACLE_TRACE: [u8; 3] = [120, 112, 98];

/// Where obstacles are drawn: around `focus` (a plane as a square of
/// half-width `half_width`), lit by `light`.
struct ObstacleView {
    focus: Vector3<f64>,
    half_width: f64,
    toward_camera: Vector3<f64>,
    light: Vector3<f64>,
}

/// Draws an obstacle, depth-tested, before the body. A plane is drawn as a
/// square that fills the view around the body, and as a line where the camera
/// sees it edge-on (a floor seen from the side).
fn draw_obstacle(
    obstacle: &ObstacleShape,
    view: &ObstacleView,
    to_screen: ToScreen,
    pixels: &mut [[u8; 3]],
    depth: &mut [f64],
    (w, h): (usize, usize),
) {
    for [a, b, c] in super::obstacle_shapes::obstacle_triangles(obstacle, view.focus, view.half_width) {
        let normal = (b - a).cross(&(c - a));
        if normal.norm() == 0.0 {
            continue;
        }
        let shade = 0.3 + 0.7 * normal.normalize().dot(&view.light).abs();
        let colour = OBSTACLE_COLOUR.map(|c| (255.0 * (c * shade).clamp(0.0, 1.0)).round() as u8);
        fill_triangle(&[a, b, c].map(|p| to_screen(&p)), colour, pixels, depth, w, h);
    }
    if let ObstacleShape::Plane { point, normal } = obstacle {
        let n = Vector3::from(*normal).normalize();
        if n.dot(&view.toward_camera).abs() < 0.05 {
            let along = n.cross(&view.toward_camera).normalize() * view.half_width;
            let centre = view.focus - n * (view.focus - Vector3::from(*point)).dot(&n);
            let [p, q] = [centre - along, centre + along].map(|p| to_screen(&p));
            draw_line(p, q, OBSTACLE_TRACE, pixels, depth, w, h);
        }
    }
}

/// Fills a screen-space triangle (x, y, depth) with a z-test (larger depth is nearer).
fn fill_triangle(
    corners: &[(f64, f64, f64); 3],
    colour: [u8; 3],
    pixels: &mut [[u8; 3]],
    depth: &mut [f64],
    w: usize,
    h: usize,
) {
    let [(x0, y0, z0), (x1, y1, z1), (x2, y2, z2)] = *corners;
    let area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if area.abs() < 1e-12 {
        return;
    }
    let min_x = x0.min(x1).min(x2).floor().max(0.0) as usize;
    let max_x = (x0.max(x1).max(x2).ceil() as usize).min(w.saturating_sub(1));
    let min_y = y0.min(y1).min(y2).floor().max(0.0) as usize;
    let max_y = (y0.max(y1).max(y2).ceil() as usize).min(h.saturating_sub(1));
    for py in min_y..=max_y {
        for px in min_x..=max_x {
            let (x, y) = (px as f64 + 0.5, py as f64 + 0.5);
            let b0 = ((x1 - x) * (y2 - y) - (x2 - x) * (y1 - y)) / area;
            let b1 = ((x2 - x) * (y0 - y) - (x0 - x) * (y2 - y)) / area;
            let b2 = 1.0 - b0 - b1;
            if b0 < -1e-9 || b1 < -1e-9 || b2 < -1e-9 {
                continue;
            }
            let z = b0 * z0 + b1 * z1 + b2 * z2;
            let k = py * w + px;
            if z > depth[k] {
                depth[k] = z;
                pixels[k] = colour;
            }
        }
    }
}

fn draw_line(
    p: (f64, f64, f64),
    q: (f64, f64, f64),
    colour: [u8; 3],
    pixels: &mut [[u8; 3]],
    depth: &mut [f64],
    w: usize,
    h: usize,
) {
    let steps = ((q.0 - p.0).abs().max((q.1 - p.1).abs()).ceil() as usize).max(1);
    for s in 0..=steps {
        let t = s as f64 / steps as f64;
        let (x, y, z) = (p.0 + (q.0 - p.0) * t, p.1 + (q.1 - p.1) * t, p.2 + (q.2 - p.2) * t);
        if x < 0.0 || y < 0.0 || x >= w as f64 || y >= h as f64 {
            continue;
        }
        let k = y as usize * w + x as usize;
        // A small bias keeps lines on a surface visible.
        if z + 1e-9 * z.abs().max(1.0) >= depth[k] {
            depth[k] = z;
            pixels[k] = colour;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extent(bounds: ([f64; 2], [f64; 2]), range: Option<(f64, f64)>) -> Image {
        Image {
            width: 1,
            height: 1,
            pixels: Vec::new(),
            field_range: range,
            view_bounds: Some(bounds),
        }
    }

    #[test]
    fn a_covering_framing_holds_every_picture() {
        let framing = Framing::covering(&[
            extent(([0.0, 0.0], [1.0, 1.0]), Some((0.0, 2.0))),
            extent(([-1.0, 0.5], [0.5, 3.0]), None),
            extent(([0.2, -2.0], [0.3, 0.0]), Some((-1.0, 1.0))),
        ]);
        assert_eq!(framing.view_bounds, Some(([-1.0, -2.0], [1.0, 3.0])));
        assert_eq!(framing.field_range, Some((-1.0, 2.0)));
        assert_eq!(Framing::covering(&[]), Framing::default());
    }
}
