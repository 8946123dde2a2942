//! The broad phase of barrier contact on its own, and the surface it needs:
//! the two boxes of benches/peer/ipctk_contact.py (each face a 64 × 64 grid of
//! triangle pairs, 98,304 triangles in all), the upper moving 10 cm down
//! through the lower's top with a 0.1 mm jitter, d̂ = 1 mm. The Python peer
//! script times the same work through the package, with the surface built on
//! each call; these separate the two. Recorded in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion};
use hooke::contact::broad_phase::candidates;
use hooke::contact::surface::ContactSurface;
use std::collections::HashMap;

/// The triangulated surface of an axis-aligned box with `cells` × `cells`
/// squares on each face, vertices welded, appended to `points` and `faces`.
fn add_box(cells: usize, origin: [f64; 3], points: &mut Vec<[f64; 3]>, faces: &mut Vec<[usize; 3]>) {
    let mut welded: HashMap<[i64; 3], usize> = HashMap::new();
    let base = points.len();
    let mut vertex = |p: [f64; 3]| {
        let key = p.map(|x| (x * 1e9).round() as i64);
        *welded.entry(key).or_insert_with(|| {
            points.push(std::array::from_fn(|k| origin[k] + p[k]));
            points.len() - 1
        })
    };
    let tick = |i: usize| i as f64 / cells as f64;
    for axis in 0..3 {
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        for side in [0.0, 1.0] {
            for i in 0..cells {
                for j in 0..cells {
                    let corner = |a: usize, b: usize| {
                        let mut p = [0.0; 3];
                        p[axis] = side;
                        p[u] = tick(a);
                        p[v] = tick(b);
                        p
                    };
                    let [a, b, c, d] =
                        [corner(i, j), corner(i + 1, j), corner(i + 1, j + 1), corner(i, j + 1)].map(&mut vertex);
                    if side == 0.0 {
                        faces.extend([[a, c, b], [a, d, c]]);
                    } else {
                        faces.extend([[a, b, c], [a, c, d]]);
                    }
                }
            }
        }
    }
    debug_assert!(faces.iter().flatten().all(|&v| v >= base));
}

fn two_boxes() -> (Vec<[usize; 3]>, Vec<f64>, Vec<f64>) {
    let (mut points, mut faces) = (Vec::new(), Vec::new());
    add_box(64, [0.0, 0.0, 0.0], &mut points, &mut faces);
    let lower = points.len();
    add_box(64, [0.1, 0.13, 1.02], &mut points, &mut faces);
    let start: Vec<f64> = points.iter().flatten().copied().collect();
    let mut state = 1u64;
    let mut jitter = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        1e-4 * ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
    };
    let end = start
        .iter()
        .enumerate()
        .map(|(i, &x)| x + jitter() - if i / 3 >= lower && i % 3 == 2 { 0.1 } else { 0.0 })
        .collect();
    (faces, start, end)
}

fn broad_phase(c: &mut Criterion) {
    let (faces, start, end) = two_boxes();
    let mut group = c.benchmark_group("broad_phase/98304_triangles");
    group.sample_size(10);
    group.bench_function("surface", |b| b.iter(|| ContactSurface::of_triangles(faces.clone())));
    let surface = ContactSurface::of_triangles(faces.clone());
    group.bench_function("candidates", |b| b.iter(|| candidates(&surface, &start, &end, 1e-3)));
    group.finish();
}

criterion_group!(benches, broad_phase);
criterion_main!(benches);
