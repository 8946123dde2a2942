//! The broad phase of barrier contact on its own, and the surface it needs:
//! the two boxes of benches/peer/ipctk_contact.py (each face a 64 × 64 grid of
//! triangle pairs, 98,304 triangles in all), the upper moving 10 cm down
//! through the lower's top with a 0.1 mm jitter, d̂ = 1 mm. The Python peer
//! script times the same work through the package, with the surface built on
//! each call; these separate the two.
//!
//! And the contact share of a Newton iteration: a pile of eight soft cubes
//! (48,000 tets, Young's moduli 10⁵–10⁷ Pa) in two layers on the floor, each
//! 0.5 d̂ above the cube or floor below it, so that every surface facing down
//! is in contact at once, with friction. Implicit steps cut to one and to two
//! Newton iterations (their difference is one iteration) against the contact
//! work of one iteration: the barrier's pairs, energy and gradient, its
//! projected blocks, the friction term's gradient and blocks, and the step
//! bound along the iteration's direction.
//! Recorded in BENCHMARKS.md.

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

/// The pile: eight cubes of 12 × 12 × 7 cells (6 tets a cell: 48,384 tets,
/// finer across the faces that touch), the upper layer shifted by half a
/// cell, built apart and then moved to 0.5 d̂ of each other and of the floor
/// (a start closer than d̂ is refused at build).
fn pile_with_iterations(iterations: usize) -> (hooke::scene::BuiltScene, hooke::model::State, f64) {
    let (size, gap, dhat) = (0.1, 0.01, 1e-3);
    let mut text = format!(
        "gravity = [0.0, 0.0, -9.81]\n[simulation]\nduration = 0.01\ntime_step = 0.01\n[solver]\niterations = {iterations}\n",
    );
    let mut placed = Vec::new();
    for layer in 0..2 {
        for j in 0..2 {
            for i in 0..2 {
                let shift = 0.5 * size / 12.0 * layer as f64;
                let origin = [
                    i as f64 * (size + gap) + shift,
                    j as f64 * (size + gap) + shift,
                    gap + layer as f64 * (size + gap),
                ];
                let modulus = 1e5 * 10f64.powf(placed.len() as f64 * 2.0 / 7.0);
                text.push_str(&format!(
                    "[[bodies]]\nmesh = {{ box = {{ size = [{size}, {size}, {size}], cells = [12, 12, 7], origin = [{}, {}, {}] }} }}\nmaterial = {{ model = \"stable_neo_hookean\", youngs_modulus = {modulus:e}, poisson_ratio = 0.4, density = 1000.0 }}\n",
                    origin[0], origin[1], origin[2]
                ));
                // How far the cube moves down: the gaps below it close to 0.5 d̂
                // (the cubes side by side stay a centimetre apart).
                let close = gap - 0.5 * dhat;
                placed.push([0.0, 0.0, (layer as f64 + 1.0) * close]);
            }
        }
    }
    text.push_str("[[obstacles]]\nshape = { plane = { point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] } }\n");
    text.push_str(&format!("[contact]\ndistance = {dhat}\nfriction = 0.3\n"));
    let scene = hooke::scene::Scene::from_text(&text, "<pile>", std::path::PathBuf::from(".")).expect("a scene");
    let built = scene.build().expect("builds");
    let mut state = built.initial_state.clone();
    let per_cube = state.positions.len() / 3 / 8;
    for (cube, offset) in placed.iter().enumerate() {
        for v in cube * per_cube..(cube + 1) * per_cube {
            for k in 0..3 {
                state.positions[3 * v + k] -= offset[k];
            }
        }
    }
    (built, state, 0.01)
}

fn contact_share(c: &mut Criterion) {
    use hooke::model::{EnergyTerm, TermKind};
    let (mut built, state, dt) = pile_with_iterations(1);
    let model = &built.model;
    let contact = model.barrier_contact().expect("contact");
    // One step to set κ and the friction lag, and to find the iteration's direction.
    let mut after = state.clone();
    built.integrator.step(model, &mut after, dt).expect("a step");
    let x = &state.positions;
    let direction: Vec<f64> = after.positions.iter().zip(x).map(|(a, b)| a - b).collect();
    let report = contact.report(x);
    eprintln!(
        "pile: {} tets, {} pairs within d̂ (smallest distance {:.2e} m)",
        model.mesh().element_count(),
        report.active_pairs,
        report.smallest_distance
    );
    let friction = model
        .terms()
        .iter()
        .find(|t| t.kind() == TermKind::Friction)
        .expect("friction");
    let mut group = c.benchmark_group("newton_iteration/pile_48k_tets");
    group.sample_size(10);
    group.bench_function("step_of_one_iteration", |b| {
        b.iter(|| {
            let mut next = state.clone();
            built.integrator.step(&built.model, &mut next, dt).expect("a step");
            next
        })
    });
    let (mut two, _, _) = pile_with_iterations(2);
    group.bench_function("step_of_two_iterations", |b| {
        b.iter(|| {
            let mut next = state.clone();
            two.integrator.step(&two.model, &mut next, dt).expect("a step");
            next
        })
    });
    let model = &built.model;
    let contact = model.barrier_contact().expect("contact");
    group.bench_function("contact_work", |b| {
        b.iter(|| {
            // Another point each time, so the term's cache of the last pairs does not answer.
            let mut y = x.clone();
            y[0] += 1e-12;
            let mut gradient = vec![0.0; y.len()];
            contact.gradient(&y, dt, &mut gradient, true).expect("a gradient");
            friction.gradient(&y, dt, &mut gradient, false).expect("a gradient");
            let mut blocks = hooke::linalg::VertexBlocks::new(3);
            contact.add_changing_blocks(&y, dt, true, &mut blocks).expect("blocks");
            friction.add_changing_blocks(&y, dt, true, &mut blocks).expect("blocks");
            contact.feasible_step(&y, &direction).expect("a bound")
        })
    });
    group.finish();
}

criterion_group!(benches, broad_phase, contact_share);
criterion_main!(benches);
