//! Energy-versus-time plots as PNG images, drawn with an embedded font so no
//! system font library is needed.

use super::font::{register_embedded_font, FONT_FAMILY};
use super::EnergyRecord;
use crate::error::{HookeError, Result};
use plotters::prelude::*;
use std::ops::Range;
use std::path::Path;

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 600;
/// Larger magnitudes are skipped like non-finite values: an axis spanning
/// them would overflow f64, and plotters then never finishes placing ticks.
const PLOTTABLE_LIMIT: f64 = 1e300;

/// One line of the plot, already stripped of unplottable points.
struct Curve {
    name: String,
    color: RGBColor,
    points: Vec<(f64, f64)>,
}

/// Plots energies against time into a PNG at `path`.
///
/// With a single series, its kinetic, elastic, gravitational, penalty (when there was contact)
/// and total energies
/// are drawn. With several series (a comparison of runs), only each series'
/// total energy is drawn, labelled with the series name. Non-finite values
/// (and absurd ones beyond 1e300) are skipped; an empty input still gives a
/// valid, empty chart.
pub fn plot_energies(path: &Path, title: &str, series: &[(&str, &[EnergyRecord])]) -> Result<()> {
    register_embedded_font().map_err(|reason| plot_error(path, reason))?;
    let curves = build_curves(series);
    let mut rgb = vec![0u8; WIDTH as usize * HEIGHT as usize * 3];
    draw(&mut rgb, title, &curves).map_err(|reason| plot_error(path, reason))?;
    super::render::write_rgb_png(path, WIDTH, HEIGHT, &rgb)
}

/// Plots the relative error of minimisers (log₁₀, one line per solver) against
/// `x_label` (iterations or seconds) into a PNG at `path`. Points with a
/// non-positive error (converged to rounding) are drawn at 1e-16.
pub fn plot_convergence(path: &Path, title: &str, x_label: &str, series: &[(String, Vec<(f64, f64)>)]) -> Result<()> {
    let logged: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(name, points)| {
            (
                name.clone(),
                points.iter().map(|&(x, y)| (x, y.max(1e-16).log10())).collect(),
            )
        })
        .collect();
    plot_lines(path, title, (x_label, "log₁₀ relative error"), &logged)
}

/// Plots named series of (x, y) points as lines, one colour each, into a PNG
/// at `path`; points that are not finite are left out.
pub fn plot_lines(path: &Path, title: &str, labels: (&str, &str), series: &[(String, Vec<(f64, f64)>)]) -> Result<()> {
    register_embedded_font().map_err(|reason| plot_error(path, reason))?;
    let curves: Vec<Curve> = series
        .iter()
        .enumerate()
        .map(|(index, (name, points))| Curve {
            name: name.clone(),
            color: series_color(index),
            points: points
                .iter()
                .filter(|(x, y)| is_plottable(*x) && is_plottable(*y))
                .copied()
                .collect(),
        })
        .collect();
    let mut rgb = vec![0u8; WIDTH as usize * HEIGHT as usize * 3];
    draw_axes(&mut rgb, title, &curves, labels).map_err(|reason| plot_error(path, reason))?;
    super::render::write_rgb_png(path, WIDTH, HEIGHT, &rgb)
}

fn build_curves(series: &[(&str, &[EnergyRecord])]) -> Vec<Curve> {
    match series {
        [(_, records)] => {
            let mut curves = vec![
                curve("kinetic", RED, records, |record| record.kinetic),
                curve("elastic", BLUE, records, |record| record.elastic),
                curve("gravitational", GREEN, records, |record| record.gravitational),
            ];
            // The contact energy (penalty or barrier) only where there was contact, to keep other plots uncluttered.
            if records.iter().any(|record| record.penalty != 0.0) {
                curves.push(curve("contact", MAGENTA, records, |record| record.penalty));
            }
            curves.push(curve("total", BLACK, records, |record| record.total));
            curves
        }
        _ => series
            .iter()
            .enumerate()
            .map(|(index, (name, records))| curve(name, series_color(index), records, |record| record.total))
            .collect(),
    }
}

/// One energy of a series against time, keeping only plottable points.
fn curve(name: &str, color: RGBColor, records: &[EnergyRecord], energy_of: fn(&EnergyRecord) -> f64) -> Curve {
    Curve {
        name: name.to_string(),
        color,
        points: records
            .iter()
            .map(|record| (record.time, energy_of(record)))
            .filter(|&(time, energy)| is_plottable(time) && is_plottable(energy))
            .collect(),
    }
}

fn is_plottable(value: f64) -> bool {
    value.abs() <= PLOTTABLE_LIMIT
}

/// Distinct, readable colours for comparison plots; repeats after ten series.
fn series_color(index: usize) -> RGBColor {
    const COLORS: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    COLORS[index % COLORS.len()]
}

fn draw(rgb: &mut [u8], title: &str, curves: &[Curve]) -> std::result::Result<(), String> {
    draw_axes(rgb, title, curves, ("time [s]", "energy [J]"))
}

fn draw_axes(
    rgb: &mut [u8],
    title: &str,
    curves: &[Curve],
    (x_label, y_label): (&str, &str),
) -> std::result::Result<(), String> {
    let all_points = || curves.iter().flat_map(|curve| curve.points.iter());
    let time_range = padded_range(all_points().map(|&(time, _)| time));
    let energy_range = padded_range(all_points().map(|&(_, energy)| energy));

    let root = BitMapBackend::with_buffer(rgb, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|error| error.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT_FAMILY, 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(time_range, energy_range)
        .map_err(|error| error.to_string())?;
    // An axis of indices (modes, refinements, iteration counts: every x a
    // whole number) gets whole-number ticks, one per index while they fit.
    let indices: Vec<f64> = all_points().map(|&(x, _)| x).collect();
    let index_axis = !indices.is_empty() && indices.iter().all(|x| x.fract() == 0.0 && x.abs() < 1e9);
    let whole = |x: &f64| {
        if (x - x.round()).abs() < 1e-9 {
            format!("{}", x.round() as i64)
        } else {
            String::new()
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_label)
        .y_desc(y_label)
        .label_style((FONT_FAMILY, 14))
        .axis_desc_style((FONT_FAMILY, 16));
    if index_axis {
        let (low, high) = indices
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
        let count = (high - low) as usize + 1;
        mesh.x_labels(if count <= 20 { count + 2 } else { 12 })
            .x_label_formatter(&whole);
    }
    mesh.draw().map_err(|error| error.to_string())?;

    for curve in curves {
        let style = curve.color.stroke_width(2);
        chart
            .draw_series(LineSeries::new(curve.points.iter().copied(), style))
            .map_err(|error| error.to_string())?
            .label(curve.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
    }
    if !curves.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT_FAMILY, 14))
            .draw()
            .map_err(|error| error.to_string())?;
    }
    root.present().map_err(|error| error.to_string())
}

/// The span of the (plottable) values with a 5 % margin; a fixed span when
/// there is no value or a single one, so the axes are never degenerate.
fn padded_range(values: impl Iterator<Item = f64>) -> Range<f64> {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), value| {
        (low.min(value), high.max(value))
    });
    if low > high {
        return 0.0..1.0;
    }
    let span = high - low;
    if span == 0.0 {
        let half_width = if low == 0.0 { 1.0 } else { 0.05 * low.abs() };
        return (low - half_width)..(high + half_width);
    }
    (low - 0.05 * span)..(high + 0.05 * span)
}

fn plot_error(path: &Path, reason: String) -> HookeError {
    HookeError::io(path, std::io::Error::other(format!("plot failed: {reason}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

    fn oscillation(steps: usize, phase: f64) -> Vec<EnergyRecord> {
        (0..steps)
            .map(|step| {
                let time = 0.01 * step as f64;
                let kinetic = (10.0 * time + phase).sin().powi(2);
                let elastic = 1.0 - kinetic;
                let gravitational = -0.2 * time;
                EnergyRecord {
                    time,
                    kinetic,
                    elastic,
                    gravitational,
                    total: kinetic + elastic + gravitational,
                    ..EnergyRecord::default()
                }
            })
            .collect()
    }

    fn assert_png(path: &Path) {
        let bytes = std::fs::read(path).expect("read png");
        assert_eq!(bytes[..8], PNG_SIGNATURE);
        assert!(bytes.len() > 4096, "suspiciously small png: {} bytes", bytes.len());
    }

    #[test]
    fn plots_one_series() {
        let directory = crate::output::scratch_directory("plot-one");
        std::fs::create_dir_all(&directory).expect("create dir");
        let path = directory.join("energies.png");
        let records = oscillation(200, 0.0);
        plot_energies(&path, "energies", &[("run", &records)]).expect("plot");
        assert_png(&path);
        let _ = std::fs::remove_dir_all(&directory);
    }

    #[test]
    fn plots_a_comparison_of_series() {
        let directory = crate::output::scratch_directory("plot-compare");
        std::fs::create_dir_all(&directory).expect("create dir");
        let path = directory.join("comparison.png");
        let first = oscillation(150, 0.0);
        let second = oscillation(300, 0.5);
        let third = oscillation(80, 1.0);
        let series: [(&str, &[EnergyRecord]); 3] = [
            ("implicit Euler", &first),
            ("Newmark", &second),
            ("symplectic Euler", &third),
        ];
        plot_energies(&path, "total energy", &series).expect("plot");
        assert_png(&path);
        let _ = std::fs::remove_dir_all(&directory);
    }

    #[test]
    fn empty_and_non_finite_inputs_still_give_a_png() {
        let directory = crate::output::scratch_directory("plot-degenerate");
        std::fs::create_dir_all(&directory).expect("create dir");

        let empty_path = directory.join("empty.png");
        plot_energies(&empty_path, "nothing", &[]).expect("plot no series");
        assert_png(&empty_path);

        let no_rows_path = directory.join("no_rows.png");
        plot_energies(&no_rows_path, "no rows", &[("run", &[])]).expect("plot empty series");
        assert_png(&no_rows_path);

        let mut records = oscillation(50, 0.0);
        records[3].kinetic = f64::NAN;
        records[7].total = f64::INFINITY;
        records[9].time = f64::NEG_INFINITY;
        let constant = vec![EnergyRecord::default(); 3];
        let broken_path = directory.join("broken.png");
        let series: [(&str, &[EnergyRecord]); 2] = [("broken", &records), ("constant", &constant)];
        plot_energies(&broken_path, "broken", &series).expect("plot non-finite");
        assert_png(&broken_path);

        // Extremes whose span would overflow are skipped instead of hanging plotters.
        let mut extreme = oscillation(5, 0.0);
        extreme[1].total = f64::MAX;
        extreme[2].total = -f64::MAX;
        let extreme_path = directory.join("extreme.png");
        let series: [(&str, &[EnergyRecord]); 2] = [("extreme", &extreme), ("constant", &constant)];
        plot_energies(&extreme_path, "extreme", &series).expect("plot extremes");
        assert_png(&extreme_path);

        let _ = std::fs::remove_dir_all(&directory);
    }

    #[test]
    fn missing_directory_is_an_error() {
        let directory = crate::output::scratch_directory("plot-missing");
        let path = directory.join("absent").join("energies.png");
        let records = oscillation(10, 0.0);
        let error = plot_energies(&path, "energies", &[("run", &records)]).expect_err("no dir");
        assert!(matches!(error, HookeError::Io { .. }), "{error}");
    }

    #[test]
    fn ranges_are_never_degenerate() {
        assert_eq!(padded_range(std::iter::empty()), 0.0..1.0);
        assert_eq!(padded_range([0.0].into_iter()), -1.0..1.0);
        assert_eq!(padded_range([2.0, 2.0].into_iter()), 1.9..2.1);
        assert_eq!(padded_range([0.0, 10.0].into_iter()), -0.5..10.5);
        assert!(!is_plottable(f64::MAX) && !is_plottable(f64::NAN) && is_plottable(-1e300));
        let widest = padded_range([-PLOTTABLE_LIMIT, PLOTTABLE_LIMIT].into_iter());
        assert!((widest.end - widest.start).is_finite());
    }
}
